"""`hookviz grade` and the commands around it, laid out by command over a shared core.

Find a command's code by its name:

    command                              folder      modules
    hookviz grade SUBMISSIONS            grade/      batch.py (local, -j), cluster.py (--scheduler)
    hookviz grade --assignment FOLDER    grade/      folder.py
    hookviz merge-manual OUT CSV         manual/     merge_manual.py (the pages and CSV: sheets.py)
    hookviz export gradescope            platforms/  gradescope_export.py, gradescope_autograder.py
    hookviz gradebook OUT --canvas       platforms/  canvas.py
    hookviz report OUT                   report/     write.py, analysis.py, figures.py, page.py,
                                                     similarity.py

What every command shares:

    core/    the assignment and the merge of a submission into it (merge.py), how an nbgrader
             test cell of bare asserts runs and scores (bare_checks.py), submissions,
             the result types (results.py), the out folder and gradebook (gradebook.py,
             combined.py) and the feedback (feedback.py)
    run/     grading one submission: engine.py (read, merge, run, score), nbval_child.py (the
             sandboxed `pytest --nbval`), scoring.py, sandbox.py, warm_kernel.py, probe.py,
             locked_names.py and flags.py (integrity), selfcheck.py (the solution scores full
             marks), and plugin/, the code that runs inside the sandbox, loaded there by path

Imports point down only: grade/ -> manual/ -> platforms/, report/ -> run/ -> core/
(tests/grading/test_layout.py keeps it so). Grading never imports widgets.
"""
