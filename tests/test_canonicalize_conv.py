"""canonicalize-conv / stablehlo-canonicalize-conv: structure and numeric equivalence.

Every rewritten module is checked three ways against the original:

* the StableHLO reference interpreter (``stablehlo.eval_module``), run in a child process
  because it aborts the whole process (LLVM ERROR) on some conv layouts;
* XLA CPU, compiling the module text with the jax backend's ``compile_and_load``;
* a float64/int64 numpy implementation of the StableHLO convolution semantics, which also
  covers the layouts the interpreter cannot run.

Float tolerance. Both the original conv and the rewritten one compute each output as a sum
of the same n = (input features / feature_group_count) * KH * KW products; the rewrite only
changes the summation tree (the polyphase partial sums are added last, and each partial
result is rounded to the result type). Any summation tree of n products in a type with
unit roundoff u is within gamma_n * S of the exact value (Higham, Accuracy and Stability of
Numerical Algorithms, section 3.1), S = sum |x| |w| over the window (the conv of |x| and
|w|, computed exactly in float64) and gamma_n = n*u/(1-n*u). So original and rewritten
differ by at most 2*gamma_n*S; we assert |a - b| <= 2*(n+1)*u*S + tiny. Integers are
compared exactly (two's-complement addition is associative).
"""

from __future__ import annotations

import functools
import itertools
import logging
import math
import os
import re
from dataclasses import dataclass, replace

import ml_dtypes
import numpy as np
import pytest

from penguin_opt import api, equivalence, isolated
from penguin_opt.passes.base import PassError

# --------------------------------------------------------------------------- cases

LOGICAL_IN, LOGICAL_K = "bf01", "oi01"  # numpy reference order: [B, F, H, W], [O, I, KH, KW]
LAYOUTS = {
    "nhwc": ("b01f", "01io", "b01f"),
    "nchw": ("bf01", "oi01", "bf01"),
    "hwnc": ("01bf", "io01", "01bf"),
    "permuted": ("f01b", "1o0i", "0bf1"),  # the interpreter aborts on this one
}
# Layouts the reference interpreter aborts on (LLVM ERROR "Incompatible index and shape
# found while flattening index"): numerics there come from XLA and the numpy oracle.
INTERPRETER_ABORTS = {"permuted"}
DTYPES = {  # name -> (lhs/rhs element type, result element type)
    "f32": ("f32", "f32"),
    "bf16": ("bf16", "bf16"),
    "i32": ("i32", "i32"),
    "i8->i32": ("i8", "i32"),
    "bf16->f32": ("bf16", "f32"),
}
UNIT_ROUNDOFF = {"f32": 2.0**-24, "bf16": 2.0**-8}
NP_DTYPES = {"f32": np.float32, "bf16": ml_dtypes.bfloat16, "i32": np.int32, "i8": np.int8}


@dataclass(frozen=True)
class Conv:
    """One convolution, logically: lhs [B, F, H, W], rhs [O, F/fgc, KH, KW]."""

    spatial: tuple[int, int] = (7, 7)
    kernel: tuple[int, int] = (3, 3)
    strides: tuple[int, int] = (1, 1)
    padding: tuple[tuple[int, int], tuple[int, int]] = ((0, 0), (0, 0))
    lhs_dilation: tuple[int, int] = (1, 1)
    rhs_dilation: tuple[int, int] = (1, 1)
    reversal: tuple[bool, bool] = (False, False)
    batch: int = 1
    features: int = 2
    out_features: int = 3
    fgc: int = 1
    bgc: int = 1
    layout: str = "nhwc"
    dtype: str = "f32"

    @property
    def output_spatial(self) -> tuple[int, int]:
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
            padded = (n - 1) * ld + 1 + lo + hi
            span = (k - 1) * rd + 1
            out.append(max((padded - span) // s + 1, 0))
        return tuple(out)

    def logical_shapes(self):
        lhs = (self.batch, self.features, *self.spatial)
        rhs = (self.out_features, self.features // self.fgc, *self.kernel)
        out = (self.batch // self.bgc, self.out_features, *self.output_spatial)
        return lhs, rhs, out

    @property
    def label(self) -> str:
        parts = [
            self.layout,
            self.dtype,
            "x".join(map(str, self.spatial)),
            "k" + "x".join(map(str, self.kernel)),
            "s" + "x".join(map(str, self.strides)),
            "p" + "_".join(f"{lo}.{hi}" for lo, hi in self.padding),
        ]
        if self.lhs_dilation != (1, 1):
            parts.append("ld" + "x".join(map(str, self.lhs_dilation)))
        if self.rhs_dilation != (1, 1):
            parts.append("rd" + "x".join(map(str, self.rhs_dilation)))
        if any(self.reversal):
            parts.append("rev" + "".join("1" if r else "0" for r in self.reversal))
        if self.fgc > 1:
            parts.append(f"fgc{self.fgc}")
        if self.bgc > 1:
            parts.append(f"bgc{self.bgc}")
        return "-".join(parts)


def _physical(shape, logical: str, layout: str) -> list[int]:
    return [shape[logical.index(c)] for c in layout]


def _tensor(shape, element: str) -> str:
    return "tensor<" + "x".join(str(d) for d in shape) + f"x{element}>"


def module_text(c: Conv, dialect: str = "stablehlo") -> str:
    """A StableHLO (or MHLO) module whose @main is the one convolution ``c``."""
    lay_in, lay_k, lay_out = LAYOUTS[c.layout]
    lhs, rhs, out = c.logical_shapes()
    operand, result = DTYPES[c.dtype]
    tx = _tensor(_physical(lhs, LOGICAL_IN, lay_in), operand)
    tw = _tensor(_physical(rhs, LOGICAL_K, lay_k), operand)
    ty = _tensor(_physical(out, LOGICAL_IN, lay_out), result)

    def dims(layout):
        return "[" + ", ".join(layout) + "]"

    def ints(values):
        return "[" + ", ".join(str(v) for v in values) + "]"

    booleans = ", ".join("true" if r else "false" for r in c.reversal)
    if dialect == "mhlo":
        booleans = ", ".join("1" if r else "0" for r in c.reversal)
    pad = "[" + ", ".join(f"[{lo}, {hi}]" for lo, hi in c.padding) + "]"
    return (
        f"func.func @main(%x: {tx}, %w: {tw}) -> {ty} {{\n"
        f"  %0 = {dialect}.convolution(%x, %w) dim_numbers = "
        f"{dims(lay_in)}x{dims(lay_k)}->{dims(lay_out)}, window = {{stride = "
        f"{ints(c.strides)}, pad = {pad}, lhs_dilate = {ints(c.lhs_dilation)}, rhs_dilate = "
        f"{ints(c.rhs_dilation)}, reverse = [{booleans}]}} {{batch_group_count = {c.bgc} : i64, "
        f"feature_group_count = {c.fgc} : i64, precision_config = [#{dialect}<precision "
        f"DEFAULT>, #{dialect}<precision HIGHEST>]}} : ({tx}, {tw}) -> {ty}\n"
        f"  return %0 : {ty}\n}}\n"
    )


def make_inputs(c: Conv, seed: int = 0):
    """Logical (numpy-order) random inputs, exactly representable in the operand type."""
    rng = np.random.default_rng(seed)
    lhs, rhs, _ = c.logical_shapes()
    operand = DTYPES[c.dtype][0]
    if operand.startswith("i"):
        # i8 operands: |sum| <= n <= 127 for every case here, so no engine wraps
        bound = 2 if operand == "i8" else 5
        x = rng.integers(1 - bound, bound, lhs)
        w = rng.integers(1 - bound, bound, rhs)
    else:
        x = rng.standard_normal(lhs)
        w = rng.standard_normal(rhs)
    dtype = NP_DTYPES[operand]
    return x.astype(dtype), w.astype(dtype)


def to_physical(c: Conv, x, w):
    lay_in, lay_k, _ = LAYOUTS[c.layout]
    return (
        np.transpose(x, [LOGICAL_IN.index(ch) for ch in lay_in]),
        np.transpose(w, [LOGICAL_K.index(ch) for ch in lay_k]),
    )


def to_logical_out(c: Conv, y):
    lay_out = LAYOUTS[c.layout][2]
    return np.transpose(y, [lay_out.index(ch) for ch in LOGICAL_IN])


# --------------------------------------------------------------------------- oracle


def _pad(x, axis: int, lo: int, hi: int):
    """Edge padding of one axis; negative edges remove elements (pad semantics)."""
    widths = [(0, 0)] * x.ndim
    widths[axis] = (max(lo, 0), max(hi, 0))
    x = np.pad(x, widths)
    index = [slice(None)] * x.ndim
    index[axis] = slice(max(-lo, 0), x.shape[axis] - max(-hi, 0))
    return x[tuple(index)]


def reference_conv(c: Conv, x, w, accumulate=np.float64):
    """The StableHLO convolution semantics on logical arrays, in float64 (or int64)."""
    x = x.astype(accumulate)
    w = w.astype(accumulate)
    for axis, (ld, (lo, hi)) in enumerate(zip(c.lhs_dilation, c.padding, strict=True), 2):
        if ld > 1:
            shape = list(x.shape)
            shape[axis] = (shape[axis] - 1) * ld + 1
            dilated = np.zeros(shape, accumulate)
            index = [slice(None)] * 4
            index[axis] = slice(None, None, ld)
            dilated[tuple(index)] = x
            x = dilated
        x = _pad(x, axis, lo, hi)
    for axis, rev in enumerate(c.reversal, 2):
        if rev:
            w = np.flip(w, axis)
    oh, ow = c.output_spatial
    batch_out = c.batch // c.bgc
    out = np.zeros((batch_out, c.out_features, oh, ow), accumulate)
    groups = max(c.fgc, c.bgc)
    og = c.out_features // groups
    ig = c.features // c.fgc
    for kh, kw in itertools.product(range(c.kernel[0]), range(c.kernel[1])):
        h0, w0 = kh * c.rhs_dilation[0], kw * c.rhs_dilation[1]
        patch = x[
            :,
            :,
            h0 : h0 + c.strides[0] * (oh - 1) + 1 : c.strides[0],
            w0 : w0 + c.strides[1] * (ow - 1) + 1 : c.strides[1],
        ]
        for g in range(groups):
            if c.bgc > 1:
                lhs = patch[g * batch_out : (g + 1) * batch_out]
            else:
                lhs = patch[:, g * ig : (g + 1) * ig]
            out[:, g * og : (g + 1) * og] += np.einsum(
                "bihw,oi->bohw", lhs, w[g * og : (g + 1) * og, :, kh, kw]
            )
    return out


# --------------------------------------------------------------------------- engines


@functools.cache
def _child_context():
    from penguin_opt.context import make_context

    return make_context()


def _interpret(text: str, arrays):
    """(child process) Run @main of ``text`` in the StableHLO reference interpreter."""
    from jaxlib.mlir import ir
    from jaxlib.mlir.dialects import stablehlo

    from penguin_opt.elements import make_elements, read_elements

    ctx = _child_context()
    with ctx, ir.Location.unknown(ctx):
        module = ir.Module.parse(text)
        main = next(
            op
            for op in module.body.operations
            if op.operation.name == "func.func"
            and op.operation.attributes["sym_name"].value == "main"
        )
        types = [a.type for a in main.regions[0].blocks[0].arguments]
        args = [make_elements(np.asarray(a), t) for a, t in zip(arrays, types, strict=True)]
        return [np.array(read_elements(r)) for r in stablehlo.eval_module(module, args)]


class Interpreter:
    """The reference interpreter in a child process (penguin_opt.isolated)."""

    def run(self, text: str, arrays):
        """The results, or None when the interpreter aborted the child process."""
        try:
            return isolated.call(
                "test-conv-interpreter", _interpret, text, list(arrays), timeout=600
            )
        except isolated.ChildDied:
            return None

    def close(self):
        isolated.kill("test-conv-interpreter")


@pytest.fixture(scope="module")
def interpreter():
    engine = Interpreter()
    yield engine
    engine.close()


@functools.cache
def _xla_client():
    from jax.extend import backend

    return backend.get_backend("cpu")


def xla_run(text: str, arrays):
    """Compile ``text`` with XLA CPU (the jax backend) and run it on ``arrays``."""
    import jax

    client = _xla_client()
    executable = client.compile_and_load(text, client.devices()[:1])
    buffers = [jax.device_put(np.asarray(a), client.devices()[0]) for a in arrays]
    return [np.asarray(r) for r in executable.execute(buffers)]


# --------------------------------------------------------------------------- the pass


def canonicalize(text: str, pipeline: str):
    module = api.load(text)
    result = api.run(module, pipeline)
    return api.to_text(module), result.statistics


ALL_ON = "stablehlo-canonicalize-conv{canonicalize-small-extents=true}"
ALLOWED_OPS = {"pad", "slice", "add", "constant", "convolution", "convert"}
_OP = re.compile(r"= (?:\"?)(stablehlo|mhlo)\.(\w+)")
_CONV_ATTRS = ("dimension_numbers", "feature_group_count", "batch_group_count", "precision_config")


def phase_count(c: Conv) -> int:
    """Partial convs explicitlyStride emits (computed independently of the pass)."""
    count = 1
    for s, k, r in zip(c.strides, c.kernel, c.rhs_dilation, strict=True):
        if s > 1 and k > 1:
            count *= min(k, s // math.gcd(r, s))
    return count


def stride_rewritten(c: Conv) -> bool:
    operand, result = DTYPES[c.dtype]
    mixed_int = result.startswith("i") and operand != result
    return c.strides != (1, 1) and not (mixed_int and phase_count(c) > 1)


def check_structure(
    before: str, after: str, dialect: str = "stablehlo", unit_stride: bool = True
) -> int:
    """The seed's output vocabulary; every conv is zero-padding, unit-stride (unless the
    stride rewrite was skipped), undilated lhs, with the original dimension numbers, group
    counts and precision config. Returns the number of convs."""
    from jaxlib.mlir import ir

    from penguin_opt.ir_util import i64_values, ops_named

    ops = {m.group(2) for m in _OP.finditer(after)}
    assert ops <= ALLOWED_OPS, ops - ALLOWED_OPS
    original = api.load(before)
    rewritten = api.load(after)
    with original.context:
        (conv0,) = ops_named(original, [f"{dialect}.convolution"])
        want = {n: str(conv0.attributes[n]) for n in _CONV_ATTRS}
    with rewritten.context:
        convs = ops_named(rewritten, [f"{dialect}.convolution"])
        for conv in convs:
            if unit_stride:
                assert set(i64_values(conv.attributes["window_strides"])) == {1}
            assert set(i64_values(conv.attributes["padding"])) == {0}
            if "lhs_dilation" in conv.attributes:
                assert set(i64_values(conv.attributes["lhs_dilation"])) == {1}
            assert {n: str(conv.attributes[n]) for n in _CONV_ATTRS} == want
        assert all(isinstance(conv.results[0].type, ir.RankedTensorType) for conv in convs)
    return len(convs)


def float_tolerance(c: Conv, x, w):
    """2*(n+1)*u*S + tiny: see the module docstring."""
    n = (c.features // c.fgc) * c.kernel[0] * c.kernel[1]
    # a bf16 -> f32 conv may accumulate in bf16 (the interpreter does): the coarser u
    u = max(UNIT_ROUNDOFF[t] for t in DTYPES[c.dtype])
    s = reference_conv(c, np.abs(x.astype(np.float64)), np.abs(w.astype(np.float64)))
    return 2 * (n + 1) * u * s + 1e-30


def assert_close(c: Conv, got, want, tol, what: str):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    if tol is None:
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    err = np.abs(got.astype(np.float64) - want.astype(np.float64))
    bad = err > tol
    assert not bad.any(), f"{what}: {bad.sum()} elements over tolerance, max err {err.max()}"


def check_case(
    c: Conv,
    interpreter: Interpreter | None,
    *,
    xla: bool = True,
    pipeline: str = ALL_ON,
    seed: int = 0,
) -> dict:
    """Rewrite ``c`` and compare original vs rewritten on every engine that runs it."""
    before = module_text(c)
    after, stats = canonicalize(before, pipeline)
    n_convs = check_structure(before, after, unit_stride=stride_rewritten(c))
    assert n_convs == (phase_count(c) if stride_rewritten(c) else 1)
    x, w = make_inputs(c, seed)
    args = to_physical(c, x, w)
    exact = DTYPES[c.dtype][1].startswith("i")
    ref = reference_conv(c, x, w, np.int64 if exact else np.float64)
    tol = None if exact else float_tolerance(c, x, w)
    engines = {}
    if interpreter is not None and c.layout not in INTERPRETER_ABORTS:
        got_before = interpreter.run(before, args)
        got_after = interpreter.run(after, args)
        if got_before is not None and got_after is not None:
            engines["interpreter"] = (got_before[0], got_after[0])
    if xla:
        engines["xla"] = (xla_run(before, args)[0], xla_run(after, args)[0])
    for name, (orig, new) in engines.items():
        orig, new = to_logical_out(c, orig), to_logical_out(c, new)
        assert_close(c, orig, ref, tol, f"{c.label}: {name} original")
        assert_close(
            c,
            new,
            orig,
            tol if tol is None else 2 * tol,
            f"{c.label}: {name} rewritten vs original",
        )
    return {"stats": stats, "convs": n_convs, "engines": sorted(engines), "after": after}


# --------------------------------------------------------------------------- CI cases

CI_CASES = [
    # pad only / stride only / both
    Conv(padding=((1, 1), (1, 1))),
    Conv(padding=((2, 0), (0, 3)), kernel=(2, 3)),
    Conv(padding=((-1, 2), (1, -2))),  # negative edges
    Conv(strides=(2, 2), kernel=(1, 1)),  # the seed's single slice
    Conv(strides=(3, 1), kernel=(1, 2)),
    Conv(strides=(2, 2), kernel=(3, 3)),  # polyphase, 4 phases
    Conv(strides=(2, 3), kernel=(3, 5), padding=((1, 1), (2, 2))),
    Conv(strides=(4, 2), kernel=(7, 2), spatial=(11, 6), padding=((3, 3), (0, 1))),
    Conv(strides=(3, 3), kernel=(2, 2), spatial=(8, 8)),  # phases with empty kernels drop
    Conv(strides=(2, 2), kernel=(3, 3), padding=((-1, 0), (2, -1)), spatial=(8, 9)),
    # dilations and reversal
    Conv(strides=(2, 2), kernel=(3, 2), rhs_dilation=(2, 3), spatial=(9, 9)),
    Conv(strides=(3, 2), kernel=(3, 3), rhs_dilation=(2, 2), spatial=(10, 8)),
    Conv(
        strides=(2, 2), kernel=(3, 2), lhs_dilation=(2, 3), padding=((1, 2), (0, 1)), spatial=(4, 4)
    ),
    Conv(strides=(2, 1), kernel=(3, 3), lhs_dilation=(2, 1), spatial=(5, 6)),
    Conv(strides=(2, 3), kernel=(3, 4), reversal=(True, True), spatial=(9, 10)),
    Conv(
        strides=(2, 2),
        kernel=(4, 3),
        reversal=(True, True),
        rhs_dilation=(3, 1),
        padding=((2, 1), (1, 1)),
        spatial=(9, 9),
    ),
    # groups
    Conv(strides=(2, 2), kernel=(3, 3), features=4, out_features=6, fgc=2, spatial=(8, 8)),
    Conv(
        strides=(2, 2),
        kernel=(3, 3),
        features=3,
        out_features=3,
        fgc=3,
        spatial=(7, 7),
        padding=((0, 1), (0, 1)),
    ),  # depthwise
    Conv(
        strides=(2, 2),
        kernel=(3, 3),
        batch=4,
        features=2,
        out_features=4,
        bgc=2,
        spatial=(7, 8),
        padding=((1, 1), (1, 1)),
    ),  # backward-filter shape
    Conv(strides=(3, 2), kernel=(5, 3), batch=3, out_features=3, bgc=3, spatial=(10, 9)),
    # layouts
    Conv(layout="nchw", strides=(2, 2), kernel=(3, 3), padding=((1, 1), (1, 1))),
    Conv(layout="hwnc", strides=(2, 1), kernel=(3, 2), padding=((0, 1), (1, 0))),
    Conv(
        layout="permuted", strides=(2, 3), kernel=(3, 3), padding=((1, 1), (2, 0)), spatial=(8, 9)
    ),
    Conv(
        layout="permuted",
        strides=(2, 2),
        kernel=(3, 3),
        features=4,
        out_features=4,
        fgc=2,
        rhs_dilation=(1, 2),
        reversal=(False, True),
        spatial=(9, 9),
    ),
    # element types
    Conv(dtype="bf16", strides=(2, 2), kernel=(3, 3), padding=((1, 1), (1, 1))),
    Conv(dtype="bf16", layout="nchw", strides=(3, 2), kernel=(5, 3), spatial=(11, 7)),
    Conv(dtype="i32", strides=(2, 2), kernel=(3, 3), padding=((1, 2), (2, 1))),
    Conv(
        dtype="i8->i32", strides=(2, 3), kernel=(4, 5), spatial=(9, 11), padding=((1, 1), (-1, 2))
    ),
    Conv(dtype="i8->i32", strides=(2, 3), kernel=(1, 1), spatial=(9, 11)),  # one phase
    Conv(dtype="bf16->f32", strides=(2, 2), kernel=(3, 3), features=4, padding=((1, 1), (0, 1))),
    Conv(
        dtype="i32",
        layout="hwnc",
        strides=(2, 2),
        kernel=(3, 3),
        fgc=2,
        features=4,
        out_features=2,
        rhs_dilation=(2, 1),
        reversal=(True, False),
        spatial=(9, 8),
    ),
]


@pytest.mark.parametrize("case", CI_CASES, ids=lambda c: c.label)
def test_rewrite_is_exact(case, interpreter):
    out = check_case(case, interpreter)
    want = {"xla"} if case.layout in INTERPRETER_ABORTS else {"interpreter", "xla"}
    assert set(out["engines"]) == want
    stats = out["stats"]["stablehlo-canonicalize-conv"]
    padded = any(p != (0, 0) for p in case.padding) or case.lhs_dilation != (1, 1)
    assert stats["explicitlyPad"].rewritten == int(padded)
    assert stats["explicitlyStride"].rewritten == int(stride_rewritten(case))
    if case.strides != (1, 1) and not stride_rewritten(case):
        assert stats["explicitlyStride"].skipped == {"mixed-integer-accumulation": 1}


def test_phase_count_and_seed_single_slice():
    """Extent-1 kernels keep the seed's single full-extent strided slice; wider kernels
    get one partial conv per non-empty phase."""
    after, _ = canonicalize(module_text(Conv(strides=(2, 2), kernel=(1, 1))), ALL_ON)
    assert after.count("stablehlo.convolution") == 1
    assert "stablehlo.slice %arg0 [0:1, 0:7:2, 0:7:2, 0:2]" in after
    assert "stablehlo.add" not in after
    # stride 3 with a 2-wide kernel: 2 phases per dim (the third phase has no taps)
    after, _ = canonicalize(
        module_text(Conv(strides=(3, 3), kernel=(2, 2), spatial=(8, 8))), ALL_ON
    )
    assert after.count("stablehlo.convolution") == 4
    assert after.count("stablehlo.add") == 3
    # stride 2 dividing rhs_dilation 2: one phase, the dilation divides by the stride
    after, _ = canonicalize(
        module_text(Conv(strides=(2, 2), kernel=(3, 3), rhs_dilation=(2, 2), spatial=(9, 9))),
        ALL_ON,
    )
    assert after.count("stablehlo.convolution") == 1
    assert "rhs_dilate = [1, 1]" in after


def test_mhlo_twin_matches_stablehlo(interpreter):
    """canonicalize-conv on MHLO is the same rewrite: legalize, canonicalize, legalize back."""
    for c in (CI_CASES[6], CI_CASES[15], CI_CASES[18]):
        before = module_text(c)
        mhlo_after, stats = canonicalize(
            module_text(c, "mhlo"),
            "canonicalize-conv{canonicalize-small-extents=true},hlo-legalize-to-stablehlo",
        )
        shlo_after, _ = canonicalize(before, ALL_ON)
        assert stats["canonicalize-conv"]["explicitlyStride"].rewritten == 1
        # same ops in the same order
        assert [m.group(2) for m in _OP.finditer(mhlo_after)] == [
            m.group(2) for m in _OP.finditer(shlo_after)
        ]
        args = to_physical(c, *make_inputs(c))
        want = to_logical_out(c, interpreter.run(before, args)[0])
        got = to_logical_out(c, interpreter.run(mhlo_after, args)[0])
        x, w = make_inputs(c)
        assert_close(c, got, want, 2 * float_tolerance(c, x, w), "mhlo twin")


# --------------------------------------------------------------------------- the gate


def conv_func(name: str, convs, dialect: str = "stablehlo") -> str:
    """A function of one argument pair per conv: (lhs, rhs, result, dims, window)."""
    args, body = [], []
    for i, (lhs, rhs, out, dims, window) in enumerate(convs):
        args += [f"%x{i}: tensor<{lhs}>", f"%w{i}: tensor<{rhs}>"]
        body.append(
            f"  %{i} = {dialect}.convolution(%x{i}, %w{i}) dim_numbers = {dims}, "
            f"window = {{{window}}} {{batch_group_count = 1 : i64, feature_group_count = 1 : "
            f"i64}} : (tensor<{lhs}>, tensor<{rhs}>) -> tensor<{out}>"
        )
    return f"func.func @{name}({', '.join(args)}) {{\n" + "\n".join(body) + "\n  return\n}\n"


NHWC = "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]"
GATE_MODULE = conv_func(
    "main",
    [
        (
            "1x8x2xf32",
            "3x2x2xf32",
            "1x4x2xf32",
            "[b, 0, f]x[0, i, o]->[b, 0, f]",
            "stride = [2], pad = [[1, 1]]",
        ),  # rank-not-4
        (
            "1x6x6x6x2xf32",
            "2x2x2x2x2xf32",
            "1x3x3x3x2xf32",
            "[b, 0, 1, 2, f]x[0, 1, 2, i, o]->[b, 0, 1, 2, f]",
            "stride = [2, 2, 2]",
        ),  # rank-not-4
        ("1x?x8x2xf32", "3x3x2x2xf32", "1x?x3x2xf32", NHWC, "stride = [2, 2]"),  # dynamic-shape
        (
            "1x1x8x2xf32",
            "3x3x2x2xf32",
            "1x1x3x2xf32",
            NHWC,
            "stride = [1, 2], pad = [[1, 1], [0, 0]]",
        ),  # spatial-extent-1
        ("1x3x8x2xf32", "3x3x2x2xf32", "1x1x3x2xf32", NHWC, "stride = [1, 2]"),  # small-extent
        ("1x40x8x2xf32", "3x3x2x2xf32", "1x2x3x2xf32", NHWC, "stride = [32, 2]"),  # over-bound
        (
            "1x8x8x2xf32",
            "3x3x2x2xf32",
            "1x19x3x2xf32",
            NHWC,
            "stride = [2, 2], pad = [[32, 0], [0, 0]]",
        ),  # over-bound
        (
            "1x8x8x2xf32",
            "3x3x2x2xf32",
            "1x1x3x2xf32",
            NHWC,
            "stride = [31, 2], pad = [[31, -8], [0, 0]]",
        ),  # at the bound
    ],
)


def _skips(stats, pass_name="stablehlo-canonicalize-conv"):
    st = stats[pass_name]["explicitlyStride"]
    return st.matched, st.rewritten, dict(st.skipped)


def test_gate_reasons_and_options():
    _, stats = canonicalize(GATE_MODULE, "stablehlo-canonicalize-conv")
    assert _skips(stats) == (
        8,
        1,
        {
            "rank-not-4": 2,
            "dynamic-shape": 1,
            "spatial-extent-1": 1,
            "small-extent-flag-off": 1,
            "over-bound": 2,
        },
    )
    assert stats["stablehlo-canonicalize-conv"]["explicitlyPad"].rewritten == 1
    _, stats = canonicalize(
        GATE_MODULE, "stablehlo-canonicalize-conv{canonicalize-small-extents=true}"
    )
    assert _skips(stats)[:2] == (8, 2)
    _, stats = canonicalize(
        GATE_MODULE,
        "stablehlo-canonicalize-conv{canonicalize-small-extents max-stride-or-padding=32 "
        "min-spatial-extent=1}",
    )
    assert _skips(stats) == (8, 5, {"rank-not-4": 2, "dynamic-shape": 1})
    _, stats = canonicalize(GATE_MODULE, "stablehlo-canonicalize-conv{small-spatial-extent=1}")
    assert _skips(stats)[:2] == (8, 2)


def test_gated_out_convs_are_untouched():
    module = api.load(GATE_MODULE)
    before = api.to_text(module)
    after, _ = canonicalize(GATE_MODULE, "stablehlo-canonicalize-conv{max-stride-or-padding=0}")
    assert after == before


def test_nested_regions_and_every_function(interpreter):
    """The walk reaches convs in every function and inside nested regions."""
    c = Conv(strides=(2, 2), kernel=(3, 3), padding=((1, 1), (1, 1)))
    conv_line = module_text(c).splitlines()[1].replace("%x", "%xx").replace("%w", "%ww")
    text = (
        "!x = tensor<1x7x7x2xf32>\n"
        + module_text(c)
        + f"""
func.func private @helper(%xx: !x, %ww: tensor<3x3x2x3xf32>) -> tensor<1x4x4x3xf32> {{
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%it = %c0, %acc = %xx) : tensor<i32>, tensor<1x7x7x2xf32>
    cond {{
      %lim = stablehlo.constant dense<1> : tensor<i32>
      %p = stablehlo.compare LT, %it, %lim : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    }} do {{
      %one = stablehlo.constant dense<1> : tensor<i32>
      %n = stablehlo.add %it, %one : tensor<i32>
      stablehlo.return %n, %acc : tensor<i32>, tensor<1x7x7x2xf32>
    }}
{conv_line.replace("%xx", "%r#1")}
  return %0 : tensor<1x4x4x3xf32>
}}
"""
    )
    after, stats = canonicalize(text, "stablehlo-canonicalize-conv")
    st = stats["stablehlo-canonicalize-conv"]
    assert (st["explicitlyPad"].rewritten, st["explicitlyStride"].rewritten) == (2, 2)
    assert after.count("stablehlo.pad") == 2


def stride_2_conv(x: str, w: str, y: str) -> str:
    """@main: one NHWC convolution of ``x`` by ``w`` at stride 2 in both dims."""
    return (
        f"func.func @main(%x: tensor<{x}>, %w: tensor<{w}>) -> tensor<{y}> {{\n"
        f"  %0 = stablehlo.convolution(%x, %w) dim_numbers = {NHWC}, window = {{stride = "
        "[2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : "
        f"(tensor<{x}>, tensor<{w}>) -> tensor<{y}>\n"
        f"  return %0 : tensor<{y}>\n}}\n"
    )


def test_f16_phases_sum_in_f32_as_xla_does():
    """A strided f16 conv over rows of +6e4 and -6e4 with a 2x2 kernel of ones: XLA sums
    each window in f32 (0); f16 partial convs would add 6e4 + 6e4 = inf first. The
    partial convs are f32 and their sum is rounded to f16 once: 0 on XLA too."""
    text = stride_2_conv("1x6x6x1xf16", "2x2x1x1xf16", "1x3x3x1xf16")
    after, stats = canonicalize(text, "stablehlo-canonicalize-conv")
    assert _skips(stats) == (1, 1, {})
    assert after.count("-> tensor<1x3x3x1xf32>") == 4  # the four phases' partial convs
    assert "stablehlo.convert" in after
    rows = np.where(np.arange(6) % 2 == 0, 6e4, -6e4).astype(np.float16)
    x = np.broadcast_to(rows[None, :, None, None], (1, 6, 6, 1)).copy()
    w = np.ones((2, 2, 1, 1), np.float16)
    before_out, after_out = xla_run(text, [x, w])[0], xla_run(after, [x, w])[0]
    assert np.array_equal(before_out, np.zeros((1, 3, 3, 1), np.float16))
    assert np.array_equal(after_out, before_out)


def test_phases_summing_past_the_float_range_are_a_mismatch_the_checker_finds():
    """Where explicitlyStride cannot keep results (outside tester H): a window's sum whose
    phases group +3e38 with +3e38 overflows in any float type with f32's range (f32, and
    bf16, whose phases sum in f32), though the conv's own order (3e38 - 3e38 + 3e38)
    stays finite. Re-association moves rounding, not range; the checker given such inputs
    calls it a mismatch (the exact value is finite), as seed-notes says."""
    text = stride_2_conv("1x5x5x1xf32", "3x3x1x1xf32", "1x2x2x1xf32")
    after, stats = canonicalize(text, "stablehlo-canonicalize-conv")
    assert _skips(stats) == (1, 1, {})
    x = np.zeros((1, 5, 5, 1), np.float32)
    x[0, 0, :3, 0] = [3e38, -3e38, 3e38]
    w = np.ones((3, 3, 1, 1), np.float32)
    before_out, after_out = xla_run(text, [x, w])[0], xla_run(after, [x, w])[0]
    assert before_out[0, 0, 0, 0] == np.float32(3e38)
    assert np.isinf(after_out[0, 0, 0, 0])
    report = equivalence.check(text, after, inputs=[[x, w]], oracle="xla")
    assert not report.ok, report.table()
    assert equivalence.check(text, after, oracle="xla").ok  # random inputs cannot show it


def test_lhs_dilation_holes_are_zeros_as_the_spec_says_not_as_xla_skips_them(interpreter):
    """explicitlyPad writes lhs_dilation as the pad's interior zeros, as the StableHLO spec
    defines the conv (``pad(lhs, 0, low, high, lhs_dilation - 1)``). XLA CPU never
    multiplies the holes: with an inf in the kernel, its original gives finite values
    where the spec (the reference interpreter, before and after) gives NaN from 0 * inf
    (outside tester I). The rewrite keeps the spec's results; seed-notes says so."""
    text = (
        "func.func @main(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) -> "
        "tensor<1x1x7x7xf32> {\n"
        "  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->"
        "[b, f, 0, 1], window = {pad = [[1, 1], [1, 1]], lhs_dilate = [2, 2]} "
        "{batch_group_count = 1 : i64, feature_group_count = 1 : i64} : "
        "(tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x7x7xf32>\n"
        "  return %0 : tensor<1x1x7x7xf32>\n}\n"
    )
    after, stats = canonicalize(text, "stablehlo-canonicalize-conv")
    assert _skips(stats) == (1, 0, {"unit-stride": 1})  # explicitlyPad's rewrite alone
    assert "stablehlo.pad" in after
    x = np.ones((1, 1, 4, 4), np.float32)
    w = np.ones((1, 1, 3, 3), np.float32)
    w[0, 0, 1, 1] = np.inf
    spec_before, spec_after = interpreter.run(text, [x, w])[0], interpreter.run(after, [x, w])[0]
    assert np.array_equal(spec_before, spec_after, equal_nan=True)
    assert np.isnan(spec_after).sum() == 33  # the 49 outputs but the 16 the inf meets an x at
    xla_before = xla_run(text, [x, w])[0]
    assert not np.isnan(xla_before).any()
    assert np.array_equal(xla_run(after, [x, w])[0], spec_after, equal_nan=True)


def test_error_unsupported_element_type():
    """The pad path needs an exact zero: f8E8M0FNU has none (the seed's NCC_EUET001)."""
    t = "1x8x8x2xf8E8M0FNU"
    text = conv_func("main", [(t, "3x3x2x2xf8E8M0FNU", t, NHWC, "pad = [[1, 1], [1, 1]]")])
    with pytest.raises(PassError, match="NCC_EUET001") as err:
        canonicalize(text, "stablehlo-canonicalize-conv")
    assert err.value.diagnostic.render("x.mlir").startswith("x.mlir:2:")


def test_debug_log_does_not_change_output(caplog):
    """The seed's verbose-only isBackwardConv phase is a debug log line, nothing more: a
    filter-gradient-shaped conv (batch_group_count 2) fed by another conv is logged."""
    text = """
func.func @main(%x: tensor<4x8x8x2xf32>, %w: tensor<3x3x2x2xf32>, %dy: tensor<3x3x2x4xf32>)
    -> tensor<2x4x4x4xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
       window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64,
       feature_group_count = 1 : i64} : (tensor<4x8x8x2xf32>, tensor<3x3x2x2xf32>)
       -> tensor<4x8x8x2xf32>
  %1 = stablehlo.convolution(%0, %dy) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
       window = {stride = [2, 2], pad = [[1, 1], [1, 1]]} {batch_group_count = 2 : i64,
       feature_group_count = 1 : i64} : (tensor<4x8x8x2xf32>, tensor<3x3x2x4xf32>)
       -> tensor<2x4x4x4xf32>
  return %1 : tensor<2x4x4x4xf32>
}
"""
    quiet, _ = canonicalize(text, ALL_ON)
    assert not caplog.records
    with caplog.at_level(logging.DEBUG, logger="penguin_opt.passes.canonicalize_conv"):
        loud, _ = canonicalize(text, ALL_ON)
    assert loud == quiet
    logged = [r.getMessage() for r in caplog.records]
    assert len(logged) == 4, logged
    assert all("backward convolution" in m for m in logged), logged


# --------------------------------------------------------------------------- real layers


def _lower(fn, *avals) -> str:
    import jax

    return jax.jit(fn).lower(*avals).as_text()


def _check_lowered(text, arrays, interpreter, *, n, u=2.0**-24):
    """Canonicalize a jax-lowered single-conv program; compare original and rewritten on
    XLA CPU and the interpreter within 2*(n+1)*u*S (module docstring)."""
    after, stats = canonicalize(text, "stablehlo-canonicalize-conv")
    # S: the original program on |x|, |w| (each program here is one conv of its inputs)
    s = xla_run(text, [np.abs(a) for a in arrays])[0].astype(np.float64)
    tol = 2 * (n + 1) * u * s + 1e-30
    for engine in (xla_run, interpreter.run):
        want, got = engine(text, arrays)[0], engine(after, arrays)[0]
        assert got.shape == want.shape
        assert np.all(np.abs(got.astype(np.float64) - want) <= tol), engine
    return stats["stablehlo-canonicalize-conv"], after


def test_resnet50_stem_and_mobilenetv2_depthwise_handwritten(interpreter):
    """The exact conv configs of Keras ResNet50's stem (7x7/s2, pad 3, NHWC/HWIO, 3 -> 64)
    and a MobileNetV2 stride-2 depthwise block (3x3/s2, pad (0,1), 96 channels), written
    with jax.lax and lowered by jax."""
    import jax
    from jax import lax

    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 32, 32, 3), np.float32)
    w = rng.standard_normal((7, 7, 3, 64), np.float32) * 0.05

    def stem(x, w):
        return lax.conv_general_dilated(
            x, w, (2, 2), ((3, 3), (3, 3)), dimension_numbers=("NHWC", "HWIO", "NHWC")
        )

    text = _lower(
        stem, jax.ShapeDtypeStruct(x.shape, x.dtype), jax.ShapeDtypeStruct(w.shape, w.dtype)
    )
    st, after = _check_lowered(text, [x, w], interpreter, n=147)
    assert (st["explicitlyPad"].rewritten, st["explicitlyStride"].rewritten) == (1, 1)
    assert after.count("stablehlo.convolution") == 4  # 2x2 phases (stride 2) of the 7x7 kernel

    x = rng.standard_normal((1, 16, 16, 96), np.float32)
    w = rng.standard_normal((3, 3, 1, 96), np.float32)

    def depthwise(x, w):
        return lax.conv_general_dilated(
            x,
            w,
            (2, 2),
            ((0, 1), (0, 1)),
            dimension_numbers=("NHWC", "HWIO", "NHWC"),
            feature_group_count=96,
        )

    text = _lower(
        depthwise, jax.ShapeDtypeStruct(x.shape, x.dtype), jax.ShapeDtypeStruct(w.shape, w.dtype)
    )
    st, after = _check_lowered(text, [x, w], interpreter, n=9)
    assert (st["explicitlyPad"].rewritten, st["explicitlyStride"].rewritten) == (1, 1)
    assert "feature_group_count = 96" in after


# --------------------------------------------------------------------------- keras models


@pytest.fixture(scope="module")
def keras_mod():
    os.environ.setdefault("KERAS_BACKEND", "jax")
    keras = pytest.importorskip("keras")
    if keras.backend.backend() != "jax":
        pytest.skip("keras is not on the jax backend")
    return keras


def _keras_model_check(keras, model, size):
    """Lower the whole model (weights as arguments) with jax, canonicalize, and compare the
    XLA CPU results of the original and rewritten programs."""
    import jax

    keras.utils.set_random_seed(0)
    trainable = [v.value for v in model.trainable_variables]
    frozen = [v.value for v in model.non_trainable_variables]

    def forward(trainable, frozen, x):
        y, _ = model.stateless_call(trainable, frozen, x, training=False)
        return y

    x = np.random.default_rng(0).standard_normal((1, size, size, 3)).astype(np.float32)
    lowered = jax.jit(forward).lower(trainable, frozen, x)
    text = lowered.as_text()
    module = api.load(text)
    result = api.run(module, ALL_ON)
    after = api.to_text(module)
    args = [np.asarray(a) for a in (*trainable, *frozen)] + [x]
    want = xla_run(text, args)[0]
    got = xla_run(after, args)[0]
    st = result.statistics["stablehlo-canonicalize-conv"]
    return st, got, want


def test_keras_mobilenetv2_random_init(keras_mod):
    """Keras MobileNetV2 (random init, alpha 0.35): every stride-2 conv and depthwise conv
    is rewritten and the whole network's output is unchanged."""
    keras = keras_mod
    keras.utils.set_random_seed(0)
    model = keras.applications.MobileNetV2(
        weights=None, input_shape=(32, 32, 3), alpha=0.35, classes=10
    )
    st, got, want = _keras_model_check(keras, model, 32)
    assert st["explicitlyStride"].rewritten == 5  # stem + the four stride-2 depthwise
    assert st["explicitlyPad"].rewritten > 0
    # softmax outputs; the conv stack's rounding differences stay tiny
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


@pytest.mark.slow
def test_keras_resnet50_random_init(keras_mod):
    keras = keras_mod
    keras.utils.set_random_seed(0)
    model = keras.applications.ResNet50(weights=None, input_shape=(32, 32, 3), classes=10)
    st, got, want = _keras_model_check(keras, model, 32)
    assert st["explicitlyStride"].rewritten >= 1
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


# --------------------------------------------------------------------------- slow sweep


def _sweep_cases(count: int, seed: int = 7):
    """Strides 1-4 and kernels 1-7 per dim, symmetric/asymmetric/negative padding, dilations,
    reversal, feature and batch groups, every layout and element type."""
    rng = np.random.default_rng(seed)
    cases = []
    grid = list(itertools.product(range(1, 5), range(1, 8)))  # (stride, kernel) per dim
    for i in range(count):
        (sh, kh), (sw, kw) = grid[i % len(grid)], grid[rng.integers(len(grid))]
        layout = list(LAYOUTS)[rng.integers(len(LAYOUTS))]
        dtype = list(DTYPES)[rng.integers(len(DTYPES))]
        rd = tuple(int(v) for v in rng.choice([1, 1, 2, 3], 2))
        ld = tuple(int(v) for v in rng.choice([1, 1, 1, 2], 2))
        pads = []
        for k, r in zip((kh, kw), rd, strict=True):
            kind = rng.integers(4)
            span = (k - 1) * r + 1
            if kind == 0:
                pads.append((0, 0))
            elif kind == 1:
                p = int(rng.integers(0, span))
                pads.append((p, p))
            elif kind == 2:
                pads.append((int(rng.integers(0, span)), int(rng.integers(0, span))))
            else:
                pads.append((int(rng.integers(-2, span)), int(rng.integers(-2, 2))))
        c = Conv(
            spatial=(0, 0),
            kernel=(kh, kw),
            strides=(sh, sw),
            padding=tuple(pads),
            lhs_dilation=ld,
            rhs_dilation=rd,
            reversal=tuple(bool(b) for b in rng.integers(0, 2, 2)),
            layout=layout,
            dtype=dtype,
        )
        spatial = []
        for k, s, r, (lo, hi), dl in zip(c.kernel, c.strides, rd, c.padding, ld, strict=True):
            need = (k - 1) * r + 1 - lo - hi  # dilated-padded extent must hold a window
            n = max(4, -(-(need - 1) // dl) + 1 + int(rng.integers(0, 2 * s + 2)))
            spatial.append(n)
        groups = rng.integers(3)
        if groups == 1:
            c = replace(c, features=4, out_features=6, fgc=2)
        elif groups == 2:
            c = replace(c, batch=4, features=2, out_features=4, bgc=2)
        c = replace(c, spatial=tuple(spatial))
        if min(c.output_spatial) > 0:
            cases.append(c)
    return cases


@pytest.mark.slow
def test_sweep_is_exact(interpreter):
    cases = _sweep_cases(600)
    engines = {"interpreter": 0, "xla": 0}
    for i, c in enumerate(cases):
        out = check_case(c, interpreter, seed=i)
        for name in out["engines"]:
            engines[name] += 1
    assert engines["xla"] == len(cases)
    assert engines["interpreter"] >= len(cases) * 0.6


@pytest.mark.slow
def test_sweep_mhlo_twin(interpreter):
    for i, c in enumerate(_sweep_cases(60, seed=11)):
        mhlo_after, _ = canonicalize(
            module_text(c, "mhlo"),
            "canonicalize-conv{canonicalize-small-extents=true},hlo-legalize-to-stablehlo",
        )
        shlo_after, _ = canonicalize(module_text(c), ALL_ON)
        assert [m.group(2) for m in _OP.finditer(mhlo_after)] == [
            m.group(2) for m in _OP.finditer(shlo_after)
        ], c.label
        x, w = make_inputs(c, i)
        args = to_physical(c, x, w)
        want = to_logical_out(c, xla_run(module_text(c), args)[0])
        got = to_logical_out(c, xla_run(mhlo_after, args)[0])
        exact = DTYPES[c.dtype][1].startswith("i")
        assert_close(c, got, want, None if exact else 2 * float_tolerance(c, x, w), c.label)


def test_sweep_cases_cover_the_grid():
    cases = _sweep_cases(600)
    strides = {s for c in cases for s in c.strides}
    kernels = {k for c in cases for k in c.kernel}
    assert strides == {1, 2, 3, 4}
    assert kernels == set(range(1, 8))
    assert {c.layout for c in cases} == set(LAYOUTS)
    assert {c.dtype for c in cases} == set(DTYPES)
    assert any(c.fgc > 1 for c in cases)
    assert any(c.bgc > 1 for c in cases)
    assert any(lo < 0 or hi < 0 for c in cases for lo, hi in c.padding)
    assert math.prod(len(x) for x in (strides, kernels)) == 28


# --------------------------------------------------------------------------- driver internals

_NESTED_CONVS = """\
!t = tensor<1x4x4x1xf32>
!k = tensor<1x1x1x1xf32>
func.func @a(%x: !t, %w: !k) -> !t {
  %c1 = CONV(%x, %w)
  %i0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%it = %i0, %acc = %c1) : tensor<i32>, !t
    cond {
      %lim = stablehlo.constant dense<1> : tensor<i32>
      %p = stablehlo.compare LT, %it, %lim : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %c2 = CONV(%acc, %w)
      %sel = "stablehlo.case"(%it) ({
        %c3 = CONV(%c2, %w)
        stablehlo.return %c3 : !t
      }, {
        stablehlo.return %c2 : !t
      }) : (tensor<i32>) -> !t
      %c4 = CONV(%sel, %w)
      %one = stablehlo.constant dense<1> : tensor<i32>
      %n = stablehlo.add %it, %one : tensor<i32>
      stablehlo.return %n, %c4 : tensor<i32>, !t
    }
  %c5 = CONV(%r#1, %w)
  return %c5 : !t
}
func.func private @none(%x: !t) -> !t {
  return %x : !t
}
func.func private @b(%x: !t, %w: !k) -> !t {
  %c6 = CONV(%x, %w)
  cf.br ^bb1(%c6 : !t)
^bb1(%y: !t):
  %c7 = CONV(%y, %w)
  return %c7 : !t
}
""".replace(
    "CONV(",
    "stablehlo.convolution(",
).replace(
    ", %w)\n",
    ", %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} "
    "{batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (!t, !k) -> !t\n",
)


def test_convolutions_listed_in_preorder():
    """The name-dispatched walk (post-order) lists the convs of every function, through
    nested regions and blocks, in the seed's pre-order: no conv holds another."""
    from jaxlib.mlir import ir

    from penguin_opt.dialect import STABLEHLO
    from penguin_opt.ir_util import functions
    from penguin_opt.passes.canonicalize_conv import convolutions

    module = api.load(_NESTED_CONVS)
    with module.context:
        got = convolutions(functions(module), STABLEHLO)
        want = []

        def visit(op):
            if op.name == "stablehlo.convolution":
                want.append(op)
            return ir.WalkResult.ADVANCE

        for func in functions(module):
            func.walk(visit, ir.WalkOrder.PRE_ORDER)
        assert len(want) == 7
        assert [hash(op) for op in got] == [hash(op) for op in want]
        assert [str(op.location) for op in got] == [str(op.location) for op in want]


def _rewrite_rereading_geometry(text: str, dialect: str) -> str:
    """The pass as the seed drives it, each rewrite reading its conv's geometry from the
    IR (no geometry handed on), for comparison with the pass's own run."""
    from jaxlib.mlir import ir

    from penguin_opt.dialect import MHLO, STABLEHLO
    from penguin_opt.passes import canonicalize_conv as cc
    from penguin_opt.passes.base import RunState
    from penguin_opt.passes.sweep import Sweep

    d = STABLEHLO if dialect == "stablehlo" else MHLO
    cls = cc.StablehloCanonicalizeConv if dialect == "stablehlo" else cc.CanonicalizeConv
    gate = cls(canonicalize_small_extents=True).gate()
    module = api.load(text)
    from penguin_opt.ir_util import functions

    conv_geometry, convolutions = cc.conv_geometry, cc.convolutions
    ExplicitlyPad, ExplicitlyStride = cc.ExplicitlyPad, cc.ExplicitlyStride
    with module.context, ir.Location.unknown(module.context):
        sweep = Sweep(d, "x", RunState(), {})
        eligible = [c for c in convolutions(functions(module), d) if gate.reject(c, d) is None]
        for conv in eligible:
            for rewrite in (ExplicitlyPad(), ExplicitlyStride()):
                before = conv
                conv, reason, g = rewrite.apply(conv, sweep)
                if reason is None and isinstance(rewrite, ExplicitlyPad):
                    # the geometry handed on is the one the new conv reads
                    assert g == conv_geometry(conv, d)
                elif reason is not None:
                    assert conv is before
    return api.to_text(module)


@pytest.mark.parametrize("dialect", ["stablehlo", "mhlo"])
def test_geometry_handed_on_equals_geometry_read(dialect):
    """Reading each conv's geometry once (the gate) and deriving the padded conv's gives
    the very output of rewrites that each read the geometry from the IR."""
    cases = CI_CASES + _sweep_cases(150, seed=3)
    for c in cases:
        text = module_text(c, dialect)
        name = "stablehlo-canonicalize-conv" if dialect == "stablehlo" else "canonicalize-conv"
        after, _ = canonicalize(text, f"{name}{{canonicalize-small-extents=true}}")
        assert _rewrite_rereading_geometry(text, dialect) == after, c.label


@pytest.mark.parametrize("dialect", ["stablehlo", "mhlo"])
def test_convs_sharing_a_geometry_are_each_rewritten_as_alone(dialect):
    """One pass run plans each conv geometry once (and each geometry with its types once):
    convs of one geometry in other element types, or in other layouts of the same types,
    come out as each would alone (every rewrite reading its own conv afresh)."""
    shared = {"strides": (2, 2), "kernel": (3, 3), "padding": ((1, 1), (1, 1))}
    # every tensor 4x4x4x4: the same types in any layout and either padding
    square = {"spatial": (4, 4), "kernel": (4, 4), "batch": 4, "features": 4, "out_features": 4}
    cases = [Conv(**shared, dtype=dtype) for dtype in DTYPES] + [
        Conv(**shared),  # the first geometry again, after the others
        Conv(**shared, rhs_dilation=(2, 1)),
        *(Conv(**square, padding=((1, 2), (1, 2)), layout=lay) for lay in ("nhwc", "nchw")),
        Conv(**square, padding=((2, 1), (2, 1))),
    ]
    functions = [module_text(c, dialect).replace("@main", f"@f{i}", 1) for i, c in enumerate(cases)]
    text = "module {\n" + "".join(functions) + "}\n"
    name = "stablehlo-canonicalize-conv" if dialect == "stablehlo" else "canonicalize-conv"
    after, stats = canonicalize(text, f"{name}{{canonicalize-small-extents=true}}")
    st = stats[name]["explicitlyStride"]
    assert (st.matched, st.rewritten) == (len(cases), len(cases) - 4)
    # the i8 -> i32 conv, and the unit-stride ones (explicitlyPad's alone)
    assert dict(st.skipped) == {"mixed-integer-accumulation": 1, "unit-stride": 3}
    assert stats[name]["explicitlyPad"].rewritten == len(cases)
    assert _rewrite_rereading_geometry(text, dialect) == after
