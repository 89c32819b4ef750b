"""The one seam between the MHLO and StableHLO twins of each pass.

Every rewriter is written once against a :class:`Dialect`; the twins differ only in the op
name prefix and in how integer-list attributes are spelled (MHLO: ``dense<..> :
tensor<Nxi64>``; StableHLO: ``array<i64: ..>``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from jaxlib.mlir import ir


@dataclass(frozen=True)
class Dialect:
    prefix: str

    def op(self, mnemonic: str) -> str:
        return f"{self.prefix}.{mnemonic}"

    def is_op(self, op: ir.Operation, mnemonic: str) -> bool:
        return op.name == f"{self.prefix}.{mnemonic}"

    def i64_list(self, values: Sequence[int]) -> ir.Attribute:
        """A list-of-i64 attribute (broadcast_dimensions, window_strides, ...)."""
        values = [int(v) for v in values]
        if self.prefix == "stablehlo":
            return ir.DenseI64ArrayAttr.get(values)
        i64 = ir.IntegerType.get_signless(64)
        return ir.DenseElementsAttr.get(
            np.array(values, dtype=np.int64), type=i64, shape=[len(values)]
        )


def i64_matrix(rows: Sequence[Sequence[int]]) -> ir.Attribute:
    """An Nx2 ``dense<..> : tensor<Nx2xi64>`` (padding attributes, both dialects)."""
    arr = np.array(rows, dtype=np.int64).reshape(len(rows), 2)
    i64 = ir.IntegerType.get_signless(64)
    return ir.DenseElementsAttr.get(arr, type=i64, shape=[arr.shape[0], 2])


MHLO = Dialect("mhlo")
STABLEHLO = Dialect("stablehlo")


__all__ = [
    "MHLO",
    "STABLEHLO",
    "Dialect",
    "i64_matrix",
]
