"""Grading one submission: merge, the sandboxed nbval run, scoring, integrity, warm starts."""
