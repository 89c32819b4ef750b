"""XLA's own ops of an optimized HLO dump as the StableHLO they compute.

XLA's optimized HLO (``lowered.compile().as_text()``, ``*after_optimizations*`` dumps)
reads in as MHLO with ops no oracle runs and no converter legalizes: ``mhlo.fusion`` (a
fused computation), ``mhlo.copy`` (a layout change) and ``mhlo.bitcast`` (the same bytes
in another shape or layout). The checker and ``--emit=executable`` replace them by what
they mean (:func:`unfuse`).
"""

from __future__ import annotations

from jaxlib.mlir import ir

from .ir_util import ops_named

__all__ = ["UnrunnableOp", "unfuse"]


class UnrunnableOp(ValueError):
    """An op :func:`unfuse` has no StableHLO form for (the message names it and its
    types)."""


def unfuse(module: ir.Operation) -> None:
    """In place: ``mhlo.fusion`` becomes its body, ``mhlo.copy`` its operand, and
    ``mhlo.bitcast`` the reshape of the operand's elements in memory order (see
    :func:`_bitcast`). Raises :class:`UnrunnableOp` for a bitcast between element types
    of different widths, the module then partly rewritten (callers work on a copy)."""
    names = ("mhlo.fusion", "mhlo.copy", "mhlo.bitcast")
    for op in ops_named(module, names):  # inner ones first
        if op.name == "mhlo.copy":
            op.result.replace_all_uses_with(op.operands[0])
        elif op.name == "mhlo.bitcast":
            op.result.replace_all_uses_with(_bitcast(op))
        else:
            block = op.regions[0].blocks[0]
            for argument, operand in zip(block.arguments, op.operands, strict=True):
                argument.replace_all_uses_with(operand)
            *body, terminator = block.operations
            for inner in body:
                inner.move_before(op)
            for result, value in zip(op.results, terminator.operands, strict=True):
                result.replace_all_uses_with(value)
        op.erase()


def _bitcast(op: ir.Operation) -> ir.Value:
    """XLA's ``bitcast``: the operand's elements in the order its layout keeps them in
    memory, read as the result in the result's layout. As StableHLO: transpose the operand
    to memory order (major to minor), reshape, reinterpret the bits when the element type
    changes (``bitcast_convert``, same width: XLA's sort comparators bitcast f32 to s32),
    transpose back from the result's memory order. A layout left out is the default one,
    row-major (``minor_to_major`` = n-1..0)."""
    source = op.operands[0]
    source_type = ir.RankedTensorType(source.type)
    result_type = ir.RankedTensorType(op.result.type)
    source_element, result_element = source_type.element_type, result_type.element_type
    width = getattr(source_element, "width", None)
    if (
        source_element != result_element
        and (width is None or width != getattr(result_element, "width", None))
    ) or not (source_type.has_static_shape and result_type.has_static_shape):
        raise UnrunnableOp(f"cannot execute 'mhlo.bitcast' from {source_type} to {result_type}")
    attributes = op.attributes

    def major_to_minor(name: str, rank: int) -> list[int]:
        if name not in attributes:
            return list(range(rank))
        return [int(v) for v in ir.DenseIntElementsAttr(attributes[name])][::-1]

    def transpose(value: ir.Value, permutation: list[int], element: ir.Type) -> ir.Value:
        if permutation == sorted(permutation):
            return value
        shape = ir.RankedTensorType(value.type).shape
        result = ir.RankedTensorType.get([shape[p] for p in permutation], element)
        perm = ir.DenseI64ArrayAttr.get(permutation)
        return ir.Operation.create(
            "stablehlo.transpose", [result], [value], {"permutation": perm}, loc=loc, ip=ip
        ).result

    def unary(name: str, value: ir.Value, element: ir.Type) -> ir.Value:
        result = ir.RankedTensorType.get(shape, element)
        return ir.Operation.create(name, [result], [value], loc=loc, ip=ip).result

    loc, ip = op.location, ir.InsertionPoint(op)
    source_order = major_to_minor("source_layout", source_type.rank)
    result_order = major_to_minor("result_layout", result_type.rank)
    memory = transpose(source, source_order, source_element)
    shape = [result_type.shape[d] for d in result_order]
    value = unary("stablehlo.reshape", memory, source_element)
    if source_element != result_element:
        value = unary("stablehlo.bitcast_convert", value, result_element)
    inverse = sorted(range(len(result_order)), key=result_order.__getitem__)
    return transpose(value, inverse, result_element)
