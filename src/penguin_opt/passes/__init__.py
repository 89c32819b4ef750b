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


def _reassociating() -> frozenset[str]:
    tables = (*StablehloCanonicalizeForPenguin().rewriters(), *CanonicalizeConv.rewriters())
    return frozenset(r.name for r in tables if not r.exact)


# Rewriters whose output may round differently (declared by each rewriter's ``exact``):
# a result they touched is compared within a derived tolerance, all others bit for bit.
REASSOCIATING: frozenset[str] = _reassociating()

__all__ = ["PASSES", "REASSOCIATING", "CanonicalizeForPenguin", "StablehloCanonicalizeForPenguin"]
