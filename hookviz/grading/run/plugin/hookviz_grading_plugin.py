"""The grader's pytest plugin: records each cell's outcome by grade_id for `hookviz grade`.

Loaded by path in the grading child (``pytest -p hookviz_grading_plugin``), next to nbval. It
imports neither hookviz nor torch, so it adds nothing to pytest's start-up; the conventions it
shares with the grader (``hookviz/course/conventions.py``, standard library only) it loads by
their file's path. What it does:

- reads its settings file, then deletes it; deletes the notebook once nbval has collected it,
  so the student's kernel cannot read the expected outputs or hidden tests;
- makes this process non-dumpable, so the kernel (same user) cannot open its files or memory;
- writes one JSON line per cell to a pipe the kernel never inherits (jupyter_client closes
  other descriptors when it starts the kernel);
- notices a dead kernel within half a second instead of waiting for the cell timeout;
- keeps at most ``output_limit`` characters of each cell's output;
- pins the functions checks rely on before the first student cell runs, then runs the
  integrity probe in the kernel before and after each check cell;
- keeps what each locked cell's names are bound to, and before each check puts back any that
  an answer cell rebound (``class Branch`` redefined to an easier model), so that checks run
  on the instructor's definitions; the record says which.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import sys
import time
from queue import Empty
from typing import Any

import pytest

_SETTINGS_OPTION = "--hookviz-config"
_CONVENTIONS = (
    "hookviz_conventions"  # the name it has in this process, where hookviz is not imported
)


def _load_conventions() -> Any:
    """hookviz/course/conventions.py, loaded by its path (importing hookviz would import torch)."""
    if _CONVENTIONS in sys.modules:
        return sys.modules[_CONVENTIONS]
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, os.pardir, os.pardir, os.pardir, "course", "conventions.py")
    spec = importlib.util.spec_from_file_location(_CONVENTIONS, os.path.normpath(path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[_CONVENTIONS] = module  # a dataclass looks its module up while it is made
    spec.loader.exec_module(module)
    return module


Outcome = _load_conventions().Outcome
shorten, word_end = _load_conventions().shorten, _load_conventions().word_end


class KernelDied(RuntimeError):
    """The kernel process exited while a cell was running."""


def pytest_addoption(parser: Any) -> None:
    """The settings file written by `hookviz grade`."""
    parser.addoption(_SETTINGS_OPTION, default=None, help="hookviz grading settings (JSON file)")


def pytest_configure(config: Any) -> None:
    """Load the settings and register the recorder."""
    path = config.getoption(_SETTINGS_OPTION)
    if not path:
        return
    with open(path, encoding="utf-8") as handle:
        settings = json.load(handle)
    os.unlink(path)
    _make_undumpable()
    recorder = Recorder(settings)
    _patch_nbval(settings.get("output_limit", 100_000))
    config.pluginmanager.register(recorder, "hookviz-recorder")


def _make_undumpable() -> None:
    """PR_SET_DUMPABLE 0: same-user processes lose access to /proc/<this pid>/fd, mem, environ."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 4
    except (OSError, AttributeError):  # not Linux: nothing to do
        pass


# The nbval releases whose internals (RunningKernel, IPyNbFile, its failure messages) this plugin
# was written and tested against; pyproject.toml pins the same range.
NBVAL_TESTED = ((0, 11), (0, 12))  # from 0.11 up to, not including, 0.12


def _check_nbval_version(version: str) -> None:
    """Stop with a clear error unless ``version`` is in the tested range."""
    numbers = tuple(int(part) for part in re.findall(r"\d+", version)[:2])
    low, high = NBVAL_TESTED
    if not low <= numbers < high:
        raise pytest.UsageError(
            f"hookviz grade needs nbval {low[0]}.{low[1]}.x (the grader patches its internals, tested on "
            f"that release only), but nbval {version} is installed. Install the tested one: "
            f"pip install 'nbval>={low[0]}.{low[1]},<{high[0]}.{high[1]}'."
        )


def _patch_nbval(output_limit: int) -> None:
    import nbval

    _check_nbval_version(getattr(nbval, "__version__", "0"))
    from nbval.kernel import RunningKernel
    from nbval.plugin import IPyNbFile

    def await_reply(self: Any, msg_id: str, timeout: float | None = None) -> None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise Empty
            try:
                msg = self.get_message(
                    stream="shell", timeout=0.5 if left is None else min(0.5, left)
                )
            except Empty:
                if not self.is_alive():
                    raise KernelDied(
                        "the kernel died while this cell ran (os._exit, a crash, or a resource limit)"
                    ) from None
                continue
            if msg["parent_header"].get("msg_id") == msg_id:
                if msg["content"]["status"] == "aborted":
                    raise RuntimeError("Kernel aborted execution request")
                return

    RunningKernel.await_reply = await_reply
    original_get = IPyNbFile.get_kernel_message
    used: dict[str, int] = {}

    def get_kernel_message(self: Any, timeout: float | None = None, stream: str = "iopub") -> dict:
        msg = original_get(self, timeout=timeout, stream=stream)
        kind, content = msg.get("msg_type"), msg.get("content", {})
        if kind not in ("stream", "display_data", "execute_result"):
            return msg
        parent = msg.get("parent_header", {}).get("msg_id", "")
        size = len(content.get("text", "")) + sum(
            len(str(v)) for v in content.get("data", {}).values()
        )
        before = used.get(parent, 0)
        used[parent] = before + size
        if before + size <= output_limit:
            return msg
        note = f"\n[hookviz grade: output cut after {output_limit} characters]\n"
        if kind == "stream":
            room, text = max(output_limit - before, 0), content.get("text", "")
            content["text"] = text[: word_end(text, room)] + (
                note if before <= output_limit else ""
            )
        else:
            content["data"] = {"text/plain": note.strip()} if before <= output_limit else {}
            content["metadata"] = {}
        return msg

    IPyNbFile.get_kernel_message = get_kernel_message


def _outputs_as_records(outputs: list, limit: int) -> list[dict]:
    """The cell's actual outputs, as plain JSON, each text cut near ``limit`` characters."""
    limit += 200  # room for the note that says the output was cut
    records = []
    for output in outputs or []:
        kind = output.get("output_type")
        if kind == "stream":
            records.append(
                {
                    "type": "stream",
                    "name": output.get("name"),
                    "text": shorten(output.get("text", ""), limit),
                }
            )
        elif kind in ("display_data", "execute_result"):
            data = output.get("data", {})
            text = data.get("text/plain", "") if isinstance(data, dict) else ""
            records.append(
                {"type": kind, "text": shorten(str(text), limit), "mimetypes": sorted(data)}
            )
        elif kind == "error":
            records.append(
                {
                    "type": "error",
                    "ename": shorten(str(output.get("ename")), 200),
                    "evalue": shorten(str(output.get("evalue")), limit),
                    "line": _cell_line(output.get("traceback")),
                }
            )
    return records


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_CELL_FRAME = re.compile(
    r"(?:Cell In\[\d*\], line (\d+))|(?:<ipython-input-[^>]*>.*?-+>\s*(\d+))", re.S
)


def _cell_line(traceback: Any) -> int | None:
    """The line of the cell whose top-level statement raised (IPython's first frame), if shown."""
    if not isinstance(traceback, list):
        return None
    for entry in traceback[:50]:
        match = _CELL_FRAME.search(_ANSI.sub("", str(entry)))
        if match:
            return int(match.group(1) or match.group(2))
    return None


def _classify(excinfo: Any) -> tuple[Any, str]:
    """(Outcome, detail) for a cell from the exception nbval raised, if any."""
    if excinfo is None:
        return Outcome.PASSED, ""
    error = excinfo.value
    message = str(error)
    if excinfo.errisinstance(pytest.skip.Exception):
        return Outcome.SKIPPED, message
    if isinstance(error, KernelDied):
        return Outcome.KERNEL_DIED, message
    name = type(error).__name__
    if name == "NbCellError":
        if message.startswith("Cell outputs differ"):
            return Outcome.MISMATCH, ""
        if message.startswith("Timeout"):
            return Outcome.TIMEOUT, message
        if message.startswith("Cell execution caused an exception"):
            return Outcome.ERROR, ""
        return Outcome.ERROR, message
    if message.startswith("Kernel dead on test start"):
        return Outcome.NOT_RUN, "the kernel had already died"
    if message.startswith("Timed out waiting for idle kernel"):
        return Outcome.TIMEOUT, message
    return Outcome.GRADER_ERROR, shorten(f"{name}: {message}", 2000)


def _bound_names(source: str) -> list[str]:
    """The names a cell's top-level statements bind: defs, classes, imports and assignments
    (lines of IPython magic left out). A cell that does not parse binds none we can name."""
    kept = "\n".join(
        "" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines()
    )
    try:
        tree = ast.parse(kept)
    except SyntaxError:
        return []
    names: list[str] = []

    def targets(node: ast.AST) -> None:
        if isinstance(node, ast.Name):
            names.append(node.id)
        elif isinstance(node, (ast.Tuple, ast.List)):
            for element in node.elts:
                targets(element)
        elif isinstance(node, ast.Starred):
            targets(node.value)

    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(statement.name)
        elif isinstance(statement, ast.Assign):
            for target in statement.targets:
                targets(target)
        elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
            targets(statement.target)
        elif isinstance(statement, ast.Import):
            names += [alias.asname or alias.name.split(".")[0] for alias in statement.names]
        elif isinstance(statement, ast.ImportFrom):
            names += [alias.asname or alias.name for alias in statement.names if alias.name != "*"]
    return list(dict.fromkeys(names))


def _nbgrader(item: Any) -> dict:
    meta = (getattr(item, "cell", {}) or {}).get("metadata", {}).get("nbgrader", {})
    return meta if isinstance(meta, dict) else {}


class Recorder:
    """Writes what happened to each cell to the result pipe, one JSON line at a time."""

    def __init__(self, settings: dict):
        self.fd = int(os.environ["HOOKVIZ_RESULTS_FD"])
        self.notebook = settings.get("notebook")
        self.limit = int(settings.get("output_limit", 100_000))
        self.probe_source = settings.get("probe_source")
        self.locked_names_source = settings.get("locked_names_source")
        self.probe_config = settings.get("probe_config", {})
        self.probe_timeout = float(settings.get("probe_timeout", 10))
        self.snapshot_timeout = float(settings.get("snapshot_timeout", 60))  # may import torch
        self.snapshot_taken = False
        self.snapshot_digest: str | None = None  # kept here, out of the kernel's reach
        # a locked cell's name -> (the id of its object in the kernel, that cell's grade_id)
        self.locked_names: dict[str, tuple[int, str]] = {}

    def emit(self, record: dict) -> None:
        data = (json.dumps(record) + "\n").encode("utf-8")
        while data:
            written = os.write(self.fd, data)
            data = data[written:]

    def pytest_collection_finish(self, session: Any) -> None:
        if self.notebook:
            try:
                os.unlink(self.notebook)
            except OSError:
                pass
        self.emit({"event": "collected", "items": len(session.items)})

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: Any):
        check = self._is_check(item)
        started = time.perf_counter()
        if not self.snapshot_taken and (check or self._is_answer(item)):
            self.snapshot_taken = True
            self.snapshot_digest = self.snapshot(item)
        if check:
            item._hookviz_restored, restoring = self.restore_locked_names(item)
            item._hookviz_tamper = restoring + self.probe(item)
        probing = time.perf_counter() - started
        yield
        started = time.perf_counter()
        if check:
            item._hookviz_tamper = (
                item._hookviz_tamper + self.probe(item) + self.rebound_during(item)
            )
        if not self._is_answer(item):
            self.pin_locked_names(item)
        item._hookviz_probe_seconds = probing + time.perf_counter() - started

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: Any, call: Any):
        yield
        if call.when == "call" or (call.when == "setup" and call.excinfo is not None):
            outcome, detail = _classify(call.excinfo)
            if call.when == "setup" and outcome != Outcome.SKIPPED:
                outcome, detail = (
                    Outcome.NOT_RUN,
                    shorten(f"setting up failed: {detail or call.excinfo.value}", 2000),
                )
            cell = getattr(item, "cell", {}) or {}
            meta = cell.get("metadata", {}).get("nbgrader", {})
            self.emit(
                {
                    "event": "cell",
                    "index": getattr(item, "cell_num", None),
                    "grade_id": meta.get("grade_id") if isinstance(meta, dict) else None,
                    "outcome": outcome.value,
                    "detail": detail,
                    "seconds": round(call.duration, 3),
                    "outputs": _outputs_as_records(getattr(item, "test_outputs", None), self.limit),
                    "tamper": list(getattr(item, "_hookviz_tamper", [])),
                    "restored": list(getattr(item, "_hookviz_restored", [])),
                    "probe_seconds": round(getattr(item, "_hookviz_probe_seconds", 0.0), 4),
                }
            )

    def pytest_sessionfinish(self, session: Any, exitstatus: Any) -> None:
        self.emit({"event": "done"})

    @staticmethod
    def _is_check(item: Any) -> bool:
        return _nbgrader(item).get("grade") is True

    @staticmethod
    def _is_answer(item: Any) -> bool:
        return _nbgrader(item).get("solution") is True

    def pin_locked_names(self, item: Any) -> None:
        """After an instructor's cell: keep the objects a locked cell's names are bound to (or
        the new ones, where a later instructor's cell rebinds a name already kept)."""
        meta = _nbgrader(item)
        names = _bound_names(str((getattr(item, "cell", {}) or {}).get("source", "")))
        locked = meta.get("locked") is True and not meta.get("grade") and not meta.get("solution")
        if not locked:
            names = [name for name in names if name in self.locked_names]
        if not names:
            return
        answer = self._call_probe(
            item, "pin_names", config={"names": names}, source=self.locked_names_source
        )
        ids = answer.get("ids") if isinstance(answer, dict) else None
        for name, kernel_id in (ids if isinstance(ids, dict) else {}).items():
            cell = str(meta.get("grade_id") or "") if locked else self.locked_names[name][1]
            self.locked_names[str(name)] = (int(kernel_id), cell)

    def rebound_during(self, item: Any) -> list[str]:
        """After a check: a locked cell's name that something other than the check cell's own
        code bound while it ran (the student's function, rebinding a global) is tampering; it
        is put back for the checks after it."""
        own = set(_bound_names(str((getattr(item, "cell", {}) or {}).get("source", ""))))
        restored, problems = self.restore_locked_names(item, leave=own)
        return problems + [
            f"{found['name']}, which the locked cell {found['cell']} binds, was bound again "
            "while the check ran"
            for found in restored
        ]

    def restore_locked_names(
        self, item: Any, leave: set[str] = frozenset()
    ) -> tuple[list[dict], list[str]]:
        """Put back each locked cell's name (but those in ``leave``) that was bound again.
        Returns ({name, cell} for each put back, problems for the integrity record)."""
        pinned = {
            name: kernel_id
            for name, (kernel_id, _) in self.locked_names.items()
            if name not in leave
        }
        if not pinned:
            return [], []
        answer = self._call_probe(
            item, "restore_names", config={"pinned": pinned}, source=self.locked_names_source
        )
        if isinstance(answer, list):  # the probe could not run: its answer says why
            return [], answer
        if not isinstance(answer, dict):
            return [], []
        restored = [
            {"name": name, "cell": self.locked_names[name][1]}
            for name in answer.get("restored", [])
            if name in self.locked_names
        ]
        return restored, [shorten(str(p), 300) for p in answer.get("problems", [])]

    def snapshot(self, item: Any) -> str | None:
        """Pin the functions checks rely on; the snapshot's digest (None if it could not be taken)."""
        answer = self._call_probe(item, "snapshot", self.snapshot_timeout)
        if not isinstance(answer, dict) or not isinstance(answer.get("digest"), str):
            return None  # not the student's doing (no student code has run): verify what we can
        return answer["digest"]

    def probe(self, item: Any) -> list[str]:
        """Problems the integrity probe reports in the kernel (nothing if it cannot run)."""
        answer = self._call_probe(item, "probe")
        if isinstance(answer, list):  # the probe could not run: its answer says why
            return answer
        if answer is None:
            return []
        found = answer.get("problems") if isinstance(answer, dict) else None
        if not isinstance(found, list):
            return ["the integrity probe's answer was garbled"]
        problems = [shorten(str(p), 300) for p in found]
        if self.snapshot_digest is not None and answer.get("digest") != self.snapshot_digest:
            problems.append(
                "the grader's snapshot of the genuine functions was changed in the kernel"
            )
        return problems

    def _call_probe(
        self,
        item: Any,
        function: str,
        timeout: float | None = None,
        config: dict | None = None,
        source: str | None = None,
    ) -> dict | list | None:
        """Call ``function`` of the probe (or of ``source``) in the kernel with the probe's
        config (``config`` on top): its JSON answer, a list of problems when it failed, or None
        when there is no kernel to ask."""
        source = source or self.probe_source
        kernel = getattr(item.parent, "kernel", None)
        if not source or kernel is None or not kernel.is_alive():
            return None
        settings = {**self.probe_config, **(config or {})}
        expression = f"(lambda d: (exec({source!r}, d), d[{function!r}]({settings!r}))[1])({{}})"
        client = kernel.kc
        msg_id = client.execute(
            "",
            silent=True,
            store_history=False,
            user_expressions={"r": expression},
            allow_stdin=False,
        )
        limit = timeout or self.probe_timeout
        deadline = time.monotonic() + limit
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return [f"the integrity probe got no answer from the kernel within {limit:g} s"]
            try:
                msg = client.get_shell_msg(timeout=min(left, 0.5))
            except Empty:
                if not kernel.is_alive():
                    return None
                continue
            if msg["parent_header"].get("msg_id") == msg_id:
                break
        answer = msg["content"].get("user_expressions", {}).get("r", {})
        if answer.get("status") != "ok":
            return [
                shorten(
                    f"the integrity probe failed: {answer.get('ename')}: {answer.get('evalue')}",
                    300,
                )
            ]
        try:
            found = json.loads(ast.literal_eval(answer["data"]["text/plain"]))
        except (KeyError, ValueError, SyntaxError, TypeError):
            return ["the integrity probe's answer was garbled"]
        return found if isinstance(found, dict) else ["the integrity probe's answer was garbled"]
