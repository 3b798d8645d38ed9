"""A course's own content, read by its notebooks: each assignment's hints and the predictions.

It lives in the course, not in the package: ``hints/<assignment>.toml`` and
``predictions/*.toml`` beside ``course.toml`` (its ``[content]`` table may name other folders).
A notebook finds it in the course's files when it runs in the course: the folder named by the
``HOOKVIZ_COURSE`` environment variable, else the nearest ``course.toml`` from the working
folder upward (a notebook being written reads the files as they are now). Elsewhere it uses
what it carries: the cell ``hookviz build`` stamps in every notebook that uses hints or
predictions (``load(packed)``) holds that notebook's own hints and predictions, packed (zlib
and base64). So a notebook opened alone works: in Colab from GitHub, with no file beside it,
and in grading, where the instructor's copy of that cell runs, never the student's (the grader
sets ``HOOKVIZ_COURSE=none``: no file is read, only the notebook the instructor built).

Packed, a hint is as hidden as it was in an installed package's file: a student who decodes
the cell could read every level, as one who opened the file could, and ``checks.hint(name)``
shows them all on request anyway.
"""

from __future__ import annotations

import base64
import json
import os
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = [
    "COURSE_ENV",
    "ContentError",
    "CourseContent",
    "course_content",
    "hints_text",
    "load",
    "pack",
    "prediction_tables",
]

COURSE_ENV = "HOOKVIZ_COURSE"  # a course folder to read content from, or NO_COURSE
NO_COURSE = "none"  # read no file: only what the notebook carries (how the grader runs it)
COURSE_FILE = "course.toml"
DEFAULT_FOLDERS = {"hints": "hints", "predictions": "predictions"}
_PACKED_VERSION = 1


class ContentError(ValueError):
    """A course's content that cannot be found or read; the message says where to put it."""


@dataclass(frozen=True)
class CourseContent:
    """Where a course keeps its content."""

    root: Path
    hints: Path  # the folder of hints/<assignment>.toml
    predictions: Path  # the folder of predictions/*.toml

    def hints_file(self, assignment: str) -> Path:
        return self.hints / f"{assignment}.toml"


# What the stamped cells of this kernel's notebooks loaded: assignment -> TOML text of its hints,
# prediction key -> its table.
_loaded_hints: dict[str, str] = {}
_loaded_predictions: dict[str, dict[str, Any]] = {}
# lang -> {"hints": {assignment: {dotted key: text}}, "predictions": {dotted key: text},
# "messages": {assignment: {English message: text}}, "figures": {English word: text}}: the
# translations a translated notebook carries (only those that follow its English).
_loaded_strings: dict[str, dict[str, dict[str, Any]]] = {}


def pack(
    hints: dict[str, str],
    predictions: dict[str, dict[str, Any]],
    strings: dict[str, dict[str, Any]] | None = None,
) -> str:
    """A notebook's content as one line of text for ``load`` (deterministic: same in, same out);
    ``strings``, its translations by language (see ``_loaded_strings``)."""
    body: dict[str, Any] = {"version": _PACKED_VERSION, "hints": hints, "predictions": predictions}
    if strings:
        body["strings"] = strings
    data = json.dumps(
        body,
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return base64.b64encode(zlib.compress(data.encode("utf-8"), 9)).decode("ascii")


def pack_text(text: str) -> str:
    """``text`` as one line of base64 (zlib): what a check cell's packed code is."""
    return base64.b64encode(zlib.compress(text.encode("utf-8"), 9)).decode("ascii")


def unpack_text(packed: str) -> str:
    """What ``pack_text`` packed."""
    try:
        return zlib.decompress(base64.b64decode(packed.encode("ascii"))).decode("utf-8")
    except (ValueError, zlib.error) as error:
        raise ContentError(
            "this check cell's packed code is damaged: take the cell from the course's copy of "
            "the notebook (the exercise as handed out)."
        ) from error


def unpack(packed: str) -> tuple[dict[str, str], dict[str, dict[str, Any]]]:
    """What ``pack`` packed: hints and predictions (``unpack_all`` has the translations too)."""
    data = unpack_all(packed)
    return data["hints"], data["predictions"]


def unpack_all(packed: str) -> dict[str, Any]:
    """What ``pack`` packed."""
    try:
        data = json.loads(zlib.decompress(base64.b64decode(packed.encode("ascii"))))
    except (ValueError, zlib.error) as error:
        raise ContentError(
            "this notebook's content cell is damaged: run `hookviz build` again, or take the cell "
            "from the course's copy of the notebook."
        ) from error
    if data.get("version") != _PACKED_VERSION:
        raise ContentError(
            f"this notebook's content cell was packed by another hookviz (version "
            f"{data.get('version')!r}): update hookviz, or run `hookviz build` with this one."
        )
    return data


def load(packed: str, lang: str | None = None) -> None:
    """Take a notebook's hints and predictions (what ``hookviz build`` stamps it with); a
    translated notebook also says its language (``lang``) and carries its translations."""
    from .. import language

    data = unpack_all(packed) if packed else {"hints": {}, "predictions": {}}
    _loaded_hints.update(data["hints"])
    _loaded_predictions.update(data["predictions"])
    for code, strings in data.get("strings", {}).items():
        mine = _loaded_strings.setdefault(
            code, {"hints": {}, "predictions": {}, "messages": {}, "figures": {}}
        )
        for kind in mine:
            mine[kind].update(strings.get(kind, {}))
    if lang is not None:
        language.set_language(lang)
        figures = packed_strings(lang, "figures")
        if figures:  # the notebook draws figures of its own: their words in its language
            from . import figure_words

            figure_words.translate_figures(figures)


def packed_strings(lang: str, kind: str) -> dict[str, Any]:
    """What the notebooks of this kernel packed of their translations into ``lang``: ``kind``
    is "hints" (by assignment), "predictions", "messages" (by assignment) or "figures"."""
    return _loaded_strings.get(lang, {}).get(kind, {})


def course_content(start: Path | None = None) -> CourseContent | None:
    """The course whose content applies here: ``HOOKVIZ_COURSE``, else the nearest course.toml
    from ``start`` (the working folder) upward; None when there is neither."""
    named = os.environ.get(COURSE_ENV)
    if named == NO_COURSE:
        return None
    if named:
        root = Path(named).expanduser().resolve()
        if not (root / COURSE_FILE).is_file():
            raise ContentError(
                f"{COURSE_ENV}={named} is not a course folder: it has no {COURSE_FILE}. "
                "Point it at the folder that holds course.toml, or unset it."
            )
        return content_of(root)
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / COURSE_FILE).is_file():
            return content_of(folder)
    return None


def content_of(root: Path, *, optional: bool = False) -> CourseContent:
    """The content folders of the course at ``root`` (``[content]`` in its course.toml; the
    defaults when ``optional`` and there is no course.toml)."""
    table: dict[str, Any] = {}
    path = root / COURSE_FILE
    if not (optional and not path.is_file()):
        try:
            table = tomllib.loads(path.read_text(encoding="utf-8")).get("content", {})
        except (OSError, tomllib.TOMLDecodeError) as error:
            raise ContentError(f"cannot read {path}: {error}") from error
    if not isinstance(table, dict):
        raise ContentError(f'{path}: [content] must be a table, such as hints = "hints".')
    folders = {}
    for kind, default in DEFAULT_FOLDERS.items():
        value = table.get(kind, default)
        if not isinstance(value, str) or not value.strip():
            raise ContentError(
                f'{path}: [content] {kind} must name a folder of the course, such as "{default}", '
                f"got {value!r}."
            )
        folders[kind] = (root / value).resolve()
    return CourseContent(root.resolve(), folders["hints"], folders["predictions"])


def hints_text(assignment: str) -> tuple[str, str]:
    """The TOML text of ``assignment``'s hints and where it came from (for messages)."""
    content = course_content()
    if content is not None and content.hints_file(assignment).is_file():
        path = content.hints_file(assignment)
        return path.read_text(encoding="utf-8"), str(path)
    if assignment in _loaded_hints:
        return _loaded_hints[assignment], f"{assignment}.toml (packed in this notebook)"
    if content is None:
        raise ContentError(
            f"no hints for assignment {assignment!r}: this notebook has no content cell (run it "
            f"from the top; `hookviz build` writes that cell), and no {COURSE_FILE} was found from "
            f"{Path.cwd()} up. Run it inside the course folder, or set {COURSE_ENV} to it."
        )
    path = content.hints_file(assignment)
    if not path.is_file():
        raise ContentError(
            f"no hints file {path.name} in {path.parent}: each assignment's hints live in the "
            f"course's hints folder, as hints/<assignment>.toml (see docs/CONVENTIONS.md)."
        )
    return path.read_text(encoding="utf-8"), str(path)


def prediction_tables(folder: Path | None = None) -> dict[str, tuple[dict[str, Any], str]]:
    """Every prediction this kernel can show: key -> (its table, where it came from). From
    ``folder`` alone when given; else the course's files, then those packed in the notebook."""
    found: dict[str, tuple[dict[str, Any], str]] = {}
    if folder is None:
        packed = {k: (t, "packed in this notebook") for k, t in _loaded_predictions.items()}
        content = course_content()
        folder = content.predictions if content is not None else None
        if folder is None or not folder.is_dir():
            return packed
        found = prediction_tables(folder)
        for key, value in packed.items():
            found.setdefault(key, value)
        return found
    folder = Path(folder)
    if not folder.is_dir():
        raise ContentError(f"no prediction folder at {folder}: it should hold *.toml files.")
    from_files: dict[str, tuple[dict[str, Any], str]] = {}
    for path in sorted(folder.glob("*.toml")):
        try:
            tables = tomllib.loads(path.read_text(encoding="utf-8"))
        except OSError as error:
            raise ContentError(f"cannot read prediction file {path}: {error}") from error
        except tomllib.TOMLDecodeError as error:
            raise ContentError(f"{path.name} is not valid TOML: {error}") from error
        for key, table in tables.items():
            if key in from_files:
                raise ContentError(
                    f"prediction key [{key}] is defined twice: in {Path(from_files[key][1]).name} "
                    f"and in {path.name}. Keys must be unique across all prediction files: rename one."
                )
            from_files[key] = (table, str(path))
    return from_files
