"""Pipelines that mix penguin-opt passes with native MLIR passes, mlir-opt style.

``inline,stablehlo-canonicalize-for-penguin{broadcast-num-elements-to-fold=4096},cse``:
comma-separated elements, each a pass name with optional ``{key=value ...}`` options. Our
passes run as real passes inside MLIR's PassManager (so ``--mlir-timing`` lists them by
name); a native pass is added at module level, or nested under ``func.func`` when MLIR
restricts it to functions. ``builtin.module(...)`` around the whole list is accepted.

Penguin-form sorts are not valid for the stock verifier or native passes. Once a
for-penguin pass has run, every native pass after it is bracketed by two helper passes
(``penguin-sort-expand`` / ``penguin-sort-refuse``) that give it the expanded form and fuse
back the sorts that still match. Verification (see ``Pipeline.verify``) understands the
form; it runs as ``penguin-opt-verify`` steps in the PassManager.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from jaxlib.mlir import ir, passmanager

from . import penguin_sort
from .ir_util import ops_named
from .passes import PASSES
from .passes.base import Diagnostic, ModulePass, OptionError, PassError, RunState, Severity
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
    return [p for p in parts if p]


@dataclass(frozen=True)
class Element:
    text: str
    ours: ModulePass | None = None

    @property
    def label(self) -> str:
        return self.ours.name if self.ours else self.text


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

    def run(
        self,
        module: ir.Operation,
        state: RunState | None = None,
        *,
        timing: bool = False,
        print_ir_after_all: bool = False,
        print_generic: bool = False,
    ) -> RunState:
        """Run every element on ``module`` in place. Raises PassError / ir.MLIRError."""
        state = state if state is not None else RunState()
        ctx = module.context
        pm = passmanager.PassManager("builtin.module", context=ctx)
        failures: list[BaseException] = []
        # Penguin-form sorts may come with the input (our own output read back) or from a
        # for-penguin pass: native passes then get the expanded form.
        penguin_seen = bool(penguin_sort.penguin_sorts(module))
        any_ours = any(el.ours is not None for el in self.elements)
        # With one of our passes in the pipeline, the verification is ours (penguin-aware,
        # and once per run of our passes); without, MLIR's own verifier after each pass.
        pm.enable_verifier(not any_ours and self.verify != "off")
        verify = any_ours and self.verify != "off"
        run_of_ours: list[str] = []
        for i, el in enumerate(self.elements):
            if el.ours is not None:
                pm.add(
                    _python_pass(el.ours, state, failures),
                    name=el.ours.name,
                    argument=el.ours.name,
                    description=el.ours.summary,
                )
                penguin_seen = penguin_seen or isinstance(el.ours, CanonicalizeForPenguin)
                run_of_ours.append(el.ours.name)
                run_ends = i + 1 == len(self.elements) or self.elements[i + 1].ours is None
                if verify and (self.verify == "each" or run_ends):
                    pm.add(_verify_step(run_of_ours, failures), name=_VERIFY_STEP)
                    run_of_ours = []
                continue
            if penguin_seen:
                pm.add(_guard(_expand_marked, failures), name="penguin-sort-expand")
            pm.add(_native_pipeline_text(el.text, ctx))
            if penguin_seen:
                pm.add(_guard(_refuse_marked, failures), name="penguin-sort-refuse")
            if verify:
                pm.add(_verify_step([el.text], failures), name=_VERIFY_STEP)
        if timing:
            pm.enable_timing()
        if print_ir_after_all:
            pm.enable_ir_printing(print_after_all=True, print_generic_op_form=print_generic)
        try:
            with ctx, ir.Location.unknown(ctx):
                pm.run(module)
        except ir.MLIRError:
            if failures:
                raise failures[0] from None
            raise
        finally:
            del pm  # prints the timing report now
        if failures:
            raise failures[0]
        return state


def _native_pipeline_text(text: str, ctx: ir.Context) -> str:
    """``text`` as a module-anchored pipeline element, nesting under func.func if needed."""
    with ctx:
        errors = []
        for candidate in (text, f"func.func({text})"):
            try:
                passmanager.PassManager.parse(f"builtin.module({candidate})")
                return candidate
            except ValueError as err:
                errors.append(" ".join(str(err).split()))
        first = errors[0]
        if "does not refer to a registered pass" in first:
            known = ", ".join(sorted(PASSES))
            raise PipelineError(
                f"unknown pass '{text}' (penguin-opt passes: {known}; or any registered "
                "MLIR/StableHLO/MHLO pass)"
            )
        raise PipelineError(f"invalid pipeline element '{text}': {first}")


def _python_pass(p: ModulePass, state: RunState, failures: list[BaseException]):
    run = _guard(lambda module: p.run(module, state), failures)
    run.__name__ = p.name
    return run


_VERIFY_STEP = "penguin-opt-verify"


def _verify_step(pass_names: list[str], failures: list[BaseException]):
    """Verify the module (penguin-aware); a failure blames ``pass_names``."""
    names = list(pass_names)

    def verify(module: ir.Operation) -> None:
        try:
            penguin_sort.verify(module)
        except ir.MLIRError as err:
            raise _verifier_failure(names, err) from None

    return _guard(verify, failures)


def _verifier_failure(pass_names: list[str], err: ir.MLIRError) -> PassError:
    who = pass_names[0] if len(pass_names) == 1 else ", ".join(pass_names)
    hint = "" if len(pass_names) == 1 else " (--verify-each names the pass)"
    diags = list(getattr(err, "error_diagnostics", []) or [])
    if diags:
        d = diags[0]
        message = f"{who} produced invalid IR{hint}: {' '.join(d.message.split())}"
        return PassError(Diagnostic(Severity.ERROR, message, str(d.location)))
    return PassError(Diagnostic(Severity.ERROR, f"{who} produced invalid IR{hint}: {err}",
                                "unknown"))


def _guard(fn, failures):
    """``fn(module)`` as a PassManager callback: a Python exception must not cross into
    C++, so it is stashed in ``failures`` and the pass signals failure."""

    def run(op, pass_):
        try:
            fn(op.operation)
        except BaseException as err:
            failures.append(err)
            pass_.signal_pass_failure()

    return run


def _expand_marked(module: ir.Operation) -> None:
    """Give native passes the expanded sort, marking which sorts to fuse back."""
    sorts = penguin_sort.penguin_sorts(module)
    for sort in sorts:
        sort.attributes[_EXPANDED_MARK] = ir.UnitAttr.get()
    penguin_sort.expand_sorts(sorts, [])


def _refuse_marked(module: ir.Operation) -> None:
    from .dialect import Dialect
    from .passes.penguin_rewriters import FuseIotaSort
    from .passes.sweep import Sweep

    marked = [
        op for op in ops_named(module, penguin_sort.SORT_NAMES) if _EXPANDED_MARK in op.attributes
    ]
    for sort in marked:
        del sort.attributes[_EXPANDED_MARK]
        sweep = Sweep(Dialect(sort.name.split(".")[0]), "penguin-sort-refuse", RunState(), {})
        FuseIotaSort().rewrite(sort, sweep)


def print_statistics(state: RunState, out=sys.stderr) -> None:
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
