"""Answer cells that are near-identical across a batch, for the instructor to look at.

Each answer is first normalised against the usual disguises: the AST with docstrings and
comments gone, the names the cell binds renamed in order of appearance (``v0, v1, ...``) and
string literals blanked. Engine "ast" then takes the set of its 5-token windows, less the
windows of the stub everyone was handed, and calls two answers near-identical when those sets
overlap by at least ``threshold`` (Jaccard). Engine "copydetect" (the optional copydetect
package, MOSS-style k-gram fingerprints) asks instead that each answer's fingerprints cover at
least ``threshold`` of the other's. Answers shorter than ``min_tokens`` tokens are left out:
short correct answers look alike by nature. Nothing here changes a score.
"""

from __future__ import annotations

import ast
import builtins
import io
import keyword
import tokenize
from dataclasses import dataclass, field
from itertools import combinations

from ...course.format import regions

WINDOW = 5  # tokens per window of the ast engine
COPYDETECT_K = 15  # characters of copydetect's filtered code per window (its noise threshold)
ENGINES = ("auto", "ast", "copydetect")
_BUILTINS = set(dir(builtins))


@dataclass
class SimilarGroup:
    """Students whose answer to one cell is near-identical (linked pairs at ``similarity`` or more)."""

    answer: str
    students: list[str]
    similarity: float  # the lowest similarity among the pairs that link the group
    tokens: int  # the shortest answer's length, in normalised tokens
    same_as_solution: bool  # the answers are near-identical to the instructor's solution too
    source: str  # one member's answer, as written
    pairs: list[tuple[str, str, float]] = field(default_factory=list)


class _Renamer(ast.NodeTransformer):
    """Names the cell binds become v0, v1, ... in order of appearance; others stay (torch, len)."""

    def __init__(self, bound: set[str]):
        self.bound, self.names = bound, {}

    def _rename(self, name: str) -> str:
        if name not in self.bound:
            return name
        return self.names.setdefault(name, f"v{len(self.names)}")

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = self._rename(node.id)
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.arg = self._rename(node.arg)
        node.annotation = None
        return node

    def _function(self, node):
        node.name = self._rename(node.name)
        node.returns = None
        _drop_docstring(node)
        self.generic_visit(node)
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        node.name = self._rename(node.name)
        _drop_docstring(node)
        self.generic_visit(node)
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if isinstance(node.value, str):
            node.value = "S"
        return node


def _drop_docstring(node) -> None:
    body = node.body
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(getattr(body[0], "value", None), ast.Constant)
    ):
        if isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]


def _bound_names(tree: ast.AST) -> set[str]:
    bound = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
    return bound - _BUILTINS


def normalized_source(source: str) -> tuple[str, bool]:
    """The answer without docstrings or comments, its own names renamed, strings blanked.

    The second value is False when the cell does not parse (then it comes back as written).
    """
    try:
        code = regions.python_source(regions.strip_solution_markers(source))
        tree = ast.parse(code)
        _drop_docstring(tree)
        return ast.unparse(_Renamer(_bound_names(tree)).visit(tree)), True
    except (SyntaxError, ValueError, RecursionError):
        return source, False


def normalized_tokens(source: str) -> list[str]:
    """The normalised answer as tokens (every identifier becomes V where it does not parse)."""
    code, parsed = normalized_source(source)
    tokens = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type in (tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER):
                continue
            if token.type == tokenize.INDENT:
                tokens.append("<indent>")
            elif token.type == tokenize.DEDENT:
                tokens.append("<dedent>")
            elif token.type == tokenize.NEWLINE:
                tokens.append("<newline>")
            elif not parsed and token.type == tokenize.NAME and not keyword.iskeyword(token.string):
                tokens.append("V")
            elif not parsed and token.type == tokenize.STRING:
                tokens.append("S")
            else:
                tokens.append(token.string)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        tokens = code.split()
    return tokens


def fingerprint(tokens: list[str], boilerplate: frozenset = frozenset()) -> frozenset:
    """The set of the answer's token windows, less the stub's."""
    windows = {tuple(tokens[i : i + WINDOW]) for i in range(max(len(tokens) - WINDOW + 1, 1))}
    return frozenset(windows - boilerplate)


def jaccard(a: frozenset, b: frozenset) -> float:
    """|a & b| / |a | b| (0 for two empty sets)."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def copydetect_available() -> bool:
    """True when the optional copydetect package can be imported."""
    try:
        import copydetect  # noqa: F401
    except ImportError:
        return False
    return True


def _copydetect_similarity():
    """A (stub) -> (fingerprint_of, compare) factory on copydetect's k-gram fingerprints.

    copydetect reads the normalised source: its own filter maps names to V but keeps
    docstrings and comments' neighbours, which short answers cannot afford.
    """
    from copydetect import CodeFingerprint, compare_files

    def prepare(stub: str):
        base = CodeFingerprint(
            "stub.py", COPYDETECT_K, 1, fp=io.StringIO(normalized_source(stub)[0] or "\n")
        )
        boilerplate = sorted(base.hashes)

        def fingerprint_of(source: str):
            code = normalized_source(source)[0]
            return CodeFingerprint(
                "answer.py", COPYDETECT_K, 1, boilerplate=boilerplate, fp=io.StringIO(code)
            )

        def compare(a, b) -> float:
            _, (first, second), _ = compare_files(a, b)
            return float(min(first, second))

        return fingerprint_of, compare

    return prepare


def near_identical(
    answers: dict[str, dict[str, str]],
    stubs: dict[str, str],
    solutions: dict[str, str] | None = None,
    *,
    engine: str = "auto",
    threshold: float = 0.9,
    min_tokens: int = 30,
) -> tuple[list[SimilarGroup], str]:
    """Groups of near-identical answers per answer cell, and the engine that compared them.

    ``answers``: student -> grade_id -> source. ``stubs``: grade_id -> what was handed out.
    """
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    if engine == "auto":
        engine = "copydetect" if copydetect_available() else "ast"
    solutions = solutions or {}
    prepare = _copydetect_similarity() if engine == "copydetect" else None
    groups = []
    for gid in sorted({gid for per_student in answers.values() for gid in per_student}):
        stub_tokens = normalized_tokens(stubs.get(gid, ""))
        stub_windows = fingerprint(stub_tokens)
        stub_text = " ".join(stub_tokens)
        entries = []
        for student in sorted(answers):
            source = answers[student].get(gid)
            if source is None:
                continue
            tokens = normalized_tokens(source)
            if len(tokens) < min_tokens or " ".join(tokens) == stub_text:
                continue
            entries.append((student, source, tokens))
        if len(entries) < 2:
            continue
        if prepare is not None:
            fingerprint_of, compare = prepare(stubs.get(gid, ""))
            prints = {student: fingerprint_of(source) for student, source, _ in entries}
        else:
            prints = {student: fingerprint(tokens, stub_windows) for student, _, tokens in entries}
            compare = jaccard
        pairs = []
        for (a, _, _), (b, _, _) in combinations(entries, 2):
            score = compare(prints[a], prints[b])
            if score >= threshold:
                pairs.append((a, b, score))
        solution = solutions.get(gid)
        solution_print = None
        if solution is not None:
            solution_print = (
                fingerprint_of(solution)
                if prepare is not None
                else fingerprint(normalized_tokens(solution), stub_windows)
            )
        for members in _components(pairs):
            linked = [p for p in pairs if p[0] in members]
            first = next(e for e in entries if e[0] == members[0])
            groups.append(
                SimilarGroup(
                    answer=gid,
                    students=members,
                    similarity=min(score for _, _, score in linked),
                    tokens=min(len(e[2]) for e in entries if e[0] in members),
                    same_as_solution=solution_print is not None
                    and all(compare(prints[m], solution_print) >= threshold for m in members),
                    source=first[1],
                    pairs=linked,
                )
            )
    # Groups that share an answer of their own come first: sharing the solution's is expected.
    groups.sort(
        key=lambda g: (g.same_as_solution, -len(g.students), -g.similarity, g.answer, g.students)
    )
    return groups, engine


def _components(pairs: list[tuple[str, str, float]]) -> list[list[str]]:
    """Connected groups of students linked by pairs, each sorted."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b, _ in pairs:
        parent[find(a)] = find(b)
    groups: dict[str, list[str]] = {}
    for member in parent:
        groups.setdefault(find(member), []).append(member)
    return sorted(sorted(g) for g in groups.values())
