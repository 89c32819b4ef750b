"""Where the time of our passes goes: a per-phase breakdown and cProfile's top functions.

    python -m benchmarks.profile --size 100k --dialect stablehlo
    python -m benchmarks.profile --size 1M --dialect mhlo --cprofile 25

Phases are timed by wrapping the functions each pass calls (no source change): the walks
(``collect``, removeDeadZeroSizedTensorOps' ``run_on``, conv's walk), each
rewriter's ``run``, conv's gate and two rewrites, and the penguin-aware ``verify`` after
each pass. Times are process CPU seconds of one run (the best of ``--reps``).
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import io
import pstats
import sys
import time

from benchmarks.run import parse_size, pipelines


def _wrap(obj, attr: str, label, times: collections.Counter, counts: collections.Counter):
    fn = getattr(obj, attr)

    def timed(*args, **kwargs):
        t0 = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            key = label(*args) if callable(label) else label
            if key is not None:  # None: counted by an outer wrapper
                times[key] += time.process_time() - t0
                counts[key] += 1

    setattr(obj, attr, timed)


def instrument(times: collections.Counter, counts: collections.Counter) -> None:
    from penguin_opt import penguin_sort, pipeline
    from penguin_opt.passes import canonicalize_for_penguin as cfp
    from penguin_opt.passes import penguin_rewriters as pr
    from penguin_opt.passes import rewriter, sweep

    _wrap(
        pipeline.penguin_sort,
        "verify",
        "verify (penguin-aware, once per run of our passes)",
        times,
        counts,
    )
    assert pipeline.penguin_sort is penguin_sort
    _wrap(sweep, "collect", "for-penguin: collect (name-dispatched walk)", times, counts)
    _wrap(cfp, "target_functions", "for-penguin: target_functions", times, counts)
    _wrap(
        pr.RemoveDeadZeroSizedTensorOps,
        "run_on",
        lambda self, *a: "for-penguin: removeDeadZeroSizedTensorOps (walk + rewrites)",
        times,
        counts,
    )
    _wrap(
        rewriter.Rewriter,
        "run",
        lambda self, *a: (
            None if isinstance(self, pr.CanonicalizeTupleOp) else f"for-penguin: {self.name}"
        ),
        times,
        counts,
    )
    _wrap(
        pr.CanonicalizeTupleOp, "run", lambda self, *a: f"for-penguin: {self.name}", times, counts
    )
    try:
        from penguin_opt.passes import canonicalize_conv as cc
    except ImportError:
        return
    _wrap(cc, "functions", "conv: functions", times, counts)
    _wrap(
        cc,
        "_convolutions_and_penguin_sorts",
        "conv: convolutions and penguin-form sorts (name-dispatched walk)",
        times,
        counts,
    )
    _wrap(cc, "conv_geometry", "conv: conv_geometry (once per convolution)", times, counts)
    _wrap(cc.ConvGate, "reject", "conv: gate (canCanonicalize)", times, counts)
    for cls, label in (
        (cc.ExplicitlyPad, "conv: explicitlyPad"),
        (cc.ExplicitlyStride, "conv: explicitlyStride"),
    ):
        # The pass calls ``apply`` (which calls ``rewrite``) where it has one.
        _wrap(cls, "apply" if "apply" in vars(cls) else "rewrite", label, times, counts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", default="100k")
    ap.add_argument("--dialect", default="stablehlo", choices=("stablehlo", "mhlo"))
    ap.add_argument("--pipeline", help="default: both canonicalize passes")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument(
        "--cprofile",
        type=int,
        default=0,
        metavar="N",
        help="also print cProfile's top N functions by own time",
    )
    args = ap.parse_args(argv)

    from jaxlib.mlir import ir

    from benchmarks.generate import module_path
    from penguin_opt.context import make_context
    from penguin_opt.penguin_sort import parse_text
    from penguin_opt.pipeline import Pipeline

    path, _ = module_path(args.dialect, parse_size(args.size))
    pipe = args.pipeline or pipelines(args.dialect)["both"]
    times: collections.Counter = collections.Counter()
    counts: collections.Counter = collections.Counter()
    instrument(times, counts)
    ctx = make_context()
    best = None
    with ctx, ir.Location.unknown(ctx):
        master = parse_text(path.read_text(), str(path))
        from benchmarks.run import count_ops

        ops = count_ops(master)
        for _ in range(args.reps):
            module = master.clone()
            times.clear()
            counts.clear()
            t0 = time.process_time()
            state = Pipeline(pipe).run(module)
            total = time.process_time() - t0
            module.erase()
            if best is None or total < best[0]:
                best = (total, dict(times), dict(counts))
        total, phase, calls = best
        roots = {}  # phase label -> (roots visited, rewritten), from the pass statistics
        for pass_name, per in state.statistics.items():
            prefix = "conv" if "conv" in pass_name else "for-penguin"
            for rewriter, st in per.items():
                roots[f"{prefix}: {rewriter}"] = (st.matched, st.rewritten)
        print(
            f"{pipe} on {path.name}: {ops:,} ops, {total:.3f}s CPU, {total / ops * 1e6:.2f} us/op"
        )
        print(
            f"{'phase':62s} {'calls':>6s} {'s':>7s} {'us/op':>6s} {'roots':>7s} "
            f"{'rewrit.':>7s} {'us/root':>8s}"
        )
        for key, t in sorted(phase.items(), key=lambda kv: -kv[1]):
            label = key.split(" (")[0]
            seen, done = roots.get(label, (calls[key], 0))
            print(
                f"{key:62s} {calls[key]:6d} {t:7.3f} {t / ops * 1e6:6.2f} {seen:7d} "
                f"{done:7d} {t / max(seen, 1) * 1e6:8.1f}"
            )
        rest = total - sum(phase.values())
        print(
            f"{'(rest: pass manager, Sweep setup, pipeline plumbing)':62s} {'':7s} "
            f"{rest:8.3f} {rest / ops * 1e6:7.2f}"
        )
        if args.cprofile:
            module = master.clone()
            prof = cProfile.Profile()
            prof.enable()
            Pipeline(pipe).run(module)
            prof.disable()
            module.erase()
            out = io.StringIO()
            pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(args.cprofile)
            print(out.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
