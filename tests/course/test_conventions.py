"""The conventions build, the checks and the grader share: one owner, read the same on every side."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from hookviz.course import checks
from hookviz.course.conventions import (
    HIDDEN_TEST_FAILED,
    Flag,
    Outcome,
    Status,
    ends_with_sentinel,
    in_words,
    outputs_text,
    sentinel_grade_id,
    sentinel_line,
)
from hookviz.course.format.steps import sentinel_problem
from hookviz.grading.run.flags import scan_answers

PLUGIN = (
    Path(__file__).resolve().parents[2] / "hookviz/grading/run/plugin/hookviz_grading_plugin.py"
)


@pytest.fixture(scope="module")
def plugin():
    spec = importlib.util.spec_from_file_location("hookviz_grading_plugin_under_test", PLUGIN)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_sentinel_line_is_written_and_read_back_by_one_owner(capsys) -> None:
    line = sentinel_line("check_x")
    assert line == "[hookviz] check_x: finished"
    assert sentinel_grade_id(line) == "check_x"
    assert sentinel_grade_id("[hookviz] check_x: done") is None
    checks.sentinel("check_x")  # what a check cell prints is what build and grading look for
    assert capsys.readouterr().out == line + "\n"
    assert ends_with_sentinel(f"✓ fine\n{line}\n\n", "check_x")
    assert not ends_with_sentinel(f"{line}\nprinted after it\n", "check_x")
    assert not ends_with_sentinel(sentinel_line("check_y"), "check_x")
    # build accepts a literal print of the line, and says which line to print when there is none
    assert sentinel_problem(f"print({line!r})", "check_x") is None
    assert line in sentinel_problem("check = checks.Check('x')\nprint('no sentinel')", "check_x")
    # a bare-assert cell (nbgrader's) needs none: the grader appends it
    assert sentinel_problem("assert 1 + 1 == 2", "check_x") is None
    # a wrong one in a cell without hookviz is fixed without hookviz: no checks.sentinel advice
    wrong = sentinel_problem("assert True\nprint('[hookviz] check_y: finished')", "check_x")
    assert line in wrong and "checks.sentinel" not in wrong


@pytest.mark.parametrize("bad", [None, "", 3, b"check_x"])
def test_a_sentinel_needs_a_grade_id_string(bad) -> None:
    with pytest.raises(TypeError, match="grade_id as a string"):
        sentinel_line(bad)


def test_an_answer_that_could_print_a_sentinel_is_flagged() -> None:
    source = f"def f():\n    print({sentinel_line('check_x')!r})\n"
    assert scan_answers({"answer": source}) == [Flag("prints-sentinel", "answer")]


OUTPUTS = [
    nbformat.v4.new_output("stream", name="stdout", text="✓ one\n"),
    nbformat.v4.new_output("execute_result", data={"text/plain": "42"}, execution_count=1),
    nbformat.v4.new_output("display_data", data={"text/plain": "shown\n", "text/html": "<b>x</b>"}),
    nbformat.v4.new_output("stream", name="stdout", text="no newline"),
    nbformat.v4.new_output("error", ename="ValueError", evalue="boom", traceback=[]),
]


def test_stored_outputs_and_the_plugins_records_read_as_the_same_text(plugin) -> None:
    """What `build` checks in a stored output is what grading compares: one newline rule."""
    records = plugin._outputs_as_records(OUTPUTS, 10_000)
    text = outputs_text(OUTPUTS)
    assert text == "✓ one\n42\nshown\nno newlineValueError: boom\n"
    assert outputs_text(records) == text
    on_disk = [dict(OUTPUTS[0], text=["✓ ", "one\n"])]  # nbformat's list of lines
    assert outputs_text(on_disk) == "✓ one\n"


def test_the_plugin_loads_the_conventions_without_hookviz_or_torch() -> None:
    """In the grading child the plugin is found on sys.path and imports no hookviz."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import hookviz_grading_plugin as p; "
        "print(sorted(o.value for o in p.Outcome)); "
        "print('hookviz' in sys.modules, 'torch' in sys.modules)"
    )
    run = subprocess.run(
        [sys.executable, "-I", "-c", code, str(PLUGIN.parent)],
        capture_output=True,
        text=True,
        cwd="/",
        check=True,
    )
    values, imported = run.stdout.splitlines()
    assert values == str(sorted(o.value for o in Outcome))
    assert imported == "False False"


def test_the_plugins_outcomes_are_the_enums(plugin) -> None:
    outcome, detail = plugin._classify(None)
    assert outcome == Outcome.PASSED and outcome.value == "passed" and detail == ""


def test_outcomes_and_statuses_say_in_words_what_happened() -> None:
    for kind in (Outcome, Status):
        words = [member.words for member in kind]
        assert len(set(words)) == len(words)
        assert all(member.words != member.value for member in kind)
    assert in_words("kernel-died") == Outcome.KERNEL_DIED.words
    assert in_words("no-answers") == Status.NO_ANSWERS.words  # a check of a submission not run
    assert in_words("some-new-thing") == "some new thing"
    assert f"{Outcome.KERNEL_DIED}" == str(Outcome.KERNEL_DIED) == "kernel-died"


@pytest.mark.parametrize(
    "flag, text",
    [
        (Flag("check-edited", "check_shout"), "check-edited (check_shout)"),
        (Flag("checks-reordered"), "checks-reordered"),
        (Flag("answer-renamed", "double: defines twice (a), not double"), None),
    ],
)
def test_a_flag_has_one_text_form_and_reads_back_from_it(flag: Flag, text: str | None) -> None:
    if text is not None:
        assert str(flag) == text
    assert Flag.parse(str(flag)) == flag


def test_the_hidden_test_error_is_named_by_one_owner() -> None:
    assert checks.HiddenTestFailed.__name__ == HIDDEN_TEST_FAILED
    assert issubclass(checks.HiddenTestFailed, AssertionError)


# -- shortening: between words, never inside one -------------------------------------------------

from hypothesis import example, given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from hookviz.course.conventions import shorten, shorten_middle  # noqa: E402

WORDS = st.lists(
    st.text(alphabet="abcdefgh변화도✓()", min_size=1, max_size=12), min_size=1, max_size=80
)
SEPARATORS = st.sampled_from([" ", "\n", "  "])


def _joined(words: list[str], separator: str) -> str:
    return separator.join(words)


@given(WORDS, SEPARATORS, st.integers(30, 400))
def test_shorten_keeps_whole_words(words, separator, limit):
    text = _joined(words, separator)
    short = shorten(text, limit)
    assert len(short) <= limit
    if short == text:
        return
    kept = short.removesuffix("…")
    assert text.startswith(kept) and kept, (text, short)
    assert text[len(kept)].isspace(), (text, short)  # cut just before a space or a line break


@given(WORDS, SEPARATORS, st.integers(40, 400))
@example(["a"] * 10 + ["a" * 12, "a", "a" * 6], " ", 40)  # the only space that fits keeps a third
def test_shorten_middle_keeps_whole_words_at_both_ends(words, separator, limit):
    text = _joined(words, separator)
    short = shorten_middle(text, limit, gap="<{count}>")
    if short == text:
        return
    head, _, rest = short.partition("<")
    count, _, tail = rest.partition(">")
    assert text.startswith(head) and text.endswith(tail)
    assert int(count) == len(text) - len(head) - len(tail)
    assert text[len(head)].isspace() and text[len(text) - len(tail) - 1].isspace(), short
    assert len(head) + len(tail) <= limit


def test_the_feedback_cuts_a_long_output_between_words():
    """The blind round's feedback read "(a 3-lay ... rNorm)": a cut inside words."""
    from hookviz.grading.core.feedback import FEEDBACK_OUTPUT_LIMIT, _clip

    line = "✓ autograd saw every change (a 3-layer model with a Linear, a ReLU and a LayerNorm)\n"
    text = line * (2 * FEEDBACK_OUTPUT_LIMIT // len(line))
    short = _clip(text)
    head, gap, tail = short.partition("\n... (")
    assert gap and head.endswith("LayerNorm)") and tail.split(") ...\n", 1)[1].startswith("✓ ")
