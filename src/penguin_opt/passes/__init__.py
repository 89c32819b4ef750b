"""The pass registry: every penguin-opt pass by its pipeline name."""

from __future__ import annotations

from .base import ModulePass
from .canonicalize_for_penguin import CanonicalizeForPenguin, StablehloCanonicalizeForPenguin

PASSES: dict[str, type[ModulePass]] = {
    p.name: p
    for p in (
        CanonicalizeForPenguin,
        StablehloCanonicalizeForPenguin,
    )
}

__all__ = ["PASSES", "CanonicalizeForPenguin", "StablehloCanonicalizeForPenguin"]
