"""The site is built, not kept: site/ is ignored by git and holds nothing tracked, and a page
follows its notebook when the site is built again."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from tests.site.building import build_site_command
from tests.site.conftest import REPO
from tests.site.pages import soup

NOTEBOOK = "05-hook-lifecycle.ipynb"  # a quick one: no training loop


def git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, timeout=60)


def test_the_built_site_is_not_committed():
    ignored = git("check-ignore", "--no-index", "-q", "site/index.html")
    assert ignored.returncode == 0, "site/ is not in .gitignore"
    tracked = git("ls-files", "--", "site")
    assert tracked.returncode == 0, tracked.stderr
    assert tracked.stdout == "", f"files under site/ are committed:\n{tracked.stdout}"


def page_text(site, page: str) -> str:
    return " ".join(soup.__wrapped__(site, page).get_text(" ").split())  # not the cache: it changes


@pytest.mark.slow  # two builds of a one-notebook course
def test_a_page_follows_its_notebook_when_the_site_is_built_again(tmp_path):
    course = tmp_path / "course"
    (course / "notebooks").mkdir(parents=True)
    shutil.copy(REPO / "course.toml", course / "course.toml")
    notebook = json.loads((REPO / "notebooks" / NOTEBOOK).read_text(encoding="utf-8"))
    # a section's prose (the first markdown cell is the Colab badge, which the page replaces)
    cell = next(
        c
        for c in notebook["cells"]
        if c["cell_type"] == "markdown" and "".join(c["source"]).startswith("## ")
    )
    original = "".join(cell["source"])
    page = f"walkthrough/{NOTEBOOK.removesuffix('.ipynb')}.html"
    out = tmp_path / "site"

    def build(sentence: str) -> str:
        cell["source"] = original.rstrip("\n") + f"\n\n{sentence}\n"
        (course / "notebooks" / NOTEBOOK).write_text(json.dumps(notebook), encoding="utf-8")
        build_site_command(course, out)
        return page_text(out, page)

    first = build("Zebra sentence from the first build.")
    assert "Zebra sentence from the first build." in first
    second = build("Quokka sentence from the second build.")
    assert "Quokka sentence from the second build." in second
    assert "Zebra" not in second  # the page was rebuilt, not kept
    index = (out / "_static" / "search-index.js").read_text(encoding="utf-8")
    assert "quokka" in index.lower() and "zebra" not in index.lower()  # and the search follows
