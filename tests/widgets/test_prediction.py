"""Prediction and its catalogue: the answer stays in Python until the reader commits, once.

Runs under whichever ipywidgets/anywidget the Python running the tests has, so `make test-colab`
checks the Colab pins (ipywidgets 7.7.1, anywidget 0.9.21) the same way.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

import hookviz as hv
from hookviz.course import predictions
from hookviz.course.predictions import CatalogueError, UnknownPrediction, load_catalogue, predict
from hookviz.widgets.base import STATIC, front_end
from hookviz.widgets.prediction import Prediction, inline_html, normalise
from tests.helpers import run_nbval

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WHY = "Post-order: `apply` calls fn on the children before the parent."
ROOT = Path(__file__).resolve().parents[2]

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib


def multiple_choice(**overrides):
    kwargs = dict(choices=["`Model`", "`ab`", "`ab.a`"], answer=2, why=WHY, key="apply-first")
    kwargs.update(overrides)
    return Prediction("Which module does `fn` see first?", **kwargs)


def short_answer(**overrides):
    kwargs = dict(answer=["4 5 2 6 3 1"], why="Children first, then the parent.", key="postorder")
    kwargs.update(overrides)
    return Prediction("In what order does apply call fn?", **kwargs)


def from_browser(widget, content):
    """What the front end's ``model.send(content)`` delivers: a custom comm message."""
    widget._handle_msg(
        {"content": {"data": {"method": "custom", "content": content}}, "buffers": []}
    )


def synced(widget) -> str:
    """Everything the browser has of the widget, as the JSON it receives."""
    return json.dumps(widget.get_state(), allow_nan=False)


# -- checking what the author wrote ---------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "message"),
    [
        (("",), dict(choices=["a", "b"], answer=0, why="w"), ValueError, "question is empty"),
        (("  \n",), dict(choices=["a", "b"], answer=0, why="w"), ValueError, "question is empty"),
        (
            (42,),
            dict(choices=["a", "b"], answer=0, why="w"),
            TypeError,
            "question must be a string",
        ),
        (("q",), dict(choices=["a", "b"], answer=0, why=""), ValueError, "why is empty"),
        (("q",), dict(choices=["a", "b"], answer=0, why=None), TypeError, "why must be a string"),
        (
            ("q",),
            dict(choices=["only"], answer=0, why="w"),
            ValueError,
            "at least 2 options.*choices=None",
        ),
        (
            ("q",),
            dict(choices=[], answer=0, why="w"),
            ValueError,
            "at least 2 options to choose from, got 0",
        ),
        (("q",), dict(choices="ab", answer=0, why="w"), TypeError, "choices must be a list"),
        (
            ("q",),
            dict(choices=["a", ""], answer=0, why="w"),
            ValueError,
            r"choices\[1\] must be a non-empty",
        ),
        (
            ("q",),
            dict(choices=["a", 2], answer=0, why="w"),
            ValueError,
            r"choices\[1\] must be a non-empty",
        ),
        (
            ("q",),
            dict(choices=["a", "b", "a"], answer=0, why="w"),
            ValueError,
            r"choices\[2\] repeats choices\[0\]",
        ),
        (
            ("q",),
            dict(choices=["a", "b"], answer=2, why="w"),
            ValueError,
            "from 0 to 1 .0 is the first",
        ),
        (
            ("q",),
            dict(choices=["a", "b"], answer=-1, why="w"),
            ValueError,
            "not the index of a choice",
        ),
        (
            ("q",),
            dict(choices=["a", "b"], answer=True, why="w"),
            TypeError,
            "index of the right choice",
        ),
        (
            ("q",),
            dict(choices=["a", "b"], answer="b", why="w"),
            TypeError,
            r"did you mean answer=1\?",
        ),
        (("q",), dict(answer=[], why="w"), ValueError, "at least one accepted answer"),
        (("q",), dict(answer="4 5 2", why="w"), TypeError, r"write answer=\['4 5 2'\]"),
        (("q",), dict(answer=1, why="w"), TypeError, "there are no choices"),
        (
            ("q",),
            dict(answer=["ok", " , "], why="w"),
            ValueError,
            r"answer\[1\] must be a non-empty",
        ),
        (("q",), dict(answer=None, why="w"), TypeError, "list of accepted answers"),
        (("q",), dict(answer=["a"], why="w", key=3), TypeError, "key must be a string"),
        (("q",), dict(answer=["a"], why="w", theme="sepia"), ValueError, "'auto', 'light', 'dark'"),
    ],
)
def test_bad_input_names_the_problem_and_the_fix(args, kwargs, error, message):
    with pytest.raises(error, match=message):
        Prediction(*args, **kwargs)


# -- the answer stays in Python until the reader commits --------------------------------------


def test_the_browser_has_neither_answer_nor_why_before_the_reader_commits():
    widget = multiple_choice()
    state = widget.get_state()
    assert (state["state"], state["chosen"], state["answer_index"], state["correct"]) == (
        "open",
        -1,
        -1,
        None,
    )
    assert state["answer_text"] == state["why"] == ""
    assert "children before the parent" not in synced(widget)
    assert state["question"] == "Which module does `fn` see first?"
    assert state["choices"] == ["`Model`", "`ab`", "`ab.a`"]

    text = short_answer()
    assert "4 5 2 6 3 1" not in synced(text) and "Children first" not in synced(text)


def test_a_choice_from_the_browser_reveals_the_answer_and_why():
    widget = multiple_choice()
    from_browser(widget, {"action": "choose", "choice": 0})
    state = widget.get_state()
    assert (state["state"], state["chosen"], state["answer_index"], state["correct"]) == (
        "answered",
        0,
        2,
        False,
    )
    assert (state["answer_text"], state["why"]) == ("`ab.a`", WHY)
    assert widget.answered and widget.correct is False


def test_only_the_first_commitment_counts():
    widget = multiple_choice()
    from_browser(widget, {"action": "choose", "choice": 2})
    assert widget.correct is True
    from_browser(widget, {"action": "choose", "choice": 0})
    assert (widget.chosen, widget.correct) == (2, True)
    assert widget.status == "already answered: only the first answer counts"
    with pytest.raises(
        RuntimeError, match="already answered .right.: only the first answer counts"
    ):
        widget.choose(1)
    assert (widget.chosen, widget.correct) == (2, True)


def test_a_message_that_cannot_be_checked_leaves_the_question_open():
    widget = multiple_choice()
    for content, status in [
        (
            {"action": "choose", "choice": 7},
            "could not choose: choice=7 is not the index of a choice",
        ),
        ({"action": "choose", "choice": "A"}, "could not choose: choice must be the index"),
        (
            {"action": "answer", "text": "ab.a"},
            "could not answer: this prediction is multiple choice",
        ),
        ({"action": "explode"}, "unknown action 'explode'"),
        ("choose", "unknown action None"),
    ]:
        from_browser(widget, content)
        assert widget.status.startswith(status), widget.status
        assert not widget.answered and widget.why == ""
    from_browser(widget, {"action": "choose", "choice": 1})
    assert widget.answered and widget.status == ""  # the note goes once the reader has answered

    text = short_answer()
    from_browser(text, {"action": "answer", "text": "  , "})
    assert text.status == "could not answer: the answer is empty: write a prediction first."
    assert not text.answered


@pytest.mark.parametrize(
    ("given", "right"),
    [
        ("4 5 2 6 3 1", True),
        ("4, 5, 2, 6, 3, 1", True),
        ("  4,5,2,6,3,1 ", True),
        ("4 5 2\n6  3 1", True),
        ("1 3 6 2 5 4", False),
        ("4 5 2 6 3", False),
        ("4 52 6 3 1", False),
    ],
)
def test_short_answers_are_compared_after_normalising(given, right):
    widget = short_answer()
    from_browser(widget, {"action": "answer", "text": given})
    assert widget.correct is right
    assert widget.given == " ".join(given.split())
    assert (widget.answer_text, widget.why) == ("4 5 2 6 3 1", "Children first, then the parent.")
    assert repr(widget).endswith("answered: right)" if right else "answered: not quite)")


def test_any_accepted_answer_counts_and_case_does_not_matter():
    widget = short_answer(answer=["ab.a", "the first leaf"])
    assert widget.answer_with("The First  Leaf") is True
    assert widget.answer_text == "ab.a"  # the first accepted answer is the one shown
    assert normalise("  AB.a ,  CD ") == "ab.a cd"


def test_python_commits_the_same_way_and_checks_its_arguments():
    widget = multiple_choice()
    with pytest.raises(TypeError, match=r"short answer, not a choice: use answer_with\(text\)"):
        short_answer().choose(0)
    with pytest.raises(TypeError, match=r"multiple choice: use choose\(i\) with i from 0 to 2"):
        widget.answer_with("ab.a")
    with pytest.raises(TypeError, match="index of a choice"):
        widget.choose(True)
    with pytest.raises(ValueError, match="pick 0 to 2"):
        widget.choose(3)
    assert not widget.answered
    assert widget.choose(2) is True and widget.get_state()["why"] == WHY
    with pytest.raises(TypeError, match="must be a string"):
        short_answer().answer_with(452631)


# -- what the notebook stores ------------------------------------------------------------------


def test_repr_says_what_it_is_and_never_the_answer():
    widget, text = multiple_choice(), short_answer()
    assert repr(widget) == "Prediction('apply-first': 3 choices)"
    assert repr(text) == "Prediction('postorder': short answer)"
    assert repr(short_answer(key="")) == "Prediction(short answer)"
    widget.choose(0)
    text.answer_with("4 5 2 6 3 1")
    assert repr(widget) == "Prediction('apply-first': 3 choices, answered: not quite)"
    assert repr(text) == "Prediction('postorder': short answer, answered: right)"
    for shown in (repr(widget), repr(text)):
        assert (
            "ab.a" not in shown
            and "4 5 2" not in shown
            and "first" not in shown.replace("apply-first", "")
        )


def test_the_mimebundle_carries_the_repr_the_static_page_and_the_view():
    widget = multiple_choice()
    data, _ = widget._repr_mimebundle_()
    assert set(data) == {"text/plain", "text/html", WIDGET_VIEW}
    assert data["text/plain"] == repr(widget)
    assert data["text/html"] == widget.to_html()
    assert data[WIDGET_VIEW]["model_id"] == widget.model_id
    assert "ab.a" not in data["text/plain"] and "children before" not in data["text/plain"]
    assert (
        "children before" not in synced(widget) and widget.answer_index == -1
    )  # displaying revealed nothing
    html = data["text/html"]
    inside = html[html.index("<details>") : html.index("</details>")]
    assert (
        "children before the parent" in inside and "<strong>C.</strong> <code>ab.a</code>" in inside
    )
    outside = html.replace(inside, "")
    assert "children before the parent" not in outside and "<strong>C.</strong>" not in outside


def test_to_html_escapes_the_question_and_keeps_the_answer_collapsed():
    widget = Prediction(
        "Does `<b>` make <script>alert(1)</script> bold & loud?",
        choices=["yes <i>", "no"],
        answer=1,
        why="Because `a < b` & <em>so</em>.",
    )
    page = widget.to_html()
    assert "<script" not in page and "<b>" not in page and "<i>" not in page and "<em>" not in page
    assert (
        "<code>&lt;b&gt;</code> make &lt;script&gt;alert(1)&lt;/script&gt; bold &amp; loud?" in page
    )
    assert "<li>yes &lt;i&gt;</li>" in page
    assert "<details><summary>Show the answer</summary>" in page and "<details open" not in page
    assert " id=" not in page and "src=" not in page
    assert (
        page
        == Prediction(
            "Does `<b>` make <script>alert(1)</script> bold & loud?",
            choices=["yes <i>", "no"],
            answer=1,
            why="Because `a < b` & <em>so</em>.",
        ).to_html()
    )  # the same in a second run: nbval compares text/html
    assert "Answer: <code>4 5 2 6 3 1</code>" in short_answer().to_html()


def test_code_spans_and_paragraphs():
    assert inline_html("use `x.apply(fn)` here") == "<p>use <code>x.apply(fn)</code> here</p>"
    assert inline_html("a lone ` backtick") == "<p>a lone ` backtick</p>"
    assert inline_html("`a` and `b` and ` c") == "<p><code>a</code> and <code>b</code> and ` c</p>"
    assert inline_html("one\nline\n\n  two  ") == "<p>one line</p><p>two</p>"


def kernel_outputs(tmp_path, monkeypatch, cells):
    for variable, folder in (
        ("JUPYTER_CONFIG_DIR", "config"),
        ("JUPYTER_DATA_DIR", "data"),
        ("JUPYTER_RUNTIME_DIR", "runtime"),
        ("IPYTHONDIR", "ipython"),
        ("MPLCONFIGDIR", "matplotlib"),
    ):
        monkeypatch.setenv(variable, str(tmp_path / folder))
    monkeypatch.delenv("JUPYTER_PLATFORM_DIRS", raising=False)
    monkeypatch.setenv("HOOKVIZ_COURSE", str(ROOT))  # the kernel runs outside the course folder
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    ).execute()
    return notebook


def test_a_kernel_displays_all_three_and_nbval_finds_them_stable(tmp_path, monkeypatch):
    """The real display path: ipywidgets 8 asks _repr_mimebundle_, ipywidgets 7 _ipython_display_."""
    notebook = kernel_outputs(
        tmp_path,
        monkeypatch,
        [
            "from hookviz.course.predictions import predict\np = predict('example-apply-first')\np",
            "import ipywidgets; print(ipywidgets.__version__.split('.')[0])",
            "p.choose(2)\np",
        ],
    )
    first, version, answered = (cell.outputs for cell in notebook.cells)
    assert len(first) == 1 and first[0].output_type in ("execute_result", "display_data")  # 8, 7
    data = first[0]["data"]
    assert set(data) == {"text/plain", "text/html", WIDGET_VIEW}, version
    assert data["text/plain"] == "Prediction('example-apply-first': 4 choices)"
    assert "`ab.a`" not in data["text/plain"]
    html = data["text/html"]
    assert html.count("<details>") == 1 and html.index("<details>") < html.index(
        "post-order"
    ) < html.index("</details>")
    assert (
        answered[-1]["data"]["text/plain"]
        == "Prediction('example-apply-first': 4 choices, answered: right)"
    )

    path = tmp_path / "prediction.ipynb"
    nbformat.write(notebook, path)
    result = run_nbval(path)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "3 passed" in result.stdout


# -- the front end -------------------------------------------------------------------------------


def test_the_front_end_is_one_esm_file_after_the_shared_helpers():
    esm, css = front_end("prediction")
    own = (STATIC / "prediction.js").read_text()
    assert esm.endswith(own[own.index('} from "./common.js";\n') + 22 :])
    assert esm.count("export default { render }") == 1 and "import " not in esm
    assert "takeKeys(root" in own  # its keys before the notebook's shortcuts (common.js)
    assert 'aria-live": "polite"' in own and "model.send(" in own
    assert "innerHTML" not in own  # text from the catalogue is never parsed as HTML
    assert ".hv-prediction" in css and "var(--jp-layout-color0" in css
    assert "@media (prefers-reduced-motion: reduce)" in css
    assert "fa-" not in esm and "font-awesome" not in css.lower()


def test_state_is_strict_json_and_the_lazy_name_is_the_class():
    assert hv.Prediction is Prediction
    widget = multiple_choice(theme="dark")
    widget.choose(1)
    state = json.loads(synced(widget))
    assert state["theme"] == "dark" and state["_esm"].count("export default") == 1


# -- the catalogue -------------------------------------------------------------------------------


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


GOOD = """
[apply-first]
question = "Which module does `fn` see first?"
choices = ["the root", "the first leaf"]
answer = 1
why = "Post-order."

[leaf-count]
question = "How many leaves?"
answer = ["4", "four"]
why = "a, b, c and d."
"""


def test_the_catalogue_reads_every_file_and_predict_builds_the_widget(tmp_path):
    write(tmp_path, "01-tree.toml", GOOD)
    write(
        tmp_path,
        "02-hooks.toml",
        '[hook-after]\nquestion = "q"\nchoices = ["a", "b"]\nanswer = 0\nwhy = "w"\n',
    )
    write(tmp_path, "notes.txt", "not a catalogue file")
    assert predictions.keys(tmp_path) == ["apply-first", "hook-after", "leaf-count"]
    catalogue = load_catalogue(tmp_path)
    assert (
        catalogue["leaf-count"].answer == ("4", "four") and catalogue["leaf-count"].choices is None
    )
    assert catalogue["hook-after"].source.name == "02-hooks.toml"
    widget = predict("leaf-count", folder=tmp_path, theme="light")
    assert repr(widget) == "Prediction('leaf-count': short answer)" and widget.theme == "light"
    assert widget.answer_with("FOUR") is True


def test_a_key_defined_in_two_files_names_both(tmp_path):
    write(tmp_path, "01-tree.toml", GOOD)
    write(tmp_path, "02-more.toml", '[leaf-count]\nquestion = "q"\nanswer = ["1"]\nwhy = "w"\n')
    with pytest.raises(
        CatalogueError,
        match=r"\[leaf-count\] is defined twice: in 01-tree.toml and in 02-more.toml",
    ):
        load_catalogue(tmp_path)


def test_an_unknown_key_lists_the_close_matches(tmp_path):
    write(tmp_path, "01-tree.toml", GOOD)
    with pytest.raises(UnknownPrediction) as caught:
        predict("apply-frist", folder=tmp_path)
    assert isinstance(caught.value, KeyError)
    message = str(caught.value)
    assert message.startswith(
        "no prediction 'apply-frist' in the catalogue (2 entries). Did you mean 'apply-first'?"
    )
    assert "keys()" in message
    # Nothing close: no guess.
    with pytest.raises(UnknownPrediction, match=r"\(2 entries\)\. hookviz"):
        predict("zzz", folder=tmp_path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[p]\nquestion = "q"\nwhy = "w"\n',
            r"bad.toml \[p\] is missing answer: every prediction needs",
        ),
        ('[p]\nanswer = ["a"]\n', r"bad.toml \[p\] is missing question, why"),
        (
            '[p]\nquestion = "q"\nanswer = ["a"]\nwhy = "w"\nanwser = 1\n',
            r"unknown field 'anwser'; a prediction has question, choices, answer, why",
        ),
        (
            '[p]\nquestion = "q"\nchoices = ["a", "b"]\nanswer = 2\nwhy = "w"\n',
            r"bad.toml \[p\]: answer=2 is not the index of a choice",
        ),
        (
            '[p]\nquestion = "q"\nanswer = "a"\nwhy = "w"\n',
            r"bad.toml \[p\]: .*write answer=\['a'\]",
        ),
        ('[p]\nquestion = ""\nanswer = ["a"]\nwhy = "w"\n', r"bad.toml \[p\]: question is empty"),
        ('title = "predictions"\n', r"bad.toml: title = 'predictions' is not a prediction"),
        ('[p.q]\nquestion = "q"\n', r"bad.toml \[p\]: unknown field 'q'"),
        ('[p]\nquestion = "q\n', r"bad.toml is not valid TOML"),
    ],
)
def test_a_bad_entry_names_its_file_key_and_problem(tmp_path, text, message):
    write(tmp_path, "bad.toml", text)
    with pytest.raises(CatalogueError, match=message):
        load_catalogue(tmp_path)


def test_a_missing_folder_says_so(tmp_path):
    with pytest.raises(CatalogueError, match="no prediction folder"):
        predictions.keys(tmp_path / "nowhere")


def test_every_course_entry_is_a_valid_prediction_and_none_ships_with_the_package():
    catalogue = load_catalogue()
    assert {"example-apply-first", "example-postorder-numbers"} <= set(catalogue)
    for key, found in catalogue.items():
        widget = found.widget()
        assert repr(widget).startswith(f"Prediction({key!r}: ")
    assert {found.source.parent for found in catalogue.values()} == {ROOT / "predictions"}
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"
    ]
    assert "hookviz.course" not in package_data  # the course's content lives in the course


def test_the_examples_answer_as_documented():
    mc = predict("example-apply-first")
    assert mc.get_state()["answer_index"] == -1  # nothing revealed yet
    assert mc.choose(2) is True and mc.answer_text == "`ab.a`"
    text = predict("example-postorder-numbers")
    assert text.answer_with("4, 5, 2, 6, 3, 1") is True
    assert re.search(r"root `1` comes last", text.why)
