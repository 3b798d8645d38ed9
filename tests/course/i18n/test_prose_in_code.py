"""Comments and docstrings are translated like prose, the code kept byte for byte; a figure a
notebook draws shows its words in the notebook's language; the lint reads every surface."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hookviz.course.i18n.catalogue import translate
from hookviz.course.i18n.code import code_only, code_units, is_code_key, prose, translate_code
from hookviz.course.i18n.english import english_phrases
from hookviz.course.i18n.figures import figure_texts
from hookviz.course.i18n.lint import (
    english_problems,
    first_use_problems,
    read_glossary,
    ui_problems,
    words_problems,
)

CELL = '''\
# Check your answer: run this cell. It runs
# model.apply(print_module) on two models.
import torch  # noqa: F401


def visit_order(model):
    """The class names of the modules model.apply visits, in visit order."""
    ### BEGIN SOLUTION
    names = []  # one per visit
    model.apply(lambda m: names.append(type(m).__name__))
    return names
    ### END SOLUTION
'''
KOREAN = {
    "Check your answer: run this cell. It runs\nmodel.apply(print_module) on two models.": (
        "답을 검사합니다: 이 셀을 실행하세요.\n두 모델에 model.apply(print_module)을 실행합니다."
    ),
    "The class names of the modules model.apply visits, in visit order.": (
        "model.apply 메소드가 방문하는 모듈의 클래스 이름, 방문 순서대로."
    ),
    "one per visit": "방문마다 하나",
}


def test_units_are_comment_blocks_trailing_comments_and_docstrings_by_line() -> None:
    units = code_units(CELL, "cell")
    assert units == {
        "cell:1": "Check your answer: run this cell. It runs\nmodel.apply(print_module) on two models.",
        "cell:7": "The class names of the modules model.apply visits, in visit order.",
        "cell:9": "one per visit",
    }  # markers and tool comments (noqa) are code, not prose
    assert all(is_code_key(key) for key in units) and not is_code_key("01-apply-3")
    assert list(code_units(CELL, "cell", opening_only=True)) == ["cell:1"]


def test_a_translation_changes_the_prose_and_keeps_the_code() -> None:
    korean = translate_code(CELL, KOREAN)
    assert code_only(korean) == code_only(CELL)
    assert korean != CELL and "방문마다 하나" in korean
    assert "# 두 모델에 model.apply(print_module)을 실행합니다.\nimport torch  # noqa" in korean
    compile(korean, "cell", "exec")
    assert [p.text for p in prose(korean)] == list(KOREAN.values())
    # a block with more lines than the English moves the code down, and changes nothing else
    longer = translate_code(CELL, {"one per visit": "방문마다\n하나"})
    assert code_only(longer) == code_only(CELL)
    # an exercise: the answer cut out, the opening comment followed by its specification
    exercise = CELL.replace("import torch  # noqa: F401", "# It checks:\n#  - a claim")
    exercise = re.sub(
        r"### BEGIN SOLUTION.*### END SOLUTION", "# YOUR CODE HERE", exercise, flags=re.S
    )
    said = translate_code(exercise, KOREAN)
    assert said.startswith("# 답을 검사합니다") and "# It checks:" in said
    assert "모듈의 클래스 이름" in said and "# YOUR CODE HERE" in said


def test_code_only_sees_any_change_to_code() -> None:
    assert code_only(CELL) != code_only(CELL.replace("names = []", "names = ()"))
    assert code_only(CELL) != code_only(CELL.replace("# one per visit", "# one per visit\nx = 1"))
    magics = "%matplotlib inline\n# a comment\nx = 1\n"
    assert code_only(magics) == code_only(translate_code(magics, {"a comment": "주석"}))
    assert code_only(magics) != code_only(magics.replace("inline", "agg"))


def test_a_figures_words_are_found_in_its_code_and_drawn_in_the_notebooks_language() -> None:
    source = """\
def plot_ratios(runs):
    fig, axes = plt.subplots(1, 2)
    for ax, name in zip(axes, ("left", "right side")):
        ax.set_title(f"{name}: {len(runs)} runs" if runs else name, fontsize=10)
        ax.set_xlabel("step")
    axes[0].legend(title="Linear", loc="center left")
    return fig
"""
    assert figure_texts(source) == [  # in the order they are written
        "left",
        "right side",
        "{name}: {len(runs)} runs",
        "step",
        "Linear",
    ]
    table = {
        "step": "단계",
        "{name}: {len(runs)} runs": "{name}: 실행 {len(runs)}번",
        "right side": "오른쪽",
    }
    assert translate("right side: 3 runs", table) == "오른쪽: 실행 3번"
    assert translate("center left", table) == "center left"


@pytest.mark.notebook
def test_a_figure_is_drawn_with_the_translated_words(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("MPLCONFIGDIR", str(tmp_path))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.text import Text

    from hookviz.course import figure_words

    # what translate_figures changes for this kernel, put back for the other tests of this one
    monkeypatch.setattr(Text, "set_text", Text.set_text)
    monkeypatch.setitem(matplotlib.rcParams, "font.family", matplotlib.rcParams["font.family"])
    monkeypatch.setattr(figure_words, "_installed", False)
    monkeypatch.setattr(figure_words, "_table", {})
    figure_words.translate_figures({"step": "단계", "{n} runs": "실행 {n}번"})
    fig, ax = plt.subplots()
    ax.set_xlabel("step")
    ax.set_title("3 runs")
    ax.set_ylabel("loss")
    fig.savefig(tmp_path / "figure.png")
    plt.close(fig)
    assert (ax.get_xlabel(), ax.get_title(), ax.get_ylabel()) == ("단계", "실행 3번", "loss")
    assert "Hookviz Hangul" in matplotlib.rcParams["font.family"]


def test_english_phrases_leave_code_values_glosses_and_exceptions_aside() -> None:
    assert english_phrases("✗ 3×3 모델이 one sample of shape (1, 3)에 대해 계산합니다") == [
        "one sample of shape"
    ]
    assert english_phrases("2×2 모델이 2 samples에 대해") == ["2 samples"]
    quiet = (
        "✓ apply 메소드는 print_module 함수를 7번 호출합니다 (블로그의 Model 모델)\n"
        "    결과: 'Function_A\\n', 기대한 값: 'ab'\n"
        "    발생한 예외: RuntimeError: cannot register a hook on a tensor\n"
        "    변화도를 요구하고(requires grad), torch.no_grad() 블록 안에서 [x for x in y]\n"
        "[hookviz] check_print_module: finished"
    )
    assert english_phrases(quiet) == []


def test_the_lint_reads_voice_first_use_english_and_ui_names(tmp_path: Path) -> None:
    path = tmp_path / "glossary.toml"
    path.write_text(
        """
[style]
voice = "합니다체"
rules = [{ pattern = "십시오", say = "an instruction ends in -세요" }]

[full-backward-hook]
en = "full backward hook"
ko = "전체 역전파 훅"
first = "전체(full) 역전파 훅"
avoid = ["full 역전파 훅"]
""",
        encoding="utf-8",
    )
    glossary = read_glossary(path)
    assert words_problems("이 셀을 실행하십시오. full 역전파 훅입니다.", glossary) == [
        "'full 역전파 훅': the glossary's word for full-backward-hook is '전체 역전파 훅'",
        "'십시오': an instruction ends in -세요",
    ]
    assert first_use_problems(["전체 역전파 훅은", "전체(full) 역전파 훅"], glossary)
    assert not first_use_problems(["전체(full) 역전파 훅은", "전체 역전파 훅"], glossary)
    assert ui_problems("위젯의 *apply() post-order* 버튼", "ko") == [
        "names 'apply() post-order', which a ko reader sees as 'apply() 후위 순회'"
    ]
    assert not ui_problems("순전파 사전 훅(forward pre-hook)", "ko")
    page = "설명입니다.\n\n```bash\nmake lab    # set up, then open the course\n```\n"
    assert english_problems(page) == [
        "English where the translation has words: 'set up'",
        "English where the translation has words: 'then open the course'",
    ]


def test_the_catalogue_translates_what_placeholders_hold() -> None:
    """A line's values are messages too: a template's line, a list of them, problems joined by
    '; ', and two f-strings added into one line."""
    table = {
        "{name} computes it for {what}": "{name} 모델이 {what}에 대해 계산합니다",
        "one sample of shape (1, {size})": "모양이 (1, {size})인 샘플 하나",
        "the root": "루트 모듈",
        "not a Function: {names}": "Function 모듈이 아닌 것: {names}",
        "{path} is off": "{path} 항목이 어긋납니다",
        "e.g. {a}{b if c else ''}": "예: {a}{b if c else ''}",
        " holding {b}": " (안에 든 값: {b})",
    }
    assert translate("a 3×3 model computes it for one sample of shape (1, 3)", table) == (
        "a 3×3 model 모델이 모양이 (1, 3)인 샘플 하나에 대해 계산합니다"
    )
    assert translate("not a Function: the root, ab, cd", table) == (
        "Function 모듈이 아닌 것: 루트 모듈, ab, cd"
    )
    assert (
        translate("0.w is off; 2.w is off", table) == "0.w 항목이 어긋납니다; 2.w 항목이 어긋납니다"
    )
    assert translate("e.g. a tuple holding a Tensor", table) == "예: a tuple (안에 든 값: a Tensor)"
    assert translate("e.g. a tuple", table) == "예: a tuple"


def test_a_placeholder_written_twice_holds_the_same_text_twice() -> None:
    """Walkthrough 08's figure titles: "a 3, for 3: digit" is '{title}: {name}' holding
    "a 3, for 3", not 'a {n}, for {n}' with n both "3" and "3: digit"."""
    table = {
        "{title}: {name}": "{title}: {name}",
        "a {n}, for {n}": "숫자 {n}, 클래스 {n} 기준",
        "digit": "숫자 이미지",
    }
    assert translate("a 3, for 3: digit", table) == "숫자 3, 클래스 3 기준: 숫자 이미지"
    assert translate("a 3, for 3", table) == "숫자 3, 클래스 3 기준"
    assert translate("a 3, for 4", table) == "a 3, for 4"


def test_a_check_cells_words_are_found_where_a_sentence_puts_them() -> None:
    from hookviz.course.i18n.messages import cell_messages

    source = """\
for column, what in ((0, "mean"), (1, "standard deviation")):
    check.true(ok, f"the {what} of each layer ({name})")
check.true(ok, "it runs", problem=f"{p}.grad {'was None and is now set' if new else 'changed'}")
check.true(ok, "it holds floats", problem=f"e.g. {a}" + (f" holding {b}" if c else ""))
"""
    found = cell_messages(source)
    assert {"mean", "standard deviation", "changed", "was None and is now set"} <= set(found)
    assert "e.g. {a}{f' holding (b)' if c else ''}" in found
