"""penguin-opt: run penguin-opt and MLIR passes on a program, mlir-opt style.

Exit codes: 0 success; 1 the input cannot be read or a pass failed (one line on stderr,
``file:line:col: error: ...``, no output file written); 2 usage error (bad flags, unknown
pass or option); with ``--check-equivalence``: 3 the results differ, 4 the program is not
checkable (no output file is written in either case). ``--debug`` adds the traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="penguin-opt",
        description="Run the Neuron hlo2penguin canonicalization passes (and any MLIR pass) "
        "on MLIR, StableHLO artifacts, HLO text or HLO protos.",
    )
    p.add_argument("input", nargs="?", default="-", help="input file, or - for stdin")
    p.add_argument("-o", dest="output", default="-", help="output file (default stdout)")
    p.add_argument(
        "-p",
        "--passes",
        dest="pipeline",
        default=None,
        help="pipeline, e.g. 'inline,stablehlo-canonicalize-for-penguin{"
        "broadcast-num-elements-to-fold=4096}'",
    )
    p.add_argument(
        "--pass-statistics",
        action="store_true",
        help="print per-rewriter matched/rewritten/skipped counts to stderr",
    )
    p.add_argument(
        "--mlir-timing", action="store_true", help="print MLIR's execution time report to stderr"
    )
    p.add_argument(
        "--mlir-print-ir-after-all",
        action="store_true",
        help="print the IR after every pass to stderr",
    )
    p.add_argument(
        "--mlir-print-op-generic",
        action="store_true",
        help="print the output in MLIR's generic op form",
    )
    p.add_argument(
        "--mlir-print-debuginfo", action="store_true", help="print locations in the output"
    )
    p.add_argument(
        "--split-input-file",
        action="store_true",
        help="run each '// -----' chunk of the input on its own",
    )
    p.add_argument(
        "--verify-diagnostics",
        action="store_true",
        help="check diagnostics against expected-error/warning/remark comments",
    )
    p.add_argument(
        "--list-passes",
        action="store_true",
        help="list penguin-opt passes and their options, then exit",
    )
    p.add_argument(
        "--check-equivalence",
        action="store_true",
        help="run the program before and after the pipeline on random inputs "
        "and compare every output (exit 3 on a mismatch, 4 if not checkable)",
    )
    p.add_argument(
        "--verify-each",
        dest="verify_each",
        action="store_const",
        const="true",
        default=None,
        help="verify after every pass (names the pass that broke the IR); "
        "--verify-each=false: never. Default: after every native pass and once after each "
        "run of consecutive penguin-opt passes",
    )
    p.add_argument("--verify-each=false", dest="verify_each", action="store_const",
                   const="false", help=argparse.SUPPRESS)
    p.add_argument("--verify-each=true", dest="verify_each", action="store_const",
                   const="true", help=argparse.SUPPRESS)
    p.add_argument("--debug", action="store_true", help="show Python tracebacks on errors")
    from .check_cli import add_check_options

    add_check_options(p)
    return p


def list_passes(out=sys.stdout) -> None:
    from .passes import PASSES

    for name, cls in PASSES.items():
        print(f"{name}: {cls.summary}", file=out)
        for f in cls.options():
            choices = f.metadata.get("choices")
            extra = f" (one of {', '.join(choices)})" if choices else ""
            print(f"  {cls.option_name(f)}={f.default}{extra}: {f.metadata['help']}", file=out)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    debug = "--debug" in argv
    try:
        return _main(argv)
    except UsageError as err:
        if debug:
            traceback.print_exc()
        print(f"penguin-opt: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130


def _main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if args.list_passes:
        list_passes()
        return EXIT_OK
    if not args.pipeline:
        raise UsageError("no pipeline: pass -p PIPELINE (see --list-passes)")
    if args.output != "-" and args.input != "-":
        if os.path.exists(args.output) and os.path.samefile(args.input, args.output):
            raise UsageError(f"refusing to overwrite the input file '{args.input}'")

    from .io import InputError, read_source, write_atomically
    from .passes.base import RunState
    from .pipeline import Pipeline, PipelineError, print_statistics

    try:
        verify = {None: "default", "true": "each", "false": "off"}[args.verify_each]
        pipeline = Pipeline(args.pipeline, verify=verify)
    except PipelineError as err:
        raise UsageError(str(err)) from None

    name = args.input if args.input != "-" else "<stdin>"
    try:
        source = read_source(args.input)
    except InputError as err:
        return _fail(str(err), args.debug)
    if args.split_input_file or args.verify_diagnostics:
        return _run_chunks(args, pipeline, source, name)
    state = RunState()
    before: list[str] = []
    try:
        text = _run_one(args, pipeline, source, state, before if args.check_equivalence else None)
    except PipelineError as err:
        raise UsageError(str(err)) from None
    except Exception as err:
        return _fail(_error_line(err, name), args.debug, state, name)
    _print_diagnostics(state, name)
    if args.pass_statistics:
        print_statistics(state)
    if args.check_equivalence:
        from .check_cli import run_check

        code = run_check(
            before[0],
            text,
            args,
            exact=_only_exact_rewrites(state),
            resize_mode=_resize_mode(pipeline),
        )
        if code != EXIT_OK:
            return code  # no output written for a program we could not show equal
    write_atomically(args.output, text)
    return EXIT_OK


# Rewriters whose output computes the same values bit for bit (folds, structural edits).
_ARITHMETIC_REWRITERS = ("lowerResizeNearestGrad", "explicitlyPad", "explicitlyStride")


def _only_exact_rewrites(state) -> bool:
    return not any(
        st.rewritten
        for per in state.statistics.values()
        for name, st in per.items()
        if name in _ARITHMETIC_REWRITERS
    )


def _resize_mode(pipeline) -> str:
    for el in pipeline.elements:
        mode = getattr(el.ours, "resize_nearest_grad_mode", None)
        if mode:
            return mode
    return "mean"


def _run_one(args, pipeline, source, state, before: list[str] | None = None) -> str:
    """Load, run, and print one program; raises on input or pass errors. With ``before``,
    the program's text before the pipeline is appended to it."""
    from .api import load_source
    from .io import module_text

    module = load_source(source)
    with module.context:
        if before is not None:
            before.append(module_text(module))
        pipeline._native_check(module.context)
        pipeline.run(
            module,
            state,
            timing=args.mlir_timing,
            print_ir_after_all=args.mlir_print_ir_after_all,
            print_generic=args.mlir_print_op_generic,
        )
        return module_text(
            module, generic=args.mlir_print_op_generic, debug_info=args.mlir_print_debuginfo
        )


def _error_line(err: BaseException, name: str) -> str:
    from jaxlib.mlir import ir

    from .io import InputError, format_mlir_error
    from .passes.base import PassError

    if isinstance(err, InputError):
        return str(err)
    if isinstance(err, PassError):
        return err.diagnostic.render(name)
    if isinstance(err, ir.MLIRError):
        return format_mlir_error(err, name)
    return f"{name}: error: internal error: {type(err).__name__}: {err}"


def _run_chunks(args, pipeline, source, name) -> int:
    """--split-input-file / --verify-diagnostics: each chunk is its own program."""
    from . import diagnostics_check as dc
    from .io import Source, write_atomically
    from .passes.base import RunState
    from .pipeline import PipelineError, print_statistics

    try:
        text = source.data.decode("utf-8")
    except UnicodeDecodeError:
        return _fail(f"{name}: error: --split-input-file needs MLIR text", args.debug)
    chunks = dc.split_chunks(text) if args.split_input_file else [dc.Chunk(text, 1)]
    outputs, failed, problems = [], False, []
    total = RunState()
    for chunk in chunks:
        state = RunState()
        rendered: list[str] = []
        try:
            outputs.append(
                _run_one(args, pipeline, Source(source.name, chunk.text.encode()), state)
            )
        except PipelineError as err:
            raise UsageError(str(err)) from None
        except Exception as err:
            if args.debug:
                traceback.print_exc()
            rendered.append(_error_line(err, name))
            failed = True
        rendered = [d.render(name) for d in state.diagnostics] + rendered
        for pass_name, per in state.statistics.items():  # summed over the chunks
            for rewriter, st in per.items():
                sum_st = total.rewriter(pass_name, rewriter)
                sum_st.matched += st.matched
                sum_st.rewritten += st.rewritten
                sum_st.skipped.update(st.skipped)
        if args.verify_diagnostics:
            problems += dc.verify(rendered, dc.expectations(chunk.text), name)
        else:
            for line in rendered:
                print(line, file=sys.stderr)
    if args.pass_statistics:
        print_statistics(total)
    if args.verify_diagnostics:
        for line in problems:
            print(line, file=sys.stderr)
        write_atomically(args.output, "// -----\n".join(outputs))
        return EXIT_FAILURE if problems else EXIT_OK
    if failed:
        return EXIT_FAILURE
    write_atomically(args.output, "// -----\n".join(outputs))
    return EXIT_OK


def _print_diagnostics(state, name) -> None:
    for diag in state.diagnostics:
        print(diag.render(name), file=sys.stderr)


def _fail(line: str, debug: bool, state=None, name: str = "-") -> int:
    if debug:
        traceback.print_exc()
    if state is not None:
        _print_diagnostics(state, name)
    print(line, file=sys.stderr)
    return EXIT_FAILURE


if __name__ == "__main__":
    sys.exit(main())
