"""``--penguin-readiness``: the report's lines and exit codes, the hazards' arithmetic
against direct numpy, a JAX argsort, and the shared public corpus (nothing reported where
the seeds say nothing is left). The text of every finding is pinned by
``filecheck/transforms/penguin_readiness{,_mhlo}.mlir``.
"""

from __future__ import annotations

import json
import platform
import re
import subprocess
import sys
import warnings
from collections import Counter
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import penguin_opt
from penguin_opt import readiness
from penguin_opt.convert_math import convert_array
from penguin_opt.elements import DTYPES
from penguin_opt.ir_util import op_counts
from penguin_opt.passes.base import RunState
from penguin_opt.pipeline import Pipeline
from penguin_opt.readiness import Finding, literal_convert, literal_fold_differences

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus" / "public"

# A tuple left (returned) and a hazard (a convert whose float path rounds through f32).
REFUSED = """func.func @main(%arg0: tensor<2xf32>) -> tuple<tensor<2xf32>> {
  %0 = stablehlo.tuple %arg0 : tuple<tensor<2xf32>>
  return %0 : tuple<tensor<2xf32>>
}
"""
HAZARD_ONLY = """func.func @main() -> tensor<2xf64> {
  %0 = stablehlo.constant dense<[16777217, 1]> : tensor<2xi64>
  %1 = stablehlo.convert %0 : (tensor<2xi64>) -> tensor<2xf64>
  return %1 : tensor<2xf64>
}
"""
PIPELINE = "stablehlo-canonicalize-for-penguin,stablehlo-canonicalize-conv"


def penguin_opt_cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "penguin_opt.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )


def report(text: str, pipeline: str | None = PIPELINE, name: str = "in.mlir"):
    """(findings, the module after) of ``text`` through ``pipeline``, as the CLI runs it."""
    module = penguin_opt.load(text, name=name)
    p = Pipeline(pipeline) if pipeline else None
    with module.context:
        before = module.clone()
        if p is not None:
            p.run(module, RunState())
        found = readiness.findings(before, module, name, pipeline=p)
        before.erase()
    return found, module


# ------------------------------------------------------------------- exit codes, CLI


def test_error_mode_exits_5_and_still_writes_the_output(tmp_path):
    src, out = tmp_path / "in.mlir", tmp_path / "out.mlir"
    src.write_text(REFUSED)
    proc = penguin_opt_cli(src, "-p", PIPELINE, "--penguin-readiness=error", "-o", out)
    assert proc.returncode == 5, proc.stderr
    assert "stablehlo.tuple" in out.read_text()
    lines = proc.stderr.splitlines()
    assert lines == [
        f"{src}:2:8: error: [tuple] 'stablehlo.tuple' left (used by 'func.return'): the "
        "tensorizer is a flat-value IR with no first-class tuples",
        "penguin readiness: 1 finding: tuple 1",
    ]


def test_warn_mode_exits_0_with_the_same_finding(tmp_path):
    src = tmp_path / "in.mlir"
    src.write_text(REFUSED)
    proc = penguin_opt_cli(src, "-p", PIPELINE, "--penguin-readiness")
    assert proc.returncode == 0, proc.stderr
    assert f"{src}:2:8: warning: [tuple] 'stablehlo.tuple' left" in proc.stderr
    assert "func.func @main" in proc.stdout  # the output is on stdout as always


def test_hazards_alone_never_fail_error_mode(tmp_path):
    src = tmp_path / "in.mlir"
    src.write_text(HAZARD_ONLY)
    proc = penguin_opt_cli(src, "-p", PIPELINE, "--penguin-readiness=error")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert lines[0].startswith(f"{src}:3:8: remark: [hazard: convert-fold] ")
    assert lines[0].endswith(")")
    assert "(as read: 000_25e9a1dd83ab8682.txt replaceConvertsWithConstants:" in lines[0]
    assert lines[1] == (
        "penguin readiness: nothing left that the tensorizer refuses; 1 hazard: convert-fold 1"
    )


# ---------------------------------------------------------- Finding, render, summary


def test_render_to_dict_and_summary():
    f = Finding("tuple", False, "stablehlo.tuple", "a.mlir:2:8", "MSG", readiness.SEEDS["tuple"])
    located = Finding("dynamic-shape", False, "stablehlo.abs", None, "DYN", "S")
    hazard = Finding("convert-fold", True, "mhlo.convert", "a.mlir:3:1", "H", "SEED")
    assert f.render("a.mlir", "warn") == "a.mlir:2:8: warning: [tuple] MSG"
    assert f.render("a.mlir", "error") == "a.mlir:2:8: error: [tuple] MSG"
    assert located.render("<stdin>", "error") == "<stdin>: error: [dynamic-shape] DYN"
    for mode in ("warn", "error"):
        assert hazard.render("a.mlir", mode) == (
            "a.mlir:3:1: remark: [hazard: convert-fold] H (as read: SEED)"
        )
    data = json.loads(json.dumps(f.to_dict()))
    assert (data["kind"], data["hazard"], data["location"]) == ("tuple", False, "a.mlir:2:8")
    assert readiness.summary_lines([]) == [
        "penguin readiness: nothing left that the tensorizer refuses"
    ]
    assert readiness.summary_lines([f, located, f, hazard]) == [
        "penguin readiness: 3 findings: tuple 2, dynamic-shape 1; 1 hazard: convert-fold 1"
    ]
    assert set(readiness.SEEDS) >= {f.kind, located.kind, hazard.kind}
    assert readiness.HAZARDS == {"resize-nearest-grad-mean", "convert-fold"}


def test_nameless_buffer_takes_the_display_name_and_before_may_be_none():
    module = penguin_opt.parse(REFUSED)  # parsed from a string: MLIR's buffer "-"
    with module.context:
        found = readiness.findings(None, module, "<stdin>", pipeline=None)
    assert [(f.kind, f.location, f.function) for f in found] == [("tuple", "<stdin>:2:8", "main")]


def test_functions_nothing_calls_are_not_looked_at():
    """XLA's HLO importer keeps a private copy of each computation a while or conditional
    inlined into its regions, which nothing calls: its ops were findings placed at the
    live op's line, and --penguin-readiness=error failed a program whose live ops were
    all rewritten (outside tester I). A private function a live op calls is looked at."""
    dead = """func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  return %a : tensor<2xf32>
}
func.func private @body(%a: tensor<2xf32>) -> tensor<2xf32> {
  %t = stablehlo.tuple %a : tuple<tensor<2xf32>>
  %g = stablehlo.get_tuple_element %t[0] : (tuple<tensor<2xf32>>) -> tensor<2xf32>
  return %g : tensor<2xf32>
}
"""
    module = penguin_opt.parse(dead, name="d.mlir")
    with module.context:
        assert readiness.findings(module, module, "d.mlir") == []
    called = dead.replace(
        "  return %a", "  %r = func.call @body(%a) : (tensor<2xf32>) -> tensor<2xf32>\n  return %r"
    )
    module = penguin_opt.parse(called, name="c.mlir")
    with module.context:
        found = readiness.findings(module, module, "c.mlir")
    assert [(f.kind, f.function) for f in found] == [("tuple", "body"), ("tuple", "body")]
    assert "func.func private @body" in penguin_opt.api.to_text(module)  # input untouched
    # the passes run on @main whatever its visibility (the first version dropped a
    # private @main: the review); with no entry at all, every function counts
    for only_private in (
        called.replace("@main", "private @main"),
        dead.replace("@main", "private @f"),
    ):
        module = penguin_opt.parse(only_private, name="p.mlir")
        with module.context:
            found = readiness.findings(None, module, "p.mlir")
        assert [f.kind for f in found] == ["tuple", "tuple"], only_private


def test_gate_options_come_from_the_pipelines_conv_pass():
    conv = """func.func @main(%arg0: tensor<1x3x3x1xf32>, %arg1: tensor<3x3x1x1xf32>) -> tensor<1x3x3x1xf32> {
  %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x3x3x1xf32>, tensor<3x3x1x1xf32>) -> tensor<1x3x3x1xf32>
  return %0 : tensor<1x3x3x1xf32>
}
"""
    # canonicalize-small-extents on a pass that does not run (a native pass after it
    # cannot undo it, so: the MHLO twin, which leaves StableHLO alone)
    found, _ = report(conv, "canonicalize-conv{canonicalize-small-extents=true}")
    assert [f.message.split("(")[1].split(")")[0] for f in found] == [
        "stablehlo-canonicalize-conv gate: small-extent-flag-off"
    ]  # the defaults
    found, _ = report(conv, "stablehlo-canonicalize-conv{small-spatial-extent=2}")
    assert found == []  # the pass rewrote it (extent 3 > 2)
    found, _ = report(conv, "stablehlo-canonicalize-conv{min-spatial-extent=4}")
    assert "(stablehlo-canonicalize-conv gate: spatial-extent-1)" in found[0].message


# ------------------------------------------------------------ hazards against numpy

X86 = platform.machine().lower() in ("x86_64", "amd64")


def numpy_literal(values: np.ndarray, dst: str) -> np.ndarray:
    """The seed's paths with numpy's own casts: float results through float32 then
    float64; integer results through int32 (numpy's float -> int32 cast is the C cast,
    cvttsd2si on x86-64: INT32_MIN for NaN and out of range; integers wrap)."""
    if dst.startswith("f") or dst == "bf16":
        with np.errstate(over="ignore"):  # overflow to inf is the cast's rounding
            return values.astype(np.float32).astype(np.float64).astype(DTYPES[dst])
    wide = values.astype(np.float64) if values.dtype.kind == "f" else values
    with warnings.catch_warnings(), np.errstate(invalid="ignore"):
        warnings.simplefilter("ignore")  # numpy warns about the out-of-range casts
        i32 = wide.astype(np.int32)
    if dst == "i1":
        return i32 != 0
    return i32.astype(DTYPES[dst])


def _random(src: str, rng: np.random.Generator, n: int) -> np.ndarray:
    if src in ("i64", "i32"):
        big = rng.integers(-(2**40), 2**40, n) if src == "i64" else rng.integers(-(2**31), 2**31, n)
        small = rng.integers(-300, 300, n)
        return np.where(rng.random(n) < 0.5, big, small).astype(DTYPES[src])
    scale = 10.0 ** rng.integers(-3, 12, n)
    values = rng.standard_normal(n) * scale
    special = np.array([np.nan, np.inf, -np.inf, 2.0**31, -(2.0**31) - 1, 2.0**31 - 1, -0.0])
    values[: special.size] = special
    return values.astype(DTYPES[src])


PAIRS = [
    ("i64", "f64"),
    ("i64", "f32"),
    ("i64", "bf16"),
    ("i32", "f16"),
    ("f64", "f64"),
    ("f64", "f32"),
    ("f64", "bf16"),
    ("f32", "f16"),
    ("i64", "i32"),
    ("i64", "i64"),
    ("i32", "i8"),
    ("i64", "i1"),
    ("f32", "i64"),
    ("f64", "i32"),
    ("f32", "ui8"),
    ("f64", "i1"),
]


@pytest.mark.parametrize(("src", "dst"), PAIRS, ids=[f"{s}-{d}" for s, d in PAIRS])
def test_literal_fold_matches_numpy(src, dst):
    if src.startswith("f") and not dst.startswith(("f", "bf")) and not X86:
        pytest.skip("numpy's float -> int32 cast is x86-64's cvttsd2si only on x86-64")
    rng = np.random.default_rng(hash((src, dst)) % 2**32)
    values = _random(src, rng, 4000)
    literal = literal_convert(values, src, dst)
    expected = numpy_literal(values, dst)
    assert literal.dtype == expected.dtype
    same = (literal == expected) | (
        np.isnan(literal.astype(np.float64)) & np.isnan(expected.astype(np.float64))
    )
    assert same.all(), values[~same][:5]
    if dst.startswith(("f", "bf")):  # and the sign of zeros
        finite = np.isfinite(expected.astype(np.float64))
        assert (np.signbit(literal[finite]) == np.signbit(expected[finite])).all()
    # the differences the hazard counts, against the exact convert
    exact = convert_array(values, src, dst)
    differ = ~(
        (exact == expected)
        | (np.isnan(exact.astype(np.float64)) & np.isnan(expected.astype(np.float64)))
    )
    if dst.startswith(("f", "bf")):
        differ |= (exact == expected) & (np.signbit(exact) != np.signbit(expected))
    got = literal_fold_differences(values, src, dst)
    if not differ.any():
        assert got is None
        return
    count, first, source, exact_first, literal_first = got
    assert count == int(differ.sum())
    assert first == int(np.flatnonzero(differ)[0])
    assert source == values[first] or np.isnan(source)
    assert exact_first == exact[first] or np.isnan(float(exact_first))
    assert literal_first == expected[first] or np.isnan(float(literal_first))


def test_literal_fold_has_the_expected_differences():
    """Pairs that never differ, and pairs whose differences are known by hand."""
    assert literal_fold_differences(np.arange(-5, 5, dtype=np.int64), "i64", "f64") is None
    assert literal_fold_differences(np.array([2**53 + 1], np.int64), "i64", "f32") is None
    got = literal_fold_differences(np.array([1, 2**24 + 1], np.int64), "i64", "f64")
    assert got[:2] == (1, 1)
    assert got[3:] == (2.0**24 + 1, 2.0**24)
    got = literal_fold_differences(np.array([2**32 + 5], np.int64), "i64", "i64")
    assert got[3:] == (2**32 + 5, 5)  # the int path wraps at 32 bits
    got = literal_fold_differences(np.array([0.5, 3.0], np.float32), "f32", "i1")
    assert got[:2] == (1, 0)  # 0.5 != 0 is true; (int) 0.5 == 0 is false
    splat = np.broadcast_to(np.float32(3e9), (10_000,))
    assert literal_fold_differences(splat, "f32", "i64")[0] == 10_000  # one element computed
    # f64 -> bf16: 1 + 2^-8 + 2^-30 rounds up once, but to 1 + 2^-8 in f32 then to even (1)
    x = np.array([1 + 2.0**-8 + 2.0**-30], np.float64)
    assert convert_array(x, "f64", "bf16")[0] == ml_dtypes.bfloat16(1 + 2.0**-7)
    assert literal_convert(x, "f64", "bf16")[0] == ml_dtypes.bfloat16(1.0)


def test_convert_hazard_message_counts_what_numpy_counts():
    values = np.array([3, 16777217, -16777219, 2**40 + 1, 7], dtype=np.int64)
    exact = values.astype(np.float64)
    literal = values.astype(np.float32).astype(np.float64)
    n, first = int((exact != literal).sum()), int(np.flatnonzero(exact != literal)[0])
    text = f"""func.func @main() -> tensor<5xf64> {{
  %0 = stablehlo.constant dense<{values.tolist()}> : tensor<5xi64>
  %1 = stablehlo.convert %0 : (tensor<5xi64>) -> tensor<5xf64>
  return %1 : tensor<5xf64>
}}
"""
    found, _ = report(text, None)
    assert [(f.kind, f.hazard) for f in found] == [("convert-fold", True)]
    assert (
        f"{n} of 5 elements fold differently as read, e.g. [{first}]: {values[first]} -> "
        f"{literal[first]}, where convert gives {exact[first]}"
    ) in found[0].message


@pytest.mark.parametrize(
    ("grad", "result", "factor"),
    [
        ((1, 8, 8, 3), (1, 4, 4, 3), "1x2x2x1"),
        ((2, 6, 9), (2, 3, 3), "1x2x3"),
        ((4, 4), (4, 4), None),
        ((1, 4, 4, 1), (1, 4, 2, 1), "1x1x2x1"),
    ],
)
def test_resize_hazard_names_the_window_volume(grad, result, factor):
    shape = lambda s: "x".join(map(str, s)) + "xf32"  # noqa: E731
    text = f"""func.func @main(%arg0: tensor<{shape(grad)}>) -> tensor<{shape(result)}> {{
  %0 = stablehlo.custom_call @ResizeNearestGrad(%arg0) : (tensor<{shape(grad)}>) -> tensor<{shape(result)}>
  return %0 : tensor<{shape(result)}>
}}
"""
    found, _ = report(text)
    hazards = [f for f in found if f.hazard]
    if factor is None:  # a factor of 1 everywhere: the mean is the sum
        assert hazards == []
        return
    # numpy: the window sum of a nearest upsampling's gradient, against the seed's mean
    scale = np.array(grad) // np.array(result)
    g = np.random.default_rng(0).standard_normal(grad)
    split = g.reshape([d for r, s in zip(result, scale, strict=True) for d in (r, s)])
    window_sum = split.sum(axis=tuple(range(1, 2 * len(grad), 2)))
    volume = int(np.prod(scale))
    np.testing.assert_allclose(window_sum / volume * volume, window_sum)
    assert [f.kind for f in hazards] == ["resize-nearest-grad-mean"]
    assert (
        f"upsampling factor {factor} (window volume {volume}): Neuron lowers it to the "
        f"window mean, the window sum divided by {volume}"
    ) in hazards[0].message


# ------------------------------------------------------------------ a JAX argsort


def test_jax_argsort_hlo_import_leaves_an_iota_through_a_broadcast():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    hlo = jax.jit(jnp.argsort).lower(jnp.zeros((3, 8))).compiler_ir("hlo").as_hlo_text()
    found, _ = report(hlo, "inline,stablehlo-canonicalize-for-penguin", name="argsort.hlo")
    # the finding is at the sort instruction's line of the HLO text
    lines = hlo.split("\n")
    (line,) = [i + 1 for i, text in enumerate(lines) if re.search(r"= \(.*\) sort\(", text)]
    column = len(lines[line - 1]) - len(lines[line - 1].lstrip()) + 1
    assert [(f.kind, f.location) for f in found] == [("iota-sort", f"argsort.hlo:{line}:{column}")]
    assert (
        "'stablehlo.sort' index operand is the positions along sort dimension 1, an iota "
        "through stablehlo.broadcast_in_dim (fuseIotaSort matches only an iota operand)"
    ) in found[0].message
    assert (
        found[0]
        .render("argsort.hlo")
        .startswith(f"argsort.hlo:{line}:{column}: warning: [iota-sort] ")
    )


HLO_WITH_METADATA = """HloModule m

ENTRY main {
  x = f32[1,8,8,1] parameter(0), metadata={op_name="x"}
  w = f32[3,3,1,1] parameter(1), metadata={op_name="w"}
  ROOT c = f32[1,8,8,1] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, metadata={op_name="jit(f)/conv_general_dilated" source_file="/tmp/model.py" source_line=12}
}
"""


def test_hlo_with_metadata_is_located_at_the_instruction_not_the_python_source():
    """XLA's importer names an op after its metadata's op_name, with the Python source
    position inside: findings named model.py (and a batch's line no program), where the
    README promises the HLO text's line (outside tester F)."""
    found, module = report(HLO_WITH_METADATA, "inline", name="m.hlo")
    assert "model.py" in penguin_opt.to_text(module, debug_info=True)  # (the loc has it)
    assert [(f.kind, f.location) for f in found] == [("conv-padding-stride", "m.hlo:6:8")]
    # an op_name on two instructions: the one of the op's opcode (jax's HLO shares an
    # op_name between a sort and its get-tuple-element, tester G)
    twice = HLO_WITH_METADATA.replace('op_name="w"', 'op_name="jit(f)/conv_general_dilated"')
    found, _ = report(twice, "inline", name="m2.hlo")
    assert [f.location for f in found] == ["m2.hlo:6:8"]
    # two of that opcode too: neither, the source position is used
    two_convs = twice.replace(
        "  ROOT c = f32[1,8,8,1] convolution(x, w)",
        "  c0 = f32[1,8,8,1] convolution(x, w), window={size=3x3 pad=1_1x1_1}, "
        'dim_labels=b01f_01io->b01f, metadata={op_name="jit(f)/conv_general_dilated"}\n'
        "  ROOT c = f32[1,8,8,1] convolution(c0, w)",
    )
    found, _ = report(two_convs, "inline", name="m3.hlo")
    assert [f.location for f in found] == [None, "/tmp/model.py:12:0"]  # (None: the file)


# ---------------------------------------------------------------- the shared corpus

# Both dialects' passes on every function (each leaves the other dialect's ops alone, and
# some chunks mix the two).
BOTH = (
    "inline,stablehlo-canonicalize-for-penguin{all-functions=true},stablehlo-canonicalize-conv,"
    "canonicalize-for-penguin{all-functions=true},canonicalize-conv"
)
# What each kind may say after these pipelines: never "run ..." (every rewrite the passes
# can make on every function is made), only why the op stays.
ALLOWED = {
    "resize-nearest-grad": re.compile(r"left \(lowerResizeNearestGrad (skips|refuses)"),
    "broadcast": re.compile(r"left \(replaceBroadcastsWithBroadcastInDim skips"),
    "tuple": re.compile(r"left \((used by|unused;|canonicalizeTupleOp folds only)"),
    "get-dimension-size": re.compile(r"of (dynamic dimension \d+|an unranked operand)"),
    "dynamic-shape": re.compile(r"tensor<(\*|[^>]*\?)"),
    "conv-padding-stride": re.compile(
        r"\((canonicalize-conv|stablehlo-canonicalize-conv) (gate: |explicitlyStride: |"
        r"rewrites only )"
    ),
    "iota-sort": re.compile(r"an iota through "),
    "zero-sized": re.compile(r"^'mhlo\.\S+' has only zero-element results .*the MHLO twin"),
    "convert-fold": re.compile(r"fold differently as read"),
    "resize-nearest-grad-mean": re.compile(r"window volume"),
}
# Kinds whose ops are all refused: every op of them left after the pipeline is reported.
COUNTED = {
    "tuple": ("tuple", "get_tuple_element"),
    "broadcast": ("broadcast",),
    "get-dimension-size": ("get_dimension_size",),
}


@pytest.mark.skipif(not (CORPUS / "manifest.json").exists(), reason=f"no corpus at {CORPUS}")
def test_shared_corpus_reports_only_what_is_left():
    sys.path.insert(0, str(ROOT))
    from penguin_opt.diagnostics_check import expectations
    from tools.corpus import shared

    kinds: Counter = Counter()
    ran = 0
    for case in shared.cases(CORPUS):
        if expectations(case.text):
            continue  # another tool's negative test
        try:
            text, _ = shared.convert_check_ops(case.text)
            module = penguin_opt.load(text, name=case.file)
            with module.context:
                module.verify()
        except Exception:  # chunks MLIR rejects are not programs
            continue
        pipeline = Pipeline(BOTH)
        with module.context:
            before = module.clone()
            pipeline.run(module, RunState())
            found = readiness.findings(before, module, case.file, pipeline=pipeline)
            before.erase()
            counts = op_counts(module)
        ran += 1
        for f in found:
            kinds[f.kind] += 1
            assert f.kind in ALLOWED, (case.id, f.render(case.file))
            assert ALLOWED[f.kind].search(f.message), (case.id, f.render(case.file))
            assert ": run " not in f.message, (case.id, f.render(case.file))
            assert f.hazard == (f.kind in readiness.HAZARDS)
            assert f.location is None or f.location.startswith(case.file)
        for kind, mnemonics in COUNTED.items():
            left = sum(counts.get(f"{p}.{m}", 0) for p in ("mhlo", "stablehlo") for m in mnemonics)
            assert left == sum(f.kind == kind for f in found), (case.id, kind)
    assert ran > 900
    # what the corpus holds (the counts are in docs/seed-notes.md); never an AwsNeuronErf
    # config, a ResizeNearestGrad or a fusable sort left
    assert set(kinds) <= set(ALLOWED) - {"erf-backend-config"}
    assert all(kinds[k] for k in ("dynamic-shape", "conv-padding-stride", "zero-sized"))


SPLIT_CHUNKS = """func.func @tuple_left(%a: tensor<2xf32>) -> tuple<tensor<2xf32>> {
  %t = stablehlo.tuple %a : tuple<tensor<2xf32>>
  return %t : tuple<tensor<2xf32>>
}

// -----

func.func @nothing_left(%a: tensor<2xf32>) -> tensor<2xf32> {
  return %a : tensor<2xf32>
}
"""


def test_split_input_file_reports_each_chunk_and_exits_5_in_error_mode(tmp_path):
    """Findings of --split-input-file chunks: printed per chunk, checked as diagnostics by
    --verify-diagnostics, and exit 5 in error mode."""
    src = tmp_path / "chunks.mlir"
    src.write_text(SPLIT_CHUNKS)

    def run(*flags):
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "penguin_opt",
                str(src),
                "-p",
                "stablehlo-canonicalize-for-penguin",
                "--split-input-file",
                *flags,
            ],
            capture_output=True,
            text=True,
        )

    warn = run("--penguin-readiness")
    assert warn.returncode == 0, warn.stderr
    located = [ln for ln in warn.stderr.splitlines() if ": warning: [tuple]" in ln]
    assert len(located) == 1
    assert located[0].startswith(f"{src}:2:")
    summaries = [ln for ln in warn.stderr.splitlines() if ln.startswith("penguin readiness:")]
    assert len(summaries) == 2  # one per chunk
    error = run("--penguin-readiness=error")
    assert error.returncode == 5, error.stderr
    assert ": error: [tuple]" in error.stderr
    message = located[0].split(": warning: ", 1)[1]
    expected = SPLIT_CHUNKS.replace(
        "  %t = stablehlo.tuple",
        f"  // expected-warning @+1 {{{{{message}}}}}\n  %t = stablehlo.tuple",
    )
    src.write_text(expected)
    verified = run("--penguin-readiness", "--verify-diagnostics")
    assert verified.returncode == 0, verified.stderr
    src.write_text(SPLIT_CHUNKS)
    unexpected = run("--penguin-readiness", "--verify-diagnostics")
    assert unexpected.returncode == 1  # the finding was not expected


def test_resize_reasons_are_the_rewriters_own():
    """Readiness restated the rewriter's legality and went stale when an empty batch
    began to lower (a review): the two share one function now. An empty batch is
    lowered (and has no mean hazard: no element), factor 0 is skipped, 8 -> 3 refused."""

    def resize(grad: str, result: str) -> str:
        return (
            f"func.func @main(%g: tensor<{grad}xf32>) -> tensor<{result}xf32> {{\n"
            f"  %r = stablehlo.custom_call @ResizeNearestGrad(%g) : (tensor<{grad}xf32>) -> "
            f"tensor<{result}xf32>\n  return %r : tensor<{result}xf32>\n}}\n"
        )

    found, _ = report(resize("0x8", "0x4"), "cse")
    assert [f.message.split("(")[1].split(":")[0] for f in found if not f.hazard] == [
        "lowerResizeNearestGrad lowers it"
    ]
    assert not [f for f in found if f.hazard]
    found, _ = report(resize("0x8", "1x4"), "stablehlo-canonicalize-for-penguin")
    (left,) = found
    assert "lowerResizeNearestGrad skips a factor of 0" in left.message, left.message
    found, _ = report(resize("1x8", "1x3"), "cse")
    assert "lowerResizeNearestGrad refuses it: output dim 8 is not an integral multiple" in (
        found[0].message
    )


def test_mlir_ops_map_to_the_hlo_opcodes_they_are_imported_from():
    """(A review: conditionals, clz, popcnt and opt-barrier fell back to the source.)"""
    from penguin_opt.ir_util import hlo_opcode
    from penguin_opt.passes.base import op_named_in

    assert [
        hlo_opcode(n)
        for n in (
            "stablehlo.sort",
            "stablehlo.dot_general",
            "mhlo.broadcast_in_dim",
            "stablehlo.custom_call",
            "stablehlo.get_tuple_element",
            "stablehlo.case",
            "mhlo.if",
            "stablehlo.count_leading_zeros",
            "stablehlo.population_count",
            "stablehlo.optimization_barrier",
        )
    ] == [
        "sort", "dot", "broadcast", "custom-call", "get-tuple-element", "conditional",
        "conditional", "clz", "popcnt", "opt-barrier",
    ]  # fmt: skip
    assert op_named_in("'stablehlo.sort' op requires one region") == "stablehlo.sort"
    assert op_named_in("expected 2 operands") is None


def test_zero_sized_mhlo_op_in_a_stablehlo_program_names_why_it_stays():
    """XLA's importer leaves some HLO opcodes (copy) as MHLO ops in a StableHLO program:
    the StableHLO pass ran and left a zero-sized one, and the finding says why (not that
    the program is MHLO)."""
    text = """func.func @main(%p: tensor<0x4xf32>) -> (tensor<0x4xf32>, tensor<0x4xf32>) {
  %c = mhlo.copy %p : tensor<0x4xf32>
  %n = stablehlo.negate %p : tensor<0x4xf32>
  return %c, %n : tensor<0x4xf32>, tensor<0x4xf32>
}
"""
    found, _ = report(text)
    zero = [f for f in found if f.kind == "zero-sized"]
    assert len(zero) == 1, found  # the negate is replaced by an empty constant
    assert zero[0].message.startswith("'mhlo.copy' has only zero-element results")
    assert "an MHLO op: stablehlo-canonicalize-for-penguin's removeDeadZeroSizedTensorOps" in (
        zero[0].message
    )
    found, _ = report(text.replace("stablehlo.negate", "mhlo.negate"), "canonicalize-for-penguin")
    messages = [f.message for f in found if f.kind == "zero-sized"]
    assert len(messages) == 2, messages  # the copy and the negate: an MHLO program
    assert all("the MHLO twin has no removeDeadZeroSizedTensorOps" in m for m in messages)
