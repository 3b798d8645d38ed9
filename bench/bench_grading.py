"""Grading speed, as ratios measured in one run (issue 5).

1. Parallel speed-up: `hookviz grade` of 20 submissions with -j 2 against -j 1, same engine,
   runs interleaved (A, B, A, B...). Target: at least 1.7x on 2 cores.
2. Overhead per submission beyond executing its notebook: grading one submission (merge,
   sandbox, plugin, integrity probes, result and gradebook files) against running the engine
   bare on the merged notebook (the same `pytest --nbval` command, no sandbox, no plugin),
   interleaved. Target: under 1 s.

Run: .venv/bin/python bench/bench_grading.py [--rounds 2] [--repeats 5] [--smoke]
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from hookviz.course.authoring.build import exercise_from_solution
from hookviz.course.authoring.stamp import CourseConfig
from hookviz.course.format import regions
from hookviz.course.format.notebooks import grade_id
from hookviz.grading.core.gradebook import OutFolder
from hookviz.grading.core.merge import load_assignment, merge
from hookviz.grading.core.submissions import find_submissions
from hookviz.grading.grade.batch import GradeOptions, grade_folder
from hookviz.grading.run.engine import grade_submission
from hookviz.grading.run.limits import Limits
from hookviz.grading.run.nbval_child import GradeSettings
from hookviz.grading.run.plugin import PYTEST_BOOT
from hookviz.grading.run.sandbox import detect_sandbox

REPO = Path(__file__).resolve().parent.parent
TINY = REPO / "tests" / "fixtures" / "grading" / "tiny.ipynb"
CONFIG = CourseConfig("https://github.com/a/b", "main", "a", "b", colab=True)


def make_submissions(folder: Path, count: int) -> None:
    """``count`` students: most right, every third with a wrong double."""
    solution = nbformat.read(TINY, as_version=4)
    answers = {
        grade_id(c): regions.strip_solution_markers(c.source)
        for c in solution.cells
        if grade_id(c) in ("double", "shout", "triple")
    }
    for n in range(count):
        notebook = exercise_from_solution(solution, CONFIG, "s.ipynb", "e.ipynb")
        for cell in notebook.cells:
            if grade_id(cell) in answers:
                cell.source = answers[grade_id(cell)]
                if n % 3 == 2 and grade_id(cell) == "double":
                    cell.source = "def double(x):\n    return x + 2\n"
        nbformat.write(notebook, folder / f"student{n:02d}.ipynb")


def private_jupyter_dirs(root: Path) -> None:
    for name in (
        "JUPYTER_CONFIG_DIR",
        "JUPYTER_DATA_DIR",
        "JUPYTER_RUNTIME_DIR",
        "IPYTHONDIR",
        "MPLCONFIGDIR",
    ):
        os.environ[name] = str(root / name.lower())


def parallel_speedup(root: Path, rounds: int, count: int = 20) -> dict[str, float]:
    """Median seconds for the whole batch of ``count`` with -j 1 and -j 2, interleaved."""
    subs = root / "subs"
    subs.mkdir()
    make_submissions(subs, count)
    times: dict[str, list[float]] = {"-j 1": [], "-j 2": []}
    for r in range(rounds):
        order = ["-j 1", "-j 2"] if r % 2 == 0 else ["-j 2", "-j 1"]
        for label in order:
            out = root / f"out-{label[-1]}-{r}"
            options = GradeOptions(
                jobs=int(label[-1]), limits=Limits(cell_timeout=60, submission_timeout=300)
            )
            started = time.perf_counter()
            summary = grade_folder(subs, TINY, out, options, stream=io.StringIO())
            times[label].append(time.perf_counter() - started)
            assert len(summary.graded) == count, summary
            shutil.rmtree(out)
            print(f"  round {r + 1} {label}: {times[label][-1]:6.1f} s", flush=True)
    return {label: statistics.median(values) for label, values in times.items()}


def overhead(root: Path, repeats: int, starts: int = 20) -> dict[str, float]:
    """Median seconds per submission: hookviz's whole path, and the bare engine on the merged notebook."""
    subs = root / "one"
    subs.mkdir()
    make_submissions(subs, 1)
    assignment = load_assignment(TINY)
    submission = find_submissions(subs, "student00")[0]
    merged = merge(assignment, nbformat.read(submission.path, as_version=4)).notebook
    sandbox = detect_sandbox("auto", [])
    settings = GradeSettings(Limits(cell_timeout=60, submission_timeout=300))
    scratch = Path(tempfile.mkdtemp(prefix="bench-grade-"))
    scratch.chmod(0o711)
    out = OutFolder(root / "out-one")

    child_seconds: list[float] = []
    run_child = sandbox.run

    probe_seconds: list[float] = []

    def timed_run(*args, **kwargs):
        child = run_child(*args, **kwargs)
        child_seconds.append(child.seconds)
        probe_seconds.append(sum(r.get("probe_seconds", 0.0) for r in child.records))
        return child

    sandbox.run = timed_run
    outside: list[float] = []

    def hookviz_path() -> None:
        started = time.perf_counter()
        result = grade_submission(
            submission, assignment, sandbox, settings, slot=0, scratch=scratch
        )
        assert result.status == "ok" and result.total == 5, result
        out.save(result)
        with out.locked():
            out.rebuild(assignment)
        outside.append(time.perf_counter() - started - child_seconds[-1])

    def bare_engine() -> None:
        folder = Path(tempfile.mkdtemp(prefix="bench-bare-", dir=scratch))
        nbformat.write(merged, folder / "tiny.ipynb")
        command = [
            sys.executable, "-I", "-c", PYTEST_BOOT, str(folder), str(folder / "tiny.ipynb"),
            "-p", "nbval.plugin", "--nbval", "--nbval-current-env", "--nbval-cell-timeout=60",
            "--noconftest", "-p", "no:cacheprovider", "-c", os.devnull, f"--rootdir={folder}", "-q",
        ]  # fmt: skip
        env = {  # the settings hookviz gives its children, so both run the same engine
            **os.environ,
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
            "JUPYTER_PLATFORM_DIRS": "1",
            "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        }
        # The notebook has executed when pytest prints its summary; stop the clock there, as
        # hookviz stops waiting once its plugin reports the session done.
        child = subprocess.Popen(command, cwd=folder, env=env, stdout=subprocess.PIPE, text=True)
        lines = []
        for line in child.stdout:
            lines.append(line)
            if " passed in " in line or " failed" in line:
                break
        bare_done.append(time.perf_counter())
        child.communicate()
        assert child.returncode == 0 and "7 passed" in "".join(lines), "".join(lines)[-2000:]
        shutil.rmtree(folder)

    configs = {"hookviz grade, one submission": hookviz_path, "bare pytest --nbval": bare_engine}
    times: dict[str, list[float]] = {name: [] for name in configs}
    bare_done: list[float] = []
    for run in configs.values():  # warm the page cache once
        run()
    for r in range(repeats):
        for name in configs if r % 2 == 0 else reversed(list(configs)):
            started = time.perf_counter()
            configs[name]()
            finished = bare_done.pop() if name == "bare pytest --nbval" else time.perf_counter()
            times[name].append(finished - started)
    shutil.rmtree(scratch, ignore_errors=True)
    medians = {name: statistics.median(values) for name, values in times.items()}
    medians["hookviz's own steps, outside the child"] = statistics.median(outside)
    medians["integrity probes, inside the child"] = statistics.median(probe_seconds)
    medians["sandbox start (bwrap + launcher)"] = sandbox_start(sandbox, root, starts)
    return medians


def sandbox_start(sandbox, root: Path, repeats: int = 20) -> float:
    """Median extra seconds to start a process through the sandbox rather than directly."""
    workdir = root / "sandbox-start"
    workdir.mkdir()
    workdir.chmod(0o755)
    sandbox.prepare_workdir(workdir, 0)
    program = [sys.executable, "-I", "-S", "-c", "pass"]
    ways = {"direct": program, "sandboxed": sandbox.command(program, workdir, Limits(), 0)}
    times: dict[str, list[float]] = {name: [] for name in ways}
    for r in range(repeats):
        for name in ways if r % 2 == 0 else reversed(list(ways)):
            started = time.perf_counter()
            subprocess.run(ways[name], cwd=workdir, check=True)
            times[name].append(time.perf_counter() - started)
    return statistics.median(times["sandboxed"]) - statistics.median(times["direct"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rounds", type=int, default=2, help="interleaved rounds of the 20-submission batch"
    )
    parser.add_argument("--repeats", type=int, default=7, help="interleaved runs for the overhead")
    parser.add_argument("--skip-parallel", action="store_true")
    parser.add_argument(
        "--smoke", action="store_true", help="one run of each part, 2 submissions: checks it runs"
    )
    args = parser.parse_args()
    repeats, rounds, count, starts = (
        (1, 1, 2, 2) if args.smoke else (args.repeats, args.rounds, 20, 20)
    )
    root = Path(tempfile.mkdtemp(prefix="bench-grading-"))
    private_jupyter_dirs(root)
    print(
        f"## grading on {os.cpu_count()} CPUs, sandbox: {detect_sandbox('auto', []).kind}, "
        f"load average {os.getloadavg()[0]:.1f} (other work on the machine slows -j 2 more than -j 1)",
        flush=True,
    )
    try:
        medians = overhead(root, repeats, starts)
        extra = medians["hookviz grade, one submission"] - medians["bare pytest --nbval"]
        parts = sum(
            medians[k]
            for k in (
                "hookviz's own steps, outside the child",
                "integrity probes, inside the child",
                "sandbox start (bwrap + launcher)",
            )
        )
        print("## overhead per submission beyond executing its notebook")
        for name, seconds in medians.items():
            print(f"{name:<40} {seconds:7.2f} s")
        print(
            f"{'overhead (hookviz - bare)':<40} {extra:7.2f} s  (limit 1.00 s: {'ok' if extra < 1 else 'OVER'})"
        )
        print(
            f"{'overhead, sum of the parts above':<40} {parts:7.2f} s  (limit 1.00 s: {'ok' if parts < 1 else 'OVER'})"
        )
        ratio = medians["hookviz grade, one submission"] / medians["bare pytest --nbval"]
        print(f"{'ratio (hookviz / bare)':<40} {ratio:7.2f}x", flush=True)
        if not args.skip_parallel:
            print(f"## {count} submissions, -j 2 against -j 1 (interleaved)", flush=True)
            batch = parallel_speedup(root, rounds, count)
            speedup = batch["-j 1"] / batch["-j 2"]
            for label, seconds in batch.items():
                print(f"{label:<40} {seconds:7.1f} s")
            print(
                f"{'speed-up (-j 1 / -j 2)':<40} {speedup:7.2f}x  (target 1.70x: {'ok' if speedup >= 1.7 else 'UNDER'})"
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
