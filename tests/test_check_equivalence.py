"""The equivalence checker as a user sees it: penguin-check and --check-equivalence."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from support.programs import MALFORMED_DYNAMIC_CONV, RESOURCE

from penguin_opt.equivalence import NotCheckable, check, compare_arrays

ROOT = Path(__file__).resolve().parents[1]

ADD = """func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
ADD_SWAPPED = ADD.replace("%a, %b", "%b, %a")
MUL = ADD.replace("stablehlo.add", "stablehlo.multiply")


def run(module: str, *args):
    return subprocess.run(
        [sys.executable, "-m", module, *map(str, args)], capture_output=True, text=True, cwd=ROOT
    )


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def penguin_check(tmp_path, before: str, after: str, *args):
    """``penguin-check`` on the two program texts (written to a.mlir and b.mlir)."""
    a, b = write(tmp_path, "a.mlir", before), write(tmp_path, "b.mlir", after)
    return run("penguin_opt.check_cli", a, b, *args)


def test_penguin_check_reads_unregistered_ops_when_asked(tmp_path):
    """penguin-check's error told the user to pass -allow-unregistered-dialect, which it
    did not take (the review): with it, the program is read and is not checkable."""
    unregistered = ADD.replace(
        "stablehlo.add %a, %b : tensor<4xf32>",
        '"foo.add"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>',
    )
    assert '"foo.add"' in unregistered, unregistered
    refused = penguin_check(tmp_path, unregistered, ADD)
    assert refused.returncode == 1, refused.stderr
    proc = penguin_check(tmp_path, unregistered, ADD, "--allow-unregistered-dialect")
    assert proc.returncode == 4, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == (
        "equivalence: not checkable: cannot execute 'foo.add': an op of an unregistered dialect"
    )


def test_penguin_check_equal_programs(tmp_path):
    proc = penguin_check(tmp_path, ADD, ADD_SWAPPED)
    assert proc.returncode == 0, proc.stderr
    assert "all outputs match" in proc.stderr
    assert "float32" in proc.stderr
    assert "ok" in proc.stderr


def test_penguin_check_mismatch_exit_3(tmp_path):
    proc = penguin_check(tmp_path, ADD, MUL)
    assert proc.returncode == 3, proc.stderr
    assert "MISMATCH" in proc.stderr


REDUCE_SCATTER = """func.func @main(%data: tensor<4x16xf32>) -> tensor<4x4xf32> {
  %0 = "stablehlo.reduce_scatter"(%data) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %1 = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %1 : tensor<f32>
  }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, scatter_dimension = 1 : i64,
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>,
      use_global_device_ids} : (tensor<4x16xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
"""


@pytest.mark.parametrize("log_level", [None, "1"])
def test_an_oracle_abort_is_one_line_that_carries_its_llvm_error(tmp_path, monkeypatch, log_level):
    """The reference interpreter aborts on a reduce_scatter outside ``run_parallel``
    (LLVM ERROR, which native code writes to stderr itself) and XLA refuses it, logging
    an error with a stack trace: not checkable, exit 4, and the abort's own message
    inside the one stderr line. TF_CPP_MIN_LOG_LEVEL=1 is what a process that imported
    jax (a notebook, this test process) hands on: no request for XLA's logs."""
    if log_level is None:
        monkeypatch.delenv("TF_CPP_MIN_LOG_LEVEL", raising=False)
    else:
        monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", log_level)
    proc = penguin_check(tmp_path, REDUCE_SCATTER, REDUCE_SCATTER)
    assert proc.returncode == 4, proc.stderr
    # progress lines ("equivalence: checking with XLA: trial 1/2 (before), 2 s") aside
    lines = [ln for ln in proc.stderr.splitlines() if not re.fullmatch(r".*, \d+ s", ln)]
    assert len(lines) == 1, lines
    assert lines[0].startswith("equivalence: not checkable: "), lines[0]
    assert "aborted the process (LLVM ERROR: reduce_scatter" in lines[0], lines[0]


@pytest.mark.parametrize("oracle", ["interpreter", "xla", "both"])
def test_oracles_detect_a_one_ulp_change(oracle):
    after = ADD.replace(
        "return %0",
        "%c = stablehlo.constant dense<1.0e-7> : tensor<4xf32>\n"
        "  %1 = stablehlo.add %0, %c : tensor<4xf32>\n  return %1",
    )
    report = check(ADD, after, oracle=oracle, rtol=0.0, atol=0.0)
    assert not report.ok
    assert set(report.oracle.split("+")) == (
        {"interpreter", "xla"} if oracle == "both" else {oracle}
    )


def test_not_checkable_names_the_op(tmp_path):
    unknown = ADD.replace(
        "stablehlo.add %a, %b : tensor<4xf32>",
        "stablehlo.custom_call @MysteryOp(%a, %b) : "
        "(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>",
    )
    proc = penguin_check(tmp_path, unknown, unknown, "--oracle", "interpreter")
    assert proc.returncode == 4, proc.stderr
    assert "@MysteryOp" in proc.stderr
    with pytest.raises(NotCheckable):
        check(unknown, unknown, oracle="auto")


# an optimized HLO dump: XLA's fused computation and copy, imported as mhlo.fusion/copy
FUSED_HLO = """HloModule fused

fused_computation {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  m = f32[4] multiply(p0, p1)
  ROOT a = f32[4] add(m, p0)
}

ENTRY e {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  f = f32[4] fusion(x, y), kind=kLoop, calls=fused_computation
  ROOT c = f32[4] copy(f)
}
"""


@pytest.mark.parametrize("oracle", ["interpreter", "xla"])
def test_xla_fusions_and_copies_are_checked_as_what_they_compute(oracle):
    import penguin_opt as api

    before = api.to_text(api.load(FUSED_HLO))
    assert '"mhlo.fusion"' in before
    assert "mhlo.copy" in before
    assert check(before, before, oracle=oracle).ok
    # a fusion body computing something else is a mismatch: the body is what is run
    after = before.replace("stablehlo.add", "stablehlo.subtract")
    assert after != before
    assert not check(before, after, oracle=oracle).ok


BITCAST_HLO = """HloModule bitcasts

ENTRY e {
  x = f32[2,3]{0,1} parameter(0)
  flat = f32[6]{0} bitcast(x)
  ROOT y = f32[3,2]{0,1} bitcast(flat)
}
"""


def test_xla_bitcasts_read_memory_order():
    """A bitcast reads the operand's elements in its layout's memory order: column-major
    x (layout {0,1}) flattens to x.T.ravel(); a column-major f32[3,2] holds y[i, j] at
    i + 3 j of that."""
    import penguin_opt as api
    from penguin_opt.equivalence import interpret, prepare_for_interpreter

    program = prepare_for_interpreter(api.to_text(api.load(BITCAST_HLO)))
    assert "mhlo.bitcast" not in program
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (y,) = interpret(program, [x])
    flat = x.T.ravel()  # memory order of the column-major 2x3
    np.testing.assert_array_equal(y, flat.reshape(2, 3).T)  # column-major 3x2 of it
    np.testing.assert_array_equal(y, [[0, 4], [3, 2], [1, 5]])


def _lowered_linear_solve(shift: float) -> str:
    """A jax program calling LAPACK through custom calls (lowered for CPU: getrf, trsm),
    with a broadcast constant for the passes to fold."""
    import jax
    import jax.numpy as jnp

    def f(a, b):
        m = a @ a.T + 4.0 * jnp.eye(4, dtype=a.dtype)
        return jnp.linalg.solve(m, b) + shift * jnp.ones((4, 2), a.dtype)

    x = np.ones((4, 4), np.float32)
    return jax.jit(f).lower(x, np.ones((4, 2), np.float32)).as_text()


def test_jax_lapack_custom_calls_are_checked_on_xla():
    """XLA CPU runs jax's LAPACK custom calls (which the interpreter cannot): the check
    falls back to it, and it really computes them (a changed constant is a mismatch)."""
    import penguin_opt

    before = _lowered_linear_solve(1.0)
    assert "custom_call @lapack_" in before
    module = penguin_opt.load(before)
    penguin_opt.run(module, "stablehlo-canonicalize-for-penguin,stablehlo-canonicalize-conv")
    after = penguin_opt.to_text(module)
    assert after != before
    report = check(before, after, oracle="auto", trials=2)
    assert report.ok, report.table()
    assert report.oracle == "xla"
    assert "cannot execute 'stablehlo.custom_call @lapack_" in report.note
    assert not check(before, _lowered_linear_solve(1.5), oracle="xla").ok
    with pytest.raises(NotCheckable, match=r"cannot execute 'stablehlo.custom_call @lapack_"):
        check(before, after, oracle="interpreter")


@pytest.mark.parametrize("oracle", ["xla", "auto"])
def test_jax_host_callbacks_are_not_checkable(oracle):
    """A host callback's config indexes Python functions of the process that lowered the
    program: no oracle can run it (XLA would call into a table it does not have)."""
    import jax

    def f(x):
        y = jax.pure_callback(np.sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
        return y * 2.0

    text = jax.jit(f).lower(np.ones((4,), np.float32)).as_text()
    assert "python_cpu_callback" in text
    with pytest.raises(NotCheckable) as err:
        check(text, text, oracle=oracle)
    assert str(err.value).endswith(
        "'stablehlo.custom_call @xla_ffi_python_cpu_callback' calls back into the Python "
        "process that lowered the program (jax.pure_callback, io_callback, jax.debug.print): "
        "no oracle can run it"
    )
    assert str(err.value).count("calls back") == 1  # auto: one reason, once


# Single-device XLA cannot compile a manual SPMD region: it fails with a RET_CHECK that
# XLA also logs as an ERROR with a stack trace.
MANUAL_SPMD = """func.func @main(%arg0: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[2,1]0,1}"} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {mhlo.sharding = "{manual}"} : (tensor<2x4xf32>) -> tensor<1x4xf32>
  %2 = stablehlo.custom_call @Sharding(%1) {mhlo.sharding = "{manual}"} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %3 = stablehlo.custom_call @SPMDShardToFullShape(%2) {mhlo.sharding = "{devices=[2,1]0,1}"} : (tensor<1x4xf32>) -> tensor<2x4xf32>
  return %3 : tensor<2x4xf32>
}
"""


def test_an_xla_compile_error_is_one_line_without_xla_logs(tmp_path, monkeypatch):
    monkeypatch.delenv("TF_CPP_MIN_LOG_LEVEL", raising=False)
    a = write(tmp_path, "a.mlir", MANUAL_SPMD)
    proc = run("penguin_opt.check_cli", a, a, "--oracle", "xla")
    assert proc.returncode == 4, proc.stderr
    lines = proc.stderr.splitlines()
    assert lines[-1].startswith("equivalence: not checkable: xla: "), proc.stderr
    # nothing but that line and progress lines (a slow compile): no XLA log, no stack trace
    assert all(line.startswith("equivalence: ") for line in lines), proc.stderr
    assert "stack trace" not in proc.stderr


def test_npz_inputs(tmp_path):
    npz = tmp_path / "in.npz"
    np.savez(npz, arg0=np.ones((3, 4), np.float32), arg1=np.full((3, 4), 2, np.float32))
    proc = penguin_check(tmp_path, ADD, ADD_SWAPPED, "--inputs", npz)
    assert proc.returncode == 0, proc.stderr
    assert "trials: 3" in proc.stderr
    bad = tmp_path / "bad.npz"
    np.savez(bad, arg0=np.ones((5,), np.float32), arg1=np.ones((5,), np.float32))
    proc = run("penguin_opt.check_cli", tmp_path / "a.mlir", tmp_path / "b.mlir", "--inputs", bad)
    assert proc.returncode == 4, proc.stderr
    assert "expects f32[4]" in proc.stderr, proc.stderr
    assert f"not checkable: {bad}: input 0 is float32[5]" in proc.stderr, proc.stderr


def test_penguin_form_and_known_custom_calls_are_checkable():
    before = """func.func @main(%x: tensor<6xf32>, %g: tensor<4x6xf32>) -> (tensor<6xi32>, tensor<6xf32>, tensor<2x3xf32>) {
  %i = stablehlo.iota dim = 0 : tensor<6xi32>
  %s:2 = "stablehlo.sort"(%x, %i) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %p = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }) : (tensor<6xf32>, tensor<6xi32>) -> (tensor<6xf32>, tensor<6xi32>)
  %e = stablehlo.custom_call @AwsNeuronErf(%x) {backend_config = "{x}"} : (tensor<6xf32>) -> tensor<6xf32>
  %r = stablehlo.custom_call @ResizeNearestGrad(%g) : (tensor<4x6xf32>) -> tensor<2x3xf32>
  return %s#1, %e, %r : tensor<6xi32>, tensor<6xf32>, tensor<2x3xf32>
}
"""
    import penguin_opt

    module = penguin_opt.load(before)
    penguin_opt.run(module, "stablehlo-canonicalize-for-penguin")
    after = penguin_opt.to_text(module)
    assert '"stablehlo.sort"(%arg0)' in after
    report = check(before, after, trials=2, rtol=1e-6, atol=0.0)
    assert report.ok, report.table()
    # A wrong meaning for ResizeNearestGrad is caught: mean lowering vs sum semantics.
    assert not check(before, after, rtol=1e-6, atol=0.0, resize_mode="sum").ok


def test_xla_s_custom_call_encoding_of_chlo_erf_is_erf():
    encoded = """func.func @main(%x: tensor<6xf32>) -> tensor<6xf32> {
  %0 = stablehlo.custom_call @mhlo.erf(%x) {mhlo.attributes = {}, mhlo.version = 1 : i64} : (tensor<6xf32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}
"""
    erf = """func.func @main(%x: tensor<6xf32>) -> tensor<6xf32> {
  %0 = chlo.erf %x : tensor<6xf32> -> tensor<6xf32>
  return %0 : tensor<6xf32>
}
"""
    for oracle in ("interpreter", "xla"):
        assert check(encoded, erf, oracle=oracle, rtol=0.0, atol=0.0).ok, oracle
        assert not check(encoded, erf.replace("chlo.erf", "chlo.erfc"), oracle=oracle).ok


def test_interpreter_abort_falls_back_to_xla():
    # HWNC-style dimension numbers make the reference interpreter abort (LLVM ERROR).
    conv = """func.func @main(%x: tensor<5x5x1x2xf32>, %w: tensor<2x3x3x2xf32>) -> tensor<3x3x1x2xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [0, 1, b, f]x[i, 0, 1, o]->[0, 1, b, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<5x5x1x2xf32>, tensor<2x3x3x2xf32>) -> tensor<3x3x1x2xf32>
  return %0 : tensor<3x3x1x2xf32>
}
"""
    try:
        report = check(conv, conv, oracle="interpreter")
    except NotCheckable as err:  # this jaxlib's interpreter aborts on the layout
        assert "aborted" in str(err)  # noqa: PT017 - the fallback below is the test
        report = check(conv, conv, oracle="auto")
        assert report.oracle == "xla"
        assert "XLA decided" in report.note
    assert report.ok


def test_penguin_opt_check_equivalence_flag(tmp_path):
    out = tmp_path / "out.mlir"
    proc = run(
        "penguin_opt.cli",
        ROOT / "examples" / "argsort_model.mlir",
        "-p",
        "inline,stablehlo-canonicalize-for-penguin",
        "--check-equivalence",
        "-o",
        out,
    )
    assert proc.returncode == 0, proc.stderr
    assert "all outputs match" in proc.stderr
    assert out.exists()


@pytest.mark.parametrize("oracle", ["interpreter", "xla"])
def test_64_bit_values_are_not_narrowed(oracle):
    """A change only in bits above 32 (i64) or below f32's precision (f64) is a mismatch
    on both oracles (the XLA child runs with jax_enable_x64)."""
    before = """func.func @main(%a: tensor<4xi64>, %b: tensor<4xf64>) -> (tensor<4xi64>, tensor<4xf64>) {
  return %a, %b : tensor<4xi64>, tensor<4xf64>
}
"""
    after = """func.func @main(%a: tensor<4xi64>, %b: tensor<4xf64>) -> (tensor<4xi64>, tensor<4xf64>) {
  %c = stablehlo.constant dense<4294967296> : tensor<4xi64>
  %0 = stablehlo.add %a, %c : tensor<4xi64>
  %d = stablehlo.constant dense<1.0e-12> : tensor<4xf64>
  %1 = stablehlo.add %b, %d : tensor<4xf64>
  return %0, %1 : tensor<4xi64>, tensor<4xf64>
}
"""
    report = check(before, after, oracle=oracle, rtol=0.0, atol=0.0)
    assert [o.ok for o in report.outputs] == [False, False]
    assert [o.dtype for o in report.outputs] == ["int64", "float64"]
    assert report.outputs[0].max_abs == 2.0**32


def test_complex_results_with_result_attributes():
    """Complex results are split into (real, imag) for the interpreter; the result
    attributes must follow (a stale res_attrs made the printer crash the child)."""
    text = """func.func @main(%a: tensor<2xcomplex<f32>>) -> (tensor<2xcomplex<f32>> {jax.result_info = ""}, tensor<2xf32> {jax.result_info = "x"}) {
  %0 = stablehlo.add %a, %a : tensor<2xcomplex<f32>>
  %1 = stablehlo.real %a : (tensor<2xcomplex<f32>>) -> tensor<2xf32>
  return %0, %1 : tensor<2xcomplex<f32>>, tensor<2xf32>
}
"""
    report = check(text, text, oracle="interpreter")
    assert report.ok
    assert report.oracle == "interpreter"
    assert [o.dtype for o in report.outputs] == ["complex64", "float32"]
    changed = text.replace("stablehlo.add %a, %a", "stablehlo.multiply %a, %a")
    assert not check(text, changed, oracle="interpreter").outputs[0].ok


def test_entry_is_the_only_public_function():
    text = ADD.replace("@main", "@f") + "func.func private @g() {\n  return\n}\n"
    report = check(text, text.replace("%a, %b", "%b, %a"), oracle="both")
    assert report.ok
    assert len(report.outputs) == 2


def test_conversion_abort_is_not_checkable(tmp_path):
    """hlo-legalize-to-stablehlo aborts the process (LLVM ERROR) on this dynamic_conv with
    rank-5 operands and two spatial dimensions (mlir-hlo's canonicalize/convolution.mlir);
    the checker's conversion runs in a child. (jaxlib 0.12 rejects the op with a verifier
    error instead of aborting: not checkable as well.)"""
    conv = MALFORMED_DYNAMIC_CONV
    with pytest.raises(NotCheckable, match=r"aborted the process|cannot convert the program"):
        check(conv, conv, oracle="auto")


def test_complex_outputs_keep_real_parts_next_to_infinite_imaginary_parts():
    """(re, im) pairs from the interpreter are joined without arithmetic (re + 1j*im
    turns the real part next to an infinite imaginary part into NaN and hides it)."""
    text = """func.func @main(%a: tensor<2xf32>) -> tensor<2xcomplex<f32>> {
  %inf = stablehlo.constant dense<0x7F800000> : tensor<2xf32>
  %0 = stablehlo.complex %a, %inf : tensor<2xcomplex<f32>>
  return %0 : tensor<2xcomplex<f32>>
}
"""
    changed = text.replace("stablehlo.complex %a, %inf", "stablehlo.complex %inf, %inf")
    report = check(text, changed, oracle="interpreter")
    assert not report.ok


def test_bounded_dynamic_results_are_not_compared_on_xla():
    """XLA pads a bounded dynamic result (set_dimension_size) with garbage; the
    interpreter returns the real shape."""
    text = """func.func @main(%a: tensor<7x1xi64>) -> tensor<?x1xi64, #stablehlo.bounds<7, ?>> {
  %size = stablehlo.constant dense<5> : tensor<i32>
  %1 = stablehlo.set_dimension_size %a, %size, dim = 0 : (tensor<7x1xi64>, tensor<i32>) -> tensor<?x1xi64, #stablehlo.bounds<7, ?>>
  return %1 : tensor<?x1xi64, #stablehlo.bounds<7, ?>>
}
"""
    with pytest.raises(NotCheckable, match="dynamic result"):
        check(text, text, oracle="xla")


@pytest.mark.parametrize("oracle", ["interpreter", "xla", "auto"])
def test_a_token_result_is_not_checkable_and_its_mhlo_form_is_no_mismatch(oracle):
    """!mhlo.token is !stablehlo.token: a program returning one, before and after
    stablehlo-legalize-to-hlo, is not checkable (no oracle returns a token's value), never
    a mismatch of the result types."""
    before = """func.func @main(%a: tensor<2xf32>) -> (!stablehlo.token, tensor<2xf32>) {
  %0 = stablehlo.create_token : !stablehlo.token
  return %0, %a : !stablehlo.token, tensor<2xf32>
}
"""
    after = before.replace("stablehlo", "mhlo")
    with pytest.raises(NotCheckable, match=r"result 0 of @main is a token \(!stablehlo.token\)"):
        check(before, after, oracle=oracle)


def test_tolerance_uses_the_coarsest_reduction_operand_type(tmp_path):
    """The interpreter sums a bf16 x bf16 -> f32 convolution in bf16, so the polyphase
    rewrite of canonicalize-conv moves the f32 result by bf16 rounding (0.0098 here, on
    XLA it is bit-identical): the derived tolerance takes eps from the coarsest float type
    a reduction reads (found by the random-program tests)."""
    src = write(
        tmp_path,
        "c.mlir",
        """func.func @main(%x: tensor<2x4x2x7xbf16>, %w: tensor<2x2x1x3xbf16>) -> tensor<2x1x3x2xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 1, f, 0]x[o, i, 1, 0]->[b, 1, 0, f], window = {stride = [4, 4], lhs_dilate = [2, 1], reverse = [true, true]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x4x2x7xbf16>, tensor<2x2x1x3xbf16>) -> tensor<2x1x3x2xf32>
  return %0 : tensor<2x1x3x2xf32>
}
""",
    )
    proc = run(
        "penguin_opt.cli",
        src,
        "-p",
        "stablehlo-canonicalize-conv",
        "--check-equivalence",
        "--seed",
        "7",
        "--oracle",
        "interpreter",
    )
    assert proc.returncode == 0, proc.stderr
    assert "explicitlyStride" not in proc.stderr
    assert "ok" in proc.stderr


def test_xla_child_logs_are_quiet_and_the_environment_is_untouched(tmp_path, monkeypatch):
    import os

    monkeypatch.delenv("TF_CPP_MIN_LOG_LEVEL", raising=False)
    a = write(tmp_path, "a.mlir", ADD)
    proc = subprocess.run(
        [sys.executable, "-m", "penguin_opt.check_cli", a, a, "--oracle", "xla"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert "PjRt" not in proc.stderr
    assert "pjrt_client" not in proc.stderr
    from penguin_opt import isolated

    isolated.kill("xla")  # a fresh child, spawned by this check
    assert check(ADD, ADD, oracle="xla").ok
    assert "TF_CPP_MIN_LOG_LEVEL" not in os.environ
    isolated.kill("xla")
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "1")  # jax's own, not the user's: quiet too
    assert check(ADD, ADD, oracle="xla").ok
    assert os.environ["TF_CPP_MIN_LOG_LEVEL"] == "1"


# ---------------------------------------------------------------------------- progress


def check_args(*argv):
    """penguin-check's check options, parsed."""
    import argparse

    from penguin_opt.cli_common import add_check_options

    parser = argparse.ArgumentParser()
    add_check_options(parser)
    return parser.parse_args(list(argv))


@pytest.fixture
def slow_interpreter(monkeypatch):
    """Every interpreter run takes 0.4 s longer; progress is reported after 0.1 s."""
    import time

    from penguin_opt import equivalence

    real = equivalence.interpret

    def slow(text, inputs):
        time.sleep(0.4)
        return real(text, inputs)

    monkeypatch.setattr(equivalence, "interpret", slow)
    monkeypatch.setattr(equivalence, "PROGRESS_AFTER", 0.1)
    monkeypatch.setattr(equivalence, "PROGRESS_EVERY", 0.3)


def progress_threads():
    import threading

    return [t for t in threading.enumerate() if t.name == "penguin-opt-progress"]


def test_progress_of_a_slow_check_names_the_oracle_and_trial(slow_interpreter):
    import re
    import time

    lines: list[str] = []
    report = check(ADD, ADD_SWAPPED, trials=2, oracle="interpreter", progress=lines.append)
    assert report.ok
    assert lines, "no progress for a check of more than PROGRESS_AFTER seconds"
    assert all(re.fullmatch(r"[^\n]+, \d+ s", line) for line in lines), lines
    assert any(
        re.fullmatch(
            r"checking with the interpreter: trial [12]/2 \((before|after)\), "
            r"\d+ s",
            line,
        )
        for line in lines
    ), lines
    seen = len(lines)
    time.sleep(0.5)  # more than PROGRESS_EVERY: a ticker left running would add a line
    assert len(lines) == seen
    assert not progress_threads()


def test_no_progress_for_a_fast_check(monkeypatch):
    from penguin_opt import equivalence

    monkeypatch.setattr(equivalence, "PROGRESS_AFTER", 30.0)  # far above this check's time
    lines: list[str] = []
    assert check(ADD, ADD_SWAPPED, progress=lines.append).ok
    assert lines == []
    assert not progress_threads()


def test_penguin_check_prints_progress_unless_turned_off(slow_interpreter, capsys):
    from penguin_opt.check_cli import run_check

    args = check_args("--oracle", "interpreter", "--trials", "2")
    assert run_check(ADD, ADD_SWAPPED, args, exact=False, resize_mode="mean") == 0
    err = capsys.readouterr().err
    assert "equivalence: checking with the interpreter: trial" in err or (
        "equivalence: converting the programs for the interpreter" in err
    ), err
    assert run_check(ADD, ADD_SWAPPED, args, exact=False, resize_mode="mean", progress=False) == 0
    err = capsys.readouterr().err
    assert "all outputs match" in err
    assert " s\n" not in err.split("oracle:")[0], err  # no progress line before the table
    assert "checking with" not in err, err
    assert "converting" not in err, err


def test_ticker_heartbeat_stops_with_the_job():
    import time

    from penguin_opt.equivalence import ProgressTicker

    lines: list[str] = []
    with ProgressTicker(lines.append, delay=0.05, every=0.1, min_gap=0.0) as tick:
        tick.status("exporting")
        time.sleep(0.45)
    seen = len(lines)
    assert seen >= 3, lines  # the first line, then heartbeats while nothing changes
    assert set(lines) == {"exporting, 0 s"}
    time.sleep(0.3)
    assert len(lines) == seen
    assert not progress_threads()

    def broken(line):
        raise BrokenPipeError  # stderr went away: the job goes on, quietly

    with ProgressTicker(broken, delay=0.0, every=0.05) as tick:
        tick.status("checking")
        time.sleep(0.1)
    assert not progress_threads()


# ---------------------------------------------------------------------------- auto


BIG_DOT = """func.func @main(%a: tensor<200x300xf32>, %b: tensor<300x200xf32>) -> tensor<200x200xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<200x300xf32>, tensor<300x200xf32>) -> tensor<200x200xf32>
  return %0 : tensor<200x200xf32>
}
"""


def test_auto_uses_the_interpreter_for_a_small_program_and_xla_for_a_large_one():
    from penguin_opt.equivalence import AUTO_XLA_WORK, program_profile

    assert program_profile(ADD).work == 4
    assert program_profile(BIG_DOT).work == 200 * 200 * 300  # multiply-adds
    assert program_profile(BIG_DOT).work > AUTO_XLA_WORK  # ~6 s per interpreter run
    small = check(ADD, ADD_SWAPPED)
    assert (small.oracle, small.note) == ("interpreter", "")
    large = check(BIG_DOT, BIG_DOT, trials=2)
    assert large.ok
    assert large.oracle == "xla"
    assert "element operations" in large.note


def test_the_auto_threshold_is_the_documented_one():
    import argparse

    from penguin_opt.cli_common import add_check_options
    from penguin_opt.equivalence import AUTO_XLA_WORK

    parser = argparse.ArgumentParser()
    add_check_options(parser)
    assert f"{AUTO_XLA_WORK:,} element operations" in " ".join(parser.format_help().split())
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert f"Up to {AUTO_XLA_WORK:,} (of the larger program) the interpreter" in readme


def test_auto_has_the_interpreter_decide_a_difference_xla_finds(monkeypatch):
    """XLA may compute a program and its folded twin differently: a difference it finds
    is checked again on the interpreter, whose verdict is reported."""
    from penguin_opt import equivalence

    monkeypatch.setattr(equivalence, "AUTO_XLA_WORK", 0)  # every program is "large"
    real, calls = equivalence.run_xla, []

    def xla_off_by_one_on_the_after_side(text, inputs):
        calls.append(text)
        outs = real(text, inputs)
        return [o + 1 for o in outs] if len(calls) % 2 == 0 else outs

    monkeypatch.setattr(equivalence, "run_xla", xla_off_by_one_on_the_after_side)
    report = check(ADD, ADD_SWAPPED, rtol=0.0, atol=0.0)
    assert report.ok
    assert report.oracle == "interpreter"
    assert "found a difference" in report.note
    assert calls
    monkeypatch.setattr(equivalence, "run_xla", real)
    report = check(ADD, MUL)  # a real difference: XLA and then the interpreter find it
    assert not report.ok
    assert report.oracle == "interpreter"


def test_auto_on_xla_compares_bit_exact_rewrites_bit_for_bit(monkeypatch, capsys):
    """--check-equivalence after folds only: a one-ulp change is a mismatch on XLA too
    (the derived tolerance would let it pass)."""
    from penguin_opt import equivalence
    from penguin_opt.check_cli import run_check

    monkeypatch.setattr(equivalence, "AUTO_XLA_WORK", 0)
    ulp = ADD.replace(
        "return %0",
        "%c = stablehlo.constant dense<1.0e-7> : tensor<4xf32>\n"
        "  %1 = stablehlo.add %0, %c : tensor<4xf32>\n  return %1",
    )
    assert run_check(ADD, ulp, check_args(), exact=False, resize_mode="mean") == 0
    assert "oracle: xla" in capsys.readouterr().err
    assert run_check(ADD, ulp, check_args(), exact=True, resize_mode="mean") == 3
    err = capsys.readouterr().err
    assert "MISMATCH" in err
    assert "the interpreter decided" in err


@pytest.mark.parametrize("large", [False, True])
def test_xla_alone_compares_bit_exact_rewrites_at_the_rounding_tolerance(
    monkeypatch, capsys, large
):
    """Where the interpreter cannot run the program, XLA's bitwise difference on a
    bit-exact rewrite is its own compilation's (a conv of a pad against one with
    lhs_dilation, outside tester D: a mismatch at 2.9e-6, no output written): compared
    again at the rounding tolerance. A difference beyond it stays a mismatch. Both ways
    XLA decides alone: a small program the interpreter cannot run, a large one whose XLA
    difference the interpreter cannot re-decide."""
    from penguin_opt import equivalence
    from penguin_opt.check_cli import run_check

    def no_interpreter(text, inputs):
        raise NotCheckable("the interpreter oracle aborted the process (LLVM ERROR: ...)")

    monkeypatch.setattr(equivalence, "interpret", no_interpreter)
    if large:
        monkeypatch.setattr(equivalence, "AUTO_XLA_WORK", 0)
    nudged = ADD.replace(
        "return %0",
        "%c = stablehlo.constant dense<1.00000012> : tensor<4xf32>\n"
        "  %1 = stablehlo.multiply %0, %c : tensor<4xf32>\n  return %1",
    )  # one ulp up: XLA's own rounding could do that after explicitlyPad
    reorders = {"exact": True, "xla_reorders": True, "resize_mode": "mean"}
    assert run_check(ADD, nudged, check_args(), **reorders) == 0
    err = capsys.readouterr().err
    assert "XLA's results differ bit-wise" in err, err
    assert "compared at the rounding tolerance" in err, err
    wrong = nudged.replace("1.00000012", "1.01")
    assert run_check(ADD, wrong, check_args(), **reorders) == 3
    # folds and structural rewrites alone: one ulp is a mismatch on XLA too (a review:
    # the tolerance must not cover a fold that is one ulp off)
    capsys.readouterr()
    assert run_check(ADD, nudged, check_args(), exact=True, resize_mode="mean") == 3
    assert "rounding tolerance" not in capsys.readouterr().err


def test_only_the_pad_rewrite_is_one_xla_may_reorder():
    from penguin_opt.passes import REASSOCIATING, XLA_REORDERS

    assert XLA_REORDERS == {"explicitlyPad"}
    assert not XLA_REORDERS & REASSOCIATING


def test_auto_falls_back_to_the_interpreter_when_xla_cannot_run_a_large_program(monkeypatch):
    from penguin_opt import equivalence

    def xla_rejects(text, inputs):
        raise NotCheckable("INVALID_ARGUMENT: Invalid XLA PrimitiveType: 13 (TUPLE)")

    monkeypatch.setattr(equivalence, "AUTO_XLA_WORK", 0)
    monkeypatch.setattr(equivalence, "run_xla", xla_rejects)
    report = check(ADD, ADD_SWAPPED)
    assert report.ok
    assert report.oracle == "interpreter"
    assert "could not run it" in report.note


# A shape-polymorphic program as jax.export writes one: @main takes tensor<?x4xf32>.
DYNAMIC = """func.func @main(%x: tensor<?x4xf32>) -> tensor<4xf32> {
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %two = stablehlo.constant dense<2.000000e+00> : tensor<f32>
  %four = stablehlo.constant dense<4> : tensor<1xi32>
  %n = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
  %n1 = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>
  %shape = stablehlo.concatenate %n1, %four, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %b = stablehlo.dynamic_broadcast_in_dim %two, %shape, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x4xf32>
  %y = stablehlo.multiply %x, %b : tensor<?x4xf32>
  %r = stablehlo.reduce(%y init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<?x4xf32>, tensor<f32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
"""
# jax's guard of a constraint on a dimension variable: the first dimension must be even.
DYNAMIC_EVEN = DYNAMIC.replace(
    "  %n1 =",
    """  %c2 = stablehlo.constant dense<2> : tensor<i32>
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %rem = stablehlo.remainder %n, %c2 : tensor<i32>
  %even = stablehlo.compare EQ, %rem, %c0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
  stablehlo.custom_call @shape_assertion(%even, %n) {api_version = 2 : i32, error_message = "the batch {0} is not even", has_side_effect = true} : (tensor<i1>, tensor<i32>) -> ()
  %n1 =""",
)


def test_dynamic_arguments_need_their_inputs_or_a_size():
    with pytest.raises(NotCheckable, match=r"argument 0 has the dynamic type tensor<\?x4xf32>"):
        check(DYNAMIC, DYNAMIC)
    with pytest.raises(ValueError, match="dynamic_dim_size must be an integer >= 1"):
        check(DYNAMIC, DYNAMIC, dynamic_dim_size=0)


# jax's shape custom calls, as a shape-polymorphic jax.export writes `lax.top_k(x, n - 1)`:
# only jax's own refinement (not StableHLO's refine-shapes) makes them static
DYNAMIC_TOP_K = """func.func @main(%x: tensor<4x?xf32>) -> (tensor<4x?xf32>, tensor<4x?xi32>) {
  %n = stablehlo.get_dimension_size %x, dim = 1 : (tensor<4x?xf32>) -> tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %k = stablehlo.subtract %n, %one : tensor<i32>
  %v, %i = stablehlo.custom_call @stablehlo.dynamic_top_k(%x, %k) {api_version = 2 : i32} : (tensor<4x?xf32>, tensor<i32>) -> (tensor<4x?xf32>, tensor<4x?xi32>)
  return %v, %i : tensor<4x?xf32>, tensor<4x?xi32>
}
"""


@pytest.mark.parametrize("oracle", ["interpreter", "xla"])
@pytest.mark.parametrize(
    ("program", "size", "specialized", "change"),
    [
        (DYNAMIC, 3, "tensor<3x4xf32>", ("dense<2.000000e+00>", "dense<3.000000e+00>")),
        (DYNAMIC_TOP_K, 5, "tensor<4x5xf32>", ("dense<1> : tensor<i32>", "dense<2> : tensor<i32>")),
    ],
    ids=["dynamic_broadcast", "jax_dynamic_top_k"],
)
def test_dynamic_arguments_are_checked_specialized_to_the_given_size(
    program, size, specialized, change, oracle
):
    report = check(program, program, dynamic_dim_size=size, trials=2, oracle=oracle)
    assert report.ok, report.table()
    assert f"@main specialized to ({specialized})" in report.note
    # the specialized programs really run: a different constant is a mismatch
    changed = program.replace(*change)
    assert not check(program, changed, dynamic_dim_size=size, oracle=oracle).ok


def test_dynamic_arguments_take_their_sizes_from_the_inputs():
    x = np.arange(20, dtype=np.float32).reshape(5, 4)
    report = check(DYNAMIC, DYNAMIC, inputs=[[x]], rtol=0.0, atol=0.0)
    assert report.ok, report.table()
    assert "tensor<5x4xf32>" in report.note
    # every input set is run on the one specialization: other sizes are refused
    with pytest.raises(
        NotCheckable, match=r"input 0 is float32\[3, 4\], @main expects f32\[5, 4\]"
    ):
        check(DYNAMIC, DYNAMIC, inputs=[[x], [x[:3]]])


def test_a_false_shape_assertion_is_not_checkable_and_a_true_one_runs():
    with pytest.raises(NotCheckable, match="the batch 3 is not even"):
        check(DYNAMIC_EVEN, DYNAMIC_EVEN, dynamic_dim_size=3)
    assert check(DYNAMIC_EVEN, DYNAMIC, dynamic_dim_size=4).ok


@pytest.mark.parametrize("oracle", ["interpreter", "xla"])
def test_resource_constants_run_with_their_values(oracle):
    """The interpreter read a ``dense_resource`` as stray memory (a program mismatched
    itself) and XLA refused it: both now run it as the dense constant it holds."""
    dense = RESOURCE.split("{-#")[0].replace(
        "dense_resource<weights>", "dense<[1.0, 2.0, 3.0, 4.0]>"
    )
    report = check(RESOURCE, dense, oracle=oracle, rtol=0.0, atol=0.0)
    assert report.ok, report.table()
    assert not check(RESOURCE, dense.replace("4.0]", "5.0]"), oracle=oracle).ok


def test_elided_constants_are_not_checkable():
    """MLIR's printer writes the large constants it elides as ``dense_resource<__elided__>``,
    which reads back with no values."""
    elided = RESOURCE.split("{-#")[0].replace("<weights>", "<__elided__>")
    with pytest.raises(NotCheckable, match=r"'dense_resource<__elided__>' are not in the program"):
        check(elided, elided)


def test_dynamic_dim_size_on_the_command_line(tmp_path):
    before = write(tmp_path, "dyn.mlir", DYNAMIC)
    out = tmp_path / "out.mlir"
    proc = run(
        "penguin_opt.cli",
        before,
        "-p",
        "stablehlo-canonicalize-for-penguin",
        "--check-equivalence",
        "--dynamic-dim-size",
        "2",
        "-o",
        out,
    )
    assert proc.returncode == 0, proc.stderr
    assert "specialized to (tensor<2x4xf32>)" in proc.stderr
    proc = run("penguin_opt.check_cli", before, out)
    assert proc.returncode == 4, proc.stderr
    assert "--dynamic-dim-size" in proc.stderr
    proc = run("penguin_opt.check_cli", before, out, "--dynamic-dim-size", "0")
    assert proc.returncode == 2, proc.stderr


SPECIALIZE = (  # the README's recipe
    "stablehlo-legalize-composite-to-call,inline,"
    "stablehlo-refine-arguments{types='tensor<8x4xf32>'},stablehlo-refine-shapes,"
    "func.func(stablehlo-canonicalize-dynamism),func.func(stablehlo-check-shape-assertions)"
)


def test_the_readme_recipe_specializes_an_export_holding_a_composite(tmp_path):
    """jax lowers lax.top_k to a stablehlo.composite whose decomposition keeps the
    dynamic signature: the recipe without its first two passes failed ('decomposition has
    type tensor<?x4xf32>', outside tester F)."""
    import jax
    import jax.numpy as jnp
    from jax import export

    def f(x):
        values, indices = jax.lax.top_k(x, 3)
        return values * 2, indices

    spec = jax.ShapeDtypeStruct(export.symbolic_shape("b, 4"), jnp.float32)
    blob = tmp_path / "topk.jaxexport"
    blob.write_bytes(export.export(jax.jit(f))(spec).serialize())
    out = tmp_path / "out.mlir"
    proc = run(
        "penguin_opt.cli", blob, "-p", SPECIALIZE + ",inline,stablehlo-canonicalize-for-penguin",
        "--check-equivalence", "-o", out,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "@main specialized to (tensor<8x4xf32>)" in proc.stderr
    (signature,) = [ln for ln in out.read_text().splitlines() if "func.func public @main" in ln]
    assert "tensor<8x4xf32>" in signature, signature
    assert "?" not in signature, signature


def test_a_program_its_pipeline_specialized_is_checked_against_the_original(tmp_path):
    """The README's recipe for Neuron (a static-shape compiler): specialize a
    shape-polymorphic export in the same command; the check runs the original at the
    output's argument types."""
    out = tmp_path / "out.mlir"
    proc = run(
        "penguin_opt.cli",
        write(tmp_path, "dyn.mlir", DYNAMIC),
        "-p",
        SPECIALIZE + ",stablehlo-canonicalize-for-penguin",
        "--check-equivalence",
        "--penguin-readiness",
        "-o",
        out,
    )
    assert proc.returncode == 0, proc.stderr
    assert "@main specialized to (tensor<8x4xf32>)" in proc.stderr
    assert "nothing left that the tensorizer refuses" in proc.stderr
    assert "@main(%arg0: tensor<8x4xf32>)" in out.read_text()
    assert "dynamic_broadcast_in_dim" not in out.read_text()
    # the original really runs at that size: another constant in the output is a mismatch
    wrong = out.read_text().replace("dense<2.000000e+00>", "dense<3.000000e+00>")
    assert not check(DYNAMIC, wrong).ok
    with pytest.raises(NotCheckable, match=r"signatures differ: \(f32\[\?, 4\]\) vs"):
        check(DYNAMIC, ADD)


# jax exports some ops (top_k) as composites whose decomposition is a private function
COMPOSITE = """func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = stablehlo.composite "my.double" %x {decomposition = @my.double.impl} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
func.func private @my.double.impl(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = stablehlo.add %x, %x : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
"""


def test_a_shape_polymorphic_composite_is_specialized_with_its_decomposition():
    assert check(COMPOSITE, COMPOSITE, dynamic_dim_size=3).ok
    squared = COMPOSITE.replace("stablehlo.add %x, %x", "stablehlo.multiply %x, %x")
    assert not check(COMPOSITE, squared, dynamic_dim_size=3).ok


# w + (x.v - x'.v') * 1e6, with x'.v' the same 64-term sums in another order: exactly w in
# real arithmetic; in f32 the two orders' rounding, amplified a millionfold, is of w's size.
AMPLIFIED = """func.func @main(%w: tensor<8xf32>, %x: tensor<64xf32>, %v: tensor<64x8xf32>)
    -> tensor<8xf32> {
  %h = stablehlo.dot_general %x, %v, contracting_dims = [0] x [0]
      : (tensor<64xf32>, tensor<64x8xf32>) -> tensor<8xf32>
  %x2 = REORDER_X
  %v2 = REORDER_V
  %h2 = stablehlo.dot_general %x2, %v2, contracting_dims = [0] x [0]
      : (tensor<64xf32>, tensor<64x8xf32>) -> tensor<8xf32>
  %d = stablehlo.subtract %h, %h2 : tensor<8xf32>
  %k = stablehlo.constant dense<1.0e+06> : tensor<8xf32>
  %a = stablehlo.multiply %d, %k : tensor<8xf32>
  %y = stablehlo.add %w, %a : tensor<8xf32>
  return %y : tensor<8xf32>
}
"""
REVERSED = AMPLIFIED.replace(
    "REORDER_X", "stablehlo.reverse %x, dims = [0] : tensor<64xf32>"
).replace("REORDER_V", "stablehlo.reverse %v, dims = [0] : tensor<64x8xf32>")
ROTATED = AMPLIFIED.replace(
    "%x2 = REORDER_X",
    "%xa = stablehlo.slice %x [32:64] : (tensor<64xf32>) -> tensor<32xf32>\n"
    "  %xb = stablehlo.slice %x [0:32] : (tensor<64xf32>) -> tensor<32xf32>\n"
    "  %x2 = stablehlo.concatenate %xa, %xb, dim = 0 : (tensor<32xf32>, tensor<32xf32>)"
    " -> tensor<64xf32>",
).replace(
    "%v2 = REORDER_V",
    "%va = stablehlo.slice %v [32:64, 0:8] : (tensor<64x8xf32>) -> tensor<32x8xf32>\n"
    "  %vb = stablehlo.slice %v [0:32, 0:8] : (tensor<64x8xf32>) -> tensor<32x8xf32>\n"
    "  %v2 = stablehlo.concatenate %va, %vb, dim = 0 : (tensor<32x8xf32>, tensor<32x8xf32>)"
    " -> tensor<64x8xf32>",
)


@pytest.mark.parametrize("oracle", ["interpreter", "xla"])
def test_amplified_rounding_of_reordered_sums_is_told_apart_in_f64(oracle):
    """Two summation orders of an ill-conditioned program differ far beyond the tolerance
    in f32 (the rounding is amplified a millionfold); promoted to f64 they agree, so the
    difference is rounding and the check passes, saying so. A wrong result stays a
    mismatch in f64 too."""
    report = check(REVERSED, ROTATED, oracle=oracle, trials=2)
    assert report.ok, report.table()
    assert [o.rounding for o in report.outputs] == [True]
    assert "ok in f64 (rounding)" in report.table()
    assert "agree within it with both programs in f64" in report.note
    wrong = ROTATED.replace("%y = stablehlo.add %w, %a", "%y = stablehlo.add %a, %a")
    report = check(REVERSED, wrong, oracle=oracle, trials=2)
    assert not report.ok
    assert "in f64 too: output 0 differs" in report.note


@pytest.mark.parametrize("oracle", ["interpreter", "xla"])
def test_outputs_that_are_rounding_noise_are_told_apart_in_f64(oracle):
    """An output that is zero in real arithmetic (here (x.v - x'.v') * 1e6 alone; in a
    torch-xla training step, the gradient of a conv bias a batch norm cancels) is rounding
    noise in every type, with no scale to compare at: its difference shrinks as rounding
    does when both programs run in f64 (~1e-9 from f32), so it is rounding. A wrong result
    hidden in f32 by that noise does not shrink: a mismatch in f64 too."""
    noise = [
        text.replace("%y = stablehlo.add %w, %a", "%y = stablehlo.add %a, %a")
        for text in (REVERSED, ROTATED)
    ]
    report = check(*noise, oracle=oracle, trials=2)
    assert report.ok, report.table()
    assert [o.rounding for o in report.outputs] == [True]
    wrong = noise[1].replace(
        "%y = stablehlo.add %a, %a",
        "%s = stablehlo.constant dense<1.0e-05> : tensor<8xf32>\n"
        "  %ws = stablehlo.multiply %w, %s : tensor<8xf32>\n"
        "  %y = stablehlo.add %a, %ws",
    )
    report = check(noise[0], wrong, oracle=oracle, trials=2)
    assert not report.ok, report.table()
    assert "in f64 too: output 0 differs" in report.note


# The same four f16 values summed in two orders: (a + b) + (c + d) and ((a + c) + b) + d.
# With a = c = 6e4 and b = d = -6e4 the first is 0 and the second overflows to inf in f16
# (in f64 both are 0).
SUM4 = """func.func @main(%a: tensor<2xf16>, %b: tensor<2xf16>, %c: tensor<2xf16>,
    %d: tensor<2xf16>) -> tensor<2xf16> {
  %0 = stablehlo.add FIRST : tensor<2xf16>
  %1 = stablehlo.add SECOND : tensor<2xf16>
  %2 = stablehlo.add THIRD : tensor<2xf16>
  return %2 : tensor<2xf16>
}
"""
PAIRED = SUM4.replace("FIRST", "%a, %b").replace("SECOND", "%c, %d").replace("THIRD", "%0, %1")
CHAINED = SUM4.replace("FIRST", "%a, %c").replace("SECOND", "%0, %b").replace("THIRD", "%1, %d")
OVERFLOWING = [[np.array(v, np.float16) for v in ([6e4, 1], [-6e4, 2], [6e4, 3], [-6e4, 4])]]


@pytest.mark.parametrize("oracle", ["interpreter", "xla"])
def test_an_inf_only_after_the_rewrite_is_a_mismatch_never_rounding(oracle):
    """A rewrite whose new summation order overflows the narrow type (0 before, inf after)
    changed the result: the table shows the difference as inf, and no f64 run calls it
    rounding. The other way round (inf before, a finite value after: the original's sum
    left the range, the rewrite's did not) agrees in f64 and says so."""
    report = check(PAIRED, CHAINED, oracle=oracle, inputs=OVERFLOWING)
    assert not report.ok, report.table()
    assert report.outputs[0].max_abs == float("inf")
    assert not report.outputs[0].rounding
    assert "inf or NaN after the rewrite where the original has a finite value" in report.note
    report = check(CHAINED, PAIRED, oracle=oracle, inputs=OVERFLOWING)
    assert report.ok, report.table()
    assert report.outputs[0].rounding
    assert "inf or NaN before the rewrite only" in report.note


STUCK_SUM = """func.func @main(%x: tensor<4097xf16>) -> tensor<f16> {
  %z = stablehlo.constant dense<0.0> : tensor<f16>
  %r = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0]
      : (tensor<4097xf16>, tensor<f16>) -> tensor<f16>
  return %r : tensor<f16>
}
"""
WIDE_SUM = """func.func @main(%x: tensor<4097xf16>) -> tensor<f16> {
  %w = stablehlo.convert %x : (tensor<4097xf16>) -> tensor<4097xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%w init: %z) applies stablehlo.add across dimensions = [0]
      : (tensor<4097xf32>, tensor<f32>) -> tensor<f32>
  %n = stablehlo.convert %r : (tensor<f32>) -> tensor<f16>
  return %n : tensor<f16>
}
"""


def test_an_inf_after_the_rewrite_that_the_exact_value_has_is_rounding():
    """The interpreter sums f16 in f16, where 32768 + 16 stays 32768: 4097 x 16 comes out
    finite; the same sum in f32 is 65552, beyond f16's range, so inf. The exact (f64)
    value is beyond the range too: the rewrite's inf is the right rounding, not a new
    inf (a review found the rewrite called a mismatch)."""
    inputs = [[np.full(4097, 16.0, np.float16)]]
    report = check(STUCK_SUM, WIDE_SUM, oracle="interpreter", inputs=inputs)
    assert report.ok, report.table()
    assert report.outputs[0].rounding
    assert "exact (f64) value is beyond its type's range" in report.note


def test_an_inf_is_an_overflow_only_from_where_the_type_rounds_to_inf():
    """f16's largest value is 65504 and 65520 rounds to inf: an exact 65510 rounds to
    65504, so an inf for it is no overflow (a review: the largest value was the bound)."""
    from penguin_opt.equivalence import _overflows

    inf = np.array([np.inf], np.float16)
    mask = np.array([True])
    assert _overflows(np.array([65520.0]), mask, inf, np.dtype(np.float16))
    assert not _overflows(np.array([65510.0]), mask, inf, np.dtype(np.float16))
    assert not _overflows(np.array([-7e4]), mask, inf, np.dtype(np.float16))  # sign


def test_both_oracles_keep_each_oracles_note():
    report = check(CHAINED, PAIRED, oracle="both", inputs=OVERFLOWING)
    assert report.ok, report.table()
    assert report.note.count("inf or NaN before the rewrite only") == 2
    assert "interpreter: " in report.note
    assert "xla: " in report.note


def test_compare_arrays_reports_an_inf_in_one_array_as_an_inf_difference():
    a, b = np.array([0.0, 1.0], np.float16), np.array([np.inf, 1.0], np.float16)
    assert compare_arrays(a, b, 1e-3, 0.0) == (float("inf"), float("inf"), False)
    assert compare_arrays(b, b, 1e-3, 0.0) == (0.0, 0.0, True)
    assert compare_arrays(a, b, 0.0, 0.0) == (float("inf"), float("inf"), False)  # bitwise
    zero, small = np.array([0.0], np.float32), np.array([1e-3], np.float32)
    assert compare_arrays(zero, small, 1e-3, 0.0)[1] == float("inf")  # (was 4.5e+307)


def test_an_integer_difference_is_not_rechecked_in_f64():
    """(Integer-only programs got an 'in f64 too' note: f64 changes no integer.)"""
    add = "func.func @main(%a: tensor<4xi32>) -> tensor<4xi32> {\n  %0 = stablehlo.add %a, ARG"
    add += " : tensor<4xi32>\n  return %0 : tensor<4xi32>\n}\n"
    off = add.replace("ARG", "%c").replace(
        "  %0", "  %c = stablehlo.constant dense<1> : tensor<4xi32>\n  %0"
    )
    report = check(add.replace("ARG", "%a"), off, oracle="interpreter")
    assert not report.ok
    assert "f64" not in report.note


def test_outputs_within_the_tolerance_are_not_judged_again_in_f64():
    """The f64 recheck explains the outputs that differed; one that agreed in its own type
    is not judged again (here w * 1e-30 * 1e-30 against 0: both 0 in f32, where it
    underflows; in f64 they differ, by 1e-60 of w)."""
    second = [
        text.replace("-> tensor<8xf32> {", "-> (tensor<8xf32>, tensor<8xf32>) {").replace(
            "  return %y : tensor<8xf32>",
            f"{tail}\n  return %y, %t : tensor<8xf32>, tensor<8xf32>",
        )
        for text, tail in (
            (
                REVERSED,
                "  %c = stablehlo.constant dense<1.0e-30> : tensor<8xf32>\n"
                "  %s = stablehlo.multiply %w, %c : tensor<8xf32>\n"
                "  %t = stablehlo.multiply %s, %c : tensor<8xf32>",
            ),
            (
                ROTATED,
                "  %z = stablehlo.constant dense<0.0> : tensor<8xf32>\n"
                "  %t = stablehlo.multiply %w, %z : tensor<8xf32>",
            ),
        )
    ]
    report = check(*second, oracle="interpreter", trials=2)
    assert report.ok, report.table()
    assert [o.rounding for o in report.outputs] == [True, False]


def test_programs_that_cannot_be_promoted_to_f64_keep_their_mismatch(tmp_path):
    bits = "%y, %b : tensor<8xf32>, tensor<8xi32>"
    before, after = (
        text.replace("-> tensor<8xf32> {", "-> (tensor<8xf32>, tensor<8xi32>) {").replace(
            "  return %y : tensor<8xf32>",
            "  %b = stablehlo.bitcast_convert %w : (tensor<8xf32>) -> tensor<8xi32>\n"
            f"  return {bits}",
        )
        for text in (REVERSED, ROTATED)
    )
    proc = penguin_check(tmp_path, before, after)
    assert proc.returncode == 3, proc.stderr
    assert "not rechecked in f64 (it has bitcast_convert)" in proc.stderr


def test_penguin_check_says_which_outputs_match_only_in_f64(tmp_path):
    proc = penguin_check(tmp_path, REVERSED, ROTATED)
    assert proc.returncode == 0, proc.stderr
    assert "equivalence: all outputs match (1 of them in f64 only: see the note)" in proc.stderr


def test_a_failed_f64_recheck_leaves_the_mismatch(monkeypatch):
    """An oracle that cannot run the f64 form (here: it refuses every f64 program) leaves
    the difference found in the program's own types: a mismatch, not 'not checkable'."""
    from penguin_opt import equivalence

    real = equivalence.interpret

    def no_f64(text, inputs):
        if "xf64>" in text:
            raise NotCheckable("no f64 here")
        return real(text, inputs)

    monkeypatch.setattr(equivalence, "interpret", no_f64)
    report = check(REVERSED, ROTATED, oracle="interpreter", trials=1)
    assert not report.ok
    assert "not rechecked in f64 (no f64 here)" in report.note


def test_a_bitwise_mismatch_of_equal_numbers_says_what_differs():
    """-0.0 against 0.0 in exact mode showed max abs 0, max rel 0 and a bare MISMATCH
    (outside tester F)."""
    negative = (
        "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %c = stablehlo.constant dense<[-0.0, 1.0]> : tensor<2xf32>\n"
        "  return %c : tensor<2xf32>\n}\n"
    )
    report = check(negative, negative.replace("-0.0", "0.0"), rtol=0.0, atol=0.0)
    assert not report.ok
    assert (report.outputs[0].max_abs, report.outputs[0].max_rel) == (0.0, 0.0)
    assert "MISMATCH (bitwise: a zero's sign or a NaN's payload)" in report.table()
    report = check(negative, negative.replace("-0.0", "2.0"), rtol=0.0, atol=0.0)
    assert report.table().splitlines()[-1].endswith("  MISMATCH")  # numbers differ: bare


def test_a_difference_of_wide_integers_is_measured_exactly():
    """2^60 against 2^60 + 1 is 0 apart in f64: the table showed max abs 0 and called it
    a zero's sign or a NaN's payload (a review)."""
    program = (
        "func.func @main(%a: tensor<2xf32>) -> tensor<2xi64> {\n"
        "  %c = stablehlo.constant dense<[1152921504606846976, -5]> : tensor<2xi64>\n"
        "  return %c : tensor<2xi64>\n}\n"
    )
    for wider in ("1152921504606846977", "1152921504606846975"):
        report = check(program, program.replace("1152921504606846976", wider))
        assert not report.ok
        assert report.outputs[0].max_abs == 1.0
        assert report.table().splitlines()[-1].endswith("  MISMATCH")
    a = np.array([-(2**63), 2**63 - 1], np.int64)
    assert compare_arrays(a, a[::-1].copy(), 0.0, 0.0)[0] == float(2**64 - 1)


def test_the_memory_guard_counts_every_trial(monkeypatch):
    """It counted one input set where the check makes --trials of them (a review)."""
    from penguin_opt import equivalence

    monkeypatch.setattr(equivalence, "_usable_memory", lambda: 1 << 20)  # 1 MiB: 512 KiB
    signature = [((1000,), "f32")]
    equivalence._refuse_inputs_beyond_memory(signature, 1)  # 4 KB kept, 16 KB drawn
    with pytest.raises(NotCheckable, match="for 200 trials would take"):
        equivalence._refuse_inputs_beyond_memory(signature, 200)  # 800 KB kept
    with pytest.raises(NotCheckable, match="more than half of the memory here"):
        equivalence._refuse_inputs_beyond_memory([((20_000,), "complex<f64>")], 1)


def test_a_daemonic_process_is_told_how_to_run_the_oracles(monkeypatch):
    """The oracles run in child processes, which a daemonic process (a dask worker, by
    default) may not start: not checkable, saying how to start the workers (it was
    Python's bare 'AssertionError: daemonic processes are not allowed to have
    children')."""
    import multiprocessing

    from penguin_opt import equivalence

    monkeypatch.setitem(multiprocessing.current_process()._config, "daemon", True)
    assert multiprocessing.current_process().daemon
    with pytest.raises(equivalence.NotCheckable, match="DASK_DISTRIBUTED__WORKER__DAEMON=False"):
        equivalence.run_xla("func.func @main() {\n  return\n}\n", [])


BF16_DOT = """func.func @main(%a: tensor<4x{n}xf32>, %b: tensor<{n}x3xf32>) -> tensor<4x3xf32> {{
  %0 = stablehlo.convert %a : (tensor<4x{n}xf32>) -> tensor<4x{n}xbf16>
  %1 = stablehlo.convert %b : (tensor<{n}x3xf32>) -> tensor<{n}x3xbf16>
  %2 = stablehlo.dot_general %0, %1, contracting_dims = [1] x [0] : (tensor<4x{n}xbf16>, tensor<{n}x3xbf16>) -> tensor<4x3xf32>
  %3 = {last}
  return %3 : tensor<4x3xf32>
}}
"""


@pytest.mark.parametrize("oracle", ["interpreter", "xla"])
def test_a_tolerance_too_loose_to_tell_a_negation_is_not_a_match(oracle):
    """A bf16 dot of 512 terms derives the tolerance 4 * 2^-7 * 512 = 16, within which a
    negated result agrees (outside tester J): not checkable, never "match". Equal values
    need no tolerance; a short dot's tolerance (0.5) still tells a negation; a tolerance
    the user gives is the user's."""
    same = "stablehlo.add %2, %2 : tensor<4x3xf32>"
    negated = "stablehlo.negate %2 : tensor<4x3xf32>"
    doubled = "stablehlo.multiply %2, %two : tensor<4x3xf32>"

    def program(n: int, last: str) -> str:
        text = BF16_DOT.format(n=n, last=last)
        if "%two" in last:
            text = text.replace(
                "  %3 =", "  %two = stablehlo.constant dense<2.0> : tensor<4x3xf32>\n  %3 ="
            )
        return text

    long_dot, long_negated = program(512, same), program(512, negated)
    with pytest.raises(NotCheckable, match="cannot tell a result from its negation"):
        check(long_dot, long_negated, oracle=oracle)
    assert check(long_dot, program(512, doubled), oracle=oracle).ok  # x + x is 2 * x
    short = check(program(16, same), program(16, negated), oracle=oracle)
    assert not short.ok
    given = check(long_dot, long_negated, oracle=oracle, rtol=1e-2, atol=1e-2)
    assert not given.ok


def test_npz_inputs_of_ml_dtypes(tmp_path):
    """numpy saves bfloat16 and float8 arrays as raw bytes (|V2, |V1): they are read as
    the argument's type (outside tester J: "input 0 is |V2[2], @main expects bf16[2]")."""
    import ml_dtypes

    from penguin_opt.equivalence import load_npz_inputs

    bf16 = np.array([1.5, -2.25], dtype=ml_dtypes.bfloat16)
    f8 = np.array([0.5, 448.0], dtype=ml_dtypes.float8_e4m3fn)
    path = tmp_path / "in.npz"
    np.savez(path, arg0=bf16, arg1=f8)
    with np.load(path) as raw:
        assert raw["arg0"].dtype.kind == "V"  # (what makes the reading necessary)
    (arrays,) = load_npz_inputs(str(path), [((2,), "bf16"), ((2,), "f8E4M3FN")])
    assert arrays[0].dtype == ml_dtypes.bfloat16
    assert arrays[0].tobytes() == bf16.tobytes()
    assert arrays[1].dtype == ml_dtypes.float8_e4m3fn
    assert arrays[1].tobytes() == f8.tobytes()
    program = (
        "func.func @main(%x: tensor<2xbf16>, %y: tensor<2xf8E4M3FN>) -> tensor<2xbf16> {\n"
        "  return %x : tensor<2xbf16>\n}\n"
    )
    assert check(program, program, inputs=[arrays]).ok


def test_hlo_erf_runs_on_the_interpreter():
    """XLA's HLO importer gives erf as mhlo.erf, which the legalization to StableHLO made
    a custom call the interpreter cannot run: such programs were decided by XLA alone
    (outside tester J: a one-ulp XLA difference was then a mismatch)."""
    import penguin_opt

    hlo = (
        "HloModule erf_test\n\nENTRY main {\n  p = f32[4] parameter(0)\n"
        "  e = f32[4] erf(p)\n  c = f32[] constant(2)\n"
        "  b = f32[4] broadcast(c), dimensions={}\n  ROOT r = f32[4] multiply(e, b)\n}\n"
    )
    program = penguin_opt.to_text(penguin_opt.parse(hlo))
    assert "mhlo.erf" in program
    report = check(program, program, oracle="interpreter", rtol=0.0, atol=0.0)
    assert report.ok, report.table()
    assert report.oracle == "interpreter"
