"""What the per-op work of our passes costs natively: MLIR's C API inside jaxlib, priced.

    python -m benchmarks.native_probe                  # sizes 1k,10k,100k,1M, both dialects
    python -m benchmarks.native_probe --sizes 1k,100k --dialects mhlo

The measurement behind the performance issue's proposal (docs/performance.md, "What would
reach the targets"). jaxlib exports no MLIR C API, but its native library
(``libjax_common.so``) holds the C API functions as local symbols of its full symbol table.
This probe reads that table (:func:`elf_functions`), computes the functions' addresses in
this process from one exported symbol, compiles ``native_probe.c`` with the system C
compiler (into the benchmark cache, never the repository) and runs it on the module the
Python bindings parsed, through the module's ``_CAPIPtr`` capsule: no MLIR build, no
header, nothing linked. It prices, per op, natively and through the Python bindings side by
side (process CPU time, min of ``--reps`` runs, each in a fresh child process):

* a walk of every op with an empty callback;
* RemoveDeadZeroSizedTensorOps' match (dialect op, not effectful, every result a static
  zero-element shape) on every op; the count must equal the Python pass's statistic;
* the edits: create an op (an ``add``'s copy before it), redirect uses (RAUW), erase.

It then prices the floor of ``benchmarks.run`` (the edits the output forces, the
StableHLO visit of every op, one verification) at native prices, against the targets.
Every count the native side reports is checked against the Python bindings' own (ops
walked, zero-sized matches, ops priced), and the module must verify and print the same
after the edits: a wrong address or a wrong struct layout fails the probe, it cannot
produce numbers.
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.generate import CACHE, module_path
from benchmarks.run import (
    ROOT,
    TARGET_RATIO,
    TARGET_US_PER_OP,
    count_ops,
    net_edits,
    parse_size,
    pipelines,
    size_label,
)

SOURCE = Path(__file__).with_suffix(".c")
# The C API functions native_probe.c's ``struct Api`` holds, in its order.
API_FUNCTIONS = (
    "mlirOperationWalk",
    "mlirOperationGetName",
    "mlirIdentifierStr",
    "mlirOperationGetNumResults",
    "mlirOperationGetResult",
    "mlirValueGetType",
    "mlirTypeIsAShaped",
    "mlirShapedTypeHasStaticShape",
    "mlirShapedTypeGetRank",
    "mlirShapedTypeGetDimSize",
    "mlirOperationGetNumOperands",
    "mlirOperationGetOperand",
    "mlirOperationGetLocation",
    "mlirOperationGetBlock",
    "mlirOperationStateGet",
    "mlirOperationStateAddResults",
    "mlirOperationStateAddOperands",
    "mlirOperationCreate",
    "mlirBlockInsertOwnedOperationBefore",
    "mlirOperationDestroy",
    "mlirValueReplaceAllUsesOfWith",
)


class ProbeError(Exception):
    """The probe cannot run here (no C compiler, a symbol missing, a count disagreeing)."""


# ------------------------------------------------------------------- ELF symbol table

_SHT_SYMTAB, _SHT_DYNSYM, _STT_FUNC = 2, 11, 2
_SECTION = np.dtype([("name", "<u4"), ("type", "<u4"), ("flags", "<u8"), ("addr", "<u8"),
                     ("offset", "<u8"), ("size", "<u8"), ("link", "<u4"), ("info", "<u4"),
                     ("addralign", "<u8"), ("entsize", "<u8")])
_SYMBOL = np.dtype([("name", "<u4"), ("info", "u1"), ("other", "u1"), ("shndx", "<u2"),
                    ("value", "<u8"), ("size", "<u8")])


def elf_functions(path: Path, names: list[str], table: int = _SHT_SYMTAB) -> dict[str, int]:
    """The value (address relative to the load base) of each function in ``names`` in the
    full symbol table (``table``: or the dynamic one) of the 64-bit little-endian ELF
    ``path``. Raises ProbeError if a name is missing or defined more than once."""
    with open(path, "rb") as f:
        ident = f.read(64)
        if ident[:4] != b"\x7fELF" or ident[4] != 2 or ident[5] != 1:
            raise ProbeError(f"{path}: not a 64-bit little-endian ELF file")
        shoff = int.from_bytes(ident[0x28:0x30], "little")
        shnum = int.from_bytes(ident[0x3C:0x3E], "little")
        f.seek(shoff)
        sections = np.frombuffer(f.read(shnum * _SECTION.itemsize), _SECTION)
        tables = sections[sections["type"] == table]
        if len(tables) != 1:
            raise ProbeError(f"{path}: {len(tables)} symbol tables of type {table}")
        symtab = tables[0]
        strtab = sections[int(symtab["link"])]
        f.seek(int(symtab["offset"]))
        symbols = np.frombuffer(f.read(int(symtab["size"])), _SYMBOL)
        f.seek(int(strtab["offset"]))
        strings = f.read(int(strtab["size"]))
    functions = symbols[(symbols["info"] & 0xF) == _STT_FUNC]
    found = {}
    for name in names:
        key = b"\0" + name.encode() + b"\0"
        offsets, start = [], strings.find(key)
        while start >= 0:  # the string may be stored more than once
            offsets.append(start + 1)
            start = strings.find(key, start + 1)
        hits = functions[np.isin(functions["name"], offsets)]
        values = set(hits["value"].tolist())
        if len(values) != 1:
            raise ProbeError(f"{path.name}: function {name} defined {len(values)} times")
        found[name] = values.pop()
    return found


def jaxlib_library() -> Path:
    import jaxlib

    return Path(jaxlib.__file__).parent / "libjax_common.so"


def api_addresses(lib_path: Path) -> list[int]:
    """The addresses in this process of API_FUNCTIONS, from the library's symbol table and
    the load base found through one exported symbol (dlsym)."""
    lib = ctypes.CDLL(str(lib_path))
    exported = elf_functions(lib_path, ["Wrapped_PyInit__jax"], table=_SHT_DYNSYM)
    (name, value), = exported.items()
    base = ctypes.cast(getattr(lib, name), ctypes.c_void_p).value - value
    local = elf_functions(lib_path, list(API_FUNCTIONS))
    return [base + local[n] for n in API_FUNCTIONS]


def build_probe() -> Path:
    """native_probe.c compiled into the benchmark cache (rebuilt when the source changes)."""
    cc = shutil.which(os.environ.get("CC", "cc"))
    if cc is None:
        raise ProbeError("no C compiler (cc) on PATH; set CC")
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:16]
    CACHE.mkdir(parents=True, exist_ok=True)
    out = CACHE / f"native_probe_{digest}.so"
    if not out.exists():
        tmp = out.with_suffix(f".{os.getpid()}.tmp")
        proc = subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(tmp), str(SOURCE)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise ProbeError(f"{cc} failed on {SOURCE.name}: {proc.stderr.strip()}")
        tmp.replace(out)
    return out


def _capsule_pointer(capsule) -> int:
    api = ctypes.pythonapi
    api.PyCapsule_GetName.restype = ctypes.c_char_p
    api.PyCapsule_GetName.argtypes = [ctypes.py_object]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return api.PyCapsule_GetPointer(capsule, api.PyCapsule_GetName(capsule))


# ------------------------------------------------------------------- the child


def probe_child(path: str, dialect: str, reps: int) -> dict[str, float]:
    """(child process) Native and Python prices on the module at ``path``, checked."""
    import gc

    from jaxlib.mlir import ir

    from penguin_opt.context import make_context
    from penguin_opt.ir_util import ops_named
    from penguin_opt.penguin_sort import parse_text
    from penguin_opt.pipeline import Pipeline

    lib = ctypes.CDLL(str(build_probe()))
    api = (ctypes.c_void_p * len(API_FUNCTIONS))(*api_addresses(jaxlib_library()))
    out = (ctypes.c_double * 4)()
    best: dict[str, float] = {}

    def keep(key: str, value: float) -> None:
        best[key] = min(best.get(key, float("inf")), value)

    with make_context(), ir.Location.unknown():
        module = parse_text(Path(path).read_text(), path)
        root = ctypes.c_void_p(_capsule_pointer(module._CAPIPtr))
        ops = count_ops(module)
        printed = hashlib.sha256(str(module).encode()).hexdigest()
        originals = ops_named(module, [f"{dialect}.add"])
        adds = len(originals)
        if not adds:
            raise ProbeError(f"{path}: no {dialect}.add to price the edits on")
        # Arguments read beforehand, as benchmarks.run's floor child does.
        args = [(op.name, [op.results[0].type], list(op.operands), op.location)
                for op in originals]
        points = [ir.InsertionPoint(op) for op in originals]
        advance = ir.WalkResult.ADVANCE
        gc.collect()
        gc.disable()
        for _ in range(reps):
            lib.probe_walk(api, root, out)
            if out[0] != ops:
                raise ProbeError(f"native walk saw {out[0]:.0f} ops, the bindings {ops}")
            keep("native_walk", out[1])
            lib.probe_scan(api, root, f"{dialect}.".encode(), out)
            keep("native_scan", out[2])
            zero_sized = out[1]
            t0 = time.process_time()
            module.walk(lambda _op: advance, ir.WalkOrder.POST_ORDER)
            keep("python_walk", time.process_time() - t0)
            if lib.probe_edits(api, root, f"{dialect}.add".encode(), out) != 0:
                raise ProbeError(f"an {dialect}.add without two operands and one result")
            if out[0] != adds:
                raise ProbeError(f"native edits priced {out[0]:.0f} adds, the bindings see {adds}")
            keep("native_create_us", out[1] / adds * 1e6)
            keep("native_rauw_us", out[2] / (2 * adds) * 1e6)
            keep("native_erase_us", out[3] / adds * 1e6)
            for key, us in python_edits(originals, args, points).items():
                keep(key, us)
        gc.enable()
        module.verify()
        if hashlib.sha256(str(module).encode()).hexdigest() != printed:
            raise ProbeError("the module prints differently after the native edits")
        if dialect == "stablehlo":  # the scan's count against the pass's own statistic
            clone = module.clone()
            state = Pipeline("stablehlo-canonicalize-for-penguin").run(clone)
            clone.erase()
            stats = state.statistics["stablehlo-canonicalize-for-penguin"]
            python_zero = stats["removeDeadZeroSizedTensorOps"].rewritten
            if zero_sized != python_zero:
                raise ProbeError(f"native scan matched {zero_sized:.0f} zero-sized ops, "
                                 f"the pass rewrote {python_zero}")
        best.update(ops=ops, adds=adds, zero_sized=zero_sized)
        del module, originals, args, points
    return best


def python_edits(originals, args, points) -> dict[str, float]:
    """µs per op of the same edits as native_probe.c's probe_edits, through the bindings."""
    from jaxlib.mlir import ir

    n = len(originals)
    t0 = time.process_time()
    news = [ir.Operation.create(name, results=types, operands=operands, loc=loc, ip=ip)
            for (name, types, operands, loc), ip in zip(args, points, strict=True)]
    t1 = time.process_time()
    for old, new in zip(originals, news, strict=True):
        old.results[0].replace_all_uses_with(new.results[0])
    for old, new in zip(originals, news, strict=True):
        new.results[0].replace_all_uses_with(old.results[0])
    t2 = time.process_time()
    for op in news:
        op.erase()
    t3 = time.process_time()
    return {"python_create_us": (t1 - t0) / n * 1e6, "python_rauw_us": (t2 - t1) / (2 * n) * 1e6,
            "python_erase_us": (t3 - t2) / n * 1e6}


def run_probe_child(path: Path, dialect: str, reps: int) -> dict[str, float]:
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.native_probe", "--child", str(path), dialect,
         str(reps)],
        cwd=ROOT, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=3600,
    )
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise ProbeError(f"{path.name}: the probe child failed (exit {proc.returncode}): {tail}")
    return json.loads(lines[-1])


# ------------------------------------------------------------------- the table


def native_floor(row: dict[str, float], dialect: str) -> float:
    """Seconds: benchmarks.run's floor at native prices (the creates at a native create,
    the erases at a native erase, for StableHLO the native zero-sized scan of every op, and
    one verification, which is native already)."""
    scan = row["native_scan"] if dialect == "stablehlo" else 0.0
    return ((row["creates"] * row["native_create_us"] + row["erases"] * row["native_erase_us"])
            * 1e-6 + scan + row["verify"])


def report(rows: list[dict], info: str) -> str:
    lines = [
        "| module | dialect | ops | walk native / Python | zero-sized scan native "
        "| create / RAUW / erase native µs (Python) | creates, erases | verify "
        "| native floor | native canonicalize |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        ops = r["ops"]

        def us(seconds: float, ops: int = ops) -> str:
            return f"{seconds / ops * 1e6:.2f}"

        python_prices = (f"{r['python_create_us']:.2f} / {r['python_rauw_us']:.2f} / "
                         f"{r['python_erase_us']:.2f}")
        lines.append(
            f"| synthetic {size_label(r['size'])} | {r['dialect']} | {ops:,} "
            f"| {us(r['native_walk'])} / {us(r['python_walk'])} "
            f"| {us(r['native_scan'])} ({r['zero_sized']:,.0f} matches) "
            f"| {r['native_create_us']:.2f} / {r['native_rauw_us']:.2f} / "
            f"{r['native_erase_us']:.2f} ({python_prices}) "
            f"| {r['creates']:,}, {r['erases']:,} | {us(r['verify'])} "
            f"| **{us(native_floor(r, r['dialect']))}** | {us(r['native'])} |"
        )
    lines += ["", "µs per op unless marked. " + info, ""]
    for dialect in sorted({r["dialect"] for r in rows}):
        mine = [r for r in rows if r["dialect"] == dialect]
        big = max(mine, key=lambda r: r["ops"])
        worst = max(native_floor(r, dialect) / r["ops"] * 1e6 for r in mine)
        floor, verify = native_floor(big, dialect), big["verify"]
        lines.append(
            f"* {dialect}: native floor {worst:.2f} µs/op at worst (target "
            f"{TARGET_US_PER_OP:.1f}); at {size_label(big['size'])} "
            f"{floor / big['native']:.2f}x native canonicalize (target {TARGET_RATIO}), "
            f"{(floor - verify) / (big['native'] - verify):.2f}x with the verification "
            "taken out of both"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1k,10k,100k,1M")
    ap.add_argument("--dialects", default="stablehlo,mhlo")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    try:
        if args.child:
            path, dialect, reps = args.child
            print(json.dumps(probe_child(path, dialect, int(reps))))
            return 0
        return _main(args)
    except ProbeError as err:
        print(f"native_probe: {err}", file=sys.stderr)
        return 1


def _main(args) -> int:
    from jaxlib.mlir import ir, passmanager

    from penguin_opt.context import make_context
    from penguin_opt.penguin_sort import parse_text

    build_probe()
    api_addresses(jaxlib_library())  # fail early, before the long part
    rows = []
    for dialect in [d.strip() for d in args.dialects.split(",") if d.strip()]:
        for n in [parse_size(s) for s in args.sizes.split(",") if s.strip()]:
            path, _ = module_path(dialect, n)
            row = run_probe_child(path, dialect, args.reps)
            with make_context(), ir.Location.unknown():
                module = parse_text(path.read_text(), str(path))
                row.update(net_edits(module.clone(), pipelines(dialect)["both"]))
                verify = native = float("inf")
                for _ in range(min(args.reps, 3)):
                    clone = module.clone()
                    t0 = time.process_time()
                    clone.verify()
                    t1 = time.process_time()
                    passmanager.PassManager.parse("builtin.module(canonicalize)").run(clone)
                    t2 = time.process_time()
                    verify, native = min(verify, t1 - t0), min(native, t2 - t1)
                    clone.erase()
                module.erase()
            # native: canonicalize through the PassManager, verifier on (as benchmarks.run)
            row.update(size=n, dialect=dialect, verify=verify, native=native)
            print(f"{dialect} {size_label(n)}: {json.dumps(row)}", flush=True)
            rows.append(row)
    lib = jaxlib_library()
    print()
    print(report(rows, f"Library: {lib.name} of jaxlib, {lib.stat().st_size:,} bytes."))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
