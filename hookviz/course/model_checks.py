"""The checks that inspect what an answer did to a model, a trace or autograd's graph.

``checks.Check`` inherits them: each asks ``inspections`` for ``(problem, hint)`` (what is
wrong, in words, and the hint for that mistake) and reports a ✓ or a ✗ through the check's
``Lines``. They are the likeliest mistakes, diagnosed: hooks left behind, parameters that no
longer train, hooks in the wrong place, writes through ``.data``, a result still tied to the
graph it came from.
"""

from __future__ import annotations

from typing import Any

import torch

from . import inspections
from .diagnose import Hint
from .lines import STOPPED, Lines
from .wording import words


class ModelChecks:
    """The diagnosed checks of a ``Check`` (it provides ``lines`` and ``stopped``)."""

    lines: Lines
    stopped: bool

    def no_hooks_left(
        self,
        model: torch.nn.Module,
        claim: str | None = None,
        *,
        keep: tuple[Any, ...] = (),
        hint: str | Hint | None = None,
        stop: bool = False,
    ) -> bool:
        """✓ when no module, parameter or global hook is left on ``model``, but the handles in ``keep``.

        ``keep`` holds the handles of hooks the model had before the answer ran; a ✗ lists
        what is left, the root by name. Global hooks (``register_module_forward_hook`` and
        its siblings) fire on every module of every model, so they count too, and the check
        removes those it finds: they would fire in every later cell. ``hint`` replaces the
        hint (say, for hooks registered too early).
        """
        if self.stopped:
            return False
        problem, found = inspections.hooks_left(model, keep, hint)
        claim = claim or words("checks.claim_no_hooks_left")
        return self.lines.report(problem, claim, found, stop=stop)

    def trainable(
        self,
        model: torch.nn.Module,
        claim: str | None = None,
    ) -> bool:
        """✓ when every parameter of ``model`` requires grad and one SGD step changes it.

        The step is undone afterwards (values and ``.grad`` as they were).
        """
        if self.stopped:
            return False
        problem, found = inspections.untrainable(model)
        return self.lines.report(problem, claim or words("checks.claim_trainable"), found)

    def forward_hooks_on(
        self, model: torch.nn.Module, paths: list[str], claim: str, hint: str | Hint
    ) -> bool:
        """✓ when ``model`` has exactly one forward hook on each of ``paths`` and no other hook.

        A ✗ names what is wrong: the wrong kind (a pre-hook), extra modules (the root by name),
        missing modules, or copies registered twice.
        """
        if self.stopped:
            return False
        problem, found = inspections.forward_hooks_wrong(model, paths, hint)
        return self.lines.report(problem, claim, found)

    def watching_outputs(self, model: torch.nn.Module) -> inspections.OutputWatch:
        """For a with block: every module's output is watched while it runs, what forward made
        and what the model computed on after the hooks ran; the watch's hooks go at its end.
        (A plain class, not contextlib's wrapper: the grader pins this module's functions.)"""
        return inspections.OutputWatch(model)

    def outputs_handed_on(
        self, watch: inspections.OutputWatch, model: torch.nn.Module, claim: str
    ) -> bool:
        """✓ when no hook replaced a module's output while ``watch`` ran: hooks that record
        what they see return nothing. A ✗ names the modules, the root by name."""
        if self.stopped:
            return False
        problem, found = inspections.outputs_replaced(watch, type(model).__name__)
        return self.lines.report(problem, claim, found)

    def writes_each_parameter_once(
        self, trace: Any, claim: str | None = None, *, only: list[str] | None = None
    ) -> bool:
        """✓ when the ``hv.trace_apply`` trace wrote every parameter (of ``only``, names, when
        given) once; a ✗ says which, how often, where."""
        if self.stopped or trace is STOPPED:
            return False
        problem, found = inspections.parameter_writes_wrong(trace, only)
        return self.lines.report(problem, claim or words("checks.claim_written_once"), found)

    def no_writes_through_data(self, trace: Any, claim: str | None = None) -> bool:
        """✓ when no parameter change in the trace went through ``.data``."""
        if self.stopped or trace is STOPPED:
            return False
        problem, found = inspections.writes_through_data(trace)
        return self.lines.report(problem, claim or words("checks.claim_no_data"), found)

    def same_parameter_objects(
        self, model: torch.nn.Module, originals: list[torch.Tensor], claim: str
    ) -> bool:
        """✓ when ``model``'s parameters are still the objects in ``originals`` (changed in place)."""
        if self.stopped:
            return False
        problem, found = inspections.replaced_parameters(model, originals)
        return self.lines.report(problem, claim, found)

    def no_path_back(
        self, result: Any, sources: dict[str, torch.Tensor], claim: str, hint: str | Hint
    ) -> bool:
        """✓ when autograd's graph leads from ``result`` back to none of ``sources`` (a name
        for each tensor): the result holds values of its own, not a path into the graph
        that made them. A ✗ names the sources a backward pass from it would reach."""
        if self.stopped or result is STOPPED:
            return False
        named = {self.lines.kernel.translated(name): tensor for name, tensor in sources.items()}
        problem = inspections.path_back(result, named)
        return self.lines.report(problem, claim, hint)
