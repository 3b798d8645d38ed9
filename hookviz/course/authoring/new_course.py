"""`hookviz init [FOLDER]`: a new course anywhere, ready to build, grade and publish.

It writes ``course.toml`` (every key explained, only what is needed set), one assignment in
``solutions/`` from the template with its hints in ``hints/``, one walkthrough page in
``notebooks/`` with a prediction from ``predictions/``, a ``.gitignore`` and a README for the
course's students; then stores the notebooks' outputs and builds ``exercises/``. It never
writes over a course. ``--from-nbgrader`` writes down, as ``course.toml``, the defaults an
nbgrader course without one is graded with.
"""

from __future__ import annotations

from pathlib import Path

from ..content import COURSE_FILE
from ..format.notebooks import NotebookError, nbformat_module, notebook_text
from .scaffold import new_notebook_metadata
from .stamp import load_course_config, nbgrader_course, stamp_notebook

FIRST_ASSIGNMENT = "01-first-steps"
FIRST_PAGE = "00-start-here"

COURSE_TOML = """\
# This course's settings, read by `hookviz build`, `site` and `grade`. Every key has a default:
# uncomment what you need.

[course]
# The course's repository, on any git host: the site links to its files. Colab badges need it
# on GitHub ("https://github.com/OWNER/NAME").
# repository = "https://github.com/OWNER/NAME"
# branch = "main"
# Where the web edition is published (default: GitHub Pages' address for a GitHub repository).
# site = "https://OWNER.github.io/NAME/"

[colab]
# An Open-in-Colab badge and an install cell on every notebook (needs the repository on GitHub).
enabled = false
# What the install cell gives pip (default: "hookviz").
# install = "hookviz"

[content]
# Where the course keeps each assignment's hints (hints/NN-name.toml) and the walkthrough's
# predictions (any *.toml). `hookviz build` packs what a notebook uses into the notebook itself,
# so that it works opened alone (Colab) and in grading.
hints = "hints"
predictions = "predictions"
"""

NBGRADER_TOML = """\
# This nbgrader course's settings for hookviz: the defaults it was graded with until now.
# Every key has a default: uncomment what you need (see `hookviz init --help`).

[course]
# repository = "https://github.com/OWNER/NAME"   # any git host; Colab badges need GitHub
# branch = "main"

[colab]
enabled = false   # no Open-in-Colab badges or install cells

[content]
hints = "hints"
predictions = "predictions"
"""

GITIGNORE = """\
# Built by hookviz: never committed
site/
gradebook-out/
# Python and Jupyter
__pycache__/
.ipynb_checkpoints/
.venv/
"""

README = """\
# {title}

A course on PyTorch hooks, made with hookviz. Each assignment is a notebook in `exercises/`;
the walkthrough pages are in `notebooks/`.

## Working on an assignment

1. Install what it needs (once): `pip install hookviz jupyterlab`, then `jupyter lab` here.
2. Open `exercises/{assignment}.ipynb` and run its cells from the top (Shift+Enter).
3. Write each answer where a cell says `# YOUR CODE HERE`, inside the function, and delete the
   `raise NotImplementedError()` line.
4. Run the check cell below the answer. It prints `✓` for each thing your answer gets right and
   `✗` with a hint for what it gets wrong; run it again after each change. A second failed run
   gives a sharper hint, and `checks.hint("name")` shows every hint at once.

Hand in the notebook as it is, outputs and all: the grader runs it again in a clean kernel.
"""

PAGE_INTRO = """\
# 00: Start here

A walkthrough page: read it, run each cell, and before a cell that may surprise you, say what
you expect. The question is asked by a small widget that shows the answer only after you pick
one."""

PAGE_SETUP = """\
from torch import nn

import hookviz as hv
from hookviz.course.predictions import predict"""

PAGE_ASK = """\
`model.apply(fn)` calls `fn` on every module of a model. Before you run the cell after next:
which module does it call `fn` on first?"""

PAGE_PREDICT = 'predict("start-apply-first")'

PAGE_RUN = """\
model = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
visited = []
model.apply(lambda module: visited.append(type(module).__name__))
print(visited)"""

PREDICTIONS = """\
# The walkthrough's predictions, one table per key: predict("key") in a notebook shows it.
# question, why and choices may hold `code spans`; answer is the right choice's index (from 0),
# or a list of accepted short answers when there are no choices.

[start-apply-first]
question = "`nn.Sequential(nn.Linear(2, 2), nn.ReLU()).apply(fn)`: which module does `fn` see first?"
choices = ["the `Sequential`", "the `Linear`", "the `ReLU`"]
answer = 1
why = \"\"\"
`apply` is post-order: each module's `apply` calls its children's first, in order, and only then
`fn(self)`. So the first child, the `Linear`, comes first and the `Sequential` last.
\"\"\"
"""


def init_course(folder: Path, *, run: bool = True) -> list[Path]:
    """Write a new course into ``folder`` (made if missing); returns the files written.

    Refuses, writing nothing, when ``folder`` already holds a course.toml or any file it would
    write. ``run``: store the notebooks' outputs and build exercises/ (a kernel each)."""
    folder = Path(folder).resolve()
    files = {
        folder / COURSE_FILE: COURSE_TOML,
        folder / ".gitignore": GITIGNORE,
        folder / "README.md": README.format(
            title=folder.name.replace("-", " ").replace("_", " ").capitalize() or "A course",
            assignment=FIRST_ASSIGNMENT,
        ),
        folder / "predictions" / f"{FIRST_PAGE}.toml": PREDICTIONS,
    }
    notebooks = [
        folder / "solutions" / f"{FIRST_ASSIGNMENT}.ipynb",
        folder / "notebooks" / f"{FIRST_PAGE}.ipynb",
        folder / "hints" / f"{FIRST_ASSIGNMENT}.toml",
    ]
    taken = [p for p in (*files, *notebooks) if p.exists()]
    if taken:
        raise NotebookError(
            f"{folder} already holds {', '.join(str(p.relative_to(folder)) for p in taken)}: "
            "`hookviz init` starts a course in an empty folder (or one without these files), "
            "and never writes over one."
        )
    if nbgrader_course(folder):
        raise NotebookError(
            f"{folder} is an nbgrader course: `hookviz init --from-nbgrader` writes down its "
            "settings; `hookviz import-nbgrader source/NAME` brings in an assignment."
        )
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (folder / "hints").mkdir(exist_ok=True)
    page = notebooks[1]
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(notebook_text(_first_page(folder)), encoding="utf-8")
    from .scaffold import new_assignment

    written = [*files, page]
    written.append(new_assignment(folder, FIRST_ASSIGNMENT, run=run))
    written.append(notebooks[2])
    if run:
        from .build import build_course
        from .execute import store_outputs

        store_outputs(page)
        build_course(folder)
        written += sorted((folder / "exercises").rglob("*.ipynb"))
    return written


def init_from_nbgrader(folder: Path) -> Path:
    """Write ``folder/course.toml`` with the defaults an nbgrader course is graded with."""
    folder = Path(folder).resolve()
    path = folder / COURSE_FILE
    if path.exists():
        raise NotebookError(f"{path} already exists: `hookviz init` never writes over a course.")
    if not nbgrader_course(folder):
        raise NotebookError(
            f"{folder} is not an nbgrader course (no nbgrader_config.py, no source/ folder of "
            "notebooks): run `hookviz init --from-nbgrader` in the nbgrader course's folder."
        )
    path.write_text(NBGRADER_TOML, encoding="utf-8")
    return path


def _first_page(folder: Path):
    """The walkthrough's first page: a prediction, then the cell that shows the answer."""
    v4 = nbformat_module().v4
    notebook = v4.new_notebook()
    notebook.metadata = new_notebook_metadata()
    notebook.cells = [
        v4.new_markdown_cell(PAGE_INTRO),
        v4.new_code_cell(PAGE_SETUP),
        v4.new_markdown_cell(PAGE_ASK),
        v4.new_code_cell(PAGE_PREDICT),
        v4.new_code_cell(PAGE_RUN),
    ]
    for index, cell in enumerate(notebook.cells):
        cell.id = f"{FIRST_PAGE}-{index}"
    stamp_notebook(notebook, load_course_config(folder), f"notebooks/{FIRST_PAGE}.ipynb")
    return notebook
