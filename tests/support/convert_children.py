"""Child-process bodies for tests/test_convert_math.py (run by ``penguin_opt.isolated``).

The StableHLO reference interpreter's ``stablehlo.convert``, one module per destination.
``eval_module`` cannot hand back complex tensors (nanobind aborts the process), so for a
complex destination the module returns ``stablehlo.real`` and ``stablehlo.imag`` of the
convert instead; those copy the parts exactly.
"""

from __future__ import annotations

import functools

import numpy as np


@functools.cache
def _context():
    from penguin_opt.context import make_context

    return make_context()


def _convert_text(size: int, src: str, dst: str) -> str:
    t_in, t_out = f"tensor<{size}x{src}>", f"tensor<{size}x{dst}>"
    convert = f"%0 = stablehlo.convert %a : ({t_in}) -> {t_out}"
    if dst.startswith("complex"):
        t_part = f"tensor<{size}x{dst[8:-1]}>"
        return (
            f"func.func @main(%a: {t_in}) -> ({t_part}, {t_part}) {{ {convert}\n"
            f"%1 = stablehlo.real %0 : ({t_out}) -> {t_part}\n"
            f"%2 = stablehlo.imag %0 : ({t_out}) -> {t_part}\n"
            f"return %1, %2 : {t_part}, {t_part} }}"
        )
    return f"func.func @main(%a: {t_in}) -> {t_out} {{ {convert}\nreturn %0 : {t_out} }}"


def interpret_converts(values: np.ndarray, src: str, dsts: list[str]) -> list[np.ndarray]:
    """(child process) The interpreter's convert of the flat ``values`` (of element type
    ``src``) to each of ``dsts``: one batch of destinations per round trip."""
    from jaxlib.mlir import ir
    from jaxlib.mlir.dialects import stablehlo

    from penguin_opt.elements import DTYPES, make_elements, read_elements

    arr = np.ascontiguousarray(values, dtype=DTYPES[src]).reshape(-1)
    t_in = f"tensor<{arr.size}x{src}>"
    results = []
    with _context(), ir.Location.unknown():
        arg = make_elements(arr, ir.Type.parse(t_in))
        for dst in dsts:
            module = ir.Module.parse(_convert_text(arr.size, src, dst))
            outs = stablehlo.eval_module(module, [arg])
            parts = [np.ascontiguousarray(read_elements(o)).reshape(-1) for o in outs]
            if len(parts) == 2:
                res = np.ascontiguousarray(np.stack(parts, axis=-1)).reshape(-1)
                res = res.view(DTYPES[dst])
            else:
                res = parts[0].copy()  # read_elements may view the context's storage
            assert res.dtype == DTYPES[dst], (res.dtype, dst)
            results.append(res)
    return results
