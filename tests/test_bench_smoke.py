"""Every bench in bench/ runs to its report with --smoke (bench_site's run is in tests/site,
on the site built there). The figures are not judged: a smoke run is too short for that."""

from __future__ import annotations

import pytest

from tests.bench_smoke import run_smoke

pytestmark = pytest.mark.slow

# What each bench prints when it got through every part: one line of each part's report.
REPORTS = {
    "bench_record.py": ["record()"],
    "bench_widgets.py": [
        "ApplyTraversal on wide_tree(50): build",
        "the heat map's own cost",
        "## HookMonitor memory",
        "## HookMonitor(heatmap=False) memory",
        "## ApplyTraversal playing in JupyterLab",
    ],
    "bench_grading.py": ["ratio (hookviz / bare)", "speed-up (-j 1 / -j 2)"],
    "bench_nbgrader.py": ["ratio to nbgrader (median of rounds)", "## where hookviz's time goes"],
    "bench_integrity.py": ["added per check / a check cell", '"ratio"'],
    "bench_compiled.py": [
        "## compare_compiled on walkthrough 08's model",
        "compare_compiled / compiled run",
        "compare_compiled / both runs",
    ],
    "bench_cluster.py": [
        "speed-up (ratio per round, median)",
        "| assignment |",
        "client time per result",
    ],
}


@pytest.mark.parametrize("script", sorted(REPORTS))
def test_the_bench_runs_every_part(script: str) -> None:
    output = run_smoke(script)
    missing = [line for line in REPORTS[script] if line not in output]
    assert not missing, f"{script} --smoke did not report {missing}:\n{output[-3000:]}"
