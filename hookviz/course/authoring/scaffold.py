"""`hookviz new NN-name`: a new assignment in solutions/, ready to build and grade.

The notebook follows docs/CONVENTIONS.md: a locked setup cell that names the assignment (whose
hints are the course's ``hints/NN-name.toml``, written beside it with the example's hint), one
answer cell with its solution region inside a function, and one check cell that puts its checks
in ``verify``, calls it on two models students see, re-runs it on a hidden one, and ends with
its sentinel. Its outputs are stored by running it (as `hookviz run` does), so `hookviz build`
and `hookviz grade` accept it at once; replace the example with your exercise, then run it again.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..format.notebooks import NotebookError, nbformat_module, notebook_text
from .build import SOLUTIONS
from .stamp import load_course_config, stamp_notebook

NAME = re.compile(r"^(?P<number>\d{2})-(?P<slug>[a-z0-9]+(?:-[a-z0-9]+)*)$")

INTRO = """\
# Assignment {number}: {title}

Write each answer where a cell says `# YOUR CODE HERE`, inside the function body, and delete the
`raise NotImplementedError()` line. Then run the check cell below it: it prints `✓` for each thing
your answer gets right, or `✗` with a hint."""

SETUP = """\
import torch
from torch import nn

import hookviz as hv
from hookviz.course import checks

checks.assignment("{name}")  # its hints: the course's hints/{name}.toml"""

PART = """\
## Part 1: `count_parameters`

Write `count_parameters(model)`: how many numbers the model's parameters hold, each parameter
counted once. (An example to replace with your own exercise.)"""

ANSWER = '''\
def count_parameters(model):
    """How many numbers model's parameters hold."""
    ### BEGIN SOLUTION
    return sum(param.numel() for param in model.parameters())
    ### END SOLUTION'''

CHECK = """\
# Check your answer: run this cell. It calls count_parameters on two models.
check = checks.Check("count_parameters")


def verify(model, name):
    count = check.run(count_parameters, model)
    # hint="numel": the [count_parameters.numel] table of the assignment's hints file
    check.is_type(count, int, f"count_parameters returns an int ({name})", hint="numel")
    expected = sum(param.numel() for param in model.parameters())
    check.equal(count, expected, f"it counts every number in the parameters of {name}", hint="numel")


verify(nn.Linear(3, 2), "a Linear(3, 2)")
verify(hv.examples.model(), "the blog's Model")
### BEGIN HIDDEN TESTS
check.hidden(verify, nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 1)), "an MLP")
### END HIDDEN TESTS
checks.sentinel("check_count_parameters")"""

HINTS = """\
# The hints of assignment {name}, in levels: one table per answer and key (hint="key" in a check).
# nudge: what is wrong and where to read, never code; more: a sharper nudge; code: the fix.
# The first failed run shows the nudge, the second adds more, code comes from the third.

[count_parameters.numel]
nudge = \"\"\"
Count numbers, not tensors: a parameter's numel() says how many numbers it holds. Read about
nn.Module.parameters() in the torch docs.
\"\"\"
more = "Add up param.numel() over model.parameters(), which yields each parameter once."
code = "return sum(param.numel() for param in model.parameters())"
"""

END = """\
## What you did

- (Sum up what the exercise showed.)"""


def new_notebook_metadata() -> dict:
    """A new course notebook's metadata: the Python 3 kernel every hookviz course runs on."""
    return {
        "kernelspec": {
            "display_name": "Python 3 (ipykernel)",
            "language": "python",
            "name": "python3",
        },
        "language_info": {"name": "python"},
    }


def _nbgrader(**meta) -> dict:
    return {"nbgrader": {"schema_version": 3, **meta}}


def scaffold(name: str, config, relative: str):
    """The new solution notebook (outputs not stored yet)."""
    nbformat = nbformat_module()
    match = NAME.match(name)
    v4 = nbformat.v4
    notebook = v4.new_notebook()
    notebook.metadata = new_notebook_metadata()
    title = match["slug"].replace("-", " ").capitalize()
    notebook.cells = [
        v4.new_markdown_cell(INTRO.format(number=match["number"], title=title)),
        v4.new_code_cell(
            SETUP.format(name=name),
            metadata=_nbgrader(grade=False, solution=False, locked=True, grade_id="setup"),
        ),
        v4.new_markdown_cell(PART),
        v4.new_code_cell(
            ANSWER,
            metadata=_nbgrader(
                grade=False, solution=True, locked=False, grade_id="count_parameters"
            ),
        ),
        v4.new_code_cell(
            CHECK,
            metadata=_nbgrader(
                grade=True, solution=False, locked=True, grade_id="check_count_parameters", points=1
            ),
        ),
        v4.new_markdown_cell(END),
    ]
    for index, cell in enumerate(notebook.cells):
        cell.id = f"{name}-{index}"
    stamp_notebook(notebook, config, relative)
    return notebook


def new_assignment(root: Path, name: str, *, run: bool = True) -> Path:
    """Write ``solutions/<name>.ipynb`` under the course ``root`` (and its hints file, unless
    there is one) and store its outputs (``run``)."""
    if not NAME.match(name):
        raise NotebookError(
            f"{name!r} is not an assignment name: use NN-name, two digits, a dash and lower-case "
            "words joined by dashes (05-activation-stats)."
        )
    root = Path(root).resolve()
    config = load_course_config(root)
    path = root / SOLUTIONS / f"{name}.ipynb"
    taken = [p.name for p in (root / SOLUTIONS).glob(f"{name[:2]}-*.ipynb")]
    if path.exists() or taken:
        raise NotebookError(
            f"{SOLUTIONS}/{taken[0] if taken else path.name} already exists; pick another number."
        )
    hints = config.content.hints_file(name) if config.content else root / "hints" / f"{name}.toml"
    written = [path] + ([] if hints.exists() else [hints])
    path.parent.mkdir(parents=True, exist_ok=True)
    hints.parent.mkdir(parents=True, exist_ok=True)
    if not hints.exists():
        hints.write_text(HINTS.format(name=name), encoding="utf-8")
    path.write_text(
        notebook_text(scaffold(name, config, f"{SOLUTIONS}/{name}.ipynb")), encoding="utf-8"
    )
    if not run:
        return path
    from .execute import store_outputs

    try:
        store_outputs(path)
    except Exception:
        for made in written:  # a half-made assignment would fail build; leave nothing behind
            made.unlink()
        raise
    return path
