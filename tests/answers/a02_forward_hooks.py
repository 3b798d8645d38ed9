"""Assignment 2 (forward hooks): relu_output, add_bias, weight_initialization, hook, linear_transformation."""

from tests.answers import cheat, correct, wrong

ANSWERS = [
    # -- relu_output ---------------------------------------------------------------------------
    wrong(
        "relu_output",
        "never removes its hook",
        "a hook never removed",
        """
def relu_output(model, x):
    kept = []
    model[1].register_forward_hook(lambda module, inputs, output: kept.append(output))
    model(x)
    return kept[0]
""",
        "✗ no hook is left on the model (the blog's network)",
        "1 hook is left: forward hook <lambda> on 1",
        "Keep the handle",
    ),
    wrong(
        "relu_output",
        "removes it, but not when forward raises",
        "a hook never removed",
        """
def relu_output(model, x):
    kept = []
    handle = model[1].register_forward_hook(lambda module, inputs, output: kept.append(output))
    model(x)
    handle.remove()
    return kept[0]
""",
        "✗ and no hook is left on that model either (the blog's network)",
        "also when the job raises",
    ),
    wrong(
        "relu_output",
        "keeps the ReLU's input",
        "wrong argument",
        """
def relu_output(model, x):
    kept = []
    handle = model[1].register_forward_hook(lambda module, inputs, output: kept.append(inputs[0]))
    try:
        model(x)
    finally:
        handle.remove()
    return kept[0]
""",
        "✗ it is what model[1] output during that forward pass",
        "That is the tensor going into the ReLU",
    ),
    wrong(
        "relu_output",
        "a pre-hook",
        "the wrong hook kind",
        """
def relu_output(model, x):
    kept = []
    handle = model[1].register_forward_pre_hook(lambda module, inputs: kept.append(inputs[0]))
    try:
        model(x)
    finally:
        handle.remove()
    return kept[0]
""",
        "✗ it is what model[1] output during that forward pass",
        "a forward hook, not a pre-hook",
    ),
    wrong(
        "relu_output",
        "hooks the Linear",
        "wrong place",
        """
def relu_output(model, x):
    kept = []
    handle = model[0].register_forward_hook(lambda module, inputs, output: kept.append(output))
    try:
        model(x)
    finally:
        handle.remove()
    return kept[0]
""",
        "✗ it is what model[1] output during that forward pass",
        "model[0]'s output",
    ),
    wrong(
        "relu_output",
        "returns the model's output",
        "wrong argument",
        """
def relu_output(model, x):
    handle = model[1].register_forward_hook(lambda module, inputs, output: None)
    try:
        return model(x)
    finally:
        handle.remove()
""",
        "✗ it is what model[1] output during that forward pass",
        "That is the whole model's output",
    ),
    wrong(
        "relu_output",
        "assigns inside the hook",
        "wrong type",
        """
def relu_output(model, x):
    kept = None

    def keep(module, inputs, output):
        kept = output

    handle = model[1].register_forward_hook(keep)
    try:
        model(x)
    finally:
        handle.remove()
    return kept
""",
        "✗ relu_output returns a tensor",
        "it is None, expected a Tensor",
        "creates a variable local to the hook",
    ),
    wrong(
        "relu_output",
        "swallows the error",
        "a hook never removed",
        """
def relu_output(model, x):
    kept = []
    handle = model[1].register_forward_hook(lambda module, inputs, output: kept.append(output))
    try:
        model(x)
    except Exception:
        pass
    handle.remove()
    return kept[0] if kept else None
""",
        "✗ when model(x) raises, the error reaches the caller",
        "it did not raise (expected ValueError)",
        "try / except swallows it",
    ),
    wrong(
        "relu_output",
        "computes the layers itself",
        "wrong place",
        """
def relu_output(model, x):
    return model[1](model[0](x))
""",
        "✗ it runs model(x) once",
        "model(x) ran 0 times",
        "watch a real forward pass",
    ),
    correct(
        "relu_output",
        "a context manager and nonlocal",
        """
def relu_output(model, x):
    kept = None

    def keep(module, inputs, output):
        nonlocal kept
        kept = output

    with model[1].register_forward_hook(keep):
        model(x)
    return kept
""",
    ),
    correct(
        "relu_output",
        "a dict and a clone",
        """
def relu_output(model, x):
    seen = {}
    handle = model[1].register_forward_hook(lambda m, i, o: seen.update(out=o.clone()))
    try:
        model(x)
    finally:
        handle.remove()
    return seen["out"]
""",
    ),
    # -- add_bias ------------------------------------------------------------------------------
    wrong(
        "add_bias",
        "the blog's (2, 1)",
        "the blog's version",
        """
def add_bias(module):
    if is_function(module):
        module.b = nn.Parameter(torch.rand(2, 1))
""",
        "✗ each b has shape (2,): one bias per output feature",
        "is added per sample, not per feature",
    ),
    wrong(
        "add_bias",
        "hard-coded 2",
        "hard-coded to the visible model",
        """
def add_bias(module):
    if is_function(module):
        module.b = nn.Parameter(torch.rand(2))
""",
        "✗ each b has shape (3,): one bias per output feature, as W has 3 rows (3×4 weights)",
        "2 is right for the blog's model only",
    ),
    wrong(
        "add_bias",
        "in_features",
        "wrong formula",
        """
def add_bias(module):
    if is_function(module):
        module.b = nn.Parameter(torch.rand(module.W.shape[1]))
""",
        "✗ each b has shape (3,)",
        "its rows are the output features",
    ),
    wrong(
        "add_bias",
        "a plain tensor",
        "wrong type",
        """
def add_bias(module):
    if is_function(module):
        module.b = torch.rand(module.W.shape[0])
""",
        "✗ each b is an nn.Parameter",
        "ab.a.b is a Tensor of shape (2,)",
        "Wrap the tensor in nn.Parameter",
    ),
    wrong(
        "add_bias",
        "a buffer",
        "wrong type",
        """
def add_bias(module):
    if is_function(module):
        module.register_buffer("b", torch.rand(module.W.shape[0]))
""",
        "✗ each b is an nn.Parameter",
        "a buffer, stored on a module is not a parameter",
    ),
    wrong(
        "linear_transformation",
        "right, after a hook that forgets the transpose",
        "wrong formula",
        """
def hook(module, inputs, output):
    return inputs[0] @ module.W + module.b


def linear_transformation(module):
    if is_function(module):
        module.register_forward_hook(hook)
""",
        "✗ the 2×2 model computes x @ W.T + b in every Function",
        "because hook does",
    ),
    wrong(
        "linear_transformation",
        "right, after a hook that returns nothing",
        "a hook's return value ignored",
        """
def hook(module, inputs, output):
    output = inputs[0] @ module.W.T + module.b


def linear_transformation(module):
    if is_function(module):
        module.register_forward_hook(hook)
""",
        "✗ the 2×2 model computes x @ W.T + b in every Function",
        "fix hook first",
    ),
    wrong(
        "add_bias",
        "every module",
        "wrong place",
        """
def add_bias(module):
    module.b = nn.Parameter(torch.rand(2))
""",
        "✗ each Function gets a b, and no other module",
        "a b on the root, ab, cd too",
        "Give a b to the Functions only",
    ),
    wrong(
        "add_bias",
        "the shape of W",
        "wrong formula",
        """
def add_bias(module):
    if is_function(module):
        module.b = nn.Parameter(torch.rand(module.W.shape))
""",
        "✗ each b has shape (2,)",
        "a 1-dimensional tensor",
    ),
    wrong(
        "add_bias",
        "named bias",
        "wrong place",
        """
def add_bias(module):
    if is_function(module):
        module.bias = nn.Parameter(torch.rand(module.W.shape[0]))
""",
        "✗ each Function gets a b",
        "no b on ab.a, ab.b, cd.c, cd.d",
        "name it b",
    ),
    correct(
        "add_bias",
        "register_parameter and zeros",
        """
def add_bias(module):
    if is_function(module):
        module.register_parameter("b", nn.Parameter(torch.zeros(module.W.size(0))))
""",
    ),
    correct(
        "add_bias",
        "isinstance and empty",
        """
def add_bias(module):
    if isinstance(module, (hv.examples.Function_A, hv.examples.Function_B, hv.examples.Function_C, hv.examples.Function_D)):
        out_features, _ = module.W.shape
        module.b = nn.Parameter(torch.empty(out_features).uniform_())
""",
    ),
    cheat(
        "add_bias",
        "the two visible sizes",
        """
def add_bias(module):
    if is_function(module):
        module.b = nn.Parameter(torch.rand(2 if module.W.shape[0] == 2 else 3))
""",
    ),
    # -- weight_initialization -----------------------------------------------------------------
    wrong(
        "weight_initialization",
        "the blog's .data",
        "the blog's version",
        """
def weight_initialization(module):
    if is_function(module):
        module.W.data.fill_(1.0)
        module.b.data.fill_(1.0)
""",
        "✗ autograd saw every change (2×2 weights)",
        "ab.a.W, ab.a.b",
        "changed through .data",
    ),
    wrong(
        "weight_initialization",
        "recursive parameters()",
        "recursive parameters()",
        """
def weight_initialization(module):
    with torch.no_grad():
        for param in module.parameters():
            param.fill_(1.0)
""",
        "✗ each Function's W and b is written exactly once (2×2 weights)",
        "ab.a.W was written 3 times, at ab.a, ab and Model",
        "recurse argument",
    ),
    wrong(
        "weight_initialization",
        "fill_ with autograd on",
        "autograd left on",
        """
def weight_initialization(module):
    if is_function(module):
        module.W.fill_(1.0)
        module.b.fill_(1.0)
""",
        "✗ weight_initialization raised RuntimeError: a leaf Variable that requires grad",
        "torch.no_grad()",
    ),
    wrong(
        "weight_initialization",
        "only W",
        "wrong place",
        """
def weight_initialization(module):
    if is_function(module):
        with torch.no_grad():
            module.W.fill_(1.0)
""",
        "✗ every Function's W and b is 1 (2×2 weights)",
        "not all ones: ab.a.b",
        "Set both W and b",
    ),
    wrong(
        "weight_initialization",
        "new Parameters of the visible shape",
        "hard-coded to the visible model",
        """
def weight_initialization(module):
    if is_function(module):
        module.W = nn.Parameter(torch.ones(2, 2))
        module.b = nn.Parameter(torch.ones(2))
""",
        "✗ every W and b is still the same Parameter object (2×2 weights)",
        "are new Parameter objects",
        "optimizer",
    ),
    wrong(
        "weight_initialization",
        "copy_ from a 2×2 tensor",
        "hard-coded to the visible model",
        """
def weight_initialization(module):
    if is_function(module):
        with torch.no_grad():
            module.W.copy_(torch.ones(2, 2))
            module.b.copy_(torch.ones(2))
""",
        "✗ weight_initialization raised RuntimeError: The size of tensor a (4) must match",
        "broadcasts to the parameter's shape",
    ),
    wrong(
        "weight_initialization",
        "W.data = ones",
        ".data",
        """
def weight_initialization(module):
    if is_function(module):
        module.W.data = torch.ones_like(module.W)
        module.b.data = torch.ones_like(module.b)
""",
        "✗ autograd saw every change",
        "changed through .data",
    ),
    correct(
        "weight_initialization",
        "slice assignment under a decorator",
        """
@torch.no_grad()
def weight_initialization(module):
    if hasattr(module, "W"):
        module.W[:] = 1.0
        module.b[:] = 1.0
""",
    ),
    correct(
        "weight_initialization",
        "nn.init on own parameters",
        """
def weight_initialization(module):
    if is_function(module):
        for param in module.parameters(recurse=False):
            nn.init.ones_(param)
""",
    ),
    # -- hook ----------------------------------------------------------------------------------
    wrong(
        "hook",
        "the blog's x @ W + b",
        "the blog's version",
        """
def hook(module, inputs, output):
    return inputs[0] @ module.W + module.b
""",
        "✗ hook returns x @ W.T + b for two samples",
        "multiplies by W as stored",
        "✗ hook raised RuntimeError: mat1 and mat2 shapes cannot be multiplied",
    ),
    wrong(
        "hook",
        "uses the output",
        "wrong argument",
        """
def hook(module, inputs, output):
    return output @ module.W.T + module.b
""",
        "✗ hook returns x @ W.T + b for two samples",
        "output is what the Function's own forward returned",
    ),
    wrong(
        "hook",
        "forgets the bias",
        "wrong formula",
        """
def hook(module, inputs, output):
    return inputs[0] @ module.W.T
""",
        "✗ hook returns x @ W.T + b",
        "adds the bias b after the product",
    ),
    wrong(
        "hook",
        "forgets to return",
        "wrong type",
        """
def hook(module, inputs, output):
    inputs[0] @ module.W.T + module.b
""",
        "✗ hook returns a tensor for two samples",
        "it is None, expected a Tensor",
        "Without a return statement",
    ),
    wrong(
        "hook",
        "the tuple itself",
        "wrong argument",
        """
def hook(module, inputs, output):
    return inputs @ module.W.T + module.b
""",
        "✗ hook raised TypeError: unsupported operand type(s) for @: 'tuple' and 'Tensor'",
        "inputs is the tuple of positional arguments",
    ),
    wrong(
        "hook",
        "through .data",
        ".data",
        """
def hook(module, inputs, output):
    return inputs[0] @ module.W.data.T + module.b.data
""",
        "✗ the result is connected to W and b, so training can change them (two samples)",
        "autograd finds no path",
        "cuts the graph",
    ),
    wrong(
        "hook",
        "W on the left",
        "wrong formula",
        """
def hook(module, inputs, output):
    return module.W @ inputs[0] + module.b
""",
        "✗ hook returns x @ W.T + b for two samples",
        "the input times W transposed",
    ),
    correct(
        "hook",
        "F.linear",
        """
def hook(module, inputs, output):
    (x,) = inputs
    return nn.functional.linear(x, module.W, module.b)
""",
    ),
    correct(
        "hook",
        "matmul and t()",
        """
def hook(module, inputs, output):
    return torch.matmul(inputs[0], module.W.t()) + module.b
""",
    ),
    cheat(
        "hook",
        "only the visible widths",
        """
def hook(module, inputs, output):
    if module.W.shape[0] in (2, 3):
        return inputs[0] @ module.W.T + module.b
""",
    ),
    # -- linear_transformation -----------------------------------------------------------------
    wrong(
        "linear_transformation",
        "every module",
        "the root forgotten",
        """
def linear_transformation(module):
    module.register_forward_hook(hook)
""",
        "✗ one forward hook on each Function, and none on any other module",
        "forward hooks on the root (Model), ab and cd too",
        "register the hook on the Functions only",
    ),
    wrong(
        "linear_transformation",
        "a pre-hook",
        "the wrong hook kind",
        """
def linear_transformation(module):
    if is_function(module):
        module.register_forward_pre_hook(hook)
""",
        "✗ one forward hook on each Function",
        "4 hooks are of another kind (forward pre)",
        "A forward pre-hook runs before forward",
        "PyTorch called a hook with arguments it does not take",
    ),
    wrong(
        "linear_transformation",
        "a full backward hook",
        "the wrong hook kind",
        """
def linear_transformation(module):
    if is_function(module):
        module.register_full_backward_hook(hook)
""",
        "✗ one forward hook on each Function",
        "of another kind (backward)",
        "A forward pre-hook runs before forward",
    ),
    wrong(
        "linear_transformation",
        "never registers",
        "wrong formula",
        """
def linear_transformation(module):
    if is_function(module):
        module.register_forward_hook
""",
        "✗ one forward hook on each Function",
        "no forward hook on ab.a, ab.b, cd.c and cd.d",
        "with register_forward_hook",
        "✗ the 2×2 model computes x @ W.T + b",
    ),
    wrong(
        "linear_transformation",
        "on the Layers",
        "wrong place",
        """
def linear_transformation(module):
    if type(module).__name__.startswith("Layer"):
        module.register_forward_hook(hook)
""",
        "✗ one forward hook on each Function",
        "forward hooks on ab and cd too",
        "no forward hook on ab.a",
    ),
    wrong(
        "linear_transformation",
        "twice",
        "wrong formula",
        """
def linear_transformation(module):
    if is_function(module):
        module.register_forward_hook(hook)
        module.register_forward_hook(hook)
""",
        "✗ one forward hook on each Function",
        "ab.a, ab.b, cd.c and cd.d have more than one",
        "exactly once each",
    ),
    wrong(
        "linear_transformation",
        "replaces forward",
        "the wrong hook kind",
        """
def linear_transformation(module):
    if is_function(module):
        module.forward = lambda x: hook(module, (x,), None)
""",
        "✗ one forward hook on each Function",
        "no forward hook on ab.a",
        "with register_forward_hook",
    ),
    correct(
        "linear_transformation",
        "hasattr and a wrapper",
        """
def linear_transformation(module):
    if hasattr(module, "W"):
        module.register_forward_hook(lambda m, i, o: hook(m, i, o))
""",
    ),
    correct(
        "linear_transformation",
        "prepend",
        """
def linear_transformation(module):
    if type(module).__name__ in {"Function_A", "Function_B", "Function_C", "Function_D"}:
        module.register_forward_hook(hook, prepend=True)
""",
    ),
    cheat(
        "linear_transformation",
        "only models up to 3×3",
        """
def linear_transformation(module):
    if is_function(module) and module.W.shape[0] <= 3:
        module.register_forward_hook(hook)
""",
    ),
]

# -- course v3 (issue 21): removing others' hooks, frozen or hidden biases, a float64 bias ---
ANSWERS += [
    wrong(
        "relu_output",
        "clears the hook dict in finally",
        "a hook it did not add removed",
        """
def relu_output(model, x):
    kept = []
    model[1].register_forward_hook(lambda module, inputs, output: kept.append(output))
    try:
        model(x)
    finally:
        model[1]._forward_hooks.clear()
    return kept[0]
""",
        "✗ a hook someone else had registered on model[1] is still there (the blog's network)",
        "relu_output removed a hook it did not register",
        "Clearing model[1]._forward_hooks",
    ),
    wrong(
        "relu_output",
        "hv.remove_hooks in finally",
        "a hook it did not add removed",
        """
def relu_output(model, x):
    kept = {}

    def keep(module, inputs, output):
        kept["out"] = output

    model[1].register_forward_hook(keep)
    try:
        model(x)
    finally:
        hv.remove_hooks(model[1])
    return kept["out"]
""",
        "✗ a hook someone else had registered on model[1] is still there (a smaller one)",
        "it is gone",
        "also removes hooks that someone else put there on purpose",
    ),
    wrong(
        "relu_output",
        "a fresh hook dict",
        "a hook it did not add removed",
        """
def relu_output(model, x):
    import collections

    kept = []
    model[1].register_forward_hook(lambda module, inputs, output: kept.append(output))
    try:
        model(x)
    finally:
        model[1]._forward_hooks = collections.OrderedDict()
    return kept[-1]
""",
        "✗ a hook someone else had registered on model[1] is still there",
        "Remove only the hook you registered, through its handle",
    ),
    correct(
        "relu_output",
        "pops its own id",
        """
def relu_output(model, x):
    kept = []
    handle = model[1].register_forward_hook(lambda module, inputs, output: kept.append(output))
    try:
        model(x)
    finally:
        model[1]._forward_hooks.pop(handle.id, None)
    return kept[0]
""",
    ),
    wrong(
        "add_bias",
        "requires_grad=False",
        "a frozen parameter",
        """
def add_bias(module):
    if is_function(module):
        module.b = nn.Parameter(torch.rand(module.W.shape[0]), requires_grad=False)
""",
        "✗ every W and b trains: it requires grad, and an optimizer step changes it (2×2 weights)",
        "ab.a.b, ab.b.b, cd.c.b and cd.d.b have requires_grad=False",
        "gets no gradient, so an optimizer never changes it",
    ),
    wrong(
        "add_bias",
        "frozen with requires_grad_(False)",
        "a frozen parameter",
        """
def add_bias(module):
    if is_function(module):
        module.b = nn.Parameter(torch.zeros(module.W.size(0)))
        module.b.requires_grad_(False)   # the next step fills it in place
""",
        "✗ every W and b trains",
        "have requires_grad=False",
        "freezes it for good",
    ),
    wrong(
        "add_bias",
        "written into __dict__",
        "wrong place",
        """
def add_bias(module):
    if is_function(module):
        module.__dict__["b"] = nn.Parameter(torch.rand(module.W.shape[0]))
""",
        "✗ each b is an nn.Parameter, so parameters() and optimizers see it (2×2 weights)",
        "ab.a.b is not among model.parameters()",
        "Writing into module.__dict__, or object.__setattr__, skips that step",
    ),
    wrong(
        "add_bias",
        "object.__setattr__",
        "wrong place",
        """
def add_bias(module):
    if is_function(module):
        object.__setattr__(module, "b", nn.Parameter(torch.rand(len(module.W))))
""",
        "✗ each b is an nn.Parameter, so parameters() and optimizers see it",
        "is not among model.parameters()",
        "every optimizer miss it",
    ),
    wrong(
        "add_bias",
        "a float64 bias from numpy",
        "wrong dtype",
        """
def add_bias(module):
    import numpy as np

    if is_function(module):
        module.b = nn.Parameter(torch.from_numpy(np.random.rand(module.W.shape[0])))
""",
        "✗ each b has W's dtype, torch.float32 (2×2 weights)",
        "ab.a.b has dtype torch.float64",
        "a tensor made by numpy",
    ),
    wrong(
        "add_bias",
        "dtype=torch.double",
        "wrong dtype",
        """
def add_bias(module):
    if is_function(module):
        module.b = nn.Parameter(torch.tensor([0.5] * module.W.shape[0], dtype=torch.double))
""",
        "✗ each b has W's dtype, torch.float32 (3×4 weights)",
        "has dtype torch.float64",
        "b must have the same dtype as W",
    ),
    correct(
        "add_bias",
        "numpy, then W's dtype",
        """
def add_bias(module):
    import numpy as np

    if is_function(module):
        values = torch.from_numpy(np.zeros(module.W.shape[0]))
        module.b = nn.Parameter(values.to(module.W.dtype))
""",
    ),
    wrong(
        "linear_transformation",
        "with a float64 add_bias",
        "wrong dtype",
        """
def add_bias(module):
    if is_function(module):
        module.b = nn.Parameter(torch.rand(module.W.shape[0], dtype=torch.float64))


def linear_transformation(module):
    if is_function(module):
        module.register_forward_hook(hook)
""",
        "raised RuntimeError: expected m1 and m2 to have the same dtype",
        "a matrix product got tensors of two dtypes",
        "usually a float64 tensor",
    ),
    wrong(
        "weight_initialization",
        "freezes W and b to fill them",
        "a frozen parameter",
        """
def weight_initialization(module):
    if is_function(module):
        for param in (module.W, module.b):
            param.requires_grad_(False)
            param.fill_(1.0)
""",
        "✗ every W and b still trains: it requires grad, and an optimizer step changes it (2×2 weights)",
        "have requires_grad=False",
        "Switching autograd off for a change is torch.no_grad()'s job",
    ),
    correct(
        "weight_initialization",
        "frozen for the fill, then trainable again",
        """
def weight_initialization(module):
    if not is_function(module):
        return
    for param in module.parameters(recurse=False):
        param.requires_grad = False
        param.fill_(1)
        param.requires_grad = True
""",
    ),
]

# -- the blind round (issue 21): each look-alike gets the hint of its own mistake --------------
ANSWERS += [
    wrong(
        "hook",
        "returns the new output inside a list",
        "wrong type",
        """
def hook(module, inputs, output):
    return [inputs[0] @ module.W.T + module.b]
""",
        "✗ hook returns a tensor for two samples",
        "it is a list of 1 items, expected a Tensor",
        "hook must return the new output, a tensor",
    ),
    wrong(
        "hook",
        "torch.addmm, which needs a 2-D input",
        "wrong formula",
        """
def hook(module, inputs, output):
    return torch.addmm(module.b, inputs[0], module.W.T)
""",
        "✗ hook raised RuntimeError: mat1 must be a matrix, got 1-D tensor",
        "a matrix product that needs 2-D matrices got a 1-D tensor",
        "The @ operator (torch.matmul) works on 1-D and 2-D inputs alike",
    ),
]

# -- the second blind round (issue 21) ---
ANSWERS += [
    wrong(
        "linear_transformation",
        "apply inside the function given to apply",
        "recursive parameters()",
        """
def linear_transformation(module):
    module.apply(lambda m: m.register_forward_hook(hook) if is_function(m) else None)
""",
        "✗ one forward hook on each Function, and none on any other module (the 2×2 model)",
        "ab.a, ab.b, cd.c and cd.d have more than one",
        "exactly once each",
    ),
    wrong(
        "linear_transformation",
        "registered with with_kwargs=True",
        "wrong argument",
        """
def linear_transformation(module):
    if is_function(module):
        module.register_forward_hook(hook, with_kwargs=True)
""",
        "✗ linear_transformation raised TypeError: hook() takes 3 positional arguments but 4 were given",
        "PyTorch called a hook with arguments it does not take",
        "a forward hook as hook(module, inputs, output)",
    ),
    wrong(
        "hook",
        "writes the result into output and returns nothing",
        "a hook's return value ignored",
        """
def hook(module, inputs, output):
    output.copy_(inputs[0] @ module.W.T + module.b)
""",
        "✗ hook returns a tensor for two samples",
        "it is None, expected a Tensor",
        "hook must return the new output",
    ),
]

# -- fixed after the second blind round (issue 21) ---------------------------------------------
ANSWERS += [
    wrong(
        "add_bias",
        "an integer bias from torch.arange",
        "wrong dtype",
        """
def add_bias(module):
    if is_function(module):
        module.b = nn.Parameter(torch.arange(module.W.shape[0]))
""",
        "✗ add_bias raised RuntimeError: Only Tensors of floating point and complex dtype can require gradients",
        "an integer tensor was asked to require grad",
        "A Parameter must hold floating-point values to require grad",
    ),
]

# -- issue 41: a leaf is not a Function; model[1] is not "the ReLU" ----------------------------
ANSWERS += [
    wrong(
        "linear_transformation",
        "hooks every leaf module",
        "a leaf taken for a Function",
        """
def linear_transformation(module):
    if not list(module.children()):
        module.register_forward_hook(hook)
""",
        "✗ one forward hook on each Function, and none on any other module (Rewired, 3×3)",
        "forward hooks on act and mix too",
        "A leaf is not the same as a Function",
    ),
    wrong(
        "linear_transformation",
        "hooks every module without children but the activations",
        "a leaf taken for a Function",
        """
def linear_transformation(module):
    if len(module._modules) == 0 and not isinstance(module, nn.ReLU):
        module.register_forward_hook(hook)
""",
        "✗ one forward hook on each Function, and none on any other module (Rewired, 3×3)",
        "forward hooks on mix too",
        "A leaf is not the same as a Function",
    ),
    wrong(
        "weight_initialization",
        "every module's own parameters, as in assignment 1",
        "wrong place",
        """
def weight_initialization(module):
    with torch.no_grad():
        for param in module.parameters(recurse=False):
            param.fill_(1.0)
""",
        "✗ no other parameter changes (Rewired, 3×3 weights)",
        "it changed parameters of no Function: mix.weight, mix.bias",
        "Rewired's nn.Linear has parameters of its own",
    ),
    wrong(
        "weight_initialization",
        "every leaf module's parameters",
        "a leaf taken for a Function",
        """
def weight_initialization(module):
    if not list(module.children()):
        with torch.no_grad():
            for param in module.parameters():
                param.fill_(1.0)
""",
        "✗ no other parameter changes (Rewired, 3×3 weights)",
        "ask is_function first",
    ),
    wrong(
        "add_bias",
        "every leaf module",
        "a leaf taken for a Function",
        """
def add_bias(module):
    if not list(module.children()):
        module.b = nn.Parameter(torch.rand(module.W.shape[0]))
""",
        "✗ add_bias raised AttributeError: 'ReLU' object has no attribute 'W'",
        "only some modules have that attribute",
    ),
    wrong(
        "relu_output",
        "the first ReLU, found by its type",
        "wrong place",
        """
def relu_output(model, x):
    kept = []
    relu = next(module for module in model.modules() if isinstance(module, nn.ReLU))
    handle = relu.register_forward_hook(lambda module, inputs, output: kept.append(output))
    try:
        model(x)
    finally:
        handle.remove()
    return kept[0]
""",
        "✗ it is what model[1] output during that forward pass (one whose model[1] is a Tanh, its ReLU later)",
        "whatever module sits there",
    ),
    correct(
        "linear_transformation",
        "every module that has a W",
        """
def linear_transformation(module):
    if isinstance(getattr(module, "W", None), nn.Parameter):
        module.register_forward_hook(hook)
""",
    ),
    correct(
        "weight_initialization",
        "nn.init on each Function's own parameters",
        """
def weight_initialization(module):
    if is_function(module):
        for param in module.parameters(recurse=False):
            nn.init.ones_(param)
""",
    ),
]
