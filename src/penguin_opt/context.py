"""One MLIR context factory that knows every dialect and pass the inputs need.

A bare ``ir.Context()`` lacks ``func``/``chlo`` registration; this factory registers the
upstream dialects jaxlib ships (func, arith, tensor, shape, ...), StableHLO, MHLO, CHLO and
Shardy, and registers the native StableHLO/MHLO passes once per process so pipelines such
as ``stablehlo-legalize-to-hlo`` can be named.
"""

from __future__ import annotations

import functools

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import chlo, mhlo, sdy, stablehlo

from ._compat import register_dialects


@functools.cache
def _register_native_passes() -> None:
    stablehlo.register_stablehlo_passes()
    mhlo.register_mhlo_passes()


def make_context(*, allow_unregistered: bool = False) -> ir.Context:
    """A fresh context with every dialect the tool reads or writes loaded."""
    _register_native_passes()
    registry = ir.DialectRegistry()
    register_dialects(registry)
    ctx = ir.Context()
    ctx.append_dialect_registry(registry)
    ctx.load_all_available_dialects()
    stablehlo.register_dialect(ctx)
    mhlo.register_mhlo_dialect(ctx)
    chlo.register_dialect(ctx)
    sdy.register_dialect(ctx)
    ctx.allow_unregistered_dialects = allow_unregistered
    return ctx


__all__ = [
    "make_context",
]
