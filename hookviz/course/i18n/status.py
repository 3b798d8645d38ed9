"""Which translations are up to date: per unit, compared with the English of today.

- UP TO DATE: translated, and the English it was made from is today's English;
- STALE: the English changed since (the diff says how), or the copy of the English was edited
  by hand (its hash no longer matches);
- MISSING: no translation yet (no table, or an empty one);
- ORPHAN: the English unit is gone (its table can be deleted).

A course may leave the prose in the code of some files for later (course.toml, ``[i18n]
later``): their comments and docstrings still MISSING are listed, marked, and do not fail
`hookviz build --check`; everything else in those files must be up to date as anywhere.

``sync`` writes the tables a translator fills in; ``accept`` records that a translation has
caught up with today's English.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from .code import is_code_key
from .figures import is_figure_key
from .files import Entry, english_sha, read_translation, write_translation
from .units import MESSAGES, Source, course_sources

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

UP_TO_DATE, STALE, MISSING, ORPHAN = "up to date", "STALE", "MISSING", "ORPHAN"
TRANSLATIONS = "translations"  # beside course.toml: translations/<lang>/...


@dataclass(frozen=True)
class UnitStatus:
    """One unit's state in one language."""

    source: str  # the English file, relative to the course
    key: str
    state: str
    diff: str = ""  # for STALE: how the English changed since it was translated
    english: str = ""  # for a check's message: the message itself (its key is a hash)
    later: bool = False  # prose in code the course left for later ([i18n] later)

    def line(self) -> str:
        said = f" {self.english!r}" if self.english else ""
        note = "  (left for later: course.toml [i18n] later)" if self.later else ""
        return f"{self.state:<10} {self.source} [{self.key}]{said}{note}"

    @property
    def pending(self) -> bool:
        """Not up to date, and not left for later: what fails `hookviz build --check`."""
        return self.state != UP_TO_DATE and not self.later


def left_for_later(root: Path) -> frozenset[str]:
    """The English files (``notebooks/04-….ipynb``) whose prose in code course.toml's
    ``[i18n] later`` leaves for later."""
    path = Path(root) / "course.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, tomllib.TOMLDecodeError):
        return frozenset()  # load_course_config reports a broken course.toml
    later = data.get("i18n", {}).get("later", []) if isinstance(data.get("i18n"), dict) else []
    return frozenset(p for p in later if isinstance(p, str))


def translation_path(root: Path, lang: str, source: Source) -> Path:
    """The translation file of ``source`` in ``lang``."""
    return Path(root) / TRANSLATIONS / lang / source.translation_name


def unit_state(english: str, entry: Entry | None) -> tuple[str, str]:
    """The state of one unit and, when STALE, the diff of its English."""
    if entry is None or not entry.text.strip():
        return MISSING, ""
    if not entry.honest:
        return STALE, "its copy of the English was edited: `en` no longer matches `en_sha`"
    if entry.en != english:
        diff = difflib.unified_diff(
            entry.en.splitlines(),
            english.splitlines(),
            "translated from",
            "English now",
            lineterm="",
        )
        return STALE, "\n".join(diff)
    return UP_TO_DATE, ""


def course_status(root: Path, lang: str) -> list[UnitStatus]:
    """Every unit of the course in ``lang``, in file order."""
    found = []
    later = left_for_later(root)
    for source in course_sources(root):
        entries = read_translation(translation_path(root, lang, source), lang)
        said = source.kind == MESSAGES
        for key, english in source.units.items():
            state, diff = unit_state(english, entries.get(key))
            deferred = (
                state == MISSING
                and source.path in later
                and (is_code_key(key) or is_figure_key(key))
            )
            found.append(
                UnitStatus(source.path, key, state, diff, english if said else "", deferred)
            )
        found += [
            UnitStatus(source.path, k, ORPHAN, english=e.en if said else "")
            for k, e in entries.items()
            if k not in source.units
        ]
    return found


def header(source: Source, lang: str) -> str:
    return (
        f"{lang} for {source.path}, one table per unit (a markdown cell by id, or a\n"
        f"string by key). Write the translation in `{lang}`; `en` is the English it follows.\n"
        "When the English changes, `hookviz i18n status` says STALE with the diff: change the\n"
        f"translation, then `hookviz i18n accept {source.path}`."
    )


def sync(root: Path, lang: str) -> list[str]:
    """Write a table for every unit that has none (translation empty), in the English order;
    return the files written. Existing translations are kept as they are."""
    written = []
    for source in course_sources(root):
        path = translation_path(root, lang, source)
        entries = read_translation(path, lang)
        wanted: dict[str, Entry] = {}
        for key, english in source.units.items():
            wanted[key] = entries.get(key) or Entry(english_sha(english), english, "")
        wanted.update({k: e for k, e in entries.items() if k not in wanted})  # orphans kept
        if list(wanted.items()) != list(entries.items()):
            write_translation(path, lang, wanted, header(source, lang))
            written.append(path.relative_to(root).as_posix())
    return written


def accept(root: Path, lang: str, source_path: str, keys: list[str] | None = None) -> list[str]:
    """Record today's English for the translated units of ``source_path`` (``keys``, or every
    stale one): their translation now follows it. Returns the keys accepted."""
    for source in course_sources(root):
        if source.path != source_path:
            continue
        path = translation_path(root, lang, source)
        entries = read_translation(path, lang)
        chosen = keys if keys else [k for k in entries if k in source.units]
        unknown = [k for k in chosen if k not in entries or k not in source.units]
        if unknown:
            raise KeyError(
                f"{source_path} has no translated unit {unknown[0]!r}: `hookviz i18n status` "
                "lists the keys."
            )
        done = []
        for key in chosen:
            english, entry = source.units[key], entries[key]
            if entry.text.strip() and (entry.en != english or not entry.honest):
                entries[key] = Entry(english_sha(english), english, entry.text)
                done.append(key)
        if done:
            write_translation(path, lang, entries, header(source, lang))
        return done
    raise KeyError(
        f"{source_path} is not an English file of this course (a notebook in notebooks/ or "
        "solutions/, or a hints or predictions file)."
    )


def course_lint(root: Path, lang: str) -> list[str]:
    """Every lint problem of the language (``lint_report``), but those of files left for later."""
    return lint_report(root, lang)[0]


def lint_report(root: Path, lang: str) -> tuple[list[str], list[str]]:
    """The lint problems of everything a reader of ``lang`` reads, one line each, naming file
    and key: every translated unit (``lint``: code kept, the glossary's words and voice; a
    notebook's first use of a term), the course's pages in ``lang`` and the hookviz package's
    own words (the glossary and voice, and no English where the language has words). Returns
    (problems, problems of files course.toml's ``[i18n] later`` leaves for later)."""
    from .code import unit_problems
    from .lint import (
        english_problems,
        first_use_problems,
        lint,
        read_glossary,
        ui_problems,
        words_problems,
    )
    from .surfaces import course_texts, package_texts

    glossary = read_glossary(Path(root) / TRANSLATIONS / lang / "glossary.toml")
    later = left_for_later(root)
    problems: list[str] = []
    deferred: list[str] = []
    for source in course_sources(root):
        entries = read_translation(translation_path(root, lang, source), lang)
        found = []
        for key, entry in entries.items():
            if entry.text.strip():
                said = lint(entry.en, entry.text, glossary, lang)
                if entry.text != entry.en:  # an English name kept as it is is not a slip
                    said += english_problems(entry.text)
                said += ui_problems(entry.text, lang)
                if is_code_key(key):  # prose in code: braces are words there, not placeholders
                    said = [p for p in said if not p.startswith("placeholders differ")]
                    said += unit_problems(entry.en, entry.text)
                found += [f"{source.translation_name} [{key}]: {problem}" for problem in said]
        if source.kind != MESSAGES and source.path.endswith(".ipynb"):
            texts = [entries[k].text for k in source.units if k in entries and not is_code_key(k)]
            found += [
                f"{source.translation_name}: {problem}"
                for problem in first_use_problems(texts, glossary)
            ]
        (deferred if source.path in later else problems).extend(found)
    for where, text in course_texts(root, lang) + package_texts(lang):
        said = words_problems(text, glossary) + english_problems(text) + ui_problems(text, lang)
        problems += [f"{where}: {problem}" for problem in said]
    return problems, deferred
