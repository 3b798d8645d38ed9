"""hookviz.plot_labels: the words the plots draw, one table per language, the same keys and
placeholders in each, the Korean in the glossary's words, the English as it always was."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest
import torch

import hookviz as hv
from hookviz import language
from hookviz.course.i18n.lint import lint, load_glossary
from hookviz.plot_labels import ENGLISH, KOREAN, LABELS, label

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def speak(monkeypatch):
    """Set the course's language for one test, and put it back after."""
    monkeypatch.delenv(language.LANG_ENV, raising=False)
    yield language.set_language
    language.set_language(None)


def placeholders(text: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(text) if field is not None}


def test_every_language_has_a_table_with_the_same_keys_and_placeholders():
    assert set(LABELS) == set(language.LANGUAGES)
    for table in LABELS.values():
        assert table.keys() == ENGLISH.keys()
        for key, text in table.items():
            assert placeholders(text) == placeholders(ENGLISH[key]), key


def test_the_korean_uses_the_glossarys_words():
    glossary = load_glossary(ROOT / "translations" / "ko" / "glossary.toml")
    assert glossary
    for key, text in KOREAN.items():
        assert lint(ENGLISH[key], text, glossary) == [], key
        named = not re.search(r"[a-z]{2,}", ENGLISH[key].replace("NaN", "").replace("Inf", ""))
        assert text != ENGLISH[key] or named, key


def test_a_label_follows_the_course_language_when_the_plot_is_drawn(speak):
    speak("ko")
    assert label("heatmap_step") == "단계"
    assert label("monitor_title", title="HookMonitor", steps=3) == "HookMonitor · 3단계"
    speak(None)
    assert label("heatmap_step") == "step"


def test_english_plots_keep_their_words(speak):
    speak("en")
    model = hv.examples.mlp((4, 8, 2))
    x = torch.randn(5, 4, generator=torch.Generator().manual_seed(0))
    with hv.record(model) as rec:
        for _ in range(3):
            model(x).sum().backward()
    heat = hv.plots.activation_heatmap(rec)
    assert heat.get_suptitle() == "Histogram of each module's outputs over steps 0–2"
    assert heat.axes[-1].get_ylabel() == "log(1 + values per step in the bin)"
    trace = hv.trace_hooks(model, x)
    timeline = hv.plots.timeline(trace).axes[0]
    events = len(trace.firings)
    assert timeline.get_title() == f"Sequential: {events} events, 0 from the model's own hooks"
    assert timeline.get_xlabel() == (
        "order of events (circles: forward hooks, squares: backward hooks, diamonds: torch)"
    )
    tree = hv.plots.apply_traversal(hv.trace_apply(hv.examples.model(), echo=False)).axes[0]
    assert tree.get_title() == (
        "Model.apply(no-op)\n"
        "blue: apply's visit number (post-order) · green: modules() order (pre-order)"
    )


def test_a_korean_plot_is_labelled_from_the_korean_table(speak):
    speak("ko")
    model = hv.examples.mlp((4, 8, 2))
    x = torch.randn(5, 4, generator=torch.Generator().manual_seed(0))
    with hv.record(model) as rec:
        model(x).sum().backward()
    heat = hv.plots.activation_heatmap(rec, "gradient")
    assert heat.get_suptitle() == KOREAN["heatmap_title_gradient"].format(first=0, last=0)
    assert heat.axes[0].get_ylabel() == "변화도 값"
    timeline = hv.plots.timeline(hv.trace_hooks(model, x)).axes[0]
    assert timeline.get_xlabel() == "이벤트 순서 (원: 순전파 훅, 사각형: 역전파 훅, 마름모: torch)"


def test_a_monitors_flag_is_drawn_in_the_widgets_words(speak):
    """HookMonitor's figure names a flagged gradient as the widget does, in the course's
    language, never by its raw flag ('vanishing')."""
    from hookviz.widgets.messages import table

    model = hv.examples.mlp((4, 8, 2))
    x = torch.randn(5, 4, generator=torch.Generator().manual_seed(0))
    for lang in ("ko", "en"):
        speak(lang)
        monitor = hv.HookMonitor(model, vanishing_below=1e3, exploding_above=1e6)  # all flagged
        with monitor:
            model(x).sum().backward()
        texts = [t.get_text().strip() for ax in monitor.plot().axes for t in ax.texts]
        words = table(lang)["monitor.flag_vanishing"]
        assert words in texts and "vanishing" not in texts, texts
        assert LABELS[lang]["flag_vanishing"] == words
        assert LABELS[lang]["flag_exploding"] == table(lang)["monitor.flag_exploding"]
