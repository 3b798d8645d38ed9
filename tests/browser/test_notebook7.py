"""A smoke test in Notebook 7: the widgets render from the kernel, play, and sync back."""

from __future__ import annotations

import time

import pytest
from conftest import open_notebook
from jupyter_ui import JupyterServer

BLOG_POSTORDER = ["ab.a", "ab.b", "ab", "cd.c", "cd.d", "cd", "Model"]


@pytest.fixture(scope="module")
def notebook_server(tmp_path_factory):
    """``jupyter notebook`` itself, as students start it."""
    server = JupyterServer(tmp_path_factory.mktemp("notebook-home"), app="notebook").start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def notebook7(chromium, notebook_server):
    """Run All in Notebook 7, noting the monitor's step count each time it changes during its cell."""
    session = open_notebook(chromium, notebook_server, "widgets_notebook7.ipynb", ui="notebook")
    page = session.page
    session.notebook.run_all(wait=False)
    loop_cell = page.locator(".jp-CodeCell").nth(2)
    session.monitor_steps_while_running = seen = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        busy = "[*]" in (loop_cell.locator(".jp-InputPrompt").text_content() or "")
        monitor = page.locator(".hv-monitor")
        if busy and monitor.count():
            steps = int(monitor.evaluate("(el) => el.dataset.steps"))
            if not seen or steps != seen[-1]:
                seen.append(steps)
        if not busy and seen:
            break
        time.sleep(0.05)
    session.notebook.wait_cells_done()
    yield session
    page.context.close()


def test_a_monitor_shows_itself_and_updates_while_its_cell_runs(notebook7):
    seen = notebook7.monitor_steps_while_running
    live = [s for s in seen if 0 < s < 30]
    assert len(live) >= 2 and live == sorted(live), seen
    monitor = notebook7.page.locator(".hv-monitor")
    assert monitor.count() == 1  # shown once, by the with block
    assert monitor.evaluate("(el) => el.dataset.steps") == "30"


def test_widgets_render_play_and_sync_in_notebook_7(notebook7):
    page = notebook7.page
    assert page.url.split("?")[0].endswith("/notebooks/widgets_notebook7.ipynb")
    assert page.locator("#main-panel .jp-NotebookPanel").count() == 1  # Notebook 7's shell, not Lab's
    traversal = page.locator(".hv-apply")
    traversal.scroll_into_view_if_needed()
    traversal.click(position={"x": 4, "y": 4})
    traversal.evaluate(
        """(el) => { window.__hvSeen = [el.dataset.current];
            new MutationObserver(() => { const c = el.dataset.current;
              if (window.__hvSeen[window.__hvSeen.length - 1] !== c) window.__hvSeen.push(c); })
            .observe(el, { attributes: true, attributeFilter: ['data-current'] }); }"""
    )
    page.keyboard.press("Space")
    page.wait_for_function("() => document.querySelector('.hv-apply').dataset.step === '7'", timeout=10_000)
    assert page.evaluate("window.__hvSeen") == ["", *BLOG_POSTORDER]
    page.wait_for_timeout(300)
    assert notebook7.notebook.execute("print(traversal.step, monitor.steps)") == "7 30\n"
    notebook7.notebook.screenshot(traversal, "notebook7-apply-traversal")
    # Notebook 7.6.5 itself logs "Cannot read properties of undefined (reading 'schema')" on every
    # page, with or without hookviz; only errors from widget code count here.
    assert notebook7.widget_errors() == []
