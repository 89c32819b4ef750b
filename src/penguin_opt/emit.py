"""Output users can run: the module as MLIR, or as a program XLA and jax take as it is.

:func:`render` prints a ``builtin.module`` after penguin-opt's pipeline as one of
:data:`EMIT_KINDS`:

* ``mlir``: MLIR text, as penguin-opt always printed it (penguin-form sorts in generic
  form, so that they read back; :func:`penguin_opt.io.module_text`).
* ``bytecode``: MLIR bytecode (penguin-form sorts as stand-ins that read back).
* ``executable``: the same program as StableHLO text that jax/XLA compile and the
  StableHLO reference interpreter runs. On a clone (the caller's module never changes),
  every penguin-form sort gets its index ramp back (``penguin_sort.expand``: exactly the
  argsort before fuseIotaSort), and a module holding MHLO is legalized to StableHLO by the
  native ``hlo-legalize-to-stablehlo``, run as the pipeline runs it (in a child process:
  it can abort); a module without ``@main`` whose only public function is ``@f`` gets it
  renamed ``@main`` (what XLA, jax and the interpreter run; calls follow). Nothing else
  changes:

  * an MHLO op StableHLO has no op for becomes ``stablehlo.custom_call @mhlo.<op>``
    (that pass's own encoding, e.g. ``mhlo.topk``: XLA and jax run it, the interpreter
    does not); one the pass cannot encode (``mhlo.copy``) is an :class:`EmitError`;
  * CHLO stays CHLO: XLA and jax take it, and decomposing it would change how e.g.
    ``chlo.erf`` rounds (the interpreter runs it after ``chlo-legalize-to-stablehlo``,
    as ``penguin-check`` does);
  * ops of other registered dialects stay as they are: XLA's converter takes some
    (``arith.constant`` of a tensor, Shardy's ``sdy`` ops) and refuses others
    (``arith.addf``, ``tensor.insert_slice``), which ``hlo-text``/``hlo-proto`` then name;
  * an op of an unregistered dialect is an :class:`EmitError` (nothing runs it, and the
    text would not even parse without ``--allow-unregistered-dialect``).
* ``hlo-text`` / ``hlo-proto``: the executable form through XLA's own MLIR->HLO
  converter (jaxlib's, which ``jax.jit(f).lower(x).compiler_ir("hlo")`` uses), run in a
  child process (``penguin_opt.isolated``) because it ends the process on some programs
  (measured on jaxlib 0.9.2 to 0.12.0.1: SIGSEGV on a convert of a complex constant to a
  real type and on a recursive call, SIGFPE on an integer division of constants by zero
  before 0.12, a CHECK failure on an ``f6E2M3FN`` constant from 0.10 on): HLO text with
  every constant printed in full (so that it reads back) or a serialized
  ``HloModuleProto`` (bytes); ``penguin-opt`` reads both back.
  The entry computation is ``@main`` (a module with neither it nor exactly one public
  function is an error). What HLO cannot express, any converter failure and a converter
  crash are an :class:`EmitError` (naming the op the converter names); what the converter
  logs to stderr never reaches the terminal.

An :class:`EmitError` is one line, ``file:line:col: error: cannot emit ...``, at the op at
fault when it has a location (``name``, the input's name, otherwise).
"""

from __future__ import annotations

import io as _io
import re

from jaxlib.mlir import ir

from .cli_common import one_line
from .io import module_bytecode, module_text
from .ir_util import first_op

# The output file suffix per kind (a batch appends it to the input's name).
EMIT_SUFFIXES = {
    "mlir": ".mlir",
    "bytecode": ".mlirbc",
    "executable": ".mlir",
    "hlo-text": ".hlo.txt",
    "hlo-proto": ".hlo_module.pb",
}
EMIT_KINDS = tuple(EMIT_SUFFIXES)
BINARY_KINDS = frozenset({"bytecode", "hlo-proto"})  # render() returns bytes for these

_WHAT = {"executable": "executable StableHLO", "hlo-text": "HLO", "hlo-proto": "HLO"}


class EmitError(Exception):
    """The module cannot be rendered in the asked form; the message is one line,
    ``file:line:col: error: cannot emit ...``, naming the op at fault."""


def render(
    module: ir.Operation,
    kind: str,
    *,
    generic: bool = False,
    debug_info: bool = False,
    large_elements_limit: int | None = None,
    local_scope: bool = False,
    name: str = "-",
    as_bytes: bool = False,
) -> str | bytes:
    """``module`` (a ``builtin.module`` or its ``ir.Module``) as ``kind``, one of
    :data:`EMIT_KINDS`: ``str``, or ``bytes`` for :data:`BINARY_KINDS` (``as_bytes``:
    bytes for every kind, the text kinds in UTF-8, as a file gets them).

    ``generic``, ``debug_info``, ``large_elements_limit`` and ``local_scope`` shape MLIR
    text (``mlir``, ``executable``; elided constants do not read back); the HLO kinds
    ignore them (XLA keeps the ops' locations as op metadata). ``name``: what an error
    calls the input when the op at fault has no location. Raises :class:`EmitError`, or
    ValueError for an unknown ``kind``; ``module`` is never changed."""
    if kind not in EMIT_KINDS:
        raise ValueError(f"unknown output kind '{kind}' ({', '.join(EMIT_KINDS)})")
    module = module.operation
    with module.context, ir.Location.unknown(module.context):
        if kind == "mlir":
            return module_text(
                module,
                generic=generic,
                debug_info=debug_info,
                large_elements_limit=large_elements_limit,
                local_scope=local_scope,
                binary=as_bytes,
                source_name=name,
            )
        if kind == "bytecode":
            return module_bytecode(module)
        program = executable_module(module, name, _WHAT[kind])
        try:
            if kind == "executable":
                return module_text(
                    program,
                    generic=generic,
                    debug_info=debug_info,
                    large_elements_limit=large_elements_limit,
                    local_scope=local_scope,
                    binary=as_bytes,
                    source_name=name,
                )
            hlo = _hlo(program, kind, name)
            return hlo.encode() if as_bytes and isinstance(hlo, str) else hlo
        finally:
            program.erase()


def executable_module(
    module: ir.Operation, name: str = "-", what: str = "executable StableHLO"
) -> ir.Operation:
    """A new ``builtin.module`` for the caller to erase: ``module`` with its penguin-form
    sorts expanded and its MHLO legalized to StableHLO, verified. Raises EmitError
    (``cannot emit <what>: ...``)."""
    from .penguin_sort import expand

    module = module.operation
    program = module.clone()
    try:
        with module.context, ir.Location.unknown(module.context):
            expand(program)
            _unfuse(program, name, what)
            _check_registered(program, name, what)
            _inline_resources(program, name, what)
            if _holds_mhlo(program):
                _legalize_mhlo(program, name, what)
            try:
                program.verify()
            except ir.MLIRError as err:
                raise EmitError(_mlir_failure(err, name, what)) from None
            _entry_named_main(program)
    except BaseException:
        program.erase()
        raise
    return program


def _unfuse(program: ir.Operation, name: str, what: str) -> None:
    """XLA's fusion, copy and bitcast of an optimized HLO dump as the StableHLO they
    compute (``xla_ops.unfuse``); EmitError at a bitcast that has none."""
    from .xla_ops import UnrunnableOp, unfuse

    try:
        unfuse(program)
    except UnrunnableOp as err:
        bitcast = first_op(program, lambda op: op.name == "mhlo.bitcast")
        where = name if bitcast is None else _where(bitcast.location, name, bitcast.name)
        raise EmitError(f"{where}: error: cannot emit {what}: {err}") from None


def _inline_resources(program: ir.Operation, name: str, what: str) -> None:
    """``dense_resource`` constants (torch-mlir's weights) as dense ones, which XLA reads;
    EmitError for one whose values the program lacks."""
    from .elements import ResourceError, inline_resources

    try:
        inline_resources(program)
    except ResourceError as err:
        raise EmitError(f"{name}: error: cannot emit {what}: {err}") from None


def _entry_named_main(program: ir.Operation) -> bool:
    """Rename the entry function (``@main``, else the only public one) ``@main``, with
    every call to it; False when there is none."""
    from .ir_util import entry_function, symbol_name

    entry, _ = entry_function(program)
    if entry is None:
        return False
    entry_name = symbol_name(entry)
    if entry_name != "main":
        ir.SymbolTable.replace_all_symbol_uses(entry_name, "main", program)
        entry.attributes["sym_name"] = ir.StringAttr.get("main")
    return True


def _check_registered(program: ir.Operation, name: str, what: str) -> None:
    """EmitError for the first op (in program order) of an unregistered dialect."""
    ctx = program.context
    op = first_op(program, lambda op: not ctx.is_registered_operation(op.name))
    if op is not None:
        raise EmitError(
            f"{_where(op.location, name, op.name)}: error: cannot emit {what}: "
            f"'{op.name}' is not a registered operation (no dialect penguin-opt "
            "knows, nor XLA)"
        )


def _holds_mhlo(program: ir.Operation) -> bool:
    """An MHLO op, or an MHLO type in a function's signature (``!mhlo.token``)."""
    from .ir_util import functions

    if first_op(program, lambda op: op.name.startswith("mhlo.")) is not None:
        return True
    return any("!mhlo." in str(f.attributes["function_type"]) for f in functions(program))


def _legalize_mhlo(program: ir.Operation, name: str, what: str) -> None:
    """``hlo-legalize-to-stablehlo`` the way the pipeline runs it: in a child process
    (``native_child.ABORTING_PASSES``), an abort or a failure one line."""
    from .passes.base import PassError
    from .pipeline import Pipeline

    try:
        Pipeline("hlo-legalize-to-stablehlo").run(program)
    except ir.MLIRError as err:
        raise EmitError(_mlir_failure(err, name, what)) from None
    except PassError as err:  # the pass aborted the child process
        where = _where_text(err.diagnostic.location, name)
        raise EmitError(f"{where}: error: cannot emit {what}: {err.diagnostic.message}") from None


# ": %0 = "mhlo.copy"(%arg0) ...": the op MLIR prints after some messages
_OP_DUMP = re.compile(r':\s+(?:%[^"]*=\s*)?"[\w.$-]+"\(.*$')


def _mlir_failure(err: ir.MLIRError, name: str, what: str) -> str:
    """MLIR's first error as one line, at its location, without the op dump."""
    diagnostics = list(getattr(err, "error_diagnostics", []) or [])
    if not diagnostics:
        return f"{name}: error: cannot emit {what}: {one_line(err)}"
    diag = diagnostics[0]
    message = _OP_DUMP.sub("", one_line(diag.message))
    from .passes.base import op_named_in

    where = _where_text(str(diag.location), name, op_named_in(diag.message))
    return f"{where}: error: cannot emit {what}: {message}"


def _where(loc: ir.Location, name: str, kind: str | None = None) -> str:
    return _where_text(str(loc), name, kind)


def _where_text(loc: str, name: str, kind: str | None = None) -> str:
    """``file:line:col`` of a location's text; ``name`` for MLIR's nameless buffer ``-``
    and for a location that names no file; ``kind``: the op's name, if known (it picks
    among HLO instructions sharing an op_name)."""
    from .passes.base import location_triple_text

    return location_triple_text(loc, name, kind) or name


# ---------------------------------------------------------------------------- HLO


_CHILD = "hlo-converter"  # the isolated child process XLA's converter runs in


def _hlo(program: ir.Operation, kind: str, name: str) -> str | bytes:
    """``kind`` (hlo-text, hlo-proto) of the executable form, from XLA's converter."""
    from . import isolated

    if not _entry_named_main(program):  # the converter's entry computation is @main
        raise EmitError(
            f"{name}: error: cannot emit HLO: no @main function (and not "
            "exactly one public function)"
        )
    buffer = _io.BytesIO()
    program.write_bytecode(buffer)  # bytecode: the ops' locations travel with it
    try:
        ok, result = isolated.call(
            _CHILD, _convert_in_child, buffer.getvalue(), kind, stderr="capture"
        )
    except isolated.ChildDied as died:
        raise EmitError(
            f"{name}: error: cannot emit HLO: XLA's MLIR->HLO converter crashed "
            f"on this program{f' ({died.reason})' if died.reason else ''}"
        ) from None
    if not ok:
        raise EmitError(_converter_failure(result, program, name))
    return result


def _convert_in_child(bytecode: bytes, kind: str) -> tuple[bool, str | bytes]:
    """Child-process body: (True, the output) or (False, the converter's error)."""
    from ._compat import mlir_to_xla_computation

    try:
        computation = mlir_to_xla_computation(bytecode)
        if kind == "hlo-text":
            return True, negative_zeros_kept(computation.as_hlo_text(print_large_constants=True))
        return True, computation.as_serialized_hlo_module_proto()
    except Exception as err:  # XLA status errors
        return False, str(err)


# A "-0" element of a literal, which XLA's HLO printer writes for a float -0.0 and its
# parser reads back as +0.0 (an integer token); "-0.0" reads as -0.0.
_NEGATIVE_ZERO = re.compile(r"(?<=[({,\s])-0(?=[,})\s])")
_CONSTANT = re.compile(r" constant\(")


def negative_zeros_kept(hlo_text: str) -> str:
    """HLO text whose float constants keep their negative zeros when XLA reads it
    (``-0`` -> ``-0.0`` in constant literals, not in the rest of their lines, such as a
    metadata string; integers never print ``-0``)."""
    if "-0" not in hlo_text:
        return hlo_text
    parts, done = [], 0
    for match in _CONSTANT.finditer(hlo_text):
        start = match.end()
        if start < done or '"' in hlo_text[hlo_text.rfind("\n", 0, start) + 1 : start]:
            continue  # inside the literal just rewritten, or in a string (metadata)
        end = _literal_end(hlo_text, start) + 1  # with its parentheses: "(-0)"
        parts += [hlo_text[done : start - 1], _NEGATIVE_ZERO.sub("-0.0", hlo_text[start - 1 : end])]
        done = end
    return "".join([*parts, hlo_text[done:]])


def _literal_end(text: str, start: int) -> int:
    """Where the literal that opens at ``text[start - 1]`` (``(``) closes: the index of its
    ``)`` (tuple literals nest parentheses), or of the line's end if it never closes."""
    depth = 1
    for match in _LITERAL_EDGE.finditer(text, start):
        char = match.group()
        if char == "\n":
            return match.start()
        depth += 1 if char == "(" else -1
        if not depth:
            return match.start()
    return len(text)


_LITERAL_EDGE = re.compile(r"[()\n]")


_STATUS = re.compile(r"^[A-Z_]+: ")  # absl status codes: "UNKNOWN: ", "INVALID_ARGUMENT: "
_DIAGNOSTIC = re.compile(r"^(?P<where>.*?):? ?error: (?P<message>.*)$")
_OP_NAMED = re.compile(r"'([\w$.-]+)' op\b")
_FILE_LINE_COL = re.compile(r'"?(?P<file>[^"]*?)"?:(?P<line>\d+):(?P<col>\d+)')


def _converter_failure(text: str, program: ir.Operation, name: str) -> str:
    """One line from the converter's status message: its first error, at the location it
    gives, or else at the first op of the name it gives."""
    lines = [_STATUS.sub("", line, count=1).strip() for line in text.splitlines()]
    first = next(
        (line for line in lines if "error:" in line),
        next((line for line in lines if line), "the converter failed"),
    )
    match = _DIAGNOSTIC.match(first)
    where, message = (match.group("where"), match.group("message")) if match else ("", first)
    where = _converter_location(where)
    message = _without_location_prefix(message)
    named = _OP_NAMED.search(message)
    if where is None and named is not None:
        wanted = named.group(1)
        op = first_op(program, lambda op: op.name == wanted)
        where = _where(op.location, name, op.name) if op is not None else None
    return f"{where or name}: error: cannot emit HLO: {one_line(message)}"


def _without_location_prefix(message: str) -> str:
    """The message without the ``loc("jit(f)/add"): `` MLIR puts first when the location
    names no file."""
    if not message.startswith("loc("):
        return message
    depth = 0
    for index, char in enumerate(message):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and char == ")":
            return message[index + 1 :].lstrip(": ") or message
    return message


def _converter_location(where: str) -> str | None:
    """``file:line:col`` of the converter's diagnostic, None when it names no file (an
    unknown location, MLIR's nameless buffer ``-``)."""
    match = _FILE_LINE_COL.fullmatch(where.strip())
    if match is None or match.group("file") in ("", "-", "<unknown>"):
        return None
    if match.group("line") == "0":
        return match.group("file")
    return f"{match.group('file')}:{match.group('line')}:{match.group('col')}"


__all__ = [
    "BINARY_KINDS",
    "EMIT_KINDS",
    "EMIT_SUFFIXES",
    "EmitError",
    "executable_module",
    "render",
]
