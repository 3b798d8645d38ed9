"""A course in two languages: translation files follow the English per cell and per string,
`hookviz build` writes <lang>/, and nothing stale gets past `build --check` or `i18n status`."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

import pytest

from hookviz import language
from hookviz.cli import EXIT_OK, EXIT_STALE, main
from hookviz.course import content
from hookviz.course.format.steps import spoken_guard
from hookviz.course.hint_files import load_hints
from hookviz.course.i18n.code import code_only, is_code_key, prose
from hookviz.course.i18n.files import read_translation, write_translation
from hookviz.course.i18n.status import MISSING, ORPHAN, STALE, UP_TO_DATE, course_status, header
from hookviz.course.i18n.units import Source

KO = "ko"


def hookviz(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def fill(root: Path, english: str, translate=lambda en: "번역: " + en) -> dict[str, str]:
    """Translate every unit of one translation file (as a translator would): ``english`` is the
    English file it follows, or ``messages/<assignment>.toml``; returns key -> text."""
    path = root / "translations" / KO / Path(english).with_suffix(".toml")
    entries = read_translation(path, KO)
    done = {k: e.__class__(e.en_sha, e.en, translate(e.en)) for k, e in entries.items()}
    write_translation(path, KO, done, header(Source(english, {}), KO))
    return {k: e.text for k, e in done.items()}


@pytest.fixture(scope="module")
def initialised(tmp_path_factory) -> Path:
    """`hookviz init`, its notebooks run once (a kernel) for every test here."""
    root = tmp_path_factory.mktemp("init") / "course"
    code, _, err = hookviz("init", str(root))
    assert code == EXIT_OK, err
    return root


@pytest.fixture
def course(initialised: Path, tmp_path: Path, monkeypatch) -> Path:
    """A fresh `hookviz init` course that builds Korean, with every unit translated."""
    root = tmp_path / "course"
    shutil.copytree(initialised, root)
    with (root / "course.toml").open("a") as toml:
        toml.write('\n[i18n]\nlanguages = ["ko"]\n')
    monkeypatch.chdir(root)
    code, out, _ = hookviz("i18n", "sync", "--root", str(root))
    assert code == EXIT_OK and "translations/ko/solutions/01-first-steps.toml" in out
    for english in (
        "notebooks/00-start-here.ipynb",
        "solutions/01-first-steps.ipynb",
        "hints/01-first-steps.toml",
        "predictions/00-start-here.toml",
        "messages/01-first-steps.toml",
    ):
        fill(root, english)
    return root


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def test_a_fresh_course_has_every_unit_missing_until_translated(tmp_path: Path) -> None:
    root = tmp_path / "c"
    hookviz("init", str(root), "--no-run")
    hookviz("i18n", "sync", "--root", str(root))
    states = {u.state for u in course_status(root, KO)}
    assert states == {MISSING}
    code, out, _ = hookviz("i18n", "status", "--root", str(root))
    assert code == EXIT_STALE and "MISSING" in out and "hints/01-first-steps.toml [" in out


def test_build_writes_the_language_with_code_as_it_is_and_prose_translated(course: Path) -> None:
    code, out, err = hookviz("build", "--root", str(course))
    assert code == EXIT_OK, err
    assert hookviz("i18n", "status", "--root", str(course))[0] == EXIT_OK
    for folder in (
        "notebooks/00-start-here",
        "solutions/01-first-steps",
        "exercises/01-first-steps",
    ):
        english, korean = cells(course / f"{folder}.ipynb"), cells(course / KO / f"{folder}.ipynb")
        assert [c["id"] for c in english] == [c["id"] for c in korean]
        for en, ko in zip(english, korean, strict=True):
            if en["cell_type"] == "code":
                role = en["metadata"].get("hookviz", {}).get("stamp")
                english, korean = "".join(en["source"]), "".join(ko["source"])
                if role == "content":  # the stamped cell that says the language
                    assert 'lang="ko"' in korean
                    assert 'lang="ko"' not in english
                    continue
                # a check's guard says it too: nothing has set it in a fresh kernel
                assert code_only(korean) == code_only(spoken_guard(english, "ko"))
                said = prose(korean)
                if role is None and said:  # its comments and docstrings, translated
                    assert said[0].text.startswith("번역: "), korean
            elif en["source"] and "YOUR ANSWER HERE" not in "".join(en["source"]):
                assert "".join(ko["source"]) == "번역: " + "".join(en["source"])
    assert hookviz("build", "--check", "--root", str(course))[0] == EXIT_OK


def test_a_changed_english_cell_is_stale_and_fails_the_check(course: Path) -> None:
    hookviz("build", "--root", str(course))
    path = course / "notebooks" / "00-start-here.ipynb"
    notebook = json.loads(path.read_text(encoding="utf-8"))
    cell = next(
        c
        for c in notebook["cells"]
        if c["cell_type"] == "markdown" and c["id"] != "hookviz-colab-badge"
    )
    cell["source"] = "".join(cell["source"]) + "\n\nA sentence the author added."
    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")

    stale = [u for u in course_status(course, KO) if u.state == STALE]
    assert [(u.source, u.key) for u in stale] == [("notebooks/00-start-here.ipynb", cell["id"])]
    assert "+A sentence the author added." in stale[0].diff
    code, out, _ = hookviz("i18n", "status", "--root", str(course))
    assert code == EXIT_STALE and f"STALE      notebooks/00-start-here.ipynb [{cell['id']}]" in out
    code, _, err = hookviz("build", "--check", "--root", str(course))
    assert code == EXIT_STALE and "1 STALE" in err

    hookviz("build", "--root", str(course))  # the English shows until the translation catches up
    built = next(
        c for c in cells(course / KO / "notebooks/00-start-here.ipynb") if c["id"] == cell["id"]
    )
    assert "".join(built["source"]) == cell["source"]

    assert hookviz("i18n", "accept", "notebooks/00-start-here.ipynb", "--root", str(course))[0] == 0
    assert {u.state for u in course_status(course, KO)} == {UP_TO_DATE}


def test_a_deleted_english_cell_leaves_an_orphan(course: Path) -> None:
    path = course / "solutions" / "01-first-steps.ipynb"
    notebook = json.loads(path.read_text(encoding="utf-8"))
    gone = next(
        c
        for c in notebook["cells"]
        if c["cell_type"] == "markdown" and c["id"] != "hookviz-colab-badge"
    )
    notebook["cells"].remove(gone)
    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    assert [(u.state, u.key) for u in course_status(course, KO) if u.state != UP_TO_DATE] == [
        (ORPHAN, gone["id"])
    ]


def test_prose_in_code_left_for_later_passes_the_check_until_the_list_is_emptied(
    course: Path,
) -> None:
    """course.toml's [i18n] later: a file's comments still MISSING are listed and let `build
    --check` pass; with the list empty, or gone, they fail it like any other unit."""
    english = "solutions/01-first-steps.ipynb"
    path = course / "translations" / KO / "solutions" / "01-first-steps.toml"
    entries = read_translation(path, KO)
    in_code = [key for key in entries if is_code_key(key)]
    assert in_code  # the starter assignment has comments to translate
    entries = {
        k: e.__class__(e.en_sha, e.en, "" if k in in_code else e.text) for k, e in entries.items()
    }
    write_translation(path, KO, entries, header(Source(english, {}), KO))
    toml = course / "course.toml"
    base = toml.read_text(encoding="utf-8")
    toml.write_text(base + f'later = ["{english}"]\n', encoding="utf-8")

    later = [u for u in course_status(course, KO) if u.later]
    assert sorted(u.key for u in later) == sorted(in_code)
    assert {u.state for u in later} == {MISSING}
    assert hookviz("build", "--root", str(course))[0] == EXIT_OK
    assert hookviz("build", "--check", "--root", str(course))[0] == EXIT_OK
    for listed in ("later = []\n", ""):
        toml.write_text(base + listed, encoding="utf-8")
        assert not any(u.later for u in course_status(course, KO))
        assert hookviz("i18n", "status", "--root", str(course))[0] == EXIT_STALE
        assert hookviz("build", "--check", "--root", str(course))[0] == EXIT_STALE


def test_an_edited_copy_of_the_english_is_caught(course: Path) -> None:
    path = course / "translations/ko/hints/01-first-steps.toml"
    path.write_text(path.read_text(encoding="utf-8").replace("en = '''\n", "en = '''\nX", 1))
    stale = [u for u in course_status(course, KO) if u.state == STALE]
    assert len(stale) == 1 and "en_sha" in stale[0].diff


def test_hints_and_predictions_follow_the_notebooks_language(course: Path, monkeypatch) -> None:
    monkeypatch.setenv(content.COURSE_ENV, str(course))
    try:
        english = load_hints("01-first-steps", "en")
        language.set_language("ko")
        korean = load_hints("01-first-steps")
        ((answer, hints),) = english.items()
        for key, hint in hints.items():
            assert korean[answer][key].nudge == "번역: " + hint.nudge
            assert korean[answer][key].code == hint.code  # code is never translated
        monkeypatch.setenv(language.LANG_ENV, "ko")
        language.set_language(None)
        assert load_hints("01-first-steps")[answer] == korean[answer]  # HOOKVIZ_LANG alone
        monkeypatch.setenv(language.LANG_ENV, "fr")
        with pytest.raises(ValueError, match="hookviz speaks en, ko, not 'fr'"):
            load_hints("01-first-steps")
    finally:
        language.set_language(None)


def test_a_translated_notebook_carries_its_translations_when_opened_alone(
    course: Path, monkeypatch
) -> None:
    hookviz("build", "--root", str(course))
    notebook = cells(course / KO / "solutions/01-first-steps.ipynb")
    cell = next(c for c in notebook if c["metadata"].get("hookviz", {}).get("stamp") == "content")
    monkeypatch.setenv(content.COURSE_ENV, content.NO_COURSE)  # as the grader runs it
    monkeypatch.setattr(content, "_loaded_hints", {})
    monkeypatch.setattr(content, "_loaded_predictions", {})
    monkeypatch.setattr(content, "_loaded_strings", {})
    try:
        exec("".join(cell["source"]), {})  # noqa: S102 - the stamped cell, as a kernel runs it
        assert language.current_language() == "ko"
        ((answer, hints),) = load_hints("01-first-steps").items()
        assert all(h.nudge.startswith("번역: ") for h in hints.values())
        assert not any(
            h.nudge.startswith("번역: ")
            for h in load_hints("01-first-steps", "en")[answer].values()
        )
    finally:
        language.set_language(None)


def test_lint_names_lost_code_and_the_glossarys_words(course: Path) -> None:
    glossary = course / "translations/ko/glossary.toml"
    glossary.write_text('[gradient]\nko = "변화도"\navoid = ["기울기"]\n', encoding="utf-8")
    fill(course, "hints/01-first-steps.toml", lambda en: "기울기를 보세요.")
    fill(course, "notebooks/00-start-here.ipynb", lambda en: en.replace("`", ""))
    code, out, _ = hookviz("i18n", "lint", "--root", str(course))
    assert code == EXIT_STALE
    assert "'기울기': the glossary's word for gradient is '변화도'" in out
    assert "code spans differ from the English: missing" in out
