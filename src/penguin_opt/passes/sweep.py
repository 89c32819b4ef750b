"""The collect-then-mutate sweep shared by the rewriters of one pass run.

The seed's rewriters each walk the function post-order, collect the ops of their root kind
into a worklist, then mutate them. Running them one after another, each with its own walk,
is equivalent to one up-front post-order walk that fills a worklist per root op name, as
long as ops a rewriter creates are appended to the worklists of the rewriters that run
after it and ops it erases are skipped: :class:`Sweep` does exactly that, so the module is
walked once (by MLIR's name-dispatched walk driver) whatever the number of rewriters.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from jaxlib.mlir import ir

from .._compat import op_id, rewrite
from ..dialect import Dialect
from ..ir_util import create, defining_op_of, replace_op
from .base import RewriterStats, RunState, Severity


def collect(roots: Iterable[ir.Operation], names: Iterable[str]) -> dict[str, list[ir.Operation]]:
    """Post-order lists of the ops named ``names`` under ``roots`` (one walk per root)."""
    worklists: dict[str, list[ir.Operation]] = {name: [] for name in names}
    if not worklists:
        return worklists
    patterns = rewrite.RewritePatternSet(ir.Context.current)

    def record(op, _rewriter):
        op = op.operation
        worklists[op.name].append(op)
        return True  # "no match": the walk driver changes nothing

    for name in worklists:
        patterns.add(name, record)
    frozen = patterns.freeze()
    for root in roots:
        rewrite.walk_and_apply_patterns(root, frozen)
    return worklists


@dataclass
class Sweep:
    """State of one pass run over one function list."""

    dialect: Dialect
    pass_name: str
    state: RunState
    worklists: dict[str, list[ir.Operation]]
    # The bindings hand out a fresh Python object per access to an op; erasing through
    # one leaves the others dangling (touching them can crash the process). So every op
    # a rewriter may erase is reached through one canonical object per op, keyed by the
    # op's address (_compat.op_id; hash(op) changes when an operand or attribute does);
    # erasing invalidates that object, which is how is_erased() knows.
    _objects: dict[int, ir.Operation] = field(default_factory=dict)
    # Folded attributes by what they depend on (see penguin_rewriters._fold_key).
    folds: dict[tuple, ir.Attribute] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.worklists = {k: [self.canon(op) for op in v] for k, v in self.worklists.items()}

    def stats(self, rewriter: str) -> RewriterStats:
        return self.state.rewriter(self.pass_name, rewriter)

    def canon(self, op: ir.Operation | None) -> ir.Operation | None:
        """The one Python object this sweep uses for ``op``."""
        if op is None:
            return None
        key = op_id(op)
        known = self._objects.get(key)
        if known is None or self.is_erased(known):  # new, or an erased op's reused address
            self._objects[key] = op
            return op
        return known

    def defining_op(self, value: ir.Value) -> ir.Operation | None:
        return self.canon(defining_op_of(value))

    @staticmethod
    def is_erased(op: ir.Operation) -> bool:
        try:
            op_id(op)
        except RuntimeError:  # "the operation has been invalidated"
            return True
        return False

    def created(self, op: ir.Operation) -> ir.Operation:
        """Register a new op so later rewriters of its kind see it."""
        self._objects[op_id(op)] = op
        worklist = self.worklists.get(op.name)
        if worklist is not None:
            worklist.append(op)
        return op

    def create(self, mnemonic: str, results, operands, attributes, *, before, regions=0):
        op = create(
            self.dialect.op(mnemonic),
            results,
            operands,
            attributes,
            before=before,
            regions=regions,
        )
        return self.created(op)

    def erase(self, op: ir.Operation) -> None:
        # Through the canonical object (canon(op), forgotten), which erasing invalidates.
        op = self._objects.pop(op_id(op), op)
        op.erase()

    def replace(self, op: ir.Operation, values) -> None:
        for old, new in zip(op.results, values, strict=True):
            old.replace_all_uses_with(new)
        self.erase(op)

    def constant(self, attr: ir.Attribute, *, before: ir.Operation) -> ir.Operation:
        return self.create("constant", [attr.type], [], {"value": attr}, before=before)

    def warn(self, op: ir.Operation, message: str) -> None:
        self.state.emit(Severity.WARNING, op, message)

    def remark(self, op: ir.Operation, message: str) -> None:
        self.state.emit(Severity.REMARK, op, message)


__all__ = ["Sweep", "collect", "replace_op"]
