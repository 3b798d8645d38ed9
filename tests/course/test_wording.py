"""The course's own messages in each language: one table per language, the same lines and marks."""

from __future__ import annotations

import ast
import re
from pathlib import Path

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

import pytest
from bs4 import BeautifulSoup

from hookviz import language
from hookviz.course import card, checks, diagnose
from hookviz.course.checks import Check, HiddenTestFailed, Hint
from hookviz.course.conventions import CHECK_MARKS
from hookviz.course.wording import PLACEHOLDER, table, words

COURSE = Path(checks.__file__).parent
GLOSSARY = COURSE.parent.parent / "translations/ko/glossary.toml"
# The modules whose text reaches a student's card.
STUDENT_FACING = ["checks", "diagnose", "inspections", "values", "tracebacks", "card", "hint_files"]
KEY = re.compile(
    r"^(label|card|checks|values|inspect|diagnosis|hint|feedback|outcome|merge|spec)\.[\w.-]+$"
)
HANGUL = re.compile(r"[\uac00-\ud7a3]")
LEVELLED = Hint("look at the recurse argument", more="ask each module", code="x = 1", key="k")


@pytest.fixture
def fresh_kernel(monkeypatch):
    """The checks' per-kernel memory, empty, and the language back to English afterwards."""
    monkeypatch.setattr(checks, "_KERNEL", checks._Kernel())
    yield checks._KERNEL
    language.set_language(None)


# -- the tables ------------------------------------------------------------------------------


def test_every_language_has_the_same_keys_and_placeholders() -> None:
    english = table("en")
    for lang in language.LANGUAGES:
        other = table(lang)
        assert sorted(other) == sorted(english), lang
        for key, text in english.items():
            assert sorted(PLACEHOLDER.findall(other[key])) == sorted(PLACEHOLDER.findall(text)), (
                lang,
                key,
            )


def test_every_text_fills_with_its_placeholders_in_every_language() -> None:
    for lang in language.LANGUAGES:
        for key, text in table(lang).items():
            values = {name: f"<{name}>" for name in PLACEHOLDER.findall(text)}
            filled = words(key, lang, **values)  # a placeholder may be called key or lang
            assert all(value in filled for value in values.values()) and "{" not in filled


def test_no_korean_particle_follows_a_placeholder() -> None:
    # A particle whose form depends on the sound before it cannot follow a name we insert.
    chosen_by_sound = re.compile(
        r"\}(?:\([^)]*\))?(을|를|이|가|은|는|와|과|으로|로)(?![\uac00-\ud7a3])"
    )
    wrong = {key: text for key, text in table("ko").items() if chosen_by_sound.search(text)}
    assert not wrong


def test_the_korean_uses_the_glossarys_words() -> None:
    text = " ".join(table("ko").values())
    glossary = tomllib.loads((GLOSSARY).read_text(encoding="utf-8"))
    avoided = [pattern for entry in glossary.values() for pattern in entry.get("avoid", [])]
    assert len(avoided) > 20 and "기울기" in avoided
    assert [p for p in avoided if re.search(p, text)] == []
    assert all(HANGUL.search(t) for k, t in table("ko").items() if k.endswith("nudge"))


def _source_strings(path: Path) -> list[tuple[str, bool]]:
    """Every string constant of a module, and whether it is an f-string's template."""
    found, parts_of = [], set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if id(node) in parts_of:
            continue
        if isinstance(node, ast.JoinedStr):
            parts_of |= {id(v) for v in node.values}
            parts = [v.value if isinstance(v, ast.Constant) else "{}" for v in node.values]
            found.append(("".join(map(str, parts)), True))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.append((node.value, False))
    return found


def test_every_key_the_code_names_is_in_the_tables() -> None:
    keys = set(table("en"))
    grading = COURSE.parent / "grading"
    paths = [
        *COURSE.glob("*.py"),
        COURSE / "format/steps.py",
        grading / "core/feedback.py",
        grading / "core/merge.py",
        grading / "run/scoring.py",
        grading / "platforms/gradescope_autograder.py",
    ]
    named = 0
    for path in paths:
        for text, formatted in _source_strings(path):
            if formatted and KEY.match(text.replace("{}", "x")):
                pattern = re.compile(re.escape(text).replace(r"\{\}", r"\w+") + "$")
                assert any(pattern.match(k) for k in keys), (path.name, text)
                named += 1
            elif KEY.match(text):
                assert text in keys, (path.name, text)
                named += 1
    assert named > 80
    # and every hint in the tables is one that diagnose.py makes (or checks.py: the rerun)
    made = {h.key for h in vars(diagnose).values() if isinstance(h, Hint)} | {"an error"}
    assert set(diagnose._WORDED) == made
    assert set(diagnose._WORDED.values()) == {k.split(".")[1] for k in keys if k[:5] == "hint."}


def test_no_student_facing_english_sentence_is_left_in_the_code() -> None:
    # Words (two or more) outside a docstring, an error raised to an author, a
    # hint's key or code, or a pattern that reads torch's own messages.
    allowed = re.compile(
        r"^(diagnosis: |the check raised |hidden test failed "
        r"|no hints file |must be Tensor, not |as parameter | role=\"group\" aria-label=)"
    )  # keys, the grader's words, an author's error, a pattern of torch's, an HTML attribute
    left = []
    for name in STUDENT_FACING:
        tree = ast.parse((COURSE / f"{name}.py").read_text(encoding="utf-8"))
        skip: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Raise) or (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", getattr(node.func, "id", ""))
                in ("compile", "search", "match", "TypeError", "LookupError", "ValueError")
            ):
                skip |= {id(n) for n in ast.walk(node)}
            if isinstance(node, ast.keyword) and node.arg in ("key", "code"):
                skip |= {id(n) for n in ast.walk(node)}
            if isinstance(node, ast.Compare) or (  # torch's messages, matched; a repr
                isinstance(node, ast.FunctionDef) and node.name == "__repr__"
            ):
                skip |= {id(n) for n in ast.walk(node)}
            if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.Module)) and node.body:
                first = node.body[0]
                if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                    skip.add(id(first.value))
        for node in ast.walk(tree):
            if id(node) in skip or not isinstance(node, ast.Constant):
                continue
            text = node.value
            if isinstance(text, str) and len(re.findall(r"[A-Za-z]{2,}", text)) >= 2:
                if not allowed.match(text) and " " in text.strip() and "<" not in text:
                    left.append((name, text[:60]))
    assert left == [], left


# -- a check, in English and in Korean -------------------------------------------------------


def answer_42():
    """The answer the checks below are about (a Check looks for it among the caller's names)."""
    return 42


def _stub():
    raise NotImplementedError()


def _scenario(capsys) -> list[str]:
    """One kernel's run of each kind of line: passed, failed three times, not done, not defined."""
    outputs = []
    for _ in range(3):
        check = Check("answer_42")
        check.equal(42, 42, "the answer is 42", hint=LEVELLED)
        check.equal(41, 42, "the answer is 42", hint=diagnose.RECURSIVE_PARAMETERS)
        check.equal(40, 42, "the answer is 42 again", hint=diagnose.RECURSIVE_PARAMETERS)
        outputs.append(capsys.readouterr().out)
    Check("answer_42").run(_stub)
    names = {"Check": Check}
    exec("Check('not_written_yet')", names)  # noqa: S102 - a notebook without that answer
    outputs.append(capsys.readouterr().out)
    return outputs


def _marks(text: str) -> list[str]:
    return [line[0] for line in text.splitlines() if line[:1] in CHECK_MARKS]


def test_a_check_says_the_same_lines_with_the_same_marks_in_korean(fresh_kernel, capsys) -> None:
    english = _scenario(capsys)
    checks._KERNEL = checks._Kernel()
    language.set_language("ko")
    korean = _scenario(capsys)
    language.set_language(None)
    assert len(korean) == len(english) == 4
    for en, ko in zip(english, korean, strict=True):
        assert _marks(ko) == _marks(en) and len(ko.splitlines()) == len(en.splitlines())
        assert [line[:1] for line in ko.splitlines()] == [line[:1] for line in en.splitlines()]
    first, second, third, stopped = korean
    assert "✓ the answer is 42" in first  # the check cell's claim: the course's translation
    assert "    힌트: module.parameters()는" in first and "    힌트: 위와 같습니다." in first
    assert '    막혔나요? checks.hint("answer_42") 호출로' in first
    assert "    추가 힌트:" in second and "코드:" not in second
    assert "    코드:\n        for param in module.parameters(recurse=False):" in third
    assert "○ _stub: 아직 작성하지 않았습니다. YOUR CODE HERE" in stopped
    assert "○ not_written_yet: 아직 정의되지 않았습니다." in stopped
    for text in korean:
        assert not re.search(r"\b(Hint|More|Code|Stuck|not done yet|not defined yet)\b", text)
    assert "    Hint: module.parameters() yields" in english[0]  # and English is as it was


def test_a_hidden_test_still_fails_by_its_name_in_korean(fresh_kernel) -> None:
    language.set_language("ko")
    check = Check("answer_42")

    def verify(value):
        check.equal(value, 42, "the answer is 42", hint=LEVELLED)

    with pytest.raises(HiddenTestFailed, match="^hidden test failed"):
        check.hidden(verify, 41)


def test_hint_on_request_speaks_english_when_asked_in_a_korean_kernel(fresh_kernel, capsys):
    language.set_language("ko")
    checks.assignment("01-apply")
    checks.hint("visit_order")
    korean = capsys.readouterr().out
    checks.hint("visit_order", lang="en")
    english = capsys.readouterr().out
    assert korean.startswith("visit_order 함수의 힌트, 모든 단계(모든 검사):")
    assert "    힌트: " in korean and "    Hint: " not in korean
    assert english.startswith("Hints for visit_order, all levels (every check):")
    assert "    Hint: " in english and "    힌트: " not in english
    assert len(english.splitlines()) == len(korean.splitlines())
    checks.hint("nothing_here")
    assert capsys.readouterr().out.startswith("'nothing_here'에 대한 힌트가 없습니다.")


def test_the_korean_card_has_korean_labels_and_says_its_language(fresh_kernel, capsys) -> None:
    language.set_language("ko")
    korean = _scenario(capsys)
    page = BeautifulSoup(card.card_html([korean[2], korean[3]]), "html.parser")
    box = page.select_one(".hv-card")
    assert box["lang"] == "ko" and box["aria-label"] == "검사 결과"
    assert {s.get_text() for s in page.select("summary")} == {"힌트", "추가 힌트", "코드"}
    assert "실패: " in page.get_text() and "아직 하지 않음: " in page.get_text()
    language.set_language(None)
    english = BeautifulSoup(card.card_html([korean[2]]), "html.parser")  # read, shown in English
    assert {s.get_text() for s in english.select("summary")} == {"Hint", "More", "Code"}
    assert not english.select_one(".hv-card").has_attr("lang")


def test_words_fill_placeholders_and_name_a_missing_key() -> None:
    assert words("checks.raised", "en", function="f", error="E: x") == "f raised E: x"
    assert words("checks.raised", "ko", function="f", error="E: x").startswith("f 함수에서")
    with pytest.raises(KeyError, match="en.py and ko.py"):
        words("checks.no_such_key")
