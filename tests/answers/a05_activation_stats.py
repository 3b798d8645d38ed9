"""Assignment 5 (activation statistics): ActivationStats, the initialisations, where_signal_dies,
gradient_norms_three_ways, arrives_at_output."""

from tests.answers import cheat, correct, wrong

_STATS = """
class ActivationStats:
    def __init__(self, model):
        self.model = model
        self.stats = {{}}
        self.handles = []

    def __enter__(self):
        for path, module in self.model.{walk}():
            if {test}:
                self.stats[path] = []

                def record(module, inputs, output, path=path):
                    self.stats[path].append({row})

                self.handles.append(module.register_forward_hook(record))
        return self

    def __exit__(self, *exc):
{exit}
"""
_ROW = "(output.mean().item(), output.std().item(), (output == 0).float().mean().item())"
_EXIT = """\
        for handle in self.handles:
            handle.remove()"""


def stats(
    walk="named_modules", test="isinstance(module, (nn.ReLU, nn.Tanh))", row=_ROW, exit=_EXIT
):
    return _STATS.format(walk=walk, test=test, row=row, exit=exit)


_INITS = """
def init_with(std):
{init_with}


def kaiming_init(module):
{kaiming}
"""
_INIT_WITH = """\
    def init(module):
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=std)
            nn.init.zeros_(module.bias)

    return init"""
_KAIMING = """\
    if isinstance(module, nn.Linear):
        nn.init.kaiming_normal_(module.weight, nonlinearity="relu")
        nn.init.zeros_(module.bias)"""


def inits(init_with=_INIT_WITH, kaiming=_KAIMING):
    return _INITS.format(init_with=init_with, kaiming=kaiming)


_THREE = """
def gradient_norms_three_ways(model, x, y):
    by_hook, outputs, handles = {{}}, {{}}, []
    for path, module in model.named_modules():
        if isinstance(module, nn.Linear):

            def watch(module, inputs, output, path=path):
{watch}

            handles.append(module.register_forward_hook(watch))
{zero}
    try:
        nn.functional.cross_entropy(model(x), y).backward()
    finally:
{remove}
    return {{
        "tensor_hook": by_hook,
        "retain_grad": {{path: {retained} for path, output in outputs.items()}},
        "param_grad": {{path: {param} for path in outputs}},
    }}
"""
_WATCH = """\
                output.register_hook(lambda grad: by_hook.__setitem__(path, grad.norm().item()))
                output.retain_grad()
                outputs[path] = output"""


def three(
    watch=_WATCH,
    zero="    model.zero_grad()",
    remove="        for handle in handles:\n            handle.remove()",
    retained="output.grad.norm().item()",
    param="model.get_submodule(path).weight.grad.norm().item()",
):
    return _THREE.format(watch=watch, zero=zero, remove=remove, retained=retained, param=param)


ANSWERS = [
    # -- ActivationStats -----------------------------------------------------------------------
    # A record hook that returns what it looked at replaces the layer's output: equal values,
    # but the network computes on the copy (detached: no gradient reaches the layers before).
    wrong(
        "ActivationStats",
        "the record hook returns the detached output",
        "the caller's model changed",
        stats(row="_ROW_").replace(
            "self.stats[path].append(_ROW_)",
            "out = output.detach()\n"
            "                    self.stats[path].append((out.mean().item(), out.std().item(), (out == 0).float().mean().item()))\n"
            "                    return out",
        ),
        "✗ its hooks only watch: the network computes on the outputs forward made (a 3-layer ReLU network)",
        "a hook returned a new output for",
        "must return nothing (None)",
    ),
    wrong(
        "ActivationStats",
        "the record hook returns the copy it kept",
        "the caller's model changed",
        stats(row="_ROW_").replace(
            "self.stats[path].append(_ROW_)",
            "kept = output.detach().clone()\n"
            "                    self.stats[path].append((kept.mean().item(), kept.std().item(), (kept == 0).float().mean().item()))\n"
            "                    return kept",
        ),
        "✗ its hooks only watch: the network computes on the outputs forward made (a 3-layer ReLU network)",
        "a hook returned a new output for",
        "must return nothing (None)",
    ),
    wrong(
        "ActivationStats",
        "every module",
        "wrong place",
        stats(test="True"),
        "✗ one entry per nn.ReLU and nn.Tanh, keyed by its path (a 3-layer ReLU network)",
        "unexpected '' (the root module's path)",
        "hook nothing else",
    ),
    wrong(
        "ActivationStats",
        "named_children",
        "the root forgotten",
        stats(walk="named_children"),
        "✗ one entry per nn.ReLU and nn.Tanh, keyed by its path (nested layers, tanh and ReLU)",
        "missing '0.1'",
        "at any depth",
    ),
    wrong(
        "ActivationStats",
        "late binding",
        "global state shared across calls or modules",
        stats().replace(
            "def record(module, inputs, output, path=path):", "def record(module, inputs, output):"
        ),
        "✗ record raised KeyError: '6'",
        "a hook looked up '6', the last value of a loop variable",
        "Freeze the value when you define the function",
    ),
    wrong(
        "ActivationStats",
        "keeps tensors",
        "wrong type",
        stats(row="(output.mean(), output.std(), (output == 0).float().mean())"),
        "✗ each is a tuple of three Python floats",
        "holding a Tensor of shape ()",
        "keeps that pass's saved activations alive",
    ),
    wrong(
        "ActivationStats",
        "never removes",
        "a hook never removed",
        stats(exit="        pass"),
        "✗ no hook is left after the with block (a 3-layer ReLU network)",
        "3 hooks are left",
        "Keep the handle",
    ),
    wrong(
        "ActivationStats",
        "swallows the error",
        "a hook never removed",
        stats(exit=_EXIT + "\n        return True"),
        "✗ when the block raises, the error reaches the caller",
        "it did not raise (expected ValueError)",
        "a true value swallows the error",
    ),
    wrong(
        "ActivationStats",
        "forgets to return self",
        "wrong type",
        stats().replace("        return self\n", ""),
        "✗ __enter__ returns the ActivationStats itself",
        "it returned None",
        "what `with ... as stats` binds",
    ),
    wrong(
        "ActivationStats",
        "hooks in __init__",
        "a hook never removed",
        """
class ActivationStats:
    def __init__(self, model):
        self.stats, self.handles = {}, []
        for path, module in model.named_modules():
            if isinstance(module, (nn.ReLU, nn.Tanh)):
                self.stats[path] = []
                self.handles.append(module.register_forward_hook(
                    lambda m, i, o, path=path: self.stats[path].append((o.mean().item(), o.std().item(), (o == 0).float().mean().item()))))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for handle in self.handles:
            handle.remove()
""",
        "✗ creating it registers nothing yet",
        "3 hooks are left: forward hook <lambda> on 1",
        "registering hooks belongs in __enter__",
    ),
    wrong(
        "ActivationStats",
        "stats shared by every instance",
        "global state shared across calls or modules",
        """
class ActivationStats:
    stats = {}

    def __init__(self, model):
        self.model, self.handles = model, []

    def __enter__(self):
        for path, module in self.model.named_modules():
            if isinstance(module, (nn.ReLU, nn.Tanh)):
                rows = self.stats.setdefault(path, [])
                self.handles.append(module.register_forward_hook(
                    lambda m, i, o, rows=rows: rows.append((o.mean().item(), o.std().item(), (o == 0).float().mean().item()))))
        return self

    def __exit__(self, *exc):
        for handle in self.handles:
            handle.remove()
""",
        "✗ each ActivationStats keeps a record of its own (nested layers, tanh and ReLU)",
        "is shared by every instance",
    ),
    wrong(
        "ActivationStats",
        "negatives counted as dead",
        "wrong formula",
        stats(
            row="(output.mean().item(), output.std().item(), (output < 0).float().mean().item())"
        ),
        "✗ the zero fraction (outputs exactly 0) of each layer's output",
        "exactly 0",
    ),
    wrong(
        "ActivationStats",
        "the input's statistics",
        "wrong argument",
        stats(
            row="(inputs[0].mean().item(), inputs[0].std().item(), (inputs[0] == 0).float().mean().item())"
        ),
        "✗ the mean of each layer's output, batch by batch",
        "the mean of the layer's output",
    ),
    correct(
        "ActivationStats",
        "defaultdict and partial",
        """
from collections import defaultdict
from functools import partial


class ActivationStats:
    def __init__(self, model):
        self.model = model
        self.stats = defaultdict(list)
        self._handles = []

    def _record(self, path, module, inputs, output):
        out = output.detach()
        self.stats[path].append((float(out.mean()), float(out.std()), float((out == 0).sum()) / out.numel()))

    def __enter__(self):
        self._handles = [module.register_forward_hook(partial(self._record, path))
                         for path, module in self.model.named_modules() if type(module) in (nn.ReLU, nn.Tanh)]
        return self

    def __exit__(self, exc_type, exc, tb):
        while self._handles:
            self._handles.pop().remove()
        return False
""",
    ),
    correct(
        "ActivationStats",
        "an ExitStack",
        """
import contextlib


class ActivationStats:
    def __init__(self, model):
        self.model = model
        self.stats = {}
        self._stack = contextlib.ExitStack()

    def __enter__(self):
        for path, module in self.model.named_modules():
            if isinstance(module, (nn.ReLU, nn.Tanh)):
                rows = self.stats[path] = []
                hook = lambda m, i, o, rows=rows: rows.append((o.mean().item(), o.std().item(), o.eq(0).float().mean().item()))
                self._stack.enter_context(module.register_forward_hook(hook))
        return self

    def __exit__(self, *exc):
        self._stack.close()
""",
    ),
    cheat(
        "ActivationStats",
        "skips a layer the visible networks lack",
        stats(test="isinstance(module, (nn.ReLU, nn.Tanh)) and path != '7'"),
    ),
    # -- the initialisations -------------------------------------------------------------------
    wrong(
        "initialisations",
        "init_with returns nothing",
        "wrong type",
        inits(
            init_with="""\
    def init(module):
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=std)
            nn.init.zeros_(module.bias)"""
        ),
        "✗ init_with(0.01) is a function apply can call",
        "it is None",
        "model.apply needs a function that takes a module",
    ),
    wrong(
        "initialisations",
        "std taken as the variance",
        "wrong formula",
        inits(init_with=_INIT_WITH.replace("std=std", "std=std ** 2")),
        "✗ init_with(0.01): every nn.Linear weight has mean 0 and the std asked for",
        "where 0.01 was asked",
        "not variance std",
    ),
    wrong(
        "initialisations",
        "kaiming_uniform_ instead of kaiming_normal_ (the same std)",
        "wrong formula",
        inits(kaiming=_KAIMING.replace("kaiming_normal_", "kaiming_uniform_")),
        "✗ kaiming_init: the weights are drawn from a normal distribution",
        "has no value beyond 2 std",
        "whose values trail off on both sides",
    ),
    wrong(
        "initialisations",
        "uniform with the std asked for (limits std * sqrt(3))",
        "wrong formula",
        inits(
            init_with=_INIT_WITH.replace(
                "nn.init.normal_(module.weight, mean=0.0, std=std)",
                "nn.init.uniform_(module.weight, -std * math.sqrt(3), std * math.sqrt(3))",
            )
        ),
        "✗ init_with(0.01): the weights are drawn from a normal distribution",
        "as in a uniform draw",
        "whose values trail off on both sides",
    ),
    wrong(
        "initialisations",
        "uniform instead of normal",
        "wrong formula",
        inits(
            init_with=_INIT_WITH.replace(
                "nn.init.normal_(module.weight, mean=0.0, std=std)",
                "nn.init.uniform_(module.weight, -std, std)",
            )
        ),
        "✗ init_with(0.01): every nn.Linear weight has mean 0 and the std asked for",
        "not a uniform one",
    ),
    wrong(
        "initialisations",
        "Xavier for Kaiming",
        "wrong formula",
        inits(
            kaiming=_KAIMING.replace(
                'nn.init.kaiming_normal_(module.weight, nonlinearity="relu")',
                "nn.init.xavier_normal_(module.weight)",
            )
        ),
        "✗ kaiming_init: every nn.Linear weight has mean 0 and the std asked for",
        "std = sqrt(2 / fan_in)",
    ),
    wrong(
        "initialisations",
        "Kaiming's fan_out mode",
        "wrong formula",
        inits(
            kaiming=_KAIMING.replace('nonlinearity="relu"', 'mode="fan_out", nonlinearity="relu"')
        ),
        "✗ kaiming_init: every nn.Linear weight has mean 0 and the std asked for",
        "its mode and nonlinearity arguments",
    ),
    wrong(
        "initialisations",
        "the gain for tanh",
        "wrong formula",
        inits(kaiming=_KAIMING.replace('nonlinearity="relu"', 'nonlinearity="tanh"')),
        "✗ kaiming_init: every nn.Linear weight has mean 0",
        "std = sqrt(2 / fan_in)",
    ),
    wrong(
        "initialisations",
        "every module with a weight",
        "wrong place",
        inits(
            init_with=_INIT_WITH.replace(
                "isinstance(module, nn.Linear)", 'hasattr(module, "weight")'
            )
        ),
        "✗ init_with(0.01): every other layer is left as it was (nested layers with a LayerNorm)",
        "changed: 0.1.weight",
        "a LayerNorm also has a weight",
    ),
    wrong(
        "initialisations",
        "biases left as they were",
        "wrong formula",
        inits(kaiming=_KAIMING.replace("\n        nn.init.zeros_(module.bias)", "")),
        "✗ kaiming_init: every nn.Linear bias is zero",
        "torch.nn.init has a function for that",
    ),
    wrong(
        "initialisations",
        "normal_ with autograd on",
        "autograd left on",
        inits(
            init_with=_INIT_WITH.replace(
                "nn.init.normal_(module.weight, mean=0.0, std=std)",
                "module.weight.normal_(0.0, std)",
            )
        ),
        "raised RuntimeError: a leaf Variable that requires grad",
        "torch.no_grad()",
    ),
    wrong(
        "initialisations",
        "through .data",
        ".data",
        inits(
            init_with=_INIT_WITH.replace(
                "nn.init.normal_(module.weight, mean=0.0, std=std)",
                "module.weight.data.normal_(0.0, std)",
            )
        ),
        "✗ init_with(0.01): autograd saw every change",
        "changed through .data",
    ),
    wrong(
        "initialisations",
        "fan_in of the first model by heart",
        "hard-coded to the visible model",
        inits(
            kaiming=_KAIMING.replace(
                'nn.init.kaiming_normal_(module.weight, nonlinearity="relu")',
                "nn.init.normal_(module.weight, std=(2 / 64) ** 0.5)",
            )
        ),
        "✗ kaiming_init: every nn.Linear weight has mean 0 and the std asked for (nested layers with a LayerNorm)",
        "std = sqrt(2 / fan_in)",
    ),
    correct(
        "initialisations",
        "by hand under no_grad, constant_ for the bias",
        """
def init_with(std):
    @torch.no_grad()
    def init(module):
        if type(module) is nn.Linear:
            module.weight.copy_(torch.randn_like(module.weight) * std)
            module.bias.zero_()

    return init


def kaiming_init(module):
    if isinstance(module, nn.Linear):
        nn.init.kaiming_normal_(module.weight, mode="fan_in", nonlinearity="relu")
        nn.init.constant_(module.bias, 0.0)
""",
    ),
    correct(
        "initialisations",
        "a partial and the default gain",
        """
from functools import partial


def _normal(module, std):
    if isinstance(module, nn.Linear):
        nn.init.normal_(module.weight, 0.0, std)
        nn.init.zeros_(module.bias)


def init_with(std):
    return partial(_normal, std=std)


@torch.no_grad()
def kaiming_init(module):
    if isinstance(module, nn.Linear):
        module.weight.normal_(0.0, math.sqrt(2.0 / module.in_features))
        module.bias.fill_(0.0)
""",
    ),
    cheat(
        "initialisations",
        "only the visible stds",
        inits(
            init_with=_INIT_WITH.replace("std=std", "std=std if std in (0.01, 1.0) else 1.0")
        ).replace(
            'nn.init.kaiming_normal_(module.weight, nonlinearity="relu")',
            'nn.init.kaiming_normal_(module.weight, nonlinearity="relu") if module.in_features != 128 else None',
        ),
    ),
    # -- where_signal_dies ---------------------------------------------------------------------
    wrong(
        "where_signal_dies",
        "the last dead layer",
        "wrong formula",
        """
def where_signal_dies(stats, threshold=1e-3):
    found = None
    for path, rows in stats.items():
        if statistics.mean(std for _, std, _ in rows) < threshold:
            found = path
    return found
""",
        "✗ where_signal_dies finds the first layer whose average std is below 0.001 (a small initialisation)",
        "stop at the first one",
    ),
    wrong(
        "where_signal_dies",
        "paths sorted as strings",
        "wrong formula",
        """
def where_signal_dies(stats, threshold=1e-3):
    for path in sorted(stats):
        if statistics.mean(std for _, std, _ in stats[path]) < threshold:
            return path
    return None
""",
        "✗ where_signal_dies finds the first layer whose average std is below 0.1 (a deeper network, and a threshold of 0.1)",
        "the result is '11', expected '9'",
        "Sorting the paths as strings puts '11' before '3'",
    ),
    wrong(
        "where_signal_dies",
        "the first batch only",
        "wrong formula",
        """
def where_signal_dies(stats, threshold=1e-3):
    for path, rows in stats.items():
        if rows[0][1] < threshold:
            return path
    return None
""",
        "✗ where_signal_dies finds the first layer",
        "Average each layer's std over all its batches",
    ),
    wrong(
        "where_signal_dies",
        "the mean, not the std",
        "wrong argument",
        """
def where_signal_dies(stats, threshold=1e-3):
    for path, rows in stats.items():
        if statistics.mean(mean for mean, _, _ in rows) < threshold:
            return path
    return None
""",
        "✗ where_signal_dies finds the first layer",
        "look at the standard deviation",
    ),
    wrong(
        "where_signal_dies",
        "<= where the spec says below",
        "wrong formula",
        """
def where_signal_dies(stats, threshold=1e-3):
    for path, rows in stats.items():
        if statistics.mean(std for _, std, _ in rows) <= threshold:
            return path
    return None
""",
        "✗ where_signal_dies finds the first layer whose average std is below 0.25 (a layer exactly at the threshold of 0.25)",
        "the result is '2', expected '4'",
        "strictly less than it",
    ),
    wrong(
        "where_signal_dies",
        "not above the threshold, with torch",
        "wrong formula",
        """
def where_signal_dies(stats, threshold=1e-3):
    for path, rows in stats.items():
        if not torch.tensor([std for _, std, _ in rows]).mean() > threshold:
            return path
    return None
""",
        "✗ where_signal_dies finds the first layer whose average std is below 0.25",
        "strictly less than it",
    ),
    wrong(
        "where_signal_dies",
        "1e-3 by heart",
        "hard-coded to the visible model",
        """
def where_signal_dies(stats, threshold=1e-3):
    for path, rows in stats.items():
        if statistics.mean(std for _, std, _ in rows) < 1e-3:
            return path
    return None
""",
        "✗ where_signal_dies finds the first layer whose average std is below 0.1",
        "Compare with the threshold you are given",
    ),
    wrong(
        "where_signal_dies",
        "an empty string when none dies",
        "wrong type",
        """
def where_signal_dies(stats, threshold=1e-3):
    for path, rows in stats.items():
        if statistics.mean(std for _, std, _ in rows) < threshold:
            return path
    return ""
""",
        "✗ where_signal_dies finds the first layer",
        "the result is a str, expected None",
        "return None (not an empty string",
    ),
    wrong(
        "where_signal_dies",
        "the index",
        "wrong type",
        """
def where_signal_dies(stats, threshold=1e-3):
    for index, rows in enumerate(stats.values()):
        if statistics.mean(std for _, std, _ in rows) < threshold:
            return index
    return None
""",
        "✗ where_signal_dies finds the first layer",
        "the result is an int, expected a str",
        "Return the layer's path",
    ),
    correct(
        "where_signal_dies",
        "next over a generator",
        """
def where_signal_dies(stats, threshold=1e-3):
    averages = ((path, sum(row[1] for row in rows) / len(rows)) for path, rows in stats.items())
    return next((path for path, std in averages if std < threshold), None)
""",
    ),
    correct(
        "where_signal_dies",
        "torch does the mean",
        """
def where_signal_dies(stats, threshold=1e-3):
    for path, rows in stats.items():
        if torch.tensor([row[1] for row in rows], dtype=torch.float64).mean().item() < threshold:
            return path
""",
    ),
    cheat(
        "where_signal_dies",
        "the visible answers by heart",
        """
def where_signal_dies(stats, threshold=1e-3):
    return {"9": "5", "13": "9", "2": None, "6": "4"}.get(list(stats)[-1])
""",
    ),
    # -- gradient_norms_three_ways -------------------------------------------------------------
    wrong(
        "gradient_norms_three_ways",
        "hooks on the weight",
        "wrong place",
        three(
            watch="""\
                module.weight.register_hook(lambda grad: by_hook.__setitem__(path, grad.norm().item()))
                output.retain_grad()
                outputs[path] = output"""
        ),
        "✗ found['tensor_hook'] holds the right norms (a 3-layer ReLU network)",
        "These are the norms of the weights' gradients",
    ),
    wrong(
        "gradient_norms_three_ways",
        "no zero_grad",
        "wrong formula",
        three(zero=""),
        "✗ found['param_grad'] holds the right norms (a 3-layer ReLU network)",
        ".grad accumulates",
    ),
    wrong(
        "gradient_norms_three_ways",
        "never removes its hooks",
        "a hook never removed",
        three(remove="        pass"),
        "✗ no hook is left on the model (a 3-layer ReLU network)",
        "4 hooks are left",
        "Keep the handle",
    ),
    wrong(
        "gradient_norms_three_ways",
        "retain_grad never called",
        "wrong formula",
        three(
            watch="""\
                output.register_hook(lambda grad: by_hook.__setitem__(path, grad.norm().item()))
                outputs[path] = output"""
        ),
        # named by the student's function, not the <dictcomp> it failed in
        "✗ gradient_norms_three_ways raised AttributeError: 'NoneType' object has no attribute 'norm'",
        "a .grad was None when the code read it",
        "unless retain_grad() was called on it",
    ),
    wrong(
        "gradient_norms_three_ways",
        "the output's gradient as param_grad",
        "wrong argument",
        three(param="by_hook[path]"),
        "✗ found['param_grad'] holds the right norms",
        "param_grad is about the layer's weight",
    ),
    wrong(
        "gradient_norms_three_ways",
        "tensors, not floats",
        "wrong type",
        three(retained="output.grad.norm()"),
        "✗ found['retain_grad'] holds Python floats",
        "'0': a Tensor of shape ()",
        ".item() turns it into a float",
    ),
    wrong(
        "gradient_norms_three_ways",
        "named_children",
        "the root forgotten",
        three().replace("model.named_modules()", "model.named_children()"),
        "✗ found['tensor_hook'] has one entry per nn.Linear, keyed by its path (nested layers)",
        "missing '0.0'",
        "at any depth",
    ),
    correct(
        "gradient_norms_three_ways",
        "backward pre-hooks and two passes",
        """
def gradient_norms_three_ways(model, x, y):
    linears = {path: m for path, m in model.named_modules() if isinstance(m, nn.Linear)}
    by_hook, kept = {}, {}
    handles = [m.register_full_backward_pre_hook(lambda m, go, path=path: by_hook.update({path: go[0].norm().item()}))
               for path, m in linears.items()]

    def keep(path):
        def hook(module, inputs, output):
            output.retain_grad()
            kept[path] = output
        return hook

    handles += [m.register_forward_hook(keep(path)) for path, m in linears.items()]
    try:
        model.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
    finally:
        for handle in handles:
            handle.remove()
    return {
        "tensor_hook": by_hook,
        "retain_grad": {path: float(o.grad.norm()) for path, o in kept.items()},
        "param_grad": {path: float(m.weight.grad.norm()) for path, m in linears.items()},
    }
""",
    ),
    correct(
        "gradient_norms_three_ways",
        "set_to_none and a with block per hook",
        """
import contextlib


def gradient_norms_three_ways(model, x, y):
    result = {"tensor_hook": {}, "retain_grad": {}, "param_grad": {}}
    outputs = {}

    def watch(path):
        def hook(module, inputs, output):
            output.register_hook(lambda grad: result["tensor_hook"].__setitem__(path, grad.norm().item()))
            output.retain_grad()
            outputs[path] = output
        return hook

    for param in model.parameters():
        param.grad = None
    with contextlib.ExitStack() as stack:
        for path, module in model.named_modules():
            if isinstance(module, nn.Linear):
                stack.enter_context(module.register_forward_hook(watch(path)))
        nn.functional.cross_entropy(model(x), y).backward()
    for path, output in outputs.items():
        result["retain_grad"][path] = output.grad.norm().item()
        result["param_grad"][path] = model.get_submodule(path).weight.grad.norm().item()
    return result
""",
    ),
    cheat(
        "gradient_norms_three_ways",
        "skips wide layers",
        three().replace(
            "if isinstance(module, nn.Linear):",
            "if isinstance(module, nn.Linear) and module.in_features != 20:",
        ),
    ),
    # -- arrives_at_output ---------------------------------------------------------------------
    wrong(
        "arrives_at_output",
        "the weight's gradient",
        "wrong prediction",
        """
def arrives_at_output():
    return {"param_grad"}
""",
        "✗ arrives_at_output names exactly the ways",
        "weight.grad is the gradient with respect to the layer's weight",
    ),
    wrong(
        "arrives_at_output",
        "all three",
        "wrong prediction",
        """
def arrives_at_output():
    return {"tensor_hook", "retain_grad", "param_grad"}
""",
        "✗ arrives_at_output names exactly the ways",
        "it is not that gradient",
    ),
    wrong(
        "arrives_at_output",
        "the tensor hook only",
        "wrong prediction",
        """
def arrives_at_output():
    return {"tensor_hook"}
""",
        "✗ arrives_at_output names exactly the ways",
        "retain_grad() on the output keeps exactly the gradient",
    ),
    wrong(
        "arrives_at_output",
        "retain_grad only",
        "wrong prediction",
        """
def arrives_at_output():
    return {"retain_grad"}
""",
        "✗ arrives_at_output names exactly the ways",
        "A tensor hook on the layer's output is called with the gradient",
    ),
    wrong(
        "arrives_at_output",
        "a list",
        "wrong type",
        """
def arrives_at_output():
    return ["tensor_hook", "retain_grad"]
""",
        "✗ arrives_at_output returns a set of names",
        "it is a list of 2 items, expected a set",
    ),
    wrong(
        "arrives_at_output",
        "names with spaces",
        "wrong prediction",
        """
def arrives_at_output():
    return {"tensor hook", "retain grad"}
""",
        "✗ every name is one of",
        "not one of them: 'retain grad', 'tensor hook'",
        "Spell each name exactly",
    ),
    correct(
        "arrives_at_output",
        "a set built from a tuple",
        """
def arrives_at_output():
    return set(("retain_grad", "tensor_hook"))
""",
    ),
    correct(
        "arrives_at_output",
        "everything but the weight",
        """
def arrives_at_output():
    return {"tensor_hook", "retain_grad", "param_grad"} - {"param_grad"}
""",
    ),
]

# -- course v3 (issue 21): global hooks, removal when a pass raises, state shared between calls --
_GLOBAL_STATS = """
class ActivationStats:
    def __init__(self, model):
        self.model = model
        self.stats = {{}}
        self.handle = None
{init}

    def __enter__(self):
        paths = {{module: path for path, module in self.model.named_modules() if isinstance(module, (nn.ReLU, nn.Tanh))}}
        for path in paths.values():
            self.stats[path] = []

        def record(module, inputs, output):
            if module in paths:
                self.stats[paths[module]].append((output.mean().item(), output.std().item(), (output == 0).float().mean().item()))

        self.record = record
{enter}
        return self

    def __exit__(self, *exc):
{exit}
"""
_REGISTER_GLOBAL = (
    "        self.handle = torch.nn.modules.module.register_module_forward_hook(self.record)"
)

ANSWERS += [
    wrong(
        "ActivationStats",
        "a global hook never removed",
        "a hook never removed",
        _GLOBAL_STATS.format(init="", enter=_REGISTER_GLOBAL, exit="        pass"),
        "✗ no hook is left after the with block (a 3-layer ReLU network)",
        "1 hook is left: a global forward hook record (on every module)",
        "registers a global hook: it fires for every module of every model",
    ),
    wrong(
        "ActivationStats",
        "a global hook removed only when the block succeeds",
        "a hook never removed",
        _GLOBAL_STATS.format(
            init="",
            enter=_REGISTER_GLOBAL,
            exit="        if exc[0] is None:\n            self.handle.remove()",
        ),
        "✗ and no hook is left then either (a 3-layer ReLU network)",
        "a global forward hook record (on every module)",
        "remove it when the job is done, also when the job raises",
    ),
    wrong(
        "ActivationStats",
        "a global hook from __init__",
        "wrong place",
        _GLOBAL_STATS.format(
            init="        self.handle = torch.nn.modules.module.register_module_forward_hook(lambda module, inputs, output: None)",
            enter="        self.handle.remove()\n" + _REGISTER_GLOBAL,
            exit="        self.handle.remove()",
        ),
        "✗ creating it registers nothing yet (a 3-layer ReLU network)",
        "a global forward hook <lambda> (on every module)",
        "A context manager acts when its with block starts",
    ),
    correct(
        "ActivationStats",
        "one global hook, removed in __exit__",
        _GLOBAL_STATS.format(init="", enter=_REGISTER_GLOBAL, exit="        self.handle.remove()"),
    ),
    wrong(
        "gradient_norms_three_ways",
        "removes its hooks after the passes, not in finally",
        "a hook never removed",
        """
def gradient_norms_three_ways(model, x, y):
    by_hook, outputs, handles = {}, {}, []
    for path, module in model.named_modules():
        if isinstance(module, nn.Linear):
            def watch(module, inputs, output, path=path):
                output.register_hook(lambda grad: by_hook.__setitem__(path, grad.norm().item()))
                output.retain_grad()
                outputs[path] = output
            handles.append(module.register_forward_hook(watch))
    model.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    for handle in handles:
        handle.remove()
    return {
        "tensor_hook": by_hook,
        "retain_grad": {path: output.grad.norm().item() for path, output in outputs.items()},
        "param_grad": {path: model.get_submodule(path).weight.grad.norm().item() for path in outputs},
    }
""",
        "✗ and no hook is left after the forward pass raised either (a 3-layer ReLU network)",
        "4 hooks are left: forward hook watch on 0.0, forward hook watch on 0.2",
        "also when the job raises",
    ),
    wrong(
        "gradient_norms_three_ways",
        "cleans up when the forward pass fails only",
        "a hook never removed",
        """
def gradient_norms_three_ways(model, x, y):
    by_hook, outputs, handles = {}, {}, []
    for path, module in model.named_modules():
        if isinstance(module, nn.Linear):
            def watch(module, inputs, output, path=path):
                output.register_hook(lambda grad: by_hook.__setitem__(path, grad.norm().item()))
                output.retain_grad()
                outputs[path] = output
            handles.append(module.register_forward_hook(watch))
    model.zero_grad()
    try:
        loss = nn.functional.cross_entropy(model(x), y)
    except Exception:
        for handle in handles:
            handle.remove()
        raise
    loss.backward()
    for handle in handles:
        handle.remove()
    return {
        "tensor_hook": by_hook,
        "retain_grad": {path: output.grad.norm().item() for path, output in outputs.items()},
        "param_grad": {path: model.get_submodule(path).weight.grad.norm().item() for path in outputs},
    }
""",
        "✗ and no hook is left after the backward pass raised either (a 3-layer ReLU network)",
        "4 hooks are left: forward hook watch on 0.0",
        "also when the job raises",
    ),
    wrong(
        "gradient_norms_three_ways",
        "swallows the error",
        "a hook never removed",
        three(
            remove="        for handle in handles:\n            handle.remove()",
        ).replace("    finally:\n", "    except Exception:\n        pass\n    finally:\n"),
        "✗ when the forward pass raises, the error reaches the caller (a 3-layer ReLU network)",
        "it raised AttributeError",
        "try / except swallows the error",
    ),
    correct(
        "gradient_norms_three_ways",
        "handles as context managers in an ExitStack",
        """
def gradient_norms_three_ways(model, x, y):
    import contextlib

    by_hook, outputs = {}, {}

    def watch(module, inputs, output):
        path = names[module]
        output.register_hook(lambda grad: by_hook.update({path: float(grad.norm())}))
        output.retain_grad()
        outputs[path] = output

    names = {module: path for path, module in model.named_modules() if isinstance(module, nn.Linear)}
    model.zero_grad()
    with contextlib.ExitStack() as stack:
        for module in names:
            stack.enter_context(module.register_forward_hook(watch))
        nn.functional.cross_entropy(model(x), y).backward()
    return {
        "tensor_hook": by_hook,
        "retain_grad": {path: float(output.grad.norm()) for path, output in outputs.items()},
        "param_grad": {path: float(module.weight.grad.norm()) for module, path in names.items()},
    }
""",
    ),
    wrong(
        "initialisations",
        "std kept in a module-level variable",
        "global state shared across calls or modules",
        """
STD = None


def init_with(std):
    global STD
    STD = std

    def init(module):
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=STD)
            nn.init.zeros_(module.bias)

    return init
"""
        + "\n\ndef kaiming_init(module):\n"
        + _KAIMING
        + "\n",
        "✗ init_with(0.01): every nn.Linear weight has mean 0 and the std asked for (a 3-layer ReLU network)",
        "where 0.01 was asked",
        "These weights have the std that another call of init_with asked for",
    ),
    wrong(
        "initialisations",
        "std kept on init_with itself",
        "global state shared across calls or modules",
        inits(
            init_with="""\
    init_with.std = std

    def init(module):
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, 0.0, init_with.std)
            nn.init.zeros_(module.bias)

    return init"""
        ),
        "✗ init_with(0.01): every nn.Linear weight has mean 0 and the std asked for",
        "A module-level variable, an attribute of init_with or a mutable default",
    ),
    wrong(
        "initialisations",
        "std in a mutable default",
        "global state shared across calls or modules",
        """
def init_with(std, _settings={}):
    _settings["std"] = std

    def init(module):
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, std=_settings["std"])
            nn.init.zeros_(module.bias)

    return init
"""
        + "\n\ndef kaiming_init(module):\n"
        + _KAIMING
        + "\n",
        "✗ init_with(0.01): every nn.Linear weight has mean 0 and the std asked for (nested layers with a LayerNorm)",
        "the last call wins",
    ),
    wrong(
        "initialisations",
        "a class attribute for std",
        "global state shared across calls or modules",
        """
class Init:
    std = 1.0

    def __call__(self, module):
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, 0.0, Init.std)
            nn.init.zeros_(module.bias)


def init_with(std):
    Init.std = std
    return Init()
"""
        + "\n\ndef kaiming_init(module):\n"
        + _KAIMING
        + "\n",
        "✗ init_with(0.01): every nn.Linear weight has mean 0 and the std asked for",
        "Each returned function must remember its own std",
    ),
    correct(
        "initialisations",
        "an object that keeps its own std",
        """
class Init:
    def __init__(self, std):
        self.std = std

    def __call__(self, module):
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, 0.0, self.std)
            nn.init.zeros_(module.bias)


def init_with(std):
    return Init(std)
"""
        + "\n\ndef kaiming_init(module):\n"
        + _KAIMING
        + "\n",
    ),
    correct(
        "initialisations",
        "functools.partial",
        """
import functools


def _init(module, std):
    if isinstance(module, nn.Linear):
        nn.init.normal_(module.weight, mean=0.0, std=std)
        nn.init.zeros_(module.bias)


def init_with(std):
    return functools.partial(_init, std=std)
"""
        + "\n\ndef kaiming_init(module):\n"
        + _KAIMING
        + "\n",
    ),
    wrong(
        "initialisations",
        "freezes the weights to draw them",
        "a frozen parameter",
        inits(
            kaiming="""\
    if isinstance(module, nn.Linear):
        module.weight.requires_grad_(False)
        module.weight.normal_(0.0, math.sqrt(2 / module.in_features))
        module.bias.requires_grad_(False)
        module.bias.zero_()"""
        ),
        "✗ kaiming_init: every parameter still trains: it requires grad, and an optimizer step changes it (a 3-layer ReLU network)",
        "6.weight and 6.bias have requires_grad=False",
        "freezes it for good",
    ),
]

# -- the blind round (issue 21): each look-alike gets the hint of its own mistake --------------
ANSWERS += [
    wrong(
        "ActivationStats",
        "__exit__(self), without the exception's arguments",
        "wrong argument",
        stats().replace("def __exit__(self, *exc):", "def __exit__(self):"),
        "✗ ActivationStats raised TypeError: ActivationStats.__exit__() takes 1 positional argument but 4 were given",
        "with 4 arguments (self included), and it takes 1",
        "def __exit__(self, *exc) takes any",
    ),
    wrong(
        "where_signal_dies",
        "a default threshold of 1e-2",
        "wrong argument",
        """
def where_signal_dies(stats, threshold=1e-2):
    for path, rows in stats.items():
        if statistics.mean(std for _, std, _ in rows) < threshold:
            return path
    return None
""",
        "✗ where_signal_dies finds the first layer whose average std is below 0.001 (the default threshold)",
        "The default threshold is 1e-3",
    ),
]

# -- the second blind round (issue 21) ---
ANSWERS += [
    wrong(
        "initialisations",
        "kaiming_init renamed kaiming_initialization",
        "wrong place",
        """
def init_with(std):
    def init(module):
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=std)
            nn.init.zeros_(module.bias)
    return init


def kaiming_initialization(module):
    if isinstance(module, nn.Linear):
        nn.init.kaiming_normal_(module.weight, nonlinearity="relu")
        nn.init.zeros_(module.bias)
""",
        "○ kaiming_init is not defined yet",
        "the notebook defines kaiming_initialization, a close name",
        "give it back the name kaiming_init",
    ),
    wrong(
        "ActivationStats",
        "zeros counted per sample, not as a fraction",
        "wrong formula",
        """
class ActivationStats:
    def __init__(self, model):
        self.model = model
        self.stats = {}

    def __enter__(self):
        self.handles = []
        for path, module in self.model.named_modules():
            if isinstance(module, (nn.ReLU, nn.Tanh)):
                def keep(module, inputs, output, path=path):
                    zeros = (output == 0).sum().item() / output.shape[0]
                    self.stats.setdefault(path, []).append((output.mean().item(), output.std().item(), zeros))
                self.handles.append(module.register_forward_hook(keep))
        return self

    def __exit__(self, *exc):
        for handle in self.handles:
            handle.remove()
""",
        "✗ the zero fraction (outputs exactly 0) of each layer's output, batch by batch (a 3-layer ReLU network)",
        "value['1'][0] is 16.1875, expected 0.505859375",
        "the fraction of the output's values that are exactly 0",
    ),
]

# -- fixed after the second blind round (issue 21) ---------------------------------------------
ANSWERS += [
    wrong(
        "where_signal_dies",
        "the smallest std over batches (not told of a default it kept)",
        "wrong formula",
        """
def where_signal_dies(stats, threshold=1e-3):
    for path, rows in stats.items():
        if min(row[1] for row in rows) < threshold:
            return path
    return None
""",
        "Average each layer's std over all its batches",
        "When no layer's average std is below the threshold, return None",
    ),
]
ANSWERS += [
    wrong(
        "ActivationStats",
        "the population std (unbiased=False)",
        "wrong formula",
        stats(
            row="(output.mean().item(), output.std(unbiased=False).item(), (output == 0).float().mean().item())"
        ),
        "✗ the standard deviation of each layer's output, batch by batch (nested layers, tanh and ReLU)",
        "These are the population standard deviations",
    ),
    wrong(
        "gradient_norms_three_ways",
        "param_grad from the bias",
        "wrong argument",
        three(param="model.get_submodule(path).bias.grad.norm().item()"),
        "✗ found['param_grad'] holds the right norms (a 3-layer ReLU network)",
        "These are the norms of the layers' bias gradients",
    ),
]
