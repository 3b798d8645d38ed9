"""The widgets' words: one message table per language, the same keys and placeholders in each,
Korean that follows the course's glossary, and every widget speaking the language it was made in."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
import tomllib
import torch

import hookviz as hv
from hookviz.hook_kinds import KINDS, TIMELINE
from hookviz.language import LANG_ENV, LANGUAGES, set_language
from hookviz.recording import ESTIMATED_NOTE
from hookviz.widgets import messages
from hookviz.widgets.base import HookvizWidget

ROOT = Path(__file__).resolve().parents[2]
GLOSSARY = ROOT / "translations" / "ko" / "glossary.toml"
TABLES = {
    lang: json.loads((messages.FOLDER / f"{lang}.json").read_text("utf-8")) for lang in LANGUAGES
}
EN, KO = TABLES["en"], TABLES["ko"]


def _train(model: torch.nn.Module) -> None:
    for _ in range(2):
        model.zero_grad()
        model(torch.ones(4, 4)).sum().backward()


def _monitor(**kwargs) -> hv.HookMonitor:
    model = hv.examples.mlp((4, 8, 2))
    with hv.HookMonitor(model, **kwargs) as monitor:
        _train(model)
    return monitor


# One maker per widget: each makes it with the keyword arguments given (lang=...).
WIDGETS: dict[str, Callable[..., HookvizWidget]] = {
    "ApplyTraversal": lambda **kw: hv.ApplyTraversal(hv.examples.model(), **kw),
    "HookTimeline": lambda **kw: hv.HookTimeline(hv.examples.model(), torch.ones(1), **kw),
    "HookMonitor": _monitor,
    "HookInventory": lambda **kw: hv.HookInventory(hv.examples.model(), **kw),
    "CompiledTimeline": lambda **kw: hv.CompiledTimeline(
        hv.examples.model(), torch.ones(1), steps=2, **kw
    ),
    "Prediction": lambda **kw: hv.Prediction(
        "Which runs first?", choices=["pre-hook", "forward"], answer=0, why="Pre.", **kw
    ),
}


@pytest.fixture
def course_language(monkeypatch):
    """The course's language left as English (no notebook choice, no HOOKVIZ_LANG), and put
    back the same way after the test."""
    monkeypatch.delenv(LANG_ENV, raising=False)
    set_language(None)
    yield
    set_language(None)


# -- the tables ----------------------------------------------------------------------------------


def test_there_is_one_table_per_language_and_nothing_else():
    assert sorted(p.stem for p in messages.FOLDER.glob("*.json")) == sorted(LANGUAGES)


def test_both_tables_have_exactly_the_same_keys():
    assert sorted(set(EN) - set(KO)) == [], "keys with no Korean"
    assert sorted(set(KO) - set(EN)) == [], "Korean keys English does not have"
    assert list(EN) == list(KO)  # and in the same order, so that a diff reads line by line


@pytest.mark.parametrize("key", sorted(EN))
def test_each_key_has_the_same_placeholders_in_both_tables(key):
    assert messages.placeholders(KO[key]) == messages.placeholders(EN[key])


def test_no_text_is_empty_or_untranslated_english_sentence():
    assert all(text.strip() for table in TABLES.values() for text in table.values())
    # Korean text that is still the English one: only what needs no translation (code, marks)
    same = {k for k in EN if EN[k] == KO[k] and re.search(r"[a-z]{3,} [a-z]{3,}", EN[k])}
    assert same == set()


def test_korean_keeps_the_marks_and_the_keyboard_keys():
    marks = ("✓", "✗", "○", "▼", "▲", "⚠", "●", "■", "←", "→", "↑", "↓")
    keys = ("space", "Home", "End", "Enter", "Delete", "V", "G")
    for key in EN:
        for mark in marks:
            assert KO[key].count(mark) == EN[key].count(mark), (key, mark)
        if key == "common.end":  # the button's name, not the key
            continue
        for name in keys:
            pattern = rf"(?<![A-Za-z]){name}(?![A-Za-z])"
            english = len(re.findall(pattern, EN[key]))
            assert len(re.findall(pattern, KO[key])) == english, (key, name)


def test_korean_follows_the_glossary():
    glossary = tomllib.loads(GLOSSARY.read_text("utf-8"))
    avoided = [(term, word) for term, entry in glossary.items() for word in entry.get("avoid", [])]
    for key, text in KO.items():
        for term, word in avoided:
            assert not re.search(word, text), f"{key}: {text!r} says {word!r} (glossary: {term})"
    assert "변화도" in KO["monitor.gradient"] and "매개변수" in KO["kind.tensor"]


# A particle whose form depends on how the word before it ends (받침): after a placeholder the
# table cannot know, so the Korean is written without one there.
PARTICLE_AFTER_PLACEHOLDER = re.compile(r"\{\w+\}(?:을|를|이|가|은|는|과|와|으로|로)(?![가-힣])")


def test_no_particle_that_depends_on_the_placeholder_follows_it():
    bad = {k: v for k, v in KO.items() if PARTICLE_AFTER_PLACEHOLDER.search(v)}
    assert bad == {}


def test_the_english_words_of_hook_kinds_and_estimates_are_the_librarys_own():
    """The table's English for each kind a timeline shows is hook_kinds' meaning, and the
    monitor's estimate note is record()'s: one wording, checked, not two that drift apart."""
    assert {name: EN[f"kind.{name}"] for name in TIMELINE} == {
        name: KINDS[name].meaning for name in TIMELINE
    }
    assert EN["monitor.estimated"] == ESTIMATED_NOTE
    trace = hv.trace_hooks(hv.examples.model(), torch.ones(1))
    markers = {f.kind: f.name for f in trace.firings if f.who == "torch"}
    assert markers == {kind: EN[f"timeline.torch_{kind}"] for kind in markers}
    assert len(markers) == 4


def test_fill_replaces_placeholders_and_leaves_unknown_ones():
    assert messages.fill("{a} of {b} ({c})", {"a": 1, "b": "two"}) == "1 of two ({c})"
    assert messages.say("ko", "apply.status", step=3, total=7) == "단계 3 / 7"


# -- a widget speaks the language it was made in ----------------------------------------------


def _speaks(widget: HookvizWidget, lang: str) -> None:
    state = widget.get_state()
    assert state["lang"] == widget.lang == lang
    assert state["messages"] == widget.messages
    groups = ("common", *type(widget)._vocabulary)
    assert widget.messages == {k: v for k, v in TABLES[lang].items() if k.split(".")[0] in groups}
    assert {k.split(".")[0] for k in widget.messages} == set(groups)


@pytest.mark.parametrize("name", WIDGETS)
def test_a_widget_is_english_by_default(name, course_language):
    _speaks(WIDGETS[name](), "en")


@pytest.mark.parametrize("name", WIDGETS)
def test_lang_ko_makes_a_korean_widget(name, course_language):
    widget = WIDGETS[name](lang="ko")
    _speaks(widget, "ko")
    assert widget.offline_state()["lang"] == "ko"  # what the site stores and replays
    assert widget.offline_state()["messages"]["common.play"] == "재생"


@pytest.mark.parametrize("name", WIDGETS)
def test_hookviz_lang_in_the_environment_makes_a_korean_widget(name, course_language, monkeypatch):
    monkeypatch.setenv(LANG_ENV, "ko")
    _speaks(WIDGETS[name](), "ko")
    _speaks(WIDGETS[name](lang="en"), "en")  # the argument wins


@pytest.mark.parametrize("name", WIDGETS)
def test_the_notebooks_language_makes_a_korean_widget(name, course_language, monkeypatch):
    monkeypatch.setenv(LANG_ENV, "en")
    set_language("ko")
    _speaks(WIDGETS[name](), "ko")


@pytest.mark.parametrize("name", WIDGETS)
@pytest.mark.parametrize("lang", ["fr", "KO", "", 3])
def test_an_unknown_language_is_refused_with_the_choices(name, lang, course_language):
    with pytest.raises(ValueError, match=r"hookviz speaks en, ko, not .*Use one of those"):
        WIDGETS[name](lang=lang)


def test_changing_lang_later_changes_the_words_and_is_checked(course_language):
    widget = WIDGETS["ApplyTraversal"]()
    widget.lang = "ko"
    assert widget.messages["apply.now"] == "지금"
    with pytest.raises(Exception, match="hookviz speaks en, ko"):
        widget.lang = "de"
    assert widget.lang == "ko"


# -- what the Python side writes ---------------------------------------------------------------


def _visible_text(page: str) -> str:
    """The words of an HTML picture: no tags, no stylesheet."""
    page = re.sub(r"<style>.*?</style>", " ", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def _english_phrases(widget: HookvizWidget) -> list[str]:
    """The widget's English texts that Korean words replace (two words or more)."""
    found = []
    for key, text in EN.items():
        if key.split(".")[0] not in ("common", *type(widget)._vocabulary) or text == KO[key]:
            continue
        for part in messages.PLACEHOLDER.split(text)[::2]:  # the text between placeholders
            if re.search(r"[A-Za-z]{2,}[ ,.;:]+[A-Za-z]{2,}", part):
                found.append(part.strip(" ,.;:()…"))
    return found


@pytest.mark.parametrize("name", WIDGETS)
def test_the_static_picture_speaks_the_widgets_language(name, course_language):
    english, korean = WIDGETS[name](), WIDGETS[name](lang="ko")
    english_text, korean_text = _visible_text(english.to_html()), _visible_text(korean.to_html())
    assert not re.search("[가-힣]", english_text)
    assert re.search("[가-힣]", korean_text)
    left = [p for p in _english_phrases(korean) if p in korean_text]
    assert left == []
    assert repr(korean) == repr(english)  # what the library prints stays English


def test_python_side_statuses_and_titles_follow_the_language(course_language):
    model = hv.examples.model()
    model.ab.a.register_forward_hook(lambda m, i, o: None)
    inventory = hv.HookInventory(model, include_globals=False, lang="ko")
    assert inventory.title == "훅 목록: Model"
    inventory._on_message(inventory, {"action": "refresh"})
    assert inventory.status == "다시 읽음: 훅 1개"
    timeline = hv.HookTimeline(hv.examples.model(), torch.ones(1), lang="ko")
    assert timeline.title.startswith("Model: 순전파와 역전파 한 번")
    assert timeline.legend[0][0] == "순전파 사전 훅"
    assert timeline.kinds["forward"]["meaning"] == KO["kind.forward"]
    monitor = _monitor(lang="ko", exact=False)
    assert [c["label"] for c in monitor.table_columns][:3] == ["모듈", "클래스", "호출"]
    assert monitor.snapshot["note"] == KO["monitor.estimated"]
