"""The web edition's budgets in one run: the build's time, each page's weight, how soon the
first widget on a page answers a key, how soon the search page lists its results, and how
smoothly a 1,000-module ApplyTraversal plays.

Run: .venv/bin/python bench/bench_site.py [--site DIR] [--rounds N] [--smoke]   (about 3 minutes)

Every page is opened from file:// in headless Chromium with every request outside the site
aborted and counted: a budget reading with a request attempted says OVER. Figures are ratios to
each budget (under 1 is within it), medians over the rounds, each page opened afresh.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))
sys.path.insert(0, str(ROOT.parent / "tests" / "browser"))
from jupyter_ui import launch_chromium  # noqa: E402

from hookviz.site.build import build_site  # noqa: E402

BUILD_BUDGET_S = 180.0
PAGE_BUDGET_BYTES = 1.5e6
KEY_BUDGET_S = 1.0
FPS_BUDGET = 30.0
# The key each widget answers at once, and the element whose change shows it answered.
FIRST_KEY = {
    "apply_traversal": "ArrowRight",
    "hook_timeline": "ArrowRight",
    "compiled_timeline": "ArrowRight",
    "hook_monitor": "ArrowDown",
    "hook_inventory": "ArrowDown",
    "prediction": "ArrowDown",
}
BIG_TRAVERSAL = {
    "cells": [
        {
            "cell_type": "markdown",
            "id": "title",
            "metadata": {},
            "source": "# A wide tree of 1,000 modules",
        },
        {
            "cell_type": "code",
            "id": "big",
            "metadata": {},
            "outputs": [],
            "execution_count": None,
            "source": "import hookviz as hv\n"
            "big = hv.ApplyTraversal(hv.examples.wide_tree(1000), speed=64)\nbig",
        },
    ],
    "metadata": {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
    },
    "nbformat": 4,
    "nbformat_minor": 5,
}

# Sets window.__answered: the time (ms after the load event) at which the first mounted widget
# answered the key that Playwright presses once the watch is set.
WATCH_FIRST_WIDGET = """async () => {
  const loaded = performance.getEntriesByType("navigation")[0].loadEventEnd;
  await window.hookvizHost.ready;
  const box = document.querySelector('.hv-site-widget[data-hv-mounted="true"]');
  const root = box.querySelector('.hv-root');
  root.focus();
  // Answered: its DOM changed, or the key moved the focus inside it (a prediction's choices).
  window.__answered = new Promise((resolve) => {
    const done = () => resolve(performance.now() - loaded);
    new MutationObserver(done).observe(box, { subtree: true, childList: true, attributes: true, characterData: true });
    box.addEventListener("focusin", done);
    setTimeout(() => resolve(Infinity), 10000); // no answer: reported as OVER, never a hang
  });
  return { widget: box.dataset.widget, ready: performance.now() - loaded };
}"""

COUNT_FRAMES = """async (ms) => {
  let frames = 0, running = true;
  const tick = () => { frames += 1; if (running) requestAnimationFrame(tick); };
  requestAnimationFrame(tick);
  const root = document.querySelector('.hv-apply');
  const first = Number(root.dataset.step || 0);
  await new Promise((r) => setTimeout(r, ms));
  running = false;
  return { frames, steps: Number(root.dataset.step || 0) - first };
}"""


def guarded_page(browser, site: Path, viewport=None):
    """A page whose requests outside ``site`` are aborted; returns it and the list of them."""
    page = browser.new_page(viewport=viewport or {"width": 1280, "height": 900})
    outside: list[str] = []
    prefix = site.resolve().as_uri()

    def route(r):
        url = r.request.url
        if url.startswith(prefix) or url.startswith(("data:", "blob:")):
            r.continue_()
        else:
            outside.append(url)
            r.abort()

    page.route("**/*", route)
    return page, outside


def page_weight(site: Path, page: Path) -> int:
    """The page's bytes and those of every script and stylesheet it loads."""
    html = page.read_text(encoding="utf-8")
    total = len(html.encode())
    for ref in re.findall(r'<(?:script[^>]*src|link[^>]*href)="([^"]+)"', html):
        total += (page.parent / ref).resolve().stat().st_size
    return total


def key_latency(browser, site: Path, page: Path, rounds: int) -> tuple[str, list[float], int]:
    times, widget, attempted = [], "", 0
    for _ in range(rounds):
        tab, outside = guarded_page(browser, site)
        tab.goto(page.resolve().as_uri())
        info = tab.evaluate(WATCH_FIRST_WIDGET)
        widget = info["widget"]
        tab.keyboard.press(FIRST_KEY[widget])
        times.append(tab.evaluate("() => window.__answered") / 1000)
        attempted += len(outside)
        tab.close()
    return widget, times, attempted


def playing_fps(browser, site: Path, seconds: float) -> tuple[float, float, int]:
    tab, outside = guarded_page(browser, site)
    tab.goto((site / "walkthrough" / "00-big.html").resolve().as_uri())
    tab.evaluate("() => window.hookvizHost.ready")
    tab.locator(".hv-apply").focus()
    tab.keyboard.press("Space")
    counted = tab.evaluate(COUNT_FRAMES, int(seconds * 1000))
    tab.keyboard.press("Space")
    tab.close()
    return counted["frames"] / seconds, counted["steps"] / seconds, len(outside)


SEARCH_QUERIES = ("post-order", "register_full_backward_hook", "hook order")


def search_latency(browser, site: Path, query: str, rounds: int) -> tuple[list[float], int, int]:
    """Seconds from the search page's navigation start to its results listed (the page indexes
    every section when it loads), the results' count, and requests outside the site."""
    times, count, attempted = [], 0, 0
    for _ in range(rounds):
        tab, outside = guarded_page(browser, site)
        tab.goto((site / "search.html").resolve().as_uri() + f"?q={query}")
        tab.wait_for_function("document.getElementById('search-status').textContent !== ''")
        # site.js marks the moment it has written the results (a User Timing mark)
        mark = "() => performance.getEntriesByName('hookviz-search-results')[0].startTime"
        times.append(tab.evaluate(mark) / 1000)
        count = tab.locator("#search-results li").count()
        attempted += len(outside)
        tab.close()
    return times, count, attempted


def big_traversal_site(folder: Path) -> Path:
    """A one-page course holding the 1,000-module traversal, built the way the site is."""
    course = folder / "course"
    (course / "notebooks").mkdir(parents=True)
    shutil.copyfile(ROOT.parent / "course.toml", course / "course.toml")
    (course / "notebooks" / "00-big.ipynb").write_text(json.dumps(BIG_TRAVERSAL))
    build_site(course, folder / "site", jobs=1)
    return folder / "site"


def verdict(ratio: float, attempted: int = 0) -> str:
    return "OVER" if ratio > 1 or attempted else "ok"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, help="a site already built (skips the build's timing)")
    parser.add_argument("--rounds", type=int, default=5, help="page loads per page (default 5)")
    parser.add_argument(
        "--smoke", action="store_true", help="one round, two pages: checks the bench runs"
    )
    args = parser.parse_args()
    rounds = 1 if args.smoke else args.rounds
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="hookviz-bench-site-") as scratch:
        scratch = Path(scratch)
        site = args.site
        if site is None:
            started = time.monotonic()
            site = build_site(ROOT.parent, scratch / "site").out
            seconds = time.monotonic() - started
            print(
                f"## build: {seconds:.0f} s for the whole site = {seconds / BUILD_BUDGET_S:.2f}x "
                f"the {BUILD_BUDGET_S:.0f} s budget ({verdict(seconds / BUILD_BUDGET_S)})",
                flush=True,
            )
        pages = sorted((site / "walkthrough").glob("*.html"))
        if args.smoke:
            pages = pages[:2]
        every_page = sorted(site.rglob("*.html"))
        print("## page weight (the page, its scripts and stylesheets) / 1.5 MB", flush=True)
        for page in every_page if not args.smoke else [*pages, site / "search.html"]:
            weight = page_weight(site, page)
            ratio = weight / PAGE_BUDGET_BYTES
            print(
                f"{page.relative_to(site)}: {weight / 1e6:.2f} MB = {ratio:.2f}x ({verdict(ratio)})",
                flush=True,
            )
        with sync_playwright() as playwright:
            browser = launch_chromium(playwright)
            try:
                print(
                    f"## first widget answers a key, seconds after the load event "
                    f"(median of {rounds}) / {KEY_BUDGET_S:.0f} s",
                    flush=True,
                )
                for page in pages:
                    widget, times, attempted = key_latency(browser, site, page, rounds)
                    median = statistics.median(times)
                    print(
                        f"{page.name} ({widget}): {median:.3f} s = {median / KEY_BUDGET_S:.2f}x "
                        f"(max {max(times):.3f} s; requests outside the site: {attempted}) "
                        f"({verdict(median / KEY_BUDGET_S, attempted)})",
                        flush=True,
                    )
                print(
                    f"## search: results listed, seconds after navigation start (median of "
                    f"{rounds}) / {KEY_BUDGET_S:.0f} s",
                    flush=True,
                )
                for query in SEARCH_QUERIES[:1] if args.smoke else SEARCH_QUERIES:
                    times, count, attempted = search_latency(browser, site, query, rounds)
                    median = statistics.median(times)
                    print(
                        f"{query!r}: {count} results in {median:.3f} s = "
                        f"{median / KEY_BUDGET_S:.2f}x (requests outside the site: {attempted}) "
                        f"({verdict(median / KEY_BUDGET_S, attempted)})",
                        flush=True,
                    )
                big = big_traversal_site(scratch / "big")
                fps, steps, attempted = playing_fps(browser, big, 1.0 if args.smoke else 4.0)
                print(
                    f"## ApplyTraversal on wide_tree(1000) playing on the site at 64 steps/s asked\n"
                    f"{fps:.0f} frames/s (requestAnimationFrame callbacks) = {FPS_BUDGET / fps:.2f}x "
                    f"the time a frame may take at {FPS_BUDGET:.0f}/s; {steps:.0f} steps/s drawn; "
                    f"requests outside the site: {attempted} ({verdict(FPS_BUDGET / fps, attempted)})",
                    flush=True,
                )
            finally:
                browser.close()


if __name__ == "__main__":
    main()
