"""hookviz never changes what it watches: bare, under record() and under HookMonitor, a model
computes the same bits, and where torch's own full hooks can run, record()'s events are theirs.

Each scenario is a class of model that a recorder built on torch's identity nodes (or on aliases
of its tensors) gets wrong: an in-place change to a tensor someone else still holds (inside a
module, by an in-place activation after a module, in a view), a tensor read by several modules
(whose gradient an extra node sums in another order), ``query is key is value`` (attention's fast
path), tensors kept by a user's hook, checkpointing, autocast, tied weights. For each: outputs,
parameter gradients and input gradients are compared bit for bit (``torch.equal``) across the
three runs, nothing is left registered, and torch's full hooks either raise on the model (then
record() must still give the bare bits) or agree with record() event for event.
"""

from __future__ import annotations

import warnings

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch import nn
from torch.utils.checkpoint import checkpoint

import hookviz as hv
from tests.oracle.torch_oracle import check_against_torch, torch_events


class ChangesItsInput(nn.Module):
    """Scales its input in place, as a router's jitter noise does, while the caller keeps it."""

    def __init__(self, width=6):
        super().__init__()
        self.proj = nn.Linear(width, width)

    def forward(self, h):
        h *= torch.linspace(0.9, 1.1, h.shape[-1])
        return self.proj(h)


class CallerReusesInput(nn.Module):
    def __init__(self, width=6):
        super().__init__()
        self.embed, self.router, self.head = (
            nn.Linear(width, width),
            ChangesItsInput(width),
            nn.Linear(width, 2),
        )

    def forward(self, x):
        h = self.embed(x)
        return self.head(self.router(h) + h)  # h was changed inside router, and is read again


class KeepsConvOutput(nn.Module):
    """A user's forward hook keeps a conv output for an extra loss; ReLU(inplace=True) follows."""

    def __init__(self):
        super().__init__()
        self.conv, self.act = nn.Conv2d(3, 4, 3), nn.ReLU(inplace=True)
        self.head = nn.Linear(4 * 6 * 6, 2)
        self.kept: list[torch.Tensor] = []
        self.conv.register_forward_hook(lambda m, a, out: self.kept.append(out))

    def forward(self, x):
        self.kept.clear()
        y = self.head(self.act(self.conv(x)).flatten(1))
        return y.sum() + self.kept[0].mean()  # linear: the ReLU's mask shows in its gradient


class ReluUnderscore(nn.Module):
    """``y = relu_(h)`` then ``y + h``: one tensor, changed in place, read twice; here the
    ``relu_`` runs in a module of its own, whose input is ``h``."""

    def __init__(self):
        super().__init__()
        self.a, self.act, self.b = nn.Linear(6, 6), InPlaceRelu(), nn.Linear(6, 2)

    def forward(self, x):
        h = self.a(x)
        y = self.act(h)
        return self.b(y + h)


class InPlaceRelu(nn.Module):
    def forward(self, x):
        return torch.relu_(x)


class ViewInPlace(nn.Module):
    """Adds to a slice of its input in place: a view's in-place op rebases the whole tensor."""

    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(6, 6), nn.Linear(6, 2)

    def forward(self, x):
        h = self.a(x)
        h[:, :3] += 1.0
        return self.b(h) + h.sum()


class SelfAttention(nn.Module):
    """``attn(h, h, h)``: MultiheadAttention takes its fast path only while query is key is value."""

    def __init__(self, width=8):
        super().__init__()
        self.proj = nn.Linear(width, width)
        self.attn = nn.MultiheadAttention(width, 2, batch_first=True)
        self.out = nn.Linear(width, 1)

    def forward(self, x):
        h = self.proj(x)
        return self.out(self.attn(h, h, h, need_weights=False)[0] + h)


class FanOut(nn.Module):
    """One tensor read by five: its gradient is a sum of five parts, in the engine's order."""

    def __init__(self, width=16):
        super().__init__()
        self.a = nn.Linear(width, width)
        self.q, self.k, self.v, self.g = (nn.Linear(width, width) for _ in range(4))
        self.out = nn.Linear(width, 1)

    def forward(self, x):
        h = self.a(x)
        return self.out(self.q(h) * self.k(h) + torch.tanh(self.v(h)) * self.g(h) + h)


class Checkpointed(nn.Module):
    def __init__(self, reentrant: bool):
        super().__init__()
        self.reentrant = reentrant
        self.block = nn.Sequential(nn.Linear(6, 6), nn.ReLU(inplace=True), nn.Linear(6, 6))
        self.head = nn.Linear(6, 1)

    def forward(self, x):
        return self.head(checkpoint(self.block, x, use_reentrant=self.reentrant))


class Autocast(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 8))
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            h = self.body(x)
        return self.head(h.float() + x)


class TiedWeights(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(12, 6)
        self.block = nn.Linear(6, 6)
        self.lm_head = nn.Linear(6, 12, bias=False)
        self.lm_head.weight = self.embed.weight

    def forward(self, ids):
        return self.lm_head(torch.tanh(self.block(self.embed(ids))))


class PassesThrough(nn.Module):
    """nn.Identity returns its input as it came; the caller read that input before too."""

    def __init__(self):
        super().__init__()
        self.a, self.skip, self.b = nn.Linear(6, 6), nn.Identity(), nn.Linear(6, 6)

    def forward(self, x):
        h = self.a(x)
        gate = torch.sigmoid(h)
        return self.b(self.skip(h)) * gate


def loss_of(output) -> torch.Tensor:
    return output if output.dim() == 0 else output.square().mean()


def inputs(shape, *, grad: bool = True, kind: str = "randn"):
    def make():
        torch.manual_seed(1)
        if kind == "ids":
            return (torch.randint(0, 12, shape),)
        x = torch.randn(*shape)
        return (x.requires_grad_(grad),)

    return make


SCENARIOS = {
    "a module scales its input in place; the caller reads it again": (
        CallerReusesInput,
        inputs((4, 6)),
        True,
    ),
    "a hook keeps a conv output; ReLU(inplace=True) follows": (
        KeepsConvOutput,
        inputs((2, 3, 8, 8)),
        True,
    ),
    "relu_(h), then y + h": (ReluUnderscore, inputs((4, 6)), True),
    "an in-place op on a slice": (ViewInPlace, inputs((4, 6)), True),
    "MultiheadAttention(h, h, h)": (SelfAttention, inputs((2, 5, 8)), False),
    "one tensor read by five modules": (FanOut, inputs((32, 16)), False),
    "checkpointing, not reentrant": (lambda: Checkpointed(False), inputs((4, 6)), True),
    "checkpointing, reentrant": (lambda: Checkpointed(True), inputs((4, 6)), True),
    "autocast to bfloat16": (Autocast, inputs((4, 8)), False),
    "tied weights": (TiedWeights, inputs((2, 5), kind="ids"), False),
    "an input passed through and read again": (PassesThrough, inputs((4, 6)), False),
    "nn.Transformer": (
        lambda: nn.Transformer(8, 2, 1, 1, 16, dropout=0.0, batch_first=True),
        lambda: (torch.randn(2, 4, 8), torch.randn(2, 3, 8)),
        False,
    ),
}


def compute(build, make_inputs, watch=None):
    """One forward and backward from the same seeds: the output, every parameter's gradient, and
    the inputs' gradients; ``watch(model)`` returns a context manager to run it under."""
    torch.manual_seed(0)
    model = build()
    args = make_inputs()
    hooks_before = [str(h) for h in hv.list_hooks(model)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if watch is None:
            output = model(*args)
            loss_of(output).backward()
        else:
            with watch(model):
                output = model(*args)
                loss_of(output).backward()
    grads = {name: p.grad for name, p in model.named_parameters()}
    assert [str(h) for h in hv.list_hooks(model)] == hooks_before, "a hook was left behind"
    return model, output.detach(), grads, [a.grad for a in args if a.requires_grad]


def assert_same_bits(expected, got, what: str) -> None:
    _, out_a, grads_a, inputs_a = expected
    model, out_b, grads_b, inputs_b = got
    assert torch.equal(out_a, out_b), f"{what}: the output changed"
    assert grads_a.keys() == grads_b.keys()
    changed = [n for n in grads_a if not _same(grads_a[n], grads_b[n])]
    assert not changed, f"{what}: gradients changed: {changed}"
    assert all(_same(a, b) for a, b in zip(inputs_a, inputs_b, strict=True)), what


def _same(a, b) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and torch.equal(a, b))


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_the_model_computes_the_same_bits_under_record_and_monitor(name):
    build, make_inputs, _ = SCENARIOS[name]
    bare = compute(build, make_inputs)
    assert_same_bits(bare, compute(build, make_inputs, hv.record), f"{name}, record()")
    assert_same_bits(bare, compute(build, make_inputs, hv.HookMonitor), f"{name}, HookMonitor")


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_where_torchs_hooks_run_the_events_are_theirs(name):
    """The class of each scenario is checked: those marked in place make torch's full hooks
    raise (where record() must still compute the bare bits, above); on the others torch's
    hooks run and record()'s events agree with theirs."""
    build, make_inputs, torch_raises = SCENARIOS[name]

    def run(model):
        loss_of(model(*make_inputs())).backward()

    if torch_raises:
        torch.manual_seed(0)
        model = build()
        with pytest.raises(RuntimeError, match="view|inplace|in-place|modified"):
            torch_events(model, lambda: run(model))
    else:
        check_against_torch(lambda: (build(), run), what=name, rtol=2e-4)


def test_attention_keeps_its_fast_path_in_bfloat16_too():
    """In bfloat16 the fast path and the slow one part by 1e-2: the bits tell which one ran."""

    def build():
        return SelfAttention().to(torch.bfloat16)

    def make_inputs():
        torch.manual_seed(1)
        return (torch.randn(2, 5, 8, dtype=torch.bfloat16),)

    bare = compute(build, make_inputs)
    assert_same_bits(bare, compute(build, make_inputs, hv.record), "bfloat16 attention, record()")


# -- made-up graphs with in-place ops and shared tensors ----------------------------------------


class InPlace(nn.Module):
    """Changes its input in place and returns it (an activation with inplace=True)."""

    def forward(self, x):
        return x.mul_(0.5).add_(0.25)


class Split(nn.Module):
    def forward(self, x):
        return x * 2, torch.sin(x)


class Join(nn.Module):
    def forward(self, a, b):
        return a * b + a


class RandomGraph(nn.Module):
    def __init__(self, plan):
        super().__init__()
        self.plan = plan
        self.linears = nn.ModuleList(nn.Linear(3, 3) for _ in range(2))
        self.inplace, self.split, self.join = InPlace(), Split(), Join()

    def forward(self, x):
        values = [self.linears[0](x)]
        for op, arg, other in self.plan:
            a = values[arg % len(values)]
            if op == "in place":
                values.append(self.inplace(a))  # a is changed: every later read sees it
            elif op == "in place, functional":
                values.append(torch.tanh_(a))
            elif op == "split":
                values.extend(self.split(a))
            elif op == "join":
                values.append(self.join(a, values[other % len(values)]))
            else:
                values.append(self.linears[int(op)](a))
        return sum(v.square().mean() for v in values[-3:])


step = st.tuples(
    st.sampled_from(["0", "1", "in place", "in place, functional", "split", "join"]),
    st.integers(0, 20),
    st.integers(0, 20),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=st.lists(step, min_size=1, max_size=8), input_grad=st.booleans())
def test_made_up_graphs_compute_the_same_bits_or_raise_the_same(plan, input_grad):
    def run(watch=None):
        try:
            return compute(lambda: RandomGraph(plan), inputs((2, 3), grad=input_grad), watch)
        except RuntimeError as error:  # an in-place op autograd refuses: bare refuses it too
            return str(error).split("\n")[0]

    bare = run()
    recorded = run(hv.record)
    if isinstance(bare, str):
        assert recorded == bare
    else:
        assert_same_bits(bare, recorded, f"plan {plan}")


# -- hooks registered while the model runs ----------------------------------------------------


class RegistersOnFirstCall(nn.Module):
    """On its first call it registers a forward hook on a child, as transformers does to capture
    outputs; this one replaces the child's output (doubles it)."""

    def __init__(self):
        super().__init__()
        self.a, self.b, self.head = nn.Linear(4, 4), nn.Linear(4, 4), nn.Linear(4, 1)
        self.installed = False

    def forward(self, x):
        if not self.installed:
            self.b.register_forward_hook(lambda m, args, out: out * 2)
            self.installed = True
        return self.head(torch.tanh(self.b(torch.tanh(self.a(x)))))


def test_a_hook_registered_during_forward_still_runs_before_records():
    """record()'s hooks stay last, as torch's own wrapping of outputs comes after every forward
    hook however late it was registered: the events see the replaced output and the gradient
    w.r.t. it, on the first call already."""
    torch.manual_seed(0)
    model = RegistersOnFirstCall()
    torch.manual_seed(1)
    x = torch.randn(3, 4)
    expected, _ = torch_events(model, lambda: model(x).sum().backward())
    torch.manual_seed(0)
    model = RegistersOnFirstCall()
    undoubled = model.b(torch.tanh(model.a(x))).detach()
    with hv.record(model) as rec:
        model(x).sum().backward()  # the first call: the hook is registered inside it
    forward = rec.select(phase="forward", path="b")[0].main
    assert forward.max == pytest.approx(2 * float(undoubled.max()))  # the doubled output
    torch_pre = [e for e in expected if e.phase == "backward_pre" and e.path == "b"][0]
    recorded_pre = rec.select(phase="backward_pre", path="b")[0].main
    assert recorded_pre.norm == pytest.approx(torch_pre.values[0].norm, rel=1e-5)


# -- what torch keeps apart only by handing the caller a new tensor -----------------------------


def grads_of(rec, phase: str, path: str) -> torch.Tensor:
    """The (small) gradient an event carried, read back from its exact values."""
    event = rec.select(phase=phase, path=path)[0]
    return torch.tensor(event.main.values).reshape(event.main.shape)


def test_a_pass_through_input_read_again_counts_in_its_grad_output():
    """``skip`` returns ``h`` as it came and the caller reads ``h`` again: torch's hooks hand the
    caller a new tensor and leave that read out of skip's grad_output; autograd alone cannot tell
    the two reads apart, so record() counts both, as it documents."""

    class ReadsAgain(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.skip, self.b = nn.Linear(3, 3), nn.Identity(), nn.Linear(3, 3)

        def forward(self, x):
            h = self.a(x)
            return self.b(self.skip(h)) * h

    torch.manual_seed(0)
    model = ReadsAgain()
    x = torch.randn(2, 3)
    h = model.a(x)
    total = torch.autograd.grad((model.b(h) * h).sum(), h)[0]  # every reader of h
    with hv.record(model) as rec:
        model(x).sum().backward()
    assert torch.allclose(grads_of(rec, "backward_pre", "skip"), total)
    seen, _ = torch_events(model, lambda: model(x).sum().backward())
    by_torch = [e for e in seen if e.phase == "backward_pre" and e.path == "skip"][0]
    assert by_torch.values[0].norm != pytest.approx(float(total.norm()), rel=1e-3)


def test_a_tensor_a_forward_hook_keeps_counts_in_grad_output():
    class KeepsAndReads(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Linear(3, 3), nn.Linear(3, 1)
            self.kept = []
            self.a.register_forward_hook(lambda m, args, out: self.kept.append(out))

        def forward(self, x):
            self.kept.clear()
            return self.b(torch.tanh(self.a(x))).sum() + self.kept[0].square().sum()

    torch.manual_seed(0)
    model = KeepsAndReads()
    x = torch.randn(2, 3)
    out = model.a(x)
    total = torch.autograd.grad(model.b(torch.tanh(out)).sum() + out.square().sum(), out)[0]
    with hv.record(model) as rec:
        model(x).backward()
    assert torch.allclose(grads_of(rec, "backward_pre", "a"), total)
    seen, _ = torch_events(model, lambda: model(x).backward())
    by_torch = [e for e in seen if e.phase == "backward_pre" and e.path == "a"][0]
    assert by_torch.values[0].norm != pytest.approx(float(total.norm()), rel=1e-3)


def test_a_module_that_changes_its_input_in_place_holds_every_later_reader_in_its_share():
    """``router`` scales ``h`` in place and its caller reads ``h`` again: that read goes through
    router's in-place op, so router's grad_input is all the gradient ``h``'s maker gets."""
    torch.manual_seed(0)
    model = CallerReusesInput(width=3)
    with hv.record(model) as rec:
        loss_of(model(torch.randn(2, 3))).backward()
    share = grads_of(rec, "backward", "router")
    assert torch.allclose(share, grads_of(rec, "backward_pre", "embed"))


def test_a_share_autograd_grad_does_not_need_is_none():
    """``torch.autograd.grad`` w.r.t. ``a``'s weight alone: autograd never computes the gradient
    w.r.t. ``b``'s output, so the join's share for it is None (torch's own identity node asks
    for it, and computes it); the share that is needed is there."""

    class Two(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b, self.join = nn.Linear(3, 3), nn.Linear(3, 3), Join()

        def forward(self, x):
            return self.join(self.a(x), self.b(x))

    torch.manual_seed(0)
    model = Two()
    with hv.record(model) as rec:
        torch.autograd.grad(model(torch.randn(2, 3)).sum(), [model.a.weight])
    (event,) = rec.select(phase="backward", path="join")
    needed, unneeded = event.tensors
    assert needed.value_type == "tensor" and unneeded.value_type == "None"
