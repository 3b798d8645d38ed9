"""`hookviz merge-manual`, and the pages and CSV `hookviz grade` writes for grading by hand."""
