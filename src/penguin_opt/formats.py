"""What a file holds, told by its bytes: the program formats penguin-opt reads.

One file holds one program, except a torch-xla graph dump (``XLA_SAVE_TENSORS_FILE``),
which holds one per ``## BEGIN_GRAPH`` / ``## END_GRAPH`` section. :func:`programs_in`
splits a file into its programs (a :class:`~penguin_opt.io.Source` each);
:func:`penguin_opt.io.parse_source` parses one. Formats, in the order they are told apart:

* MLIR bytecode and StableHLO portable artifacts (``ML\\xefR`` magic);
* text: a torch-xla dump (``## BEGIN_GRAPH`` lines), HLO text (``HloModule ...``), MLIR;
* binary: a ``jax.export`` serialized blob (``Exported.serialize()``, a flatbuffer whose
  StableHLO module is read through ``jax.export.deserialize``), an ``HloProto`` (XLA's
  ``--xla_dump_hlo_as_proto`` files ``*.hlo.pb``: the module in field 1), or an
  ``HloModuleProto`` (neuronx-cc's ``model.hlo_module.pb``).

:func:`companion_reason` names the files a compile cache or dump holds next to its
programs (NEFFs, flags, logs, LLVM IR, ...), which a directory walk lists as skipped.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass

from .io import InputError, Source

__all__ = [
    "Program",
    "companion_reason",
    "hlo_module_payload",
    "jax_export_module",
    "programs_in",
]

_BEGIN = "## BEGIN_GRAPH"
_BEGIN_LINE = re.compile(rb"(?m)^[ \t]*## BEGIN_GRAPH[ \t\r]*$")
_END = "## END_GRAPH"
_GRAPH_HASH = re.compile(r"^Graph Hash: *(\S+)\s*$")


@dataclass(frozen=True)
class Program:
    """One program of a file: its source, and its place in a multi-graph dump."""

    source: Source
    graph: int | None = None  # position in a torch-xla dump (0-based), None: whole file
    graph_hash: str | None = None  # torch-xla's "Graph Hash:" of that graph, if written


def is_graph_dump(data: bytes) -> bool:
    """Whether ``data`` is a torch-xla graph dump (``XLA_SAVE_TENSORS_FILE``)."""
    head = data[: 1 << 20]
    # the substring test first: a regex search of a megabyte costs 5 ms, this 0.2
    return (
        b"## BEGIN_GRAPH" in head and b"\x00" not in head and _BEGIN_LINE.search(head) is not None
    )


def programs_in(source: Source) -> list[Program]:
    """The programs ``source`` holds: one, or each graph of a torch-xla dump."""
    if not is_graph_dump(source.data):
        return [Program(source)]
    try:
        text = source.data.decode("utf-8")
    except UnicodeDecodeError:
        return [Program(source)]
    return _graphs(source.name, text) or [Program(source)]


def _graphs(name: str, text: str) -> list[Program]:
    """Each ``## BEGIN_GRAPH`` section of a torch-xla dump as its own program. Its text is
    preceded by as many empty lines as the dump has before it, so that the line numbers
    of a diagnostic are the dump's. Older torch-xla versions end a graph with
    ``## END_GRAPH``; newer ones write ``Graph Hash: H`` and then ``## END_GRAPH``."""
    programs: list[Program] = []
    lines = text.split("\n")
    start: int | None = None
    for number, line in enumerate(lines):
        stripped = line.strip()
        if stripped == _BEGIN:
            if start is not None:  # a section that never ended
                programs.append(_graph(name, lines, start, number, len(programs)))
            start = number + 1
        elif stripped == _END and start is not None:
            programs.append(_graph(name, lines, start, number, len(programs)))
            start = None
    if start is not None:
        programs.append(_graph(name, lines, start, len(lines), len(programs)))
    return programs


def _graph(name: str, lines: list[str], start: int, end: int, index: int) -> Program:
    body = lines[start:end]
    graph_hash = None
    for i in range(len(body) - 1, -1, -1):
        if not body[i].strip():
            continue
        match = _GRAPH_HASH.match(body[i].strip())
        if match:
            graph_hash = match.group(1)
            body = body[:i]
        break
    text = "\n" * start + "\n".join(body) + "\n"
    return Program(Source(f"{name}#graph{index}", text.encode()), index, graph_hash)


def graph_format_error(source: Source, text: str) -> InputError | None:
    """The error for a torch-xla graph in a format that is no program (its IR text or
    dot), None for HLO or StableHLO text."""
    first = text.lstrip().split("\n", 1)[0]
    if first.startswith("IR {") or first.startswith("digraph"):
        kind = "IR text" if first.startswith("IR") else "dot graph"
        return InputError(
            f"{source.name}: error: this graph is torch-xla's {kind}, not a program: dump "
            "with XLA_SAVE_TENSORS_FMT=hlo (or stablehlo)"
        )
    return None


# -- binary formats -------------------------------------------------------------------


def _varint(data: bytes, i: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if i >= len(data) or shift > 63:
            raise ValueError("truncated varint")
        byte = data[i]
        i += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return result, i


def _fields(data: bytes) -> list[tuple[int, int, int, int]] | None:
    """The top-level protobuf fields of ``data`` as (number, wire type, start, end) of each
    value, or None if ``data`` is not a well-formed protobuf message."""
    fields = []
    i = 0
    try:
        while i < len(data):
            key, i = _varint(data, i)
            number, wire = key >> 3, key & 7
            if number == 0:
                return None
            if wire == 0:
                _, j = _varint(data, i)
            elif wire == 1:
                j = i + 8
            elif wire == 2:
                length, i = _varint(data, i)
                j = i + length
            elif wire == 5:
                j = i + 4
            else:
                return None
            if j > len(data):
                return None
            fields.append((number, wire, i, j))
            i = j
    except ValueError:
        return None
    return fields


def hlo_module_payload(data: bytes) -> bytes:
    """The ``HloModuleProto`` inside an ``HloProto`` (``hlo_module = 1``, beside an optional
    ``buffer_assignment = 3``), else ``data`` itself. An ``HloModuleProto`` never has this
    shape: its field 1 is the module's name, and it has computations (field 3) too."""
    fields = _fields(data)
    if not fields or any(n not in (1, 3) or w != 2 for n, w, _, _ in fields):
        return data
    modules = [(s, e) for n, _, s, e in fields if n == 1]
    if len(modules) != 1:
        return data
    start, end = modules[0]
    inner = _fields(data[start:end])
    # an HloModuleProto: a name (1) and at least one computation (3)
    if not inner or not any(n == 3 and w == 2 for n, w, _, _ in inner):
        return data
    return data[start:end]


def looks_like_flatbuffer(data: bytes) -> bool:
    """A flatbuffer begins with the offset of its root table, within the buffer."""
    if len(data) < 16:
        return False
    (root,) = struct.unpack_from("<I", data, 0)
    return 8 <= root < len(data) and root % 4 == 0


def jax_export_module(source: Source) -> bytes | None:
    """The StableHLO module (portable artifact bytecode) of a ``jax.export`` blob, or None
    if ``source`` is not one. Raises :class:`InputError` for a blob jax cannot read
    (e.g. one serialized by a newer jax)."""
    if not looks_like_flatbuffer(source.data):
        return None
    try:
        from jax.export import deserialize
    except ImportError:  # pragma: no cover - jax is a dependency
        return None
    try:
        exported = deserialize(bytearray(source.data))
    except ImportError as err:  # flatbuffers missing: jax's own message
        raise InputError(f"{source.name}: error: cannot read a jax.export blob: {err}") from None
    except Exception:  # not a flatbuffer after all (struct.error, IndexError, ...)
        return None
    serialized = getattr(exported, "mlir_module_serialized", None)
    if not serialized:
        return None
    return bytes(serialized)


# -- files next to the programs -------------------------------------------------------

# name pattern -> what the file is (a directory walk lists it as skipped, with this)
_COMPANIONS: tuple[tuple[re.Pattern, str], ...] = tuple(
    (re.compile(pattern), what)
    for pattern, what in (
        (r"\.neff$", "a Neuron executable (NEFF)"),
        (r"\.(json|yaml|yml|toml|ini|cfg)$", "a configuration or metadata file"),
        (r"\.(log|txt\.log)$|^log-neuron-cc\.txt$", "a log"),
        (r"\.(done|lock|flag)$", "a marker file"),
        (r"\.(ll|o|so|a|s|ptx|cubin)$", "compiled code (LLVM IR, objects)"),
        (r"\.(html|dot|svg|png|csv|md|py|sh)$", "not a program (by its name)"),
        (r"\.debug_options$", "XLA's debug options"),
        (
            r"-memory-usage-report\.pb$|buffer-assignment\.txt$|memory-usage-report\.txt$",
            "an XLA memory report",
        ),
        (r"^(compile_options|topology)\.(pb|textproto)$", "XLA compile options or topology"),
        (
            r"-(pre|post)-(optimization|lowering)\.mlir$",
            "XLA's backend kernel IR (the CPU/GPU code generator's, not a program)",
        ),
        (
            r"after_optimizations.*\.(hlo\.pb|txt|pb)$",
            "XLA's module after its backend optimizations (the before_optimizations file is "
            "the program)",
        ),
        (r"\.(neff|ntff|pb\.gz|tar|tgz|zip|gz)$", "an archive or trace"),
    )
)


def companion_reason(name: str) -> str | None:
    """Why a directory walk skips the file called ``name`` (hidden files, and the files
    compile caches and dumps keep next to their programs), None if it may be a program."""
    if name.startswith("."):
        return "a hidden file"
    for pattern, what in _COMPANIONS:
        if pattern.search(name):
            return what
    return None
