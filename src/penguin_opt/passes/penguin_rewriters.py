"""The rewriters of CanonicalizeForTensorizer, one small unit each.

Each rewriter names its root op (the op kind the seed's walk collects), states its match
rule and output form in its docstring, and rewrites one collected op at a time, returning
``None`` when it rewrote the op or the reason it skipped it (counted in --pass-statistics).
The dispatch order lives in :mod:`penguin_opt.passes.canonicalize_for_penguin`.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
from jaxlib.mlir import ir

from .._compat import E8M0_CONVERTS_AS_MODELLED, op_id, rewrite
from ..convert_math import NO_INF_OR_NAN, convert_array, executors_agree
from ..dialect import Dialect, i64_matrix
from ..elements import (
    DTYPES,
    UnsupportedElementType,
    constant_value,
    dtype_of,
    is_float_key,
    make_elements,
    read_elements,
    splat_view,
    type_key,
)
from ..ir_util import (
    attrs_of,
    i64_values,
    op_counts,
    static_shape,
    string_value,
)
from ..penguin_sort import fuse, fusion_skip_reason
from .base import op_error
from .rewriter import Rewriter
from .sweep import Sweep

_T = TypeVar("_T")


def _readable_constant(
    value: ir.Value, sweep: Sweep
) -> (
    tuple[ir.Operation, np.ndarray | None, ir.Attribute | None, str, tuple[int, ...] | None] | None
):
    """(the defining constant op of ``value``, None, its value attribute, its element type
    key, its static shape) if ``_dense_constant`` would read it, decided without reading
    the values; for complex constants, which can only be told readable by reading them
    (from text), (the op, its values, None, the key, the shape): their attributes must not
    reach Python."""
    src = sweep.producer(value, "constant")
    if src is None:
        return None
    key, shape = sweep.type_info(value.type)  # value is src's one result
    if key is None:
        return None
    if key.startswith("complex"):
        read = _dense_constant(value, sweep)
        return None if read is None else (read[0], read[1], None, key, shape)
    if key not in DTYPES:
        return None
    attr = src.attributes["value"]
    if not isinstance(attr, ir.DenseElementsAttr):
        return None
    return src, None, attr, key, shape


def _values(
    attr: ir.Attribute | None,
    values: np.ndarray | None,
    key: str,
    shape: tuple[int, ...] | None,
) -> np.ndarray | None:
    """The values of a constant (element type key ``key``, static shape ``shape``):
    ``values`` if ``_readable_constant`` read them already, else those of its dense value
    attribute ``attr`` (None if they cannot be read)."""
    if values is not None:
        return values
    try:
        return read_elements(attr, key, shape)
    except UnsupportedElementType:
        return None


def _fold_key(
    rewriter: str,
    attr: ir.Attribute | None,
    src_key: str,
    result_type: ir.Type,
    dst_key: str,
    *extra: Hashable,
) -> tuple | None:
    """What a fold of a constant (value ``attr``, element key ``src_key``) to
    ``result_type`` (element key ``dst_key``) depends on, to reuse the folded attribute
    within one pass run (programs broadcast and convert the same constants many times);
    None for complex types, whose attributes must not reach Python."""
    if attr is None or src_key.startswith("complex") or dst_key.startswith("complex"):
        return None
    return (rewriter, attr, result_type, *extra)


def _unused(op: ir.Operation) -> bool:
    """Whether the one result of ``op`` (a constant, a tuple) has no uses."""
    return next(iter(op.result.uses), None) is None


def _memo(sweep: Sweep, key: tuple, make: Callable[[], _T]) -> _T:
    """``make()``, built once per pass run for ``key`` (attributes and types are uniqued:
    a new one would be the same)."""
    found = sweep.memo.get(key)
    if found is None:
        found = sweep.memo[key] = make()
    return found


def _dense_constant(value: ir.Value, sweep: Sweep) -> tuple[ir.Operation, np.ndarray] | None:
    """The defining constant op of ``value`` and its values, if it is a dense constant."""
    src = sweep.producer(value, "constant")
    if src is None:
        return None
    try:
        values = constant_value(src)
    except UnsupportedElementType:
        return None
    return None if values is None else (src, np.asarray(values))


class FuseIotaSort(Rewriter):
    """Drop the iota index operand of an argsort (penguin form, see ``penguin_sort``).

        %i = iota dim = d : tensor<..xi32>                 (erased if now unused)
        %r:2 = sort(%data, %i) {dimension = d}        ->   %r:2 = sort(%data) {dimension = d}

    Match: exactly two operands, operand 1 defined by an iota whose iota_dimension equals
    the sort dimension (our guard: otherwise result 1 is not "positions along the sort
    dimension"). Results, users and the comparator are unchanged.
    """

    name = "fuseIotaSort"
    root = "sort"

    def rewrite(self, op: ir.Operation, sweep: Sweep) -> str | None:
        reason, iota = fusion_skip_reason(op, sweep.producer)
        if reason is not None:
            return reason
        sweep.created(fuse(op, iota, replace=sweep.replace, erase=sweep.erase))
        return None


class CanonicalizeTupleOp(Rewriter):
    """Fold ``get_tuple_element(tuple(a0..an), i)`` to ``a_i``; erase tuples left unused.

        %t = tuple %a, %b
        %x = get_tuple_element %t[1]                  ->   (uses of %x use %b)

    Producers of the collected GTEs that are tuples and end up with no users are erased
    (cascading to tuples that only fed them), which also removes ``tuple(gte(x,0..n))``.
    """

    name = "canonicalizeTupleOp"
    root = "get_tuple_element"

    def run(self, ops: list[ir.Operation], sweep: Sweep) -> None:
        # The tuples to erase if left unused, one object per tuple (by address: each is
        # alive until popped, and erasing one never brings it back).
        self._producers: dict[int, ir.Operation] = {}
        super().run(ops, sweep)
        pending = self._producers
        while pending:
            _, tup = pending.popitem()
            if not _unused(tup):
                continue
            # only a tuple-typed operand can be a tuple's: its producer is read only then
            feeders = [
                sweep.producer(v, "tuple") for v in tup.operands if isinstance(v.type, ir.TupleType)
            ]
            sweep.erase(tup, sweep.op_name("tuple"))
            for f in feeders:
                if f is not None:
                    pending.setdefault(op_id(f), f)

    def rewrite(self, op: ir.Operation, sweep: Sweep) -> str | None:
        producer = sweep.producer(op.operands[0], "tuple")
        if producer is None:
            return "operand-not-tuple"
        index = int(ir.IntegerAttr(op.attributes["index"]).value)
        sweep.replace(op, [producer.operands[index]])
        self._producers.setdefault(op_id(producer), producer)
        return None


class ReplaceGetDimensionSize(Rewriter):
    """Fold ``get_dimension_size`` of a static dimension to a constant of its result type.

    %n = get_dimension_size %t, dim = 1 : (tensor<2x3xf32>) -> tensor<i32>
                                                  ->   %n = constant dense<3> : tensor<i32>
    """

    name = "replaceGetDimensionSize"
    root = "get_dimension_size"

    def rewrite(self, op: ir.Operation, sweep: Sweep) -> str | None:
        operand_type = op.operands[0].type
        if not isinstance(operand_type, ir.RankedTensorType):
            return "unranked-operand"
        dim = int(ir.IntegerAttr(op.attributes["dimension"]).value)
        ranked = ir.RankedTensorType(operand_type)
        if ranked.is_dynamic_dim(dim):
            return "dynamic-dimension"
        result_type = op.result.type
        size = ranked.shape[dim]
        attr = _memo(
            sweep,
            ("dimension-size", size, result_type),
            lambda: make_elements(
                np.array(size).astype(dtype_of(ir.ShapedType(result_type).element_type)),
                result_type,
            ),
        )
        cst = sweep.constant(attr, before=op, type=result_type)
        sweep.replace(op, [cst.result])
        return None


class ReplaceConvertsWithConstants(Rewriter):
    """Fold ``convert(constant)`` to a constant, bit-exact with the reference interpreter.

        %c = constant dense<[1.5, -2.7]> : tensor<2xf32>
        %x = convert %c : (tensor<2xf32>) -> tensor<2xi32>
      ->
        %x = constant dense<[1, -2]> : tensor<2xi32>

    The source constant stays (the seed erases only the convert).
    """

    name = "replaceConvertsWithConstants"
    root = "convert"

    def rewrite(self, op: ir.Operation, sweep: Sweep) -> str | None:
        readable = _readable_constant(op.operands[0], sweep)
        if readable is None:
            return "operand-not-constant"
        _, values, src_attr, src_key, src_shape = readable
        result_type = op.result.type
        dst_key, result_shape = sweep.type_info(result_type)
        key = _fold_key(self.name, src_attr, src_key, result_type, dst_key)
        attr = sweep.folds.get(key) if key else None  # the same convert folded before
        if attr is None:
            values = _values(src_attr, values, src_key, src_shape)
            if values is None:
                return "operand-not-constant"
            if result_shape is None:
                return "dynamic-shape"
            try:
                if not E8M0_CONVERTS_AS_MODELLED and "f8E8M0FNU" in (src_key, dst_key):
                    return "element-type-semantics-vary-by-jaxlib"
                splat = values.size > 1 and not any(values.strides)  # one element
                source = values[(0,) * values.ndim].reshape(1) if splat else values
                converted = convert_array(source, src_key, dst_key)
                if {src_key, dst_key} & NO_INF_OR_NAN and not executors_agree(source, converted):
                    return "element-type-semantics-vary"
                folded = splat_view(converted, values.shape) if splat else converted
            except (UnsupportedElementType, ValueError):
                return "unsupported-element-type"
            attr = make_elements(folded, result_type)
            if key:
                sweep.folds[key] = attr
        cst = sweep.constant(attr, before=op, type=result_type)
        sweep.replace(op, [cst.result])
        return None


_INVALID_CONFIG_BYTE = re.compile(rb'[^A-Za-z0-9"]')
_KEPT_CUSTOM_CALL_ATTRS = ("operand_layouts", "result_layouts", "called_computations")


class ReplaceInvalidBackendConfigs(Rewriter):
    """Sanitize the backend_config of ``AwsNeuronErf`` custom calls.

        custom_call @AwsNeuronErf(%x) {backend_config = "{mode: 1}", has_side_effect = true}
                    ->   custom_call @AwsNeuronErf(%x) {backend_config = "None"}

    Match: target ``AwsNeuronErf`` and a config with any byte that is neither ASCII
    alphanumeric nor ``"``. The rebuilt call keeps target, operands, result types,
    api_version and (if any) output_operand_aliases; has_side_effect becomes false. A warning
    is emitted, as the seed's NeuronLogger does. Also kept: the layouts, the called
    computations and the discardable attributes (``mhlo.sharding``,
    ``mhlo.frontend_attributes``: names with a dialect prefix).
    """

    name = "replaceInvalidBackendConfigs"
    root = "custom_call"

    def rewrite(self, op: ir.Operation, sweep: Sweep) -> str | None:
        target = string_value(op.attributes["call_target_name"])
        if target != "AwsNeuronErf":
            return "not-AwsNeuronErf"
        attributes = attrs_of(op)
        config = attributes.get("backend_config")
        if config is None:
            return "valid-backend-config"
        if not isinstance(config, ir.StringAttr):
            return "non-string-backend-config"
        raw = ir.StringAttr(config).value_bytes
        if not _INVALID_CONFIG_BYTE.search(raw):
            return "valid-backend-config"
        sweep.warn(
            op,
            f"AwsNeuronErf: backend_config {raw.decode(errors='replace')!r} is not "
            'alphanumeric; replaced by "None"',
        )
        kept = {
            "call_target_name": attributes["call_target_name"],
            "backend_config": _memo(sweep, ("string", "None"), lambda: ir.StringAttr.get("None")),
            "has_side_effect": _memo(sweep, ("bool", False), lambda: ir.BoolAttr.get(False)),
        }
        if "api_version" in attributes:
            kept["api_version"] = attributes["api_version"]
        aliases = attributes.get("output_operand_aliases")
        if aliases is not None and len(ir.ArrayAttr(aliases)) > 0:
            kept["output_operand_aliases"] = aliases
        for name, value in attributes.items():
            if name in _KEPT_CUSTOM_CALL_ATTRS or "." in name:  # discardable: mhlo.sharding
                kept[name] = value
        new = sweep.create(
            "custom_call", [r.type for r in op.results], list(op.operands), kept, before=op
        )
        sweep.replace(op, list(new.results))
        return None


@dataclass(frozen=True)
class LowerResizeNearestGrad(Rewriter):
    """Lower the ``ResizeNearestGrad`` custom call to a reduce_window over each tile.

        %g = custom_call @ResizeNearestGrad(%dy) : (tensor<1x8x8x3xf32>) -> tensor<1x4x4x3xf32>
      ->
        %z = constant dense<0.0> : tensor<f32>
        %s = reduce_window(%dy, %z) add {window_dimensions = [1,2,2,1], window_strides = [1,2,2,1]}
        %v = constant dense<4.0> : tensor<f32>
        %b = broadcast %v, sizes = [1,4,4,3]          (legacy op, as the seed builds it)
        %g = divide %s, %b                            (mode=mean; mode=sum stops at %s)

    Window = stride = the per-dimension scale (operand dim / result dim), padding 0,
    dilations 1. Legality failures are errors at the op with the seed's texts.
    """

    mode: str = "mean"
    name = "lowerResizeNearestGrad"
    exact = False  # the window sum in reduce_window's order
    root = "custom_call"

    def rewrite(self, op: ir.Operation, sweep: Sweep) -> str | None:
        target = string_value(op.attributes["call_target_name"])
        if target != "ResizeNearestGrad":
            return "not-ResizeNearestGrad"
        if len(op.operands) != 1:
            raise op_error(op, "ResizeNearestGrad: only one operand allowed")
        if len(op.results) != 1:
            raise op_error(op, "ResizeNearestGrad: only one output allowed")
        grad, result_type = op.operands[0], op.result.type
        key = ("resize-nearest-grad", self.mode, grad.type, result_type)
        plan = sweep.memo.get(key)
        if plan is None:  # programs repeat their shapes: each type pair planned once a run
            plan = sweep.memo[key] = self._plan(grad.type, result_type, sweep.dialect)
        if isinstance(plan, str):
            return plan
        if isinstance(plan, Unsupported):
            raise op_error(op, plan.message)
        at = (op.location, ir.InsertionPoint(op))  # every new op: right before op, at its loc
        zero = sweep.constant(plan.zero, before=op, type=plan.scalar, at=at)
        window = sweep.create(
            "reduce_window",
            [result_type],
            [grad, zero.result],
            plan.window,
            before=op,
            regions=1,
            at=at,
        )
        scalar = plan.scalar
        block = window.regions[0].blocks.append(scalar, scalar)
        inside, op_name = ir.InsertionPoint(block), sweep.op_name
        add = ir.Operation.create(
            op_name("add"), results=[scalar], operands=list(block.arguments), loc=at[0], ip=inside
        )
        ir.Operation.create(op_name("return"), operands=[add.result], loc=at[0], ip=inside)
        if plan.volume is None:  # mode=sum
            sweep.replace(op, [window.result])
            return None
        vol = sweep.constant(plan.volume, before=op, type=scalar, at=at)
        vol_b = sweep.create(
            "broadcast", [result_type], [vol.result], plan.broadcast, before=op, at=at
        )
        div = sweep.create(
            "divide", [result_type], [window.result, vol_b.result], {}, before=op, at=at
        )
        sweep.replace(op, [div.result])
        return None

    def _plan(
        self, grad_type: ir.Type, result_type: ir.Type, d: Dialect
    ) -> _ResizePlan | Unsupported | str:
        """What lowering a ResizeNearestGrad from ``grad_type`` to ``result_type`` takes
        (depends on the two types alone): its attributes, or the error to raise at the op,
        or why it is skipped."""
        scale = resize_factors(grad_type, result_type, self.mode)
        if not isinstance(scale, list):
            return scale
        grad, result = ir.RankedTensorType(grad_type), ir.RankedTensorType(result_type)
        element = grad.element_type
        dtype = dtype_of(element)
        scalar = ir.RankedTensorType.get([], element)
        rank = grad.rank
        ones = d.i64_list([1] * rank)
        return _ResizePlan(
            scalar=scalar,
            zero=make_elements(np.zeros((), dtype), scalar),
            window={
                "window_dimensions": d.i64_list(scale),
                "window_strides": d.i64_list(scale),
                "base_dilations": ones,
                "window_dilations": ones,
                "padding": i64_matrix([[0, 0]] * rank),
            },
            volume=(
                make_elements(np.array(math.prod(scale), dtype), scalar)
                if self.mode == "mean"
                else None
            ),
            broadcast={"broadcast_sizes": d.i64_list(result.shape)},
        )


def resize_factors(
    grad_type: ir.Type, result_type: ir.Type, mode: str
) -> list[int] | str | Unsupported:
    """lowerResizeNearestGrad's legality for a ``grad_type`` -> ``result_type`` call (after
    its operand and result counts): the factor of each dimension, or why not: a skip
    reason, or the seed's error (:class:`Unsupported`). One place for the rewriter and
    for readiness, which says why a call was left."""
    if not all(isinstance(t, ir.RankedTensorType) for t in (grad_type, result_type)):
        return "unranked"
    grad, result = ir.RankedTensorType(grad_type), ir.RankedTensorType(result_type)
    if grad.rank != result.rank:
        return Unsupported("ResizeNearestGrad: input and output have different rank")
    if not (grad.has_static_shape and result.has_static_shape):
        return "dynamic-shape"
    scale = []
    for out_dim, in_dim in zip(grad.shape, result.shape, strict=True):
        if in_dim == out_dim == 0:  # 0 = 1 x 0: an empty window row of an empty result
            scale.append(1)
            continue
        if out_dim == 0:  # factor 0: a window of nothing for each of in_dim results
            return "empty-window"
        if in_dim == 0 or out_dim % in_dim != 0:
            return Unsupported(
                f"ResizeNearestGrad: output dim {out_dim:,} is not an integral multiple "
                f"of input dim {out_dim:,}, which is unsupported"
            )
        scale.append(out_dim // in_dim)
    if mode == "mean" and not is_float_key(type_key(grad.element_type)):
        return "mean-of-non-float"
    return scale


@dataclass(frozen=True)
class _ResizePlan:
    """The attributes and types of one ResizeNearestGrad lowering (per type pair)."""

    scalar: ir.Type  # tensor<T>
    zero: ir.Attribute  # reduce_window's init value
    window: dict[str, ir.Attribute]  # reduce_window's attributes
    volume: ir.Attribute | None  # the window volume (mode=mean), else None
    broadcast: dict[str, ir.Attribute]  # the legacy broadcast's attributes


@dataclass(frozen=True)
class Unsupported:
    """A legality failure: the seed's error text, raised at the op."""

    message: str


class ReplaceBroadcastsWithBroadcastInDim(Rewriter):
    """Rewrite the legacy ``broadcast`` (prepend dims) as ``broadcast_in_dim``.

        %y = broadcast %x, sizes = [4] : (tensor<2x3xf32>) -> tensor<4x2x3xf32>
      ->
        %y = broadcast_in_dim %x, dims = [1, 2] : (tensor<2x3xf32>) -> tensor<4x2x3xf32>

    broadcast_dimensions = [P, ..., P+R-1] with P = len(sizes), R = operand rank. A
    non-constant operand is a remark (the seed logs it), never a reason to skip.
    """

    name = "replaceBroadcastsWithBroadcastInDim"
    root = "broadcast"

    def rewrite(self, op: ir.Operation, sweep: Sweep) -> str | None:
        operand = op.operands[0]
        operand_type = operand.type
        if not isinstance(operand_type, ir.RankedTensorType):
            return "unranked-operand"
        result_type = op.result.type
        if sweep.type_info(result_type)[1] is None:
            return "dynamic-shape"  # broadcast_in_dim requires a static result
        if _readable_constant(operand, sweep) is None:
            sweep.remark(op, "broadcast operand is not a constant; converted anyway")
        sizes = op.attributes["broadcast_sizes"]
        if isinstance(sizes, ir.DenseI64ArrayAttr | ir.DenseIntElementsAttr):
            prefix = len(sizes)
        else:
            prefix = len(i64_values(sizes))
        rank = ir.RankedTensorType(operand_type).rank
        dims = _memo(
            sweep,
            ("i64-list", tuple(range(prefix, prefix + rank))),
            lambda: sweep.dialect.i64_list(range(prefix, prefix + rank)),
        )
        new = sweep.create(
            "broadcast_in_dim", [result_type], [operand], {"broadcast_dimensions": dims}, before=op
        )
        sweep.replace(op, [new.result])
        return None


@dataclass(frozen=True)
class ReplaceBroadcastInDimWithConstants(Rewriter):
    """Fold ``broadcast_in_dim(constant)`` to a constant when the result is small enough.

        %c = constant dense<[1, 2]> : tensor<2xi32>
        %y = broadcast_in_dim %c, dims = [1] : (tensor<2xi32>) -> tensor<3x2xi32>
                ->   %y = constant dense<[[1, 2], [1, 2], [1, 2]]> : tensor<3x2xi32>

    Match: operand defined by a dense constant, static result shape, and result element
    count <= ``budget`` (the seed's ``broadcast-num-elements-to-fold``). The source
    constant is erased if it has no other users.
    """

    budget: int = 65536
    name = "replaceBroadcastInDimWithConstants"
    root = "broadcast_in_dim"

    def rewrite(self, op: ir.Operation, sweep: Sweep) -> str | None:
        # The cheap tests first; the skip reasons are those of reading the values first.
        readable = _readable_constant(op.operands[0], sweep)
        if readable is None:
            return "operand-not-constant"
        src, values, src_attr, src_key, src_shape = readable
        result_type = op.result.type
        out_shape = sweep.type_info(result_type)[1]
        if out_shape is None:
            return "dynamic-shape"
        if math.prod(out_shape) > self.budget:
            return "over-budget"
        dims = op.attributes["broadcast_dimensions"]
        dst_key = src_key  # broadcast_in_dim keeps the element type
        key = _fold_key(self.name, src_attr, src_key, result_type, dst_key, dims)
        attr = sweep.folds.get(key) if key else None
        if attr is None:
            values = _values(src_attr, values, src_key, src_shape)
            if values is None:
                return "operand-not-constant"
            dim_list = _memo(sweep, ("i64-values", dims), lambda: i64_values(dims))
            folded = broadcast_in_dim(values, dim_list, out_shape)
            attr = make_elements(folded, result_type)
            if key:
                sweep.folds[key] = attr
        cst = sweep.constant(attr, before=op, type=result_type)
        sweep.replace(op, [cst.result])
        if _unused(src):
            sweep.erase(src, sweep.op_name("constant"))
        return None


def broadcast_in_dim(values: np.ndarray, dims: list[int], out_shape: tuple[int, ...]) -> np.ndarray:
    """numpy broadcast_in_dim: operand dim k goes to result dim dims[k]. A new array; for
    a splat (one value) a read-only view of it (``splat_view``)."""
    if values.size == 1:  # a splat: every result element is the one value
        return splat_view(values, out_shape)
    if any(dims[k] >= dims[k + 1] for k in range(len(dims) - 1)):  # a transpose first
        order = np.argsort(dims, kind="stable")
        values = np.transpose(values, order) if values.ndim else values
        dims = [dims[int(k)] for k in order]
    shape = [1] * len(out_shape)
    for k, out_dim in enumerate(dims):
        shape[out_dim] = values.shape[k]
    out = np.empty(out_shape, values.dtype)
    out[...] = values.reshape(shape)  # numpy broadcasts the assignment
    return out


_EFFECTFUL = frozenset(
    {
        "custom_call",
        "send",
        "recv",
        "infeed",
        "outfeed",
        "rng",
        "rng_bit_generator",
        "all_reduce",
        "all_gather",
        "all_to_all",
        "reduce_scatter",
        "collective_permute",
        "collective_broadcast",
        "partition_id",
        "replica_id",
        "after_all",
        "create_token",
        "optimization_barrier",
        "while",
        "if",
        "case",
        "return",
        "constant",
    }
)


# Side-effect-free kinds whose results are zero-sized only if an operand may be (a static
# zero-element or a dynamic tensor, or not a tensor): every result dim is an operand dim
# (elementwise ops, transpose, reverse, dot_general, concatenate; reduce drops dims; sort,
# map, scatter, select_and_scatter, dynamic_update_slice, the batch norms, cholesky and
# triangular_solve keep an operand's shape; bitcast_convert adds or drops a dim of the bit
# widths' ratio) or the element count is an operand's (reshape, convert). Those with
# regions (reduce, sort, map, scatter, select_and_scatter) have only rank-0 block arguments
# (their verifiers require it), which are never zero-sized. removeDeadZeroSizedTensorOps
# reaches these kinds from their operands.
_SHAPE_FOLLOWING = frozenset(
    {
        "abs",
        "add",
        "and",
        "atan2",
        "batch_norm_grad",
        "batch_norm_inference",
        "batch_norm_training",
        "bitcast_convert",
        "cbrt",
        "ceil",
        "cholesky",
        "clamp",
        "compare",
        "complex",
        "concatenate",
        "convert",
        "cosine",
        "count_leading_zeros",
        "divide",
        "dot_general",
        "dynamic_update_slice",
        "exponential",
        "exponential_minus_one",
        "floor",
        "imag",
        "is_finite",
        "log",
        "log_plus_one",
        "logistic",
        "map",
        "maximum",
        "minimum",
        "multiply",
        "negate",
        "not",
        "or",
        "popcnt",
        "power",
        "real",
        "reduce",
        "reduce_precision",
        "remainder",
        "reshape",
        "reverse",
        "round_nearest_afz",
        "round_nearest_even",
        "rsqrt",
        "scatter",
        "select",
        "select_and_scatter",
        "shift_left",
        "shift_right_arithmetic",
        "shift_right_logical",
        "sign",
        "sine",
        "sort",
        "sqrt",
        "subtract",
        "tan",
        "tanh",
        "transpose",
        "triangular_solve",
        "xor",
    }
)


def _depth(op: ir.Operation) -> int:
    depth, parent = 0, op.parent
    while parent is not None:
        depth, parent = depth + 1, parent.parent
    return depth


class _ZeroSizedScan:
    """removeDeadZeroSizedTensorOps' match over functions, without a Python visit per op.

    A shape-following op (``_SHAPE_FOLLOWING``) can only have a static zero-sized result
    when one of its operands may be zero-sized (a static zero-element tensor, a dynamic or
    unranked one, a non-tensor), so those ops are reached by following the uses of the
    values that may be zero-sized. Every other kind is visited by MLIR's name-dispatched
    walk (the kinds present, from MLIR's op counts): for the side-effect-free kinds of the
    dialect, the result types decide; every visited op's results and block arguments that
    may be zero-sized are followed, as are the function's arguments. Skip reasons are
    counted per op for the visited ops and per op name (``op_counts``) for the others.

    One departure from a visit of every op: a shape-following op that declares a dynamic
    result on static non-zero operands is not reached, so neither is a shape-following
    user of it that declares a zero-element result. At run time every dim such a chain
    carries is non-zero (an operand's, a sum or product of them, or bitcast_convert's
    bit-width ratio), so that user's zero-element type contradicts its operands' shape:
    the program has no defined result there.
    """

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.following = frozenset(f"{prefix}.{m}" for m in _SHAPE_FOLLOWING)
        self.no_results = frozenset((f"{prefix}.return", "func.return"))  # nothing to follow
        self.classes: dict[ir.Type, tuple[bool, bool]] = {}  # type -> (zero-sized, may be)
        self.skipped: Counter = Counter()
        self.candidates: list[ir.Operation] = []
        self.seeds: list[ir.Value] = []  # values that may be zero-sized, to follow

    def classify(self, t: ir.Type) -> tuple[bool, bool]:
        c = self.classes.get(t)
        if c is None:
            shape = static_shape(t)
            zero = shape is not None and 0 in shape
            c = self.classes[t] = (zero, shape is None or zero)
        return c

    def follow_results(self, op: ir.Operation | ir.OpView, types: Sequence[ir.Type]) -> bool:
        """Queue ``op``'s results that may be zero-sized; True if all are zero-sized."""
        every = True
        for i, t in enumerate(types):
            zero, maybe = self.classify(t)
            every = every and zero
            if maybe:
                self.seeds.append(op.results[i])
        return every

    def follow_arguments(self, op: ir.Operation | ir.OpView) -> None:
        """Queue the block arguments of ``op``'s regions that may be zero-sized."""
        for region in op.regions:
            for block in region.blocks:
                for arg in block.arguments:
                    if self.classify(arg.type)[1]:
                        self.seeds.append(arg)

    def callback(
        self, side_effect_free: bool
    ) -> Callable[[ir.OpView, rewrite.PatternRewriter], bool]:
        """The walk's callback for one op name: for a side-effect-free kind (not
        shape-following) the result types decide; for any other only the values it defines
        matter. Whether ops of the name can hold regions is read once from the op class's
        ODS region count where it is fixed (a Python call per op otherwise)."""
        follow_results, follow_arguments = self.follow_results, self.follow_arguments
        skipped, candidates = self.skipped, self.candidates
        regions: list[bool] = []  # [whether to look at each op's regions], once known

        def visit(op: ir.OpView, _rewriter: rewrite.PatternRewriter) -> bool:
            if not regions:
                ods = getattr(type(op), "_ODS_REGIONS", None)
                regions.append(not (isinstance(ods, tuple) and ods == (0, True)))
            types = op.results.types
            if not side_effect_free:
                follow_results(op, types)
            elif not types:
                skipped["no-results"] += 1
            elif follow_results(op, types):
                candidates.append(op.operation)
            else:
                skipped["not-zero-sized"] += 1
            if regions[0] and len(op.regions):
                follow_arguments(op)
            return True  # "no match": the walk driver changes nothing

        return visit

    def scan(self, f: ir.Operation) -> None:
        counts = op_counts(f)
        counts[f.name] -= 1  # ``f`` itself is not under ``f``
        patterns = rewrite.RewritePatternSet(f.context)
        dispatched = False
        for name, count in counts.items():
            if not count:
                continue
            dialect, _, mnemonic = name.partition(".")
            if dialect != self.prefix or mnemonic in _EFFECTFUL:
                self.skipped["not-side-effect-free"] += count
                if name not in self.no_results:
                    patterns.add(name, self.callback(side_effect_free=False))
                    dispatched = True
            elif name not in self.following:
                patterns.add(name, self.callback(side_effect_free=True))
                dispatched = True
        self.follow_arguments(f)
        if dispatched:
            rewrite.walk_and_apply_patterns(f, patterns.freeze())
        # Follow the values that may be zero-sized to their shape-following users.
        following, seeds = self.following, self.seeds
        reached: set[int] = set()
        found = 0
        while seeds:
            for use in seeds.pop().uses:
                user = use.owner
                if user.name not in following:
                    continue
                user = user.operation
                key = op_id(user)
                if key in reached:
                    continue
                reached.add(key)
                if self.follow_results(user, user.results.types):
                    self.candidates.append(user)
                    found += 1
        self.skipped["not-zero-sized"] += sum(counts.get(n, 0) for n in following) - found


class RemoveDeadZeroSizedTensorOps(Rewriter):
    """(StableHLO twin only) Replace side-effect-free ops whose results are all static
    zero-element tensors by empty constants, and erase them.

        %y = stablehlo.add %a, %b : tensor<0x4xf32>
      ->
        %y = stablehlo.constant dense<> : tensor<0x4xf32>

    Side-effect-free: a ``stablehlo`` op that is not a constant, terminator, custom call,
    communication, RNG, token or control-flow op.
    """

    name = "removeDeadZeroSizedTensorOps"
    root = None  # every op: its own walk (run_on)

    def run_on(self, functions: list[ir.Operation], sweep: Sweep) -> None:
        """``run`` over every op of ``functions``, at a fraction of the cost.

        The rewriter's root is every op, but Python need not see every op (see
        :class:`_ZeroSizedScan`): the statistics are those of ``run(every op)``, each op
        counted with the skip reason ``rewrite`` would give it. The candidates are
        rewritten innermost first: each rewrite only replaces its op by constants in its
        place, so the order does not change the output, and an op inside a rewritten op's
        region must not be touched after it."""
        stats = sweep.stats(self.name)
        scan = _ZeroSizedScan(sweep.dialect.prefix)
        for f in functions:
            scan.scan(f.operation)
        stats.matched += sum(scan.skipped.values())
        for reason, count in scan.skipped.items():
            if count:
                stats.skipped[reason] += count
        # The scan's objects: a worklist may hold others for the same ops, so each is
        # swapped for the sweep's before any is erased (erasing an op with regions erases
        # the ops in them too).
        candidates = [sweep.canonical(op) for op in scan.candidates]
        if len(candidates) > 1:
            candidates.sort(key=_depth, reverse=True)
        self.visit_each(candidates, sweep, stats)

    @staticmethod
    def skip_reason(op: ir.Operation, prefix: str) -> str | None:
        """Why the match rejects ``op`` (an op of dialect ``prefix``?), None if it matches."""
        dialect, _, mnemonic = op.name.partition(".")
        if dialect != prefix or mnemonic in _EFFECTFUL:
            return "not-side-effect-free"
        types = op.results.types
        if not types:
            return "no-results"
        for t in types:
            shape = static_shape(t)
            if shape is None or 0 not in shape:
                return "not-zero-sized"
        return None

    def rewrite(self, op: ir.Operation, sweep: Sweep) -> str | None:
        reason = self.skip_reason(op, sweep.dialect.prefix)
        if reason is not None:
            return reason
        constants = []
        for t in op.results.types:
            key = ("empty", t)
            attr = sweep.memo.get(key)  # dense<> of type t; False: no such attribute
            if attr is None:
                try:
                    # zero elements whatever the other dims (0x4294967296x4294967296 is no
                    # array numpy can shape): the type gives the shape
                    attr = make_elements(np.zeros(0, dtype_of(ir.ShapedType(t).element_type)), t)
                except UnsupportedElementType:
                    attr = False
                sweep.memo[key] = attr
            if attr is False:
                return "unsupported-element-type"
            constants.append((attr, t))
        csts = [sweep.constant(a, before=op, type=t) for a, t in constants]
        sweep.replace(op, [c.result for c in csts])
        return None


__all__ = [
    "CanonicalizeTupleOp",
    "FuseIotaSort",
    "LowerResizeNearestGrad",
    "RemoveDeadZeroSizedTensorOps",
    "ReplaceBroadcastInDimWithConstants",
    "ReplaceBroadcastsWithBroadcastInDim",
    "ReplaceConvertsWithConstants",
    "ReplaceGetDimensionSize",
    "ReplaceInvalidBackendConfigs",
    "Unsupported",
    "broadcast_in_dim",
    "resize_factors",
]
