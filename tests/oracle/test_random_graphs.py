"""record() against torch's own hooks on small module graphs hypothesis makes up.

A graph is a list of steps over the values computed so far: a Linear (from a pool of three,
so a module is reused), a shared Tanh, a Split whose tuple output may be used in part or not at
all, and a Join of two values. Values fan out to any later step; the loss adds some of them; the
input may or may not need a gradient; the pass may be ``.backward()`` or ``torch.autograd.grad``.
"""

from __future__ import annotations

import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch import nn

from tests.oracle.torch_oracle import check_against_torch

WIDTH = 3


class Split(nn.Module):
    def forward(self, x):
        return x * 2, torch.sin(x)


class Join(nn.Module):
    def forward(self, a, b):
        return a * b + a


class RandomGraph(nn.Module):
    def __init__(self, plan, loss_from):
        super().__init__()
        self.plan, self.loss_from = plan, loss_from
        self.linears = nn.ModuleList(nn.Linear(WIDTH, WIDTH) for _ in range(3))
        self.tanh, self.split, self.join = nn.Tanh(), Split(), Join()

    def forward(self, x):
        values = [x]
        for op, arg, other in self.plan:
            a = values[arg % len(values)]
            if op == "split":
                values.extend(self.split(a))  # the tuple's parts, each used or not later
            elif op == "join":
                values.append(self.join(a, values[other % len(values)]))
            elif op == "tanh":
                values.append(self.tanh(a))
            else:
                values.append(self.linears[int(op)](a))
        used = {i % len(values) for i in self.loss_from} | {len(values) - 1}
        return sum(values[i].sum() for i in sorted(used) if values[i].requires_grad)


step = st.tuples(
    st.sampled_from(["0", "1", "2", "tanh", "split", "join"]),
    st.integers(0, 20),
    st.integers(0, 20),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    plan=st.lists(step, min_size=1, max_size=7),
    loss_from=st.lists(st.integers(0, 20), max_size=3),
    input_grad=st.booleans(),
    use_autograd_grad=st.booleans(),
)
def test_random_graphs_give_torchs_events(plan, loss_from, input_grad, use_autograd_grad):
    def build():
        model = RandomGraph(plan, loss_from)

        def run(m):
            x = torch.randn(2, WIDTH, requires_grad=input_grad)
            loss = m(x)
            if not isinstance(loss, torch.Tensor) or not loss.requires_grad:
                return
            if use_autograd_grad:
                torch.autograd.grad(loss, list(m.linears[0].parameters()), allow_unused=True)
            else:
                loss.backward()

        return model, run

    check_against_torch(
        build, what=f"plan {plan}, loss from {loss_from}", restricted=use_autograd_grad
    )
