"""penguin-opt: run penguin-opt and MLIR passes on a program, mlir-opt style.

Exit codes: 0 success; 1 the input cannot be read or a pass failed (one line on stderr,
``file:line:col: error: ...``, no output file written); 2 usage error (bad flags, unknown
pass or option); with ``--check-equivalence``: 3 the results differ, 4 the program is not
checkable (no output file is written in either case); with ``--penguin-readiness=error``:
5 an op Neuron's next stages refuse is left (the output is written); 130 interrupted,
143 terminated. A batch exits with the first of 3, 1, 5, 4 any program gives, else 0.
``--debug`` adds the traceback.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import stat
import sys
import time
import traceback
from typing import TYPE_CHECKING, TextIO

from .cli_common import (
    EXIT_FAILURE,
    EXIT_NOT_READY,
    EXIT_OK,
    Parser,
    UsageError,
    add_check_options,
    add_version_option,
    chunk_replayed,
    chunk_started,
    one_line,
    output_silenced,
    positive_int,
    run_command,
    shown_name,
    stage,
    supervise,
)
from .diagnostics_check import DEFAULT_MARKER as DEFAULT_SPLIT_MARKER

if TYPE_CHECKING:  # imported where used: a command loads only what it needs
    import argparse

    from jaxlib.mlir import ir

    from .diagnostics_check import Chunk
    from .io import Source
    from .passes.base import RunState
    from .pipeline import IRPrinting, Pipeline


def build_parser() -> Parser:
    p = Parser(
        prog="penguin-opt",
        description="Run the Neuron hlo2penguin canonicalization passes (and any MLIR pass) "
        "on MLIR, StableHLO artifacts, HLO text or HLO protos. Without a pipeline the "
        "input is parsed, verified and printed.",
    )
    p.add_argument(
        "input_files",
        nargs="*",
        metavar="IN",
        help="input file (default - for stdin); several files or a directory "
        "(walked recursively) run as a batch into the -o directory",
    )
    p.add_argument(
        "-o",
        dest="output",
        default="-",
        help="output file (default stdout); with several programs, a directory",
    )
    p.add_argument(
        "-p",
        "--passes",
        dest="pipeline",
        default=None,
        help="pipeline, e.g. 'inline,stablehlo-canonicalize-for-penguin{"
        "broadcast-num-elements-to-fold=4096}'; or, as mlir-opt, a flag per pass: "
        "--inline --stablehlo-canonicalize-for-penguin='broadcast-num-elements-to-fold=4096'",
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
    p.add_argument(
        "--pass-statistics-json",
        default=None,
        metavar="FILE",
        help="write the statistics as JSON ({pass: {rewriter: {matched, "
        "rewritten, skipped: {reason: n}}}}; - for stdout); a batch writes "
        "their sums over its programs",
    )
    p.add_flag("--mlir-timing", "print an execution time report per pass to stderr")
    p.add_flag("--mlir-print-ir-before-all", "print the IR before every pass to stderr")
    p.add_flag("--mlir-print-ir-after-all", "print the IR after every pass to stderr")
    p.add_flag(
        "--mlir-print-ir-after-change", "print the IR after a pass only when the pass changed it"
    )
    p.add_flag("--mlir-print-ir-after-failure", "print the IR after a pass that failed")
    p.add_argument(
        "--mlir-print-ir-before",
        action="append",
        default=[],
        metavar="PASS",
        help="print the IR before the named passes (comma separated, repeatable)",
    )
    p.add_argument(
        "--mlir-print-ir-after",
        action="append",
        default=[],
        metavar="PASS",
        help="print the IR after the named passes (comma separated, repeatable)",
    )
    p.add_flag(
        "--mlir-print-ir-module-scope",
        "IR dumps of passes nested under func.func print the whole module (ours always do)",
    )
    p.add_flag("--mlir-print-op-generic", "print MLIR's generic op form")
    p.add_flag("--mlir-print-debuginfo", "print locations")
    p.add_flag(
        "--mlir-print-local-scope",
        "print attributes, types and locations where they are used, without aliases",
    )
    p.add_flag("--mlir-disable-threading", "run MLIR single-threaded (its verifier and passes)")
    p.add_argument(
        "--mlir-elide-elementsattrs-if-larger",
        type=int,
        default=None,
        metavar="N",
        help="elide constants with more than N elements when printing "
        "(the output does not read back)",
    )
    from .emit import EMIT_KINDS

    p.add_argument(
        "--emit",
        choices=EMIT_KINDS,
        default="mlir",
        metavar="KIND",
        help="what to write: mlir (default), bytecode, executable (valid StableHLO "
        "that jax/XLA run: penguin-form sorts re-expanded), hlo-text, hlo-proto",
    )
    p.add_flag("--emit-bytecode", "write MLIR bytecode instead of text (--emit=bytecode)")
    p.add_flag("--dump-pass-pipeline", "print the pipeline with every option to stderr")
    p.add_flag("--allow-unregistered-dialect", "accept ops of dialects not registered")
    p.add_optional_value(
        "--split-input-file",
        DEFAULT_SPLIT_MARKER,
        default=None,
        metavar="MARKER",
        help=f"run each chunk between MARKER lines (default '{DEFAULT_SPLIT_MARKER}') on its "
        "own, printing each result as it goes; in a batch each chunk is a program",
    )
    p.add_argument(
        "--output-split-marker",
        default=DEFAULT_SPLIT_MARKER,
        metavar="MARKER",
        help="line between the chunks' outputs (default '%(default)s')",
    )
    p.add_optional_value(
        "--verify-diagnostics",
        "all",
        default=None,
        choices=("all", "only-expected"),
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
    p.add_optional_value(
        "--remarks",
        "",
        default=None,
        metavar="REGEX",
        help="a remark per rewrite at the op's location (file:line:col: remark: [rewriter] "
        "...), for the rewriters REGEX matches (default every one); --remarks=all: every "
        "skip too. Remarks do not change the exit code",
    )
    p.add_optional_value(
        "--remarks-missed",
        "",
        default=None,
        metavar="REGEX",
        help="a remark per op a rewriter REGEX matches visited and skipped, with the reason",
    )
    p.add_argument(
        "--remarks-file",
        default=None,
        metavar="FILE",
        help="write every rewrite and skip as records: JSON if FILE ends in "
        ".json, else LLVM's optimization-remark YAML",
    )
    p.add_flag(
        "--print-changes",
        "for each rewrite, the op before and the ops it created "
        "after, with locations, grouped by rewriter in pipeline order (stderr)",
    )
    p.add_optional_value(
        "--penguin-readiness",
        "warn",
        default=None,
        choices=("warn", "error"),
        metavar="warn|error",
        help="after the pipeline, report every op Neuron's next stages (the Penguin "
        "tensorizer) would still refuse, and the hazards of the seed's literal reading; "
        "error: exit 5 if any op would be refused (the output is still written)",
    )
    p.add_flag(
        "--list-passes",
        "list penguin-opt's passes with their options and the "
        "native MLIR/StableHLO/MHLO passes a pipeline may name, then exit",
    )
    p.add_flag(
        "--check-equivalence",
        "run the program before and after the pipeline on random inputs "
        "and compare every output (exit 3 on a mismatch, 4 if not checkable)",
    )
    g = p.add_argument_group("batches (several inputs, directories, multi-graph dumps)")
    g.add_argument(
        "--jobs",
        type=positive_int,
        default=os.cpu_count() or 1,
        metavar="N",
        help="worker processes, one program at a time each (default: the "
        "machine's cores, %(default)s here)",
    )
    g.add_argument(
        "--report",
        default=None,
        metavar="FILE.json",
        help="write every program's status, statistics and check as JSON",
    )
    g.add_argument(
        "--executor",
        default="local",
        metavar="local|dask://HOST:PORT",
        type=_executor,
        help="where the workers run: local processes (default) or "
        "a dask.distributed scheduler (pip install 'penguin-opt[cluster]')",
    )
    add_version_option(p)
    p.add_argument("--debug", action="store_true", help="show Python tracebacks on errors")
    add_check_options(p)
    return p


def _executor(text: str) -> str:
    import argparse

    if text == "local" or (text.startswith("dask://") and len(text) > len("dask://")):
        return text
    raise argparse.ArgumentTypeError(f"expected 'local' or 'dask://HOST:PORT', got '{text}'")


def list_passes(out: TextIO = sys.stdout) -> None:
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
    """The ``penguin-opt`` command. Run as a command (``argv`` None) it is supervised
    (``cli_common.supervise``: MLIR crashing the process is one line, exit 1)."""
    if argv is None:
        supervise("penguin-opt")
    argv = sys.argv[1:] if argv is None else argv
    return run_command(lambda: _main(argv), prog="penguin-opt", argv=argv)


def pass_flags(parser: Parser, argv: list[str]) -> tuple[list[str], list[str]]:
    """mlir-opt's pass flags, taken out of ``argv``: (the other arguments, the pipeline
    elements in command-line order).

    Any pass a pipeline can name is also a flag, with one dash or two: ``--inline --cse``,
    options as one argument (``--canonicalize='max-iterations=3 test-convergence=true'``
    is ``canonicalize{max-iterations=3 test-convergence=true}``). The value of an option
    that takes one (``-o --cse``) is never read as a flag."""
    from .pipeline import is_pass_name

    rest, flags = parser.take_flags(argv, is_pass_name)
    return rest, [f"{name}{{{options}}}" if options.strip() else name for name, options in flags]


def _pipeline_text(args: argparse.Namespace) -> str | None:
    if args.pipeline is not None and args.pass_pipeline is not None:
        raise UsageError("give the pipeline once: -p or --pass-pipeline, not both")
    text = args.pass_pipeline if args.pass_pipeline is not None else args.pipeline
    if args.pass_flags:
        if text is not None:
            flags = " ".join(f"--{element}" for element in args.pass_flags)
            raise UsageError(f"pass flags ({flags}) cannot be combined with -p/--pass-pipeline")
        return ",".join(args.pass_flags)
    if text is not None and not text.strip():
        raise UsageError("empty pipeline")
    return text


def _printing(args: argparse.Namespace) -> IRPrinting:
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
        local_scope=args.mlir_print_local_scope,
        module_scope=args.mlir_print_ir_module_scope,
        elide_elements_limit=limit,
    )


def _settle_flags(args: argparse.Namespace) -> str | None:
    """Merge the flags' aliases, refuse contradictions; the pipeline text."""
    args.pass_statistics = args.pass_statistics or args.mlir_pass_statistics
    if args.emit_bytecode:
        if args.emit not in ("mlir", "bytecode"):
            raise UsageError(f"--emit-bytecode contradicts --emit={args.emit}")
        args.emit = "bytecode"
    text = _pipeline_text(args)
    if args.emit != "mlir" and args.verify_diagnostics:
        raise UsageError(f"--emit={args.emit} cannot be combined with --verify-diagnostics")
    if args.check_equivalence and text is None:
        raise UsageError("--check-equivalence needs a pipeline (-p)")
    for flag, pattern in (("--remarks", args.remarks), ("--remarks-missed", args.remarks_missed)):
        try:
            re.compile(pattern or "")
        except re.error as err:
            raise UsageError(f"{flag}: '{pattern}' is not a regular expression: {err}") from None
    return text


def _main(argv: list[str]) -> int:
    parser = build_parser()
    argv, flagged = pass_flags(parser, argv)
    args = parser.parse_args(argv)
    args.pass_flags = flagged
    if args.list_passes:
        list_passes()
        return EXIT_OK
    text = _settle_flags(args)
    inputs = args.input_files or ["-"]
    if _is_batch(inputs) or _checked_chunks(args, inputs):
        return _run_batch(args, inputs, text)
    args.input = inputs[0]
    _refuse_overwriting_inputs(args, [args.input], with_output=True)

    from .io import InputError, OutputError, read_source, write_output
    from .passes.base import RunState
    from .pipeline import Pipeline, PipelineError

    printing = _printing(args)
    pipeline = None
    if text is not None:
        try:
            verify = {None: "default", True: "each", False: "off"}[args.verify_each]
            pipeline = Pipeline(text, verify=verify)
        except PipelineError as err:
            raise UsageError(str(err)) from None
        _check_pass_names(pipeline, printing)

    name = shown_name(args.input) if args.input != "-" else "<stdin>"
    printing = dataclasses.replace(printing, source_name=name)
    chunked = args.split_input_file is not None or bool(args.verify_diagnostics)
    if args.emit != "mlir" and args.split_input_file is not None:  # (a batch writes a file
        # per chunk: any kind; one run writes all chunks' results into one)
        raise UsageError(f"--emit={args.emit} cannot be combined with --split-input-file")
    parse_start = time.perf_counter()
    try:
        source = read_source(args.input, chunked=chunked)
    except InputError as err:
        return _fail(str(err), args.debug)
    if chunked:
        return _run_chunks(args, pipeline, printing, source, name)
    if _graph_count(source) > 1:  # a torch-xla dump of several graphs: a batch
        return _run_batch(args, inputs, text)
    state = RunState()
    before: list[str] = []
    try:
        output = _run_one(
            args,
            pipeline,
            printing,
            source,
            state,
            before if args.check_equivalence else None,
            parse_start,
            as_bytes=True,  # straight to the output file
        )
    except PipelineError as err:
        raise UsageError(str(err)) from None
    except KeyboardInterrupt:
        raise
    except Exception as err:
        _report_timing(args, state)
        return _fail(_error_line(err, name), args.debug, state, name)
    _print_diagnostics(state, name)
    unwritten = _report_statistics(args, state) or _report_remarks(args, state)
    if unwritten:
        return unwritten
    not_ready = _print_findings(args, state, name)
    if args.check_equivalence:
        from .check_cli import run_check

        code = run_check(
            before[0],
            before[1],
            args,
            exact=_only_exact_rewrites(state),
            xla_reorders=_xla_reorders(state),
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
    return EXIT_NOT_READY if not_ready else EXIT_OK


def _checked_chunks(args: argparse.Namespace, inputs: list[str]) -> bool:
    """One file with --split-input-file and --check-equivalence: a batch of its chunks,
    each checked on its own (one run's output holds all chunks, and a check compares one
    program), into the -o directory."""
    if not (args.check_equivalence and args.split_input_file is not None and inputs != ["-"]):
        return False
    if not (os.path.isdir(args.output) or args.output.endswith(os.sep)):
        raise UsageError(  # (never a file name quietly made a directory)
            "--check-equivalence with --split-input-file checks each chunk as a program of "
            "a batch: name an output directory with -o DIR/ (an existing one, or ending in /)"
        )
    return True


def _is_batch(inputs: list[str]) -> bool:
    """Whether ``inputs`` name several programs before any file is read (a multi-graph
    dump is found out when it is read; the batch module is imported only for a batch)."""
    return len(inputs) > 1 or any(p != "-" and os.path.isdir(p) for p in inputs)


def _wants_remarks(args: argparse.Namespace) -> bool:
    return (
        args.remarks is not None
        or args.remarks_missed is not None
        or args.remarks_file is not None
        or args.print_changes
    )


def _remark_lines(args: argparse.Namespace, state: RunState) -> list[str]:
    """``--remarks[=REGEX]`` and ``--remarks-missed[=REGEX]``: the remark lines."""
    from .remarks import select

    recorder = state.recorder
    if recorder is None:
        return []
    shown = []
    if args.remarks is not None:
        shown += select(recorder.remarks, args.remarks, skips=args.remarks == "all")
    if args.remarks_missed is not None:
        seen = {id(r) for r in shown}
        shown += [
            r
            for r in select(recorder.remarks, args.remarks_missed, skips=True)
            if r.kind == "skip" and id(r) not in seen
        ]
    order = {id(r): i for i, r in enumerate(recorder.remarks)}
    return [r.render() for r in sorted(shown, key=lambda r: order[id(r)])]


def _report_remarks(args: argparse.Namespace, state: RunState) -> int | None:
    """The remark lines, the change view (stderr) and ``--remarks-file``; the exit code
    if the file cannot be written."""
    import json

    from .io import OutputError, write_output
    from .remarks import print_changes, remarks_yaml

    recorder = state.recorder
    if recorder is None:
        return None
    for line in _remark_lines(args, state):
        print(line, file=sys.stderr)
    if args.print_changes:
        print_changes(recorder.remarks, sys.stderr)
    if args.remarks_file:
        if args.remarks_file.endswith(".json"):
            text = json.dumps([r.to_dict() for r in recorder.remarks], indent=2) + "\n"
        else:
            text = remarks_yaml(recorder.remarks)
        try:
            write_output(args.remarks_file, text)
        except OutputError as err:
            return _fail(str(err), args.debug)
    return None


def _report_statistics(args: argparse.Namespace, state: RunState) -> int | None:
    """``--pass-statistics`` (text, stderr) and ``--pass-statistics-json=FILE``; the exit
    code if the JSON cannot be written."""
    import json

    from .io import OutputError, write_output
    from .pipeline import print_statistics

    if args.pass_statistics:
        print_statistics(state)
    if args.pass_statistics_json:
        try:
            write_output(
                args.pass_statistics_json, json.dumps(state.statistics_dict(), indent=2) + "\n"
            )
        except OutputError as err:
            return _fail(str(err), args.debug)
    return None


def _print_findings(args: argparse.Namespace, state: RunState, name: str) -> bool:
    """``--penguin-readiness``: a located line per finding, then a summary by kind;
    whether the program is not ready (an op refused, in ``error`` mode)."""
    lines, refused = _finding_lines(args, state, name)
    for line in lines:
        print(line, file=sys.stderr)
    return refused


def _refuse_overwriting_inputs(
    args: argparse.Namespace, inputs: list[str], *, with_output: bool = False
) -> None:
    """Refuse (usage error) a ``-o`` (``with_output``), ``--report``, ``--remarks-file``
    or ``--pass-statistics-json`` that names one of ``inputs``."""
    named = [("-o", args.output)] if with_output else []
    named += [
        ("--report", args.report),
        ("--remarks-file", args.remarks_file),
        ("--pass-statistics-json", args.pass_statistics_json),
    ]
    for flag, path in named:
        if path is None:
            continue
        for source in inputs:
            if _output_is_input(source, path):
                shown = "standard input" if source == "-" else f"the input file '{source}'"
                raise UsageError(f"refusing to overwrite {shown} ('{flag} {path}')")
    files: dict[str, str] = {}  # two outputs in one file: one would be lost
    for flag, path in named:
        if path is None or path in ("-", "/dev/stdout"):
            continue
        if os.path.exists(path) and not os.path.isfile(path):
            continue  # a device or a FIFO takes what it is given
        other = files.setdefault(os.path.realpath(path), flag)
        if other != flag:
            raise UsageError(f"{other} and {flag} name the same file '{path}': give each its own")


def _output_is_input(input_path: str, output: str) -> bool:
    """Whether ``-o`` names the input (for ``-``: the file stdin is redirected from)."""
    if output in ("-", "/dev/stdout"):
        return False
    try:
        out = os.stat(output)
        source = os.fstat(0) if input_path == "-" else os.stat(input_path)
    except (OSError, ValueError):
        return False
    return stat.S_ISREG(source.st_mode) and (out.st_dev, out.st_ino) == (
        source.st_dev,
        source.st_ino,
    )


def _check_pass_names(pipeline: Pipeline, printing: IRPrinting) -> None:
    """``--mlir-print-ir-before/after=PASS`` must name passes of the pipeline (a typo
    would otherwise print nothing)."""
    known = frozenset().union(*(el.pass_names for el in pipeline.elements))
    for flag, names in (("before", printing.before), ("after", printing.after)):
        unknown = sorted(names - known)
        if unknown:
            raise UsageError(
                f"--mlir-print-ir-{flag}: '{unknown[0]}' is not a pass of the "
                f"pipeline ({', '.join(sorted(known))})"
            )


def _only_exact_rewrites(state: RunState) -> bool:
    """Whether no rewriter that re-associates arithmetic rewrote anything."""
    from .passes import REASSOCIATING

    return not _rewrote(state, REASSOCIATING)


def _xla_reorders(state: RunState) -> bool:
    """Whether a bit-exact rewriter XLA may compile into another order rewrote anything."""
    from .passes import XLA_REORDERS

    return _rewrote(state, XLA_REORDERS)


def _rewrote(state: RunState, names: frozenset[str]) -> bool:
    return any(
        st.rewritten
        for per in state.statistics.values()
        for name, st in per.items()
        if name in names
    )


def _resize_mode(pipeline: Pipeline) -> str:
    for el in pipeline.elements:
        mode = getattr(el.ours, "resize_nearest_grad_mode", None)
        if mode:
            return mode
    return "mean"


def _run_one(
    args: argparse.Namespace,
    pipeline: Pipeline | None,
    printing: IRPrinting,
    source: Source,
    state: RunState,
    texts: list[str] | None = None,
    parse_start: float | None = None,
    counts: dict | None = None,
    as_bytes: bool = False,
) -> str | bytes:
    """Load, run, and render one program; raises on input or pass errors. With ``texts``,
    the program's text before and after the pipeline are appended to it; with
    ``counts``, its op counts before and after; ``as_bytes``: the output as a file gets it
    (``render``'s)."""
    from .api import load_source
    from .context import make_context
    from .io import module_text

    start = time.perf_counter() if parse_start is None else parse_start
    stage("parsing", file=source.name)
    ctx = make_context(allow_unregistered=args.allow_unregistered_dialect)
    if args.mlir_disable_threading:
        ctx.enable_multithreading(False)
    module = load_source(source, ctx)
    state.timings.append(("Parser", time.perf_counter() - start))
    with module.context:
        if texts is not None:
            texts.append(module_text(module))
        if counts is not None:
            counts["before"] = _op_count(module)
        before = module.clone() if args.penguin_readiness else None
        if _wants_remarks(args):
            from .remarks import Recorder

            state.recorder = Recorder(
                skips=args.remarks == "all"
                or args.remarks_missed is not None
                or args.remarks_file is not None,
                changes=args.print_changes,
                name=source.name,
            )
        if pipeline is not None:
            pipeline._native_check(module.context)
            if args.dump_pass_pipeline:
                print(
                    f"Pass Manager with {len(pipeline.elements)} passes:\n"
                    f"{pipeline.describe(module.context)}\n",
                    file=sys.stderr,
                )
            pipeline.run(module, state, ir_printing=printing)
        if counts is not None:
            counts["after"] = _op_count(module)
        if before is not None:
            from .readiness import findings

            state.findings = findings(before, module, source.name, pipeline=pipeline)
            before.erase()
        stage("printing the output")
        if texts is not None:
            texts.append(module_text(module))
        return _render(args, module, source.name, as_bytes)


def _render(
    args: argparse.Namespace, module: ir.Operation, name: str, as_bytes: bool = False
) -> str | bytes:
    """The module as ``--emit`` asks (see :mod:`penguin_opt.emit`)."""
    from .emit import render

    return render(
        module,
        args.emit,
        generic=args.mlir_print_op_generic,
        debug_info=args.mlir_print_debuginfo,
        large_elements_limit=args.mlir_elide_elementsattrs_if_larger,
        local_scope=args.mlir_print_local_scope,
        name=name,
        as_bytes=as_bytes,
    )


def _op_count(module: ir.Operation) -> int:
    """The number of ops in ``module`` (itself excluded), counted natively."""
    from .ir_util import op_counts

    return sum(op_counts(module).values()) - 1


def _graph_count(source: Source) -> int:
    from .formats import is_graph_dump, programs_in

    return len(programs_in(source)) if is_graph_dump(source.data) else 1


# Flags that print one program's IR or diagnostics as they happen: not for a batch.
_NOT_IN_BATCH = (
    ("verify_diagnostics", "--verify-diagnostics"),
    ("mlir_print_ir_before_all", "--mlir-print-ir-before-all"),
    ("mlir_print_ir_after_all", "--mlir-print-ir-after-all"),
    ("mlir_print_ir_after_change", "--mlir-print-ir-after-change"),
    ("mlir_print_ir_after_failure", "--mlir-print-ir-after-failure"),
    ("mlir_print_ir_before", "--mlir-print-ir-before"),
    ("mlir_print_ir_after", "--mlir-print-ir-after"),
    ("mlir_timing", "--mlir-timing"),
    ("print_changes", "--print-changes"),
)


def _run_batch(args: argparse.Namespace, inputs: list[str], text: str | None) -> int:
    """Several programs: each through the pipeline in a worker, outputs under ``-o``."""
    from . import batch
    from .pipeline import Pipeline, PipelineError

    for attr, flag in _NOT_IN_BATCH:
        if getattr(args, attr):
            raise UsageError(f"{flag} works on one program: not with several")
    if args.output in ("-", "/dev/stdout"):
        raise UsageError("several programs: name an output directory with -o DIR")
    if os.path.exists(args.output) and not os.path.isdir(args.output):
        raise UsageError(
            f"-o '{args.output}': several programs need a directory, and this is not one"
        )
    verify = {None: "default", True: "each", False: "off"}[args.verify_each]
    if text is not None:
        try:
            pipeline = Pipeline(text, verify=verify)  # refuse a bad pipeline before starting
        except PipelineError as err:
            raise UsageError(str(err)) from None
        if args.dump_pass_pipeline:
            from .context import make_context

            print(
                f"Pass Manager with {len(pipeline.elements)} passes:\n"
                f"{pipeline.describe(make_context())}\n",
                file=sys.stderr,
            )
    args.pipeline_text, args.verify_mode = text, verify
    args.dump_pass_pipeline = False  # printed once, here
    jobs, skipped = batch.plan(inputs, args.output, args.emit, args.split_input_file)
    _refuse_overwriting_inputs(args, [job.input for job in jobs])
    try:
        os.makedirs(args.output, exist_ok=True)
    except OSError as err:
        return _fail(
            f"{args.output}: error: cannot make the output directory: "
            f"{err.strerror or one_line(err)}",
            args.debug,
        )
    if not jobs:
        for path, reason in skipped:
            print(f"skipped {shown_name(path)}: {reason}", file=sys.stderr)
        print("penguin-opt: error: no program found in the inputs", file=sys.stderr)
        return EXIT_FAILURE
    return batch.run_batch(jobs, skipped, args)


def _report_timing(args: argparse.Namespace, state: RunState) -> None:
    if args.mlir_timing:
        from .pipeline import print_timing

        print_timing(state.timings)


def _error_lines(err: BaseException, name: str, *, verifying: bool) -> list[str]:
    """``err`` as one line; under ``--verify-diagnostics`` MLIR's every error and note,
    each on its line (what the expectations are checked against)."""
    from jaxlib.mlir import ir

    from .io import InputError, mlir_diagnostic_lines

    if verifying and isinstance(err, InputError):
        return err.diagnostic_lines
    if verifying and isinstance(err, ir.MLIRError):
        return mlir_diagnostic_lines(err, name)
    return [_error_line(err, name)]


def _error_line(err: BaseException, name: str) -> str:
    from jaxlib.mlir import ir

    from .emit import EmitError
    from .io import InputError, UnprintableModuleError, format_mlir_error
    from .passes.base import PassError

    if isinstance(err, (InputError, EmitError)):
        return str(err)
    if isinstance(err, UnprintableModuleError):
        return f"{name}: error: {err}"
    if isinstance(err, PassError):
        return err.diagnostic.render(name)
    if isinstance(err, ir.MLIRError):
        return format_mlir_error(err, name)
    if isinstance(err, MemoryError):
        return f"{name}: error: out of memory"
    return f"{name}: error: internal error: {type(err).__name__}: {one_line(err, 500)}"


def _run_chunks(
    args: argparse.Namespace,
    pipeline: Pipeline | None,
    printing: IRPrinting,
    source: Source,
    name: str,
) -> int:
    """--split-input-file / --verify-diagnostics: each chunk is its own program, as in
    mlir-opt: a failed chunk does not stop the others; on stdout each chunk's result is
    printed as soon as it is ready, separated by --output-split-marker lines."""
    from . import diagnostics_check as dc
    from .io import OutputError, write_output
    from .ir_util import release_named_positions
    from .passes.base import RunState

    if args.check_equivalence:
        raise UsageError(
            "--check-equivalence checks one program: it cannot be combined with "
            "--verify-diagnostics, nor with --split-input-file on stdin (name the file and "
            "an output directory, -o DIR/: each chunk is then a checked program of a batch)"
        )
    try:
        text = source.data.decode("utf-8")
    except UnicodeDecodeError:
        return _fail(f"{name}: error: --split-input-file needs MLIR text", args.debug)
    marker = args.split_input_file
    chunks = dc.split_chunks(text, marker) if marker is not None else [dc.Chunk(text, 1)]
    separator = f"{args.output_split_marker}\n"
    streaming = args.output == "-"
    outputs, failed, problems, not_ready = [], False, [], False
    total = RunState()
    # What a chunk run again after a crash (see chunk_replayed) is for: the sums over the
    # chunks. Without them it is skipped: its output is out, and the crash fails the run.
    summing = bool(
        args.verify_diagnostics
        or args.pass_statistics
        or args.pass_statistics_json
        or args.mlir_timing
    )
    for index, chunk in enumerate(chunks):
        # the chunk before is done: its HLO text's positions must not make this one's
        # ambiguous (see ir_util.register_named_positions)
        release_named_positions(source.name)
        replayed = chunk_replayed(index)  # its output is out: run for the sums only
        if replayed and not summing:
            continue
        chunk = chunk.program(several=len(chunks) > 1)
        state = RunState()
        output, rendered = _run_chunk(
            args, pipeline, printing, source, name, chunk, index, replayed, state
        )
        failed |= bool(rendered)
        findings, refused = _finding_lines(args, state, name)
        not_ready |= refused
        rendered = (
            [d.render(name) for d in state.diagnostics]
            + _remark_lines(args, state)
            + findings
            + rendered
        )
        _sum_statistics(total, state)
        total.timings.extend(state.timings)
        if args.verify_diagnostics:
            problems += dc.verify(
                rendered,
                dc.expectations(chunk.body, chunk.first_line),
                name,
                only_expected=args.verify_diagnostics == "only-expected",
            )
        elif not replayed:
            for line in rendered:
                print(line, file=sys.stderr)
        piece = (separator if index else "") + (output or "")
        if streaming and not args.verify_diagnostics:
            if not replayed:
                try:
                    write_output("-", piece)
                except OutputError as err:  # stdout closed (`>&-`), a full disk
                    return _fail(str(err), args.debug)
        else:
            outputs.append(piece)
    unwritten = _report_statistics(args, total)
    if unwritten is not None:
        return unwritten
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
    return EXIT_NOT_READY if not_ready else EXIT_OK


def _run_chunk(
    args: argparse.Namespace,
    pipeline: Pipeline | None,
    printing: IRPrinting,
    source: Source,
    name: str,
    chunk: Chunk,
    index: int,
    replayed: bool,
    state: RunState,
) -> tuple[str | None, list[str]]:
    """Chunk ``index``'s output (None if it failed) and its error lines (none if it ran). The
    supervising parent is told the chunk runs: MLIR crashing the process in it ends only
    this chunk (the next child gets the crash as the chunk's error, see
    ``cli_common.chunk_started``); a chunk ``replayed`` (its output written by an
    earlier child) runs silenced."""
    from .io import Source
    from .pipeline import PipelineError

    crash = chunk_started(index)
    try:
        if crash is not None:
            return None, [f"{name}: error: {crash} (the chunk at line {chunk.first_line})"]
        with output_silenced() if replayed else contextlib.nullcontext():
            text = Source(source.name, chunk.text.encode())
            return _run_one(args, pipeline, printing, text, state), []
    except PipelineError as err:
        raise UsageError(str(err)) from None
    except KeyboardInterrupt:
        raise
    except Exception as err:
        if args.debug and not replayed:
            traceback.print_exc()
        return None, _error_lines(err, name, verifying=bool(args.verify_diagnostics))
    finally:
        chunk_started(None)


def _finding_lines(
    args: argparse.Namespace,
    state: RunState,
    name: str,
) -> tuple[list[str], bool]:
    """A chunk's ``--penguin-readiness`` lines (the summary too, unless the lines are
    checked by ``--verify-diagnostics``) and whether an op is refused in error mode."""
    if not args.penguin_readiness:
        return [], False
    from .readiness import summary_lines

    lines = [f.render(name, args.penguin_readiness) for f in state.findings]
    if not args.verify_diagnostics:
        lines += summary_lines(state.findings)
    refused = args.penguin_readiness == "error" and any(not f.hazard for f in state.findings)
    return lines, refused


def _sum_statistics(total: RunState, state: RunState) -> None:
    for pass_name, per in state.statistics.items():  # summed over the chunks
        for rewriter, st in per.items():
            sum_st = total.rewriter(pass_name, rewriter)
            sum_st.matched += st.matched
            sum_st.rewritten += st.rewritten
            sum_st.skipped.update(st.skipped)


def _print_diagnostics(state: RunState, name: str) -> None:
    for diag in state.diagnostics:
        print(diag.render(name), file=sys.stderr)


def _fail(line: str, debug: bool, state: RunState | None = None, name: str = "-") -> int:
    if debug:
        traceback.print_exc()
    if state is not None:
        _print_diagnostics(state, name)
    print(line, file=sys.stderr)
    return EXIT_FAILURE


__all__ = ["build_parser", "list_passes", "main"]

if __name__ == "__main__":
    sys.exit(main())
