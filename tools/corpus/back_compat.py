"""jax's export backward-compatibility test programs as ``.mlir`` files, for sweeps.

    python -m tools.corpus.back_compat OUT_DIR [--serialized]
    penguin-opt OUT_DIR -o CANON/ -p 'inline,stablehlo-canonicalize-for-penguin,...' \\
        --jobs 2 --check-equivalence --report report.json

jax keeps the StableHLO of programs it exported over the years, to test that it still
runs them (``jax._src.internal_test_util.export_back_compat_test_data``: LAPACK and
cuSOLVER/hipSOLVER custom calls, shape-polymorphic exports with ``stablehlo.dynamic_*``
custom calls, shardings, Pallas and Mosaic kernels). Each ``mlir_module_text`` of those
modules becomes ``MODULE__NAME[_KEY].mlir`` in ``OUT_DIR``; with ``--serialized``, each
``mlir_module_serialized`` (the portable artifact jax runs) becomes ``.mlirbc`` instead.
A private jax module: it moves between jax versions, so this is a tool for sweeps, not a
test input.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path


def _programs(value: object, name: str, field: str) -> Iterator[tuple[str, str | bytes]]:
    """(file stem, program) of each data dict in ``value``: a dict with ``field``
    (``mlir_module_text`` or ``mlir_module_serialized``), or a dict or list of them (one
    level down)."""
    if isinstance(value, dict) and field in value:
        yield name, value[field]
        return
    if isinstance(value, dict):
        items = [(f"{name}_{key}", item) for key, item in value.items()]
    elif isinstance(value, list):
        items = [(f"{name}_{i}", item) for i, item in enumerate(value)]
    else:
        return
    for stem, item in items:
        if isinstance(item, dict) and field in item:
            yield stem, item[field]
        elif isinstance(item, list):
            for i, inner in enumerate(item):
                if isinstance(inner, dict) and field in inner:
                    yield f"{stem}_{i}", inner[field]


def export(out: Path, serialized: bool = False) -> int:
    """Write every program of jax's back-compat test data to ``out`` (its text, or its
    serialized portable artifact); the count."""
    from penguin_opt._compat import export_back_compat_modules

    field, suffix = (
        ("mlir_module_serialized", ".mlirbc") if serialized else ("mlir_module_text", ".mlir")
    )
    out.mkdir(parents=True, exist_ok=True)
    written = 0
    for module in export_back_compat_modules():
        short = module.__name__.rsplit(".", 1)[-1]
        for attribute, value in vars(module).items():
            for stem, program in _programs(value, f"{short}__{attribute}", field):
                path = out / f"{re.sub(r'[^A-Za-z0-9_.=-]', '_', stem)}{suffix}"
                if isinstance(program, bytes):
                    path.write_bytes(program)
                else:
                    path.write_text(program)
                written += 1
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m tools.corpus.back_compat",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("out", type=Path)
    ap.add_argument(
        "--serialized", action="store_true", help="the portable artifacts (.mlirbc), not text"
    )
    args = ap.parse_args(argv)
    written = export(args.out, args.serialized)
    if not written:
        raise SystemExit("this jax has no export back-compat test data")
    print(f"{written} programs written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
