"""Translations of a course: English is the one source, each language is generated from it.

A translation file per English file (``translations/<lang>/<folder>/<name>.toml``) holds, for
each unit it translates (a markdown cell by its id, or one string of a hints or predictions
file by its dotted key), the English it was made from (``en``), that text's hash (``en_sha``)
and the translation. A translation is used only while its English is the English of today:
when an author changes a cell, `hookviz i18n status` says STALE (with the diff), and the
course shows the English until a translator catches up. Nothing here imports torch.

- ``units``: the English units of a course (what can be translated, by key)
- ``files``: reading and writing translation files
- ``status``: which translations are up to date, stale, missing or orphaned
- ``apply``: a notebook or a TOML table in another language
"""
