"""Assignment 1 (apply): answers to print_module, visit_order, weight_initialization, weight_init."""

from tests.answers import cheat, correct, wrong

ANSWERS = [
    # -- print_module --------------------------------------------------------------------------
    wrong(
        "print_module",
        "no dashes",
        "wrong formula",
        """
def print_module(module):
    print(module)
""",
        "✗ each module's printout is followed by a line of 30 dashes",
        "print a line of exactly 30 dashes",
    ),
    wrong(
        "print_module",
        "dashes first",
        "wrong formula",
        """
def print_module(module):
    print("-" * 30)
    print(module)
""",
        "✗ each module's printout is followed by a line of 30 dashes",
        "print it after the module",
    ),
    wrong(
        "print_module",
        "twenty dashes",
        "wrong formula",
        """
def print_module(module):
    print(module)
    print("-" * 20)
""",
        "✗ each module's printout is followed by a line of 30 dashes",
        "line 2 of the result",
    ),
    wrong(
        "print_module",
        "the class name only",
        "wrong argument",
        """
def print_module(module):
    print(type(module).__name__)
    print("-" * 30)
""",
        "✗ each printout shows the module apply passed in",
        "it printed 'Function_A\\n'",
        "more than its class name",
    ),
    wrong(
        "print_module",
        "prints the global model",
        "hard-coded to the visible model",
        """
def print_module(module):
    print(model)
    print("-" * 30)
""",
        "✗ each printout shows the module apply passed in",
        "it printed only 1 distinct module(s) where apply visits 7",
        "A global variable such as model",
    ),
    wrong(
        "print_module",
        "loops over children",
        "the root forgotten",
        """
def print_module(module):
    for child in module.children():
        print(child)
        print("-" * 30)
""",
        "✗ one printout per call",
        "it printed 6 printouts for 7 calls",
        "no loop over children() or modules()",
    ),
    wrong(
        "print_module",
        "loops over modules()",
        "wrong place",
        """
def print_module(module):
    for sub in module.modules():
        print(sub)
        print("-" * 30)
""",
        "✗ one printout per call",
        "it printed 17 printouts for 7 calls",
        "no loop over children() or modules()",
    ),
    wrong(
        "print_module",
        "leaves only",
        "the root forgotten",
        """
def print_module(module):
    if not list(module.children()):
        print(module)
        print("-" * 30)
""",
        "✗ one printout per call",
        "it printed 4 printouts for 7 calls",
    ),
    wrong(
        "print_module",
        "returns instead of printing",
        "wrong formula",
        """
def print_module(module):
    return f"{module}\\n{'-' * 30}"
""",
        "✗ each module's printout is followed by a line of 30 dashes",
        "it printed nothing",
        "apply throws away whatever your function returns",
    ),
    wrong(
        "print_module",
        "dashes on the module's line",
        "wrong formula",
        """
def print_module(module):
    print(module, "-" * 30)
""",
        "✗ each printout shows the module apply passed in",
        "it printed 'Function_A() '",
        "puts them on one line",
    ),
    correct(
        "print_module",
        "one print with a newline",
        """
def print_module(module):
    print(f"{module}\\n{'-' * 30}")
""",
    ),
    correct(
        "print_module",
        "repr and sep",
        """
def print_module(module):
    print(repr(module), "-" * 30, sep="\\n")
""",
    ),
    correct(
        "print_module",
        "str and write",
        """
import sys


def print_module(module):
    sys.stdout.write(str(module) + "\\n")
    sys.stdout.write("-" * 30 + "\\n")
""",
    ),
    cheat(
        "print_module",
        "skips what an MLP has",
        """
def print_module(module):
    if isinstance(module, nn.Sequential) and len(module) > 2:
        return
    print(module)
    print("-" * 30)
""",
    ),
    # -- visit_order ---------------------------------------------------------------------------
    wrong(
        "visit_order",
        "modules() is pre-order",
        "wrong place",
        """
def visit_order(model):
    return [type(module).__name__ for module in model.modules()]
""",
        "✗ the names are in the order apply visits the modules (the blog's Model)",
        "apply visits in post-order",
    ),
    wrong(
        "visit_order",
        "modules() reversed",
        "wrong place",
        """
def visit_order(model):
    return [type(module).__name__ for module in reversed(list(model.modules()))]
""",
        "✗ the names are in the order apply visits the modules (the blog's Model)",
        "apply visits in post-order",
    ),
    wrong(
        "visit_order",
        "a shared module once",
        "wrong place",
        """
def visit_order(model):
    names = []
    for path in reversed([path for path, _ in model.named_modules()]):
        names.append(type(model.get_submodule(path)).__name__)
    return sorted(names, key=lambda name: name == type(model).__name__)
""",
        "✗ it holds the class name of every module apply visits, once per visit (SharedBlock",
        "missing 'Linear'",
        "on a module shared by two parents once per parent",
    ),
    wrong(
        "visit_order",
        "appends the modules",
        "wrong type",
        """
def visit_order(model):
    names = []
    model.apply(names.append)
    return names
""",
        "✗ it holds the class name of every module apply visits",
        "not class names (str) but, e.g., a Function_A",
    ),
    wrong(
        "visit_order",
        "a list outside the function",
        "global state shared across calls or modules",
        """
names = []


def visit_order(model):
    model.apply(lambda module: names.append(type(module).__name__))
    return names
""",
        "✗ visit_order makes a new list on every call (SharedBlock",
        "Create the list inside visit_order",
    ),
    wrong(
        "visit_order",
        "forgets to return",
        "wrong type",
        """
def visit_order(model):
    names = []
    model.apply(lambda module: names.append(type(module).__name__))
""",
        "✗ visit_order returns a list",
        "it is None, expected a list",
        "ends with a return statement",
    ),
    wrong(
        "visit_order",
        "children only",
        "the root forgotten",
        """
def visit_order(model):
    names = []
    for child in model.children():
        child.apply(lambda module: names.append(type(module).__name__))
    return names
""",
        "✗ it holds the class name of every module apply visits",
        "missing 'Model'",
        "the model itself included",
    ),
    wrong(
        "visit_order",
        "a pre-order recursion",
        "wrong place",
        """
def visit_order(model):
    names = []

    def walk(module):
        names.append(type(module).__name__)
        for child in module.children():
            walk(child)

    walk(model)
    return names
""",
        "✗ the names are in the order apply visits the modules",
        "post-order",
    ),
    correct(
        "visit_order",
        "a named function",
        """
def visit_order(model):
    order = []

    def record(module):
        order.append(module.__class__.__name__)

    model.apply(record)
    return order
""",
    ),
    correct(
        "visit_order",
        "a post-order recursion of its own",
        """
def visit_order(model):
    def walk(module):
        names = []
        for child in module.children():
            names += walk(child)
        return names + [module._get_name()]

    return walk(model)
""",
    ),
    cheat(
        "visit_order",
        "the two visible orders, by heart",
        """
def visit_order(model):
    if type(model).__name__ == "Model":
        return ["Function_A", "Function_B", "Layer_AB", "Function_C", "Function_D", "Layer_CD", "Model"]
    return ["Linear", "ReLU", "Sequential", "Linear", "Tanh", "Sequential", "SharedBlock"]
""",
    ),
    # -- weight_initialization -----------------------------------------------------------------
    wrong(
        "weight_initialization",
        "the blog's answer",
        "the blog's version",
        """
def weight_initialization(module):
    for param in module.parameters():
        param.data = torch.ones_like(param)
""",
        "✗ autograd saw every change (the blog's Model)",
        "ab.a.W, ab.b.W, cd.c.W and cd.d.W changed through .data",
        "invisible to autograd",
        "✗ each parameter of the blog's Model is written exactly once",
        "ab.a.W was written 3 times, at ab.a, ab and Model",
        "recurse argument",
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
        "✗ each parameter of the blog's Model is written exactly once",
        "written 3 times",
        "recurse argument",
    ),
    wrong(
        "weight_initialization",
        "through .data",
        ".data",
        """
def weight_initialization(module):
    for param in module.parameters(recurse=False):
        param.data.fill_(1.0)
""",
        "✗ autograd saw every change",
        "changed through .data",
        "invisible to autograd",
    ),
    wrong(
        "weight_initialization",
        "fill_ with autograd on",
        "autograd left on",
        """
def weight_initialization(module):
    for param in module.parameters(recurse=False):
        param.fill_(1.0)
""",
        "✗ weight_initialization raised RuntimeError: a leaf Variable that requires grad",
        "while autograd was recording",
        "torch.no_grad()",
    ),
    wrong(
        "weight_initialization",
        "rebinding the loop variable",
        "wrong formula",
        """
def weight_initialization(module):
    for param in module.parameters(recurse=False):
        param = torch.ones_like(param)
""",
        "✗ every parameter of the blog's Model is 1",
        "not all ones: ab.a.W",
        "only rebinds the name",
    ),
    wrong(
        "weight_initialization",
        "new Parameter objects",
        "wrong formula",
        """
def weight_initialization(module):
    for name, param in list(module.named_parameters(recurse=False)):
        setattr(module, name, nn.Parameter(torch.ones_like(param)))
""",
        "✗ every parameter of the blog's Model is still the same Parameter object",
        "ab.a.W, ab.b.W, cd.c.W and cd.d.W are new Parameter objects",
        "optimizer",
    ),
    wrong(
        "weight_initialization",
        "only W",
        "hard-coded to the visible model",
        """
def weight_initialization(module):
    if hasattr(module, "W"):
        with torch.no_grad():
            module.W.fill_(1.0)
""",
        "✗ every parameter of MyModel is 1",
        "linear1.weight",
        "whatever its name",
    ),
    correct(
        "weight_initialization",
        "a decorator and nn.init",
        """
@torch.no_grad()
def weight_initialization(module):
    for param in module.parameters(recurse=False):
        nn.init.ones_(param)
""",
    ),
    correct(
        "weight_initialization",
        "copy_ from a tensor of ones",
        """
def weight_initialization(module):
    with torch.no_grad():
        for _, param in module.named_parameters(recurse=False):
            param.copy_(torch.ones_like(param))
""",
    ),
    correct(
        "weight_initialization",
        "nn.init.constant_ without a with block",
        """
def weight_initialization(module):
    for param in module.parameters(recurse=False):
        nn.init.constant_(param, 1)
""",
    ),
    # -- weight_init ---------------------------------------------------------------------------
    wrong(
        "weight_init",
        "the normal version",
        "wrong formula",
        """
def weight_init(module):
    if isinstance(module, nn.Linear):
        nn.init.xavier_normal_(module.weight)
        nn.init.zeros_(module.bias)
""",
        "✗ linear1.weight of MyModel fills U(-a, a)",
        "not the normal version",
    ),
    wrong(
        "weight_init",
        "Kaiming instead",
        "wrong formula",
        """
def weight_init(module):
    if isinstance(module, nn.Linear):
        nn.init.kaiming_uniform_(module.weight, nonlinearity="relu")
        nn.init.zeros_(module.bias)
""",
        "✗ linear1.weight of MyModel fills U(-a, a)",
        "its largest |weight| is",
        "not Kaiming's",
    ),
    wrong(
        "weight_init",
        "a gain for ReLU",
        "wrong formula",
        """
def weight_init(module):
    if isinstance(module, nn.Linear):
        nn.init.xavier_uniform_(module.weight, gain=nn.init.calculate_gain("relu"))
        nn.init.zeros_(module.bias)
""",
        "✗ linear1.weight of MyModel fills U(-a, a)",
        "the default gain of 1",
    ),
    wrong(
        "weight_init",
        "biases left as they were",
        "wrong formula",
        """
def weight_init(module):
    if isinstance(module, nn.Linear):
        nn.init.xavier_uniform_(module.weight)
""",
        "✗ linear1.bias of MyModel is zero",
        "Biases start at zero",
    ),
    wrong(
        "weight_init",
        "every module with a weight",
        "wrong place",
        """
def weight_init(module):
    if hasattr(module, "weight"):
        nn.init.xavier_uniform_(module.weight)
        nn.init.zeros_(module.bias)
""",
        "✗ every other layer of a small conv net is left as it was",
        "changed: features.0.weight",
        "Test the module's type",
    ),
    wrong(
        "weight_init",
        "MyModel's layers by name",
        "hard-coded to the visible model",
        """
def weight_init(module):
    if type(module).__name__ == "MyModel":
        for layer in (module.linear1, module.linear2):
            nn.init.xavier_uniform_(layer.weight)
            nn.init.zeros_(layer.bias)
""",
        "✗ head.1.weight of a small conv net fills U(-a, a)",
        "kept the weights it was built with",
    ),
    wrong(
        "weight_init",
        "zero_ with autograd on",
        "autograd left on",
        """
def weight_init(module):
    if isinstance(module, nn.Linear):
        nn.init.xavier_uniform_(module.weight)
        module.bias.zero_()
""",
        "✗ weight_init raised RuntimeError: a leaf Variable",
        "torch.no_grad()",
    ),
    correct(
        "weight_init",
        "by hand under no_grad",
        """
@torch.no_grad()
def weight_init(module):
    if type(module) is nn.Linear:
        bound = math.sqrt(6 / (module.in_features + module.out_features))
        module.weight.uniform_(-bound, bound)
        module.bias.zero_()
""",
    ),
    correct(
        "weight_init",
        "constant_ for the bias",
        """
def weight_init(module):
    if isinstance(module, torch.nn.Linear):
        torch.nn.init.xavier_uniform_(module.weight, gain=1.0)
        torch.nn.init.constant_(module.bias, 0.0)
""",
    ),
    cheat(
        "weight_init",
        "only the visible layer sizes",
        """
def weight_init(module):
    if isinstance(module, nn.Linear) and module.in_features in (10, 20, 64, 1024):
        nn.init.xavier_uniform_(module.weight)
        nn.init.zeros_(module.bias)
""",
    ),
]

# -- course v3 (issue 21): writes through .data and frozen parameters that passed before ------
ANSWERS += [
    wrong(
        "weight_init",
        "zeroes the bias through .data",
        ".data",
        """
def weight_init(module):
    if isinstance(module, nn.Linear):
        nn.init.xavier_uniform_(module.weight)
        module.bias.data.zero_()
""",
        "✗ autograd saw every change (MyModel)",
        "linear1.bias and linear2.bias changed through .data",
        "a change made through it is invisible to autograd",
    ),
    wrong(
        "weight_init",
        "assigns a zero bias to .data",
        ".data",
        """
def weight_init(module):
    if type(module) is nn.Linear:
        nn.init.xavier_uniform_(module.weight)
        module.bias.data = torch.zeros(module.out_features)
""",
        "✗ autograd saw every change (MyModel)",
        "changed through .data, where autograd cannot see it",
        "Change the parameter itself, with autograd switched off",
    ),
    wrong(
        "weight_init",
        "Xavier into .data",
        ".data",
        """
def weight_init(module):
    if isinstance(module, nn.Linear):
        nn.init.xavier_uniform_(module.weight.data)
        nn.init.zeros_(module.bias)
""",
        "✗ autograd saw every change (MyModel)",
        "linear1.weight and linear2.weight changed through .data",
        "invisible to autograd",
    ),
    wrong(
        "weight_init",
        "freezes the layer to change it",
        "a frozen parameter",
        """
def weight_init(module):
    if isinstance(module, nn.Linear):
        module.requires_grad_(False)
        bound = math.sqrt(6 / (module.in_features + module.out_features))
        module.weight.uniform_(-bound, bound)
        module.bias.zero_()
""",
        "✗ every parameter of MyModel still trains: it requires grad, and an optimizer step changes it",
        "linear1.weight, linear1.bias, linear2.weight and linear2.bias have requires_grad=False",
        "requires_grad=False (or requires_grad_(False)) freezes it for good",
    ),
    wrong(
        "weight_init",
        "a frozen bias",
        "a frozen parameter",
        """
def weight_init(module):
    if isinstance(module, nn.Linear):
        nn.init.xavier_uniform_(module.weight)
        nn.init.zeros_(module.bias)
        module.bias.requires_grad = False   # "biases start at zero" and stay there
""",
        "✗ every parameter of MyModel still trains",
        "linear1.bias and linear2.bias have requires_grad=False",
        "an optimizer never changes it",
    ),
    correct(
        "weight_init",
        "the bound by hand, under no_grad",
        """
def weight_init(module):
    if not isinstance(module, nn.Linear):
        return
    bound = math.sqrt(6 / (module.in_features + module.out_features))
    with torch.no_grad():
        module.weight.uniform_(-bound, bound)
        module.bias.zero_()
""",
    ),
    correct(
        "weight_init",
        "frozen for the change, then trainable again",
        """
def weight_init(module):
    if isinstance(module, nn.Linear):
        for param in (module.weight, module.bias):
            param.requires_grad_(False)
        nn.init.xavier_uniform_(module.weight)
        module.bias.fill_(0.0)
        for param in (module.weight, module.bias):
            param.requires_grad_(True)
""",
    ),
    wrong(
        "weight_initialization",
        "freezes each parameter to fill it",
        "a frozen parameter",
        """
def weight_initialization(module):
    for param in module.parameters(recurse=False):
        param.requires_grad_(False)
        param.fill_(1.0)
""",
        "✗ every parameter of the blog's Model still trains: it requires grad, and an optimizer step changes it",
        "ab.a.W, ab.b.W, cd.c.W and cd.d.W have requires_grad=False",
        "Switching autograd off for a change is torch.no_grad()'s job",
    ),
    wrong(
        "weight_initialization",
        "freezes after filling, to be safe",
        "a frozen parameter",
        """
def weight_initialization(module):
    with torch.no_grad():
        for name, param in module.named_parameters(recurse=False):
            param.fill_(1.0)
            param.requires_grad = False
""",
        "✗ every parameter of MyModel still trains",
        "have requires_grad=False",
        "freezes it for good",
    ),
    correct(
        "weight_initialization",
        "frozen for the fill, trainable again after",
        """
def weight_initialization(module):
    for param in module.parameters(recurse=False):
        param.requires_grad_(False)
        param.fill_(1.0)
        param.requires_grad_(True)
""",
    ),
]

# -- the blind round (issue 21): each look-alike gets the hint of its own mistake --------------
ANSWERS += [
    wrong(
        "print_module",
        "a line of 31 dashes",
        "wrong formula",
        """
def print_module(module):
    print(module)
    print("-" * 31)
""",
        "✗ each printout shows the module apply passed in",
        "exactly 30 dashes",
    ),
    wrong(
        "print_module",
        "the module printed with end=''",
        "wrong formula",
        """
def print_module(module):
    print(module, end="")
    print("-" * 30)
""",
        "it printed 'Function_A()', which is not how any module",
        "a line of exactly 30 dashes on its own",
    ),
    wrong(
        "weight_initialization",
        "setattr of a plain tensor",
        "wrong type",
        """
def weight_initialization(module):
    for name, param in list(module.named_parameters(recurse=False)):
        setattr(module, name, torch.ones_like(param))
""",
        "✗ weight_initialization raised TypeError: cannot assign 'torch.FloatTensor' as parameter",
        "it assigned a plain tensor to 'W', which the module holds as a Parameter",
        "change the existing parameter in place",
    ),
]

# -- the second blind round (issue 21) ---
ANSWERS += [
    wrong(
        "weight_init",
        "Linear and Conv2d by type",
        "wrong place",
        """
def weight_init(module):
    if isinstance(module, (nn.Linear, nn.Conv2d)):
        nn.init.xavier_uniform_(module.weight)
        nn.init.zeros_(module.bias)
""",
        "✗ every other layer of a small conv net is left as it was",
        "changed: features.0.weight",
        "Only nn.Linear layers get Xavier weights",
    ),
]
