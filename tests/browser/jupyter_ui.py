"""Drive a real Jupyter server and Debian's Chromium: start, open a notebook, run, read.

Used by the browser tests (tests/browser) and by bench/bench_widgets.py. Nothing here skips:
a missing Chromium or Jupyter is an error that says what to install.
"""

from __future__ import annotations

import http.client
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from tests.processes import stop_group

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
NOTEBOOKS = Path(__file__).parent / "notebooks"
REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts" / "browser"

# JupyterLab user settings: no news pop-up, no update check, the light theme to start with.
USER_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
    "@jupyterlab/apputils-extension/themes.jupyterlab-settings": {"theme": "JupyterLab Light"},
}


def jupyter_env(home: Path) -> dict[str, str]:
    """An environment whose Jupyter, IPython, matplotlib and browser state live under ``home``."""
    env = dict(os.environ)
    env.update(
        HOME=str(home),
        JUPYTER_CONFIG_DIR=str(home / "jupyter-config"),
        JUPYTER_DATA_DIR=str(home / "jupyter-data"),
        JUPYTER_RUNTIME_DIR=str(home / "jupyter-runtime"),
        IPYTHONDIR=str(home / "ipython"),
        MPLCONFIGDIR=str(home / "matplotlib"),
        PYTHONDONTWRITEBYTECODE="1",
        # The test notebooks run from copies outside the course: its predictions are found here.
        HOOKVIZ_COURSE=str(Path(__file__).resolve().parents[2]),
    )
    env.pop("JUPYTER_PLATFORM_DIRS", None)
    return env


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class JupyterServer:
    """``jupyter lab`` (or ``jupyter notebook``) on 127.0.0.1 with a random token, serving a copy of the test notebooks."""

    home: Path
    app: str = "jupyterlab"  # the module to run: "jupyterlab" or "notebook"
    port: int = field(default_factory=free_port)
    token: str = field(default_factory=lambda: secrets.token_hex(16))
    process: subprocess.Popen | None = None

    @property
    def root(self) -> Path:
        return self.home / "work"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def reset_settings(self) -> None:
        """Write the user settings afresh: a test that switched the theme saved it on the server,
        and the next page opened would start dark. The server reads these files per request."""
        settings = Path(jupyter_env(self.home)["JUPYTER_CONFIG_DIR"]) / "lab" / "user-settings"
        for name, values in USER_SETTINGS.items():
            path = settings / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values))

    def start(self, timeout: float = 60.0) -> JupyterServer:
        """Copy the notebooks, write the settings, start the server and wait for /api/status."""
        script = "jupyter-lab" if self.app == "jupyterlab" else "jupyter-notebook"
        if shutil.which(script, path=str(Path(sys.executable).parent)) is None:
            raise RuntimeError(
                f"{script} is not installed next to {sys.executable}; install the dev extras: "
                "pip install -e '.[dev]'."
            )
        self.root.mkdir(parents=True, exist_ok=True)
        for notebook in NOTEBOOKS.glob("*.ipynb"):
            shutil.copy(notebook, self.root / notebook.name)
        env = jupyter_env(self.home)
        self.reset_settings()
        log = (self.home / "server.log").open("w")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                self.app,
                "--no-browser",
                f"--port={self.port}",
                "--ip=127.0.0.1",
                f"--IdentityProvider.token={self.token}",
                "--allow-root",
                f"--ServerApp.root_dir={self.root}",
                "--LabApp.expose_app_in_browser=True",
                "--JupyterNotebookApp.expose_app_in_browser=True",
                "--ServerApp.open_browser=False",
            ],
            cwd=self.root,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        runtime_file = Path(env["JUPYTER_RUNTIME_DIR"]) / f"jpserver-{self.process.pid}.json"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{script} exited early; its log:\n{self.log()}")
            try:
                # The port it found: ours, or the next one if another socket took ours meanwhile.
                self.port = json.loads(runtime_file.read_text())["port"]
                self.api("GET", "/api/status")
                return self
            except (OSError, ValueError, KeyError, http.client.HTTPException):
                time.sleep(0.2)  # no file yet, half written, or not answering yet
        raise RuntimeError(
            f"{script} did not answer /api/status within {timeout:.0f} s; log:\n{self.log()}"
        )

    def stop(self) -> None:
        """Shut the server and its kernels down: its whole process group, and its port closed."""
        if self.process is None:
            return
        stop_group(self.process.pid, port=self.port)
        self.process.wait(5)

    def log(self) -> str:
        path = self.home / "server.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def api(self, method: str, path: str, body: dict | None = None):
        """Call the server's REST API with the token; returns the decoded JSON (or None)."""
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            f"{self.url}{path}",
            data=data,
            method=method,
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            text = response.read()
        return json.loads(text) if text else None

    def delete_sessions(self) -> None:
        """End every session, so that opening a notebook starts a fresh kernel."""
        for session in self.api("GET", "/api/sessions"):
            self.api("DELETE", f"/api/sessions/{session['id']}")

    def fresh_copy(self, name: str) -> str:
        """Copy a test notebook again (autosave may have rewritten it); returns its name."""
        if (
            NOTEBOOKS / name
        ).exists():  # other notebooks (the bench's) were written into root directly
            shutil.copy(NOTEBOOKS / name, self.root / name)
        return name


def launch_chromium(playwright):
    """Debian's Chromium, headless; fails loudly when it is missing."""
    if not CHROMIUM.exists():
        raise RuntimeError(
            f"{CHROMIUM} not found. The browser tests need Debian's Chromium: apt-get install -y chromium."
        )
    return playwright.chromium.launch(
        executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
    )


class NotebookPage:
    """One notebook open in JupyterLab (ui='lab') or Notebook 7 (ui='notebook')."""

    def __init__(self, page, server: JupyterServer, name: str, ui: str = "lab"):
        self.page, self.server, self.name, self.ui = page, server, name, ui

    def open(self, timeout: float = 60_000) -> NotebookPage:
        """Open the notebook on a fresh kernel and wait until the kernel is idle."""
        self.server.delete_sessions()
        self.server.fresh_copy(self.name)
        if self.ui == "lab":
            self.page.goto(
                f"{self.server.url}/lab/tree/{self.name}?reset&token={self.server.token}"
            )
        else:
            self.page.goto(f"{self.server.url}/notebooks/{self.name}?token={self.server.token}")
        self.page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=timeout)
        self.page.wait_for_function("() => window.jupyterapp !== undefined", timeout=timeout)
        self.wait_kernel_idle(timeout)
        return self

    def wait_kernel_idle(self, timeout: float = 60_000) -> None:
        """Wait until the notebook's kernel exists and is idle."""
        self.page.wait_for_function(
            """() => {
                const panel = window.jupyterapp.shell.currentWidget;
                const kernel = panel && panel.sessionContext && panel.sessionContext.session
                  && panel.sessionContext.session.kernel;
                return Boolean(kernel) && kernel.status === 'idle';
            }""",
            timeout=timeout,
        )

    def run_all(self, timeout: float = 120_000, wait: bool = True) -> None:
        """Run every cell from the menu (JupyterLab and Notebook 7 share it); wait until all have run."""
        self.page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
        self.page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
        if wait:
            self.wait_cells_done(timeout)

    def wait_cells_done(self, timeout: float = 120_000) -> None:
        """Wait until no cell is queued or running and every code cell has an execution count.

        Read from the cells' models: a cell whose input is collapsed (the content cell `hookviz
        build` stamps) shows no prompt text."""
        self.page.wait_for_function(
            """() => {
                const panel = window.jupyterapp.shell.currentWidget;
                const cells = panel && panel.content && panel.content.widgets
                  ? panel.content.widgets.filter(cell => cell.model.type === 'code') : [];
                return cells.length > 0 && cells.every(cell => cell.model.executionCount !== null);
            }""",
            timeout=timeout,
        )
        self.wait_kernel_idle(timeout)

    def execute(self, code: str, timeout: float = 30_000) -> str:
        """Run ``code`` on the notebook's own kernel (not in a cell) and return what it printed."""
        return self.page.evaluate(
            """async ([code, timeout]) => {
                const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
                let out = '';
                const future = kernel.requestExecute({ code, store_history: false });
                future.onIOPub = (msg) => {
                    if (msg.header.msg_type === 'stream') out += msg.content.text;
                    if (msg.header.msg_type === 'error') out += 'ERROR ' + msg.content.ename + ': ' + msg.content.evalue;
                };
                const timer = new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), timeout));
                await Promise.race([future.done, timer]);
                return out;
            }""",
            [code, timeout],
        )

    def screenshot(self, locator, name: str) -> Path:
        """Save a screenshot of ``locator`` under test-artifacts/browser/, the whole of it."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        viewport = self.page.viewport_size
        height = locator.bounding_box()["height"]
        if height + 250 > viewport["height"]:  # the notebook scrolls inside the page: make room
            self.page.set_viewport_size({"width": viewport["width"], "height": int(height) + 300})
        try:
            locator.scroll_into_view_if_needed()
            self.page.mouse.move(0, 0)  # no hover highlight in the picture
            locator.screenshot(path=str(path))
        finally:
            self.page.set_viewport_size(viewport)
        return path
