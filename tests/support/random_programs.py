"""Random small StableHLO programs that reach every rewriter of the penguin passes.

:func:`programs` is a hypothesis strategy whose values are :class:`Program` s: the MLIR text
of one ``func.func @main`` (plus private callees, for the JAX-style ``call @argsort``) with
static shapes of rank 0-4 (small dims, zero-sized dims sometimes) and element types f32,
f16, bf16, f64, i1, i8, i32, i64, ui8, ui32 (f8 and complex<f32> rarely). The body chains
random *units*. Each unit is either one pattern a pass rewrites, in several forms, or a
near miss of it that the pass must leave alone, or ordinary arithmetic that links the
units together (units take their operands from earlier results):

==========================  ================================================================
unit                        rewrites / near misses
==========================  ================================================================
``argsort``                 fuseIotaSort: iota + sort on the iota's dimension, comparators on
                            the data, the indices, TOTALORDER, tie-breaks; iota shared with
                            another user; sometimes in a private ``@argsort`` callee (so the
                            pipeline's ``inline`` matters). Near misses: iota on another
                            dimension, operand 1 not an iota, iota first, three operands.
``tuple``                   canonicalizeTupleOp: tuple / get_tuple_element, nested tuples,
                            tuples of constants (their GTEs then fold through a convert).
``get_dimension_size``      replaceGetDimensionSize, sometimes followed by a convert (folds
                            in the same sweep: rewriter 3 runs before 4).
``convert``                 replaceConvertsWithConstants: convert(constant) between every
                            pair of the types above, values incl. NaN, inf, -0, huge,
                            subnormal and raw bit patterns; chains convert(convert(c)).
                            Near miss: convert of a non-constant.
``erf``                     replaceInvalidBackendConfigs: AwsNeuronErf with odd configs (braces,
                            spaces, punctuation, control and non-ASCII bytes), api_version,
                            has_side_effect, aliasing, layouts. Near misses: alphanumeric or
                            empty config, no config, a dictionary config (api_version 4).
``resize``                  lowerResizeNearestGrad (float, rank 1-4, scales 1-3). Near miss:
                            an integer gradient (mean mode skips it).
``broadcast``               replaceBroadcastsWithBroadcastInDim (legacy broadcast) of constants
                            (then folded by rewriter 8) and of non-constants.
``broadcast_in_dim``        replaceBroadcastInDimWithConstants: splat and non-splat constants,
                            transposing dims. Near misses: non-constant operand, result over
                            the fold budget (a small ``broadcast-num-elements-to-fold`` per
                            program, or, rarely, a real > 65536-element broadcast).
``zero``                    removeDeadZeroSizedTensorOps (StableHLO only): arithmetic, slices,
                            concatenations with zero-sized results. Near miss: a reduce over a
                            zero-sized dimension (its result is not empty).
``conv``                    explicitlyPad / explicitlyStride: 2-D convolutions with random
                            padding (negative too), strides, lhs/rhs dilation, reversal,
                            feature/batch groups, layouts, f32/bf16/f16/f64/i32/i8->i32/
                            bf16->f32. Near misses: gate failures (extent 1, extents 2-3,
                            stride or padding over 31, 1-D and 3-D convs, empty result),
                            already-canonical convs, i8->i32 with several phases.
``arith``                   add/multiply/negate/abs/maximum, compare+select, reduce,
                            transpose, reshape, slice, concatenate, dot_general.
``region``                  any unit above inside a ``stablehlo.if`` / ``stablehlo.case``.
==========================  ================================================================

Every unit result is returned from ``@main``, so the equivalence checker sees it.

Each program also carries what the passes must do with it, derived while building it from
the seed's semantics (one forward sweep of the rewriters in their fixed order, each seeing
what the rewriters before it made, nothing revisited): ``expected`` (per dialect, the number
of ops each rewriter rewrites and a lower bound of each skip reason) and ``near_misses``
(ops, found again by their ``loc("tag")``, that must still be there unchanged).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

DIALECTS = ("stablehlo", "mhlo")
BOTH = frozenset(DIALECTS)
STABLEHLO_ONLY = frozenset({"stablehlo"})
MHLO_ONLY = frozenset({"mhlo"})
DEFAULT_BUDGET = 65536  # broadcast-num-elements-to-fold's default

# The for-penguin rewriters in the seed's order (index = position in the sweep) and the
# canonicalize-conv rewriters.
FOR_PENGUIN = (
    "fuseIotaSort",  # 1
    "canonicalizeTupleOp",  # 2
    "replaceGetDimensionSize",  # 3
    "replaceConvertsWithConstants",  # 4
    "replaceInvalidBackendConfigs",  # 5
    "lowerResizeNearestGrad",  # 6
    "replaceBroadcastsWithBroadcastInDim",  # 7
    "replaceBroadcastInDimWithConstants",  # 8
    "removeDeadZeroSizedTensorOps",  # 9 (StableHLO only)
)
CONV = ("explicitlyPad", "explicitlyStride")
REWRITERS = (*FOR_PENGUIN, *CONV)
ZERO_SIZED = "removeDeadZeroSizedTensorOps"
STEP = {name: i + 1 for i, name in enumerate(FOR_PENGUIN)}

# The skip reasons the generator plans, by rewriter (each must occur in a test run).
NEAR_MISS_REASONS = {
    "fuseIotaSort": ("iota-dimension-mismatch", "operand-1-not-iota", "not-two-operands"),
    "replaceConvertsWithConstants": ("operand-not-constant",),
    "replaceInvalidBackendConfigs": ("valid-backend-config", "non-string-backend-config"),
    "lowerResizeNearestGrad": ("mean-of-non-float",),
    "replaceBroadcastInDimWithConstants": ("operand-not-constant", "over-budget"),
    "removeDeadZeroSizedTensorOps": ("not-zero-sized",),
    "explicitlyPad": (
        "spatial-extent-1",
        "small-extent-flag-off",
        "over-bound",
        "rank-not-4",
        "zero-padding",
    ),
    "explicitlyStride": (
        "spatial-extent-1",
        "small-extent-flag-off",
        "over-bound",
        "rank-not-4",
        "unit-stride",
        "mixed-integer-accumulation",
    ),
}
# Only in MHLO: StableHLO's for-penguin pass removes empty convolutions before the conv pass.
MHLO_NEAR_MISS_REASONS = {
    "explicitlyPad": ("zero-sized-result",),
    "explicitlyStride": ("zero-sized-result",),
}
# The near misses whose op is found again after the pipeline (NearMiss records), by dialect.
IN_PLACE = {
    "stablehlo": (
        ("fuseIotaSort", "iota-dimension-mismatch"),
        ("fuseIotaSort", "operand-1-not-iota"),
        ("fuseIotaSort", "not-two-operands"),
        ("replaceConvertsWithConstants", "operand-not-constant"),
        ("replaceInvalidBackendConfigs", "valid-backend-config"),
        ("replaceInvalidBackendConfigs", "non-string-backend-config"),
        ("lowerResizeNearestGrad", "mean-of-non-float"),
        ("replaceBroadcastInDimWithConstants", "operand-not-constant"),
        ("replaceBroadcastInDimWithConstants", "over-budget"),
        ("removeDeadZeroSizedTensorOps", "not-zero-sized"),
        ("explicitlyPad", "spatial-extent-1"),
        ("explicitlyPad", "small-extent-flag-off"),
        ("explicitlyPad", "over-bound"),
        ("explicitlyPad", "rank-not-4"),
        ("explicitlyStride", "unit-stride"),
        ("explicitlyStride", "mixed-integer-accumulation"),
    ),
}
IN_PLACE["mhlo"] = (
    *(k for k in IN_PLACE["stablehlo"] if k[0] != "removeDeadZeroSizedTensorOps"),
    ("explicitlyPad", "zero-sized-result"),
)

FLOATS = ("f32", "f16", "bf16", "f64")
SIGNED = ("i8", "i32", "i64")
UNSIGNED = ("ui8", "ui32")
INTS = (*SIGNED, *UNSIGNED)
RARE = ("f8E4M3FN", "f8E5M2", "complex<f32>")
COMMON = (*FLOATS, "i1", *INTS)

Const = tuple[int, int]  # (sweep step, 0 = in walk order / 1 = appended by an earlier step)


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class NearMiss:
    """An op the passes must leave in place: found by ``loc("tag")`` after the pipeline,
    some op there must still be ``<dialect>.mnemonic`` with ``operands`` operands and the
    listed attribute values (``ints``: name, values, values when the attribute is absent;
    ``strings``: name, string value or None for absent/empty)."""

    tag: str
    rewriter: str
    reason: str
    mnemonic: str
    operands: int
    ints: tuple[tuple[str, tuple[int, ...], tuple[int, ...]], ...] = ()
    strings: tuple[tuple[str, str | None], ...] = ()
    dialects: frozenset = BOTH


@dataclass
class Program:
    text: str
    budget: int | None  # broadcast-num-elements-to-fold for this program (None: default)
    # output index -> float type of a reassociated sum it comes from that is coarser than
    # the output's own (the checker derives its tolerance from the output type only)
    accumulation: dict[int, str]
    expected: dict[str, Counter]  # dialect -> (rewriter, 'rewritten' | reason) -> count
    near_misses: list[NearMiss]
    units: list[str]

    def __repr__(self) -> str:  # what hypothesis prints for a falsifying example
        budget = "" if self.budget is None else f"  (broadcast-num-elements-to-fold={self.budget})"
        return f"Program(units={self.units}){budget}\n{self.text}"

    def rewritten(self, dialect: str, rewriter: str) -> int:
        return self.expected[dialect][(rewriter, "rewritten")]


# --------------------------------------------------------------------------- text helpers


def ttype(shape, dtype: str) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


def _numel(shape) -> int:
    return int(np.prod(shape, dtype=np.int64)) if len(shape) else 1


def _ints(values) -> str:
    return "[" + ", ".join(str(int(v)) for v in values) + "]"


_CONTEXT = []


def dense_attr(values: np.ndarray, shape, dtype: str) -> str:
    """``dense<...> : tensor<...>``, bit for bit (through penguin_opt.elements)."""
    from jaxlib.mlir import ir

    from penguin_opt.context import make_context
    from penguin_opt.elements import make_elements

    if not _CONTEXT or _CONTEXT[0][1] > 2000:  # a fresh context now and then: attributes
        _CONTEXT[:] = [[make_context(), 0]]  # are interned for the context's lifetime
    _CONTEXT[0][1] += 1
    ctx = _CONTEXT[0][0]
    with ctx, ir.Location.unknown(ctx):
        t = ir.RankedTensorType.get(list(shape), ir.Type.parse(dtype))
        return str(make_elements(np.asarray(values).reshape(shape), t))


def _np_dtype(dtype: str) -> np.dtype:
    from penguin_opt.elements import DTYPES

    return DTYPES[dtype]


def _is_float(dtype: str) -> bool:
    return dtype in FLOATS or dtype.startswith("f8")


def _is_complex(dtype: str) -> bool:
    return dtype.startswith("complex")


def _can_negate(dtype: str) -> bool:
    return dtype != "i1"


def _ordered(dtype: str) -> bool:
    return not _is_complex(dtype)


# --------------------------------------------------------------------------- values


def chance(draw, p: float) -> bool:
    """True with probability ``p``. hypothesis draws the ends of an integer range far more
    often than the rest (``integers(0, 60) == 0`` holds ~11% of the time, not 1.6%), so the
    true range sits in the middle; shrinking (towards 0) makes it false."""
    return draw(st.integers(0, 9999)) in range(5000, 5000 + round(p * 10000))


FLOAT_SPECIALS = (
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -0.5,
    1.5,
    -2.5,
    2.5,
    0.1,
    -0.7,
    127.5,
    128.0,
    -128.5,
    255.5,
    256.0,
    -129.0,
    65504.0,
    65520.0,
    1e5,
    -1e5,
    2.0**31,
    -(2.0**31),
    2.0**31 - 64,
    2.0**32,
    -(2.0**32) - 1,
    2.0**63,
    -(2.0**63),
    2.0**64,
    1e20,
    -1e20,
    3.4e38,
    1e39,
    1e300,
    1e-40,
    1e-8,
    6e-8,
    5e-324,
    float("nan"),
    -float("nan"),
    float("inf"),
    -float("inf"),
)


@st.composite
def element_values(draw, dtype: str, n: int) -> np.ndarray:
    """``n`` values of ``dtype``, with the edge cases a convert must get right."""
    npd = _np_dtype(dtype)
    if dtype == "i1":
        return np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    if npd.kind in "iu":
        info = np.iinfo(npd)
        edge = st.sampled_from([int(info.min), int(info.max), 0, 1, -1 if info.min else 2, 7])
        small = st.integers(-300, 300).map(lambda v: max(min(v, int(info.max)), int(info.min)))
        full = st.integers(int(info.min), int(info.max))
        vals = draw(st.lists(st.one_of(edge, small, full), min_size=n, max_size=n))
        return np.array(vals, dtype=npd)
    if _is_complex(dtype):
        part = st.sampled_from(FLOAT_SPECIALS) | st.floats(-1e4, 1e4)
        re = draw(st.lists(part, min_size=n, max_size=n))
        im = draw(st.lists(part, min_size=n, max_size=n))
        with np.errstate(all="ignore"):
            return (np.array(re) + 1j * np.array(im)).astype(npd)
    mode = draw(st.sampled_from(["specials", "specials", "bits", "normal"]))
    if mode == "bits":  # raw bit patterns: NaN payloads, subnormals, signalling NaNs
        bits = 8 * npd.itemsize
        raw = draw(st.lists(st.integers(0, 2**bits - 1), min_size=n, max_size=n))
        return np.array(raw, dtype=f"u{npd.itemsize}").view(npd)
    if mode == "normal":
        vals = draw(st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=n, max_size=n))
    else:
        vals = draw(
            st.lists(st.sampled_from(FLOAT_SPECIALS) | st.floats(-300, 300), min_size=n, max_size=n)
        )
    with np.errstate(all="ignore"):
        return np.array(vals, dtype=np.float64).astype(npd)


# --------------------------------------------------------------------------- builder


@dataclass(frozen=True)
class Value:
    name: str
    shape: tuple[int, ...]
    dtype: str
    const_at: Const | None = None  # the sweep step after which a constant op defines it
    # a float type coarser than the value's own in which the engine may accumulate one of
    # its reassociated sums (bf16 -> f32 convolutions: the interpreter accumulates in bf16)
    accumulate: str | None = None

    @property
    def type(self) -> str:
        return ttype(self.shape, self.dtype)


def _folds(const_at: Const | None, step: int, appended: bool = False) -> bool:
    """Whether an op visited by sweep ``step`` sees a constant operand (see Value)."""
    if const_at is None:
        return False
    return const_at <= (step, 1) if appended else const_at < (step, 1)


class Builder:
    """The function being built: lines (per open region), live values, expectations."""

    def __init__(self, draw, budget: int | None):
        self.draw = draw
        self.budget = DEFAULT_BUDGET if budget is None else budget
        self.args: list[Value] = []
        self.blocks: list[list[str]] = [[]]
        self.scopes: list[list[Value]] = [[]]
        self.outs: list[list[Value]] = [[]]
        self.callees: list[str] = []
        self.counter = 0
        self.expected = {d: Counter() for d in DIALECTS}
        self.near_misses: list[NearMiss] = []
        self.units: list[str] = []

    # names and lines
    def fresh(self, prefix: str = "v") -> str:
        self.counter += 1
        return f"%{prefix}{self.counter}"

    def tag(self) -> str:
        self.counter += 1
        return f"t{self.counter}"

    def line(self, text: str) -> None:
        self.blocks[-1].append(text)

    def op(
        self, rhs: str, shape, dtype: str, *, const_at: Const | None = None, tag: str | None = None
    ) -> Value:
        name = self.fresh()
        self.line(f"{name} = {rhs}" + (f' loc("{tag}")' if tag else ""))
        return Value(name, tuple(shape), dtype, const_at)

    # values
    def pool(self) -> list[Value]:
        return [v for scope in self.scopes for v in scope]

    def keep(self, v: Value, output: bool = True) -> Value:
        """Make ``v`` available to later units (unless its float results are only as good
        as a coarser accumulation type) and (by default) return it from @main."""
        if v.accumulate is None:
            self.scopes[-1].append(v)
        if output:
            self.outs[-1].append(v)
        return v

    def arg(self, shape, dtype: str) -> Value:
        v = Value(f"%arg{len(self.args)}", tuple(shape), dtype)
        self.args.append(v)
        return v

    def constant(self, shape, dtype: str, values: np.ndarray | None = None) -> Value:
        if values is None:
            values = self.draw(element_values(dtype, _numel(shape)))
        attr = dense_attr(values, shape, dtype)
        return self.op(f"stablehlo.constant {attr}", shape, dtype, const_at=(0, 0))

    def zeros(self, shape, dtype: str) -> Value:
        return self.constant(shape, dtype, np.zeros(shape, _np_dtype(dtype)))

    def expect(
        self, rewriter: str, outcome: str = "rewritten", n: int = 1, dialects: frozenset = BOTH
    ) -> None:
        for d in dialects:
            self.expected[d][(rewriter, outcome)] += n

    def near_miss(self, nm: NearMiss) -> None:
        self.near_misses.append(nm)

    # operands: reuse earlier results (directly, through arithmetic, a reshape or a
    # convert) or take a new function argument
    def operand(self, shape, dtype: str, *, nonconst: bool = False) -> Value:
        draw = self.draw
        shape = tuple(shape)
        pool = [v for v in self.pool() if not nonconst or v.const_at is None]
        same = [v for v in pool if v.shape == shape and v.dtype == dtype]
        r = draw(st.integers(0, 9))
        if same and r < 4:
            v = draw(st.sampled_from(same))
            return self.elementwise(v) if r == 0 else v
        if r < 6:
            n = _numel(shape)
            reshapes = [
                v for v in pool if v.dtype == dtype and _numel(v.shape) == n and v.shape != shape
            ]
            converts = [
                v
                for v in pool
                if v.shape == shape
                and v.dtype != dtype
                and (not _is_complex(v.dtype) or _is_complex(dtype))
            ]
            if reshapes and r == 4:
                v = draw(st.sampled_from(reshapes))
                return self.op(
                    f"stablehlo.reshape {v.name} : ({v.type}) -> {ttype(shape, dtype)}",
                    shape,
                    dtype,
                )
            if converts and r == 5:
                return self.convert(draw(st.sampled_from(converts)), dtype)
        return self.arg(shape, dtype)

    def elementwise(self, v: Value) -> Value:
        """One elementwise op of ``v`` (a non-constant result)."""
        kinds = ["add", "multiply"]
        if _can_negate(v.dtype) and v.dtype not in UNSIGNED:
            kinds.append("negate")
        if (_is_float(v.dtype) or v.dtype in SIGNED) and not v.dtype.startswith("f8"):
            kinds.append("abs")
        if _ordered(v.dtype):
            kinds.append("maximum")
        kind = self.draw(st.sampled_from(kinds))
        if kind in ("negate", "abs"):
            return self.op(f"stablehlo.{kind} {v.name} : {v.type}", v.shape, v.dtype)
        other = self.draw(st.sampled_from([v, None]))
        other = other or self.arg(v.shape, v.dtype)
        return self.op(f"stablehlo.{kind} {v.name}, {other.name} : {v.type}", v.shape, v.dtype)

    # ops with a root the passes match, with their expected outcome
    def convert(self, v: Value, dtype: str, tag: str | None = None) -> Value:
        folds = _folds(v.const_at, STEP["replaceConvertsWithConstants"])
        self.expect(
            "replaceConvertsWithConstants", "rewritten" if folds else "operand-not-constant"
        )
        return self.op(
            f"stablehlo.convert {v.name} : ({v.type}) -> {ttype(v.shape, dtype)}",
            v.shape,
            dtype,
            const_at=(4, 0) if folds else None,
            tag=tag,
        )

    def broadcast_in_dim(
        self,
        v: Value,
        dims,
        out_shape,
        *,
        tag: str | None = None,
        appended: bool = False,
        emit: bool = True,
    ) -> tuple[Value | None, str]:
        """Expect rewriter 8's outcome for ``broadcast_in_dim(v)``; emit it unless it is
        the one rewriter 7 makes of a legacy broadcast. Returns (value, outcome)."""
        folds = _folds(v.const_at, STEP["replaceBroadcastInDimWithConstants"], appended)
        if not folds:
            outcome = "operand-not-constant"
        elif _numel(out_shape) > self.budget:
            outcome = "over-budget"
        else:
            outcome = "rewritten"
        self.expect("replaceBroadcastInDimWithConstants", outcome)
        if not emit:
            return None, outcome
        const_at = (8, 1 if appended else 0) if outcome == "rewritten" else None
        out = self.op(
            f"stablehlo.broadcast_in_dim {v.name}, dims = {_ints(dims)} : "
            f"({v.type}) -> {ttype(out_shape, v.dtype)}",
            out_shape,
            v.dtype,
            const_at=const_at,
            tag=tag,
        )
        return out, outcome

    def text(self) -> str:
        outs = self.outs[0]
        if not outs:
            outs = [self.arg((), "f32")]
        sig = ", ".join(f"{a.name}: {a.type}" for a in self.args)
        results = ", ".join(v.type for v in outs)
        body = "\n".join("  " + line for line in self.blocks[0])
        ret = f"  return {', '.join(v.name for v in outs)} : {results}"
        main = f"func.func @main({sig}) -> ({results}) {{\n{body}\n{ret}\n}}\n"
        return "".join(self.callees) + main


# --------------------------------------------------------------------------- shapes


@st.composite
def shapes(
    draw,
    min_rank: int = 0,
    max_rank: int = 4,
    max_dim: int = 4,
    zero: bool | None = None,
    min_dim: int = 1,
) -> tuple[int, ...]:
    rank = draw(st.integers(min_rank, max_rank))
    dims = draw(st.lists(st.integers(min_dim, max_dim), min_size=rank, max_size=rank))
    if zero is None:
        zero = chance(draw, 1 / 12)
    if zero and rank:
        dims[draw(st.integers(0, rank - 1))] = 0
    return tuple(dims)


def dtypes(rare: bool = True, exclude=()) -> st.SearchStrategy[str]:
    common = [t for t in COMMON if t not in exclude]
    weighted = ["f32"] * 4 + common
    choices = st.sampled_from([t for t in weighted if t not in exclude])
    if not rare:
        return choices
    rare_choices = st.sampled_from([t for t in RARE if t not in exclude])
    return st.integers(0, 9999).flatmap(lambda r: rare_choices if 5000 <= r < 5600 else choices)


# --------------------------------------------------------------------------- units

# The forms of each unit (besides its plain match, drawn most often); ``programs(required=
# (unit, variant))`` puts one of them in every program, so a batch per entry covers them all.
VARIANTS = {
    "argsort": ("match", "callee", "other-dim", "not-iota", "iota-first", "three"),
    "tuple": (None,),
    "get_dimension_size": (None,),
    "convert": ("fold", "nonconst"),
    "erf": ("invalid", "valid", "empty", "absent", "dict"),
    "resize": ("float", "int"),
    "broadcast": ("constant", "operand"),
    "broadcast_in_dim": ("literal", "splat", "pool", "nonconst", "over-budget"),
    "zero": ("elementwise", "slice", "concatenate", "reduce", "transpose"),
    "conv": (
        "match",
        "canonical",
        "extent-1",
        "small",
        "over-bound",
        "rank3",
        "rank5",
        "empty",
        "mixed",
    ),
    "arith": (None,),
}


def unit_argsort(b: Builder, variant: str | None = None) -> None:
    draw = b.draw
    if variant is None:
        variant = draw(st.sampled_from(["match"] * 5 + list(VARIANTS["argsort"])))
    shape = draw(shapes(2 if variant == "other-dim" else 1, 3, 5))
    rank = len(shape)
    dim = draw(st.integers(0, rank - 1))
    data_t = draw(dtypes(rare=False))
    index_t = draw(st.sampled_from(["i32"] * 5 + ["i64", "ui32", "f32"]))
    tag = b.tag()
    empty = 0 in shape
    nm_dialects = MHLO_ONLY if empty else BOTH  # StableHLO removes empty sorts
    iota_dim = dim
    if variant == "other-dim":
        iota_dim = draw(st.sampled_from([d for d in range(rank) if d != dim]))
    data = b.operand(shape, data_t)
    iota_line = f"stablehlo.iota dim = {iota_dim} : {ttype(shape, index_t)}"
    callee = variant == "callee" or (variant == "other-dim" and chance(draw, 1 / 4))
    if callee:  # JAX's form: a private function, inlined by the pipeline
        name = f"@argsort{b.counter}"
        b.counter += 1
        p, i, s = b.fresh("p"), b.fresh("i"), b.fresh("s")
        types = [ttype(shape, data_t), ttype(shape, index_t)]
        comp = _comparator(b, [data_t, index_t])
        body = [
            f"  {i} = {iota_line}",
            f'  {s}:2 = "stablehlo.sort"({p}, {i}) <{{dimension = {dim} : i64, '
            f"is_stable = {draw(st.sampled_from(['true', 'false']))}}}> ({{",
        ]
        body += ["  " + line for line in comp]
        body += [
            f'  }}) : ({", ".join(types)}) -> ({", ".join(types)}) loc("{tag}")',
            f"  return {s}#0, {s}#1 : {', '.join(types)}",
        ]
        b.callees.append(
            f"func.func private {name}({p}: {types[0]}) -> ({', '.join(types)}) "
            "{\n" + "\n".join(body) + "\n}\n"
        )
        r = b.fresh("r")
        b.line(f"{r}:2 = func.call {name}({data.name}) : ({types[0]}) -> ({', '.join(types)})")
        results = [Value(f"{r}#0", shape, data_t), Value(f"{r}#1", shape, index_t)]
    else:
        iota = b.op(iota_line, shape, index_t)
        if variant == "not-iota":
            if draw(st.booleans()):
                second = b.arg(shape, index_t)
            else:
                second = b.op(
                    f"stablehlo.add {iota.name}, {iota.name} : {iota.type}", shape, index_t
                )
            operands = [data, second]
        elif variant == "iota-first":
            operands = [iota, data]
        elif variant == "three":
            operands = [data, b.operand(shape, draw(dtypes(rare=False))), iota]
        else:
            operands = [data, iota]
        types = [v.type for v in operands]
        comp = _comparator(b, [v.dtype for v in operands])
        s = b.fresh("s")
        stable = draw(st.sampled_from(["true", "false"]))
        b.line(
            f'{s}:{len(operands)} = "stablehlo.sort"({", ".join(v.name for v in operands)}) '
            f"<{{dimension = {dim} : i64, is_stable = {stable}}}> ({{"
        )
        for line in comp:
            b.line(line)
        b.line(f'}}) : ({", ".join(types)}) -> ({", ".join(types)}) loc("{tag}")')
        results = [Value(f"{s}#{k}", shape, v.dtype) for k, v in enumerate(operands)]
        if variant == "match" and chance(draw, 1 / 4):
            b.keep(iota)  # a shared iota stays for its other user
    if variant in ("match", "callee"):
        b.expect("fuseIotaSort")
    else:
        reason = {
            "other-dim": "iota-dimension-mismatch",
            "not-iota": "operand-1-not-iota",
            "iota-first": "operand-1-not-iota",
            "three": "not-two-operands",
        }[variant]
        b.expect("fuseIotaSort", reason)
        b.near_miss(
            NearMiss(
                tag,
                "fuseIotaSort",
                reason,
                "sort",
                len(results) if not callee else 2,
                dialects=nm_dialects,
            )
        )
    keep = draw(st.lists(st.sampled_from(range(len(results))), min_size=1, max_size=3, unique=True))
    for k in keep:
        b.keep(results[k])


def _comparator(b: Builder, operand_types: list[str]) -> list[str]:
    """The comparator region of a sort: a block of 2 scalars per operand."""
    draw = b.draw
    args = [(b.fresh("c"), t) for t in operand_types for _ in (0, 1)]
    lines = ["^bb0(" + ", ".join(f"{n}: tensor<{t}>" for n, t in args) + "):"]
    (a0, t0), (a1, _) = args[0], args[1]
    i0, i1 = args[-2][0], args[-1][0]
    ti = args[-1][1]
    kinds = ["simple"] * 3 + ["tiebreak", "index"]
    if _is_float(t0):
        kinds.append("totalorder")
    kind = draw(st.sampled_from(kinds))
    direction = draw(st.sampled_from(["LT", "GT", "LT", "GT", "LE", "GE"]))

    def cmp(d, x, y, t, extra=""):
        name = b.fresh("k")
        lines.append(
            f"  {name} = stablehlo.compare {d}, {x}, {y}{extra} : "
            f"(tensor<{t}>, tensor<{t}>) -> tensor<i1>"
        )
        return name

    if kind == "simple":
        result = cmp(direction, a0, a1, t0)
    elif kind == "totalorder":
        result = cmp(direction, a0, a1, t0, ", TOTALORDER")
    elif kind == "index":
        result = cmp(direction, i0, i1, ti)
    else:  # data, ties broken by the last operand (the indices)
        first = cmp(direction, a0, a1, t0)
        equal = cmp("EQ", a0, a1, t0)
        later = cmp("LT", i0, i1, ti)
        both = b.fresh("k")
        lines.append(f"  {both} = stablehlo.and {equal}, {later} : tensor<i1>")
        result = b.fresh("k")
        lines.append(f"  {result} = stablehlo.or {first}, {both} : tensor<i1>")
    lines.append(f"  stablehlo.return {result} : tensor<i1>")
    return lines


def unit_tuple(b: Builder, variant: str | None = None) -> None:
    draw = b.draw
    n = draw(st.integers(1, 3))
    elements = []
    for _ in range(n):
        shape = draw(shapes(0, 3, 3))
        dtype = draw(dtypes())
        if chance(draw, 1 / 3):
            elements.append(b.constant(shape, dtype))
        else:
            elements.append(b.operand(shape, dtype))
    ttext = "tuple<" + ", ".join(v.type for v in elements) + ">"
    t = b.fresh("t")
    b.line(f"{t} = stablehlo.tuple {', '.join(v.name for v in elements)} : {ttext}")
    source, source_t, members = t, ttext, list(elements)
    if draw(st.booleans()):  # nest it: tuple(tuple(...), x), then gte(gte(.., 0), i)
        extra = b.operand(draw(shapes(0, 2, 3)), draw(dtypes()))
        outer_t = f"tuple<{ttext}, {extra.type}>"
        o = b.fresh("t")
        b.line(f"{o} = stablehlo.tuple {t}, {extra.name} : {outer_t}")
        g = b.fresh("g")
        b.line(f"{g} = stablehlo.get_tuple_element {o}[0] : ({outer_t}) -> {ttext}")
        b.expect("canonicalizeTupleOp")
        if draw(st.booleans()):
            gx = b.fresh("g")
            b.line(f"{gx} = stablehlo.get_tuple_element {o}[1] : ({outer_t}) -> {extra.type}")
            b.expect("canonicalizeTupleOp")
            b.keep(_gte_value(gx, extra))
        source = g
    picks = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=3))
    for i in picks:
        v = members[i]
        g = b.fresh("g")
        b.line(f"{g} = stablehlo.get_tuple_element {source}[{i}] : ({source_t}) -> {v.type}")
        b.expect("canonicalizeTupleOp")
        value = _gte_value(g, v)
        if chance(draw, 1 / 3) and not _is_complex(v.dtype):
            value = b.convert(value, draw(dtypes(rare=False)))  # folds if v is a constant
        b.keep(value)


def _gte_value(name: str, element: Value) -> Value:
    const_at = None if element.const_at is None else max((2, 0), element.const_at)
    return Value(name, element.shape, element.dtype, const_at)


def unit_get_dimension_size(b: Builder, variant: str | None = None) -> None:
    draw = b.draw
    shape = draw(shapes(1, 4, 5))
    v = b.operand(shape, draw(dtypes()))
    dim = draw(st.integers(0, len(shape) - 1))
    n = b.op(
        f"stablehlo.get_dimension_size {v.name}, dim = {dim} : ({v.type}) -> tensor<i32>",
        (),
        "i32",
        const_at=(3, 0),
    )
    b.expect("replaceGetDimensionSize")
    if draw(st.booleans()):
        n = b.convert(n, draw(dtypes(rare=False)))  # rewriter 4 sees rewriter 3's constant
    if draw(st.booleans()):  # use it in arithmetic too
        out = draw(shapes(0, 2, 3))
        n, _ = b.broadcast_in_dim(n, [], out)
    b.keep(n)


def unit_convert(b: Builder, variant: str | None = None) -> None:
    draw = b.draw
    if variant is None:
        variant = "nonconst" if chance(draw, 1 / 4) else "fold"
    shape = draw(shapes(0, 3, 4))
    src = draw(dtypes())
    dst = draw(dtypes())
    if _is_complex(src) and not _is_complex(dst):
        dst = "complex<f32>"
    if variant == "nonconst":  # near miss: the operand is not a constant
        v = b.operand(shape, src, nonconst=True)
        tag = b.tag()
        out = b.convert(v, dst, tag=tag)
        if 0 not in shape:
            b.near_miss(
                NearMiss(tag, "replaceConvertsWithConstants", "operand-not-constant", "convert", 1)
            )
        b.keep(out)
        return
    c = b.constant(shape, src)
    out = b.convert(c, dst)
    if chance(draw, 1 / 4):  # convert(convert(c)): both fold, in walk order
        third = draw(dtypes())
        if _is_complex(dst) and not _is_complex(third):
            third = dst
        b.keep(out, output=draw(st.booleans()))
        out = b.convert(out, third)
    b.keep(out)


_CONFIG_ODD = "{}[]():;,. -_=/\\'\t\n@#$%&*+<>?!|~`^\x00\x7f\u00e9\u2603"
_CONFIG_OK = 'abcXYZ019"'


def _mlir_string(raw: str) -> str:
    """An MLIR string literal for ``raw`` (UTF-8), every non-alphanumeric byte escaped."""
    out = []
    for byte in raw.encode():
        ch = chr(byte)
        out.append(ch if ch.isascii() and ch.isalnum() else f"\\{byte:02X}")
    return '"' + "".join(out) + '"'


def unit_erf(b: Builder, variant: str | None = None) -> None:
    draw = b.draw
    if variant is None:
        variant = draw(st.sampled_from(["invalid"] * 5 + list(VARIANTS["erf"])))
    shape = draw(shapes(0, 3, 4))
    dtype = draw(st.sampled_from(["f32", "f32", "f16", "bf16", "f64"]))
    x = b.operand(shape, dtype)
    attrs = []
    value: str | None
    if variant == "invalid":
        chars = draw(st.text(st.sampled_from(_CONFIG_ODD + _CONFIG_OK), min_size=1, max_size=12))
        if all(c in _CONFIG_OK for c in chars):
            chars += draw(st.sampled_from(_CONFIG_ODD))
        value = chars
    elif variant == "valid":
        value = draw(st.text(st.sampled_from(_CONFIG_OK), min_size=1, max_size=8))
    else:
        value = "" if variant == "empty" else None
    if variant == "dict":
        attrs.append("api_version = 4 : i32")
        attrs.append('backend_config = {mode = 1 : i32, name = "x y"}')
    else:
        api = draw(st.sampled_from([None, None, 1, 2, 3]))
        if api is not None:
            attrs.append(f"api_version = {api} : i32")
        if value is not None:
            attrs.append(f"backend_config = {_mlir_string(value)}")
    effect = draw(st.sampled_from([None, "true", "false"]))
    if effect:
        attrs.append(f"has_side_effect = {effect}")
    if chance(draw, 1 / 5):
        attrs.append(
            "output_operand_aliases = [#stablehlo.output_operand_alias<"
            "output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>]"
        )
    if chance(draw, 1 / 5):
        layout = "dense<" + _ints(range(len(shape) - 1, -1, -1)) + f"> : tensor<{len(shape)}xindex>"
        if not shape:
            layout = "dense<> : tensor<0xindex>"
        attrs.append(f"operand_layouts = [{layout}], result_layouts = [{layout}]")
    tag = b.tag()
    attr_text = (" {" + ", ".join(attrs) + "}") if attrs else ""
    out = b.op(
        f"stablehlo.custom_call @AwsNeuronErf({x.name}){attr_text} : ({x.type}) -> {x.type}",
        shape,
        dtype,
        tag=tag,
    )
    b.expect("lowerResizeNearestGrad", "not-ResizeNearestGrad")
    if variant == "invalid":
        b.expect("replaceInvalidBackendConfigs")
    else:
        reason = "non-string-backend-config" if variant == "dict" else "valid-backend-config"
        b.expect("replaceInvalidBackendConfigs", reason)
        strings = () if variant == "dict" else (("backend_config", value or None),)
        b.near_miss(
            NearMiss(
                tag,
                "replaceInvalidBackendConfigs",
                reason,
                "custom_call",
                1,
                strings=(("call_target_name", "AwsNeuronErf"), *strings),
            )
        )
    b.keep(out)


def unit_resize(b: Builder, variant: str | None = None) -> None:
    draw = b.draw
    if variant is None:
        variant = "int" if chance(draw, 1 / 5) else "float"
    rank = draw(st.integers(0, 4))
    out = draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank))
    scale = draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank))
    if _numel(scale) > 27:
        scale = [min(s, 2) for s in scale]
    grad_shape = tuple(o * s for o, s in zip(out, scale, strict=True))
    float_grad = variant == "float"
    dtype = draw(
        st.sampled_from(
            ["f32", "f32", "f16", "bf16", "f64"] if float_grad else ["i32", "i8", "ui8"]
        )
    )
    g = b.operand(grad_shape, dtype)
    tag = b.tag()
    config = draw(st.sampled_from(["", ' {backend_config = "00"}', ' {backend_config = ""}']))
    r = b.op(
        f"stablehlo.custom_call @ResizeNearestGrad({g.name}){config} : ({g.type}) -> "
        f"{ttype(out, dtype)}",
        out,
        dtype,
        tag=tag,
    )
    b.expect("replaceInvalidBackendConfigs", "not-AwsNeuronErf")
    if float_grad:
        b.expect("lowerResizeNearestGrad")
        # the lowering's legacy broadcast of the window volume: rewriter 7 converts it and
        # rewriter 8 folds the appended broadcast_in_dim of the volume constant
        b.expect("replaceBroadcastsWithBroadcastInDim")
        b.broadcast_in_dim(Value("%volume", (), dtype, (6, 1)), [], out, appended=True, emit=False)
    else:
        b.expect("lowerResizeNearestGrad", "mean-of-non-float")
        b.near_miss(
            NearMiss(
                tag,
                "lowerResizeNearestGrad",
                "mean-of-non-float",
                "custom_call",
                1,
                strings=(("call_target_name", "ResizeNearestGrad"),),
            )
        )
    b.keep(r)


def unit_broadcast(b: Builder, variant: str | None = None) -> None:
    draw = b.draw
    if variant is None:
        variant = draw(st.sampled_from(VARIANTS["broadcast"]))
    shape = draw(shapes(0, 3, 3))
    dtype = draw(dtypes())
    sizes = draw(st.lists(st.integers(0 if chance(draw, 1 / 6) else 1, 3), min_size=0, max_size=2))
    if variant == "constant":
        x = b.constant(shape, dtype)
    else:
        x = b.operand(shape, dtype)
    out = (*sizes, *shape)
    y = b.op(
        f"stablehlo.broadcast {x.name}, sizes = {_ints(sizes)} : ({x.type}) -> {ttype(out, dtype)}",
        out,
        dtype,
    )
    b.expect("replaceBroadcastsWithBroadcastInDim")
    _, outcome = b.broadcast_in_dim(x, range(len(sizes), len(out)), out, appended=True, emit=False)
    b.keep(Value(y.name, out, dtype, (8, 1) if outcome == "rewritten" else None))


@st.composite
def broadcast_dims(draw, src: tuple[int, ...]):
    """(dims, out shape) of a valid broadcast_in_dim of ``src`` (dims may transpose)."""
    rank = len(src)
    out_rank = draw(st.integers(rank, max(rank, min(rank + 2, 4))))
    dims = sorted(draw(st.permutations(range(out_rank)))[:rank])
    if draw(st.booleans()):
        dims = draw(st.permutations(dims))
    out = [draw(st.integers(1, 3)) for _ in range(out_rank)]
    for k, d in enumerate(dims):
        if src[k] != 1 or draw(st.booleans()):
            out[d] = src[k]
    return list(dims), tuple(out)


def unit_broadcast_in_dim(b: Builder, variant: str | None = None) -> None:
    draw = b.draw
    if variant is None:
        variant = draw(st.sampled_from(["literal"] * 3 + list(VARIANTS["broadcast_in_dim"])))
    if variant == "over-budget" and b.budget == DEFAULT_BUDGET:
        unit_big_broadcast(b)
        return
    shape = draw(shapes(0, 3, 3))
    dtype = draw(dtypes())
    if variant == "over-budget":  # just over this program's small budget
        shape = ()
    if variant == "splat":
        one = draw(element_values(dtype, 1))
        x = b.constant(shape, dtype, np.broadcast_to(one.reshape(()), shape).copy())
    elif variant == "nonconst":
        x = b.operand(shape, dtype, nonconst=True)
    elif variant == "pool":
        x = b.operand(shape, dtype)
    else:
        x = b.constant(shape, dtype)
    dims, out = draw(broadcast_dims(shape))
    if variant == "over-budget":
        dims, out = [], (b.budget + draw(st.integers(0, 3)),)  # + 0: exactly the budget
    tag = b.tag()
    y, outcome = b.broadcast_in_dim(x, dims, out, tag=tag)
    if outcome != "rewritten" and 0 not in out:
        b.near_miss(
            NearMiss(tag, "replaceBroadcastInDimWithConstants", outcome, "broadcast_in_dim", 1)
        )
    b.keep(y)


def unit_big_broadcast(b: Builder) -> None:
    """A broadcast_in_dim(constant) just over the default budget, sliced down."""
    draw = b.draw
    dtype = draw(st.sampled_from(["i8", "i1", "f32", "bf16"]))
    src = draw(st.sampled_from([(), (2,), (1, 2)]))
    x = b.constant(src, dtype)
    out = {(): (257, 256), (2,): (32769, 2), (1, 2): (1, 32769, 2)}[src]
    dims = {(): [], (2,): [1], (1, 2): [0, 2]}[src]
    tag = b.tag()
    y, outcome = b.broadcast_in_dim(x, dims, out, tag=tag)
    if outcome != "rewritten":
        b.near_miss(
            NearMiss(tag, "replaceBroadcastInDimWithConstants", outcome, "broadcast_in_dim", 1)
        )
    lo = draw(st.integers(0, 30000))
    limits = [f"{lo}:{lo + 3}" if n > 300 else f"0:{min(n, 2)}" for n in out]
    small = tuple(3 if n > 300 else min(n, 2) for n in out)
    b.keep(
        b.op(
            f"stablehlo.slice {y.name} [{', '.join(limits)}] : ({y.type}) -> {ttype(small, dtype)}",
            small,
            dtype,
        )
    )


def unit_zero(b: Builder, variant: str | None = None) -> None:
    draw = b.draw
    shape = draw(shapes(1, 3, 3, zero=True))
    dtype = draw(dtypes())
    x = b.operand(shape, dtype)
    kind = variant or draw(st.sampled_from(VARIANTS["zero"]))
    if kind == "elementwise":
        b.keep(b.elementwise(x))
        b.expect(ZERO_SIZED, dialects=STABLEHLO_ONLY)
    elif kind == "slice":  # a non-empty operand sliced to nothing
        full = tuple(max(d, 1) + 1 for d in shape)
        y = b.operand(full, dtype)
        ranges = [f"0:{d}" for d in shape]
        b.keep(
            b.op(
                f"stablehlo.slice {y.name} [{', '.join(ranges)}] : ({y.type}) -> "
                f"{ttype(shape, dtype)}",
                shape,
                dtype,
            )
        )
        b.expect(ZERO_SIZED, dialects=STABLEHLO_ONLY)
    elif kind == "concatenate":  # empty ++ non-empty: not empty (near miss)
        d = shape.index(0)
        other = list(shape)
        other[d] = draw(st.integers(1, 3))
        y = b.operand(other, dtype)
        tag = b.tag()
        if 0 in other:
            b.keep(
                b.op(
                    f"stablehlo.concatenate {x.name}, {y.name}, dim = {d} : "
                    f"({x.type}, {y.type}) -> {y.type}",
                    other,
                    dtype,
                )
            )
            return
        b.keep(
            b.op(
                f"stablehlo.concatenate {x.name}, {y.name}, dim = {d} : "
                f"({x.type}, {y.type}) -> {y.type}",
                other,
                dtype,
                tag=tag,
            )
        )
        b.expect(ZERO_SIZED, "not-zero-sized", dialects=STABLEHLO_ONLY)
        b.near_miss(
            NearMiss(tag, ZERO_SIZED, "not-zero-sized", "concatenate", 2, dialects=STABLEHLO_ONLY)
        )
    elif kind == "reduce":  # a sum over the empty dimension: the init value, not empty
        if _is_complex(dtype):
            dtype = "f32"
            x = b.operand(shape, dtype)
        d = shape.index(0)
        out = tuple(n for i, n in enumerate(shape) if i != d)
        if 0 in out:
            out = tuple(n for n in out if n)
            dims = [i for i, n in enumerate(shape) if n == 0]
        else:
            dims = [d]
        init = b.zeros((), dtype)
        tag = b.tag()
        r = b.op(
            f"stablehlo.reduce({x.name} init: {init.name}) applies stablehlo.add across "
            f"dimensions = {_ints(dims)} : ({x.type}, {init.type}) -> {ttype(out, dtype)}",
            out,
            dtype,
            tag=tag,
        )
        b.keep(r)
        if 0 not in out:
            b.expect(ZERO_SIZED, "not-zero-sized", dialects=STABLEHLO_ONLY)
            b.near_miss(
                NearMiss(tag, ZERO_SIZED, "not-zero-sized", "reduce", 2, dialects=STABLEHLO_ONLY)
            )
    else:
        perm = draw(st.permutations(range(len(shape))))
        out = tuple(shape[p] for p in perm)
        b.keep(
            b.op(
                f"stablehlo.transpose {x.name}, dims = {_ints(perm)} : ({x.type}) -> "
                f"{ttype(out, dtype)}",
                out,
                dtype,
            )
        )
        b.expect(ZERO_SIZED, dialects=STABLEHLO_ONLY)


# conv element types: (operand, result)
CONV_TYPES = [("f32", "f32")] * 5 + [
    ("bf16", "bf16"),
    ("f16", "f16"),
    ("f64", "f64"),
    ("i32", "i32"),
    ("i8", "i32"),
    ("i8", "i32"),
    ("bf16", "f32"),
    ("f16", "f32"),
]


@dataclass
class ConvSpec:
    spatial: list[int]
    kernel: list[int]
    strides: list[int]
    padding: list[tuple[int, int]]
    lhs_dilation: list[int]
    rhs_dilation: list[int]
    reversal: list[bool]
    batch: int = 1
    in_features: int = 1  # per group
    out_features: int = 1  # per group
    fgc: int = 1
    bgc: int = 1

    def output_spatial(self) -> list[int]:
        out = []
        for n, k, s, (lo, hi), ld, rd in zip(
            self.spatial,
            self.kernel,
            self.strides,
            self.padding,
            self.lhs_dilation,
            self.rhs_dilation,
            strict=True,
        ):
            padded = (n - 1) * ld + 1 + lo + hi if n else lo + hi
            span = (k - 1) * rd + 1
            out.append(max((padded - span) // s + 1, 0))
        return out

    def phases(self) -> int:
        count = 1
        for s, k, r in zip(self.strides, self.kernel, self.rhs_dilation, strict=True):
            if s > 1 and k > 1:
                count *= min(k, s // math.gcd(r, s))
        return count


def unit_conv(b: Builder, variant: str | None = None) -> None:
    draw = b.draw
    if variant is None:
        variant = draw(st.sampled_from(["match"] * 12 + list(VARIANTS["conv"])))
    operand_t, result_t = draw(st.sampled_from(CONV_TYPES))
    if variant == "mixed":
        operand_t, result_t = "i8", "i32"
    ns = {"rank3": 1, "rank5": 3}.get(variant, 2)
    spatial = draw(st.lists(st.integers(4, 9 if ns == 2 else 6), min_size=ns, max_size=ns))
    if variant == "extent-1":
        spatial[draw(st.integers(0, ns - 1))] = 1
    elif variant == "small":
        spatial[draw(st.integers(0, ns - 1))] = draw(st.integers(2, 3))
    kernel = draw(st.lists(st.integers(1, 5), min_size=ns, max_size=ns))
    strides = draw(st.lists(st.sampled_from([1, 1, 2, 2, 3, 4, 5]), min_size=ns, max_size=ns))
    padding = [tuple(draw(st.lists(st.integers(-2, 3), min_size=2, max_size=2))) for _ in range(ns)]
    if chance(draw, 1 / 4):
        padding = [(0, 0)] * ns
    lhs_dilation = draw(st.lists(st.sampled_from([1, 1, 1, 2]), min_size=ns, max_size=ns))
    rhs_dilation = draw(st.lists(st.sampled_from([1, 1, 2, 3]), min_size=ns, max_size=ns))
    reversal = draw(st.lists(st.booleans(), min_size=ns, max_size=ns))
    if variant == "canonical":
        strides, padding, lhs_dilation = [1] * ns, [(0, 0)] * ns, [1] * ns
    if variant == "over-bound":
        i = draw(st.integers(0, ns - 1))
        if not chance(draw, 1 / 4):
            strides[i] = draw(st.integers(32, 40))
        else:
            lo, hi = padding[i]
            padding[i] = (32, hi) if draw(st.booleans()) else (lo, 32)
    if variant == "mixed":  # several phases, so the stride rewrite must skip
        i = draw(st.integers(0, ns - 1))
        strides[i], kernel[i], rhs_dilation[i] = 2, max(kernel[i], 2), 1
    spec = ConvSpec(spatial, kernel, strides, padding, lhs_dilation, rhs_dilation, reversal)
    groups = draw(st.sampled_from(["none"] * 4 + ["fgc", "depthwise", "bgc"]))
    spec.in_features = draw(st.integers(1, 2))
    spec.out_features = draw(st.integers(1, 2))
    if groups == "fgc":
        spec.fgc = 2
    elif groups == "depthwise":
        spec.fgc, spec.in_features = draw(st.integers(2, 3)), 1
    elif groups == "bgc":
        spec.bgc = 2
    spec.batch = spec.bgc * draw(st.integers(1, 2))
    if variant == "empty":
        spec.batch = 0
    # keep every output extent >= 1: shrink kernels, then padding, that do not fit
    for i in range(ns):
        for _ in range(3):
            if spec.output_spatial()[i] >= 1:
                break
            if spec.kernel[i] > 1:
                spec.kernel[i], spec.rhs_dilation[i] = 1, 1
            else:
                spec.padding[i] = (max(spec.padding[i][0], 0), max(spec.padding[i][1], 0))
    _emit_conv(b, spec, variant, operand_t, result_t)


def _emit_conv(b: Builder, spec: ConvSpec, variant: str, operand_t: str, result_t: str):
    draw = b.draw
    ns = len(spec.spatial)
    sp = [str(i) for i in range(ns)]
    lhs_layout = draw(st.permutations(["b", "f", *sp]))
    rhs_layout = draw(st.permutations(["o", "i", *sp]))
    out_layout = list(draw(st.permutations(["b", "f", *sp])))
    # the reference interpreter aborts (LLVM ERROR) when the output feature dimension
    # comes before the output batch dimension: keep b before f
    bi, fi = out_layout.index("b"), out_layout.index("f")
    if fi < bi:
        out_layout[bi], out_layout[fi] = "f", "b"
    groups = max(spec.fgc, spec.bgc)
    features = spec.in_features * spec.fgc
    outs = spec.out_features * groups
    lhs_sizes = {"b": spec.batch, "f": features, **dict(zip(sp, spec.spatial, strict=True))}
    rhs_sizes = {"o": outs, "i": spec.in_features, **dict(zip(sp, spec.kernel, strict=True))}
    out_sp = spec.output_spatial()
    out_sizes = {"b": spec.batch // spec.bgc, "f": outs, **dict(zip(sp, out_sp, strict=True))}
    lhs_shape = tuple(lhs_sizes[c] for c in lhs_layout)
    rhs_shape = tuple(rhs_sizes[c] for c in rhs_layout)
    out_shape = tuple(out_sizes[c] for c in out_layout)
    x = b.operand(lhs_shape, operand_t)
    if chance(draw, 1 / 4):  # constant weights
        vals = draw(
            st.lists(st.integers(-3, 3), min_size=_numel(rhs_shape), max_size=_numel(rhs_shape))
        )
        w = b.constant(rhs_shape, operand_t, np.array(vals).astype(_np_dtype(operand_t)))
    else:
        w = b.operand(rhs_shape, operand_t)
    window = []
    if spec.strides != [1] * ns or draw(st.booleans()):
        window.append(f"stride = {_ints(spec.strides)}")
    if any(lo or hi for lo, hi in spec.padding) or draw(st.booleans()):
        window.append("pad = [" + ", ".join(f"[{lo}, {hi}]" for lo, hi in spec.padding) + "]")
    if spec.lhs_dilation != [1] * ns or draw(st.booleans()):
        window.append(f"lhs_dilate = {_ints(spec.lhs_dilation)}")
    if spec.rhs_dilation != [1] * ns or draw(st.booleans()):
        window.append(f"rhs_dilate = {_ints(spec.rhs_dilation)}")
    if any(spec.reversal) or draw(st.booleans()):
        window.append(
            "reverse = [" + ", ".join("true" if r else "false" for r in spec.reversal) + "]"
        )
    attrs = [f"batch_group_count = {spec.bgc} : i64", f"feature_group_count = {spec.fgc} : i64"]
    if chance(draw, 1 / 4):
        attrs.append(
            "precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision HIGHEST>]"
        )
    dn = f"[{', '.join(lhs_layout)}]x[{', '.join(rhs_layout)}]->[{', '.join(out_layout)}]"
    tag = b.tag()
    rt = ttype(out_shape, result_t)
    y = b.op(
        f"stablehlo.convolution({x.name}, {w.name}) dim_numbers = {dn}, window = "
        f"{{{', '.join(window)}}} {{{', '.join(attrs)}}} : ({x.type}, {w.type}) -> {rt}",
        out_shape,
        result_t,
        tag=tag,
    )
    if _is_float(operand_t) and operand_t != result_t:
        y = Value(y.name, y.shape, y.dtype, accumulate=operand_t)
    b.keep(y)
    # what canonicalize-conv must do with it
    flat_pad = tuple(e for pair in spec.padding for e in pair)
    geometry = (
        ("window_strides", tuple(spec.strides), (1,) * ns),
        ("padding", flat_pad, (0,) * (2 * ns)),
        ("lhs_dilation", tuple(spec.lhs_dilation), (1,) * ns),
    )
    gate = {
        "extent-1": "spatial-extent-1",
        "small": "small-extent-flag-off",
        "over-bound": "over-bound",
        "rank3": "rank-not-4",
        "rank5": "rank-not-4",
        "empty": "zero-sized-result",
    }.get(variant)
    if gate == "zero-sized-result":  # StableHLO's for-penguin pass removes it first
        b.expect(ZERO_SIZED, dialects=STABLEHLO_ONLY)
        for r in CONV:
            b.expect(r, gate, dialects=MHLO_ONLY)
        b.near_miss(
            NearMiss(
                tag, "explicitlyPad", gate, "convolution", 2, ints=geometry, dialects=MHLO_ONLY
            )
        )
        return
    if gate is not None:
        for r in CONV:
            b.expect(r, gate)
        b.near_miss(NearMiss(tag, "explicitlyPad", gate, "convolution", 2, ints=geometry))
        return
    pads = any(lo or hi for lo, hi in spec.padding) or any(d != 1 for d in spec.lhs_dilation)
    b.expect("explicitlyPad", "rewritten" if pads else "zero-padding")
    if all(s == 1 for s in spec.strides):
        b.expect("explicitlyStride", "unit-stride")
        if not pads:
            b.near_miss(
                NearMiss(tag, "explicitlyStride", "unit-stride", "convolution", 2, ints=geometry)
            )
    elif operand_t != result_t and result_t.startswith("i") and spec.phases() > 1:
        b.expect("explicitlyStride", "mixed-integer-accumulation")
        b.near_miss(
            NearMiss(
                tag,
                "explicitlyStride",
                "mixed-integer-accumulation",
                "convolution",
                2,
                ints=(geometry[0],),
            )
        )
    else:
        b.expect("explicitlyStride")


def unit_arith(b: Builder, variant: str | None = None) -> None:
    draw = b.draw
    pool = b.pool()
    if pool and not chance(draw, 1 / 4):
        v = draw(st.sampled_from(pool))
    else:
        v = b.arg(draw(shapes(0, 3, 4)), draw(dtypes()))
    kinds = ["elementwise", "reshape", "broadcast_in_dim"]
    rank = len(v.shape)
    if _ordered(v.dtype):
        kinds.append("select")
    if rank >= 2:
        kinds.append("transpose")
    if rank >= 1:
        kinds += ["reduce", "slice", "concatenate"]
    if rank == 2 and v.dtype in ("f32", "f64", "i32") and 0 not in v.shape:
        kinds.append("dot")
    kind = draw(st.sampled_from(kinds))
    if kind == "elementwise":
        b.keep(b.elementwise(v))
    elif kind == "select":
        w = b.operand(v.shape, v.dtype)
        pt = ttype(v.shape, "i1")
        p = b.op(
            f"stablehlo.compare {draw(st.sampled_from(['GT', 'LT', 'EQ', 'NE']))}, "
            f"{v.name}, {w.name} : ({v.type}, {w.type}) -> {pt}",
            v.shape,
            "i1",
        )
        b.keep(
            b.op(
                f"stablehlo.select {p.name}, {v.name}, {w.name} : ({pt}, {v.type}, "
                f"{w.type}) -> {v.type}",
                v.shape,
                v.dtype,
            )
        )
    elif kind == "transpose":
        perm = draw(st.permutations(range(rank)))
        out = tuple(v.shape[p] for p in perm)
        b.keep(
            b.op(
                f"stablehlo.transpose {v.name}, dims = {_ints(perm)} : ({v.type}) -> "
                f"{ttype(out, v.dtype)}",
                out,
                v.dtype,
            )
        )
    elif kind == "reshape":
        n = _numel(v.shape)
        out = draw(st.sampled_from([(n,), (1, n), (n, 1), ()] if n == 1 else [(n,), (1, n)]))
        b.keep(
            b.op(f"stablehlo.reshape {v.name} : ({v.type}) -> {ttype(out, v.dtype)}", out, v.dtype)
        )
    elif kind == "broadcast_in_dim":
        dims, out = draw(broadcast_dims(v.shape))
        y, _ = b.broadcast_in_dim(v, dims, out)
        b.keep(y)
    elif kind == "reduce":
        if _is_complex(v.dtype):
            return
        dims = sorted(
            draw(st.lists(st.integers(0, rank - 1), min_size=1, max_size=rank, unique=True))
        )
        out = tuple(n for i, n in enumerate(v.shape) if i not in dims)
        body = draw(st.sampled_from(["add", "maximum"]))
        init = b.zeros((), v.dtype)
        b.keep(
            b.op(
                f"stablehlo.reduce({v.name} init: {init.name}) applies stablehlo.{body} "
                f"across dimensions = {_ints(dims)} : ({v.type}, {init.type}) -> "
                f"{ttype(out, v.dtype)}",
                out,
                v.dtype,
            )
        )
    elif kind == "slice":
        ranges, out = [], []
        for n in v.shape:
            lo = draw(st.integers(0, n))
            hi = draw(st.integers(lo, n))
            step = draw(st.integers(1, 2))
            ranges.append(f"{lo}:{hi}" + (f":{step}" if step > 1 else ""))
            out.append(-(-(hi - lo) // step))
        b.keep(
            b.op(
                f"stablehlo.slice {v.name} [{', '.join(ranges)}] : ({v.type}) -> "
                f"{ttype(out, v.dtype)}",
                out,
                v.dtype,
            )
        )
    elif kind == "concatenate":
        d = draw(st.integers(0, rank - 1))
        other = list(v.shape)
        other[d] = draw(st.integers(0, 3))
        w = b.operand(other, v.dtype)
        out = list(v.shape)
        out[d] += other[d]
        b.keep(
            b.op(
                f"stablehlo.concatenate {v.name}, {w.name}, dim = {d} : ({v.type}, "
                f"{w.type}) -> {ttype(out, v.dtype)}",
                out,
                v.dtype,
            )
        )
    else:  # dot_general
        m, k = v.shape
        n = draw(st.integers(1, 3))
        w = b.operand((k, n), v.dtype)
        b.keep(
            b.op(
                f"stablehlo.dot_general {v.name}, {w.name}, contracting_dims = [1] x [0]"
                f" : ({v.type}, {w.type}) -> {ttype((m, n), v.dtype)}",
                (m, n),
                v.dtype,
            )
        )


UNITS = {
    "argsort": (unit_argsort, 3),
    "tuple": (unit_tuple, 3),
    "get_dimension_size": (unit_get_dimension_size, 2),
    "convert": (unit_convert, 3),
    "erf": (unit_erf, 3),
    "resize": (unit_resize, 2),
    "broadcast": (unit_broadcast, 2),
    "broadcast_in_dim": (unit_broadcast_in_dim, 3),
    "zero": (unit_zero, 2),
    "conv": (unit_conv, 5),
    "arith": (unit_arith, 4),
}
_WEIGHTED = [name for name, (_, w) in UNITS.items() for _ in range(w)]


def unit_region(b: Builder, inner: str) -> None:
    """Unit ``inner`` inside the taken branch of an if / case; the other branch returns
    zeros."""
    draw = b.draw
    b.blocks.append([])
    b.scopes.append([])
    b.outs.append([])
    UNITS[inner][0](b)
    lines, outs = b.blocks.pop(), b.outs.pop()
    b.scopes.pop()
    if not outs:
        return
    types = ", ".join(v.type for v in outs)
    b.blocks.append([])
    zeros = [b.zeros(v.shape, v.dtype) for v in outs]
    other = b.blocks.pop()
    taken = [*lines, f"stablehlo.return {', '.join(v.name for v in outs)} : {types}"]
    not_taken = [*other, f"stablehlo.return {', '.join(v.name for v in zeros)} : {types}"]
    r = b.fresh("r")
    results = f"{r}:{len(outs)}" if len(outs) > 1 else r
    if draw(st.booleans()):
        pred = b.constant((), "i1", np.array(True))
        head, branches, operand_t = f'"stablehlo.if"({pred.name})', [taken, not_taken], "i1"
    else:
        index = draw(st.integers(0, 2))
        sel = b.constant((), "i32", np.array(index, np.int32))
        branches = [not_taken, not_taken, not_taken]
        branches[index] = taken
        head, operand_t = f'"stablehlo.case"({sel.name})', "i32"
    b.line(f"{results} = {head} ({{")
    for i, branch in enumerate(branches):
        if i:
            b.line("}, {")
        for line in branch:
            b.line("  " + line)
    b.line(f"}}) : (tensor<{operand_t}>) -> ({types})")
    for k, v in enumerate(outs):
        name = f"{r}#{k}" if len(outs) > 1 else r
        b.keep(Value(name, v.shape, v.dtype, accumulate=v.accumulate))


@st.composite
def programs(
    draw, max_units: int = 6, min_units: int = 1, required: tuple[str, str | None] | None = None
) -> Program:
    """One random program; see the module docstring. ``required``: (unit, variant) that
    the program contains at least once (at a random position)."""
    budget = draw(st.integers(0, 48)) if chance(draw, 1 / 4) else None
    b = Builder(draw, budget)
    n = draw(st.integers(min_units, max_units))
    at = draw(st.integers(0, n - 1)) if required else -1
    for i in range(n):
        if i == at:
            name, variant = required
            UNITS[name][0](b, variant)
            name = f"{name}:{variant}" if variant else name
        else:
            name = draw(st.sampled_from(_WEIGHTED))
            if chance(draw, 1 / 10):
                unit_region(b, name)
                name = f"region({name})"
            else:
                UNITS[name][0](b)
        b.units.append(name)
    accumulation = {i: v.accumulate for i, v in enumerate(b.outs[0]) if v.accumulate}
    return Program(b.text(), budget, accumulation, b.expected, b.near_misses, b.units)


# every (unit, variant) a batch of programs can be required to contain
REQUIRED = tuple((unit, v) for unit, variants in VARIANTS.items() for v in variants)


__all__ = [
    "CONV",
    "DIALECTS",
    "FOR_PENGUIN",
    "IN_PLACE",
    "MHLO_NEAR_MISS_REASONS",
    "NEAR_MISS_REASONS",
    "REQUIRED",
    "REWRITERS",
    "VARIANTS",
    "NearMiss",
    "Program",
    "programs",
]
