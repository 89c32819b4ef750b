"""penguin-opt: run penguin-opt and MLIR passes on a program, mlir-opt style.

Exit codes: 0 success; 1 the input cannot be read or a pass failed (one line on stderr,
``file:line:col: error: ...``, no output file written); 2 usage error (bad flags, unknown
pass or option); with ``--check-equivalence``: 3 the results differ, 4 the program is not
checkable (no output file is written in either case); 130 interrupted. ``--debug`` adds
the traceback.
"""

from __future__ import annotations

import os
import stat
import sys
import time
import traceback

from .cli_common import (
    EXIT_FAILURE,
    EXIT_OK,
    Parser,
    UsageError,
    add_check_options,
    one_line,
    run_command,
    version,
)
from .diagnostics_check import DEFAULT_MARKER as DEFAULT_SPLIT_MARKER


def build_parser() -> Parser:
    p = Parser(
        prog="penguin-opt",
        description="Run the Neuron hlo2penguin canonicalization passes (and any MLIR pass) "
        "on MLIR, StableHLO artifacts, HLO text or HLO protos. Without a pipeline the "
        "input is parsed, verified and printed.",
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
        "--pass-pipeline",
        dest="pass_pipeline",
        default=None,
        metavar="PIPELINE",
        help="mlir-opt's spelling: 'builtin.module(inline,stablehlo-canonicalize-for-penguin)'",
    )
    p.add_flag("--pass-statistics", "print per-rewriter matched/rewritten/skipped counts")
    p.add_flag("--mlir-pass-statistics", "alias of --pass-statistics")
    p.add_flag("--mlir-timing", "print an execution time report per pass to stderr")
    p.add_flag("--mlir-print-ir-before-all", "print the IR before every pass to stderr")
    p.add_flag("--mlir-print-ir-after-all", "print the IR after every pass to stderr")
    p.add_flag("--mlir-print-ir-after-change",
               "print the IR after a pass only when the pass changed it")
    p.add_flag("--mlir-print-ir-after-failure", "print the IR after a pass that failed")
    p.add_argument("--mlir-print-ir-before", action="append", default=[], metavar="PASS",
                   help="print the IR before the named passes (comma separated, repeatable)")
    p.add_argument("--mlir-print-ir-after", action="append", default=[], metavar="PASS",
                   help="print the IR after the named passes (comma separated, repeatable)")
    p.add_flag("--mlir-print-op-generic", "print MLIR's generic op form")
    p.add_flag("--mlir-print-debuginfo", "print locations")
    p.add_argument("--mlir-elide-elementsattrs-if-larger", type=int, default=None,
                   metavar="N", help="elide constants with more than N elements when printing "
                   "(the output does not read back)")
    p.add_flag("--emit-bytecode", "write MLIR bytecode instead of text")
    p.add_flag("--dump-pass-pipeline", "print the pipeline with every option to stderr")
    p.add_flag("--allow-unregistered-dialect", "accept ops of dialects not registered")
    p.add_optional_value(
        "--split-input-file", DEFAULT_SPLIT_MARKER, default=None, metavar="MARKER",
        help=f"run each chunk between MARKER lines (default '{DEFAULT_SPLIT_MARKER}') on its "
        "own, printing each result as it goes",
    )
    p.add_argument("--output-split-marker", default=DEFAULT_SPLIT_MARKER, metavar="MARKER",
                   help="line between the chunks' outputs (default '%(default)s')")
    p.add_optional_value(
        "--verify-diagnostics", "all", default=None, choices=("all", "only-expected"),
        metavar="all|only-expected",
        help="check diagnostics against expected-error/warning/remark comments "
        "(all: any other diagnostic fails; only-expected: others are ignored)",
    )
    p.add_flag(
        "--verify-each",
        "verify after every pass (names the pass that broke the IR); --verify-each=false: "
        "never. Default: after every native pass and once after each run of consecutive "
        "penguin-opt passes",
        default=None,
    )
    p.add_flag("--list-passes", "list penguin-opt's passes with their options and the "
               "native MLIR/StableHLO/MHLO passes a pipeline may name, then exit")
    p.add_flag(
        "--check-equivalence",
        "run the program before and after the pipeline on random inputs "
        "and compare every output (exit 3 on a mismatch, 4 if not checkable)",
    )
    p.add_argument("--version", action="version", version=f"penguin-opt {version()}")
    p.add_argument("--debug", action="store_true", help="show Python tracebacks on errors")
    add_check_options(p)
    return p


def list_passes(out=sys.stdout) -> None:
    from .native_passes import native_passes
    from .passes import PASSES

    print("penguin-opt passes:", file=out)
    for name, cls in PASSES.items():
        print(f"  {name}: {cls.summary}", file=out)
        for f in cls.options():
            choices = f.metadata.get("choices")
            extra = f" (one of {', '.join(choices)})" if choices else ""
            print(f"    {cls.option_name(f)}={f.default}{extra}: {f.metadata['help']}", file=out)
    print("native passes (MLIR, StableHLO, MHLO, registered in this jaxlib):", file=out)
    for name, text in native_passes():
        print(f"  {name} [native]{': ' + text if text != name else ''}", file=out)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    return run_command(lambda: _main(argv), prog="penguin-opt", argv=argv)


def _pipeline_text(args) -> str | None:
    if args.pipeline is not None and args.pass_pipeline is not None:
        raise UsageError("give the pipeline once: -p or --pass-pipeline, not both")
    text = args.pass_pipeline if args.pass_pipeline is not None else args.pipeline
    if text is not None and not text.strip():
        raise UsageError("empty pipeline")
    return text


def _printing(args):
    from .pipeline import IRPrinting

    def names(values: list[str]) -> frozenset[str]:
        return frozenset(n.strip() for v in values for n in v.split(",") if n.strip())

    limit = args.mlir_elide_elementsattrs_if_larger
    if limit is not None and limit < 0:
        raise UsageError("--mlir-elide-elementsattrs-if-larger needs N >= 0")
    return IRPrinting(
        before_all=args.mlir_print_ir_before_all,
        after_all=args.mlir_print_ir_after_all,
        after_change=args.mlir_print_ir_after_change,
        after_failure=args.mlir_print_ir_after_failure,
        before=names(args.mlir_print_ir_before),
        after=names(args.mlir_print_ir_after),
        generic=args.mlir_print_op_generic,
        debug_info=args.mlir_print_debuginfo,
        elide_elements_limit=limit,
    )


def _main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if args.list_passes:
        list_passes()
        return EXIT_OK
    args.pass_statistics = args.pass_statistics or args.mlir_pass_statistics
    text = _pipeline_text(args)
    if args.emit_bytecode and args.split_input_file is not None:
        raise UsageError("--emit-bytecode cannot be combined with --split-input-file")
    if args.check_equivalence and text is None:
        raise UsageError("--check-equivalence needs a pipeline (-p)")
    if _output_is_input(args.input, args.output):
        shown = "standard input" if args.input == "-" else f"the input file '{args.input}'"
        raise UsageError(f"refusing to overwrite {shown} ('{args.output}')")

    from .io import InputError, OutputError, read_source, write_output
    from .passes.base import RunState
    from .pipeline import Pipeline, PipelineError, print_statistics

    printing = _printing(args)
    pipeline = None
    if text is not None:
        try:
            verify = {None: "default", True: "each", False: "off"}[args.verify_each]
            pipeline = Pipeline(text, verify=verify)
        except PipelineError as err:
            raise UsageError(str(err)) from None
        _check_pass_names(pipeline, printing)

    name = args.input if args.input != "-" else "<stdin>"
    parse_start = time.perf_counter()
    try:
        source = read_source(args.input)
    except InputError as err:
        return _fail(str(err), args.debug)
    if args.split_input_file is not None or args.verify_diagnostics:
        return _run_chunks(args, pipeline, printing, source, name)
    state = RunState()
    before: list[str] = []
    try:
        output = _run_one(args, pipeline, printing, source, state,
                          before if args.check_equivalence else None, parse_start)
    except PipelineError as err:
        raise UsageError(str(err)) from None
    except KeyboardInterrupt:
        raise
    except Exception as err:
        _report_timing(args, state)
        return _fail(_error_line(err, name), args.debug, state, name)
    _print_diagnostics(state, name)
    if args.pass_statistics:
        print_statistics(state)
    if args.check_equivalence:
        from .check_cli import run_check

        code = run_check(
            before[0],
            output,
            args,
            exact=_only_exact_rewrites(state),
            resize_mode=_resize_mode(pipeline),
        )
        if code != EXIT_OK:
            _report_timing(args, state)
            return code  # no output written for a program we could not show equal
    start = time.perf_counter()
    try:
        write_output(args.output, output)
    except OutputError as err:
        return _fail(str(err), args.debug)
    state.timings.append(("Output", time.perf_counter() - start))
    _report_timing(args, state)
    return EXIT_OK


def _output_is_input(input_path: str, output: str) -> bool:
    """Whether ``-o`` names the input (for ``-``: the file stdin is redirected from)."""
    if output in ("-", "/dev/stdout"):
        return False
    try:
        out = os.stat(output)
        source = os.fstat(0) if input_path == "-" else os.stat(input_path)
    except (OSError, ValueError):
        return False
    return (stat.S_ISREG(source.st_mode)
            and (out.st_dev, out.st_ino) == (source.st_dev, source.st_ino))


def _check_pass_names(pipeline, printing) -> None:
    """``--mlir-print-ir-before/after=PASS`` must name passes of the pipeline (a typo
    would otherwise print nothing)."""
    known = frozenset().union(*(el.pass_names for el in pipeline.elements))
    for flag, names in (("before", printing.before), ("after", printing.after)):
        unknown = sorted(names - known)
        if unknown:
            raise UsageError(f"--mlir-print-ir-{flag}: '{unknown[0]}' is not a pass of the "
                             f"pipeline ({', '.join(sorted(known))})")


def _only_exact_rewrites(state) -> bool:
    """Whether no rewriter that re-associates arithmetic rewrote anything."""
    from .passes import REASSOCIATING

    return not any(
        st.rewritten
        for per in state.statistics.values()
        for name, st in per.items()
        if name in REASSOCIATING
    )


def _resize_mode(pipeline) -> str:
    for el in pipeline.elements:
        mode = getattr(el.ours, "resize_nearest_grad_mode", None)
        if mode:
            return mode
    return "mean"


def _run_one(args, pipeline, printing, source, state, before: list[str] | None = None,
             parse_start: float | None = None) -> str | bytes:
    """Load, run, and print one program; raises on input or pass errors. With ``before``,
    the program's text before the pipeline is appended to it."""
    from .api import load_source
    from .context import make_context
    from .io import module_bytecode, module_text

    start = time.perf_counter() if parse_start is None else parse_start
    module = load_source(source, make_context(allow_unregistered=args.allow_unregistered_dialect))
    state.timings.append(("Parser", time.perf_counter() - start))
    with module.context:
        if before is not None:
            before.append(module_text(module))
        if pipeline is not None:
            pipeline._native_check(module.context)
            if args.dump_pass_pipeline:
                print(f"Pass Manager with {len(pipeline.elements)} passes:\n"
                      f"{pipeline.describe(module.context)}\n", file=sys.stderr)
            pipeline.run(module, state, ir_printing=printing)
        if args.emit_bytecode:
            return module_bytecode(module)
        return module_text(
            module, generic=args.mlir_print_op_generic, debug_info=args.mlir_print_debuginfo,
            large_elements_limit=args.mlir_elide_elementsattrs_if_larger,
        )


def _report_timing(args, state) -> None:
    if args.mlir_timing:
        from .pipeline import print_timing

        print_timing(state.timings)


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
    return f"{name}: error: internal error: {type(err).__name__}: {one_line(err, 500)}"


def _run_chunks(args, pipeline, printing, source, name) -> int:
    """--split-input-file / --verify-diagnostics: each chunk is its own program, as in
    mlir-opt: a failed chunk does not stop the others; on stdout each chunk's result is
    printed as soon as it is ready, separated by --output-split-marker lines."""
    from . import diagnostics_check as dc
    from .io import OutputError, Source, write_output
    from .passes.base import RunState
    from .pipeline import PipelineError, print_statistics

    if args.check_equivalence:
        raise UsageError("--check-equivalence checks one program: it cannot be combined "
                         "with --split-input-file or --verify-diagnostics")
    try:
        text = source.data.decode("utf-8")
    except UnicodeDecodeError:
        return _fail(f"{name}: error: --split-input-file needs MLIR text", args.debug)
    marker = args.split_input_file
    chunks = dc.split_chunks(text, marker) if marker is not None else [dc.Chunk(text, 1)]
    separator = f"{args.output_split_marker}\n"
    streaming = args.output == "-"
    outputs, failed, problems = [], False, []
    total = RunState()
    for index, chunk in enumerate(chunks):
        state = RunState()
        rendered: list[str] = []
        output = None
        try:
            output = _run_one(args, pipeline, printing, Source(source.name, chunk.text.encode()),
                              state)
        except PipelineError as err:
            raise UsageError(str(err)) from None
        except KeyboardInterrupt:
            raise
        except Exception as err:
            if args.debug:
                traceback.print_exc()
            rendered.append(_error_line(err, name))
            failed = True
        rendered = [d.render(name) for d in state.diagnostics] + rendered
        _sum_statistics(total, state)
        total.timings.extend(state.timings)
        if args.verify_diagnostics:
            problems += dc.verify(rendered, dc.expectations(chunk.text), name,
                                  only_expected=args.verify_diagnostics == "only-expected")
        else:
            for line in rendered:
                print(line, file=sys.stderr)
        piece = (separator if index else "") + (output or "")
        if streaming and not args.verify_diagnostics:
            sys.stdout.write(piece)
            sys.stdout.flush()
        else:
            outputs.append(piece)
    if args.pass_statistics:
        print_statistics(total)
    _report_timing(args, total)
    if args.verify_diagnostics:
        for line in problems:
            print(line, file=sys.stderr)
        if problems:
            return EXIT_FAILURE
    elif failed:
        return EXIT_FAILURE
    if outputs:
        try:
            write_output(args.output, "".join(outputs))
        except OutputError as err:
            return _fail(str(err), args.debug)
    return EXIT_OK


def _sum_statistics(total, state) -> None:
    for pass_name, per in state.statistics.items():  # summed over the chunks
        for rewriter, st in per.items():
            sum_st = total.rewriter(pass_name, rewriter)
            sum_st.matched += st.matched
            sum_st.rewritten += st.rewritten
            sum_st.skipped.update(st.skipped)


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


__all__ = ["build_parser", "list_passes", "main"]

if __name__ == "__main__":
    sys.exit(main())
