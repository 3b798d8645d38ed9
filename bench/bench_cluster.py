"""Grading on a Dask cluster, measured in one run (issue 11).

1. Speed-up: `hookviz grade --scheduler` of 20 submissions on a cluster of two workers against
   a cluster of one (real `dask scheduler` and `dask worker --nthreads 1` processes on
   127.0.0.1, both clusters up for the whole run), interleaved, the order alternating; the ratio
   is taken within each round and the median over rounds reported. Target: at least 1.7x.
2. Per-submission cost of each assignment in solutions/ (its own solution, graded as a
   submission on the one-worker cluster), and the peak memory of one grading process tree.
3. The client's cost per result (feedback, review and result files) and of a gradebook rebuild
   at 1,000 and 10,000 students.
4. A capacity sheet: one-thread workers needed to grade 1,000 and 10,000 submissions within an
   hour, from the per-submission costs and the efficiency measured in 1.

Run: .venv/bin/python bench/bench_cluster.py [--rounds 2] [--copies 3] [--smoke]
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from hookviz.grading.core.gradebook import OutFolder
from hookviz.grading.core.merge import load_assignment
from hookviz.grading.grade.batch import GradeOptions, grade_folder

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from bench.bench_grading import TINY, make_submissions, private_jupyter_dirs  # noqa: E402
from tests.dask_processes import DaskProcesses  # noqa: E402

HOUR = 3600.0
CLASS_SIZES = (1_000, 10_000)


def options(address: str, **changes) -> GradeOptions:
    """The CLI's defaults, on the cluster at ``address``; no solution self-check (timed apart)."""
    return GradeOptions(scheduler=address, check_solution=False, **changes)


def timed_batch(subs: Path, assignment: Path, out: Path, address: str | None) -> tuple[float, list]:
    """Seconds to grade ``subs`` on the cluster at ``address`` (None: here, with -j 2)."""
    how = options(address) if address else GradeOptions(jobs=2, check_solution=False)
    started = time.perf_counter()
    summary = grade_folder(subs, assignment, out, how, stream=io.StringIO())
    seconds = time.perf_counter() - started
    shutil.rmtree(out)
    return seconds, summary.results


def speedup(
    root: Path, one: DaskProcesses, two: DaskProcesses, rounds: int, count: int = 20
) -> dict[str, float]:
    """Seconds for ``count`` submissions on one worker, on two, and here with -j 2 (the
    reference: what the cluster adds), interleaved in alternating order; the ratios per round."""
    subs = root / "batch"
    subs.mkdir()
    make_submissions(subs, count)
    clusters = {"1 worker": one.address, "2 workers": two.address, "here, -j 2": None}
    times: dict[str, list[float]] = {name: [] for name in clusters}
    for r in range(rounds):
        order = list(clusters) if r % 2 == 0 else list(reversed(clusters))
        for name in order:
            seconds, results = timed_batch(subs, TINY, root / "out", clusters[name])
            assert len(results) == count and {r.total for r in results} == {3, 5}, results
            times[name].append(seconds)
            load = os.getloadavg()[0]
            print(
                f"  round {r + 1}, {name}: {seconds:6.1f} s  (load average {load:.1f})", flush=True
            )

    def ratio(a: str, b: str) -> float:
        return statistics.median(x / y for x, y in zip(times[a], times[b], strict=True))

    return {
        **{name: statistics.median(values) for name, values in times.items()},
        "speed-up": ratio("1 worker", "2 workers"),
        "cluster / here": ratio("2 workers", "here, -j 2"),
    }


def assignment_costs(
    root: Path, one: DaskProcesses, copies: int, assignments: int | None = None
) -> dict[str, dict[str, float]]:
    """Per assignment (the first ``assignments``, or all): worker seconds per submission (its
    own solution, ``copies`` times)."""
    costs = {}
    for assignment in sorted((REPO / "solutions").glob("*.ipynb"))[:assignments]:
        subs = root / f"subs-{assignment.stem}"
        subs.mkdir()
        for n in range(copies):
            shutil.copy(assignment, subs / f"student{n}.ipynb")
        seconds, results = timed_batch(subs, assignment, root / "out", one.address)
        assert all(r.total == r.max_total and r.status == "ok" for r in results), [
            (r.student, r.total, r.status, r.detail) for r in results
        ]
        costs[assignment.stem] = {
            "wall per submission": seconds / copies,
            "in the worker": statistics.median(r.seconds for r in results),
        }
        print(f"  {assignment.stem}: {seconds / copies:5.1f} s per submission", flush=True)
    return costs


def peak_memory_mb(one: DaskProcesses) -> float:
    """The largest resident set of a process the worker's grading children ran (kernel included)."""
    with one.client() as client:
        sizes = client.run(lambda: resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    return max(sizes.values()) / 1024


def client_costs(root: Path, class_sizes: tuple[int, ...] = CLASS_SIZES) -> dict[str, float]:
    """Seconds the client spends per result, and per gradebook rebuild at 1,000 and 10,000 rows."""
    subs = root / "one"
    subs.mkdir()
    make_submissions(subs, 1)
    out = OutFolder(root / "client-out")
    assignment = load_assignment(TINY)
    local = GradeOptions(jobs=1, check_solution=False)
    summary = grade_folder(subs, TINY, out.path, local, stream=io.StringIO())
    template = summary.results[0]
    saves = []
    for n in range(200):
        template.student = f"s{n:05d}"
        started = time.perf_counter()
        out.save(template)
        saves.append(time.perf_counter() - started)
    costs = {"save one result": statistics.median(saves)}
    data = json.dumps(template.to_json())
    for rows in class_sizes:
        for n in range(rows):  # the result files a class of this size leaves
            path = out.results / f"s{n:05d}.json"
            if not path.exists():
                path.write_text(data.replace('"s00199"', f'"s{n:05d}"'))
        started = time.perf_counter()
        with out.locked():
            assert len(out.rebuild(assignment)) == rows + 1
        costs[f"gradebook rebuild, {rows:,} rows"] = time.perf_counter() - started
    return costs


def workers_needed(students: int, seconds: float, efficiency: float) -> int:
    return math.ceil(students * seconds / (HOUR * efficiency))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rounds", type=int, default=2, help="interleaved rounds of 20 submissions"
    )
    parser.add_argument("--copies", type=int, default=3, help="submissions per real assignment")
    parser.add_argument("--speedup-only", action="store_true", help="only part 1")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="every part once, 3 submissions, one assignment: checks the bench runs",
    )
    args = parser.parse_args()
    rounds, count, copies, assignments, sizes = (
        (1, 3, 1, 1, (250, 500))
        if args.smoke
        else (args.rounds, 20, args.copies, None, CLASS_SIZES)
    )
    root = Path(tempfile.mkdtemp(prefix="bench-cluster-"))
    private_jupyter_dirs(root)
    (root / "one-worker").mkdir()
    (root / "two-workers").mkdir()
    one, two = DaskProcesses(root / "one-worker"), DaskProcesses(root / "two-workers")
    print(
        f"## grading on Dask, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    try:
        one.ensure_workers(1)
        two.ensure_workers(2)
        print(
            f"## {count} submissions (tests/fixtures/grading/tiny.ipynb), two workers against one"
        )
        batch = speedup(root, one, two, rounds, count)
        for name in ("1 worker", "2 workers", "here, -j 2"):
            print(f"{name:<40} {batch[name]:7.1f} s  ({batch[name] / count:.2f} s per submission)")
        print(f"{'2 workers against here, -j 2':<40} {batch['cluster / here']:7.2f}x")
        ok = "ok" if batch["speed-up"] >= 1.7 else "UNDER"
        print(
            f"{'speed-up (ratio per round, median)':<40} {batch['speed-up']:7.2f}x  (target 1.70x: {ok})"
        )
        efficiency = min(batch["speed-up"] / 2, 1.0)
        if args.speedup_only:
            return

        print(f"## each assignment's own solution, {copies} copies, one worker", flush=True)
        costs = assignment_costs(root, one, copies, assignments)
        memory = peak_memory_mb(one)
        client = client_costs(root, sizes)

        print("## the client (this machine), per result and per gradebook rebuild")
        for name, seconds in client.items():
            print(f"{name:<40} {seconds * 1e3:9.1f} ms")

        print(
            f"## capacity: one-thread workers for a class within an hour (efficiency {efficiency:.2f})"
        )
        print(
            "| assignment | seconds per submission (one worker) | workers for 1,000 | workers for 10,000 |"
        )
        print("|---|---|---|---|")
        sheet = {"tiny (tests)": batch["1 worker"] / count}
        sheet |= {name: cost["wall per submission"] for name, cost in costs.items()}
        for name, seconds in sheet.items():
            need = [workers_needed(n, seconds, efficiency) for n in CLASS_SIZES]
            print(f"| {name} | {seconds:.1f} | {need[0]} | {need[1]} |")
        print(f"peak resident memory of one grading process: {memory:.0f} MB")
        save = client["save one result"]
        print(
            f"client time per result: {save * 1e3:.1f} ms (10,000 results: {10_000 * save:.0f} s "
            "of the hour); the gradebook is rebuilt at most every 2 s while grading, and at the end"
        )
    finally:
        one.stop()
        two.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
