"""The course, by audience.

What students' notebooks import sits here, at the top (``from hookviz.course import checks``):

    checks.py        the check cells' ✓ / ✗ (Check and its parts), hints in levels, the sentinel
    diagnose.py      named mistakes and their hints; values.py, tracebacks.py: what a ✗ shows
    content.py       where a notebook finds the course's hints/ and predictions/ (the course's
                     files, or what `hookviz build` packed into the notebook)
    hint_files.py    an assignment's hints in levels; predictions.py: predict-then-run
    conventions.py   the vocabulary the checks print and the grader reads (marks, outcomes, flags)

The instructor's tools, which students never import:

    authoring/       `hookviz build` (build.py, stamp.py), `new` (scaffold.py), `run`
                     (execute.py), `import-nbgrader` (nbgrader_import.py)
    format/          the notebook format both building and grading read: cells and their roles
                     (notebooks.py), solution and hidden-test regions (regions.py), and the
                     notebook steps build and the grader share (steps.py)
"""
