"""The penguin-opt command line: inputs by content, pipelines, errors and exit codes."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "argsort_model.mlir"

SIMPLE = """func.func @main(%arg0: tensor<2x3xf32>) -> tensor<i32> {
  %0 = stablehlo.get_dimension_size %arg0, dim = 1 : (tensor<2x3xf32>) -> tensor<i32>
  return %0 : tensor<i32>
}
"""


def penguin_opt(*args, stdin: bytes | None = None):
    return subprocess.run(
        [sys.executable, "-m", "penguin_opt.cli", *map(str, args)],
        input=stdin,
        capture_output=True,
        cwd=ROOT,
    )


def test_bundled_example_end_to_end():
    proc = penguin_opt(
        EXAMPLE, "-p", "inline,stablehlo-canonicalize-for-penguin", "--pass-statistics"
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode()
    assert '"stablehlo.sort"(%arg0) <{dimension = 1' in out
    assert "stablehlo.iota" not in out
    assert "stablehlo.convert %cst" not in out
    stats = proc.stderr.decode()
    assert "fuseIotaSort" in stats
    assert "1 rewritten" in stats


def test_output_file_written_atomically_and_input_untouched(tmp_path):
    src = tmp_path / "in.mlir"
    src.write_text(SIMPLE)
    out = tmp_path / "out.mlir"
    proc = penguin_opt(src, "-o", out, "-p", "stablehlo-canonicalize-for-penguin")
    assert proc.returncode == 0, proc.stderr
    assert "stablehlo.constant dense<3> : tensor<i32>" in out.read_text()
    assert src.read_text() == SIMPLE
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".penguin")] == []


def test_refuses_to_overwrite_input(tmp_path):
    src = tmp_path / "in.mlir"
    src.write_text(SIMPLE)
    proc = penguin_opt(src, "-o", src, "-p", "stablehlo-canonicalize-for-penguin")
    assert proc.returncode == 2
    assert src.read_text() == SIMPLE


@pytest.mark.parametrize(
    ("first", "second"),
    [("-o", "--pass-statistics-json"), ("-o", "--remarks-file"), ("--report", "--remarks-file")],
)
def test_two_outputs_in_one_file_are_refused(tmp_path, first, second):
    """Each output of a run written to the same file lost the other (exit 0)."""
    src = tmp_path / "in.mlir"
    src.write_text(SIMPLE)
    same = tmp_path / "same.txt"
    args = [src, "-p", "stablehlo-canonicalize-for-penguin", first, same, second]
    proc = penguin_opt(*args, tmp_path / ".." / tmp_path.name / "same.txt")
    assert proc.returncode == 2, proc.stderr
    assert f"{first} and {second} name the same file" in proc.stderr.decode()
    assert not same.exists()


def test_stdin_to_stdout():
    proc = penguin_opt("-", "-p", "stablehlo-canonicalize-for-penguin", stdin=SIMPLE.encode())
    assert proc.returncode == 0, proc.stderr
    assert b"dense<3>" in proc.stdout


def test_parse_error_is_one_line_with_location_and_no_output(tmp_path):
    src = tmp_path / "bad.mlir"
    src.write_text("func.func @main() {\n  %0 = stablehlo.bogus\n}\n")
    out = tmp_path / "out.mlir"
    proc = penguin_opt(src, "-o", out, "-p", "stablehlo-canonicalize-for-penguin")
    assert proc.returncode == 1
    lines = proc.stderr.decode().strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"{src}:2:"), lines[0]
    assert "Traceback" not in proc.stderr.decode()
    assert not out.exists()


def test_pass_error_writes_nothing(tmp_path):
    src = tmp_path / "in.mlir"
    src.write_text(
        "func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<2xf32> {\n"
        "  %0 = stablehlo.custom_call @ResizeNearestGrad(%a, %b) : "
        "(tensor<4xf32>, tensor<4xf32>) -> tensor<2xf32>\n"
        "  return %0 : tensor<2xf32>\n}\n"
    )
    out = tmp_path / "out.mlir"
    out.write_text("previous")
    proc = penguin_opt(src, "-o", out, "-p", "stablehlo-canonicalize-for-penguin")
    assert proc.returncode == 1
    err = proc.stderr.decode().strip()
    assert err == (
        f"{src}:2:8: error: 'stablehlo.custom_call' op ResizeNearestGrad: only one operand allowed"
    )
    assert out.read_text() == "previous"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["-p", "no-such-pass"], "unknown pass 'no-such-pass'"),
        (  # it said "unknown pass" (outside tester H): the pass exists, not on functions
            ["--pass-pipeline", "builtin.module(func.func(cse,canonicalize-conv{x=1}))"],
            "'canonicalize-conv' is a module pass: it runs only at the top level of the pipeline, not nested under 'func.func'",
        ),
        (["-p", "stablehlo-canonicalize-for-penguin{bogus=1}"], "unknown option 'bogus'"),
        (
            ["-p", "stablehlo-canonicalize-for-penguin{resize-nearest-grad-mode=max}"],
            "must be one of mean, sum",
        ),
        (
            ["-p", "canonicalize-for-penguin{broadcast-num-elements-to-fold=x}"],
            "expects an integer",
        ),
        (
            ["-p", "stablehlo-canonicalize-conv{max-stride-or-padding=-5}"],
            "option 'max-stride-or-padding' must be >= 0, got -5",
        ),
        (  # the value went to the next token (it said "got ''")
            ["-p", "canonicalize-for-penguin{broadcast-num-elements-to-fold= 5}"],
            "option 'broadcast-num-elements-to-fold' has no value after '='",
        ),
        (  # MLIR's integer options are 64-bit
            ["-p", "canonicalize-for-penguin{broadcast-num-elements-to-fold=99999999999999999999}"],
            "must be <= 9223372036854775807",
        ),
        (["--no-such-flag"], "unrecognized arguments"),
        # One dash and the letter of -h: an unknown long option, not -h with a value.
        (["-hlo-no-such-pass"], "unrecognized arguments: -hlo-no-such-pass"),
        (["-p", " "], "empty pipeline"),
        (["-p", "inline,,cse"], "empty pass name in pipeline 'inline,,cse'"),  # as MLIR's
        (["--pass-pipeline", "builtin.module(cse,)"], "empty pass name"),
        (["-p", "cse", "--pass-pipeline", "builtin.module(cse)"], "not both"),
        (["-p", "cse", "--mlir-print-ir-after=nope"], "'nope' is not a pass of the pipeline"),
        (["-p", "cse", "--mlir-print-ir-after-al"], "unrecognized arguments"),  # no abbrev
        (["-p", "cse", "--verify-each=maybe"], "expected true/false"),
        (["-p", "cse", "--verify-diagnostics=some"], "invalid choice"),
        (["-p", "cse", "--emit-bytecode", "--split-input-file"], "cannot be combined"),
        (["-p", "cse", "--emit=bytecode", "--verify-diagnostics"], "cannot be combined"),
        (["-p", "cse", "--mlir-elide-elementsattrs-if-larger=-1"], "N >= 0"),
        (["--check-equivalence"], "needs a pipeline"),
        # the message of the value's rule, not Python's name for it ("invalid _x value")
        (["--jobs", "0"], "argument --jobs: expected an integer > 0, got 0"),
        (["--jobs", "abc"], "argument --jobs: expected an integer, got 'abc'"),
        (["--executor", "foo"], "expected 'local' or 'dask://HOST:PORT', got 'foo'"),
        (["--check-equivalence", "--trials", "0"], "argument --trials: expected an integer > 0"),
    ],
)
def test_usage_errors_exit_2(args, needle, tmp_path):
    src = tmp_path / "in.mlir"
    src.write_text(SIMPLE)
    proc = penguin_opt(src, *args)
    assert proc.returncode == 2, proc.stderr
    err = proc.stderr.decode().strip()
    assert len(err.splitlines()) == 1, err
    assert needle in err, err


def test_missing_input_file():
    proc = penguin_opt("/nonexistent/x.mlir", "-p", "cse")
    assert proc.returncode == 1
    assert proc.stderr.decode().startswith("/nonexistent/x.mlir: error: cannot read input")


def test_native_passes_mix_and_func_nesting():
    proc = penguin_opt(
        EXAMPLE,
        "-p",
        "inline,stablehlo-canonicalize-for-penguin,canonicalize,"
        "cse,symbol-dce,stablehlo-legalize-deprecated-ops",
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode()
    # penguin form survives native passes after it (expanded for them, fused back)
    assert '"stablehlo.sort"(%arg0) <{dimension = 1' in out
    assert "func.func private @argsort" not in out


def test_mhlo_round_trip_pipeline():
    proc = penguin_opt(
        EXAMPLE,
        "-p",
        "inline,stablehlo-legalize-to-hlo,canonicalize-for-penguin,hlo-legalize-to-stablehlo",
    )
    assert proc.returncode == 0, proc.stderr
    assert '"stablehlo.sort"(%arg0)' in proc.stdout.decode()


def test_timing_and_print_ir_after_all():
    proc = penguin_opt(
        EXAMPLE,
        "-p",
        "inline,stablehlo-canonicalize-for-penguin",
        "--mlir-timing",
        "--mlir-print-ir-after-all",
    )
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr.decode()
    assert "Execution time report" in err
    assert "stablehlo-canonicalize-for-penguin" in err.split("Execution time report")[1]
    assert "IR Dump After" in err


def test_generic_output_reads_back(tmp_path):
    proc = penguin_opt(
        EXAMPLE, "-p", "inline,stablehlo-canonicalize-for-penguin", "--mlir-print-op-generic"
    )
    assert proc.returncode == 0, proc.stderr
    assert b'"func.func"()' in proc.stdout
    again = penguin_opt("-", "-p", "stablehlo-canonicalize-for-penguin", stdin=proc.stdout)
    assert again.returncode == 0, again.stderr


def test_invalid_penguin_looking_sort_still_rejected(tmp_path):
    src = tmp_path / "bad.mlir"
    src.write_text(
        "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
        '  %0:2 = "stablehlo.sort"(%a) <{dimension = 0 : i64}> ({\n'
        "  ^bb0(%x: tensor<f32>, %y: tensor<f32>, %p: tensor<i32>, %q: tensor<i32>):\n"
        "    %c = stablehlo.compare LT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
        "    stablehlo.return %c : tensor<i1>\n"
        "  }) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)\n"
        "  return %0#0 : tensor<4xf32>\n}\n"
    )  # index result of the wrong element type for an iota-less sort is still verified
    proc = penguin_opt(src, "-p", "cse")
    assert proc.returncode == 1
    assert len(proc.stderr.decode().strip().splitlines()) == 1


def _jax_lowered():
    import jax
    import jax.numpy as jnp

    return jax.jit(lambda x: jnp.argsort(x) + x.shape[0]).lower(jnp.zeros(8, jnp.float32))


def test_hlo_text_and_proto_inputs(tmp_path):
    from penguin_opt._compat import hlo_text_to_proto

    hlo_text = _jax_lowered().compiler_ir("hlo").as_hlo_text()
    (tmp_path / "m.hlo").write_text(hlo_text)
    proto = hlo_text_to_proto(hlo_text)
    (tmp_path / "model.hlo_module.pb").write_bytes(proto)
    for name in ("m.hlo", "model.hlo_module.pb"):
        proc = penguin_opt(
            tmp_path / name, "-p", "stablehlo-canonicalize-for-penguin{all-functions=true}"
        )
        assert proc.returncode == 0, proc.stderr
        assert b"stablehlo.sort" in proc.stdout


ELIDED_HLO = """HloModule elided, entry_computation_layout={(f32[2,4]{1,0})->f32[3,2,4]{2,1,0}}

ENTRY %main (p: f32[2,4]) -> f32[3,2,4] {
  %p = f32[2,4]{1,0} parameter(0)
  %w = f32[4,4]{1,0} constant({...})
  %d = f32[2,4]{1,0} dot(%p, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %v = f32[4]{0} constant({...})
  %b = f32[3,2,4]{2,1,0} broadcast(%v), dimensions={2}
  %e = f32[3,2,4]{2,1,0} broadcast(%d), dimensions={1,2}
  ROOT %r = f32[3,2,4]{2,1,0} add(%e, %b)
}
"""


def test_hlo_text_with_elided_constants_is_read_with_one_warning_line(tmp_path):
    """XLA's parser fills ``constant({...})`` with placeholder values: the output holds
    them (folded too), so the command says so, once, at the first such constant."""
    src = tmp_path / "dump.hlo"
    src.write_text(ELIDED_HLO)
    out = tmp_path / "out.mlir"
    proc = penguin_opt(src, "-p", "stablehlo-canonicalize-for-penguin", "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.decode().splitlines() == [
        f"{src}:5:22: warning: 2 constants with elided values (constant({{...}})): XLA's HLO "
        "parser fills them with placeholder values, not the model's, and so will the output "
        "(dump with XLA_FLAGS=--xla_dump_large_constants, or read the HLO proto: "
        "TensorFlow's stage='hlo_serialized')"
    ]
    assert "stablehlo.constant" in out.read_text()
    # a batch says it once for the file, as a line of its report
    (tmp_path / "batch").mkdir()
    (tmp_path / "batch" / "dump.hlo").write_text(ELIDED_HLO)
    proc = penguin_opt(tmp_path / "batch", "-p", "canonicalize", "-o", tmp_path / "outs/")
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr.decode()
    assert err.count("warning: 2 constants with elided values") == 1, err
    assert "ElidedConstantsWarning" not in err, err
    # two reads get different placeholders: penguin-check cannot compare them
    proc = subprocess.run(
        [sys.executable, "-m", "penguin_opt.check_cli", src, src],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 4, proc.stderr
    assert proc.stderr.splitlines()[-1] == (
        f"equivalence: not checkable: {src} has constants with elided values, which XLA's "
        "HLO parser fills with other placeholders at each read"
    )
    import penguin_opt as api

    with pytest.warns(api.InputWarning, match=r"^<input>:5:22: warning: 2 constants"):
        api.load(ELIDED_HLO)
    full = ELIDED_HLO.replace(
        "f32[4,4]{1,0} constant({...})",
        "f32[4,4]{1,0} constant({{1,2,3,4},{1,2,3,4},{1,2,3,4},{1,2,3,4}})",
    ).replace("f32[4]{0} constant({...})", "f32[4]{0} constant({1, 2, 3, 4})")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # constants printed in full: no warning
        api.load(full)


HLO_BODY = """ENTRY main {
  p = f32[2] parameter(0)
  c = f32[] constant(2)
  b = f32[2] broadcast(c), dimensions={}
  ROOT m = f32[2] multiply(p, b)
}
"""


@pytest.mark.parametrize(
    "text",
    [
        "HloModule m\n\n" + HLO_BODY,
        "// RUN: hlo-opt %s | FileCheck %s\n/* a comment\n over lines */\nHloModule m\n" + HLO_BODY,
        HLO_BODY,  # no module header: XLA's parser takes an ENTRY computation first
        "// RUN: test_correctness %s\n\nsq {\n  x = f32[2] parameter(0)\n"
        "  ROOT y = f32[2] multiply(x, x)\n}\n\n" + HLO_BODY,  # computations, then ENTRY
        # computations only, the last one the entry (XLA's fusion tests)
        "// RUN: fusion_to_mlir %s\n\n%sq {\n  %x = f32[2] parameter(0)\n"
        "  ROOT %y = f32[2] multiply(%x, %x)\n}\n",
    ],
    ids=["header", "comments-first", "entry-only", "computations-first", "no-entry"],
)
def test_hlo_text_is_read_as_xlas_parser_reads_it(text):
    """After comments, or without the ``HloModule`` header (XLA's tests hold both), the
    text is HLO, not MLIR that fails to parse."""
    import penguin_opt as api

    module = api.load(text)
    assert "stablehlo.multiply" in api.to_text(module)


@pytest.mark.parametrize(
    "text",
    [
        "// RUN: mlir-opt %s\n\nmodule {\n}\n",
        "module @m {\n  func.func @f() {\n    return\n  }\n}\n",
        "// c\nfunc.func @f() {\n  return\n}\n",
    ],
)
def test_mlir_text_that_starts_like_hlo_is_mlir(text):
    import penguin_opt as api

    assert api.to_text(api.load(text)).startswith("module")
    # a name and a brace without HLO instructions in it: MLIR's error, not XLA's
    with pytest.raises(api.InputError, match=r"^<input>:1:1: error: custom op 'fusion'"):
        api.load("fusion {\n}\n")


def test_format_detection_is_linear_in_leading_blank_lines():
    """A --split-input-file chunk is padded with blank lines to keep its line numbers: the
    text-proto and HLO detection must not backtrack over them (before the fix, 5,000 of
    them hung the command)."""
    import penguin_opt as api

    text = "\n" * 5000 + "func.func @f() {\n  return\n}\n"
    assert api.to_text(api.load(text)).startswith("module")


def test_hlo_errors_and_findings_are_at_their_line_and_column(tmp_path):
    """A syntax error at XLA's line:col in one line; a verifier error at the instruction's
    line; ops named after an instruction carry its position (not one defined twice:
    XLA renames those)."""
    bad = tmp_path / "bad.hlo"
    bad.write_text(
        "HloModule m\n\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT a = f32[2] addd(p, p)\n}\n"
    )
    proc = penguin_opt(bad)
    assert proc.returncode == 1
    assert proc.stderr.decode().splitlines() == [
        f"{bad}:5:19: error: invalid HLO text: expects opcode but sees: addd, error: "
        "Unknown opcode: addd"
    ]
    bad.write_text(
        "HloModule m\n\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT a = f32[3] add(p, p)\n}\n"
    )
    proc = penguin_opt(bad)
    assert proc.returncode == 1
    (line,) = proc.stderr.decode().splitlines()
    assert line.startswith(f"{bad}:5:8: error: 'stablehlo.add' op requires the same shape"), line
    # an HLO proto in protobuf text format (XLA's translate tests): said so, not MLIR's
    # "invalid attribute name" at the `#` comment
    bad.write_text('# RUN: xla-translate %s\n\nhlo_module {\n  name: "main"\n}\n')
    proc = penguin_opt(bad)
    assert proc.returncode == 1
    assert proc.stderr.decode().splitlines() == [
        f"{bad}:3:1: error: an HLO proto in protobuf text format ('hlo_module'), which "
        "penguin-opt does not read: give it HLO text (HloModule ...), a binary "
        "HloModuleProto or HloProto, or MLIR"
    ]
    bad.write_text("// a test\n/* not closed\nHloModule m\n")  # no MLIR has /*: XLA's error
    proc = penguin_opt(bad)
    assert proc.returncode == 1
    assert proc.stderr.decode().startswith(f"{bad}:2:1: error: invalid HLO text: "), proc.stderr
    good = tmp_path / "good.hlo"
    good.write_text(
        "HloModule m\n\nsq {\n  p = f32[2] parameter(0)\n  k = f32[] constant(1)\n"
        "  b = f32[2] broadcast(k), dimensions={}\n  ROOT y = f32[2] multiply(p, b)\n}\n\n"
        "ENTRY e {\n  p = f32[2] parameter(0)\n  k = f32[] constant(2)\n"
        "  %b2 = f32[2] broadcast(k), dimensions={}\n  ROOT %c = f32[2] call(p), to_apply=sq\n}\n"
    )
    out = tmp_path / "out.mlir"
    proc = penguin_opt(
        good, "-p", "inline,stablehlo-canonicalize-for-penguin", "--remarks", "-o", out
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.decode().splitlines()
    # the call (inlined: its ops are named c/b, c/k, ...) at line 14; the broadcasts at
    # lines 13 and 6 (the one in the called computation found through the call's name);
    # `k` and `p` are defined twice: XLA renames one, so neither has a position
    assert lines[0].startswith(f"{good}:14:8: remark: [inlineCall] inlined"), lines
    folds = [line for line in lines if "[replaceBroadcastInDimWithConstants]" in line]
    assert [line.split(": remark")[0] for line in folds] == [f"{good}:13:3", f"{good}:6:3"]
    # --split-input-file: each chunk's text has its own positions
    chunk = "HloModule {}\n\nENTRY e {{\n  k = f32[] constant(1)\n  ROOT {} = f32[2] broadcast(k), dimensions={{}}\n}}\n"
    split = tmp_path / "split.hlo"
    split.write_text(chunk.format("a", "b") + "\n// -----\n\n" + chunk.format("c", "d"))
    proc = penguin_opt(
        split, "--split-input-file", "-p", "stablehlo-canonicalize-for-penguin", "--remarks"
    )
    assert proc.returncode == 0, proc.stderr
    remarks = proc.stderr.decode().splitlines()
    assert [line.split(": remark")[0] for line in remarks] == [f"{split}:5:8", f"{split}:14:8"]
    # the text is unchanged: ops keep the importer's name-only locations
    proc = penguin_opt(good, "--mlir-print-debuginfo", "--mlir-print-local-scope")
    assert 'loc("y")' in proc.stdout.decode()
    # a text given a source name that named another text before: no positions, never
    # another text's
    import penguin_opt as api
    from penguin_opt.passes.base import location_triple_text

    first = "HloModule a\n\nENTRY e {\n  ROOT z = f32[] constant(1)\n}\n"
    api.load(first, name="same.hlo")
    assert location_triple_text('loc("z")', "same.hlo") == "same.hlo:4:8"
    api.load(first.replace("ROOT z", "\nROOT z"), name="same.hlo")
    assert location_triple_text('loc("z")', "same.hlo") is None
    # the positions of the eight sources read last are kept, none of an older one
    for n in range(9):
        api.load(first, name=f"{n}.hlo")
        assert location_triple_text('loc("z")', f"{n}.hlo") == f"{n}.hlo:4:8"
    assert location_triple_text('loc("z")', "0.hlo") is None
    assert location_triple_text('loc("z")', "8.hlo") == "8.hlo:4:8"


def test_bytecode_and_portable_artifact_inputs(tmp_path):
    from jaxlib.mlir import ir
    from jaxlib.mlir.dialects import stablehlo

    from penguin_opt import load

    module = load(SIMPLE)
    with module.context:
        path = tmp_path / "m.mlirbc"
        with open(path, "wb") as f:
            module.write_bytecode(f)
        text = str(module)
        artifact = stablehlo.serialize_portable_artifact_str(text, stablehlo.get_current_version())
        (tmp_path / "m.vhlo").write_bytes(artifact)
        # jax's exports of 2023-2025 name another producer in the header (jax keeps such
        # artifacts in its back-compat test data): VHLO all the same
        producer = artifact[5 : artifact.index(b"\0", 5)]
        assert producer.startswith(b"StableHLO_v"), artifact[:32]
        (tmp_path / "m.trunk").write_bytes(artifact.replace(producer, b"MLIRxxx-trunk", 1))
        del ir
    for name in ("m.mlirbc", "m.vhlo", "m.trunk"):
        proc = penguin_opt(tmp_path / name, "-p", "stablehlo-canonicalize-for-penguin")
        assert proc.returncode == 0, (name, proc.stderr)
        assert b"dense<3>" in proc.stdout


def test_garbage_binary_input(tmp_path):
    src = tmp_path / "junk.pb"
    src.write_bytes(os.urandom(64) + b"\x00\xff")
    proc = penguin_opt(src, "-p", "cse")
    assert proc.returncode == 1
    assert proc.stderr.decode().startswith(f"{src}: error:")


def test_python_api_accepts_jax_lowered():
    import penguin_opt

    module = penguin_opt.load(_jax_lowered())
    result = penguin_opt.run(module, "inline,stablehlo-canonicalize-for-penguin")
    stats = result.statistics["stablehlo-canonicalize-for-penguin"]
    assert stats["fuseIotaSort"].rewritten == 1
    assert '"stablehlo.sort"(%arg0)' in penguin_opt.to_text(module)


def test_list_passes():
    proc = penguin_opt("--list-passes")
    assert proc.returncode == 0
    out = proc.stdout.decode()
    assert "stablehlo-canonicalize-for-penguin" in out
    assert "broadcast-num-elements-to-fold=65536" in out


def test_output_parses_back_when_a_while_refines_its_block_types(tmp_path):
    """StableHLO's pretty while prints one type for operand and block argument; when they
    differ (tensor<4xf32> vs tensor<?xf32>, which verifies) the output is printed in generic
    form so that it parses back (stablehlo_refine_shapes.mlir's @refine_while)."""
    src = tmp_path / "w.mlir"
    src.write_text("""func.func @main(%arg0: tensor<4xf32>) -> tensor<?xf32> {
  %0 = "stablehlo.while"(%arg0) ({
  ^bb0(%arg1: tensor<?xf32>):
    %1 = stablehlo.constant dense<true> : tensor<i1>
    stablehlo.return %1 : tensor<i1>
  },  {
  ^bb0(%arg1: tensor<?xf32>):
    stablehlo.return %arg1 : tensor<?xf32>
  }) : (tensor<4xf32>) -> tensor<?xf32>
  func.return %0 : tensor<?xf32>
}
""")
    first = penguin_opt(src, "-p", "stablehlo-canonicalize-for-penguin")
    assert first.returncode == 0, first.stderr
    assert b"^bb0(%arg1: tensor<?xf32>)" in first.stdout
    again = penguin_opt("-", "-p", "stablehlo-canonicalize-for-penguin", stdin=first.stdout)
    assert again.returncode == 0, again.stderr
    assert again.stdout == first.stdout


def test_split_input_file_statistics_sum_over_chunks(tmp_path):
    src = tmp_path / "two.mlir"
    src.write_text(SIMPLE + "// -----\n" + SIMPLE.replace("dim = 1", "dim = 0"))
    proc = penguin_opt(
        src, "--split-input-file", "-p", "stablehlo-canonicalize-for-penguin", "--pass-statistics"
    )
    assert proc.returncode == 0, proc.stderr
    stats = proc.stderr.decode()
    block = stats[stats.index("replaceGetDimensionSize") :]
    assert "2 matched" in block.splitlines()[1]
    assert "2 rewritten" in block.splitlines()[2]


def test_verify_each_flag_before_the_input(tmp_path):
    src = tmp_path / "t.mlir"
    src.write_text(SIMPLE)
    for flag in ("--verify-each", "--verify-each=true", "--verify-each=false"):
        proc = penguin_opt(flag, src, "-p", "stablehlo-canonicalize-for-penguin")
        assert proc.returncode == 0, (flag, proc.stderr)
        assert b"stablehlo.constant dense<3>" in proc.stdout
    proc = penguin_opt("--verify-each=maybe", src, "-p", "inline")
    assert proc.returncode == 2
    assert b"Traceback" not in proc.stderr


def test_inline_with_a_complex_module_attribute(tmp_path):
    """inline reads the module's attributes as text: a complex elements attribute aborts
    the process when the bindings convert it to a Python object."""
    src = tmp_path / "c.mlir"
    src.write_text("""module attributes {test.c = dense<(1.0,2.0)> : tensor<complex<f32>>} {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = call @a(%x) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
  func.func private @a(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %x, %x : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
""")
    proc = penguin_opt(src, "-p", "inline")
    assert proc.returncode == 0, proc.stderr
    assert b"@a" not in proc.stdout
    assert b"stablehlo.add %arg0, %arg0" in proc.stdout


def test_a_plain_run_imports_neither_checker_nor_batch(tmp_path):
    # A command's start is most of its time on the programs users hold (1k-7k ops): the
    # equivalence checker, the batch driver and the child-process pools are imported only
    # by the commands that use them, and the version is read only for --version.
    src = tmp_path / "in.mlir"
    src.write_text(SIMPLE)
    code = (
        "import sys\n"
        "from penguin_opt import cli\n"
        f"assert cli._main([{str(src)!r}, '-p', 'stablehlo-canonicalize-for-penguin',"
        f" '-o', {str(tmp_path / 'out.mlir')!r}]) == 0\n"
        "mods = ('penguin_opt.equivalence', 'penguin_opt.batch', 'penguin_opt.isolated',"
        " 'penguin_opt.check_cli', 'concurrent.futures.process', 'importlib.metadata')\n"
        "print(' '.join(m for m in mods if m in sys.modules))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode().strip() == ""
    assert "stablehlo.constant" in (tmp_path / "out.mlir").read_text()


def test_version_falls_back_to_stderr_when_stdout_fails():
    # as argparse's own version action: an unwritable stdout is no internal error
    with open("/dev/full", "wb") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "penguin_opt", "--version"],
            stdout=full,
            stderr=subprocess.PIPE,
            cwd=ROOT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    assert proc.returncode == 0, proc.stderr
    assert b"internal error" not in proc.stderr


@pytest.mark.parametrize(
    ("pipeline", "says"),
    [
        ("canonicalize-for-penguin", "its pass is stablehlo-canonicalize-for-penguin"),
        ("canonicalize-conv", "its pass is stablehlo-canonicalize-conv"),
        (
            "stablehlo-legalize-to-hlo,stablehlo-canonicalize-for-penguin",
            "rewrites StableHLO ops and this program is MHLO ('mhlo.",
        ),
    ],
)
def test_a_pass_of_the_other_dialect_warns_once(tmp_path, pipeline, says):
    """An MHLO pass on StableHLO (or the reverse) matched nothing and said nothing
    (outside testers D and E): one warning naming the twin pass; the output is what the
    pipeline gives, exit 0. The right pass with nothing to do says nothing."""
    out = tmp_path / "out.mlir"
    proc = penguin_opt(EXAMPLE, "-p", pipeline, "-o", out)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 1, lines
    assert ": warning: " in lines[0], lines
    assert says in lines[0], lines
    quiet = penguin_opt(EXAMPLE, "-p", "stablehlo-canonicalize-conv", "-o", out)  # no conv
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stderr == b"", quiet.stderr


@pytest.mark.parametrize(
    "pipeline",
    [
        "stablehlo-canonicalize-conv",
        "canonicalize-conv",
        "stablehlo-canonicalize-for-penguin{all-functions=true}",
        "canonicalize-for-penguin{all-functions=true}",
    ],
)
def test_a_function_declaration_is_no_trouble(tmp_path, pipeline):
    """The other-dialect look at the functions' first ops read a declaration's missing
    body: an internal IndexError on any module with one (a review)."""
    src = tmp_path / "decl.mlir"
    src.write_text(
        "func.func private @ext(tensor<2xf32>) -> tensor<2xf32>\n"
        "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %0 = stablehlo.add %a, %a : tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n"
    )
    proc = penguin_opt(src, "-p", pipeline, "-o", tmp_path / "out.mlir")
    assert proc.returncode == 0, proc.stderr
    assert b"internal error" not in proc.stderr


def test_a_stablehlo_program_holding_mhlo_ops_gets_no_dialect_warning(tmp_path):
    """StableHLO imports keep some ops as MHLO (mhlo.topk, mhlo.erf): the first top-level
    op decided the dialect and the warning sent the user to the MHLO pass (a review)."""
    src = tmp_path / "mix.mlir"
    src.write_text(
        "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %0 = mhlo.erf %a : tensor<4xf32>\n"
        "  %1 = stablehlo.add %0, %a : tensor<4xf32>\n  return %1 : tensor<4xf32>\n}\n"
    )
    proc = penguin_opt(src, "-p", "stablehlo-canonicalize-for-penguin", "-o", tmp_path / "o")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == b"", proc.stderr


def test_help_shows_optional_values_as_optional():
    """A flag whose value is optional reads ``--flag[=VALUE]`` in the usage and the
    option list (argparse wrote ``--flag VALUE``, as if the value were needed)."""
    proc = penguin_opt("--help")
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout.decode()
    for shown in (
        "[--pass-statistics[=BOOL]]",
        "[--split-input-file[=MARKER]]",
        "[--verify-diagnostics[=all|only-expected]]",
        "\n  --mlir-print-ir-after-all[=BOOL]",
        "[--pass-statistics-json FILE]",  # a value it needs stays as it was
        "[--jobs N]",
    ):
        assert shown in text, shown
    assert "--pass-statistics BOOL" not in text
    check = subprocess.run(
        [sys.executable, "-m", "penguin_opt.check_cli", "--help"], capture_output=True, text=True
    )
    assert "show Python tracebacks on errors" in check.stdout, check.stdout + check.stderr


TF_METADATA = """HloModule tf_meta

ENTRY main {
  x = f32[1,8,8,2]{3,2,1,0} parameter(0)
  w = f32[3,3,2,4]{3,2,1,0} parameter(1)
  a = f32[1,4,4,4]{3,2,1,0} convolution(x, w), window={size=3x3 stride=2x2 pad=0_1x0_1}, dim_labels=b01f_01io->b01f, metadata={op_type="Conv2D" op_name="conv_a" source_file="/site-packages/tensorflow/python/framework/ops.py" source_line=1221}
  b = f32[1,4,4,4]{3,2,1,0} convolution(x, w), window={size=3x3 stride=2x2 pad=0_1x0_1}, dim_labels=b01f_01io->b01f, metadata={op_type="Conv2D" op_name="conv_b" source_file="dummy_file_name" source_line=10}
  c = f32[1,4,4,4]{3,2,1,0} convolution(x, w), window={size=3x3 stride=2x2 pad=0_1x0_1}, dim_labels=b01f_01io->b01f, metadata={op_type="Conv2D" op_name="conv_c"}
  ROOT t = (f32[1,4,4,4]{3,2,1,0}, f32[1,4,4,4]{3,2,1,0}, f32[1,4,4,4]{3,2,1,0}) tuple(a, b, c)
}
"""


def test_tensorflow_metadata_places_findings_at_the_instruction(tmp_path):
    """TensorFlow's metadata (op_type, op_name, its own wrapper as source_file) names no
    line of the user's file: findings go to the instruction's line, whether the importer
    names the op ``"conv_a"`` or (newer jaxlibs) ``"Conv2D:"("conv_a")``."""
    from penguin_opt.passes.base import location_triple_text

    path = tmp_path / "tf.hlo"
    path.write_text(TF_METADATA)
    proc = penguin_opt(
        path,
        "-p",
        "inline,stablehlo-canonicalize-conv{max-stride-or-padding=0}",
        "--penguin-readiness",
        "-o",
        tmp_path / "out.mlir",
    )
    assert proc.returncode == 0, proc.stderr
    where = [line.split(": warning")[0] for line in proc.stderr.decode().splitlines()[:3]]
    assert where == [f"{path}:{n}:3" for n in (6, 7, 8)]
    # the location forms of the importers of jaxlib 0.9-0.12.1, whichever this one has
    import penguin_opt as api

    api.load(TF_METADATA, name="tf2.hlo")
    tf_file = '"/site-packages/tensorflow/python/framework/ops.py":1221:0'
    for loc in (
        f'loc(fused["conv_a", {tf_file}])',
        f'loc(fused["Conv2D:"("conv_a"), {tf_file}])',
    ):
        assert location_triple_text(loc, "tf2.hlo") == "tf2.hlo:6:3", loc
    assert location_triple_text('loc("Conv2D:"("conv_c"))', "tf2.hlo") == "tf2.hlo:8:3"
