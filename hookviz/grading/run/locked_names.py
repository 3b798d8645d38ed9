"""The names a notebook's locked cells bind, kept and bound back: run inside a student's kernel.

A check is written for the instructor's ``torch``, ``nn`` and model classes. An answer cell can
bind such a name again (by accident, or to hand the check an easier model), and the check would
then run on the student's object. The grading plugin sends this file's text to the kernel and
calls ``pin_names`` after each locked cell (the ids it returns stay with the plugin, out of the
kernel's reach) and ``restore_names`` before each check. Standard library and IPython only; kept
apart from the integrity probe so that each call compiles a few lines, not the whole probe.
"""

from __future__ import annotations

LOCKED_SLOT = "_hookviz_locked_names"  # where the kernel keeps the locked cells' objects (on sys)


def pin_names(config: dict) -> str:
    """After a locked cell ran: keep the objects ``config["names"]`` are bound to in the
    notebook; JSON ``ids``, name -> id, for the plugin to hold out of the kernel's reach."""
    import json
    import sys

    from IPython import get_ipython

    namespace = get_ipython().user_ns
    kept = vars(sys).setdefault(LOCKED_SLOT, {})
    ids = {}
    for name in config.get("names", ()):
        if name in namespace:
            kept[name] = namespace[name]
            ids[name] = id(namespace[name])
    return json.dumps({"ids": ids})


def restore_names(config: dict) -> str:
    """Before a check: bind each of ``config["pinned"]`` (name -> id) back to the object its
    locked cell made, where an answer rebound or deleted it. JSON ``restored`` (names) and
    ``problems`` (a kept object that is not the one pinned: the grader's record was changed)."""
    import json
    import sys

    from IPython import get_ipython

    namespace = get_ipython().user_ns
    kept = vars(sys).get(LOCKED_SLOT)
    kept = kept if type(kept) is dict else {}
    restored, problems = [], []
    absent = object()
    for name, pinned_id in config.get("pinned", {}).items():
        original = kept.get(name, absent)
        if id(original) != pinned_id:
            problems.append(f"the grader's record of the locked cells' {name} was changed")
            continue
        if namespace.get(name, absent) is not original:
            namespace[name] = original
            restored.append(name)
    return json.dumps({"restored": restored, "problems": problems})
