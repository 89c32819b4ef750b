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

import re
from dataclasses import dataclass
from typing import ClassVar

from jaxlib.mlir import ir, passmanager

from .._compat import inlined_func_call
from ..ir_util import functions, ops_named, ops_under, string_value, symbol_name
from .base import Diagnostic, ModulePass, PassError, RunState, Severity, option


@dataclass(frozen=True)
class Inline(ModulePass):
    name: ClassVar[str] = "inline"
    summary: ClassVar[str] = "inline func.call of single-block functions (jaxlib lacks MLIR's)"

    max_depth: int = option(64, "stop inlining call chains nested deeper than this", min=1)
    max_inlined_ops: int = option(
        2_000_000,
        "fail rather than create more than this many ops by inlining (a call "
        "DAG can grow the module exponentially)",
        min=0,
    )

    def run(self, module: ir.Operation, state: RunState) -> None:
        stats = state.rewriter(self.name, "inlineCall")
        functions = _functions(module)
        recursive = _Recursion(functions)
        inlined: set[str] = set()
        sizes: dict[str, int] = {}  # ops in a function's body, until something is inlined there
        created = 0
        recorder = state.recorder
        for _ in range(self.max_depth):
            calls = ops_named(module, ["func.call"])
            inlined_any = False
            for call in calls:
                stats.matched += 1
                seen = recorder.before(call) if recorder is not None else None
                callee_name = string_value(call.attributes["callee"])
                callee = functions.get(callee_name)
                reason = None
                if callee is None or len(callee.regions[0].blocks) != 1:
                    reason = "callee-not-single-block"
                elif recursive(callee_name):
                    reason = "recursive"
                if reason is not None:
                    stats.skip(reason)
                    if seen is not None:
                        recorder.add(self.name, "inlineCall", seen, reason, None)
                    continue
                size = sizes.get(callee_name)
                if size is None:
                    size = sizes[callee_name] = _op_count(callee) - 1  # less its return
                created += size
                if created > self.max_inlined_ops:
                    raise PassError(
                        Diagnostic(
                            Severity.ERROR,
                            f"inline: inlining would create more than {self.max_inlined_ops} "
                            f"ops (call graph growth); raise inline{{max-inlined-ops=N}} to allow "
                            "it",
                            str(call.location),
                            call.name,
                        )
                    )
                sizes.pop(_enclosing_function_name(call), None)  # it grows now
                values = inlined_func_call(callee, list(call.operands), call)
                for old, new in zip(call.results, values, strict=True):
                    old.replace_all_uses_with(new)
                call.erase()
                inlined.add(callee_name)
                stats.rewritten += 1
                if seen is not None:
                    recorder.add(
                        self.name,
                        "inlineCall",
                        seen,
                        None,
                        None,
                        note=f"@{callee_name}, {size} op{'' if size == 1 else 's'}",
                    )
                inlined_any = True
            if not inlined_any:
                break
        self._erase_dead_callees(module, functions, inlined)

    @staticmethod
    def _erase_dead_callees(
        module: ir.Operation, functions: dict[str, ir.Operation], inlined: set[str]
    ) -> None:
        """Erase private functions we inlined that nothing references any more.

        A candidate is referenced when a symbol reference to it is held by an op outside
        every candidate (or inside a candidate that is itself referenced): MLIR's own notion
        of a symbol use, which its ``symbol-dce`` pass computes natively. Those still
        referenced stay where they are.
        """
        candidates = [  # in module order: the output must not depend on set order
            name
            for name in functions
            if name in inlined
            and "sym_visibility" in functions[name].attributes
            and string_value(functions[name].attributes["sym_visibility"]) == "private"
        ]
        if not candidates:
            return
        if _dce_applies(module, functions, candidates):
            if _symbol_dce(module, candidates):
                return
            functions = _functions(module)  # fresh objects, as after a run that erased
        _erase_unreferenced_text(module, functions, candidates)


def _functions(module: ir.Operation) -> dict[str, ir.Operation]:
    return {symbol_name(f): f for f in functions(module)}


def _erase_unreferenced_text(
    module: ir.Operation, functions: dict[str, ir.Operation], candidates: list[str]
) -> None:
    """The fallback for modules outside what ``_symbol_dce`` handles: a candidate is
    referenced when ``@name`` occurs in the generic text of the module without the
    candidates (a call left behind, a custom_call, ...)."""
    for name in candidates:
        functions[name].detach_from_parent()  # the rest of the module, without it
    text = module.get_asm(print_generic_op_form=True)
    for name in candidates:
        if f"@{name}" in text:  # still referenced
            module.regions[0].blocks[0].append(functions[name])
        else:
            functions[name].erase()


_BARE_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*")


def _dce_applies(
    module: ir.Operation, functions: dict[str, ir.Operation], candidates: list[str]
) -> bool:
    """Whether ``_symbol_dce`` can decide: the module holds only functions (each of them
    in ``functions``) and no nested symbol table, its own attributes name no symbol, and
    every candidate's name prints bare (``@name``)."""
    top = module.regions[0].blocks[0].operations
    if len(top) != len(functions) or any(op.operation.name != "func.func" for op in top):
        return False
    if not all(_BARE_SYMBOL.fullmatch(name) for name in candidates):
        return False
    # The module's own attributes, as text (never as Python objects: a complex-typed
    # elements attribute aborts the process when the bindings convert it).
    if "@" in module.get_asm(print_generic_op_form=True, skip_regions=True):
        return False
    tables = []
    ir.SymbolTable.walk_symbol_tables(module, True, lambda op, _visible: tables.append(op))
    return len(tables) == 1


def _symbol_dce(module: ir.Operation, candidates: list[str]) -> bool:
    """Erase the candidates MLIR's ``symbol-dce`` finds dead, with every other function made
    public for the run (so only candidates can go) and its visibility restored after.

    Returns False, with the module unchanged, if ``symbol-dce`` cannot run on it. The
    Python objects of the functions it erases dangle (the bindings are not told): the
    functions are looked up again afterwards, and no object from before is touched.
    """
    wanted = set(candidates)
    hidden: dict[str, ir.Attribute] = {}  # non-candidate function -> its sym_visibility
    public = ir.StringAttr.get("public", module.context)
    for op in module.regions[0].blocks[0].operations:
        attributes = op.operation.attributes
        if "sym_visibility" not in attributes:
            continue  # public
        visibility = attributes["sym_visibility"]
        if string_value(visibility) != "public":
            name = string_value(attributes["sym_name"])
            if name not in wanted:
                hidden[name] = visibility
                attributes["sym_visibility"] = public
    pm = passmanager.PassManager.parse("builtin.module(symbol-dce)", module.context)
    pm.enable_verifier(False)
    try:
        pm.run(module)
        ok = True
    except ir.MLIRError:
        ok = False
    for op in module.regions[0].blocks[0].operations:  # fresh objects: restore visibility
        func = op.operation
        name = string_value(func.attributes["sym_name"])
        if name in hidden:
            func.attributes["sym_visibility"] = hidden[name]
    return ok


class _Recursion:
    """Which functions call themselves, directly or through other functions.

    Read off the call graph the first time it is asked, and remembered: inlining a call
    to a non-recursive callee (the only calls this pass inlines) replaces the edge
    caller -> callee by edges to the callee's own callees, which the caller reached
    already; so no cycle appears or disappears, and the answer never changes.
    """

    def __init__(self, functions: dict[str, ir.Operation]) -> None:
        self.functions = functions
        self._recursive: set[str] | None = None

    def __call__(self, name: str) -> bool:
        if self._recursive is None:
            self._recursive = _on_cycles(self._call_graph())
        return name in self._recursive

    def _call_graph(self) -> dict[str, set[str]]:
        """Each function's callees among ``functions`` (calls to other names lead nowhere)."""
        graph: dict[str, set[str]] = {}
        for name, func in self.functions.items():
            callees = {string_value(c.attributes["callee"]) for c in ops_named(func, ["func.call"])}
            graph[name] = {c for c in callees if c in self.functions}
        return graph


def _on_cycles(graph: dict[str, set[str]]) -> set[str]:
    """The nodes that reach themselves (Tarjan's strongly connected components, iterative:
    the nodes of a component of two or more, or with an edge to themselves)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[str] = set()
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(graph[nxt])))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1 or node in graph[node]:
                        found.update(component)
    return found


def _op_count(op: ir.Operation) -> int:
    """Ops in ``op``'s regions, nested ones included."""
    return len(ops_under(op))


def _enclosing_function_name(op: ir.Operation) -> str | None:
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        parent = parent.parent
    return None if parent is None else string_value(parent.attributes["sym_name"])


__all__ = [
    "Inline",
]
