"""Python API: load a program, run a pipeline, print the result.

import penguin_opt
module = penguin_opt.load("model.mlir")            # or text, bytes, jax Lowered
result = penguin_opt.run(module, "stablehlo-canonicalize-for-penguin")
print(result.statistics)                            # per pass, per rewriter
print(penguin_opt.to_text(module))
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from jaxlib.mlir import ir

from .context import make_context
from .io import Source, module_text, parse_source, read_source
from .passes.base import Diagnostic, RewriterStats, RunState
from .pipeline import IRPrinting, Pipeline

if TYPE_CHECKING:
    from jax.stages import Lowered

    from .remarks import Remark


def load_source(source: Source, context: ir.Context | None = None) -> ir.Operation:
    ctx = context or make_context()
    with ctx, ir.Location.unknown(ctx):
        return parse_source(source)


def load_file(path: str | os.PathLike, *, context: ir.Context | None = None) -> ir.Operation:
    """A ``builtin.module`` read from ``path`` (``-``: stdin), recognized by content (MLIR
    text or bytecode, StableHLO artifact, HLO text or proto). Raises
    :class:`~penguin_opt.io.InputNotFoundError` (a ``FileNotFoundError``) for a missing
    file and :class:`~penguin_opt.io.InputError` for one that is no program."""
    return load_source(read_source(os.fspath(path)), context)


def parse(
    program: str | bytes, *, context: ir.Context | None = None, name: str = "<input>"
) -> ir.Operation:
    """A ``builtin.module`` from program text or bytes (never a path); ``name`` is what
    error messages call it."""
    data = program.encode() if isinstance(program, str) else bytes(program)
    return load_source(Source(name, data), context)


def load(
    program: str | bytes | bytearray | memoryview | os.PathLike | Lowered,
    *,
    context: ir.Context | None = None,
    name: str = "<input>",
) -> ir.Operation:
    """A ``builtin.module`` from a path, MLIR/HLO text, bytes, or a ``jax.jit(f).lower()``.

    A ``str`` that names an existing file, or looks like a file name (one line, no
    whitespace or MLIR punctuation), is read as a file: a missing one raises
    ``InputNotFoundError`` (a ``FileNotFoundError``) rather than a parse error. Use
    :func:`load_file` or :func:`parse` to say which one you mean. Each call gets a fresh
    context (with every dialect registered) unless one is given.
    """
    if hasattr(program, "as_text") and hasattr(program, "compiler_ir"):  # jax Lowered
        return parse(program.as_text(debug_info=True), context=context, name=name)
    if isinstance(program, (bytes, bytearray, memoryview)):
        return parse(program, context=context, name=name)
    if isinstance(program, os.PathLike) or (isinstance(program, str) and _is_path(program)):
        return load_file(program, context=context)
    if isinstance(program, str):
        return parse(program, context=context, name=name)
    raise TypeError(f"cannot load a {type(program).__name__}")


_NOT_IN_PATHS = set(' \t\n\r{}()<>%@"=:;,')


def _is_path(program: str) -> bool:
    if len(program) >= 4096 or not program or "\n" in program:
        return False
    if os.path.exists(program):
        return True
    return not (set(program) & _NOT_IN_PATHS)


@dataclass
class Result:
    module: ir.Operation
    state: RunState

    @property
    def statistics(self) -> dict[str, dict[str, RewriterStats]]:
        """{pass: {rewriter: stats}}; a pass given twice: "NAME", then "NAME #2"."""
        return self.state.statistics

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return self.state.diagnostics

    @property
    def remarks(self) -> list[Remark]:
        """One :class:`~penguin_opt.remarks.Remark` per rewrite (and per skip, with
        ``remarks="all"``), in pipeline order; empty unless ``run(..., remarks=...)``."""
        recorder = self.state.recorder
        return [] if recorder is None else recorder.remarks


def run(
    module: ir.Operation | ir.Module,
    pipeline: str,
    *,
    verify: str = "default",
    remarks: bool | str = False,
    changes: bool = False,
    **kwargs: RunState | IRPrinting | None,
) -> Result:
    """Run ``pipeline`` on ``module`` (an ``ir.Module`` or its operation) in place; raises
    PassError/PipelineError/MLIRError. ``verify``: "default", "each" or "off" (see
    ``Pipeline``). ``remarks``: True records a remark per rewrite, "all" per skip too;
    ``changes``: each remark also holds the op before and the ops after, printed
    (``Result.remarks``). After an error the module may be partly rewritten: run on
    ``module.clone()`` to keep the original."""
    from .remarks import Recorder

    if remarks not in (True, False, "all"):
        raise ValueError(f"remarks: True, False or 'all', not {remarks!r}")
    module = _module_op(module)
    state = kwargs.pop("state", None) or RunState()
    if remarks or changes:
        state.recorder = Recorder(skips=remarks == "all", changes=changes)
    with module.context:
        state = Pipeline(pipeline, verify=verify).run(module, state, **kwargs)
    return Result(module, state)


def to_text(
    module: ir.Operation | ir.Module,
    *,
    generic: bool = False,
    debug_info: bool = False,
    source_name: str | None = None,
) -> str:
    """The module as MLIR text, as ``penguin-opt`` prints it: penguin-form sorts in generic
    form (they read back), ``generic=True`` for MLIR's generic op form everywhere,
    ``debug_info=True`` for locations (``--mlir-print-debuginfo``). ``source_name``: the
    file name for the locations of a program read without a ``module`` around it, which
    MLIR's parser names ``-`` (``penguin-opt`` writes the input's name there)."""
    module = _module_op(module)
    with module.context:
        return module_text(module, generic=generic, debug_info=debug_info, source_name=source_name)


def _module_op(module: ir.Module | ir.Operation | ir.OpView) -> ir.Operation:
    if isinstance(module, ir.Module):
        return module.operation
    if isinstance(module, (ir.Operation, ir.OpView)):
        return module.operation
    raise TypeError(f"expected an ir.Module or its operation, got a {type(module).__name__}")


__all__ = [
    "Result",
    "load",
    "load_file",
    "load_source",
    "parse",
    "run",
    "to_text",
]
