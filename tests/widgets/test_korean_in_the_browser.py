"""The widgets in Korean, in a real Chromium: each drawn from its saved state by the site's host
(hookviz/site/static/host.js, the page that plays widgets without a kernel), so the state alone
must carry the language. A Korean widget's root says lang="ko" and shows and announces Korean;
the English one beside it is unchanged."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

import hookviz as hv
from hookviz.site.widget_state import WidgetState
from hookviz.widgets.base import HookvizWidget, front_end
from tests.widgets.test_messages import WIDGETS, _english_phrases

pytestmark = pytest.mark.browser

HOST = Path(hv.__file__).parent / "site" / "static" / "host.js"
NAMES = (
    "apply_traversal",
    "hook_timeline",
    "hook_monitor",
    "hook_inventory",
    "compiled_timeline",
    "prediction",
)


def _container(key: str, widget: HookvizWidget) -> str:
    state = WidgetState(widget._front_end, widget.offline_state(), widget.offline_extras(), "")
    return (
        f'<div class="hv-site-widget" id="{key}" data-widget="{widget._front_end}">'
        f'<script type="application/json">{state.as_json()}</script></div>'
    )


@pytest.fixture(scope="module")
def widgets() -> dict[str, HookvizWidget]:
    """One of each widget in Korean, and an English ApplyTraversal beside them."""
    made = {name: make(lang="ko") for name, make in WIDGETS.items()}
    made["english"] = hv.ApplyTraversal(hv.examples.model(), lang="en")
    return made


@pytest.fixture(scope="module")
def page_file(tmp_path_factory, widgets) -> Path:
    """A page with the widgets' saved states, their modules and the site's host: no kernel."""
    folder = tmp_path_factory.mktemp("korean-widgets")
    modules = {name: dict(zip(("esm", "css"), front_end(name), strict=True)) for name in NAMES}
    text = json.dumps(modules, ensure_ascii=False).replace("</", "<\\/")
    (folder / "hookviz-widgets.js").write_text(f"window.HOOKVIZ_WIDGETS = {text};\n", "utf-8")
    shutil.copy(HOST, folder / "host.js")
    body = "".join(_container(key, widget) for key, widget in widgets.items())
    (folder / "index.html").write_text(
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<script src="hookviz-widgets.js"></script><script defer src="host.js"></script>'
        f"</head><body>{body}</body></html>",
        "utf-8",
    )
    return folder / "index.html"


@pytest.fixture(scope="module")
def page(page_file):
    """The page open in Debian's Chromium, every widget mounted; script errors fail the test."""
    from tests.browser.jupyter_ui import launch_chromium
    from tests.site.browsing import playwright_driver

    with playwright_driver() as playwright:
        browser = launch_chromium(playwright)
        try:
            tab = browser.new_page(viewport={"width": 1280, "height": 1000})
            errors: list[str] = []
            tab.on("pageerror", lambda error: errors.append(str(error)))
            tab.goto(page_file.as_uri())
            mounted = tab.evaluate("() => window.hookvizHost.ready")
            assert mounted == {"mounted": len(NAMES) + 1, "failed": 0}
            yield tab
            assert errors == []
        finally:
            browser.close()


def _root(page, key: str):
    return page.locator(f"#{key} .hv-root")


def _announced(page, key: str, pattern: str) -> str:
    """What the widget's live region says once it matches ``pattern`` (it speaks after a gap)."""
    live = f"#{key} .hv-sr-only[role=status]"
    page.wait_for_function(
        "([sel, re]) => new RegExp(re).test(document.querySelector(sel).textContent)",
        arg=[live, pattern],
        timeout=5_000,
    )
    return page.locator(live).text_content()


def test_each_korean_widget_says_lang_ko_and_the_english_one_lang_en(page):
    for name in WIDGETS:
        assert _root(page, name).get_attribute("lang") == "ko", name
    assert _root(page, "english").get_attribute("lang") == "en"


def test_a_korean_widget_shows_korean_labels_and_the_english_one_is_unchanged(page):
    korean, english = _root(page, "ApplyTraversal"), _root(page, "english")
    assert korean.locator(".hv-status").text_content() == "단계 0 / 7"
    assert english.locator(".hv-status").text_content() == "step 0 / 7"
    assert korean.get_attribute("aria-label").startswith("apply 순회:")
    assert english.get_attribute("aria-label") == (
        "apply traversal: space plays and pauses, arrows step"
    )
    assert korean.locator(".hv-play").get_attribute("title") == "재생 (space)"
    assert english.locator(".hv-play").get_attribute("title") == "Play (space)"
    assert _root(page, "HookTimeline").locator(".hv-band-label").first.text_content() == "순전파"
    assert _root(page, "HookMonitor").locator("th").first.text_content() == "모듈"
    assert _root(page, "HookInventory").locator("th").first.text_content() == "위치"
    assert _root(page, "Prediction").locator(".hv-title").text_content() == "예측하고 실행하기"


@pytest.mark.parametrize("name", list(WIDGETS))
def test_no_english_phrase_of_the_tables_shows_in_a_korean_widget(page, widgets, name):
    shown = _root(page, name).inner_text()
    assert re.search("[가-힣]", shown)
    assert [p for p in _english_phrases(widgets[name]) if p in shown] == []


def test_a_step_is_announced_in_korean_and_in_english_as_before(page):
    for key in ("ApplyTraversal", "english"):
        _root(page, key).focus()
        page.keyboard.press("ArrowRight")
    assert _announced(page, "ApplyTraversal", "^방문 1/7: ") == "방문 1/7: ab.a, Function_A"
    assert _announced(page, "english", "^visit 1 of") == "visit 1 of 7: ab.a, Function_A"
    assert _root(page, "ApplyTraversal").locator(".hv-status").text_content() == "단계 1 / 7"


def test_a_korean_prediction_gives_its_verdict_in_korean(page):
    prediction = _root(page, "Prediction")
    prediction.locator(".hv-choice").first.click()
    verdict = prediction.locator(".hv-verdict[role=status]")
    verdict.filter(has_text="정답").wait_for(timeout=5_000)
    assert verdict.text_content() == "✓ 정답입니다! 답: A: pre-hook"
    assert prediction.locator(".hv-choice .hv-mark").first.text_content() == "✓ 내 선택"


def test_the_timeline_names_torchs_moments_in_korean(page, widgets):
    timeline = _root(page, "HookTimeline")
    timeline.focus()
    page.keyboard.press("ArrowRight")
    said = _announced(page, "HookTimeline", "^훅 호출 1/")
    assert said == f"훅 호출 1/{widgets['HookTimeline'].total}: Model, forward() 시작"
