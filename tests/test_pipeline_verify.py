"""When a pipeline verifies the IR, and whom a verification failure blames."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import pytest
from jaxlib.mlir import ir

from penguin_opt import api
from penguin_opt.passes import PASSES
from penguin_opt.passes.base import ModulePass, PassError, RunState

TEXT = """func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


@dataclass(frozen=True)
class BreakIR(ModulePass):
    """Test-only: gives @main's add a wrong result type (invalid IR)."""

    name: ClassVar[str] = "test-break-ir"
    summary: ClassVar[str] = "test only"

    def run(self, module: ir.Operation, state: RunState) -> None:
        func = module.regions[0].blocks[0].operations[0]
        add = func.regions[0].blocks[0].operations[0].operation
        ir.Operation.create(
            "stablehlo.add",
            results=[ir.RankedTensorType.get([5], ir.F32Type.get())],
            operands=list(add.operands),
            loc=add.location,
            ip=ir.InsertionPoint(add),
        )


@pytest.fixture
def broken(monkeypatch):
    monkeypatch.setitem(PASSES, BreakIR.name, BreakIR)


def run(pipeline, verify="default"):
    return api.run(api.load(TEXT), pipeline, verify=verify)


def test_default_verifies_once_per_run_of_our_passes(broken):
    with pytest.raises(PassError) as err:
        run("test-break-ir,stablehlo-canonicalize-for-penguin")
    msg = str(err.value)
    assert "test-break-ir, stablehlo-canonicalize-for-penguin produced invalid IR" in msg
    assert "--verify-each names the pass" in msg


def test_verify_each_names_the_pass(broken):
    with pytest.raises(PassError) as err:
        run(
            "stablehlo-canonicalize-for-penguin,test-break-ir,stablehlo-canonicalize-conv",
            verify="each",
        )
    assert "test-break-ir produced invalid IR:" in str(err.value)


def test_a_native_pass_after_a_broken_run_is_not_blamed(broken):
    with pytest.raises(PassError) as err:
        run("test-break-ir,cse")
    assert "test-break-ir produced invalid IR" in str(err.value)


def test_verify_off_does_not_verify(broken):
    result = run("test-break-ir,stablehlo-canonicalize-for-penguin", verify="off")
    with result.module.context, pytest.raises(ir.MLIRError):
        result.module.verify()


def test_valid_pipelines_pass_in_every_mode():
    for verify in ("default", "each", "off"):
        result = run(
            "inline,stablehlo-canonicalize-for-penguin,cse,stablehlo-canonicalize-conv",
            verify=verify,
        )
        with result.module.context:
            assert result.module.verify()


@pytest.mark.parametrize(
    ("flag", "code"),
    [
        ("--verify-each", 0),
        ("--verify-each=true", 0),
        ("--verify-each=false", 0),
        ("--verify-each=maybe", 2),
    ],
)
def test_cli_flag(tmp_path, flag, code):
    import subprocess
    import sys

    src = tmp_path / "t.mlir"
    src.write_text(TEXT)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "penguin_opt.cli",
            str(src),
            flag,
            "-p",
            "stablehlo-canonicalize-for-penguin,cse",
        ],
        capture_output=True,
    )
    assert proc.returncode == code, proc.stderr
    if code == 0:
        assert b"stablehlo.add %arg0, %arg0" in proc.stdout


PENGUIN_SORT_INPUT = """module {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xi32> {
    %0:2 = "mhlo.sort"(%arg0) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>, %arg3: tensor<i32>, %arg4: tensor<i32>):
      %1 = mhlo.compare LT, %arg3, %arg4, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      mhlo.return %1 : tensor<i1>
    }) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi32>)
    return %0#1 : tensor<4xi32>
  }
}
"""


@pytest.mark.parametrize(
    ("pipeline", "verify"),
    [("canonicalize", "default"), ("inline,canonicalize", "default"), ("canonicalize", "off")],
)
def test_penguin_sorts_in_the_input_are_expanded_for_native_passes(pipeline, verify):
    """A penguin-form sort read back from our output is expanded (its index ramp made an
    operand again) before a native pass, even with no for-penguin pass in the pipeline:
    MHLO's sort canonicalizer otherwise drops the implicit operand (invalid IR, or a
    crash without verification)."""
    result = run_text(PENGUIN_SORT_INPUT, pipeline, verify)
    with result.module.context:
        assert result.module.verify()
    text = penguin_opt_text(result)
    assert '"mhlo.iota"' in text
    assert '"mhlo.sort"(%0)' in text


def run_text(text, pipeline, verify):
    return api.run(api.load(text), pipeline, verify=verify)


def penguin_opt_text(result):
    return api.to_text(result.module)


def _break(module) -> None:
    """Give @main an add of a wrong result type (invalid IR) before its return."""
    func = module.regions[0].blocks[0].operations[0]
    ret = list(func.regions[0].blocks[0].operations)[-1].operation
    value = ret.operands[0]
    ir.Operation.create(
        "mhlo.add",
        results=[ir.RankedTensorType.get([5], ir.IntegerType.get_signless(32))],
        operands=[value, value],
        loc=ret.location,
        ip=ir.InsertionPoint(ret),
    )


@pytest.mark.parametrize("listed", ["none", "all"])
def test_verification_takes_only_a_passing_list_of_penguin_sorts_on_trust(listed):
    """The penguin-form sorts a pass hands the verifier spare it the walk that finds them.
    One left out fails MLIR's verifier, so a failure is verified again with every sort a
    walk finds: valid IR still verifies, and invalid IR fails with MLIR's diagnostic of
    the op at fault, the module left as it was."""
    from penguin_opt import penguin_sort

    module = api.load(PENGUIN_SORT_INPUT)
    with module.context, ir.Location.unknown():
        root = module
        known = [] if listed == "none" else penguin_sort.penguin_sorts(root)
        penguin_sort.verify(root, known)
        _break(module)
        before = api.to_text(module)
        known = [] if listed == "none" else penguin_sort.penguin_sorts(root)
        with pytest.raises(ir.MLIRError) as err:
            penguin_sort.verify(root, known)
        assert [d.message for d in err.value.error_diagnostics] == [
            "'mhlo.add' op requires compatible types for all operands and results"
        ]
        assert api.to_text(module) == before


CONV_AND_ARGSORT = """func.func @main(%x: tensor<4xf32>, %img: tensor<1x8x8x1xf32>,
    %w: tensor<3x3x1x1xf32>) -> (tensor<4xi32>, tensor<1x4x4x1xf32>) {
  %i = stablehlo.iota dim = 0 : tensor<4xi32>
  %s:2 = "stablehlo.sort"(%x, %i) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %lt = stablehlo.compare LT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) : (tensor<4xf32>, tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>)
  %y = stablehlo.convolution(%img, %w)
      dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
      window = {stride = [2, 2], pad = [[1, 1], [1, 1]]}
      {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
      : (tensor<1x8x8x1xf32>, tensor<3x3x1x1xf32>) -> tensor<1x4x4x1xf32>
  return %s#1, %y : tensor<4xi32>, tensor<1x4x4x1xf32>
}
"""


def test_canonicalize_conv_hands_the_verifier_the_penguin_sorts(monkeypatch):
    """canonicalize-conv's walk lists every sort of the module's functions, so the
    verification after it finds the penguin-form sorts without a walk of its own (and
    still reads them as their expansion). The list is not carried past another pass:
    after a for-penguin pass that runs later, the verification walks."""
    from penguin_opt import penguin_sort

    walks = []
    walk = penguin_sort.penguin_sorts
    monkeypatch.setattr(penguin_sort, "penguin_sorts", lambda root: walks.append(1) or walk(root))
    result = api.run(
        api.load(CONV_AND_ARGSORT), "stablehlo-canonicalize-for-penguin,stablehlo-canonicalize-conv"
    )
    text = api.to_text(result.module)
    assert '"stablehlo.sort"(%arg0)' in text  # penguin form
    assert text.count("stablehlo.convolution") == 4  # the polyphase decomposition
    assert walks == []
    api.run(
        api.load(CONV_AND_ARGSORT), "stablehlo-canonicalize-conv,stablehlo-canonicalize-for-penguin"
    )
    assert walks == [1]
