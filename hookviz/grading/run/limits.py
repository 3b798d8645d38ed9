"""What one submission may use, and the command-line options that set it.

`hookviz grade` and `hookviz export gradescope` take the same three options; both carry the
result as one ``Limits`` (GradeOptions.limits, ExportOptions.limits), whose defaults are these.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """What one submission may use."""

    cell_timeout: float = 60.0
    submission_timeout: float = 300.0
    memory_mb: int = 4096
    file_mb: int = 64
    processes: int = 256

    def rlimits(self, process_offset: int = 0) -> dict[str, int]:
        """The launcher's setrlimit values."""
        return {
            "RLIMIT_AS": self.memory_mb * 2**20,
            "RLIMIT_FSIZE": self.file_mb * 2**20,
            "RLIMIT_NPROC": self.processes + process_offset,
            "RLIMIT_CPU": int(self.submission_timeout * 2) + 10,
            "RLIMIT_CORE": 0,
        }

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Limits:
        """The limits ``add_arguments`` parsed (the rest at their defaults)."""
        return cls(
            cell_timeout=args.timeout,
            submission_timeout=args.submission_timeout,
            memory_mb=args.memory_mb,
        )

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser, whole: str) -> None:
        """--timeout, --submission-timeout and --memory-mb, defaulting to these limits."""
        parser.add_argument(
            "--timeout",
            type=positive(float),
            default=cls.cell_timeout,
            help=f"seconds one cell may run (default {cls.cell_timeout:g})",
        )
        parser.add_argument(
            "--submission-timeout",
            type=positive(float),
            default=cls.submission_timeout,
            help=f"seconds {whole} may take (default {cls.submission_timeout:g})",
        )
        parser.add_argument(
            "--memory-mb",
            type=positive(int),
            default=cls.memory_mb,
            help=f"address-space limit of each grading process, in MB (default {cls.memory_mb})",
        )


def positive(kind: type) -> Callable[[str], float]:
    """An argparse type: ``kind(text)``, refused unless more than 0."""

    def parse(text: str) -> float:
        value = kind(text)
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be more than 0, got {text}")
        return value

    return parse
