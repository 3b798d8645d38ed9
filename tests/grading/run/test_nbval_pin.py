"""The grading plugin patches nbval's internals: it runs only on the nbval release it was tested on."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import nbval
import pytest

ROOT = Path(__file__).resolve().parents[3]
spec = importlib.util.spec_from_file_location(
    "hookviz_grading_plugin", ROOT / "hookviz/grading/run/plugin/hookviz_grading_plugin.py"
)
plugin = importlib.util.module_from_spec(spec)
spec.loader.exec_module(plugin)

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib


@pytest.mark.parametrize("version", ["0.12.0", "1.0", "0.10.9", "0"])
def test_an_untested_nbval_stops_grading_with_the_fix(version):
    with pytest.raises(
        pytest.UsageError, match=r"needs nbval 0\.11\.x .* pip install 'nbval>=0\.11,<0\.12'"
    ):
        plugin._check_nbval_version(version)


def test_the_installed_nbval_and_the_pin_agree_with_the_plugin():
    plugin._check_nbval_version(nbval.__version__)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    low, high = plugin.NBVAL_TESTED
    wanted = f"nbval>={low[0]}.{low[1]},<{high[0]}.{high[1]}"
    pins = [spec for extra in project.values() for spec in extra if spec.startswith("nbval")]
    assert pins and set(pins) == {wanted}, f"every extra that installs nbval pins {wanted}: {pins}"


def test_the_names_a_locked_cell_binds_are_its_top_level_ones():
    source = (
        "%matplotlib inline\n"
        "import torch, torch.nn.functional as F\n"
        "from torch import nn as tnn, optim\n"
        "from math import *\n"
        "SEED: int = 0\n"
        "a, (b, *c) = 1, (2, 3)\n"
        "count += 1\n"
        "class Branch(tnn.Module):\n    inner = 1\n"
        "def helper():\n    local = 2\n"
        "for i in range(2):\n    loop = i\n"
        "torch.manual_seed(SEED)\n"
    )
    assert plugin._bound_names(source) == [
        "torch",
        "F",
        "tnn",
        "optim",
        "SEED",
        "a",
        "b",
        "c",
        "count",
        "Branch",
        "helper",
    ]
    assert plugin._bound_names("def broken(:\n") == []
