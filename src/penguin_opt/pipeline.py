"""Pipelines that mix penguin-opt passes with native MLIR passes, mlir-opt style.

``inline,stablehlo-canonicalize-for-penguin{broadcast-num-elements-to-fold=4096},cse``:
comma-separated elements, each a pass name with optional ``{key=value ...}`` options. A
native pass is anchored at module level, or nested under ``func.func`` when MLIR
restricts it to functions. ``builtin.module(...)`` around the whole list is accepted.

Each element runs on its own: our passes as Python, each native element in a
PassManager of its own (so MLIR's verifier follows its passes). Penguin-form sorts are not
valid for the stock verifier or native passes: once one is in the module, each native
element is given the expanded form and the sorts that still match are fused back after
it. Verification (see ``Pipeline.verify``) understands the form. Timing (``--mlir-timing``)
and IR dumps (``--mlir-print-ir-*``) are per element, and never show these helper steps.
"""

from __future__ import annotations

import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TextIO

from jaxlib.mlir import ir, passmanager

from . import penguin_sort
from .cli_common import native_stderr_captured, one_line, stage
from .ir_util import ops_named
from .native_child import ABORTING_PASSES
from .passes import PASSES
from .passes.base import (
    Diagnostic,
    ModulePass,
    OptionError,
    PassError,
    RunState,
    Severity,
    op_named_in,
)
from .passes.canonicalize_for_penguin import CanonicalizeForPenguin

_EXPANDED_MARK = "penguin.expanded_sort"


class PipelineError(ValueError):
    """The pipeline text is malformed or names an unknown pass (a usage error)."""


def split_top_level(text: str, sep: str = ",") -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
            if depth < 0:
                raise PipelineError(f"unbalanced '{ch}' in pipeline '{text}'")
        elif ch == sep and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    if depth != 0:
        raise PipelineError(f"unbalanced brackets in pipeline '{text}'")
    parts.append(text[start:].strip())
    if parts == [""]:
        return []
    if "" in parts:  # MLIR's parser: "'' does not refer to a registered pass"
        raise PipelineError(f"empty pass name in pipeline '{text}'")
    return parts


@dataclass(frozen=True)
class Element:
    text: str
    ours: ModulePass | None = None

    @property
    def label(self) -> str:
        return self.ours.name if self.ours else self.text

    @property
    def display_name(self) -> str:
        return type(self.ours).__name__ if self.ours else self.text

    @property
    def pass_names(self) -> frozenset[str]:
        """Pass arguments this element runs (``func.func(cse,canonicalize)``: both)."""
        if self.ours is not None:
            return frozenset((self.ours.name,))
        return frozenset(_PASS_NAME.findall(_without_options(self.text))) - {
            "func.func",
            "builtin.module",
        }


_PASS_NAME = re.compile(r"[A-Za-z_][\w.-]*")


def _without_options(text: str) -> str:
    out, depth = [], 0
    for ch in text:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def parse_pipeline(text: str) -> list[Element]:
    text = text.strip()
    if text.startswith("builtin.module(") and text.endswith(")"):
        text = text[len("builtin.module(") : -1]
    elements = []
    for part in split_top_level(text):
        name, brace, rest = part.partition("{")
        name = name.strip()
        if name in PASSES:
            if brace and not rest.endswith("}"):
                raise PipelineError(f"malformed options in '{part}'")
            try:
                elements.append(
                    Element(part, PASSES[name].from_options(rest[:-1] if brace else ""))
                )
            except OptionError as err:
                raise PipelineError(str(err)) from None
        else:
            elements.append(Element(part))
    if not elements:
        raise PipelineError("empty pipeline")
    return elements


VERIFY_MODES = ("default", "each", "off")


@dataclass(frozen=True)
class IRPrinting:
    """mlir-opt's ``--mlir-print-ir-*`` options.

    A native element (``cse``, ``func.func(cse,canonicalize)``) prints through MLIR's own
    IR printer: one dump per pass it runs, headed and scoped as this jaxlib's mlir-opt
    heads and scopes them (``// -----// IR Dump After CSEPass: cse //----- //`` in newer
    MLIR, ``... After CSEPass (cse) ...`` in older; a pass nested under ``func.func``
    prints the function it ran on unless ``module_scope``). Our passes, and native
    elements MLIR's printer cannot serve exactly (a named pass among others in one
    element, penguin-form sorts in the module, ``--mlir-print-debuginfo`` or
    ``--mlir-print-local-scope``, a pass run in a child process), print the whole module
    between elements under a header of the same form. penguin-opt's own helper steps
    (verification, the expanded sorts native passes are given) never appear in them.
    ``before``/``after`` hold pass arguments (``cse``, ``stablehlo-canonicalize-conv``).

    As in mlir-opt, ``after_change`` and ``after_failure`` narrow the dumps after passes:
    to passes that changed the IR, to the pass that failed (either alone prints after
    every pass it admits); a failed pass is dumped whenever dumps after it were asked."""

    before_all: bool = False
    after_all: bool = False
    after_change: bool = False
    after_failure: bool = False
    before: frozenset[str] = frozenset()
    after: frozenset[str] = frozenset()
    generic: bool = False
    debug_info: bool = False
    local_scope: bool = False  # --mlir-print-local-scope
    module_scope: bool = False  # --mlir-print-ir-module-scope
    source_name: str | None = None  # the input's name, for the locations of its text
    elide_elements_limit: int | None = None

    def wants_before(self, el: Element) -> bool:
        return self.before_all or bool(self.before & el.pass_names)

    def _after_admits(self, el: Element) -> bool:
        return (
            self.after_all
            or self.after_change
            or self.after_failure
            or bool(self.after & el.pass_names)
        )

    def wants_after(self, el: Element, changed: Callable[[], bool]) -> bool:
        """After a pass that succeeded; ``changed()``: whether the element changed the IR
        (asked only when needed)."""
        if not self._after_admits(el) or self.after_failure:
            return False
        return not self.after_change or changed()

    def wants_failed(self, el: Element) -> bool:
        return self._after_admits(el)

    def native(self, el: Element) -> dict[str, object] | None:
        """``PassManager.enable_ir_printing`` arguments that print exactly the dumps asked
        of the native element ``el``, or None when MLIR's printer cannot (a named pass
        among others of the element, debug info or local scope) or nothing is asked."""
        if self.debug_info or self.local_scope:
            return None
        names = el.pass_names

        def uniform(named: frozenset[str]) -> bool:
            return not (named & names) or names <= named

        if not (uniform(self.before) and uniform(self.after)):
            return None
        before = self.wants_before(el)
        after = self._after_admits(el)
        if not (before or after):
            return None
        return {
            "print_before_all": before,
            "print_after_all": after,
            "print_module_scope": self.module_scope,
            "print_after_change": self.after_change,
            "print_after_failure": self.after_failure,
            "large_elements_limit": self.elide_elements_limit,
            "print_generic_op_form": self.generic,
        }

    def dump(
        self,
        when: str,
        el: Element,
        module: ir.Operation,
        out: TextIO | None = None,
        *,
        failed: bool = False,
    ) -> None:
        """``failed``: the dump after ``el`` failed (``IR Dump After NAME Failed``)."""
        from .io import module_text

        out = out or sys.stderr
        text = module_text(
            module,
            generic=self.generic,
            debug_info=self.debug_info,
            large_elements_limit=self.elide_elements_limit,
            local_scope=self.local_scope,
            source_name=self.source_name,
        )
        scope = ""
        if self.module_scope:  # as MLIR's printer names the op a pass ran on
            name = module.attributes["sym_name"] if "sym_name" in module.attributes else None
            symbol = f": @{ir.StringAttr(name).value}" if name is not None else ""
            scope = f" ('{module.name}' operation{symbol})"
        title = _pass_title(el, module, failed)
        out.write(f"// -----// IR Dump {when} {title}{scope} //----- //\n")
        out.write(text if text.endswith("\n") else text + "\n")
        out.write("\n")
        out.flush()


def _pass_title(el: Element, module: ir.Operation, failed: bool = False) -> str:
    """How MLIR's IR printer of this jaxlib names a pass in a dump header: ``NAME: ARG``
    with every option spelled out (newer MLIR), or ``NAME (ARG)``; ``NAME Failed`` after
    a failure. A native element of one pass has the title MLIR gives it; one of several
    passes, its text."""
    colon = _colon_titles()
    title = _native_title(el, module) if el.ours is None else None
    if title is None:
        arg = el.ours.pipeline_text() if el.ours is not None and colon else el.label
        title = f"{el.display_name}: {arg}" if colon else f"{el.display_name} ({arg})"
    if not failed:
        return title
    name, sep, arg = title.partition(": " if colon else " (")
    return f"{name} Failed{sep}{arg}"  # "CSEPass Failed: cse", as MLIR's


_TITLE_STYLE: list[bool] = []
_NATIVE_TITLES: dict[str, str | None] = {}
_HEADER_TITLE = re.compile(r"^// -----// IR Dump Before (.+) //----- //$", re.M)


def _printer_titles(pipeline: str, module: ir.Operation) -> list[str]:
    """The titles MLIR's IR printer gives the passes of ``pipeline`` run on ``module``."""
    with module.context:
        pm = passmanager.PassManager.parse(f"builtin.module({pipeline})")
        pm.enable_ir_printing(print_before_all=True, print_after_all=False)
        with native_stderr_captured() as printed:
            try:
                pm.run(module)
            except ir.MLIRError:
                pass  # the titles printed before the failure are all that is wanted
    return list(dict.fromkeys(_HEADER_TITLE.findall(printed[0])))


def _colon_titles() -> bool:
    """Whether this MLIR heads a dump ``NAME: ARG`` (asked of its printer once)."""
    if not _TITLE_STYLE:
        from .context import make_context

        ctx = make_context()
        with ctx, ir.Location.unknown(ctx):
            titles = _printer_titles("symbol-dce", ir.Module.create().operation)
        _TITLE_STYLE.append(bool(titles) and titles[0].endswith(": symbol-dce"))
    return _TITLE_STYLE[0]


def _native_title(el: Element, module: ir.Operation) -> str | None:
    """MLIR's title for the one pass of the native element ``el`` (None for an element of
    several passes, or of a pass that must run in a child process), learned once per
    element text from its printer, running the element on a copy of ``module`` as the
    pipeline gives it (a pass run on a module of its own might not run, or fail)."""
    if el.text not in _NATIVE_TITLES:
        title = None
        if not el.pass_names & ABORTING_PASSES:
            pipeline = _native_pipeline_text(el.text, module.context)
            copy = module.clone()
            with module.context, ir.Location.unknown():
                _expand_marked(copy)
            titles = _printer_titles(pipeline, copy)
            title = titles[0] if len(titles) == 1 else None
        _NATIVE_TITLES[el.text] = title
    return _NATIVE_TITLES[el.text]


@dataclass
class Pipeline:
    """A parsed pipeline, ready to run on modules.

    ``verify``: when the IR is verified. ``default``: after every native pass (as MLIR's
    PassManager does) and once after each run of consecutive penguin-opt passes (a failure
    names the passes of the run); ``each``: after every pass (mlir-opt's default; names
    the one pass that broke the IR); ``off``: never (mlir-opt's ``--verify-each=false``).
    The verification understands penguin-form sorts."""

    text: str
    verify: str = "default"
    elements: list[Element] = field(init=False)

    def __post_init__(self) -> None:
        if self.verify not in VERIFY_MODES:
            raise PipelineError(f"unknown verify mode '{self.verify}' ({', '.join(VERIFY_MODES)})")
        self.elements = parse_pipeline(self.text)

    def _native_check(self, ctx: ir.Context) -> None:
        for el in self.elements:
            if el.ours is None:
                _native_pipeline_text(el.text, ctx)

    def describe(self, ctx: ir.Context) -> str:
        """The pipeline with every option spelled out (``--dump-pass-pipeline``)."""
        parts = []
        for el in self.elements:
            if el.ours is not None:
                parts.append(el.ours.pipeline_text())
                continue
            text = _native_pipeline_text(el.text, ctx)
            with ctx:
                full = str(passmanager.PassManager.parse(f"builtin.module({text})"))
            parts.append(full[len("builtin.module(") : -1])
        return f"builtin.module({','.join(parts)})"

    def run(
        self,
        module: ir.Operation,
        state: RunState | None = None,
        *,
        ir_printing: IRPrinting | None = None,
    ) -> RunState:
        """Run every element on ``module`` in place. Raises PassError / ir.MLIRError.
        Each element's wall time is appended to ``state.timings``."""
        state = state if state is not None else RunState()
        ctx = module.context
        printing = ir_printing or IRPrinting()
        # Penguin-form sorts may come with the input (our own output read back) or from a
        # for-penguin pass: native passes then get the expanded form. Unless a for-penguin
        # pass ran, whether there are any is looked up (a walk) when a native element first
        # needs to know: no other pass makes them, so that is whether the input had any
        # that are still there.
        penguin_seen: bool | None = None
        verify = self.verify != "off"
        run_of_ours: list[str] = []
        instances = _instance_keys(self.elements)
        with ctx, ir.Location.unknown(ctx):
            for i, el in enumerate(self.elements):
                native = None  # enable_ir_printing's arguments when MLIR prints el's dumps
                if el.ours is None:
                    native = printing.native(el)
                    if penguin_seen is None or (penguin_seen and native is not None):
                        penguin_seen = bool(penguin_sort.penguin_sorts(module))
                    if penguin_seen:  # (MLIR's printer would show the expanded sorts)
                        native = None
                if native is None and printing.wants_before(el):
                    printing.dump("Before", el, module)
                track = native is None and printing.after_change
                before_text = _fingerprint(module) if track else None
                stage(f"running {el.label}")
                start = time.perf_counter()
                state.penguin_sorts = None  # a pass sets it when its walk lists them
                try:
                    if el.ours is not None:
                        state.instance = {el.ours.name: instances[i]}
                        el.ours.run(module, state)
                        state.instance = {}
                        known, state.penguin_sorts = state.penguin_sorts, None
                        if isinstance(el.ours, CanonicalizeForPenguin):
                            penguin_seen = True
                        run_of_ours.append(el.ours.name)
                        run_ends = i + 1 == len(self.elements) or self.elements[i + 1].ours is None
                        if verify and (self.verify == "each" or run_ends):
                            stage(f"verifying after {', '.join(run_of_ours)}")
                            _verify(run_of_ours)(module, known)
                            run_of_ours = []
                    else:
                        self._run_native(el, module, ctx, bool(penguin_seen), verify, native)
                except BaseException:
                    state.penguin_sorts, state.instance = None, {}
                    state.timings.append((el.label, time.perf_counter() - start))
                    if native is None and printing.wants_failed(el):
                        printing.dump("After", el, module, failed=True)
                    raise
                state.timings.append((el.label, time.perf_counter() - start))
                if native is None and printing.wants_after(
                    el, lambda b=before_text: _fingerprint(module) != b
                ):
                    printing.dump("After", el, module)
        return state

    @staticmethod
    def _run_native(
        el: Element,
        module: ir.Operation,
        ctx: ir.Context,
        penguin_seen: bool,
        verify: bool,
        printing: dict[str, object] | None = None,
    ) -> None:
        """``printing``: MLIR's IR printer prints this element's dumps (to the stderr
        passed on after the pass), with these ``enable_ir_printing`` arguments."""
        from .native_child import pass_manager, run_isolated

        text = _native_pipeline_text(el.text, ctx)
        marked = _expand_marked(module) if penguin_seen else 0
        threaded = ctx.get_num_threads() > 1  # (IR printing turns threads off)
        try:
            if el.pass_names & ABORTING_PASSES:  # an abort must not end this process
                run_isolated(text, module, verify, el.label, printing)
            else:
                pm = pass_manager(text, verify, printing)
                # what native passes write to the C++ stderr (print-op-stats, warnings,
                # IR dumps) is passed on after the pass; the line before an abort
                # becomes part of ours
                with native_stderr_captured(forward=True):
                    pm.run(module)
        finally:
            if threaded and ctx.get_num_threads() == 1:
                ctx.enable_multithreading(True)
        if marked:
            _fuse_marked(module)


def _fingerprint(module: ir.Operation) -> str:
    return module.get_asm(print_generic_op_form=True, assume_verified=True, enable_debug_info=True)


_RESOLVED: dict[str, str] = {}  # element text -> its module-anchored form (registration is
# process-wide, so the answer holds for every context and every run)


def _native_pipeline_text(text: str, ctx: ir.Context) -> str:
    """``text`` as a module-anchored pipeline element, nesting under func.func if needed
    (worked out once per element text)."""
    resolved = _RESOLVED.get(text)
    if resolved is None:
        resolved = _RESOLVED[text] = _resolve_native(text, ctx)
    return resolved


def _resolve_native(text: str, ctx: ir.Context) -> str:
    with ctx:
        errors = []
        for candidate in (text, f"func.func({text})"):
            with native_stderr_captured() as printed:  # LLVM's option parser prints
                try:
                    passmanager.PassManager.parse(f"builtin.module({candidate})")
                    return candidate
                except ValueError as err:
                    errors.append(one_line(err))
            detail = one_line(printed[0]).lstrip(": ")
            if detail and detail not in errors[-1]:
                errors[-1] = f"{detail} ({errors[-1]})"
        first = errors[0]
        nested = _nested_module_pass(text)
        if nested is not None:
            name, anchor = nested
            raise PipelineError(
                f"'{name}' is a module pass: it runs only at the top level of the pipeline, "
                f"not nested under '{anchor}' (-p '{name}', or "
                f"--pass-pipeline='builtin.module({name})')"
            )
        if "does not refer to a registered pass" in first:
            known = ", ".join(sorted(PASSES))
            raise PipelineError(
                f"unknown pass '{text}' (penguin-opt passes: {known}; or any registered "
                "MLIR/StableHLO/MHLO pass)"
            )
        raise PipelineError(f"invalid pipeline element '{text}': {first}")


_PASS_FLAG_NAME = re.compile(r"[A-Za-z][\w-]*")
_ANCHOR = re.compile(r"\s*([\w.]+)\s*\(")


def _nested_module_pass(text: str) -> tuple[str, str] | None:
    """(penguin-opt pass, op name) when ``text`` nests one of penguin-opt's passes (all of
    them module passes) under an op anchor, as in ``func.func(canonicalize-conv)``."""
    anchor = _ANCHOR.match(text)
    if anchor is None:
        return None
    names = re.findall(r"[A-Za-z][\w-]*", _without_options(text[anchor.end() :]))
    ours = [name for name in names if name in PASSES]
    return (ours[0], anchor.group(1)) if ours else None


def is_pass_name(name: str) -> bool:
    """Whether a pipeline can name ``name`` alone: a penguin-opt pass or a native pass
    registered in this jaxlib (mlir-opt's ``--NAME`` pass flags)."""
    if name in PASSES:
        return True
    if _PASS_FLAG_NAME.fullmatch(name) is None:
        return False
    from .context import make_context

    try:
        _native_pipeline_text(name, make_context())
    except PipelineError:
        return False
    return True


def _verify(pass_names: list[str]) -> Callable[[ir.Operation, list[ir.Operation] | None], None]:
    """Verify the module (penguin-aware; ``known``: its penguin-form sorts, if the last
    pass listed them); a failure blames ``pass_names``."""
    names = list(pass_names)

    def verify(module: ir.Operation, known: list[ir.Operation] | None = None) -> None:
        try:
            penguin_sort.verify(module, known)
        except ir.MLIRError as err:
            raise _verifier_failure(names, err) from None

    return verify


def _verifier_failure(pass_names: list[str], err: ir.MLIRError) -> PassError:
    who = pass_names[0] if len(pass_names) == 1 else ", ".join(pass_names)
    hint = "" if len(pass_names) == 1 else " (--verify-each names the pass)"
    diags = list(getattr(err, "error_diagnostics", []) or [])
    if diags:
        d = diags[0]
        message = f"{who} produced invalid IR{hint}: {' '.join(d.message.split())}"
        return PassError(
            Diagnostic(Severity.ERROR, message, str(d.location), op_named_in(d.message))
        )
    return PassError(
        Diagnostic(Severity.ERROR, f"{who} produced invalid IR{hint}: {err}", "unknown")
    )


def _expand_marked(module: ir.Operation) -> int:
    """Give native passes the expanded sort, marking which sorts to fuse back."""
    sorts = penguin_sort.penguin_sorts(module)
    for sort in sorts:
        sort.attributes[_EXPANDED_MARK] = ir.UnitAttr.get()
    penguin_sort.expand_sorts(sorts, [])  # erases the objects in ``sorts``
    return len(sorts)


def _fuse_marked(module: ir.Operation) -> None:
    """Fuse back the sorts :func:`_expand_marked` expanded (those still matching)."""
    marked = [
        op for op in ops_named(module, penguin_sort.SORT_NAMES) if _EXPANDED_MARK in op.attributes
    ]
    for sort in marked:
        del sort.attributes[_EXPANDED_MARK]
        reason, iota = penguin_sort.fusion_skip_reason(sort)
        if reason is None:
            penguin_sort.fuse(sort, iota)


def _instance_keys(elements: Sequence[Element]) -> list[str]:
    """Each element's key in the statistics: its pass's name, then "NAME #2", "NAME #3"
    for later instances of the same pass (mlir-opt reports each instance on its own)."""
    seen: Counter = Counter()
    keys = []
    for el in elements:
        name = el.ours.name if el.ours is not None else el.label
        seen[name] += 1
        keys.append(name if seen[name] == 1 else f"{name} #{seen[name]}")
    return keys


def print_statistics(state: RunState, out: TextIO = sys.stderr) -> None:
    """mlir-opt style per-pass statistics: per rewriter matched/rewritten/skipped."""
    print("===" + "-" * 73 + "===", file=out)
    print("                         ... Pass statistics report ...", file=out)
    print("===" + "-" * 73 + "===", file=out)
    for pass_name, rewriters in state.statistics.items():
        print(pass_name, file=out)
        for name, st in rewriters.items():
            print(f"  {name}", file=out)
            print(f"    (S) {st.matched:>6} matched   - root ops visited", file=out)
            print(f"    (S) {st.rewritten:>6} rewritten - ops rewritten", file=out)
            for reason, count in sorted(st.skipped.items()):
                print(f"    (S) {count:>6} skipped   - {reason}", file=out)


def print_timing(timings: list[tuple[str, float]], out: TextIO = sys.stderr) -> None:
    """MLIR's execution time report (``--mlir-timing``): wall time per pipeline element,
    in order, with mlir-opt's ``Parser`` and ``Output`` rows; an element that runs
    several times (``--split-input-file``) is summed."""
    rows: dict[str, float] = {}
    for name, seconds in timings:
        rows[name] = rows.get(name, 0.0) + seconds
    total = sum(rows.values())
    print("===" + "-" * 73 + "===", file=out)
    print("                         ... Execution time report ...", file=out)
    print("===" + "-" * 73 + "===", file=out)
    print(f"  Total Execution Time: {total:.4f} seconds\n", file=out)
    print("  ----Wall Time----  ----Name----", file=out)
    for name, seconds in [*rows.items(), ("Total", total)]:
        share = 100.0 * seconds / total if total else 0.0
        print(f"  {seconds:8.4f} ({share:5.1f}%)  {name}", file=out)
    out.flush()


__all__ = [
    "VERIFY_MODES",
    "Element",
    "IRPrinting",
    "Pipeline",
    "PipelineError",
    "is_pass_name",
    "parse_pipeline",
    "print_statistics",
    "print_timing",
    "split_top_level",
]
