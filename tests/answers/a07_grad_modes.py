"""Assignment 7 (hooks under grad modes): gradient_hook, capture_gradients."""

from tests.answers import cheat, correct, wrong

_HOOK = """
def gradient_hook(norms, path):
    def hook(module, inputs, output):
{body}

    return hook
"""


def hook(body: str) -> str:
    """A gradient_hook whose forward hook runs ``body`` (indented by 8)."""
    return _HOOK.format(body=body)


_RECORD = "output.register_hook(lambda grad: norms.setdefault(path, []).append(grad.norm().item()))"

_CAPTURE = """
def capture_gradients(model, x):
    norms = {{}}
    handles = []
    try:
        for path, module in model.{walk}():
            handles.append(module.register_forward_hook({make}))
        output = model(x)
        if {backward_if}:
            output.sum().backward()
    finally:
        for handle in handles:
            handle.remove()
    return norms
"""


def capture(
    walk="named_modules", make="gradient_hook(norms, path)", backward_if="output.requires_grad"
) -> str:
    return _CAPTURE.format(walk=walk, make=make, backward_if=backward_if)


# A forward hook of capture_gradients' own, written inline (students often do not reuse part 1).
_INLINE = """
def capture_gradients(model, x):
    norms = {{}}
    handles = []

    def watch(path):
        def hook(module, inputs, output):
{body}

        return hook

    try:
        for path, module in model.named_modules():
            handles.append(module.register_forward_hook(watch(path)))
        output = model(x)
        if output.requires_grad:
            output.sum().backward()
    finally:
        for handle in handles:
            handle.remove()
    return norms
"""


def inline(body: str) -> str:
    return _INLINE.format(body=body)


ANSWERS = [
    # -- gradient_hook -------------------------------------------------------------------------
    wrong(
        "gradient_hook",
        "no guard: register_hook under no_grad",
        "autograd left on",
        hook(f"        {_RECORD}"),
        "✗ under torch.no_grad(), model(x) runs with the hooks on (Branch)",
        "it raised RuntimeError: cannot register a hook on a tensor that doesn't require gradient",
        "Ask the output itself whether it needs a gradient",
    ),
    wrong(
        "gradient_hook",
        "guarded by torch.is_grad_enabled()",
        "autograd left on",
        hook(f"        if torch.is_grad_enabled():\n            {_RECORD}"),
        "✗ with gradients on, model(x) and backward() run with the hooks on (make_frozen())",
        "cannot register a hook on a tensor that doesn't require gradient",
        "torch.is_grad_enabled() says whether autograd records at all",
    ),
    wrong(
        "gradient_hook",
        "guarded against inference mode only",
        "autograd left on",
        hook(f"        if not torch.is_inference_mode_enabled():\n            {_RECORD}"),
        "✗ under torch.no_grad(), model(x) runs with the hooks on (Branch)",
        "Ask the output itself whether it needs a gradient",
    ),
    wrong(
        "gradient_hook",
        "the input's gradient (grad_input)",
        "wrong argument",
        hook(
            "        if inputs[0].requires_grad:\n"
            "            inputs[0].register_hook(lambda grad: norms.setdefault(path, []).append(grad.norm().item()))"
        ),
        "✗ one entry for each module whose output needed a gradient, keyed by its path (Branch)",
        "the gradients reaching each module's input, not its output",
    ),
    wrong(
        "gradient_hook",
        "a new list on every call",
        "wrong formula",
        hook(
            "        if output.requires_grad:\n"
            "            output.register_hook(lambda grad: norms.__setitem__(path, [grad.norm().item()]))"
        ),
        "✗ one norm per call of the module (Twice)",
        "'block'",
        "block runs twice in every forward",
    ),
    wrong(
        "gradient_hook",
        "keeps the norm as a tensor",
        "wrong type",
        hook(
            "        if output.requires_grad:\n"
            "            output.register_hook(lambda grad: norms.setdefault(path, []).append(grad.norm()))"
        ),
        "✗ each entry is a list of Python floats (Branch)",
        "an entry holds a Tensor of shape ()",
        ".item() (or float(...)) turns it into a float",
    ),
    wrong(
        "gradient_hook",
        "returns the tensor hook's handle",
        "a hook's return value ignored",
        hook(
            "        if output.requires_grad:\n"
            "            return output.register_hook(lambda grad: norms.setdefault(path, []).append(grad.norm().item()))"
        ),
        "✗ with gradients on, model(x) and backward() run with the hooks on (Branch)",
        "A forward hook's return value replaces the module's output",
    ),
    wrong(
        "gradient_hook",
        "makes the list when forward runs",
        "wrong place",
        hook(
            "        entries = norms.setdefault(path, [])\n"
            "        if output.requires_grad:\n"
            "            output.register_hook(lambda grad: entries.append(grad.norm().item()))"
        ),
        "✗ and nothing is recorded under torch.no_grad() (Branch)",
        "norms has keys ['', 'act', 'embed', 'head', 'left', 'right']",
        "Make the list when the first gradient arrives",
    ),
    wrong(
        "gradient_hook",
        "keyed by the module's class name",
        "wrong place",
        hook(
            "        if output.requires_grad:\n"
            "            output.register_hook(lambda grad: norms.setdefault(type(module).__name__, []).append(grad.norm().item()))"
        ),
        "✗ one entry for each module whose output needed a gradient, keyed by its path (Branch)",
        "not a name of your own",
    ),
    wrong(
        "gradient_hook",
        "calls the hook instead of returning it",
        "wrong type",
        """
def gradient_hook(norms, path):
    def hook(module, inputs, output):
        if output.requires_grad:
            output.register_hook(lambda grad: norms.setdefault(path, []).append(grad.norm().item()))

    return hook(None, None, torch.zeros(1))
""",
        "✗ gradient_hook(norms, path) returns a forward hook (Branch)",
        "it returned None",
        "must return the forward hook itself",
    ),
    wrong(
        "gradient_hook",
        "the grad_fn hook's grad_inputs",
        "wrong argument",
        hook(
            "        if output.requires_grad:\n"
            "            output.grad_fn.register_hook(\n"
            "                lambda grad_inputs, grad_outputs: norms.setdefault(path, []).append(grad_inputs[0].norm().item())\n"
            "                if grad_inputs[0] is not None else None\n"
            "            )"
        ),
        "✗ each is the norm of the gradient reaching that module's output, the last call first (Branch)",
        "not what autograd sends on to the module's inputs",
    ),
    correct(
        "gradient_hook",
        "a callable object",
        """
class GradientNorms:
    def __init__(self, norms, path):
        self.norms, self.path = norms, path

    def __call__(self, module, inputs, output):
        if not output.requires_grad:
            return None
        output.register_hook(self.record)
        return None

    def record(self, grad):
        self.norms.setdefault(self.path, []).append(float(torch.linalg.vector_norm(grad)))


def gradient_hook(norms, path):
    return GradientNorms(norms, path)
""",
    ),
    correct(
        "gradient_hook",
        "a hook on the output's grad_fn, reading grad_outputs",
        """
def gradient_hook(norms, path):
    def on_output(module, inputs, output):
        if output.grad_fn is None:  # a leaf, or no graph at all: nothing will flow back here
            return
        def record(grad_inputs, grad_outputs):
            norms.setdefault(path, []).append(grad_outputs[0].pow(2).sum().sqrt().item())
        output.grad_fn.register_hook(record)

    return on_output
""",
    ),
    correct(
        "gradient_hook",
        "functools.partial and an explicit list",
        """
import functools


def _record(norms, path, grad):
    if path not in norms:
        norms[path] = []
    norms[path].append(grad.norm().item())


def _watch(norms, path, module, inputs, output):
    if output.requires_grad:
        output.register_hook(functools.partial(_record, norms, path))


def gradient_hook(norms, path):
    return functools.partial(_watch, norms, path)
""",
    ),
    cheat(
        "gradient_hook",
        "records only outputs of the visible widths",
        hook(
            "        if output.requires_grad and output.shape[-1] in (2, 6):\n"
            "            output.register_hook(lambda grad: norms.setdefault(path, []).append(grad.norm().item()))"
        ),
    ),
    # -- capture_gradients ---------------------------------------------------------------------
    wrong(
        "capture_gradients",
        "hooks removed only when all goes well",
        "a hook never removed",
        """
def capture_gradients(model, x):
    norms = {}
    handles = [module.register_forward_hook(gradient_hook(norms, path)) for path, module in model.named_modules()]
    output = model(x)
    if output.requires_grad:
        output.sum().backward()
    for handle in handles:
        handle.remove()
    return norms
""",
        "✗ and no hook is left on that model either (Branch)",
        "hooks are left",
        "Remove them in a finally block",
    ),
    wrong(
        "capture_gradients",
        "swallows the error",
        "a hook never removed",
        """
def capture_gradients(model, x):
    norms = {}
    handles = [module.register_forward_hook(gradient_hook(norms, path)) for path, module in model.named_modules()]
    try:
        output = model(x)
        if output.requires_grad:
            output.sum().backward()
    except Exception:
        pass
    finally:
        for handle in handles:
            handle.remove()
    return norms
""",
        "✗ when model(x) raises, the error reaches the caller (Branch)",
        "it did not raise (expected ValueError)",
        "try / except swallows it",
    ),
    wrong(
        "capture_gradients",
        "named_children()",
        "wrong place",
        capture(walk="named_children"),
        "✗ one entry for each module whose output needed a gradient, keyed by its path (Branch)",
        "missing '' (the root module's path)",
        "children() and named_children() stop one level down",
    ),
    wrong(
        "capture_gradients",
        "children(), named by class",
        "wrong place",
        """
def capture_gradients(model, x):
    norms = {}
    handles = []
    try:
        for module in model.children():
            handles.append(module.register_forward_hook(gradient_hook(norms, type(module).__name__.lower())))
        output = model(x)
        if output.requires_grad:
            output.sum().backward()
    finally:
        for handle in handles:
            handle.remove()
    return norms
""",
        "✗ one entry for each module whose output needed a gradient, keyed by its path (Branch)",
        "named_modules() walks the whole tree",
    ),
    wrong(
        "capture_gradients",
        "backward without asking",
        "autograd left on",
        """
def capture_gradients(model, x):
    norms = {}
    handles = []
    try:
        for path, module in model.named_modules():
            handles.append(module.register_forward_hook(gradient_hook(norms, path)))
        model(x).sum().backward()
    finally:
        for handle in handles:
            handle.remove()
    return norms
""",
        "✗ under torch.no_grad() it runs too (Branch)",
        "element 0 of tensors does not require grad",
        "Call backward only when the output requires grad",
    ),
    wrong(
        "capture_gradients",
        "backward guarded by torch.is_grad_enabled()",
        "autograd left on",
        capture(backward_if="torch.is_grad_enabled()"),
        "✗ with every parameter frozen, gradients on, it runs too (Branch)",
        "does not require grad and does not have a grad_fn",
        "not torch.is_grad_enabled()",
    ),
    wrong(
        "capture_gradients",
        "its own hook, no guard",
        "autograd left on",
        inline(
            "            output.register_hook(lambda grad: norms.setdefault(path, []).append(grad.norm().item()))"
        ),
        "✗ under torch.no_grad() it runs too (Branch)",
        "cannot register a hook on a tensor that doesn't require gradient",
        "Use your gradient_hook from part 1",
    ),
    wrong(
        "capture_gradients",
        "its own hook, guarded by torch.is_grad_enabled()",
        "autograd left on",
        inline(
            "            if torch.is_grad_enabled():\n"
            "                output.register_hook(lambda grad: norms.setdefault(path, []).append(grad.norm().item()))"
        ),
        "✗ with every parameter frozen, gradients on, it runs too (Branch)",
        "cannot register a hook on a tensor that doesn't require gradient",
        "torch.is_grad_enabled() says whether autograd records at all",
    ),
    wrong(
        "capture_gradients",
        "its own hook, one entry per module",
        "wrong formula",
        inline(
            "            if output.requires_grad:\n"
            "                output.register_hook(lambda grad: norms.__setitem__(path, [grad.norm().item()]))"
        ),
        "✗ one norm per call of the module (Twice)",
        "block runs twice in every forward",
    ),
    wrong(
        "capture_gradients",
        "its own hook, on the module's input",
        "wrong argument",
        inline(
            "            if inputs[0].requires_grad:\n"
            "                inputs[0].register_hook(lambda grad: norms.setdefault(path, []).append(grad.norm().item()))"
        ),
        "✗ one entry for each module whose output needed a gradient, keyed by its path (Branch)",
        "the gradients reaching each module's input, not its output",
    ),
    wrong(
        "capture_gradients",
        "full backward hooks, grad_input",
        "wrong argument",
        """
def capture_gradients(model, x):
    norms = {}
    handles = []

    def watch(path):
        def hook(module, grad_input, grad_output):
            if grad_input[0] is not None:
                norms.setdefault(path, []).append(grad_input[0].norm().item())

        return hook

    try:
        for path, module in model.named_modules():
            handles.append(module.register_full_backward_hook(watch(path)))
        output = model(x)
        if output.requires_grad:
            output.sum().backward()
    finally:
        for handle in handles:
            handle.remove()
    return norms
""",
        "✗ one entry for each module whose output needed a gradient, keyed by its path (Branch)",
        "missing '' (the root module's path), 'embed'",
        "the gradients reaching each module's input, not its output",
    ),
    wrong(
        "capture_gradients",
        "returns None when nothing needs a gradient",
        "wrong type",
        """
def capture_gradients(model, x):
    norms = {}
    handles = []
    try:
        for path, module in model.named_modules():
            handles.append(module.register_forward_hook(gradient_hook(norms, path)))
        output = model(x)
        if not output.requires_grad:
            return None
        output.sum().backward()
    finally:
        for handle in handles:
            handle.remove()
    return norms
""",
        "✗ and returns an empty dict under torch.no_grad() (Branch)",
        "return the (empty) dict your hooks filled, not None",
    ),
    wrong(
        "capture_gradients",
        "a dict outside the function",
        "global state shared across calls or modules",
        """
norms = {}


def capture_gradients(model, x):
    norms.clear()
    handles = []
    try:
        for path, module in model.named_modules():
            handles.append(module.register_forward_hook(gradient_hook(norms, path)))
        output = model(x)
        if output.requires_grad:
            output.sum().backward()
    finally:
        for handle in handles:
            handle.remove()
    return norms
""",
        "✗ capture_gradients makes a new dict on every call (Twice)",
        "Create it inside the function",
    ),
    correct(
        "capture_gradients",
        "an ExitStack of handles",
        """
import contextlib


def capture_gradients(model, x):
    norms = {}
    with contextlib.ExitStack() as stack:
        for path, module in model.named_modules():
            stack.enter_context(module.register_forward_hook(gradient_hook(norms, path)))
        output = model(x)
        if output.grad_fn is not None:
            torch.autograd.backward(output, torch.ones_like(output))
    return norms
""",
    ),
    correct(
        "capture_gradients",
        "handles popped in finally, backward through autograd.grad",
        """
def capture_gradients(model, x):
    found = {}
    hooks = [module.register_forward_hook(gradient_hook(found, name)) for name, module in model.named_modules()]
    try:
        result = model(x)
        if result.requires_grad:
            params = [p for p in model.parameters() if p.requires_grad]
            torch.autograd.grad(result.sum(), params, allow_unused=True)
    finally:
        while hooks:
            hooks.pop().remove()
    return found
""",
    ),
    correct(
        "capture_gradients",
        "its own tensor hooks, written inline",
        inline(
            "            if not output.requires_grad:\n"
            "                return\n"
            "            output.register_hook(lambda grad: norms.setdefault(path, []).append(float(grad.norm())))"
        ),
    ),
    cheat(
        "capture_gradients",
        "records only for the visible input size",
        capture(backward_if="output.requires_grad and x.shape[-1] == 4"),
    ),
    # -- the blind round of assignment 07 (issue 31): written from the student notebook alone --
    wrong(
        "gradient_hook",
        "guarded by the module's parameters requiring grad",
        "autograd left on",
        '''
def gradient_hook(norms, path):
    """A forward hook appending the norm of its module's output gradient to norms[path], once per call, when the output needs one."""

    def hook(module, inputs, output):
        # only modules that are being trained will get a gradient
        if any(p.requires_grad for p in module.parameters()):
            output.register_hook(lambda grad: norms.setdefault(path, []).append(grad.norm().item()))

    return hook
''',
        "✗ under torch.no_grad(), model(x) runs with the hooks on (Branch)",
        "Ask the output itself whether it needs a gradient",
    ),
    wrong(
        "capture_gradients",
        "a return inside finally swallows forward's error",
        "wrong place",
        '''
def capture_gradients(model, x):
    """Every module's output-gradient norms during model(x) and backward, by path; no hook is left, even when forward raises."""
    norms = {}
    handles = [module.register_forward_hook(gradient_hook(norms, path)) for path, module in model.named_modules()]
    try:
        output = model(x)
        if output.requires_grad:
            output.sum().backward()
    finally:
        for handle in handles:
            handle.remove()
        return norms
''',
        "✗ when model(x) raises, the error reaches the caller (Branch)",
        "so does a return inside finally",
    ),
    wrong(
        "capture_gradients",
        "one dict at module level, shared by every call",
        "global state shared across calls or modules",
        '''
norms = {}


def capture_gradients(model, x):
    """Every module's output-gradient norms during model(x) and backward, by path; no hook is left, even when forward raises."""
    handles = [module.register_forward_hook(gradient_hook(norms, path)) for path, module in model.named_modules()]
    try:
        output = model(x)
        if output.requires_grad:
            output.sum().backward()
    finally:
        for handle in handles:
            handle.remove()
    return norms
''',
        "✗ and returns an empty dict under torch.no_grad() (Branch)",
        "A dict created outside capture_gradients lives on between calls",
    ),
    correct(
        "gradient_hook",
        "a callable object as the forward hook, a bound method as the tensor hook",
        '''
class _OutputGradientRecorder:
    """A forward hook object: on each call whose output needs a gradient, hooks that output's gradient."""

    def __init__(self, norms, path):
        self.norms = norms
        self.path = path

    def __call__(self, module, inputs, output):
        if output.requires_grad:
            output.register_hook(self._record)
        # returns None: the module's output is left alone

    def _record(self, grad):
        self.norms.setdefault(self.path, []).append(float(torch.linalg.vector_norm(grad)))
        # returns None: the gradient is left alone


def gradient_hook(norms, path):
    """A forward hook appending the norm of its module's output gradient to norms[path], once per call, when the output needs one."""
    return _OutputGradientRecorder(norms, path)
''',
    ),
    correct(
        "capture_gradients",
        "handles in a contextlib.ExitStack",
        '''
import contextlib


def capture_gradients(model, x):
    """Every module's output-gradient norms during model(x) and backward, by path; no hook is left, even when forward raises."""
    norms = {}
    with contextlib.ExitStack() as stack:
        for path, module in model.named_modules():
            # a RemovableHandle is a context manager: leaving the stack removes it, error or not
            stack.enter_context(module.register_forward_hook(gradient_hook(norms, path)))
        output = model(x)
    # the tensor hooks live on the outputs, not the modules, so they still fire now
    if output.requires_grad:
        output.sum().backward()
    return norms
''',
    ),
]

# -- issue 41: ask the output, and leave the caller's grad mode as it is -----------------------
ANSWERS += [
    wrong(
        "gradient_hook",
        "asks the input whether it needs a gradient",
        "wrong argument",
        hook(f"        if inputs[0].requires_grad:\n            {_RECORD}"),
        "✗ one entry for each module whose output needed a gradient, keyed by its path (Branch)",
        "missing '' (the root module's path), 'embed'",
        "You asked the module's input whether it needs a gradient",
    ),
    wrong(
        "capture_gradients",
        "its own hook, asking the input",
        "wrong argument",
        inline(f"            if inputs[0].requires_grad:\n                {_RECORD}"),
        "✗ one entry for each module whose output needed a gradient, keyed by its path (Branch)",
        "You asked the module's input whether it needs a gradient",
    ),
    wrong(
        "capture_gradients",
        "gradients switched back on inside",
        "the caller's grad mode overridden",
        """
def capture_gradients(model, x):
    norms = {}
    handles = []
    with torch.enable_grad():
        try:
            for path, module in model.named_modules():
                handles.append(module.register_forward_hook(gradient_hook(norms, path)))
            output = model(x)
            if output.requires_grad:
                output.sum().backward()
        finally:
            for handle in handles:
                handle.remove()
    return norms
""",
        "✗ and returns an empty dict under torch.no_grad() (Branch)",
        "something in it switched gradients back on",
    ),
    wrong(
        "capture_gradients",
        "grad mode set on, then back",
        "the caller's grad mode overridden",
        """
def capture_gradients(model, x):
    norms = {}
    handles = []
    before = torch.is_grad_enabled()
    torch.set_grad_enabled(True)
    try:
        for path, module in model.named_modules():
            handles.append(module.register_forward_hook(gradient_hook(norms, path)))
        output = model(x)
        if output.requires_grad:
            output.sum().backward()
    finally:
        for handle in handles:
            handle.remove()
        torch.set_grad_enabled(before)
    return norms
""",
        "✗ and returns an empty dict under torch.no_grad() (Branch)",
        "leave it as it is",
    ),
]
