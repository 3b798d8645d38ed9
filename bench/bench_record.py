"""record() overhead against the bare step and against the floor, hookviz against a naive
recorder, and the import cost, as ratios in one run.

Run: .venv/bin/python bench/bench_record.py  (about 35 minutes on 2 cores, 26 on the floor);
``--only floor`` (or inside, convnet, naive, import, memory) runs one part, ``--rounds N`` sets the
floor's rounds; ``--smoke`` runs every part once at tiny sizes (about 25 s of CPU time): it checks
that the bench runs, its figures mean nothing. ``--before DIR``: the floor also runs record() of
the hookviz in DIR (a checkout of an earlier commit, say ``git worktree add DIR 30049d0``),
interleaved with today's, so that before and after are read in one run.

It reaches hookviz only through names hookviz supports: ``hookviz.record``, ``summaries.Lane``
and its sizes, ``module_grads.NodeWatch`` (the node hooks through which record() sees
gradients), and torch's own hook dicts.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import math
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import weakref
from array import array
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import Config, interleaved, report, report_totals, verdict  # noqa: E402

import hookviz as hv  # noqa: E402
from hookviz import summaries  # noqa: E402
from hookviz.module_grads import NodeWatch  # noqa: E402

# torch's own grad-mode switch, what record()'s hooks flip (torch.no_grad() calls it too)
_set_grad_enabled = getattr(torch._C, "_set_grad_enabled", torch.set_grad_enabled)


def training_step(model: nn.Module, x: torch.Tensor, y: torch.Tensor, lr: float = 0.01):
    """zero_grad, forward, loss, backward, SGD step: what a training loop does per batch."""
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)

    def step():
        optimizer.zero_grad(set_to_none=True)
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()

    return step


def block_for(step, seconds: float = 0.05) -> int:
    """Steps per timed block: about 50 ms of work, so that a recorder's flush at the end of a
    block (statistics computed in one batch) is amortised over as many steps as in a real loop."""
    for _ in range(3):
        step()
    start = time.perf_counter()
    for _ in range(5):
        step()
    return max(10, round(seconds / ((time.perf_counter() - start) / 5)))


# -- against the floor -------------------------------------------------------------------------


def vgg_net(seed: int = 0) -> nn.Module:
    """A VGG-style net for 3x32x32 inputs: six 3x3 convs (32, 32, 64, 64, 128, 128 channels),
    each with BatchNorm and an in-place ReLU, a max-pool after every second one, and a linear head."""
    torch.manual_seed(seed)
    layers: list[nn.Module] = []
    channels = 3
    for i, width in enumerate((32, 32, 64, 64, 128, 128)):
        layers += [
            nn.Conv2d(channels, width, 3, padding=1, bias=False),
            nn.BatchNorm2d(width),
            nn.ReLU(inplace=True),
        ]
        if i % 2:
            layers.append(nn.MaxPool2d(2))
        channels = width
    return nn.Sequential(
        nn.Sequential(*layers), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(channels, 10)
    )


class EncoderClassifier(nn.Module):
    """One transformer encoder layer (d_model 256, 4 heads, feed-forward 1024, dropout 0.1) over a
    sequence of 64 tokens, mean-pooled into a linear head: a small, realistic attention block."""

    def __init__(
        self, d_model: int = 256, heads: int = 4, feedforward: int = 1024, classes: int = 10
    ):
        super().__init__()
        self.encoder = nn.TransformerEncoderLayer(d_model, heads, feedforward, batch_first=True)
        self.head = nn.Linear(d_model, classes)

    def forward(self, x):
        return self.head(self.encoder(x).mean(1))


def encoder_classifier(seed: int = 0) -> EncoderClassifier:
    torch.manual_seed(seed)
    return EncoderClassifier()


def computing_modules(path: str, module: nn.Module) -> bool:
    """The modules that compute: leaves, and attention (whose out_proj child is never called)."""
    return hv.leaves(path, module) or isinstance(module, nn.MultiheadAttention)


def tensors_in(value):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from tensors_in(item)


class FloorHooks:
    """The floor under an exact recorder, on the same modules as record(): a forward hook per
    module and a tensor hook on each output, doing nothing but one aminmax per output and per
    output gradient and one norm per output gradient (what keeps min, max, NaN and Inf exact,
    and a gradient's norm, on which flags rest).
    ``reduce=False``: empty hooks. (A tensor hook sees a tensor's total gradient, not a call's
    own share as torch's full hooks do: the floor is a bound under any exact recorder, not one.)"""

    def __init__(self, model: nn.Module, modules, *, reduce: bool):
        self.targets = [m for p, m in model.named_modules() if modules(p, m)]
        self.reduce, self.handles = reduce, []

    def on_gradient(self, grad):
        if self.reduce:
            torch.aminmax(grad)
            torch.linalg.vector_norm(grad)

    def on_output(self, module, args, output):
        for t in tensors_in(output):
            if self.reduce:
                torch.aminmax(t)
            if t.requires_grad:
                t.register_hook(self.on_gradient)

    def start(self) -> FloorHooks:
        self.handles = [m.register_forward_hook(self.on_output) for m in self.targets]
        return self

    def stop(self) -> None:
        for handle in self.handles:
            handle.remove()


class GatherHooks:
    """What any recorder of record()'s four phases that keeps a sample pays at least: the hooks
    record() registers, put the way it puts them (a forward pre-hook that notes the nodes that
    made each call's inputs, a forward hook that walks back from the outputs through the nodes
    made during the call to those that send the inputs a share, and a post-hook on each such
    node and on the nodes that made the outputs: how record() sees torch's grad_input and
    grad_output without a node of its own), doing nothing but gather the sample of each tensor
    record() samples (every output, each input no hook saw before, and their gradients) into a
    buffer row as record() does (one ``torch.take``). No events, no calls, no ordering, no flush:
    what record(exact=False) costs beyond this is its Python bookkeeping and its flushes.

    ``exact=True``: before a large tensor's gather, record()'s exact pass too (one ``aminmax``
    into a pair of cells read on the host, the NaN/Inf probe on their difference, and for a
    gradient the norm into a third cell): what record() would cost with no bookkeeping at all, so its ratio to the
    floor is the least record() can read against it with these hooks."""

    def __init__(self, model: nn.Module, modules, *, exact: bool = False):
        self.targets = [m for p, m in model.named_modules() if modules(p, m)]
        self.exact = exact
        self.host = array("f", (0.0, 0.0, 0.0))  # aminmax's and vector_norm's out= cells
        self.cells = tuple(torch.frombuffer(self.host, dtype=torch.float32).unbind())
        self.non_finite = 0  # tensors whose probe found a NaN or an Inf (record() counts them)
        self.lane = summaries.Lane(torch.device("cpu"), summaries.Interner())
        self.where: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}  # numel -> place()
        self.handles: list = []
        self.open: list[tuple[int, dict]] = []  # calls begun: (first node number, input edges)
        # (id, version) -> the tensor gathered; forgotten every 512, as record() forgets at a flush
        self.seen: dict[tuple[int, int], weakref.ref] = {}

    def gather(self, t: torch.Tensor, gradient: bool) -> None:
        found = self.where.get(t.numel())
        if found is None:
            found = self.place(t.numel())
        positions, row = found
        if t.requires_grad and torch.is_grad_enabled():  # grad mode off as record() does it
            _set_grad_enabled(False)
            try:
                self.read(t, positions, row, gradient)
            finally:
                _set_grad_enabled(True)
        else:
            self.read(t, positions, row, gradient)

    def read(self, t: torch.Tensor, positions: torch.Tensor, row: torch.Tensor, gradient: bool):
        if self.exact and t.dtype is torch.float32 and t.numel() > summaries.SAMPLE_SIZE:
            torch.aminmax(t, out=self.cells[:2])
            lo, hi = self.host[0], self.host[1]
            if not math.isfinite(hi - lo):
                self.non_finite += 1
            if gradient:
                torch.linalg.vector_norm(t, out=self.cells[2])
        torch.take(t, positions, out=row)

    def place(self, n: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Where a tensor of ``n`` elements is sampled and the row it goes to, made once."""
        large = n > summaries.SAMPLE_SIZE
        positions = self.lane.sample_positions(n) if large else torch.arange(n)
        found = self.where[n] = (positions, self.lane.row(0)[: len(positions)])
        return found

    def gather_once(self, t: torch.Tensor, gradient: bool = False) -> bool:
        """Gather ``t`` unless this version was gathered (the same gradient often reaches two
        tensors); True if it was new."""
        key = (id(t), t._version)
        seen = self.seen.get(key)
        if (seen is not None and seen() is t) or not t.is_floating_point():
            return False
        if len(self.seen) >= summaries.BUFFER_ROWS // 2:
            self.seen.clear()
        self.seen[key] = weakref.ref(t)
        self.gather(t, gradient)
        return True

    def on_grad_output(self, grad_inputs, grad_outputs) -> None:
        for grad in grad_outputs:
            if grad is not None:
                self.gather_once(grad, gradient=True)

    def on_share(self, edges: list[int]):
        def hook(grad_inputs, grad_outputs) -> None:
            for i in edges:
                if grad_inputs[i] is not None:
                    self.gather_once(grad_inputs[i], gradient=True)

        return hook

    def on_input(self, module, args):
        if len(args) == 1 and type(args[0]) is torch.Tensor:  # the usual case, as record() has it
            self.gather_once(args[0])
        else:
            for t in tensors_in(args):
                self.gather_once(t)
        if torch.is_grad_enabled():
            edges = {}
            for t in args:
                if isinstance(t, torch.Tensor) and t.requires_grad:
                    edge = torch.autograd.graph.get_gradient_edge(t)
                    edges[(id(edge.node), edge.output_nr)] = edge.node
            self.open.append((torch._C._autograd._get_sequence_nr(), edges))

    def on_output(self, module, args, output):
        for t in tensors_in(output):
            self.gather_once(t)
        if not torch.is_grad_enabled() or not self.open:
            return
        first, inputs = self.open.pop()
        outputs = [t for t in tensors_in(output) if t.requires_grad and t.grad_fn is not None]
        nodes = {id(t.grad_fn): t.grad_fn for t in outputs}
        for node in nodes.values():
            node.register_hook(self.on_grad_output)
        stack = [n for n in nodes.values() if n._sequence_nr() >= first]
        seen = {id(n) for n in stack}
        while stack:  # the nodes made during the call that send a share to an input
            node = stack.pop()
            edges = []
            for i, (nxt, nr) in enumerate(node.next_functions):
                if nxt is None:
                    continue
                if (id(nxt), nr) in inputs:
                    edges.append(i)
                elif id(nxt) not in seen and hasattr(nxt, "_sequence_nr"):
                    if nxt.next_functions and nxt._sequence_nr() >= first:
                        seen.add(id(nxt))
                        stack.append(nxt)
            if edges:
                node.register_hook(self.on_share(edges))

    def start(self) -> GatherHooks:
        for m in self.targets:
            self.handles.append(m.register_forward_pre_hook(self.on_input))
            self.handles.append(m.register_forward_hook(self.on_output))
        return self

    def stop(self) -> None:
        for handle in self.handles:
            handle.remove()


def load_before(checkout: Path):
    """record() of the hookviz in ``checkout`` (an earlier commit), as ``hookviz_before``."""
    home = Path(tempfile.mkdtemp(prefix="hookviz-before-"))
    shutil.copytree(checkout / "hookviz", home / "hookviz_before")
    sys.path.insert(0, str(home))
    return importlib.import_module("hookviz_before.recording")


BEFORE = None  # hookviz_before.recording, when --before is given


# title: (build, input shape, classes, the smoke run's input shape). A smoke input is the least
# that still has tensors above summaries.SAMPLE_SIZE (sampled, and given the exact pass).
FLOOR_WORKLOADS = {
    "small conv net (3->32->64), batch 32, 3x32x32": (
        lambda: hv.examples.small_convnet(seed=0),
        (32, 3, 32, 32),
        10,
        (1, 3, 32, 32),  # its head takes 32x32 only
    ),
    "VGG-style net (6 x conv3x3 32..128 + BatchNorm + ReLU(inplace)), batch 32, 3x32x32": (
        vgg_net,
        (32, 3, 32, 32),
        10,
        (1, 3, 8, 8),
    ),
    "transformer encoder layer (d_model 256, 4 heads, ff 1024), batch 32 x 64 tokens": (
        encoder_classifier,
        (32, 64, 256),
        10,
        (1, 4, 256),
    ),
}
# The goals, against the recorder's own bound (issue 24): record() within 3% of what it would
# cost with no bookkeeping at all (gather + exact pass) on every net; exact=False within 5% of
# the bare step on the VGG-style net and the transformer layer (on the small conv net gather
# only already costs about 4%: reported, no goal); every=10 within 2% of the bare step. The
# floor's column stays: how far from any exact recorder's cost each configuration reads.
FLOOR_LIMITS = {
    "record()": ("gather + exact pass", 1.03),
    "record(exact=False)": ("bare step", 1.05),
    "record(every=10)": ("bare step", 1.02),
}
NO_GOAL = {("record(exact=False)", "small conv net")}  # (configuration, workload): reported only


# Steps per block in the floor comparison. Noise drifts (one step's time correlates with the
# next's at 0.7, with the 23rd's at 0.2), so the seven blocks of a round must run close together:
# with blocks of half a second (40 rounds) a 95% interval reached ±0.016 to ±0.072, with blocks
# of two steps (300 rounds, about as many steps) ±0.009 to ±0.018. A recording flushes every 10
# to 27 steps, in some blocks and not others: hence the ratio of total times, not a median.
FLOOR_BLOCK = 2

# Nets per configuration. Separate copies of one bare net, built alike, ran up to 1.6% apart in
# one run (where each one's memory lies), and two sets of three up to 2.4% apart: as much as a
# goal's margin. So each configuration turns through COPIES nets of its own, the next one each
# block, and its figure averages over as many placements; the noise floor ("bare step, again")
# is a set of nets of its own too.
COPIES = 8


class Turns:
    """One configuration's training steps on several nets, the next net each block."""

    def __init__(self, steps: list):
        self.steps, self.turn = steps, -1
        self.current = steps[0]

    def next(self) -> None:
        self.turn = (self.turn + 1) % len(self.steps)
        self.current = self.steps[self.turn]

    def step(self) -> None:
        self.current()

    def config(self, name: str) -> Config:
        return Config(name, self.step, enter=self.next)


def nets(build, x, y, attached: list, make=None) -> Turns:
    """COPIES nets from ``build`` in turn, training on (x, y); ``make(net).start()`` on each, if
    given, goes into ``attached``, for the caller to stop."""
    steps = []
    for _ in range(COPIES):
        model = build()
        if make is not None:
            attached.append(make(model).start())
        steps.append(training_step(model, x, y))
    return Turns(steps)


WORKLOAD = ""  # --workload: run only the floor workloads whose title contains this


def against_the_floor(rounds: int = 300, small: bool = False) -> list[str]:
    """Every workload of FLOOR_WORKLOADS, against its bare step and its floor (``small``: on the
    smoke run's inputs)."""
    lines = []
    for title, (build, shape, classes, smoke_shape) in FLOOR_WORKLOADS.items():
        if WORKLOAD not in title:
            continue
        if small:
            shape = smoke_shape
            title = f"{title} [smoke run: input {shape}]"
        lines += floor_workload(title, build, shape, classes, rounds)
    return lines


def floor_workload(
    title: str, build, shape: tuple[int, ...], classes: int, rounds: int
) -> list[str]:
    """The bare step, empty hooks, the exact-pass floor, the gather-only hooks (without and with
    the exact pass), record() three ways and the bare step again (the noise floor), each on
    COPIES nets of its own (same seed, same batch), so that hooks and recordings stay attached
    across blocks, as in a training loop."""
    torch.manual_seed(0)
    x, y = torch.randn(*shape), torch.randint(0, classes, (shape[0],))
    attached = []
    try:
        configs = [nets(build, x, y, attached).config("bare step")]
        for name, make in (
            ("empty hooks", lambda m: FloorHooks(m, computing_modules, reduce=False)),
            ("floor", lambda m: FloorHooks(m, computing_modules, reduce=True)),
            ("gather only", lambda m: GatherHooks(m, computing_modules)),
            ("gather + exact pass", lambda m: GatherHooks(m, computing_modules, exact=True)),
            ("record()", lambda m: hv.record(m, modules=computing_modules)),
            ("record(exact=False)", lambda m: hv.record(m, modules=computing_modules, exact=False)),
            ("record(every=10)", lambda m: hv.record(m, modules=computing_modules, every=10)),
        ):
            configs.append(nets(build, x, y, attached, make).config(name))
        if BEFORE is not None:
            before = nets(
                build, x, y, attached, lambda m: BEFORE.record(m, modules=computing_modules)
            )
            configs.append(before.config("record(), before"))
            no_norm = tuple(k for k in hv.recording.STATS if k != "norm")
            configs.append(
                nets(
                    build,
                    x,
                    y,
                    attached,
                    lambda m: hv.record(m, modules=computing_modules, stats=no_norm),
                ).config("record(), no norm")
            )
        configs.append(nets(build, x, y, attached).config("bare step, again (the noise floor)"))
        timings = interleaved(configs, rounds=rounds, block=FLOOR_BLOCK, warmup=2 * COPIES)
    finally:
        for hooks in attached:
            hooks.stop()
    lines = [
        f"## {title}: {rounds} rounds of {FLOOR_BLOCK} steps, each configuration on {COPIES}"
        " nets in turn, forward + backward + SGD",
        f"{'':<36} {'ms/step':>9} {'x bare':>7} {'x floor':>8}   the ratio's 95% interval",
    ]
    for config in configs:
        name = config.name
        to_bare = timings.total_ratio(name, "bare step")
        to_floor = timings.total_ratio(name, "floor")
        mean = statistics.fmean(timings.blocks[name])
        line = f"{name:<36} {mean * 1e3:9.2f} {to_bare:7.3f} {to_floor:8.3f}"
        against = FLOOR_LIMITS[name][0] if name in FLOOR_LIMITS else "bare step"
        if name in FLOOR_LIMITS or name.startswith("bare step, again"):
            ratio = timings.total_ratio(name, against)
            low, high = timings.total_ratio_interval(name, against)
            line += f"   {ratio:.3f} ({low:.3f}-{high:.3f}) x {against}"
        if name in FLOOR_LIMITS and not any(
            name == goal and title.startswith(workload) for goal, workload in NO_GOAL
        ):
            limit = FLOOR_LIMITS[name][1]
            line += f"  (goal {limit:.2f}x: {verdict(ratio, low, high, limit)})"
        lines.append(line)
    pairs = [
        ("record(exact=False)", "gather only", "its bookkeeping and flushes"),
        ("gather + exact pass", "floor", "the least record() can read against the floor"),
        ("record()", "gather + exact pass", "record()'s bookkeeping and flushes"),
    ]
    if BEFORE is not None:
        pairs += [
            ("record()", "record(), before", "today's record() against the earlier one"),
            ("record(), no norm", "record(), before", "what the identity nodes cost"),
            ("record()", "record(), no norm", "what the exact norm costs"),
        ]
    for name, against, meaning in pairs:
        low, high = timings.total_ratio_interval(name, against)
        lines.append(
            f"{name} / {against}: {timings.total_ratio(name, against):.3f}"
            f" ({low:.3f}-{high:.3f}): {meaning}"
        )
    print("\n".join(lines), flush=True)
    return lines


class HookTimer:
    """Seconds spent inside the hooks torch calls on ``model``, read from torch's own hook dicts:
    each module's forward pre-hooks and forward hooks are wrapped in a timer when it starts (a
    recorder's flush, which runs in its hooks, is counted), each tensor hook found on a
    module's inputs and outputs by a forward hook of its own, registered last, as those are put
    there during forward, and ``module_grads.NodeWatch.post_hook`` (the node hooks through which
    record() sees gradients). No recorder's internals are touched."""

    def __init__(self, model: nn.Module):
        self.model, self.spent = model, 0.0
        self.saved: list[tuple[dict, dict]] = []  # (torch's dict, its hooks before the timers)
        self.handles: list = []

    def timed(self, function):
        def timer(*args, **kwargs):
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.spent += time.perf_counter() - start

        timer.timed = True
        return timer

    def wrap(self, hooks: dict) -> None:
        for key, function in list(hooks.items()):
            if not getattr(function, "timed", False):
                hooks[key] = self.timed(function)

    def on_output(self, module, args, output):
        for t in itertools.chain(tensors_in(args), tensors_in(output)):
            if t._backward_hooks:
                self.wrap(t._backward_hooks)

    def start(self) -> HookTimer:
        modules = list(self.model.modules())
        for module in modules:
            for hooks in (module._forward_pre_hooks, module._forward_hooks):
                self.saved.append((hooks, dict(hooks)))
                self.wrap(hooks)
        self.handles = [m.register_forward_hook(self.on_output) for m in modules]
        self.node_hook = NodeWatch.post_hook
        NodeWatch.post_hook = self.timed(self.node_hook)  # bound as record() registers a hook
        return self

    def stop(self) -> None:
        NodeWatch.post_hook = self.node_hook
        for handle in self.handles:
            handle.remove()
        for hooks, before in self.saved:
            for key, function in before.items():
                if key in hooks:
                    hooks[key] = function


def inside_the_hooks(steps: int = 60, runs: int = 3, small: bool = False) -> list[str]:
    """Milliseconds a step spent inside the hooks (perf_counter around each hook torch calls,
    flushes included, through HookTimer), for empty hooks, the floor and record() two ways,
    alternating, ``runs`` times: where the ratios of ``--only floor`` come from, without the
    step's own noise."""
    configs = {
        "empty hooks": lambda m: FloorHooks(m, computing_modules, reduce=False),
        "floor": lambda m: FloorHooks(m, computing_modules, reduce=True),
        "record()": lambda m: hv.record(m, modules=computing_modules),
        "record(exact=False)": lambda m: hv.record(m, modules=computing_modules, exact=False),
    }
    lines = [f"## inside the hooks: ms a step, {runs} runs of {steps} steps (share of the step)"]
    for title, (build, shape, classes, smoke_shape) in FLOOR_WORKLOADS.items():
        if small:
            shape = smoke_shape
        torch.manual_seed(0)
        x, y = torch.randn(*shape), torch.randint(0, classes, (shape[0],))
        found: dict[str, list[str]] = {name: [] for name in configs}
        for _ in range(runs):
            for name, make in configs.items():
                model = build()
                step = training_step(model, x, y)
                hooks = make(model).start()
                timer = HookTimer(model).start()
                try:
                    for _ in range(5):
                        step()
                    timer.spent = 0.0
                    start = time.perf_counter()
                    for _ in range(steps):
                        step()
                    total = time.perf_counter() - start
                finally:
                    timer.stop()
                    hooks.stop()
                found[name].append(f"{timer.spent / steps * 1e3:.2f} ({timer.spent / total:.1%})")
        lines.append(f"{title.rsplit(', batch', 1)[0]}:")
        lines += [f"  {name:<22} {', '.join(values)}" for name, values in found.items()]
    print("\n".join(lines), flush=True)
    return lines


def recording(name: str, model: nn.Module, step, **options) -> Config:
    rec = hv.record(model, **options)
    return Config(name, step, rec.start, rec.stop)


class NaiveRecorder:
    """What people write first: a forward hook per leaf that calls .item() for each statistic."""

    def __init__(self, model: nn.Module):
        self.model, self.handles, self.rows = model, [], []

    def hook(self, module, args, output):
        self.rows.append((output.mean().item(), output.std().item(), output.max().item()))

    def start(self):
        for path, module in self.model.named_modules():
            if hv.leaves(path, module):
                self.handles.append(module.register_forward_hook(self.hook))

    def stop(self):
        for handle in self.handles:
            handle.remove()
        self.handles.clear()
        self.rows.clear()


def convnet_overhead(width: int, rounds: int = 750, batch: int = 32, stops: int = 30) -> list[str]:
    """record() left on across a training loop, as it is used: each configuration trains COPIES
    nets of its own in turn (same seed, same batch), so that a recording can stay attached
    between its blocks and flush when its buffer fills (every ~25 of its net's steps at full
    statistics, every ~250 with every=10), never because a block ended. Blocks of FLOOR_BLOCK
    steps, read as total times (as against the floor). Starting and stopping are timed apart."""
    torch.manual_seed(0)
    x, y = torch.randn(batch, 3, 32, 32), torch.randint(0, 10, (batch,))

    recordings = []

    def build():
        return hv.examples.small_convnet(seed=0, width=width)

    def recorded(**options):
        return lambda model: hv.record(model, modules=hv.leaves, **options)

    try:
        configs = [
            nets(build, x, y, recordings).config("bare step"),
            nets(build, x, y, recordings, recorded()).config(
                "record(full stats, every leaf, gradients)"
            ),
            nets(build, x, y, recordings, recorded(every=10)).config("record(..., every=10)"),
            nets(build, x, y, recordings).config("bare step, again (the noise floor)"),
        ]
        timings = interleaved(configs, rounds=rounds, block=FLOOR_BLOCK, warmup=2 * COPIES)
    finally:
        for rec in recordings:
            rec.stop()
    # every=10's goal holds everywhere; record()'s is against its own bound (--only floor), so
    # here it is reported. The 16-channel net shows how fixed costs weigh on a shorter step.
    limits = {configs[2].name: 1.02}
    lines = report_totals(
        f"small conv net (width {width}), batch {batch}, 3x32x32: {rounds} rounds of {FLOOR_BLOCK}"
        f" steps, each configuration on {COPIES} nets in turn, forward + backward + SGD",
        timings,
        "bare step",
        limits,
    )
    model = build()
    lines.append(start_and_stop(model, training_step(model, x, y), rounds=stops))
    print(lines[-1], flush=True)
    return lines


def start_and_stop(model: nn.Module, step, rounds: int = 30) -> str:
    """What one `with record(...)` block adds beyond its steps: hooks on and off, the last flush."""
    costs = []
    for _ in range(rounds):
        rec = hv.record(model, modules=hv.leaves)
        start = time.perf_counter()
        rec.start()
        begun = time.perf_counter()
        step()
        ended = time.perf_counter()
        rec.stop()
        costs.append((begun - start) + (time.perf_counter() - ended))
    return f"start() + stop() of one record() block (one step's flush included): {statistics.median(costs) * 1e3:.2f} ms"


def against_naive(rounds: int = 40, block: int | None = None, batch: int = 32) -> list[str]:
    workloads = {
        f"deep MLP (32 x Linear(64, 64) + ReLU), batch {batch}": (
            hv.examples.deep_mlp(depth=32, width=64),
            torch.randn(batch, 64),
            torch.randint(0, 64, (batch,)),
        ),
        f"small conv net, batch {batch}": (
            hv.examples.small_convnet(),
            torch.randn(batch, 3, 32, 32),
            torch.randint(0, 10, (batch,)),
        ),
        "MLP (4 -> 8 -> 8 -> 2), batch 8": (
            hv.examples.mlp((4, 8, 8, 2)),
            torch.randn(8, 4),
            torch.randint(0, 2, (8,)),
        ),
    }
    lines = []
    for title, (model, x, y) in workloads.items():
        step = training_step(model, x, y)
        naive = NaiveRecorder(model)
        same = dict(modules=hv.leaves, stats=["mean", "std", "max"], phases=["forward"])
        configs = [
            Config("bare step", step),
            Config("naive: forward hook + .item() (mean, std, max)", step, naive.start, naive.stop),
            recording("hookviz: the same three stats", model, step, **same),
            recording(
                "hookviz: full stats, forward", model, step, modules=hv.leaves, phases=["forward"]
            ),
            recording("hookviz: full stats, forward + backward", model, step, modules=hv.leaves),
            Config("bare step, again (the noise floor)", step),
        ]
        timings = interleaved(configs, rounds=rounds, block=block or block_for(step))
        lines += report(title, timings, "bare step")
        ratio = timings.ratio(configs[2].name, configs[1].name)
        verdict = "faster" if ratio < 1 else "SLOWER"
        line = f"  hookviz / naive, same three stats: {ratio:.3f} ({verdict})"
        print(line)
        lines.append(line)
    return lines


def import_cost(rounds: int = 15) -> list[str]:
    """Median wall time of `import torch` against `import torch, hookviz`, interleaved."""
    times = {"torch": [], "torch + hookviz": []}
    for _ in range(rounds):
        for name, code in (("torch", "import torch"), ("torch + hookviz", "import torch, hookviz")):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            times[name].append(time.perf_counter() - start)
    base, both = statistics.median(times["torch"]), statistics.median(times["torch + hookviz"])
    line = (
        f"## import\nimport torch {base:.3f} s; import torch, hookviz {both:.3f} s; "
        f"hookviz adds {both - base:+.3f} s (limit 0.100 s: {'ok' if both - base <= 0.1 else 'OVER'})"
    )
    print(line)
    return [line]


def memory_stays_flat(steps: int = 3000) -> list[str]:
    """Peak RSS growth over a long recorded loop with a small max_events."""
    model = hv.examples.mlp((16, 32, 32, 4))
    x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
    step = training_step(model, x, y)
    with hv.record(model, max_events=5_000) as rec:
        for _ in range(steps // 3):
            step()
        rec.flush()
        early = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        for _ in range(steps - steps // 3):
            step()
        rec.flush()
        late = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    line = (
        f"## memory\n{steps} recorded steps, max_events=5000: {len(rec)} events kept, {rec.dropped} dropped; "
        f"peak RSS grew {(late - early) / 1024:.1f} MB over the last {steps - steps // 3} steps"
    )
    print(line)
    return [line]


# --smoke: every part once at tiny sizes, each size the least its report accepts (a 95%
# interval needs 20 rounds); one net per configuration, one step a block, and one thread: on
# a loaded 2-core machine two threads wait on each other, and a step took 15-30x as long.
SMOKE = {"rounds": 20, "batch": 1, "copies": 1, "block": 1, "threads": 1}


def main() -> None:
    global COPIES, FLOOR_BLOCK
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--smoke", action="store_true", help="every part once, tiny sizes: checks the bench runs"
    )
    args = parser.parse_known_args()[0]
    tiny = SMOKE if args.smoke else None
    parts = {
        "floor": lambda args: against_the_floor(
            tiny["rounds"] if tiny else args.rounds, bool(tiny)
        ),
        "inside": lambda args: (
            inside_the_hooks(steps=2, runs=1, small=True) if tiny else inside_the_hooks()
        ),
        "convnet": lambda args: [
            convnet_overhead(width, tiny["rounds"], tiny["batch"], stops=2)
            if tiny
            else convnet_overhead(width)
            for width in (32, 16)
        ],
        "naive": lambda args: (
            against_naive(rounds=2, block=2, batch=2) if tiny else against_naive()
        ),
        "import": lambda args: import_cost(rounds=1 if tiny else 15),
        "memory": lambda args: memory_stays_flat(steps=30 if tiny else 3000),
    }
    parser.add_argument(
        "--only", choices=parts, action="append", help="run this part only (repeatable)"
    )
    parser.add_argument(
        "--rounds", type=int, default=300, help="rounds of the floor comparison (default 300)"
    )
    parser.add_argument(
        "--before",
        type=Path,
        help="a checkout of an earlier hookviz: its record() joins the floor comparison",
    )
    parser.add_argument(
        "--workload", default="", help="the floor: only workloads whose title contains this"
    )
    args = parser.parse_args()
    global WORKLOAD
    WORKLOAD = args.workload
    if args.before is not None:
        global BEFORE
        BEFORE = load_before(args.before)
    if tiny:
        COPIES, FLOOR_BLOCK = tiny["copies"], tiny["block"]
    torch.set_num_threads(tiny["threads"] if tiny else 2)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads\n", flush=True)
    for name in args.only or parts:
        parts[name](args)
        print(flush=True)


if __name__ == "__main__":
    main()
