"""The widgets in a real kernel: what a notebook stores, and that nbval finds it stable.

Runs with whichever ipywidgets/anywidget the Python running the tests has, so `make test-colab`
checks the Colab pins (ipywidgets 7.7.1, anywidget 0.9.21) the same way.
"""

from __future__ import annotations

import nbformat
import pytest
from nbclient import NotebookClient

from tests.helpers import run_nbval

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
CELLS = [
    "import torch\nimport hookviz as hv\nmodel = hv.examples.model()",
    "hv.ApplyTraversal(model)",
    "net = hv.examples.mlp((4, 8, 2))\n"
    "with hv.HookMonitor(net) as monitor:\n"
    "    for _ in range(3):\n"
    "        net(torch.ones(2, 4)).sum().backward()",
    "monitor",
    "model.ab.a.register_forward_hook(lambda module, inputs, output: output * 2)\n"
    "hv.HookTimeline(model, torch.ones(1))",
    "hv.HookInventory(model, include_globals=False)",
    "print(len(hv.list_hooks(net)), 'hooks left on net')",
    "net[0].register_forward_hook(lambda module, inputs, output: None)\n"
    "hv.CompiledTimeline(net, torch.ones(2, 4), steps=2)",
]
EXPECTED = {  # cell -> text/plain of its widget outputs, in order
    1: ["ApplyTraversal(Model, 7 visits, step 0/7)"],
    2: ["HookMonitor(Sequential, 4 modules, recording, 0 steps)"],  # `with` shows it once, on entry
    3: ["HookMonitor(Sequential, 4 modules, stopped, 3 steps)"],
    4: [
        "HookTimeline(Model, 29 firings, 1 from the model's own hooks, 1 replaced a value, step 0/29)"
    ],
    5: ["HookInventory(Model, 1 hook)"],
    7: [
        "CompiledTimeline(Sequential, eager, 1 hook, 0 missed, 0 breaks, 0 recompiles, moment 0/2)"
    ],
}


@pytest.fixture
def kernel_home(tmp_path, monkeypatch):
    """Jupyter, IPython and matplotlib write under tmp_path, not under $HOME."""
    for variable, folder in (
        ("JUPYTER_CONFIG_DIR", "config"),
        ("JUPYTER_DATA_DIR", "data"),
        ("JUPYTER_RUNTIME_DIR", "runtime"),
        ("IPYTHONDIR", "ipython"),
        ("MPLCONFIGDIR", "matplotlib"),
    ):
        monkeypatch.setenv(variable, str(tmp_path / folder))
    monkeypatch.delenv("JUPYTER_PLATFORM_DIRS", raising=False)
    return tmp_path


def run_notebook(folder):
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(folder)}}
    ).execute()
    return notebook


def widget_texts(cell):
    return [o["data"]["text/plain"] for o in cell.outputs if o.get("data", {}).get(WIDGET_VIEW)]


def test_widgets_display_in_a_kernel_and_nbval_finds_them_stable(kernel_home):
    notebook = run_notebook(kernel_home)
    for index, cell in enumerate(notebook.cells):
        assert not [o for o in cell.outputs if o.output_type == "error"], cell.outputs
        assert widget_texts(cell) == EXPECTED.get(index, []), (index, cell.outputs)
    assert notebook.cells[-2].outputs[0]["text"] == "0 hooks left on net\n"

    path = kernel_home / "widgets.ipynb"
    nbformat.write(notebook, path)
    result = run_nbval(path)
    assert result.returncode == 0, result.stdout[-3000:]
    assert f"{len(CELLS)} passed" in result.stdout
