"""canonicalize-conv / stablehlo-canonicalize-conv (the seed's CanonicalizeConv).

Make a 2-D convolution's window padding and window strides explicit, so the backend only
sees zero-padding, unit-stride convolutions::

    conv(x, w, stride s, pad p)
      -> explicitlyPad:     conv(pad(x, p), w, stride s, pad 0)
      -> explicitlyStride:  sum over phases of conv(slice(pad(x, p)), slice(w), stride 1)

The driver is the seed's two-phase one: a pre-order walk of every ``func.func`` (through
nested regions) collects the convolutions that pass the :class:`ConvGate`
(``canCanonicalize``), then each collected conv is rewritten, :class:`ExplicitlyPad` first,
:class:`ExplicitlyStride` second (each conv's :class:`ConvGeometry` is read once, for the
gate; the padded conv's is derived from it). The only ops built are the seed's vocabulary:
pad, slice, add, constant and convolution. Dimension numbers, feature/batch group counts,
precision_config (and every other attribute not named below) are copied verbatim onto each
rebuilt conv; there is no transpose and no layout change.

Where the seed's literal algebra would change results we keep the results (see
docs/seed-notes-conv.md): lhs_dilation is materialized as the pad's interior padding, and
a strided conv whose kernel is wider than 1 along the strided dim is decomposed exactly into
polyphase partial convs (the seed's single strided slice is kept for extent-1 kernels).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import logging
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import mhlo, stablehlo

from ..dialect import MHLO, STABLEHLO, Dialect, i64_matrix
from ..elements import UnsupportedElementType, dtype_of, make_elements
from ..ir_util import (
    UnreadableAttribute,
    attrs_of,
    defining_op_of,
    functions,
    i64_values,
    static_shape,
)
from ..penguin_sort import is_penguin_sort
from .base import ModulePass, RunState, op_error, option, warn_if_other_dialect
from .rewriter import Rewriter
from .sweep import Sweep, collect

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

    def __hash__(self) -> int:  # the plans' key, hashed once per geometry
        return self._hash

    @functools.cached_property
    def _hash(self) -> int:
        return hash(dataclasses.astuple(self))

    @property
    def input_extents(self) -> tuple[int, ...]:
        return tuple(self.lhs_shape[d] for d in self.input_spatial)

    @property
    def kernel_extents(self) -> tuple[int, ...]:
        return tuple(self.rhs_shape[d] for d in self.kernel_spatial)

    @property
    def output_extents(self) -> tuple[int, ...]:
        return tuple(self.result_shape[d] for d in self.output_spatial)


class _Memo:
    """What a pass run reads off types and attributes, memoized per type or attribute.

    MLIR uniques types and attributes in their context (which outlives the run), so equal
    keys are the same type or attribute and the value read once is the value read again.
    Reading a shape or an integer list through the bindings costs microseconds; a dict
    lookup a fraction of one.
    """

    def __init__(self) -> None:
        self._shapes: dict[ir.Type, tuple[int, ...] | None] = {}
        self._elements: dict[ir.Type, ir.Type] = {}
        self._ints: dict[ir.Attribute, tuple[int, ...]] = {}
        self._pairs: dict[ir.Attribute, tuple[tuple[int, int], ...]] = {}
        self._dims: dict[ir.Attribute, tuple[tuple[int, ...], ...]] = {}
        self._sums: dict[tuple[ir.Type, ...], str | None] = {}
        self._partials: dict[ir.Type, ir.Type] = {}
        self._geometries: dict[tuple, ConvGeometry | None] = {}

    def geometry(
        self, op: ir.Operation, dialect: Dialect, attributes: dict[str, ir.Attribute]
    ) -> ConvGeometry | None:
        """``conv_geometry(op, dialect, self, attributes)``, one object per distinct
        geometry: keyed by what it is read from (the operand and result types and the
        window attributes; ``attributes`` are ``op``'s, by name)."""
        operands = op.operands
        key = (
            operands[0].type,
            operands[1].type,
            op.results[0].type,
            *[attributes.get(name) for name in _GEOMETRY_ATTRIBUTES],
        )
        try:
            return self._geometries[key]
        except KeyError:
            g = self._geometries[key] = conv_geometry(op, dialect, self, attributes)
            return g

    def shape(self, t: ir.Type) -> tuple[int, ...] | None:
        """``static_shape(t)``."""
        try:
            return self._shapes[t]
        except KeyError:
            shape = self._shapes[t] = static_shape(t)
            return shape

    def element(self, t: ir.Type) -> ir.Type:
        """The element type of a ranked tensor type."""
        try:
            return self._elements[t]
        except KeyError:
            element = self._elements[t] = ir.RankedTensorType(t).element_type
            return element

    def ints(self, attr: ir.Attribute) -> tuple[int, ...]:
        """``i64_values(attr)`` as a tuple."""
        try:
            return self._ints[attr]
        except KeyError:
            values = self._ints[attr] = tuple(i64_values(attr))
            return values

    def pairs(self, attr: ir.Attribute) -> tuple[tuple[int, int], ...]:
        """An Nx2 integer elements attribute (padding) as N (low, high) pairs."""
        try:
            return self._pairs[attr]
        except KeyError:
            values = self._pairs[attr] = tuple(zip(*[iter(i64_values(attr))] * 2, strict=True))
            return values

    def spatial_dims(self, attr: ir.Attribute, dialect: Dialect) -> tuple[tuple[int, ...], ...]:
        """(input, kernel, output) spatial dimensions of conv dimension numbers."""
        try:
            return self._dims[attr]
        except KeyError:
            dn = _DIMENSION_NUMBERS[dialect.prefix](attr)
            dims = self._dims[attr] = (
                tuple(dn.input_spatial_dimensions),
                tuple(dn.kernel_spatial_dimensions),
                tuple(dn.output_spatial_dimensions),
            )
            return dims

    def partial_type(self, t: ir.Type) -> ir.Type:
        """The type of the partial convs of a conv of result type ``t`` summed over
        several phases: ``t`` itself, or for a float narrower than f32 the same shape in
        f32 (see ExplicitlyStride)."""
        try:
            return self._partials[t]
        except KeyError:
            element = self.element(t)
            if isinstance(element, ir.FloatType) and element.width < 32:
                shape = ir.RankedTensorType(t).shape
                wide = ir.RankedTensorType.get(shape, ir.F32Type.get())
            else:
                wide = t
            self._partials[t] = wide
            return wide

    def inexact_sum(self, conv: ir.Operation) -> str | None:
        """``_inexact_sum(conv)``."""
        key = (conv.results[0].type, *(v.type for v in conv.operands))
        try:
            return self._sums[key]
        except KeyError:
            reason = self._sums[key] = _inexact_sum(conv)
            return reason


# Every attribute conv_geometry reads.
_GEOMETRY_ATTRIBUTES = (
    "dimension_numbers",
    "padding",
    "window_strides",
    "lhs_dilation",
    "rhs_dilation",
    "window_reversal",
)


def _window_list(
    attributes: ir.OpAttributeMap | dict[str, ir.Attribute],
    name: str,
    n: int,
    default: int,
    memo: _Memo,
) -> tuple[int, ...]:
    if name not in attributes:
        return (default,) * n
    return memo.ints(attributes[name])


def conv_geometry(
    op: ir.Operation,
    dialect: Dialect,
    memo: _Memo | None = None,
    attributes: dict[str, ir.Attribute] | None = None,
) -> ConvGeometry | None:
    """The geometry of a conv with static operand and result shapes, else None.

    ``memo``: the pass run's memoized reads (a fresh one if None); ``attributes``: the
    conv's (``attrs_of``), if the caller has read them.
    """
    if memo is None:
        memo = _Memo()
    operands = op.operands
    shapes = [memo.shape(v.type) for v in (operands[0], operands[1], op.results[0])]
    if any(s is None for s in shapes):
        return None
    if attributes is None:
        attributes = op.attributes
    input_spatial, kernel_spatial, output_spatial = memo.spatial_dims(
        attributes["dimension_numbers"], dialect
    )
    n = len(input_spatial)
    padding = memo.pairs(attributes["padding"]) if "padding" in attributes else ((0, 0),) * n
    return ConvGeometry(
        lhs_shape=shapes[0],
        rhs_shape=shapes[1],
        result_shape=shapes[2],
        input_spatial=input_spatial,
        kernel_spatial=kernel_spatial,
        output_spatial=output_spatial,
        strides=_window_list(attributes, "window_strides", n, 1, memo),
        padding=padding,
        lhs_dilation=_window_list(attributes, "lhs_dilation", n, 1, memo),
        rhs_dilation=_window_list(attributes, "rhs_dilation", n, 1, memo),
        reversal=tuple(bool(v) for v in _window_list(attributes, "window_reversal", n, 0, memo)),
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

    def reject(
        self, op: ir.Operation, dialect: Dialect, g: ConvGeometry | None = None
    ) -> str | None:
        """None if the conv is eligible, else the skip reason.

        ``g`` is ``conv_geometry(op, dialect)`` when the caller has it already (read here
        otherwise).
        """
        if g is None:
            ranks = (_rank(op.operands[0]), _rank(op.operands[1]))
            if None in ranks:
                return "dynamic-shape"
            if ranks != (4, 4):
                return "rank-not-4"
            g = conv_geometry(op, dialect)
            if g is None:
                return "dynamic-shape"
        elif (len(g.lhs_shape), len(g.rhs_shape)) != (4, 4):
            return "rank-not-4"
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


class _Builder(_Memo):
    """Creates ops for one pass run, right before one conv at a time.

    What ``Sweep.create`` does (the op at the conv's location, inserted before it), with
    one insertion point and location per conv instead of one per op, and the integer-list
    attributes and tensor types it builds memoized: MLIR uniques both, so a cached object
    is the very attribute or type a new ``get`` would return. Only convolutions are
    registered with the sweep (the one kind of op a later rewrite replaces); the sweep has
    no worklists, so registering the rest would change nothing.
    """

    def __init__(self, sweep: Sweep) -> None:
        super().__init__()
        self.sweep = sweep
        self.dialect = sweep.dialect
        self._names: dict[str, str] = {}
        self._lists: dict[tuple[int, ...], ir.Attribute] = {}
        self._types: dict[tuple, ir.Type] = {}
        self._zeros: dict[ir.Type, ir.Attribute] = {}
        # explicitlyStride's partial convs per geometry (ExplicitlyStride._plan), and what
        # it builds per geometry and types (ExplicitlyStride._steps)
        self.stride_plans: dict[ConvGeometry, tuple] = {}
        self.stride_steps: dict[tuple, str | tuple] = {}
        # explicitlyPad's, per geometry and lhs type: (plan, zero, the pad's result types)
        self.pad_plans: dict[tuple, tuple[_PadPlan, ir.Attribute, list[ir.Type]]] = {}
        self._ip: ir.InsertionPoint | None = None
        self._loc: ir.Location | None = None
        # (a conv, its attributes by name): read once per conv, handed from rewrite to rewrite
        self._handed: tuple[ir.Operation, dict[str, ir.Attribute]] | None = None

    def hand(self, conv: ir.Operation, attributes: dict[str, ir.Attribute]) -> None:
        """``conv``'s attributes, for the next :meth:`attributes` of it."""
        self._handed = (conv, attributes)

    def attributes(self, conv: ir.Operation) -> dict[str, ir.Attribute]:
        """``conv``'s attributes by name, the caller's to change: the ones handed over for
        it, else read now."""
        handed, self._handed = self._handed, None
        if handed is not None and handed[0] is conv:
            return handed[1]
        return attrs_of(conv)

    def before(self, op: ir.Operation) -> None:
        """Insert the next ops right before ``op``, at its location."""
        self._ip = ir.InsertionPoint(op)
        self._loc = op.location

    def create(
        self,
        mnemonic: str,
        results: Sequence[ir.Type],
        operands: Sequence[ir.Value],
        attributes: dict[str, ir.Attribute],
    ) -> ir.Operation:
        name = self._names.get(mnemonic)
        if name is None:
            name = self._names[mnemonic] = self.dialect.op(mnemonic)
        op = ir.Operation.create(
            name,
            results=results,
            operands=operands,
            attributes=attributes,
            regions=0,
            loc=self._loc,
            ip=self._ip,
        )
        if mnemonic == "convolution":
            return self.sweep.created(op)
        if self.sweep.created_log is not None:
            self.sweep.created_log.append(op)
        return op

    def i64_list(self, values: Iterable[int]) -> ir.Attribute:
        key = tuple(values)
        attr = self._lists.get(key)
        if attr is None:
            attr = self._lists[key] = self.dialect.i64_list(key)
        return attr

    def tensor(self, shape: Iterable[int], element: ir.Type) -> ir.Type:
        key = (tuple(shape), element)
        t = self._types.get(key)
        if t is None:
            t = self._types[key] = ir.RankedTensorType.get(list(shape), element)
        return t

    def zero(self, conv: ir.Operation, element: ir.Type) -> ir.Attribute:
        """The scalar zero constant of ``element`` (NCC_EUET001 if there is none)."""
        attr = self._zeros.get(element)
        if attr is None:
            attr = make_elements(_zero(conv, element), self.tensor([], element))
            self._zeros[element] = attr
        return attr

    def slicing(
        self, spec: _Slice | None, element: ir.Type
    ) -> tuple[list[ir.Type], dict[str, ir.Attribute]] | None:
        """The result types and attributes of a slice as ``spec`` says, of ``element``
        type (None when ``spec`` is None: the identity, no slice)."""
        if spec is None:
            return None
        attributes = {
            "start_indices": self.i64_list(spec.starts),
            "limit_indices": self.i64_list(spec.limits),
            "strides": self.i64_list(spec.strides),
        }
        return [self.tensor(spec.shape, element)], attributes


@dataclass(frozen=True)
class _Slice:
    """A slice's bounds and its result shape."""

    starts: tuple[int, ...]
    limits: tuple[int, ...]
    strides: tuple[int, ...]
    shape: tuple[int, ...]

    @staticmethod
    def of(
        shape: Sequence[int], starts: Sequence[int], limits: Sequence[int], strides: Sequence[int]
    ) -> _Slice | None:
        """The slice of an operand of static ``shape``; None when it is the identity."""
        bounds = zip(starts, limits, strides, shape, strict=True)
        if all((s, lim, st) == (0, n, 1) for s, lim, st, n in bounds):
            return None
        out = [-(-(lim - s) // st) for s, lim, st in zip(starts, limits, strides, strict=True)]
        return _Slice(tuple(starts), tuple(limits), tuple(strides), tuple(out))


def _strided_range(start: int, count: int, stride: int, extent: int) -> tuple[int, int]:
    """(start, limit) of ``count`` elements from ``start`` by ``stride`` within ``extent``.

    The limit is the full extent when that selects the same elements (the seed's form for
    an extent-1 kernel), else the tightest bound.
    """
    if -(-(extent - start) // stride) == count:
        return start, extent
    return start, start + stride * (count - 1) + 1


class _ConvRewriter(Rewriter):
    """A rewrite of one convolution: ``apply`` returns (the conv now in place, the skip
    reason or None, that conv's geometry), which the pass hands to the next rewrite."""

    root: ClassVar[str] = "convolution"

    def rewrite(self, op: ir.Operation, sweep: Sweep) -> str | None:
        return self.apply(op, sweep)[1]

    def apply(
        self,
        conv: ir.Operation,
        sweep: Sweep,
        g: ConvGeometry | None = None,
        builder: _Builder | None = None,
    ) -> tuple[ir.Operation, str | None, ConvGeometry | None]:  # pragma: no cover
        raise NotImplementedError


class ExplicitlyPad(_ConvRewriter):
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
    exact: ClassVar[bool] = True  # the pad is the conv's own padded input
    exact_on_xla: ClassVar[bool] = False  # XLA sums conv(pad(x)) in its own order

    def apply(
        self,
        conv: ir.Operation,
        sweep: Sweep,
        g: ConvGeometry | None = None,
        builder: _Builder | None = None,
    ) -> tuple[ir.Operation, str | None, ConvGeometry]:
        """(the conv now in place, the skip reason or None, that conv's geometry).

        ``g`` is ``conv_geometry(conv)`` if the caller has it; ``builder`` the run's
        :class:`_Builder` (a new one otherwise).
        """
        b = builder if builder is not None else _Builder(sweep)
        if g is None:
            g = conv_geometry(conv, sweep.dialect, b)
        if all(p == (0, 0) for p in g.padding) and all(dil == 1 for dil in g.lhs_dilation):
            return conv, "zero-padding", g
        operands = conv.operands
        lhs = operands[0]
        key = (g, lhs.type)
        built = b.pad_plans.get(key)
        if built is None:  # per geometry and lhs type: the plan, the zero, the pad's type
            plan = self._plan(g, b)
            element = b.element(lhs.type)
            zero = b.zero(conv, element)
            built = b.pad_plans[key] = (plan, zero, [b.tensor(plan.padded.lhs_shape, element)])
        plan, zero, padded_types = built
        b.before(conv)
        cst = b.create("constant", [zero.type], [], {"value": zero})
        pad = b.create("pad", padded_types, [lhs, cst.result], plan.pad)
        attributes = b.attributes(conv)
        attributes["padding"] = plan.no_padding
        if "lhs_dilation" in attributes or plan.dilated:
            attributes["lhs_dilation"] = plan.no_dilation
        result = conv.results[0]
        new = b.create("convolution", [result.type], [pad.result, operands[1]], attributes)
        b.hand(new, attributes)  # unchanged from here on: explicitlyStride reads it
        sweep.replace(conv, [new.result])
        return new, None, plan.padded

    @staticmethod
    def _plan(g: ConvGeometry, b: _Builder) -> _PadPlan:
        """The pad of a conv of geometry ``g`` (planned once per geometry per run)."""
        interior = [dil - 1 for dil in g.lhs_dilation]
        rank = len(g.lhs_shape)
        low, high, inner = [0] * rank, [0] * rank, [0] * rank
        for i, dim in enumerate(g.input_spatial):
            low[dim], high[dim] = g.padding[i]
            inner[dim] = interior[i]
        padded_shape = tuple(
            n + lo + hi + max(n - 1, 0) * k
            for n, lo, hi, k in zip(g.lhs_shape, low, high, inner, strict=True)
        )
        n = len(g.input_spatial)
        return _PadPlan(
            pad={
                "edge_padding_low": b.i64_list(low),
                "edge_padding_high": b.i64_list(high),
                "interior_padding": b.i64_list(inner),
            },
            no_padding=i64_matrix([[0, 0]] * n),
            no_dilation=b.i64_list([1] * n),
            dilated=any(interior),
            # The geometry conv_geometry(new conv) reads: the padded lhs, no padding, no
            # dilation.
            padded=dataclasses.replace(
                g, lhs_shape=padded_shape, padding=((0, 0),) * n, lhs_dilation=(1,) * n
            ),
        )


@dataclass(frozen=True)
class _PadPlan:
    """What explicitlyPad builds for one conv geometry: the pad's attributes, the new
    conv's padding and lhs_dilation, and its geometry."""

    pad: dict[str, ir.Attribute]
    no_padding: ir.Attribute
    no_dilation: ir.Attribute
    dilated: bool
    padded: ConvGeometry


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


class ExplicitlyStride(_ConvRewriter):
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
    A float result narrower than f32 (f16, bf16, the f8 types) is summed in f32: each
    partial conv has an f32 result, and one ``convert`` rounds the sum to the conv's type
    (XLA accumulates such a conv in f32, and rounding each partial to f16 can overflow
    where the conv's own sum does not: +6e4 +6e4 -6e4 -6e4 is inf in f16, 0 in f32).
    Skipped: all strides 1 ("unit-stride"); several phases whose sum would not be exact
    ("unsupported-element-type", "mixed-integer-accumulation": see :func:`_inexact_sum`).
    """

    name: ClassVar[str] = "explicitlyStride"
    exact: ClassVar[bool] = False  # several phases summed: the sum is re-associated

    def apply(
        self,
        conv: ir.Operation,
        sweep: Sweep,
        g: ConvGeometry | None = None,
        builder: _Builder | None = None,
    ) -> tuple[ir.Operation, str | None, ConvGeometry | None]:
        """(the op now in place of the conv, the skip reason or None, the conv's geometry
        if it is still in place). ``g`` and ``builder`` as for :class:`ExplicitlyPad`."""
        b = builder if builder is not None else _Builder(sweep)
        if g is None:
            g = conv_geometry(conv, sweep.dialect, b)
        if all(s == 1 for s in g.strides):
            return conv, "unit-stride", g
        if any(p != (0, 0) for p in g.padding) or any(dil != 1 for dil in g.lhs_dilation):
            # unreachable after explicitlyPad; kept as a guard
            return conv, "implicit-padding", g
        result_type = conv.results[0].type
        lhs, rhs = conv.operands
        key = (g, result_type, lhs.type, rhs.type)
        steps = b.stride_steps.get(key)
        if steps is None:  # programs repeat their convs: each kind planned once a run
            steps = b.stride_steps[key] = self._steps(conv, g, b, key[1:])
        if isinstance(steps, str):
            return conv, steps, g
        partial_type, unit_strides, phases = steps
        b.before(conv)
        base = b.attributes(conv)
        keep_dilation = "rhs_dilation" in base
        base["window_strides"] = unit_strides
        total = None
        for x_slice, w_slice, dilation, dilated in phases:
            x = lhs if x_slice is None else b.create("slice", x_slice[0], [lhs], x_slice[1]).result
            w = rhs if w_slice is None else b.create("slice", w_slice[0], [rhs], w_slice[1]).result
            attributes = base
            if keep_dilation or dilated:
                attributes = {**base, "rhs_dilation": dilation}
            part = b.create("convolution", [partial_type], [x, w], attributes).result
            total = (
                part if total is None else b.create("add", [partial_type], [total, part], {}).result
            )
        if partial_type != result_type:  # one rounding to the narrow type, as the conv's
            total = b.create("convert", [result_type], [total], {}).result
        sweep.replace(conv, [total])
        return total.owner, None, None

    def _steps(
        self,
        conv: ir.Operation,
        g: ConvGeometry,
        b: _Builder,
        types: tuple[ir.Type, ir.Type, ir.Type],
    ) -> str | tuple[ir.Type, ir.Attribute, list[tuple]]:
        """What rewriting a strided conv of geometry ``g`` and (result, lhs, rhs) ``types``
        builds: the partial convs' result type, the unit window strides, and per partial
        conv its lhs slice and kernel slice ((result types, attributes), or None for the
        operand itself), its rhs_dilation and whether that is other than 1; or why it is
        skipped."""
        plan = b.stride_plans.get(g)
        if plan is None:
            plan = b.stride_plans[g] = self._plan(g)
        result_type, lhs_type, rhs_type = types
        partial_type = result_type
        if len(plan) > 1:
            reason = b.inexact_sum(conv)
            if reason is not None:
                return reason
            partial_type = b.partial_type(result_type)
        elements = (b.element(lhs_type), b.element(rhs_type))
        phases = [
            (
                *(b.slicing(spec, element) for spec, element in zip(slices, elements, strict=True)),
                b.i64_list(dilation),
                any(r != 1 for r in dilation),
            )
            for *slices, dilation in plan
        ]
        return partial_type, b.i64_list([1] * len(g.strides)), phases

    @classmethod
    def _plan(
        cls, g: ConvGeometry
    ) -> tuple[tuple[_Slice | None, _Slice | None, tuple[int, ...]], ...]:
        """Per partial conv: its lhs slice, its kernel slice (None: the operand itself) and
        its rhs_dilation. Depends on the geometry alone, so a pass run plans each geometry
        once (programs repeat their convolution shapes)."""
        per_dim = [
            _dim_phases(n, k, o, s, r, rev)
            for n, k, o, s, r, rev in zip(
                g.input_extents,
                g.kernel_extents,
                g.output_extents,
                g.strides,
                g.rhs_dilation,
                g.reversal,
                strict=True,
            )
        ]
        return tuple(
            (
                _Slice.of(g.lhs_shape, *cls._input_slice(g, phase)),
                _Slice.of(g.rhs_shape, *cls._kernel_slice(g, phase)),
                tuple(p.rhs_dilation for p in phase),
            )
            for phase in itertools.product(*per_dim)
        )

    @staticmethod
    def _input_slice(
        g: ConvGeometry, phase: tuple[_Phase, ...]
    ) -> tuple[list[int], list[int], list[int]]:
        """(starts, limits, strides) of the lhs slice one phase reads."""
        rank = len(g.lhs_shape)
        starts, limits, strides = [0] * rank, list(g.lhs_shape), [1] * rank
        for i, (dim, p) in enumerate(zip(g.input_spatial, phase, strict=True)):
            if g.strides[i] != 1:
                starts[dim], limits[dim] = _strided_range(
                    p.in_start, p.in_count, g.strides[i], g.lhs_shape[dim]
                )
                strides[dim] = g.strides[i]
        return starts, limits, strides

    @staticmethod
    def _kernel_slice(
        g: ConvGeometry, phase: tuple[_Phase, ...]
    ) -> tuple[list[int], list[int], list[int]]:
        """(starts, limits, strides) of the kernel slice one phase reads."""
        rank = len(g.rhs_shape)
        starts, limits, strides = [0] * rank, list(g.rhs_shape), [1] * rank
        for dim, p in zip(g.kernel_spatial, phase, strict=True):
            if p.k_count == 1:
                starts[dim], limits[dim] = p.k_start, p.k_start + 1
            elif p.k_count != g.rhs_shape[dim]:
                starts[dim], limits[dim] = _strided_range(
                    p.k_start, p.k_count, p.k_stride, g.rhs_shape[dim]
                )
                strides[dim] = p.k_stride
        return starts, limits, strides


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


def convolutions(funcs: list[ir.Operation], dialect: Dialect) -> list[ir.Operation]:
    """The convolutions under each of ``funcs`` in turn, pre-order through nested regions
    (the seed's walk).

    Listed by MLIR's name-dispatched walk, which visits in post-order: a convolution has no
    regions, so no convolution is nested in another and the two orders list them alike.
    """
    return _convolutions_and_penguin_sorts(funcs, dialect)[0]


def _convolutions_and_penguin_sorts(
    funcs: list[ir.Operation], dialect: Dialect
) -> tuple[list[ir.Operation], list[ir.Operation]]:
    """:func:`convolutions`, and the penguin-form sorts under ``funcs`` from the same walk
    (the pass neither makes nor erases sorts: they are those it leaves, for the verifier;
    one walk lists both at the price of one)."""
    if not funcs:
        return [], []
    conv, sort = dialect.op("convolution"), dialect.op("sort")
    with funcs[0].context:
        found = collect(funcs, [conv, sort])
    return found[conv], [op for op in found[sort] if is_penguin_sort(op)]


def _summary(dialect: str) -> str:
    return (
        "CanonicalizeConv: make 2-D conv padding and strides explicit (pad, strided slices), "
        f"on {dialect} ops"
    )


@dataclass(frozen=True)
class CanonicalizeConv(ModulePass):
    """canonicalize-conv: CanonicalizeConv's explicitlyPad + explicitlyStride on MHLO."""

    name: ClassVar[str] = "canonicalize-conv"
    summary: ClassVar[str] = _summary("MHLO")
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
        min=0,
    )

    def gate(self) -> ConvGate:
        return ConvGate(
            min_extent=self.min_spatial_extent,
            small_extent=self.small_spatial_extent,
            small_extents=self.canonicalize_small_extents,
            max_stride_or_pad=self.max_stride_or_padding,
        )

    @staticmethod
    def rewriters() -> tuple[ExplicitlyPad | ExplicitlyStride, ...]:
        """The seed's fixed order: pad first (the stride slices index the padded input).

        Both rewrite one convolution at a time; the pass applies them to each eligible
        conv in turn (the seed's per-conv loop), each handing the next the conv it leaves.
        """
        return (ExplicitlyPad(), ExplicitlyStride())

    def run(self, module: ir.Operation, state: RunState) -> None:
        d = self.dialect
        sweep = Sweep(d, self.name, state, {})
        builder = _Builder(sweep)
        gate, rewriters = self.gate(), self.rewriters()
        stats = [sweep.stats(r.name) for r in rewriters]
        recorder = state.recorder
        # Phase 1: collect (no IR is touched while the walk is in flight). A conv the gate
        # rejects counts as skipped, with the gate's reason, by every rewriter.
        eligible = []
        convs, state.penguin_sorts = _convolutions_and_penguin_sorts(functions(module), d)
        if not convs:
            warn_if_other_dialect(functions(module), d.prefix, self.name, state)
        verdicts: dict[ConvGeometry, str | None] = {}  # the gate's, per geometry
        for conv in convs:
            try:  # every attribute, read once: the geometry's and the rewrites'
                attributes = attrs_of(conv)
            except UnreadableAttribute:  # the gate's reason first, as for any conv
                attributes = None
            if attributes is None:
                g = conv_geometry(conv, d, builder)
            else:
                g = builder.geometry(conv, d, attributes)
            if g is None:  # the gate reads the conv itself
                reason = gate.reject(conv, d, g)
            elif g in verdicts:
                reason = verdicts[g]
            else:
                reason = verdicts[g] = gate.reject(conv, d, g)
            if reason is None and attributes is None:
                reason = "attribute-not-readable"  # the rewrites rebuild the conv
            if reason is None:
                eligible.append((conv, g, attributes))
            else:
                seen = recorder.before(conv) if recorder is not None else None
                for rewriter, st in zip(rewriters, stats, strict=True):
                    Rewriter.record(st, reason)
                    if seen is not None:
                        recorder.add(self.name, rewriter.name, seen, reason, None)
        # Phase 2: each eligible conv through the table in order, pad first, stride second.
        # A rewrite changes no other conv, so the geometry read in phase 1 still holds; each
        # rewrite hands the next one the conv it leaves in place and that conv's geometry.
        for conv, g, attributes in eligible:
            builder.hand(conv, attributes)
            for rewriter, st in zip(rewriters, stats, strict=True):
                if recorder is None:
                    conv, reason, g = rewriter.apply(conv, sweep, g, builder)
                    Rewriter.record(st, reason)
                    continue
                seen, sweep.created_log = recorder.before(conv), []
                conv, reason, g = rewriter.apply(conv, sweep, g, builder)
                Rewriter.record(st, reason)
                recorder.add(self.name, rewriter.name, seen, reason, sweep.created_log)
                sweep.created_log = None
        # Phase 2b: the seed's verbose-only isBackwardConv re-pad, as a debug log line.
        if log.isEnabledFor(logging.DEBUG):
            for conv in convolutions(functions(module), d):
                if _is_backward_conv(conv, d) and _fed_by_conv(conv, d):
                    log.debug(
                        "%s: backward convolution fed by a convolution at %s",
                        self.name,
                        conv.location,
                    )


@dataclass(frozen=True)
class StablehloCanonicalizeConv(CanonicalizeConv):
    """stablehlo-canonicalize-conv: the same rewrites on StableHLO ops."""

    name: ClassVar[str] = "stablehlo-canonicalize-conv"
    summary: ClassVar[str] = _summary("StableHLO")
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
