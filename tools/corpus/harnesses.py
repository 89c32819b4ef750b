"""jax's own primitive test harnesses as StableHLO programs, for ``tools.corpus.shared``.

    python -m tools.corpus.harnesses OUT_DIR [--per-group N] [--groups a,b] [--no-x64]
    python -m tools.corpus.shared OUT_DIR --jsonl rows.jsonl

jax tests every primitive on a table of harnesses (``jax._src.internal_test_util.
test_harnesses``, written for jax2tf: about 5,600 of them in 132 groups, from ``abs`` to
``conv_general_dilated``, ``sort``, ``reduce_window_*``, ``scatter_*`` and the linear
algebra). This writes each one the CPU supports as the StableHLO text of
``jax.jit(fun).lower(*args)``, one ``.mlir`` file per harness, at most ``--per-group`` per
group (default 10) except the groups whose ops the passes rewrite or gate, which are
written whole. The table is a private jax module: it moves between jax versions, so this
is a tool for sweeps, not a test input.
"""

from __future__ import annotations

import argparse
import collections
import re
import sys
from pathlib import Path

# Groups written whole: the ops the passes rewrite or decide on (convolutions, sorts,
# converts, broadcasts, iotas, pads) and the windowed reductions near them.
WHOLE = frozenset(
    {
        "argmax",
        "argmin",
        "broadcast_in_dim",
        "conv_general_dilated",
        "convert_element_type",
        "iota",
        "pad",
        "reduce_window_add",
        "reduce_window_max",
        "reduce_window_min",
        "reduce_window_mul",
        "select_and_gather_add",
        "select_and_scatter_add",
        "sort",
        "top_k",
    }
)


def export(out: Path, per_group: int, groups: set[str] | None, x64: bool) -> tuple[int, int]:
    """Write the harnesses' programs to ``out``; (written, failed to lower)."""
    import jax

    jax.config.update("jax_platforms", "cpu")
    jax.config.update("jax_enable_x64", x64)
    import numpy as np

    from penguin_opt._compat import primitive_test_harnesses

    table = primitive_test_harnesses()
    if table is None:  # a private module: not in every jax
        raise SystemExit("this jax has no primitive test harness table")
    out.mkdir(parents=True, exist_ok=True)
    taken: collections.Counter[str] = collections.Counter()
    names: set[str] = set()
    written = failed = 0
    for h in table:
        group = h.group_name
        if (groups is not None and group not in groups) or not h.filter("cpu"):
            continue
        if group not in WHOLE and taken[group] >= per_group:
            continue
        taken[group] += 1
        try:
            args = h.dyn_args_maker(np.random.RandomState(0))
            text = jax.jit(h.dyn_fun).lower(*args).as_text()
        except Exception as err:  # a harness jax itself cannot lower
            failed += 1
            print(f"not lowered: {h.fullname}: {type(err).__name__}", file=sys.stderr)
            continue
        name = re.sub(r"[^A-Za-z0-9_.=-]", "_", h.fullname)[:160]
        while name in names:  # names cut short may collide
            name += "_"
        names.add(name)
        (out / f"{name}.mlir").write_text(text)
        written += 1
    return written, failed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.corpus.harnesses", description=__doc__)
    ap.add_argument("out", type=Path)
    ap.add_argument("--per-group", type=int, default=10, metavar="N")
    ap.add_argument("--groups", help="only these groups (comma-separated)")
    ap.add_argument("--no-x64", action="store_true", help="without jax_enable_x64")
    args = ap.parse_args(argv)
    groups = set(args.groups.split(",")) if args.groups else None
    written, failed = export(args.out, args.per_group, groups, not args.no_x64)
    print(f"{written} programs written to {args.out}, {failed} not lowered")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
