"""The penguin-form sort: ``sort(%data)`` with two results, made by fuseIotaSort.

fuseIotaSort drops the iota index operand of an argsort: ``sort(%data, iota)`` becomes
``sort(%data)`` whose results are unchanged (result 0 = sorted data, result 1 = the
positions along the sort dimension, permuted alongside the data; the comparator keeps its
four block arguments). The stock SortOp verifier rejects this form, so this module:

* detects it (:func:`is_penguin_sort`),
* re-expands it with its index ramp (:func:`expand`), which gives back exactly the program
  before fuseIotaSort; executing that is what the penguin form means,
* verifies a module by verifying an expanded clone (:func:`verify`),
* reads it back from text (:func:`parse_allowing_penguin_sorts`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from jaxlib.mlir import ir

from .cli_common import shown_name
from .ir_util import attrs_of, create, defining_op_of, has_uses, ops_named, replace_op

SORT_NAMES = ("mhlo.sort", "stablehlo.sort")
_UNVERIFIED_PREFIX = "penguin_unverified."


def is_penguin_sort(op: ir.Operation) -> bool:
    return op.name in SORT_NAMES and len(op.operands) + 1 == len(op.results)


def penguin_sorts(root: ir.Operation) -> list[ir.Operation]:
    return [op for op in ops_named(root, SORT_NAMES) if is_penguin_sort(op)]


def sort_dimension(sort: ir.Operation, attributes: dict[str, ir.Attribute] | None = None) -> int:
    """The sort's dimension, non-negative: the attribute is optional (default -1, the last
    dimension) and may count from the end. ``attributes``: the sort's, if read already."""
    attributes = sort.attributes if attributes is None else attributes
    dim = int(ir.IntegerAttr(attributes["dimension"]).value) if "dimension" in attributes else -1
    if dim < 0:
        dim += ir.ShapedType(sort.results[0].type).rank
    return dim


def fusion_skip_reason(
    sort: ir.Operation,
    producer: Callable[[ir.Value, str], ir.Operation | None] | None = None,
) -> tuple[str, None] | tuple[None, ir.Operation]:
    """(why fuseIotaSort leaves ``sort`` alone or None, the iota it would drop). It fuses
    ``sort(%data, %iota)`` whose iota counts along the sort dimension. ``producer(value,
    "iota")``: the op defining ``value`` if it is an iota of the sort's dialect, else None
    (a pass's sweep has one that reads no name)."""
    operands = sort.operands
    if len(operands) != 2:
        return "not-two-operands", None
    if producer is None:
        iota = defining_op_of(operands[1])
        if iota is not None and iota.name != f"{sort.name.split('.')[0]}.iota":
            iota = None
    else:
        iota = producer(operands[1], "iota")
    if iota is None:
        return "operand-1-not-iota", None
    if int(ir.IntegerAttr(iota.attributes["iota_dimension"]).value) != sort_dimension(sort):
        return "iota-dimension-mismatch", None
    return None, iota


def fuse(
    sort: ir.Operation,
    iota: ir.Operation,
    *,
    replace: Callable[[ir.Operation, Sequence[ir.Value]], None] = replace_op,
    erase: Callable[[ir.Operation], None] = ir.Operation.erase,
) -> ir.Operation:
    """The penguin form of ``sort(%data, %iota)``: ``sort(%data)``; the iota is erased
    when nothing else uses it. ``replace``/``erase``: how the caller edits (a sweep's)."""
    new = rebuild_sort(sort, [sort.operands[0]], replace=replace)
    if not has_uses(iota):
        erase(iota)
    return new


def rebuild_sort(
    sort: ir.Operation,
    operands: list[ir.Value],
    name: str | None = None,
    *,
    replace: Callable[[ir.Operation, Sequence[ir.Value]], None] = replace_op,
    attributes: dict[str, ir.Attribute] | None = None,
) -> ir.Operation:
    """A sort with ``operands``, ``sort``'s results, attributes (or ``attributes``) and
    comparator, named ``name`` (default: ``sort``'s); replaces it (through
    ``replace(old, values)``: a pass's sweep passes its own, which erases through the op's
    canonical object)."""
    new = create(
        name or sort.name,
        [r.type for r in sort.results],
        operands,
        attrs_of(sort) if attributes is None else attributes,
        before=sort,
        regions=1,
    )
    _move_comparator(sort, new)
    replace(sort, list(new.results))
    return new


def _move_comparator(src: ir.Operation, dst: ir.Operation) -> None:
    """Move the comparator region's blocks of sort ``src`` to sort ``dst`` (whose region is
    empty): one block in any sort that verifies, none or several in one that does not
    (penguin-form sorts reach the verifier only through their expansion)."""
    region = dst.regions[0]
    for block in list(src.regions[0].blocks):
        block.append_to(region)


def expand(root: ir.Operation) -> int:
    """Re-insert the index ramp of every penguin-form sort under ``root``; returns the count."""
    expanded: list[tuple[ir.Operation, ir.Operation]] = []
    expand_sorts(penguin_sorts(root), expanded)
    return len(expanded)


def expand_sorts(
    sorts: list[ir.Operation], expanded: list[tuple[ir.Operation, ir.Operation]]
) -> None:
    """Expand each of ``sorts`` (penguin form), appending (expanded sort, iota) pairs."""
    for sort in sorts:
        prefix = sort.name.split(".")[0]
        dim = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), sort_dimension(sort))
        index_type = sort.results[len(sort.operands)].type
        iota = create(f"{prefix}.iota", [index_type], [], {"iota_dimension": dim}, before=sort)
        expanded.append((rebuild_sort(sort, [*sort.operands, iota.result]), iota))


def fuse_back(expanded: list[tuple[ir.Operation, ir.Operation]]) -> None:
    """Undo :func:`expand_sorts`: the same sorts in penguin form, their iotas erased."""
    for sort, iota in expanded:
        rebuild_sort(sort, list(sort.operands)[:-1])
        iota.erase()


def verify(module_op: ir.Operation, known: list[ir.Operation] | None = None) -> None:
    """MLIR's verifier, reading penguin-form sorts as their expanded meaning.

    Raises ``ir.MLIRError`` with MLIR's own diagnostics on failure. Each penguin-form sort
    is swapped for its expansion for the verifier and swapped back afterwards (the module
    is left exactly as it was, the sorts the very same ops): cheaper in time and memory
    than verifying an expanded clone, and than rebuilding each sort twice.

    ``known``: penguin-form sorts of the module the caller has at hand (objects no edit
    has invalidated), to spare the walk that finds them. Only a verification that passes
    is taken on trust: any penguin-form sort left out of ``known`` fails MLIR's verifier,
    so on failure the module is verified again with every one found by a walk.
    """
    if known is not None:
        try:
            _verify_swapping(module_op, known)
            return
        except ir.MLIRError:
            pass
    _verify_swapping(module_op, penguin_sorts(module_op))


def _verify_swapping(module_op: ir.Operation, sorts: list[ir.Operation]) -> None:
    if not sorts:
        module_op.verify()
        return
    swapped: list[tuple[ir.Operation, ir.Operation, ir.Operation]] = []
    try:
        _swap_in_expansions(sorts, swapped)
        module_op.verify()
    finally:
        _swap_back(swapped)


def _swap_in_expansions(
    sorts: list[ir.Operation], swapped: list[tuple[ir.Operation, ir.Operation, ir.Operation]]
) -> None:
    """Put the expansion of each of ``sorts`` (penguin form) in its place: an iota and a
    sort of the same results, attributes and comparator (moved over), with the uses of the
    sort's results; the sort itself is detached (kept, to come back). Appends (penguin
    sort, expanded sort, iota) to ``swapped`` as each swap completes."""
    i64 = ir.IntegerType.get_signless(64)
    dims: dict[int, ir.Attribute] = {}
    for sort in sorts:
        # Everything is read before anything is created: a read that raises leaves the
        # module as it was.
        name = sort.name
        attributes = attrs_of(sort)
        results = sort.results
        types = list(results.types)
        dim = sort_dimension(sort, attributes)
        if dim not in dims:
            dims[dim] = ir.IntegerAttr.get(i64, dim)
        operands = list(sort.operands)
        iota = create(
            f"{name.split('.')[0]}.iota",
            [types[len(operands)]],
            [],
            {"iota_dimension": dims[dim]},
            before=sort,
        )
        expanded = create(name, types, [*operands, iota.result], attributes, before=sort, regions=1)
        _move_comparator(sort, expanded)
        for old, new in zip(results, expanded.results, strict=True):
            old.replace_all_uses_with(new)
        sort.detach_from_parent()
        swapped.append((sort, expanded, iota))


def _swap_back(swapped: list[tuple[ir.Operation, ir.Operation, ir.Operation]]) -> None:
    """Undo :func:`_swap_in_expansions`: each penguin sort back in its place, with its
    comparator and uses; the expansions and their iotas erased."""
    for sort, expanded, iota in swapped:
        ir.InsertionPoint(expanded).insert(sort)
        _move_comparator(expanded, sort)
        for old, new in zip(expanded.results, sort.results, strict=True):
            old.replace_all_uses_with(new)
        expanded.erase()
        iota.erase()


_SORT_TEXT = re.compile(r'"(mhlo|stablehlo)\.sort"\(')
_PROPS = re.compile(r"<(\{.*\})>")


def parse_allowing_penguin_sorts(text: str | bytes, source_name: str) -> ir.Operation:
    """Parse a module whose sorts may be in penguin form (the stock parser rejects them).

    Tries the ordinary (verifying) parse first; if that fails and the text has sorts, the
    sorts are parsed as unregistered ops, rebuilt as real sorts, and the module is verified
    with :func:`verify`. Any other error is MLIR's own.
    """
    try:
        return parse_text(text, source_name)
    except ir.MLIRError:
        if isinstance(text, bytes):  # bytecode: penguin sorts travel as stand-ins
            if _UNVERIFIED_PREFIX.rstrip(".").encode() not in text:
                raise
            renamed = text
        elif _SORT_TEXT.search(text):
            renamed = _SORT_TEXT.sub(lambda m: f'"{_UNVERIFIED_PREFIX}{m.group(1)}_sort"(', text)
        else:
            raise
        first_error = __import__("sys").exc_info()[1]
    ctx = ir.Context.current
    allowed = ctx.allow_unregistered_dialects
    ctx.allow_unregistered_dialects = True
    try:
        try:
            module = parse_text(renamed, source_name)
        except ir.MLIRError:
            raise first_error from None
        stand_ins = ops_named(module, _STAND_IN_NAMES)
        if not all(len(op.regions) == 1 and not len(op.successors) for op in stand_ins):
            raise first_error from None  # no sort has other regions or successors
        for op in stand_ins:
            _restore_sort(op)
    finally:
        ctx.allow_unregistered_dialects = allowed
    verify(module)
    return module


_STAND_IN_NAMES = tuple(f"{_UNVERIFIED_PREFIX}{p}_sort" for p in ("mhlo", "stablehlo"))


def to_bytecode(module_op: ir.Operation) -> bytes:
    """MLIR bytecode of the module; penguin-form sorts are written as unregistered
    stand-ins (bytecode readers verify, and the stock verifier rejects the form), which
    :func:`parse_allowing_penguin_sorts` turns back into sorts."""
    import io

    sorts = penguin_sorts(module_op)
    target = module_op.clone() if sorts else module_op
    try:
        for sort in penguin_sorts(target) if sorts else ():
            prefix = sort.name.split(".")[0]
            rebuild_sort(sort, list(sort.operands), f"{_UNVERIFIED_PREFIX}{prefix}_sort")
        buffer = io.BytesIO()
        target.write_bytecode(buffer)
        return buffer.getvalue()
    finally:
        if sorts:
            target.erase()


def parse_text(text: str | bytes, source_name: str) -> ir.Operation:
    """Parse like mlir-opt: a lone ``module`` as is, anything else in an implicit module.

    The implicit-module path (MLIR's ``Module.parse``) names the buffer ``-``; diagnostics
    substitute the real source name for it. Except for a single op other than a module in
    text with resources (``{-# dialect_resources ... #-}``): that op is put in a module at
    ``source_name:0:0``, as mlir-opt does, not parsed again, since a second parse in the
    context would rename the resources the first one registered (``dense_resource<w>``
    -> ``w_1``); its locations name ``source_name``.
    """
    if isinstance(text, bytes):  # bytecode: no source name to give
        return ir.Module.parse(text).operation
    source_name = shown_name(source_name)  # (MLIR takes UTF-8 names only)
    try:
        op = ir.Operation.parse(text, source_name=source_name).operation
    except ir.MLIRError as err:
        if "single top-level operation" not in str(err):
            raise
        return ir.Module.parse(text).operation
    if op.name == "builtin.module":
        return op
    if "dialect_resources" not in text:
        return ir.Module.parse(text).operation
    module = ir.Module.create(loc=ir.Location.file(source_name, 0, 0))
    module.body.append(op)
    return module.operation


def _restore_sort(op: ir.Operation) -> None:
    """Turn an unregistered stand-in back into the real sort, properties included."""
    # Printed from a detached copy: printing an op in place numbers the values of its whole
    # function first (even with use_local_scope), so reading back n sorts would cost
    # O(n * function size). Only the properties are read from the text.
    copy = op.clone()
    try:
        header = copy.get_asm(print_generic_op_form=True, skip_regions=True)
    finally:
        copy.erase()
    attributes = attrs_of(op)
    props = _PROPS.search(header.split("\n", 1)[0])
    if props:
        inherent = ir.DictAttr(ir.Attribute.parse(props.group(1)))
        for i in range(len(inherent)):
            named = inherent[i]
            attributes[named.name] = named.attr
    prefix = op.name[len(_UNVERIFIED_PREFIX) : -len("_sort")]
    rebuild_sort(op, list(op.operands), f"{prefix}.sort", attributes=attributes)


__all__ = [
    "SORT_NAMES",
    "expand",
    "expand_sorts",
    "fuse",
    "fuse_back",
    "fusion_skip_reason",
    "is_penguin_sort",
    "parse_allowing_penguin_sorts",
    "parse_text",
    "penguin_sorts",
    "rebuild_sort",
    "sort_dimension",
    "to_bytecode",
    "verify",
]
