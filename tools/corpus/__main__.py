"""``python -m tools.corpus``: export, sweep and report the model corpus.

    python -m tools.corpus --report docs/corpus.md      # everything (slow)
    python -m tools.corpus --ci                         # the CI subset
    python -m tools.corpus --models ResNet50,VGG16 --variants stablehlo
    python -m tools.corpus --list

Exit status 1 when any program mismatches or fails in the pipeline.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("KERAS_BACKEND", "jax")  # before anything imports keras
    from penguin_opt.cli_common import one_line

    from .export import cache_root, load_or_lower
    from .models import BY_NAME, MODELS
    from .sweep import VARIANTS, VariantResult, sweep_model

    ap = argparse.ArgumentParser(
        prog="python -m tools.corpus",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--report", metavar="PATH", help="write the Markdown report here")
    ap.add_argument("--models", help="comma-separated model names (default: all)")
    ap.add_argument("--ci", action="store_true", help="only the CI subset")
    ap.add_argument(
        "--variants", default=",".join(VARIANTS), help="comma-separated: stablehlo, mhlo, hlo"
    )
    ap.add_argument(
        "--oracle",
        choices=("interpreter", "xla", "auto", "both"),
        help="override every model's oracle",
    )
    ap.add_argument("--no-cache", action="store_true", help="re-export, do not cache")
    ap.add_argument(
        "--export-only", action="store_true", help="only write the programs to the cache"
    )
    ap.add_argument(
        "--shared",
        choices=("auto", "yes", "no"),
        default="auto",
        help="also sweep ../shared/corpus/public (auto: when it exists)",
    )
    ap.add_argument("--shared-root", type=Path, help="the shared corpus's public/ folder")
    ap.add_argument("--list", action="store_true", help="list the models and exit")
    args = ap.parse_args(argv)

    specs = MODELS
    if args.models:
        unknown = [n for n in args.models.split(",") if n not in BY_NAME]
        if unknown:
            ap.error(f"unknown models: {', '.join(unknown)} (see --list)")
        specs = [BY_NAME[n] for n in args.models.split(",")]
    if args.ci:
        specs = [s for s in specs if s.ci]
    if args.list:
        for s in specs:
            why = s.available()
            print(
                f"{s.name:24} {s.family:10} {s.oracle:12} {s.description}"
                + (f"  [{why}]" if why else "")
            )
        return 0
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]

    results: list[VariantResult] = []
    missing: dict[str, str] = {}
    print(f"programs are cached in {cache_root()}", file=sys.stderr)
    for spec in specs:
        why = spec.available()
        if why:
            missing[spec.name] = why
            print(f"{spec.name}: skipped, {why}", file=sys.stderr)
            continue
        try:
            program = load_or_lower(spec, use_cache=not args.no_cache, progress=_say)
        except Exception as err:
            r = VariantResult(spec.name, "export")
            r.status = "error: export: " + one_line(f"{type(err).__name__}: {err}", 300)
            results.append(r)
            print(f"{spec.name}: {r.status}", file=sys.stderr)
            continue
        if args.export_only:
            print(f"{spec.name}: exported ({program.export_seconds:.1f} s)", file=sys.stderr)
            continue
        for r in sweep_model(spec, program, variants, oracle=args.oracle, progress=_say):
            results.append(r)
            err = "-" if r.max_abs is None else f"{r.max_abs:.3g}"
            print(
                f"{r.model:24} {r.variant:10} ops {r.ops:6} {r.oracle:12} max abs {err:9} "
                f"{r.status}  ({r.pipeline_seconds:.1f} s + {r.check_seconds:.1f} s)",
                file=sys.stderr,
            )
            if r.table:
                print(r.table, file=sys.stderr)
    if args.export_only:
        return 0

    summary, shared_note, shared_failures = None, "", []
    if args.shared != "no":
        summary, shared_note, shared_failures = _shared(args)
    if args.report:
        from penguin_opt.io import write_output

        from .report import hand_written, render

        text = render(
            {s.name: s for s in specs}, results, missing, summary, shared_note, shared_failures
        )
        previous = Path(args.report)
        if previous.is_file():  # the sections written by hand after the generated ones
            kept = hand_written(previous.read_text())
            text = text + ("\n" + kept if kept else "")
        write_output(args.report, text)
        print(f"wrote {args.report}", file=sys.stderr)
    failed = [r for r in results if r.failed]
    if summary is not None:
        print("\n".join(summary.lines()), file=sys.stderr)
    return 1 if failed or shared_failures else 0


def _say(line: str) -> None:
    """A progress line on stderr, shown at once (stderr may be a pipe to a log)."""
    print(line, file=sys.stderr, flush=True)


def _shared(args):
    from . import shared

    root = args.shared_root or shared.default_root()
    if not (root / "manifest.json").exists():
        note = f"Not run: no shared corpus at `{root}`."
        if args.shared == "yes":
            raise SystemExit(f"error: {note}")
        return None, note, []

    def each(n: int, r: shared.ChunkResult) -> None:
        if r.failed:
            print(f"{r.case}: {r.status}", file=sys.stderr)

    results, summary = shared.sweep(shared.cases(root), each)
    failures = [f"`{r.case}`: {r.status}" for r in results if r.failed]
    return summary, "", failures


if __name__ == "__main__":
    sys.exit(main())
