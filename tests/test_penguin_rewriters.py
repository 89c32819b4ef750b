"""Property tests of the for-penguin rewriters against the StableHLO reference interpreter.

Programs are built at random (shapes, broadcast dimensions, element types, values
including NaN/inf/-0 bit patterns), run through the pass in both dialects, and executed
before and after; constant folds must be bit-exact.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import penguin_opt
from penguin_opt.convert_math import NO_INF_OR_NAN
from penguin_opt.elements import DTYPES, make_elements
from penguin_opt.equivalence import check

# Element types the interpreter runs (all of jaxlib's parseable ones but the 6/4-bit and
# e8m0 floats, which it rejects).
FOLD_TYPES = [k for k in DTYPES if k not in ("f6E2M3FN", "f6E3M2FN", "f4E2M1FN", "f8E8M0FNU")]


def _values(key: str, shape, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dtype = DTYPES[key]
    n = int(np.prod(shape))
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if key in ("i2", "i4", "ui2", "ui4"):
        info = ml_dtypes.iinfo(dtype)
        return rng.integers(int(info.min), int(info.max), shape, endpoint=True).astype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, endpoint=True, dtype=dtype)
    if dtype.kind == "c":
        parts = rng.standard_normal((n, 2)).astype(np.float64)
        return parts.view(np.complex128).reshape(shape).astype(dtype)
    bits = rng.integers(0, 2 ** (8 * dtype.itemsize), n, dtype=np.uint64)
    return bits.astype(f"u{dtype.itemsize}").view(dtype).reshape(shape)


def _type(shape, key):
    return f"tensor<{'x'.join(map(str, shape))}{'x' if shape else ''}{key}>"


@st.composite
def broadcasts(draw):
    rank = draw(st.integers(0, 3))
    src = draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank))
    out_rank = draw(st.integers(rank, 4))
    dims = sorted(draw(st.permutations(range(out_rank)))[:rank])
    dims = draw(st.permutations(dims))  # broadcast_in_dim may transpose
    out = [draw(st.integers(1, 3)) for _ in range(out_rank)]
    for k, d in enumerate(dims):
        if src[k] != 1 or draw(st.booleans()):
            out[d] = src[k]
    return src, list(dims), out


def _broadcast_program(dialect: str, key: str, src, dims, out, seed: int) -> str:
    from jaxlib.mlir import ir

    with penguin_opt.make_context(), ir.Location.unknown():
        t = ir.RankedTensorType.get(src, ir.Type.parse(key))
        attr = make_elements(_values(key, src, seed), t)
    body = (
        f"%c = {dialect}.constant {attr}\n"
        if dialect == "stablehlo"
        else f"%c = mhlo.constant {attr}\n"
    )
    if dialect == "stablehlo":
        body += (
            f"  %0 = stablehlo.broadcast_in_dim %c, dims = {dims} : "
            f"({_type(src, key)}) -> {_type(out, key)}\n"
        )
    else:
        body += (
            f'  %0 = "mhlo.broadcast_in_dim"(%c) <{{broadcast_dimensions = '
            f"dense<{dims}> : tensor<{len(dims)}xi64>}}> : "
            f"({_type(src, key)}) -> {_type(out, key)}\n"
        )
    return (
        f"func.func @main() -> {_type(out, key)} {{\n  {body}  return %0 : {_type(out, key)}\n}}\n"
    )


def _run(text: str, pipeline: str) -> tuple[str, penguin_opt.Result]:
    module = penguin_opt.load(text)
    result = penguin_opt.run(module, pipeline)
    return penguin_opt.to_text(module), result


@pytest.mark.parametrize("key", FOLD_TYPES)
@pytest.mark.parametrize("dialect", ["stablehlo", "mhlo"])
def test_broadcast_fold_every_element_type(dialect, key):
    text = _broadcast_program(dialect, key, [2, 1], [2, 0], [3, 4, 2], seed=7)
    pass_name = f"{'stablehlo-' if dialect == 'stablehlo' else ''}canonicalize-for-penguin"
    after, result = _run(text, pass_name)
    assert result.statistics[pass_name]["replaceBroadcastInDimWithConstants"].rewritten == 1
    assert "broadcast_in_dim" not in after
    report = check(text, after)
    assert report.ok, report.table()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    case=broadcasts(),
    key=st.sampled_from(["f32", "bf16", "i8", "i1", "ui16", "f8E5M2"]),
    dialect=st.sampled_from(["stablehlo", "mhlo"]),
    seed=st.integers(0, 2**16),
)
def test_broadcast_fold_random_shapes(case, key, dialect, seed):
    src, dims, out = case
    text = _broadcast_program(dialect, key, src, dims, out, seed)
    pass_name = f"{'stablehlo-' if dialect == 'stablehlo' else ''}canonicalize-for-penguin"
    after, _ = _run(text, pass_name)
    assert "broadcast_in_dim" not in after
    report = check(text, after)
    assert report.ok, report.table()


CONVERT_TYPES = [
    "f64",
    "f32",
    "f16",
    "bf16",
    "f8E4M3FN",
    "f8E5M2",
    "i1",
    "i4",
    "i8",
    "i32",
    "i64",
    "ui8",
    "ui32",
    "ui64",
    "complex<f32>",
]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    src=st.sampled_from(CONVERT_TYPES),
    dst=st.sampled_from(CONVERT_TYPES),
    seed=st.integers(0, 2**16),
    dialect=st.sampled_from(["stablehlo", "mhlo"]),
)
def test_convert_fold_matches_interpreter(src, dst, seed, dialect):
    if src.startswith("complex") and not dst.startswith("complex"):
        return  # stablehlo.convert complex -> real is not a valid op
    from jaxlib.mlir import ir

    with penguin_opt.make_context(), ir.Location.unknown():
        t = ir.RankedTensorType.get([6], ir.Type.parse(src))
        attr = make_elements(_values(src, [6], seed), t)
    text = (
        f"func.func @main() -> {_type([6], dst)} {{\n"
        f"  %c = {dialect}.constant {attr}\n"
        f"  %0 = {dialect}.convert %c : ({_type([6], src)}) -> {_type([6], dst)}\n"
        f"  return %0 : {_type([6], dst)}\n}}\n"
    )
    pass_name = f"{'stablehlo-' if dialect == 'stablehlo' else ''}canonicalize-for-penguin"
    after, result = _run(text, pass_name)
    stats = result.statistics[pass_name]["replaceConvertsWithConstants"]
    if stats.rewritten == 0:  # (executors differ on some values of types without inf/NaN)
        (reason,) = stats.skipped
        assert reason in ("unsupported-element-type", "element-type-semantics-vary"), reason
        if reason == "element-type-semantics-vary":
            assert {src, dst} & NO_INF_OR_NAN, (src, dst)
        return
    report = check(text, after)
    assert report.ok, report.table()


def test_get_dimension_size_result_element_type_is_the_ops():
    text = (
        "func.func @main(%a: tensor<5x?xf32>) -> tensor<i32> {\n"
        '  %0 = "mhlo.get_dimension_size"(%a) <{dimension = 0 : i64}> : '
        "(tensor<5x?xf32>) -> tensor<i32>\n  return %0 : tensor<i32>\n}\n"
    )
    after, _ = _run(text, "canonicalize-for-penguin")
    assert "mhlo.constant dense<5> : tensor<i32>" in after


@settings(max_examples=300, deadline=None)
@given(case=broadcasts(), seed=st.integers(0, 2**16))
def test_broadcast_in_dim_helper_matches_the_definition(case, seed):
    """result[i] = operand[j] with j_k = i[dims[k]] (0 where the operand dim is 1), for the
    general, in-order and splat paths of ``broadcast_in_dim``."""
    from penguin_opt.passes.penguin_rewriters import broadcast_in_dim

    src, dims, out = case
    values = np.random.default_rng(seed).integers(-99, 99, src).astype(np.int32)
    got = broadcast_in_dim(values, dims, tuple(out))
    want = np.empty(out, np.int32)
    for i in np.ndindex(*out):
        want[i] = values[tuple(i[d] if src[k] != 1 else 0 for k, d in enumerate(dims))]
    assert got.shape == tuple(out)
    assert np.array_equal(got, want)


ZERO_SIZED_MIX = """func.func @main(%a: tensor<0x4xf32>, %b: tensor<3xf32>, %p: tensor<i1>) -> (tensor<0x4xf32>, tensor<3xf32>) {
  %0 = stablehlo.add %a, %a : tensor<0x4xf32>
  %1 = stablehlo.multiply %b, %b : tensor<3xf32>
  %c = stablehlo.constant dense<> : tensor<0xf32>
  %2 = stablehlo.custom_call @foo(%a) : (tensor<0x4xf32>) -> tensor<0x4xf32>
  %3 = "stablehlo.if"(%p) ({
    %4 = stablehlo.abs %a : tensor<0x4xf32>
    stablehlo.return %4 : tensor<0x4xf32>
  }, {
    %5 = stablehlo.negate %0 : tensor<0x4xf32>
    stablehlo.return %5 : tensor<0x4xf32>
  }) : (tensor<i1>) -> tensor<0x4xf32>
  %6:2 = "stablehlo.sort"(%a, %a) <{dimension = 0 : i64}> ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>, %z: tensor<f32>, %w: tensor<f32>):
    %7 = stablehlo.compare LT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %7 : tensor<i1>
  }) : (tensor<0x4xf32>, tensor<0x4xf32>) -> (tensor<0x4xf32>, tensor<0x4xf32>)
  %8 = stablehlo.add %6#0, %3 : tensor<0x4xf32>
  %9 = stablehlo.add %8, %2 : tensor<0x4xf32>
  return %9, %1 : tensor<0x4xf32>, tensor<3xf32>
}
"""


# The shape-following kinds with regions or several results, reached from zero-sized
# operands or counted without a visit when none may be zero-sized.
ZERO_SIZED_FOLLOWING = """func.func @main(%a: tensor<0x4xf32>, %b: tensor<3x4xf32>, %i: tensor<f32>, %k: tensor<i32>, %u: tensor<1x4xf32>) -> (tensor<0xf32>, tensor<4xf32>, tensor<3xf32>, tensor<0x4xf32>, tensor<3x4xf32>, tensor<0x4xi32>, tensor<0x4xf32>, tensor<3x4xf32>, tensor<0xf32>) {
  %0 = stablehlo.reduce(%a init: %i) applies stablehlo.add across dimensions = [1] : (tensor<0x4xf32>, tensor<f32>) -> tensor<0xf32>
  %1 = stablehlo.reduce(%a init: %i) applies stablehlo.add across dimensions = [0] : (tensor<0x4xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = stablehlo.reduce(%b init: %i) applies stablehlo.add across dimensions = [1] : (tensor<3x4xf32>, tensor<f32>) -> tensor<3xf32>
  %3:2 = "stablehlo.sort"(%a, %a) <{dimension = 1 : i64}> ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>, %z: tensor<f32>, %w: tensor<f32>):
    %c = stablehlo.compare GT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) : (tensor<0x4xf32>, tensor<0x4xf32>) -> (tensor<0x4xf32>, tensor<0x4xf32>)
  %4 = "stablehlo.sort"(%b) <{dimension = 0 : i64}> ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.compare LT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %5 = stablehlo.bitcast_convert %a : (tensor<0x4xf32>) -> tensor<0x4xi32>
  %6 = stablehlo.dynamic_update_slice %a, %a, %k, %k : (tensor<0x4xf32>, tensor<0x4xf32>, tensor<i32>, tensor<i32>) -> tensor<0x4xf32>
  %7 = stablehlo.dynamic_update_slice %b, %u, %k, %k : (tensor<3x4xf32>, tensor<1x4xf32>, tensor<i32>, tensor<i32>) -> tensor<3x4xf32>
  %8 = stablehlo.slice %b [0:0, 0:4] : (tensor<3x4xf32>) -> tensor<0x4xf32>
  %9 = stablehlo.reduce(%8 init: %i) applies stablehlo.add across dimensions = [1] : (tensor<0x4xf32>, tensor<f32>) -> tensor<0xf32>
  return %0, %1, %2, %3#1, %4, %5, %6, %7, %9 : tensor<0xf32>, tensor<4xf32>, tensor<3xf32>, tensor<0x4xf32>, tensor<3x4xf32>, tensor<0x4xi32>, tensor<0x4xf32>, tensor<3x4xf32>, tensor<0xf32>
}
"""


@pytest.mark.parametrize(
    ("program", "rewritten"),
    [(ZERO_SIZED_MIX, 6), (ZERO_SIZED_FOLLOWING, 6)],
    ids=["mix", "following"],
)
def test_zero_sized_walk_statistics_are_those_of_the_plain_rewriter(program, rewritten):
    """The fast walk of removeDeadZeroSizedTensorOps counts exactly what
    ``RemoveDeadZeroSizedTensorOps.run`` over every op (post-order) counts."""
    from penguin_opt.dialect import STABLEHLO
    from penguin_opt.ir_util import ops_under
    from penguin_opt.passes.base import RunState
    from penguin_opt.passes.canonicalize_for_penguin import target_functions
    from penguin_opt.passes.penguin_rewriters import RemoveDeadZeroSizedTensorOps
    from penguin_opt.passes.sweep import Sweep

    fast = penguin_opt.run(penguin_opt.load(program), "stablehlo-canonicalize-for-penguin")
    got = fast.statistics["stablehlo-canonicalize-for-penguin"]["removeDeadZeroSizedTensorOps"]

    module = penguin_opt.load(program)
    state = RunState()
    with module.context:
        functions = target_functions(module, False, "x")
        sweep = Sweep(STABLEHLO, "x", state, {})
        ops = [op for f in functions for op in ops_under(f)]
        RemoveDeadZeroSizedTensorOps().run(ops, sweep)
    want = state.statistics["x"]["removeDeadZeroSizedTensorOps"]
    assert (got.matched, got.rewritten, dict(got.skipped)) == (
        want.matched,
        want.rewritten,
        dict(want.skipped),
    )
    assert got.rewritten == rewritten
    assert set(got.skipped) == {"not-side-effect-free", "not-zero-sized"}


# A zero-element type that contradicts the operands it follows: %x has 4 elements at run
# time (an add keeps its operands' shape), so %y's declared tensor<0xf32> cannot hold.
ZERO_SIZED_CONTRADICTED = """func.func @main(%a: tensor<4xf32>) -> tensor<0xf32> {
  %x = stablehlo.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<?xf32>
  %y = stablehlo.abs %x : (tensor<?xf32>) -> tensor<0xf32>
  return %y : tensor<0xf32>
}
"""


def test_zero_sized_walk_leaves_a_zero_type_its_operands_contradict():
    """The one place the fast walk departs from a visit of every op (seed-notes, "Gaps
    filled"): a shape-following op is reached only from values that may be zero-sized, and
    %x (a shape-following op's result on static non-zero operands) is not one, so %y stays.
    Its zero-element type contradicts the four elements %x has at run time: the program has
    no defined result there to change."""
    out = penguin_opt.run(
        penguin_opt.load(ZERO_SIZED_CONTRADICTED), "stablehlo-canonicalize-for-penguin"
    )
    stats = out.statistics["stablehlo-canonicalize-for-penguin"]["removeDeadZeroSizedTensorOps"]
    assert (stats.matched, stats.rewritten, dict(stats.skipped)) == (
        3,
        0,
        {"not-side-effect-free": 1, "not-zero-sized": 2},
    )
    assert "stablehlo.abs" in str(out.module)


def test_repeated_folds_give_the_same_ir():
    """Folds of the same constant to the same type (computed once per run: a JAX training
    step broadcasts the same scalars hundreds of times) give the same constants."""
    text = """func.func @main(%a: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf16>) {
  %c = stablehlo.constant dense<[1.5, 2.5, 3.5]> : tensor<3xf32>
  %d = stablehlo.constant dense<[1.5, 2.5, 3.5]> : tensor<3xf32>
  %0 = stablehlo.broadcast_in_dim %c, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %1 = stablehlo.broadcast_in_dim %d, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %e = stablehlo.constant dense<0.1> : tensor<2x3xf32>
  %2 = stablehlo.convert %e : (tensor<2x3xf32>) -> tensor<2x3xf16>
  %3 = stablehlo.convert %e : (tensor<2x3xf32>) -> tensor<2x3xf16>
  %4 = stablehlo.add %2, %3 : tensor<2x3xf16>
  return %0, %1, %4 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf16>
}
"""
    after, result = _run(text, "stablehlo-canonicalize-for-penguin")
    per = result.statistics["stablehlo-canonicalize-for-penguin"]
    assert per["replaceBroadcastInDimWithConstants"].rewritten == 2
    assert per["replaceConvertsWithConstants"].rewritten == 2
    folded = [
        line.split("=", 1)[1]
        for line in after.splitlines()
        if "stablehlo.constant" in line
        and "2x3x" in line
        and "0.1" not in line
        and "1.000000e-01" not in line
    ]
    broadcasts = [f for f in folded if "f32>" in f and "1.500000e+00" in f]
    converts = [f for f in folded if "f16>" in f]
    assert len(broadcasts) == 2
    assert broadcasts[0] == broadcasts[1]
    assert len(converts) == 2
    assert converts[0] == converts[1]
    assert check(text, after).ok


def test_complex_constants_fold_and_constant_broadcasts_make_no_remark():
    """Complex constants (read from text: the bindings cannot hand their values out) fold
    through convert and broadcast_in_dim; a legacy broadcast of a constant converts
    without the "operand is not a constant" remark."""
    text = """func.func @main() -> (tensor<2xcomplex<f64>>, tensor<3x2xcomplex<f32>>, tensor<4x2xf32>) {
  %c = stablehlo.constant dense<[(1.5, -2.0), (0.25, 3.0)]> : tensor<2xcomplex<f32>>
  %0 = stablehlo.convert %c : (tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f64>>
  %d = stablehlo.constant dense<[(1.0, 2.0), (3.0, 4.0)]> : tensor<2xcomplex<f32>>
  %1 = stablehlo.broadcast_in_dim %d, dims = [1] : (tensor<2xcomplex<f32>>) -> tensor<3x2xcomplex<f32>>
  %e = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %2 = "stablehlo.broadcast"(%e) {broadcast_sizes = array<i64: 4>} : (tensor<2xf32>) -> tensor<4x2xf32>
  return %0, %1, %2 : tensor<2xcomplex<f64>>, tensor<3x2xcomplex<f32>>, tensor<4x2xf32>
}
"""
    after, result = _run(text, "stablehlo-canonicalize-for-penguin")
    per = result.statistics["stablehlo-canonicalize-for-penguin"]
    assert per["replaceConvertsWithConstants"].rewritten == 1
    assert per["replaceBroadcastsWithBroadcastInDim"].rewritten == 1
    assert per["replaceBroadcastInDimWithConstants"].rewritten == 2
    assert not [d for d in result.diagnostics if "not a constant" in d.message]
    assert "stablehlo.convert" not in after
    assert "broadcast" not in after
    assert check(text, after).ok


@pytest.mark.parametrize("dialect", ["stablehlo", "mhlo"])
def test_resize_nearest_grad_of_an_empty_batch_lowers(dialect):
    """0 -> 0 has factor 1 (it was the 'not an integral multiple' error, the seed's ldiv
    by 0); the results keep matching; 0 under a non-empty output dim is still an error."""
    text = (
        "func.func @main(%g: tensor<0x8xf32>) -> tensor<0x4xf32> {\n"
        f"  %r = {dialect}.custom_call @ResizeNearestGrad(%g) : "
        "(tensor<0x8xf32>) -> tensor<0x4xf32>\n"
        "  return %r : tensor<0x4xf32>\n}\n"
    )
    pipeline = (
        "stablehlo-canonicalize-for-penguin"
        if dialect == "stablehlo"
        else "canonicalize-for-penguin"
    )
    result = penguin_opt.run(penguin_opt.parse(text), pipeline)
    after = penguin_opt.to_text(result.module)
    assert "ResizeNearestGrad" not in after
    assert result.statistics[pipeline]["lowerResizeNearestGrad"].rewritten == 1
    assert check(text, after).ok
    bad = text.replace("tensor<0x4xf32>", "tensor<0x3xf32>")
    with pytest.raises(penguin_opt.PassError, match="not an integral multiple"):
        penguin_opt.run(penguin_opt.parse(bad), pipeline)
    # factor 0 (0 rows of gradient for 1 row of result): left alone, not invalid IR
    odd = text.replace("tensor<0x4xf32>", "tensor<1x4xf32>")
    result = penguin_opt.run(penguin_opt.parse(odd), pipeline)
    assert "@ResizeNearestGrad" in penguin_opt.to_text(result.module)
    skipped = result.statistics[pipeline]["lowerResizeNearestGrad"].skipped
    assert skipped == {"empty-window": 1}, skipped
