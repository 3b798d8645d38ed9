"""The catalogue of predictions: questions whose answers live in TOML files, not in notebook cells.

A notebook cell reads ``predict("apply-order")``: whoever reads the cell's source sees nothing
of the answer. Each ``predictions/*.toml`` file next to this module holds tables such as::

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

FOLDER = Path(__file__).with_name("predictions")
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
    """Every entry of every `*.toml` file in `folder`, by key.

    Parameters
    ----------
    folder : str, Path or None
        The catalogue's folder; None, the one shipped with hookviz.

    Returns
    -------
    dict of str to Entry
        Every entry, by key.

    Raises
    ------
    CatalogueError
        When a file cannot be read or an entry is malformed.
    """
    folder = FOLDER if folder is None else Path(folder)
    if not folder.is_dir():
        raise CatalogueError(
            f"no prediction catalogue folder at {folder}: it should hold *.toml files."
        )
    entries: dict[str, Entry] = {}
    for path in sorted(folder.glob("*.toml")):
        for key, table in _read(path).items():
            entry = _entry(path, key, table)
            if key in entries:
                raise CatalogueError(
                    f"prediction key [{key}] is defined twice: in {entries[key].source.name} and in "
                    f"{path.name}. Keys must be unique across all catalogue files: rename one."
                )
            entries[key] = entry
    return entries


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


def _read(path: Path) -> dict[str, Any]:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        try:
            import tomli as tomllib
        except ImportError as error:
            raise CatalogueError(
                f"reading {path.name} on Python 3.10 needs tomli: pip install tomli"
            ) from error
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise CatalogueError(f"cannot read prediction catalogue {path}: {error}") from error
    except tomllib.TOMLDecodeError as error:
        raise CatalogueError(f"{path.name} is not valid TOML: {error}") from error


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
