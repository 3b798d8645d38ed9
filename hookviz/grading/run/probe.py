"""The integrity probe: run inside a student's kernel before and after each check cell.

It looks for student code planted where it could change what a check prints or hides:
builtins, ``sys`` hooks, IPython's traceback and execution machinery, the kernel's output
streams, and the modules checks rely on (``hookviz.course.checks`` is compared with its source
file, function by function). Before the first student cell, ``snapshot(config)`` pins every
function of those modules and of their classes (hookviz's own, torch, ``torch.nn.Module``,
builtins...); after that each probe checks they are still the very same objects, which also
catches a function rebound to another genuine one (``torch.allclose = torch.is_tensor``) or
to code made by ``eval``. The student's code owns the kernel, so this is defence in depth,
not proof: the sentinel line and the output comparison remain what makes a grade honest.

The grading plugin sends this file's text to the kernel and calls ``snapshot(config)`` once,
then ``probe(config)`` around each check; it may use only the standard library.
"""

from __future__ import annotations

GUARDED_MODULES = (
    "builtins",
    "sys",
    "io",
    "contextlib",
    "traceback",
    "warnings",
    "math",
    "json",
    "torch",
    "torch.nn.modules.module",
    "IPython.core.interactiveshell",
    "IPython.core.displayhook",
    "IPython.core.ultratb",
    "IPython.core.display_functions",  # a check's card goes out through display()
    "IPython.core.displaypub",
    "ipykernel.iostream",
    "ipykernel.zmqshell",
    "ipykernel.ipkernel",
    "ipykernel.kernelbase",
    "jupyter_client.session",
)
SHELL_METHODS = (
    "showtraceback",
    "_showtraceback",
    "showsyntaxerror",
    "run_cell",
    "run_cell_async",
    "run_code",
    "run_ast_nodes",
    "transform_cell",
    "_run_cell",
)
# Pinned by identity as well (with every hookviz module, torch.nn.modules.*, and the modules
# the instructor's cells import): the functions checks call while they compare.
IDENTITY_MODULES = (
    "collections",
    "copy",
    "dataclasses",
    "functools",
    "hashlib",
    "inspect",
    "operator",
    "re",
    "types",
    "torch.nn",
    "torch.nn.functional",
    "torch.nn.init",
    "torch.nn.parameter",
    "torch.autograd",
    "torch.utils.hooks",
    "torch._tensor",
)
# Names that the interpreter and IPython rebind between cells by design.
UNPINNED = {
    "builtins": {"_", "__", "___", "exit", "quit", "get_ipython", "display"},
    "sys": {"last_type", "last_value", "last_traceback", "last_exc"},
}
SNAPSHOT_SLOT = "_hookviz_integrity"  # where the kernel keeps the pinned originals (on sys)
MAX_PROBLEMS = 12


def probe(config: dict) -> str:
    """JSON: ``problems``, what looks tampered with (empty when nothing does), and ``digest``,
    the fingerprint of the pinned functions' snapshot (None before the snapshot)."""
    import json

    problems: list[str] = []
    digest = None
    try:
        scope = _genuine_scope()
        scope["_probe"](config, problems)
        digest = scope["_check_identities"](config, problems)
    except Exception as error:  # a probe that cannot finish is itself suspicious
        problems.append(f"the integrity probe was stopped by {type(error).__name__}: {error}")
    try:
        return json.dumps(
            {"problems": list(dict.fromkeys(problems))[:MAX_PROBLEMS], "digest": digest}
        )
    except Exception:  # builtins broken badly enough to break json itself
        return '{"problems": ["the integrity probe could not report: the interpreter\'s builtins are broken"]}'


def snapshot(config: dict) -> str:
    """Pin the functions checks rely on, before any student code runs; JSON ``count`` and ``digest``.

    Imports ``config["preload"]`` first (modules the instructor's cells import), so that a
    module a student imports and patches first is pinned in its genuine state.
    """
    import importlib
    import json
    import sys
    import types

    for name in config.get("preload", ()):
        try:
            importlib.import_module(name)
        except Exception:  # the instructor's cell will fail the same way; nothing to pin
            pass
    load_core = getattr(sys.modules.get("hookviz"), "_load_core", None)
    if callable(load_core):  # hookviz binds its names on first use: bind them now, to pin them
        load_core()
    names = list(GUARDED_MODULES) + list(IDENTITY_MODULES) + list(config.get("preload", ()))
    names += sorted(
        n
        for n in list(sys.modules)
        if n == "hookviz" or n.startswith(("hookviz.", "torch.nn.modules."))
    )
    owners: list[tuple[str, object]] = []
    for name in dict.fromkeys(names):
        module = sys.modules.get(name)
        if type(module) is not types.ModuleType:
            continue
        owners.append((name, module))
        for value in list(vars(module).values()):
            if (
                isinstance(value, type)
                and vars(value).get("__module__") == name
                and not value.__flags__ & 0x100  # Py_TPFLAGS_IMMUTABLETYPE: cannot be patched
            ):
                owners.append((f"{name}.{value.__qualname__}", value))
    groups, classes = [], []
    seen = set()
    for label, owner in owners:
        if id(owner) in seen:
            continue
        seen.add(id(owner))
        skip = UNPINNED.get(label, ())
        items = [
            (name, value)
            for name, value in list(vars(owner).items())
            if name not in skip and _pinned_kind(value, types)
        ]
        if items:
            names, values = zip(*items, strict=True)
            groups.append((label, owner, names, values))
        if isinstance(owner, type):  # a method added later would shadow an inherited one
            classes.append((label, owner, frozenset(vars(owner))))
    pinned = (tuple(groups), tuple(classes))
    setattr(sys, SNAPSHOT_SLOT, pinned)
    count = sum(len(names) for _, _, names, _ in groups)
    return json.dumps({"count": count, "digest": _digest(pinned)})


def _pinned_kind(value: object, types) -> bool:
    """Functions, classes, descriptors and modules: what a check calls or looks up, not data."""
    return callable(value) or isinstance(value, types.ModuleType) or hasattr(type(value), "__get__")


def _digest(pinned: tuple) -> str:
    """A fingerprint of the snapshot itself (the identities of everything it holds), so that
    the grader, which keeps the first one, notices when the snapshot is swapped or emptied."""
    import array
    import hashlib

    groups, classes = pinned
    parts = array.array("q")
    for _, owner, names, values in groups:
        try:  # a tuple's hash runs over its items' in C: functions hash by identity
            together = hash(values)
        except TypeError:  # an unhashable callable among them
            together = hash(tuple(map(id, values)))
        parts.extend((id(owner), id(names), id(values), hash(names), together))
    for _, owner, names in classes:
        parts.extend((id(owner), id(names), hash(names)))
    return hashlib.sha256(parts.tobytes()).hexdigest()


def _genuine_scope() -> dict:
    """This module's probing functions, running with the builtins pinned in the snapshot (when
    there is one) rather than the kernel's current ones: a student who rebinds ``builtins.all``
    or ``isinstance`` must not blind the very checks that would notice. Every function of the
    module is rebuilt, so that no list of them can leave a new scan out."""
    import sys

    pinned = sys.__dict__.get(SNAPSHOT_SLOT)
    if pinned is None:
        return _probe.__globals__
    genuine = {}  # built with syntax alone: no builtin is called before they are genuine
    for label, _owner, names, originals in pinned[0]:
        if label == "builtins":
            index = 0
            for name in names:
                genuine[name] = originals[index]
                index += 1
    module = _probe.__globals__
    scope = {**module, "__builtins__": genuine}
    for name, value in module.items():  # this module's functions are the ones with its globals
        if value.__class__ is _probe.__class__ and value.__globals__ is module:
            rebuilt = value.__class__(value.__code__, scope, name, value.__defaults__)
            rebuilt.__kwdefaults__ = value.__kwdefaults__
            scope[name] = rebuilt
    return scope


def _check_identities(config: dict, problems: list[str]) -> str | None:
    """Each pinned function must still be the object it was; returns the snapshot's digest."""
    import sys

    pinned = sys.__dict__.get(SNAPSHOT_SLOT)
    if pinned is None:
        return None
    return _verify_pinned(pinned, problems)


def _verify_pinned(pinned: tuple, problems: list[str]) -> str | None:
    """The work of ``_check_identities``, run with the genuine builtins."""
    import operator
    import os
    import sys
    import types

    if type(pinned) is not tuple or len(pinned) != 2:
        problems.append("the grader's snapshot of the genuine functions was replaced")
        return None
    groups, classes = pinned
    library = tuple(
        os.path.dirname(os.path.realpath(getattr(sys.modules.get(root), "__file__", None) or "/"))
        + os.sep
        for root in ("torch", "hookviz")
    )
    for label, owner, names, originals in groups:
        namespace = vars(owner)
        currents = list(map(namespace.get, names))  # None for a deleted name: none was None
        if all(map(operator.is_, currents, originals)):
            continue  # the usual case, at C speed
        for name, current, original in zip(names, currents, originals, strict=True):
            if current is original or _library_wrapper(current, original, library, types, os):
                continue
            if name not in namespace:
                problems.append(f"{label}.{name} was deleted")
            else:
                problems.append(
                    f"{label}.{name} was rebound: it is not the function the checks rely on"
                )
    for label, owner, names in classes:
        namespace = vars(owner)
        if len(namespace) == len(names) and namespace.keys() <= names:
            continue  # the usual case, checked cheaply
        for name in namespace.keys() - names:
            inherited = any(name in vars(base) for base in owner.__mro__[1:])
            if inherited and _pinned_kind(namespace[name], types):
                problems.append(
                    f"{label}.{name} was added, over the inherited one the checks rely on"
                )
    return _digest(pinned)


def _library_wrapper(current: object, original: object, library: tuple, types, os) -> bool:
    """torch wraps some of its functions when a submodule loads (torch._dynamo wraps manual_seed),
    and nn.Module's __init__ and __setstate__ the first time it runs a compiled frame (its
    generation tagging, with no __wrapped__): a function from torch's own files that closes over
    the original is not a student's patch."""
    if type(current) is not types.FunctionType:
        return False
    filename = os.path.realpath(current.__code__.co_filename)
    if not filename.startswith(library):
        return False
    for cell in current.__closure__ or ():
        try:
            if cell.cell_contents is original:
                return True
        except ValueError:  # an empty cell
            continue
    return False


def _probe(config: dict, problems: list[str]) -> None:
    """Every scan, in turn, each adding what looks tampered with to ``problems``."""
    import hashlib
    import sys
    import types

    scan = _scanner(config, problems)
    _scan_builtins(scan, problems)
    _scan_sys(scan, problems)
    _scan_guarded_modules(config, scan, problems)
    _scan_shell(scan, problems)
    _check_checks_module(config, problems, scan.code_file, hashlib, sys, types)


def _scanner(config: dict, problems: list[str]):
    """What every scan shares: ``untrusted(filename)``, ``code_file(value)``, ``report(what,
    value)``, ``namespace(label, dict)`` and ``klass(label, cls)``, as one namespace."""
    import functools
    import os
    import tempfile
    import types

    # Student code lives in the submission's folder, or in the files IPython compiles cells
    # into (<tmp>/ipykernel_<pid>/<hash>.py). Not all of /tmp: hookviz itself may be installed
    # under /tmp (a CI checkout), and that code is the genuine article.
    untrusted_roots = (os.path.realpath(config.get("workdir") or os.getcwd()) + os.sep,)
    cell_folders = os.path.realpath(tempfile.gettempdir()) + os.sep + "ipykernel_"

    verdicts: dict[str, bool] = {}

    def untrusted(filename: object) -> bool:
        if type(filename) is not str:  # a str subclass could hash like a trusted name
            return isinstance(filename, str)
        if filename not in verdicts:
            if filename.startswith(("<ipython-input", "<stdin>")):
                verdicts[filename] = True
            elif filename.startswith("<"):  # <frozen os>, <string> (dataclass-made methods)
                verdicts[filename] = False
            else:
                real = os.path.realpath(filename)
                verdicts[filename] = real.startswith(untrusted_roots) or real.startswith(
                    cell_folders
                )
        return verdicts[filename]

    def code_file(value: object) -> str | None:
        """The file a callable's Python code came from (None for C code and plain data)."""
        kind = type(value)  # compared by identity: a student's metaclass can make == lie
        if kind is types.FunctionType:
            return value.__code__.co_filename
        if kind is types.MethodType or kind is staticmethod or kind is classmethod:
            return code_file(value.__func__)
        if kind is functools.partial:
            return code_file(value.func)
        if kind is property:
            return next((code_file(f) for f in (value.fget, value.fset) if code_file(f)), None)
        if isinstance(value, type) or any(
            kind is c_type
            for c_type in (
                types.BuiltinFunctionType,
                types.WrapperDescriptorType,
                types.MethodWrapperType,
                types.MethodDescriptorType,
                types.ModuleType,
            )
        ):
            return None
        # What a call runs: __call__ found in the type's own MRO dicts, as the interpreter finds
        # it, not through attribute lookup, which a student's metaclass can answer.
        call = None
        for base in type.__dict__["__mro__"].__get__(kind):
            names = type.__dict__["__dict__"].__get__(base)
            if "__call__" in names:
                call = names["__call__"]
                break
        if type(call) is types.FunctionType:
            return call.__code__.co_filename
        return None

    def report(what: str, value: object) -> None:
        if untrusted(code_file(value)):
            problems.append(f"{what} was replaced by code from the notebook")

    # Types whose values never run a file's code (C functions, classes, plain data), learnt
    # once per probe by the type's id (a student's metaclass could fake equality, not an id).
    # Thousands of names are scanned per probe: this keeps each to a lookup.
    codeless: dict[int, type] = {}
    wrappers = (types.MethodType, staticmethod, classmethod, functools.partial, property)

    def namespace(label: str, names: dict) -> None:
        for name, value in list(names.items()):
            kind = type(value)
            if kind is types.FunctionType:
                filename = value.__code__.co_filename
            elif id(kind) in codeless:
                continue
            else:
                filename = code_file(value)
                if filename is None and not any(kind is w for w in wrappers):
                    codeless[id(kind)] = kind
                    continue
            if untrusted(filename):
                problems.append(f"{label}.{name} was replaced by code from the notebook")

    def klass(label: str, cls: type) -> None:
        for base in cls.__mro__:
            if base is not object:
                namespace(f"{label}.{base.__name__}", dict(vars(base)))

    return types.SimpleNamespace(
        untrusted=untrusted, code_file=code_file, report=report, namespace=namespace, klass=klass
    )


def _scan_builtins(scan, problems: list[str]) -> None:
    """Nothing planted in builtins, and the everyday functions and classes still the built-in ones."""
    import builtins
    import types

    scan.namespace("builtins", dict(vars(builtins)))
    for name in ("print", "isinstance", "len", "repr", "compile", "exec", "open", "getattr", "id"):
        value = vars(builtins).get(name)
        if type(value) is not types.BuiltinFunctionType or value.__name__ != name:
            problems.append(f"builtins.{name} is not the built-in function any more")
    for name in ("type", "str", "int", "bool", "list", "dict", "object", "BaseException"):
        value = vars(builtins).get(name)
        if (
            not isinstance(value, type)
            or value.__module__ != "builtins"
            or value.__qualname__ != name
        ):
            problems.append(f"builtins.{name} is not the built-in class any more")


def _scan_sys(scan, problems: list[str]) -> None:
    """sys's hooks, tracers and output streams."""
    import sys

    for name in ("displayhook", "excepthook", "breakpointhook"):
        scan.report(f"sys.{name}", getattr(sys, name, None))
    for name, current in (("settrace", sys.gettrace()), ("setprofile", sys.getprofile())):
        if current is not None and scan.untrusted(scan.code_file(current)):
            problems.append(f"sys.{name} installed a tracer from the notebook")
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if type(stream).__module__ != "ipykernel.iostream":
            problems.append(f"sys.{name} was replaced by {type(stream).__name__}")
            continue
        for method in ("write", "flush"):
            if method in vars(stream) and (
                scan.code_file(vars(stream)[method]) is None
                or scan.untrusted(scan.code_file(vars(stream)[method]))
            ):  # IPython's own tee wraps write; anything else does not belong there
                problems.append(f"sys.{name}.{method} was replaced")


def _scan_guarded_modules(config: dict, scan, problems: list[str]) -> None:
    """The modules the checks rely on: genuine module objects, nothing planted in them."""
    import sys
    import types

    guarded = list(config.get("guarded_modules", GUARDED_MODULES))
    guarded += sorted(n for n in list(sys.modules) if n == "hookviz" or n.startswith("hookviz."))
    for name in guarded:
        module = sys.modules.get(name)
        if module is None:
            continue
        if type(module) is not types.ModuleType:
            problems.append(f"sys.modules[{name!r}] is not a module any more")
            continue
        if scan.untrusted(getattr(module, "__file__", None)):
            problems.append(f"sys.modules[{name!r}] was replaced by a file from the notebook")
            continue
        namespace = dict(vars(module))
        scan.namespace(name, namespace)
        for value in namespace.values():
            if isinstance(value, type) and value.__module__ == name:
                scan.namespace(f"{name}.{value.__name__}", dict(vars(value)))


def _scan_shell(scan, problems: list[str]) -> None:
    """IPython: the shell, its kernel, and their hooks, events and transformers."""
    import sys
    import types

    shell = None
    interactive = sys.modules.get("IPython.core.interactiveshell")
    if interactive is not None:
        shell_class = vars(interactive).get("InteractiveShell")
        if isinstance(shell_class, type) and shell_class.initialized():
            shell = shell_class.instance()
    if shell is None:
        return
    for name in SHELL_METHODS:
        # ipykernel binds its own _showtraceback here; nothing else should be
        value = vars(shell).get(name)
        if value is not None and not (
            type(value) is types.MethodType
            and value.__self__ is shell
            and not scan.untrusted(scan.code_file(value))
            and scan.code_file(value) is not None
        ):
            problems.append(f"the shell's {name} was replaced on the shell object")
    scan.namespace("shell", dict(vars(shell)))
    scan.klass("shell", type(shell))
    if getattr(shell, "custom_exceptions", ()):
        problems.append("a custom exception handler (set_custom_exc) is installed")
    for event, callbacks in getattr(shell.events, "callbacks", {}).items():
        for callback in callbacks:
            scan.report(
                f"the {event} event callback {getattr(callback, '__name__', '?')}", callback
            )
    for label in ("input_transformers_cleanup", "input_transformers_post", "ast_transformers"):
        for transformer in getattr(shell, label, []):
            scan.report(f"shell.{label} entry", transformer)
            if scan.untrusted(scan.code_file(getattr(type(transformer), "visit", None))):
                problems.append(f"shell.{label} has an AST transformer from the notebook")
    for label in ("kernel", "displayhook", "display_pub"):
        part = getattr(shell, label, None)
        if part is not None:
            scan.namespace(f"shell.{label}", dict(vars(part)))
            scan.klass(label, type(part))
    session = getattr(getattr(shell, "kernel", None), "session", None)
    if session is not None:
        scan.namespace("session", dict(vars(session)))
    # A cell's result as text is what nbgrader's partial credit reads: no printer of the notebook's
    formatters = getattr(getattr(shell, "display_formatter", None), "formatters", None)
    plain = formatters.get("text/plain") if isinstance(formatters, dict) else None
    for table in ("type_printers", "deferred_printers", "singleton_printers"):
        printers = getattr(plain, table, None)
        for printer in list(printers.values()) if isinstance(printers, dict) else ():
            scan.report(f"a text/plain printer ({table})", printer)


def _check_checks_module(config, problems, code_file, hashlib, sys, types) -> None:
    """hookviz.course.checks must hold exactly the functions its source file defines."""
    import os

    path = config.get("checks_path")
    module = sys.modules.get("hookviz.course.checks")
    if not path or module is None:
        return
    package = sys.modules.get("hookviz.course")
    if package is not None and vars(package).get("checks", module) is not module:
        problems.append("hookviz.course.checks was swapped for another object")
    if os.path.realpath(getattr(module, "__file__", "") or "") != os.path.realpath(path):
        problems.append("hookviz.course.checks was loaded from another file")
        return
    with open(path, encoding="utf-8") as handle:
        source = handle.read()
    if (
        config.get("checks_sha256")
        and hashlib.sha256(source.encode()).hexdigest() != config["checks_sha256"]
    ):
        problems.append("hookviz.course.checks' source file was changed during grading")

    def fingerprint(code) -> str:
        consts = []
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                consts.append(fingerprint(const))
            elif isinstance(const, frozenset):
                consts.append(repr(sorted(map(repr, const))))
            else:
                consts.append(repr(const))
        parts = (
            code.co_code,
            code.co_names,
            code.co_varnames,
            code.co_freevars,
            code.co_argcount,
            code.co_kwonlyargcount,
            code.co_flags,
            tuple(consts),
        )
        return hashlib.sha256(repr(parts).encode()).hexdigest()

    def genuine_member(live: object, code, label: str) -> None:
        """``live`` must be a function whose code is exactly ``code`` from the source file."""
        if type(live) in (staticmethod, classmethod):
            candidates = [live.__func__]
        elif type(live) is property:
            candidates = [live.fget, live.fset, live.fdel]
        else:
            candidates = [live]
        if not any(
            type(f) is types.FunctionType
            and f.__code__.co_filename == path
            and fingerprint(f.__code__) == fingerprint(code)
            for f in candidates
        ):
            problems.append(f"hookviz.course.checks.{label} is not the genuine function")

    function_flags = 0x1 | 0x2  # CO_OPTIMIZED | CO_NEWLOCALS: a function body, not a class body
    compiled = compile(source, path, "exec", dont_inherit=True)
    for code in compiled.co_consts:
        if not isinstance(code, types.CodeType) or code.co_name.startswith("<"):
            continue
        live = vars(module).get(code.co_name)
        if code.co_flags & function_flags == function_flags:
            genuine_member(live, code, code.co_name)
        elif isinstance(live, type):
            for method in code.co_consts:
                if isinstance(method, types.CodeType) and not method.co_name.startswith("<"):
                    genuine_member(
                        vars(live).get(method.co_name), method, f"{code.co_name}.{method.co_name}"
                    )
