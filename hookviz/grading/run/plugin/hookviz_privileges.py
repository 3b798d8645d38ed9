"""The privilege drop of every grading child: the one source for both places it runs.

The cold launcher (``plugin.LAUNCHER``, started by sandbox.py before it execs pytest) and the warm
start's forked child (hookviz_warm_start.run_submission) both call ``drop``. Standard library
only, loaded by path: neither process may import hookviz.
"""

from __future__ import annotations

import os

PR_SET_DUMPABLE = 4
PR_SET_NO_NEW_PRIVS = 38


def drop(spec: dict) -> None:
    """Resource limits, then the slot's unprivileged user (when given), then no new privileges.

    ``spec``: ``limits`` ({"RLIMIT_AS": bytes, ...}) and, when the grader is root, ``uid`` and
    ``gid``. Limits come first: once the user is dropped they could only be lowered.
    """
    import resource

    for name, value in spec["limits"].items():
        resource.setrlimit(getattr(resource, name), (value, value))
    if spec.get("uid") is not None:
        os.setgroups([])
        os.setgid(spec["gid"])
        os.setuid(spec["uid"])
    prctl(PR_SET_NO_NEW_PRIVS, 1)  # setuid programs gain nothing


def prctl(option: int, value: int) -> None:
    """prctl(2), where the C library has it (a no-op elsewhere)."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(option, value, 0, 0, 0)
    except Exception:
        pass
