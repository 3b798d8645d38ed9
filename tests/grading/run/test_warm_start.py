"""The warm start keeps every submission apart: forked from one warm process, the second
submission sees nothing the first one wrote, set, patched or started (issue 22)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import nbformat
import pytest

from hookviz.grading.core.merge import load_assignment
from hookviz.grading.core.submissions import Submission
from hookviz.grading.run.engine import grade_submission
from hookviz.grading.run.limits import Limits
from hookviz.grading.run.nbval_child import GradeSettings, instructor_imports
from hookviz.grading.run.sandbox import detect_sandbox
from hookviz.grading.run.warm_kernel import WarmSandbox
from tests.grading_env import grading_processes_left, private_jupyter_dirs
from tests.tiny_course import CELL_TIMEOUT, TINY, student

pytestmark = [pytest.mark.notebook, pytest.mark.slow]

DOUBLE = "def double(x):\n    return 2 * x\n"
# Everything a submission could leave for the next one: files in each writable place, System V
# shared memory, environment and module state, a patched torch, a process out of its session.
LEAVE = """
import ctypes, json, os, subprocess, sys, torch
for folder in ("/tmp", "/dev/shm", "/run", os.path.dirname(os.getcwd()), os.path.expanduser("~")):
    try:
        with open(os.path.join(folder, "left-by-ann"), "w") as handle:
            handle.write("ann")
    except OSError:
        pass
ctypes.CDLL(None).shmget(0, 4096, 0o1600)  # IPC_PRIVATE, IPC_CREAT | 0600
os.environ["LEFT_BY_ANN"] = "1"
torch.left_by_ann = True
torch.equal = lambda *args: True
json.left_by_ann = True
sys.left_by_ann = True
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"], start_new_session=True)
print("pid", os.getpid())
"""
LOOK = """
import glob, json, os, sys, torch
found = [p for p in glob.glob("/tmp/**/left-by-ann", recursive=True)]
found += glob.glob("/dev/shm/*") + glob.glob("/run/*")
found += glob.glob(os.path.join(os.path.dirname(os.getcwd()), "*", "left-by-ann"))
found += [p for p in os.listdir(os.path.dirname(os.getcwd())) if p != os.path.basename(os.getcwd())]
with open("/proc/sysvipc/shm") as handle:
    found += handle.read().splitlines()[1:]
found += ["environ"] * ("LEFT_BY_ANN" in os.environ)
found += ["torch"] * hasattr(torch, "left_by_ann") + ["json"] * hasattr(json, "left_by_ann")
found += ["sys"] * hasattr(sys, "left_by_ann")
found += ["torch.equal"] * (torch.equal(torch.zeros(1), torch.ones(1)) is True)
for entry in os.listdir("/proc"):
    if entry.isdigit():
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                if b"time.sleep(300)" in handle.read():
                    found.append("process " + entry)
        except OSError:
            pass
print("found", sorted(found))
print("pid", os.getpid())
"""


@pytest.fixture(scope="module")
def two_from_one_warm_process(tmp_path_factory):
    """ann's submission leaves everything it can, then bo's looks for it, both forked from the
    same warm process: (each one's answer-cell output, the WarmSandbox, the run's folder)."""
    root = tmp_path_factory.mktemp("warm")
    root.chmod(0o711)
    sandbox = detect_sandbox("auto", [])
    if sandbox.kind != "bwrap":
        pytest.fail("the warm start needs bubblewrap, which CI has")
    assignment = load_assignment(TINY)
    for name, source in (("ann", LEAVE), ("bo", LOOK)):
        nbformat.write(student({"double": source + DOUBLE}), root / f"{name}.ipynb")
    settings = GradeSettings(Limits(cell_timeout=CELL_TIMEOUT, submission_timeout=90))
    outputs: dict[str, str] = {}
    with private_jupyter_dirs(root / "jupyter"):
        scratch = Path(tempfile.mkdtemp(dir=root))
        scratch.chmod(0o711)
        warm = WarmSandbox(sandbox, instructor_imports(assignment), scratch)
        run = warm.run

        def recorded(program, child):
            ran = run(program, child)
            cell = next(r for r in ran.records if r.get("grade_id") == "double")
            outputs[child.workdir.name] = "".join(o.get("text", "") for o in cell["outputs"])
            return ran

        warm.run = recorded
        results = {}
        try:
            for name in ("ann", "bo"):
                results[name] = grade_submission(
                    Submission(name, root / f"{name}.ipynb"),
                    assignment,
                    warm,
                    settings,
                    slot=0,
                    scratch=warm.slot_dir(0),
                )
            starts = warm.starts
        finally:
            warm.close()
    ann, bo = outputs.values()  # in the order they ran
    return results, ann, bo, starts, root


def test_both_were_graded_from_one_warm_process(two_from_one_warm_process) -> None:
    results, ann, bo, starts, _ = two_from_one_warm_process
    assert starts == 1
    assert (results["bo"].total, results["bo"].status) == (5, "ok")
    # ann's patched torch.equal is caught in her own run, as in a cold one
    assert [c.outcome for c in results["ann"].checks] == ["tampered"] * 3
    assert ann.startswith("pid ") and "found" in bo


def test_nothing_the_first_left_is_seen_by_the_second(two_from_one_warm_process) -> None:
    _, _, bo, _, _ = two_from_one_warm_process
    assert "found []" in bo, bo


def test_each_kernel_is_a_process_of_its_own(two_from_one_warm_process) -> None:
    _, ann, bo, _, _ = two_from_one_warm_process
    pid_of = {text.split("pid ")[1].split()[0] for text in (ann, bo)}
    assert len(pid_of) == 2


def test_the_warm_process_and_every_child_are_gone_after(two_from_one_warm_process) -> None:
    *_, root = two_from_one_warm_process
    assert grading_processes_left(root) == []
