"""The integrity probe, run in a fresh Python in this process's environment."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from hookviz.grading.run import probe


def printed_lines(script: str, timeout: float = 120) -> list[str]:
    """What ``script`` printed, run in a fresh Python (the probe's tests plant things there)."""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def run_probe(code: str, tmp_path: Path) -> list[str]:
    """Run ``code`` as if typed in a notebook cell under tmp_path, then the probe, in a fresh Python."""
    script = (
        "import json, sys\n"
        f"sys.path.insert(0, {str(Path(probe.__file__).parent)!r})\n"
        "import probe\n"
        f"exec(compile({code!r}, {str(tmp_path / 'cell.py')!r}, 'exec'), {{}})\n"
        f"sys.stdout.write(probe.probe({{'workdir': {str(tmp_path)!r}, 'checks_path': None}}) + '\\n')\n"
    )
    lines = printed_lines(script, timeout=60)
    return [
        p
        for p in json.loads(lines[-1])["problems"]
        if "sys.stdout was replaced" not in p and "sys.stderr was replaced" not in p
    ]  # plain Python has no ipykernel streams


@pytest.mark.parametrize(
    "code, words",
    [
        ("", None),
        ("import builtins\nbuiltins.print = lambda *a, **k: None", "builtins.print"),
        (
            "import builtins\nbuiltins.isinstance = len",
            "builtins",
        ),  # breaks the probe itself: said so
        ("import math\nmath.isclose = lambda *a, **k: True", "math.isclose"),
        ("import sys\nsys.settrace(lambda *a: None)", "tracer"),
        (
            "import sys, types\nsys.modules['traceback'] = types.SimpleNamespace()",
            "sys.modules['traceback']",
        ),
    ],
)
def test_probe_finds_code_planted_in_the_interpreter(
    tmp_path: Path, code: str, words: str | None
) -> None:
    problems = run_probe(code, tmp_path)
    if words is None:
        assert problems == []
    else:
        assert any(words in p for p in problems), problems


def test_every_function_of_the_probe_runs_with_the_snapshots_builtins(monkeypatch) -> None:
    """A scan added to probe.py gets the pinned builtins too, whatever it is called: no list of
    the probe's functions to keep, and none left on the kernel's (a student's) builtins."""
    import ast
    import builtins

    added = "\n\ndef _scan_added_later(scan, problems):\n    return len\n"
    source = Path(probe.__file__).read_text(encoding="utf-8") + added
    defined = {node.name for node in ast.parse(source).body if isinstance(node, ast.FunctionDef)}
    assert {"_probe", "_scan_builtins", "_scan_shell", "_verify_pinned"} <= defined
    kernel: dict = {}
    exec(compile(source, probe.__file__, "exec"), kernel)  # as the plugin runs it in the kernel

    def pinned_len(value):  # stands for the snapshot's genuine len
        return 0

    monkeypatch.setattr(
        sys,
        probe.SNAPSHOT_SLOT,
        ((("builtins", builtins, ("len",), (pinned_len,)),), ()),
        raising=False,
    )
    scope = kernel["_genuine_scope"]()
    assert kernel["_scan_added_later"](None, []) is len  # as defined: the kernel's builtins
    assert scope["_scan_added_later"](None, []) is pinned_len
    for name in defined:
        function = scope[name]
        assert function is not kernel[name] and function.__code__ is kernel[name].__code__, name
        assert function.__globals__ is scope and scope["__builtins__"] == {"len": pinned_len}, name


def test_probe_recognises_the_genuine_checks_module_and_a_forged_one(tmp_path: Path) -> None:
    checks = Path(probe.__file__).resolve().parents[2] / "course" / "checks.py"
    script = (
        "import json\nfrom hookviz.course import checks\nfrom hookviz.grading.run import probe\n"
        f"config = {{'workdir': {str(tmp_path)!r}, 'checks_path': {str(checks)!r}}}\n"
        "print(json.loads(probe.probe(config))['problems'])\n"
        # A look-alike compiled under the genuine file name still differs in its code.
        f"exec(compile('def sentinel(grade_id):\\n    return None\\n', {str(checks)!r}, 'exec'), ns := {{}})\n"
        "checks.sentinel = ns['sentinel']\n"
        "print(json.loads(probe.probe(config))['problems'])\n"
    )
    lines = printed_lines(script)
    before, after = (eval(line) for line in lines[-2:])
    assert not any("checks" in p for p in before), before
    assert "hookviz.course.checks.sentinel is not the genuine function" in after


def test_probe_trusts_code_installed_under_tmp_but_not_ipython_cell_files(tmp_path: Path) -> None:
    """A CI checkout may live under /tmp: only the submission's folder and IPython's cell files
    count as the student's code."""
    workdir = tmp_path / "submission"
    workdir.mkdir()
    cells = Path(tempfile.mkdtemp(prefix="ipykernel_"))
    installed = tmp_path / "site"
    installed.mkdir()
    script = (
        "import builtins, json\nfrom hookviz.grading.run import probe\n"
        f"for name, folder in (('from_site', {str(installed)!r}), ('from_cell', {str(cells)!r})):\n"
        "    ns = {}\n"
        "    exec(compile('def planted():\\n    return 1\\n', folder + '/x.py', 'exec'), ns)\n"
        "    setattr(builtins, name, ns['planted'])\n"
        f"print(json.loads(probe.probe({{'workdir': {str(workdir)!r}}}))['problems'])\n"
    )
    lines = printed_lines(script)
    problems = eval(lines[-1])
    assert "builtins.from_cell was replaced by code from the notebook" in problems
    assert not any("from_site" in p for p in problems), problems


def test_probe_sees_planted_callables_whatever_their_type_pretends(tmp_path: Path) -> None:
    """The scan skips values of types that run no file's code, learnt by type: a type that
    claims to equal int, one whose metaclass hides its __call__, and a code object whose file
    name is a str subclass that hashes like a library's, are still caught; plain numbers
    planted beside them are not reported."""
    workdir = tmp_path / "submission"
    workdir.mkdir()
    planted = str(workdir / "x.py")
    script = (
        "import builtins, json, torch\nfrom hookviz.grading.run import probe\n"
        "class Liar(type):\n"
        "    def __eq__(cls, other):\n        return True\n"
        "    def __hash__(cls):\n        return hash(int)\n"
        "ns = {'Liar': Liar}\n"
        f"exec(compile('class Planted(metaclass=Liar):\\n    def __call__(self):\\n"
        f"        return 1\\n', {planted!r}, 'exec'), ns)\n"
        "class Hider(type):\n"
        "    def __getattribute__(cls, name):\n"
        "        return None if name == '__call__' else type.__getattribute__(cls, name)\n"
        "ns['Hider'] = Hider\n"
        f"exec(compile('class Hidden(metaclass=Hider):\\n    def __call__(self):\\n"
        f"        return 1\\n', {planted!r}, 'exec'), ns)\n"
        "class Library(str):\n    def __hash__(self):\n        return hash(torch.__file__)\n"
        "    def __eq__(self, other):\n        return True\n"
        "def sneaky():\n    return 2\n"
        f"sneaky.__code__ = sneaky.__code__.replace(co_filename=Library({planted!r}))\n"
        "builtins.a_number, builtins.planted_call, builtins.sneaky = 5, ns['Planted'](), sneaky\n"
        "builtins.hidden_call = ns['Hidden']()\n"
        f"print(json.loads(probe.probe({{'workdir': {str(workdir)!r}}}))['problems'])\n"
    )
    lines = printed_lines(script)
    problems = eval(lines[-1])
    assert "builtins.planted_call was replaced by code from the notebook" in problems
    assert "builtins.sneaky was replaced by code from the notebook" in problems
    assert "builtins.hidden_call was replaced by code from the notebook" in problems
    assert not any("a_number" in p for p in problems), problems


def test_the_identity_snapshot_pins_what_checks_rely_on_and_names_what_was_rebound(
    tmp_path: Path,
) -> None:
    script = (
        "import json, builtins, torch\nimport hookviz as hv\nfrom torch import nn\n"
        "from hookviz.grading.run import probe\n"
        f"config = {{'workdir': {str(tmp_path)!r}, 'preload': ['hookviz.course.checks']}}\n"
        "taken = json.loads(probe.snapshot(config))\n"
        "labels = {f'{g[0]}.{n}' for g in __import__('sys')._hookviz_integrity[0] for n in g[2]}\n"
        "print(json.dumps(sorted(l for l in labels if l in {'torch.equal', 'builtins.all', "
        "'torch.nn.modules.module.Module.modules', 'hookviz.postorder', "
        "'hookviz.course.checks.Check.equal', 'torch.Tensor.backward'})))\n"
        "before = json.loads(probe.probe(config))\n"
        "import torch._dynamo  # torch wraps torch.manual_seed itself: not a student's patch\n"
        "torch.compile(nn.Linear(2, 2), backend='eager')(torch.ones(1, 2))  # torch patches\n"
        "assert nn.Module.__init__.__module__ == 'torch._dynamo.mutation_guard'  # Module.__init__\n"
        "after_dynamo = json.loads(probe.probe(config))\n"
        "torch.equal, builtins.all = torch.is_same_size, bool\n"
        "nn.Module.modules = nn.Module.children\n"
        "torch.Tensor.tolist = torch.Tensor.clone  # shadows the C method of its base class\n"
        "del hv.postorder\n"
        "patched = json.loads(probe.probe(config))\n"
        "print(json.dumps([taken, before, after_dynamo, patched]))\n"
    )
    lines = printed_lines(script, timeout=180)
    labels, (taken, before, after_dynamo, patched) = (json.loads(line) for line in lines[-2:])
    assert labels == sorted(
        [
            "builtins.all",
            "hookviz.course.checks.Check.equal",
            "hookviz.postorder",
            "torch.Tensor.backward",
            "torch.equal",
            "torch.nn.modules.module.Module.modules",
        ]
    )
    assert taken["count"] > 3000 and before["digest"] == taken["digest"]
    assert not any(
        "rebound" in p or "deleted" in p for p in before["problems"] + after_dynamo["problems"]
    )
    assert {p for p in patched["problems"] if "rebound" in p or "deleted" in p or "added" in p} == {
        "torch.Tensor.tolist was added, over the inherited one the checks rely on",
        "torch.equal was rebound: it is not the function the checks rely on",
        "builtins.all was rebound: it is not the function the checks rely on",
        "torch.nn.modules.module.Module.modules was rebound: it is not the function the checks rely on",
        "hookviz.postorder was deleted",
    }
    assert patched["digest"] == taken["digest"]  # the snapshot itself is untouched
