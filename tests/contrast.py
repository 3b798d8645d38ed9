"""The contrast a reader sees: each visible piece of text under an element, its colour over the
background actually behind it (translucent layers composited, up to the page's canvas), and the
WCAG contrast ratio of the two. Used by the browser tests of a check's card."""

from __future__ import annotations

import re

MIN_TEXT = 4.5  # WCAG AA for text under 18.66 px bold
MIN_MARK = 3.0  # WCAG's non-text contrast: a ✓/✗ mark, also spoken as a word beside it
_RGB = re.compile(r"rgba?\((\d+), (\d+), (\d+)")

_CONTRASTS = """(root) => {
  const parse = (css) => {
    const found = css.match(/rgba?\\(([^)]+)\\)/);
    if (!found) return [0, 0, 0, 0];
    const parts = found[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number);
    return [parts[0], parts[1], parts[2], parts.length > 3 ? parts[3] : 1];
  };
  const over = (top, under) => top.slice(0, 3).map((c, i) => c * top[3] + under[i] * (1 - top[3]));
  const behind = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) layers.push(parse(getComputedStyle(e).backgroundColor));
    let colour = [255, 255, 255];  // the canvas of a page that sets no background
    for (const layer of layers.reverse()) colour = over(layer, colour);
    return colour;
  };
  const luminance = (rgb) => {
    const linear = (c) => (c /= 255) <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    const [r, g, b] = rgb.map(linear);
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const seen = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (!node.textContent.trim() || !el.checkVisibility()) continue;
    const rect = el.getBoundingClientRect();
    if (rect.width <= 1 || rect.height <= 1) continue;  // a screen reader's word, not drawn
    const background = behind(el);
    const colour = over(parse(getComputedStyle(el).color), background);
    const [light, dark] = [luminance(colour), luminance(background)].sort((a, b) => b - a);
    seen.push({
      text: node.textContent.trim().slice(0, 60),
      mark: el.classList.contains("hv-mark"),
      colour: colour.map(Math.round),
      background: background.map(Math.round),
      ratio: (light + 0.05) / (dark + 0.05),
    });
  }
  return seen;
}"""


def text_contrasts(locator) -> list[dict]:
    """Every visible text under the element ``locator`` finds: {text, mark, colour, background,
    ratio}, colours as [r, g, b] after compositing."""
    return locator.evaluate(_CONTRASTS)


def too_faint(locator) -> list[str]:
    """The texts under ``locator`` below WCAG AA (marks below the non-text 3:1), one line each."""
    return [
        f"{seen['ratio']:.2f}:1 {seen['colour']} on {seen['background']}: {seen['text']!r}"
        for seen in text_contrasts(locator)
        if seen["ratio"] < (MIN_MARK if seen["mark"] else MIN_TEXT)
    ]


def text_colour(locator) -> tuple[int, int, int]:
    """The computed text colour of the element ``locator`` finds, as (r, g, b)."""
    found = _RGB.match(locator.evaluate("(el) => getComputedStyle(el).color"))
    assert found, "no colour"
    return tuple(int(part) for part in found.groups())
