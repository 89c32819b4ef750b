"""Benchmark penguin-opt's passes against native MLIR; print a table, write docs/performance.md.

    python -m benchmarks.run                       # default sizes 1k,10k,100k,1M, both dialects
    python -m benchmarks.run --sizes 1k,10k --no-write

In one process and one run, per dialect and module size, the minimum over repetitions of:
parse and print time, ``module.verify()``, MLIR's native ``canonicalize`` (PassManager,
verifier on, as mlir-opt runs it) on the same module, each of our passes and the
pipelines (these interleaved: every repetition runs each of them once), all as process
CPU time (what the process itself spent, robust to other load on the machine; wall-clock
ratios are printed alongside). Peak RSS of parsing and of the pipeline is measured in a
child process per module (``/proc/self/status`` VmHWM, reset between the two). End to end,
each synthetic module is also run as a user runs it, in a fresh process (``penguin-opt IN
-p <both passes> -o OUT``: read, passes, verify, write), against the same command with
native ``canonicalize`` in their place (the children's CPU time and wall-clock time).
Folding throughput compares a 1M-element ``broadcast_in_dim`` fold and ``convert`` fold
with numpy doing the same broadcast/cast into a new array.
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import os
import platform
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "performance.md"
COMMAND = "python -m benchmarks.run"
KEEP_MARK = "<!-- Everything below this line is kept when the file is regenerated. -->"

DEFAULT_SIZES = "1k,10k,100k,1M"
FOLD_ELEMENTS = 1 << 20

# Targets (docs/performance.md states them with the results).
TARGET_RATIO = 1.5  # both canonicalize passes / native canonicalize, at the largest size
TARGET_US_PER_OP = 4.0  # both canonicalize passes, every size
TARGET_FLATNESS = 1.5  # max/min us per op of both passes across sizes
TARGET_FOLD = 0.5  # our fold throughput / numpy's
TARGET_MEMORY = 1.5  # pipeline peak / parse peak (above the process baseline)
TARGET_E2E = 1.2  # penguin-opt IN -p <both> -o OUT / the same with native canonicalize
E2E_TARGET_MIN_OPS = 100_000  # the end-to-end target is stated for the 100k and 1M modules
MEMORY_MIN_MB = 10
WARMUP_MAX_OPS = 10_000  # modules this small get one untimed run of each pass first


def parse_size(text: str) -> int:
    text = text.strip().lower()
    mult = {"k": 1_000, "m": 1_000_000}.get(text[-1:], 1)
    return int(float(text[:-1] if text[-1:] in "km" else text) * mult)


def size_label(n: int) -> str:
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n >= 1_000 and n % 1_000 == 0:
        return f"{n // 1_000}k"
    return str(n)


def pass_names(dialect: str) -> dict[str, str]:
    """Our pass names in ``dialect``: for-penguin, conv (if registered), inline."""
    from penguin_opt import PASSES

    s = "stablehlo-" if dialect == "stablehlo" else ""
    names = {"for-penguin": f"{s}canonicalize-for-penguin"}
    if f"{s}canonicalize-conv" in PASSES:
        names["conv"] = f"{s}canonicalize-conv"
    if "inline" in PASSES:
        names["inline"] = "inline"
    return names


def pipelines(dialect: str) -> dict[str, str]:
    """The rows timed for a module: each of our passes, both canonicalize passes, the
    whole pipeline (as a user runs it on a JAX export: inline first)."""
    names = pass_names(dialect)
    both = ",".join(names[k] for k in ("for-penguin", "conv") if k in names)
    rows = {key: name for key, name in names.items()}
    rows["both"] = both
    rows["pipeline"] = ",".join([names["inline"], both] if "inline" in names else [both])
    return rows


@dataclass
class Timing:
    cpu: float  # seconds, min over repetitions
    wall: float

    def us(self, ops: int) -> float:
        return self.cpu / ops * 1e6


def measure(fn, *, reps: int, setup=None, teardown=None) -> Timing:
    """Min CPU and min wall time of ``fn(setup())`` over ``reps`` runs, Python's garbage
    collector off while timed and no collection forced before (``timeit``'s way): a
    ``gc.collect()`` right before a run leaves the caches cold for it, which cost a 1k-op
    module's run 0.75 ms (native ``canonicalize``) and 0.8 ms (our passes), and a 1M-element
    fold's pass run 0.5 ms (docs/performance.md, 2026-12-04)."""
    best_cpu = best_wall = float("inf")
    for _ in range(reps):
        arg = setup() if setup else None
        enabled = gc.isenabled()
        gc.disable()
        try:
            c0, w0 = time.process_time(), time.perf_counter()
            fn(arg) if setup else fn()
            c1, w1 = time.process_time(), time.perf_counter()
        finally:
            if enabled:
                gc.enable()
        best_cpu, best_wall = min(best_cpu, c1 - c0), min(best_wall, w1 - w0)
        if teardown:
            teardown(arg)
    return Timing(best_cpu, best_wall)


def measure_alternating(
    fns: dict[str, Callable | tuple[Callable, Callable | None, Callable | None]],
    *,
    reps: int,
    setup=None,
    teardown=None,
    warmup: bool = False,
) -> dict[str, Timing]:
    """``measure`` of each of ``fns``, the runs interleaved: each repetition runs every one
    once, starting one further along each time, so that a slower minute of the machine
    weighs on all of them alike (their ratios are what the targets compare). A value of
    ``fns`` is a function (of ``setup()``'s result) or (function, its own setup, its own
    teardown). ``warmup``: first one untimed run of each (a fresh context's first runs
    are slower, which weighs on a small module's few milliseconds)."""
    runs = {
        label: entry if isinstance(entry, tuple) else (entry, setup, teardown)
        for label, entry in fns.items()
    }
    best = {label: [float("inf"), float("inf")] for label in runs}
    labels = list(runs)
    for label in labels if warmup else ():
        fn, su, td = runs[label]
        measure(fn, reps=1, setup=su, teardown=td)
    for rep in range(reps):
        for label in labels[rep % len(labels) :] + labels[: rep % len(labels)]:
            fn, su, td = runs[label]
            t = measure(fn, reps=1, setup=su, teardown=td)
            best[label][0] = min(best[label][0], t.cpu)
            best[label][1] = min(best[label][1], t.wall)
    return {label: Timing(cpu, wall) for label, (cpu, wall) in best.items()}


@dataclass
class ModuleResult:
    name: str  # "synthetic 1M" or a corpus model
    dialect: str
    ops: int
    times: dict[str, Timing] = field(default_factory=dict)
    rewrites: int = 0  # ops rewritten by the for-penguin pass (all rewriters)
    memory: dict[str, float] | None = None  # MB: baseline, parse, pipeline (above baseline)
    floor: dict[str, float] | None = None  # see measure_floor

    def floor_cpu(self, verify: bool = True) -> float:
        """Seconds: the least binding work any implementation of both passes must do.

        The ops the output has beyond the input (by name) created at the cheaper of a
        create and a clone, those it lacks erased, for StableHLO a Python visit of the ops
        removeDeadZeroSizedTensorOps cannot reach from zero-sized values (the kinds outside
        its shape-following ones: it must see their result types, and the bindings have no
        native filter for them; priced as an empty-callback walk of every op times their
        share), and one verification; nothing for reading operands or attributes,
        arithmetic, RAUW, or setting attributes in place."""
        f = self.floor
        edits = (
            f["creates"] * min(f["create_us"], f["clone_us"]) + f["erases"] * f["erase_us"]
        ) * 1e-6
        walk = f["walk"] * f.get("walk_share", 1.0) if self.dialect == "stablehlo" else 0.0
        return edits + walk + (self.floor_verify() if verify else 0.0)

    def floor_verify(self) -> float:
        """Seconds: one verification of the output (its sorts expanded), freshly parsed:
        what any implementation's output costs MLIR's verifier at the least."""
        return self.floor["verify_output"]

    def ratio(self, key: str, wall: bool = False, native: str = "native canonicalize") -> float:
        a, b = self.times[key], self.times[native]
        return (a.wall / b.wall) if wall else (a.cpu / b.cpu)

    def e2e_ratio(self, wall: bool = False) -> float | None:
        """End to end: both passes / native canonicalize, None if not measured."""
        if not all(k in self.times for k in E2E_KEYS):
            return None
        return self.ratio("e2e both", wall, native="e2e native")


def count_ops(module) -> int:
    from jaxlib.mlir import ir

    n = [0]

    def visit(_op):
        n[0] += 1
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    return n[0]


def bench_module(
    name: str,
    dialect: str,
    text: str,
    reps: int,
    log,
    floor: Path | None = None,
) -> ModuleResult:
    """Every timing of one module, in this process (and, given the module's ``floor``
    path, its floor: see ``measure_floor``)."""
    from jaxlib.mlir import ir, passmanager

    from penguin_opt.context import make_context
    from penguin_opt.io import module_text
    from penguin_opt.penguin_sort import parse_text
    from penguin_opt.pipeline import Pipeline

    ctx = make_context()
    with ctx, ir.Location.unknown(ctx):
        master = parse_text(text, name)
        res = ModuleResult(name, dialect, count_ops(master))

        def fresh():
            return master.clone()

        def drop(op):
            op.erase()

        def step(label, t):
            res.times[label] = t
            log(
                f"  {name:>22s} {dialect:9s} {label:24s} {t.cpu:9.3f}s cpu "
                f"{t.us(res.ops):7.2f} us/op  ({t.wall:.3f}s wall)"
            )

        step("parse", measure(lambda: parse_text(text, name), reps=reps))
        step("print", measure(lambda: module_text(master), reps=reps))
        step("verify", measure(lambda: master.verify(), reps=reps))

        def native(op):
            passmanager.PassManager.parse("builtin.module(canonicalize)").run(op)

        runs = {"native canonicalize": native}
        for key, pipe in pipelines(dialect).items():
            runs[key] = lambda op, p=pipe: Pipeline(p).run(op)
        # Interleaved, each the min of as many runs: the ratios compare like with like.
        timed = measure_alternating(
            runs, reps=reps, setup=fresh, teardown=drop, warmup=res.ops <= WARMUP_MAX_OPS
        )
        for label, t in timed.items():
            step(label, t)
        op = fresh()
        state = Pipeline(pass_names(dialect)["for-penguin"]).run(op)
        drop(op)
        res.rewrites = sum(st.rewritten for per in state.statistics.values() for st in per.values())
        log(f"  {name:>22s} {dialect:9s} {res.ops:,} ops, for-penguin rewrote {res.rewrites:,}")
        if floor is not None:
            res.floor = measure_floor(floor, master, dialect, reps)
            f = res.floor
            if f:
                log(
                    f"  {name:>22s} {dialect:9s} floor: {f['creates']:,} creates, "
                    f"{f['erases']:,} erases; create/clone/erase {f['create_us']:.2f}/"
                    f"{f['clone_us']:.2f}/{f['erase_us']:.2f} us, walk "
                    f"{f['walk'] * f.get('walk_share', 1.0) / res.ops * 1e6:.2f} us/op, verify "
                    f"{res.floor_verify() / res.ops * 1e6:.2f} us/op: "
                    f"{res.floor_cpu() / res.ops * 1e6:.2f} us/op"
                )
        # ``master`` is freed with its Python object (erase() would free a Module's op twice)
    return res


# ------------------------------------------------------------------------------ children


def keep_min(best: dict[str, float], key: str, value: float) -> None:
    """best[key] = the least value seen for ``key``."""
    best[key] = min(best.get(key, float("inf")), value)


def run_child(flag: str, *args: str, module: str = "benchmarks.run") -> dict[str, float] | None:
    """``python -m <module> <flag> <args>`` in a fresh process: the JSON object on the last
    line of its output, or None (with the child's stderr shown) if it failed."""
    proc = subprocess.run(
        [sys.executable, "-m", module, flag, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=3600,
    )
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        print(
            f"{flag} {' '.join(args)}: the child failed (exit {proc.returncode})\n{proc.stderr}",
            file=sys.stderr,
        )
        return None


# ------------------------------------------------------------------------------ floor


def op_names(module) -> Counter:
    """How many ops of each name the functions of ``module`` hold at their top level (ops
    nested in another op's regions come with it: one clone or erase handles them all)."""
    names: Counter = Counter()
    for func in module.regions[0].blocks[0].operations:
        for region in func.regions:
            for block in region.blocks:
                for op in block.operations:
                    names[op.operation.name] += 1
    return names


def net_edits(module, pipeline: str) -> dict[str, int]:
    """The creates and erases any implementation needs to turn ``module`` into what
    ``pipeline`` makes of it: an op's name cannot change in place, so for each op name,
    the top-level ops the output has beyond the input's must be created and those it lacks
    erased. (Ops our passes create and erase again, ops rebuilt where an in-place edit
    would do, and ops inside a created or erased op's regions are not counted.)"""
    from penguin_opt.pipeline import Pipeline

    before = op_names(module)
    Pipeline(pipeline, verify="off").run(module)
    after = op_names(module)
    names = before.keys() | after.keys()
    return {
        "creates": sum(max(0, after[n] - before[n]) for n in names),
        "erases": sum(max(0, before[n] - after[n]) for n in names),
    }


def copy_arguments(ops) -> tuple[list, list]:
    """What creating a copy of each of ``ops`` (one result, no attributes) right before it
    needs, read beforehand: (name, result types, operands, location) and insertion points."""
    from jaxlib.mlir import ir

    args = [(op.name, [op.results[0].type], list(op.operands), op.location) for op in ops]
    return args, [ir.InsertionPoint(op) for op in ops]


def create_copies(args: list, points: list) -> list:
    """The copies ``copy_arguments`` prepared, created (the priced step)."""
    from jaxlib.mlir import ir

    return [
        ir.Operation.create(name, results=types, operands=operands, loc=loc, ip=ip)
        for (name, types, operands, loc), ip in zip(args, points, strict=True)
    ]


def visited_share(module, dialect: str) -> float:
    """The share of ``module``'s ops (below its functions) that removeDeadZeroSizedTensorOps
    must visit in Python: those outside its shape-following kinds, which it reaches from
    zero-sized values instead."""
    from penguin_opt.ir_util import functions, op_counts
    from penguin_opt.passes.penguin_rewriters import _SHAPE_FOLLOWING

    following = {f"{dialect}.{m}" for m in _SHAPE_FOLLOWING}
    total = visited = 0
    for f in functions(module):
        for name, n in op_counts(f).items():
            n -= name == f.name  # the function itself
            total += n
            visited += 0 if name in following else n
    return visited / total if total else 1.0


def floor_child(path: str, dialect: str, reps: str) -> None:
    """(child) The cheapest binding costs on the module at ``path``, as JSON: a Python walk
    with an empty callback, one ``verify()`` of a fresh parse of what both passes make of
    it (``verify_output``, sorts expanded), and per op a create (an
    ``add`` without attributes, arguments read beforehand), a clone of a template op, an
    erase (of an op without uses). Each the minimum of ``reps`` runs, with the garbage
    collector off, in a fresh process (costs measured late in a long benchmark process come
    out higher)."""
    from jaxlib.mlir import ir

    from penguin_opt.context import make_context
    from penguin_opt.ir_util import ops_named
    from penguin_opt.penguin_sort import expand, parse_text
    from penguin_opt.pipeline import Pipeline

    n_reps = int(reps)
    best: dict[str, float] = {}
    keep = functools.partial(keep_min, best)
    advance = ir.WalkResult.ADVANCE
    with make_context(), ir.Location.unknown():
        module = parse_text(Path(path).read_text(), path)
        best["walk_share"] = visited_share(module, dialect)
        adds = ops_named(module, [f"{dialect}.add"])
        if not adds:
            raise SystemExit(f"{path}: no {dialect}.add to price the edits on")
        # The same every run: each run's new ops are erased again.
        args, points = copy_arguments(adds)
        template, n = adds[0], len(adds)
        gc.collect()
        gc.disable()
        for _ in range(n_reps):
            t0 = time.process_time()
            module.walk(lambda _op: advance, ir.WalkOrder.POST_ORDER)
            keep("walk", time.process_time() - t0)
            t0 = time.process_time()
            news = create_copies(args, points)
            t1 = time.process_time()
            clones = [template.clone(ip=ip) for ip in points]
            t2 = time.process_time()
            for op in news:
                op.erase()
            t3 = time.process_time()
            for op in clones:
                op.erase()
            keep("create_us", (t1 - t0) / n * 1e6)
            keep("clone_us", (t2 - t1) / n * 1e6)
            keep("erase_us", (t3 - t2) / n * 1e6)
            del news, clones
        del points, args, adds, template
        gc.enable()
        # The output any implementation must verify, at its cheapest: a fresh parse of it
        # (contiguous in memory, unlike a module edited in place), sorts expanded so that
        # MLIR's own verifier accepts it.
        out = module.clone()
        Pipeline(pipelines(dialect)["both"], verify="off").run(out)
        expand(out)
        text = out.get_asm(print_generic_op_form=True, assume_verified=True)
        out.erase()
        fresh = parse_text(text, path)
        del text
        gc.collect()
        gc.disable()
        for _ in range(n_reps):
            t0 = time.process_time()
            fresh.verify()
            keep("verify_output", time.process_time() - t0)
        gc.enable()
    print(json.dumps(best))


def measure_floor(path: Path, master, dialect: str, reps: int) -> dict[str, float] | None:
    """The least work through the bindings that any implementation of both canonicalize
    passes needs on ``master`` (read from ``path``); see ``ModuleResult.floor_cpu``."""
    floor = run_child("--floor-child", str(path), dialect, str(max(reps, 5)))
    if floor is None:
        return None
    clone = master.clone()
    try:
        floor.update(net_edits(clone, pipelines(dialect)["both"]))
    finally:
        clone.erase()
    return floor


# ------------------------------------------------------------------------------ memory


def _status_kb(field_name: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field_name + ":"):
            return int(line.split()[1])
    raise KeyError(field_name)


def _reset_peak() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def memory_child(path: str, pipeline: str) -> None:
    """(child) Peak RSS of parsing ``path`` and of running ``pipeline`` on it, as JSON."""
    from jaxlib.mlir import ir

    from benchmarks.generate import stablehlo_module, to_mhlo
    from penguin_opt.context import make_context
    from penguin_opt.penguin_sort import parse_text
    from penguin_opt.pipeline import Pipeline

    ctx = make_context()
    with ctx, ir.Location.unknown(ctx):
        # Warm up on a one-unit module: lazy imports and lookup tables are not the
        # pipeline's memory for this module.
        small, _ = stablehlo_module(10)
        if "stablehlo" not in pipeline:
            small = to_mhlo(small)
        Pipeline(pipeline).run(parse_text(small, "warmup"))
        gc.collect()
        _reset_peak()
        base = _status_kb("VmRSS")
        text = Path(path).read_text()
        module = parse_text(text, path)
        parse_peak = _status_kb("VmHWM")
        del text
        gc.collect()
        after_parse = _status_kb("VmRSS")
        resettable = _reset_peak()
        Pipeline(pipeline).run(module)
        pipe_peak = _status_kb("VmHWM")
    print(
        json.dumps(
            {
                "baseline": base / 1024,
                "parse": (parse_peak - base) / 1024,
                "module": (after_parse - base) / 1024,
                "pipeline": (pipe_peak - base) / 1024,
                "reset": resettable,
            }
        )
    )


def measure_memory(path: Path, pipeline: str) -> dict[str, float] | None:
    return run_child("--memory-child", str(path), pipeline)


# ------------------------------------------------------------------------------ end to end


E2E_KEYS = ("e2e native", "e2e both")


def run_command(args: list[str]) -> Timing:
    """CPU time (user + system, of the child and its children) and wall time of one
    command; raises if it fails."""
    import resource

    def children_cpu() -> float:
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        return ru.ru_utime + ru.ru_stime

    c0, w0 = children_cpu(), time.perf_counter()
    proc = subprocess.run(
        args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=3600
    )
    wall, cpu = time.perf_counter() - w0, children_cpu() - c0
    if proc.returncode != 0:
        raise RuntimeError(
            f"{' '.join(args)}: exit {proc.returncode}\n"
            f"{proc.stderr.decode(errors='replace')[-2000:]}"
        )
    return Timing(cpu, wall)


def measure_e2e(path: Path, dialect: str, reps: int) -> dict[str, Timing]:
    """``penguin-opt IN -p <both passes> -o OUT`` and the same command with native
    ``canonicalize`` in their place, each in a fresh process (read, passes, verification,
    write; diagnostics to a pipe), alternating, min over ``reps`` runs of each."""
    from benchmarks.generate import CACHE

    out = CACHE / f"e2e_{os.getpid()}.mlir"
    cmd = [sys.executable, "-m", "penguin_opt", str(path), "-o", str(out), "-p"]
    commands = {
        "e2e native": [*cmd, "canonicalize"],
        "e2e both": [*cmd, pipelines(dialect)["both"]],
    }
    best: dict[str, Timing] = {}
    try:
        for _ in range(reps):
            for key, args in commands.items():
                t = run_command(args)
                old = best.get(key)
                best[key] = t if old is None else Timing(min(old.cpu, t.cpu), min(old.wall, t.wall))
    finally:
        out.unlink(missing_ok=True)
    return best


# ------------------------------------------------------------------------------ folds


@dataclass
class FoldResult:
    label: str
    elements: int
    ours: Timing
    numpy: Timing
    baseline: Timing | None = None  # the same run with the operand an argument: no fold
    # DenseElementsAttr.get of numpy's result: what any fold through the bindings adds to
    # numpy's own work (the attribute copies and hashes the buffer it is given)
    attr_get: Timing | None = None

    @property
    def ratio(self) -> float:  # our throughput / numpy's
        return self.numpy.cpu / self.ours.cpu

    @property
    def ceiling(self) -> float | None:  # the best fold ratio these bindings allow
        if self.attr_get is None:
            return None
        return self.numpy.cpu / (self.numpy.cpu + self.attr_get.cpu)

    @property
    def fold_cpu(self) -> float | None:  # the run minus the same run without the fold
        return None if self.baseline is None else max(self.ours.cpu - self.baseline.cpu, 1e-9)


def bench_folds(reps: int, n: int, log) -> list[FoldResult]:
    """broadcast_in_dim and convert folds of ``n`` elements vs numpy into a new array."""
    import ml_dtypes
    import numpy as np
    from jaxlib.mlir import ir

    from penguin_opt.context import make_context
    from penguin_opt.elements import make_elements
    from penguin_opt.penguin_sort import parse_text
    from penguin_opt.pipeline import Pipeline

    rows, cols = 1024, n // 1024
    rng = np.random.default_rng(0)
    vec = rng.standard_normal(cols).astype(np.float32)
    big = rng.standard_normal(n).astype(np.float32)
    ints = rng.integers(-(2**31), 2**31 - 1, n, dtype=np.int32)
    pipe = f"stablehlo-canonicalize-for-penguin{{broadcast-num-elements-to-fold={n}}}"
    cases = [
        (
            "broadcast_in_dim f32[{c}] -> f32[{r}x{c}]",
            vec,
            f"tensor<{cols}xf32>",
            f"tensor<{rows}x{cols}xf32>",
            "stablehlo.broadcast_in_dim %c, dims = [1]",
            lambda: np.broadcast_to(vec, (rows, cols)).copy(),
        ),
        (
            "broadcast_in_dim splat f32 -> f32[{r}x{c}]",
            np.float32(1.5).reshape(()),
            "tensor<f32>",
            f"tensor<{rows}x{cols}xf32>",
            "stablehlo.broadcast_in_dim %c, dims = []",
            lambda: np.broadcast_to(np.float32(1.5), (rows, cols)).copy(),
        ),
        (
            "convert f32[{n}] -> bf16",
            big,
            f"tensor<{n}xf32>",
            f"tensor<{n}xbf16>",
            "stablehlo.convert %c",
            lambda: big.astype(ml_dtypes.bfloat16),
        ),
        (
            "convert i32[{n}] -> f32",
            ints,
            f"tensor<{n}xi32>",
            f"tensor<{n}xf32>",
            "stablehlo.convert %c",
            lambda: ints.astype(np.float32),
        ),
        (
            "convert f32[{n}] -> i32",
            big,
            f"tensor<{n}xf32>",
            f"tensor<{n}xi32>",
            "stablehlo.convert %c",
            lambda: big.astype(np.int32),
        ),
    ]
    results = []
    ctx = make_context()
    with ctx, ir.Location.unknown(ctx):
        for label, src, src_t, dst_t, op_text, numpy_fn in cases:
            label = label.format(r=rows, c=cols, n=size_label(n) if n % 1000 == 0 else n)
            attr = make_elements(np.asarray(src), ir.Type.parse(src_t))
            text = (
                f"func.func @main() -> {dst_t} {{\n  %c = stablehlo.constant {attr}\n"
                f"  %0 = {op_text} : ({src_t}) -> {dst_t}\n  return %0 : {dst_t}\n}}\n"
            )
            module = parse_text(text, label)

            unfoldable = parse_text(
                f"func.func @main(%c: {src_t}) -> {dst_t} {{\n"
                f"  %0 = {op_text} : ({src_t}) -> {dst_t}\n  return %0 : {dst_t}\n}}\n",
                label,
            )

            def run(op, label=label, folds=1):
                state = Pipeline(pipe).run(op)
                per = state.statistics["stablehlo-canonicalize-for-penguin"]
                assert sum(st.rewritten for st in per.values()) == folds, label

            # The fold, the same run without it, and numpy, interleaved: their differences
            # and ratios are what the table shows, each run a millisecond or two.
            timed = measure_alternating(
                {
                    "ours": (run, module.clone, ir.Operation.erase),
                    "base": (lambda op: run(op, folds=0), unfoldable.clone, ir.Operation.erase),
                    "numpy": (numpy_fn, None, None),
                },
                reps=reps,
            )
            ours, base, ref = timed["ours"], timed["base"], timed["numpy"]
            # The cheapest attribute of numpy's result: its raw storage (one element if
            # they are all the same: a splat), found untimed.
            result = np.ascontiguousarray(numpy_fn()).reshape(-1)
            raw = result.view(f"u{result.dtype.itemsize}")
            if (raw == raw[0]).all():
                raw = raw[:1]
            element = ir.RankedTensorType(ir.Type.parse(dst_t)).element_type
            get = measure(
                lambda raw=raw, element=element, size=result.size: ir.DenseElementsAttr.get(
                    raw, type=element, shape=[size]
                ),
                reps=reps,
            )
            r = FoldResult(label, n, ours, ref, base, get)
            log(
                f"  fold {label:45s} ours {ours.cpu * 1e3:8.2f} ms  numpy {ref.cpu * 1e3:8.2f} ms"
                f"  ours/numpy throughput {r.ratio:5.2f}  ceiling {r.ceiling:5.2f}"
            )
            results.append(r)
            del module, unfoldable
        # The floor under any fold: building the attribute from a ready numpy buffer.
        flat = big.view(np.uint32)
        f32 = ir.F32Type.get()
        get = measure(lambda: ir.DenseElementsAttr.get(flat, type=f32, shape=[n]), reps=reps)
        copy = measure(lambda: big.copy(), reps=reps)
        results.append(
            FoldResult(f"(floor) DenseElementsAttr.get of a ready f32[{n}] buffer", n, get, copy)
        )
        log(f"  DenseElementsAttr.get {get.cpu * 1e3:.2f} ms vs numpy copy {copy.cpu * 1e3:.2f} ms")
    return results


# ------------------------------------------------------------------------------ report


def machine() -> dict[str, str]:
    import importlib.metadata as md

    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "unknown"
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f"{kb / 1024 / 1024:.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    versions = {d: md.version(d) for d in ("jax", "jaxlib", "numpy")}
    return {
        "cpu": f"{cpu}, {os.cpu_count()} cores",
        "memory": mem,
        "os": platform.platform(),
        "python": platform.python_version(),
        "versions": ", ".join(f"{k} {v}" for k, v in versions.items()),
    }


def fmt_t(t: Timing | None, ops: int) -> str:
    if t is None:
        return "-"
    return f"{t.cpu:.3f}s ({t.us(ops):.2f})"


def report(results: list[ModuleResult], folds: list[FoldResult], info: dict, args) -> str:
    out: list[str] = []
    w = out.append
    w("# Performance\n")
    w(
        f"Generated by `{COMMAND}` ({info['args']}); rerun it to regenerate everything above "
        "the marker line at the end (what is below it is kept).\n"
    )
    w("## Machine\n")
    for k in ("cpu", "memory", "os", "python", "versions"):
        w(f"* {k}: {info[k]}")
    w(
        f"* load average (1 min) at start / end: {info['load_start']} / {info['load_end']} "
        "(other work on the machine: the timings are process CPU time, which it disturbs "
        "least; wall-clock ratios are shown too)"
    )
    w(f"* run: {info['date']}, {info['duration']:.0f} s\n")
    w("## Passes on synthetic modules and corpus programs\n")
    w(
        "Seconds of process CPU time, min of the repetitions (Python's garbage collector off "
        "while timed, no collection forced before, as `timeit` does), and in parentheses µs "
        "per op (ops = every op of the module, nested ones included). `native` is MLIR's "
        "`canonicalize` with the verifier on; `verify` is one `module.verify()`; "
        "`both` is our two canonicalize passes in one pipeline; `pipeline` adds `inline` in "
        "front; `native` and our passes and pipelines run interleaved (each repetition "
        "runs each once, each on a fresh clone; modules of up to "
        f"{WARMUP_MAX_OPS:,} ops get one untimed run of each first). Each of our passes "
        "verifies its output "
        "(the for-penguin passes turn the "
        "PassManager's verifier off and verify penguin-aware themselves). `end to end` is "
        "the command a user runs, in a fresh process: `penguin-opt IN -p <both passes> -o "
        "OUT` (read, passes, verification, write; `both`), and the same command with "
        "`-p canonicalize` (`native`), the children's CPU time (min of the repetitions, "
        "the two alternating; µs per op include the process start, about 0.3 s).\n"
    )
    for dialect in args.dialects:
        rows = [r for r in results if r.dialect == dialect]
        if not rows:
            continue
        names = pass_names(dialect)
        keys = ["parse", "print", "verify", "native canonicalize", *names, "both", "pipeline"]
        heads = [
            "parse",
            "print",
            "verify",
            "native",
            *(names[k] for k in names),
            "both",
            "pipeline",
        ]
        w(f"### {dialect}\n")
        keys += E2E_KEYS
        heads += ["end to end: native", "end to end: both"]
        w(
            "| module | ops | rewrites | "
            + " | ".join(heads)
            + " | both/native (cpu, wall) | end to end both/native (cpu, wall) |"
        )
        w("|---|---:|---:|" + "---:|" * len(heads) + "---:|---:|")
        for r in rows:
            cells = [fmt_t(r.times.get(k), r.ops) for k in keys]
            e2e = (
                f"{r.e2e_ratio():.2f}, {r.e2e_ratio(wall=True):.2f}"
                if r.e2e_ratio() is not None
                else "-"
            )
            w(
                f"| {r.name} | {r.ops:,} | {r.rewrites:,} | "
                + " | ".join(cells)
                + f" | {r.ratio('both'):.2f}, {r.ratio('both', wall=True):.2f} | {e2e} |"
            )
        w("")
    floor_rows = [r for r in results if r.floor]
    if floor_rows:
        w("### Floor: the least work these bindings allow\n")
        w(
            "What any implementation of both canonicalize passes must spend at least when it "
            "edits the IR through jaxlib's Python bindings (`measure_floor` in "
            "`benchmarks/run.py`). Edits: an op's name cannot change in place, so for each op "
            "name the ops the output has beyond the input must be created and those it lacks "
            "erased (`creates`, `erases`; ops at the top level of functions), each at the "
            "cheapest price measured on the same "
            "module in a fresh process (create or clone: an `add` without attributes, "
            "arguments read beforehand; erase: an op without uses; minimum of 5 runs, garbage "
            "collector off). For StableHLO a Python walk with an empty callback over the "
            "ops removeDeadZeroSizedTensorOps cannot reach from zero-sized values (`walk`: "
            "every op's walk times the share of the kinds outside its shape-following ones, "
            "in parentheses): it must see their result types, and the bindings have no "
            "native filter for them. One `module.verify()` of the output (as native "
            "`canonicalize` verifies its own), at its cheapest: of a fresh parse of the "
            "output's text with its sorts expanded (contiguous in memory, unlike a module "
            "edited in place; in the same child, minimum of 5 runs). Nothing is charged for "
            "reading operands, attributes or constants, for arithmetic, for RAUW, or for "
            "edits in place; ops nested in a created or erased op's regions are not counted "
            "(a clone or an erase handles them with it). µs per op unless marked; the targets "
            f"are {TARGET_US_PER_OP:g} µs/op at every size and {TARGET_RATIO:g}x native "
            "canonicalize on the largest module.\n"
        )
        w(
            "| module | dialect | creates | erases | create / clone / erase µs | walk | verify "
            f"| floor | floor without verify | {TARGET_RATIO:g}x native | both (measured) |"
        )
        w("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in floor_rows:
            f = r.floor
            share = f.get("walk_share", 1.0)
            walk = (
                f"{f['walk'] * share / r.ops * 1e6:.2f} ({share:.0%})"
                if r.dialect == "stablehlo"
                else "-"
            )
            half = TARGET_RATIO * r.times["native canonicalize"].us(r.ops)
            w(
                f"| {r.name} | {r.dialect} | {f['creates']:,} | {f['erases']:,} | "
                f"{f['create_us']:.2f} / {f['clone_us']:.2f} / {f['erase_us']:.2f} | {walk} | "
                f"{r.floor_verify() / r.ops * 1e6:.2f} | **{r.floor_cpu() / r.ops * 1e6:.2f}** | "
                f"{r.floor_cpu(verify=False) / r.ops * 1e6:.2f} | {half:.2f} | "
                f"{r.times['both'].us(r.ops):.2f} |"
            )
        w("")
    mem_rows = [r for r in results if r.memory]
    if mem_rows:
        w("### Peak memory\n")
        w(
            "Peak RSS above the process's baseline (imports, context), in a child process "
            "per module: parsing the text (text and module), then, after resetting the peak, "
            "the whole pipeline on the parsed module.\n"
        )
        w(
            "| module | dialect | baseline MB | parse peak MB | module MB | pipeline peak MB | "
            "pipeline/parse |"
        )
        w("|---|---|---:|---:|---:|---:|---:|")
        for r in mem_rows:
            m = r.memory
            ratio = f"{m['pipeline'] / m['parse']:.2f}" if m["parse"] >= 1 else "-"
            w(
                f"| {r.name} | {r.dialect} | {m['baseline']:.0f} | {m['parse']:.1f} | "
                f"{m['module']:.1f} | {m['pipeline']:.1f} | {ratio} |"
            )
        w("")
    if folds:
        w("### Folding throughput\n")
        w(
            "Ours = the whole `stablehlo-canonicalize-for-penguin` run on a module holding "
            "just the constant and the op (budget raised to the element count); no-fold = the "
            "same run with the operand a function argument (the pass's fixed cost on this "
            "module: pass manager, walks, verification); fold = the difference; numpy = the "
            "same broadcast (`np.broadcast_to(..).copy()`) or cast (`astype`) into a new "
            "array; these three interleaved, process CPU time, min of 20 runs each. Ratios = "
            "numpy's time / ours (throughput relative to numpy's). attr = "
            "`DenseElementsAttr.get` of numpy's result (its raw storage, as the bindings take "
            "it: they copy and hash the buffer; one element for a splat), the one step no "
            "fold through these bindings can skip; ceiling = numpy / (numpy + attr), the "
            "best ratio (fold) a fold can reach here even if its own arithmetic were "
            "numpy's.\n"
        )
        w(
            "| fold | elements | ours ms | no-fold ms | fold ms | numpy ms | attr ms "
            "| ratio (run) | ratio (fold) | ceiling |"
        )
        w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for f in folds:
            attr = "-" if f.attr_get is None else f"{f.attr_get.cpu * 1e3:.2f}"
            ceiling = "-" if f.ceiling is None else f"{f.ceiling:.2f}"
            if f.baseline is None:
                w(
                    f"| {f.label} | {f.elements:,} | {f.ours.cpu * 1e3:.2f} | - | - | "
                    f"{f.numpy.cpu * 1e3:.2f} | {attr} | {f.ratio:.2f} | - | {ceiling} |"
                )
                continue
            w(
                f"| {f.label} | {f.elements:,} | {f.ours.cpu * 1e3:.2f} | "
                f"{f.baseline.cpu * 1e3:.2f} | {f.fold_cpu * 1e3:.2f} | "
                f"{f.numpy.cpu * 1e3:.2f} | {attr} | {f.ratio:.2f} | "
                f"{f.numpy.cpu / f.fold_cpu:.2f} | {ceiling} |"
            )
        w("")
    w("## Targets\n")
    w("| target | measured | status |")
    w("|---|---|---|")
    for line in target_lines(results, folds):
        w(line)
    w("")
    return "\n".join(out)


def target_lines(results: list[ModuleResult], folds: list[FoldResult]) -> list[str]:
    lines = []

    def status(ok: bool) -> str:
        return "met" if ok else "**missed**"

    synth = [r for r in results if r.name.startswith("synthetic")]
    for dialect in sorted({r.dialect for r in synth}):
        rows = sorted((r for r in synth if r.dialect == dialect), key=lambda r: r.ops)
        largest = rows[-1]
        ratio = largest.ratio("both")
        floor = (
            f"; floor {largest.floor_cpu() / largest.times['native canonicalize'].cpu:.2f}x"
            if largest.floor
            else ""
        )
        lines.append(
            f"| {dialect}: both canonicalize passes <= {TARGET_RATIO}x native "
            f"canonicalize on the largest module ({largest.name}) | {ratio:.2f}x "
            f"(wall {largest.ratio('both', wall=True):.2f}x{floor}) | "
            f"{status(ratio <= TARGET_RATIO)} |"
        )
        for r in rows:
            e2e = r.e2e_ratio()
            if e2e is None or r.ops < E2E_TARGET_MIN_OPS:
                continue
            lines.append(
                f"| {dialect}: end to end (`penguin-opt IN -p <both> -o OUT`) <= "
                f"{TARGET_E2E}x the same with native canonicalize ({r.name}) | "
                f"{e2e:.2f}x (wall {r.e2e_ratio(wall=True):.2f}x) | "
                f"{status(e2e <= TARGET_E2E)} |"
            )
        us = [r.times["both"].us(r.ops) for r in rows]
        per_size = ", ".join(
            f"{size_label_of(r)}: {u:.2f}"
            + (f" (floor {r.floor_cpu() / r.ops * 1e6:.2f})" if r.floor else "")
            for r, u in zip(rows, us, strict=True)
        )
        lines.append(
            f"| {dialect}: both passes <= {TARGET_US_PER_OP} µs/op at every size | "
            f"{per_size} | {status(max(us) <= TARGET_US_PER_OP)} |"
        )
        flat = max(us) / min(us)
        native = [r.times["native canonicalize"].us(r.ops) for r in rows]
        parse = [r.times["parse"].us(r.ops) for r in rows]
        lines.append(
            f"| {dialect}: µs/op flat within {TARGET_FLATNESS}x across sizes | "
            f"max/min {flat:.2f} (same machine: native canonicalize "
            f"{max(native) / min(native):.2f}, parse {max(parse) / min(parse):.2f}) | "
            f"{status(flat <= TARGET_FLATNESS)} |"
        )
        # Below ~10 MB the peaks are allocator noise (freed warm-up memory is reused).
        mems = [r for r in rows if r.memory and r.memory["parse"] >= MEMORY_MIN_MB]
        if mems:
            worst = max(mems, key=lambda r: r.memory["pipeline"] / r.memory["parse"])
            m = worst.memory["pipeline"] / worst.memory["parse"]
            lines.append(
                f"| {dialect}: pipeline peak memory <= {TARGET_MEMORY}x parse peak "
                f"(modules whose parse peak is >= {MEMORY_MIN_MB} MB) | "
                f"worst {m:.2f} ({worst.name}) | {status(m <= TARGET_MEMORY)} |"
            )
    real = [f for f in folds if not f.label.startswith("(floor)")]
    if real:
        worst = min(real, key=lambda f: f.ratio)
        lines.append(
            f"| folds >= {TARGET_FOLD} of numpy's throughput (whole pass run) | worst "
            f"{worst.ratio:.2f} ({worst.label}) | {status(worst.ratio >= TARGET_FOLD)} |"
        )
        timed = [f for f in real if f.fold_cpu is not None]
        if timed:
            worst = min(timed, key=lambda f: f.numpy.cpu / f.fold_cpu)
            ratio = worst.numpy.cpu / worst.fold_cpu
            verdict = status(ratio >= TARGET_FOLD)
            if worst.ceiling is not None:
                verdict += f" (ceiling {worst.ceiling:.2f})"
            lines.append(
                f"| folds >= {TARGET_FOLD} of numpy's throughput (the fold alone) | "
                f"worst {ratio:.2f} ({worst.label}) | {verdict} |"
            )
            reachable = [f for f in timed if f.ceiling is not None and f.ceiling >= TARGET_FOLD]
            if reachable:
                worst = min(reachable, key=lambda f: f.numpy.cpu / f.fold_cpu)
                ratio = worst.numpy.cpu / worst.fold_cpu
                lines.append(
                    f"| the same, folds whose ceiling is >= {TARGET_FOLD} | worst {ratio:.2f} "
                    f"({worst.label}; ceiling {worst.ceiling:.2f}) | "
                    f"{status(ratio >= TARGET_FOLD)} |"
                )
    return lines


def size_label_of(r: ModuleResult) -> str:
    return r.name.split()[-1]


def corpus_programs(limit: int) -> list[tuple[str, str, Path]]:
    """The largest real programs available here: exported corpus models (from the corpus
    generator's cache, if it has been run) and the shared corpus's end-to-end models."""
    found: list[tuple[str, str, Path]] = []
    try:
        from tools.corpus.export import cache_root

        for p in cache_root().glob("*/model.mlir"):
            found.append((p.parent.name, "stablehlo", p))
    except Exception:  # the corpus package is optional
        pass
    shared = ROOT.parent / "shared" / "corpus" / "public" / "byteir" / "E2E"
    for p in shared.glob("CUDA_*.mlir"):
        found.append((p.stem.removeprefix("CUDA_").removesuffix("_input"), "mhlo", p))
    found.sort(key=lambda t: -t[2].stat().st_size)
    chosen, per_kind = [], {}
    for name, dialect, p in found:  # the largest of each source
        kind = "corpus" if dialect == "stablehlo" else "shared"
        if per_kind.get(kind, 0) < limit:
            per_kind[kind] = per_kind.get(kind, 0) + 1
            chosen.append((name, dialect, p))
    return chosen


def write_doc(text: str, path: Path) -> None:
    kept = ""
    if path.exists():
        old = path.read_text()
        if KEEP_MARK in old:
            kept = old.split(KEEP_MARK, 1)[1]
    path.write_text(text + "\n" + KEEP_MARK + kept)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--sizes", default=DEFAULT_SIZES, help=f"module sizes (default {DEFAULT_SIZES})"
    )
    ap.add_argument("--dialects", default="stablehlo,mhlo")
    ap.add_argument(
        "--reps",
        type=int,
        default=0,
        help="repetitions (default: 5 up to 10k ops, 3 up to 100k, 2 above)",
    )
    ap.add_argument(
        "--corpus",
        type=int,
        default=2,
        help="largest real programs of each source to include (0: none)",
    )
    ap.add_argument("--fold-elements", type=int, default=FOLD_ELEMENTS)
    ap.add_argument("--no-memory", action="store_true", help="skip the peak-RSS children")
    ap.add_argument("--no-folds", action="store_true")
    ap.add_argument(
        "--no-e2e",
        action="store_true",
        help="skip the end-to-end commands (penguin-opt IN -p ... -o OUT)",
    )
    ap.add_argument(
        "--no-floor",
        action="store_true",
        help="skip the floor measurement (the least work the bindings allow)",
    )
    ap.add_argument("--no-write", action="store_true", help=f"do not write {DOC.name}")
    ap.add_argument("-o", "--output", default=str(DOC))
    ap.add_argument(
        "--report-from",
        metavar="JSON",
        help="rebuild the report from a saved run (last_run.json in the cache)",
    )
    ap.add_argument("--memory-child", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--floor-child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.memory_child:
        memory_child(*args.memory_child)
        return 0
    if args.floor_child:
        floor_child(*args.floor_child)
        return 0
    args.dialects = [d.strip() for d in args.dialects.split(",") if d.strip()]
    if args.report_from:
        data = json.loads(Path(args.report_from).read_text())
        results = [
            ModuleResult(**{**r, "times": {k: Timing(**t) for k, t in r["times"].items()}})
            for r in data["results"]
        ]
        folds = [
            FoldResult(
                **{
                    **f,
                    "ours": Timing(**f["ours"]),
                    "numpy": Timing(**f["numpy"]),
                    "baseline": Timing(**f["baseline"]) if f.get("baseline") else None,
                    "attr_get": Timing(**f["attr_get"]) if f.get("attr_get") else None,
                }
            )
            for f in data["folds"]
        ]
        args.dialects = data["dialects"]
        text = report(results, folds, data["info"], args)
        print(text)
        if not args.no_write:
            write_doc(text, Path(args.output))
            print(f"wrote {args.output}")
        return 0
    sizes = [parse_size(s) for s in args.sizes.split(",") if s.strip()]

    from benchmarks.generate import module_path

    def log(msg: str) -> None:
        print(msg, flush=True)

    start, load_start = time.time(), os.getloadavg()[0]
    results: list[ModuleResult] = []
    for dialect in args.dialects:
        for n in sizes:
            path, _ = module_path(dialect, n)
            reps = args.reps or (5 if n <= 10_000 else 3 if n <= 100_000 else 2)
            res = bench_module(
                f"synthetic {size_label(n)}",
                dialect,
                path.read_text(),
                reps,
                log,
                floor=None if args.no_floor else path,
            )
            if not args.no_e2e:
                e2e_reps = args.reps or (3 if n <= 100_000 else 2)
                for key, t in measure_e2e(path, dialect, e2e_reps).items():
                    res.times[key] = t
                    log(
                        f"  {res.name:>22s} {dialect:9s} {key:24s} {t.cpu:9.3f}s cpu "
                        f"{t.us(res.ops):7.2f} us/op  ({t.wall:.3f}s wall)"
                    )
                log(
                    f"  {res.name:>22s} {dialect:9s} end to end both/native "
                    f"{res.e2e_ratio():.2f} (wall {res.e2e_ratio(wall=True):.2f})"
                )
            if not args.no_memory:
                res.memory = measure_memory(path, pipelines(dialect)["pipeline"])
                if res.memory:
                    m = res.memory
                    log(
                        f"  memory: parse peak {m['parse']:.0f} MB, pipeline peak "
                        f"{m['pipeline']:.0f} MB above a {m['baseline']:.0f} MB baseline"
                    )
            results.append(res)
    if args.corpus:
        for name, dialect, path in corpus_programs(args.corpus):
            if dialect not in args.dialects:
                continue
            try:
                res = bench_module(name, dialect, path.read_text(), 5, log)
            except Exception as err:  # a program our passes reject is reported, not fatal
                log(f"  {name}: skipped ({type(err).__name__}: {err})")
                continue
            if not args.no_memory:
                res.memory = measure_memory(path, pipelines(dialect)["pipeline"])
            results.append(res)
    folds = [] if args.no_folds else bench_folds(20, args.fold_elements, log)
    info = machine()
    info.update(
        load_start=f"{load_start:.1f}",
        load_end=f"{os.getloadavg()[0]:.1f}",
        date=time.strftime("%Y-%m-%d %H:%M"),
        duration=time.time() - start,
        args=" ".join(argv if argv is not None else sys.argv[1:]) or "defaults",
    )
    from benchmarks.generate import CACHE

    CACHE.mkdir(parents=True, exist_ok=True)
    saved = CACHE / "last_run.json"
    saved.write_text(
        json.dumps(
            {
                "results": [asdict(r) for r in results],
                "folds": [asdict(f) for f in folds],
                "info": info,
                "dialects": args.dialects,
            }
        )
    )
    log(f"results saved to {saved} (--report-from rebuilds the report from it)")
    text = report(results, folds, info, args)
    print()
    print(text)
    if not args.no_write:
        write_doc(text, Path(args.output))
        print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    if not __package__:  # run as ``python benchmarks/run.py``
        sys.path.insert(0, str(ROOT))
    sys.exit(main())
