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

__all__ = ["PASSES", "CanonicalizeForPenguin", "StablehloCanonicalizeForPenguin"]
