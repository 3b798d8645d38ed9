"""The site builder's parts that need no browser: links, the page's widget JSON, the config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hookviz.course.authoring.stamp import load_course_config
from hookviz.course.format.notebooks import NotebookError
from hookviz.site.article import Links, finish
from hookviz.site.widget_state import WidgetState

ROOT = Path(__file__).resolve().parents[2]
LINKS = Links(
    {
        "notebooks/01-a.ipynb": "walkthrough/01-a.html",
        "exercises/01-x.ipynb": "assignments/01-x.html",
    },
    "https://github.com/o/n/blob/main",
    ROOT,
)


@pytest.mark.parametrize(
    ("href", "expected"),
    [
        ("01-a.ipynb", "01-a.html"),
        ("01-a.ipynb#The-tree", "01-a.html#The-tree"),
        ("../exercises/01-x.ipynb", "../assignments/01-x.html"),
        ("../docs/CONVENTIONS.md", "https://github.com/o/n/blob/main/docs/CONVENTIONS.md"),
        ("#here", "#here"),
        ("https://pytorch.org/docs", "https://pytorch.org/docs"),
    ],
)
def test_a_link_in_a_notebook_goes_to_its_page_or_to_github(href, expected):
    assert LINKS.href("notebooks/00-start.ipynb", "walkthrough/00-start.html", href) == expected


def test_headings_get_unique_ids_and_the_text_is_split_at_them():
    article = finish(
        "<h1>Title</h1><p>First words.</p><h2>Try it</h2><p>one</p><h2>Try it</h2><p>two</p>",
        "notebooks/01-a.ipynb",
        "walkthrough/01-a.html",
        LINKS,
    )
    assert article.title == "Title"
    assert article.summary == "First words."
    assert [h.id for h in article.headings] == ["title", "try-it", "try-it-2"]
    assert [(s.anchor, s.title, s.text) for s in article.sections] == [
        ("title", "Title", "First words."),
        ("try-it", "Try it", "one"),
        ("try-it-2", "Try it", "two"),
    ]


def test_a_widgets_json_cannot_close_its_script_element():
    widget = WidgetState("prediction", {"question": "</script><b>x</b>"}, {}, "Prediction()")
    text = widget.as_json()
    assert "</script>" not in text
    assert json.loads(text)["state"]["question"] == "</script><b>x</b>"


def test_a_widgets_json_refuses_nan_which_strict_json_cannot_carry():
    with pytest.raises(ValueError):
        WidgetState("hook_monitor", {"mean": float("nan")}, {}, "").as_json()


def test_a_prediction_gives_the_page_its_answer_apart_from_its_synced_state():
    from hookviz.widgets import Prediction

    choice = Prediction("Which?", choices=["a", "b"], answer=1, why="Because.")
    assert choice.offline_extras() == {"answer_index": 1, "why": "Because."}
    state = choice.offline_state()
    assert state["answer_index"] == -1 and state["why"] == "" and state["state"] == "open"
    assert not any(key.startswith("_") for key in state)
    short = Prediction("Order?", answer=["4 5 2"], why="Post-order.")
    assert short.offline_extras() == {"accepted": ["4 5 2"], "why": "Post-order."}


def test_the_site_address_comes_from_course_toml_and_the_readme_links_to_it_first():
    config = load_course_config(ROOT)
    first_screen = "\n".join((ROOT / "README.md").read_text(encoding="utf-8").splitlines()[:12])
    assert config.site_url in first_screen


def test_without_a_site_in_course_toml_the_address_is_github_pages(tmp_path):
    (tmp_path / "course.toml").write_text(
        '[course]\nrepository = "https://github.com/me/course"\n', encoding="utf-8"
    )
    assert load_course_config(tmp_path).site_url == "https://me.github.io/course/"


def test_a_site_that_is_not_a_web_address_is_refused_with_an_example(tmp_path):
    (tmp_path / "course.toml").write_text(
        '[course]\nrepository = "https://github.com/me/course"\nsite = "my site"\n',
        encoding="utf-8",
    )
    with pytest.raises(NotebookError, match="OWNER.github.io"):
        load_course_config(tmp_path)


def test_a_guides_headings_get_the_ids_github_gives_so_its_links_still_land():
    from hookviz.site.article import markdown_article

    article = markdown_article(
        "# The checks API\n\n## nbgrader's cells\n\n## nbgrader's cells\n",
        "docs/x.md",
        "x.html",
        LINKS,
    )
    assert [h.id for h in article.headings] == [
        "the-checks-api",
        "nbgraders-cells",
        "nbgraders-cells-1",
    ]


def test_a_translation_takes_its_english_heading_ids_by_cell():
    english = finish(
        '<div class="site-md" data-cell-id="c1"><h1>The tree</h1><h2>Post-order</h2></div>'
        '<div class="site-md" data-cell-id="c2"><h2>Summary</h2></div>',
        "notebooks/01-a.ipynb",
        "walkthrough/01-a.html",
        LINKS,
    )
    assert english.cell_anchors == {"c1": ["the-tree", "post-order"], "c2": ["summary"]}
    korean = finish(
        '<div class="site-md" data-cell-id="c2"><h2>요약</h2><h3>더 읽을거리</h3></div>'
        '<div class="site-md" data-cell-id="c1"><h1>트리</h1><h2>후위 순회</h2></div>',
        "ko/notebooks/01-a.ipynb",
        "ko/walkthrough/01-a.html",
        LINKS,
        lang="ko",
        anchors=english.cell_anchors,
    )
    # the English ids, cell by cell; a heading the English cell lacks gets its own
    assert [h.id for h in korean.headings] == ["summary", "더-읽을거리", "the-tree", "post-order"]
    assert "이 절로 가는 링크" in korean.html
