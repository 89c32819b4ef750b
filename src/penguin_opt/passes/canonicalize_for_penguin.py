"""canonicalize-for-penguin / stablehlo-canonicalize-for-penguin (CanonicalizeForTensorizer).

The MHLO pass and its StableHLO twin are one implementation parameterized by dialect. One
``runOnOperation`` is a single forward sweep of the seed's rewriters in the seed's fixed
order over the main function (or every function with ``all-functions=true``): no
fixed-point iteration, no folding, CSE or DCE beyond what each rewriter does itself.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import ClassVar

from jaxlib.mlir import ir

from ..dialect import MHLO, STABLEHLO, Dialect
from ..ir_util import ops_named, static_shape, string_value
from .base import Diagnostic, ModulePass, PassError, RunState, Severity, option
from .penguin_rewriters import (
    _EFFECTFUL,
    CanonicalizeTupleOp,
    FuseIotaSort,
    LowerResizeNearestGrad,
    RemoveDeadZeroSizedTensorOps,
    ReplaceBroadcastInDimWithConstants,
    ReplaceBroadcastsWithBroadcastInDim,
    ReplaceConvertsWithConstants,
    ReplaceGetDimensionSize,
    ReplaceInvalidBackendConfigs,
    Rewriter,
)

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
        from .sweep import Sweep, collect

        functions = target_functions(module, self.all_functions, self.name)
        rewriters = self.rewriters()
        d = self.dialect
        worklists = collect(functions, {d.op(r.root) for r in rewriters if r.root != "*"})
        sweep = Sweep(d, self.name, state, worklists)
        for rewriter in rewriters:
            if isinstance(rewriter, RemoveDeadZeroSizedTensorOps):
                remove_dead_zero_sized_tensor_ops(rewriter, functions, sweep)
                continue
            if rewriter.root == "*":
                ops = [op for f in functions for op in ops_named_all(f)]
            else:
                ops = sweep.worklists[d.op(rewriter.root)]
            rewriter.run(ops, sweep)


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


def remove_dead_zero_sized_tensor_ops(
    rewriter: RemoveDeadZeroSizedTensorOps, functions: list[ir.Operation], sweep
) -> None:
    """``rewriter.run`` over every op of ``functions`` (post-order), at a fraction of the cost.

    The rewriter's root is every op, so Python must see every op (the bindings have no
    native filter on result types). This walk keeps that to the cheapest possible visit:
    an op-name lookup and, for side-effect-free ops of the dialect, a lookup of each result
    type, both memoized; ``rewriter.visit`` is called only for the ops whose results are
    all static zero-element tensors. Every other op is counted with the skip reason
    ``rewrite`` would give it (its tests, in its order), so the statistics are those of
    ``rewriter.run(every op)``.
    """
    stats = sweep.stats(rewriter.name)
    prefix = sweep.dialect.prefix
    effectful = _EFFECTFUL
    kinds: dict[str, bool] = {}  # op name -> side-effect-free op of the dialect
    zero_sized: dict[ir.Type, bool] = {}  # result type -> static, zero elements
    skipped = Counter()
    candidates: list[ir.Operation] = []
    last: list = [None]  # the last visited op's skip reason, or "candidate"
    advance = ir.WalkResult.ADVANCE

    def visit(op: ir.Operation) -> ir.WalkResult:
        name = op.name
        kind = kinds.get(name)
        if kind is None:
            dialect, _, mnemonic = name.partition(".")
            kind = kinds[name] = dialect == prefix and mnemonic not in effectful
        reason = "candidate"
        if not kind:
            reason = "not-side-effect-free"
        elif not (types := op.results.types):
            reason = "no-results"
        else:
            for t in types:
                zero = zero_sized.get(t)
                if zero is None:
                    shape = static_shape(t)
                    zero = zero_sized[t] = shape is not None and 0 in shape
                if not zero:
                    reason = "not-zero-sized"
                    break
        if reason == "candidate":
            candidates.append(op)
        else:
            skipped[reason] += 1
        last[0] = reason
        return advance

    for f in functions:
        f.walk(visit, ir.WalkOrder.POST_ORDER)
        # The walk ends at ``f`` itself, which is not under ``f``: take it back.
        if last[0] == "candidate":
            candidates.pop()
        else:
            skipped[last[0]] -= 1
    stats.matched += sum(skipped.values())
    for reason, count in skipped.items():
        if count:
            stats.skipped[reason] += count
    for op in candidates:
        rewriter.visit(op, sweep, stats)


def ops_named_all(root: ir.Operation) -> list[ir.Operation]:
    """Every op strictly inside ``root``, post-order."""
    found: list[ir.Operation] = []

    def visit(op):
        found.append(op)
        return ir.WalkResult.ADVANCE

    for region in root.regions:
        for block in region.blocks:
            for op in block.operations:
                op.operation.walk(visit, ir.WalkOrder.POST_ORDER)
    return found


def target_functions(module: ir.Operation, all_functions: bool, pass_name: str):
    """The seed's getMainFunction: ``@main``, else the only public function."""
    top = [op.operation for op in module.regions[0].blocks[0].operations]
    funcs = [op for op in top if op.name == "func.func"]
    if all_functions:
        return funcs
    for f in funcs:
        if string_value(f.attributes["sym_name"]) == "main":
            return [f]
    public = [
        f
        for f in funcs
        if "sym_visibility" not in f.attributes
        or string_value(f.attributes["sym_visibility"]) == "public"
    ]
    if len(public) == 1:
        return public
    names = ", ".join("@" + string_value(f.attributes["sym_name"]) for f in public)
    raise PassError(
        Diagnostic(
            Severity.ERROR,
            f"{pass_name}: cannot find the main function: no @main and {len(public)} public "
            f"functions ({names or 'none'}); name one @main or pass "
            f"'{pass_name}{{all-functions=true}}'",
            str(module.location),
        )
    )


__all__ = ["CanonicalizeForPenguin", "StablehloCanonicalizeForPenguin", "ops_named"]
