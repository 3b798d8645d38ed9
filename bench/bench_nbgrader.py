"""`hookviz grade -j 1` against nbgrader 0.9.6's `nbgrader autograde`, side by side (issue 22).

The same ten submissions of assignment 01 (tests/answers: right answers, and every other
student one mistake), graded by both, in interleaved rounds (nbgrader, hookviz warm, hookviz
cold; the order turns each round). Each run is the whole command a course runs, from a fresh
out folder: nbgrader's `autograde` of all ten after `generate_assignment`, hookviz's `grade`
(its check of the instructor's notebook included). Reported: the median over rounds of the
per-round ratio hookviz / nbgrader. Goal: warm at most 0.50x. Both run one thread per kernel
(OMP_NUM_THREADS=1), so the ratio is per core.

Then where hookviz's time goes, measured in-process: the command's start, the sandbox check,
the warm process's start, and one submission warm and cold (interleaved).

Run: .venv/bin/python bench/bench_nbgrader.py [--rounds 3] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # tests.answers: the catalogue of right and wrong answers

from hookviz.course.authoring.build import exercise_from_solution  # noqa: E402
from hookviz.course.authoring.stamp import CourseConfig  # noqa: E402
from hookviz.course.format import regions  # noqa: E402
from hookviz.course.format.notebooks import grade_id  # noqa: E402
from tests.answers.a01_apply import ANSWERS  # noqa: E402

SOLUTION = REPO / "solutions" / "01-apply.ipynb"
NAME = SOLUTION.stem
BIN = Path(sys.executable).parent
CONFIG = CourseConfig("https://github.com/a/b", "main", "a", "b")
GOAL = 0.50


def make_submissions(folder: Path, count: int) -> list[str]:
    """``count`` students as ``folder/<student>/01-apply.ipynb``: even ones right, odd ones one
    mistake each (the catalogue's wrong answers, in turn)."""
    solution = nbformat.read(SOLUTION, as_version=4)
    right = {
        grade_id(c): regions.strip_solution_markers(c.source)
        for c in solution.cells
        if c.get("metadata", {}).get("nbgrader", {}).get("solution")
    }
    mistakes = [a for a in ANSWERS if a.kind == "wrong" and a.exercise in right]
    students = []
    for n in range(count):
        notebook = exercise_from_solution(solution, CONFIG, SOLUTION.name, SOLUTION.name)
        wrong = mistakes[(n // 2) % len(mistakes)] if n % 2 else None
        for cell in notebook.cells:
            gid = grade_id(cell)
            if gid in right:
                cell.source = wrong.source if wrong and wrong.exercise == gid else right[gid]
        student = f"student{n:02d}"
        (folder / student).mkdir(parents=True)
        nbformat.write(notebook, folder / student / f"{NAME}.ipynb")
        students.append(student)
    return students


def environment(root: Path) -> dict[str, str]:
    """Private Jupyter folders, this venv first on PATH (nbgrader's kernel is `python`), one thread."""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR"):
        env[name] = str(root / "home" / name.lower())
    env["MPLCONFIGDIR"] = str(root / "home" / "mpl")
    env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = "1"
    env.pop("PYTHONPATH", None)
    return env


class Nbgrader:
    """An nbgrader course holding the assignment (as `a01`) and the submissions."""

    def __init__(self, root: Path, subs: Path, env: dict[str, str]):
        self.course, self.env = root / "nbgrader-course", env
        (self.course / "source" / "a01").mkdir(parents=True)
        shutil.copy(SOLUTION, self.course / "source" / "a01" / SOLUTION.name)
        (self.course / "nbgrader_config.py").write_text(
            "c = get_config()\n"
            f"c.CourseDirectory.root = {str(self.course)!r}\n"
            "c.CourseDirectory.course_id = 'bench'\n"
            "c.ExecutePreprocessor.timeout = 300\n"
        )
        self.nbgrader("generate_assignment", "a01", "--force")
        for student in sorted(p.name for p in subs.iterdir()):
            target = self.course / "submitted" / student / "a01"
            target.mkdir(parents=True)
            shutil.copy(subs / student / f"{NAME}.ipynb", target / SOLUTION.name)

    def nbgrader(self, *args: str) -> str:
        done = subprocess.run(
            [str(BIN / "nbgrader"), *args],
            cwd=self.course,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=3600,
        )
        if done.returncode != 0:
            raise RuntimeError(f"nbgrader {' '.join(args)} failed:\n{done.stderr[-3000:]}")
        return done.stderr

    def autograde(self) -> None:
        shutil.rmtree(self.course / "autograded", ignore_errors=True)
        self.nbgrader("autograde", "a01", "--force")
        graded = list((self.course / "autograded").glob(f"*/a01/{SOLUTION.name}"))
        assert graded, "nbgrader autograded nothing"


def hookviz_grade(subs: Path, out: Path, env: dict[str, str], warm: bool) -> list[dict]:
    """`hookviz grade -j 1` (warm, the command itself) or the same run cold; every result."""
    shutil.rmtree(out, ignore_errors=True)
    if warm:
        command = [str(BIN / "hookviz"), "grade", str(subs), "--assignment", str(SOLUTION)]
        command += ["--out", str(out)]
        command += ["-j", "1"]
    else:  # no command-line switch for it: the same grade_folder with warm_start off
        command = [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; from hookviz.grading.grade.batch import GradeOptions, "
            "grade_folder; grade_folder(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), "
            "GradeOptions(jobs=1, warm_start=False))",
            str(subs),
            str(SOLUTION),
            str(out),
        ]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise RuntimeError(f"hookviz grade failed:\n{done.stderr[-3000:]}")
    return [json.loads(p.read_text()) for p in sorted((out / "results").glob("*.json"))]


def side_by_side(root: Path, count: int, rounds: int, cold: bool = True) -> None:
    subs = root / "subs"
    subs.mkdir()
    students = make_submissions(subs, count)
    env = environment(root)
    course = Nbgrader(root, subs, env)
    runs = {
        "nbgrader autograde": course.autograde,
        "hookviz grade -j 1 (warm)": lambda: check(
            hookviz_grade(subs, root / "out-warm", env, warm=True), students
        ),
        "hookviz grade -j 1, cold start": lambda: check(
            hookviz_grade(subs, root / "out-cold", env, warm=False), students
        ),
    }
    if not cold:
        del runs["hookviz grade -j 1, cold start"]
    times: dict[str, list[float]] = {name: [] for name in runs}
    for r in range(rounds):
        names = list(runs)
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            started = time.perf_counter()
            runs[name]()
            times[name].append(time.perf_counter() - started)
            print(f"  round {r + 1} {name}: {times[name][-1]:6.1f} s", flush=True)
    base = times["nbgrader autograde"]
    print(f"## {count} submissions of {NAME}, {rounds} interleaved rounds")
    for name, values in times.items():
        ratios = [v / b for v, b in zip(values, base, strict=True)]
        print(
            f"{name:<34} median {statistics.median(values):6.1f} s   ratio to nbgrader "
            f"(median of rounds) {statistics.median(ratios):5.2f}x   rounds "
            + ", ".join(f"{x:.2f}" for x in ratios)
        )
    warm = statistics.median(
        v / b for v, b in zip(times["hookviz grade -j 1 (warm)"], base, strict=True)
    )
    print(f"goal: warm at most {GOAL:.2f}x nbgrader: {'met' if warm <= GOAL else 'NOT MET'}")


def check(results: list[dict], students: list[str]) -> None:
    """Every student graded, the right answers in full, every mistake losing points."""
    by_student = {r["student"]: r for r in results}
    assert sorted(by_student) == students, sorted(by_student)
    for n, student in enumerate(students):
        result = by_student[student]
        assert result["status"] == "ok", (student, result["status"], result["detail"])
        full = result["total"] == result["max_total"]
        assert full == (n % 2 == 0), (student, result["total"], result["max_total"])


def breakdown(root: Path, repeats: int) -> None:
    """Where hookviz's time goes, part by part, measured in this process (medians)."""
    from hookviz.grading.core.merge import load_assignment
    from hookviz.grading.core.submissions import Submission
    from hookviz.grading.run.engine import grade_submission
    from hookviz.grading.run.limits import Limits
    from hookviz.grading.run.nbval_child import GradeSettings, instructor_imports
    from hookviz.grading.run.sandbox import detect_sandbox
    from hookviz.grading.run.warm_kernel import WarmSandbox

    env = environment(root)
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR"):
        os.environ[name] = env[name]
    parts: dict[str, list[float]] = {}

    def timed(name: str, run):
        started = time.perf_counter()
        value = run()
        parts.setdefault(name, []).append(time.perf_counter() - started)
        return value

    for _ in range(repeats):
        for command in (["--help"], ["grade", "--help"]):
            timed(
                f"`hookviz {' '.join(command)}`",
                lambda command=command: subprocess.run(
                    [str(BIN / "hookviz"), *command], env=env, capture_output=True, check=True
                ),
            )
        timed(
            "`import torch` in a fresh Python",
            lambda: subprocess.run([sys.executable, "-c", "import torch"], env=env, check=True),
        )
    assignment = load_assignment(SOLUTION)
    submission = Submission("student01", root / "subs" / "student01" / f"{NAME}.ipynb")
    settings = GradeSettings(Limits())
    scratch = Path(tempfile.mkdtemp(prefix="bench-nbgrader-", dir=root))
    scratch.chmod(0o711)
    sandbox = timed("the sandbox check (detect_sandbox)", lambda: detect_sandbox("auto", []))
    if sandbox.kind != "bwrap":
        print(f"no bubblewrap here (sandbox {sandbox.kind}): no warm start to break down")
        return
    warm = WarmSandbox(sandbox, instructor_imports(assignment), scratch)
    cells: list[float] = []
    run_warm = warm.run

    def recorded(*args, **kwargs):
        child = run_warm(*args, **kwargs)
        cells.append(sum(r.get("seconds", 0) for r in child.records if r.get("event") == "cell"))
        probes = sum(r.get("probe_seconds", 0) for r in child.records if r.get("event") == "cell")
        parts.setdefault("integrity probes in those cells, warm", []).append(probes)
        return child

    warm.run = recorded
    try:
        for r in range(repeats):
            warm.kill_all()
            timed("the warm process's start (bwrap, imports)", lambda: warm._zygote(0))
            ways = {"one submission, warm": warm, "one submission, cold": sandbox}
            for name in ways if r % 2 == 0 else reversed(list(ways)):
                result = timed(
                    name,
                    lambda way=ways[name]: grade_submission(
                        submission, assignment, way, settings, slot=0, scratch=warm.slot_dir(0)
                    ),
                )
                assert result.status == "ok", (result.status, result.detail)
    finally:
        warm.close()
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"## where hookviz's time goes (medians of {repeats})")
    for name, values in parts.items():
        print(f"{name:<44} {statistics.median(values):6.2f} s")
    print(f"{'its cells, warm (the plugin records)':<44} {statistics.median(cells):6.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds")
    parser.add_argument("--count", type=int, default=10, help="submissions")
    parser.add_argument("--repeats", type=int, default=3, help="repeats of each breakdown part")
    parser.add_argument("--skip-cold", action="store_true", help="no cold-start hookviz runs")
    parser.add_argument("--smoke", action="store_true", help="2 submissions, 1 round: it runs")
    args = parser.parse_args()
    rounds, count, repeats = (1, 2, 1) if args.smoke else (args.rounds, args.count, args.repeats)
    if not (BIN / "nbgrader").exists():
        raise SystemExit("nbgrader is not installed: pip install nbgrader==0.9.6 (the dev extra)")
    root = Path(tempfile.mkdtemp(prefix="bench-nbgrader-"))
    root.chmod(0o711)
    print(f"## on {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}", flush=True)
    try:
        side_by_side(root, count, rounds, cold=not args.skip_cold)
        breakdown(root, repeats)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
