"""The pass registry: every penguin-opt pass by its pipeline name."""

from __future__ import annotations

from .base import ModulePass
from .canonicalize_conv import CanonicalizeConv, StablehloCanonicalizeConv
from .canonicalize_for_penguin import CanonicalizeForPenguin, StablehloCanonicalizeForPenguin
from .inline import Inline

PASSES: dict[str, type[ModulePass]] = {
    p.name: p
    for p in (
        CanonicalizeForPenguin,
        StablehloCanonicalizeForPenguin,
        CanonicalizeConv,
        StablehloCanonicalizeConv,
        Inline,
    )
}


def _declaring(prop: str) -> frozenset[str]:
    """The rewriters whose ``prop`` (``exact``, ``exact_on_xla``) is False."""
    tables = (*StablehloCanonicalizeForPenguin().rewriters(), *CanonicalizeConv.rewriters())
    return frozenset(r.name for r in tables if not getattr(r, prop))


# Rewriters whose output may round differently (declared by each rewriter's ``exact``):
# a result they touched is compared within a derived tolerance, all others bit for bit.
REASSOCIATING: frozenset[str] = _declaring("exact")
# Bit-exact rewriters whose output XLA may compile into another summation order
# (``exact_on_xla``): where XLA alone checks a program one of them rewrote, its outputs
# compare within the tolerance after a bitwise difference (all of them: the check does not
# trace which outputs the rewrite reaches).
XLA_REORDERS: frozenset[str] = _declaring("exact_on_xla")

__all__ = [
    "PASSES",
    "REASSOCIATING",
    "XLA_REORDERS",
    "CanonicalizeForPenguin",
    "StablehloCanonicalizeForPenguin",
]
