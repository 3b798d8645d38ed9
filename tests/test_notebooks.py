"""The walkthrough (notebooks/) and the assignments (solutions/) pass ``pytest --nbval`` strictly,
in English and in Korean (ko/).

The notebooks run in one pytest subprocess, each in its own kernel on the machine's default
number of threads, and a cell whose output changed fails its notebook's test with nbval's report.
``make test-colab`` runs this file again in the Colab-pinned environment (ipywidgets 7.7.1,
anywidget 0.9): the same stored outputs must match under both stacks.
tests/test_notebooks_one_thread.py runs the walkthrough again on one thread.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import nbformat
import pytest

from tests.helpers import notebook_runner

REPO = Path(__file__).resolve().parent.parent
WALKTHROUGH = sorted((REPO / "notebooks").glob("*.ipynb"))
SOLUTIONS = sorted((REPO / "solutions").glob("*.ipynb"))
KOREAN = sorted((REPO / "ko" / "notebooks").glob("*.ipynb")) + sorted(
    (REPO / "ko" / "solutions").glob("*.ipynb")
)
CHECKED = WALKTHROUGH + SOLUTIONS + KOREAN

pytestmark = pytest.mark.notebook


@pytest.fixture(scope="module")
def kernel_env(tmp_path_factory) -> dict[str, str]:
    """Jupyter, IPython and matplotlib settings in one temporary folder, shared by every kernel here."""
    return notebook_runner().isolated_env(tmp_path_factory.mktemp("notebook-settings"))


def relative(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def test_the_course_has_its_notebooks():
    """00 to 09 in notebooks/, and the assignments in solutions/."""
    assert [p.name[:2] for p in WALKTHROUGH] == [f"{n:02}" for n in range(10)]
    assert WALKTHROUGH[0].name == "00-start-here.ipynb"
    assert len(SOLUTIONS) >= 4
    english = [p.relative_to(REPO).as_posix() for p in WALKTHROUGH + SOLUTIONS]
    assert [p.relative_to(REPO / "ko").as_posix() for p in KOREAN] == english  # and in Korean


def nbval_results(paths: list[Path], env: dict[str, str], report_dir: Path) -> dict:
    """One ``pytest --nbval`` subprocess over ``paths`` in ``env``; its cell results by notebook."""
    report_file = report_dir / "report.xml"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--nbval",
            "--nbval-current-env",
            "-p",
            "no:cacheprovider",
            "-q",
            f"--junitxml={report_file}",
            *map(relative, paths),
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    cells: dict[str, list[tuple[str, str, str]]] = {}
    if report_file.exists():
        for case in ElementTree.parse(report_file).iter("testcase"):
            problem = next(iter(case), None)  # <failure>, <error> or <skipped>, if any
            outcome = "passed" if problem is None else problem.tag
            message = (
                "" if problem is None else f"{problem.get('message', '')}\n{problem.text or ''}"
            )
            cells.setdefault(case.get("classname", ""), []).append(
                (case.get("name", ""), outcome, message)
            )
    return {
        "returncode": result.returncode,
        "cells": cells,
        "output": f"{result.stdout[-6000:]}\n{result.stderr[-2000:]}",
    }


@pytest.fixture(scope="module")
def nbval_run(kernel_env: dict[str, str], tmp_path_factory) -> dict:
    """Every checked notebook in one nbval run, on the machine's default number of threads."""
    return nbval_results(CHECKED, kernel_env, tmp_path_factory.mktemp("nbval"))


def _cells_of(nbval_run: dict, path: Path) -> list[tuple[str, str, str]]:
    """The cells of ``path`` (junit names a notebook "notebooks.00-start-here.ipynb")."""
    return nbval_run["cells"].get(relative(path).replace("/", "."), [])


def assert_matches_stored_outputs(path: Path, run: dict) -> None:
    """Every code cell of ``path`` ran in ``run`` (an ``nbval_results`` result) and passed."""
    code_cells = sum(
        1 for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code"
    )
    cells = _cells_of(run, path)
    assert cells, f"nbval reported nothing for {relative(path)}:\n{run['output']}"
    problems = [
        f"{name}: {outcome}\n{message[-3000:]}"
        for name, outcome, message in cells
        if outcome != "passed"
    ]
    assert not problems, "\n\n".join(problems)
    assert len(cells) == code_cells, (
        f"nbval ran {len(cells)} of {code_cells} code cells:\n{run['output']}"
    )


@pytest.mark.parametrize("path", CHECKED, ids=relative)
def test_notebook_matches_its_stored_outputs(path: Path, nbval_run: dict):
    """A fresh kernel reproduces every stored output (nbval compares text, HTML, streams, errors)."""
    assert_matches_stored_outputs(path, nbval_run)


def test_nbval_run_passed(nbval_run: dict):
    """The nbval subprocess as a whole exits cleanly (nothing failed outside a cell)."""
    assert nbval_run["returncode"] == 0, nbval_run["output"]


# Text that changes between runs or machines, and so must never be stored as output.
UNSTABLE = {
    "a memory address": re.compile(r"0x[0-9a-fA-F]{6,}"),
    "a kernel's temporary file": re.compile(r"ipykernel_\d+|/tmp/"),
    "an absolute path": re.compile(r"/(work|home|root|Users)/"),
    "a timing": re.compile(r"\b\d+(\.\d+)?\s?(ms|µs|us)\b|\d+\.\d+ ?s\b"),
}


def _stored_text(path: Path) -> list[tuple[int, str]]:
    texts = []
    for index, cell in enumerate(nbformat.read(path, as_version=4).cells):
        for output in cell.get("outputs", []):
            if output.output_type == "stream":
                texts.append((index, output.text))
            elif output.output_type == "error":
                texts.append((index, f"{output.ename}: {output.evalue}"))
            else:
                data = output.get("data", {})
                texts.extend(
                    (index, data[kind]) for kind in ("text/plain", "text/html") if kind in data
                )
    return texts


@pytest.mark.parametrize("path", CHECKED, ids=relative)
def test_stored_outputs_are_deterministic(path: Path):
    """Outputs come from one top-to-bottom run, show no addresses, paths or timings, and skip nothing."""
    nb = nbformat.read(path, as_version=4)
    counts = [cell.execution_count for cell in nb.cells if cell.cell_type == "code"]
    assert counts == list(range(1, len(counts) + 1)), (
        f"{relative(path)}: re-run it with `hookviz run`"
    )
    for index, text in _stored_text(path):
        for what, pattern in UNSTABLE.items():
            found = pattern.search(text)
            assert not found, f"{relative(path)} cell {index} stores {what}: {found.group(0)!r}"
    for index, cell in enumerate(nb.cells):
        assert "NBVAL_SKIP" not in cell.source, (
            f"{relative(path)} cell {index}: a skipped cell proves nothing"
        )
        assert not any(
            o.output_type == "stream" and o.name == "stderr" for o in cell.get("outputs", [])
        ), (
            f"{relative(path)} cell {index} writes to stderr (a warning?): catch it and print a stable message"
        )


PREDICT = re.compile(r"""predict\(\s*["']([^"']+)["']""")


KOREAN_WALKTHROUGH = [p for p in KOREAN if p.parent.name == "notebooks"]


@pytest.mark.parametrize("path", WALKTHROUGH + KOREAN_WALKTHROUGH, ids=relative)
def test_walkthrough_asks_a_prediction_whose_saved_output_keeps_the_answer_hidden(
    path: Path, monkeypatch
):
    """Each walkthrough notebook has a predict-then-run cell; its saved output names the question
    only, with the answer and the why inside a collapsed <details> (for pages without a kernel)."""
    from hookviz.course.predictions import entry

    korean = path in KOREAN_WALKTHROUGH
    monkeypatch.setenv(
        "HOOKVIZ_LANG", "ko" if korean else "en"
    )  # the why in the notebook's language
    cells = [cell for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code"]
    asked = [(cell, key) for cell in cells for key in PREDICT.findall(cell.source)]
    assert asked, f"{relative(path)} asks no prediction"
    for cell, key in asked:
        found = entry(key)
        answer = found.choices[found.answer] if found.choices else found.answer[0]
        why = found.why.split()[:8]  # the why's first words, as the HTML may re-wrap it
        data = {k: v for output in cell.outputs for k, v in output.get("data", {}).items()}
        assert data.get("text/plain", "").startswith(f"Prediction('{key}'"), data
        assert " ".join(why) not in data["text/plain"]
        html = data.get("text/html", "")
        closed = html.split("<details")
        assert len(closed) == 2 and "<details open" not in html, f"{key}: one collapsed <details>"
        assert " ".join(why) not in re.sub(r"<[^>]+>|\s+", " ", closed[0]), (
            f"{key}: the why shows before <details>"
        )
        if found.choices and not korean:  # which choice is right is only said inside <details>
            assert "right" not in closed[0].lower() and "correct" not in closed[0].lower(), key
        elif found.choices:
            assert "정답" not in closed[0] and "맞습니다" not in closed[0], key
        else:
            assert answer not in closed[0], f"{key}: the accepted answer shows before <details>"
