"""Browser-test fixtures: one Jupyter server and one headless Chromium for the whole session."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from jupyter_ui import JupyterServer, NotebookPage, launch_chromium

VIEWPORT = {"width": 1280, "height": 1000}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "tests/browser/" in item.path.as_posix():
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def jupyter_server(tmp_path_factory):
    """``jupyter lab`` on 127.0.0.1 with a random token, in a temporary home."""
    server = JupyterServer(tmp_path_factory.mktemp("jupyter-home")).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def chromium():
    """Debian's Chromium, headless."""
    # Imported here: the Colab-pinned run collects this folder too, without Playwright installed.
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        yield browser
        browser.close()


@dataclass
class Session:
    """An open notebook with what the page did: kernel messages it sent and script errors."""

    notebook: NotebookPage
    sent: list[bytes] = field(default_factory=list)  # websocket frames from the page
    errors: list[str] = field(default_factory=list)

    @property
    def page(self):
        return self.notebook.page

    def widget_errors(self) -> list[str]:
        """Script errors raised in widget code: ours (loaded from a blob: URL), anywidget's or ipywidgets'."""
        return [
            e
            for e in self.errors
            if any(where in e for where in ("blob:", "anywidget", "jupyter-widgets"))
        ]

    def comm_messages_sent(self) -> int:
        """Widget messages (comm_msg) the page has sent to the kernel so far."""
        return sum(1 for frame in self.sent if b'"msg_type":"comm_msg"' in frame)


def open_notebook(chromium, server, name: str, ui: str = "lab") -> Session:
    """A new browser context with ``name`` open (fresh kernel) and its traffic watched."""
    server.reset_settings()  # the light theme, whatever the test before switched to
    context = chromium.new_context(viewport=VIEWPORT, device_scale_factor=1)
    page = context.new_page()
    session = Session(NotebookPage(page, server, name, ui))
    page.on("pageerror", lambda error: session.errors.append(f"{error}\n{error.stack}"))
    page.on(
        "websocket",
        lambda ws: ws.on(
            "framesent",
            lambda payload: session.sent.append(
                payload if isinstance(payload, bytes) else payload.encode()
            ),
        ),
    )
    session.notebook.open()
    return session
