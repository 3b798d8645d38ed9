"""record() against torch's own hooks on the patterns real models are made of.

One tensor read by several modules (a residual block, q/k/v projections, Llama's gate and up),
a module called more than once, a tuple output partly used (LSTM, GRU, attention weights),
several forwards before one backward, ``torch.autograd.grad``, gradients of gradients, values
that need no gradient, lists and dicts, tied weights, hooks that change gradients, and in-place
ops. Each must give torch's events, in torch's order, with torch's values.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch
from torch import nn

import hookviz as hv
from tests.helpers import assert_no_hooks
from tests.oracle.torch_oracle import check_against_torch


def backward_of_sum(model, x):
    model(x).sum().backward()


class Residual(nn.Module):
    def __init__(self, width=6):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width))
        self.norm = nn.LayerNorm(width)

    def forward(self, x):
        return self.norm(x + self.body(x))


class Attention(nn.Module):
    """q, k and v read one tensor; the output projection reads their mix."""

    def __init__(self, width=8):
        super().__init__()
        self.q, self.k, self.v = (nn.Linear(width, width) for _ in range(3))
        self.out = nn.Linear(width, width)

    def forward(self, x):
        q, k, v = self.q(x), self.k(x), self.v(x)
        weights = torch.softmax(q @ k.transpose(-1, -2) / 8**0.5, -1)
        return self.out(weights @ v) + x


class GatedMLP(nn.Module):
    """Llama's feed-forward: down(silu(gate(x)) * up(x))."""

    def __init__(self, width=6, hidden=10):
        super().__init__()
        self.gate, self.up = nn.Linear(width, hidden), nn.Linear(width, hidden)
        self.down, self.act = nn.Linear(hidden, width), nn.SiLU()

    def forward(self, x):
        return self.down(self.act(self.gate(x)) * self.up(x))


class SharedTwice(nn.Module):
    """One Linear called in a chain, then beside itself."""

    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        y = self.layer(self.layer(x))
        return self.head(self.layer(y) * 2 + self.layer(y * 3))


class RecurrentHead(nn.Module):
    """A recurrent layer whose tuple output is partly used."""

    def __init__(self, kind: str):
        super().__init__()
        self.kind = kind
        cls = {"lstm": nn.LSTM, "gru": nn.GRU}[kind]
        self.rnn = cls(4, 5, batch_first=True)
        self.head = nn.Linear(5, 2)

    def forward(self, x):
        out, state = self.rnn(x)
        if self.kind == "lstm-h":
            return self.head(state[0][-1])
        return self.head(out[:, -1])


class HiddenOnly(RecurrentHead):
    def __init__(self):
        super().__init__("lstm")
        self.kind = "lstm-h"


class AttentionWithWeights(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        out, weights = self.attn(x, x, x, need_weights=True)  # the weights are never used
        return self.head(out)


class ListIn(nn.Module):
    def forward(self, parts):
        return parts[0] * 2 + parts[1]


class ListOut(nn.Module):
    def forward(self, x):
        return [x * 2, x * 3]


class ListModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.split, self.join, self.head = ListOut(), ListIn(), nn.Linear(3, 1)

    def forward(self, x):
        return self.head(self.join(self.split(x)))


class NoGradOutputs(nn.Module):
    """A module whose output needs no gradient (an index) beside one that does."""

    def __init__(self):
        super().__init__()
        self.scores = nn.Linear(4, 3)
        self.pick = Argmax()
        self.detached = Detached()

    def forward(self, x):
        s = self.scores(x)
        return s.gather(1, self.pick(s)).sum() + self.detached(s).sum()


class Argmax(nn.Module):
    def forward(self, s):
        return s.argmax(1, keepdim=True)


class Detached(nn.Module):
    def forward(self, s):
        return s.detach() * 2


@dataclasses.dataclass
class Output:
    logits: torch.Tensor


class DataclassOut(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(3, 2)

    def forward(self, x):
        return Output(self.layer(x))


class DictOut(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(3, 2)

    def forward(self, x):
        return {"logits": self.layer(x), "hidden": x}


class Wrap(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        out = self.inner(x)
        return out.logits if isinstance(out, Output) else out["logits"]


class TiedLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 4)
        self.block = nn.Linear(4, 4)
        self.lm_head = nn.Linear(4, 10, bias=False)
        self.lm_head.weight = self.embed.weight

    def forward(self, ids):
        return self.lm_head(torch.tanh(self.block(self.embed(ids))))


class KeywordCalls(nn.Module):
    """Submodules called by keyword only, as transformers does."""

    def __init__(self):
        super().__init__()
        self.layer = KeywordLayer()
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        return self.head(self.layer(hidden_states=x, scale=2.0))


class KeywordLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, hidden_states, scale=1.0):
        return self.proj(hidden_states) * scale


class OutputUsedTwice(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b, self.c = nn.Linear(3, 3), nn.Linear(3, 3), nn.Linear(3, 3)

    def forward(self, x):
        h = self.a(x)
        return self.b(h) * self.c(h) + h


def conv_net(inplace: bool) -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(3, 4, 3),
        nn.BatchNorm2d(4),
        nn.ReLU(inplace=inplace),
        nn.Conv2d(4, 4, 3),
        nn.ReLU(inplace=inplace),
        nn.Flatten(),
        nn.Linear(4 * 4 * 4, 2),
    )


def triplet(model):
    a, p, n = (torch.randn(3, 6) for _ in range(3))
    za, zp, zn = model(a), model(p), model(n)
    nn.functional.triplet_margin_loss(za, zp, zn).backward()


def grad_wrt_input(model):
    x = torch.randn(3, 6, requires_grad=True)
    (g,) = torch.autograd.grad(model(x).sum(), x)
    assert g.shape == x.shape


def grad_penalty(model):
    x = torch.randn(3, 6, requires_grad=True)
    (g,) = torch.autograd.grad(model(x).sum(), x, create_graph=True)
    (g.square().sum() + model(x).sum()).backward()


def grad_of_middle(model):
    x = torch.randn(3, 6)
    hidden = model.body[0](x)
    out = model(x)
    torch.autograd.grad(out.sum() + hidden.sum(), list(model.body[2].parameters()))


class Spectrum(nn.Module):
    def forward(self, x):
        return torch.fft.fft(x)


class Magnitude(nn.Module):
    def forward(self, z):
        return z.abs()


def with_gradient_hooks(model):
    model.body[0].register_full_backward_hook(lambda m, gi, go: (gi[0] * 3,))
    model.body[2].register_full_backward_pre_hook(lambda m, g: (g[0].clamp(-0.1, 0.1),))


PATTERNS = {
    "residual block": (
        Residual,
        lambda m: backward_of_sum(m, torch.randn(3, 6, requires_grad=True)),
    ),
    "residual block, input needs no gradient": (
        Residual,
        lambda m: backward_of_sum(m, torch.randn(3, 6)),
    ),
    "q, k and v read one tensor": (Attention, lambda m: backward_of_sum(m, torch.randn(2, 5, 8))),
    "gate and up read one tensor": (GatedMLP, lambda m: backward_of_sum(m, torch.randn(4, 6))),
    "a module called four times": (SharedTwice, lambda m: backward_of_sum(m, torch.randn(2, 4))),
    "LSTM, output used": (
        lambda: RecurrentHead("lstm"),
        lambda m: backward_of_sum(m, torch.randn(2, 3, 4)),
    ),
    "LSTM, hidden state used": (HiddenOnly, lambda m: backward_of_sum(m, torch.randn(2, 3, 4))),
    "GRU, output used": (
        lambda: RecurrentHead("gru"),
        lambda m: backward_of_sum(m, torch.randn(2, 3, 4)),
    ),
    "attention weights unused": (
        AttentionWithWeights,
        lambda m: backward_of_sum(m, torch.randn(2, 5, 8)),
    ),
    "three forwards, one backward": (Residual, triplet),
    "autograd.grad": (Residual, grad_wrt_input),
    "gradient of a gradient": (Residual, grad_penalty),
    "autograd.grad from a middle tensor": (Residual, grad_of_middle),
    "list in, list out": (
        ListModel,
        lambda m: backward_of_sum(m, torch.randn(2, 3, requires_grad=True)),
    ),
    "outputs that need no gradient": (
        NoGradOutputs,
        lambda m: backward_of_sum(m, torch.randn(2, 4)),
    ),
    "a dataclass output": (
        lambda: Wrap(DataclassOut()),
        lambda m: backward_of_sum(m, torch.randn(2, 3)),
    ),
    "a dict output": (
        lambda: Wrap(DictOut()),
        lambda m: backward_of_sum(m, torch.randn(2, 3, requires_grad=True)),
    ),
    "tied weights": (TiedLM, lambda m: backward_of_sum(m, torch.tensor([[1, 2, 3]]))),
    "keyword-only calls": (
        KeywordCalls,
        lambda m: backward_of_sum(m, torch.randn(2, 4, requires_grad=True)),
    ),
    "an output read by three": (OutputUsedTwice, lambda m: backward_of_sum(m, torch.randn(2, 3))),
    "nn.Identity returns its input": (
        lambda: nn.Sequential(nn.Linear(3, 3), nn.Identity(), nn.Linear(3, 1)),
        lambda m: backward_of_sum(m, torch.randn(2, 3)),
    ),
    "complex outputs and gradients (an FFT), read as |z|": (
        lambda: nn.Sequential(nn.Linear(8, 8), Spectrum(), Magnitude(), nn.Linear(8, 1)),
        lambda m: backward_of_sum(m, torch.randn(3, 8)),
    ),
    "nn.Transformer": (
        lambda: nn.Transformer(8, 2, 1, 1, 16, dropout=0.0, batch_first=True),
        lambda m: m(torch.randn(2, 4, 8), torch.randn(2, 3, 8)).sum().backward(),
    ),
}


def make(name):
    build, run = PATTERNS[name]

    def built():
        model = build()
        if name == "hooks that change gradients":
            with_gradient_hooks(model)
        return model, run

    return built


@pytest.mark.parametrize("name", list(PATTERNS))
def test_record_sees_what_torchs_hooks_see(name):
    events = check_against_torch(make(name), what=name)
    assert any(e.phase.startswith("backward") for e in events) or "grad" not in name


def test_hooks_that_change_gradients():
    def build():
        model = Residual()
        with_gradient_hooks(model)
        return model, lambda m: backward_of_sum(m, torch.randn(3, 6, requires_grad=True))

    check_against_torch(build, what="hooks that change gradients")


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode"])
def test_without_gradients_only_forward_events_and_no_crash(mode):
    context = getattr(torch, mode)

    def build():
        def run(m):
            with context():
                return m(torch.randn(3, 6))

        return Residual(), run

    events = check_against_torch(build, what=mode)
    assert {e.phase for e in events} == {"forward_pre", "forward"}


def test_in_place_relu_after_a_module_gives_the_events_of_the_same_net_without():
    """torch's full hooks raise before an in-place ReLU; record()'s events are those torch gives on
    the same net with in-place off: the gradient w.r.t. the value the module returned."""
    model = conv_net(inplace=True)
    handles = [m.register_full_backward_hook(lambda m, gi, go: None) for m in model]
    with pytest.raises(RuntimeError, match="is a view and is being modified inplace"):
        model(torch.randn(2, 3, 8, 8))
    for h in handles:
        h.remove()

    def run(m):
        m(torch.randn(2, 3, 8, 8)).sum().backward()

    check_against_torch(
        lambda: (conv_net(True), run),
        reference=lambda: (conv_net(False), run),
        what="in-place ReLU",
    )


def test_a_module_called_three_times_numbers_its_backward_events_by_call():
    """Each call's events carry the call's number: grad_output of call k is 10**k here."""
    layer = nn.Linear(2, 2)
    model = nn.Sequential(layer)

    class Thrice(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = layer

        def forward(self, x):
            return sum(self.layer(x * (k + 1)) * 10**k for k in range(3))

    model = Thrice()
    with hv.record(model, modules=["layer"]) as rec:
        model(torch.randn(1, 2)).sum().backward()
    pre = {e.call: e.main.max for e in rec.select(phase="backward_pre")}
    assert pre == {0: 1.0, 1: 10.0, 2: 100.0}
    assert_no_hooks(model)


def test_gradients_stay_bitwise_and_no_leaf_gets_zeros_it_would_not_have():
    """torch's own identity turns a missing gradient into zeros (an unused input's .grad becomes
    zeros); record() leaves .grad as the model alone leaves it, and still reports zeros."""

    class Unused(nn.Module):
        def forward(self, x, unused):
            return x * 2

    x, unused = torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
    model = Unused()
    with hv.record(model) as rec:
        model(x, unused).sum().backward()
    assert unused.grad is None
    (event,) = rec.select(phase="backward")
    assert [t.name for t in event.tensors] == ["grad_input[0]", "grad_input[1]"]
    assert event.tensors[1].max == 0.0 and event.tensors[1].min == 0.0
