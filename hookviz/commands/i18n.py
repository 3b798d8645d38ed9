"""`hookviz i18n status|sync|accept|lint`: translations of the course (course/i18n/)."""

from __future__ import annotations

import argparse
import sys

from .common import EXIT_ERROR, EXIT_OK, EXIT_STALE, add_root, course_root


def add_parser(commands) -> argparse.ArgumentParser:
    """The `i18n` subcommand's parser."""
    parser = commands.add_parser(
        "i18n",
        help="translations: what is stale, missing or orphaned, and the tables to fill in",
        description="English is the source of the course; each language is generated from it "
        "and translations/<lang>/ (one table per markdown cell or string, with the English it "
        "follows). status: per unit, up to date / STALE (with the diff) / MISSING / ORPHAN. "
        "sync: write the tables still to translate. accept FILE [KEY...]: record that the "
        "translations of FILE follow today's English. lint: code, links and glossary words.",
    )
    parser.add_argument("action", choices=("status", "sync", "accept", "lint"))
    parser.add_argument(
        "file", nargs="?", help="accept: the English file, e.g. notebooks/01-….ipynb"
    )
    parser.add_argument("keys", nargs="*", help="accept: only these cell ids or keys")
    parser.add_argument("--lang", default="ko", help="the language (default: ko)")
    parser.add_argument("--all", action="store_true", help="status: list up-to-date units too")
    add_root(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    """Do the action; status and lint exit 1 when anything is not up to date or not clean."""
    from ..course.i18n import status as i18n

    root = course_root(args)
    if args.action == "sync":
        for path in i18n.sync(root, args.lang):
            print(f"wrote {path}")
        return EXIT_OK
    if args.action == "accept":
        if not args.file:
            print(
                "hookviz i18n accept: name the English file, e.g. notebooks/01-….ipynb",
                file=sys.stderr,
            )
            return EXIT_ERROR
        try:
            done = i18n.accept(root, args.lang, args.file, args.keys)
        except KeyError as error:
            print(f"hookviz i18n accept: {error.args[0]}", file=sys.stderr)
            return EXIT_ERROR
        print(f"{len(done)} translations of {args.file} now follow today's English.")
        return EXIT_OK
    if args.action == "lint":
        problems, later = i18n.lint_report(root, args.lang)
        for line in problems:
            print(line)
        for line in later:
            print(f"later: {line}")
        note = f" ({len(later)} more in files left for later: course.toml [i18n] later)"
        print(f"hookviz i18n lint: {len(problems)} problems{note if later else ''}.")
        return EXIT_STALE if problems else EXIT_OK
    found = i18n.course_status(root, args.lang)
    counts: dict[str, int] = {}
    for unit in found:
        counts[unit.state] = counts.get(unit.state, 0) + 1
        if unit.state != i18n.UP_TO_DATE or args.all:
            print(unit.line())
            if unit.diff:
                print("    " + unit.diff.replace("\n", "\n    "))
    summary = ", ".join(f"{n} {state}" for state, n in sorted(counts.items()))
    later = sum(unit.later for unit in found)
    summary += f" ({later} of them left for later)" if later else ""
    print(f"hookviz i18n status ({args.lang}): {summary or 'nothing to translate'}.")
    return EXIT_STALE if any(unit.pending for unit in found) else EXIT_OK
