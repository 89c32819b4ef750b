"""Equivalence checking from the command line.

``penguin-opt IN -p PIPELINE --check-equivalence`` checks the pipeline's output against
its input; ``penguin-check BEFORE AFTER`` checks any two programs with the same @main
signature (e.g. our output against a Neuron dump or a hand edit). Both print a per-output
table to stderr.

Exit codes: 0 equal; 1 input error; 2 usage error; 3 mismatch; 4 not checkable (the
oracles cannot execute the program; the reason names the op).
"""

from __future__ import annotations

import argparse
import sys
import traceback

EXIT_MISMATCH, EXIT_NOT_CHECKABLE = 3, 4


def add_check_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("equivalence check")
    g.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    g.add_argument("--trials", type=int, default=2, help="random input sets (default 2)")
    g.add_argument(
        "--rtol",
        type=float,
        default=None,
        help="relative tolerance for float outputs (default: derived from the "
        "dtype and the largest reduction; exact for constant-fold-only runs)",
    )
    g.add_argument(
        "--atol",
        type=float,
        default=None,
        help="absolute tolerance, relative to each output's largest magnitude",
    )
    g.add_argument(
        "--oracle",
        choices=("auto", "interpreter", "xla", "both"),
        default="auto",
        help="StableHLO reference interpreter, XLA CPU, both, or auto "
        "(interpreter, falling back to XLA)",
    )
    g.add_argument(
        "--inputs",
        metavar="NPZ",
        help="read inputs from an .npz (arg0, arg1, ...; optional leading trial axis)",
    )
    g.add_argument(
        "--resize-nearest-grad-mode",
        choices=("mean", "sum"),
        default=None,
        help="meaning of ResizeNearestGrad custom calls (default: the pipeline's "
        "option, else mean)",
    )


def run_check(before: str, after: str, args, *, exact: bool, resize_mode: str) -> int:
    """Check and print the report; returns an exit code (0, 3 or 4)."""
    from .equivalence import NotCheckable, check, load_npz_inputs, main_signature

    rtol, atol = args.rtol, args.atol
    if rtol is None and atol is None and exact and args.oracle in ("auto", "interpreter"):
        rtol, atol = 0.0, 0.0  # constant folds and structural rewrites only: bit for bit
    try:
        inputs = None
        if args.inputs:
            inputs = load_npz_inputs(args.inputs, main_signature(before))
        report = check(
            before,
            after,
            seed=args.seed,
            trials=args.trials,
            rtol=rtol,
            atol=atol,
            oracle=args.oracle,
            inputs=inputs,
            resize_mode=args.resize_nearest_grad_mode or resize_mode,
        )
    except NotCheckable as err:
        print(f"equivalence: not checkable: {err}", file=sys.stderr)
        return EXIT_NOT_CHECKABLE
    print(report.table(), file=sys.stderr)
    if report.ok:
        print("equivalence: all outputs match", file=sys.stderr)
        return 0
    bad = sum(not o.ok for o in report.outputs)
    print(f"equivalence: MISMATCH in {bad} of {len(report.outputs)} outputs", file=sys.stderr)
    return EXIT_MISMATCH


def penguin_check_main(argv: list[str] | None = None) -> int:
    """penguin-check BEFORE AFTER: compare two programs' results."""
    from .cli import EXIT_FAILURE, EXIT_USAGE, UsageError, _Parser

    p = _Parser(prog="penguin-check", description=penguin_check_main.__doc__)
    p.add_argument("before")
    p.add_argument("after")
    add_check_options(p)
    p.add_argument("--debug", action="store_true")
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = p.parse_args(argv)
    except UsageError as err:
        print(f"penguin-check: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    from .api import load
    from .io import InputError, module_text

    texts = []
    for path in (args.before, args.after):
        try:
            module = load(path) if path != "-" else load(sys.stdin.read())
            with module.context:
                texts.append(module_text(module))
        except InputError as err:
            if args.debug:
                traceback.print_exc()
            print(str(err), file=sys.stderr)
            return EXIT_FAILURE
        except FileNotFoundError:
            print(f"{path}: error: cannot read input: No such file or directory", file=sys.stderr)
            return EXIT_FAILURE
    return run_check(texts[0], texts[1], args, exact=False, resize_mode="mean")


if __name__ == "__main__":
    sys.exit(penguin_check_main())
