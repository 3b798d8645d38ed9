"""The one step that turns a widget's ES module and the helpers it imports into the one module
anywidget loads (widgets/base.py: inline_shared)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from hookviz.widgets.base import STATIC, front_end, inline_shared

WIDGETS = sorted(p.stem for p in STATIC.glob("*.js") if p.name != "common.js")
SHARED = "export function h(tag) {\n  return tag;\n}\nconst KEPT = 1;\nexport const N = KEPT;\n"


def test_the_import_is_replaced_by_the_helpers_without_their_exports() -> None:
    own = 'import { h, N } from "./common.js";\n\nfunction render() {\n  h(N);\n}\n'
    assert inline_shared(SHARED, own) == (
        "function h(tag) {\n  return tag;\n}\nconst KEPT = 1;\nconst N = KEPT;\n"
        "\nfunction render() {\n  h(N);\n}\n"
    )


def test_a_name_the_helpers_do_not_export_is_refused() -> None:
    with pytest.raises(ValueError, match="KEPT, which common.js does not export"):
        inline_shared(SHARED, 'import { h, KEPT } from "./common.js";\n')


@pytest.mark.parametrize(
    "own",
    [
        'import { h } from "./common.js";\nimport { N } from "./common.js";\n',
        'import { h } from "./common.js";\nimport confetti from "https://esm.sh/x";\n',
    ],
)
def test_any_other_import_is_refused(own: str) -> None:
    with pytest.raises(ValueError, match="import only from ./common.js"):
        inline_shared(SHARED, own)


@pytest.mark.skipif(shutil.which("node") is None, reason="node parses the modules")
@pytest.mark.parametrize("name", WIDGETS)
def test_each_widget_becomes_one_module_that_parses(name: str, tmp_path: Path) -> None:
    """node --check: one module, no import left, no name declared twice (an early error)."""
    esm, _ = front_end(name)
    module = tmp_path / f"{name}.mjs"
    module.write_text(esm)
    done = subprocess.run(["node", "--check", str(module)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
