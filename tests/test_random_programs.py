"""Property tests: random programs mixing every pattern the passes match, in both dialects.

Each program from :func:`support.random_programs.programs` (StableHLO text) is
run through the full pipeline twice, as the corpus sweep does:

* StableHLO: ``inline,stablehlo-canonicalize-for-penguin,stablehlo-canonicalize-conv``;
* MHLO: ``inline,stablehlo-legalize-to-hlo,canonicalize-for-penguin,canonicalize-conv``

(with the program's ``broadcast-num-elements-to-fold`` when it draws a small one), and then:

1. the result verifies: MLIR's verifier on the module (penguin-form sorts read as their
   expanded meaning, :func:`penguin_opt.penguin_sort.verify`), and the printed text parses
   and verifies again in a fresh context;
2. the pass statistics are what the generator derived from the seed's semantics: the exact
   number of rewrites of every rewriter (removeDeadZeroSizedTensorOps: at least), at least
   the planned near misses per skip reason;
3. every near miss is still in place (found by its ``loc("tag")``, same op, same operand
   count, same key attributes);
4. the results are unchanged: :func:`penguin_opt.equivalence.check` on the reference
   interpreter, fixed seed. Floats must be bit-identical unless the run rewrote a
   ResizeNearestGrad or a strided convolution (which re-associate sums; then the checker's
   derived tolerance, 4 * eps * the largest reduction in the program; outputs of a
   bf16/f16 -> f32 convolution use eps of the operand type, in which the interpreter
   accumulates, see check_accumulation); integers always compare exactly. Not-checkable
   programs are counted and must stay rare (at most 2% of the runs).

Over the whole run, every rewriter must rewrite something in at least 4% of the programs
and every near-miss kind must occur and be found in place (the generator provably reaches
them all).

Programs come in batches, one per (unit, variant) of the generator (39), which every
program of the batch contains, among random other units. CI runs 7 programs per batch, 273
programs (``PENGUIN_RANDOM_PROGRAMS`` overrides it), about 60 s on 2 cores; ``-m slow`` runs
64 per batch and up to 8 units per program: 2496 programs, 4992 pipeline runs and checks,
about 10 minutes (``PENGUIN_RANDOM_PROGRAMS_SLOW``). Both are deterministic (fixed
hypothesis seeds, no example database); a failure is shrunk by hypothesis to a minimal
program. Mismatches found are fixed in the passes and kept below as regression cases.
"""

from __future__ import annotations

import os
import re
import time
from collections import Counter
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from support.random_programs import (
    DIALECTS,
    IN_PLACE,
    MHLO_NEAR_MISS_REASONS,
    NEAR_MISS_REASONS,
    REQUIRED,
    REWRITERS,
    NearMiss,
    Program,
    programs,
)

import penguin_opt
from penguin_opt.equivalence import NotCheckable, check
from penguin_opt.passes import REASSOCIATING

PIPELINES = {
    "stablehlo": ("inline,stablehlo-canonicalize-for-penguin{OPTIONS},stablehlo-canonicalize-conv"),
    "mhlo": "inline,stablehlo-legalize-to-hlo,canonicalize-for-penguin{OPTIONS},canonicalize-conv",
}
FOR_PENGUIN_PASS = {
    "stablehlo": "stablehlo-canonicalize-for-penguin",
    "mhlo": "canonicalize-for-penguin",
}
CONV_PASS = {"stablehlo": "stablehlo-canonicalize-conv", "mhlo": "canonicalize-conv"}
ZERO_SIZED = "removeDeadZeroSizedTensorOps"
# Rewriters whose output may round differently (they re-associate a sum); every other
# rewrite must leave float results bit for bit.
SEED = 7  # inputs of the equivalence check

# programs per (unit, variant) of the generator (REQUIRED has 39 of them)
CI_PER_KIND = int(os.environ.get("PENGUIN_RANDOM_PROGRAMS", "7"))
SLOW_PER_KIND = int(os.environ.get("PENGUIN_RANDOM_PROGRAMS_SLOW", "64"))
MAX_NOT_CHECKABLE = 0.02  # of all runs
MIN_HIT_FRACTION = 0.04  # of all programs, per rewriter and dialect


def pipeline(dialect: str, budget: int | None) -> str:
    options = "" if budget is None else f"{{broadcast-num-elements-to-fold={budget}}}"
    return PIPELINES[dialect].replace("{OPTIONS}", options)


# --------------------------------------------------------------------------- one run


@dataclass
class Tally:
    """What a batch of programs did, for the coverage assertions and the printed report."""

    programs: int = 0
    runs: int = 0
    checked: int = 0
    exact: int = 0
    coarse: int = 0  # passed only with the accumulation type's tolerance (see below)
    outputs: int = 0
    seconds: float = 0.0
    not_checkable: Counter = field(default_factory=Counter)
    hits: Counter = field(default_factory=Counter)  # (dialect, rewriter) -> programs
    rewrites: Counter = field(default_factory=Counter)  # (dialect, rewriter) -> ops
    skips: Counter = field(default_factory=Counter)  # (dialect, rewriter, reason): planned
    near_misses: Counter = field(default_factory=Counter)  # the same, op found in place
    units: Counter = field(default_factory=Counter)

    def report(self) -> str:
        lines = [
            f"programs: {self.programs}, pipeline runs: {self.runs} "
            f"({len(DIALECTS)} dialects), {self.seconds:.1f} s",
            f"checked: {self.checked} ({self.exact} bit-exact, {self.checked - self.exact} "
            f"with the derived float tolerance, {self.coarse} of them with the operand type's "
            f"eps for a bf16/f16 -> f32 conv), outputs compared: {self.outputs}",
            f"not checkable: {sum(self.not_checkable.values())}"
            + "".join(f"\n  {n:>5}  {reason}" for reason, n in self.not_checkable.most_common()),
            "units: " + ", ".join(f"{k} {v}" for k, v in sorted(self.units.items())),
            f"{'rewriter':<36} {'stablehlo programs/ops':>24} {'mhlo programs/ops':>20}",
        ]
        for r in REWRITERS:
            cells = [f"{self.hits[(d, r)]}/{self.rewrites[(d, r)]}" for d in DIALECTS]
            lines.append(f"{r:<36} {cells[0]:>24} {cells[1]:>20}")
        lines.append(
            "near misses: planned skips confirmed by the statistics, ops found in "
            "place (stablehlo / mhlo)"
        )
        reasons = sorted({(r, why) for (_, r, why) in self.skips})
        for r, why in reasons:
            cells = [f"{self.skips[(d, r, why)]}/{self.near_misses[(d, r, why)]}" for d in DIALECTS]
            lines.append(f"  {r + ': ' + why:<60} {cells[0]:>12} {cells[1]:>12}")
        return "\n".join(lines)

    def assert_coverage(self, requested: int) -> None:
        assert self.programs >= 0.9 * requested, self.programs
        bad = sum(self.not_checkable.values())
        assert bad <= MAX_NOT_CHECKABLE * self.runs, (
            f"{bad} of {self.runs} runs were not checkable: {dict(self.not_checkable)}"
        )
        for d in DIALECTS:
            for r in REWRITERS:
                if r == ZERO_SIZED and d == "mhlo":
                    continue
                assert self.hits[(d, r)] >= MIN_HIT_FRACTION * self.programs, (
                    f"{d}: {r} rewrote something in only {self.hits[(d, r)]} of "
                    f"{self.programs} programs"
                )
            wanted = [(r, why) for r, reasons in NEAR_MISS_REASONS.items() for why in reasons]
            if d == "mhlo":
                wanted = [w for w in wanted if w[0] != ZERO_SIZED]
                wanted += [
                    (r, why) for r, reasons in MHLO_NEAR_MISS_REASONS.items() for why in reasons
                ]
            missing = [w for w in wanted if not self.skips[(d, *w)]]
            assert not missing, f"{d}: near misses never generated: {missing}"
            missing = [w for w in IN_PLACE[d] if not self.near_misses[(d, *w)]]
            assert not missing, f"{d}: near misses never found in place: {missing}"


def rewriter_stats(result, dialect: str) -> dict:
    stats = {}
    for pass_name in (FOR_PENGUIN_PASS[dialect], CONV_PASS[dialect]):
        stats.update(result.statistics.get(pass_name, {}))
    return stats


def verify(module, after: str) -> None:
    """MLIR's verifier on the result, and on its printed text read back."""
    from jaxlib.mlir import ir

    from penguin_opt.context import make_context
    from penguin_opt.penguin_sort import parse_allowing_penguin_sorts, verify

    with module.context:
        verify(module.operation)
    ctx = make_context()
    with ctx, ir.Location.unknown(ctx):
        parse_allowing_penguin_sorts(after, "after")  # verifies
    assert "penguin_unverified" not in after


def check_statistics(program: Program, dialect: str, stats, tally: Tally) -> None:
    expected = program.expected[dialect]
    for r in REWRITERS:
        if r == ZERO_SIZED and dialect == "mhlo":
            assert r not in stats
            continue
        got = stats[r].rewritten if r in stats else 0
        want = expected[(r, "rewritten")]
        if r == ZERO_SIZED:
            assert got >= want, f"{dialect}: {r} rewrote {got}, expected at least {want}"
        else:
            assert got == want, f"{dialect}: {r} rewrote {got} ops, expected {want}"
    for (r, outcome), want in expected.items():
        if outcome == "rewritten":
            continue
        got = stats[r].skipped[outcome] if r in stats else 0
        assert got >= want, (
            f"{dialect}: {r} skipped {got} ops as '{outcome}', expected at least {want}"
        )
        tally.skips[(dialect, r, outcome)] += want


_TAG = re.compile(r'"(t\d+)"')


def tagged_ops(module) -> dict[str, list]:
    from jaxlib.mlir import ir

    found: dict[str, list] = {}

    def visit(op):
        for tag in _TAG.findall(str(op.location)):
            found.setdefault(tag, []).append(op)
        return ir.WalkResult.ADVANCE

    with module.context:
        module.operation.walk(visit)
    return found


def _string(attr) -> str:
    from jaxlib.mlir import ir

    try:
        return ir.StringAttr(attr).value
    except ValueError:
        return str(attr)


def still_in_place(nm: NearMiss, op, dialect: str) -> bool:
    from penguin_opt.ir_util import i64_values

    if op.name != f"{dialect}.{nm.mnemonic}" or len(op.operands) != nm.operands:
        return False
    attrs = op.attributes
    for name, values, default in nm.ints:
        got = tuple(i64_values(attrs[name])) if name in attrs else default
        if got != values:
            return False
    for name, value in nm.strings:
        got = _string(attrs[name]) if name in attrs else None
        if (got or None) != value:
            return False
    return True


def check_near_misses(program: Program, dialect: str, module, tally: Tally) -> None:
    wanted = [nm for nm in program.near_misses if dialect in nm.dialects]
    if not wanted:
        return
    ops = tagged_ops(module)
    with module.context:
        for nm in wanted:
            candidates = ops.get(nm.tag, [])
            assert any(still_in_place(nm, op, dialect) for op in candidates), (
                f"{dialect}: the near miss {nm} was rewritten: "
                f"{[op.operation.get_asm()[:400] for op in candidates]}"
            )
            tally.near_misses[(dialect, nm.rewriter, nm.reason)] += 1


def run_program(program: Program, dialect: str, tally: Tally | None = None) -> None:
    tally = tally if tally is not None else Tally()
    module = penguin_opt.load(program.text)
    result = penguin_opt.run(module, pipeline(dialect, program.budget))
    after = penguin_opt.to_text(module)
    tally.runs += 1
    verify(module, after)
    stats = rewriter_stats(result, dialect)
    check_statistics(program, dialect, stats, tally)
    check_near_misses(program, dialect, module, tally)
    for r, st in stats.items():
        if st.rewritten:
            tally.hits[(dialect, r)] += 1
            tally.rewrites[(dialect, r)] += st.rewritten
    exact = not any(stats[r].rewritten for r in REASSOCIATING if r in stats)
    tolerance = 0.0 if exact else None  # None: derived from dtype and reduction size
    try:
        report = check(program.text, after, seed=SEED, rtol=tolerance, atol=tolerance)
        coarse = None
        failed = [o.index for o in report.outputs if not o.ok]
        if failed and not exact and set(failed) <= set(program.accumulation):
            coarse = check_accumulation(program, after, failed)
    except NotCheckable as err:
        tally.not_checkable[re.sub(r"\d+", "N", str(err))[:160]] += 1
        return
    assert report.outputs, "no outputs compared"
    if coarse is not None:
        assert coarse.ok, f"{dialect}: results changed\n{coarse.table()}\nafter:\n{after}"
        tally.coarse += 1
    else:
        assert report.ok, f"{dialect}: results changed\n{report.table()}\nafter:\n{after}"
    tally.checked += 1
    tally.exact += exact
    tally.outputs += len(report.outputs)


def check_accumulation(program: Program, after: str, failed: list[int]):
    """The outputs of a mixed-precision convolution (bf16 x bf16 -> f32) whose stride
    rewrite re-associated its sum, checked with the checker's own rule (4 * eps * R) but
    with eps of the type the reference interpreter accumulates such a conv in: the operand
    type. The interpreter's original is itself only that good (bf16 -> f32, 6 terms: 5.7e-3
    from the exact value, the rewritten 7.4e-3, f32 accumulation 8.6e-8), so the split sum
    can move by that much; on XLA CPU, which accumulates in f32, the same rewrite is bit
    for bit. Returns a report holding only ``failed``."""
    import numpy as np

    from penguin_opt.elements import DTYPES
    from penguin_opt.equivalence import Report, derived_tolerance, reduction_size

    terms = max(reduction_size(program.text), reduction_size(after))
    report = Report()
    for i in failed:
        r = derived_tolerance(np.dtype(DTYPES[program.accumulation[i]]), terms)
        coarse = check(program.text, after, seed=SEED, rtol=r, atol=r)
        report.oracle, report.trials = coarse.oracle, coarse.trials
        report.outputs.append(coarse.outputs[i])
    return report


def run_programs(per_kind: int, max_units: int, hypothesis_seed: int) -> Tally:
    """``per_kind`` programs for every (unit, variant) of the generator, each of them
    required in its batch (a random position among random other units)."""
    tally = Tally()
    start = time.perf_counter()
    for i, required in enumerate(REQUIRED):

        @seed(hypothesis_seed + i)
        @settings(
            max_examples=per_kind,
            database=None,
            deadline=None,
            print_blob=False,
            suppress_health_check=list(HealthCheck),
            phases=(Phase.explicit, Phase.generate, Phase.shrink),
        )
        @given(program=programs(max_units=max_units, required=required))
        def one(program: Program) -> None:
            tally.programs += 1
            tally.units.update(u.split("(")[-1].rstrip(")") for u in program.units)
            for dialect in DIALECTS:
                run_program(program, dialect, tally)

        one()
    tally.seconds = time.perf_counter() - start
    return tally


# --------------------------------------------------------------------------- the tests


def test_random_programs():
    """CI: a sized, deterministic subset (see CI_PER_KIND)."""
    tally = run_programs(CI_PER_KIND, max_units=5, hypothesis_seed=20250101)
    print("\n" + tally.report())
    tally.assert_coverage(CI_PER_KIND * len(REQUIRED))


@pytest.mark.slow
def test_random_programs_thousands():
    """The full run: thousands of programs, up to 8 units each."""
    tally = run_programs(SLOW_PER_KIND, max_units=8, hypothesis_seed=20260101)
    print("\n" + tally.report())
    tally.assert_coverage(SLOW_PER_KIND * len(REQUIRED))


# --------------------------------------------------------------------------- regressions
# Mismatches and invalid IR the random programs found, minimized, as explicit cases.


def test_checker_complex_infinity():
    """Found by the random programs (a checker bug, fixed in equivalence.py): a program with
    a ResizeNearestGrad rewrite (so the derived float tolerance applies) returning a
    complex<f32> constant with an infinite imaginary part was reported as a mismatch with
    max abs/rel error 0: complex outputs were rebuilt as re + 1j*im, and 1j*inf is
    (nan + inf j). Minimal form: the program compared with itself."""
    text = """func.func @main() -> tensor<2xcomplex<f32>> {
  %0 = stablehlo.constant dense<[(1.0, 0x7F800000), (2.0, 1.0)]> : tensor<2xcomplex<f32>>
  return %0 : tensor<2xcomplex<f32>>
}
"""
    assert check(text, text, rtol=0.0, atol=0.0).ok  # bitwise: fine
    assert check(text, text, rtol=None, atol=None).ok  # derived tolerance: was MISMATCH
