"""axe-core on every page of the built site, light and dark, 1280 and 375 px wide: no serious or
critical violation. One browser context per (scheme, width), each visiting the pages in turn;
the four run side by side (axe takes seconds on a long page, and each context has its own
renderer), and every widget is mounted and every animation over before axe looks. A translated
page (site/ko/) has its English page's templates, CSS and widgets in other words: each is
checked in one of the four contexts, in turn, so that every context meets some of them.

Every rule runs on the whole of every page, with one saving: color-contrast looks at each kind
of token in each kind of code block once per context, not on every page. A code block whose
tokens (element and class, in a block of the same class and parent) were all met before in
that context is left out of color-contrast only: same classes, same CSS, same colours. The
thousands of pygments tokens were most of axe's time on a page."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from hookviz.course.authoring.stamp import load_course_config
from tests.site.browsing import AXE_OPTIONS, BLOCKING, new_guarded_context, settle

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
SCHEMES = ("light", "dark")
WIDTHS = {"desktop": 1280, "phone": 375}
SECONDS_PER_PAGE = 27  # a guard against a hang: axe's time for the longest queue, and more
SHOWN_PER_PAGE = 6  # selectors named per page and rule; the count says how many more
SEEN = "data-hv-axe-seen"  # on a code block whose kinds of token were all checked before

# The axe runs on a page, (context, options): every rule but color-contrast on the whole page,
# then color-contrast on the whole page but the code blocks met before.
RUNS = [
    (None, {**AXE_OPTIONS, "rules": {"color-contrast": {"enabled": False}}}),
    (
        {"include": [["html"]], "exclude": [[f".highlight[{SEEN}]"]]},
        {**AXE_OPTIONS, "runOnly": {"type": "rule", "values": ["color-contrast"]}},
    ),
]

# In the page: mark the code blocks with no kind of token not in `seen`; return the new kinds.
MARK_SEEN = """([seen, attribute]) => {
    seen = new Set(seen);
    const fresh = [];
    for (const block of document.querySelectorAll('.highlight')) {
        const where = `${block.className}|${block.parentElement.className}`;
        const kinds = new Set([...block.querySelectorAll('*')].map(
            (el) => `${where}|${el.tagName}.${el.className}`));
        const bare = [...block.querySelectorAll('pre')].some((pre) => [...pre.childNodes].some(
            (node) => node.nodeType === Node.TEXT_NODE && node.textContent.trim()));
        if (bare) kinds.add(`${where}|text`);
        const novel = [...kinds].filter((kind) => !seen.has(kind));
        if (!novel.length) block.setAttribute(attribute, '');
        for (const kind of novel) { seen.add(kind); fresh.push(kind); }
    }
    return fresh;
}"""

# In the page: run axe, and hand a small summary of what it found to Python's binding when it
# is done. (Asking the page instead would wait for axe's long tasks, one context at a time.)
START_AXE = """([runs, impacts]) => {
    (async () => {
        const found = [];
        for (const [context, options] of runs) {
            const result = await axe.run(context || document, options);
            for (const v of result.violations) {
                if (impacts.includes(v.impact)) found.push({ id: v.id, impact: v.impact,
                    help: v.help, targets: v.nodes.map((n) => n.target.join(' ')) });
            }
        }
        return found;
    })().then(window.__hvAxeDone, (error) => window.__hvAxeDone({ error: String(error) }));
}"""


@dataclass
class Visitor:
    """One context (a scheme and a width) going through the pages, one axe run at a time."""

    label: str
    page: object
    guard: object
    queue: list[str]
    current: str | None = None  # the page axe is looking at
    found: list[tuple[str, dict]] = field(default_factory=list)  # (page, violation)
    seen: list[str] = field(default_factory=list)  # kinds of code token checked already

    def __post_init__(self):
        from axe_playwright_python.base import AXE_SCRIPT

        self.page.context.add_init_script(AXE_SCRIPT)  # axe-core in every page, from its start
        self.page.context.expose_binding("__hvAxeDone", lambda _source, result: self.done(result))

    def start_next(self) -> None:
        self.current = self.queue.pop(0)
        self.page.goto(self.guard.base + self.current, wait_until="load")
        self.page.evaluate("() => window.hookvizHost ? window.hookvizHost.ready : null")
        settle(self.page)
        self.seen += self.page.evaluate(MARK_SEEN, [self.seen, SEEN])
        self.page.evaluate(START_AXE, [RUNS, list(BLOCKING)])

    def done(self, result) -> None:
        """axe's summary for the current page, from the page."""
        if isinstance(result, dict):
            error = {"id": "axe-error", "impact": "critical", "help": result["error"]}
            result = [{**error, "targets": []}]
        self.found.extend((self.current, violation) for violation in result)
        self.current = None


def report(visitors: list[Visitor]) -> str:
    """The violations by rule, then by scheme and width, then by page, with their selectors."""
    by_rule: dict[str, list[str]] = {}
    helps = {}
    for visitor in visitors:
        for page, v in visitor.found:
            key = f"{v['id']} ({v['impact']})"
            helps[key] = v["help"]
            shown = v["targets"][:SHOWN_PER_PAGE]
            more = len(v["targets"]) - len(shown)
            line = f"  {visitor.label} {page}: {shown}" + (f" and {more} more" if more else "")
            by_rule.setdefault(key, []).append(line)
    return "\n".join(f"{key}: {helps[key]}\n" + "\n".join(lines) for key, lines in by_rule.items())


def queues(pages: tuple[str, ...], count: int) -> list[list[str]]:
    """Every English page for each of ``count`` contexts; each translated page for one of them."""
    languages = set(load_course_config(REPO).languages)
    english = [p for p in pages if p.split("/")[0] not in languages]
    translated = [p for p in pages if p.split("/")[0] in languages]
    return [english + translated[i::count] for i in range(count)]


def test_no_page_has_a_serious_or_critical_axe_violation(chromium, built_site, site_server):
    visitors, contexts = [], []
    pages = queues(built_site.pages, len(SCHEMES) * len(WIDTHS))
    try:
        for scheme in SCHEMES:
            for name, width in WIDTHS.items():
                context, guard = new_guarded_context(
                    chromium,
                    site_server.base,
                    color_scheme=scheme,
                    viewport={"width": width, "height": 900},
                )
                contexts.append(context)
                label = f"[{scheme}, {name} {width}px]"
                page = context.new_page()
                visitors.append(Visitor(label, page, guard, pages[len(visitors)]))
        seconds = SECONDS_PER_PAGE * max(len(queue) for queue in pages)
        deadline = time.monotonic() + seconds
        while any(v.current or v.queue for v in visitors):
            for visitor in visitors:
                if visitor.current is None and visitor.queue:
                    visitor.start_next()
            assert time.monotonic() < deadline, f"axe did not finish the pages in {seconds} s"
            visitors[0].page.wait_for_timeout(50)  # Playwright's wait: the bindings get called
    finally:
        for context in contexts:
            context.close()
    for visitor in visitors:
        visitor.guard.assert_clean(visitor.label)
        assert visitor.seen, f"{visitor.label}: no code block was checked"
    assert site_server.take_outside() == []
    found = report(visitors)
    assert not found, f"axe-core found serious or critical violations:\n{found}"
