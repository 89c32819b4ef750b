"""inline: inline ``func.call`` of single-block functions, then drop dead private callees.

jaxlib's MLIR build does not register the func dialect's inliner interface, so MLIR's own
``inline`` pass leaves ``func.call`` alone (it only runs its canonicalizer). penguin-opt
therefore registers this ``inline`` pass under the same name, built on jaxlib's
``inlined_func_call``: every call to a single-block function is replaced by a copy of the
callee's body (calls nested in the copy are inlined too); private functions left without
uses are erased, as MLIR's inliner does. Recursive call chains are left as calls.

    func.func @main(%x) { %0 = call @argsort(%x) ... }         func.func @main(%x) {
    func.func private @argsort(%x) { %i = iota ...; sort ... }  ->   %i = iota ...; sort ... }
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from jaxlib.mlir import ir
from jaxlib.mlir._mlir_libs import _jax_mlir_ext

from ..ir_util import ops_named
from .base import ModulePass, RunState, option


@dataclass(frozen=True)
class Inline(ModulePass):
    name: ClassVar[str] = "inline"
    summary: ClassVar[str] = "inline func.call of single-block functions (jaxlib lacks MLIR's)"

    max_depth: int = option(64, "stop inlining call chains nested deeper than this", min=1)

    def run(self, module: ir.Operation, state: RunState) -> None:
        stats = state.rewriter(self.name, "inlineCall")
        functions = {
            ir.StringAttr(op.operation.attributes["sym_name"]).value: op.operation
            for op in module.regions[0].blocks[0].operations
            if op.operation.name == "func.func"
        }
        inlined: set[str] = set()
        for _ in range(self.max_depth):
            calls = ops_named(module, ["func.call"])
            inlined_any = False
            for call in calls:
                stats.matched += 1
                callee_name = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
                callee = functions.get(callee_name)
                if callee is None or len(callee.regions[0].blocks) != 1:
                    stats.skip("callee-not-single-block")
                    continue
                if _calls(callee, callee_name, functions):
                    stats.skip("recursive")
                    continue
                with ir.InsertionPoint(call), call.location:
                    values = _jax_mlir_ext.inlined_func_call(callee, list(call.operands))
                for old, new in zip(call.results, values, strict=True):
                    old.replace_all_uses_with(new)
                call.erase()
                inlined.add(callee_name)
                stats.rewritten += 1
                inlined_any = True
            if not inlined_any:
                break
        self._erase_dead_callees(module, functions, inlined)

    @staticmethod
    def _erase_dead_callees(module, functions, inlined: set[str]) -> None:
        """Erase private functions we inlined that nothing references any more."""
        candidates = [
            name for name in inlined
            if "sym_visibility" in functions[name].attributes
            and ir.StringAttr(functions[name].attributes["sym_visibility"]).value == "private"
        ]
        if not candidates:
            return
        dead = []
        for name in candidates:
            functions[name].detach_from_parent()  # the rest of the module, without it
            dead.append(name)
        text = module.get_asm(print_generic_op_form=True)
        for name in dead:
            if f"@{name}" in text:  # still referenced (call left behind, custom_call, ...)
                module.regions[0].blocks[0].append(functions[name])
            else:
                functions[name].erase()


def _calls(func: ir.Operation, target: str, functions, seen=None) -> bool:
    """Does ``func`` (transitively) call ``target``?"""
    seen = set() if seen is None else seen
    for call in ops_named(func, ["func.call"]):
        name = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
        if name == target:
            return True
        if name not in seen and name in functions:
            seen.add(name)
            if _calls(functions[name], target, functions, seen):
                return True
    return False
