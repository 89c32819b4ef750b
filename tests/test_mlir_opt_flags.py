"""mlir-opt's flags, spelled and behaving as mlir-opt (MlirOptMain) has them."""

from __future__ import annotations

import functools
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.hostile import run

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "argsort_model.mlir"
PIPELINE = "inline,stablehlo-canonicalize-for-penguin"

TWO_CHUNKS = """func.func @main(%arg0: tensor<2x3xf32>) -> tensor<i32> {
  %0 = stablehlo.get_dimension_size %arg0, dim = 1 : (tensor<2x3xf32>) -> tensor<i32>
  return %0 : tensor<i32>
}
{marker}
func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.bogus %arg0 : tensor<2xf32>
  return %0 : tensor<2xf32>
}
{marker}
func.func @main(%arg0: tensor<4xf32>) -> tensor<i32> {
  %0 = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<4xf32>) -> tensor<i32>
  return %0 : tensor<i32>
}
"""

HELPER_NAMES = (
    "penguin-opt-verify",
    "penguin-sort-expand",
    "penguin-sort-refuse",
    "penguin-sort-fuse",
    "penguin.expanded_sort",
)


def dumps(stderr: str) -> list[str]:
    return re.findall(r"^// -----// IR Dump (.*) //----- //$", stderr, re.M)


def test_single_dash_long_options_and_pass_pipeline():
    a = run(EXAMPLE, "-pass-pipeline=builtin.module(inline,stablehlo-canonicalize-for-penguin)")
    b = run(EXAMPLE, "--pass-pipeline", f"builtin.module({PIPELINE})")
    c = run(EXAMPLE, "-p", PIPELINE)
    assert a.returncode == b.returncode == c.returncode == 0, a.stderr + b.stderr + c.stderr
    assert a.stdout == b.stdout == c.stdout
    assert b'"stablehlo.sort"(%arg0)' in a.stdout


def test_allow_unregistered_dialect(tmp_path):
    src = tmp_path / "u.mlir"
    src.write_text('func.func @main() {\n  "foo.bar"() : () -> ()\n  return\n}\n')
    refused = run(src, "-p", "cse")
    assert refused.returncode == 1
    assert len(refused.stderr.decode().strip().splitlines()) == 1
    for flag in ("--allow-unregistered-dialect", "-allow-unregistered-dialect"):
        ok = run(src, "-p", "cse", flag)
        assert ok.returncode == 0, ok.stderr
        assert b'"foo.bar"()' in ok.stdout


def test_unregistered_op_is_not_checkable(tmp_path):
    """--check-equivalence on a program read with --allow-unregistered-dialect was an
    internal error telling the user to pass the flag they had passed (outside tester H):
    neither oracle can run an op of a dialect nobody registered."""
    src = tmp_path / "u.mlir"
    src.write_text(
        "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
        '  %0 = "foo.bar"(%a) : (tensor<4xf32>) -> tensor<4xf32>\n'
        "  return %0 : tensor<4xf32>\n}\n"
    )
    out = tmp_path / "out.mlir"
    proc = run(src, "-p", "cse", "--allow-unregistered-dialect", "--check-equivalence", "-o", out)
    err = proc.stderr.decode()
    assert proc.returncode == 4, err
    assert err.strip().splitlines()[-1] == (
        "equivalence: not checkable: cannot execute 'foo.bar': an op of an unregistered dialect"
    ), err
    assert "internal error" not in err


_PRINTER_TITLES = """
import re, sys
from penguin_opt.context import make_context
from jaxlib.mlir import ir, passmanager
ctx = make_context()
with ctx:
    m = ir.Module.parse(sys.stdin.read())
    pm = passmanager.PassManager.parse(sys.argv[1])
    pm.enable_ir_printing(print_before_all=True, print_after_all=False)
    pm.run(m.operation)
"""
EMPTY_FUNCTION = "func.func private @f() {\n  return\n}\n"


@functools.cache  # a child process per pipeline, once per test run
def mlir_titles(pipeline: str, source: str = EMPTY_FUNCTION) -> tuple[str, ...]:
    """The titles MLIR's own IR printer (this jaxlib's, driven directly) gives the passes
    of ``pipeline``: what mlir-opt of the same LLVM prints in its dump headers."""
    proc = subprocess.run(
        [sys.executable, "-c", _PRINTER_TITLES, pipeline],
        input=source.encode(),
        capture_output=True,
        check=True,
    )
    found = re.findall(r"^// -----// IR Dump Before (.*) //----- //$", proc.stderr.decode(), re.M)
    return tuple(dict.fromkeys(found))


def ours(name: str, arg: str, options: str) -> str:
    """A title of one of our passes, in the form MLIR's printer uses for its own."""
    if mlir_titles("builtin.module(symbol-dce)", "module {}")[0].endswith(": symbol-dce"):
        return f"{name}: {arg}{{{options}}}"  # newer MLIR: NAME: ARG{options}
    return f"{name} ({arg})"


INLINE = ("Inline", "inline", "max-depth=64 max-inlined-ops=2000000")
FOR_PENGUIN = (
    "StablehloCanonicalizeForPenguin",
    "stablehlo-canonicalize-for-penguin",
    "broadcast-num-elements-to-fold=65536 resize-nearest-grad-mode=mean all-functions=false",
)


def test_print_ir_before_and_after_all_name_only_user_passes():
    proc = run(
        EXAMPLE, "-p", f"{PIPELINE},cse", "--mlir-print-ir-before-all", "--mlir-print-ir-after-all"
    )
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr.decode()
    (cse,) = mlir_titles("builtin.module(cse)")
    assert cse.startswith("CSE"), cse  # MLIR's name for the pass, not its argument
    assert dumps(err) == [
        f"Before {ours(*INLINE)}",
        f"After {ours(*INLINE)}",
        f"Before {ours(*FOR_PENGUIN)}",
        f"After {ours(*FOR_PENGUIN)}",
        f"Before {cse}",
        f"After {cse}",
    ]
    for helper in HELPER_NAMES:
        assert helper not in err
    # the dump after cse shows the penguin form, as the IR stands between the passes
    assert '"stablehlo.sort"(%arg0) <{' in err.split(f"After {cse}")[1]


NESTED = """func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<4xf32>
  %1 = stablehlo.add %arg0, %arg0 : tensor<4xf32>
  %2 = stablehlo.multiply %0, %1 : tensor<4xf32>
  return %2 : tensor<4xf32>
}
func.func private @g(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  return %arg0 : tensor<4xf32>
}
"""


def test_native_passes_print_as_mlir_prints_them(tmp_path):
    """A native element's dumps are MLIR's own: one per pass it runs, titled and scoped
    as mlir-opt prints them (a pass nested under func.func prints each function it ran
    on; with --mlir-print-ir-module-scope the module, naming the function)."""
    src = tmp_path / "nested.mlir"
    src.write_text(NESTED)
    args = (src, "-p", "func.func(cse,canonicalize)", "--mlir-print-ir-after-all")
    plain, scoped = run(*args), run(*args, "--mlir-print-ir-module-scope")
    assert plain.returncode == scoped.returncode == 0, plain.stderr + scoped.stderr
    cse, canonicalize = mlir_titles("builtin.module(func.func(cse,canonicalize))")
    assert dumps(plain.stderr.decode()) == [f"After {cse}", f"After {canonicalize}"] * 2
    err = plain.stderr.decode()
    first = err.split("//----- //\n")[1]
    assert first.startswith("func.func @main("), err
    assert "module" not in first, err
    assert dumps(scoped.stderr.decode()) == [
        f"After {t} ('func.func' operation: @{f})"
        for f in ("main", "g")
        for t in (cse, canonicalize)
    ]
    assert scoped.stderr.decode().split("//----- //\n")[1].startswith("module {")
    assert plain.stdout == scoped.stdout == run(src, "-p", "func.func(cse,canonicalize)").stdout


def test_module_scope_names_the_op_for_every_pass(tmp_path):
    """With --mlir-print-ir-module-scope MLIR's headers name the op the pass ran on (our
    passes: the module, with its symbol if it has one); a native pass run in a child
    process (hlo-legalize-to-stablehlo, which can abort) is printed by MLIR's printer
    there."""
    src = tmp_path / "named.mlir"
    src.write_text("module @m {\n" + NESTED + "}\n")
    pipeline = (
        "stablehlo-legalize-to-hlo,hlo-legalize-to-stablehlo,stablehlo-canonicalize-for-penguin"
    )
    proc = run(src, "-p", pipeline, "--mlir-print-ir-after-all", "--mlir-print-ir-module-scope")
    assert proc.returncode == 0, proc.stderr
    to_hlo, to_stablehlo = mlir_titles(
        "builtin.module(stablehlo-legalize-to-hlo,hlo-legalize-to-stablehlo)"
    )
    assert dumps(proc.stderr.decode()) == [
        f"After {t} ('builtin.module' operation: @m)"
        for t in (to_hlo, to_stablehlo, ours(*FOR_PENGUIN))
    ]


def test_after_change_and_after_failure_narrow_after_all(tmp_path):
    """As in mlir-opt, --mlir-print-ir-after-change and --mlir-print-ir-after-failure
    narrow --mlir-print-ir-after-all, for native passes and ours alike."""
    src = tmp_path / "nested.mlir"
    src.write_text(NESTED)
    pipeline = "cse,symbol-dce,stablehlo-canonicalize-for-penguin"
    changed = run(src, "-p", pipeline, "--mlir-print-ir-after-all", "--mlir-print-ir-after-change")
    assert changed.returncode == 0, changed.stderr
    (cse,) = mlir_titles("builtin.module(cse)")
    (symbol_dce,) = mlir_titles("builtin.module(symbol-dce)")
    # cse merges the adds in @main (@g has nothing to merge), symbol-dce erases @g, ours
    # finds nothing to rewrite
    assert dumps(changed.stderr.decode()) == [
        f"After {cse}",
        f"After {symbol_dce}",
    ]
    failing = tmp_path / "bad.mlir"
    failing.write_text(RESIZE_WITH_TWO_OPERANDS)
    failed = run(
        failing,
        "-p",
        "cse,stablehlo-canonicalize-for-penguin",
        "--mlir-print-ir-after-all",
        "--mlir-print-ir-after-failure",
    )
    assert failed.returncode == 1
    name, arg, options = FOR_PENGUIN
    assert dumps(failed.stderr.decode()) == [f"After {ours(name + ' Failed', arg, options)}"]
    # a native pass that fails: MLIR's header, whether MLIR's printer prints the dump or
    # penguin-opt does (--mlir-print-debuginfo: MLIR's printer names no source file)
    refine = "stablehlo-refine-arguments{types='tensor<2xi32>,tensor<3xf32>'}"
    headers = []
    for extra in ([], ["--mlir-print-debuginfo"]):
        proc = run(src, "-p", refine, "--mlir-print-ir-after-failure", *extra)
        assert proc.returncode == 1
        headers.append(dumps(proc.stderr.decode()))
    assert headers[0] == headers[1], headers
    (title,) = headers[0]
    assert title.startswith("After StablehloRefineArgumentsPass Failed"), title


def test_print_ir_before_and_after_named_passes():
    proc = run(
        EXAMPLE,
        "-p",
        f"{PIPELINE},cse",
        "--mlir-print-ir-before=cse",
        "-mlir-print-ir-after=inline,cse",
    )
    assert proc.returncode == 0, proc.stderr
    (cse,) = mlir_titles("builtin.module(cse)")
    assert dumps(proc.stderr.decode()) == [
        f"After {ours(*INLINE)}",
        f"Before {cse}",
        f"After {cse}",
    ]


def test_print_ir_after_change_skips_passes_that_change_nothing():
    proc = run(
        EXAMPLE,
        "-p",
        f"{PIPELINE},symbol-dce,stablehlo-canonicalize-for-penguin",
        "--mlir-print-ir-after-change",
    )
    assert proc.returncode == 0, proc.stderr
    # the second for-penguin run and symbol-dce find nothing left to change
    assert dumps(proc.stderr.decode()) == [f"After {ours(*INLINE)}", f"After {ours(*FOR_PENGUIN)}"]


RESIZE_WITH_TWO_OPERANDS = (
    "func.func @main(%arg0: tensor<1x8x8x3xf32>, %arg1: tensor<1x8x8x3xf32>)"
    " -> tensor<1x4x4x3xf32> {\n"
    "  %0 = stablehlo.custom_call @ResizeNearestGrad(%arg0, %arg1)"
    " : (tensor<1x8x8x3xf32>, tensor<1x8x8x3xf32>) -> tensor<1x4x4x3xf32>\n"
    "  return %0 : tensor<1x4x4x3xf32>\n}\n"
)


def test_print_ir_after_failure(tmp_path):
    src = tmp_path / "bad.mlir"
    src.write_text(RESIZE_WITH_TWO_OPERANDS)
    proc = run(src, "-p", "cse,stablehlo-canonicalize-for-penguin", "--mlir-print-ir-after-failure")
    assert proc.returncode == 1
    err = proc.stderr.decode()
    name, arg, options = FOR_PENGUIN
    assert dumps(err) == [f"After {ours(name + ' Failed', arg, options)}"]
    assert err.strip().splitlines()[-1].endswith("ResizeNearestGrad: only one operand allowed")


def test_timing_report_lists_the_pipeline_and_nothing_else():
    proc = run(EXAMPLE, "-p", f"{PIPELINE},cse", "--mlir-timing")
    assert proc.returncode == 0, proc.stderr
    report = proc.stderr.decode().split("Execution time report")[1]
    names = re.findall(r"^\s+\d+\.\d+ \(\s*[\d.]+%\)\s+(\S+)$", report, re.M)
    assert names == [
        "Parser",
        "inline",
        "stablehlo-canonicalize-for-penguin",
        "cse",
        "Output",
        "Total",
    ]


def test_emit_bytecode_round_trips_penguin_sorts(tmp_path):
    text = run(EXAMPLE, "-p", PIPELINE)
    out = tmp_path / "o.mlirbc"
    proc = run(EXAMPLE, "-p", PIPELINE, "--emit-bytecode", "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes().startswith(b"ML\xefR")
    back = run(out)
    assert back.returncode == 0, back.stderr
    assert back.stdout == text.stdout
    native = run(out, "-p", "cse")  # native passes take it too
    assert native.returncode == 0, native.stderr
    assert not back.stderr


def test_elide_elementsattrs():
    proc = run(EXAMPLE, "-p", PIPELINE, "--mlir-elide-elementsattrs-if-larger=2")
    assert proc.returncode == 0, proc.stderr
    assert b"__elided__" in proc.stdout
    assert b"1.000000e+00" not in proc.stdout.split(b"sort")[-1]


def test_dump_pass_pipeline_spells_out_every_option():
    proc = run(
        EXAMPLE,
        "-p",
        "inline,stablehlo-canonicalize-for-penguin,canonicalize",
        "--dump-pass-pipeline",
    )
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr.decode()
    assert "Pass Manager with 3 passes:" in err
    line = next(x for x in err.splitlines() if x.startswith("builtin.module("))
    assert "inline{max-depth=64 max-inlined-ops=2000000}" in line
    assert "broadcast-num-elements-to-fold=65536" in line
    assert "canonicalize{" in line
    assert "max-iterations=10" in line


def test_every_pass_is_a_flag_in_command_line_order():
    flagged = run(EXAMPLE, "--inline", "-stablehlo-canonicalize-for-penguin", "--pass-statistics")
    piped = run(EXAMPLE, "-p", PIPELINE, "--pass-statistics")
    assert flagged.returncode == piped.returncode == 0, flagged.stderr
    assert flagged.stdout == piped.stdout
    assert flagged.stderr == piped.stderr
    assert b'"stablehlo.sort"(%arg0)' in flagged.stdout


def test_pass_flags_take_options_and_native_passes():
    proc = run(
        EXAMPLE,
        "-cse",
        "--stablehlo-canonicalize-for-penguin=broadcast-num-elements-to-fold=1 all-functions",
        "--canonicalize=max-iterations=3 test-convergence=false",
        "--dump-pass-pipeline",
    )
    assert proc.returncode == 0, proc.stderr
    line = next(x for x in proc.stderr.decode().splitlines() if x.startswith("builtin.module("))
    assert line.startswith("builtin.module(cse,stablehlo-canonicalize-for-penguin{")
    assert "broadcast-num-elements-to-fold=1 " in line
    assert "all-functions=true" in line
    assert "max-iterations=3" in line.split("canonicalize{")[-1]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cse", "-p", "inline"], "pass flags (--cse) cannot be combined with -p"),
        (["--pass-pipeline=builtin.module(cse)", "-inline"], "cannot be combined"),
        (["--no-such-pass"], "unrecognized arguments: --no-such-pass"),
        (["--canonicalize=bogus=1"], "no such option bogus"),
        (["--inline=max-depth=x"], "option 'max-depth' expects an integer"),
    ],
)
def test_pass_flag_errors(args, message):
    proc = run(EXAMPLE, *args)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr.decode()
    assert proc.stdout == b""


def test_an_option_value_is_never_a_pass_flag():
    from penguin_opt.cli import build_parser, pass_flags

    argv = ["in.mlir", "-o", "--cse", "--report", "-inline", "-p=x", "--pass-statistics", "-cse"]
    rest, elements = pass_flags(build_parser(), argv)
    assert elements == ["cse"]
    assert rest == argv[:-1]
    assert pass_flags(build_parser(), ["--", "--cse"]) == (["--", "--cse"], [])


def test_mlir_pass_statistics_is_an_alias():
    a = run(EXAMPLE, "-p", PIPELINE, "--pass-statistics")
    b = run(EXAMPLE, "-p", PIPELINE, "--mlir-pass-statistics")
    assert a.returncode == b.returncode == 0
    assert b"Pass statistics report" in a.stderr
    assert a.stderr == b.stderr


@pytest.mark.parametrize(
    ("value", "verified"), [("1", True), ("true", True), ("0", False), ("false", False)]
)
def test_verify_each_takes_mlir_opt_booleans(value, verified):
    proc = run(EXAMPLE, f"--verify-each={value}", "-p", PIPELINE)
    assert proc.returncode == 0, proc.stderr


def test_no_pipeline_parses_verifies_and_prints(tmp_path):
    import jax
    import jax.numpy as jnp

    from penguin_opt._compat import hlo_text_to_proto

    hlo = jax.jit(jnp.sin).lower(jnp.zeros(3)).compiler_ir("hlo").as_hlo_text()
    pb = tmp_path / "model.hlo_module.pb"
    pb.write_bytes(hlo_text_to_proto(hlo))
    proc = run(pb)
    assert proc.returncode == 0, proc.stderr
    assert b"stablehlo.sine" in proc.stdout
    bad = tmp_path / "bad.mlir"
    bad.write_text(
        "func.func @main(%a: tensor<2xf32>) -> tensor<3xf32> {\n  return %a : tensor<2xf32>\n}\n"
    )
    proc = run(bad)
    assert proc.returncode == 1
    assert proc.stderr.decode().startswith(f"{bad}:2:3: error:")


def test_split_input_file_continues_after_a_failed_chunk(tmp_path):
    src = tmp_path / "chunks.mlir"
    src.write_text(TWO_CHUNKS.replace("{marker}", "// -----"))
    proc = run(src, "-p", "stablehlo-canonicalize-for-penguin", "-split-input-file")
    assert proc.returncode == 1
    out = proc.stdout.decode()
    # the first and last chunks' results are printed, separated by the output marker
    assert out.count("// -----") == 2
    assert "dense<3>" in out
    assert "dense<4>" in out
    err = proc.stderr.decode().strip().splitlines()
    assert len(err) == 1
    assert f"{src}:7:" in err[0]
    # with -o, a failed chunk means no output file (as mlir-opt)
    target = tmp_path / "out.mlir"
    assert run(src, "-p", "cse", "--split-input-file", "-o", target).returncode == 1
    assert not target.exists()


def test_split_input_file_with_markers(tmp_path):
    src = tmp_path / "chunks.mlir"
    src.write_text(
        TWO_CHUNKS.replace("{marker}", "#### split").replace("stablehlo.bogus", "stablehlo.abs")
    )
    proc = run(
        src,
        "-p",
        "stablehlo-canonicalize-for-penguin",
        "--split-input-file=#### split",
        "--output-split-marker=// ===",
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode()
    assert out.count("// ===\n") == 2
    assert "// -----" not in out


def test_verify_diagnostics_fails_on_unexpected_warnings(tmp_path):
    src = tmp_path / "w.mlir"
    body = (
        "func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {{\n"
        "  {expect}\n"
        '  %0 = stablehlo.custom_call @AwsNeuronErf(%arg0) {{backend_config = "{{a: 1}}"}}'
        " : (tensor<4xf32>) -> tensor<4xf32>\n"
        "  return %0 : tensor<4xf32>\n}}\n"
    )
    src.write_text(body.format(expect=""))
    pipeline = "stablehlo-canonicalize-for-penguin"
    unexpected = run(src, "-p", pipeline, "--verify-diagnostics")
    assert unexpected.returncode == 1
    assert b"unexpected warning" in unexpected.stderr
    assert not unexpected.stdout  # no output when the diagnostics do not verify
    assert run(src, "-p", pipeline, "--verify-diagnostics=only-expected").returncode == 0
    src.write_text(body.format(expect="// expected-warning @+1 {{backend_config}}"))
    expected = run(src, "-p", pipeline, "--verify-diagnostics")
    assert expected.returncode == 0, expected.stderr


def test_list_passes_includes_native_passes():
    proc = run("--list-passes")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode()
    for native in (
        "cse",
        "canonicalize",
        "symbol-dce",
        "stablehlo-legalize-to-hlo",
        "hlo-legalize-to-stablehlo",
        "stablehlo-legalize-deprecated-ops",
    ):
        assert re.search(rf"^  {re.escape(native)} \[native\]", out, re.M), native
    assert re.search(r"^  stablehlo-canonicalize-for-penguin: ", out, re.M)
    assert not re.search(r"^  inline \[native\]", out, re.M)  # ours takes the name
    # every listed native pass can be named in a pipeline
    names = re.findall(r"^  (\S+) \[native\]", out, re.M)
    assert len(names) > 20


def test_version_and_module_entry_point():
    from penguin_opt import __version__

    for tool in ("penguin_opt", "penguin_opt.cli"):
        proc = run("--version", tool=tool)
        assert proc.returncode == 0
        assert proc.stdout.decode().strip() == f"penguin-opt {__version__}"
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", __version__)


def test_broken_pipe_exits_quietly():
    proc = subprocess.run(
        f"{sys.executable} -m penguin_opt --list-passes | head -1",
        shell=True,
        capture_output=True,
        cwd=ROOT,
    )
    assert proc.stdout.decode().startswith("penguin-opt passes:")
    assert b"Traceback" not in proc.stderr
    assert b"BrokenPipe" not in proc.stderr


@pytest.mark.parametrize("flag", [[], ["--mlir-disable-threading"], ["-mlir-disable-threading=1"]])
def test_disable_threading_runs_mlir_single_threaded(monkeypatch, tmp_path, flag):
    from penguin_opt import api, cli

    threads = []
    load = api.load_source

    def recording(source, ctx):
        threads.append(ctx.get_num_threads())
        return load(source, ctx)

    monkeypatch.setattr(api, "load_source", recording)
    out = tmp_path / "o.mlir"
    assert cli.main([str(EXAMPLE), "--inline", *flag, "-o", str(out)]) == 0
    assert out.read_text().startswith("module")
    if flag:
        assert threads == [1]
    else:
        assert threads[0] >= 1


# mlir-opt's expectation syntax beyond plain `expected-error {{text}}`: each chunk holds
# only what MLIR's own SourceMgrDiagnosticVerifierHandler accepts.
EXPECTATIONS_AS_MLIR_OPT = """\
func.func @regex_expectation(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error-re@+1 {{result #{{[0-9]+}} must be {{.*}}, but got 'tensor<4xi1>'}}
  %0 = "stablehlo.abs"(%arg0) : (tensor<4xf32>) -> tensor<4xi1>
  return %arg0 : tensor<4xf32>
}

// -----

func.func @below_designator(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@below {{requires the same shape for all operands and results}}
  %0 = "stablehlo.add"(%arg0, %arg0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<5xf32>
  return %arg0 : tensor<4xf32>
}

// -----

func.func @above_designator(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.add"(%arg0, %arg0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<5xf32>
  // expected-error@above {{requires the same shape}}
  return %arg0 : tensor<4xf32>
}

// -----

func.func @note_of_an_error(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.abs %arg0 : tensor<4xf32>
  // expected-note@-1 {{previously defined here}}
  // expected-error@+1 {{redefinition of SSA value '%0'}}
  %0 = stablehlo.abs %arg0 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-error@unknown {{but got 'tensor<4xi1>'}}
func.func @unknown_location(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.abs"(%arg0) : (tensor<4xf32>) -> tensor<4xi1> loc(unknown)
  return %arg0 : tensor<4xf32>
}
"""


def test_verify_diagnostics_takes_mlir_opts_expectation_syntax(tmp_path):
    """-re, @below, @above, @unknown and expected-note, each as mlir-opt matches them."""
    src = tmp_path / "syntax.mlir"
    src.write_text(EXPECTATIONS_AS_MLIR_OPT)
    proc = run(src, "--split-input-file", "--verify-diagnostics")
    assert proc.returncode == 0, proc.stderr.decode()
    assert not proc.stderr


def test_verify_diagnostics_reports_as_mlir_opt_does(tmp_path):
    """Each problem is one line at the expectation's own line and column (an unexpected
    diagnostic: at its location), in mlir-opt's words."""
    src = tmp_path / "wrong.mlir"
    src.write_text(
        "func.func @wrong_severity(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  // expected-warning@+1 {{must be}}\n"
        '  %0 = "stablehlo.abs"(%arg0) : (tensor<4xf32>) -> tensor<4xi1>\n'
        "  return %arg0 : tensor<4xf32>\n}\n"
        "// -----\n"
        "func.func @bad_regex(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
        "    // expected-error-re {{a {{[}}}}\n"
        "  // expected-remark {{never emitted}}\n"
        "  return %arg0 : tensor<4xf32>\n}\n"
    )
    proc = run(src, "--split-input-file", "--verify-diagnostics")
    assert proc.returncode == 1
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 4, lines
    assert lines[0] == f"{src}:2:6: error: 'error' diagnostic emitted when expecting a 'warning'"
    assert lines[1] == f'{src}:2:6: error: expected warning "must be" was not produced'
    assert lines[2].startswith(f"{src}:8:8: error: invalid regex: ")  # Python's words follow
    assert lines[3] == f'{src}:9:6: error: expected remark "never emitted" was not produced'
    # An unexpected diagnostic: at its own location.
    src.write_text(src.read_text().replace("// expected-warning@+1 {{must be}}", ""))
    proc = run(src, "--split-input-file", "--verify-diagnostics=only-expected")
    assert "unexpected" not in proc.stderr.decode()
    proc = run(src, "--split-input-file", "--verify-diagnostics")
    assert (
        proc.stderr.decode()
        .splitlines()[0]
        .startswith(f"{src}:3:8: error: unexpected error: 'stablehlo.abs' op result #0 must be")
    )


def test_print_local_scope_writes_locations_where_they_are_used(tmp_path):
    """--mlir-print-local-scope, as mlir-opt: no #loc aliases, each location inline; also
    in the IR dumps."""
    src = tmp_path / "loc.mlir"
    src.write_text(
        '#named = loc("model.py":3:7)\n'
        "func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %0 = stablehlo.abs %arg0 : tensor<4xf32> loc(#named)\n"
        "  return %0 : tensor<4xf32>\n}\n"
    )
    aliased = run(src, "--mlir-print-debuginfo").stdout.decode()
    assert re.search(r"^#loc\d* = loc\(", aliased, re.M), aliased
    proc = run(
        src,
        "-p",
        "cse",
        "-mlir-print-debuginfo",
        "-mlir-print-local-scope",
        "--mlir-print-ir-after-all",
    )
    assert proc.returncode == 0, proc.stderr
    for text in (proc.stdout.decode(), proc.stderr.decode()):
        assert 'stablehlo.abs %arg0 : tensor<4xf32> loc("model.py":3:7)' in text, text
        assert not re.search(r"^#loc", text, re.M), text


def test_a_blank_chunk_is_an_empty_module(tmp_path):
    """A marker at the end of a file (or two in a row) leaves a blank chunk: mlir-opt
    prints an empty module for it; a whole input that is blank stays an error."""
    src = tmp_path / "trailing.mlir"
    src.write_text("func.func @f() {\n  return\n}\n// -----\n\n")
    proc = run(src, "--split-input-file")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode().split("// -----\n")[1] == "module {\n}\n"
    # every pass takes it: for-penguin has no main function to look for in it
    for pipeline in ("stablehlo-canonicalize-for-penguin,stablehlo-canonicalize-conv", "inline"):
        proc = run(src, "--split-input-file", "-p", pipeline)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.decode().split("// -----\n")[1] == "module {\n}\n"
    blank = tmp_path / "blank.mlir"
    blank.write_text("\n\n")
    proc = run(blank, "--split-input-file")
    assert proc.returncode == 1
    assert proc.stderr.decode().strip() == f"{blank}: error: the input is empty"


def test_verify_diagnostics_matches_line_zero_of_an_implicit_module(tmp_path):
    """A diagnostic on the module MLIR wraps the input in is at line 0 of the file; an
    expectation ``@-N`` pointing there matches it (upstream's vhlo_to_version tests)."""
    src = tmp_path / "nomain.mlir"
    src.write_text(
        "// expected-error@-1 {{cannot find the main function}}\n"
        "func.func @f(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  return %arg0 : tensor<4xf32>\n}\n"
        "func.func @g(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  return %arg0 : tensor<4xf32>\n}\n"
    )
    proc = run(src, "-p", "stablehlo-canonicalize-for-penguin", "--verify-diagnostics")
    assert proc.returncode == 0, proc.stderr.decode()
    src.write_text(src.read_text().replace("@-1", "@+1"))
    proc = run(src, "-p", "stablehlo-canonicalize-for-penguin", "--verify-diagnostics")
    assert proc.returncode == 1
    assert f"{src}: error: unexpected error: stablehlo-canonicalize-for-penguin: cannot" in (
        proc.stderr.decode()
    )


def test_debuginfo_names_the_input_file(tmp_path):
    """--mlir-print-debuginfo on text without a ``module`` around it: the locations are
    the file's (``<stdin>`` for stdin), as mlir-opt prints them, in the output and the IR
    dumps; an odd file name is escaped as MLIR escapes strings and reads back."""
    body = "func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n  return %arg0 : tensor<4xf32>\n}\n"
    src = tmp_path / 'we"ird\\name.mlir'
    src.write_text(body)
    escaped = str(src).replace("\\", "\\\\").replace('"', "\\22")
    proc = run(src, "-p", "cse", "--mlir-print-debuginfo", "--mlir-print-ir-after-all")
    assert proc.returncode == 0, proc.stderr
    for text in (proc.stdout.decode(), proc.stderr.decode()):
        assert f'loc("{escaped}":1:17)' in text, text
        assert 'loc("-"' not in text, text
    again = run("-", "--mlir-print-debuginfo", stdin=proc.stdout)
    assert again.stdout == proc.stdout, again.stderr  # the escaped name reads back
    piped = run("-", "--mlir-print-debuginfo", stdin=body.encode())
    assert 'loc("<stdin>":1:17)' in piped.stdout.decode(), piped.stdout


def test_resource_names_are_kept(tmp_path):
    """A ``dense_resource`` keeps its name, as mlir-opt prints it, with or without a
    ``module`` around the ops (text without one is parsed once: a second parse in the
    context renamed the resource ``weights_1``)."""
    data = "0x04000000" + "0000803F000000400000404000008040"  # alignment, then 1..4 as f32
    func = (
        "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %w = stablehlo.constant dense_resource<weights> : tensor<4xf32>\n"
        "  %0 = stablehlo.add %w, %x : tensor<4xf32>\n"
        "  return %0 : tensor<4xf32>\n}\n"
    )
    blobs = f'{{-#\n  dialect_resources: {{\n    builtin: {{\n      weights: "{data}"\n    }}\n  }}\n#-}}\n'
    for text in (func + blobs, "module {\n" + func + "}\n" + blobs):
        src = tmp_path / "w.mlir"
        src.write_text(text)
        proc = run(src, "-p", "stablehlo-canonicalize-for-penguin")
        assert proc.returncode == 0, proc.stderr
        out = proc.stdout.decode()
        assert "dense_resource<weights> : tensor<4xf32>" in out, out
        assert f'weights: "{data}"' in out, out
