"""The model corpus (src/penguin_opt/corpus): real programs through both dialects' pipelines.

CI runs the ``jax`` family (written with jax.lax/jax.numpy, no extra packages): a CNN
training step with strided/depthwise/dilated convolutions, nearest upsampling forward and
training step, top_k/argsort, and a symbolic-batch ``jax.export``. The Keras and
keras-hub models need ``pip install -e '.[corpus]'`` and run behind ``-m corpus``
(``pytest -m corpus tests/test_corpus.py``; they are also ``slow``).
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tools.corpus import shared
from tools.corpus.export import load_or_lower, lower
from tools.corpus.models import MODELS
from tools.corpus.report import hand_written, render
from tools.corpus.sweep import sweep_model

CI_MODELS = [m for m in MODELS if m.ci]
FULL_MODELS = [m for m in MODELS if not m.ci]


@functools.cache
def _ci_results(spec):
    """Lowered and swept once per test session (the CI models take seconds each)."""
    return tuple(sweep_model(spec, lower(spec)))


def _assert_clean(results):
    problems = [f"{r.model} [{r.variant}]: {r.status}\n{r.table}" for r in results if r.failed]
    assert not problems, "\n".join(problems)
    assert any(r.status == "ok" for r in results), [r.status for r in results]


@pytest.mark.parametrize("spec", CI_MODELS, ids=lambda s: s.name)
def test_ci_model_keeps_results(spec):
    results = _ci_results(spec)
    _assert_clean(results)
    # every variant of a CI model is decided by an oracle (the HLO importer's mhlo.topk
    # runs as chlo.top_k)
    for r in results:
        assert r.status == "ok", (r.variant, r.status)


def test_ci_models_exercise_the_rewriters():
    seen = set()
    for spec in CI_MODELS:
        for r in _ci_results(spec):
            seen |= set(r.rewrites)
    assert {"fuseIotaSort", "explicitlyPad", "explicitlyStride"} <= seen, seen


def test_a_new_report_keeps_the_sections_written_by_hand():
    """docs/corpus.md holds sections written by hand after the generated ones (the
    upstream sweeps): regenerating it must not drop them."""
    previous = (
        "# Model corpus\n\nintro\n\n## Models\n\n| a |\n\n## Shared public corpus\n\n"
        "sweep\n\n## XLA's HLO test files\n\nby hand\n\n## Later\n\nmore\n"
    )
    assert hand_written(previous) == "## XLA's HLO test files\n\nby hand\n\n## Later\n\nmore\n"
    assert hand_written("# Model corpus\n\n## Models\n") == ""
    text = (Path(__file__).resolve().parents[1] / "docs" / "corpus.md").read_text()
    assert hand_written(text).startswith("## XLA's HLO test files")


def test_report_renders_a_row_per_variant():
    spec = next(m for m in CI_MODELS if m.name == "topk_argsort")
    results = list(_ci_results(spec))
    text = render({spec.name: spec}, results, {}, None, "Not run.", [])
    rows = [
        line
        for line in text.splitlines()
        if line.startswith("| topk_argsort | ")
        and line.split(" | ")[1] in ("stablehlo", "mhlo", "hlo")
    ]
    assert len(rows) == len(results) == 3
    assert "fuseIotaSort 2" in rows[0]


@pytest.mark.slow
@pytest.mark.corpus
@pytest.mark.parametrize("spec", FULL_MODELS, ids=lambda s: s.name)
def test_full_model_keeps_results(spec):
    why = spec.available()
    if why:
        pytest.skip(why)
    _assert_clean(sweep_model(spec, load_or_lower(spec)))


# ---------------------------------------------------------------- check-op conversion


def test_pretty_check_ops_become_numbered_custom_calls():
    text = """func.func @t() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  check.expect_eq_const %0, dense<[1,
      2]> : tensor<2xi32>
  check.expect_almost_eq_const %0, dense<5.1> : tensor<f64> {tolerance = 0.1 : f64}
  check.expect_close %0, %0, max_ulp_difference = 3 : tensor<2xf16>, tensor<2xf16>
  check.expect_serialized_eq %0, probe_id = "p" : tensor<2xi32>
  stablehlo.custom_call @check.expect_close(%0, %0) {has_side_effect = true} : (tensor<2xi32>, tensor<2xi32>) -> ()
  func.return
}"""
    out, table = shared.convert_check_ops(text)
    assert "check.expect_" not in out.replace("@check.expect_", "")
    assert "%__expected_0 = stablehlo.constant dense<[1,\n      2]> : tensor<2xi32>" in out
    assert "@check.expect_eq_const.0(%0, %__expected_0)" in out
    assert "@check.observe.3(%0)" in out
    assert "@check.expect_close.4(%0, %0)" in out
    assert [e.kind for e in table] == [
        "expect_eq_const",
        "expect_almost_eq_const",
        "expect_close",
        "observe",
        "expect_close",
    ]
    assert table[1].tolerance == 0.1
    assert table[2].max_ulp == 3
    assert table[4].max_ulp == 3


def test_iree_check_calls_and_unfoldable_constants_are_read():
    """IREE's e2e tests write check ops as calls (a tolerance third) and constants as
    util.unfoldable_constant."""
    text = """func.func @t() {
  %0 = util.unfoldable_constant dense<[1.0, 2.0]> : tensor<2xf32>
  check.expect_almost_eq_const(%0, dense<[1.0, 2.0]> : tensor<2xf32>, 1.0e-3) : tensor<2xf32>
  check.expect_eq_const(%0, dense<[
      1.0, 2.0]> : tensor<2xf32>) : tensor<2xf32>
  check.expect_eq(%0, %0) : tensor<2xf32>
  return
}"""
    out, table = shared.convert_check_ops(text)
    assert "util." not in out
    assert "check.expect" not in out.replace("@check.expect", "")
    assert "%0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>" in out
    assert "%__expected_1 = stablehlo.constant dense<[\n      1.0, 2.0]> : tensor<2xf32>" in out
    assert "@check.expect_eq.2(%0, %0)" in out
    assert [(e.kind, e.tolerance) for e in table] == [
        ("expect_almost_eq_const", 1e-3),
        ("expect_eq_const", None),
        ("expect_eq", None),
    ]
    import penguin_opt

    penguin_opt.load(out)  # what the sweep loads parses


def test_entry_program_returns_checked_values():
    text, _table = (
        shared.convert_check_ops("""func.func private @g(%a: tensor<2xi32>) -> tensor<2xi32> {
  return %a : tensor<2xi32>
}
func.func @t() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %1 = func.call @g(%0) : (tensor<2xi32>) -> tensor<2xi32>
  check.expect_eq_const %1, dense<[1, 2]> : tensor<2xi32>
  func.return
}
func.func @other() {
  func.return
}""")
    )
    prog, used = shared.entry_program(text, "t", "equiv")
    assert used == [0]
    assert "func.func @main() -> (tensor<2xi32>, tensor<2xi32>)" in prog
    assert "@other" not in prog
    assert "@g(" in prog
    assert "check." not in prog
    actual, _ = shared.entry_program(text, "t", "actual")
    expected, _ = shared.entry_program(text, "t", "expected")
    assert shared._expectations_hold(text, "t", frozenset([0]), True, None, None)
    assert "-> tensor<2xi32>" in actual
    assert "-> tensor<2xi32>" in expected


def test_stablehlo_chunk_with_mhlo_attributes_runs_both_dialects_passes():
    # Every JAX export carries mhlo.* attributes on StableHLO ops; the chunk is StableHLO
    # and must also go through stablehlo-legalize-to-hlo and the MHLO passes.
    text = """module attributes {mhlo.num_partitions = 1 : i32} {
  func.func public @main(%a: tensor<2x3xf32>) -> (tensor<2x3xf32> {mhlo.layout_mode = "default"}) {
    %c = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
    %b = stablehlo.broadcast_in_dim %c, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
    %s = stablehlo.add %a, %b : tensor<2x3xf32>
    return %s : tensor<2x3xf32>
  }
}"""
    r = shared.run_case(shared.Case("t.mlir", 0, text))
    assert r.status == "ok", r.status
    assert r.dialect == "stablehlo"
    assert r.checked == 2  # @main, in each dialect
    # one fold by each dialect's pass
    assert r.rewrites["replaceBroadcastInDimWithConstants"] == 2, r.rewrites


def test_entry_program_keeps_callees_with_quoted_names():
    # JAX names a lambda's function @"<lambda>"
    text = """func.func private @"<lambda>"(%a: tensor<2xi32>) -> tensor<2xi32> {
  return %a : tensor<2xi32>
}
func.func @t(%a: tensor<2xi32>) -> tensor<2xi32> {
  %1 = func.call @"<lambda>"(%a) : (tensor<2xi32>) -> tensor<2xi32>
  return %1 : tensor<2xi32>
}"""
    prog, _ = shared.entry_program(text, "t", "equiv")
    assert 'func.func private @"<lambda>"' in prog


def test_an_empty_chunk_is_skipped():
    # what a file ending in "// -----" leaves after its last separator
    assert shared.run_case(shared.Case("t.mlir", 3, "\n// CHECK: nothing\n\n")).status == (
        "skipped: empty chunk"
    )


def test_the_sweep_runs_on_any_folder(tmp_path, capsys):
    import json

    (tmp_path / "up" / "deep").mkdir(parents=True)
    (tmp_path / "up" / "deep" / "t.mlir").write_text(
        """func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %c = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %b = stablehlo.broadcast_in_dim %c, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %s = stablehlo.add %a, %b : tensor<2x3xf32>
  return %s : tensor<2x3xf32>
}
// -----
"""
    )
    log = tmp_path / "rows.jsonl"
    try:
        assert shared.main([str(tmp_path / "up"), "--jsonl", str(log)]) == 0
    finally:
        shared.shutdown_worker()
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["case"], r["status"]) for r in rows] == [
        ("deep/t.mlir#0", "ok"),
        ("deep/t.mlir#1", "skipped: empty chunk"),
    ]
    assert rows[0]["checked"] == 2
    assert rows[0]["rewrites"] == {"replaceBroadcastInDimWithConstants": 2}
    assert "files: 1, chunks: 2, loaded: 1" in capsys.readouterr().out


def test_jax_primitive_harnesses_export_for_the_sweep(tmp_path, capsys):
    """``tools.corpus.harnesses`` writes jax's primitive test harnesses as programs the
    sweep loads and checks in both dialects."""
    from penguin_opt._compat import primitive_test_harnesses
    from tools.corpus import harnesses

    if primitive_test_harnesses() is None:
        pytest.skip("this jax has no primitive test harness table")

    out = tmp_path / "h"
    assert harnesses.main([str(out), "--groups", "cumsum,dot_general", "--per-group", "2"]) == 0
    files = sorted(p.name for p in out.glob("*.mlir"))
    assert len(files) == 4, files
    assert {f.split("_")[0] for f in files} == {"cumsum", "dot"}
    try:
        assert shared.main([str(out)]) == 0
    finally:
        shared.shutdown_worker()
    assert "files: 4, chunks: 4, loaded: 4" in capsys.readouterr().out


def test_jax_back_compat_programs_export_for_a_batch_check(tmp_path):
    """``tools.corpus.back_compat`` writes jax's export back-compat programs as files a
    batch run with --check-equivalence takes: the CPU LAPACK ones are checked, and a
    shape-polymorphic one (``stablehlo.dynamic_top_k``) is checked specialized."""
    from penguin_opt._compat import export_back_compat_modules
    from tools.corpus import back_compat

    if not export_back_compat_modules():
        pytest.skip("this jax has no export back-compat test data")
    out = tmp_path / "bc"
    assert back_compat.main([str(out)]) == 0
    names = {p.name for p in out.glob("*.mlir")}
    assert len(names) > 50, sorted(names)
    picked = [
        out / name
        for name in sorted(names)
        if name.startswith(("cpu_lu_lapack_getrf__data_2024_05_31_f32", "stablehlo_dynamic_top_k"))
    ]
    assert len(picked) >= 2, sorted(names)
    report = tmp_path / "r.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "penguin_opt.cli",
            *picked,
            "-o",
            tmp_path / "canon",
            "-p",
            "inline,stablehlo-canonicalize-for-penguin,stablehlo-canonicalize-conv",
            "--jobs",
            "1",
            "--check-equivalence",
            "--dynamic-dim-size",
            "5",
            "--report",
            report,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(report.read_text())["summary"]
    assert summary["ok"] == len(picked), summary


TORCH_XLA = Path(__file__).parent / "data" / "torch_xla"


@pytest.mark.parametrize(
    ("name", "rewriters"),
    [
        ("sort_topk_argsort.hlo.pb", {"fuseIotaSort"}),
        (
            "conv_upsample_train_step.hlo.txt",
            {"replaceConvertsWithConstants", "explicitlyPad", "explicitlyStride"},
        ),
    ],
)
@pytest.mark.parametrize("dialect", ["stablehlo", "mhlo"])
def test_torch_xla_programs_keep_their_results(tmp_path, name, rewriters, dialect):
    """Programs torch-xla wrote (tests/data/torch_xla/README.md), read as users hold them
    (XLA's HloProto and HLO text dumps), through both dialects' pipelines: the rewriters
    fire and the results are unchanged."""
    import json
    import subprocess
    import sys

    pipeline = {
        "stablehlo": "inline,stablehlo-canonicalize-for-penguin,stablehlo-canonicalize-conv",
        "mhlo": "inline,stablehlo-legalize-to-hlo,canonicalize-for-penguin,canonicalize-conv",
    }[dialect]
    stats = tmp_path / "stats.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "penguin_opt",
            str(TORCH_XLA / name),
            "-p",
            pipeline,
            "--check-equivalence",
            "--pass-statistics-json",
            str(stats),
            "-o",
            str(tmp_path / "out.mlir"),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert "equivalence: all outputs match" in proc.stderr
    rewritten = {
        rewriter
        for per_pass in json.loads(stats.read_text()).values()
        for rewriter, st in per_pass.items()
        if st["rewritten"]
    }
    assert rewriters <= rewritten, rewritten


def test_a_public_function_the_native_conversion_erases_is_not_checkable():
    # stablehlo-legalize-to-hlo folds custom_call @mhlo.all_reduce's called computation
    # into the region of mhlo.all_reduce and erases the public @all_reduce0 (mlir-hlo's
    # stablehlo-legalize-to-hlo.mlir): the MHLO variant has no "after" for that entry.
    text = """func.func @op_all_reduce(%arg0: tensor<8xf32>, %arg1: tensor<f32>) -> (tensor<8xf32>, tensor<f32>) {
  %0:2 = stablehlo.custom_call @mhlo.all_reduce(%arg0, %arg1) {called_computations = [@all_reduce0], mhlo.attributes = {replica_groups = dense<> : tensor<0x0xi64>}} : (tensor<8xf32>, tensor<f32>) -> (tensor<8xf32>, tensor<f32>)
  return %0#0, %0#1 : tensor<8xf32>, tensor<f32>
}
func.func @all_reduce0(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<f32>
  stablehlo.return %0 : tensor<f32>
}"""
    r = shared.run_case(shared.Case("t.mlir", 0, text))
    assert not r.failed, r.status
    assert not r.checker_errors, r.checker_errors
    erased = "inline,stablehlo-legalize-to-hlo: erased public function"
    assert r.not_checkable[erased] == 1, r.not_checkable


def test_the_sweep_command_ends_without_leaked_semaphores(tmp_path):
    # The sweep's worker runs the oracles in pools of its own; killed with them open, it
    # left their semaphores to multiprocessing's resource tracker, which warned at exit.
    import subprocess
    import sys

    (tmp_path / "t.mlir").write_text(
        """func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {
  %s = stablehlo.add %a, %a : tensor<3xf32>
  return %s : tensor<3xf32>
}
"""
    )
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run(
        [sys.executable, "-m", "tools.corpus.shared", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "checked (function x variant): 2" in proc.stdout
    assert "leaked" not in proc.stderr, proc.stderr
