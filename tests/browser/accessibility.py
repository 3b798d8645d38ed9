"""axe-core on the widgets of an open notebook: the rules a screen reader or a keyboard user needs.

axe-core comes inside the axe-playwright-python wheel (a dev dependency); it is injected once
per page and run on the widgets' roots only, so JupyterLab's own page is not judged here.
"""

from __future__ import annotations

BLOCKING = ("serious", "critical")  # the impacts that fail a test


def axe_violations(
    page, selector: str = ".hv-root", impacts: tuple[str, ...] = BLOCKING
) -> list[str]:
    """axe-core's violations of ``impacts`` inside every element matching ``selector``, one line each."""
    # Imported here: the Colab-pinned run collects this folder too, without Playwright installed.
    from axe_playwright_python.base import AXE_SCRIPT

    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(AXE_SCRIPT)
    result = page.evaluate(
        "(selector) => axe.run({ include: [[selector]] }, { resultTypes: ['violations'] })",
        selector,
    )
    return [
        f"{v['id']} ({v['impact']}): {v['help']}: {[' '.join(node['target']) for node in v['nodes']]}"
        for v in result["violations"]
        if v["impact"] in impacts
    ]


def assert_accessible(page, widgets: dict[str, int]) -> None:
    """Every widget kind in ``widgets`` (root class -> how many) is on the page, and axe-core finds
    no serious or critical violation in any of them."""
    counts = {kind: page.locator(f".hv-root.{kind}").count() for kind in widgets}
    assert counts == widgets  # what was checked: not an empty page
    assert axe_violations(page) == []
