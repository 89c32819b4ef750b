"""emit.render: MLIR, bytecode, executable StableHLO, HLO text and HLO protos.

The executable form must run as it is (stock parser and verifier, XLA, the reference
interpreter) and give the input program's results; the HLO forms must read back into
penguin-opt with the same results; what cannot be emitted is one line naming the op.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from jaxlib.mlir import ir
from support.programs import RESOURCE

import penguin_opt
from penguin_opt import emit, equivalence, io, isolated, penguin_sort
from penguin_opt.context import make_context
from penguin_opt.ir_util import defining_op_of, entry_function, ops_under

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
CORPUS = ROOT.parent / "shared" / "corpus" / "public"

SH_PASSES = "stablehlo-canonicalize-for-penguin,stablehlo-canonicalize-conv"
MHLO_PASSES = "canonicalize-for-penguin,canonicalize-conv"
# dialect of the program as the passes see it -> pipeline for a StableHLO input
PIPELINES = {
    "stablehlo": f"inline,{SH_PASSES}",
    "mhlo": f"inline,stablehlo-legalize-to-hlo,{MHLO_PASSES}",
}

MHLO_ARGSORT = """func.func @main(%x: tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xi32>) {
  %iota = "mhlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<3x5xi32>
  %0:2 = "mhlo.sort"(%x, %iota) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %gt = mhlo.compare GT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    mhlo.return %gt : tensor<i1>
  }) : (tensor<3x5xf32>, tensor<3x5xi32>) -> (tensor<3x5xf32>, tensor<3x5xi32>)
  return %0#0, %0#1 : tensor<3x5xf32>, tensor<3x5xi32>
}
"""
CHLO_ERF = """func.func @main(%x: tensor<6xf32>) -> tensor<6xf32> {
  %0 = chlo.erf %x : tensor<6xf32> -> tensor<6xf32>
  %1 = stablehlo.multiply %0, %x : tensor<6xf32>
  return %1 : tensor<6xf32>
}
"""
MHLO_TOPK = """func.func @main(%x: tensor<2x8xf32>) -> (tensor<2x3xf32>, tensor<2x3xi32>) {
  %0:2 = mhlo.topk(%x, k = 3) : tensor<2x8xf32> -> (tensor<2x3xf32>, tensor<2x3xi32>)
  return %0#0, %0#1 : tensor<2x3xf32>, tensor<2x3xi32>
}
"""
NOT_MAIN = """func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.exponential %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""

# (name, program text, pipeline): the small programs every kind is tried on
PROGRAMS = [
    ("argsort-stablehlo", (EXAMPLES / "argsort_model.mlir").read_text(), PIPELINES["stablehlo"]),
    ("argsort-mhlo", (EXAMPLES / "argsort_model.mlir").read_text(), PIPELINES["mhlo"]),
    ("conv-stablehlo", (EXAMPLES / "strided_conv.mlir").read_text(), PIPELINES["stablehlo"]),
    ("conv-mhlo", (EXAMPLES / "strided_conv.mlir").read_text(), PIPELINES["mhlo"]),
    ("mhlo-argsort", MHLO_ARGSORT, f"inline,{MHLO_PASSES}"),
    ("chlo", CHLO_ERF, f"inline,{SH_PASSES}"),
    ("mhlo-topk", MHLO_TOPK, f"inline,{MHLO_PASSES}"),
    ("not-main", NOT_MAIN, f"inline,{SH_PASSES}"),
]
IDS = [p[0] for p in PROGRAMS]
ARGSORTS = [p for p in PROGRAMS if "argsort" in p[0]]


@pytest.fixture(scope="module", autouse=True)
def _converter_child():
    yield
    isolated.kill(emit._CHILD)


def processed(text: str, pipeline: str, name: str = "prog.mlir") -> ir.Operation:
    module = penguin_opt.parse(text, name=name)
    penguin_opt.run(module, pipeline)
    return module


def fingerprint(module: ir.Operation) -> str:
    return module.get_asm(print_generic_op_form=True, enable_debug_info=True, assume_verified=True)


def assert_one_line(err: BaseException) -> str:
    message = str(err)
    assert message
    assert "\n" not in message, message
    return message


def assert_same_results(before: str, after: str, oracle: str = "xla") -> None:
    report = equivalence.check(before, after, oracle=oracle)
    assert report.ok, report.table()
    assert report.outputs


def assert_runs_as_emitted(before: str, executable: str, interpreter: bool) -> None:
    """The executable text as it is (no preparation) runs on XLA, and on the reference
    interpreter when asked, with the input program's results."""
    inputs = equivalence.random_inputs(equivalence.main_signature(before), 7)
    expected = equivalence.run_xla(equivalence.prepare_isolated(before, "mean", False), inputs)
    runs = [equivalence.run_xla(executable, inputs)]
    if interpreter:
        runs.append(equivalence.interpret(executable, inputs))
    for outputs in runs:
        assert len(outputs) == len(expected)
        for got, want in zip(outputs, expected, strict=True):
            assert (got.dtype, got.shape) == (want.dtype, want.shape)
            if equivalence.is_integral(want.dtype):
                np.testing.assert_array_equal(got, want)
            else:
                wide = np.complex128 if np.iscomplexobj(want) else np.float64
                np.testing.assert_allclose(
                    got.astype(wide),
                    want.astype(wide),
                    rtol=1e-2 if want.dtype.itemsize < 4 else 1e-5,
                    atol=1e-6,
                )


# ---------------------------------------------------------------------------- mlir, bytecode


@pytest.mark.parametrize(("name", "text", "pipeline"), PROGRAMS, ids=IDS)
def test_each_kind_gives_str_or_bytes_and_never_changes_the_module(name, text, pipeline):
    module = processed(text, pipeline)
    before = fingerprint(module)
    for kind in emit.EMIT_KINDS:
        out = emit.render(module, kind)
        assert isinstance(out, bytes if kind in emit.BINARY_KINDS else str), kind
        assert out
        assert fingerprint(module) == before, kind


@pytest.mark.parametrize(
    "options", [{}, {"generic": True}, {"debug_info": True}, {"large_elements_limit": 2}]
)
@pytest.mark.parametrize(("name", "text", "pipeline"), ARGSORTS, ids=[p[0] for p in ARGSORTS])
def test_mlir_and_bytecode_are_what_penguin_opt_printed_before(name, text, pipeline, options):
    module = processed(text, pipeline)
    assert penguin_sort.penguin_sorts(module)
    with module.context:
        assert emit.render(module, "mlir", **options) == io.module_text(module, **options)
        assert emit.render(module, "bytecode") == io.module_bytecode(module)
    again = penguin_opt.parse(emit.render(module, "bytecode"))
    assert penguin_opt.to_text(again) == penguin_opt.to_text(module)


def test_render_takes_an_ir_module_and_refuses_unknown_kinds():
    with make_context():
        module = ir.Module.parse(NOT_MAIN)
        assert "stablehlo.exponential" in emit.render(module, "executable")
        with pytest.raises(ValueError, match="hlo-proto"):
            emit.render(module, "hlo")


# ---------------------------------------------------------------------------- executable


def stock_parse(text: str) -> ir.Operation:
    """Parse with MLIR's own parser and verifier (no penguin-form sort would pass)."""
    return ir.Module.parse(text).operation


@pytest.mark.parametrize(("name", "text", "pipeline"), ARGSORTS, ids=[p[0] for p in ARGSORTS])
def test_executable_re_expands_penguin_sorts_as_stablehlo(name, text, pipeline):
    module = processed(text, pipeline)
    fused = penguin_sort.penguin_sorts(module)
    assert fused, "the for-penguin pass left no penguin-form sort to expand"
    executable = emit.render(module, "executable")
    with make_context():
        program = stock_parse(executable)
        names = [op.name for op in ops_under(program)]
        assert not [n for n in names if n.startswith("mhlo.")]
        sorts = [op for op in ops_under(program) if op.name == "stablehlo.sort"]
        assert len(sorts) == len(fused)
        for sort in sorts:
            assert len(sort.operands) == len(sort.results) == 2
            iota = sort.operands[1].owner
            assert iota.name == "stablehlo.iota"
            assert (
                penguin_sort.sort_dimension(sort)
                == ir.IntegerAttr(iota.attributes["iota_dimension"]).value
            )


@pytest.mark.parametrize(("name", "text", "pipeline"), ARGSORTS[:1], ids=[ARGSORTS[0][0]])
def test_executable_changes_nothing_else(name, text, pipeline):
    """Fusing the expanded sorts back gives exactly the mlir output (StableHLO input)."""
    module = processed(text, pipeline)
    executable = emit.render(module, "executable")
    with make_context():
        program = stock_parse(executable)
        for sort in [op for op in ops_under(program) if op.name == "stablehlo.sort"]:
            reason, iota = penguin_sort.fusion_skip_reason(sort)
            assert reason is None
            penguin_sort.fuse(sort, iota)
        assert io.module_text(program) == emit.render(module, "mlir")


def test_executable_of_mhlo_is_what_the_native_legalization_gives():
    module = processed(MHLO_ARGSORT, f"inline,{MHLO_PASSES}")
    executable = emit.render(module, "executable")
    legalized = module.clone()
    penguin_opt.run(legalized, "hlo-legalize-to-stablehlo")  # fuses the sort back after it
    with legalized.context:
        penguin_sort.expand(legalized)
        assert executable == io.module_text(legalized)


@pytest.mark.parametrize(("name", "text", "pipeline"), ARGSORTS, ids=[p[0] for p in ARGSORTS])
def test_executable_honours_generic_and_debug_info(name, text, pipeline):
    module = processed(text, pipeline, name="model.mlir")
    plain = emit.render(module, "executable")
    generic = emit.render(module, "executable", generic=True)
    located = emit.render(module, "executable", debug_info=True)
    assert "loc(" not in plain
    assert '"stablehlo.sort"(' in generic
    assert '"func.func"()' in generic
    files = set(re.findall(r'loc\("([^"]*)":\d+', located))
    assert files
    assert files == set(
        re.findall(r'loc\("([^"]*)":\d+', emit.render(module, "mlir", debug_info=True))
    )
    with make_context():
        for text_ in (plain, generic, located):
            assert io.module_text(stock_parse(text_)) == plain


def test_executable_keeps_chlo_and_encodes_mhlo_only_ops():
    chlo = emit.render(processed(CHLO_ERF, f"inline,{SH_PASSES}"), "executable")
    assert "chlo.erf" in chlo
    topk = emit.render(processed(MHLO_TOPK, f"inline,{MHLO_PASSES}"), "executable")
    with make_context():
        names = [op.name for op in ops_under(stock_parse(topk))]
    assert "stablehlo.custom_call" in names
    assert not [n for n in names if n.startswith("mhlo.")]
    assert "stablehlo.custom_call @mhlo.topk" in topk


@pytest.mark.parametrize(("name", "text", "pipeline"), PROGRAMS, ids=IDS)
def test_executable_runs_as_emitted_with_the_inputs_results(name, text, pipeline):
    executable = emit.render(processed(text, pipeline), "executable")
    interpreter = name not in ("chlo", "mhlo-topk")  # the interpreter runs neither as is
    assert_runs_as_emitted(text, executable, interpreter)
    assert_same_results(text, executable, "both" if interpreter else "xla")


# ---------------------------------------------------------------------------- HLO


@pytest.mark.parametrize(("name", "text", "pipeline"), PROGRAMS, ids=IDS)
def test_hlo_proto_and_text_read_back_with_the_inputs_results(name, text, pipeline):
    module = processed(text, pipeline)
    proto = emit.render(module, "hlo-proto")
    hlo_text = emit.render(module, "hlo-text")
    assert hlo_text.startswith("HloModule ")
    for program in (penguin_opt.load(proto), penguin_opt.parse(hlo_text)):
        # (the checker cannot run what the HLO importer gives for erf and topk, XLA can)
        assert_runs_as_emitted(text, penguin_opt.to_text(program), interpreter=False)


def test_hlo_text_prints_large_constants_in_full():
    values = np.random.default_rng(3).standard_normal(3000).astype(np.float32)
    text = (
        f"func.func @main(%x: tensor<3000xf32>) -> tensor<3000xf32> {{\n"
        f'  %c = stablehlo.constant dense<"0x{values.tobytes().hex().upper()}"> : '
        "tensor<3000xf32>\n"
        "  %0 = stablehlo.add %x, %c : tensor<3000xf32>\n  return %0 : tensor<3000xf32>\n}\n"
    )
    hlo_text = emit.render(processed(text, f"inline,{SH_PASSES}"), "hlo-text")
    assert "{...}" not in hlo_text
    assert_same_results(text, penguin_opt.to_text(penguin_opt.parse(hlo_text)))


@pytest.mark.parametrize(
    "element", ["f32", "f64", "f16", "bf16", "f8E4M3FN", "f8E5M2", "complex<f32>"]
)
def test_hlo_text_keeps_negative_zeros(element):
    """XLA's HLO printer writes a float -0.0 as ``-0``, which its parser reads as +0.0
    (1 / (x + c) then differs at x = -0); the emitted text reads back with -0.0."""
    zero = "(-0.0, -0.0)" if element.startswith("complex") else "-0.0"
    one = "(1.0, 0.0)" if element.startswith("complex") else "1.0"
    t = f"tensor<2x2x{element}>"
    text = (
        f"func.func @main() -> ({t}, tensor<{element}>) {{\n"
        f"  %c = stablehlo.constant dense<[[{zero}, {one}], [{one}, {zero}]]> : {t}\n"
        f"  %s = stablehlo.constant dense<{zero}> : tensor<{element}>\n"
        f"  return %c, %s : {t}, tensor<{element}>\n}}\n"
    )
    hlo_text = emit.render(processed(text, "cse"), "hlo-text")
    assert re.search(r"(?<![\w.])-0(?![\w.])", hlo_text) is None, hlo_text
    back = penguin_opt.to_text(penguin_opt.parse(hlo_text))
    negative = back.count("-0.000000e+00")
    assert negative == (6 if element.startswith("complex") else 3), back


def test_negative_zeros_are_rewritten_in_constants_only():
    text = (
        "  c = f32[3]{0} constant({-0, 1, -0.5})\n"
        "  d = f32[2,2]{1,0} constant({ { -0, 2 }, {3, -0 } })\n"
        '  e = s32[] constant(0), metadata={op_name="a-0"}\n'
        "  f = f32[] constant(-0)\n"
        '  g = f32[3]{0} add(a, b), metadata={op_name="x -0 y"}\n'
        '  h = f32[2]{0} constant({-0, 1}), metadata={op_name="x -0 y" source_line=-0}\n'
        "  t = (f32[], f32[1]{0}) constant((-0, {-0}))\n"
        '  i = f32[] add(a, b), metadata={op_name="x constant(-0) y"}\n'
        "  u = f32[] constant(-0)"
    )
    assert emit.negative_zeros_kept(text) == (
        "  c = f32[3]{0} constant({-0.0, 1, -0.5})\n"
        "  d = f32[2,2]{1,0} constant({ { -0.0, 2 }, {3, -0.0 } })\n"
        '  e = s32[] constant(0), metadata={op_name="a-0"}\n'
        "  f = f32[] constant(-0.0)\n"
        '  g = f32[3]{0} add(a, b), metadata={op_name="x -0 y"}\n'
        '  h = f32[2]{0} constant({-0.0, 1}), metadata={op_name="x -0 y" source_line=-0}\n'
        "  t = (f32[], f32[1]{0}) constant((-0.0, {-0.0}))\n"
        '  i = f32[] add(a, b), metadata={op_name="x constant(-0) y"}\n'
        "  u = f32[] constant(-0.0)"
    )


def test_the_converter_logs_nothing_to_stderr(capfd):
    module = processed(MHLO_ARGSORT, f"inline,{MHLO_PASSES}")
    capfd.readouterr()
    emit.render(module, "hlo-text")
    emit.render(module, "hlo-proto")
    assert capfd.readouterr().err == ""


# ---------------------------------------------------------------------------- errors


def located(text: str, op_name: str, name: str = "prog.mlir") -> str:
    """``name:line:col`` of the op ``op_name`` in ``text`` (MLIR's location of an op: its
    name, or the quote opening it in the generic form)."""
    for number, line in enumerate(text.splitlines(), 1):
        match = re.search(rf'"?{re.escape(op_name)}\b', line)
        if match:
            return f"{name}:{number}:{match.start() + 1}"
    raise AssertionError(op_name)


UNREGISTERED = """func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.abs %x : tensor<4xf32>
  %1 = "penguin_test.frob"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
"""
ARITH = """func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.abs %x : tensor<4xf32>
  %1 = arith.addf %0, %x : tensor<4xf32>
  return %1 : tensor<4xf32>
}
"""
MHLO_DOMAIN = """func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = mhlo.abs %x : tensor<4xf32>
  %1 = "mhlo.domain"(%0) <{kind = #mhlo<kind sharding>, entry_metadata = "{maximal device=0}", exit_metadata = "{maximal device=1}"}> : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
"""
COMPLEX_CONSTANT_CONVERT = """func.func @main() -> tensor<f32> {
  %c = stablehlo.constant dense<(1.0, 2.0)> : tensor<complex<f32>>
  %0 = stablehlo.convert %c : (tensor<complex<f32>>) -> tensor<f32>
  return %0 : tensor<f32>
}
"""
RECURSIVE_CALL = """func.func @main(%x: tensor<i32>) -> tensor<i32> {
  %0 = call @again(%x) : (tensor<i32>) -> tensor<i32>
  return %0 : tensor<i32>
}
func.func private @again(%x: tensor<i32>) -> tensor<i32> {
  %0 = call @again(%x) : (tensor<i32>) -> tensor<i32>
  return %0 : tensor<i32>
}
"""
F6_CONSTANT = """func.func @main() -> tensor<4xf6E2M3FN> {
  %c = stablehlo.constant dense<[1.0, 2.0, -3.0, -4.0]> : tensor<4xf6E2M3FN>
  return %c : tensor<4xf6E2M3FN>
}
"""


@pytest.mark.parametrize("kind", ["executable", "hlo-text", "hlo-proto"])
def test_an_unregistered_op_is_one_line_naming_it(kind):
    module = penguin_opt.parse(
        UNREGISTERED, name="prog.mlir", context=make_context(allow_unregistered=True)
    )
    with pytest.raises(emit.EmitError) as caught:
        emit.render(module, kind, name="prog.mlir")
    message = assert_one_line(caught.value)
    assert message.startswith(f"{located(UNREGISTERED, 'penguin_test.frob')}: error: cannot emit")
    assert "'penguin_test.frob'" in message


def test_what_xla_refuses_is_one_line_naming_the_op_at_its_location():
    module = penguin_opt.parse(ARITH, name="prog.mlir")
    assert "arith.addf" in emit.render(module, "executable")  # kept as it is
    for kind in ("hlo-text", "hlo-proto"):
        with pytest.raises(emit.EmitError) as caught:
            emit.render(module, kind, name="prog.mlir")
        message = assert_one_line(caught.value)
        assert message.startswith(f"{located(ARITH, 'arith.addf')}: error: cannot emit HLO: ")
        assert "'arith.addf'" in message


def test_an_mhlo_op_stablehlo_cannot_encode_is_one_line_naming_it():
    module = penguin_opt.parse(MHLO_DOMAIN, name="prog.mlir")
    with pytest.raises(emit.EmitError) as caught:
        emit.render(module, "executable", name="prog.mlir")
    message = assert_one_line(caught.value)
    assert message.startswith(
        f"{located(MHLO_DOMAIN, 'mhlo.domain')}: error: cannot emit executable StableHLO: "
    )
    assert "'mhlo.domain'" in message
    assert "%" not in message  # no op dump


@pytest.mark.parametrize(
    "text",
    [COMPLEX_CONSTANT_CONVERT, RECURSIVE_CALL, F6_CONSTANT],
    ids=["complex-convert", "recursive-call", "f6-constant"],
)
def test_a_converter_crash_is_one_line_and_this_process_lives_on(text, capfd):
    """XLA's converter ends the process on these (SIGSEGV; for f6E2M3FN a CHECK failure
    from jaxlib 0.10 on, a clean error in 0.9.2): it runs in a child."""
    module = penguin_opt.parse(text, name="crash.mlir")
    with pytest.raises(emit.EmitError) as caught:
        emit.render(module, "hlo-text", name="crash.mlir")
    message = assert_one_line(caught.value)
    assert re.match(r"crash\.mlir(:\d+:\d+)?: error: cannot emit HLO: ", message), message
    assert capfd.readouterr().err == ""
    assert emit.render(processed(NOT_MAIN, "inline"), "hlo-text").startswith("HloModule")


def test_the_only_public_function_is_the_entry():
    executable = emit.render(processed(NOT_MAIN, "inline"), "executable")
    assert "func.func @main(" in executable
    assert "@f" not in executable


def test_no_entry_function_is_one_line():
    two = NOT_MAIN + NOT_MAIN.replace("@f", "@g")
    module = penguin_opt.parse(two, name="two.mlir")
    assert "@g(" in emit.render(module, "executable")
    with pytest.raises(emit.EmitError, match=r"^two\.mlir: error: cannot emit HLO: no @main"):
        emit.render(module, "hlo-proto", name="two.mlir")


# ---------------------------------------------------------------------------- real models


def corpus_model(relative: str, prefix: str) -> str:
    """A corpus program (its check ops dropped, @main's tuple result returned as its
    elements: the XLA oracle cannot return a tuple) after the native ``prefix``."""
    if not (CORPUS / relative).exists():
        pytest.skip(f"no shared corpus at {CORPUS}")
    lines = (CORPUS / relative).read_text().splitlines()
    module = penguin_opt.parse(
        "\n".join(x for x in lines if "@check.expect" not in x), name=relative
    )
    with module.context, ir.Location.unknown():
        return_tuple_elements(module)
    if prefix:
        penguin_opt.run(module, prefix)
    return penguin_opt.to_text(module)


def return_tuple_elements(module: ir.Operation) -> None:
    """``return %t`` of ``%t = mhlo.tuple(%a, %b)`` in @main becomes ``return %a, %b``."""
    main, _ = entry_function(module)
    block = main.regions[0].blocks[0]
    ret = block.operations[len(block.operations) - 1].operation
    tuple_op = defining_op_of(ret.operands[0]) if len(ret.operands) == 1 else None
    if tuple_op is None or tuple_op.name != "mhlo.tuple":
        return
    values = list(tuple_op.operands)
    ir.Operation.create("func.return", operands=values, ip=ir.InsertionPoint(ret))
    ret.erase()
    ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
    main.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get(list(ftype.inputs), [v.type for v in values])
    )


TO_SH = "hlo-legalize-to-stablehlo"
# (model, native prefix (the StableHLO twin: legalized first), passes)
MODELS = [
    ("byteir/E2E/CUDA_MLPInference_input.mlir", "", MHLO_PASSES),
    ("byteir/E2E/CUDA_MLPInference_input.mlir", TO_SH, SH_PASSES),
    ("byteir/E2E/Host_Case1_00_Input.mlir", "", MHLO_PASSES),
    ("byteir/E2E/CUDA_ResNet18_FW_input.mlir", "", MHLO_PASSES),
    (
        "stablehlo/testdata/conv_general_dilated_float32_2_3_9_10_float32_3_3_4_5_t2.mlir",
        "",
        SH_PASSES,
    ),
    ("stablehlo/testdata/top_k_float32_5_3_chlo.mlir", "", SH_PASSES),
]
SLOW_MODELS = [
    ("byteir/E2E/CUDA_ResNet18_FW_input.mlir", TO_SH, SH_PASSES),
    ("byteir/E2E/Host_Case1_00_Input.mlir", TO_SH, SH_PASSES),
]


def model_id(model: tuple[str, str, str]) -> str:
    return f"{Path(model[0]).stem}-{'stablehlo' if model[2] == SH_PASSES else 'mhlo'}"


def check_model(relative: str, prefix: str, passes: str) -> None:
    before = corpus_model(relative, prefix)
    module = processed(before, f"inline,{passes}")
    after = penguin_opt.to_text(module)
    executable = emit.render(module, "executable", name=relative)
    with make_context():
        stock_parse(executable)
    try:
        assert_same_results(before, executable)
        return
    except equivalence.NotCheckable as err:  # an f16 model's long reductions
        reason = str(err)
    assert "cannot tell a result from its negation" in reason, reason
    assert_same_results(after, executable)  # what the emitter must keep, exactly


@pytest.mark.parametrize(
    ("relative", "prefix", "passes"), MODELS, ids=[model_id(m) for m in MODELS]
)
def test_corpus_model_executable_runs_on_xla_like_the_input(relative, prefix, passes):
    check_model(relative, prefix, passes)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("relative", "prefix", "passes"), SLOW_MODELS, ids=[model_id(m) for m in SLOW_MODELS]
)
def test_corpus_model_executable_runs_on_xla_like_the_input_slow(relative, prefix, passes):
    check_model(relative, prefix, passes)


def test_optimized_hlo_becomes_an_executable_that_computes_the_jax_function():
    """XLA's optimized HLO holds fusions, copies and bitcasts, which no converter
    legalizes: --emit=executable (and hlo-text) refused every such file (outside tester
    F), and the checker could not run a bitcast from f32 to s32 (jnp.sort's comparator).
    Now they are what they compute; the results are jax's own, bit for bit."""
    import jax
    import jax.numpy as jnp

    def f(x, w):
        return jnp.sort(x, axis=-1), jnp.tanh(x @ w).T + 1.0

    x = np.array([[3.0, -0.0, np.nan, 0.0, -1.5, 2.0]] * 4, np.float32)
    w = np.random.default_rng(0).standard_normal((6, 5)).astype(np.float32)
    optimized = jax.jit(f).lower(x, w).compile().as_text()
    assert " fusion(" in optimized  # (the bitcasts: XLA's version decides; see below)
    module = processed(optimized, f"inline,{SH_PASSES}", name="f.opt.hlo")
    # a StableHLO import that starts with XLA's mhlo.fusion is no MHLO program (tester G)
    fused_first = jax.jit(lambda x: jnp.sort(jnp.exp(x) + 1.0)).lower(x).compile().as_text()
    for passes, says in ((SH_PASSES, []), ("canonicalize-for-penguin", ["stablehlo-"])):
        result = penguin_opt.run(penguin_opt.parse(fused_first), passes)
        lines = [d.message for d in result.diagnostics if "this program is" in d.message]
        assert [m.rpartition("its pass is ")[2][:10] for m in lines] == says, lines
    executable = emit.render(module, "executable")
    with make_context():
        names = {op.name for op in ops_under(stock_parse(executable))}
    assert not [n for n in names if n.startswith("mhlo.")], names
    want = [np.asarray(o) for o in jax.jit(f)(x, w)]
    got = equivalence.run_xla(executable, [x, w])
    assert [g.tobytes() for g in got] == [v.tobytes() for v in want]
    hlo_text = emit.render(module, "hlo-text")
    assert hlo_text.startswith("HloModule ")
    before = penguin_opt.to_text(penguin_opt.parse(optimized))
    assert_same_results(before, penguin_opt.to_text(module), oracle="interpreter")


def test_a_bitcast_that_changes_the_element_type_runs_as_bitcast_convert():
    """XLA's sort comparators bitcast f32 to s32 (a layout bitcast whose element type
    changes at the same width): the checker could not run it, the emitter not emit it."""
    hlo = """HloModule bits

ENTRY e {
  x = f32[2,3]{0,1} parameter(0)
  ROOT y = s32[3,2]{0,1} bitcast(x)
}
"""
    module = penguin_opt.parse(hlo, name="bits.hlo")
    executable = emit.render(module, "executable")
    assert "stablehlo.bitcast_convert" in executable
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
    (y,) = equivalence.run_xla(executable, [x])
    want = x.T.ravel().view(np.int32).reshape(2, 3).T  # memory order, read as s32
    np.testing.assert_array_equal(y, want)
    (z,) = equivalence.interpret(
        equivalence.prepare_for_interpreter(penguin_opt.to_text(module)), [x]
    )
    np.testing.assert_array_equal(z, want)


def test_executable_gives_resource_constants_their_values():
    """``--emit=executable`` kept a ``dense_resource`` constant, which XLA refuses
    ("Only dense elements attr are supported"; outside tester H): it is now the dense
    constant the blob holds, and runs on XLA as emitted."""
    module = processed(RESOURCE, "stablehlo-canonicalize-for-penguin")
    executable = emit.render(module, "executable")
    assert "dense_resource" not in executable
    assert "dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]>" in executable
    assert_runs_as_emitted(RESOURCE, executable, interpreter=True)
    # complex ones too (the first version kept them: the review)
    complex_resource = RESOURCE.replace("xf32>", "xcomplex<f32>>").replace("4xc", "2xc")
    executable = emit.render(processed(complex_resource, "cse"), "executable")
    assert "dense_resource" not in executable
    assert "dense<[(1.000000e+00,2.000000e+00), (3.000000e+00,4.000000e+00)]>" in executable
    assert_runs_as_emitted(complex_resource, executable, interpreter=False)
    elided = RESOURCE.split("{-#")[0].replace("<weights>", "<__elided__>")
    with pytest.raises(emit.EmitError) as caught:
        emit.render(penguin_opt.parse(elided, name="prog.mlir"), "executable", name="prog.mlir")
    assert assert_one_line(caught.value) == (
        "prog.mlir: error: cannot emit executable StableHLO: the values of "
        "'dense_resource<__elided__>' are not in the program (elided when it was printed)"
    )
