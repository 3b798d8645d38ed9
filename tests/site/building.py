"""`hookviz site` run as a reader or CI runs it: the command, in a process group of its own,
stopped for sure (the group, then a check that nothing of it is left) whatever happens."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.processes import group_members, stop_group

BUILD_TIMEOUT = 600.0  # seconds; the whole course builds in about one minute on 2 cores


def hookviz_command() -> Path:
    """The `hookviz` script of the interpreter running the tests."""
    script = Path(sys.executable).parent / "hookviz"
    if not script.is_file():
        raise RuntimeError(f"{script} is missing: install the package, pip install -e '.[dev]'.")
    return script


def build_site_command(root: Path, out: Path, timeout: float = BUILD_TIMEOUT) -> str:
    """Run `hookviz site --root ROOT --out OUT`; returns what it printed, raises if it failed."""
    log = out.parent / f"{out.name}-build.log"
    with log.open("w") as sink:
        process = subprocess.Popen(
            [str(hookviz_command()), "site", "--root", str(root), "--out", str(out)],
            cwd=root,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            code = process.wait(timeout)
        except BaseException:  # a timeout, or the run interrupted: stop it and all it started
            stop_group(process.pid)
            process.wait(5)
            raise
        finally:
            if group_members(process.pid):  # the command exited, something it started did not
                stop_group(process.pid)
    text = log.read_text(errors="replace")
    if code != 0:
        raise AssertionError(f"hookviz site exited with {code}:\n{text[-4000:]}")
    return text
