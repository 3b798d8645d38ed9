"""One privilege drop, run in both places a grading child starts: the cold launcher that
sandbox.py execs through, and the warm start's forked child (plugin/hookviz_warm_start.py).
Both load plugin/hookviz_privileges.py by path; these tests watch each one apply it."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
import textwrap
from pathlib import Path

from hookviz.grading.run.limits import Limits
from hookviz.grading.run.plugin import PLUGIN_DIR
from hookviz.grading.run.sandbox import ChildRunner, Sandbox
from hookviz.grading.run.warm_kernel import WarmSandbox

LIMITS = Limits(memory_mb=3000, file_mb=3, processes=4000, submission_timeout=25)
# What the child sees: its limits as setrlimit left them, and the kernel's no_new_privs flag.
REPORT = textwrap.dedent(
    """
    import json, resource
    names = ("RLIMIT_AS", "RLIMIT_FSIZE", "RLIMIT_CPU", "RLIMIT_CORE")
    flag = [l.split()[1] for l in open("/proc/self/status") if l.startswith("NoNewPrivs:")]
    seen = {n: resource.getrlimit(getattr(resource, n))[0] for n in names}
    seen["NoNewPrivs"] = flag[0] if flag else None
    open(OUT, "w").write(json.dumps(seen))
    """
)


def expected() -> dict:
    wanted = LIMITS.rlimits()
    return {
        "RLIMIT_AS": wanted["RLIMIT_AS"],
        "RLIMIT_FSIZE": 3 * 2**20,
        "RLIMIT_CPU": wanted["RLIMIT_CPU"],
        "RLIMIT_CORE": 0,
        "NoNewPrivs": "1",
    }


def test_the_cold_launcher_drops_privileges_before_exec(tmp_path: Path) -> None:
    out = tmp_path / "seen.json"
    program = [sys.executable, "-I", "-S", "-c", f"OUT = {str(out)!r}\n" + REPORT]
    argv = Sandbox("none").command(program, tmp_path, LIMITS, 0)
    assert str(PLUGIN_DIR) in argv  # the launcher loads the drop from the plugin folder
    subprocess.run(argv, check=True, timeout=60, start_new_session=True)
    assert json.loads(out.read_text()) == expected()


def test_the_warm_start_child_drops_privileges_before_pytest(tmp_path: Path) -> None:
    """run_submission, as the warm process runs it in each fork: the drop comes before pytest."""
    (tmp_path / "test_seen.py").write_text(
        f"OUT = {str(tmp_path / 'seen.json')!r}\n\ndef test_seen():\n"
        + textwrap.indent(REPORT, "    ")
    )
    spec = {
        "limits": LIMITS.rlimits(),
        "workdir": str(tmp_path),
        "env": {"PATH": "/usr/bin:/bin", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        "pytest_args": ["-q", "-p", "no:cacheprovider", "test_seen.py"],
    }
    script = textwrap.dedent(
        f"""
        import json, os, sys
        sys.path.insert(0, {str(PLUGIN_DIR)!r})
        import hookviz_warm_start as warm

        class NoKernel:  # the notebook's kernel is not what this test watches
            def start(self, *args, **kwargs):
                raise AssertionError("no notebook here: nbval never starts a kernel")

            def shutdown_kernel(self, now=False):
                pass

        warm.fork_kernel = lambda workdir, results_fd: NoKernel()
        read, write = os.pipe()
        log = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT)
        warm.run_submission(json.loads(sys.argv[1]), write, log)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script, json.dumps(spec), str(tmp_path / "log")], timeout=120
    )  # run_submission makes its own session, as in the fork
    assert done.returncode == 0, (tmp_path / "log").read_text()  # pytest's: the test passed
    assert json.loads((tmp_path / "seen.json").read_text()) == expected()


def test_both_sandboxes_run_children_with_one_signature() -> None:
    """engine takes either as a ChildRunner: their run() and prepare_workdir() match it."""
    for method in ("run", "prepare_workdir", "kill_all"):
        wanted = inspect.signature(getattr(ChildRunner, method))
        for runner in (Sandbox, WarmSandbox):
            assert inspect.signature(getattr(runner, method)) == wanted, (runner, method)
