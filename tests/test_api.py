"""The Python API's seams: what it accepts, what it raises, its documented signatures."""

from __future__ import annotations

import inspect
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from jaxlib.mlir import ir

import penguin_opt
from penguin_opt import equivalence

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "argsort_model.mlir"

SIMPLE = """func.func @main(%arg0: tensor<2x3xf32>) -> tensor<i32> {
  %0 = stablehlo.get_dimension_size %arg0, dim = 1 : (tensor<2x3xf32>) -> tensor<i32>
  return %0 : tensor<i32>
}
"""


def test_run_accepts_a_module_and_its_operation():
    with penguin_opt.make_context() as ctx, ir.Location.unknown(ctx):
        module = ir.Module.parse(SIMPLE)
    result = penguin_opt.run(module, "stablehlo-canonicalize-for-penguin")
    assert (
        result.statistics["stablehlo-canonicalize-for-penguin"]["replaceGetDimensionSize"].rewritten
        == 1
    )
    assert "dense<3>" in penguin_opt.to_text(module)
    op = penguin_opt.parse(SIMPLE)
    penguin_opt.run(op, "stablehlo-canonicalize-for-penguin")
    assert "dense<3>" in penguin_opt.to_text(op)
    with pytest.raises(TypeError, match=r"expected an ir\.Module"):
        penguin_opt.run("not a module", "cse")


def test_to_text_debug_info():
    module = penguin_opt.load_file(EXAMPLE)
    assert "loc(" not in penguin_opt.to_text(module)
    assert "loc(" in penguin_opt.to_text(module, debug_info=True)
    assert penguin_opt.to_text.__doc__


def test_to_text_names_the_source_of_a_program_without_a_module():
    """MLIR names the buffer of a program without a ``module`` around it ``-``; the
    CLI writes the input's name there, and so does ``to_text`` when told it."""
    text = "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  return %a : tensor<2xf32>\n}\n"
    module = penguin_opt.parse(text, name="prog.mlir")
    assert 'loc("-":1:17)' in penguin_opt.to_text(module, debug_info=True)
    named = penguin_opt.to_text(module, debug_info=True, source_name="prog.mlir")
    assert 'loc("prog.mlir":1:17)' in named
    assert 'loc("-"' not in named


def test_load_tells_paths_from_text(tmp_path):
    missing = tmp_path / "missing.mlir"
    for call in (
        lambda: penguin_opt.load(str(missing)),
        lambda: penguin_opt.load(missing),
        lambda: penguin_opt.load_file(missing),
        lambda: penguin_opt.load("nope.mlir"),
    ):
        with pytest.raises(FileNotFoundError, match="cannot read input"):
            call()
        with pytest.raises(penguin_opt.InputNotFoundError):
            call()
    # program text is never taken for a path, and parse() never reads a file
    assert penguin_opt.load(SIMPLE).name == "builtin.module"
    path = tmp_path / "p.mlir"
    path.write_text(SIMPLE)
    assert penguin_opt.load(str(path)).name == "builtin.module"
    with pytest.raises(penguin_opt.InputError):
        penguin_opt.parse(str(path))


def test_penguin_check_missing_file_is_one_line(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "penguin_opt.check_cli", EXAMPLE, tmp_path / "missing.mlir"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "missing.mlir: error: cannot read input" in lines[0]


def test_check_signature_is_the_documented_one():
    """README: check(before_text, after_text, seed=0, trials=1, rtol=None, atol=None,
    oracle="auto", inputs=None)."""
    params = inspect.signature(equivalence.check).parameters
    documented = {
        "seed": 0,
        "trials": 1,
        "rtol": None,
        "atol": None,
        "oracle": "auto",
        "inputs": None,
    }
    for name, default in documented.items():
        assert params[name].default == default, name
    assert list(params)[:2] == ["before", "after"]


SCRIPT = """
import penguin_opt
from penguin_opt import equivalence

before = {text!r}
module = penguin_opt.parse(before)
penguin_opt.run(module, "stablehlo-canonicalize-for-penguin")
report = equivalence.check(before, penguin_opt.to_text(module))
print("OK" if report.ok else "MISMATCH")
"""


def test_checker_from_a_script_without_a_main_guard(tmp_path):
    script = tmp_path / "unguarded.py"
    script.write_text(textwrap.dedent(SCRIPT.format(text=SIMPLE)))
    proc = subprocess.run(
        [sys.executable, script], capture_output=True, text=True, cwd=tmp_path, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "OK"
    assert "aborted" not in proc.stderr


def test_run_on_a_clone_keeps_the_original_after_a_pass_error():
    bad = """func.func @main(%a: tensor<1x8x8x3xf32>, %b: tensor<1x8x8x3xf32>) -> tensor<1x4x4x3xf32> {
  %0 = stablehlo.get_dimension_size %a, dim = 1 : (tensor<1x8x8x3xf32>) -> tensor<i32>
  %1 = stablehlo.custom_call @ResizeNearestGrad(%a, %b) : (tensor<1x8x8x3xf32>, tensor<1x8x8x3xf32>) -> tensor<1x4x4x3xf32>
  return %1 : tensor<1x4x4x3xf32>
}
"""
    module = penguin_opt.parse(bad)
    original = penguin_opt.to_text(module)
    copy = module.clone()
    with pytest.raises(penguin_opt.PassError, match="only one operand allowed") as err:
        penguin_opt.run(copy, "stablehlo-canonicalize-for-penguin")
    assert penguin_opt.to_text(module) == original
    # the message names where, as the CLI's line does (`-`: MLIR's name for text parsed in
    # an implicit module)
    assert str(err.value).startswith("-:3:8: 'stablehlo.custom_call' op "), err.value
    assert err.value.diagnostic.render("m.mlir").startswith("m.mlir:3:8: error: 'stable")


def test_the_package_imports_no_mlir_until_asked_and_keeps_its_submodules():
    """`import penguin_opt` is light (the commands install their signal handlers before
    jaxlib loads); its names and submodules are there when first used."""
    code = (
        "import sys, penguin_opt\n"
        "assert 'jaxlib.mlir.ir' not in sys.modules, 'jaxlib imported eagerly'\n"
        "assert callable(penguin_opt.load) and penguin_opt.PASSES\n"
        "assert callable(penguin_opt.io.read_source)\n"
        "assert penguin_opt.__version__\n"
        "try:\n"
        "    penguin_opt.no_such_name\n"
        "except AttributeError:\n"
        "    pass\n"
        "else:\n"
        "    raise AssertionError('no_such_name')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_run_refuses_a_remarks_value_it_does_not_know():
    """(remarks='bogus' recorded rewrites as True would, silently.)"""
    module = penguin_opt.load(SIMPLE)
    with pytest.raises(ValueError, match="remarks: True, False or 'all'"):
        penguin_opt.run(module, "stablehlo-canonicalize-for-penguin", remarks="bogus")
