"""The one protocol every rewriter of every pass follows.

A rewriter is one seed function (``fuseIotaSort``, ..., ``explicitlyPad``,
``explicitlyStride``): it names its root op kind, declares whether its output is bit-exact
or re-associates arithmetic, and ``rewrite``\\ s one op of that kind, returning ``None``
when it rewrote the op or the reason it left the op alone (MLIR's ``matchAndRewrite`` with
``notifyMatchFailure``: the match and the rewrite are one step, so nothing is read twice).
A pass's ``run`` is a loop over its ordered table of rewriters; a rewriter that needs its
own walk (``root = None``) owns it by overriding ``run_on``. Every outcome is counted in
one place, :meth:`Rewriter.record`, which is what ``--pass-statistics`` reports.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from jaxlib.mlir import ir

from ..ir_util import UnreadableAttribute
from .base import RewriterStats
from .sweep import Sweep


class Rewriter:
    """One seed rewriter: ``rewrite`` each op of kind ``root``, in walk order."""

    name: ClassVar[str]  # the seed's function name
    root: ClassVar[str | None]  # op mnemonic the seed's walk collects (None: owns its walk)
    # True: the output computes the same values bit for bit (folds, structural edits);
    # False: it re-associates arithmetic (a float result may move by rounding).
    exact: ClassVar[bool] = True
    # False: bit-exact as the spec defines it, but XLA may compile the output into another
    # summation order than the input (a convolution of a pad against one with padding)
    exact_on_xla: ClassVar[bool] = True

    def run_on(self, functions: list[ir.Operation], sweep: Sweep) -> None:
        """The rewriter's turn in a pass run: its root ops, as the sweep collected them."""
        self.run(sweep.worklists[sweep.dialect.op(self.root)], sweep)

    def run(self, ops: list[ir.Operation], sweep: Sweep) -> None:
        # Snapshot: like the seed's own walk, a rewriter never visits ops it creates
        # (they are appended to the shared worklists for the rewriters after it).
        self.visit_each(ops[: len(ops)], sweep, sweep.stats(self.name))

    def visit_each(self, ops: Iterable[ir.Operation], sweep: Sweep, stats: RewriterStats) -> None:
        """Rewrite each collected op of ``ops`` (unless an earlier rewrite erased it), in
        order, and count it."""
        recorder = sweep.state.recorder
        rewrite, gone, record = self.rewrite, sweep.gone, self.record
        for op in ops:
            if gone(op):
                continue
            if recorder is not None:
                seen, sweep.created_log = recorder.before(op), []
            sweep.current = op  # the worklist's object: erased through itself
            try:
                reason = rewrite(op, sweep)
            except UnreadableAttribute:  # raised before any change: the op stays as it is
                reason = "attribute-not-readable"
            record(stats, reason)
            if recorder is not None:
                recorder.add(sweep.pass_name, self.name, seen, reason, sweep.created_log)
                sweep.created_log = None

    @staticmethod
    def record(stats: RewriterStats, reason: str | None) -> None:
        """Count one matched op: rewritten (``reason`` None) or skipped for ``reason``."""
        stats.matched += 1
        if reason is None:
            stats.rewritten += 1
        else:
            stats.skip(reason)

    def rewrite(self, op: ir.Operation, sweep: Sweep) -> str | None:  # pragma: no cover
        """Rewrite ``op`` in place; None if rewritten, else why it was left alone."""
        raise NotImplementedError


__all__ = ["Rewriter"]
