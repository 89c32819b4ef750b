"""The native MLIR/StableHLO/MHLO passes a pipeline may name (``--list-passes``).

MLIR's pass registry has no listing in the Python bindings, so the candidates are the
kebab-case C strings of jaxlib's native library (a pass argument is one, possibly as the
tail of a longer string the linker merged it into), and a candidate is listed only when
MLIR's own pipeline parser accepts it, at module level or under ``func.func``: the list is
exactly what ``-p`` can name in this jaxlib. The parser also spells out each pass's
options with their defaults.
"""

from __future__ import annotations

import functools
import mmap
import re

from jaxlib.mlir import passmanager

from ._compat import native_library_path

_CANDIDATE = re.compile(rb"\x00([a-z][a-z0-9]*(?:-[a-z0-9]+)*)\x00")


def _candidates() -> set[str]:
    with (
        open(native_library_path(), "rb") as f,
        mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data,
    ):
        words = {m.group(1).decode() for m in _CANDIDATE.finditer(data)}
    tails = {w[i + 1 :] for w in words for i, ch in enumerate(w) if ch == "-"}
    return words | tails


@functools.cache
def native_passes() -> tuple[tuple[str, str], ...]:
    """(name, pipeline text with the default options) of every registered native pass,
    sorted by name; penguin-opt's own passes (e.g. ``inline``) take their names."""
    from .context import make_context
    from .passes import PASSES

    found = []
    with make_context():
        for name in sorted(_candidates() - set(PASSES)):
            for anchor in ("{}", "func.func({})"):
                try:
                    pm = passmanager.PassManager.parse(f"builtin.module({anchor.format(name)})")
                except ValueError:
                    continue
                found.append((name, str(pm)[len("builtin.module(") : -1]))
                break
    return tuple(found)


__all__ = ["native_passes"]
