"""The student's code in a traceback: which of their functions failed, and with what.

A check names the student's function (``gradient_norms raised ...``), never torch's frames,
hookviz's own, or a frame such as ``<dictcomp>`` or ``<lambda>`` inside the student's function.
"""

from __future__ import annotations

import contextlib
import re
import traceback
from pathlib import Path

import torch

from .values import clip
from .wording import words

# Frames in these folders are not the student's: torch, hookviz and the standard library's contextlib.
LIBRARY_DIRS = tuple(
    str(Path(p).resolve())
    for p in (
        Path(torch.__file__).parent,
        Path(__file__).parent.parent,
        Path(contextlib.__file__).parent,
    )
)


def student_frames(error: BaseException) -> list[traceback.FrameSummary]:
    """The frames of the traceback that run code from the notebook, not from a library."""
    frames = traceback.extract_tb(error.__traceback__)
    return [f for f in frames if not str(Path(f.filename).resolve()).startswith(LIBRARY_DIRS)]


def is_stub(error: NotImplementedError) -> bool:
    """True for the stub's own ``raise NotImplementedError()``, not one raised inside torch."""
    frames = traceback.extract_tb(error.__traceback__)
    return bool(frames) and frames[-1] in student_frames(error)


def failing_function(error: BaseException, fallback: str) -> str:
    """The name of the innermost student function the error passed through (else ``fallback``)."""
    for frame in reversed(student_frames(error)):
        if not frame.name.startswith("<"):  # <module>, <lambda>, <dictcomp>, <genexpr>...
            return frame.name
    return fallback


def unknown_name(error: NameError) -> str:
    """The name a NameError is about ('' when its message names none)."""
    found = re.match(r"name '(\w+)' is not defined", str(error))
    return found.group(1) if found else getattr(error, "name", "") or ""


def root_cause(error: BaseException) -> BaseException:
    """The original error behind wrappers such as ``hookviz.ApplyFnError`` (``raise ... from``)."""
    seen = {id(error)}
    while error.__cause__ is not None and id(error.__cause__) not in seen:
        error = error.__cause__
        seen.add(id(error))
    return error


def raised_text(error: BaseException) -> str:
    """'IndexError: tuple index out of range': the error's type and the first line of its message."""
    message = str(error).strip().splitlines()
    return f"{type(error).__name__}: {clip(message[0]) if message else words('checks.no_message')}"
