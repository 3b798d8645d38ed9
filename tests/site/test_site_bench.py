"""bench/bench_site.py runs to its report with --smoke, on the site built for these tests."""

from __future__ import annotations

import pytest

from tests.bench_smoke import run_smoke


@pytest.mark.slow
def test_the_site_bench_runs_every_part(built_site) -> None:
    output = run_smoke("bench_site.py", "--site", str(built_site.root))
    for line in ("## page weight", "first widget answers a key", "## search:", "frames/s"):
        assert line in output, f"bench_site.py --smoke did not report {line!r}:\n{output[-3000:]}"
