"""What hookviz reads from `torch._dynamo` and `torch._logging`: the one module that touches them.

`compare_compiled()` needs facts only torch's compiler knows: the graph breaks it took and why,
the frames it compiled again and which guard failed, how many graphs it made. torch has public
ways to show these to a person (`TORCH_LOGS="graph_breaks,recompiles"`, `torch._dynamo.explain`)
but none that returns them to a program during an ordinary run, so this module reads the same
sources those tools read, and nothing else in hookviz does:

- `torch._dynamo.utils.counters`: the graph breaks by reason, the graphs made;
- the `graph_breaks` artifact logger (what `TORCH_LOGS="graph_breaks"` prints): each break's
  reason, torch's graph-break id (`gb0083`) and the user code traceback;
- `torch._dynamo.utils.get_compilation_metrics()`: one record per frame compiled, with the guard
  failure that made it compile again (`recompile_reason`) and why a compile failed;
- `torch._dynamo.eval_frame.skip_code`: hookviz's observer runs as plain Python when called from
  eager code, so that dynamo compiles the user's hook as it would without hookviz;
- `torch._dynamo.comptime` and `torch._guards.CompileContext`: which hook dynamo traced, in which
  compile, noted while it traces (no op, no guard, also inside a higher-order op);
- `torch._dynamo.config`: `recompile_limit`, `skip_nnmodule_hook_guards`, `compiled_autograd`.

`tests/test_dynamo_reading.py` checks each of them on the torch installed, and fails with the
name of the one that changed. Importing this module imports no part of dynamo: `Watch` does,
when a comparison starts.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from types import CodeType
from typing import Any

import torch

# The loggers of the `graph_breaks` artifact (torch._logging.getArtifactLogger(module,
# "graph_breaks")): the tracer's (most breaks), the frame converter's (a frame skipped because
# no graph break could resume it) and the exceptions' (a backend failure dynamo falls back from).
GRAPH_BREAK_LOGGER = "torch._dynamo.symbolic_convert.__graph_breaks"
GRAPH_BREAK_LOGGERS = (
    GRAPH_BREAK_LOGGER,
    "torch._dynamo.convert_frame.__graph_breaks",
    "torch._dynamo.exc.__graph_breaks",
)
# Where dynamo warns that a frame hit config.recompile_limit and now runs eagerly.
CONVERT_FRAME_LOGGER = "torch._dynamo.convert_frame"
# torch's graph-break id for "Module-level backwards hooks require compiled autograd."
MODULE_BACKWARD_HOOKS = "gb0083"
# The start of the failure a compile records when a frame hit config.recompile_limit.
RECOMPILE_LIMIT_REASON = "Dynamo recompile limit exceeded"

_GB_ID = re.compile(r"\bgb(\d{4})\b")
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<function>\S+)', re.M)
_AT = re.compile(r"in user code at (?P<file>.+):(?P<line>\d+)\s*$", re.M)


def dynamo() -> Any:
    """`torch._dynamo`, imported on first use (it is heavy: `import hookviz` never imports it)."""
    import torch._dynamo

    return torch._dynamo


def is_compiling() -> bool:
    """True while dynamo traces the code that asks (torch's public `torch.compiler.is_compiling`)."""
    return torch.compiler.is_compiling()


def backends() -> list[str]:
    """Every backend name `torch.compile` accepts here (`torch.compiler.list_backends`, all tags)."""
    return sorted(torch.compiler.list_backends(exclude_tags=()))


def run_eagerly_when_called_from_eager_code(code: CodeType) -> None:
    """Make dynamo run frames of ``code`` as plain Python when eager code calls them (frames they
    call are compiled as usual); traced code still inlines it."""
    from torch._dynamo.eval_frame import skip_code

    skip_code(code)


# (hook number, compile id) for each hook dynamo traced since the watch opened: `note_traced`
# appends to it while dynamo traces, from the observer's local `hook_number`.
TRACED: list[tuple[int, str]] = []


def comptime() -> Callable:
    """`torch._dynamo.comptime.comptime`: traced code calls it with a function that dynamo runs
    at once, while it traces, and leaves out of the graph."""
    from torch._dynamo.comptime import comptime as run_while_tracing

    return run_while_tracing


def note_traced(ctx: Any) -> None:
    """Run by dynamo while it traces the observer: note its `hook_number` and the compile."""
    from torch._guards import CompileContext

    number = ctx.get_local("hook_number").as_python_constant()
    TRACED.append((number, str(CompileContext.current_compile_id())))


def config() -> dict[str, Any]:
    """The settings of dynamo that decide what happens to hooks, by their names in its config."""
    settings = dynamo().config
    return {
        "recompile_limit": settings.recompile_limit,
        "skip_nnmodule_hook_guards": settings.skip_nnmodule_hook_guards,
        "compiled_autograd": settings.compiled_autograd,
    }


@dataclass(frozen=True)
class Frame:
    """One frame of a user code traceback."""

    file: str
    line: int
    function: str


@dataclass(frozen=True)
class BreakRecord:
    """One graph break as torch logged it."""

    clock: int
    time_us: int  # when torch logged it (microseconds since the epoch, as the compile records)
    reason: str  # torch's words: what it could not trace, its explanation and hints
    gb_id: str | None  # torch's id for the kind of break ("gb0083"), when it gives one
    file: str  # "Graph break in user code at file:line"
    line: int
    frames: tuple[Frame, ...]  # the user code traceback (empty when torch left it out as a repeat)


@dataclass(frozen=True)
class CompileRecord:
    """One frame dynamo compiled (or tried to)."""

    start_us: int  # when it started (microseconds since the epoch)
    compile_id: str  # "frame/attempt", as torch numbers them: "0/1" is frame 0's first recompile
    function: str
    file: str
    line: int
    recompile_reason: str  # the guard failure(s) that made it compile again ("": a first compile)
    fail_type: str  # the exception's name when the compile failed ("" when it did not)
    fail_reason: str

    @property
    def attempt(self) -> int:
        """0 for a frame's first compile, 1 for its first recompile, and so on."""
        return int(self.compile_id.split("/")[1].split("_")[0]) if "/" in self.compile_id else 0

    @property
    def hit_recompile_limit(self) -> bool:
        """True when this compile was refused because the frame hit `recompile_limit`."""
        return self.fail_reason.startswith(RECOMPILE_LIMIT_REASON)


@dataclass
class Counts:
    """What `torch._dynamo.utils.counters` gained during a run."""

    graph_breaks: dict[str, int] = field(default_factory=dict)  # reason -> how many
    graphs: int = 0  # counters["stats"]["unique_graphs"]

    @property
    def graph_break_count(self) -> int:
        """Every graph break, of every reason."""
        return sum(self.graph_breaks.values())


def parse_break(clock: int, time_us: int, message: str) -> BreakRecord:
    """A graph break from the text the `graph_breaks` logger writes."""
    at = _AT.search(message.split("\n", 1)[0])
    file, line = (at["file"], int(at["line"])) if at else ("", 0)
    reason = (
        message.split("Graph Break Reason: ", 1)[1] if "Graph Break Reason: " in message else ""
    )
    for end in ("\n\nStack variable source attribution", "\n\nUser code traceback:"):
        reason = reason.split(end, 1)[0]
    gb = _GB_ID.search(reason)
    frames = ()
    if "User code traceback:" in message:
        traceback = message.split("User code traceback:", 1)[1]
        frames = tuple(
            Frame(m["file"], int(m["line"]), m["function"]) for m in _FRAME.finditer(traceback)
        )
    return BreakRecord(
        clock, time_us, _plain_reason(reason), f"gb{gb[1]}" if gb else None, file, line, frames
    )


def _plain_reason(reason: str) -> str:
    """torch's reason without the sentence about where tracing was and the link to its site:
    what broke, its explanation and its hints."""
    lines = [line for line in reason.strip().splitlines() if "For more details about" not in line]
    if len(lines) > 1 and lines[0].startswith("Encountered graph break when attempting to trace"):
        lines = lines[1:]
    return "\n".join(lines).strip()


class _Collect(logging.Handler):
    def __init__(self, keep: Callable[[logging.LogRecord], None]):
        super().__init__(logging.DEBUG)
        self.keep = keep

    def emit(self, record: logging.LogRecord) -> None:
        self.keep(record)


class Watch:
    """Everything dynamo reports while it is open: graph breaks, compiles, its warnings, counts.

    Opening it resets dynamo (`torch._dynamo.reset()`, which is global: every compiled function
    in the process compiles again on its next call), raises the number of compile records torch
    keeps, starts listening to the graph-break logger and to compile starts; closing it puts each
    of those back and resets dynamo again, so that nothing compiled here leaks into the next run.
    ``clock`` numbers events in the order they happen, shared with the hook observer.
    """

    def __init__(self, clock: Callable[[], int]):
        self.clock = clock
        self.breaks: list[BreakRecord] = []
        self.warnings: list[str] = []
        self._undo: list[Callable[[], None]] = []
        self._seen_metrics: set[int] = set()
        self._counters_before: tuple[dict[str, int], int] = ({}, 0)

    def __enter__(self) -> Watch:
        d = dynamo()
        from torch._dynamo import utils

        d.reset()
        TRACED.clear()
        utils.graph_break_dup_warning_checker.reset()  # every break logs its traceback again
        self._undo.append(d.reset)
        limit = utils._compilation_metrics.maxlen
        utils.set_compilation_metrics_limit(max(limit or 0, 100_000))
        self._undo.append(lambda: utils.set_compilation_metrics_limit(limit))
        self._seen_metrics = {id(m) for m in utils.get_compilation_metrics()}
        self._counters_before = self._read_counters()
        for name in GRAPH_BREAK_LOGGERS:
            self._listen(name, logging.DEBUG, self._on_break)
        self._listen(CONVERT_FRAME_LOGGER, logging.WARNING, self._on_warning)
        return self

    def __exit__(self, *exc: Any) -> None:
        while self._undo:
            self._undo.pop()()

    def _listen(self, name: str, level: int, keep: Callable[[logging.LogRecord], None]) -> None:
        """Catch the records of logger ``name`` at ``level`` and above, printing none of those it
        would not have printed anyway; the logger's level and propagation are put back."""
        logger = logging.getLogger(name)
        handler = _Collect(keep)
        old_level, old_propagate = logger.level, logger.propagate
        if not logger.isEnabledFor(level):
            logger.setLevel(level)
            logger.propagate = False  # what it logs now only because of us goes to us alone
        elif level >= logging.WARNING:
            logger.propagate = False  # dynamo's warnings go in the report, not to stderr
        logger.addHandler(handler)

        def undo() -> None:
            logger.removeHandler(handler)
            logger.setLevel(old_level)
            logger.propagate = old_propagate

        self._undo.append(undo)

    def _on_break(self, record: logging.LogRecord) -> None:
        when = int(record.created * 1_000_000)
        self.breaks.append(parse_break(self.clock(), when, record.getMessage()))

    def _on_warning(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.WARNING:
            self.warnings.append(record.getMessage())

    @staticmethod
    def _read_counters() -> tuple[dict[str, int], int]:
        from torch._dynamo.utils import counters

        return dict(counters["graph_break"]), int(counters["stats"]["unique_graphs"])

    def counts(self) -> Counts:
        """What the counters gained since the watch opened."""
        (breaks_before, graphs_before), (breaks, graphs) = (
            self._counters_before,
            self._read_counters(),
        )
        gained = {r: n - breaks_before.get(r, 0) for r, n in breaks.items()}
        return Counts({r: n for r, n in gained.items() if n}, graphs - graphs_before)

    def compiles(self) -> list[CompileRecord]:
        """Every compile since the watch opened, in order."""
        from torch._dynamo.utils import get_compilation_metrics

        found: list[CompileRecord] = []
        frames: dict[str, CompileRecord] = {}  # frame number -> its last compile with a name
        for metric in get_compilation_metrics():
            if id(metric) in self._seen_metrics:
                continue
            compile_id = str(metric.compile_id or "")
            record = CompileRecord(
                int(metric.start_time_us or 0),
                compile_id,
                metric.co_name or "",
                metric.co_filename or "",
                int(metric.co_firstlineno or 0),
                metric.recompile_reason or "",
                metric.fail_type or "",
                metric.fail_reason or "",
            )
            frame = compile_id.split("/")[0]
            if not record.function and frame in frames:  # a refused compile names no function
                named = frames[frame]
                record = dataclasses.replace(
                    record, function=named.function, file=named.file, line=named.line
                )
            frames[frame] = record
            found.append(record)
        return found
