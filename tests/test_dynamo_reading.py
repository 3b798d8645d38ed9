"""What hookviz reads from torch's compiler, checked on the torch installed here.

`hookviz.dynamo_reading` is the one module that reads `torch._dynamo` and `torch._logging`
beyond their public functions. Each test below pins one of those reads, and the behaviour of
dynamo that `compare_compiled` is built on, so that a torch that changes one fails here, by name,
before any report goes wrong quietly.
"""

from __future__ import annotations

import logging

import pytest
import torch
import torch._dynamo
from torch import nn

from hookviz import dynamo_reading


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


class TwoLayers(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 3)
        self.b = nn.Linear(3, 3)

    def forward(self, x):
        return self.b(self.a(x))


def breaks_with_print(model: nn.Module, x: torch.Tensor) -> None:
    """A forward hook that prints: a graph break inside the hook."""
    model.a.register_forward_hook(lambda module, inputs, output: print(end=""))
    torch.compile(model, backend="eager")(x)


def test_the_graph_break_logger_has_its_name_and_writes_reason_id_and_traceback():
    with dynamo_reading.Watch(clock=iter(range(1000)).__next__) as watch:
        breaks_with_print(TwoLayers(), torch.ones(2, 3))
        counts = watch.counts()
    assert watch.breaks, f"nothing came to {dynamo_reading.GRAPH_BREAK_LOGGER!r}"
    record = watch.breaks[0]  # (then the hook's own frame breaks again, when it runs eagerly)
    assert record.reason.startswith("Failed to trace builtin operator"), record.reason
    assert "Explanation:" in record.reason and "For more details" not in record.reason
    assert record.gb_id is not None and record.file == __file__
    assert [f.function for f in record.frames][-1] == "<lambda>"
    assert counts.graph_break_count == len(watch.breaks), "counters['graph_break'] changed"
    assert list(counts.graph_breaks)[0].startswith("Failed to trace builtin operator")


def test_the_graph_break_loggers_are_torchs_artifact_loggers():
    import torch._dynamo.convert_frame  # noqa: F401 (each module makes its logger on import)
    import torch._dynamo.exc  # noqa: F401
    import torch._dynamo.symbolic_convert  # noqa: F401

    known = logging.Logger.manager.loggerDict
    for name in dynamo_reading.GRAPH_BREAK_LOGGERS:
        assert name in known, f"torch has no logger {name!r} any more"
        assert getattr(known[name], "artifact_name", None) == "graph_breaks", name


def test_a_module_level_backward_hook_break_has_the_id_hookviz_knows():
    model = TwoLayers()
    model.a.register_full_backward_hook(lambda module, grad_input, grad_output: None)
    with dynamo_reading.Watch(clock=iter(range(1000)).__next__) as watch:
        torch.compile(model, backend="eager")(torch.ones(2, 3)).sum().backward()
    ids = [b.gb_id for b in watch.breaks]
    assert ids == [dynamo_reading.MODULE_BACKWARD_HOOKS], [b.reason for b in watch.breaks]
    assert watch.breaks[0].reason.startswith("Module-level backwards hooks")


def test_compile_records_carry_recompiles_and_the_limit():
    kept = []
    model = TwoLayers()
    model.a.register_forward_hook(lambda module, inputs, output: kept.append(output))
    limit = dynamo_reading.config()["recompile_limit"]
    with dynamo_reading.Watch(clock=iter(range(1000)).__next__) as watch:
        compiled = torch.compile(model, backend="eager")
        for _ in range(limit + 2):
            compiled(torch.ones(2, 3))
        compiles = watch.compiles()
        counts = watch.counts()
    assert [c.attempt for c in compiles] == list(range(limit + 1))
    assert all(c.function == "forward" and c.file == __file__ and c.line for c in compiles)
    assert "len(" in compiles[2].recompile_reason, compiles[2].recompile_reason
    assert compiles[-1].hit_recompile_limit, compiles[-1].fail_reason
    assert all(c.start_us > 0 for c in compiles)
    assert counts.graphs == limit
    assert any("recompile_limit" in w for w in watch.warnings), (
        f"no warning from {dynamo_reading.CONVERT_FRAME_LOGGER!r}"
    )


def test_the_settings_it_reads_are_in_dynamos_config():
    settings = dynamo_reading.config()
    assert set(settings) == {"recompile_limit", "skip_nnmodule_hook_guards", "compiled_autograd"}
    assert isinstance(settings["recompile_limit"], int)


def test_a_frame_marked_to_run_eagerly_is_not_compiled_but_what_it_calls_is():
    calls = []

    def inner(x):
        return x * 2

    def outer(x):
        calls.append(torch.compiler.is_compiling())
        return inner(x)

    dynamo_reading.run_eagerly_when_called_from_eager_code(outer.__code__)
    with dynamo_reading.Watch(clock=iter(range(1000)).__next__) as watch:
        torch.compile(outer, backend="eager")(torch.ones(2))
        names = [c.function for c in watch.compiles()]
    assert calls == [False] and names == ["inner"]


def test_a_store_on_an_object_in_traced_code_is_replayed_without_an_op_or_a_guard():
    """compare_compiled's observer: a hook traced into a graph sets an attribute on an object of
    its own; dynamo replays the store after the graph, adds no op for it, and recompiles nothing
    when the stored value changes from call to call."""

    class Signals:
        pass

    signals = Signals()
    graphs = []

    def backend(gm, example_inputs):
        graphs.append([n.target for n in gm.graph.nodes if n.op == "call_function"])
        return gm.forward

    name = "seen"  # the observer's names are made per hook, as this one

    def observe(x):
        y = x + 1
        setattr(signals, name, y)
        return y * 2

    compiled = torch.compile(observe, backend=backend)
    for value in (1.0, 2.0, 3.0):
        compiled(torch.full((2,), value))
        assert torch.equal(signals.seen, torch.full((2,), value + 1))
        del signals.seen
    assert len(graphs) == 1 and len(graphs[0]) == 2  # add and mul: the store is no op


def test_the_watch_puts_back_the_loggers_and_the_metrics_limit():
    from torch._dynamo import utils

    names = (*dynamo_reading.GRAPH_BREAK_LOGGERS, dynamo_reading.CONVERT_FRAME_LOGGER)

    def state():
        loggers = [logging.getLogger(n) for n in names]
        return [(log.level, log.propagate, list(log.handlers)) for log in loggers]

    before, limit = state(), utils._compilation_metrics.maxlen
    with dynamo_reading.Watch(clock=iter(range(1000)).__next__):
        assert state() != before
    assert state() == before and utils._compilation_metrics.maxlen == limit


def test_backends_are_torchs_list():
    names = dynamo_reading.backends()
    assert {"eager", "aot_eager", "inductor"} <= set(names)


def test_what_dynamo_traced_is_noted_while_it_traces_also_inside_a_checkpoint():
    from torch.utils.checkpoint import checkpoint

    comptime = dynamo_reading.comptime()

    def observed(x):
        hook_number = 7  # noqa: F841 (note_traced reads it)
        comptime(dynamo_reading.note_traced)
        return x * 2

    def model(x):
        return checkpoint(observed, x, use_reentrant=False) + 1

    with dynamo_reading.Watch(clock=iter(range(1000)).__next__) as watch:
        torch.compile(model, backend="eager")(torch.ones(2))
        counts = watch.counts()
    assert (7, "0/0") in dynamo_reading.TRACED
    assert counts.graph_break_count == 0 and counts.graphs == 1
