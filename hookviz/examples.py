"""The blog posts' models, with the same structure and names, plus small demo models.

Everything here is seeded: the same call builds the same weights on every machine, and the
global random state is left as it was.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn
from torch.nn.parameter import Parameter


def seeded(seed: int | None, build: Callable[[], nn.Module]) -> nn.Module:
    """Run ``build()`` with torch's RNG seeded, leaving the global RNG state untouched."""
    if seed is None:
        return build()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return build()


# -- the assignment's tree: Function_A..D inside Layer_AB and Layer_CD inside Model ----------


class Function_A(nn.Module):
    """x + W"""

    def __init__(self, name: str, shape: tuple[int, ...] = (1,)):
        super().__init__()
        self.name = name
        self.W = Parameter(torch.rand(shape))

    def forward(self, x):
        return x + self.W


class Function_B(nn.Module):
    """x - W"""

    def __init__(self, name: str, shape: tuple[int, ...] = (1,)):
        super().__init__()
        self.name = name
        self.W = Parameter(torch.rand(shape))

    def forward(self, x):
        return x - self.W


class Function_C(nn.Module):
    """x * W"""

    def __init__(self, name: str, shape: tuple[int, ...] = (1,)):
        super().__init__()
        self.name = name
        self.W = Parameter(torch.rand(shape))

    def forward(self, x):
        return x * self.W


class Function_D(nn.Module):
    """x / W"""

    def __init__(self, name: str, shape: tuple[int, ...] = (1,)):
        super().__init__()
        self.name = name
        self.W = Parameter(torch.rand(shape))

    def forward(self, x):
        return x / self.W


class Layer_AB(nn.Module):
    """a then b: (x + W_a) - W_b"""

    def __init__(self, shape: tuple[int, ...] = (1,)):
        super().__init__()
        self.a = Function_A("plus", shape)
        self.b = Function_B("substract", shape)  # the blog's spelling, kept on purpose

    def forward(self, x):
        x = self.a(x)
        x = self.b(x)
        return x


class Layer_CD(nn.Module):
    """c then d: (x * W_c) / W_d"""

    def __init__(self, shape: tuple[int, ...] = (1,)):
        super().__init__()
        self.c = Function_C("multiply", shape)
        self.d = Function_D("divide", shape)

    def forward(self, x):
        x = self.c(x)
        x = self.d(x)
        return x


class Model(nn.Module):
    """The assignment's model: ab (Layer_AB) then cd (Layer_CD).

    ``Model()`` has the scalar weights of print_module and weight_initialization;
    ``Model(shape=(2, 2))`` has the 2x2 weights of linear_transformation.
    """

    def __init__(self, shape: tuple[int, ...] = (1,)):
        super().__init__()
        self.ab = Layer_AB(shape)
        self.cd = Layer_CD(shape)

    def forward(self, x):
        x = self.ab(x)
        x = self.cd(x)
        return x


def model(seed: int | None = 0, shape: tuple[int, ...] = (1,)) -> Model:
    """A seeded ``Model`` (``shape=(2, 2)`` for the linear_transformation variant)."""
    return seeded(seed, lambda: Model(shape))


# -- the first post's example: Xavier initialisation through apply ---------------------------


class MyModel(nn.Module):
    """linear1 (10 -> 20) and linear2 (20 -> 30), as in the post's Xavier example."""

    def __init__(self):
        super().__init__()
        self.linear1 = nn.Linear(10, 20)
        self.linear2 = nn.Linear(20, 30)

    def forward(self, x):
        return self.linear2(torch.relu(self.linear1(x)))


def my_model(seed: int | None = 0) -> MyModel:
    """A seeded ``MyModel``."""
    return seeded(seed, MyModel)


# -- demo and benchmark models --------------------------------------------------------------


def mlp(sizes: tuple[int, ...] = (4, 8, 8, 2), *, seed: int | None = 0) -> nn.Sequential:
    """Linear layers with ReLU in between: ``mlp((4, 8, 2))`` is Linear(4,8), ReLU, Linear(8,2)."""
    if len(sizes) < 2:
        raise ValueError(f"mlp needs at least an input and an output size, got sizes={sizes!r}.")

    def build():
        layers: list[nn.Module] = []
        for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
            layers.append(nn.Linear(n_in, n_out))
            if i < len(sizes) - 2:
                layers.append(nn.ReLU())
        return nn.Sequential(*layers)

    return seeded(seed, build)


def deep_mlp(depth: int = 32, width: int = 64, *, seed: int | None = 0) -> nn.Sequential:
    """Many small layers: the workload where per-hook overhead matters most."""
    return mlp((width,) * (depth + 1), seed=seed)


class SmallConvNet(nn.Module):
    """The classic small CIFAR-sized net: two conv blocks (32 and 64 channels) with in-place
    ReLUs, and a linear head, for 3x32x32 inputs. ``width`` scales the channels."""

    def __init__(self, classes: int = 10, width: int = 32):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, width, 3, padding=1),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Conv2d(width, 2 * width, 3, padding=1),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
        )
        self.head = nn.Sequential(
            nn.Flatten(),
            nn.Linear(2 * width * 8 * 8, 64),
            nn.ReLU(inplace=True),
            nn.Linear(64, classes),
        )

    def forward(self, x):
        return self.head(self.features(x))


def small_convnet(seed: int | None = 0, width: int = 32) -> SmallConvNet:
    """A seeded ``SmallConvNet`` (``width=16`` halves every channel count)."""
    return seeded(seed, lambda: SmallConvNet(width=width))


class SharedBlock(nn.Module):
    """One Linear used by two parents: apply visits it once per parent, modules() once."""

    def __init__(self):
        super().__init__()
        shared = nn.Linear(2, 2)
        self.left = nn.Sequential(shared, nn.ReLU())
        self.right = nn.Sequential(shared, nn.Tanh())

    def forward(self, x):
        return self.right(self.left(x))


def shared_block(seed: int | None = 0) -> SharedBlock:
    """A seeded ``SharedBlock``."""
    return seeded(seed, SharedBlock)


def wide_tree(modules: int = 1000, *, branching: int = 10, seed: int | None = 0) -> nn.Module:
    """A tree of about ``modules`` small modules (for testing big trees in the widgets)."""

    def build():
        count = [1]

        def node(depth: int) -> nn.Module:
            if count[0] >= modules or depth >= 3:
                count[0] += 1
                return nn.Linear(2, 2)
            block = nn.Sequential()
            count[0] += 1
            for _ in range(branching):
                if count[0] >= modules:
                    break
                block.append(node(depth + 1))
            return block

        root = nn.Sequential()
        while count[0] < modules:
            root.append(node(1))
        return root

    return seeded(seed, build)
