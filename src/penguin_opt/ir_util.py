"""Small helpers over jaxlib's MLIR Python bindings (no IR of our own)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from jaxlib.mlir import ir

from .cli_common import native_stderr_captured

if TYPE_CHECKING:  # the rewrite module is imported where used
    from ._compat import rewrite

_LOC = re.compile(r'"([^"]*)":(\d+):(\d+)')  # the first file location, wherever nested
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"(:\d)?')  # a quoted name; group 2: a file's


def string_value(attr: ir.Attribute) -> str:
    """The text of a ``StringAttr`` or ``FlatSymbolRefAttr``. Bytes that are not UTF-8
    (MLIR allows ``@"f\\FF"``) come back as surrogate escapes instead of raising, so
    distinct names stay distinct."""
    if isinstance(attr, ir.StringAttr):
        return ir.StringAttr(attr).value_bytes.decode("utf-8", "surrogateescape")
    try:
        return ir.FlatSymbolRefAttr(attr).value
    except RuntimeError:  # nanobind's UTF-8 conversion: read the printed, escaped form
        printed = str(attr)[1:]  # @name or @"escaped name"
        if printed.startswith('"'):
            printed = printed[1:-1]
        raw = re.sub(rb"\\([0-9A-Fa-f]{2}|.)", _unescape, printed.encode())
        return raw.decode("utf-8", "surrogateescape")


def _unescape(match: re.Match) -> bytes:
    code = match.group(1)
    return bytes([int(code, 16)]) if len(code) == 2 else code


class UnreadableAttribute(Exception):
    """An attribute the Python bindings cannot hand out (e.g. a complex-typed dense
    elements attribute: its downcast raises), so an op carrying it cannot be rebuilt."""


def attrs_of(op: ir.Operation) -> dict[str, ir.Attribute]:
    """All attributes of an op (inherent and discardable) by name; raises
    :class:`UnreadableAttribute` when one cannot be read (nothing is changed then)."""
    attributes = op.attributes
    found = {}
    for name in attributes:
        try:
            found[name] = attributes[name]
        except TypeError:
            raise UnreadableAttribute(f"attribute '{name}' of '{op.name}'") from None
    return found


def create(
    name: str,
    results: Sequence[ir.Type],
    operands: Sequence[ir.Value],
    attributes: dict[str, ir.Attribute] | None,
    *,
    before: ir.Operation,
    loc: ir.Location | None = None,
    regions: int = 0,
) -> ir.Operation:
    """Create ``name`` immediately before ``before`` (the builder's insertion point)."""
    return ir.Operation.create(
        name,
        results=list(results),
        operands=list(operands),
        attributes=attributes or {},
        regions=regions,
        loc=loc if loc is not None else before.location,
        ip=ir.InsertionPoint(before),
    )


def replace_op(op: ir.Operation, values: Sequence[ir.Value]) -> None:
    """Redirect every use of ``op``'s results to ``values`` (RAUW), then erase ``op``."""
    for old, new in zip(op.results, values, strict=True):
        old.replace_all_uses_with(new)
    op.erase()


def has_uses(op: ir.Operation) -> bool:
    return any(True for r in op.results for _ in r.uses)


def defining_op_of(value: ir.Value) -> ir.Operation | None:
    """The op defining ``value`` (None for block arguments)."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    return owner.operation


def static_shape(t: ir.Type) -> tuple[int, ...] | None:
    """The shape of a ranked tensor type with only static dims, else None."""
    if not isinstance(t, ir.RankedTensorType):
        return None
    shaped = ir.RankedTensorType(t)
    if not shaped.has_static_shape:
        return None
    return tuple(shaped.shape)


class _NamedSource:
    """A source whose ops are located by a name rather than a position (HLO text: XLA's
    importer names each op after its instruction, ``loc("add.3")``)."""

    __slots__ = ("compute", "key", "positions")

    def __init__(self, key: int, compute: Callable[[], dict[str, tuple[int, int]]]) -> None:
        self.key = key  # which text (a hash: the text itself is not kept)
        self.compute: Callable[[], dict[str, tuple[int, int]]] | None = compute
        self.positions: dict[str, tuple[int, int]] | None = None

    def forget(self) -> None:
        self.compute = self.positions = None


# by the name diagnostics give the source (its path, "<stdin>", ...)
_NAMED_SOURCES: dict[str, _NamedSource] = {}
_NAMED_KEPT = 8  # sources whose positions are kept; older ones render without positions


def register_named_positions(
    source: str, text: str, positions: Callable[[], dict[str, tuple[int, int]]]
) -> None:
    """Name-only locations (``loc("add.3")``) of ops read from ``text`` render at
    ``positions()[name]`` in ``source`` (called at the first lookup). Two different
    texts given the same source name make it ambiguous: no positions for it from then on
    (never a wrong one); so does dropping the oldest source beyond the eight kept."""
    key = hash(text)
    known = _NAMED_SOURCES.get(source)
    if known is not None:
        if known.key != key:
            known.forget()
        return
    _NAMED_SOURCES[source] = _NamedSource(key, positions)
    kept = [s for s in _NAMED_SOURCES.values() if s.compute or s.positions is not None]
    for old in kept[:-_NAMED_KEPT]:
        old.forget()


def release_named_positions(source: str) -> None:
    """Forget ``source``'s registration: its ops are done with (a ``--split-input-file``
    chunk), so the next text given that name is not ambiguous."""
    _NAMED_SOURCES.pop(source, None)


def location_names(loc_text: str) -> list[str]:
    """The names of a location's text that name no file, in order, wherever nested
    (``loc("add.3")``; the ``"jit(f)/add"`` of ``loc("jit(f)/add"("x.py":3:4))``; both of
    ``loc("Conv2D:"("conv_a"))``, where newer XLA importers put TensorFlow's op_type
    around the op_name)."""
    return [m.group(1) for m in _STRING.finditer(loc_text) if m.group(2) is None]


_HLO_OPCODES = {  # where the HLO opcode is not the mnemonic with dashes
    "dot_general": "dot",
    "broadcast_in_dim": "broadcast",
    "case": "conditional",
    "if": "conditional",
    "count_leading_zeros": "clz",
    "population_count": "popcnt",
    "optimization_barrier": "opt-barrier",
}


def hlo_opcode(op_name: str) -> str:
    """The HLO opcode an MLIR op of ``op_name`` (``stablehlo.custom_call``) is imported
    from (``custom-call``)."""
    mnemonic = op_name.partition(".")[2]
    return _HLO_OPCODES.get(mnemonic, mnemonic.replace("_", "-"))


def named_position(source: str, name: str, kind: str | None = None) -> tuple[int, int] | None:
    """(line, column) of the op named ``name`` in ``source`` (see
    :func:`register_named_positions`), if known. A path of names (``call.1/add.3``: XLA's
    importer names the ops of a called computation after the call) is at its last name
    when every name in it is known."""
    known = _NAMED_SOURCES.get(source)
    if known is None:
        return None
    if known.positions is None:
        if known.compute is None:
            return None
        known.positions, known.compute = known.compute(), None
    positions = known.positions
    if name in positions:  # an instruction, or a metadata op_name ("jit(f)/add")
        return positions[name]
    if kind is not None:  # an op_name several instructions share: the one of this opcode
        found = positions.get(f"{name}\0{hlo_opcode(kind)}")
        if found is not None:
            return found
    if "/" in name:
        path = name.split("/")
        return positions.get(path[-1]) if all(p in positions for p in path) else None
    return positions.get(name)


def location_triple(loc: ir.Location) -> tuple[str, int, int] | None:
    """(file, line, column) of the first file location inside ``loc``, if any."""
    match = _LOC.search(str(loc))
    if match is None:
        return None
    return match.group(1), int(match.group(2)), int(match.group(3))


def i64_values(attr: ir.Attribute) -> list[int]:
    """Integers of a DenseI64ArrayAttr or a DenseIntElementsAttr (row-major)."""
    if isinstance(attr, ir.DenseI64ArrayAttr):
        return list(attr)
    if isinstance(attr, ir.DenseBoolArrayAttr):
        return [int(b) for b in ir.DenseBoolArrayAttr(attr)]
    import numpy as np

    from .elements import read_elements

    values = np.asarray(read_elements(attr)).reshape(-1)
    if values.dtype.kind == "b":
        return values.astype(np.int64).tolist()
    if values.dtype.kind in "iu" and values.dtype.isnative:
        return values.tolist()  # Python ints, as int() of each
    return [int(v) for v in values]


def ops_named(root: ir.Operation, names: Iterable[str]) -> list[ir.Operation]:
    """Every op under ``root`` whose name is in ``names``, in post-order (``root`` last).

    MLIR's name-dispatched walk driver does the walk in C++ and calls Python only at the
    ops named ``names`` (a Python ``walk`` callback would cost a call per op).
    """
    from ._compat import rewrite

    wanted = frozenset(names)
    found: list[ir.Operation] = []
    if not wanted:
        return found
    root = root.operation

    def record(op: ir.OpView, _rewriter: rewrite.PatternRewriter) -> bool:
        found.append(op.operation)
        return True  # "no match": the walk driver changes nothing

    patterns = rewrite.RewritePatternSet(root.context)
    for name in wanted:
        patterns.add(name, record)
    rewrite.walk_and_apply_patterns(root, patterns.freeze())  # strictly inside root
    if root.name in wanted:
        found.append(root)
    return found


def op_counts(root: ir.Operation) -> dict[str, int]:
    """How many ops of each name ``root`` holds, ``root`` itself and nested ops included.

    Counted by MLIR's ``print-op-stats`` pass, in C++ (no Python call per op), on
    ``root`` directly (it must be isolated from above, as a ``func.func`` is); where that
    is not possible, by a Python walk.
    """
    import json

    from jaxlib.mlir import passmanager

    root = root.operation
    try:
        pm = passmanager.PassManager.parse(
            f"{root.name}(print-op-stats{{json=true}})", context=root.context
        )
        pm.enable_verifier(False)
        with native_stderr_captured() as printed:
            pm.run(root)
        counts = json.loads(printed[0])
        if isinstance(counts, dict):
            return {str(k): int(v) for k, v in counts.items()}
    except (ValueError, ir.MLIRError):  # no such pass here, or not runnable on ``root``
        pass
    counted: dict[str, int] = {}

    def visit(op: ir.Operation) -> ir.WalkResult:
        counted[op.name] = counted.get(op.name, 0) + 1
        return ir.WalkResult.ADVANCE

    root.walk(visit)
    return counted


def first_op(root: ir.Operation, predicate: Callable[[ir.Operation], bool]) -> ir.Operation | None:
    """The first op under ``root`` (``root`` included, pre-order) ``predicate`` holds for."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if predicate(op):
            found.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found[0] if found else None


def ops_under(root: ir.Operation) -> list[ir.Operation]:
    """Every op strictly inside ``root`` (all kinds), post-order."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        found.append(op)
        return ir.WalkResult.ADVANCE

    for region in root.regions:
        for block in region.blocks:
            for op in block.operations:
                op.operation.walk(visit, ir.WalkOrder.POST_ORDER)
    return found


def functions(module: ir.Operation) -> list[ir.Operation]:
    """The module's top-level ``func.func`` ops, in order."""
    ops = (op.operation for op in module.regions[0].blocks[0].operations)
    return [op for op in ops if op.name == "func.func"]


def symbol_name(func: ir.Operation) -> str:
    return string_value(func.attributes["sym_name"])


def is_public(func: ir.Operation) -> bool:
    attributes = func.attributes
    return (
        "sym_visibility" not in attributes or string_value(attributes["sym_visibility"]) == "public"
    )


def entry_function(module: ir.Operation) -> tuple[ir.Operation | None, list[ir.Operation]]:
    """(the entry function: ``@main``, else the only public function, or None; the public
    functions). The seed's getMainFunction, and how a test file of one function runs."""
    funcs = functions(module)
    for f in funcs:
        if symbol_name(f) == "main":
            return f, [g for g in funcs if is_public(g)]
    public = [f for f in funcs if is_public(f)]
    return (public[0] if len(public) == 1 else None), public


__all__ = [
    "UnreadableAttribute",
    "attrs_of",
    "create",
    "defining_op_of",
    "entry_function",
    "first_op",
    "functions",
    "has_uses",
    "i64_values",
    "is_public",
    "location_triple",
    "named_position",
    "op_counts",
    "ops_named",
    "ops_under",
    "register_named_positions",
    "release_named_positions",
    "replace_op",
    "static_shape",
    "string_value",
    "symbol_name",
]
