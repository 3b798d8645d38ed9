"""Translation files: one TOML file per English file, one table per unit.

::

    ["cell-id"]
    en_sha = "…"       # sha256 of `en`, first 16 hex digits
    en = '''
    The English this translates.'''
    ko = '''
    The translation.'''

The copy of the English gives `hookviz i18n status` its diff when the English changes; the hash
tells a copy edited by hand from the English it claims to be.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from ..format.notebooks import atomic_write_text

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib


class TranslationError(ValueError):
    """A translation file that cannot be read; the message names the file and the fix."""


@dataclass(frozen=True)
class Entry:
    """One unit's translation and the English it was made from."""

    en_sha: str
    en: str
    text: str  # the translation; "" while nobody has translated it

    @property
    def honest(self) -> bool:
        """The copy of the English is the English its hash was taken of."""
        return english_sha(self.en) == self.en_sha


def english_sha(text: str) -> str:
    """The hash a translation records of the English it translates."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def read_translation(path: Path, lang: str) -> dict[str, Entry]:
    """The entries of one translation file, key -> Entry ({} when there is no file)."""
    path = Path(path)
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise TranslationError(f"{path}: cannot read it as TOML ({error}).") from error
    entries = {}
    for key, table in data.items():
        fields = {"en_sha", "en", lang}
        if not isinstance(table, dict) or not fields <= set(table):
            raise TranslationError(
                f'{path}: ["{key}"] needs en_sha, en and {lang} (run `hookviz i18n sync` to '
                "write the tables a translation needs, then fill in the translation)."
            )
        if not all(isinstance(table[f], str) for f in fields):
            raise TranslationError(f'{path}: ["{key}"]: en_sha, en and {lang} must be strings.')
        entries[key] = Entry(table["en_sha"], table["en"], table[lang])
    return entries


def write_translation(path: Path, lang: str, entries: dict[str, Entry], header: str) -> None:
    """Write ``entries`` (in the given order) with a comment ``header`` on top."""
    lines = [f"# {line}".rstrip() for line in header.splitlines()]
    for key, entry in entries.items():
        lines += [
            "",
            f"[{toml_key(key)}]",
            f'en_sha = "{entry.en_sha}"',
            f"en = {toml_string(entry.en)}",
            f"{lang} = {toml_string(entry.text)}",
        ]
    text = "\n".join(lines) + "\n"
    if read_back(text, lang) != entries:  # never write a file that reads back otherwise
        raise TranslationError(f"{path}: the translation would not read back as written.")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(Path(path), text)


def read_back(text: str, lang: str) -> dict[str, Entry]:
    data = tomllib.loads(text)
    return {k: Entry(t["en_sha"], t["en"], t[lang]) for k, t in data.items()}


def toml_key(key: str) -> str:
    """A quoted TOML key (cell ids and dotted keys hold dots and dashes)."""
    return '"' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'


def toml_string(text: str) -> str:
    """``text`` as a TOML string a translator can edit: a multi-line literal where it can be."""
    if not text:
        return '""'
    literal = "'''\n" + text + "'''"
    bad = any(ord(c) < 32 and c not in "\n\t" for c in text) or "\r" in text
    if "'''" not in text and not text.endswith("''") and not bad:
        try:
            if tomllib.loads(f"x = {literal}")["x"] == text:
                return literal
        except tomllib.TOMLDecodeError:
            pass
    escaped = "".join(_escape(c) for c in text)
    return '"""\n' + escaped.replace('"""', '""\\"') + '"""'


def _escape(char: str) -> str:
    if char == "\\":
        return "\\\\"
    if char == "\n":
        return "\n"
    if ord(char) < 32 or ord(char) == 127:
        return f"\\u{ord(char):04x}"
    return char
