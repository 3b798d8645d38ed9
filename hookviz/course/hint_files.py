"""An assignment's hints (``hints/<assignment>.toml`` in the course): read, and shown in levels.

The first failed run of a check shows the nudge, the second adds ``more``, and the code
appears from the third run (``CODE_LEVEL``) or on request with ``checks.hint(name)``.
"""

from __future__ import annotations

from .. import language
from .content import hints_text
from .diagnose import Hint, in_language
from .wording import words

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

CODE_LEVEL = 3  # the failed run of one check from which its code-level hint shows


def load_hints(assignment: str, lang: str | None = None) -> dict[str, dict[str, Hint]]:
    """Assignment ``assignment``'s hints, wherever this notebook finds them (``content``), in
    ``lang`` (default: the course's language) where a translation follows the English."""
    text, source = hints_text(assignment)
    data = tomllib.loads(text)
    lang = lang or language.current_language()
    if lang != language.ENGLISH:
        from .i18n.apply import translate_table
        from .i18n.runtime import hint_strings

        data = translate_table(data, hint_strings(assignment, lang))
    return parse_hint_table(data, source)


def parse_hints(text: str, source: str) -> dict[str, dict[str, Hint]]:
    """The hints in TOML text (from ``source``, for messages): ``[answer.key]`` tables with
    ``nudge``, ``more`` and ``code``."""
    return parse_hint_table(tomllib.loads(text), source)


def parse_hint_table(data: dict, source: str) -> dict[str, dict[str, Hint]]:
    """The hints in a TOML table already read (``parse_hints``)."""
    name = source.rsplit("/", 1)[-1]
    hints: dict[str, dict[str, Hint]] = {}
    for answer, table in data.items():
        if not isinstance(table, dict):
            raise ValueError(f"{name}: [{answer}] must be a table of hints, one per key.")
        for key, entry in table.items():
            unknown = (
                set(entry) - {"nudge", "more", "code", "why"} if isinstance(entry, dict) else None
            )
            if not isinstance(entry, dict) or unknown or not ({"nudge", "why"} & set(entry)):
                raise ValueError(
                    f"{name}: [{answer}.{key}] needs a nudge, and may have more and code "
                    "(or holds only the why of a ✓) "
                    f"(found {sorted(entry) if isinstance(entry, dict) else type(entry).__name__})."
                )
            hints.setdefault(answer, {})[key] = Hint(
                entry.get("nudge", "").strip(),
                entry.get("more", "").strip(),
                entry.get("code", "").strip("\n"),
                key=key,
                why=entry.get("why", "").strip(),
            )
    return hints


def hint_lines(found: Hint, level: int, lang: str | None = None) -> list[str]:
    """The lines of a hint a failed run shows: the nudge, then more, then code from CODE_LEVEL
    (in ``lang``, default the course's language)."""
    found = in_language(found, lang)
    lines = [f"    {words('label.hint', lang)} {found.nudge}"]
    if level >= 2 and found.more:
        lines.append(f"    {words('label.more', lang)} {found.more}")
    if level >= CODE_LEVEL and found.code:
        lines.append(f"    {words('label.code', lang)}")
        lines += [f"        {line}".rstrip() for line in found.code.splitlines()]
    return lines
