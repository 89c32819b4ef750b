"""canonicalize-conv / stablehlo-canonicalize-conv (the seed's CanonicalizeConv).

Make a 2-D convolution's window padding and window strides explicit, so the backend only
sees zero-padding, unit-stride convolutions::

    conv(x, w, stride s, pad p)
      -> explicitlyPad:     conv(pad(x, p), w, stride s, pad 0)
      -> explicitlyStride:  sum over phases of conv(slice(pad(x, p)), slice(w), stride 1)

The driver is the seed's two-phase one: a pre-order walk of every ``func.func`` (through
nested regions) collects the convolutions that pass the :class:`ConvGate`
(``canCanonicalize``), then each collected conv is rewritten, :class:`ExplicitlyPad` first,
:class:`ExplicitlyStride` second. The only ops built are the seed's vocabulary: pad, slice,
add, constant and convolution. Dimension numbers, feature/batch group counts,
precision_config (and every other attribute not named below) are copied verbatim onto each
rebuilt conv; there is no transpose and no layout change.

Where the seed's literal algebra would change results we keep the results (see
docs/seed-notes-conv.md): lhs_dilation is materialized as the pad's interior padding, and
a strided conv whose kernel is wider than 1 along the strided dim is decomposed exactly into
polyphase partial convs (the seed's single strided slice is kept for extent-1 kernels).
"""

from __future__ import annotations

import itertools
import logging
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import mhlo, stablehlo

from ..dialect import MHLO, STABLEHLO, Dialect, i64_matrix
from ..elements import UnsupportedElementType, dtype_of, make_elements
from ..ir_util import attrs_of, defining_op_of, i64_values, static_shape
from .base import ModulePass, RunState, op_error, option
from .sweep import Sweep

log = logging.getLogger(__name__)

_DIMENSION_NUMBERS = {
    "mhlo": mhlo.ConvDimensionNumbers,
    "stablehlo": stablehlo.ConvDimensionNumbers,
}

# The seed's cut-offs (canCanonicalize). The small-extent flag's default is ours: the seed's
# qword_9C71578 is an unnamed zero-initialized .bss qword whose cl::opt default was not
# recovered; zero reads as "off" (see docs/seed-notes-conv.md).
DEFAULT_MIN_SPATIAL_EXTENT = 2
DEFAULT_SMALL_SPATIAL_EXTENT = 3
DEFAULT_MAX_STRIDE_OR_PADDING = 31
DEFAULT_CANONICALIZE_SMALL_EXTENTS = False


@dataclass(frozen=True)
class ConvGeometry:
    """The attributes and shapes of one convolution (the seed's hilo::ConvParams).

    Per-spatial-dim lists are in window order (dimension_numbers' spatial order); absent
    window attributes read as their defaults.
    """

    lhs_shape: tuple[int, ...]
    rhs_shape: tuple[int, ...]
    result_shape: tuple[int, ...]
    input_spatial: tuple[int, ...]
    kernel_spatial: tuple[int, ...]
    output_spatial: tuple[int, ...]
    strides: tuple[int, ...]
    padding: tuple[tuple[int, int], ...]
    lhs_dilation: tuple[int, ...]
    rhs_dilation: tuple[int, ...]
    reversal: tuple[bool, ...]

    @property
    def input_extents(self) -> tuple[int, ...]:
        return tuple(self.lhs_shape[d] for d in self.input_spatial)

    @property
    def kernel_extents(self) -> tuple[int, ...]:
        return tuple(self.rhs_shape[d] for d in self.kernel_spatial)

    @property
    def output_extents(self) -> tuple[int, ...]:
        return tuple(self.result_shape[d] for d in self.output_spatial)


def _window_list(op: ir.Operation, name: str, n: int, default: int) -> tuple[int, ...]:
    if name not in op.attributes:
        return (default,) * n
    return tuple(i64_values(op.attributes[name]))


def conv_geometry(op: ir.Operation, dialect: Dialect) -> ConvGeometry | None:
    """The geometry of a conv with static operand and result shapes, else None."""
    shapes = [static_shape(v.type) for v in (op.operands[0], op.operands[1], op.results[0])]
    if any(s is None for s in shapes):
        return None
    dn = _DIMENSION_NUMBERS[dialect.prefix](op.attributes["dimension_numbers"])
    n = len(dn.input_spatial_dimensions)
    padding = (
        tuple(zip(*[iter(i64_values(op.attributes["padding"]))] * 2, strict=True))
        if "padding" in op.attributes
        else ((0, 0),) * n
    )
    return ConvGeometry(
        lhs_shape=shapes[0],
        rhs_shape=shapes[1],
        result_shape=shapes[2],
        input_spatial=tuple(dn.input_spatial_dimensions),
        kernel_spatial=tuple(dn.kernel_spatial_dimensions),
        output_spatial=tuple(dn.output_spatial_dimensions),
        strides=_window_list(op, "window_strides", n, 1),
        padding=padding,
        lhs_dilation=_window_list(op, "lhs_dilation", n, 1),
        rhs_dilation=_window_list(op, "rhs_dilation", n, 1),
        reversal=tuple(bool(v) for v in _window_list(op, "window_reversal", n, 0)),
    )


def _rank(value: ir.Value) -> int | None:
    t = value.type
    return ir.RankedTensorType(t).rank if isinstance(t, ir.RankedTensorType) else None


@dataclass(frozen=True)
class ConvGate:
    """canCanonicalize: which convolutions the pass rewrites; the rest pass through untouched.

    In the seed's order: rank-4 lhs and rhs (two spatial dims); every lhs spatial extent at
    least ``min_extent`` (the seed: > 1), extents up to ``small_extent`` only with the
    ``small_extents`` flag; every window stride and padding edge at most ``max_stride_or_pad``
    (the seed's bound 31, signed as it compares). Ours, for exactness: static shapes, and a
    non-empty result (the partial convs of an empty result would slice out of bounds).
    """

    min_extent: int = DEFAULT_MIN_SPATIAL_EXTENT
    small_extent: int = DEFAULT_SMALL_SPATIAL_EXTENT
    small_extents: bool = DEFAULT_CANONICALIZE_SMALL_EXTENTS
    max_stride_or_pad: int = DEFAULT_MAX_STRIDE_OR_PADDING

    def reject(self, op: ir.Operation, dialect: Dialect) -> str | None:
        """None if the conv is eligible, else the skip reason."""
        ranks = (_rank(op.operands[0]), _rank(op.operands[1]))
        if None in ranks:
            return "dynamic-shape"
        if ranks != (4, 4):
            return "rank-not-4"
        g = conv_geometry(op, dialect)
        if g is None:
            return "dynamic-shape"
        if len(g.input_spatial) != 2:
            return "rank-not-4"
        for extent in g.input_extents:
            if extent < self.min_extent:
                return "spatial-extent-1"
            if extent <= self.small_extent and not self.small_extents:
                return "small-extent-flag-off"
        components = [*g.strides, *(edge for pair in g.padding for edge in pair)]
        if max(components) > self.max_stride_or_pad:
            return "over-bound"
        if 0 in g.result_shape:
            return "zero-sized-result"
        return None


def _rebuild_conv(
    sweep: Sweep, conv: ir.Operation, lhs: ir.Value, rhs: ir.Value, result: ir.Type,
    **window: ir.Attribute,
) -> ir.Operation:
    """A copy of ``conv`` on new operands: every attribute verbatim except ``window``."""
    attributes = attrs_of(conv)
    attributes.update(window)
    return sweep.create("convolution", [result], [lhs, rhs], attributes, before=conv)


def _tensor(shape, element_type: ir.Type) -> ir.Type:
    return ir.RankedTensorType.get(list(shape), element_type)


def _slice(sweep: Sweep, value: ir.Value, starts, limits, strides, *, before) -> ir.Value:
    """``slice(value)``, or ``value`` itself when the slice is the identity."""
    shape = static_shape(value.type)
    bounds = zip(starts, limits, strides, shape, strict=True)
    if all((s, lim, st) == (0, n, 1) for s, lim, st, n in bounds):
        return value
    out = [-(-(lim - s) // st) for s, lim, st in zip(starts, limits, strides, strict=True)]
    element = ir.RankedTensorType(value.type).element_type
    d = sweep.dialect
    op = sweep.create(
        "slice", [_tensor(out, element)], [value],
        {"start_indices": d.i64_list(starts), "limit_indices": d.i64_list(limits),
         "strides": d.i64_list(strides)},
        before=before,
    )
    return op.result


def _strided_range(start: int, count: int, stride: int, extent: int) -> tuple[int, int]:
    """(start, limit) of ``count`` elements from ``start`` by ``stride`` within ``extent``.

    The limit is the full extent when that selects the same elements (the seed's form for
    an extent-1 kernel), else the tightest bound.
    """
    if -(-(extent - start) // stride) == count:
        return start, extent
    return start, start + stride * (count - 1) + 1


class ExplicitlyPad:
    """Hoist the conv's window padding (and lhs_dilation) into a pad of the lhs.

        %y = convolution(%x, %w) window = {stride = [2, 2], pad = [[1, 2], [0, 1]],
                                            lhs_dilate = [1, 1]} : (tensor<1x9x9x2xf32>, ..)
      ->
        %z = constant dense<0.0> : tensor<f32>
        %p = pad %x, %z, low = [0, 1, 0, 0], high = [0, 2, 1, 0], interior = [0, 0, 0, 0]
               : (tensor<1x9x9x2xf32>, tensor<f32>) -> tensor<1x12x10x2xf32>
        %y = convolution(%p, %w) window = {stride = [2, 2], pad = [[0, 0], [0, 0]],
                                            lhs_dilate = [1, 1]} : (tensor<1x12x10x2xf32>, ..)

    The pad is conv's own definition of its padded input (pad by the spatial low/high edges,
    negative edges included, with interior padding lhs_dilation - 1), so the result is
    unchanged bit for bit; lhs_dilation is reset to 1 (the seed keeps it, which is only
    right when it is 1). Skipped when there is nothing to pad ("zero-padding"). An
    element type without an exact zero (quantized, f8E8M0FNU, ...) is error NCC_EUET001.
    """

    name: ClassVar[str] = "explicitlyPad"

    def rewrite(self, conv: ir.Operation, sweep: Sweep) -> tuple[ir.Operation, str | None]:
        g = conv_geometry(conv, sweep.dialect)
        interior = [dil - 1 for dil in g.lhs_dilation]
        if all(p == (0, 0) for p in g.padding) and not any(interior):
            return conv, "zero-padding"
        lhs = conv.operands[0]
        element = ir.RankedTensorType(lhs.type).element_type
        zero = _zero(conv, element)
        rank = len(g.lhs_shape)
        low, high, inner = [0] * rank, [0] * rank, [0] * rank
        for i, dim in enumerate(g.input_spatial):
            low[dim], high[dim] = g.padding[i]
            inner[dim] = interior[i]
        padded_shape = [
            n + lo + hi + max(n - 1, 0) * k
            for n, lo, hi, k in zip(g.lhs_shape, low, high, inner, strict=True)
        ]
        d = sweep.dialect
        scalar = _tensor([], element)
        cst = sweep.constant(make_elements(zero, scalar), before=conv)
        pad = sweep.create(
            "pad", [_tensor(padded_shape, element)], [lhs, cst.result],
            {"edge_padding_low": d.i64_list(low), "edge_padding_high": d.i64_list(high),
             "interior_padding": d.i64_list(inner)},
            before=conv,
        )
        n = len(g.input_spatial)
        window = {"padding": i64_matrix([[0, 0]] * n)}
        if "lhs_dilation" in conv.attributes or any(interior):
            window["lhs_dilation"] = d.i64_list([1] * n)
        new = _rebuild_conv(
            sweep, conv, pad.result, conv.operands[1], conv.results[0].type, **window
        )
        sweep.replace(conv, [new.result])
        return new, None


def _zero(conv: ir.Operation, element: ir.Type) -> np.ndarray:
    """A zero of ``element``, or the seed's NCC_EUET001 error when there is no exact one."""
    try:
        zero = np.zeros((), dtype_of(element))
    except UnsupportedElementType:
        zero = None
    if zero is None or not (zero == 0):
        raise op_error(
            conv,
            f"NCC_EUET001: unsupported element type {element} for the explicit pad of the "
            "convolution input (no exact zero padding value)",
        )
    return zero


@dataclass(frozen=True)
class _Phase:
    """One polyphase term along one spatial dim: the input and kernel slices it reads."""

    in_start: int
    in_count: int
    k_start: int
    k_count: int
    k_stride: int
    rhs_dilation: int


def _dim_phases(n: int, k: int, out: int, s: int, r: int, reverse: bool) -> list[_Phase]:
    """The phases of one spatial dim of a zero-padding conv (input extent ``n``, kernel
    extent ``k``, output extent ``out``, stride ``s``, rhs_dilation ``r``).

    out[o] = sum_t x[o*s + t*r] w[t]. Tap t reads input phase (t*r) mod s, which depends
    only on t mod q with q = s / gcd(r, s). Taps t = t0 + j*q (t0 < min(k, q)) therefore read
    x[t0*r + s*(o + j*r')] with r' = r / gcd(r, s): a unit-stride conv of the input slice
    from t0*r by s with the kernel slice from t0 by q at rhs_dilation r'. Its input slice
    holds out + (k'-1)*r' elements, k' = ceil((k - t0) / q), so every partial conv has the
    original output extent (and reads no element past the last the original conv reads).
    With window_reversal the conv reads w[k-1-t], so the kernel slice starts at
    k-1-t0-(k'-1)*q and the partial conv keeps the reversal.
    """
    if s == 1:
        return [_Phase(0, n, 0, k, 1, r)]
    if k == 1:  # the seed's single strided slice; a 1-tap window ignores its dilation
        return [_Phase(0, out, 0, 1, 1, r)]
    q = s // math.gcd(r, s)
    r_new = r // math.gcd(r, s)
    phases = []
    for t0 in range(min(k, q)):
        taps = -(-(k - t0) // q)
        start = k - 1 - t0 - (taps - 1) * q if reverse else t0
        phases.append(_Phase(t0 * r, out + (taps - 1) * r_new, start, taps, q, r_new))
    return phases


class ExplicitlyStride:
    """Fold the window strides into strided slices, rebuilding the conv at unit stride.

    Kernel extent 1 along every strided dim (the seed's algebra, exact there):

        %y = convolution(%p, %w) window = {stride = [2, 2]}
               : (tensor<1x9x9x2xf32>, tensor<1x1x2x4xf32>) -> tensor<1x5x5x4xf32>
      ->
        %s = slice %p [0:1, 0:9:2, 0:9:2, 0:2] : (tensor<1x9x9x2xf32>) -> tensor<1x5x5x2xf32>
        %y = convolution(%s, %w) window = {stride = [1, 1]}

    Wider kernels (the seed's single slice would convolve the wrong taps): the exact
    polyphase sum, one unit-stride partial conv per phase (p_h, p_w) of the strided dims:

        %y = convolution(%p, %w) window = {stride = [2, 1]}
               : (tensor<1x9x9x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x4x7x4xf32>
      ->
        %x0 = slice %p [0:1, 0:9:2, 0:9, 0:2]      -> tensor<1x5x9x2xf32>
        %w0 = slice %w [0:3:2, 0:3, 0:2, 0:4]      -> tensor<2x3x2x4xf32>   (taps 0, 2)
        %c0 = convolution(%x0, %w0) window = {stride = [1, 1]} -> tensor<1x4x7x4xf32>
        %x1 = slice %p [0:1, 1:9:2, 0:9, 0:2]      -> tensor<1x4x9x2xf32>
        %w1 = slice %w [1:2, 0:3, 0:2, 0:4]        -> tensor<1x3x2x4xf32>   (tap 1)
        %c1 = convolution(%x1, %w1) window = {stride = [1, 1]} -> tensor<1x4x7x4xf32>
        %y  = add %c0, %c1

    Phases whose kernel slice would be empty are not emitted; rhs_dilation and
    window_reversal are folded exactly (see :func:`_dim_phases`); group counts are copied.
    Skipped: all strides 1 ("unit-stride"); several phases whose sum would not be exact
    ("unsupported-element-type", "mixed-integer-accumulation": see :func:`_inexact_sum`).
    """

    name: ClassVar[str] = "explicitlyStride"

    def rewrite(self, conv: ir.Operation, sweep: Sweep) -> tuple[ir.Operation, str | None]:
        g = conv_geometry(conv, sweep.dialect)
        if all(s == 1 for s in g.strides):
            return conv, "unit-stride"
        if any(p != (0, 0) for p in g.padding) or any(dil != 1 for dil in g.lhs_dilation):
            return conv, "implicit-padding"  # unreachable after explicitlyPad; kept as a guard
        per_dim = [
            _dim_phases(n, k, o, s, r, rev)
            for n, k, o, s, r, rev in zip(
                g.input_extents, g.kernel_extents, g.output_extents, g.strides,
                g.rhs_dilation, g.reversal, strict=True,
            )
        ]
        phases = list(itertools.product(*per_dim))
        result_type = conv.results[0].type
        if len(phases) > 1:
            reason = _inexact_sum(conv)
            if reason is not None:
                return conv, reason
        d = sweep.dialect
        n = len(g.strides)
        total = None
        for phase in phases:
            x = self._input_slice(sweep, conv, g, phase)
            w = self._kernel_slice(sweep, conv, g, phase)
            window = {"window_strides": d.i64_list([1] * n)}
            dilation = [p.rhs_dilation for p in phase]
            if "rhs_dilation" in conv.attributes or any(r != 1 for r in dilation):
                window["rhs_dilation"] = d.i64_list(dilation)
            part = _rebuild_conv(sweep, conv, x, w, result_type, **window).result
            total = part if total is None else sweep.create(
                "add", [result_type], [total, part], {}, before=conv
            ).result
        sweep.replace(conv, [total])
        return total.owner, None

    @staticmethod
    def _input_slice(sweep, conv, g: ConvGeometry, phase) -> ir.Value:
        starts, limits, strides = [0] * len(g.lhs_shape), list(g.lhs_shape), [1] * len(g.lhs_shape)
        for i, (dim, p) in enumerate(zip(g.input_spatial, phase, strict=True)):
            if g.strides[i] != 1:
                starts[dim], limits[dim] = _strided_range(
                    p.in_start, p.in_count, g.strides[i], g.lhs_shape[dim]
                )
                strides[dim] = g.strides[i]
        return _slice(sweep, conv.operands[0], starts, limits, strides, before=conv)

    @staticmethod
    def _kernel_slice(sweep, conv, g: ConvGeometry, phase) -> ir.Value:
        starts, limits, strides = [0] * len(g.rhs_shape), list(g.rhs_shape), [1] * len(g.rhs_shape)
        for dim, p in zip(g.kernel_spatial, phase, strict=True):
            if p.k_count == 1:
                starts[dim], limits[dim] = p.k_start, p.k_start + 1
            elif p.k_count != g.rhs_shape[dim]:
                starts[dim], limits[dim] = _strided_range(
                    p.k_start, p.k_count, p.k_stride, g.rhs_shape[dim]
                )
                strides[dim] = p.k_stride
        return _slice(sweep, conv.operands[1], starts, limits, strides, before=conv)


def _inexact_sum(conv: ir.Operation) -> str | None:
    """Why adding partial convs would not reproduce the conv's own sum, if it would not.

    Quantized (and other non-numeric) element types: ``add`` requantizes each partial sum.
    Integer convs whose operands are narrower than the result: engines disagree on where
    such a conv accumulates (XLA in the result type; the reference interpreter in the
    operand type, wrapping there), so the split sum is exact under only one of them.
    """
    result = ir.RankedTensorType(conv.results[0].type).element_type
    operands = [ir.RankedTensorType(v.type).element_type for v in conv.operands]
    try:
        dtypes = [dtype_of(t) for t in (result, *operands)]
    except UnsupportedElementType:
        return "unsupported-element-type"
    if dtypes[0].kind in "iub" and any(dt != dtypes[0] for dt in dtypes[1:]):
        return "mixed-integer-accumulation"
    return None


def _is_backward_conv(op: ir.Operation, dialect: Dialect) -> bool:
    """Our reading of isBackwardConv: a data-gradient (lhs_dilation > 1) or
    filter-gradient (batch_group_count > 1) convolution."""
    g = conv_geometry(op, dialect)
    bgc = int(ir.IntegerAttr(op.attributes["batch_group_count"]).value)
    return bgc > 1 or (g is not None and any(dil != 1 for dil in g.lhs_dilation))


def _fed_by_conv(op: ir.Operation, dialect: Dialect) -> bool:
    """Whether a producer chain of ``op``'s operands reaches another convolution."""
    pending, seen = list(op.operands), set()
    while pending:
        src = defining_op_of(pending.pop())
        if src is None or src in seen:
            continue
        seen.add(src)
        if dialect.is_op(src, "convolution"):
            return True
        pending.extend(src.operands)
    return False


def functions(module: ir.Operation) -> list[ir.Operation]:
    """Every ``func.func`` of the module (the seed's pass is func-level: it runs on each)."""
    return [
        op.operation for op in module.regions[0].blocks[0].operations
        if op.operation.name == "func.func"
    ]


def convolutions(func: ir.Operation, dialect: Dialect) -> list[ir.Operation]:
    """The convolutions under ``func``, pre-order through nested regions (the seed's walk)."""
    name = dialect.op("convolution")
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == name:
            found.append(op)
        return ir.WalkResult.ADVANCE

    func.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


@dataclass(frozen=True)
class CanonicalizeConv(ModulePass):
    """canonicalize-conv: CanonicalizeConv's explicitlyPad + explicitlyStride on MHLO."""

    name: ClassVar[str] = "canonicalize-conv"
    summary: ClassVar[str] = (
        "CanonicalizeConv: make 2-D conv padding and strides explicit (pad, strided slices), "
        "on MHLO ops"
    )
    dialect: ClassVar[Dialect] = MHLO

    min_spatial_extent: int = option(
        DEFAULT_MIN_SPATIAL_EXTENT,
        "leave convs with an lhs spatial extent below this alone (the seed: extent <= 1)",
        min=0,
    )
    small_spatial_extent: int = option(
        DEFAULT_SMALL_SPATIAL_EXTENT,
        "lhs spatial extents up to this are canonicalized only with canonicalize-small-extents "
        "(the seed: 2-3)",
        min=0,
    )
    canonicalize_small_extents: bool = option(
        DEFAULT_CANONICALIZE_SMALL_EXTENTS,
        "the seed's small-extent feature flag (its default was not recovered; ours is off)",
    )
    max_stride_or_padding: int = option(
        DEFAULT_MAX_STRIDE_OR_PADDING,
        "leave convs with a window stride or padding edge above this alone (the seed: 31)",
    )

    def gate(self) -> ConvGate:
        return ConvGate(
            min_extent=self.min_spatial_extent,
            small_extent=self.small_spatial_extent,
            small_extents=self.canonicalize_small_extents,
            max_stride_or_pad=self.max_stride_or_padding,
        )

    @staticmethod
    def rewrites() -> tuple[ExplicitlyPad | ExplicitlyStride, ...]:
        """The seed's fixed order: pad first (the stride slices index the padded input)."""
        return (ExplicitlyPad(), ExplicitlyStride())

    def run(self, module: ir.Operation, state: RunState) -> None:
        d = self.dialect
        sweep = Sweep(d, self.name, state, {})
        gate, rewrites = self.gate(), self.rewrites()
        stats = [sweep.stats(r.name) for r in rewrites]
        # Phase 1: collect (no IR is touched while the walk is in flight).
        eligible = []
        for func in functions(module):
            for conv in convolutions(func, d):
                reason = gate.reject(conv, d)
                for st in stats:
                    st.matched += 1
                    if reason is not None:
                        st.skip(reason)
                if reason is None:
                    eligible.append(conv)
        # Phase 2: rewrite each, pad first, stride second.
        for conv in eligible:
            for rewrite, st in zip(rewrites, stats, strict=True):
                conv, reason = rewrite.rewrite(conv, sweep)
                if reason is None:
                    st.rewritten += 1
                else:
                    st.skip(reason)
        # Phase 2b: the seed's verbose-only isBackwardConv re-pad, as a debug log line.
        if log.isEnabledFor(logging.DEBUG):
            for func in functions(module):
                for conv in convolutions(func, d):
                    if _is_backward_conv(conv, d) and _fed_by_conv(conv, d):
                        log.debug("%s: backward convolution fed by a convolution at %s",
                                  self.name, conv.location)


@dataclass(frozen=True)
class StablehloCanonicalizeConv(CanonicalizeConv):
    """stablehlo-canonicalize-conv: the same rewrites on StableHLO ops."""

    name: ClassVar[str] = "stablehlo-canonicalize-conv"
    summary: ClassVar[str] = (
        "CanonicalizeConv: make 2-D conv padding and strides explicit (pad, strided slices), "
        "on StableHLO ops"
    )
    dialect: ClassVar[Dialect] = STABLEHLO


__all__ = [
    "CanonicalizeConv",
    "ConvGate",
    "ConvGeometry",
    "ExplicitlyPad",
    "ExplicitlyStride",
    "StablehloCanonicalizeConv",
    "conv_geometry",
]
