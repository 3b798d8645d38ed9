"""The instructor's tools: `hookviz build`, `new`, `run` and `import-nbgrader` (see course/__init__.py)."""
