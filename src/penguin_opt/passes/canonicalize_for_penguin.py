"""canonicalize-for-penguin / stablehlo-canonicalize-for-penguin (CanonicalizeForTensorizer).

The MHLO pass and its StableHLO twin are one implementation parameterized by dialect. One
``runOnOperation`` is a single forward sweep of the seed's rewriters in the seed's fixed
order over the main function (or every function with ``all-functions=true``): no
fixed-point iteration, no folding, CSE or DCE beyond what each rewriter does itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from jaxlib.mlir import ir

from ..dialect import MHLO, STABLEHLO, Dialect
from ..ir_util import entry_function, functions, symbol_name
from .base import (
    Diagnostic,
    ModulePass,
    PassError,
    RunState,
    Severity,
    option,
    warn_if_other_dialect,
)
from .penguin_rewriters import (
    CanonicalizeTupleOp,
    FuseIotaSort,
    LowerResizeNearestGrad,
    RemoveDeadZeroSizedTensorOps,
    ReplaceBroadcastInDimWithConstants,
    ReplaceBroadcastsWithBroadcastInDim,
    ReplaceConvertsWithConstants,
    ReplaceGetDimensionSize,
    ReplaceInvalidBackendConfigs,
)
from .rewriter import Rewriter

if TYPE_CHECKING:
    from .sweep import Sweep

DEFAULT_BROADCAST_BUDGET = 65536


@dataclass(frozen=True)
class CanonicalizeForPenguin(ModulePass):
    """canonicalize-for-penguin: the eight CanonicalizeForTensorizer rewriters on MHLO."""

    name: ClassVar[str] = "canonicalize-for-penguin"
    summary: ClassVar[str] = "CanonicalizeForTensorizer's eight rewriters, on MHLO ops"
    dialect: ClassVar[Dialect] = MHLO

    broadcast_num_elements_to_fold: int = option(
        DEFAULT_BROADCAST_BUDGET,
        "fold broadcast_in_dim(constant) only when the result has at most this many elements",
        min=0,
    )
    resize_nearest_grad_mode: str = option(
        "mean",
        "ResizeNearestGrad lowering: 'mean' (the seed: window sum / window volume) or "
        "'sum' (the gradient of nearest upsampling in torch and TF)",
        choices=("mean", "sum"),
    )
    all_functions: bool = option(
        False, "run on every function, not only the main one (the seed's scope)"
    )

    def rewriters(self) -> tuple[Rewriter, ...]:
        """The seed's dispatch order (runOnOperation, CERTAIN)."""
        return (
            FuseIotaSort(),  # 1
            CanonicalizeTupleOp(),  # 2
            ReplaceGetDimensionSize(),  # 3
            ReplaceConvertsWithConstants(),  # 4
            ReplaceInvalidBackendConfigs(),  # 5
            LowerResizeNearestGrad(mode=self.resize_nearest_grad_mode),  # 6
            ReplaceBroadcastsWithBroadcastInDim(),  # 7
            ReplaceBroadcastInDimWithConstants(budget=self.broadcast_num_elements_to_fold),  # 8
        )

    def run(self, module: ir.Operation, state: RunState) -> None:
        functions, rewriters, sweep = self.begin(module, state)
        for rewriter in rewriters:  # the seed's order, one sweep
            rewriter.run_on(functions, sweep)

    def begin(
        self, module: ir.Operation, state: RunState
    ) -> tuple[list[ir.Operation], tuple[Rewriter, ...], Sweep]:
        """A run's start: its functions, its table, and the sweep with every root kind's
        worklist collected (``run`` then gives each rewriter its turn)."""
        from .sweep import Sweep, collect

        functions = target_functions(module, self.all_functions, self.name)
        rewriters = self.rewriters()
        d = self.dialect
        worklists = collect(functions, {d.op(r.root) for r in rewriters if r.root})
        if not any(worklists.values()):
            warn_if_other_dialect(functions, d.prefix, self.name, state)
        return functions, rewriters, Sweep(d, self.name, state, worklists)


@dataclass(frozen=True)
class StablehloCanonicalizeForPenguin(CanonicalizeForPenguin):
    """stablehlo-canonicalize-for-penguin: the same rewriters on StableHLO ops, then
    removeDeadZeroSizedTensorOps (the twin's extra rewriter; placed last, see seed-notes)."""

    name: ClassVar[str] = "stablehlo-canonicalize-for-penguin"
    summary: ClassVar[str] = (
        "CanonicalizeForTensorizer's rewriters on StableHLO ops, plus removeDeadZeroSizedTensorOps"
    )
    dialect: ClassVar[Dialect] = STABLEHLO

    def rewriters(self) -> tuple[Rewriter, ...]:
        return (*super().rewriters(), RemoveDeadZeroSizedTensorOps())  # 9


def target_functions(
    module: ir.Operation, all_functions: bool, pass_name: str
) -> list[ir.Operation]:
    """The seed's getMainFunction: ``@main``, else the only public function; a module
    without functions (a blank ``--split-input-file`` chunk) has nothing to rewrite."""
    if all_functions:
        return functions(module)
    entry, public = entry_function(module)
    if entry is not None:
        return [entry]
    if not functions(module):
        return []
    names = ", ".join("@" + symbol_name(f) for f in public)
    raise PassError(
        Diagnostic(
            Severity.ERROR,
            f"{pass_name}: cannot find the main function: no @main and {len(public)} public "
            f"functions ({names or 'none'}); name one @main or pass "
            f"'{pass_name}{{all-functions=true}}'",
            str(module.location),
        )
    )


__all__ = ["CanonicalizeForPenguin", "StablehloCanonicalizeForPenguin", "target_functions"]
