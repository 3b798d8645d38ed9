"""Which translations are up to date: per unit, compared with the English of today.

- UP TO DATE: translated, and the English it was made from is today's English;
- STALE: the English changed since (the diff says how), or the copy of the English was edited
  by hand (its hash no longer matches);
- MISSING: no translation yet (no table, or an empty one);
- ORPHAN: the English unit is gone (its table can be deleted).

``sync`` writes the tables a translator fills in; ``accept`` records that a translation has
caught up with today's English.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from .files import Entry, english_sha, read_translation, write_translation
from .units import MESSAGES, Source, course_sources

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

    def line(self) -> str:
        said = f" {self.english!r}" if self.english else ""
        return f"{self.state:<10} {self.source} [{self.key}]{said}"


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
    for source in course_sources(root):
        entries = read_translation(translation_path(root, lang, source), lang)
        said = source.kind == MESSAGES
        for key, english in source.units.items():
            state, diff = unit_state(english, entries.get(key))
            found.append(UnitStatus(source.path, key, state, diff, english if said else ""))
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
    """Every translated unit's lint problems (``lint``), one line each, naming file and key."""
    from .lint import lint, load_glossary

    glossary = load_glossary(Path(root) / TRANSLATIONS / lang / "glossary.toml")
    problems = []
    for source in course_sources(root):
        entries = read_translation(translation_path(root, lang, source), lang)
        for key, entry in entries.items():
            if entry.text.strip():
                for problem in lint(entry.en, entry.text, glossary):
                    problems.append(f"{source.translation_name} [{key}]: {problem}")
    return problems
