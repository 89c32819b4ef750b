"""Run every corpus program through the pipelines in both dialects and check it.

For each program and each variant:

* ``stablehlo``: ``inline,stablehlo-canonicalize-for-penguin,stablehlo-canonicalize-conv``
  on the exported StableHLO;
* ``mhlo``: ``inline,stablehlo-legalize-to-hlo,canonicalize-for-penguin,canonicalize-conv``
  on the same program (the checker converts the MHLO result back to StableHLO);
* ``hlo`` (programs marked ``hlo``): the serialized HloModuleProto, imported by
  ``penguin_opt.load`` as StableHLO (the HLO text must import to the same module), then the
  StableHLO pipeline.

The result is checked against the program before the pipeline with
``penguin_opt.equivalence.check`` on the model's own arguments (its initial weights and a
seeded random input), with tolerances derived from the dtype and the largest reduction.
Symbolic-shape programs are checked after specializing both sides, by the same native
passes, to the static argument types the model names (``stablehlo-refine-arguments``,
``stablehlo-refine-shapes``, ``stablehlo-canonicalize-dynamism``; the ``shape_assertion``
custom calls this leaves with a constant-true predicate are dropped).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from penguin_opt import api
from penguin_opt.cli_common import one_line
from penguin_opt.equivalence import NotCheckable, check

from .export import Program
from .models import ModelSpec

STABLEHLO_PIPELINE = "inline,stablehlo-canonicalize-for-penguin,stablehlo-canonicalize-conv"
MHLO_PIPELINE = "inline,stablehlo-legalize-to-hlo,canonicalize-for-penguin,canonicalize-conv"
PIPELINES = {"stablehlo": STABLEHLO_PIPELINE, "mhlo": MHLO_PIPELINE, "hlo": STABLEHLO_PIPELINE}
VARIANTS = ("stablehlo", "mhlo", "hlo")
PASS_NAMES = (
    "stablehlo-canonicalize-for-penguin",
    "canonicalize-for-penguin",
    "stablehlo-canonicalize-conv",
    "canonicalize-conv",
)


@dataclass
class VariantResult:
    model: str
    variant: str
    ops: int = 0
    convs: int = 0
    rewrites: dict[str, int] = field(default_factory=dict)
    inlined: int = 0
    oracle: str = ""
    outputs: int = 0
    max_abs: float | None = None
    max_rel: float | None = None
    status: str = "ok"  # ok | MISMATCH | not checkable: ... | error: ...
    pipeline_seconds: float = 0.0
    check_seconds: float = 0.0
    export_seconds: float = 0.0
    table: str = ""  # the checker's per-output table, for mismatches

    @property
    def failed(self) -> bool:
        return self.status == "MISMATCH" or self.status.startswith("error")


def count_ops(module) -> tuple[int, int]:
    """(ops, convolutions) in every function body of ``module``."""
    from penguin_opt.ir_util import ops_under

    names = [op.name for op in ops_under(module.operation)]
    ops = sum(name not in ("func.func", "builtin.module") for name in names)
    return ops, sum(name.endswith(".convolution") for name in names)


def run_variant(
    spec: ModelSpec,
    program: Program,
    variant: str,
    *,
    oracle: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> VariantResult:
    """``progress``: receives the checker's progress lines (a check running longer than
    ``equivalence.PROGRESS_AFTER`` seconds), prefixed with the model and variant."""
    say = None if progress is None else (lambda line: progress(f"{spec.name} {variant}: {line}"))
    res = VariantResult(spec.name, variant, export_seconds=program.export_seconds)
    res.oracle = oracle or spec.oracle
    try:
        if variant == "hlo":
            if program.hlo_proto is None:
                raise NotCheckable("no HLO export")
            module = api.load(program.hlo_proto, name=f"{spec.name}.hlo.pb")
            from_text = api.to_text(api.load(program.hlo_text, name=f"{spec.name}.hlo.txt"))
            before = api.to_text(module)
            if from_text != before:
                res.status = "error: HLO text and HLO proto import differently"
                return res
        else:
            module = api.load(program.stablehlo, name=f"{spec.name}.mlir")
            before = program.stablehlo
        res.ops, res.convs = count_ops(module)
        t0 = time.perf_counter()
        result = api.run(module, PIPELINES[variant])
        res.pipeline_seconds = time.perf_counter() - t0
        after = api.to_text(module)
    except Exception as err:  # a pass or the pipeline failed on a real program
        res.status = "error: " + one_line(f"{type(err).__name__}: {err}", 300)
        return res
    for pass_name, rewriters in result.statistics.items():
        for rewriter, stats in rewriters.items():
            if pass_name == "inline":
                res.inlined += stats.rewritten
            elif stats.rewritten:
                res.rewrites[rewriter] = res.rewrites.get(rewriter, 0) + stats.rewritten
    t0 = time.perf_counter()
    try:
        report = check(
            before,
            after,
            inputs=[program.inputs],
            rtol=None,
            atol=spec.atol,
            oracle=res.oracle,
            progress=say,
        )
    except NotCheckable as err:
        res.status = "not checkable: " + one_line(err, 200)
        return res
    except Exception as err:
        res.status = "error: checker: " + one_line(f"{type(err).__name__}: {err}", 300)
        return res
    finally:
        res.check_seconds = time.perf_counter() - t0
    res.oracle = report.oracle
    res.outputs = len(report.outputs)
    res.max_abs = max((o.max_abs for o in report.outputs), default=0.0)
    res.max_rel = max((o.max_rel for o in report.outputs), default=0.0)
    if not report.ok:
        res.status = "MISMATCH"
        lines = report.table().splitlines()
        bad = [line for line in lines[2:] if "MISMATCH" in line]
        res.table = "\n".join(
            lines[:2] + bad[:12] + ([f"... {len(bad) - 12} more"] if len(bad) > 12 else [])
        )
    return res


def sweep_model(
    spec: ModelSpec,
    program: Program,
    variants=VARIANTS,
    *,
    oracle: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[VariantResult]:
    out = []
    for variant in variants:
        if variant == "hlo" and (program.hlo_proto is None or not spec.hlo):
            continue
        out.append(run_variant(spec, program, variant, oracle=oracle, progress=progress))
    return out
