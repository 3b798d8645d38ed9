"""The sandbox: what bwrap hides and shows, the launcher's limits, the modes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hookviz.grading.run.limits import Limits
from hookviz.grading.run.sandbox import Sandbox, SandboxError, detect_sandbox, python_paths


def test_bwrap_options_hide_before_they_show(tmp_path: Path) -> None:
    shown = Path(sys.prefix)
    sandbox = Sandbox("bwrap", bwrap="/usr/bin/bwrap", hidden=(shown.parent,), shown=(shown,))
    argv = sandbox.command(["true"], tmp_path, Limits(), 0)
    hide, show = argv.index(str(shown.parent)), argv.index(str(shown))
    assert argv[hide - 1] == "--tmpfs" and argv[show - 1] == "--ro-bind" and hide < show
    assert "--unshare-net" in argv and "--die-with-parent" in argv
    assert argv[argv.index("--bind") + 1] == str(tmp_path)
    spec = json.loads(argv[argv.index("-c", argv.index("--")) + 3])  # -c LAUNCHER PLUGIN_DIR SPEC
    assert spec["limits"]["RLIMIT_AS"] == 4096 * 2**20 and spec["limits"]["RLIMIT_NPROC"] == 256


def test_the_sandbox_shows_site_folders_a_pth_added_and_no_other_entry_of_sys_path(
    tmp_path: Path, monkeypatch
) -> None:
    added = tmp_path / "home" / "course" / ".venv" / "lib" / "site-packages"  # by a .pth file
    checkout = tmp_path / "home" / "course"  # an editable install's entry: the solutions live here
    added.mkdir(parents=True)
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path, str(added), str(checkout)])
    shown = python_paths()
    assert added in shown
    assert checkout not in shown and tmp_path not in shown


def test_the_launcher_applies_limits_before_exec(tmp_path: Path) -> None:
    sandbox = Sandbox("none")
    limits = Limits(memory_mb=1024, file_mb=1, processes=100, submission_timeout=20)
    program = [sys.executable, "-I", "-S", "-c", (
        "import resource\n"
        "print(*(resource.getrlimit(getattr(resource, n))[0] for n in ('RLIMIT_AS', 'RLIMIT_FSIZE', "
        "'RLIMIT_CPU', 'RLIMIT_CORE')))\n"
        "try:\n"
        "    open('big', 'wb').write(bytes(2 * 2**20))\n"
        "except OSError as error:\n"
        "    print(type(error).__name__, error.errno)\n"
        "try:\n"
        "    bytearray(2 * 2**30)\n"
        "except MemoryError:\n"
        "    print('MemoryError')\n"
    )]  # fmt: skip
    done = subprocess.run(
        sandbox.command(program, tmp_path, limits, 0),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.splitlines() == [f"{2**30} {2**20} 50 0", "OSError 27", "MemoryError"], (
        done.stderr
    )
    assert (tmp_path / "big").stat().st_size == 2**20  # written up to the limit, not past it


def test_an_unknown_sandbox_mode_is_refused() -> None:
    with pytest.raises(Exception, match="auto, bwrap, none or user"):
        detect_sandbox("docker", [])


def test_without_bwrap_auto_warns_and_bwrap_mode_refuses(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on it
    sandbox = detect_sandbox("auto", [])
    assert sandbox.kind == "none" and "bubblewrap (bwrap) is not installed" in sandbox.warning
    with pytest.raises(SandboxError, match="apt-get install bubblewrap"):
        detect_sandbox("bwrap", [])


def test_a_bwrap_that_cannot_make_namespaces_is_an_error_with_a_way_out(
    tmp_path: Path, monkeypatch
) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SandboxError) as caught:
        detect_sandbox("auto", [])
    message = str(caught.value)
    assert "cannot create its namespaces" in message and "No permissions" in message
    assert "--sandbox none" in message
