"""The translations a student's kernel uses: of the hints, the predictions and the checks'
messages, into the course's language, read where ``content`` finds the course's content.

From the course's translation files when the notebook runs in the course (only translations
that follow the English of today), else from what the notebook's stamped cell packed.
"""

from __future__ import annotations

from pathlib import Path

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from ..content import CourseContent, course_content, packed_strings
from .apply import following, strings_for
from .files import read_translation
from .status import TRANSLATIONS
from .units import MESSAGES, table_units


def hint_strings(assignment: str, lang: str) -> dict[str, str]:
    """Translations of ``assignment``'s hints into ``lang`` (dotted key -> text): from the
    course's translation files (those that follow its hints file as it is), else packed."""
    content = course_content()
    if content is not None and content.hints_file(assignment).is_file():
        return _file_strings(content, content.hints_file(assignment), lang)
    return dict(packed_strings(lang, "hints").get(assignment, {}))


def message_strings(assignment: str, lang: str) -> dict[str, str]:
    """Translations of the messages ``assignment``'s checks print (English -> text): from the
    course's translation files, else packed."""
    content = course_content()
    if content is not None:
        path = content.root / TRANSLATIONS / lang / MESSAGES / f"{assignment}.toml"
        if path.is_file():
            entries = read_translation(path, lang)
            return {e.en: e.text for e in entries.values() if e.text.strip() and e.honest}
    return dict(packed_strings(lang, "messages").get(assignment, {}))


def prediction_strings(lang: str) -> dict[str, str]:
    """Translations of every prediction into ``lang`` (``key.question`` -> text, …)."""
    found = dict(packed_strings(lang, "predictions"))
    content = course_content()
    if content is not None and content.predictions.is_dir():
        for path in sorted(content.predictions.glob("*.toml")):
            found.update(_file_strings(content, path, lang))
    return found


def _file_strings(content: CourseContent, path: Path, lang: str) -> dict[str, str]:
    try:
        relative = path.resolve().relative_to(content.root).as_posix()
    except ValueError:  # a content folder outside the course: no translations for it
        return {}
    units = table_units(tomllib.loads(path.read_text(encoding="utf-8")))
    return following(strings_for(content.root, lang, relative), units)
