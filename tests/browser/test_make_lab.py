"""The README's first command: `make lab` lands a new user in JupyterLab on "00 start here"."""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path

from conftest import VIEWPORT
from jupyter_ui import free_port, jupyter_env

from tests.processes import stop_group

ROOT = Path(__file__).resolve().parents[2]


def test_make_lab_opens_00_start_here(tmp_path, chromium):
    # A copy of what `make lab` needs, so that JupyterLab never touches the repository's notebooks.
    course = tmp_path / "course"
    course.mkdir()
    for part in ("Makefile", "pyproject.toml", "README.md"):
        shutil.copy2(ROOT / part, course / part)
    shutil.copytree(ROOT / "constraints", course / "constraints", copy_function=shutil.copy2)
    shutil.copytree(ROOT / "tools", course / "tools", copy_function=shutil.copy2)
    shutil.copytree(ROOT / "notebooks", course / "notebooks", copy_function=shutil.copy2)
    venv = Path(sys.prefix)  # the environment running the tests: the one `make` set up
    port, token = free_port(), secrets.token_hex(8)
    stamp = venv / ".hookviz-installed"
    assert stamp.exists(), f"{stamp} is missing: run `make setup` first"
    os.utime(stamp)  # newer than the copied pyproject: `make lab` installs nothing
    env = jupyter_env(tmp_path / "home")
    command = [
        "make",
        "-s",
        "-C",
        str(course),
        "lab",
        f"VENV={venv}",
        f"LAB_ARGS=--no-browser --ip=127.0.0.1 --port={port} --IdentityProvider.token={token}",
    ]
    log = (tmp_path / "lab.log").open("w+")
    process = subprocess.Popen(
        command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        url = None
        deadline = time.monotonic() + 90
        while url is None and time.monotonic() < deadline:
            assert process.poll() is None, (tmp_path / "lab.log").read_text()
            # Jupyter masks a token it did not make ("token=..."): put ours back. Its port is
            # ours, or the next one if another socket took ours meanwhile.
            found = re.search(
                r"http://127\.0\.0\.1:(\d+)/\S+\?token=", (tmp_path / "lab.log").read_text()
            )
            if found:
                url, port = found.group(0) + token, int(found.group(1))
            time.sleep(0.3)
        assert url is not None, (tmp_path / "lab.log").read_text()
        assert "/lab/tree/notebooks/00-start-here.ipynb" in url
        # The session's browser: a second sync_playwright cannot start while it runs.
        context = chromium.new_context(viewport=VIEWPORT)
        try:
            page = context.new_page()
            page.goto(url)
            tab = page.locator(
                ".lm-TabBar-tab.lm-mod-current .lm-TabBar-tabLabel", has_text="00-start-here.ipynb"
            )
            tab.first.wait_for(timeout=60_000)
            heading = page.locator(".jp-Notebook .jp-RenderedHTMLCommon h1").first
            heading.wait_for(timeout=60_000)
            assert "start here" in heading.inner_text().lower()
            # A student's JupyterLab: nbgrader, installed for the grader's tests, is not shown.
            menus = page.locator(".lm-MenuBar-itemLabel").all_inner_texts()
            assert "Run" in menus and not any("nbgrader" in m.lower() for m in menus), menus
            assert page.locator("text=Create Assignment").count() == 0
            answer = page.request.get(f"http://127.0.0.1:{port}/formgrader?token={token}")
            assert answer.status == 404  # the formgrader's server extension is off too
        finally:
            context.close()
    finally:
        # make dies at once; JupyterLab, its child, may stay up: wait for the group and the port.
        stop_group(process.pid, port=port)
        process.wait(timeout=5)
        log.close()
