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
from ..elements import type_key
from ..ir_util import replace_op, static_shape
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
    # The bindings hand out a fresh Python object per access to an op, and erasing through
    # one leaves the others dangling (touching them can crash the process). The worklists'
    # objects are the ones that outlive a rewrite, so an op is erased either through the
    # object its rewriter is visiting (``current``) or through the worklist's object for it
    # (``canonical``: found by the op's address, _compat.op_id, as hash(op) changes when an
    # operand or attribute does); erasing invalidates that object, which is how
    # is_erased() knows. Ops of kinds no worklist holds are erased through any object.
    current: ir.Operation | None = None
    # Per root op name, the worklist's live objects by address: built the first time an
    # op of that name is reached other than by visiting it (most runs never need one).
    _index: dict[str, dict[int, ir.Operation]] = field(default_factory=dict)
    # Folded attributes by what they depend on (see penguin_rewriters._fold_key).
    folds: dict[tuple, ir.Attribute] = field(default_factory=dict)
    # Attributes and types the rewriters build, by what they are built from (attributes
    # and types are uniqued per context: building one again gives the same one).
    memo: dict[tuple, object] = field(default_factory=dict)
    # Ops created since the rewrite being recorded began (remarks: None when not asked).
    created_log: list[ir.Operation] | None = None
    # type_info per type (types are uniqued: a type is its own key)
    _types: dict[ir.Type, tuple[str | None, tuple[int, ...] | None]] = field(default_factory=dict)
    # The dialect's op names by mnemonic (create() makes each name once).
    _names: dict[str, str] = field(default_factory=dict)
    # The objects erase() erased, by id() (kept alive, so no other object takes their id):
    # asking MLIR's bindings whether an erased op is valid raises, which costs ~10 us.
    _erased: dict[int, ir.Operation] = field(default_factory=dict)

    def stats(self, rewriter: str) -> RewriterStats:
        return self.state.rewriter(self.pass_name, rewriter)

    def canonical(self, op: ir.Operation, name: str | None = None) -> ir.Operation:
        """The object the worklists hold for ``op`` (named ``name``, if the caller knows;
        ``op`` itself when no worklist holds ops of its kind, or none holds this one)."""
        if not self.worklists:
            return op
        if name is None:
            name = op.name
        worklist = self.worklists.get(name)
        if worklist is None:
            return op
        index = self._index.get(name)
        if index is None:  # erased entries are invalidated; the live ones have addresses
            index = {op_id(o): o for o in worklist if not self.gone(o)}
            self._index[name] = index
        return index.setdefault(op_id(op), op)

    def type_info(self, t: ir.Type) -> tuple[str | None, tuple[int, ...] | None]:
        """(``t``'s element type key, ``t``'s static shape), read once per type per run:
        the key is None unless ``t`` is shaped, the shape None unless ``t`` is a ranked
        tensor type with static dims."""
        info = self._types.get(t)
        if info is None:
            key = type_key(ir.ShapedType(t).element_type) if isinstance(t, ir.ShapedType) else None
            info = self._types[t] = (key, static_shape(t))
        return info

    def producer(self, value: ir.Value, mnemonic: str) -> ir.Operation | None:
        """The op defining ``value`` if it is the dialect's ``mnemonic``, else None. The
        name comes from the op's Python class where it has one: no read of the IR."""
        owner = value.owner
        if isinstance(owner, ir.Block):
            return None
        name = getattr(type(owner), "OPERATION_NAME", None) or owner.name
        return owner.operation if name == self.op_name(mnemonic) else None

    def op_name(self, mnemonic: str) -> str:
        """The dialect's name of op ``mnemonic`` (made once per run)."""
        name = self._names.get(mnemonic)
        if name is None:
            name = self._names[mnemonic] = self.dialect.op(mnemonic)
        return name

    def gone(self, op: ir.Operation) -> bool:
        """Whether ``op`` (an object the worklists hold) was erased: through this sweep, or
        with an op whose regions held it."""
        return id(op) in self._erased or self.is_erased(op)

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
        if self.created_log is not None:
            self.created_log.append(op)
        if self.worklists:
            name = op.name if name is None else name
            worklist = self.worklists.get(name)
            if worklist is not None:
                worklist.append(op)
                index = self._index.get(name)
                if index is not None:
                    index[op_id(op)] = op
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
        name = self.op_name(mnemonic)
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

    def erase(self, op: ir.Operation, name: str | None = None) -> None:
        """Erase ``op`` (named ``name``, if the caller knows) through the object the sweep
        knows it by (see ``current``)."""
        if op is not self.current:
            op = self.canonical(op, name)
        if self._index:
            index = self._index.get(op.name if name is None else name)
            if index is not None:
                index.pop(op_id(op), None)
        op.erase()
        self._erased[id(op)] = op

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
