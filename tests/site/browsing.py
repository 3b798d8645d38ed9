"""Drive Chromium over the built site: every request outside the site aborted and counted.

A ``Guard`` watches one browser context: a route aborts each request whose URL is not under the
site's own base (its folder on file://, its sub-path on the local server), and records it with
every page error and console error. ``SiteTab`` is one page of that context, with the few
keyboard moves the widget tests need. Nothing here skips: a missing Chromium is an error.
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

SUB_PATH = "/hookviz/"  # where the local server puts the site, as GitHub Pages does /<repo>/
VIEWPORT = {"width": 1280, "height": 900}
BLOCKING = ("serious", "critical")  # the axe-core impacts that fail a test
# axe's preload is off: it would fetch the stylesheets again, which file:// refuses (a console
# error that is axe's, not the site's).
AXE_OPTIONS = {"resultTypes": ["violations"], "preload": False}
TAB_LIMIT = 400  # Tab presses before a widget counts as unreachable by keyboard


class SubPathServer:
    """A static server on 127.0.0.1, in a thread of this process: the site under ``SUB_PATH``,
    404 for any other path, and every path asked for remembered."""

    def __init__(self, site: Path):
        self.site = site
        self.paths: list[str] = []  # every request path, in order (list.append is thread-safe)
        handler = partial(_SubPathHandler, self, directory=str(site))
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="site-server")

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{SUB_PATH}"

    def outside(self) -> list[str]:
        """The paths asked for that are not under the site's sub-path."""
        return [p for p in self.paths if not p.startswith(SUB_PATH)]

    def take_outside(self) -> list[str]:
        """``outside()``, and forget every path asked for so far."""
        outside = self.outside()
        del self.paths[: len(self.paths)]
        return outside

    def start(self) -> SubPathServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, close the socket and wait for the thread."""
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(10)
        if self.thread.is_alive():
            raise RuntimeError("the site's static server thread did not stop")


class _SubPathHandler(SimpleHTTPRequestHandler):
    def __init__(self, server_state: SubPathServer, *args, **kwargs):
        self.server_state = server_state
        super().__init__(*args, **kwargs)

    def _route(self) -> bool:
        self.server_state.paths.append(self.path)
        if not self.path.startswith(SUB_PATH):
            self.send_error(404, "outside the site")
            return False
        self.path = "/" + self.path[len(SUB_PATH) :]
        return True

    def do_GET(self):  # noqa: N802 (http.server's names)
        if self._route():
            super().do_GET()

    def do_HEAD(self):  # noqa: N802
        if self._route():
            super().do_HEAD()

    def log_message(self, format, *args):  # quiet: the paths are kept instead
        pass


@dataclass
class Guard:
    """What one browser context did that it must not: requests outside ``base``, script errors."""

    base: str  # the site's root URL, ending in "/"
    outside: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    told: tuple[int, int] = (0, 0)  # how many of each a test was already told of

    def allowed(self, url: str) -> bool:
        return url.startswith(self.base) or url.startswith(("data:", "blob:"))

    def watch(self, context) -> None:
        """Abort and count every request outside the site; record every page and console error."""
        context.route("**/*", self._route)
        context.on("request", self._request)
        context.on("page", self._page)

    def _route(self, route) -> None:
        url = route.request.url
        if self.allowed(url):
            route.continue_()
        else:
            self._count(url)
            route.abort("blockedbyclient")

    def _request(self, request) -> None:  # a second net: a request the route did not see
        if not self.allowed(request.url):
            self._count(request.url)

    def _count(self, url: str) -> None:
        if url not in self.outside:
            self.outside.append(url)

    def _page(self, page) -> None:
        page.on("pageerror", lambda error: self.errors.append(f"page error: {error}"))
        page.on(
            "console",
            lambda message: (
                message.type == "error"
                and self.errors.append(f"console error: {message.text} ({message.location['url']})")
            ),
        )
        page.on("websocket", lambda socket: self._count(socket.url))

    def new_problems(self) -> list[str]:
        """The requests outside and the errors since the last call (or assertion)."""
        outside, errors = self.told
        self.told = (len(self.outside), len(self.errors))
        requests = [f"request outside the site: {url}" for url in self.outside[outside:]]
        return requests + self.errors[errors:]

    def forget(self) -> None:
        """Clear what was recorded (after a test provoked it on purpose)."""
        self.outside.clear()
        self.errors.clear()
        self.told = (0, 0)

    def assert_clean(self, where: str = "") -> None:
        """No request outside the site and no script error so far (``where``: what was open)."""
        new = self.new_problems()
        assert not new, (f"{where}: " if where else "") + "\n".join(new)


class SiteTab:
    """One page of a guarded context, opened on the site's pages by their path in the site."""

    def __init__(self, page, guard: Guard):
        self.page, self.guard = page, guard

    def open(self, path: str) -> dict | None:
        """Go to ``path`` (e.g. "walkthrough/01-....html"); wait for its widgets, if it has any.
        Returns the host's {mounted, failed}, or None on a page without widgets."""
        self.page.goto(self.guard.base + path, wait_until="load")
        return self.widgets_ready()

    def widgets_ready(self) -> dict | None:
        return self.page.evaluate("() => window.hookvizHost ? window.hookvizHost.ready : null")

    def focused(self, selector: str, index: int = 0) -> bool:
        """Whether the focus is on the ``index``-th element matching ``selector``."""
        return self.page.evaluate(
            "([sel, i]) => document.activeElement === document.querySelectorAll(sel)[i]",
            [selector, index],
        )

    def skip_to_content(self) -> None:
        """The keyboard's way in: Tab to the skip link, Enter; the focus is then on <main>."""
        self.page.locator("body").focus()  # nothing focused, as after a page load
        self.page.keyboard.press("Tab")
        assert self.focused('a[href="#content"]'), "the first Tab does not reach the skip link"
        self.page.keyboard.press("Enter")
        self.page.wait_for_function("() => document.activeElement.id === 'content'")

    def tab_to(
        self, selector: str, index: int = 0, *, backwards: bool = False, limit: int = TAB_LIMIT
    ) -> None:
        """Press Tab (Shift+Tab) until the focus is on the ``index``-th match of ``selector``."""
        key = "Shift+Tab" if backwards else "Tab"
        for _ in range(limit):
            self.page.keyboard.press(key)
            if self.focused(selector, index):
                return
        raise AssertionError(f"{limit} presses of {key} never focused {selector!r} #{index}")

    def press(self, *keys: str) -> None:
        for key in keys:
            self.page.keyboard.press(key)


def settle(page, timeout_ms: int = 3000) -> None:
    """Wait for the page's running animations and transitions to end (a colour half-way through a
    fade is not the one a reader sees), at most ``timeout_ms``."""
    page.evaluate(
        """(timeout) => Promise.race([
            Promise.all(document.getAnimations().map((a) => a.finished.catch(() => null))),
            new Promise((resolve) => setTimeout(resolve, timeout)),
        ])""",
        timeout_ms,
    )


def axe_violations(page, selector: str | None = None) -> list[str]:
    """axe-core's serious and critical violations on the page (or inside ``selector``), one line
    each: rule, impact, help and the selectors of the nodes."""
    from axe_playwright_python.base import AXE_SCRIPT

    settle(page)
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(AXE_SCRIPT)
    result = page.evaluate(
        "([selector, options]) => axe.run(selector ? { include: [[selector]] } : document, options)",
        [selector, AXE_OPTIONS],
    )
    return [
        f"{v['id']} ({v['impact']}): {v['help']}: {[' '.join(n['target']) for n in v['nodes']]}"
        for v in result["violations"]
        if v["impact"] in BLOCKING
    ]


@contextmanager
def playwright_driver():
    """Playwright's sync driver for this thread: our own, stopped at the end; or, when one runs
    already (tests/browser's session Chromium: Playwright allows one sync driver per thread),
    that one, which its owner stops."""
    from playwright.sync_api import Error, Playwright, sync_playwright

    manager = sync_playwright()
    try:
        playwright = manager.start()
    except Error as error:  # raised before anything started
        running = [o for o in gc.get_objects() if type(o) is Playwright]  # no isinstance: no hooks
        if "asyncio loop" not in str(error) or not running:
            raise
        yield running[-1]
        return
    try:
        yield playwright
    finally:
        playwright.stop()


def new_guarded_context(browser, base: str, **options):
    """A new context on ``browser`` whose requests outside ``base`` are aborted and counted."""
    guard = Guard(base)
    context = browser.new_context(**{"viewport": VIEWPORT, "device_scale_factor": 1, **options})
    guard.watch(context)
    return context, guard


@contextmanager
def tab_with(chromium, built_site, **options):
    """A guarded page from file:// in a context with ``options``; closed, then checked."""
    context, guard = new_guarded_context(chromium, built_site.root.as_uri() + "/", **options)
    try:
        yield SiteTab(context.new_page(), guard)
    finally:
        context.close()
    guard.assert_clean()
