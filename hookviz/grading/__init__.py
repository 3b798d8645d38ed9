"""`hookviz grade`: merge answers into the instructor's notebook, run nbval in a sandbox, score, report."""
