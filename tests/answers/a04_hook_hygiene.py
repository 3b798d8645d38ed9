"""Assignment 4 (hook hygiene): capture_outputs, register_once, train_logged."""

from tests.answers import cheat, correct, wrong

_CAPTURE = """
def capture_outputs(model, x):
    outputs, handles = {{}}, []
    try:
        for path, module in model.{walk}():
            if {leaf}:
                handles.append(module.register_forward_hook(
                    lambda m, i, o, path=path: outputs.__setitem__(path, o)))
        model(x)
    finally:
        for handle in handles:
            handle.remove()
    return outputs
"""
_TRAIN = """
def train_logged(model, batches, epochs):
    log = []
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
{body}
    return log
"""
_STEP = """\
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()"""

ANSWERS = [
    # -- capture_outputs -----------------------------------------------------------------------
    wrong(
        "capture_outputs",
        "swallows the error",
        "a hook never removed",
        """
def capture_outputs(model, x):
    outputs, handles = {}, []
    for path, module in model.named_modules():
        if next(module.children(), None) is None:
            handles.append(module.register_forward_hook(lambda m, i, o, path=path: outputs.__setitem__(path, o)))
    try:
        model(x)
    except Exception:
        pass
    for handle in handles:
        handle.remove()
    return outputs
""",
        "✗ when model(x) raises, the error reaches the caller (an MLP)",
        "it did not raise (expected ValueError)",
        "try / except swallows it",
    ),
    wrong(
        "capture_outputs",
        "no finally",
        "a hook never removed",
        """
def capture_outputs(model, x):
    outputs, handles = {}, []
    for path, module in model.named_modules():
        if next(module.children(), None) is None:
            handles.append(module.register_forward_hook(lambda m, i, o, path=path: outputs.__setitem__(path, o)))
    model(x)
    for handle in handles:
        handle.remove()
    return outputs
""",
        "✗ and no hook is left on that model either (an MLP)",
        "4 hooks are left: forward hook <lambda> on 0.0",
        "also when the job raises",
    ),
    # A hook that returns what it stored replaces the output: equal values, but the model
    # computes on the copy (detached: no gradient reaches the layers before it).
    wrong(
        "capture_outputs",
        "returns the detached copy it stored",
        "the caller's model changed",
        """
def capture_outputs(model, x):
    outputs, handles = {}, []
    try:
        for path, module in model.named_modules():
            if next(module.children(), None) is None:
                def keep(module, inputs, output, path=path):
                    outputs[path] = output.detach()
                    return outputs[path]
                handles.append(module.register_forward_hook(keep))
        model(x)
    finally:
        for handle in handles:
            handle.remove()
    return outputs
""",
        "✗ its hooks only watch: the model computes on the outputs forward made (an MLP)",
        "a hook returned a new output for 0, 1 and 2",
        "must return nothing (None)",
    ),
    wrong(
        "capture_outputs",
        "returns a clone",
        "the caller's model changed",
        """
def capture_outputs(model, x):
    outputs, handles = {}, []

    def make_hook(path):
        def hook(module, inputs, output):
            outputs[path] = output.clone()
            return outputs[path]
        return hook

    try:
        for path, module in model.named_modules():
            if not list(module.children()):
                handles.append(module.register_forward_hook(make_hook(path)))
        model(x)
    finally:
        for handle in handles:
            handle.remove()
    return outputs
""",
        "✗ its hooks only watch: the model computes on the outputs forward made (an MLP)",
        "a hook returned a new output for 0, 1 and 2",
        "must return nothing (None)",
    ),
    wrong(
        "capture_outputs",
        "setdefault's return value returned",
        "the caller's model changed",
        """
def capture_outputs(model, x):
    outputs, handles = {}, []
    try:
        for path, module in model.named_modules():
            if len(list(module.children())) == 0:
                handles.append(module.register_forward_hook(
                    lambda m, i, o, path=path: outputs.setdefault(path, o.detach())))
        model(x)
    finally:
        for handle in handles:
            handle.remove()
    return outputs
""",
        "✗ its hooks only watch: the model computes on the outputs forward made (an MLP)",
        "a hook returned a new output for 0, 1 and 2",
        "must return nothing (None)",
    ),
    correct(
        "capture_outputs",
        "its hook returns the very output it was given",
        """
def capture_outputs(model, x):
    outputs, handles = {}, []
    try:
        for path, module in model.named_modules():
            if not list(module.children()):
                def keep(module, inputs, output, path=path):
                    outputs[path] = output
                    return output  # the same tensor: nothing is replaced
                handles.append(module.register_forward_hook(keep))
        model(x)
    finally:
        for handle in handles:
            handle.remove()
    return outputs
""",
    ),
    wrong(
        "capture_outputs",
        "named_children",
        "wrong place",
        _CAPTURE.format(walk="named_children", leaf="True"),
        "✗ one entry per leaf module, keyed by its path (the blog's Model, with nested layers)",
        "missing 'ab.a'",
        "named_children() stops one level down",
    ),
    wrong(
        "capture_outputs",
        "every module",
        "wrong place",
        _CAPTURE.format(walk="named_modules", leaf="True"),
        "✗ one entry per leaf module, keyed by its path (an MLP)",
        "unexpected '' (the root module's path)",
        "Hook the leaves only",
    ),
    wrong(
        "capture_outputs",
        "leaves by type",
        "hard-coded to the visible model",
        _CAPTURE.format(walk="named_modules", leaf="isinstance(module, (nn.Linear, nn.ReLU))"),
        "✗ one entry per leaf module, keyed by its path (the blog's Model, with nested layers)",
        "missing 'ab.a'",
        "whatever their type",
    ),
    wrong(
        "capture_outputs",
        "the root forgotten",
        "the root forgotten",
        """
def capture_outputs(model, x):
    outputs, handles = {}, []
    try:
        for path, module in model.named_modules():
            if path and next(module.children(), None) is None:
                handles.append(module.register_forward_hook(lambda m, i, o, path=path: outputs.__setitem__(path, o)))
        model(x)
    finally:
        for handle in handles:
            handle.remove()
    return outputs
""",
        "✗ one entry per leaf module, keyed by its path (a bare nn.Linear, whose only leaf is itself)",
        "missing '' (the root module's path)",
        "it is its own only leaf",
    ),
    wrong(
        "capture_outputs",
        "late binding",
        "global state shared across calls or modules",
        """
def capture_outputs(model, x):
    outputs, handles = {}, []
    try:
        for path, module in model.named_modules():
            if next(module.children(), None) is None:
                def keep(module, inputs, output):
                    outputs[path] = output
                handles.append(module.register_forward_hook(keep))
        model(x)
    finally:
        for handle in handles:
            handle.remove()
    return outputs
""",
        "✗ one entry per leaf module",
        "missing '0', '1'",
        "Every hook stored its output under the same key",
    ),
    wrong(
        "capture_outputs",
        "a dict outside the function",
        "global state shared across calls or modules",
        """
outputs = {}


def capture_outputs(model, x):
    handles = []
    try:
        for path, module in model.named_modules():
            if not list(module.children()):
                handles.append(module.register_forward_hook(lambda m, i, o, path=path: outputs.__setitem__(path, o)))
        model(x)
    finally:
        for handle in handles:
            handle.remove()
    return outputs
""",
        "✗ capture_outputs makes a new dict on every call (the blog's Model, with nested layers)",
        "Create it inside the function",
    ),
    wrong(
        "capture_outputs",
        "keeps the inputs",
        "wrong argument",
        _CAPTURE.format(walk="named_modules", leaf="not list(module.children())").replace(
            "outputs.__setitem__(path, o)", "outputs.__setitem__(path, i[0])"
        ),
        "✗ each is the output of that module during model(x) (an MLP)",
        "Store the output argument",
    ),
    correct(
        "capture_outputs",
        "an ExitStack of handles",
        """
import contextlib


def capture_outputs(model, x):
    outputs = {}
    with contextlib.ExitStack() as stack:
        for path, module in model.named_modules():
            if not any(True for _ in module.children()):
                def keep(module, inputs, output, path=path):
                    outputs[path] = output.detach()
                stack.enter_context(module.register_forward_hook(keep))
        model(x)
    return outputs
""",
    ),
    correct(
        "capture_outputs",
        "leaves found first",
        """
def capture_outputs(model, x):
    leaves = {path: module for path, module in model.named_modules() if len(list(module.children())) == 0}
    outputs = {}
    handles = [module.register_forward_hook(lambda m, i, o, p=path: outputs.update({p: o})) for path, module in leaves.items()]
    try:
        model(x)
    finally:
        while handles:
            handles.pop().remove()
    return outputs
""",
    ),
    cheat(
        "capture_outputs",
        "the visible leaf types",
        _CAPTURE.format(
            walk="named_modules",
            leaf="not list(module.children()) and not isinstance(module, (nn.Tanh, nn.Sigmoid))",
        ),
    ),
    # -- register_once -------------------------------------------------------------------------
    wrong(
        "register_once",
        "never removes",
        "a hook never removed",
        """
def register_once(module, hook):
    return module.register_forward_hook(hook)
""",
        "✗ after three registrations of a hook named report, one copy fires: the newest",
        "the copies that fired: [1, 2, 3]",
        "remove the copy that an earlier call registered",
        # the same root cause is not blamed again: the claims after it look at their own hooks
        "✓ a hook with another name is kept alongside it (nn.Linear)",
        "✓ registering on one module leaves another module's hooks alone (nn.Linear)",
    ),
    wrong(
        "register_once",
        "a global dict",
        "global state shared across calls or modules",
        """
_handles = {}


def register_once(module, hook):
    old = _handles.pop(hook.__name__, None)
    if old is not None:
        old.remove()
    _handles[hook.__name__] = module.register_forward_hook(hook)
    return _handles[hook.__name__]
""",
        "✗ registering on one module leaves another module's hooks alone",
        "Each module needs its own record of handles",
    ),
    wrong(
        "register_once",
        "keyed by the function object",
        "wrong formula",
        """
def register_once(module, hook):
    handles = module.__dict__.setdefault("_handles_by_hook", {})
    if hook in handles:
        handles.pop(hook).remove()
    handles[hook] = module.register_forward_hook(hook)
    return handles[hook]
""",
        "✗ after three registrations of a hook named report, one copy fires",
        "a new function object never `is` the old one",
        "✓ a hook of the same name that register_once did not add stays (nn.Linear)",
    ),
    wrong(
        "register_once",
        "clears every hook",
        "wrong place",
        """
def register_once(module, hook):
    module._forward_hooks.clear()
    return module.register_forward_hook(hook)
""",
        "✗ a hook with another name is kept alongside it",
        "the hooks that fired: ['count']",
        "Remove only the hook registered earlier under the same name",
    ),
    wrong(
        "register_once",
        "a new dict every call",
        "wrong formula",
        """
def register_once(module, hook):
    module._handles_by_name = {}
    handles = module._handles_by_name
    if hook.__name__ in handles:
        handles.pop(hook.__name__).remove()
    handles[hook.__name__] = module.register_forward_hook(hook)
    return handles[hook.__name__]
""",
        "✗ after three registrations of a hook named report, one copy fires",
        "the copies that fired: [1, 2, 3]",
        "keyed by hook.__name__",
    ),
    wrong(
        "register_once",
        "returns nothing",
        "wrong type",
        """
def register_once(module, hook):
    handles = module.__dict__.setdefault("_handles_by_name", {})
    if hook.__name__ in handles:
        handles.pop(hook.__name__).remove()
    handles[hook.__name__] = module.register_forward_hook(hook)
""",
        "✗ register_once returns the hook's handle",
        "it is None, expected a RemovableHandle",
    ),
    wrong(
        "register_once",
        "removes every hook of the module",
        "wrong place",
        """
def register_once(module, hook):
    hv.remove_hooks(module)
    return module.register_forward_hook(hook)
""",
        "✗ a hook with another name is kept alongside it",
        "Remove only the hook registered earlier",
    ),
    wrong(
        "register_once",
        "returns the old handle",
        "wrong formula",
        """
def register_once(module, hook):
    handles = module.__dict__.setdefault("_handles_by_name", {})
    if hook.__name__ in handles:
        handles[hook.__name__].remove()
    new = module.register_forward_hook(hook)
    return handles.setdefault(hook.__name__, new)
""",
        "✗ the returned handle removes its hook",
        "Return the handle of the hook you just registered",
    ),
    correct(
        "register_once",
        "getattr and setattr",
        """
def register_once(module, hook):
    handles = getattr(module, "_named_hook_handles", None)
    if handles is None:
        handles = {}
        module._named_hook_handles = handles
    if hook.__name__ in handles:
        handles[hook.__name__].remove()
    handle = module.register_forward_hook(hook)
    handles[hook.__name__] = handle
    return handle
""",
    ),
    correct(
        "register_once",
        "a weak dict per module",
        """
import weakref

_per_module = weakref.WeakKeyDictionary()


def register_once(module, hook):
    handles = _per_module.setdefault(module, {})
    old = handles.get(hook.__name__)
    if old is not None:
        old.remove()
    handles[hook.__name__] = handle = module.register_forward_hook(hook)
    return handle
""",
    ),
    # -- train_logged --------------------------------------------------------------------------
    wrong(
        "train_logged",
        "train_leaky itself",
        "a hook never removed",
        """
def train_logged(model, batches, epochs):
    return train_leaky(model, batches, epochs)
""",
        "✗ one value per batch and epoch: 2 batches × 3 epochs = 6 (2 batches, 3 epochs)",
        "it logged 12 values",
        "a new hook every epoch, on top of the old ones",
    ),
    wrong(
        "train_logged",
        ".item(), still one hook per epoch",
        "a hook never removed",
        _TRAIN.format(
            body=f"""\
    for epoch in range(epochs):
        model[0].register_forward_hook(lambda m, i, o: log.append(o.mean().item()))
        for x, y in batches:
{_STEP}"""
        ),
        "✗ one value per batch and epoch",
        "it logged 12 values",
        "a new hook every epoch",
    ),
    wrong(
        "train_logged",
        "one hook, never removed",
        "a hook never removed",
        _TRAIN.format(
            body=f"""\
    model[0].register_forward_hook(lambda m, i, o: log.append(o.mean().item()))
    for epoch in range(epochs):
        for x, y in batches:
{_STEP}"""
        ),
        "✗ none of its hooks is left on the model (2 batches, 3 epochs)",
        "1 hook is left: forward hook <lambda> on 0",
        "Keep the handle",
    ),
    wrong(
        "train_logged",
        "one hook per epoch, all removed at the end",
        "a hook never removed",
        _TRAIN.format(
            body=f"""\
    handles = []
    try:
        for epoch in range(epochs):
            handles.append(model[0].register_forward_hook(lambda m, i, o: log.append(o.mean().item())))
            for x, y in batches:
    {_STEP.replace(chr(10), chr(10) + "    ")}
    finally:
        for handle in handles:
            handle.remove()"""
        ),
        "✗ one value per batch and epoch",
        "it logged 12 values",
        "a new hook every epoch",
    ),
    wrong(
        "train_logged",
        "keeps the tensors",
        "wrong type",
        _TRAIN.format(
            body=f"""\
    handle = model[0].register_forward_hook(lambda m, i, o: log.append(o.mean()))
    try:
        for epoch in range(epochs):
            for x, y in batches:
    {_STEP.replace(chr(10), chr(10) + "    ")}
    finally:
        handle.remove()"""
        ),
        "✗ each value is a Python float",
        "an entry is a Tensor of shape ()",
        "carries a grad_fn",
    ),
    wrong(
        "train_logged",
        "removes only when all goes well",
        "a hook never removed",
        _TRAIN.format(
            body=f"""\
    handle = model[0].register_forward_hook(lambda m, i, o: log.append(o.mean().item()))
    for epoch in range(epochs):
        for x, y in batches:
{_STEP}
    handle.remove()"""
        ),
        "✗ and none of its hooks is left then either (2 batches, 3 epochs)",
        "1 hook is left",
        "also when the job raises",
    ),
    wrong(
        "train_logged",
        "removes every hook",
        "wrong place",
        _TRAIN.format(
            body=f"""\
    model[0].register_forward_hook(lambda m, i, o: log.append(o.mean().item()))
    try:
        for epoch in range(epochs):
            for x, y in batches:
    {_STEP.replace(chr(10), chr(10) + "    ")}
    finally:
        hv.remove_hooks(model)"""
        ),
        "✗ the hook the model already had is still there (2 batches, 3 epochs)",
        "it is gone",
        "Remove only the hooks you registered",
    ),
    wrong(
        "train_logged",
        "a list outside the function",
        "global state shared across calls or modules",
        """
log = []


def train_logged(model, batches, epochs):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with model[0].register_forward_hook(lambda m, i, o: log.append(o.mean().item())):
        for epoch in range(epochs):
            for x, y in batches:
                loss = nn.functional.mse_loss(model(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    return log
""",
        "✗ train_logged makes a new list on every call (3 batches, 2 epochs)",
        "Create it inside the function",
    ),
    wrong(
        "train_logged",
        "swallows the error",
        "a hook never removed",
        _TRAIN.format(
            body=f"""\
    handle = model[0].register_forward_hook(lambda m, i, o: log.append(o.mean().item()))
    try:
        for epoch in range(epochs):
            for x, y in batches:
    {_STEP.replace(chr(10), chr(10) + "    ")}
    except Exception:
        pass
    finally:
        handle.remove()"""
        ),
        "✗ when a batch raises, the error reaches the caller",
        "it did not raise (expected RuntimeError)",
        "try / except swallows the error",
    ),
    correct(
        "train_logged",
        "a with block for the whole job",
        """
def train_logged(model, batches, epochs):
    values = []
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with model[0].register_forward_hook(lambda module, inputs, output: values.append(float(output.mean()))):
        for _ in range(epochs):
            for x, y in batches:
                optimizer.zero_grad()
                nn.functional.mse_loss(model(x), y).backward()
                optimizer.step()
    return values
""",
    ),
    correct(
        "train_logged",
        "a with block per epoch",
        """
def train_logged(model, batches, epochs):
    log = []
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def record(module, inputs, output):
        log.append(output.detach().mean().item())

    for epoch in range(epochs):
        with model[0].register_forward_hook(record):
            for x, y in batches:
                loss = nn.functional.mse_loss(model(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    return log
""",
    ),
    cheat(
        "train_logged",
        "logs only for the visible input sizes",
        _TRAIN.format(
            body=f"""\
    handle = model[0].register_forward_hook(lambda m, i, o: log.append(o.mean().item()) if m.in_features in (3, 4) else None)
    try:
        for epoch in range(epochs):
            for x, y in batches:
    {_STEP.replace(chr(10), chr(10) + "    ")}
    finally:
        handle.remove()"""
        ),
    ),
]

# -- course v3 (issue 21): tensors kept in the log while training runs ------------------------
_TRAIN_KEEPING = """
def train_logged(model, batches, epochs):
    kept = []
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    handle = model[0].register_forward_hook(lambda module, inputs, output: kept.append({kept}))
    try:
        for epoch in range(epochs):
            for x, y in batches:
{step}
    finally:
        handle.remove()
    return {convert}
"""

ANSWERS += [
    wrong(
        "train_logged",
        "means kept as tensors, turned into floats at the end",
        "tensors kept while it runs",
        _TRAIN_KEEPING.format(
            kept="output.mean()",
            step=_STEP.replace("            ", "                "),
            convert="[value.item() for value in kept]",
        ),
        "✗ while it trains, its log holds Python floats, not tensors (2 batches, 3 epochs)",
        "during training its log held a Tensor, turned into a float only at the end",
        "Turn each value into a float in the hook itself",
    ),
    wrong(
        "train_logged",
        "detached means, float() at the end",
        "tensors kept while it runs",
        _TRAIN_KEEPING.format(
            kept="output.mean().detach()",
            step=_STEP.replace("            ", "                "),
            convert="list(map(float, kept))",
        ),
        "✗ while it trains, its log holds Python floats, not tensors (3 batches, 2 epochs)",
        "held a Tensor",
        "every entry keeps its storage",
    ),
    wrong(
        "train_logged",
        "whole outputs kept, averaged at the end",
        "tensors kept while it runs",
        _TRAIN_KEEPING.format(
            kept="output.detach()",
            step=_STEP.replace("            ", "                "),
            convert="[output.mean().item() for output in kept]",
        ),
        "✗ while it trains, its log holds Python floats, not tensors",
        "a batch that raises leaves nothing to convert",
    ),
    wrong(
        "train_logged",
        "torch.stack(...).tolist() at the end",
        "tensors kept while it runs",
        _TRAIN_KEEPING.format(
            kept="output.mean()",
            step=_STEP.replace("            ", "                "),
            convert="torch.stack(kept).tolist()",
        ),
        "✗ while it trains, its log holds Python floats, not tensors",
        "Turn each value into a float in the hook itself",
    ),
    wrong(
        "train_logged",
        "a logger object keeping tensors",
        "tensors kept while it runs",
        """
class MeanLogger:
    def __init__(self):
        self.means = []

    def __call__(self, module, inputs, output):
        self.means.append(output.mean())


def train_logged(model, batches, epochs):
    logger = MeanLogger()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with model[0].register_forward_hook(logger):
        for epoch in range(epochs):
            for x, y in batches:
                loss = nn.functional.mse_loss(model(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    return [mean.item() for mean in logger.means]
""",
        "✗ while it trains, its log holds Python floats, not tensors (2 batches, 3 epochs)",
        "held a Tensor",
    ),
    correct(
        "train_logged",
        "a logger object keeping floats",
        """
class MeanLogger:
    def __init__(self):
        self.means = []

    def __call__(self, module, inputs, output):
        self.means.append(float(output.mean()))


def train_logged(model, batches, epochs):
    logger = MeanLogger()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with model[0].register_forward_hook(logger):
        for epoch in range(epochs):
            for x, y in batches:
                loss = nn.functional.mse_loss(model(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    return logger.means
""",
    ),
    correct(
        "train_logged",
        "a bound method and a float list",
        """
def train_logged(model, batches, epochs):
    log = []
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    handle = model[0].register_forward_hook(lambda m, i, o, append=log.append: append(o.mean().item()))
    try:
        for epoch in range(epochs):
            for x, y in batches:
                optimizer.zero_grad()
                nn.functional.mse_loss(model(x), y).backward()
                optimizer.step()
    finally:
        handle.remove()
    return log
""",
    ),
]

# -- the blind round (issue 21): each look-alike gets the hint of its own mistake --------------
ANSWERS += [
    wrong(
        "train_logged",
        "the model called twice per batch (3 epochs, like a pile-up)",
        "wrong formula",
        """
def train_logged(model, batches, epochs):
    log = []
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    handle = model[0].register_forward_hook(lambda module, inputs, output: log.append(output.mean().item()))
    try:
        for epoch in range(epochs):
            for x, y in batches:
                model(x)  # a look at the output first
                loss = nn.functional.mse_loss(model(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    finally:
        handle.remove()
    return log
""",
        "✗ one value per batch and epoch: 2 batches × 3 epochs = 6",
        "it logged 12 values",
        "model[0] ran more than once per batch",
    ),
]

# -- the second blind round (issue 21) ---
ANSWERS += [
    wrong(
        "train_logged",
        "a hook per epoch, removed at its end without finally",
        "a hook never removed",
        """
def train_logged(model, batches, epochs):
    log = []
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        handle = model[0].register_forward_hook(lambda module, inputs, output: log.append(output.mean().item()))
        for x, y in batches:
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        handle.remove()
    return log
""",
        "✗ and none of its hooks is left then either (2 batches, 3 epochs)",
        "1 hook is left: forward hook <lambda> on 0",
        "also when the job raises",
    ),
    wrong(
        "train_logged",
        "detached means kept as tensors",
        "wrong type",
        """
def train_logged(model, batches, epochs):
    log = []
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    handle = model[0].register_forward_hook(lambda module, inputs, output: log.append(output.detach().mean()))
    try:
        for epoch in range(epochs):
            for x, y in batches:
                loss = nn.functional.mse_loss(model(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    finally:
        handle.remove()
    return log
""",
        "✗ each value is a Python float (2 batches, 3 epochs)",
        "an entry is a Tensor of shape ()",
        ".item() gives a plain Python float",
    ),
    wrong(
        "train_logged",
        "no zero_grad between batches",
        "wrong formula",
        """
def train_logged(model, batches, epochs):
    log = []
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    handle = model[0].register_forward_hook(lambda module, inputs, output: log.append(output.mean().item()))
    try:
        for epoch in range(epochs):
            for x, y in batches:
                loss = nn.functional.mse_loss(model(x), y)
                loss.backward()
                optimizer.step()
    finally:
        handle.remove()
    return log
""",
        "✗ it trains the model as train_leaky does: SGD, lr=0.1, mean squared error (2 batches, 3 epochs)",
        "the parameters differ from those of the same training",
        "zero_grad, backward and step on every batch",
    ),
]

# -- fixed after the second blind round (issue 21) ---------------------------------------------
ANSWERS += [
    wrong(
        "register_once",
        "deletes every same-named forward hook",
        "a hook it did not add removed",
        """
def register_once(module, hook):
    for key, existing in list(module._forward_hooks.items()):
        if getattr(existing, "__name__", None) == hook.__name__:
            del module._forward_hooks[key]
    return module.register_forward_hook(hook)
""",
        "✗ a hook of the same name that register_once did not add stays (nn.Linear)",
        "the hooks that fired: ['mine']",
        "remove through the handle you stored",
    ),
]
ANSWERS += [
    wrong(
        "train_logged",
        "wraps the batch's error in one of its own",
        "wrong type",
        """
def train_logged(model, batches, epochs):
    log = []
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    handle = model[0].register_forward_hook(lambda module, inputs, output: log.append(output.mean().item()))
    try:
        for epoch in range(epochs):
            for x, y in batches:
                loss = nn.functional.mse_loss(model(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    except Exception as error:
        raise RuntimeError(f"training failed: {error}") from error
    finally:
        handle.remove()
    return log
""",
        "✗ and it is the batch's own error, not another one wrapping it (2 batches, 3 epochs)",
        "it raised RuntimeError: training failed: mat1 and mat2 shapes cannot be multiplied",
        "hides it behind yours",
    ),
]
