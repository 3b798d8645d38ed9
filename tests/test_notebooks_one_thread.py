"""The walkthrough's stored outputs hold on one thread too, not only on the machine's default.

Why a second run: a float sum's result depends on the order of its terms, and that order
changes with the number of threads (torch splits a reduction or a matrix product into one
chunk per thread) and with the CPU (the width of its vector instructions). The normal nbval
run in tests/test_notebooks.py uses the machine's default, two threads on CI; a student's
laptop may use eight. So every number a walkthrough stores must be printed at a precision, or
as a fact, that holds whatever the order, above all after a training loop, whose steps amplify
a last-digit difference (notebook 08's Grad-CAM once stored two digits that another CPU did not
reproduce). Here each walkthrough runs again with one thread, set as every kernel starts (an
IPython startup file calls ``torch.set_num_threads(1)``, and OMP_NUM_THREADS=1 covers the BLAS
libraries), and nbval compares it with the same stored outputs: a value that depends on the
order fails here or in the normal run, not in a student's notebook. Notebooks 07 to 09 set one
thread themselves (a small network computes as fast on one); the other notebooks get their first
run on one thread here. The Korean notebooks run the same code, so the English ones suffice:
about a minute and a half on two cores, in one pytest subprocess as the normal run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import notebook_runner
from tests.test_notebooks import (
    WALKTHROUGH,
    assert_matches_stored_outputs,
    nbval_results,
    relative,
)

pytestmark = pytest.mark.notebook

# Run by IPython in every kernel before the notebook's first cell; it records the threads it set.
ONE_THREAD_STARTUP = """\
import os
import pathlib

import torch

torch.set_num_threads(1)
pathlib.Path(os.environ["HOOKVIZ_THREADS_SEEN"], str(os.getpid())).write_text(
    str(torch.get_num_threads())
)
"""


@pytest.fixture(scope="module")
def one_thread_run(tmp_path_factory) -> dict:
    """Every walkthrough notebook in one nbval run, each kernel on one thread."""
    base = tmp_path_factory.mktemp("one-thread")
    env = notebook_runner().isolated_env(base / "settings")
    startup = Path(env["IPYTHONDIR"]) / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-one-thread.py").write_text(ONE_THREAD_STARTUP)
    seen = base / "threads-seen"
    seen.mkdir()
    env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", HOOKVIZ_THREADS_SEEN=str(seen))
    run = nbval_results(WALKTHROUGH, env, base)
    run["threads"] = [path.read_text() for path in sorted(seen.iterdir())]
    return run


def test_every_kernel_computed_on_one_thread(one_thread_run: dict):
    """One kernel per notebook, and each ran the startup file: torch had one thread."""
    assert one_thread_run["threads"] == ["1"] * len(WALKTHROUGH), one_thread_run["output"]


@pytest.mark.parametrize("path", WALKTHROUGH, ids=relative)
def test_walkthrough_matches_its_stored_outputs_on_one_thread(path: Path, one_thread_run: dict):
    """On one thread a fresh kernel reproduces every stored output, as on the default threads."""
    assert_matches_stored_outputs(path, one_thread_run)


def test_one_thread_run_passed(one_thread_run: dict):
    """The one-thread nbval subprocess as a whole exits cleanly."""
    assert one_thread_run["returncode"] == 0, one_thread_run["output"]
