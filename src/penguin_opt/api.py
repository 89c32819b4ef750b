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

from jaxlib.mlir import ir

from .context import make_context
from .io import Source, module_text, parse_source, read_source
from .passes.base import RunState
from .pipeline import Pipeline


def load_source(source: Source, context: ir.Context | None = None) -> ir.Operation:
    ctx = context or make_context()
    with ctx, ir.Location.unknown(ctx):
        return parse_source(source)


def load(program, *, context: ir.Context | None = None, name: str = "<input>") -> ir.Operation:
    """A ``builtin.module`` from a path, MLIR/HLO text, bytes, or a ``jax.jit(f).lower()``.

    Each call gets a fresh context (with every dialect registered) unless one is given.
    """
    if hasattr(program, "as_text") and hasattr(program, "compiler_ir"):  # jax Lowered
        program = program.as_text(debug_info=True)
        source = Source(name, program.encode())
    elif isinstance(program, bytes):
        source = Source(name, program)
    elif isinstance(program, (str, os.PathLike)) and _is_path(program):
        source = read_source(os.fspath(program))
    elif isinstance(program, str):
        source = Source(name, program.encode())
    else:
        raise TypeError(f"cannot load a {type(program).__name__}")
    return load_source(source, context)


def _is_path(program) -> bool:
    if isinstance(program, os.PathLike):
        return True
    return "\n" not in program and len(program) < 4096 and os.path.exists(program)


@dataclass
class Result:
    module: ir.Operation
    state: RunState

    @property
    def statistics(self):
        return self.state.statistics

    @property
    def diagnostics(self):
        return self.state.diagnostics


def run(module: ir.Operation, pipeline: str, *, verify: str = "default", **kwargs) -> Result:
    """Run ``pipeline`` on ``module`` in place; raises PassError/PipelineError/MLIRError.
    ``verify``: "default", "each" or "off" (see ``Pipeline``)."""
    with module.context:
        state = Pipeline(pipeline, verify=verify).run(module, **kwargs)
    return Result(module, state)


def to_text(module: ir.Operation, *, generic: bool = False) -> str:
    with module.context:
        return module_text(module, generic=generic)
