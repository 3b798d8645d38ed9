"""A module call's gradients, as torch's full backward hooks report them, read off the model's
own autograd graph without changing it: record()'s backward side.

torch builds ``register_full_backward_pre_hook`` and ``register_full_backward_hook`` on
``torch.utils.hooks.BackwardHook``, which passes each call's inputs and outputs through an
identity autograd node. Those nodes change the model they watch: an in-place op on a wrapped
tensor raises; ``query is key is value`` stops holding (``MultiheadAttention`` leaves its fast
path); a tensor read by several modules has its gradient summed in another order, so its last
bits change. hookviz adds no node and no alias. It hooks nodes the model made itself:

- **grad_output** arrives at the nodes that made the call's outputs: a post-hook on each such
  node reads it among what the node received. Where that node also gets gradient from elsewhere (the call
  returned one of its inputs as it came, or reads its own output), the gradient from outside
  the call is taken where it is sent: at the nodes made after the call that read the output,
  found by the walks of the calls around it (``StepGraph``).
- **grad_input** is *this call's own share* of each input's gradient: what the nodes made during
  the call send to the node that made the input. When the call returns, a walk from its outputs
  back through the nodes it made (autograd numbers nodes as it makes them, so "made during the
  call" is a range of numbers) finds every edge into an input; a node post-hook on each such
  node adds up what it sends there.

torch's identity nodes would have had numbers too: the input node the number next after every
forward pre-hook, the output node the one next after every forward hook. On one thread the
engine runs the nodes that will run from the highest number down (a node waits only for nodes
made after it), so a ``_Pass`` can give each event where torch's node would have run: once the
engine reaches a node made before it, or the pass ends. The events come in torch's order, with
torch's values (a sum of several parts may round differently in its last bit), and the model
computes what it computes alone, bit for bit.

Two things autograd does not keep apart without a node of one's own: a tensor passed at several
positions of one call (``attn(x, x, x)``) is one tensor, so each of its positions reports its
whole share; and an output whose readers outside the call are not inside a recorded module (the
model returned an input, or a tensor it also reads) gets what reaches the node that made it.

Nothing here holds a node that can lead back to itself: a hook holds only nodes made before its
own, so a graph is freed as soon as the model lets go of it, as without hookviz.
"""

from __future__ import annotations

from typing import Any, Protocol

import torch

__all__ = ["GradReceiver", "ModuleCall", "NodeWatch", "StepGraph"]

_next_seq = torch._C._autograd._get_sequence_nr  # the number the next node made will get
_graph_task = torch._C._current_graph_task_id
_will_run = torch._C._will_engine_execute_node
_queue_callback = torch.autograd.Variable._execution_engine.queue_callback


def _accumulator_type() -> type:
    leaf = torch.zeros(1, requires_grad=True)
    return type(leaf.view_as(leaf).grad_fn.next_functions[0][0])


_ACCUMULATE_GRAD = _accumulator_type()  # a leaf's node: it has no number of its own
_FIRST = (0,)
_FIRST_ONLY = ((0,),)
_LEAF_SEQ = -1  # where a leaf's node stands: before every other node


def _seq_of(node) -> int:
    return _LEAF_SEQ if type(node) is _ACCUMULATE_GRAD else node._sequence_nr()


def _runs(node, unknown: bool | None) -> bool | None:
    """Whether the engine will run ``node`` in this pass; ``unknown`` where torch cannot say (a
    leaf's node during ``torch.autograd.grad``, which captures its gradient instead)."""
    try:
        return _will_run(node)
    except RuntimeError:
        return unknown


def _edge_of(tensor: torch.Tensor) -> tuple[Any, int]:
    node = tensor.grad_fn
    if node is None:  # a leaf: its AccumulateGrad node
        return torch.autograd.graph.get_gradient_edge(tensor).node, 0
    return node, tensor.output_nr


class GradReceiver(Protocol):
    """Where a ModuleCall's events go (a Recording's hooks): torch's two hooks, as two callbacks."""

    def on_grad_outputs(self, call: ModuleCall, grads: tuple) -> None:
        """The backward pre-hook's moment: ``grads`` is grad_output as torch packs it."""

    def on_grad_inputs(self, call: ModuleCall, grads: tuple) -> None:
        """The backward hook's moment: ``grads`` is grad_input as torch packs it."""


# -- the forward pass ---------------------------------------------------------------------------


class ModuleCall:
    """One call of one module, from its forward pre-hook to its backward hook."""

    __slots__ = (
        "receiver",
        "path_id",
        "step",
        "index",
        "n_inputs",
        "producers",
        "input_keys",
        "input_positions",
        "input_metas",
        "idle_inputs",
        "n_outputs",
        "output_positions",
        "passthrough",
        "read",
        "first_seq",
        "key_in",
        "key_out",
        "passes",
    )

    def __init__(self, receiver: GradReceiver, path_id: int, step: int, index: int):
        self.receiver, self.path_id, self.step, self.index = receiver, path_id, step, index
        # Tuples where a call keeps something for backward: a call lives as long as its graph,
        # and a tuple of numbers is one object the garbage collector soon stops looking at.
        self.n_inputs = 0  # positional arguments, tensors or not (grad_input has one entry each)
        # The distinct tensor inputs that need a gradient, by the node that made each (None for
        # one the call returns as is: its node carries this call's hook).
        self.producers: tuple = ()
        self.input_keys: dict | None = None  # (id(node), output_nr) -> input; forward only
        self.input_positions: tuple = ()  # per input: its positions among the arguments
        self.input_metas: tuple = ()  # per input: shape, dtype, device (for zeros)
        self.idle_inputs: tuple = ()  # (position, shape, dtype, device): tensors needing none
        self.n_outputs = -1  # entries of grad_output; -1: the output is one tensor
        self.output_positions: tuple = _FIRST
        self.passthrough: tuple = ()  # (output, input): an input returned as it came
        self.read: frozenset[int] = frozenset()  # the inputs the call's own nodes read
        self.first_seq = -1  # the number of the first node the call could make; -1: not watched
        self.key_in = (0, 0)  # where torch's input node would stand among the nodes
        self.key_out = (0, 0)  # where torch's output node would stand
        self.passes: dict[int, _CallPass] | None = None  # graph task id -> progress in it

    def watch_inputs(self, args: tuple, tick: int, shares: bool = True) -> None:
        """At the forward pre-hook, after every other one (where torch makes its input node): note
        each tensor input that needs a gradient, and the node that made it (``shares``: False
        when no backward event is wanted, only grad_output)."""
        if not shares:
            pass
        elif type(args) is tuple and len(args) == 1 and type(args[0]) is torch.Tensor:  # usual
            self.n_inputs = 1
            tensor = args[0]
            if tensor.requires_grad:
                node, nr = _edge_of(tensor)
                self.producers = (node,)
                self.input_keys = {(id(node), nr): 0}
                self.input_positions = _FIRST_ONLY
                self.input_metas = ((tensor.shape, tensor.dtype, tensor.device),)
        else:
            self._watch_args(args)
        # After the inputs' nodes are found (a leaf's is found through a node made for it).
        self.first_seq = seq = _next_seq()
        self.key_in = (seq, tick)

    def _watch_args(self, args: tuple) -> None:
        self.n_inputs = len(args)
        keys: dict = {}
        producers, positions, metas, idle = [], [], [], []
        for i, value in enumerate(args):
            if not isinstance(value, torch.Tensor):
                continue
            if not value.requires_grad:  # torch's hook reports zeros for it: keep what makes them
                idle.append((i, value.shape, value.dtype, value.device))
                continue
            node, nr = _edge_of(value)
            index = keys.get((id(node), nr))
            if index is None:
                keys[(id(node), nr)] = len(producers)
                producers.append(node)
                positions.append([i])
                metas.append((value.shape, value.dtype, value.device))
            else:  # the same tensor at two positions is one input to autograd
                positions[index].append(i)
        self.producers, self.input_keys = tuple(producers), keys
        self.input_positions = tuple(map(tuple, positions))
        self.input_metas, self.idle_inputs = tuple(metas), tuple(idle)

    def state(self) -> _CallPass | None:
        return self.passes.get(_graph_task()) if self.passes else None

    def grad_outputs(self, state: _CallPass) -> tuple:
        if self.n_outputs < 0:
            return (state.grad_outputs[0],)
        packed: list = [None] * self.n_outputs
        for k, i in enumerate(self.output_positions):
            packed[i] = state.grad_outputs[k]
        return tuple(packed)

    def grad_inputs(self, state: _CallPass) -> tuple:
        packed: list = [None] * self.n_inputs
        for index, positions in enumerate(self.input_positions):
            grad = state.sums[index]
            if grad is None and index not in state.unwanted:
                # torch's identity turns a gradient that never came into zeros; one this pass
                # does not compute stays None (torch's hooks make it wanted, and computed)
                shape, dtype, device = self.input_metas[index]
                grad = torch.zeros(shape, dtype=dtype, device=device)
            for i in positions:
                packed[i] = grad
        for i, shape, dtype, device in self.idle_inputs:
            packed[i] = torch.zeros(shape, dtype=dtype, device=device)
        return tuple(packed)


class _Roles:
    """What one node does for one call: makes outputs whose gradient is read there (``slots``:
    (output, output_nr)), sends a share to inputs (``shares``: (edge, input)), sends an output
    gradient from outside the call (``outside``: (edge, output)), or from inside (``inside``)."""

    __slots__ = ("slots", "shares", "outside", "inside")

    def __init__(self):
        # tuples, grown as the walk finds them: what the graph keeps, kept small
        self.slots: tuple[tuple[int, int], ...] = ()
        self.shares: tuple[tuple[int, int], ...] = ()
        self.outside: tuple[tuple[int, int], ...] = ()
        self.inside: tuple[tuple[int, int], ...] = ()

    def counts(self) -> tuple[int, int]:
        """(grad_output parts, grad_input parts) this node gives when it runs."""
        return (1 if self.slots else 0) + (1 if self.outside else 0), 1 if self.shares else 0


class _Link:
    """One node a call watches, and the nodes it watches that were made before it: a hook holds
    the link of the node made just before its own, never its own node or a later one."""

    __slots__ = ("node", "roles", "older")

    def __init__(self, node, roles: _Roles, older: _Link | None):
        self.node, self.roles, self.older = node, roles, older


class _Watched:
    """A call's watch in one step: its nodes, newest first, and the outputs whose gradient from
    outside must be taken at their readers."""

    __slots__ = ("call", "head", "roles", "wanted", "found", "readers")

    def __init__(self, call: ModuleCall):
        self.call = call
        self.head: _Link | None = None
        self.roles: dict[int, tuple[Any, _Roles]] = {}  # id(node) -> (node, roles)
        self.wanted: dict[tuple[int, int], int] = {}  # output edge -> output
        self.found: set[int] | None = None  # readers found already (made when one is)
        self.readers: list[_Roles] | None = None  # the readers' roles

    def read_at_readers(self, key: tuple[int, int]) -> None:
        """The output at ``key`` takes its gradient from readers only (none: None)."""
        k = self.wanted[key]
        roles = self.roles[key[0]][1]
        roles.slots = tuple(s for s in roles.slots if s[0] != k)

    def read_at_node(self, key: tuple[int, int]) -> None:
        """The output at ``key`` escapes every walk: its gradient is what reaches its node."""
        k = self.wanted[key]
        roles = self.roles[key[0]][1]
        if all(s[0] != k for s in roles.slots):
            roles.slots += ((k, key[1]),)
        for reader in self.readers or ():
            reader.outside = tuple(r for r in reader.outside if r[1] != k)


class StepGraph:
    """The calls of one step whose outputs' readers outside them are still to be found by the
    walks of later calls (a call that returned an input as it came, or reads its own output)."""

    def __init__(self):
        self.wanted: dict[tuple[int, int], list[_Watched]] = {}
        # id(output node of a call that returned) -> the edges leaving that call (``_walk``)
        self.summaries: dict[int, list] = {}
        self.nodes: list = []  # keeps the nodes of those keys (and so their ids) for the step

    def clear(self) -> None:
        self.wanted.clear()
        self.summaries.clear()
        self.nodes.clear()

    def close(self, returned) -> None:
        """The model's own call has returned (its walk found every reader inside it): an output
        no reader read gets no gradient; one the model returned (``returned``) is read outside,
        where no walk goes, so it takes what reaches its node."""
        for key, watches in self.wanted.items():
            for watch in watches:
                if key in returned:
                    watch.read_at_node(key)
                else:
                    watch.read_at_readers(key)
        self.wanted.clear()

    def watch_outputs(
        self, call: ModuleCall, output: Any, tick: int, around: tuple = ()
    ) -> dict | None:
        """At the forward hook, after every other one (where torch makes its output node): hook
        the nodes that made the outputs and those made during the call that send its inputs a
        share (``around``: the calls still running around this one). Nothing is hooked where
        torch's full hooks fire nothing (no output needs a gradient; an output that is a dict, a
        list or another type). Returns the edges of every tensor in the output."""
        outputs = _watched_outputs(call, output)
        if outputs is None:
            # torch's full hooks fire nothing for this call, but its walk still finds the readers
            # of the outputs of the calls inside it.
            inner = [t for t in _tensors_in(output) if t.requires_grad]
            if inner and (self.wanted or around):
                starts = [n for n, _ in map(_edge_of, inner) if _seq_of(n) >= call.first_seq]
                self._walk(call, starts, {}, _Watched(call), around, find_top=False)
            return {(id(n), nr): k for k, (n, nr) in enumerate(map(_edge_of, inner))}
        call.key_out = (_next_seq(), tick)
        watch = _Watched(call)
        lo = call.first_seq
        out_keys: dict[tuple[int, int], int] = {}
        starts = []
        for k, tensor in enumerate(outputs):
            node, nr = _edge_of(tensor)
            key = (id(node), nr)
            out_keys[key] = k
            roles = watch_roles(watch, node)
            roles.slots += ((k, nr),)
            index = call.input_keys.get(key) if call.input_keys else None
            if index is not None:  # returned as it came: torch's output node feeds its input node
                call.passthrough += ((k, index),)
                producers = list(call.producers)
                producers[index] = None  # its node carries this call's hook: no loop
                call.producers = tuple(producers)
            if _seq_of(node) >= lo:
                starts.append(node)
            else:  # made before the call: other readers reach its node too
                watch.wanted[key] = k
            if key in self.wanted:  # a call inside returned it too: the readers start both
                watch.wanted[key] = k
        inside = self._walk(call, starts, out_keys, watch, around)
        if call.producers:
            call.read = frozenset(i for _, roles in watch.roles.values() for _, i in roles.shares)
        for key in inside:  # an output the call reads itself
            watch.wanted[key] = out_keys[key]
        for key in watch.wanted:
            self.wanted.setdefault(key, []).append(watch)
        if watch.wanted:
            self.nodes.extend(n for n, _ in watch.roles.values())  # their ids stay theirs
        self._hook(watch, list(watch.roles.values()))
        call.input_keys = None  # the nodes of the inputs are found: the keys' work is done
        return out_keys

    def _walk(
        self,
        call: ModuleCall,
        starts: list,
        out_keys: dict,
        watch: _Watched,
        around: tuple,
        find_top: bool = True,
    ) -> set:
        """From the outputs back through the nodes made during the call: note each edge into an
        input (a share) or into an output (read inside), and each edge into an output of an
        earlier call that waits for its readers. Returns the output edges read inside.

        The calls still running around this one (``around``) walk the same nodes again when they
        return; so the edges that leave this call and matter to one of them (into their inputs,
        or to nodes they made) are kept by this call's output nodes, and their walks step over
        this call at once (``summaries``): each node is walked once a step, not once per level."""
        inputs, lo, wanted, summaries = call.input_keys, call.first_seq, self.wanted, self.summaries
        # The outermost call began first: its first number is the lowest of those around.
        outer_lo = around[0].first_seq if around else 0
        exits: list = []
        stack = list(starts)
        seen = set(map(id, stack))
        top, top_seq = None, -2  # the newest node made during the call: the engine starts it first
        inside: set[tuple[int, int]] = set()
        found: dict[int, list] | None = None  # id(watch) -> [watch, [(seq, node, edge, output)]]
        stepped: set[int] = set()  # the calls stepped over (one list of edges per call)
        while stack:
            node = stack.pop()
            seq = node._sequence_nr()
            if seq > top_seq:
                top, top_seq = node, seq
            summary = summaries.get(id(node)) if summaries else None
            if summary is None:
                edges, plain = node.next_functions, True
            elif id(summary) in stepped:
                continue  # another output node of a call stepped over already
            else:
                stepped.add(id(summary))
                edges, plain = summary, False
            e = -1
            for edge in edges:
                if plain:
                    e += 1
                    nxt, nr = edge
                    if nxt is None:
                        continue
                    source, source_seq, i = node, seq, e
                else:
                    source, source_seq, i, nxt, nr = edge
                key = (id(nxt), nr)
                if wanted and key in wanted:
                    for other in wanted[key]:
                        if other is not watch and source_seq >= other.call.key_out[0]:
                            if found is None:
                                found = {}
                            found.setdefault(id(other), [other, []])[1].append(
                                (source_seq, source, i, other.wanted[key])
                            )
                if inputs and key in inputs:
                    roles = watch_roles(watch, source)
                    roles.shares += ((i, inputs[key]),)
                if key in out_keys:
                    roles = watch_roles(watch, source)
                    roles.inside += ((i, out_keys[key]),)
                    inside.add(key)
                if id(nxt) in seen:
                    continue
                nxt_seq = _LEAF_SEQ if type(nxt) is _ACCUMULATE_GRAD else nxt._sequence_nr()
                if nxt_seq < lo:  # made before the call (an input's node is): the edge leaves it
                    if around and (nxt_seq >= outer_lo or _an_input_of(around, key)):
                        exits.append((source, source_seq, i, nxt, nr))
                    continue
                seen.add(id(nxt))
                stack.append(nxt)
        if found:
            for other, readers in found.values():
                self._add_readers(other, readers)
        if around:  # the calls around step over this one from its output nodes
            for node in starts:
                summaries[id(node)] = exits
            self.nodes.extend(starts)
        if top is not None and find_top:
            watch_roles(watch, top)  # hooked to start the call's pass there, if nothing else is
        return inside

    def _add_readers(self, watch: _Watched, readers: list) -> None:
        """Readers of a call's output, found by a later call's walk: their hooks take that output's
        gradient from outside where it is sent, instead of at the node that made the output."""
        per_node: dict[int, tuple[Any, _Roles]] = {}
        if watch.found is None:
            watch.found, watch.readers = set(), []
        for _, node, i, k in readers:
            if id(node) in watch.found:
                continue
            entry = per_node.get(id(node))
            if entry is None:
                entry = per_node[id(node)] = (node, _Roles())
            entry[1].outside += ((i, k),)
            for key, slot in watch.wanted.items():
                if slot == k:
                    watch.read_at_readers(key)
        if per_node:
            watch.found.update(per_node)
            watch.readers.extend(r for _, r in per_node.values())
            self.nodes.extend(n for n, _ in per_node.values())
            self._hook(watch, list(per_node.values()))

    def _hook(self, watch: _Watched, nodes: list) -> None:
        """Hook ``nodes`` (node, roles) for the call, oldest first, each holding the link to the
        call's nodes made before it."""
        if len(nodes) > 1:
            nodes.sort(key=lambda e: _seq_of(e[0]))
        call = watch.call
        for node, roles in nodes:
            seq = _seq_of(node)
            node.register_hook(NodeWatch(call, seq, roles, watch.head).post_hook)
            watch.head = _Link(node, roles, watch.head)


def _an_input_of(calls: tuple, key: tuple[int, int]) -> bool:
    return any(c.input_keys and key in c.input_keys for c in calls)


def _watched_outputs(call: ModuleCall, output: Any) -> list | None:
    """The outputs torch's full hooks watch (a tensor, or the tensors at the top of a tuple)
    that need a gradient; None where torch's hooks fire nothing."""
    if isinstance(output, torch.Tensor):
        return [output] if output.requires_grad else None
    if not isinstance(output, tuple):
        return None
    watched = [i for i, v in enumerate(output) if isinstance(v, torch.Tensor) and v.requires_grad]
    if not watched:
        return None
    call.n_outputs = len(output)
    call.output_positions = tuple(watched)
    return [output[i] for i in watched]


def _tensors_in(value: Any, depth: int = 0):
    """The tensors in a nested structure of tuples, lists and dicts."""
    if isinstance(value, torch.Tensor):
        yield value
    elif depth < 8 and isinstance(value, (tuple, list)):
        for item in value:
            yield from _tensors_in(item, depth + 1)
    elif depth < 8 and isinstance(value, dict):
        for item in value.values():
            yield from _tensors_in(item, depth + 1)


def watch_roles(watch: _Watched, node) -> _Roles:
    entry = watch.roles.get(id(node))
    if entry is None:
        entry = watch.roles[id(node)] = (node, _Roles())
    return entry[1]


# -- the backward pass: torch's two nodes, replayed -------------------------------------------


class _CallPass:
    """One call's progress through one backward pass (graph task)."""

    __slots__ = (
        "grad_outputs",
        "inside",
        "outputs_left",
        "shares_left",
        "sums",
        "unwanted",
        "pre",
        "post",
    )

    def __init__(self, call: ModuleCall):
        self.grad_outputs: list = [None] * len(call.output_positions)
        # inputs whose gradient this pass does not compute (autograd.grad, backward(inputs=))
        self.unwanted: tuple[int, ...] = ()
        self.inside: dict[int, Any] = {}  # output -> what the call's own nodes sent it
        self.outputs_left = 0  # grad_output parts still to come
        self.shares_left = 0  # grad_input parts still to come
        self.sums: list = [None] * len(call.producers)
        self.pre: _Event | None = None
        self.post: _Event | None = None


class _Event:
    """An event torch's node would give: its place among the nodes (``key``), the node whose
    hooks made it known (``at``, its number), and its values when they are all in."""

    __slots__ = ("key", "at", "call", "state", "inputs", "complete", "maybe")

    def __init__(self, key, at, call: ModuleCall, state: _CallPass | None, inputs: bool):
        self.key, self.at, self.call, self.state, self.inputs = key, at, call, state, inputs
        self.complete = self.maybe = False

    def give(self) -> None:
        call, state = self.call, self.state
        if not self.inputs:
            call.receiver.on_grad_outputs(call, call.grad_outputs(state))
        elif state is None:  # no input needs a gradient: torch's hook gets None for each
            call.receiver.on_grad_inputs(call, (None,) * call.n_inputs)
        elif not (self.maybe and all(s is None for s in state.sums)):
            call.receiver.on_grad_inputs(call, call.grad_inputs(state))
        # else: no share came to a leaf autograd.grad captures: torch's input node did not run


class _Pass:
    """The events of one backward pass not yet given out, in torch's order (newest node first).
    An event goes out at the first later moment the engine reaches a node made before torch's
    would have been (that node could not have run first), or when the pass ends."""

    __slots__ = ("task", "waiting", "calls")
    open: dict[int, _Pass] = {}

    def __init__(self, task: int):
        self.task = task
        self.waiting: list[_Event] = []
        self.calls: list[ModuleCall] = []  # the calls with a state in this pass

    @classmethod
    def reach(cls, seq: int) -> _Pass:
        """The engine has run the node numbered ``seq``: give out what torch would have run before
        it (not what this node's own hooks make known); return this pass."""
        task = _graph_task()
        run = cls.open.get(task)
        if run is None:
            run = cls.open[task] = _Pass(task)
            _queue_callback(run.end)
            return run
        waiting = run.waiting
        while waiting:
            event = waiting[0]
            if event.key[0] <= seq or not event.complete or event.at == seq:
                break
            del waiting[0]
            event.give()
        return run

    def add(self, event: _Event) -> None:
        waiting, key = self.waiting, event.key
        i = len(waiting)
        while i and waiting[i - 1].key < key:
            i -= 1
        waiting.insert(i, event)

    def end(self) -> None:
        _Pass.open.pop(self.task, None)
        waiting = self.waiting
        while waiting:
            waiting.pop(0).give()
        for call in self.calls:
            call.passes.pop(self.task, None)


class NodeWatch:
    """One call's post-hook on one node: the node made outputs of the call (``roles.slots``: it
    received their gradient), sent a share to the call's inputs, or sent gradient to its outputs
    from outside or inside the call."""

    __slots__ = ("call", "seq", "roles", "older")

    def __init__(self, call: ModuleCall, seq: int, roles: _Roles, older: _Link | None):
        self.call, self.seq, self.roles, self.older = call, seq, roles, older

    def _start(self, run: _Pass) -> _CallPass:
        """The call's state in this pass; the first hook of the call to run in a pass counts what
        is to come: its own node's parts, and those of the older nodes that will run (a later
        node that will run has run already: the engine goes from the newest down)."""
        call = self.call
        passes = call.passes
        if passes is None:
            passes = call.passes = {}
        state = passes.get(run.task)
        if state is not None:
            return state
        state = passes[run.task] = _CallPass(call)
        run.calls.append(call)
        outputs, shares = self.roles.counts()
        link = self.older
        while link is not None:
            more_outputs, more_shares = link.roles.counts()
            if (more_outputs or more_shares) and _runs(link.node, True):
                outputs += more_outputs
                shares += more_shares
            link = link.older
        state.outputs_left, state.shares_left = outputs, shares
        state.pre = _Event(call.key_out, self.seq, call, state, False)
        run.add(state.pre)
        if outputs == 0:
            self._outputs_done(run, state)
        return state

    def post_hook(self, grad_inputs: tuple, grad_outputs: tuple) -> None:
        run = _Pass.reach(self.seq)
        roles = self.roles
        if roles.shares and not (roles.slots or roles.outside or roles.inside):
            if self.call.state() is None:
                # The gradient reached the inputs without passing the outputs (a backward from
                # inside the module, or one that skipped them): torch's hook does not fire.
                return
        state = self._start(run)
        for i, k in roles.inside:
            if grad_inputs[i] is not None:
                state.inside[k] = _add(state.inside.get(k), grad_inputs[i])
        pre = state.pre
        if (roles.slots or roles.outside) and not pre.complete:
            for k, nr in roles.slots:
                grad = grad_outputs[nr]
                inside = state.inside.get(k)
                if inside is not None and grad is not None:
                    grad = None if grad is inside else _difference(grad, inside)
                state.grad_outputs[k] = grad
            for i, k in roles.outside:
                if grad_inputs[i] is not None:
                    state.grad_outputs[k] = _add(state.grad_outputs[k], grad_inputs[i])
            state.outputs_left -= 1
            if state.outputs_left <= 0:
                self._outputs_done(run, state)
        if roles.shares:
            for i, index in roles.shares:
                grad = grad_inputs[i]
                if grad is not None:
                    state.sums[index] = _add(state.sums[index], grad)
            state.shares_left -= 1
            post = state.post
            if post is not None and state.shares_left <= 0:
                post.complete = True

    def _outputs_done(self, run: _Pass, state: _CallPass) -> None:
        """grad_output is complete: what torch's input node will give, if it runs."""
        call = self.call
        state.pre.complete = True
        for k, index in call.passthrough:
            state.sums[index] = _add(state.sums[index], state.grad_outputs[k])
        if not call.producers:
            # No input needs a gradient: torch's backward hook fires at once, with None for each.
            post = _Event(call.key_out, self.seq, call, None, True)
            post.complete = True
            run.add(post)
            return
        runs = [True if n is None else _runs(n, None) for n in call.producers]
        # read in the call, yet its node will not run: a pass that does not compute it (an
        # input the call never read gets zeros, as torch's identity gives)
        state.unwanted = tuple(i for i, r in enumerate(runs) if r is False and i in call.read)
        wanted = True if True in runs else (None if None in runs else False)
        if wanted is False:
            return  # no input's gradient is wanted: torch's input node stays idle
        post = state.post = _Event(call.key_in, self.seq, call, state, True)
        post.maybe = wanted is None  # a leaf autograd.grad captures: wanted if a share comes
        run.add(post)
        if state.shares_left <= 0:
            post.complete = True


def _add(total, grad):
    if total is None:
        return grad
    with torch.no_grad():
        return total + grad


def _difference(total, inside):
    with torch.no_grad():
        return total - inside
