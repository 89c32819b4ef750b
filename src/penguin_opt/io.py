"""Reading programs by content and writing them without ever leaving a partial file.

Accepted inputs (detected from the bytes, not the file name): MLIR text (pretty or
generic, penguin-form sorts included), MLIR bytecode, StableHLO portable artifacts, HLO
text (``HloModule ...``), serialized HLO module protos (e.g. neuronx-cc's
``model.hlo_module.pb``) and XLA's ``HloProto`` dumps (``*.hlo.pb``), ``jax.export``
blobs, and torch-xla graph dumps (see :mod:`penguin_opt.formats`). HLO comes in through
jaxlib's XLA importer as StableHLO.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import tempfile
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from jaxlib.mlir import ir

from .cli_common import (
    OneLineWarning,
    native_stderr_captured,
    on_abandon,
    one_line,
    quiet_stdout,
    shown_name,
    spooled_stdin,
    stage,
    watched,
)
from .ir_util import register_named_positions
from .penguin_sort import parse_allowing_penguin_sorts

MLIR_BYTECODE_MAGIC = b"ML\xefR"


class InputError(Exception):
    """The input cannot be read as a program; the message is one line, with a location.
    ``diagnostic_lines``: MLIR's every diagnostic behind it, one line each (what
    ``--verify-diagnostics`` checks), when MLIR's parser or verifier refused it."""

    def __init__(self, message: str, diagnostic_lines: list[str] | None = None) -> None:
        super().__init__(message)
        self.diagnostic_lines = diagnostic_lines or [message]


def _refused_by_mlir(err: ir.MLIRError, name: str) -> InputError:
    return InputError(format_mlir_error(err, name), mlir_diagnostic_lines(err, name))


class InputNotFoundError(InputError, FileNotFoundError):
    """The input file does not exist (also a ``FileNotFoundError``)."""


class InputWarning(OneLineWarning):
    """The input was read, but is not all the program it seems to be (the message is one
    line, with a location; the commands print it as it is)."""


class ElidedConstantsWarning(InputWarning):
    """HLO text with ``constant({...})``: XLA's parser made up those values (different
    ones at each read in a process)."""


@dataclass(frozen=True)
class Source:
    name: str  # what diagnostics call the input ("-" for stdin)
    data: bytes


def read_source(path: str, *, chunked: bool = False) -> Source:
    """The input's bytes (``-``: stdin's). ``chunked``: the command runs it chunk by chunk
    (``--split-input-file``), so stdin is kept for a child that goes on after a chunk
    crashed the process (:func:`~penguin_opt.cli_common.spooled_stdin`)."""
    if path == "-":
        read = sys.stdin.buffer.read
        return Source("<stdin>", spooled_stdin(read) if chunked else read())
    name = shown_name(path)
    try:
        with open(path, "rb") as f:
            return Source(name, f.read())
    except FileNotFoundError as err:
        raise InputNotFoundError(f"{name}: error: cannot read input: {err.strerror}") from None
    except OSError as err:
        raise InputError(f"{name}: error: cannot read input: {err.strerror}") from None
    except MemoryError:  # (/dev/zero under a memory limit, say)
        raise InputError(f"{name}: error: cannot read input: out of memory") from None


def format_mlir_error(err: ir.MLIRError, default: str, *, note: bool = True) -> str:
    """MLIR's first error diagnostic as one line: ``file:line:col: error: message``, with
    its first note in parentheses unless ``note`` is False."""
    diagnostics = list(getattr(err, "error_diagnostics", []) or [])
    if not diagnostics:
        text = one_line(err)
        return f"{default}: error: {text}"
    diag = diagnostics[0]
    notes = [one_line(n.message) for n in getattr(diag, "notes", [])] if note else []
    if notes and len(notes[0]) > NOTE_LIMIT:  # "see current operation: <a whole function>"
        notes[0] = notes[0][: NOTE_LIMIT - 4] + " ..."
    extra = f" (note: {notes[0]})" if notes else ""
    return _diagnostic_line(diag, "error", default) + extra


NOTE_LIMIT = 240  # characters of a note in an error line


def mlir_diagnostic_lines(err: ir.MLIRError, default: str) -> list[str]:
    """Every error diagnostic of ``err`` and each of its notes, one line each, as
    ``--verify-diagnostics`` checks them (MLIR's "see current operation" notes left out:
    mlir-opt does not print the op on a diagnostic when it verifies diagnostics)."""
    diagnostics = list(getattr(err, "error_diagnostics", []) or [])
    if not diagnostics:
        return [format_mlir_error(err, default)]
    lines = []
    for diag in diagnostics:
        lines.append(_diagnostic_line(diag, "error", default))
        lines += [
            _diagnostic_line(note, "note", default)
            for note in getattr(diag, "notes", [])
            if not note.message.startswith("see current operation:")
        ]
    return lines


def _diagnostic_line(diag: ir.DiagnosticInfo, severity: str, default: str) -> str:
    """One MLIR diagnostic (or note) as ``file:line:col: severity: message``."""
    where = _where(diag.location, default, diag.message)
    return f"{where}: {severity}: {one_line(diag.message)}"


def _where(loc: ir.Location, default: str, message: str = "") -> str:
    from .passes.base import location_triple_text, op_named_in

    return location_triple_text(str(loc), default, op_named_in(message)) or default


# Deepest bracket nesting accepted in text input. MLIR's parser and passes recurse per
# level; in penguin-opt's command thread (cli_common.STACK_BYTES) 10,000 levels were
# measured to parse, run every pass and print (nested stablehlo.case, array attributes).
MAX_NESTING = 10_000
# +1 for an opening bracket, -1 for a closing one: MLIR's parser recurses into all four
# kinds alike (`tensor<1x tensor<...` too); HLO text's `<` and `>` are no brackets
# (`<=[2]` in a sharding), so it has its own table
_OPEN = np.zeros(256, np.int8)
_OPEN[[ord(c) for c in "([{<"]] = 1
_OPEN[[ord(c) for c in ")]}>"]] = -1
_OPEN_HLO = _OPEN.copy()
_OPEN_HLO[[ord("<"), ord(">")]] = 0
_QUOTE, _BACKSLASH, _DASH, _ANGLE = ord('"'), ord("\\"), ord("-"), ord(">")
# where a chunk may end: not right after a backslash (it escapes the next byte) or a dash
# (`->` is an arrow, not a bracket)
_CUT = re.compile(rb"[^\\-]")
# What the lexers skip, text MLIR never parses brackets in: strings (escapes included;
# one that runs past its line is an error there, so where it ends after that does not
# matter), `//` comments (to the first line end: MLIR ends one at `\r` too) and, in HLO
# text, `/* */` comments. Taking the earliest end of a comment, and a string's closing
# quote wherever it is, can only leave more brackets to count, never fewer.
_SKIPPED = re.compile(rb'"(?:[^"\\]++|\\.)*+"|//[^\n\r]*+', re.S)
_SKIPPED_HLO = re.compile(rb'"(?:[^"\\]++|\\.)*+"|//[^\n\r]*+|/\*.*?\*/', re.S)


def nesting_depth(data: bytes, chunk: int = 1 << 22, *, hlo: bool = False) -> int:
    """The deepest bracket nesting of ``data`` (``([{<``; HLO text: ``([{``) outside
    strings and comments, measured so that it is never less than what the parser reaches:
    a closing bracket with none open is not counted against the next opening one (a
    stray ``>`` of ``>=``), and ``->`` is an arrow. Text with comments has its strings
    and comments removed first (a regular expression, as the lexer reads them); text
    without (most programs) is measured as it is: a bracket is inside a string when an
    odd number of unescaped quotes precede it. Vectorized over about ``chunk`` bytes at a
    time, the running depth and its lowest point carried over."""
    skipped = _SKIPPED_HLO if hlo else _SKIPPED
    comments = data.find(b"/") >= 0 and (b"//" in data or (hlo and b"/*" in data))
    if comments:
        data = skipped.sub(b"", data)
    table = _OPEN_HLO if hlo else _OPEN
    deepest = depth = lowest = 0
    in_string = False
    for start, part in _chunks(data, chunk):
        brackets = np.flatnonzero((table != 0)[part])  # (a bool mask: faster than int8s)
        if not comments:  # strings: by the parity of the unescaped quotes before
            quotes = _unescaped_quotes(part, data.find(b"\\", start, start + part.size) >= 0)
            if quotes.size and brackets.size:
                inside = (np.searchsorted(quotes, brackets) & 1).astype(bool)
                brackets = brackets[inside if in_string else ~inside]
            elif in_string:  # the whole chunk inside a string
                brackets = brackets[:0]
            in_string ^= bool(quotes.size & 1)
        if not brackets.size:
            continue
        chars = part[brackets]
        step = table[chars]
        if not hlo:  # `->`: its `>` closes nothing (a chunk never ends on the `-`)
            step[(chars == _ANGLE) & (part[np.maximum(brackets - 1, 0)] == _DASH)] = 0
        running = np.cumsum(step, dtype=np.int64) + depth
        floor = np.minimum.accumulate(running)
        np.minimum(floor, lowest, out=floor)
        deepest = max(deepest, int((running - floor).max()))
        depth, lowest = int(running[-1]), int(floor[-1])
    return deepest


def _chunks(data: bytes, chunk: int) -> Iterator[tuple[int, np.ndarray]]:
    """(offset, uint8 array) of ``data`` in pieces of about ``chunk`` bytes, never cut
    after a ``\\`` or a ``-``."""
    raw = np.frombuffer(data, np.uint8)
    start = 0
    while start < raw.size:
        end = min(start + chunk, raw.size)
        if end < raw.size and data[end - 1] in b"\\-":
            cut = _CUT.search(data, end)
            end = cut.start() + 1 if cut else raw.size
        yield start, raw[start:end]
        start = end


def _unescaped_quotes(part: np.ndarray, backslashes: bool) -> np.ndarray:
    """The offsets of the quotes of ``part`` not escaped: after an even run of
    backslashes (``"\\\\"`` ends its string; ``"\\""`` does not); ``backslashes``: whether
    ``part`` has any."""
    quotes = np.flatnonzero(part == _QUOTE)
    if not quotes.size or not backslashes:
        return quotes
    offsets = np.arange(part.size)
    last_other = np.maximum.accumulate(np.where(part == _BACKSLASH, -1, offsets))
    before = quotes - 1
    run = np.where(before >= 0, before - last_other[np.maximum(before, 0)], 0)
    return quotes[(run & 1) == 0]


def _check_nesting(source: Source, *, hlo: bool = False) -> None:
    depth = nesting_depth(source.data, hlo=hlo)
    if depth > MAX_NESTING:
        raise InputError(
            f"{source.name}: error: nesting is {depth} levels deep, more than "
            f"the {MAX_NESTING} penguin-opt accepts"
        )


# What XLA's HLO lexer skips before the first token: white space, // and /* */ comments
_HLO_SKIPPED = re.compile(r"(?:\s+|//[^\n]*|/\*.*?\*/)*+", re.S)  # (possessive: linear)
_HLO_FIRST_TOKEN = re.compile(r"(?:HloModule|ENTRY)\b")
# An instruction's definition: `[ROOT] [%]name = shape opcode(...)`, one per line
_HLO_INSTRUCTION = re.compile(r"^([ \t]*(?:ROOT[ \t]+)?)(%?([A-Za-z_][\w.\-]*))[ \t]*=", re.M)
# a module without its header: computations (``name [(signature)] {``) of instructions
# (``[ROOT] name = f32[...] opcode(...)``: no MLIR type is written `f32[`)
_HLO_COMPUTATION = re.compile(r"%?[A-Za-z_][\w.\-]*\s*[({]")
_HLO_INSTRUCTION_LINE = re.compile(_HLO_INSTRUCTION.pattern + r"[ \t]*\(?[a-z][a-z0-9]*\[", re.M)


# an HloProto / HloModuleProto / HloSnapshot in protobuf text format (XLA's translate
# tests), after `#` comments
_TEXT_PROTO = re.compile(
    r"(?:\s+|#[^\n]*)*+(hlo_module|hlo_snapshot|hlo|computations|name|entry_computation_name)"
    r"\s*(?:\{|:\s*\")"
)


def _looks_like_hlo_text(text: str) -> bool:
    """HLO text as XLA's parser takes it: ``HloModule ...`` or an ``ENTRY`` computation
    first, or computations without the module header (the last one is the entry);
    comments and white space before them (e.g. the RUN lines of XLA's tests)."""
    start = _HLO_SKIPPED.match(text).end()
    if _HLO_FIRST_TOKEN.match(text, start) or text.startswith("/*", start):
        return True  # (an unclosed /* comment: MLIR has none, XLA says where it starts)
    first = _HLO_COMPUTATION.match(text, start)
    return (
        first is not None
        and not text.startswith(("module", "builtin.module"), start)  # MLIR's `module {`
        and _HLO_INSTRUCTION_LINE.search(text, first.end()) is not None
    )


def parse_source(source: Source) -> ir.Operation:
    """Parse ``source`` into a ``builtin.module`` in the current context."""
    from . import formats

    data = source.data
    if data.startswith(MLIR_BYTECODE_MAGIC):
        return _parse_bytecode(source)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        try:
            return _parse_binary(source)
        except _NotAProgram:
            if _reads_as_text(data):  # text with a stray byte, not a proto
                raise InputError(_not_utf8(source.name, data, err)) from None
            raise
    if "\x00" in text:
        return _parse_binary(source)
    if not text or text.isspace():  # (no copy of the text, as strip() would make)
        raise InputError(f"{source.name}: error: the input is empty")
    if formats.is_graph_dump(data):
        graphs = formats.programs_in(source)
        if len(graphs) != 1:
            raise InputError(
                f"{source.name}: error: a torch-xla dump of {len(graphs)} graphs: name an "
                "output directory (-o DIR) to write each graph's program"
            )
        source = graphs[0].source
        text = source.data.decode("utf-8")
        error = formats.graph_format_error(source, text)
        if error is not None:
            raise error
    if _looks_like_hlo_text(text):
        _check_nesting(source, hlo=True)
        return _parse_hlo_text(source, text)
    _check_nesting(source)
    proto = _TEXT_PROTO.match(text)
    if proto is not None:  # MLIR's parser would say "invalid attribute name" at a `#`
        line = text.count("\n", 0, proto.start(1)) + 1
        column = proto.start(1) - text.rfind("\n", 0, proto.start(1))
        raise InputError(
            f"{source.name}:{line}:{column}: error: an HLO proto in protobuf text format "
            f"('{proto.group(1)}'), which penguin-opt does not read: give it HLO text "
            "(HloModule ...), a binary HloModuleProto or HloProto, or MLIR"
        )
    try:
        return _as_module(parse_allowing_penguin_sorts(text, source.name), source)
    except ir.MLIRError as err:
        raise _refused_by_mlir(err, source.name) from None
    except (ValueError, MemoryError, RuntimeError) as err:  # the parser's own limits
        raise InputError(_parser_failure(err, source.name)) from None


def _parser_failure(err: BaseException, name: str) -> str:
    """One line for what MLIR's parser raises besides diagnostics (e.g. "SmallVector
    unable to grow" for a dimension number of 2^32, bad_alloc)."""
    message = one_line(err, 300) or type(err).__name__
    return f"{name}: error: cannot parse: {message}"


def _as_module(op: ir.Operation, source: Source) -> ir.Operation:
    op = op.operation
    if op.name != "builtin.module":
        raise InputError(f"{source.name}: error: expected a builtin.module, found '{op.name}'")
    return op


def _parse_bytecode(source: Source) -> ir.Operation:
    # A portable artifact names its producer (StableHLO_vX.Y.Z) in the bytecode header;
    # trying to deserialize anything else would print MLIR's diagnostics to stderr.
    if b"StableHLO_v" in source.data[:32]:
        try:
            return _deserialized(source)  # (its diagnostics: the parse below reports)
        except Exception:  # not a portable artifact after all: ordinary MLIR bytecode
            pass
    try:
        # (a diagnostic that is not UTF-8, from a corrupt bytecode file, ends the process
        # inside the bindings' handler: its last words go to the watching process, if any;
        # else to stderr, where they are all there is to tell)
        with native_stderr_captured() if watched() else contextlib.nullcontext():
            parsed = parse_allowing_penguin_sorts(source.data, source.name)
        module = _as_module(parsed, source)
    except ir.MLIRError as err:
        refused = _refused_by_mlir(err, source.name)
        line = str(refused) + _newer_producer(source.data)
        if _ENDS_EARLY.search(line):
            line += " (the bytecode ends before its sections do: a truncated or corrupted file?)"
        raise InputError(line, refused.diagnostic_lines) from None
    except (ValueError, MemoryError, RuntimeError) as err:  # the parser's own limits
        raise InputError(_parser_failure(err, source.name)) from None
    if not _holds_vhlo(module):
        return module
    # A portable artifact whose header names another producer (jax's exports of 2023-2025
    # write "MLIRxxx-trunk"): its VHLO ops become StableHLO as any artifact's do.
    try:
        return _deserialized(source)
    except Exception as err:  # MLIR's error (its diagnostics captured)
        raise InputError(
            f"{source.name}: error: a StableHLO portable artifact (VHLO) this StableHLO "
            f"cannot read: {one_line(err)}{_newer_producer(source.data)}"
        ) from None


# MLIR's bytecode reader on data that stops short (llvm-project's BytecodeReader.cpp).
_ENDS_EARLY = re.compile(
    r"attempting to parse (\d+ bytes when only \d+ remain|a byte at the end of the bytecode)"
    r"|malformed null-terminated string, no null character found"
)
_PRODUCER = re.compile(rb"StableHLO_v(\d+)\.(\d+)\.(\d+)|MLIR(\d+)[0-9A-Za-z.\-]*")


def _own_bytecode_header() -> bytes:
    """The first bytes of bytecode this jaxlib writes (``ML\xefR``, version, producer)."""
    module = ir.Module.create(loc=ir.Location.unknown())
    buffer = io.BytesIO()
    module.operation.write_bytecode(buffer)
    return buffer.getvalue()[:64]


def _newer_producer(data: bytes) -> str:
    """What to add to a bytecode parse error when the header names a producer newer than
    this jaxlib: a portable artifact's StableHLO version against the newest it reads, or
    the MLIR version of plain bytecode (which only the same MLIR reads for sure)."""
    found = _PRODUCER.search(data[:64])
    if found is None:
        return ""
    if found.group(1) is None:
        ours = _PRODUCER.search(_own_bytecode_header())
        if ours is None or ours.group(4) is None or int(found.group(4)) <= int(ours.group(4)):
            return ""
        return (
            f" (written by {found.group(0).decode()}, newer than this jaxlib's "
            f"{ours.group(0).decode()}: plain MLIR bytecode reads only in an MLIR as new as "
            "its writer's; a StableHLO portable artifact, e.g. jax.export's, reads in older "
            "versions)"
        )
    from jaxlib.mlir.dialects import stablehlo

    version = tuple(int(found.group(i)) for i in (1, 2, 3))
    try:
        newest = tuple(int(x) for x in stablehlo.get_current_version().split("."))
    except (AttributeError, ValueError):
        return ""
    if version <= newest:
        return ""
    return (
        f" (the artifact is StableHLO v{'.'.join(map(str, version))}, newer than "
        f"v{'.'.join(map(str, newest))}, the newest this jaxlib reads: export it for an "
        "older target, or use a newer jax/jaxlib)"
    )


def _deserialized(source: Source) -> ir.Operation:
    """The StableHLO module of a portable artifact; MLIR's diagnostics are captured."""
    from jaxlib.mlir.dialects import stablehlo

    with native_stderr_captured():
        return stablehlo.deserialize_portable_artifact(ir.Context.current, source.data).operation


def _holds_vhlo(module: ir.Operation) -> bool:
    """Whether the module's top level holds VHLO ops (``vhlo.func_v1``, ...)."""
    return any(
        op.operation.name.startswith("vhlo.") for op in module.regions[0].blocks[0].operations
    )


def _import_hlo(proto: bytes, source: Source) -> ir.Operation:
    """The StableHLO module of an HLO module proto."""
    from ._compat import hlo_to_stablehlo

    try:
        with native_stderr_captured():  # XLA logs through absl to stderr as well
            bytecode = hlo_to_stablehlo(proto)
    except Exception as err:  # XLA status errors
        message = one_line(err)
        raise InputError(f"{source.name}: error: cannot import HLO: {message}") from None
    try:
        return ir.Module.parse(bytecode).operation
    except ir.MLIRError as err:  # the verifier's, at the instruction (see parse_source)
        # without its note, which names the bytecode the importer made, not the input
        raise InputError(format_mlir_error(err, source.name, note=False)) from None


# An HLO constant printed without its values (XLA elides large ones unless told not to)
_ELIDED_CONSTANT = re.compile(r"\bconstant\(\{\.\.\.\}\)")


def _parse_hlo_text(source: Source, text: str) -> ir.Operation:
    from ._compat import hlo_text_to_proto

    try:
        with native_stderr_captured():  # XLA logs through absl to stderr as well
            proto = hlo_text_to_proto(text)
    except Exception as err:
        raise InputError(_hlo_syntax_error(source.name, str(err))) from None
    # ops are named after their instructions (loc("add.3")): diagnostics about them are
    # placed at the instruction's line when they are rendered
    register_named_positions(source.name, text, lambda: _hlo_instruction_positions(text))
    module = _import_hlo(proto, source)
    _warn_elided_constants(source.name, text)
    return module


# XLA's parser reports each error as "was parsing LINE:COL: error: MESSAGE" and the line
_HLO_ERROR = re.compile(r"was parsing (\d+):(\d+): error: ([^\n]*)")


def _hlo_syntax_error(name: str, message: str) -> str:
    """XLA's parse errors as one line at the first one's position: its messages in order
    (XLA adds one for each enclosing construct that failed), the source lines left out."""
    found = _HLO_ERROR.findall(message)
    if not found:
        return f"{name}: error: invalid HLO text: {one_line(message)}"
    line, column = found[0][:2]
    messages = dict.fromkeys(m.strip().rstrip(":") for *_, m in found)
    return f"{name}:{line}:{column}: error: invalid HLO text: {one_line('; '.join(messages))}"


def _hlo_instruction_positions(text: str) -> dict[str, tuple[int, int]]:
    """(line, column) of each instruction name defined once in HLO ``text`` (XLA's
    importer names each op after its instruction: ``loc("add.3")``, or after its
    metadata's op_name when it has one, which then maps to the instruction of the one
    line that has it, if only one does; ``op_name\0opcode`` to the one instruction of
    that op_name and opcode, if only one: see ``ir_util.named_position``). XLA's parser
    renames a name defined twice (``p0`` in two computations: the second becomes ``p0.1``,
    and a literal ``p0.1`` then ``p0.2``), so no name whose root (the name without a
    ``.N`` suffix) is defined twice is trusted."""
    positions: dict[str, tuple[int, int]] = {}
    op_names: dict[str, tuple[int, int] | None] = {}  # None: on several instructions
    by_opcode: dict[str, tuple[int, int] | None] = {}  # "op_name\0opcode", None: several
    repeated: set[str] = set()
    line, counted = 1, 0
    for match in _HLO_INSTRUCTION.finditer(text):
        line += text.count("\n", counted, match.start())
        counted = match.start()
        key = match.group(3)
        if key in positions:
            repeated.add(_NUMBERED.sub("", key))
        position = positions[key] = (line, len(match.group(1)) + 1)
        end = text.find("\n", match.end())
        metadata = _OP_NAME.search(text, match.end(), len(text) if end < 0 else end)
        if metadata is not None:
            op_name = metadata.group(1)
            op_names[op_name] = None if op_name in op_names else position
            opcode = _OPCODE.search(text, match.end(), metadata.start())
            if opcode is not None:
                key = f"{op_name}\0{opcode.group(1)}"
                by_opcode[key] = None if key in by_opcode else position
    if repeated:
        positions = {k: v for k, v in positions.items() if _NUMBERED.sub("", k) not in repeated}
    for op_name, position in op_names.items():
        if position is None or positions.get(op_name, position) != position:
            positions.pop(op_name, None)  # a name that could be either: neither
        else:
            positions[op_name] = position
    positions.update((k, v) for k, v in by_opcode.items() if v is not None)
    return positions


# the op_name of an instruction's metadata: XLA's importer names the op after it instead
# of the instruction (loc("jit(f)/dot_general"(...source positions...)))
_OP_NAME = re.compile(r'metadata=\{[^\n]*?\bop_name="([^"\\\n]*)"')
# an instruction's opcode: the first name before a "(" after the "=" (its shape has none)
_OPCODE = re.compile(r"([a-z][a-z0-9\-]*)\(")


_NUMBERED = re.compile(r"\.\d+$")


def _warn_elided_constants(name: str, text: str) -> None:
    """XLA's HLO parser reads ``constant({...})`` as a constant of made-up values (a
    process-wide counter's, as bits: 0, 1, 2, ... at the first read, other ones at the
    next): say so, at the first one, as the output will hold those values."""
    starts = [m.start() for m in _ELIDED_CONSTANT.finditer(text)]
    if not starts:
        return
    line = text.count("\n", 0, starts[0]) + 1
    column = starts[0] - text.rfind("\n", 0, starts[0])
    constants = f"{len(starts)} constants" if len(starts) > 1 else "1 constant"
    warnings.warn(
        ElidedConstantsWarning(
            f"{name}:{line}:{column}: warning: {constants} with elided values "
            "(constant({...})): XLA's HLO parser fills them with placeholder values, not the "
            "model's, and so will the output (dump with XLA_FLAGS=--xla_dump_large_constants, "
            "or read the HLO proto: TensorFlow's stage='hlo_serialized')"
        ),
        stacklevel=2,
    )


def _parse_binary(source: Source) -> ir.Operation:
    """A jax.export blob, an HloProto (XLA's ``*.hlo.pb`` dumps) or an HloModuleProto."""
    from . import formats

    module = formats.jax_export_module(source)
    if module is not None:
        return _parse_bytecode(Source(source.name, module))
    return _parse_hlo_proto(Source(source.name, formats.hlo_module_payload(source.data)))


class _NotAProgram(InputError):
    """No reader takes the bytes (a text that failed to decode is said so instead)."""


_CONTROL_BYTES = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _reads_as_text(data: bytes) -> bool:
    """Whether bytes that are not all UTF-8 still read as text: no control bytes (a proto's
    field tags and lengths are, a text's Latin-1 letters are not) and a printable one."""
    return _CONTROL_BYTES.search(data) is None and not data.isspace()


def _not_utf8(name: str, data: bytes, err: UnicodeDecodeError) -> str:
    """Where the first byte that is not UTF-8 is, as MLIR counts (columns in bytes)."""
    line = data.count(b"\n", 0, err.start) + 1
    column = err.start - data.rfind(b"\n", 0, err.start)
    return (
        f"{name}:{line}:{column}: error: byte 0x{data[err.start]:02x} is not UTF-8: "
        "penguin-opt reads MLIR and HLO text as UTF-8, comments too (save it as UTF-8)"
    )


def _parse_hlo_proto(source: Source) -> ir.Operation:
    from ._compat import hlo_module_class

    try:
        with native_stderr_captured():  # absl logs on some garbage ("E0000 ...")
            hlo_module_class().from_serialized_hlo_module_proto(source.data)
    except Exception:
        raise _NotAProgram(
            f"{source.name}: error: not a program: not MLIR text or bytecode, HLO text, an "
            "HLO (module) proto, a jax.export blob or a torch-xla graph dump"
        ) from None
    return _import_hlo(source.data, source)


def module_text(
    module: ir.Operation,
    *,
    generic: bool = False,
    debug_info: bool = False,
    large_elements_limit: int | None = None,
    binary: bool = False,
    local_scope: bool = False,
    source_name: str | None = None,
) -> str | bytes:
    """The module as MLIR text (penguin-form sorts print in generic form). The whole module
    prints in generic form when the pretty form would not parse back (see
    ``_pretty_form_is_lossy``). ``large_elements_limit``: elide constants with more
    elements (``--mlir-elide-elementsattrs-if-larger``; such text does not read back).
    ``local_scope``: attributes, types and locations written where they are used, not as
    aliases at the top (``--mlir-print-local-scope``). ``source_name``: the input's name,
    written for the buffer name ``-`` that MLIR gives the text of an input without a
    ``module`` around it (as mlir-opt names its locations after the file).
    ``binary``: the text as UTF-8 bytes, what a file gets. Printed as bytes either way
    (the printer's chunks are not decoded one by one: a quarter less time for a 10 MB
    module), then decoded in one go; :class:`UnprintableModuleError` if they are not
    UTF-8 (an attribute holding raw bytes prints them as they are)."""
    generic = generic or _pretty_form_is_lossy(module)
    data = module.get_asm(
        binary=True,
        print_generic_op_form=generic,
        assume_verified=True,
        enable_debug_info=debug_info,
        large_elements_limit=large_elements_limit,
        use_local_scope=local_scope,
    )
    if debug_info and source_name not in (None, "-"):
        data = data.replace(b'loc("-":', b"loc(" + _mlir_string(source_name) + b":")
    try:
        text = data.decode()
    except UnicodeDecodeError as err:
        raise UnprintableModuleError(
            f"cannot print the module as text: byte {err.start:,} of its text is not UTF-8 "
            "(an attribute holding raw bytes?); no text of it would read back"
        ) from None
    return data if binary else text


def _mlir_string(text: str) -> bytes:
    """``text`` as an MLIR string literal, escaped as MLIR prints one (LLVM's
    ``printEscapedString``: ``\\`` for a backslash, ``\\XX`` for a quote or a byte that
    is not printable ASCII)."""
    out = bytearray(b'"')
    for byte in text.encode():
        if byte == 0x5C:
            out += b"\\\\"
        elif byte == 0x22 or not 0x20 <= byte < 0x7F:
            out += b"\\%02X" % byte
        else:
            out.append(byte)
    return bytes(out + b'"')


class UnprintableModuleError(Exception):
    """The module's printed text is not UTF-8 (the message is one line, without the
    file's name)."""


def module_bytecode(module: ir.Operation) -> bytes:
    """The module as MLIR bytecode (``--emit-bytecode``; see ``penguin_sort.to_bytecode``
    for penguin-form sorts)."""
    from .penguin_sort import to_bytecode

    return to_bytecode(module)


def _pretty_form_is_lossy(module: ir.Operation) -> bool:
    """A while whose block arguments have other (compatible) types than its operands, e.g.
    ``tensor<?xf32>`` for a ``tensor<4xf32>`` operand, verifies, but its custom syntax
    prints one type for both and does not parse back (StableHLO's and MHLO's printers)."""
    from .ir_util import ops_named

    for op in ops_named(module, ("stablehlo.while", "mhlo.while")):
        operand_types = [v.type for v in op.operands]
        for region in op.regions:
            for block in region.blocks:
                if [a.type for a in block.arguments] != operand_types:
                    return True
    return False


class OutputError(Exception):
    """The output cannot be written; the message is one line naming the output."""


def _write_stdout(data: str | bytes) -> None:
    """All of ``data`` to stdout, or BrokenPipeError. Python's buffered write of more than
    a pipe holds returns a short count, and swallows the EPIPE, when the reader goes away
    in the middle (``... | head``): so the bytes go to the descriptor, until all are out."""
    payload = data.encode() if isinstance(data, str) else data
    sys.stdout.flush()
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a file (a test's capture)
        sys.stdout.write(payload.decode("utf-8", "replace"))
        sys.stdout.flush()
        return
    view = memoryview(payload)
    while view:
        view = view[os.write(fd, view) :]


def write_output(path: str, data: str | bytes) -> None:
    """Write the tool's output to ``path`` without ever leaving a partial file there.

    ``-`` and ``/dev/stdout`` are stdout. A regular file (new or existing) is replaced
    atomically: a temporary file in the same directory, then a rename; an existing file
    keeps its permission bits, a new one gets those the umask allows. Anything else the
    path names (a character device such as ``/dev/null``, a FIFO, a symlink) is written
    through, never replaced: a device stays a device and a symlink's target keeps its
    inode. Failures raise :class:`OutputError`.
    """
    payload = data.encode() if isinstance(data, str) else data
    try:
        if path in ("-", "/dev/stdout"):
            if sys.stdout is None:  # started with stdout closed (`>&-`)
                raise OSError(9, "standard output is closed")
            _write_stdout(payload)
            return
        if os.path.islink(path) or (os.path.exists(path) and not os.path.isfile(path)):
            if os.path.isdir(path):
                raise IsADirectoryError(21, "Is a directory")
            with open(path, "wb") as f:  # write through (devices, FIFOs, symlinks)
                f.write(payload)
            return
        _replace_atomically(path, payload)
    except BrokenPipeError:
        raise
    except OSError as err:
        reason = err.strerror or str(err)
        if path in ("-", "/dev/stdout"):
            quiet_stdout()  # no second failure when Python flushes stdout at exit
        raise OutputError(f"{shown_name(path)}: error: cannot write output: {reason}") from None


def _replace_atomically(path: str, payload: bytes) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    try:
        mode = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    with _TEMPORARY_LOCK:  # no temporary is made once the command is being stopped
        if _STOPPING:
            raise KeyboardInterrupt
        try:
            fd, tmp = tempfile.mkstemp(prefix=temporary_prefix(path), suffix=_TMP, dir=directory)
        except OSError as err:
            if not os.path.isdir(directory):
                raise
            raise OSError(  # e.g. in /proc: say why, not just "No such file"
                err.errno, f"cannot create a file in {directory} to replace it ({err.strerror})"
            ) from None
        _TEMPORARY.add(tmp)
        stage(temporary=tmp)  # removed by the supervising parent if the process is killed
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    finally:
        _TEMPORARY.discard(tmp)
        stage(done=tmp)


_TMP = ".tmp"
_RANDOM = re.compile(r"[a-z0-9_]{8}")  # what tempfile puts between prefix and suffix


def temporary_prefix(path: str) -> str:
    """The name prefix of the temporaries an output to ``path`` is written through
    (``PREFIX`` + 8 random characters + ``.tmp``; a batch removes those of a worker that
    died writing one)."""
    return f".penguin-opt-{os.path.basename(path)}."


def remove_temporaries(path: str) -> None:
    """Remove what a killed writer of ``path`` may have left: the temporaries of exactly
    that name (not those of ``path.x``, whose prefix begins the same)."""
    directory = os.path.dirname(os.path.abspath(path))
    prefix = temporary_prefix(path)
    with contextlib.suppress(OSError):
        for name in os.listdir(directory):
            middle = name[len(prefix) : -len(_TMP)]
            if name.startswith(prefix) and name.endswith(_TMP) and _RANDOM.fullmatch(middle):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(directory, name))


_TEMPORARY: set[str] = set()  # temporary outputs being written (removed on SIGINT)
_TEMPORARY_LOCK = threading.Lock()
_STOPPING = False


@on_abandon
def _remove_temporary() -> None:
    global _STOPPING
    with _TEMPORARY_LOCK:
        _STOPPING = True  # the command's thread runs on until the process exits
        for tmp in list(_TEMPORARY):
            with contextlib.suppress(OSError):
                os.unlink(tmp)


__all__ = [
    "MAX_NESTING",
    "MLIR_BYTECODE_MAGIC",
    "ElidedConstantsWarning",
    "InputError",
    "InputNotFoundError",
    "InputWarning",
    "OutputError",
    "Source",
    "UnprintableModuleError",
    "format_mlir_error",
    "module_bytecode",
    "module_text",
    "nesting_depth",
    "parse_source",
    "read_source",
    "write_output",
]
