"""The compat module: each shim is the one the installed jaxlib needs, and works.

CI runs this file on the pinned set, the newest (Python 3.13, jax 0.12) and the oldest
(jax 0.9.2, numpy 2.0) supported sets, so each shim is exercised on a version needing it.
"""

from __future__ import annotations

import importlib.util
import io
import re
from pathlib import Path

import numpy as np
import pytest
from jaxlib.mlir import ir
from jaxlib.mlir._mlir_libs import _jax_mlir_ext

import penguin_opt
from penguin_opt import _compat
from penguin_opt.context import make_context

ROOT = Path(__file__).resolve().parents[1]

CALLS = """
func.func private @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %a : tensor<2xf32>
  %1 = stablehlo.multiply %0, %a : tensor<2xf32>
  return %1 : tensor<2xf32>
}
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = call @f(%a) : (tensor<2xf32>) -> tensor<2xf32>
  %1 = stablehlo.subtract %0, %a : tensor<2xf32>
  return %1 : tensor<2xf32>
}
"""


def test_version_thresholds_match_the_installed_interfaces():
    import jaxlib.version

    assert _compat.JAXLIB_VERSION == _compat._version_tuple(jaxlib.version.__version__)
    signature = (_jax_mlir_ext.inlined_func_call.__doc__ or "").splitlines()[0]
    takes_block = "block:" in signature
    assert _compat._INLINE_TAKES_BLOCK == takes_block
    has_hlo = importlib.util.find_spec("jaxlib._hlo") is not None
    assert _compat._HLO_MODULE_IN_JAX == (not has_hlo)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("0.10.2", (0, 10, 2)), ("0.12.0.1", (0, 12, 0)), ("0.11.0rc1", (0, 11, 0)), ("1.0", (1, 0))],
)
def test_version_tuple(text, expected):
    assert _compat._version_tuple(text) == expected


def test_inlined_func_call_inserts_before_the_call():
    with make_context() as ctx, ir.Location.unknown(ctx):
        module = ir.Module.parse(CALLS)
        callee, main = module.body.operations[0], module.body.operations[1]
        call = main.regions[0].blocks[0].operations[0]
        values = _compat.inlined_func_call(callee, list(call.operands), call.operation)
        names = [op.operation.name for op in main.regions[0].blocks[0].operations]
        assert names == [
            "stablehlo.add",
            "stablehlo.multiply",
            "func.call",
            "stablehlo.subtract",
            "func.return",
        ]
        assert len(values) == 1
        assert values[0].owner.name == "stablehlo.multiply"


def test_hlo_round_trip():
    import jax
    import jax.numpy as jnp

    hlo = jax.jit(jnp.cos).lower(jnp.zeros(3)).compiler_ir("hlo").as_hlo_text()
    proto = _compat.hlo_text_to_proto(hlo)
    _compat.hlo_module_class().from_serialized_hlo_module_proto(proto)
    with make_context():
        module = ir.Module.parse(_compat.hlo_to_stablehlo(proto))
        assert "stablehlo.cosine" in str(module)
    with pytest.raises(Exception, match=r"\S"):
        _compat.hlo_text_to_proto("HloModule broken\n ENTRY {")


def test_cpu_compile_and_load_runs_a_program():
    import jax

    exe, device = _compat.cpu_compile_and_load(
        "func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {\n"
        "  %0 = stablehlo.add %a, %a : tensor<3xf32>\n  return %0 : tensor<3xf32>\n}\n"
    )
    buffers = [jax.device_put(np.arange(3, dtype=np.float32), device)]
    out = exe.execute_sharded(buffers).disassemble_into_single_device_arrays()
    np.testing.assert_array_equal(np.asarray(out[0][0]), [0, 2, 4])


def test_refine_polymorphic_shapes_specializes_and_checks_assertions():
    def refined(n: int) -> str:
        program = (
            f"func.func @main(%x: tensor<{n}xf32>) -> tensor<?xf32> {{\n"
            f"  %n = stablehlo.get_dimension_size %x, dim = 0 : (tensor<{n}xf32>) -> tensor<i32>\n"
            "  %c2 = stablehlo.constant dense<2> : tensor<i32>\n"
            "  %k = stablehlo.divide %n, %c2 : tensor<i32>\n"
            "  %ok = stablehlo.compare GT, %k, %c2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
            "  stablehlo.custom_call @shape_assertion(%ok, %k) {api_version = 2 : i32, "
            'error_message = "k = {0} is too small", has_side_effect = true} '
            ": (tensor<i1>, tensor<i32>) -> ()\n"
            "  %v, %i = stablehlo.custom_call @stablehlo.dynamic_top_k(%x, %k) {api_version = 2 : i32}"
            f" : (tensor<{n}xf32>, tensor<i32>) -> (tensor<?xf32>, tensor<?xi32>)\n"
            "  return %v : tensor<?xf32>\n}\n"
        )
        with make_context():
            module = ir.Module.parse(program)
            buffer = io.BytesIO()
            module.operation.write_bytecode(buffer)
            return str(ir.Module.parse(_compat.refine_polymorphic_shapes(buffer.getvalue())))

    assert "-> tensor<4xf32>" in refined(8)
    assert "chlo.top_k" in refined(8)
    with pytest.raises(Exception, match="k = 2 is too small"):
        refined(4)


def test_inline_pass_end_to_end():
    module = penguin_opt.parse(CALLS)
    penguin_opt.run(module, "inline")
    text = penguin_opt.to_text(module)
    assert "call @f" not in text
    assert "func.func private @f" not in text


def test_native_library_exists():
    assert _compat.native_library_path().is_file()


PRIVATE = re.compile(r"_mlir_libs|jaxlib\._|from jaxlib import _|jax\._src")


def test_private_interfaces_only_in_the_compat_module():
    """Every private jax/jaxlib interface is reached through ``penguin_opt._compat``."""
    offenders = []
    for folder in ("src", "tools", "benchmarks", "tests"):
        for path in (ROOT / folder).rglob("*.py"):
            if path.name in ("_compat.py", "test_compat.py"):
                continue
            for number, line in enumerate(path.read_text().splitlines(), 1):
                code = line.split("#", 1)[0]
                if "import" in code and PRIVATE.search(code):
                    offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


def test_mlir_to_xla_computation_converts_text_and_bytecode():
    """XLA's MLIR->HLO converter (same keywords from jaxlib 0.9.2 through 0.12.x): HLO
    text, a proto the HLO module class reads, and an error naming what it refuses."""
    import io as _io

    from jaxlib import _jax

    signature = _jax.mlir.mlir_module_to_xla_computation.__doc__ or ""
    assert "use_tuple_args" in signature
    assert "return_tuple" in signature
    program = CALLS.replace("@f", "@twice")
    with make_context():
        buffer = _io.BytesIO()
        ir.Module.parse(program).operation.write_bytecode(buffer)
    for given in (program, buffer.getvalue()):
        computation = _compat.mlir_to_xla_computation(given)
        text = computation.as_hlo_text(print_large_constants=True)
        assert text.startswith("HloModule ")
        assert "multiply(" in text
        assert "subtract(" in text
        module = _compat.hlo_module_class().from_serialized_hlo_module_proto(
            computation.as_serialized_hlo_module_proto()
        )
        assert "subtract(" in module.to_string()
    refused = (
        "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %0 = arith.addf %a, %a : tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n"
    )
    with pytest.raises(Exception, match=r"'arith\.addf' op"):
        _compat.mlir_to_xla_computation(refused)
