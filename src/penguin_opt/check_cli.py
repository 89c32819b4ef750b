"""Equivalence checking from the command line.

``penguin-opt IN -p PIPELINE --check-equivalence`` checks the pipeline's output against
its input; ``penguin-check BEFORE AFTER`` checks any two programs with the same @main
signature (e.g. our output against a Neuron dump or a hand edit). Both print a per-output
table to stderr.

Exit codes: 0 equal; 1 input error; 2 usage error; 3 mismatch; 4 not checkable (the
oracles cannot execute the program; the reason names the op).
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING

from .cli_common import (
    EXIT_FAILURE,
    EXIT_MISMATCH,
    EXIT_NOT_CHECKABLE,
    EXIT_OK,
    Parser,
    add_check_options,
    add_version_option,
    one_line_warnings_recorded,
    run_command,
    stage,
    supervise,
)

if TYPE_CHECKING:
    import argparse


def run_check(
    before: str,
    after: str,
    args: argparse.Namespace,
    *,
    exact: bool,
    resize_mode: str,
    progress: bool | Callable[[str], None] = True,
    xla_reorders: bool = False,
) -> int:
    """Check and print the report; returns an exit code (0, 3 or 4). ``progress``: True
    prints ``equivalence: checking with ...: trial 1/2 (before), 12 s`` lines to stderr
    while a check runs longer than ``equivalence.PROGRESS_AFTER`` (2) seconds; a callable
    receives those lines (without the prefix) instead; False: none (e.g. a batch driver's
    worker processes)."""
    from .equivalence import (
        InputsDoNotFit,
        NotCheckable,
        check,
        load_npz_inputs,
        main_signature,
    )
    from .io import InputError

    # constant folds and structural rewrites only: bit for bit (where an oracle can)
    bitwise = args.rtol is None and args.atol is None and exact
    bitwise = bitwise and args.oracle in ("auto", "interpreter")
    try:
        inputs = None
        if args.inputs:
            inputs = load_npz_inputs(args.inputs, main_signature(before))
        report = check(
            before,
            after,
            seed=args.seed,
            trials=args.trials,
            rtol=args.rtol,
            atol=args.atol,
            exact=bitwise,
            exact_on_xla=not xla_reorders,
            oracle=args.oracle,
            inputs=inputs,
            resize_mode=args.resize_nearest_grad_mode or resize_mode,
            timeout=args.timeout,
            progress=_print_progress if progress is True else (progress or None),
            dynamic_dim_size=args.dynamic_dim_size,
        )
    except InputError as err:
        print(str(err), file=sys.stderr)
        return EXIT_FAILURE
    except NotCheckable as err:
        where = f"{args.inputs}: " if isinstance(err, InputsDoNotFit) and args.inputs else ""
        print(f"equivalence: not checkable: {where}{err}", file=sys.stderr)
        return EXIT_NOT_CHECKABLE
    print(report.table(), file=sys.stderr)
    if report.ok:
        rounding = sum(o.rounding for o in report.outputs)
        print(
            "equivalence: all outputs match"
            + (f" ({rounding} of them in f64 only: see the note)" if rounding else ""),
            file=sys.stderr,
        )
        return EXIT_OK
    if report.problem:
        print(f"equivalence: MISMATCH: {report.problem}", file=sys.stderr)
        return EXIT_MISMATCH
    bad = sum(not o.ok for o in report.outputs)
    print(f"equivalence: MISMATCH in {bad} of {len(report.outputs)} outputs", file=sys.stderr)
    return EXIT_MISMATCH


def _print_progress(line: str) -> None:
    print(f"equivalence: {line}", file=sys.stderr, flush=True)


def penguin_check_main(argv: list[str] | None = None) -> int:
    """penguin-check BEFORE AFTER: compare two programs' results."""
    if argv is None:  # run as a command: MLIR crashing the process is one line, exit 1
        supervise("penguin-check")
    argv = sys.argv[1:] if argv is None else argv
    return run_command(lambda: _penguin_check(argv), prog="penguin-check", argv=argv)


def _penguin_check(argv: list[str]) -> int:
    p = Parser(prog="penguin-check", description=penguin_check_main.__doc__)
    p.add_argument("before", help="the program before (a file in any form penguin-opt reads)")
    p.add_argument("after", help="the program after, e.g. penguin-opt's output")
    add_check_options(p)
    add_version_option(p)
    p.add_argument("--debug", action="store_true", help="show Python tracebacks on errors")
    p.add_argument(
        "--allow-unregistered-dialect",
        action="store_true",
        help="read programs with ops of unregistered dialects (not checkable: no oracle "
        "runs them; the result names the op)",
    )
    args = p.parse_args(argv)
    from .api import load_file
    from .context import make_context
    from .io import ElidedConstantsWarning, InputError, module_text

    texts = []
    for path in (args.before, args.after):
        try:
            stage("parsing", file=path)
            with one_line_warnings_recorded() as caught:
                module = load_file(
                    path, context=make_context(allow_unregistered=args.allow_unregistered_dialect)
                )
            for w in caught:
                print(str(w.message), file=sys.stderr)
            if any(issubclass(w.category, ElidedConstantsWarning) for w in caught):
                print(
                    f"equivalence: not checkable: {path} has constants with elided values, "
                    "which XLA's HLO parser fills with other placeholders at each read",
                    file=sys.stderr,
                )
                return EXIT_NOT_CHECKABLE
            with module.context:
                texts.append(module_text(module))
        except InputError as err:
            if args.debug:
                traceback.print_exc()
            print(str(err), file=sys.stderr)
            return EXIT_FAILURE
    stage("comparing its results", file=args.before)
    return run_check(texts[0], texts[1], args, exact=False, resize_mode="mean")


__all__ = [
    "penguin_check_main",
    "run_check",
]

if __name__ == "__main__":
    sys.exit(penguin_check_main())
