"""hookviz.course.checks: friendly, type-strict checks that never leak a traceback for a missing answer."""

from __future__ import annotations

import linecache
import re
import warnings
from pathlib import Path

import pytest
import torch
from torch import nn

import hookviz as hv
from hookviz.course import checks
from hookviz.course.checks import FAILED, NOT_DONE, PASSED, STOPPED, Check, Hint, difference
from hookviz.course.content import ContentError
from hookviz.course.hint_files import parse_hints

REPO = Path(__file__).resolve().parents[2]


def stub(*args):
    # YOUR CODE HERE
    raise NotImplementedError()


def answer_42(*args):
    return 42


def shouty_answer(*args):
    print("debugging output the student forgot")
    warnings.warn("a warning the student caused", UserWarning, stacklevel=1)
    return 42


def visit_order(model):  # an answer name the 01-apply hints know
    return []


def not_a_function():
    pass


not_a_function = 3  # noqa: F811  (a student who assigned a value to the name)


# -- type-strict comparison ------------------------------------------------------------


class AlwaysEqual(int):
    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


class FakeTensor:
    shape = (2,)
    dtype = torch.float32

    def __eq__(self, other):
        return True

    def __repr__(self) -> str:  # no address: pytest-xdist's workers must collect the same ids
        return "FakeTensor()"


def stable_id(value) -> str:
    """A test id that is the same in every process: a set's repr follows the hash seed."""
    return (
        "{" + ", ".join(sorted(map(repr, value))) + "}" if isinstance(value, set) else repr(value)
    )


@pytest.mark.parametrize(
    ("actual", "expected"),
    [
        (AlwaysEqual(1), 42),
        (42.0, 42),
        (True, 1),
        ([1, 2], (1, 2)),
        (FakeTensor(), torch.zeros(2)),
        (nn.Parameter(torch.zeros(2)), torch.zeros(2)),
        (torch.zeros(2, dtype=torch.float64), torch.zeros(2)),
        (torch.zeros(1, 2), torch.zeros(2)),
        ({AlwaysEqual(1): 1.0}, {1: 1.0}),
        ({"a": 1}, {"a": 1, "b": 2}),
        ({"x", AlwaysEqual(1)}, {"x", 1}),
        ("Function_A()\n---", "Function_A()\n--"),
        (None, 0),
    ],
    ids=stable_id,
)
def test_difference_is_type_strict(actual, expected):
    assert difference(actual, expected) is not None


@pytest.mark.parametrize(
    "value",
    [
        42,
        4.5,
        "text",
        None,
        True,
        [1, "a", (2.0, None)],
        {"a": torch.ones(2)},
        {"x", "y"},
        torch.arange(20.0),
    ],
    ids=stable_id,
)
def test_difference_accepts_equal_values(value):
    copy = {k: v.clone() for k, v in value.items()} if isinstance(value, dict) else value
    assert difference(value, copy) is None


def test_difference_describes_the_first_mismatch():
    assert difference([1, 2, 3], [1, 5, 3]) == "item[1] is 2, expected 5"
    assert difference((2, 1), (2,)) == "the result is (2, 1), expected (2,)"
    assert (
        difference(torch.ones(2, 2), torch.ones(2)) == "the result has shape (2, 2), expected (2,)"
    )
    assert "line 2" in difference("a\nb\nc", "a\nx\nc")
    assert (
        difference({"b": 1.0}, {"a": 1.0})
        == "the result has missing keys ['a'] and unexpected keys ['b']"
    )
    assert difference({"x": 1}, {"": 1, "x": 1}) == (
        "the result has missing keys ['' (the root module's path)]"
    )


def test_close_allows_rounding_but_not_other_types():
    assert difference(torch.tensor([1.0]), torch.tensor([1.0 + 1e-7]), rtol=1e-5) is None
    assert difference(torch.tensor([1.0]), torch.tensor([1.1]), rtol=1e-5) is not None
    assert difference(0.30000000000000004, 0.3, rtol=1e-9) is None
    assert difference(torch.tensor(0.3), 0.3, rtol=1e-5) is not None


def test_difference_refuses_what_it_cannot_compare():
    with pytest.raises(TypeError, match="compares tensors, numbers"):
        difference(object(), object())


# -- running the student's answer -------------------------------------------------------


def test_a_stub_is_not_done_yet(capsys):
    check = Check("stub")
    assert check.run(stub) is STOPPED
    check.equal(check.run(answer_42), 42, "never printed: the check has stopped", hint=Hint("-"))
    out = capsys.readouterr().out
    assert out.startswith(f"{NOT_DONE} stub: not done yet.")
    assert out.count("\n") == 1 and PASSED not in out and FAILED not in out
    assert not check.ok


def test_a_stub_inside_apply_is_not_done_yet(capsys):
    check = Check("stub")
    check.run(
        hv.trace_apply, hv.examples.model(), stub, echo=False
    )  # raises ApplyFnError from the stub
    assert "stub: not done yet" in capsys.readouterr().out


def test_a_not_implemented_error_from_torch_is_an_error_not_a_stub(capsys):
    check = Check("answer_42")
    check.run(nn.Module(), torch.ones(1))  # torch raises NotImplementedError: no forward
    out = capsys.readouterr().out
    assert out.startswith(f"{FAILED} answer_42 raised NotImplementedError")
    assert "not done yet" not in out and "Hint: " in out


def test_an_error_becomes_one_friendly_line(capsys):
    def broken():
        raise ValueError(f"bad value in {broken!r}")  # a message with a memory address

    check = Check("answer_42")
    assert check.run(broken) is STOPPED
    out = capsys.readouterr().out
    assert out.startswith(f"{FAILED} broken raised ValueError: bad value in <function")
    assert re.search(r"0x[0-9a-f]+", out) is None
    assert "Traceback" not in out


def test_the_answers_prints_and_warnings_are_captured(capsys):
    check = Check("shouty_answer")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning escaping the check would raise here
        captured = check.capture(shouty_answer)
    assert captured.result == 42
    assert captured.stdout == "debugging output the student forgot\n"
    assert captured.warnings == ["UserWarning: a warning the student caused"]
    check.equal(captured.result, 42, "the answer is 42", hint=Hint("-"))
    assert capsys.readouterr().out == f"{PASSED} the answer is 42\n"


def test_every_correct_answer_prints_the_same(capsys):
    outputs = []
    for answer in (answer_42, shouty_answer):
        check = Check("answer_42")
        check.equal(check.run(answer), 42, "the answer is 42", hint=Hint("-"))
        checks.sentinel("check_answer")
        outputs.append(capsys.readouterr().out)
    assert (
        outputs[0] == outputs[1] == f"{PASSED} the answer is 42\n[hookviz] check_answer: finished\n"
    )


def test_a_missing_name_is_not_done_yet(capsys):
    check = Check("answer_42", "never_defined_anywhere")
    assert not check.ok
    assert capsys.readouterr().out.startswith(
        f"{NOT_DONE} never_defined_anywhere is not defined yet"
    )


def test_a_name_that_is_not_a_function_gets_a_hint(capsys):
    check = Check("not_a_function")
    assert not check.ok and check.failed == 1
    out = capsys.readouterr().out
    assert out.startswith(f"{FAILED} not_a_function should be a function, but it is an int.")
    assert "Hint: define it with `def not_a_function(...):`" in out


def test_a_wrong_type_stops_the_check(capsys):
    check = Check("answer_42")
    assert not check.is_type([1, 2], dict, "returns a dict", hint=Hint("return a dict"))
    check.equal(1, 2, "never printed", hint=Hint("-"))
    out = capsys.readouterr().out
    assert (
        out
        == f"{FAILED} returns a dict\n    it is a list of 2 items, expected a dict\n    Hint: return a dict\n"
    )


def test_raises(capsys):
    check = Check("answer_42")

    def fails():
        raise ValueError("no")

    assert check.raises(ValueError, fails, "fails loudly", hint=Hint("-"))
    assert not check.raises(ValueError, answer_42, "fails loudly again", hint=Hint("let it raise"))
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"{PASSED} fails loudly"
    assert "it did not raise (expected ValueError)" in out and "Hint: let it raise" in out


def test_why_is_printed_under_a_pass_only(capsys):
    because = Hint("", why="because")
    Check("answer_42").equal(42, 42, "right", hint=Hint("think again"), why=because)
    Check("answer_42").equal(41, 42, "right", hint=Hint("think again"), why=because)
    out = capsys.readouterr().out
    assert out.count("Why: because") == 1 and out.startswith(f"{PASSED} right\n    Why: because\n")


def test_true_needs_a_bool_from_the_check_cell():
    with pytest.raises(TypeError, match="needs a bool"):
        Check("answer_42").true(torch.tensor(True), "claim", hint=Hint("-"))


def test_sentinel(capsys):
    checks.sentinel("check_print_module")
    assert capsys.readouterr().out == "[hookviz] check_print_module: finished\n"
    with pytest.raises(TypeError, match="grade_id"):
        checks.sentinel("")


def test_try_it_runs_in_the_open_and_says_not_done(capsys):
    with pytest.warns(UserWarning, match="the student caused"):
        assert checks.try_it(shouty_answer) == 42
    assert checks.try_it(stub) is None
    out = capsys.readouterr().out
    assert out.startswith("debugging output the student forgot\n")
    assert f"{NOT_DONE} stub: not done yet" in out


# -- hints in levels -------------------------------------------------------------------------

LEVELLED = Hint(
    "look at the recurse argument",
    more="ask each module for its own",
    code="param.fill_(1.0)",
    key="k",
)


@pytest.fixture
def fresh_kernel(monkeypatch):
    """The checks' per-kernel memory, empty, and restored after the test."""
    monkeypatch.setattr(checks, "_KERNEL", checks._Kernel())
    return checks._KERNEL


def failing_run(name="answer_42", claim="the answer is 42", hint=LEVELLED):
    check = Check(name)
    check.equal(41, 42, claim, hint=hint)
    return check


def test_the_code_comes_only_from_the_third_failed_run(fresh_kernel, capsys):
    outputs = []
    for _ in range(4):
        failing_run()
        outputs.append(capsys.readouterr().out)
    first, second, third, fourth = outputs
    assert "    Hint: look at the recurse argument" in first
    assert "More:" not in first and "Code:" not in first
    assert 'Stuck? checks.hint("answer_42") shows code' in first
    assert "    More: ask each module for its own" in second and "Code:" not in second
    assert "    Code:\n        param.fill_(1.0)" in third and "Stuck?" not in third
    assert "Code:" in fourth


def test_a_run_counts_once_however_many_instances_fail(fresh_kernel, capsys):
    check = Check("answer_42")
    check.equal(41, 42, "on the first model", hint=LEVELLED)
    check.equal(40, 42, "on the second model", hint=LEVELLED)
    out = capsys.readouterr().out
    assert out.count("Hint: look at the recurse argument") == 1 and "    Hint: as above." in out
    assert fresh_kernel.failures == {"answer_42/k": 1}
    failing_run()
    assert "More:" in capsys.readouterr().out  # the second run, not the third


def test_levels_are_counted_per_check(fresh_kernel, capsys):
    other = Hint("another nudge", code="x = 1", key="other")
    for _ in range(2):
        failing_run()
    failing_run(hint=other)
    out = capsys.readouterr().out
    assert "another nudge" in out and "x = 1" not in out


def test_hint_on_request_shows_every_level(fresh_kernel, capsys):
    checks.assignment("01-apply")
    checks.hint("visit_order")  # nothing failed yet: every hint of visit_order
    out = capsys.readouterr().out
    assert out.startswith("Hints for visit_order, all levels (every check):")
    assert "Code:" in out and "model.apply(lambda module: names.append(" in out
    failing_run("visit_order", "a claim", "order")
    capsys.readouterr()
    checks.hint()  # the last answer that failed
    out = capsys.readouterr().out
    assert out.startswith("Hints for visit_order, all levels (the checks that failed):")
    assert "- a claim" in out and "Code:" in out


def test_hint_keys_name_the_file_to_fix(fresh_kernel):
    with pytest.raises(LookupError, match=r"call checks.assignment\(name\)"):
        failing_run(hint="order")
    checks.assignment("01-apply")
    with pytest.raises(LookupError, match=r"no hint \[answer_42.order\] in hints/01-apply.toml"):
        failing_run(hint="order")
    with pytest.raises(ContentError, match="no hints file 99-none.toml in .*hints"):
        checks.assignment("99-none")


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('[f.k]\nmore = "x"\n', "needs a nudge"),
        ('[f.k]\nnudge = "x"\nhint = "y"\n', "needs a nudge, and may have more and code"),
        ('[f]\nk = "x"\n', "needs a nudge"),
    ],
)
def test_a_malformed_hints_file_is_refused(tmp_path, text, error):
    with pytest.raises(ValueError, match=error):
        parse_hints(text, str(tmp_path / "bad.toml"))


def test_the_course_hints_load_and_each_has_a_nudge():
    paths = sorted((REPO / "hints").glob("*.toml"))
    # One hints file per assignment, named as its notebook.
    assert [p.stem for p in paths] == sorted(p.stem for p in (REPO / "solutions").glob("*.ipynb"))
    for path in paths:
        for answer, table in parse_hints(path.read_text(encoding="utf-8"), str(path)).items():
            for key, found in table.items():
                assert (found.nudge or found.why) and found.key == key, (path.name, answer, key)


# -- hidden tests --------------------------------------------------------------------------


def test_a_hidden_test_is_silent_when_it_passes(fresh_kernel, capsys):
    check = Check("answer_42")

    def verify(value):
        check.equal(value, 42, f"the answer is 42 (for {value})", hint=LEVELLED)

    verify(42)
    check.hidden(verify, 42)
    checks.sentinel("check_answer")
    assert (
        capsys.readouterr().out
        == f"{PASSED} the answer is 42 (for 42)\n[hookviz] check_answer: finished\n"
    )
    assert check.passed == 1  # hidden passes are not counted as visible ones


def test_a_hidden_failure_raises_naming_the_check_and_prints_nothing(fresh_kernel, capsys):
    check = Check("answer_42")

    def verify(value):
        check.equal(value, 42, f"the answer is 42 (for {value})", hint=LEVELLED)

    verify(42)
    capsys.readouterr()
    with pytest.raises(
        checks.HiddenTestFailed, match=r"the answer is 42 \(for 41\): the result is 41, expected 42"
    ):
        check.hidden(verify, 41)
    assert capsys.readouterr().out == ""
    assert fresh_kernel.failures == {}  # hidden failures never raise a student's hint level


def test_a_hidden_test_catches_a_raising_answer(fresh_kernel):
    check = Check("shouty_answer")

    def verify():
        check.run(lambda: 1 / 0)

    with pytest.raises(checks.HiddenTestFailed, match="raised ZeroDivisionError"):
        check.hidden(verify)


def test_a_hidden_test_does_not_run_after_a_visible_failure(fresh_kernel, capsys):
    check = Check("answer_42")
    check.equal(41, 42, "visible", hint=LEVELLED)
    ran = []
    check.hidden(lambda: ran.append(1))
    assert ran == []


# -- diagnoses -----------------------------------------------------------------------------


def _raise_from(code: str, **names):
    """The error ``code`` raises, run as a notebook cell is: its lines readable by tracebacks."""
    filename = f"<student cell {abs(hash(code))}>"
    linecache.cache[filename] = (len(code), None, code.splitlines(keepends=True), filename)
    scope = dict(torch=torch, nn=nn, **names)
    try:
        exec(compile(code, filename, "exec"), scope)
    except Exception as error:
        return error
    raise AssertionError("the code did not raise")


def test_fill_without_no_grad_is_named_with_its_fix():
    error = _raise_from("p = nn.Parameter(torch.ones(2))\np.fill_(1.0)")
    found = checks.diagnose.explain_error(error)
    assert found.problem == "it changed a parameter in place while autograd was recording"
    assert "torch.no_grad()" in found.hint.nudge and "with torch.no_grad():" in found.hint.code


def test_grad_input_none_is_named():
    error = _raise_from("grad_input = (None,)\nnorm = grad_input[0].norm()")
    found = checks.diagnose.explain_error(error)
    assert "grad_input[0] is None" in found.problem and "grad_output" in found.hint.nudge


def test_a_tuple_of_inputs_and_a_misshapen_copy_are_named():
    assert (
        checks.diagnose.explain_error(
            _raise_from("inputs = (torch.ones(2),)\ny = inputs @ torch.ones(2, 2)")
        ).hint
        is checks.diagnose.TUPLE_INPUTS
    )
    copy_error = _raise_from("w = torch.ones(3, 4)\nw.copy_(torch.ones(2, 2))")
    assert checks.diagnose.explain_error(copy_error).hint is checks.diagnose.COPY_SHAPE


def test_a_hook_with_the_wrong_arguments_is_named():
    error = _raise_from(
        "m = nn.Identity()\nm.register_forward_hook(lambda module, inputs: None)\nm(torch.ones(1))"
    )
    assert checks.diagnose.explain_error(error).hint is checks.diagnose.HOOK_SIGNATURE


def test_an_unknown_error_gets_no_made_up_diagnosis(capsys):
    assert checks.diagnose.explain_error(ValueError("anything")) is None
    check = Check("answer_42")

    def broken():
        raise ValueError("no")

    check.run(broken)
    out = capsys.readouterr().out
    assert f"Hint: {checks.RERUN_ADVICE}" in out


def test_leftover_hooks_are_listed_root_by_name(capsys):
    model = nn.Sequential(nn.Linear(2, 2))
    keep = model.register_forward_pre_hook(lambda m, i: None)
    model[0].register_forward_hook(lambda m, i, o: None)
    check = Check("answer_42")
    assert not check.no_hooks_left(model, "nothing left", keep=(keep,))
    assert "1 hook is left: forward hook <lambda> on 0" in capsys.readouterr().out
    model[0]._forward_hooks.clear()
    assert check.no_hooks_left(model, "nothing left", keep=(keep,))
    model.register_forward_hook(lambda m, i, o: None)
    assert not check.no_hooks_left(model, "nothing left", keep=(keep,))
    assert "on the root (Sequential)" in capsys.readouterr().out


def test_forward_hooks_on_names_the_wrong_kind_extras_and_copies(capsys):
    def hooked(register):
        model = hv.examples.model()
        register(model)
        check = Check("answer_42")
        check.forward_hooks_on(model, ["ab.a", "cd.c"], "hooks on a and c", hint=LEVELLED)
        return capsys.readouterr().out

    assert hooked(
        lambda m: [
            m.ab.a.register_forward_hook(lambda *a: None),
            m.cd.c.register_forward_hook(lambda *a: None),
        ]
    ).startswith(PASSED)
    out = hooked(
        lambda m: [
            m.ab.a.register_forward_pre_hook(lambda *a: None),
            m.cd.c.register_forward_pre_hook(lambda *a: None),
        ]
    )
    assert (
        "2 hooks are of another kind (forward pre), on ab.a and cd.c" in out
        and "A forward pre-hook runs before forward" in out
    )
    out = hooked(
        lambda m: [
            sub.register_forward_hook(lambda *a: None) for sub in (m, m.ab.a, m.cd.c, m.cd.c)
        ]
    )
    assert "forward hooks on the root (Model) too; cd.c has more than one" in out


def test_recursive_parameters_are_named_with_their_writers(capsys):
    def recursive(module):
        with torch.no_grad():
            for param in module.parameters():
                param.fill_(1.0)

    trace = hv.trace_apply(hv.examples.model(), recursive, echo=False)
    check = Check("answer_42")
    assert not check.writes_each_parameter_once(trace)
    out = capsys.readouterr().out
    assert (
        "ab.a.W was written 3 times, at ab.a, ab and Model (and 3 more parameters more than once)"
        in out
    )
    assert "recurse argument" in out


def test_same_values_and_multiset_difference():
    assert checks.same_values(torch.ones(2), lambda: torch.ones(2) + 1e-9)
    assert not checks.same_values(
        torch.ones(2), lambda: torch.ones(3) @ torch.ones(2, 2)
    )  # raises: False
    assert not checks.same_values([1.0], lambda: torch.ones(1))
    assert (
        checks.multiset_difference(["a", "b", "b"], ["a", "b", "c"])
        == "missing 'c'; unexpected 'b'"
    )
    assert checks.multiset_difference(["a"], ["a"]) is None


def test_a_key_read_late_from_a_loop_is_named():
    error = _raise_from(
        "def make():\n    table, hooks = {'a': [], 'b': []}, []\n"
        "    for path in ['a', 'b', 'c']:\n        hooks.append(lambda: table[path].append(1))\n"
        "    return hooks\n"
        "make()[0]()"
    )
    found = checks.diagnose.explain_error(error)
    assert found.hint is checks.diagnose.LATE_BINDING and "'c'" in found.problem


def test_a_plain_key_error_is_not_called_late_binding():
    error = _raise_from("def look(path='c'):\n    return {'a': 1}[path]\nlook()")
    assert checks.diagnose.explain_error(error) is None


def test_check_stays_a_class_one_can_read():
    """Check holds what a check cell calls; what it inspects, prints or finds lives beside it."""
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(checks))
    (found,) = [
        node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "Check"
    ]
    assert found.end_lineno - found.lineno + 1 < 300
