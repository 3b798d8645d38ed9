"""Commands that run no model import no torch: `import hookviz` loads each name on first use."""

from __future__ import annotations

import subprocess
import sys

import pytest

# Runs `hookviz --help` (and `hookviz grade --help`) in a fresh Python, then names every heavy
# module that got imported.
PROBE = """
import sys
from hookviz.cli import main
for argv in (["--help"], ["grade", "--help"]):
    try:
        main(argv)
    except SystemExit:
        pass
heavy = ("torch", "ipywidgets", "anywidget", "matplotlib", "numpy")
print("IMPORTED:" + ",".join(sorted(name for name in heavy if name in sys.modules)))
"""


def test_hookviz_help_imports_no_torch() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, check=True
    )
    assert "usage: hookviz" in done.stdout
    assert "IMPORTED:\n" in done.stdout, done.stdout[-500:]


@pytest.mark.parametrize("name", ["record", "trace_apply", "examples", "postorder", "HookMonitor"])
def test_every_public_name_still_loads_on_first_use(name: str) -> None:
    import hookviz as hv

    assert name in dir(hv)
    assert getattr(hv, name) is not None


def test_an_unknown_name_is_an_attribute_error() -> None:
    import hookviz as hv

    with pytest.raises(AttributeError, match="no attribute 'recrod'"):
        hv.recrod  # noqa: B018
