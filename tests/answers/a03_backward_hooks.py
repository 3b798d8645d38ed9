"""Assignment 3 (backward hooks): gradient_norms, clip_gradient, doubled_gradients."""

from tests.answers import cheat, correct, wrong

_GRAD_NORMS = """
def gradient_norms(model, x):
    norms = {{}}
    handles = []
    try:
        for path, module in model.named_modules():
            if isinstance(module, nn.Linear):

                def keep(module, grad_input, grad_output, path=path):
                    norms[path] = {value}

                handles.append(module.register_full_backward_hook(keep))
        model(x).sum().backward()
    finally:
        for handle in handles:
            handle.remove()
    return norms
"""

_CLIP = """
def clip_gradient(tensor, max_norm):
    def clip(grad):
{body}

    return tensor.register_hook(clip)
"""

ANSWERS = [
    # -- gradient_norms ------------------------------------------------------------------------
    wrong(
        "gradient_norms",
        "grad_input of the first layer",
        "wrong argument",
        _GRAD_NORMS.format(value="grad_input[0].norm().item()"),
        "raised AttributeError: 'NoneType' object has no attribute 'norm'",
        "grad_input[0] is None in the first layer's hook",
        "The gradient with respect to the layer's output is the other argument, grad_output",
    ),
    wrong(
        "gradient_norms",
        "grad_input, skipping the layer where it is None",
        "wrong argument",
        _GRAD_NORMS.format(value="grad_input[0].norm().item()").replace(
            "                    norms[path] =",
            "                    if grad_input[0] is not None:\n                        norms[path] =",
        ),
        "✗ one entry per nn.Linear",
        "missing '0'",
        "The gradient that arrives at a layer is the gradient with respect to its output",
    ),
    wrong(
        "gradient_norms",
        "never removes its hooks",
        "a hook never removed",
        """
def gradient_norms(model, x):
    norms = {}
    for path, module in model.named_modules():
        if isinstance(module, nn.Linear):
            module.register_full_backward_hook(lambda m, gi, go, path=path: norms.__setitem__(path, go[0].norm().item()))
    model(x).sum().backward()
    return norms
""",
        "✗ no hook is left on the model (an MLP)",
        "3 hooks are left: backward hook <lambda> on 0",
        "Keep the handle",
    ),
    wrong(
        "gradient_norms",
        "tensors, not floats",
        "wrong type",
        _GRAD_NORMS.format(value="grad_output[0].norm()"),
        "✗ the norms are Python floats (an MLP)",
        "norms['4'] is a Tensor of shape ()",
        ".item() turns it into a Python float",
    ),
    wrong(
        "gradient_norms",
        "named_children",
        "the root forgotten",
        """
def gradient_norms(model, x):
    norms, handles = {}, []
    try:
        for path, module in model.named_children():
            if isinstance(module, nn.Linear):
                handles.append(module.register_full_backward_hook(
                    lambda m, gi, go, path=path: norms.__setitem__(path, go[0].norm().item())))
        model(x).sum().backward()
    finally:
        for handle in handles:
            handle.remove()
    return norms
""",
        "✗ one entry per nn.Linear, keyed by its path in named_modules() (nested Sequentials)",
        "missing '0.0'",
        "named_modules() walks the whole tree",
    ),
    wrong(
        "gradient_norms",
        "late binding",
        "global state shared across calls or modules",
        """
def gradient_norms(model, x):
    norms, handles = {}, []
    try:
        for path, module in model.named_modules():
            if isinstance(module, nn.Linear):
                def keep(module, grad_input, grad_output):
                    norms[path] = grad_output[0].norm().item()
                handles.append(module.register_full_backward_hook(keep))
        model(x).sum().backward()
    finally:
        for handle in handles:
            handle.remove()
    return norms
""",
        "✗ one entry per nn.Linear",
        "missing '0', '2'",
        "Every hook stored its norm under the same key",
    ),
    wrong(
        "gradient_norms",
        "a dict outside the function",
        "global state shared across calls or modules",
        """
norms = {}


def gradient_norms(model, x):
    handles = []
    try:
        for path, module in model.named_modules():
            if isinstance(module, nn.Linear):
                handles.append(module.register_full_backward_hook(
                    lambda m, gi, go, path=path: norms.__setitem__(path, go[0].norm().item())))
        model(x).sum().backward()
    finally:
        for handle in handles:
            handle.remove()
    return norms
""",
        "✗ gradient_norms makes a new dict on every call (nested Sequentials)",
        "Create it inside the function",
    ),
    wrong(
        "gradient_norms",
        "keys filled when registering",
        "wrong formula",
        """
def gradient_norms(model, x):
    norms, handles = {}, []
    try:
        for path, module in model.named_modules():
            if isinstance(module, nn.Linear):
                norms[path] = 0.0
                handles.append(module.register_full_backward_hook(
                    lambda m, gi, go, path=path: norms.__setitem__(path, go[0].norm().item())))
        model(x).sum().backward()
    finally:
        for handle in handles:
            handle.remove()
    return norms
""",
        "✗ the keys are in the order the hooks fired: the last layer first (an MLP)",
        "Do not fill the dict when you register",
    ),
    wrong(
        "gradient_norms",
        "hooks on every module",
        "wrong place",
        """
def gradient_norms(model, x):
    norms, handles = {}, []
    try:
        for path, module in model.named_modules():
            handles.append(module.register_full_backward_hook(
                lambda m, gi, go, path=path: norms.__setitem__(path, go[0].norm().item())))
        model(x).sum().backward()
    finally:
        for handle in handles:
            handle.remove()
    return norms
""",
        "✗ one entry per nn.Linear",
        "unexpected '' (the root module's path), '1', '3'",
        "Hook the Linear layers only",
    ),
    wrong(
        "gradient_norms",
        "removes only when all goes well",
        "a hook never removed",
        """
def gradient_norms(model, x):
    norms, handles = {}, []
    for path, module in model.named_modules():
        if isinstance(module, nn.Linear):
            handles.append(module.register_full_backward_hook(
                lambda m, gi, go, path=path: norms.__setitem__(path, go[0].norm().item())))
    model(x).sum().backward()
    for handle in handles:
        handle.remove()
    return norms
""",
        "✗ and no hook is left on that model either (an MLP)",
        "3 hooks are left",
        "also when the job raises",
    ),
    wrong(
        "gradient_norms",
        "the weight's gradient",
        "wrong argument",
        _GRAD_NORMS.format(value="module.weight.grad.norm().item()"),
        "raised AttributeError: 'NoneType' object has no attribute 'norm'",
        "a .grad was None",
        "A tensor's .grad stays None until backward has reached it",
    ),
    correct(
        "gradient_norms",
        "backward pre-hooks",
        """
def gradient_norms(model, x):
    norms, handles = {}, []
    try:
        for path, module in model.named_modules():
            if isinstance(module, nn.Linear):
                def keep(module, grad_output, path=path):
                    norms[path] = float(grad_output[0].norm())
                handles.append(module.register_full_backward_pre_hook(keep))
        model(x).sum().backward()
    finally:
        for handle in handles:
            handle.remove()
    return norms
""",
    ),
    correct(
        "gradient_norms",
        "tensor hooks on the outputs",
        """
from functools import partial


def gradient_norms(model, x):
    norms = {}

    def on_output(path, module, inputs, output):
        output.register_hook(lambda grad: norms.__setitem__(path, grad.norm().item()))

    handles = [module.register_forward_hook(partial(on_output, path))
               for path, module in model.named_modules() if isinstance(module, nn.Linear)]
    try:
        model(x).sum().backward()
    finally:
        for handle in handles:
            handle.remove()
    return norms
""",
    ),
    cheat(
        "gradient_norms",
        "the visible layer names",
        """
def gradient_norms(model, x):
    norms, handles = {}, []
    try:
        for path in ("4", "2", "0", "1", "0.0"):
            try:
                module = model.get_submodule(path)
            except AttributeError:
                continue
            if isinstance(module, nn.Linear):
                handles.append(module.register_full_backward_hook(
                    lambda m, gi, go, path=path: norms.__setitem__(path, go[0].norm().item())))
        model(x).sum().backward()
    finally:
        for handle in handles:
            handle.remove()
    return norms
""",
    ),
    # -- clip_gradient -------------------------------------------------------------------------
    wrong(
        "clip_gradient",
        "clamps each value",
        "wrong formula",
        """
def clip_gradient(tensor, max_norm):
    return tensor.register_hook(lambda grad: grad.clamp(-max_norm, max_norm))
""",
        "✗ a gradient of norm 22.4 comes out scaled to norm 1, same direction (a leaf tensor)",
        "changes the direction",
    ),
    wrong(
        "clip_gradient",
        "in place, returning None",
        "in-place change of grad",
        _CLIP.format(
            body="""\
        norm = grad.norm()
        if norm > max_norm:
            grad.mul_(max_norm / norm)"""
        ),
        "✗ the hook returns a new tensor and leaves the one it receives alone (a leaf tensor)",
        "the gradient it received was changed in place",
        "A tensor hook must not modify the gradient it receives",
    ),
    wrong(
        "clip_gradient",
        "in place, returning it",
        "in-place change of grad",
        _CLIP.format(
            body="""\
        norm = grad.norm()
        if norm > max_norm:
            grad *= max_norm / norm
        return grad"""
        ),
        "✗ the hook returns a new tensor and leaves the one it receives alone",
        "x + y hands one gradient object",
    ),
    wrong(
        "clip_gradient",
        "always scales",
        "wrong formula",
        _CLIP.format(
            body="""\
        return grad * (max_norm / grad.norm())"""
        ),
        "✗ a gradient of norm 0.5 is left as it is (a leaf tensor)",
        "Clip only when the norm is larger",
    ),
    wrong(
        "clip_gradient",
        "forgets to return",
        "wrong formula",
        _CLIP.format(
            body="""\
        norm = grad.norm()
        if norm > max_norm:
            grad = grad * (max_norm / norm)"""
        ),
        "✗ a gradient of norm 22.4 comes out scaled to norm 1",
        "a tensor hook changes it only through what it returns",
    ),
    wrong(
        "clip_gradient",
        "does not return the handle",
        "wrong type",
        """
def clip_gradient(tensor, max_norm):
    def clip(grad):
        norm = grad.norm()
        return grad * (max_norm / norm) if norm > max_norm else grad

    tensor.register_hook(clip)
""",
        "✗ clip_gradient returns the hook's handle (a leaf tensor)",
        "it is None, expected a RemovableHandle",
        "returns a handle",
    ),
    wrong(
        "clip_gradient",
        "reads tensor.grad",
        "wrong argument",
        _CLIP.format(
            body="""\
        norm = tensor.grad.norm()
        return grad * (max_norm / norm) if norm > max_norm else grad"""
        ),
        "✗ clip raised AttributeError: 'NoneType' object has no attribute 'norm'",
        "a .grad was None",
    ),
    wrong(
        "clip_gradient",
        "max_norm of 1 by heart",
        "hard-coded to the visible model",
        _CLIP.format(
            body="""\
        return grad / max(1.0, grad.norm().item())"""
        ),
        "✗ a gradient of norm 37.4 comes out scaled to norm 0.5, same direction (an activation, x * 2)",
        "Use the max_norm you were given",
    ),
    wrong(
        "clip_gradient",
        "clip_grad_norm_ on the tensor",
        "wrong argument",
        _CLIP.format(
            body="""\
        torch.nn.utils.clip_grad_norm_([tensor], max_norm)"""
        ),
        "✗ a gradient of norm 22.4 comes out scaled to norm 1",
        "a tensor hook changes it only through what it returns",
    ),
    correct(
        "clip_gradient",
        "one factor with min",
        _CLIP.format(
            body="""\
        return grad * min(1.0, max_norm / grad.norm().item())"""
        ),
    ),
    correct(
        "clip_gradient",
        "a clone, then in place",
        """
def clip_gradient(tensor, max_norm):
    def clip(grad):
        norm = grad.norm()
        if norm <= max_norm:
            return None
        clipped = grad.clone()
        clipped.mul_(max_norm / norm)
        return clipped

    handle = tensor.register_hook(clip)
    return handle
""",
    ),
    cheat(
        "clip_gradient",
        "the visible max_norms",
        _CLIP.format(
            body="""\
        limit = max_norm if max_norm in (1.0, 0.5) else 1.0
        norm = grad.norm()
        return grad * (limit / norm) if norm > limit else grad"""
        ),
    ),
    # -- doubled_gradients ---------------------------------------------------------------------
    wrong(
        "doubled_gradients",
        "the layer after h",
        "wrong prediction",
        """
def doubled_gradients():
    return {"4.weight", "4.bias"}
""",
        "✗ doubled_gradients names exactly the parameters whose .grad changes",
        "By the time the gradient reaches h",
    ),
    wrong(
        "doubled_gradients",
        "every parameter",
        "wrong prediction",
        """
def doubled_gradients():
    return {"0.weight", "0.bias", "2.weight", "2.bias", "4.weight", "4.bias"}
""",
        "✗ doubled_gradients names exactly",
        "the gradients of the layers after h",
    ),
    wrong(
        "doubled_gradients",
        "only the layer before h",
        "wrong prediction",
        """
def doubled_gradients():
    return {"0.weight", "0.bias"}
""",
        "✗ doubled_gradients names exactly",
        "h is the output of layer 2",
    ),
    wrong(
        "doubled_gradients",
        "only h's own layer",
        "wrong prediction",
        """
def doubled_gradients():
    return {"2.weight", "2.bias"}
""",
        "✗ doubled_gradients names exactly",
        "does not stop at the first layer it meets",
    ),
    wrong(
        "doubled_gradients",
        "weights only",
        "wrong prediction",
        """
def doubled_gradients():
    return {"0.weight", "2.weight"}
""",
        "✗ doubled_gradients names exactly",
        "A layer's weight and its bias get their gradients from the same gradient",
    ),
    wrong(
        "doubled_gradients",
        "a list",
        "wrong type",
        """
def doubled_gradients():
    return ["0.weight", "0.bias", "2.weight", "2.bias"]
""",
        "✗ doubled_gradients returns a set of names",
        "it is a list of 4 items, expected a set",
    ),
    wrong(
        "doubled_gradients",
        "made-up names",
        "wrong prediction",
        """
def doubled_gradients():
    return {"layer0.weight", "layer0.bias", "layer2.weight", "layer2.bias"}
""",
        "✗ every name is one that net.named_parameters() gives",
        "not a parameter name: 'layer0.bias'",
        "Spell each name as net.named_parameters() does",
    ),
    wrong(
        "doubled_gradients",
        "an empty dict",
        "wrong type",
        """
def doubled_gradients():
    return {}
""",
        "✗ doubled_gradients returns a set of names",
        "it is a dict of 0 items, expected a set",
        "{} alone is an empty dict",
    ),
    correct(
        "doubled_gradients",
        "a frozenset",
        """
def doubled_gradients():
    return frozenset(["0.weight", "0.bias", "2.weight", "2.bias"])
""",
    ),
    correct(
        "doubled_gradients",
        "a comprehension",
        """
def doubled_gradients():
    return {f"{layer}.{kind}" for layer in (0, 2) for kind in ("weight", "bias")}
""",
    ),
    correct(
        "doubled_gradients",
        "runs the experiment",
        """
def doubled_gradients():
    net = hv.examples.mlp((4, 8, 8, 2))
    x = torch.randn(3, 4)

    def grads(double):
        net.zero_grad()
        h = net[2](net[1](net[0](x)))
        if double:
            h.register_hook(lambda grad: grad * 2)
        net[4](net[3](h)).sum().backward()
        return {name: p.grad.clone() for name, p in net.named_parameters()}

    plain, doubled = grads(False), grads(True)
    return {name for name in plain if not torch.equal(plain[name], doubled[name])}
""",
    ),
]

# -- course v3 (issue 21): writes through .data in a tensor hook, a backward pass that raises ---
ANSWERS += [
    wrong(
        "clip_gradient",
        "scales grad.data in place",
        ".data",
        _CLIP.format(
            body="""\
        norm = grad.norm()
        if norm > max_norm:
            grad.data.mul_(max_norm / norm)
        return grad"""
        ),
        "✗ the hook returns a new tensor and leaves the one it receives alone (a leaf tensor)",
        "the gradient it received was changed in place, through .data",
        "its version counter) stripped off, so the change is silent",
    ),
    wrong(
        "clip_gradient",
        "grad.data *= factor",
        ".data",
        _CLIP.format(
            body="""\
        factor = max_norm / grad.norm()
        if factor < 1:
            grad.data *= factor
        return grad"""
        ),
        "✗ the hook returns a new tensor and leaves the one it receives alone",
        "changed in place, through .data",
        "Changing grad.data in place changes the gradient tensor itself",
    ),
    wrong(
        "clip_gradient",
        "copies the clipped values into grad.data",
        ".data",
        _CLIP.format(
            body="""\
        norm = grad.norm()
        if norm > max_norm:
            grad.data.copy_(grad * (max_norm / norm))
        return grad"""
        ),
        "✗ the hook returns a new tensor and leaves the one it receives alone (an activation, x * 2)",
        "through .data",
        "x + y hands one gradient object to both x and y",
    ),
    wrong(
        "clip_gradient",
        "returns grad.data.mul_()",
        ".data",
        _CLIP.format(
            body="""\
        norm = grad.norm()
        return grad.data.mul_(max_norm / norm) if norm > max_norm else grad"""
        ),
        "✗ the hook returns a new tensor and leaves the one it receives alone",
        "through .data",
        "Return a new tensor instead",
    ),
    wrong(
        "clip_gradient",
        "scales a detached view in place",
        "in-place change of grad",
        _CLIP.format(
            body="""\
        norm = grad.norm()
        if norm > max_norm:
            grad.detach().mul_(max_norm / norm)
        return grad"""
        ),
        "✗ the hook returns a new tensor and leaves the one it receives alone (a leaf tensor)",
        "the gradient it received was changed in place",
        "A tensor hook must not modify the gradient it receives",
    ),
    correct(
        "clip_gradient",
        "torch.where",
        _CLIP.format(
            body="""\
        norm = grad.norm()
        return torch.where(norm > max_norm, grad * (max_norm / norm), grad)"""
        ),
    ),
    correct(
        "clip_gradient",
        "out of place from .data",
        _CLIP.format(
            body="""\
        norm = grad.data.norm()
        return grad.data * (max_norm / norm) if norm > max_norm else grad"""
        ),
    ),
    wrong(
        "gradient_norms",
        "cleans up when the forward pass fails only",
        "a hook never removed",
        """
def gradient_norms(model, x):
    norms, handles = {}, []
    for path, module in model.named_modules():
        if isinstance(module, nn.Linear):
            handles.append(module.register_full_backward_hook(
                lambda m, gi, go, path=path: norms.__setitem__(path, go[0].norm().item())))
    try:
        out = model(x)
    except Exception:
        for handle in handles:
            handle.remove()
        raise
    out.sum().backward()
    for handle in handles:
        handle.remove()
    return norms
""",
        "✗ and no hook is left then either (an MLP)",
        "3 hooks are left: backward hook <lambda> on 0",
        "also when the job raises",
    ),
    wrong(
        "gradient_norms",
        "hooks that remove themselves when they fire",
        "a hook never removed",
        """
def gradient_norms(model, x):
    norms, handles = {}, {}
    for path, module in model.named_modules():
        if isinstance(module, nn.Linear):

            def keep(module, grad_input, grad_output, path=path):
                norms[path] = grad_output[0].norm().item()
                handles[path].remove()   # one shot: gone once it has fired

            handles[path] = module.register_full_backward_hook(keep)
    model(x).sum().backward()
    return norms
""",
        "✗ and no hook is left on that model either (an MLP)",
        "✗ and no hook is left then either (an MLP)",
        "Keep the handle that register_*_hook returns",
    ),
    correct(
        "gradient_norms",
        "an ExitStack of handles",
        """
def gradient_norms(model, x):
    import contextlib

    norms = {}
    with contextlib.ExitStack() as stack:
        for path, module in model.named_modules():
            if isinstance(module, nn.Linear):
                handle = module.register_full_backward_hook(
                    lambda m, gi, go, path=path: norms.update({path: float(go[0].norm())}))
                stack.enter_context(handle)
        model(x).sum().backward()
    return norms
""",
    ),
]

# -- the blind round (issue 21): each look-alike gets the hint of its own mistake --------------
ANSWERS += [
    wrong(
        "gradient_norms",
        "grad_input[1], past the end of the tuple",
        "wrong argument",
        _GRAD_NORMS.format(value="grad_input[1].norm().item()"),
        "✗ keep raised IndexError: tuple index out of range",
        "grad_input[1] does not exist: this grad_input holds fewer than 2 items",
        "for an nn.Linear each holds one item, at index 0",
    ),
    wrong(
        "gradient_norms",
        "the L1 norm of grad_output[0]",
        "wrong formula",
        _GRAD_NORMS.format(value="grad_output[0].abs().sum().item()"),
        "✗ each is the norm of the gradient w.r.t. that layer's output",
        "not its mean or sum, not another norm",
    ),
    wrong(
        "gradient_norms",
        "grad_output[0] right, but a mean loss",
        "wrong formula",
        _GRAD_NORMS.format(value="grad_output[0].norm().item()").replace(
            "model(x).sum().backward()", "model(x).mean().backward()"
        ),
        "✗ each is the norm of the gradient w.r.t. that layer's output",
        "a mean loss divides every gradient by the number of outputs",
    ),
]

# -- the second blind round (issue 21) ---
ANSWERS += [
    wrong(
        "clip_gradient",
        "each row clipped by its own norm",
        "wrong formula",
        """
def clip_gradient(tensor, max_norm):
    def clip(grad):
        norm = grad.norm(dim=-1, keepdim=True)
        return torch.where(norm > max_norm, grad * (max_norm / norm), grad)
    return tensor.register_hook(clip)
""",
        "✗ a gradient of norm 95.4 comes out scaled to norm 1, same direction (a 2×3 leaf, shaped like a weight)",
        "one number for the whole tensor",
    ),
    wrong(
        "doubled_gradients",
        "h's own layer and the one after it",
        "wrong prediction",
        """
def doubled_gradients():
    return {"2.weight", "2.bias", "4.weight", "4.bias"}
""",
        "✗ doubled_gradients names exactly the parameters whose .grad changes",
        "the gradients of the layers after h (closer to the loss) are already computed",
    ),
]

# -- fixed after the second blind round (issue 21) ---------------------------------------------
ANSWERS += [
    wrong(
        "gradient_norms",
        "the deprecated register_backward_hook",
        "the wrong hook kind",
        _GRAD_NORMS.format(value="grad_output[0].norm().item()").replace(
            "register_full_backward_hook", "register_backward_hook"
        ),
        "✗ the hooks are full backward hooks (an MLP)",
        "register_backward_hook was used on 0, 2, 4",
        "Use register_full_backward_hook",
    ),
    wrong(
        "clip_gradient",
        "removes the hook of the previous call",
        "global state shared across calls or modules",
        """
_LAST = []


def clip_gradient(tensor, max_norm):
    while _LAST:
        _LAST.pop().remove()

    def clip(grad):
        norm = grad.norm()
        return grad * (max_norm / norm) if norm > max_norm else grad

    handle = tensor.register_hook(clip)
    _LAST.append(handle)
    return handle
""",
        "✗ two tensors clipped one after the other both stay clipped (max_norm 1)",
        "x.grad is [30.0, 40.0]",
        "a second call on another tensor must not remove or replace the first one's hook",
    ),
]
