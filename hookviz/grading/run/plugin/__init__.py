"""The code that runs inside the sandbox, loaded there by path: the pytest plugin, the warm start,
and the privilege drop both launchers share. None of it imports hookviz (that would import torch).

This package's own module is the grader's side: where the folder is, and the one preamble that
starts a Python on it (``python -I -c BOOT PLUGIN_DIR ARGS...``).
"""

from __future__ import annotations

import sys
from pathlib import Path

PLUGIN_DIR = Path(__file__).resolve().parent
# rfc3987_syntax is an optional jsonschema format checker that takes over a second to import
# (nbformat imports jsonschema); nbformat never needs it.
_PREAMBLE = "import sys; sys.modules.setdefault('rfc3987_syntax', None); sys.path.insert(0, sys.argv.pop(1)); "
PYTEST_BOOT = _PREAMBLE + "import pytest; raise SystemExit(pytest.main(sys.argv[1:]))"
WARM_BOOT = _PREAMBLE + "import hookviz_warm_start; hookviz_warm_start.main()"
# `python -I -S -c LAUNCHER PLUGIN_DIR SPEC PROGRAM ARGS...`: limits, an unprivileged user, exec.
LAUNCHER = (
    "import json, os, sys; sys.path.insert(0, sys.argv.pop(1)); import hookviz_privileges; "
    "hookviz_privileges.drop(json.loads(sys.argv[1])); os.execv(sys.argv[2], sys.argv[2:])"
)


def boot_command(boot: str, *args: str) -> list[str]:
    """``python -I -c BOOT PLUGIN_DIR ARGS...``: a Python in the sandbox with the plugins importable."""
    return [sys.executable, "-I", "-c", boot, str(PLUGIN_DIR), *args]


def launcher_command(spec: str, program: list[str]) -> list[str]:
    """``python -I -S -c LAUNCHER PLUGIN_DIR SPEC PROGRAM...``: drop privileges, then exec."""
    return [sys.executable, "-I", "-S", "-c", LAUNCHER, str(PLUGIN_DIR), spec, *program]
