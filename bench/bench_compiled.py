"""What `hv.compare_compiled` costs on walkthrough 08's model, as ratios measured in one run.

The model is notebook 08's digit classifier (two 3×3 convolutions, each with an in-place ReLU,
a pooled linear head: `cnn` in its section 1), with the notebook's Grad-CAM hooks on the last
convolution: a forward hook that keeps a clone of the output and registers a tensor hook that
keeps its gradient (under torch.compile a tensor hook with a side effect is a graph break). The
input is a training batch of 64 digits, 1×8×8 (random pixels: the notebook's scikit-learn
digits would change no timing). A step is a forward, the cross-entropy loss and a backward.

Three ways of running the same steps, interleaved round by round (bench/harness.py):
- eager: the steps on a deep copy of the model with its hooks;
- compiled: `torch._dynamo.reset()`, `torch.compile` of a deep copy, then the steps: the
  compilation included, as a comparison pays it;
- compare_compiled: `hv.compare_compiled(model, x, loss_fn=..., steps=N)`, which runs both.
The ratios: compare_compiled over each, and over the two together (what it adds to running
both runs by hand: copies, the observer, torch's records, the report).

Run: .venv/bin/python bench/bench_compiled.py [--steps N] [--rounds R] [--backend B] [--smoke]
(about a minute on a quiet 2-core machine; --smoke: two steps, one round)
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import sys
from pathlib import Path

import torch
import torch._dynamo
from torch import nn
from torch.nn import functional

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
from harness import Config, interleaved  # noqa: E402

import hookviz as hv  # noqa: E402


def walkthrough_08_model() -> tuple[nn.Module, dict]:
    """Notebook 08's `cnn`, with its Grad-CAM hooks on `cnn[2]`; what they keep."""
    torch.manual_seed(0)
    cnn = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1),
        nn.ReLU(inplace=True),
        nn.Conv2d(16, 32, 3, padding=1),
        nn.ReLU(inplace=True),  # "2": the layer Grad-CAM explains
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(32, 10),
    )
    kept: dict[str, torch.Tensor] = {}

    def on_output(module, inputs, output):
        kept["activation"] = output.detach().clone()  # the ReLU after it changes output in place
        output.register_hook(lambda grad: kept.__setitem__("gradient", grad))

    cnn[2].register_forward_hook(on_output)
    return cnn, kept


def loss_fn(labels: torch.Tensor):
    return lambda scores: functional.cross_entropy(scores, labels)


def run_steps(model: nn.Module, images, labels, steps: int) -> None:
    for _ in range(steps):
        for p in model.parameters():
            p.grad = None
        functional.cross_entropy(model(images), labels).backward()


def figures(steps: int, rounds: int, backend: str) -> list[str]:
    model, _ = walkthrough_08_model()
    generator = torch.Generator().manual_seed(1)
    images = torch.rand(64, 1, 8, 8, generator=generator)
    labels = torch.randint(10, (64,), generator=generator)

    def eager():
        run_steps(copy.deepcopy(model), images, labels, steps)

    def compiled():
        torch._dynamo.reset()
        run_steps(torch.compile(copy.deepcopy(model), backend=backend), images, labels, steps)
        torch._dynamo.reset()

    reports = []

    def compare():
        reports.append(
            hv.compare_compiled(
                model, images, loss_fn=loss_fn(labels), steps=steps, backend=backend
            )
        )

    configs = [Config("eager", eager), Config("compiled", compiled), Config("compare", compare)]
    timings = interleaved(configs, rounds=rounds, block=1, warmup=1)
    both = [a + b for a, b in zip(timings.blocks["eager"], timings.blocks["compiled"], strict=True)]
    over_both = statistics.median(
        c / b for c, b in zip(timings.blocks["compare"], both, strict=True)
    )
    report = reports[-1]
    lines = [
        f"## compare_compiled on walkthrough 08's model ({steps} steps, backend {backend!r}, "
        f"{rounds} rounds, {torch.get_num_threads()} threads, load {os.getloadavg()[0]:.1f})",
        f"report: {report!r}",
        *(f"  {line}" for line in report.table().splitlines()),
    ]
    for name in ("eager", "compiled", "compare"):
        lines.append(f"{name:<10} median {timings.median(name) * 1e3:9.1f} ms per run")
    lines += [
        f"compare_compiled / eager run     {timings.ratio('compare', 'eager'):7.2f}x",
        f"compare_compiled / compiled run  {timings.ratio('compare', 'compiled'):7.2f}x",
        f"compare_compiled / both runs     {over_both:7.2f}x",
    ]
    assert not hv.list_hooks(nn.Linear(1, 1)), "a global hook was left behind"
    print("\n".join(lines), flush=True)
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3, help="steps per run (default 3)")
    parser.add_argument("--rounds", type=int, default=15, help="interleaved rounds (default 15)")
    parser.add_argument("--backend", default="eager", help="torch.compile's backend")
    parser.add_argument("--threads", type=int, default=None, help="torch's threads")
    parser.add_argument("--smoke", action="store_true", help="two steps, one round")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    steps, rounds = (2, 1) if args.smoke else (args.steps, args.rounds)
    figures(steps, rounds, args.backend)


if __name__ == "__main__":
    main()
