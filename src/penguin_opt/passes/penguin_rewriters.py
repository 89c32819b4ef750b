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
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from jaxlib.mlir import ir

from .._compat import E8M0_CONVERTS_AS_MODELLED
from ..convert_math import convert_array
from ..dialect import i64_matrix
from ..elements import (
    DTYPES,
    UnsupportedElementType,
    constant_value,
    dtype_of,
    is_float_key,
    make_elements,
    type_key,
)
from ..ir_util import (
    UnreadableAttribute,
    attrs_of,
    has_uses,
    i64_values,
    static_shape,
    string_value,
)
from ..penguin_sort import fuse, fusion_skip_reason
from .base import op_error
from .sweep import Sweep


class Rewriter:
    """One seed rewriter: ``rewrite`` each op of kind ``root``, in walk order."""

    name: ClassVar[str]  # the seed's function name
    root: ClassVar[str | None]  # op mnemonic the seed's walk collects (None: owns its walk)
    # True: the output computes the same values bit for bit (folds, structural edits);
    # False: it re-associates arithmetic (a float result may move by rounding).
    exact: ClassVar[bool] = True

    def run_on(self, functions: list[ir.Operation], sweep: Sweep) -> None:
        """The rewriter's turn in a pass run: its root ops, as the sweep collected them."""
        self.run(sweep.worklists[sweep.dialect.op(self.root)], sweep)

    def run(self, ops: list[ir.Operation], sweep: Sweep) -> None:
        stats = sweep.stats(self.name)
        # Snapshot: like the seed's own walk, a rewriter never visits ops it creates
        # (they are appended to the shared worklists for the rewriters after it).
        for op in ops[: len(ops)]:
            self.visit(op, sweep, stats)

    def visit(self, op: ir.Operation, sweep: Sweep, stats) -> None:
        """Rewrite one collected op (unless an earlier rewrite erased it) and count it."""
        if sweep.is_erased(op):
            return
        stats.matched += 1
        try:
            reason = self.rewrite(op, sweep)
        except UnreadableAttribute:  # raised before any change: the op stays as it is
            reason = "attribute-not-readable"
        if reason is None:
            stats.rewritten += 1
        else:
            stats.skip(reason)

    def rewrite(self, op: ir.Operation, sweep: Sweep) -> str | None:  # pragma: no cover
        raise NotImplementedError


def _readable_constant(
    value: ir.Value, sweep: Sweep
) -> tuple[ir.Operation, np.ndarray | None] | None:
    """(the defining constant op of ``value``, None) if ``_dense_constant`` would read it,
    decided without reading the values; for complex constants, which can only be told
    readable by reading them (from text), (the op, its values)."""
    src = sweep.defining_op(value)
    if src is None or not sweep.dialect.is_op(src, "constant"):
        return None
    element = ir.ShapedType(src.results[0].type).element_type
    key = type_key(element)
    if key.startswith("complex"):
        return _dense_constant(value, sweep)
    if key not in DTYPES or not isinstance(src.attributes["value"], ir.DenseElementsAttr):
        return None
    return src, None


def _values(src: ir.Operation, values: np.ndarray | None) -> np.ndarray | None:
    """The values of constant ``src``: ``values`` if ``_readable_constant`` read them
    already, else read now (None if they cannot be read)."""
    if values is not None:
        return values
    try:
        read = constant_value(src)
    except UnsupportedElementType:
        return None
    return None if read is None else np.asarray(read)


def _fold_key(rewriter: str, src: ir.Operation, result_type: ir.Type, *extra) -> tuple | None:
    """What a fold of constant ``src`` to ``result_type`` depends on, to reuse the folded
    attribute within one pass run (programs broadcast and convert the same constants many
    times); None for complex types, whose attributes must not reach Python."""
    src_type = src.results[0].type
    for t in (src_type, result_type):
        if type_key(ir.ShapedType(t).element_type).startswith("complex"):
            return None
    return (rewriter, src.attributes["value"], result_type, *extra)


def _dense_constant(value: ir.Value, sweep: Sweep) -> tuple[ir.Operation, np.ndarray] | None:
    """The defining constant op of ``value`` and its values, if it is a dense constant."""
    src = sweep.defining_op(value)
    if src is None or not sweep.dialect.is_op(src, "constant"):
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

    def rewrite(self, op, sweep):
        reason, iota = fusion_skip_reason(op, sweep.defining_op)
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

    def run(self, ops, sweep):
        self._producers: list[ir.Operation] = []
        super().run(ops, sweep)
        pending = self._producers
        while pending:
            tup = pending.pop()
            if sweep.is_erased(tup) or has_uses(tup):
                continue
            feeders = [sweep.defining_op(v) for v in tup.operands]
            sweep.erase(tup)
            pending.extend(f for f in feeders if f is not None and sweep.dialect.is_op(f, "tuple"))

    def rewrite(self, op, sweep):
        producer = sweep.defining_op(op.operands[0])
        if producer is None or not sweep.dialect.is_op(producer, "tuple"):
            return "operand-not-tuple"
        index = int(ir.IntegerAttr(op.attributes["index"]).value)
        sweep.replace(op, [producer.operands[index]])
        self._producers.append(producer)
        return None


class ReplaceGetDimensionSize(Rewriter):
    """Fold ``get_dimension_size`` of a static dimension to a constant of its result type.

    %n = get_dimension_size %t, dim = 1 : (tensor<2x3xf32>) -> tensor<i32>
                                                  ->   %n = constant dense<3> : tensor<i32>
    """

    name = "replaceGetDimensionSize"
    root = "get_dimension_size"

    def rewrite(self, op, sweep):
        operand_type = op.operands[0].type
        if not isinstance(operand_type, ir.RankedTensorType):
            return "unranked-operand"
        dim = int(ir.IntegerAttr(op.attributes["dimension"]).value)
        ranked = ir.RankedTensorType(operand_type)
        if ranked.is_dynamic_dim(dim):
            return "dynamic-dimension"
        result_type = op.results[0].type
        value = np.array(ranked.shape[dim]).astype(
            dtype_of(ir.ShapedType(result_type).element_type)
        )
        cst = sweep.constant(make_elements(value, result_type), before=op)
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

    def rewrite(self, op, sweep):
        result_type = op.results[0].type
        readable = _readable_constant(op.operands[0], sweep)
        if readable is None:
            return "operand-not-constant"
        src, values = readable
        key = _fold_key(self.name, src, result_type)
        attr = sweep.folds.get(key) if key else None  # the same convert folded before
        if attr is None:
            values = _values(src, values)
            if values is None:
                return "operand-not-constant"
            if static_shape(result_type) is None:
                return "dynamic-shape"
            try:
                src_key = type_key(ir.ShapedType(op.operands[0].type).element_type)
                dst_key = type_key(ir.ShapedType(result_type).element_type)
                if not E8M0_CONVERTS_AS_MODELLED and "f8E8M0FNU" in (src_key, dst_key):
                    return "element-type-semantics-vary-by-jaxlib"
                if values.size > 1 and not any(values.strides):  # a splat: one element
                    one = convert_array(values[(0,) * values.ndim].reshape(1), src_key,
                                        dst_key)
                    folded = np.broadcast_to(one.reshape(()), values.shape)
                else:
                    folded = convert_array(values, src_key, dst_key)
            except (UnsupportedElementType, ValueError):
                return "unsupported-element-type"
            attr = make_elements(folded, result_type)
            if key:
                sweep.folds[key] = attr
        cst = sweep.constant(attr, before=op)
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
    is emitted, as the seed's NeuronLogger does.
    """

    name = "replaceInvalidBackendConfigs"
    root = "custom_call"

    def rewrite(self, op, sweep):
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
            "backend_config": ir.StringAttr.get("None"),
            "has_side_effect": ir.BoolAttr.get(False),
        }
        if "api_version" in attributes:
            kept["api_version"] = attributes["api_version"]
        aliases = attributes.get("output_operand_aliases")
        if aliases is not None and len(ir.ArrayAttr(aliases)) > 0:
            kept["output_operand_aliases"] = aliases
        for name in _KEPT_CUSTOM_CALL_ATTRS:
            if name in attributes:
                kept[name] = attributes[name]
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

    def rewrite(self, op, sweep):
        target = string_value(op.attributes["call_target_name"])
        if target != "ResizeNearestGrad":
            return "not-ResizeNearestGrad"
        if len(op.operands) != 1:
            raise op_error(op, "ResizeNearestGrad: only one operand allowed")
        if len(op.results) != 1:
            raise op_error(op, "ResizeNearestGrad: only one output allowed")
        grad_type, result_type = op.operands[0].type, op.results[0].type
        if not all(isinstance(t, ir.RankedTensorType) for t in (grad_type, result_type)):
            return "unranked"
        grad, result = ir.RankedTensorType(grad_type), ir.RankedTensorType(result_type)
        if grad.rank != result.rank:
            raise op_error(op, "ResizeNearestGrad: input and output have different rank")
        if not (grad.has_static_shape and result.has_static_shape):
            return "dynamic-shape"
        scale = []
        for out_dim, in_dim in zip(grad.shape, result.shape, strict=True):
            if in_dim == 0 or out_dim % in_dim != 0:
                raise op_error(
                    op,
                    f"ResizeNearestGrad: output dim {out_dim:,} is not an integral multiple "
                    f"of input dim {out_dim:,}, which is unsupported",
                )
            scale.append(out_dim // in_dim)
        element = grad.element_type
        key = type_key(element)
        if self.mode == "mean" and not is_float_key(key):
            return "mean-of-non-float"
        d = sweep.dialect
        scalar = ir.RankedTensorType.get([], element)
        zero = sweep.constant(make_elements(np.zeros((), dtype_of(element)), scalar), before=op)
        ones, rank = [1] * grad.rank, grad.rank
        window = sweep.create(
            "reduce_window",
            [result_type],
            [op.operands[0], zero.result],
            {
                "window_dimensions": d.i64_list(scale),
                "window_strides": d.i64_list(scale),
                "base_dilations": d.i64_list(ones),
                "window_dilations": d.i64_list(ones),
                "padding": i64_matrix([[0, 0]] * rank),
            },
            before=op,
            regions=1,
        )
        block = window.regions[0].blocks.append(scalar, scalar)
        with ir.InsertionPoint(block):
            add = ir.Operation.create(
                d.op("add"), results=[scalar], operands=list(block.arguments), loc=op.location
            )
            ir.Operation.create(d.op("return"), operands=[add.result], loc=op.location)
        if self.mode == "sum":
            sweep.replace(op, [window.result])
            return None
        volume = int(np.prod(scale))
        vol = sweep.constant(make_elements(np.array(volume, dtype_of(element)), scalar), before=op)
        vol_b = sweep.create(
            "broadcast",
            [result_type],
            [vol.result],
            {"broadcast_sizes": d.i64_list(result.shape)},
            before=op,
        )
        div = sweep.create("divide", [result_type], [window.result, vol_b.result], {}, before=op)
        sweep.replace(op, [div.result])
        return None


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

    def rewrite(self, op, sweep):
        operand = op.operands[0]
        if not isinstance(operand.type, ir.RankedTensorType):
            return "unranked-operand"
        if static_shape(op.results[0].type) is None:
            return "dynamic-shape"  # broadcast_in_dim requires a static result
        if _readable_constant(operand, sweep) is None:
            sweep.remark(op, "broadcast operand is not a constant; converted anyway")
        prefix = len(i64_values(op.attributes["broadcast_sizes"]))
        rank = ir.RankedTensorType(operand.type).rank
        new = sweep.create(
            "broadcast_in_dim",
            [op.results[0].type],
            [operand],
            {"broadcast_dimensions": sweep.dialect.i64_list(range(prefix, prefix + rank))},
            before=op,
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

    def rewrite(self, op, sweep):
        # The cheap tests first; the skip reasons are those of reading the values first.
        readable = _readable_constant(op.operands[0], sweep)
        if readable is None:
            return "operand-not-constant"
        src, values = readable
        result_type = op.results[0].type
        out_shape = static_shape(result_type)
        if out_shape is None:
            return "dynamic-shape"
        if math.prod(out_shape) > self.budget:
            return "over-budget"
        dims = op.attributes["broadcast_dimensions"]
        key = _fold_key(self.name, src, result_type, dims)
        attr = sweep.folds.get(key) if key else None
        if attr is None:
            values = _values(src, values)
            if values is None:
                return "operand-not-constant"
            folded = broadcast_in_dim(values, i64_values(dims), out_shape)
            attr = make_elements(folded, result_type)
            if key:
                sweep.folds[key] = attr
        cst = sweep.constant(attr, before=op)
        sweep.replace(op, [cst.result])
        if not has_uses(src):
            sweep.erase(src)
        return None


def broadcast_in_dim(values: np.ndarray, dims: list[int], out_shape: tuple[int, ...]):
    """numpy broadcast_in_dim: operand dim k goes to result dim dims[k] (a view)."""
    if values.size == 1:  # a splat: every result element is the one value
        return np.broadcast_to(values.reshape(()), out_shape)
    if all(dims[k] < dims[k + 1] for k in range(len(dims) - 1)):  # in order: no transpose
        shape = [1] * len(out_shape)
        for k, out_dim in enumerate(dims):
            shape[out_dim] = values.shape[k]
        return np.broadcast_to(values.reshape(shape), out_shape)
    order = np.argsort(dims, kind="stable")
    moved = np.transpose(values, order) if values.ndim else values
    shape = [1] * len(out_shape)
    for k, out_dim in enumerate(np.asarray(dims, dtype=np.int64)[order]):
        shape[int(out_dim)] = moved.shape[k]
    return np.broadcast_to(moved.reshape(shape), out_shape)


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
        """``run`` over every op of ``functions`` (post-order), at a fraction of the cost.

        The rewriter's root is every op, so Python must see every op (the bindings have no
        native filter on result types). This walk keeps that to the cheapest possible visit:
        an op-name lookup and, for side-effect-free ops of the dialect, a lookup of each result
        type, both memoized; ``visit`` is called only for the ops whose results are
        all static zero-element tensors. Every other op is counted with the skip reason
        ``rewrite`` would give it (its tests, in its order), so the statistics are those of
        ``run(every op)``.
        """
        stats = sweep.stats(self.name)
        prefix = sweep.dialect.prefix
        effectful = _EFFECTFUL
        kinds: dict[str, bool] = {}  # op name -> side-effect-free op of the dialect
        zero_sized: dict[ir.Type, bool] = {}  # result type -> static, zero elements
        skipped = Counter()
        candidates: list[ir.Operation] = []
        last: list = [None]  # the last visited op's skip reason, or "candidate"
        advance = ir.WalkResult.ADVANCE

        def visit(op: ir.Operation) -> ir.WalkResult:
            name = op.name
            kind = kinds.get(name)
            if kind is None:
                dialect, _, mnemonic = name.partition(".")
                kind = kinds[name] = dialect == prefix and mnemonic not in effectful
            reason = "candidate"
            if not kind:
                reason = "not-side-effect-free"
            elif not (types := op.results.types):
                reason = "no-results"
            else:
                for t in types:
                    zero = zero_sized.get(t)
                    if zero is None:
                        shape = static_shape(t)
                        zero = zero_sized[t] = shape is not None and 0 in shape
                    if not zero:
                        reason = "not-zero-sized"
                        break
            if reason == "candidate":
                candidates.append(op)
            else:
                skipped[reason] += 1
            last[0] = reason
            return advance

        for f in functions:
            f.walk(visit, ir.WalkOrder.POST_ORDER)
            # The walk ends at ``f`` itself, which is not under ``f``: take it back.
            if last[0] == "candidate":
                candidates.pop()
            else:
                skipped[last[0]] -= 1
        stats.matched += sum(skipped.values())
        for reason, count in skipped.items():
            if count:
                stats.skipped[reason] += count
        for op in candidates:
            self.visit(op, sweep, stats)

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

    def rewrite(self, op, sweep):
        reason = self.skip_reason(op, sweep.dialect.prefix)
        if reason is not None:
            return reason
        empties = list(op.results.types)
        try:
            # zero elements whatever the other dims (0x4294967296x4294967296 is no array
            # numpy can shape): the type gives the shape
            attrs = [make_elements(np.zeros(0, dtype_of(ir.ShapedType(t).element_type)), t)
                     for t in empties]
        except UnsupportedElementType:
            return "unsupported-element-type"
        csts = [sweep.constant(a, before=op) for a in attrs]
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
    "Rewriter",
    "broadcast_in_dim",
]
