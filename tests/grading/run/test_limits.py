"""Limits: one owner of the grading limits' defaults and their options."""

from __future__ import annotations

from hookviz.grading.run.limits import Limits


def test_the_grading_limits_have_one_owner() -> None:
    """--timeout, --submission-timeout, --memory-mb: the CLI, GradeOptions and the Gradescope export
    all default to the sandbox's Limits."""
    from hookviz.cli import parser as build_parser
    from hookviz.grading.grade.batch import GradeOptions
    from hookviz.grading.platforms.gradescope_export import ExportOptions

    owner = Limits()
    for argv in (["grade", "x", "--assignment", "y"], ["export", "gradescope", "y"]):
        args = build_parser().parse_args(argv)
        assert (args.timeout, args.submission_timeout, args.memory_mb) == (
            owner.cell_timeout,
            owner.submission_timeout,
            owner.memory_mb,
        )
        assert Limits.from_args(args) == owner
    for options in (GradeOptions(), ExportOptions()):
        assert options.limits == owner
    args = build_parser().parse_args(["grade", "x", "--assignment", "y", "--timeout", "7"])
    assert Limits.from_args(args) == Limits(cell_timeout=7)
