"""Native passes that can abort the process, run in a child process.

Some native passes end the process with ``LLVM ERROR`` (``abort()``) on input they do not
expect, e.g. ``hlo-legalize-to-stablehlo`` on an ``mhlo.dynamic_conv`` whose dimension
numbers do not fit its operands. :func:`run_isolated` runs such a pipeline element in a
child (``python -m penguin_opt.native_child``: bytecode in on stdin, bytecode out on
stdout), so an abort becomes a one-line error and the parent's module is only replaced
when the child succeeded.
"""

from __future__ import annotations

import subprocess
import sys

from jaxlib.mlir import ir, passmanager

from .passes.base import Diagnostic, PassError, Severity

# Pass arguments seen to abort on malformed input (a pipeline element naming one runs in
# a child process).
ABORTING_PASSES = frozenset({"hlo-legalize-to-stablehlo"})

_FAILED = 3  # the child's exit code for a pass failure (its stderr has the error)


class NativeAbort(PassError):
    """The isolated native pass ended the child process (``LLVM ERROR``)."""

    def __init__(self, message: str) -> None:
        super().__init__(Diagnostic(Severity.ERROR, message, "unknown"))


def run_isolated(
    pipeline: str,
    module: ir.Operation,
    verify: bool,
    label: str,
    printing: dict[str, object] | None = None,
) -> None:
    """Run ``builtin.module(pipeline)`` on ``module`` in a child process and take its
    result. A failing pass raises MLIR's own error (``ir.MLIRError``), as it would in
    this process; an abort raises :class:`NativeAbort`. ``printing``: MLIR's IR printer
    prints the element's dumps (``PassManager.enable_ir_printing`` arguments), written to
    stderr after the child."""
    import io
    import json

    buffer = io.BytesIO()
    module.write_bytecode(buffer)
    ctx = module.context
    argv = [
        sys.executable,
        "-m",
        "penguin_opt.native_child",
        pipeline,
        "1" if verify else "0",
        "1" if ctx.allow_unregistered_dialects else "0",
        json.dumps(printing),
    ]
    proc = subprocess.run(argv, input=buffer.getvalue(), capture_output=True)
    stderr = proc.stderr.decode(errors="replace")
    if proc.returncode == _FAILED:
        # The pass fails without aborting: run it here, for MLIR's own error and
        # diagnostics (exactly as without isolation).
        pm = pass_manager(pipeline, verify, printing)
        sys.stderr.flush()
        pm.run(module)
        raise NativeAbort(f"{label} failed in a child process but not here")
    if proc.returncode != 0:
        from .cli_common import fatal_line

        reason = fatal_line(stderr) or f"exit status {proc.returncode}"
        raise NativeAbort(f"{label} aborted the process ({reason})")
    if printing is not None and stderr:
        sys.stderr.write(stderr)
        sys.stderr.flush()
    result = ir.Module.parse(proc.stdout, context=ctx).operation
    _take_over(module, result)


def pass_manager(
    pipeline: str, verify: bool, printing: dict[str, object] | None
) -> passmanager.PassManager:
    """``builtin.module(pipeline)`` in the current context, verifying if ``verify``, its
    IR printed with ``printing`` (``enable_ir_printing`` arguments; it turns the
    context's threads off: the caller turns them on again)."""
    pm = passmanager.PassManager.parse(f"builtin.module({pipeline})")
    pm.enable_verifier(verify)
    if printing is not None:
        # one function at a time: the dumps come in a fixed order, none cut into another
        # (functions run in parallel print at once; module scope needs it anyway)
        ir.Context.current.enable_multithreading(False)
        pm.enable_ir_printing(**printing)
    return pm


def _take_over(module: ir.Operation, result: ir.Operation) -> None:
    """Make ``module`` hold ``result``'s attributes and ops (``result`` ends up empty)."""
    from .ir_util import attrs_of

    for name in attrs_of(module):
        del module.attributes[name]
    for name, attr in attrs_of(result).items():
        module.attributes[name] = attr
    body = module.regions[0].blocks[0]
    for op in list(body.operations):
        op.operation.erase()
    for op in list(result.regions[0].blocks[0].operations):
        body.append(op.operation)


def _child(argv: list[str]) -> int:
    import json

    from .context import make_context

    pipeline, verify, unregistered = argv[0], argv[1] == "1", argv[2] == "1"
    printing = json.loads(argv[3])  # (run_isolated passes "null" for none)
    ctx = make_context(allow_unregistered=unregistered)
    with ctx, ir.Location.unknown(ctx):
        try:
            module = ir.Module.parse(sys.stdin.buffer.read())
            pass_manager(pipeline, verify, printing).run(module.operation)
        except (ir.MLIRError, ValueError):  # a failure the parent reproduces
            return _FAILED
        module.operation.write_bytecode(sys.stdout.buffer)
    return 0


__all__ = [
    "ABORTING_PASSES",
    "NativeAbort",
    "pass_manager",
    "run_isolated",
]

if __name__ == "__main__":
    sys.exit(_child(sys.argv[1:]))
