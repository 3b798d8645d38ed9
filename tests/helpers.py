"""Shared test helpers: torch's own view of hook order, a check that nothing is left behind,
and the notebook runner the tests share with instructors (`hookviz run`)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import warnings
from pathlib import Path

import torch
from torch import nn

import hookviz as hv


def torch_hook_order(model: nn.Module, x, loss_fn=lambda out: out.sum()) -> list[tuple[str, str]]:
    """(phase, path) in the order torch's own hooks fire, full backward hooks included."""
    order: list[tuple[str, str]] = []
    paths = {id(m): p for p, m in model.named_modules()}
    handles = []
    for _, module in model.named_modules():
        handles += [
            module.register_forward_pre_hook(
                lambda m, a: order.append(("forward_pre", paths[id(m)]))
            ),
            module.register_forward_hook(lambda m, a, o: order.append(("forward", paths[id(m)]))),
            module.register_full_backward_pre_hook(
                lambda m, g: order.append(("backward_pre", paths[id(m)]))
            ),
            module.register_full_backward_hook(
                lambda m, gi, go: order.append(("backward", paths[id(m)]))
            ),
        ]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "none of the inputs have requires_grad"
            out = model(x)
            loss = loss_fn(out)
            if loss is not None and loss.requires_grad:
                loss.backward()
    finally:
        for h in handles:
            h.remove()
    return order


def assert_no_hooks(model: nn.Module, *tensors: torch.Tensor) -> None:
    """No module, parameter or global hook on ``model``, and no hook on the given tensors."""
    left = hv.list_hooks(model)
    assert left == [], [str(h) for h in left]
    for name, module in model.named_modules():
        assert "apply" not in module.__dict__, f"apply wrapper left on {name!r}"
        assert "forward" not in module.__dict__, f"forward wrapper left on {name!r}"
    for t in tensors:
        assert not t._backward_hooks, f"tensor hooks left: {t._backward_hooks}"


def notebook_runner():
    """tools/run_notebooks.py (`hookviz run` under its old name), loaded as a module."""
    path = Path(__file__).resolve().parent.parent / "tools" / "run_notebooks.py"
    spec = importlib.util.spec_from_file_location("run_notebooks", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_nbval(path: Path) -> subprocess.CompletedProcess:
    """``pytest --nbval`` on one notebook, in its own folder and without this suite's conftest."""
    folder = path.parent
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--nbval",
            str(path),
            "-q",
            "-p",
            "no:cacheprovider",
            "--noconftest",
            "--rootdir",
            str(folder),
        ],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
    )
