"""The notebook format that building exercises and grading submissions both read (see course/__init__.py)."""
