"""The trusted pytest plugin, loaded by path in the grading child (see hookviz_grading_plugin)."""
