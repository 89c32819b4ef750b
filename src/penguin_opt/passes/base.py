"""Pass, option and statistics plumbing shared by every penguin-opt pass.

A pass is a small frozen dataclass: ``name`` is its kebab-case pipeline name, its fields
are its options (spelled kebab-case in pipelines, ``name{opt=value other=value}`` as in
mlir-opt), and ``run`` transforms a ``builtin.module``.
"""

from __future__ import annotations

import dataclasses
import enum
import re
import shlex
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from jaxlib.mlir import ir

from ..cli_common import shown_name
from ..ir_util import location_triple

_T = TypeVar("_T")


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    REMARK = "remark"


@dataclass(frozen=True)
class Diagnostic:
    severity: Severity
    message: str
    location: str  # str(ir.Location), kept as text so it outlives the IR
    kind: str | None = None  # the op's name, where the diagnostic is about one

    def render(self, default_file: str = "-") -> str:
        where = location_triple_text(self.location, default_file, self.kind)
        prefix = f"{where}: " if where else f"{default_file}: "
        return f"{prefix}{self.severity.value}: {self.message}"


_OP_IN_MESSAGE = re.compile(r"'([\w$]+\.[\w$.]+)' op ")


def op_named_in(message: str) -> str | None:
    """The op an MLIR diagnostic is about (``'stablehlo.sort' op ...``), if it says."""
    found = _OP_IN_MESSAGE.match(message)
    return found.group(1) if found else None


def location_triple_text(
    loc_text: str, default_file: str = "-", kind: str | None = None
) -> str | None:
    """``file:line:col`` of a location's text; MLIR's nameless buffer ``-`` -> default_file;
    a location named after an HLO instruction (``loc("add.3")``, inlined:
    ``loc(callsite("add.3" at "call.1"))``, or after its metadata's op_name, with the
    Python source positions inside) at that instruction's position in ``default_file``
    when the input was HLO text (see ``ir_util.register_named_positions``; ``kind``, the
    op's name, picks among the instructions of a shared op_name), else at its first file
    position."""
    from ..ir_util import _LOC, location_names, named_position

    for name in location_names(loc_text):  # an HLO text's instruction first: its position
        position = named_position(default_file, name, kind)
        if position is not None:
            return f"{default_file}:{position[0]}:{position[1]}"
    match = _LOC.search(loc_text)
    if match is None:
        return None
    file = default_file if match.group(1) in ("-", "") else _unescaped(match.group(1))
    if match.group(2) == "0":  # MLIR's "no position" (e.g. a bytecode buffer): the file only
        return file
    return f"{file}:{match.group(2)}:{match.group(3)}"


_ESCAPE = re.compile(rb'\\(\\|"|[0-9A-Fa-f]{2})')


def _unescaped(text: str) -> str:
    """A string as MLIR prints it in a location, unescaped: a backslash before a
    backslash, a quote or two hex digits (each byte outside printable ASCII: a UTF-8
    name's bytes) gives that character or byte back."""
    if "\\" not in text:
        return text
    raw = _ESCAPE.sub(
        lambda m: m.group(1) if len(m.group(1)) == 1 else bytes([int(m.group(1), 16)]),
        text.encode(),
    )
    return shown_name(raw.decode("utf-8", "replace"))  # (control characters stay escaped)


class PassError(Exception):
    """A pass failed with a diagnostic (MLIR's emitOpError + signalPassFailure)."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic

    def __str__(self) -> str:
        """``file:line:col: message`` where the op's location has a position (``-`` for
        text parsed without a name), else the message alone; ``diagnostic.render(name)``
        gives the CLI's error line."""
        where = location_triple_text(self.diagnostic.location, "-", self.diagnostic.kind)
        return f"{where}: {self.diagnostic.message}" if where else self.diagnostic.message


# XLA's own ops of an optimized HLO dump, MHLO ops in either dialect's programs
_XLA_OWN = frozenset(("mhlo.fusion", "mhlo.copy", "mhlo.bitcast"))


def warn_if_other_dialect(
    functions: list[ir.Operation], prefix: str, pass_name: str, state: RunState
) -> None:
    """A pass that found none of its ops: one warning when the program is of the other
    dialect (no op at the top level of its functions is of the pass's own, and one is of
    the other; XLA's own ops aside), since the pass then silently does nothing (as
    mlir-opt's would), where its twin would not."""
    other = "mhlo" if prefix == "stablehlo" else "stablehlo"
    first = None  # the first op of the other dialect, if no op is of the pass's own
    for function in functions:
        if not function.regions[0].blocks:  # a declaration (func.func private @f(...))
            continue
        for op in function.regions[0].blocks[0].operations:
            name = op.operation.name
            if name in _XLA_OWN:  # in StableHLO imports of optimized HLO too
                continue
            dialect = name.partition(".")[0]
            if dialect == prefix:  # (StableHLO imports keep mhlo.topk, mhlo.erf, ...)
                return
            if dialect == other and first is None:
                first = op.operation
    if first is None:
        return
    twin = (
        pass_name.removeprefix("stablehlo-")
        if pass_name.startswith("stablehlo-")
        else f"stablehlo-{pass_name}"
    )
    state.emit(
        Severity.WARNING,
        first,
        f"{pass_name} rewrites {'MHLO' if prefix == 'mhlo' else 'StableHLO'} ops and this "
        f"program is {'MHLO' if other == 'mhlo' else 'StableHLO'} ('{first.name}'): nothing "
        f"to do; its pass is {twin}",
    )


def op_error(op: ir.Operation, message: str) -> PassError:
    """The error MLIR's ``op->emitOpError(message)`` produces, at the op's location."""
    return PassError(
        Diagnostic(Severity.ERROR, f"'{op.name}' op {message}", str(op.location), op.name)
    )


@dataclass
class RewriterStats:
    """How many root ops a rewriter saw, rewrote, and skipped (by reason)."""

    matched: int = 0
    rewritten: int = 0
    skipped: Counter = field(default_factory=Counter)

    def skip(self, reason: str) -> None:
        self.skipped[reason] += 1


@dataclass
class RunState:
    """What one pipeline run reports besides the IR: statistics and diagnostics."""

    statistics: dict[str, dict[str, RewriterStats]] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    timings: list[tuple[str, float]] = field(default_factory=list)  # (element, seconds)
    findings: list = field(default_factory=list)  # --penguin-readiness (readiness.Finding)
    recorder: Any = None  # a remarks.Recorder: remarks and changes per rewrite, if asked
    # The penguin-form sorts of the module as the pass that just ran left it, if its walk
    # listed every sort of the module's functions (canonicalize-conv's does): the verifier
    # then needs no walk of its own to find them. The pipeline clears it before each
    # element, as any other pass may erase or create sorts.
    penguin_sorts: list[ir.Operation] | None = None
    # The statistics' key of the pass instance running, when a pipeline holds the pass
    # more than once: "NAME #2" for its second instance (the pipeline sets it per element).
    instance: dict[str, str] = field(default_factory=dict)

    def rewriter(self, pass_name: str, rewriter: str) -> RewriterStats:
        per_pass = self.statistics.setdefault(self.instance.get(pass_name, pass_name), {})
        return per_pass.setdefault(rewriter, RewriterStats())

    def emit(self, severity: Severity, op: ir.Operation, message: str) -> None:
        self.diagnostics.append(Diagnostic(severity, message, str(op.location), op.name))

    def statistics_dict(self) -> dict:
        """The statistics as data (``--pass-statistics-json``, the batch report), the same
        numbers as the text report: {pass: {rewriter: {matched, rewritten, skipped}}}."""
        return {
            pass_name: {
                rewriter: {
                    "matched": st.matched,
                    "rewritten": st.rewritten,
                    "skipped": dict(sorted(st.skipped.items())),
                }
                for rewriter, st in per.items()
            }
            for pass_name, per in self.statistics.items()
        }


class OptionError(ValueError):
    pass


@dataclass(frozen=True)
class ModulePass:
    """Base of every penguin-opt pass; subclasses are frozen dataclasses."""

    name: ClassVar[str]
    summary: ClassVar[str]

    def run(self, module: ir.Operation, state: RunState) -> None:  # pragma: no cover
        raise NotImplementedError

    @classmethod
    def options(cls) -> list[dataclasses.Field]:
        return [f for f in dataclasses.fields(cls) if f.init]

    @classmethod
    def option_name(cls, f: dataclasses.Field) -> str:
        return f.name.replace("_", "-")

    @classmethod
    def from_options(cls, text: str) -> ModulePass:
        """Build the pass from MLIR option syntax: ``key=value key2=value2``."""
        fields = {cls.option_name(f): f for f in cls.options()}
        values: dict[str, Any] = {}
        try:
            tokens = shlex.split(text)
        except ValueError as err:
            raise OptionError(f"{cls.name}: malformed options '{text}': {err}") from None
        for token in tokens:
            key, sep, raw = token.partition("=")
            if key not in fields:
                known = ", ".join(sorted(fields)) or "none"
                raise OptionError(f"{cls.name}: unknown option '{key}' (options: {known})")
            f = fields[key]
            if sep and not raw:  # `key= 5`: the value went to the next token
                raise OptionError(
                    f"{cls.name}: option '{key}' has no value after '=' (write {key}=VALUE, "
                    "without spaces)"
                )
            if not sep:
                if f.type not in (bool, "bool"):
                    raise OptionError(f"{cls.name}: option '{key}' needs a value")
                raw = "true"
            values[f.name] = _parse_value(cls.name, key, f, raw)
        return cls(**values)

    def option_text(self) -> str:
        parts = []
        for f in self.options():
            value = getattr(self, f.name)
            if isinstance(value, bool):
                value = "true" if value else "false"
            parts.append(f"{self.option_name(f)}={value}")
        return " ".join(parts)

    def pipeline_text(self) -> str:
        """The pass as a pipeline element with every option spelled out."""
        options = self.option_text()
        return f"{self.name}{{{options}}}" if options else self.name


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _parse_value(pass_name: str, key: str, f: dataclasses.Field, raw: str) -> str | bool | int:
    kind = f.type
    choices = f.metadata.get("choices")
    if choices is not None:
        if raw not in choices:
            raise OptionError(
                f"{pass_name}: option '{key}' must be one of {', '.join(choices)}, got '{raw}'"
            )
        return raw
    if kind in (bool, "bool"):
        lowered = raw.lower()
        if lowered in ("true", "1", "on"):
            return True
        if lowered in ("false", "0", "off"):
            return False
        raise OptionError(f"{pass_name}: option '{key}' expects true/false, got '{raw}'")
    if kind in (int, "int"):
        try:
            value = int(raw, 0)
        except ValueError:
            raise OptionError(
                f"{pass_name}: option '{key}' expects an integer, got '{raw}'"
            ) from None
        minimum = f.metadata.get("min", _INT64_MIN)
        if value < minimum:
            raise OptionError(f"{pass_name}: option '{key}' must be >= {minimum}, got {value}")
        if value > _INT64_MAX:  # MLIR's integer pass options are 64-bit
            raise OptionError(f"{pass_name}: option '{key}' must be <= {_INT64_MAX}, got {value}")
        return value
    return raw


# Typed as its default, as dataclasses.field is: the attribute it declares holds one.
def option(default: _T, help: str, **metadata: object) -> _T:
    """A pass option field with its help text (shown by ``penguin-opt --list-passes``)."""
    return field(default=default, metadata={"help": help, **metadata})


__all__ = [
    "Diagnostic",
    "ModulePass",
    "OptionError",
    "PassError",
    "RewriterStats",
    "RunState",
    "Severity",
    "location_triple",
    "op_error",
    "op_named_in",
    "option",
    "warn_if_other_dialect",
]
