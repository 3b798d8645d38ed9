"""hookviz's widgets: anywidget classes that draw hooks and ``apply`` at work.

Each works with ipywidgets 7.7 + anywidget 0.9 (Colab) and ipywidgets 8 + anywidget 0.11
(JupyterLab 4, Notebook 7). This package imports anywidget and traitlets, never matplotlib.
"""

from .apply_traversal import ApplyTraversal
from .compiled_timeline import CompiledTimeline
from .hook_inventory import HookInventory
from .hook_monitor import HookMonitor
from .hook_timeline import HookTimeline
from .prediction import Prediction

__all__ = [
    "ApplyTraversal",
    "CompiledTimeline",
    "HookInventory",
    "HookMonitor",
    "HookTimeline",
    "Prediction",
]
