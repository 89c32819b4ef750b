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
side (process CPU time, min of ``--reps`` runs, each module in a fresh child process):

* a walk of every op with an empty callback;
* RemoveDeadZeroSizedTensorOps' match (dialect op, not effectful, every result a static
  zero-element shape) on every op;
* the edits: create an op (an ``add``'s copy before it), redirect uses (RAUW), erase;
* one whole rewrite, ReplaceBroadcastsWithBroadcastInDim, in C against the Python rewriter
  (min of 3 runs, each on fresh clones; :func:`legacy_broadcast`).

It then prices the floor of ``benchmarks.run`` (the edits the output forces, the
StableHLO visit of every op, one verification) at native prices, against the targets.
It checks what it measures through the bindings: the native walk must count the ops the
bindings count; the native scan must match as many ops as the same match through the
bindings (``python_zero_sized``; the tests also run both on a module of the hard cases);
between the native edits' phases, the bindings must see one more op per ``add`` after
the creates, no use left on any ``add`` after the RAUW to the copies (and the module must
verify), every ``add``'s uses back after the RAUW back, and the ops count restored after
the erases; at the end the module must verify and print byte-identically. The native
rewrite must find, rewrite and remark on the same ops as the Python rewriter and leave a
module that prints byte-identically, locations included (the tests also run it on a
module of the hard cases in each dialect).
"""

from __future__ import annotations

import argparse
import ctypes
import functools
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
    TARGET_RATIO,
    TARGET_US_PER_OP,
    copy_arguments,
    count_ops,
    create_copies,
    keep_min,
    net_edits,
    parse_size,
    pipelines,
    run_child,
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
    "mlirTypeIsARankedTensor",
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
    # for the legacy broadcast rewrite
    "mlirOperationGetContext",
    "mlirIdentifierGet",
    "mlirOperationStateAddAttributes",
    "mlirOperationGetAttributeByName",
    "mlirDenseArrayGetNumElements",
    "mlirElementsAttrGetNumElements",
    "mlirDenseI64ArrayGet",
    "mlirDenseElementsAttrRawBufferGet",
    "mlirRankedTensorTypeGet",
    "mlirIntegerTypeGet",
    "mlirAttributeGetNull",
    "mlirValueIsAOpResult",
    "mlirOpResultGetOwner",
)


class ProbeError(Exception):
    """The probe cannot run here (no C compiler, a symbol missing, a count disagreeing)."""


# ------------------------------------------------------------------- ELF symbol table

_SHT_SYMTAB, _SHT_DYNSYM, _STT_FUNC = 2, 11, 2
_SECTION = np.dtype(
    [
        ("name", "<u4"),
        ("type", "<u4"),
        ("flags", "<u8"),
        ("addr", "<u8"),
        ("offset", "<u8"),
        ("size", "<u8"),
        ("link", "<u4"),
        ("info", "<u4"),
        ("addralign", "<u8"),
        ("entsize", "<u8"),
    ]
)
_SYMBOL = np.dtype(
    [
        ("name", "<u4"),
        ("info", "u1"),
        ("other", "u1"),
        ("shndx", "<u2"),
        ("value", "<u8"),
        ("size", "<u8"),
    ]
)


def elf_functions(path: Path, names: list[str], table: int = _SHT_SYMTAB) -> dict[str, int]:
    """The value (address relative to the load base) of each function in ``names`` in the
    full symbol table (``table``: or the dynamic one) of the 64-bit little-endian ELF
    ``path``. Raises ProbeError if a name is missing or defined more than once."""
    with open(path, "rb") as f:
        ident = f.read(64)
        if ident[:4] != b"\x7fELF" or ident[4] != 2 or ident[5] != 1:
            raise ProbeError(f"{path}: not a 64-bit little-endian ELF file")
        shoff = int.from_bytes(ident[0x28:0x30], "little")
        shentsize = int.from_bytes(ident[0x3A:0x3C], "little")
        shnum = int.from_bytes(ident[0x3C:0x3E], "little")
        if shentsize != _SECTION.itemsize or shnum == 0:
            raise ProbeError(f"{path}: unexpected section headers ({shnum} of {shentsize} B)")
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
    # defined functions (section index 0: undefined, a reference to another library)
    functions = symbols[((symbols["info"] & 0xF) == _STT_FUNC) & (symbols["shndx"] != 0)]
    found = {}
    for name in names:
        # Every place the string table holds ``name\0``: a symbol whose name starts there
        # has exactly that name (the linker may store it as the tail of a longer string,
        # or more than once).
        key = name.encode() + b"\0"
        offsets, start = [], strings.find(key)
        while start >= 0:
            offsets.append(start)
            start = strings.find(key, start + 1)
        hits = functions[np.isin(functions["name"], offsets)]
        values = set(hits["value"].tolist())
        if len(values) != 1:
            raise ProbeError(f"{path.name}: function {name} defined {len(values)} times")
        found[name] = values.pop()
    return found


def jaxlib_library() -> Path:
    from penguin_opt._compat import native_library_path

    return native_library_path()


def api_addresses(lib_path: Path) -> list[int]:
    """The addresses in this process of API_FUNCTIONS, from the library's symbol table and
    the load base found through one exported symbol (dlsym)."""
    lib = ctypes.CDLL(str(lib_path))
    exported = elf_functions(lib_path, ["Wrapped_PyInit__jax"], table=_SHT_DYNSYM)
    ((name, value),) = exported.items()
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
        proc = subprocess.run(
            [cc, "-O2", "-shared", "-fPIC", "-o", str(tmp), str(SOURCE)],
            capture_output=True,
            text=True,
        )
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


class NativeProbe:
    """native_probe.c loaded, with the C API addresses it calls (checked for size)."""

    def __init__(self) -> None:
        self.lib = ctypes.CDLL(str(build_probe()))
        if self.lib.probe_api_size() != len(API_FUNCTIONS):
            raise ProbeError(
                f"struct Api holds {self.lib.probe_api_size()} functions, "
                f"API_FUNCTIONS lists {len(API_FUNCTIONS)}"
            )
        self.api = (ctypes.c_void_p * len(API_FUNCTIONS))(*api_addresses(jaxlib_library()))
        self.out = (ctypes.c_double * 8)()
        from penguin_opt.passes.penguin_rewriters import _EFFECTFUL

        names = sorted(_EFFECTFUL)  # the rewriter's own list, NULL-terminated for C
        self._effectful = (ctypes.c_char_p * (len(names) + 1))(*[n.encode() for n in names])

    def walk(self, root: ctypes.c_void_p) -> tuple[int, float]:
        """(ops walked, seconds) of a native walk with an empty callback."""
        self.lib.probe_walk(self.api, root, self.out)
        return int(self.out[0]), self.out[1]

    def scan(self, root: ctypes.c_void_p, dialect: str) -> tuple[int, float]:
        """(zero-sized matches, seconds) of RemoveDeadZeroSizedTensorOps' match, natively."""
        self.lib.probe_scan(self.api, root, f"{dialect}.".encode(), self._effectful, self.out)
        return int(self.out[1]), self.out[2]

    def phase(self, fn, *args) -> float:
        fn(*args, self.out)
        return self.out[0]


def module_pointer(module) -> ctypes.c_void_p:
    return ctypes.c_void_p(_capsule_pointer(module._CAPIPtr))


def python_zero_sized(module, dialect: str) -> int:
    """The ops of ``module`` (all, nested included) RemoveDeadZeroSizedTensorOps' match
    accepts, through the bindings: the reference the native scan is checked against."""
    from penguin_opt.ir_util import ops_under
    from penguin_opt.passes.penguin_rewriters import RemoveDeadZeroSizedTensorOps

    match = RemoveDeadZeroSizedTensorOps.skip_reason
    return sum(match(op, dialect) is None for op in ops_under(module))


def legacy_broadcast(
    module, dialect: str, probe: NativeProbe, reps: int, check
) -> dict[str, float]:
    """One whole rewrite, natively and in Python: ReplaceBroadcastsWithBroadcastInDim on
    the target function of a fresh clone of ``module`` each time, min of ``reps``. The
    native rewrite must find, rewrite and remark on the same ops as the Python rewriter,
    and (first repetition) leave a module that verifies and prints byte-identically,
    locations included. (The native remark test is "operand defined by a constant op";
    Python's also wants the constant's values readable, so a ``dense_resource`` or
    unsupported-type constant operand stops the probe with a count mismatch.)"""
    from penguin_opt.dialect import MHLO, STABLEHLO
    from penguin_opt.passes.base import RunState
    from penguin_opt.passes.canonicalize_for_penguin import target_functions
    from penguin_opt.passes.penguin_rewriters import ReplaceBroadcastsWithBroadcastInDim
    from penguin_opt.passes.sweep import Sweep, collect

    d = STABLEHLO if dialect == "stablehlo" else MHLO
    rewriter = ReplaceBroadcastsWithBroadcastInDim()
    best: dict[str, float] = {}
    keep = functools.partial(keep_min, best)
    for rep in range(reps):
        ours = module.clone()
        func = target_functions(ours, False, "native_probe")[0]
        t0 = time.process_time()
        worklists = collect([func], [d.op("broadcast")])
        sweep = Sweep(d, "native_probe", RunState(), worklists)
        t1 = time.process_time()
        rewriter.run(sweep.worklists[d.op("broadcast")], sweep)
        t2 = time.process_time()
        stats = sweep.stats(rewriter.name)
        found, rewritten, remarks = stats.matched, stats.rewritten, len(sweep.state.diagnostics)
        check(rewritten > 0, f"no {d.op('broadcast')} to rewrite")
        keep("python_broadcast_collect", t1 - t0)
        keep("python_broadcast_us", (t2 - t1) / rewritten * 1e6)
        expected = ours.get_asm(enable_debug_info=True) if rep == 0 else None
        ours.erase()

        native = module.clone()
        func = target_functions(native, False, "native_probe")[0]
        out = probe.out
        probe.lib.probe_legacy_broadcast(
            probe.api, module_pointer(func), dialect.encode(), int(dialect == "stablehlo"), out
        )
        check(
            (out[0], out[1], out[2]) == (found, rewritten, remarks),
            f"the native broadcast rewrite found/rewrote/remarked {out[0]:.0f}/"
            f"{out[1]:.0f}/{out[2]:.0f} ops, the Python rewriter {found}/{rewritten}/"
            f"{remarks}",
        )
        keep("native_broadcast_collect", out[3])
        keep("native_broadcast_us", out[4] / rewritten * 1e6)
        if expected is not None:
            native.verify()
            check(
                native.get_asm(enable_debug_info=True) == expected,
                "the native broadcast "
                "rewrite's module prints differently from the Python rewriter's",
            )
        native.erase()
    best.update(broadcasts=rewritten, broadcasts_found=found, broadcast_remarks=remarks)
    return best


def probe_child(path: str, dialect: str, reps: int) -> dict[str, float]:
    """(child process) Native and Python prices on the module at ``path``, checked: the
    first repetition checks every phase of the native edits through the bindings."""
    import gc

    from jaxlib.mlir import ir

    from penguin_opt.context import make_context
    from penguin_opt.ir_util import has_uses, ops_named
    from penguin_opt.penguin_sort import parse_text

    probe = NativeProbe()
    lib = probe.lib
    best: dict[str, float] = {}
    keep = functools.partial(keep_min, best)

    def check(ok: bool, what: str) -> None:
        if not ok:
            raise ProbeError(f"{Path(path).name}: {what}")

    with make_context(), ir.Location.unknown():
        module = parse_text(Path(path).read_text(), path)
        root = module_pointer(module)
        ops = count_ops(module)
        printed = hashlib.sha256(str(module).encode()).hexdigest()
        zero_sized = python_zero_sized(module, dialect)
        originals = ops_named(module, [f"{dialect}.add"])
        adds = len(originals)
        check(adds > 0, f"no {dialect}.add to price the edits on")
        used = [has_uses(op) for op in originals]
        args, points = copy_arguments(originals)  # as benchmarks.run's floor child does
        advance = ir.WalkResult.ADVANCE
        gc.collect()
        gc.disable()
        for rep in range(reps):
            checking = rep == 0
            walked, seconds = probe.walk(root)
            check(walked == ops, f"the native walk saw {walked} ops, the bindings {ops}")
            keep("native_walk", seconds)
            matches, seconds = probe.scan(root, dialect)
            check(
                matches == zero_sized,
                f"the native scan matched {matches} zero-sized ops, the bindings {zero_sized}",
            )
            keep("native_scan", seconds)
            t0 = time.process_time()
            module.walk(lambda _op: advance, ir.WalkOrder.POST_ORDER)
            keep("python_walk", time.process_time() - t0)
            t0 = time.process_time()
            module.verify()
            keep("verify", time.process_time() - t0)

            n = lib.probe_edits_begin(probe.api, root, f"{dialect}.add".encode())
            check(
                n == adds, f"the native edits found {n} adds of the right form, the bindings {adds}"
            )
            try:
                create = probe.phase(lib.probe_edits_create)
                if checking:
                    check(
                        count_ops(module) == ops + adds,
                        "the native creates did not insert one op per add",
                    )
                forward = probe.phase(lib.probe_edits_rauw, 1)
                if checking:
                    check(
                        not any(has_uses(op) for op in originals),
                        "an add kept uses after the native RAUW to its copy",
                    )
                    module.verify()  # the copies, before their originals, dominate the uses
                back = probe.phase(lib.probe_edits_rauw, 0)
                if checking:
                    check(
                        [has_uses(op) for op in originals] == used,
                        "the native RAUW back did not restore the adds' uses",
                    )
                erase = probe.phase(lib.probe_edits_destroy)
                if checking:
                    check(count_ops(module) == ops, "the native erases left ops behind")
            finally:
                lib.probe_edits_end()
            keep("native_create_us", create / adds * 1e6)
            keep("native_rauw_us", (forward + back) / (2 * adds) * 1e6)
            keep("native_erase_us", erase / adds * 1e6)
            for key, us in python_edits(originals, args, points).items():
                keep(key, us)
        module.verify()
        check(
            hashlib.sha256(str(module).encode()).hexdigest() == printed,
            "the module prints differently after the native edits",
        )
        del originals, args, points
        gc.collect()
        best.update(legacy_broadcast(module, dialect, probe, min(reps, 3), check))
        best.update(native_canonicalize(module, dialect, min(reps, 3)))
        keep("verify", best.pop("canonicalize_verify"))
        gc.enable()
        best.update(ops=ops, adds=adds, zero_sized=zero_sized)
        del module
    return best


def native_canonicalize(module, dialect: str, reps: int) -> dict[str, float]:
    """On fresh clones of ``module``: the creates and erases our two passes' output forces
    (benchmarks.run's ``net_edits``), and the min of ``reps`` runs of a ``verify()`` and of
    MLIR's ``canonicalize`` through the PassManager as benchmarks.run times it (verifier
    on) and without the verifier, for the comparison without verification."""
    from jaxlib.mlir import passmanager

    clone = module.clone()
    try:
        best = net_edits(clone, pipelines(dialect)["both"])
    finally:
        clone.erase()
    keep = functools.partial(keep_min, best)
    for _ in range(reps):
        for verifier in (True, False):
            clone = module.clone()
            t0 = time.process_time()
            if verifier:
                clone.verify()
            t1 = time.process_time()
            pm = passmanager.PassManager.parse("builtin.module(canonicalize)")
            pm.enable_verifier(verifier)
            pm.run(clone)
            t2 = time.process_time()
            clone.erase()
            if verifier:
                keep("canonicalize_verify", t1 - t0)
                keep("native", t2 - t1)
            else:
                keep("native_without_verifier", t2 - t1)
    return best


def python_edits(originals, args, points) -> dict[str, float]:
    """µs per op of the same edits as native_probe.c's probe_edits, through the bindings."""
    n = len(originals)
    t0 = time.process_time()
    news = create_copies(args, points)
    t1 = time.process_time()
    for old, new in zip(originals, news, strict=True):
        old.results[0].replace_all_uses_with(new.results[0])
    for old, new in zip(originals, news, strict=True):
        new.results[0].replace_all_uses_with(old.results[0])
    t2 = time.process_time()
    for op in news:
        op.erase()
    t3 = time.process_time()
    return {
        "python_create_us": (t1 - t0) / n * 1e6,
        "python_rauw_us": (t2 - t1) / (2 * n) * 1e6,
        "python_erase_us": (t3 - t2) / n * 1e6,
    }


def run_probe_child(path: Path, dialect: str, reps: int) -> dict[str, float]:
    row = run_child("--child", str(path), dialect, str(reps), module="benchmarks.native_probe")
    if row is None:
        raise ProbeError(f"{path.name}: the probe child failed (its error is above)")
    return row


# ------------------------------------------------------------------- the table


def native_floor(row: dict[str, float], dialect: str) -> float:
    """Seconds: benchmarks.run's floor at native prices (the creates at a native create,
    the erases at a native erase, for StableHLO the native zero-sized scan of every op, and
    one verification, which is native already)."""
    scan = row["native_scan"] if dialect == "stablehlo" else 0.0
    return (
        (row["creates"] * row["native_create_us"] + row["erases"] * row["native_erase_us"]) * 1e-6
        + scan
        + row["verify"]
    )


def report(rows: list[dict], info: str) -> str:
    lines = [
        "| module | dialect | ops | walk native / Python | zero-sized scan native "
        "| create / RAUW / erase native µs (Python) | creates, erases | verify "
        "| native floor | native canonicalize (without its verifier) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        ops = r["ops"]

        def us(seconds: float, ops: int = ops) -> str:
            return f"{seconds / ops * 1e6:.2f}"

        python_prices = (
            f"{r['python_create_us']:.2f} / {r['python_rauw_us']:.2f} / {r['python_erase_us']:.2f}"
        )
        lines.append(
            f"| synthetic {size_label(r['size'])} | {r['dialect']} | {ops:,} "
            f"| {us(r['native_walk'])} / {us(r['python_walk'])} "
            f"| {us(r['native_scan'])} ({r['zero_sized']:,.0f} matches) "
            f"| {r['native_create_us']:.2f} / {r['native_rauw_us']:.2f} / "
            f"{r['native_erase_us']:.2f} ({python_prices}) "
            f"| {r['creates']:,}, {r['erases']:,} | {us(r['verify'])} "
            f"| **{us(native_floor(r, r['dialect']))}** | {us(r['native'])} "
            f"({us(r['native_without_verifier'])}) |"
        )
    lines += [
        "",
        "µs per op unless marked. " + info,
        "",
        "One whole rewrite, ReplaceBroadcastsWithBroadcastInDim on the input's legacy "
        "broadcasts (byte-identical output; µs per rewrite, without the collect walk):",
        "",
        "| module | dialect | rewrites | Python µs | native µs | Python / native |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        py, nat = r["python_broadcast_us"], r["native_broadcast_us"]
        lines.append(
            f"| synthetic {size_label(r['size'])} | {r['dialect']} "
            f"| {r['broadcasts']:,} | {py:.1f} | {nat:.2f} | {py / nat:.0f}x |"
        )
    lines.append("")
    for dialect in sorted({r["dialect"] for r in rows}):
        mine = [r for r in rows if r["dialect"] == dialect]
        big = max(mine, key=lambda r: r["ops"])
        worst = max(native_floor(r, dialect) / r["ops"] * 1e6 for r in mine)
        floor, verify = native_floor(big, dialect), big["verify"]
        lines.append(
            f"* {dialect}: native floor {worst:.2f} µs/op at worst (target "
            f"{TARGET_US_PER_OP:.1f}); at {size_label(big['size'])} "
            f"{floor / big['native']:.2f}x native canonicalize (target {TARGET_RATIO}), "
            f"{(floor - verify) / big['native_without_verifier']:.2f}x with the "
            "verification taken out of both (canonicalize run without its verifier)"
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
    build_probe()
    api_addresses(jaxlib_library())  # fail early, before the long part
    rows = []
    for dialect in [d.strip() for d in args.dialects.split(",") if d.strip()]:
        for n in [parse_size(s) for s in args.sizes.split(",") if s.strip()]:
            path, _ = module_path(dialect, n)
            row = run_probe_child(path, dialect, args.reps)
            row.update(size=n, dialect=dialect)
            print(f"{dialect} {size_label(n)}: {json.dumps(row)}", flush=True)
            rows.append(row)
    lib = jaxlib_library()
    print()
    print(report(rows, f"Library: {lib.name} of jaxlib, {lib.stat().st_size:,} bytes."))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
