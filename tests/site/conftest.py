"""The built site, shared: built once into a temporary folder, one Chromium, one local static
server that serves it under a sub-path. Each lives as long as the tests of tests/site (package
scope: built once per run), and everything started here is stopped then, also when a test
failed: the build's processes, the server's thread, the browser, Playwright's driver."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.site.browsing import SiteTab, SubPathServer, new_guarded_context, playwright_driver
from tests.site.building import build_site_command

REPO = Path(__file__).resolve().parents[2]
# Only for working on these tests: the folder of a site already built, used instead of building
# one (CI and `make test` never set it, so there the site is always built from the checkout).
REUSE_SITE = "HOOKVIZ_TEST_SITE"


@dataclass(frozen=True)
class BuiltSite:
    """The site built from this checkout: its folder and its pages (paths inside it)."""

    root: Path
    pages: tuple[str, ...]  # every .html file, e.g. "walkthrough/01-module-tree-and-apply.html"
    log: str | None = None  # what the build printed (None for a site built earlier)

    def walkthrough(self) -> list[str]:
        return [p for p in self.pages if p.startswith("walkthrough/")]

    def html(self, page: str) -> str:
        return (self.root / page).read_text(encoding="utf-8")


@pytest.fixture(scope="package")
def built_site(tmp_path_factory) -> BuiltSite:
    """`hookviz site` on this checkout, once per run (it runs the walkthrough notebooks).

    The command, not build_site(): its worker processes end with it."""
    reuse = os.environ.get(REUSE_SITE)
    log = None
    if reuse:  # working on these tests: a site built earlier by `hookviz site --out DIR`
        out = Path(reuse).resolve()
        assert (out / "index.html").is_file(), f"{REUSE_SITE}={reuse} holds no built site"
    else:
        out = tmp_path_factory.mktemp("built") / "site"
        log = build_site_command(REPO, out)
    pages = tuple(sorted(p.relative_to(out).as_posix() for p in out.rglob("*.html")))
    return BuiltSite(out, pages, log)


@pytest.fixture(scope="package")
def site_server(built_site):
    """The site served from 127.0.0.1 under /hookviz/, as GitHub Pages serves /<repo>/."""
    server = SubPathServer(built_site.root).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="package")
def chromium():
    """Debian's Chromium, headless, launched as tests/browser launches it; closed when the last
    test of tests/site is done, so that a later tests/browser can start its own driver."""
    from tests.browser.jupyter_ui import launch_chromium

    with playwright_driver() as playwright:
        browser = launch_chromium(playwright)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(params=["file", "http"], ids=["file", "served-under-sub-path"])
def site_base(request, built_site) -> str:
    """The site's root URL: its folder on file://, or its sub-path on the local server."""
    if request.param == "file":
        return built_site.root.as_uri() + "/"
    return request.getfixturevalue("site_server").base


@pytest.fixture
def site_tab(chromium, site_base, request):
    """A page in a fresh guarded context (1280 px, light). At the end the context is closed, and
    a request outside the site (the route's count, or the server's log) or a script error fails
    the test, also one that did not look."""
    server = request.getfixturevalue("site_server") if site_base.startswith("http:") else None
    if server:
        server.take_outside()  # from here on, this test's requests
    context, guard = new_guarded_context(chromium, site_base)
    try:
        yield SiteTab(context.new_page(), guard)
    finally:
        context.close()
    if server:
        outside = server.take_outside()
        assert not outside, f"the server was asked for paths outside {server.base}: {outside}"
    guard.assert_clean()
