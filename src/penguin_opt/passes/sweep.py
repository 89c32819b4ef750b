"""The collect-then-mutate sweep shared by the rewriters of one pass run.

The seed's rewriters each walk the function post-order, collect the ops of their root kind
into a worklist, then mutate them. Running them one after another, each with its own walk,
is equivalent to one up-front post-order walk that fills a worklist per root op name, as
long as ops a rewriter creates are appended to the worklists of the rewriters that run
after it and ops it erases are skipped: :class:`Sweep` does exactly that, so the module is
walked once (by MLIR's name-dispatched walk driver) whatever the number of rewriters.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from jaxlib.mlir import ir

from .._compat import op_id, rewrite
from ..dialect import Dialect
from ..ir_util import defining_op_of, replace_op
from .base import RewriterStats, RunState, Severity


def collect(roots: Iterable[ir.Operation], names: Iterable[str]) -> dict[str, list[ir.Operation]]:
    """Post-order lists of the ops named ``names`` under ``roots`` (one walk per root)."""
    worklists: dict[str, list[ir.Operation]] = {name: [] for name in names}
    if not worklists:
        return worklists
    patterns = rewrite.RewritePatternSet(ir.Context.current)

    def recorder(
        append: Callable[[ir.Operation], None],
    ) -> Callable[[ir.OpView, rewrite.PatternRewriter], bool]:
        def record(op: ir.OpView, _rewriter: rewrite.PatternRewriter) -> bool:
            append(op.operation)
            return True  # "no match": the walk driver changes nothing

        return record

    for name, worklist in worklists.items():  # one callback per name: no name lookup per op
        patterns.add(name, recorder(worklist.append))
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
    # Attributes and types the rewriters build, by what they are built from (attributes
    # and types are uniqued per context: building one again gives the same one).
    memo: dict[tuple, object] = field(default_factory=dict)
    # Ops created since the rewrite being recorded began (remarks: None when not asked).
    created_log: list[ir.Operation] | None = None

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
            op.attached  # noqa: B018 (any accessor raises for an invalidated object)
        except RuntimeError:  # "the operation has been invalidated"
            return True
        return False

    def created(self, op: ir.Operation, name: str | None = None) -> ir.Operation:
        """Register a new op (named ``name``, if the caller knows) so later rewriters of
        its kind see it."""
        self._objects[op_id(op)] = op
        if self.created_log is not None:
            self.created_log.append(op)
        worklist = self.worklists.get(op.name if name is None else name)
        if worklist is not None:
            worklist.append(op)
        return op

    def create(
        self,
        mnemonic: str,
        results: Sequence[ir.Type],
        operands: Sequence[ir.Value],
        attributes: dict[str, ir.Attribute],
        *,
        before: ir.Operation,
        regions: int = 0,
        at: tuple[ir.Location, ir.InsertionPoint] | None = None,
    ) -> ir.Operation:
        """Create ``mnemonic`` of the dialect right before ``before``, at its location;
        ``at``: that location and insertion point, when the caller makes several ops
        there."""
        name = self.dialect.op(mnemonic)
        loc, ip = at or (before.location, ir.InsertionPoint(before))
        op = ir.Operation.create(
            name,
            results=results,
            operands=operands,
            attributes=attributes,
            regions=regions,
            loc=loc,
            ip=ip,
        )
        return self.created(op, name)

    def erase(self, op: ir.Operation) -> None:
        # Through the canonical object (canon(op), forgotten), which erasing invalidates.
        op = self._objects.pop(op_id(op), op)
        op.erase()

    def replace(self, op: ir.Operation, values: Sequence[ir.Value]) -> None:
        if len(values) == 1:
            op.result.replace_all_uses_with(values[0])  # raises unless one result
        else:
            for old, new in zip(op.results, values, strict=True):
                old.replace_all_uses_with(new)
        self.erase(op)

    def constant(
        self,
        attr: ir.Attribute,
        *,
        before: ir.Operation,
        type: ir.Type | None = None,
        at: tuple[ir.Location, ir.InsertionPoint] | None = None,
    ) -> ir.Operation:
        """A constant of ``attr`` (of ``type``: its type, if the caller has it)."""
        return self.create(
            "constant",
            [attr.type if type is None else type],
            [],
            {"value": attr},
            before=before,
            at=at,
        )

    def warn(self, op: ir.Operation, message: str) -> None:
        self.state.emit(Severity.WARNING, op, message)

    def remark(self, op: ir.Operation, message: str) -> None:
        self.state.emit(Severity.REMARK, op, message)


__all__ = ["Sweep", "collect", "replace_op"]
