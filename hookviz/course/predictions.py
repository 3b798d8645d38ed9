"""The catalogue of predictions: questions whose answers live in TOML files, not in notebook cells.

A notebook cell reads ``predict("apply-order")``: whoever reads the cell's source sees nothing
of the answer. The course's ``predictions/*.toml`` files (``hookviz.course.content`` says how a
notebook finds them, in the course or packed into the notebook) hold tables such as::

    [apply-order]
    question = "In what order does `model.apply(fn)` call `fn`?"
    choices = ["pre-order", "post-order", "breadth-first"]   # leave out for a short answer
    answer = 1                      # the right choice's index, or a list of accepted answers
    why = "Each module's `apply` calls its children's first, then `fn(self)`."

Keys are unique across all files.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import language
from . import content

FIELDS = ("question", "choices", "answer", "why")
REQUIRED = ("question", "answer", "why")
_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")


class CatalogueError(ValueError):
    """A catalogue file that cannot be read, or an entry in it that is not a valid prediction."""


class UnknownPrediction(KeyError):
    """No prediction with that key; the message lists the close matches."""

    def __str__(self) -> str:  # KeyError would show the message with quotes around it
        return str(self.args[0])


@dataclass(frozen=True)
class Entry:
    """One prediction in the catalogue, checked, with the file it came from."""

    key: str
    question: str
    choices: tuple[str, ...] | None
    answer: int | tuple[str, ...]
    why: str
    source: Path

    def widget(self, theme: str = "auto"):
        """The Prediction widget for this entry."""
        from ..widgets.prediction import Prediction

        return Prediction(
            self.question,
            choices=list(self.choices) if self.choices is not None else None,
            answer=self.answer if isinstance(self.answer, int) else list(self.answer),
            why=self.why,
            key=self.key,
            theme=theme,
        )


def load_catalogue(folder: str | Path | None = None) -> dict[str, Entry]:
    """Every prediction the notebook can show, by key.

    Parameters
    ----------
    folder : str, Path or None
        A folder of `*.toml` catalogue files; None, the course's own (its `predictions/` folder,
        or what the notebook's stamped cell carries).

    Returns
    -------
    dict of str to Entry
        Every entry, by key.

    Raises
    ------
    CatalogueError
        When a file cannot be read, an entry is malformed or a key is defined twice.
    """
    try:
        tables = content.prediction_tables(None if folder is None else Path(folder))
    except content.ContentError as error:
        raise CatalogueError(str(error)) from None
    lang = language.current_language()
    if lang != language.ENGLISH:  # where a translation follows the English
        from .i18n.apply import translate_table
        from .i18n.runtime import prediction_strings

        strings = prediction_strings(lang)
        tables = {k: (translate_table({k: t}, strings)[k], s) for k, (t, s) in tables.items()}
    return {key: _entry(Path(source), key, table) for key, (table, source) in tables.items()}


def keys(folder: str | Path | None = None) -> list[str]:
    """The keys of the catalogue, sorted.

    Parameters
    ----------
    folder : str, Path or None
        The catalogue's folder; None, the one shipped with hookviz.

    Returns
    -------
    list of str
        Every key.
    """
    return sorted(load_catalogue(folder))


def entry(key: str, folder: str | Path | None = None) -> Entry:
    """The catalogue entry named `key`.

    Parameters
    ----------
    key : str
        The entry's key, as `keys()` lists it.
    folder : str, Path or None
        The catalogue's folder; None, the one shipped with hookviz.

    Returns
    -------
    Entry
        Its question, choices, answer and why.

    Raises
    ------
    UnknownPrediction
        For an unknown key, with the closest keys.
    """
    if not isinstance(key, str):
        raise TypeError(f"key must be a string such as 'apply-order', got {type(key).__name__}.")
    catalogue = load_catalogue(folder)
    if key not in catalogue:
        close = difflib.get_close_matches(key, list(catalogue), n=5, cutoff=0.5)
        hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
        raise UnknownPrediction(
            f"no prediction {key!r} in the catalogue ({len(catalogue)} entries).{hint} "
            "hookviz.course.predictions.keys() lists them all."
        )
    return catalogue[key]


def predict(key: str, *, theme: str = "auto", folder: str | Path | None = None):
    """The Prediction widget for catalogue entry `key` (the last line of a cell shows it).

    Parameters
    ----------
    key : str
        The entry's key, as `keys()` lists it.
    theme : str
        `"auto"` (follow JupyterLab), `"light"` or `"dark"`.
    folder : str, Path or None
        The catalogue's folder; None, the one shipped with hookviz.

    Returns
    -------
    Prediction
        The widget.
    """
    return entry(key, folder).widget(theme=theme)


def _entry(path: Path, key: str, table: Any) -> Entry:
    from ..widgets.prediction import check_prediction

    where = f"{path.name} [{key}]"
    if not isinstance(table, dict):
        raise CatalogueError(
            f"{path.name}: {key} = {table!r} is not a prediction. Each prediction is a table: "
            f'[{key}] followed by question = "...", answer = ..., why = "...".'
        )
    if not _KEY.fullmatch(key):
        raise CatalogueError(
            f"{where}: a key may hold letters, digits, '-' and '_' only (no dots or spaces), "
            "such as [apply-order]."
        )
    unknown = [name for name in table if name not in FIELDS]
    if unknown:
        raise CatalogueError(
            f"{where}: unknown field{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
            f"a prediction has {', '.join(FIELDS)} (choices is optional)."
        )
    missing = [name for name in REQUIRED if name not in table]
    if missing:
        raise CatalogueError(
            f"{where} is missing {', '.join(missing)}: every prediction needs question, answer and why "
            "(and choices for multiple choice)."
        )
    try:
        question, choices, answer, why = check_prediction(
            table["question"], table.get("choices"), table["answer"], table["why"]
        )
    except (TypeError, ValueError) as error:
        raise CatalogueError(f"{where}: {error}") from None
    return Entry(
        key=key,
        question=question,
        choices=tuple(choices) if choices else None,
        answer=answer if isinstance(answer, int) else tuple(answer),
        why=why,
        source=path,
    )
