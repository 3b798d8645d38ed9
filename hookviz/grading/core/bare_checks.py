"""nbgrader's test cells (bare asserts, no sentinel) as the grader runs and scores them.

nbgrader scores a test cell by its outputs (``nbgrader.utils.determine_grade``): 0 when it
raised, or wrote to stderr before its result (hookviz: anywhere, as the order is a race); the
number its last expression shows, when it shows one
(``get_partial_grade``: a negative number, or text that is no number, gives full points, and
a number above the cell's points stops nbgrader's autograde of the notebook); otherwise full
points. The grader appends the sentinel line to prove the cell ran to its end, so here the
last expression's value is shown after the sentinel, and scored as nbgrader scores it.
"""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass

from ...course.conventions import ends_with_sentinel, outputs_text, sentinel_line, shorten
from ...course.format import regions
from ...course.format.steps import with_sentinel
from ...course.wording import words


def _quiet(source: str) -> bool:
    """True when IPython shows no result for the cell: its last token is a ``;``."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return False
    skip = (tokenize.ENDMARKER, tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT)
    for token in reversed(tokens):
        if token.type not in skip:
            return token.type == tokenize.OP and token.string == ";"
    return False


def run_to_end_source(source: str, gid: str) -> str:
    """A bare test cell as the grader runs it: the sentinel prints once everything ran, and the
    value of its last expression, if it ends in one, is still the cell's result."""
    python = regions.python_source(source)
    try:
        tree = ast.parse(python)
    except SyntaxError:
        return with_sentinel(source, gid)
    last = tree.body[-1] if tree.body else None
    lines, python_lines = source.rstrip("\n").split("\n"), python.rstrip("\n").split("\n")
    if (
        not isinstance(last, ast.Expr)
        or _quiet(source)
        or len(lines) != len(python_lines)
        or lines[last.lineno - 1 :] != python_lines[last.lineno - 1 :]  # a magic in the tail
    ):
        return with_sentinel(source, gid)
    expression = ast.get_source_segment(python, last.value)
    first = lines[last.lineno - 1].encode()[: last.col_offset].decode()  # `x = 1; x`
    head = "\n".join([*lines[: last.lineno - 1], first])
    return f"{head}({expression}\n, print({sentinel_line(gid)!r}))[0]"


@dataclass(frozen=True)
class CellScore:
    """What a bare test cell that raised nothing earns, and why when it is not full points."""

    points: float
    ran_to_end: bool = True
    stderr: str = ""  # the first line it wrote to stderr (then it earns 0)
    value: str | None = None  # the text of its last expression's result, if it showed one
    above_points: bool = False  # that value is a number above the cell's points

    @property
    def detail(self) -> str:
        """The reason in words ("" for full points)."""
        if not self.ran_to_end:
            return words("detail.did_not_finish", "en")
        if self.stderr:
            return words("detail.stderr", "en", line=self.stderr)
        if self.above_points:
            return words("detail.above_points", "en", value=self.value)
        if self.value is not None:
            return words("detail.partial", "en", value=self.value)
        return ""


def score_test_cell(outputs: list[dict], gid: str, max_points: float) -> CellScore:
    """Score the outputs of a bare test cell that raised nothing, as nbgrader would.

    Only the result shown after the sentinel counts (a result the student's code shows
    earlier, by calling ``sys.displayhook``, is not the cell's last expression).
    """
    # ipykernel may send stderr after stdout, and after the result: a warning's stream is
    # flushed later than the displayhook publishes the result
    stderr = [o for o in outputs if o.get("type") == "stream" and o.get("name") == "stderr"]
    body, value = [o for o in outputs if o not in stderr], None
    if body and body[-1].get("type") == "execute_result":
        body, value = body[:-1], str(body[-1].get("text", ""))
    if not ends_with_sentinel(outputs_text(body), gid):  # the sentinel ends what it printed
        return CellScore(0.0, ran_to_end=False)
    if stderr:
        text = "".join(str(o.get("text", "")) for o in stderr).strip() or "blank lines"
        return CellScore(0.0, stderr=shorten(text.splitlines()[0], 200))
    if value is None:
        return CellScore(max_points)
    points = partial_credit(value, max_points)
    if points is None:
        return CellScore(0.0, value=shorten(value.strip(), 80), above_points=True)
    shown = shorten(value.strip(), 80) if points != max_points else None
    return CellScore(points, value=shown)


def partial_credit(text: str, max_points: float) -> float | None:
    """``nbgrader.utils.get_partial_grade`` on a result's text/plain: the number it shows,
    full points for text that is no number and for a negative one (or nan), None for a number
    above ``max_points`` (nbgrader raises ValueError there)."""
    try:
        grade = float(text)
    except ValueError:
        return max_points
    if grade >= 0.0:
        return None if grade > max_points else grade
    return max_points  # negative, and nan (neither >= 0 nor < 0)
