"""What pinning the checks' functions costs per check (issue 11, item 5), as ratios in one run.

The grader probes the student's kernel before and after each check cell. Since issue 11 each
probe also checks that every function pinned before the first student cell (hookviz, torch,
``nn.Module``'s methods, builtins...) is still the same object. In one real kernel with torch
and hookviz loaded, as in a graded notebook, this times the plugin's own probe call:

- with the snapshot in place (what grading does now) against without it (the probe as it was),
  interleaved, blocks of calls, median of the per-round ratios;
- the one-time snapshot per submission;
- binding the locked setup cell's names back before a check (issue 31), one call per check;
- for scale, the check cells of solutions/01-apply.ipynb run in the same kernel.

Run: .venv/bin/python bench/bench_integrity.py [--rounds 15] [--smoke]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import nbformat
from jupyter_client.manager import start_new_kernel

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import Config, interleaved, report  # noqa: E402

from hookviz.course.authoring.execute import isolated_env  # noqa: E402
from hookviz.course.format.notebooks import is_check  # noqa: E402
from hookviz.grading.run import locked_names, probe  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
ASSIGNMENT = REPO / "solutions" / "01-apply.ipynb"
PLUGIN = REPO / "hookviz" / "grading" / "run" / "plugin" / "hookviz_grading_plugin.py"
SLOT = probe.SNAPSHOT_SLOT


def load_plugin():
    spec = importlib.util.spec_from_file_location("hookviz_grading_plugin", PLUGIN)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(client, code: str) -> float:
    """Execute ``code`` in the kernel; the seconds it took; raise if it failed."""
    started = time.perf_counter()
    reply = client.execute_interactive(code, timeout=300, output_hook=lambda msg: None)
    if reply["content"]["status"] != "ok":
        raise RuntimeError(f"{reply['content'].get('ename')}: {reply['content'].get('evalue')}")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument(
        "--smoke", action="store_true", help="two short rounds: checks the bench runs"
    )
    args = parser.parse_args()
    rounds, block, warmup = (2, 2, 0) if args.smoke else (args.rounds, 20, 2)
    workdir = Path(tempfile.mkdtemp(prefix="bench-integrity-"))
    os.environ["HOOKVIZ_RESULTS_FD"] = "2"  # the recorder never writes here: only its probe runs
    manager, client = start_new_kernel(
        kernel_name="python3", env=isolated_env(workdir / "settings"), cwd=str(workdir)
    )
    try:
        notebook = nbformat.read(ASSIGNMENT, as_version=4)
        code_cells = [c for c in notebook.cells if c.cell_type == "code"]
        recorder = load_plugin().Recorder(
            {
                "probe_source": Path(probe.__file__).read_text(encoding="utf-8"),
                "locked_names_source": Path(locked_names.__file__).read_text(encoding="utf-8"),
                "probe_config": {
                    "workdir": str(workdir),
                    "preload": ["torch", "hookviz.course.checks"],
                },
            }
        )
        item = SimpleNamespace(
            parent=SimpleNamespace(kernel=SimpleNamespace(kc=client, is_alive=manager.is_alive))
        )
        run(client, code_cells[1].source)  # the setup cell: torch and hookviz are loaded
        locked = next(c for c in code_cells if c.metadata.get("nbgrader", {}).get("locked"))
        run(client, locked.source)
        recorder.pin_locked_names(SimpleNamespace(parent=item.parent, cell=locked))
        assert recorder.locked_names, "the locked cell bound no name"
        snapshots = []
        for _ in range(5):
            started = time.perf_counter()
            answer = recorder._call_probe(item, "snapshot", 60)
            snapshots.append(time.perf_counter() - started)
        recorder.snapshot_digest = answer["digest"]
        check_seconds = []
        for cell in code_cells[2:]:
            seconds = run(client, cell.source)
            if is_check(cell):
                check_seconds.append(seconds)
        assert recorder.probe(item) == [], recorder.probe(item)  # a correct run: nothing to report
        aside = f"import sys; sys._hookviz_bench = sys.__dict__.pop({SLOT!r})"
        back = f"import sys; setattr(sys, {SLOT!r}, sys.__dict__.pop('_hookviz_bench'))"
        configs = [
            Config("probe, functions not pinned (before)", lambda: recorder.probe(item),
                   enter=lambda: run(client, aside), exit=lambda: run(client, back)),
            Config("probe, functions pinned (now)", lambda: recorder.probe(item),
                   enter=lambda: run(client, "pass"), exit=lambda: run(client, "pass")),
            Config("locked names bound back (one per check)",
                   lambda: recorder.restore_locked_names(item),
                   enter=lambda: run(client, "pass"), exit=lambda: run(client, "pass")),
        ]  # fmt: skip
        timings = interleaved(configs, rounds=rounds, block=block, warmup=warmup)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    print(
        f"## the integrity probe, one call, in a kernel with torch and hookviz loaded "
        f"({answer['count']} functions pinned; {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f})"
    )
    report("per probe (two per check cell)", timings, "probe, functions not pinned (before)")
    before, now = (timings.median(c.name) for c in configs[:2])
    check = statistics.median(check_seconds)
    per_check = 2 * (now - before)
    print(f"{'pinning, added per check (2 probes)':<44} {per_check * 1e3:9.2f} ms")
    print(f"{'snapshot, once per submission':<44} {statistics.median(snapshots) * 1e3:9.2f} ms")
    restore = timings.median(configs[2].name)
    print(f"{'locked names bound back, per check':<44} {restore * 1e3:9.2f} ms")
    print(f"{'a check cell of 01-apply, median run':<44} {check * 1e3:9.2f} ms")
    print(f"{'added per check / a check cell':<44} {per_check / check:9.3f}x")
    print(
        json.dumps(
            {
                "ratio": timings.ratio(configs[1].name, configs[0].name),
                "per_check_ms": per_check * 1e3,
                "restore_ms": restore * 1e3,
                "restore_per_check_cell": restore / check,
            }
        )
    )


if __name__ == "__main__":
    sys.exit(main())
