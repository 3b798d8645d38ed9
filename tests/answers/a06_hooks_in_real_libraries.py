"""Assignment 6 (hooks in real libraries): grad_cam, patch_activation, pruned_sparsity."""

from tests.answers import cheat, correct, wrong

_CAM = """
def grad_cam(model, layer, images, target):
    kept = {{}}

    def keep(module, inputs, output):
{keep}

    grads = [(param, {saved}) for param in model.parameters()]
    handle = layer.register_forward_hook(keep)
    try:
        scores = model(images)
        {objective}.backward()
    finally:
{cleanup}
    weights = kept["gradient"].{reduce}
    return {result}
"""
_KEEP = """\
        kept["activation"] = output.detach().clone()
        output.register_hook(lambda grad: kept.__setitem__("gradient", grad))"""
_CLEANUP = """\
        handle.remove()
        for param, grad in grads:
            param.grad = grad"""


def cam(
    keep=_KEEP,
    saved="None if param.grad is None else param.grad.clone()",
    objective="scores[torch.arange(len(images)), target].sum()",
    cleanup=_CLEANUP,
    reduce="mean(dim=(2, 3), keepdim=True)",
    result='F.relu((weights * kept["activation"]).sum(dim=1))',
):
    return _CAM.format(
        keep=keep,
        saved=saved,
        objective=objective,
        cleanup=cleanup,
        reduce=reduce,
        result=result,
    )


_PATCH = """
def patch_activation(model, layer, clean, corrupted):
    recorded = []
    handle = layer.register_forward_hook(lambda module, inputs, output: recorded.append(output.detach().clone()))
    try:
        with torch.no_grad():
            model({source})
    finally:
        handle.remove()
    replacements = iter(recorded)
    handle = {where}.register_forward_hook({patch})
    try:
        with torch.no_grad():
            return model({target})
    finally:
        handle.remove()
"""


def patch(
    source="clean",
    target="corrupted",
    where="layer",
    patch="lambda module, inputs, output: next(replacements)",
):
    return _PATCH.format(source=source, target=target, where=where, patch=patch)


_SPARSITY = """
def pruned_sparsity(model):
    found = {{}}
    for path, module in model.{walk}():
        for hook in module._forward_pre_hooks.values():
            if {test}:
                name = hook._tensor_name
                mask = getattr(module, name + "_mask")
                found[{key}] = {value}
    return found
"""


def sparsity(
    walk="named_modules",
    test="isinstance(hook, prune.BasePruningMethod)",
    key='f"{path}.{name}" if path else name',
    value="(mask == 0).float().mean().item()",
):
    return _SPARSITY.format(walk=walk, test=test, key=key, value=value)


ANSWERS = [
    # -- grad_cam ------------------------------------------------------------------------------
    wrong(
        "grad_cam",
        "the ReLU on each channel's term, before the sum",
        "wrong formula",
        cam(result='F.relu(weights * kept["activation"]).sum(dim=1)'),
        "✗ each map is the ReLU of the channels weighted",
        "The ReLU comes last, on the weighted sum over the channels",
    ),
    wrong(
        "grad_cam",
        "clamp on each weighted channel in a loop, then the sum",
        "wrong formula",
        cam(
            result='sum((weights[:, c] * kept["activation"][:, c]).clamp(min=0) for c in range(weights.shape[1]))'
        ),
        "✗ each map is the ReLU of the channels weighted",
        "The ReLU comes last, on the weighted sum over the channels",
    ),
    wrong(
        "grad_cam",
        "a full backward hook",
        "the wrong hook kind",
        """
def grad_cam(model, layer, images, target):
    kept = {}

    def keep_output(module, inputs, output):
        kept["activation"] = output.detach().clone()

    def keep_gradient(module, grad_input, grad_output):
        kept["gradient"] = grad_output[0]

    grads = [(param, None if param.grad is None else param.grad.clone()) for param in model.parameters()]
    handles = [layer.register_forward_hook(keep_output), layer.register_full_backward_hook(keep_gradient)]
    try:
        scores = model(images)
        scores[torch.arange(len(images)), target].sum().backward()
    finally:
        for handle in handles:
            handle.remove()
        for param, grad in grads:
            param.grad = grad
    weights = kept["gradient"].mean(dim=(2, 3), keepdim=True)
    return F.relu((weights * kept["activation"]).sum(dim=1))
""",
        "✗ grad_cam raised RuntimeError: Output 0 of BackwardHookFunction is a view",
        "A tensor hook on the output (registered from a forward hook) sees the same gradient",
    ),
    wrong(
        "grad_cam",
        "detach without clone",
        "wrong argument",
        cam(keep=_KEEP.replace("output.detach().clone()", "output.detach()")),
        "✗ each map is the ReLU of the channels weighted by the spatial mean of the target score's "
        "gradient (in eval mode, in-place ReLUs, three targets)",
        "output.detach() shares that memory",
    ),
    wrong(
        "grad_cam",
        "retain_grad, read after the in-place ReLU",
        "the wrong hook kind",
        """
def grad_cam(model, layer, images, target):
    kept = {}

    def keep(module, inputs, output):
        kept["activation"] = output.detach().clone()
        output.retain_grad()
        kept["output"] = output

    grads = [(param, None if param.grad is None else param.grad.clone()) for param in model.parameters()]
    handle = layer.register_forward_hook(keep)
    try:
        scores = model(images)
        scores[torch.arange(len(images)), target].sum().backward()
    finally:
        handle.remove()
        for param, grad in grads:
            param.grad = grad
    weights = kept["output"].grad.mean(dim=(2, 3), keepdim=True)
    return F.relu((weights * kept["activation"]).sum(dim=1))
""",
        "✗ each map is the ReLU of the channels weighted by the spatial mean",
        "retain_grad() and torch.autograd.grad on it both follow the new values",
    ),
    wrong(
        "grad_cam",
        "the gradient summed, not averaged",
        "wrong formula",
        cam(reduce="sum(dim=(2, 3), keepdim=True)"),
        "✗ each map is the ReLU of the channels weighted by the spatial mean",
        "a sum scales every map by h x w",
    ),
    wrong(
        "grad_cam",
        "one weight per channel for the whole batch",
        "wrong formula",
        cam(reduce="mean(dim=(0, 2, 3), keepdim=True)"),
        "✗ each map is the ReLU of the channels weighted",
        "not over the batch too",
    ),
    wrong(
        "grad_cam",
        "no ReLU",
        "wrong formula",
        cam(result='(weights * kept["activation"]).sum(dim=1)'),
        "✗ each map is the ReLU of the channels weighted",
        "negative values must become 0",
    ),
    wrong(
        "grad_cam",
        "the predicted class",
        "wrong argument",
        cam(objective="scores[torch.arange(len(images)), scores.argmax(dim=1)].sum()"),
        "✗ each map is the ReLU of the channels weighted",
        "need not be the class the model predicts",
    ),
    wrong(
        "grad_cam",
        "scores[:, target]",
        "wrong argument",
        cam(objective="scores[:, target].sum()"),
        "✗ each map is the ReLU of the channels weighted",
        "picks every target's column for every image",
    ),
    wrong(
        "grad_cam",
        "the loss",
        "wrong formula",
        cam(objective="F.cross_entropy(scores, torch.as_tensor(target).expand(len(images)))"),
        "✗ each map is the ReLU of the channels weighted",
        "not a probability, a log-probability or a loss",
    ),
    wrong(
        "grad_cam",
        "upsampled to the image",
        "wrong place",
        cam(
            result='F.interpolate(F.relu((weights * kept["activation"]).sum(dim=1, keepdim=True)), size=images.shape[2:], mode="bilinear")[:, 0]'
        ),
        "✗ its shape is (N, h, w) = (4, 4, 4), the layer output's resolution",
        "it has shape (4, 8, 8)",
        "leave out the upsampling",
    ),
    wrong(
        "grad_cam",
        "zero_grad instead of the old gradients",
        "the caller's model changed",
        cam(
            saved="None",
            cleanup="        handle.remove()\n        model.zero_grad(set_to_none=True)",
        ),
        "✗ every parameter's .grad is as it was: the gradients an earlier step left",
        "0.weight.grad changed",
        "set_to_none or zero_grad wipes what was there",
    ),
    wrong(
        "grad_cam",
        "the old gradients kept by reference",
        "the caller's model changed",
        cam(saved="param.grad"),
        "✗ every parameter's .grad is as it was: the gradients an earlier step left",
        "not of the references: backward adds into the same tensors",
    ),
    wrong(
        "grad_cam",
        "model.eval() inside",
        "the caller's model changed",
        cam().replace("    kept = {}\n", "    model.eval()\n    kept = {}\n", 1),
        "✗ the model is still in training mode",
        "Leave the model in the mode you found it in",
    ),
    wrong(
        "grad_cam",
        "in-place ReLUs turned off for a full backward hook",
        "the caller's model changed",
        """
def grad_cam(model, layer, images, target):
    for module in model.modules():
        if isinstance(module, nn.ReLU):
            module.inplace = False
    kept = {}
    grads = [(param, None if param.grad is None else param.grad.clone()) for param in model.parameters()]
    handles = [
        layer.register_forward_hook(lambda module, inputs, output: kept.__setitem__("activation", output.detach())),
        layer.register_full_backward_hook(lambda module, grad_input, grad_output: kept.__setitem__("gradient", grad_output[0])),
    ]
    try:
        scores = model(images)
        scores[torch.arange(len(images)), target].sum().backward()
    finally:
        for handle in handles:
            handle.remove()
        for param, grad in grads:
            param.grad = grad
    weights = kept["gradient"].mean(dim=(2, 3), keepdim=True)
    return F.relu((weights * kept["activation"]).sum(dim=1))
""",
        "✗ its layers' settings are as they were, in-place ReLUs included (in eval mode",
        "turning its ReLUs' inplace off",
    ),
    wrong(
        "grad_cam",
        "the hook never removed",
        "a hook never removed",
        cam(cleanup=_CLEANUP.replace("        handle.remove()\n", "")),
        "✗ no hook is left on the model (in eval mode, in-place ReLUs, three targets)",
        "1 hook is left: forward hook",
        "Keep the handle that register_*_hook returns",
    ),
    wrong(
        "grad_cam",
        "under torch.no_grad()",
        "wrong place",
        cam().replace(
            "        scores = model(images)",
            "        with torch.no_grad():\n            scores = model(images)",
        ),
        "✗ keep raised RuntimeError: cannot register a hook on a tensor that doesn't require gradient",
        "it can only be registered on a tensor that requires grad",
    ),
    wrong(
        "grad_cam",
        "parameters frozen and left frozen",
        "a frozen parameter",
        """
def grad_cam(model, layer, images, target):
    kept = {}
    model.requires_grad_(False)  # so that backward leaves .grad alone
    images = images.detach().requires_grad_(True)

    def keep(module, inputs, output):
        kept["activation"] = output.detach().clone()
        output.register_hook(lambda grad: kept.__setitem__("gradient", grad))

    with layer.register_forward_hook(keep):
        scores = model(images)
        scores[torch.arange(len(images)), target].sum().backward()
    weights = kept["gradient"].mean(dim=(2, 3), keepdim=True)
    return F.relu((weights * kept["activation"]).sum(dim=1))
""",
        "✗ every parameter still trains: it requires grad (in eval mode",
        "requires_grad=False: no optimizer changes them",
    ),
    correct(
        "grad_cam",
        "a forward hook that returns a copy, and torch.autograd.grad",
        """
def grad_cam(model, layer, images, target):
    # The hook's return value replaces the output: the in-place ReLU then changes the copy, and
    # the layer's own output stays intact for autograd.grad, which touches no parameter's .grad.
    seen = []
    handle = layer.register_forward_hook(lambda module, inputs, output: seen.append(output) or output.clone())
    try:
        scores = model(images)
    finally:
        handle.remove()
    rows = torch.arange(images.shape[0])
    targets = torch.as_tensor(target).expand(images.shape[0])
    (gradient,) = torch.autograd.grad(scores[rows, targets].sum(), seen[0])
    activation = seen[0].detach()
    return torch.clamp(torch.einsum("nc,nchw->nhw", gradient.mean(dim=(2, 3)), activation), min=0)
""",
    ),
    correct(
        "grad_cam",
        "parameters frozen for the call, then restored",
        """
import contextlib


def grad_cam(model, layer, images, target):
    flags = [(param, param.requires_grad) for param in model.parameters()]
    record = {}

    def on_output(module, inputs, output):
        record["A"] = output.detach().clone()
        output.register_hook(lambda grad: record.update(dA=grad.detach()))

    x = images.detach().clone().requires_grad_(True)  # the graph needs a leaf; not the caller's tensor
    with contextlib.ExitStack() as stack:
        for param, _ in flags:
            param.requires_grad_(False)
        stack.callback(lambda: [param.requires_grad_(flag) for param, flag in flags])
        stack.enter_context(layer.register_forward_hook(on_output))
        out = model(x)
        n = out.shape[0]
        picked = out.gather(1, torch.as_tensor(target).reshape(-1, 1).expand(n, 1))
        picked.sum().backward()
    alpha = record["dA"].mean(dim=-1).mean(dim=-1)[:, :, None, None]
    return (alpha * record["A"]).sum(dim=1).relu()
""",
    ),
    cheat(
        "grad_cam",
        "the last convolution, whatever layer it is given",
        cam().replace(
            "    kept = {}\n",
            "    kept = {}\n    layer = [m for m in model if isinstance(m, nn.Conv2d)][-1]\n",
            1,
        ),
    ),
    # -- patch_activation ----------------------------------------------------------------------
    wrong(
        "patch_activation",
        "the hook assigns to output and returns nothing",
        "a hook's return value ignored",
        """
def patch_activation(model, layer, clean, corrupted):
    recorded = []

    def record(module, inputs, output):
        recorded.append(output.detach().clone())

    def patch(module, inputs, output):
        output = recorded.pop(0)

    handle = layer.register_forward_hook(record)
    try:
        with torch.no_grad():
            model(clean)
    finally:
        handle.remove()
    handle = layer.register_forward_hook(patch)
    try:
        with torch.no_grad():
            return model(corrupted)
    finally:
        handle.remove()
""",
        "✗ it is the output on corrupted with first's output from the clean run (a residual network)",
        "assigning to the output argument rebinds a local name",
    ),
    wrong(
        "patch_activation",
        "a dict keyed by the module",
        "global state shared across calls or modules",
        """
def patch_activation(model, layer, clean, corrupted):
    outputs = {}
    handle = layer.register_forward_hook(lambda module, inputs, output: outputs.__setitem__(module, output.detach().clone()))
    try:
        with torch.no_grad():
            model(clean)
    finally:
        handle.remove()
    handle = layer.register_forward_hook(lambda module, inputs, output: outputs[module])
    try:
        with torch.no_grad():
            return model(corrupted)
    finally:
        handle.remove()
""",
        "✗ it is the output on corrupted with first's outputs from the clean run (its first block shared by two call sites)",
        "a record keyed by the module keeps only its last call's output",
    ),
    wrong(
        "patch_activation",
        "the clean outputs cached across calls",
        "global state shared across calls or modules",
        """
def patch_activation(model, layer, clean, corrupted, cache={}):
    if layer not in cache:
        recorded = []
        handle = layer.register_forward_hook(lambda module, inputs, output: recorded.append(output.detach().clone()))
        try:
            with torch.no_grad():
                model(clean)
        finally:
            handle.remove()
        cache[layer] = recorded
    replacements = iter(cache[layer])
    handle = layer.register_forward_hook(lambda module, inputs, output: next(replacements))
    try:
        with torch.no_grad():
            return model(corrupted)
    finally:
        handle.remove()
""",
        "✗ called again with another clean input, it patches with that one (a residual network)",
        "carries over between calls",
    ),
    wrong(
        "patch_activation",
        "a shared block's outputs handed back last first (pop())",
        "wrong formula",
        patch(patch="lambda module, inputs, output: recorded.pop()"),
        "✓ it is the output on corrupted with first's output from the clean run (a residual network)",
        "✗ it is the output on corrupted with first's outputs from the clean run (its first block shared by two call sites)",
        "its calls got the clean run's outputs in the wrong order",
    ),
    wrong(
        "patch_activation",
        "a shared block's outputs reversed before patching",
        "wrong formula",
        patch().replace("replacements = iter(recorded)", "replacements = reversed(recorded)"),
        "✗ it is the output on corrupted with first's outputs from the clean run (its first block shared by two call sites)",
        "in the wrong order",
    ),
    wrong(
        "patch_activation",
        "the other way round",
        "wrong argument",
        patch(source="corrupted", target="clean"),
        "✗ it is the output on corrupted with first's output from the clean run (a residual network)",
        "The patch went the other way",
        # the same cause again, with another clean input: pointed back to, not blamed anew
        "✗ called again with another clean input, it patches with that one (a residual network)",
        "Hint: as above.",
    ),
    wrong(
        "patch_activation",
        "the whole model's output patched",
        "wrong place",
        patch().replace("layer.register_forward_hook", "model.register_forward_hook"),
        "✗ it is the output on corrupted with first's output from the clean run (a residual network)",
        "Hook the layer you were given, in the corrupted run only",
    ),
    wrong(
        "patch_activation",
        "hooks never removed",
        "a hook never removed",
        patch().replace("    finally:\n        handle.remove()\n", "    finally:\n        pass\n"),
        "✗ no hook is left on the model (a residual network)",
        "hooks are left",
        "Keep the handle that register_*_hook returns",
    ),
    wrong(
        "patch_activation",
        "removed only when nothing raised",
        "a hook never removed",
        """
def patch_activation(model, layer, clean, corrupted):
    recorded = []
    handle = layer.register_forward_hook(lambda module, inputs, output: recorded.append(output.detach().clone()))
    with torch.no_grad():
        model(clean)
    handle.remove()
    replacements = iter(recorded)
    handle = layer.register_forward_hook(lambda module, inputs, output: next(replacements))
    with torch.no_grad():
        result = model(corrupted)
    handle.remove()
    return result
""",
        "✗ and no hook is left then (a residual network)",
        "remove each hook in the finally of a try",
    ),
    wrong(
        "patch_activation",
        "the error swallowed",
        "a hook never removed",
        patch().replace(
            "    try:\n        with torch.no_grad():\n            return model(corrupted)\n    finally:",
            "    try:\n        with torch.no_grad():\n            return model(corrupted)\n    except ValueError:\n        return None\n    finally:",
        ),
        "✗ when only the patched forward raises, the error reaches the caller (a residual network)",
        "it did not raise (expected ValueError)",
        "do not catch the error",
    ),
    wrong(
        "patch_activation",
        "the layer's patched output returned",
        "wrong type",
        """
def patch_activation(model, layer, clean, corrupted):
    recorded = []
    handle = layer.register_forward_hook(lambda module, inputs, output: recorded.append(output.detach().clone()))
    try:
        with torch.no_grad():
            model(clean)
    finally:
        handle.remove()
    return recorded[-1]
""",
        "✗ it is the model's output, of shape (2, 3) (a residual network)",
        "it has shape (2, 8)",
        "not the layer's output",
    ),
    correct(
        "patch_activation",
        "one hook object that records, then replaces",
        """
class Patcher:
    def __init__(self):
        self.recorded, self.replaying, self.calls = [], False, 0

    def __call__(self, module, inputs, output):
        if not self.replaying:
            self.recorded.append(output.detach().clone())
            return None
        self.calls += 1
        return self.recorded[self.calls - 1]


def patch_activation(model, layer, clean, corrupted):
    patcher = Patcher()
    with layer.register_forward_hook(patcher), torch.no_grad():
        model(clean)
        patcher.replaying = True
        return model(corrupted)
""",
    ),
    correct(
        "patch_activation",
        "copy_ into the output, counted calls",
        """
def patch_activation(model, layer, clean, corrupted):
    clean_outputs = []

    def record(module, inputs, output):
        clean_outputs.append(output.detach().clone())

    calls = [0]

    def overwrite(module, inputs, output):
        output.copy_(clean_outputs[calls[0]])  # under no_grad: the output's values are replaced in place
        calls[0] += 1

    for hook, x in ((record, clean), (overwrite, corrupted)):
        handle = layer.register_forward_hook(hook)
        try:
            with torch.no_grad():
                result = model(x)
        finally:
            handle.remove()
    return result
""",
    ),
    cheat(
        "patch_activation",
        "always the first block",
        patch().replace(
            "    recorded = []\n",
            '    recorded = []\n    layer = getattr(model, "first", layer)\n',
            1,
        ),
    ),
    # -- pruned_sparsity -----------------------------------------------------------------------
    wrong(
        "pruned_sparsity",
        "pruning methods as a fixed list of classes",
        "hard-coded to the visible model",
        sparsity(
            test="isinstance(hook, (prune.L1Unstructured, prune.RandomUnstructured, prune.LnStructured))"
        ),
        "✗ one entry per pruned tensor",
        "test for the base class",
    ),
    wrong(
        "pruned_sparsity",
        "a list of classes with CustomFromMask, but no PruningContainer",
        "hard-coded to the visible model",
        sparsity(
            test="type(hook) in (prune.L1Unstructured, prune.RandomUnstructured, prune.LnStructured, prune.CustomFromMask)"
        ),
        "✗ one entry per pruned tensor",
        "test for the base class",
    ),
    wrong(
        "pruned_sparsity",
        "every buffer named *_mask",
        "wrong place",
        """
def pruned_sparsity(model):
    found = {}
    for path, module in model.named_modules():
        for name, buffer in module.named_buffers(recurse=False):
            if name.endswith("_mask"):
                tensor = name[: -len("_mask")]
                found[f"{path}.{tensor}" if path else tensor] = (buffer == 0).float().mean().item()
    return found
""",
        "✗ one entry per pruned tensor",
        "'0.padding'",
        "need not be pruning's",
    ),
    wrong(
        "pruned_sparsity",
        "weight_mask by name",
        "wrong place",
        """
def pruned_sparsity(model):
    found = {}
    for path, module in model.named_modules():
        if hasattr(module, "weight_mask"):
            found[f"{path}.weight" if path else "weight"] = (module.weight_mask == 0).float().mean().item()
    return found
""",
        "✗ one entry per pruned tensor, named as named_parameters() named it: '0.weight', '2.weight', '6.bias'",
        "missing '6.bias'",
        "instead of looking for a weight_mask",
    ),
    wrong(
        "pruned_sparsity",
        "zeros of every weight",
        "wrong place",
        """
def pruned_sparsity(model):
    return {name: (param == 0).float().mean().item() for name, param in model.named_parameters() if name.endswith("weight")}
""",
        "✗ one entry per pruned tensor",
        "is not pruned. Look for the forward pre-hooks that are pruning methods",
    ),
    wrong(
        "pruned_sparsity",
        "the zeros of the pruned tensor",
        "wrong formula",
        sparsity(value="(getattr(module, name) == 0).float().mean().item()"),
        "✗ each is the fraction of the tensor's entries that its mask removes (a CNN, each layer pruned by another method)",
        "a bias that starts at zero",
    ),
    wrong(
        "pruned_sparsity",
        "the fraction kept",
        "wrong formula",
        sparsity(value="mask.float().mean().item()"),
        "✗ each is the fraction of the tensor's entries that its mask removes",
        "That is the fraction of entries the mask keeps",
    ),
    wrong(
        "pruned_sparsity",
        "the amount asked for",
        "wrong formula",
        sparsity(value="float(hook.amount)"),
        "✗ each is the fraction of the tensor's entries that its mask removes (a CNN, each layer pruned by another method)",
        "amount is what the pruning call was asked for, not what it did",
    ),
    wrong(
        "pruned_sparsity",
        "named_children",
        "the root forgotten",
        sparsity(walk="named_children"),
        "✗ one entry per pruned tensor, named as named_parameters() named it: '0.0.weight', '0.2.weight'",
        "named_children() gives only the first level",
    ),
    wrong(
        "pruned_sparsity",
        "L1Unstructured only",
        "wrong type",
        sparsity(test="isinstance(hook, prune.L1Unstructured)"),
        "✗ one entry per pruned tensor",
        "missing '2.weight', '6.bias'",
        "test for the base class",
    ),
    wrong(
        "pruned_sparsity",
        "keyed by the module's path",
        "wrong argument",
        sparsity(key="path"),
        "✗ one entry per pruned tensor",
        "A key names the tensor, not only the module",
    ),
    wrong(
        "pruned_sparsity",
        "the root's weight as '.weight'",
        "the root forgotten",
        sparsity(key='f"{path}.{name}"'),
        "✗ one entry per pruned tensor, named as named_parameters() named it: 'weight' (a bare nn.Linear)",
        "unexpected '.weight'",
        "no leading dot",
    ),
    wrong(
        "pruned_sparsity",
        "tensors for sparsities",
        "wrong type",
        sparsity(value="(mask == 0).float().mean()"),
        "✗ each sparsity is a Python float",
        "a Tensor of shape ()",
        ".item() turns a one-element tensor into one",
    ),
    wrong(
        "pruned_sparsity",
        "prune.remove to read the weight",
        "the caller's model changed",
        """
def pruned_sparsity(model):
    found = {}
    for path, module in model.named_modules():
        for hook in list(module._forward_pre_hooks.values()):
            if isinstance(hook, prune.BasePruningMethod):
                name = hook._tensor_name
                mask = getattr(module, name + "_mask").clone()
                prune.remove(module, name)
                found[f"{path}.{name}" if path else name] = (mask == 0).float().mean().item()
    return found
""",
        "✗ the model keeps its pruning: the same hooks, parameters and masks (a CNN",
        "prune.remove (or pruning again) changes",
    ),
    correct(
        "pruned_sparsity",
        "through hv.list_hooks",
        """
def pruned_sparsity(model):
    sparsity = {}
    for info in hv.list_hooks(model, include_globals=False):
        if info.kind == "forward_pre" and isinstance(info.hook, prune.BasePruningMethod):
            tensor = info.hook._tensor_name
            buffers = dict(info.module.named_buffers(recurse=False))
            mask = buffers[tensor + "_mask"]
            sparsity[".".join(part for part in (info.path, tensor) if part)] = 1.0 - mask.count_nonzero().item() / mask.numel()
    return sparsity
""",
    ),
    correct(
        "pruned_sparsity",
        "a generator of pruning hooks",
        """
def pruning_methods(model):
    for path, module in model.named_modules():
        for method in module._forward_pre_hooks.values():
            if isinstance(method, prune.BasePruningMethod):
                yield path, module, method._tensor_name


def pruned_sparsity(model):
    result = {}
    for path, module, tensor in pruning_methods(model):
        mask = getattr(module, f"{tensor}_mask")
        result[tensor if not path else path + "." + tensor] = float((mask == 0).sum()) / mask.numel()
    return result
""",
    ),
    cheat(
        "pruned_sparsity",
        "only the paths the visible models prune",
        sparsity(
            test='isinstance(hook, prune.BasePruningMethod) and path in ("", "0", "2", "6", "0.0", "0.2")'
        ),
    ),
]

# -- issue 41: what the clean run gave, kept as values of its own ------------------------------
_KEPT_AS = """
def patch_activation(model, layer, clean, corrupted):
    recorded = []
    handle = layer.register_forward_hook(lambda module, inputs, output: recorded.append({kept}))
    try:
        {clean_run}
    finally:
        handle.remove()
    replacements = iter(recorded)
    handle = layer.register_forward_hook(lambda module, inputs, output: next(replacements))
    try:
        {patched_run}
    finally:
        handle.remove()
"""


def kept_as(kept: str, no_grad: bool) -> str:
    """patch_activation keeping ``kept`` of the clean run, with or without torch.no_grad()."""
    clean_run, patched_run = "model(clean)", "return model(corrupted)"
    if no_grad:
        clean_run = "with torch.no_grad():\n            model(clean)"
        patched_run = "with torch.no_grad():\n            return model(corrupted)"
    return _KEPT_AS.format(kept=kept, clean_run=clean_run, patched_run=patched_run)


ANSWERS += [
    wrong(
        "patch_activation",
        "the clean outputs kept as they are, gradients on",
        "values kept without .detach().clone()",
        kept_as("output", no_grad=False),
        "✗ the patch is values: a backward pass from the output reaches no clean input (a residual network)",
        "autograd's graph leads from it back to the clean input",
        "never left autograd's graph",
        "✗ it is the output on corrupted with block's output from the clean run (an in-place add and ReLU right after block)",
        "write into the very tensor the layer returned",
    ),
    wrong(
        "patch_activation",
        "the clean outputs cloned, not detached, gradients on",
        "values kept without .detach().clone()",
        kept_as("output.clone()", no_grad=False),
        "✗ the patch is values: a backward pass from the output reaches no clean input (a residual network)",
        "never left autograd's graph",
    ),
    wrong(
        "patch_activation",
        "the clean outputs detached, not cloned",
        "values kept without .detach().clone()",
        kept_as("output.detach()", no_grad=True),
        "✗ it is the output on corrupted with block's output from the clean run (an in-place add and ReLU right after block)",
        "output.detach() (or output itself) shares that memory",
    ),
    wrong(
        "patch_activation",
        "the clean outputs kept as they are, under no_grad",
        "values kept without .detach().clone()",
        kept_as("output", no_grad=True),
        "✗ it is the output on corrupted with block's output from the clean run (an in-place add and ReLU right after block)",
        "Keep a copy of its own",
    ),
    correct(
        "patch_activation",
        "copies made with torch.clone under no_grad",
        kept_as("torch.clone(output)", no_grad=True),
    ),
    wrong(
        "grad_cam",
        "the activation cloned, not detached",
        "values kept without .detach().clone()",
        cam(
            keep=_KEEP.replace(
                'kept["activation"] = output.detach().clone()',
                'kept["activation"] = output.clone()',
            )
        ),
        "✗ the maps are values: a backward pass from them reaches no parameter of the model (in eval mode, in-place ReLUs, three targets)",
        "still part of the model's autograd graph",
    ),
]

# -- issue 43: a capture hook that compiles -----------------------------------------------------
_CAPTURE = """
def capture_latest(model, path):
    kept = {start}

    def keep(module, inputs, output):
{keep}

    handle = model.get_submodule(path).register_forward_hook(keep)
    return handle, lambda: {latest}
"""


def capture(
    start='{"output": None}',
    keep='        kept["output"] = output.detach().clone()',
    latest='kept["output"]',
):
    return _CAPTURE.format(start=start, keep=keep, latest=latest)


ANSWERS += [
    wrong(
        "capture_latest",
        "the naive hook: every output appended to a list",
        "global state shared across calls or modules",
        capture(start="[]", keep="        kept.append(output.detach().clone())", latest="kept[-1]"),
        "✗ compiled, no recompile in 10 steps (a CNN, its first convolution)",
        "recompiles: 8; the first guard that failed: 'not kept'",
        "The hook still changes the length of a list",
        "✗ dynamo traced the hook into its graph at every step",
        "it ran eagerly at steps (8, 9)",
    ),
    wrong(
        "capture_latest",
        "a dict that gets its key at the first call",
        "global state shared across calls or modules",
        capture(start="{}"),
        "✗ compiled, no recompile in 10 steps (a CNN, its first convolution)",
        "recompiles: 1; the first guard that failed: 'not kept'",
        "The store was empty when dynamo compiled",
    ),
    wrong(
        "capture_latest",
        "the output kept as it is",
        "values kept without .detach().clone()",
        capture(keep='        kept["output"] = output'),
        "✗ latest() gives the submodule's output after every step, eagerly and compiled (a CNN, its first convolution)",
        "latest() gives a tensor that still requires grad",
    ),
    wrong(
        "capture_latest",
        "the output detached, not cloned",
        "values kept without .detach().clone()",
        capture(keep='        kept["output"] = output.detach()'),
        "✗ latest() gives the submodule's output after every step, eagerly and compiled (a CNN, its first convolution)",
        "after step 0 of the eager run",
        "ReLU(inplace=True) wrote its result into it",
    ),
    wrong(
        "capture_latest",
        "kept on the first call only",
        "wrong place",
        capture(
            keep='        if kept["output"] is None:\n            kept["output"] = output.detach().clone()'
        ),
        "✗ latest() gives the submodule's output after every step, eagerly and compiled (a CNN, its first convolution)",
        "after step 1 of the eager run",
        "latest() still gives the first step's output",
    ),
    wrong(
        "capture_latest",
        "the hook returns its copy",
        "a hook's return value ignored",
        capture(
            keep='        kept["output"] = output.detach().clone()\n        return kept["output"]'
        ),
        "✗ the hook changes nothing the model computes: the same output and gradients as without it (a CNN, its first convolution)",
        "A forward hook that returns something replaces the module's output",
    ),
    wrong(
        "capture_latest",
        "the list hook with torch.compiler.disable",
        "wrong place",
        """
def capture_latest(model, path):
    outputs = []

    @torch.compiler.disable
    def keep(module, inputs, output):
        outputs.append(output.detach().clone())

    handle = model.get_submodule(path).register_forward_hook(keep)
    return handle, lambda: outputs[-1]
""",
        "✗ compiled, no graph break (a CNN, its first convolution)",
        "torch.compiler.disable keeps dynamo out of the hook",
        "✗ dynamo traced the hook into its graph at every step (a CNN, its first convolution)",
    ),
    wrong(
        "capture_latest",
        "nothing kept while compiling",
        "wrong place",
        capture(
            start="[]",
            keep="        if not torch.compiler.is_compiling():\n            kept.append(output.detach().clone())",
            latest="kept[-1]",
        ),
        "✗ latest() gives the submodule's output after every step, eagerly and compiled (a CNN, its first convolution)",
        "after step 0 of the compiled run latest() gave an IndexError",
        "kept nothing while dynamo compiled it",
    ),
    correct("capture_latest", "a dict that holds its key from the start", capture()),
    correct(
        "capture_latest",
        "a callable object keeping an attribute",
        """
class Latest:
    def __init__(self):
        self.value = None

    def __call__(self, module, inputs, output):
        self.value = output.detach().clone()


def capture_latest(model, path):
    latest = Latest()
    handle = model.get_submodule(path).register_forward_hook(latest)
    return handle, lambda: latest.value
""",
    ),
    correct(
        "capture_latest",
        "a one-slot list written in place",
        capture(start="[None]", keep="        kept[0] = output.detach().clone()", latest="kept[0]"),
    ),
]
