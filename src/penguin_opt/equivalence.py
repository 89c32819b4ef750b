"""Run a program before and after a pipeline on the same seeded random inputs.

The oracles are the StableHLO reference interpreter and XLA CPU, always in a child
process (they abort the process with LLVM ERROR on some inputs); ``oracle="auto"`` picks
one by the program's size (``AUTO_XLA_WORK``). Before execution a program is brought into
the interpreter's language without changing its meaning, by rules independent of the
passes under test:

* MHLO is converted to StableHLO (``hlo-legalize-to-stablehlo``), deprecated ops such as
  ``stablehlo.broadcast`` are legalized (``stablehlo-legalize-deprecated-ops``), CHLO is
  decomposed (``chlo-legalize-to-stablehlo``);
* penguin-form sorts are re-expanded with their index ramp;
* ``AwsNeuronErf`` becomes ``chlo.erf``; ``ResizeNearestGrad`` becomes a reshape that
  splits every dimension into (input dim, scale), a reduce-sum over the scale axes and,
  in ``mean`` mode, a division by the window volume;
* a shape-polymorphic program (dynamic @main arguments) is specialized to the shapes of
  the inputs or to ``dynamic_dim_size`` (``_specialize``, ``_refine``).
Anything else the interpreter cannot run is reported as not checkable, never as a pass.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import math
import os
import pickle
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from . import isolated, penguin_sort
from .cli_common import DEFAULT_TIMEOUT, one_line
from .elements import (
    _RESOURCE_HANDLE,
    DTYPES,
    dtype_of,
    is_complex_tensor,
    make_elements,
    read_elements,
    type_key,
)
from .ir_util import entry_function, first_op, ops_under, string_value
from .xla_ops import UnrunnableOp, unfuse

if TYPE_CHECKING:  # the bindings are imported where used
    from typing import TypeAlias

    from jaxlib.mlir import ir

    # An argument of @main: (shape, element type key).
    ArgSpec: TypeAlias = tuple[tuple[int, ...], str]
    # A result of @main: (printed type, shape with -1 for dynamic dims or None, element key).
    ResultForm: TypeAlias = tuple[str, tuple[int, ...] | None, str]


class NotCheckable(Exception):
    """The program contains something no oracle here can execute."""


class InputsDoNotFit(NotCheckable):
    """The given inputs do not fit @main's arguments (count, shape or element type)."""


@dataclass
class OutputReport:
    index: int
    shape: tuple[int, ...]
    dtype: str
    max_abs: float
    max_rel: float
    ok: bool
    oracle: str = ""
    # Differed beyond the tolerance, and agrees within it when both programs run in f64
    # (``promote_to_f64``): the difference is the rounding of re-associated sums.
    rounding: bool = False


@dataclass
class Report:
    outputs: list[OutputReport] = field(default_factory=list)
    oracle: str = "interpreter"
    trials: int = 0
    note: str = ""
    problem: str = ""  # a difference found before any output was compared

    @property
    def ok(self) -> bool:
        return not self.problem and all(o.ok for o in self.outputs)

    def table(self) -> str:
        several = "+" in self.oracle  # one row per output and oracle: name the oracle
        col = (lambda text: f"{text:<12} ") if several else (lambda text: "")
        lines = [
            f"oracle: {self.oracle}, trials: {self.trials}"
            + (f" ({self.note})" if self.note else ""),
            f"{'output':>6}  {col('oracle')}{'shape':<16} {'dtype':<12} {'max abs':>10} "
            f"{'max rel':>10}  verdict",
        ]
        for o in self.outputs:
            lines.append(
                f"{o.index:>6}  {col(o.oracle)}{list(o.shape)!s:<16} {o.dtype:<12} "
                f"{o.max_abs:>10.3g} {o.max_rel:>10.3g}  {_verdict(o)}"
            )
        if self.problem:
            lines.append(f"MISMATCH: {self.problem}")
        return "\n".join(lines)


def _verdict(o: OutputReport) -> str:
    if o.rounding:
        return "ok in f64 (rounding)"
    if not o.ok and o.max_abs == 0 and o.max_rel == 0:  # equal as numbers, not as bits
        # (integers that differ are never 0 apart: 64-bit ones are measured exactly)
        return "MISMATCH (bitwise: a zero's sign or a NaN's payload)"
    return "ok" if o.ok else "MISMATCH"


# ---------------------------------------------------------------------------- progress


PROGRESS_AFTER = 2.0  # seconds a check runs quietly before its progress is reported
PROGRESS_EVERY = 15.0  # seconds between lines while nothing changes


class ProgressTicker:
    """Report a changing status to ``report`` from a timer thread, as ``"STATUS, N s"``
    (N: seconds since the ticker started): nothing for the first ``delay`` seconds (a
    fast job stays quiet), then the status of that moment, then a line on every change
    (at most one per ``min_gap`` seconds; quicker changes show only the latest) and every
    ``every`` seconds while nothing changes. Use it as a context manager: when the
    ``with`` block ends the thread is stopped and joined, and ``report`` is never called
    again. An exception in ``report`` (a closed stderr) ends the reporting, not the job."""

    def __init__(
        self, report: Callable[[str], None], *, delay: float, every: float, min_gap: float = 1.0
    ) -> None:
        self._report, self._delay, self._every, self._min_gap = report, delay, every, min_gap
        self._cond = threading.Condition()
        self._text: str | None = None
        self._changed = self._stopped = False
        self._start = time.monotonic()
        self._thread = threading.Thread(target=self._run, name="penguin-opt-progress", daemon=True)

    def __enter__(self) -> ProgressTicker:
        self._start = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
        self._thread.join()

    def status(self, text: str) -> None:
        """The job's state now (e.g. ``"checking with XLA: trial 1/2"``)."""
        with self._cond:
            self._text, self._changed = text, True
            self._cond.notify_all()

    def _run(self) -> None:
        with self._cond:
            self._cond.wait_for(lambda: self._stopped, timeout=self._delay)
            while not self._stopped:
                if self._text is None:  # no status yet: wait for one
                    self._cond.wait_for(lambda: self._stopped or self._changed)
                    continue
                try:
                    self._report(f"{self._text}, {time.monotonic() - self._start:.0f} s")
                except Exception:
                    return
                self._changed = False
                self._cond.wait_for(lambda: self._stopped, timeout=self._min_gap)
                self._cond.wait_for(
                    lambda: self._stopped or self._changed,
                    timeout=max(self._every - self._min_gap, 0.0),
                )


class _NoProgress:
    """The ticker of a check nobody watches."""

    def status(self, text: str) -> None:
        pass


_PROGRESS: contextvars.ContextVar[ProgressTicker | _NoProgress | None] = contextvars.ContextVar(
    "progress", default=None
)


def _tick() -> ProgressTicker | _NoProgress:
    """The running check's ticker (one that reports nothing outside a check)."""
    return _PROGRESS.get() or _NoProgress()


# ---------------------------------------------------------------------------- preparation


def prepare_for_interpreter(
    module_text: str,
    resize_mode: str = "mean",
    *,
    split_complex: bool = True,
    refine: Sequence[str] | None = None,
    custom_calls: bool = False,
) -> str:
    """StableHLO text the oracles can run, with the same meaning; ``refine``: @main's
    argument types to specialize a dynamically shaped program to (``_refine``);
    ``custom_calls``: keep the custom calls this module does not know (for XLA, which runs
    those it has an implementation of, e.g. jax's LAPACK calls, and names the others);
    otherwise they are not checkable here."""
    from jaxlib.mlir import ir, passmanager

    from .context import make_context
    from .io import module_text as print_module
    from .penguin_sort import parse_allowing_penguin_sorts

    ctx = make_context()
    with ctx, ir.Location.unknown(ctx):
        module = parse_allowing_penguin_sorts(module_text, "program")
        penguin_sort.expand(module)
        entry = _main_func(module.operation)
        name = string_value(entry.attributes["sym_name"])
        if name != "main":  # the oracles run @main
            ir.SymbolTable.replace_all_symbol_uses(name, "main", module.operation)
            entry.attributes["sym_name"] = ir.StringAttr.get("main")
        _replace_known_custom_calls(module, resize_mode)
        try:
            unfuse(module)
        except UnrunnableOp as err:
            raise NotCheckable(str(err)) from None
        if "dense_resource<" in module_text:  # (printed text: its constants say so)
            _inline_resources(module)
        pm = passmanager.PassManager.parse(
            "builtin.module(hlo-legalize-to-stablehlo,func.func(chlo-legalize-to-stablehlo),"
            "func.func(stablehlo-legalize-deprecated-ops))"
        )
        pm.run(module)
        if refine is not None:
            module = _refine(module, refine)
        if split_complex:
            _split_complex_results(module)
        for op in ops_under(module):
            if op.name == "stablehlo.custom_call":
                target = string_value(op.attributes["call_target_name"])
                if _PYTHON_CALLBACK.search(target):
                    raise NotCheckable(
                        f"'stablehlo.custom_call @{target}' calls back into the Python process "
                        "that lowered the program (jax.pure_callback, io_callback, "
                        "jax.debug.print): no oracle can run it"
                    )
                if not custom_calls:
                    raise NotCheckable(f"cannot execute 'stablehlo.custom_call @{target}'")
            elif op.name.startswith("mhlo."):
                raise NotCheckable(f"cannot execute '{op.name}'")
        text = print_module(module)
        handle = _RESOURCE_HANDLE.search(text)
        if handle:  # neither oracle reads one: the interpreter reads stray memory
            raise NotCheckable(f"the oracles cannot read 'dense_resource<{handle[1]}>'")
        return text


def _inline_resources(module: ir.Operation) -> None:
    """``elements.inline_resources``; NotCheckable for a resource without values."""
    from .elements import ResourceError, inline_resources

    try:
        inline_resources(module)
    except ResourceError as err:
        raise NotCheckable(f"{err}: no oracle can run it") from None


# jax's host callbacks (xla_python_cpu_callback, xla_ffi_python_cpu_callback, ...): their
# backend config indexes a table of Python functions in the process that lowered the program.
_PYTHON_CALLBACK = re.compile(r"python.*callback")


def _refine(module: ir.Operation, types: Sequence[str]) -> ir.Operation:
    """``module`` with @main specialized to the argument ``types`` and the shapes
    propagated through the program, as jax does before it executes a shape-polymorphic
    export: composites become calls of their decompositions (whose signatures can then be
    specialized), ``stablehlo-refine-arguments``, then jax's own refinement
    (``_compat.refine_polymorphic_shapes``: StableHLO's refine-shapes extended with jax's
    shape custom calls such as ``stablehlo.dynamic_top_k``, canonicalize-dynamism, and
    jax's shape assertions checked and dropped). Where jax's refinement fails, StableHLO's
    passes (``stablehlo-refine-shapes``, ``stablehlo-canonicalize-dynamism``,
    ``stablehlo-check-shape-assertions``: a false assertion is an error naming the
    constraint) refine ``module`` in place or say why not. NotCheckable if a type in @main
    stays dynamic."""
    from jaxlib.mlir import ir, passmanager

    from ._compat import refine_polymorphic_shapes
    from .io import module_bytecode

    passmanager.PassManager.parse(
        "builtin.module(func.func(stablehlo-legalize-composite-to-call),"
        f"stablehlo-refine-arguments{{types='{','.join(types)}'}})"
    ).run(module)
    try:
        module = ir.Module.parse(refine_polymorphic_shapes(module_bytecode(module))).operation
        # (it may make CHLO ops, e.g. chlo.top_k of a stablehlo.dynamic_top_k)
        passmanager.PassManager.parse("builtin.module(func.func(chlo-legalize-to-stablehlo))").run(
            module
        )
    except Exception:  # an XLA status error: StableHLO's passes say why
        passmanager.PassManager.parse(
            "builtin.module(stablehlo-refine-shapes,func.func(stablehlo-canonicalize-dynamism),"
            "func.func(stablehlo-check-shape-assertions))"
        ).run(module)
    ftype = ir.FunctionType(ir.TypeAttr(_main_func(module).attributes["function_type"]).value)
    for t in (*ftype.inputs, *ftype.results):
        if isinstance(t, ir.ShapedType) and not ir.ShapedType(t).has_static_shape:
            raise NotCheckable(
                f"@main keeps the dynamic type {t} when its arguments are {', '.join(types)}"
            )
    return module


def _split_complex_results(module: ir.Operation) -> None:
    """Return complex results of @main as (real, imag) pairs: the bindings abort the
    process when a complex elements attribute (an interpreter result) reaches Python."""
    from jaxlib.mlir import ir

    from .ir_util import create

    main = _main_func(module)
    ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
    if not any(is_complex_tensor(t) for t in ftype.results):
        return
    new_results = []
    for block in main.regions[0].blocks:
        ret = block.operations[len(block.operations) - 1].operation
        if ret.name != "func.return":
            continue
        values = []
        for v in ret.operands:
            if is_complex_tensor(v.type):
                t = ir.RankedTensorType(v.type)
                part = ir.RankedTensorType.get(t.shape, ir.ComplexType(t.element_type).element_type)
                values += [
                    create(f"stablehlo.{k}", [part], [v], {}, before=ret).result
                    for k in ("real", "imag")
                ]
            else:
                values.append(v)
        create("func.return", [], values, {}, before=ret)
        ret.erase()
        new_results = [v.type for v in values]
    main.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get(list(ftype.inputs), new_results)
    )
    if "res_attrs" in main.attributes:  # one entry per result (else the printer crashes)
        attrs = []
        for t, a in zip(ftype.results, ir.ArrayAttr(main.attributes["res_attrs"]), strict=True):
            attrs += [a, a] if is_complex_tensor(t) else [a]
        main.attributes["res_attrs"] = ir.ArrayAttr.get(attrs)


def _main_func(module: ir.Operation) -> ir.Operation:
    """The entry function: @main, or else the module's only public function (a file of
    one test function, as mlir-opt tests are written)."""
    entry, _ = entry_function(module)
    if entry is None:
        raise NotCheckable("no @main function (and not exactly one public function)")
    return entry


def _join_complex(outs: list[np.ndarray], result_keys: list[str]) -> list[np.ndarray]:
    joined, i = [], 0
    for key in result_keys:
        if key.startswith("complex"):
            # Not re + 1j * im: 1j * inf is (nan + inf j), which would hide the real part.
            both = np.empty(outs[i].shape, DTYPES[key])
            both.real, both.imag = outs[i], outs[i + 1]
            joined.append(both)
            i += 2
        else:
            joined.append(outs[i])
            i += 1
    return joined


def _replace_known_custom_calls(module: ir.Operation, resize_mode: str) -> None:
    from jaxlib.mlir import ir

    from .ir_util import create, replace_op

    for op in ops_under(module):
        if op.name == "mhlo.topk":  # XLA's TopK as the HLO importer gives it
            _top_k_reference(op, op.attributes)
            continue
        if op.name == "mhlo.erf":  # XLA's erf as the HLO importer gives it (MHLO's
            # legalization to StableHLO would make it a custom call no oracle runs)
            erf = create("chlo.erf", [op.results[0].type], list(op.operands), {}, before=op)
            replace_op(op, list(erf.results))
            continue
        if not op.name.endswith(".custom_call"):
            continue
        prefix = op.name.split(".")[0]
        target = string_value(op.attributes["call_target_name"])
        if target == "mhlo.topk" and "mhlo.attributes" in op.attributes:
            _top_k_reference(op, ir.DictAttr(op.attributes["mhlo.attributes"]))
            continue
        # Neuron's erf, and the CHLO erf XLA's exporters encode as a custom call (XLA's
        # chlo-recompose-ops makes it chlo.erf again)
        if target in ("AwsNeuronErf", "mhlo.erf") and len(op.operands) == len(op.results) == 1:
            erf = create("chlo.erf", [op.results[0].type], list(op.operands), {}, before=op)
            replace_op(op, list(erf.results))
        elif target == "ResizeNearestGrad" and len(op.operands) == 1 and len(op.results) == 1:
            replace_op(op, [_resize_nearest_grad_reference(op, prefix, resize_mode)])


def _top_k_reference(op: ir.Operation, attrs: ir.OpAttributeMap | ir.DictAttr) -> None:
    """TopK (largest, along the last dimension) is chlo.top_k; the smallest-k form stays
    and is reported as not checkable."""
    from jaxlib.mlir import ir

    from .ir_util import create, replace_op

    largest = "largest" not in attrs or ir.BoolAttr(attrs["largest"]).value
    if not largest or "k" not in attrs or len(op.operands) != 1 or len(op.results) != 2:
        return
    top_k = create(
        "chlo.top_k", [r.type for r in op.results], list(op.operands), {"k": attrs["k"]}, before=op
    )
    replace_op(op, list(top_k.results))


def _resize_nearest_grad_reference(op: ir.Operation, prefix: str, mode: str) -> ir.Value:
    """reshape (d_i*s_i) -> (d_i, s_i), reduce-sum over the s axes, divide for mean."""
    from jaxlib.mlir import ir

    from .ir_util import create

    grad = op.operands[0]
    gtype = ir.RankedTensorType(grad.type)
    rtype = ir.RankedTensorType(op.results[0].type)
    elem = gtype.element_type
    split = []
    scales = []
    for g, r in zip(gtype.shape, rtype.shape, strict=True):
        s = g // r if r else 1  # (an empty dim of an empty result: 0 = 0 x 1)
        split += [r, s]
        scales.append(s)
    reshaped = create(
        f"{prefix}.reshape", [ir.RankedTensorType.get(split, elem)], [grad], {}, before=op
    )
    scalar = ir.RankedTensorType.get([], elem)
    zero = create(
        f"{prefix}.constant",
        [scalar],
        [],
        {"value": make_elements(np.zeros((), dtype_of(elem)), scalar)},
        before=op,
    )
    dims = [2 * i + 1 for i in range(len(scales))]
    if prefix == "stablehlo":
        dims_attr = ir.DenseI64ArrayAttr.get(dims)
    else:
        dims_attr = ir.DenseElementsAttr.get(np.array(dims, np.int64))
    reduce = create(
        f"{prefix}.reduce",
        [rtype],
        [reshaped.result, zero.result],
        {"dimensions": dims_attr},
        before=op,
        regions=1,
    )
    block = reduce.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        add = ir.Operation.create(f"{prefix}.add", results=[scalar], operands=list(block.arguments))
        ir.Operation.create(f"{prefix}.return", operands=[add.result])
    if mode == "sum":
        return reduce.result
    volume = int(np.prod(scales))
    vol = create(
        f"{prefix}.constant",
        [rtype],
        [],
        {"value": make_elements(np.full(rtype.shape, volume, dtype_of(elem)), rtype)},
        before=op,
    )
    div = create(f"{prefix}.divide", [rtype], [reduce.result, vol.result], {}, before=op)
    return div.result


# ---------------------------------------------------------------------------- inputs


def main_signature(module_text: str) -> list[ArgSpec]:
    """(shape, element type key) of each argument of @main (-1 for a dynamic dim)."""
    return _signature(module_text)[0]


def _signature(
    module_text: str,
) -> tuple[list[ArgSpec], list[str], list[str], list[ResultForm], list[str]]:
    """(argument (shape, element key) list, result element keys, dynamic result types,
    result forms, argument element types as printed) of the entry function; a dynamic
    dimension of an argument is -1 in its shape (``_specialize`` gives it a size).
    NotCheckable unless every argument is a ranked tensor."""
    from jaxlib.mlir import ir

    from .context import make_context
    from .penguin_sort import parse_allowing_penguin_sorts

    ctx = make_context()
    with ctx, ir.Location.unknown(ctx):
        try:
            module = parse_allowing_penguin_sorts(module_text, "program")
        except ir.MLIRError as err:
            if "unregistered dialect" in str(err):
                raise NotCheckable(_unregistered_op(module_text)) from None
            raise
        op = _main_func(module.operation)
        ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
        sig, elements = [], []
        for t in ftype.inputs:
            if not isinstance(t, ir.RankedTensorType):
                raise NotCheckable(f"argument type {t} is not a ranked tensor")
            t = ir.RankedTensorType(t)
            if not t.has_static_shape and t.encoding is not None:
                raise NotCheckable(f"argument type {t} is dynamic and has an encoding")
            dims = tuple(-1 if t.is_dynamic_dim(i) else t.shape[i] for i in range(t.rank))
            sig.append((dims, type_key(t.element_type)))
            elements.append(str(t.element_type))
        keys = [
            type_key(t.element_type) if isinstance(t, ir.RankedTensorType) else _neutral(t)
            for t in ftype.results
        ]
        dynamic = [
            str(t)
            for t in ftype.results
            if isinstance(t, ir.ShapedType) and not ir.ShapedType(t).has_static_shape
        ]
        return sig, keys, dynamic, [_result_form(t) for t in ftype.results], elements


def _unregistered_op(module_text: str) -> str:
    """Why a program read with ``--allow-unregistered-dialect`` is not checkable: the
    first op of a dialect the tool does not know, which neither oracle can run."""
    from jaxlib.mlir import ir

    from .context import make_context
    from .penguin_sort import parse_allowing_penguin_sorts

    ctx = make_context(allow_unregistered=True)
    with ctx, ir.Location.unknown(ctx):
        module = parse_allowing_penguin_sorts(module_text, "program")
        op = first_op(module.operation, lambda op: not ctx.is_registered_operation(op.name))
        if op is not None:
            return f"cannot execute '{op.name}': an op of an unregistered dialect"
    return "the program holds an attribute or type of an unregistered dialect"


def _merged_signature(before: Sequence[ArgSpec], after: Sequence[ArgSpec]) -> list[ArgSpec]:
    """The argument specs both programs' @main accept: equal ones, or a dynamic dimension
    of one where the other has a size (a program specialized by its pipeline, e.g.
    ``stablehlo-refine-arguments``, is checked against the shape-polymorphic original at
    that size); NotCheckable when they differ otherwise."""

    def shown(sig: Sequence[ArgSpec]) -> str:
        return ", ".join(_spec_text(spec) for spec in sig)

    def accepts(b: ArgSpec, a: ArgSpec) -> bool:
        (shape_b, key_b), (shape_a, key_a) = b, a
        return (
            key_b == key_a
            and len(shape_b) == len(shape_a)
            and all(x == y or -1 in (x, y) for x, y in zip(shape_b, shape_a, strict=True))
        )

    if len(before) != len(after) or not all(map(accepts, before, after)):
        raise NotCheckable(f"signatures differ: ({shown(before)}) vs ({shown(after)})")
    return [
        (tuple(b if a == -1 else a for b, a in zip(shape_b, shape_a, strict=True)), key)
        for (shape_b, key), (shape_a, _) in zip(before, after, strict=True)
    ]


def _specialize(
    signature: Sequence[ArgSpec],
    elements: Sequence[str],
    inputs: Sequence[Sequence[np.ndarray]] | None,
    dim_size: int | None,
) -> tuple[list[ArgSpec], tuple[str, ...]]:
    """@main's argument specs with every dynamic dimension given a size, and those
    argument types as printed (what ``_refine`` specializes a shape-polymorphic program to).

    A dynamic dimension takes its size from the first input set when inputs are given
    (every set must then have the same shapes), else ``dim_size``; without either the
    program is not checkable. The programs are then specialized to those types before
    they run, as jax does before it runs a shape-polymorphic export."""
    sized = []
    for i, (shape, key) in enumerate(signature):
        if -1 in shape:
            given = inputs[0][i] if inputs and i < len(inputs[0]) else None
            if given is not None and given.ndim == len(shape):
                shape = tuple(g if d == -1 else d for d, g in zip(shape, given.shape, strict=True))
            elif dim_size is not None and not inputs:
                shape = tuple(dim_size if d == -1 else d for d in shape)
            elif not inputs:
                raise NotCheckable(
                    f"argument {i} has the dynamic type {_tensor_text(shape, elements[i])}: "
                    "give its inputs (--inputs) or a size for its dynamic dimensions "
                    "(--dynamic-dim-size)"
                )
        sized.append((shape, key))
    types = tuple(
        _tensor_text(shape, element) for (shape, _), element in zip(sized, elements, strict=True)
    )
    return sized, types


def _dims(shape: Sequence[int]) -> list[str]:
    return ["?" if d == -1 else str(d) for d in shape]


def _spec_text(spec: ArgSpec) -> str:
    """An argument spec as the checker's messages show it: ``f32[?, 4]``."""
    shape, key = spec
    return f"{key}[{', '.join(_dims(shape))}]"


def _tensor_text(shape: Sequence[int], element: str) -> str:
    """The MLIR tensor type of ``shape`` (-1: dynamic) and ``element``: ``tensor<?x4xf32>``."""
    return "tensor<" + "".join(f"{d}x" for d in _dims(shape)) + element + ">"


_TOKEN = re.compile(r"!(?:mhlo|stablehlo)\.token")


def _neutral(t: ir.Type) -> str:
    """A non-tensor type as printed, the same in both dialects: ``!mhlo.token`` is
    ``!stablehlo.token`` (also inside a tuple), as ``hlo-legalize-to-stablehlo`` maps it."""
    return _TOKEN.sub("!stablehlo.token", str(t))


def _result_form(t: ir.Type) -> tuple[str, tuple[int, ...] | None, str]:
    """(printed type, shape with -1 for dynamic dims or None if unranked, element key)."""
    from jaxlib.mlir import ir

    if not isinstance(t, ir.ShapedType):
        return str(t), None, _neutral(t)
    shaped = ir.ShapedType(t)
    key = type_key(shaped.element_type)
    if not shaped.has_rank:
        return str(t), None, key
    dims = tuple(-1 if shaped.is_dynamic_dim(i) else shaped.shape[i] for i in range(shaped.rank))
    return str(t), dims, key


def _results_compatible(before: Sequence[ResultForm], after: Sequence[ResultForm]) -> bool:
    """Same number of results, same element types, and shapes that agree wherever both
    are known (a pass may refine ``tensor<?xf32>`` to ``tensor<4xf32>``)."""
    if len(before) != len(after):
        return False
    for (_, shape_b, key_b), (_, shape_a, key_a) in zip(before, after, strict=True):
        if key_b != key_a:
            return False
        if shape_b is None or shape_a is None:
            continue
        if len(shape_b) != len(shape_a) or any(
            x != y and x != -1 and y != -1 for x, y in zip(shape_b, shape_a, strict=True)
        ):
            return False
    return True


def random_inputs(signature: Iterable[ArgSpec], seed: int) -> list[np.ndarray]:
    signature = list(signature)
    try:
        return _random_arrays(signature, seed)
    except MemoryError:
        raise NotCheckable("out of memory making the random inputs of @main") from None


def _refuse_inputs_beyond_memory(signature: Sequence[ArgSpec], trials: int = 1) -> None:
    """NotCheckable when making @main's inputs for ``trials`` trials would take more than
    half the memory this process may use (the machine's, or its cgroup's limit): each
    trial's arrays, plus the float64 draws (complex: two, and their sum) the largest one
    is made from. Such a check cannot run here, and numpy would raise MemoryError or a
    dimension error, or the kernel kill the process."""
    kept = transient = 0
    elements = 0
    for shape, key in signature:
        count = math.prod(shape)
        dtype = DTYPES.get(key)
        itemsize = 16 if dtype is None else np.dtype(dtype).itemsize
        elements += count
        kept += count * itemsize
        transient = max(transient, count * (48 if key.startswith("complex") else 16))
    needed = trials * kept + transient
    memory = _usable_memory()
    if needed > memory // 2:
        raise NotCheckable(
            f"the inputs of @main hold {elements:,} elements: making them for {trials} "
            f"trial{'s' * (trials != 1)} would take about {needed / 2**30:,.1f} GiB, more than "
            f"half of the memory here ({memory / 2**30:,.1f} GiB)"
        )


def _usable_memory() -> int:
    """Bytes of memory this process may use: the machine's, or less under a cgroup limit
    (v2 ``memory.max`` or v1 ``memory.limit_in_bytes``, of this process's cgroup as
    ``/proc/self/cgroup`` names it, or at the root)."""
    try:
        memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        memory = 1 << 34
    for path in _cgroup_limit_files():
        try:
            with open(path) as f:
                limit = f.read().strip()
        except OSError:
            continue
        if limit.isdigit():
            memory = min(memory, int(limit))
    return memory


def _cgroup_limit_files() -> list[str]:
    files = ["/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"]
    try:
        with open("/proc/self/cgroup") as f:
            lines = f.read().splitlines()
    except OSError:
        return files
    for line in lines:  # "0::/path" (v2), "4:memory:/path" (v1)
        _, controllers, path = line.split(":", 2)
        path = path.rstrip("/")
        if not path:
            continue
        if controllers == "":
            files.append(f"/sys/fs/cgroup{path}/memory.max")
        elif "memory" in controllers.split(","):
            files.append(f"/sys/fs/cgroup/memory{path}/memory.limit_in_bytes")
    return files


def _random_arrays(signature: Sequence[ArgSpec], seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    arrays = []
    for shape, key in signature:
        dtype = DTYPES.get(key)
        if dtype is None:
            raise NotCheckable(f"no random inputs for element type {key}")
        if dtype == np.bool_:
            arrays.append(rng.integers(0, 2, shape).astype(np.bool_))
        elif dtype.kind in "iu" or key in ("i2", "i4", "ui2", "ui4"):
            lo = 0 if key.startswith("ui") else -8
            hi = 2 if key in ("i2", "ui2") else 8
            arrays.append(rng.integers(lo if key != "i2" else -2, hi, shape).astype(dtype))
        elif dtype.kind == "c":
            arrays.append(
                (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
            )
        else:
            arrays.append(rng.standard_normal(shape).astype(dtype))
    return arrays


# ---------------------------------------------------------------------------- oracles


def _interpret_child(payload: bytes) -> bytes:
    """Child-process body: run @main of ``text`` on ``inputs`` with eval_module."""
    text, inputs = pickle.loads(payload)
    from jaxlib.mlir import ir
    from jaxlib.mlir.dialects import stablehlo

    from .context import make_context

    ctx = make_context()
    with ctx, ir.Location.unknown(ctx):
        module = ir.Module.parse(text)
        func = _main_func(module.operation)
        ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
        args = [make_elements(a, t) for a, t in zip(inputs, ftype.inputs, strict=True)]
        outs = stablehlo.eval_module(module, args)
        return pickle.dumps([np.array(read_elements(o)) for o in outs])


_LAPACK_CALL = re.compile(r"[@\"](?:lapack|blas)_")  # a custom call's target, either form
_XLA_COMPILED: dict[str, tuple] = {}  # in the XLA child: sha256 of the text -> (exe, device)


def _xla_child(payload: bytes) -> bytes:
    """Child-process body: compile ``text`` with XLA CPU (through jax) and run it."""
    text, inputs = pickle.loads(payload)
    import jax

    from ._compat import cpu_compile_and_load, initialize_cpu_lapack

    # Without x64, device_put narrows 64-bit inputs (i64 -> i32, f64 -> f32) and the
    # executable rejects them or, worse, the program runs on other values.
    jax.config.update("jax_enable_x64", True)
    key = hashlib.sha256(text.encode()).hexdigest()
    try:
        if key not in _XLA_COMPILED:  # a check runs each program once per trial
            if _LAPACK_CALL.search(text):  # jax's LAPACK calls: null pointers until then
                initialize_cpu_lapack()
            exe_device = cpu_compile_and_load(text)
            while len(_XLA_COMPILED) >= 2:  # the two programs of one check
                del _XLA_COMPILED[next(iter(_XLA_COMPILED))]
            _XLA_COMPILED[key] = exe_device
        exe, device = _XLA_COMPILED[key]
    except Exception as err:  # XLA status errors (unsupported op, custom call, ...)
        return pickle.dumps(NotCheckable(one_line(err, 300)))
    try:
        buffers = [jax.device_put(a, device) for a in inputs]
        results = exe.execute_sharded(buffers).disassemble_into_single_device_arrays()
        return pickle.dumps([np.asarray(r[0]) for r in results])
    except Exception as err:  # runtime status errors (out of memory, ...)
        return pickle.dumps(NotCheckable(one_line(err, 300)))


def _prepare_child(payload: bytes) -> bytes:
    """Child-process body: ``prepare_for_interpreter`` (the native conversion passes can
    abort the process too, e.g. hlo-legalize-to-stablehlo on a malformed convolution)."""
    text, (resize_mode, split_complex, refine, custom_calls) = pickle.loads(payload)
    try:
        return pickle.dumps(
            prepare_for_interpreter(
                text,
                resize_mode,
                split_complex=split_complex,
                refine=refine,
                custom_calls=custom_calls,
            )
        )
    except NotCheckable as err:
        return pickle.dumps(err)
    except Exception as err:  # MLIRError from the conversion passes
        return pickle.dumps(
            NotCheckable("cannot convert the program for the oracles: " + one_line(err, 300))
        )


def prepare_isolated(
    text: str,
    resize_mode: str,
    split_complex: bool,
    refine: tuple[str, ...] | None = None,
    custom_calls: bool = False,
) -> str:
    """``prepare_for_interpreter`` in a child process."""
    return _run_child(
        "prepare",
        _prepare_child,
        text,
        (resize_mode, split_complex, refine, custom_calls),
        what="converting the program for the oracles",
    )


_TIMEOUT: contextvars.ContextVar[float] = contextvars.ContextVar("timeout", default=DEFAULT_TIMEOUT)


def _run_child(
    kind: str,
    fn: Callable[[bytes], bytes],
    text: str,
    inputs: list[np.ndarray] | tuple,
    what: str = "",
) -> list[np.ndarray] | str:
    """Run ``fn`` in a per-oracle child process; a crash there, a timeout or an exception
    the child did not expect (e.g. MemoryError) raises NotCheckable."""
    what = what or f"the {kind} oracle"
    timeout = _TIMEOUT.get()
    import multiprocessing

    if multiprocessing.current_process().daemon:  # (Python refuses it: an AssertionError)
        raise NotCheckable(
            f"{what} needs a child process, which a daemonic process may not start (dask's "
            "workers are daemonic by default: start them with distributed.worker.daemon: "
            "False, e.g. DASK_DISTRIBUTED__WORKER__DAEMON=False)"
        )
    try:
        result = pickle.loads(
            isolated.call(kind, fn, pickle.dumps((text, inputs)), timeout=timeout, stderr="capture")
        )
    except isolated.ChildDied as died:
        if died.signal in (None, "SIGABRT"):  # abort(): an LLVM ERROR, a failed CHECK
            raise NotCheckable(
                f"{what} aborted the process ({died.reason or 'LLVM ERROR'})"
            ) from None
        reason = f"{died.signal}: {died.reason}" if died.reason else died.signal
        raise NotCheckable(f"{what} crashed the process ({reason})") from None
    except isolated.ChildTimedOut:
        raise NotCheckable(f"{what} did not finish within {timeout:g} s (--timeout)") from None
    except isolated.Stopped:
        raise NotCheckable("stopped") from None
    except Exception as err:  # raised in the child: MemoryError, an unexpected error
        message = one_line(err, 300)
        raise NotCheckable(f"{what} failed: {type(err).__name__}: {message}") from None
    if isinstance(result, NotCheckable):
        raise result
    return result


def interpret(text: str, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Run prepared StableHLO text on the reference interpreter (child process)."""
    return _run_child("interpreter", _interpret_child, text, inputs)


def run_xla(text: str, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Run prepared StableHLO text on XLA CPU (child process)."""
    return _run_child("xla", _xla_child, text, inputs)


ORACLES = ("interpreter", "xla")
_ORACLE_LABELS = {"interpreter": "the interpreter", "xla": "XLA"}


# ---------------------------------------------------------------------------- comparison


_SUB_BYTE_INTS = ("int2", "int4", "uint2", "uint4")


def is_integral(dtype: np.dtype) -> bool:
    return dtype == np.bool_ or dtype.kind in "iu" or dtype.name in _SUB_BYTE_INTS


def compare_arrays(
    a: np.ndarray, b: np.ndarray, rtol: float, atol: float
) -> tuple[float, float, bool]:
    """(max abs error, max rel error, verdict). Integers and bools compare exactly. For
    floats with rtol = atol = 0 the verdict is bitwise equality (-0.0 != 0.0, NaN payloads
    count); otherwise NaNs must coincide, infs must be equal, and finite values must
    satisfy |a-b| <= atol + rtol*|a|."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return float("inf"), float("inf"), False
    af = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
    bf = b.astype(af.dtype)
    finite = np.isfinite(af) & np.isfinite(bf)
    diff = np.abs(af[finite] - bf[finite])
    scale = np.abs(af[finite])
    max_abs = float(diff.max()) if diff.size else 0.0
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        # relative to 0, any difference is infinitely far (not 4e307 over float64's tiny)
        relative = np.where(scale > 0, diff / np.where(scale > 0, scale, 1.0), np.inf)
        relative[diff == 0] = 0.0
        max_rel = float(relative.max()) if diff.size else 0.0
    nan_a, nan_b = np.isnan(af), np.isnan(bf)
    inf_a = np.isinf(af)
    same_special = np.array_equal(nan_a, nan_b) and np.array_equal(inf_a, np.isinf(bf))
    same_special = same_special and np.array_equal(af[inf_a], bf[inf_a])
    if not same_special:  # an inf or NaN in one only: as far apart as values get
        max_abs = max_rel = float("inf")
    if is_integral(a.dtype) or (rtol == 0 and atol == 0):
        if a.dtype.name in _SUB_BYTE_INTS or a.dtype == np.bool_:
            same = np.array_equal(a.astype(np.int64), b.astype(np.int64))
        else:
            same = a.tobytes() == b.tobytes()
        if not same and a.dtype.kind in "iu" and a.dtype.itemsize == 8:
            max_abs = _max_wide_int_difference(a, b)  # f64 would call 2^60 + 1 equal
        return max_abs, max_rel, bool(same)
    ok = same_special and bool(np.all(diff <= atol + rtol * scale))
    return max_abs, max_rel, ok


def _max_wide_int_difference(a: np.ndarray, b: np.ndarray) -> float:
    """The largest |a - b| of two 64-bit integer arrays, exactly (then as a float): the
    values mapped in order onto uint64, where the larger minus the smaller cannot wrap."""
    if a.dtype.kind == "i":
        a = a.view(np.uint64) ^ np.uint64(1 << 63)
        b = b.view(np.uint64) ^ np.uint64(1 << 63)
    diff = np.where(a > b, a - b, b - a)
    return float(diff.max()) if diff.size else 0.0


def non_finite_introduced(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """Where ``after`` holds an inf or NaN (or an inf of the other sign) and ``before`` a
    finite value or another special (a bool mask; all False for integers): never the
    rounding of a sum, which moves a finite value by a little, unless the exact value is
    beyond the type's range (see ``_recheck_in_f64``)."""
    if before.shape != after.shape or before.dtype.kind not in "fcV" or is_integral(before.dtype):
        return np.zeros(before.shape, bool)
    a = before.astype(np.complex128 if before.dtype.kind == "c" else np.float64)
    b = after.astype(a.dtype)
    with np.errstate(invalid="ignore"):
        return ~np.isfinite(b) & ~((a == b) | (np.isnan(a) & np.isnan(b)))


def _overflow_threshold(dtype: np.dtype) -> float | None:
    """The least magnitude that rounds to inf in float ``dtype`` (numpy's or ml_dtypes'):
    its largest finite value plus half an ulp there (65520 for f16, whose largest is
    65504); None if there is no such type."""
    import ml_dtypes

    for finfo in (np.finfo, ml_dtypes.finfo):
        try:
            info = finfo(dtype)
        except (TypeError, ValueError):
            continue
        largest, eps = float(info.max), float(info.eps)
        return largest + eps * largest / (2 - eps) / 2  # ulp(max) = eps * 2**emax
    return None


def reduction_size(module_text: str) -> int:
    """The largest number of terms any one output element of a reduction-like op sums
    (dot_general contracting dims, convolution window x input features, reduce and
    reduce_window extents) in ``module_text``; 1 if there is none."""
    return reduction_profile(module_text)[0]


def reduction_profile(module_text: str) -> tuple[int, float]:
    """(``reduction_size``, the largest eps among the float operand types of the
    reduction-like ops, 0.0 if none). The oracles may accumulate in the operand type: the
    reference interpreter sums a bf16 x bf16 -> f32 convolution in bf16."""
    profile = program_profile(module_text)
    return profile.terms, profile.operand_eps


@dataclass(frozen=True)
class Profile:
    """What the checker reads off a program before running it."""

    terms: int  # the largest number of terms one output element of a reduction sums
    operand_eps: float  # the coarsest eps a reduction reads (0.0: none reads floats)
    work: int  # element operations the interpreter performs (see ``program_profile``)


def program_profile(module_text: str) -> Profile:
    """The reduction profile (``reduction_profile``) and the interpreter's work: the sum,
    over every op, of its result elements times the terms each sums (a convolution's
    window x input features, a dot's contracting size, a reduce's or reduce_window's
    extent; 1 for other ops). A ``while`` body counts once. It predicts the reference
    interpreter's time (about 0.1 µs per unit, see ``AUTO_XLA_WORK``)."""
    from jaxlib.mlir import ir

    from .context import make_context
    from .penguin_sort import parse_allowing_penguin_sorts

    largest, coarsest, work = 1, 0.0, 0
    with make_context(), ir.Location.unknown():
        module = parse_allowing_penguin_sorts(module_text, "program")
        for op in ops_under(module):
            kind = op.name.split(".", 1)[-1]
            terms = 1
            if kind in _REDUCTION_KINDS:
                coarsest = max([coarsest] + [_eps_of(v.type) for v in op.operands])
                terms = _terms(op, kind)
                largest = max(largest, terms)
            work += _elements(op) * terms
    return Profile(largest, coarsest, work)


def _terms(op: ir.Operation, kind: str) -> int:
    """Terms one output element of the reduction-like ``op`` sums (1 if not known)."""
    from jaxlib.mlir import ir

    try:
        if kind == "convolution":
            rhs = ir.RankedTensorType(op.operands[1].type).shape
            return max(int(np.prod(rhs)) // max(_conv_out_feature_size(op), 1), 1)
        if kind == "dot_general":
            text = str(op.attributes["dot_dimension_numbers"])
            lhs = ir.RankedTensorType(op.operands[0].type).shape
            dims = _contracting(text)
            return max(int(np.prod([lhs[d] for d in dims])) if dims else 1, 1)
        if kind == "dot":
            return max(ir.RankedTensorType(op.operands[0].type).shape[-1], 1)
        if kind == "reduce":
            shape = ir.RankedTensorType(op.operands[0].type).shape
            dims = _ints(op.attributes["dimensions"])
            return max(int(np.prod([shape[d] for d in dims])) if dims else 1, 1)
        return max(int(np.prod(_ints(op.attributes["window_dimensions"]))), 1)
    except (ValueError, TypeError, IndexError, KeyError):
        return 1


def _elements(op: ir.Operation) -> int:
    """Elements of ``op``'s ranked tensor results (dynamic dims count 1)."""
    from jaxlib.mlir import ir

    total = 0
    for result in op.results:
        if isinstance(result.type, ir.RankedTensorType):
            t = ir.RankedTensorType(result.type)
            total += math.prod(1 if t.is_dynamic_dim(i) else t.shape[i] for i in range(t.rank))
    return total


_REDUCTION_KINDS = ("convolution", "dot_general", "dot", "reduce", "reduce_window")


def _eps_of(t: ir.Type) -> float:
    """eps of a float (or complex) tensor element type, 0.0 otherwise."""
    import ml_dtypes
    from jaxlib.mlir import ir

    from .elements import is_float_key

    if not isinstance(t, ir.ShapedType):
        return 0.0
    key = type_key(ir.ShapedType(t).element_type)
    if key.startswith("complex"):
        return float(np.finfo(np.float32 if "f32" in key else np.float64).eps)
    if not is_float_key(key) or key not in DTYPES:
        return 0.0
    return float(ml_dtypes.finfo(DTYPES[key]).eps)


def _ints(attr: ir.Attribute) -> list[int]:
    from .ir_util import i64_values

    return i64_values(attr)


def _contracting(text: str) -> list[int]:
    import re

    match = re.search(r"lhs_contracting_dimensions = \[([0-9, ]*)\]", text)
    return [int(x) for x in match.group(1).split(",") if x.strip()] if match else []


def _conv_out_feature_size(op: ir.Operation) -> int:
    import re

    from jaxlib.mlir import ir

    text = str(op.attributes["dimension_numbers"])
    match = re.search(r"x\[([^\]]*)\]", text)
    kernel = [t.strip() for t in match.group(1).split(",")] if match else []
    shape = ir.RankedTensorType(op.operands[1].type).shape
    return shape[kernel.index("o")] if "o" in kernel else 1


def derived_tolerance(dtype: np.dtype, terms: int, operand_eps: float = 0.0) -> float:
    """Relative tolerance for a float output: 4 * eps * terms, where ``terms`` is the
    largest reduction in the program (summation in another order changes the result by at
    most ~terms * eps relative to the sum of magnitudes) and eps is the larger of the
    output type's and ``operand_eps`` (the coarsest float type a reduction reads, in which
    an oracle may accumulate)."""
    return 4.0 * max(_dtype_eps(dtype), operand_eps) * max(terms, 1)


# A derived tolerance at or above this cannot tell an output from its negation or from
# zero (|a - b| <= rtol * |a|): agreeing within it shows nothing.
LOOSE_TOLERANCE = 1.0


def _refuse_loose_tolerance(report: Report, terms: int, operand_eps: float) -> None:
    """NotCheckable when a float output that differs agreed only within a derived
    tolerance of ``LOOSE_TOLERANCE`` or more: a long reduction in a coarse type (bf16: 4 * 2^-7 *
    terms reaches 1 at 32 terms) allows re-associated sums any difference, so a match
    there proves nothing (a negated or zeroed result would pass)."""
    for o in report.outputs:
        dtype = _float_dtype(o.dtype)
        if is_integral(dtype) or o.max_abs == 0 or o.rounding:
            continue  # (equal values need no tolerance; f64 judged the others again)
        eps = max(_dtype_eps(dtype), operand_eps)
        r = derived_tolerance(dtype, terms, operand_eps)
        if r >= LOOSE_TOLERANCE:
            raise NotCheckable(
                f"output {o.index} ({o.dtype}) agrees, but only within the derived tolerance "
                f"{r:.3g} (4 x eps {eps:.3g} x {terms:,} terms, the program's largest "
                "reduction), which cannot tell a result from its negation: give --rtol and "
                "--atol, or check the program in a wider float type"
            )


def _dtype_eps(dtype: np.dtype) -> float:
    """eps of a float dtype (numpy's or ml_dtypes'), of its parts' for a complex one."""
    import ml_dtypes

    if dtype.kind == "c":
        dtype = np.dtype(np.float32 if dtype.itemsize == 8 else np.float64)
    return float(ml_dtypes.finfo(dtype).eps)


# ---------------------------------------------------------------------------- the check


def check(
    before: str,
    after: str,
    *,
    seed: int = 0,
    trials: int = 1,
    rtol: float | None = None,
    atol: float | None = None,
    oracle: str = "auto",
    inputs: list[list[np.ndarray]] | None = None,
    resize_mode: str = "mean",
    timeout: float = DEFAULT_TIMEOUT,
    progress: Callable[[str], None] | None = None,
    dynamic_dim_size: int | None = None,
    exact: bool = False,
    exact_on_xla: bool = True,
) -> Report:
    """Compare ``before`` and ``after`` (MLIR texts) on ``trials`` seeded random inputs
    (or on the given input sets). ``oracle``: "interpreter", "xla", "both", or "auto"
    (see ``_check_auto``: the interpreter up to ``AUTO_XLA_WORK`` element operations, XLA
    above, a difference XLA finds decided by the interpreter).
    ``rtol``/``atol`` None: derived from the dtype and the largest reduction; both 0:
    bitwise comparison. ``timeout``: seconds per oracle run, then not checkable.
    Programs whose results differ in number or type do not match. ``progress``: called
    with a line (``"checking with the interpreter: trial 1/2 (after), 12 s"``) when the
    check has run ``PROGRESS_AFTER`` seconds, then as oracle runs start and every
    ``PROGRESS_EVERY`` seconds, from a timer thread that ends before ``check`` returns;
    None (the default): no thread, no lines. A program whose @main takes dynamically shaped
    arguments is specialized first: each dynamic dimension takes its size from the first
    input set (``inputs``) or is ``dynamic_dim_size`` (see ``_specialize``). ``exact``
    (with ``rtol`` and ``atol`` None): the rewrites are bit-exact, so outputs compare bit
    for bit. ``exact_on_xla`` False: some of them XLA may compile into another summation
    order (a convolution of a pad, ``passes.XLA_REORDERS``), so where XLA alone decides
    (the interpreter cannot run the program) a bitwise difference is compared again at
    the derived tolerance."""
    _validate(
        seed=seed,
        trials=trials,
        rtol=rtol,
        atol=atol,
        timeout=timeout,
        dynamic_dim_size=dynamic_dim_size,
    )
    ticker = (
        contextlib.nullcontext(_NoProgress())
        if progress is None
        else ProgressTicker(progress, delay=PROGRESS_AFTER, every=PROGRESS_EVERY)
    )
    with ticker as tick:
        tokens = _TIMEOUT.set(float(timeout)), _PROGRESS.set(tick)
        try:
            tick.status("reading the programs")
            return _check(
                before,
                after,
                seed,
                trials,
                rtol,
                atol,
                oracle,
                inputs,
                resize_mode,
                dynamic_dim_size,
                exact and rtol is None and atol is None,
                exact_on_xla,
            )
        finally:
            _PROGRESS.reset(tokens[1])
            _TIMEOUT.reset(tokens[0])


def _validate(
    *,
    seed: int,
    trials: int,
    rtol: float | None,
    atol: float | None,
    timeout: float,
    dynamic_dim_size: int | None,
) -> None:
    if not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    if not isinstance(trials, int) or trials < 1:
        raise ValueError(f"trials must be an integer >= 1, got {trials!r}")
    for name, value in (("rtol", rtol), ("atol", atol)):
        if value is not None and not (math.isfinite(value) and value >= 0):
            raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    if not (math.isfinite(timeout) and timeout > 0):
        raise ValueError(f"timeout must be a finite number > 0, got {timeout!r}")
    if dynamic_dim_size is not None and (
        not isinstance(dynamic_dim_size, int) or dynamic_dim_size < 1
    ):
        raise ValueError(f"dynamic_dim_size must be an integer >= 1, got {dynamic_dim_size!r}")


def _check(
    before: str,
    after: str,
    seed: int,
    trials: int,
    rtol: float | None,
    atol: float | None,
    oracle: str,
    inputs: list[list[np.ndarray]] | None,
    resize_mode: str,
    dynamic_dim_size: int | None,
    bitwise: bool = False,
    exact_on_xla: bool = True,
) -> Report:
    (
        (sig_before, keys, dyn_before, res_before, elements),
        (sig_after, _, dyn_after, res_after, _),
    ) = (
        _signature(before),
        _signature(after),
    )
    merged = _merged_signature(sig_before, sig_after)
    if not _results_compatible(res_before, res_after):
        shown_b = ", ".join(r[0] for r in res_before) or "nothing"
        shown_a = ", ".join(r[0] for r in res_after) or "nothing"
        return Report(
            oracle="none",
            problem=(
                f"the results differ: before returns {len(res_before)} ({shown_b}), "
                f"after {len(res_after)} ({shown_a})"
            ),
        )
    tokens = [i for i, (printed, _, _) in enumerate(res_before) if _TOKEN.search(printed)]
    if tokens:
        raise NotCheckable(
            f"result {tokens[0]} of @main is a token ({res_before[tokens[0]][0]}): "
            "the oracles return no value for it"
        )
    sig, types = _specialize(merged, elements, inputs, dynamic_dim_size)
    polymorphic = any(-1 in shape for shape, _ in (*sig_before, *sig_after))
    refine = types if polymorphic else None
    # Specialized programs are run only when every type in @main is static (``_refine``).
    dynamic = [] if refine else dyn_before + dyn_after
    if inputs is None:
        _refuse_inputs_beyond_memory(sig, trials)
    input_sets = (
        inputs if inputs is not None else [random_inputs(sig, seed + t) for t in range(trials)]
    )
    for arrays in input_sets:
        _check_inputs(arrays, sig)
    if oracle not in (*ORACLES, "both", "auto"):
        raise ValueError(f"unknown oracle '{oracle}' (interpreter, xla, both, auto)")
    profiles = program_profile(before), program_profile(after)
    terms, operand_eps = 1, 0.0
    if rtol is None:
        terms = max(p.terms for p in profiles)
        operand_eps = max(p.operand_eps for p in profiles)

    def run(name: str, *, tolerant: bool = False) -> Report:
        """``tolerant``: at the given (or derived) tolerance even when ``bitwise``."""
        exactly = bitwise and not tolerant
        return _check_with(
            name,
            before,
            after,
            keys,
            input_sets,
            0.0 if exactly else rtol,
            0.0 if exactly else atol,
            (terms, operand_eps),
            resize_mode,
            dynamic,
            refine,
        )

    if oracle == "auto":
        report = _check_auto(run, max(p.work for p in profiles), bitwise and not exact_on_xla)
    else:
        report = _check_oracles(run, oracle)
    if report.ok and rtol is None and atol is None and not bitwise:
        _refuse_loose_tolerance(report, terms, operand_eps)
    if refine:
        specialized = f"@main specialized to ({', '.join(refine)})"
        report.note = f"{specialized}; {report.note}" if report.note else specialized
    return report


def _check_oracles(run: Callable[[str], Report], oracle: str) -> Report:
    """The report of one named oracle, or of both merged (a row per output and oracle)."""
    reports = []
    for name in ORACLES if oracle == "both" else (oracle,):
        try:
            reports.append(run(name))
        except NotCheckable as err:
            raise NotCheckable(f"{name}: {err}") from None
    if len(reports) == 1:
        return reports[0]
    merged = Report(
        outputs=[], oracle="+".join(r.oracle for r in reports), trials=reports[0].trials
    )
    for r in reports:
        merged.outputs += r.outputs
        if r.note:
            merged.note = _joined(merged.note, f"{r.oracle}: {r.note}")
        if r.problem and not merged.problem:
            merged.problem = f"{r.oracle}: {r.problem}"
    return merged


# Programs of more element operations than this (``program_profile``'s work of the larger
# of the two) are checked on XLA by ``oracle="auto"``: the interpreter takes about 0.5 µs
# per operation per run, XLA CPU 1-2 s per run to compile and little to execute, so above
# this an interpreter run takes longer than an XLA run of a model of a few thousand ops.
AUTO_XLA_WORK = 5_000_000


_OTHER = {"interpreter": ("xla", "XLA"), "xla": ("interpreter", "the interpreter")}


def _other_oracle(
    run: Callable[[str], Report], first: str, err: NotCheckable, tried: str
) -> Report:
    """The other oracle's report when ``first`` could not run the program (``err``),
    noting that ``tried`` could not; NotCheckable with both reasons if neither can."""
    second, decider = _OTHER[first]
    try:
        report = run(second)
    except NotCheckable as err2:
        if str(err2) == str(err):  # the program's reason, not an oracle's
            raise NotCheckable(str(err)) from None
        raise NotCheckable(f"{first}: {err}; {second}: {err2}") from None
    report.note = _joined(f"{tried} could not run it ({err}); {decider} decided", report.note)
    return report


def _check_auto(run: Callable[..., Report], work: int, xla_reorders: bool = False) -> Report:
    """``oracle="auto"``: the interpreter, or XLA for a program of more than
    ``AUTO_XLA_WORK`` element operations; the other oracle when the first cannot run the
    program; and a difference XLA finds is checked again on the interpreter, whose verdict
    is the one reported (XLA may compute a program and its folded twin differently), unless
    the interpreter cannot run it either (then see ``_xla_alone``: ``xla_reorders``, bit
    for bit after rewrites XLA may compile into another summation order)."""
    if work <= AUTO_XLA_WORK:
        try:
            return run("interpreter")
        except NotCheckable as err:
            report = _other_oracle(run, "interpreter", err, "interpreter")
            return _xla_alone(run, report) if xla_reorders and report.oracle == "xla" else report
    why = f"auto: XLA for {work:.2g} element operations (more than {AUTO_XLA_WORK:,})"
    try:
        report = run("xla")
    except NotCheckable as err:
        return _other_oracle(run, "xla", err, why)
    if report.ok:
        report.note = _joined(why, report.note)
        return report
    worst = max(o.max_abs for o in report.outputs if not o.ok)
    _tick().status("XLA found a difference: checking again with the interpreter")
    try:
        confirmed = run("interpreter")
    except NotCheckable as err:
        report.note = _joined(
            f"{why} found a difference; the interpreter could not check it ({err})", report.note
        )
        return _xla_alone(run, report) if xla_reorders else report
    confirmed.note = _joined(
        f"{why} found a difference (max abs {worst:.3g}); the interpreter decided", confirmed.note
    )
    return confirmed


def _xla_alone(run: Callable[..., Report], report: Report) -> Report:
    """XLA's bit-for-bit verdict after bit-exact rewrites XLA may compile into another
    summation order, when the interpreter cannot decide: a difference may be XLA's own (a
    convolution of a pad and one with lhs_dilation), so it is compared again at the
    rounding tolerance, and the note says so; a difference beyond it stays a mismatch.
    Folds and structural rewrites alone stay bit for bit on XLA."""
    if report.ok or report.problem:
        return report
    worst = max(o.max_abs for o in report.outputs if not o.ok)
    _tick().status("XLA found a bitwise difference: comparing at the rounding tolerance")
    again = run("xla", tolerant=True)
    why = (
        f"XLA's results differ bit-wise (max abs {worst:.3g}) and no oracle can compare "
        "them bit for bit: compared at the rounding tolerance (XLA may compile two "
        "equivalent programs into other summation orders)"
    )
    again.note = _joined(_joined(report.note, why), again.note)
    return again


def _check_inputs(arrays: Sequence[np.ndarray], signature: Sequence[ArgSpec]) -> None:
    if len(arrays) != len(signature):
        raise InputsDoNotFit(f"{len(arrays)} inputs given, @main takes {len(signature)}")
    for i, (a, (shape, key)) in enumerate(zip(arrays, signature, strict=True)):
        if tuple(a.shape) != tuple(shape) or a.dtype != DTYPES.get(key):
            raise InputsDoNotFit(
                f"input {i} is {a.dtype}{list(a.shape)}, @main expects {_spec_text((shape, key))}"
            )


def _check_with(
    oracle: str,
    before: str,
    after: str,
    keys: list[str],
    input_sets: Sequence[list[np.ndarray]],
    rtol: float | None,
    atol: float | None,
    terms: tuple[int, float],
    resize_mode: str,
    dynamic: list[str],
    refine: tuple[str, ...] | None,
) -> Report:
    if oracle == "xla" and dynamic:  # XLA returns bounded dynamic results padded with garbage
        raise NotCheckable(f"XLA cannot compare the dynamic result type {dynamic[0]}")
    split = oracle == "interpreter"
    run = interpret if oracle == "interpreter" else run_xla
    tick = _tick()
    label = _ORACLE_LABELS[oracle]
    tick.status(f"converting the programs for {label}")
    # XLA runs the custom calls it has an implementation of; the interpreter none.
    prog_a = prepare_isolated(before, resize_mode, split, refine, custom_calls=not split)
    prog_b = prepare_isolated(after, resize_mode, split, refine, custom_calls=not split)
    report = Report(oracle=oracle, trials=len(input_sets))
    worst: dict[int, OutputReport] = {}
    # per trial, each output's max abs difference, or None where it was within tolerance
    differences: list[list[float | None]] = []
    # (trial, output) -> where the rewritten program has an inf or NaN the original has
    # not, and its values: judged against the exact (f64) values, if any run in f64
    introduced: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
    for trial, arrays in enumerate(input_sets, 1):
        where = f"checking with {label}: trial {trial}/{len(input_sets)}"
        tick.status(f"{where} (before)")
        out_a = run(prog_a, arrays)
        tick.status(f"{where} (after)")
        out_b = run(prog_b, arrays)
        if split:
            out_a, out_b = _join_complex(out_a, keys), _join_complex(out_b, keys)
        if len(out_a) != len(out_b):
            raise NotCheckable("different number of outputs")
        differences.append([])
        for i, (a, b) in enumerate(zip(out_a, out_b, strict=True)):
            mabs, mrel, ok = _compare(a, b, rtol, atol, terms)
            differences[-1].append(None if ok else mabs)
            if not ok:
                mask = non_finite_introduced(a, b)
                if mask.any():
                    introduced[trial - 1, i] = mask, b
            prev = worst.get(i)
            verdict = ok and (prev.ok if prev else True)
            if prev is None or not ok or mabs > prev.max_abs:
                worst[i] = OutputReport(i, a.shape, str(a.dtype), mabs, mrel, verdict, oracle)
    report.outputs = [worst[i] for i in sorted(worst)]
    # a tolerance for re-associated sums was not enough (an integer differs in f64 too)
    floats = any(not o.ok and not is_integral(_float_dtype(o.dtype)) for o in report.outputs)
    judged = (
        rtol is None
        and not report.ok
        and floats
        and _recheck_in_f64(
            report,
            run,
            (prog_a, prog_b),
            input_sets,
            differences,
            (keys, split, atol, terms),
            introduced,
        )
    )
    if introduced and not judged:
        first = min(i for _, i in introduced)
        report.note = _joined(report.note, _introduced_note(first, judged=False))
    return report


def _introduced_note(index: int, *, judged: bool) -> str:
    """``judged``: the exact (f64) values were looked at."""
    return f"output {index} has an inf or NaN after the rewrite where the original has a " + (
        "finite value, which its exact (f64) value does not explain: not rounding"
        if judged
        else "finite value (not judged in f64): not the rounding of a re-associated sum"
    )


def _compare(
    a: np.ndarray,
    b: np.ndarray,
    rtol: float | None,
    atol: float | None,
    terms: tuple[int, float],
    dtype: np.dtype | None = None,
) -> tuple[float, float, bool]:
    """``compare_arrays`` at the check's tolerance: ``rtol`` None derives it for a float
    output from ``dtype`` (default: ``a``'s) and ``terms``, with ``atol`` relative to the
    output's largest finite magnitude; integers and bools compare exactly."""
    if rtol is None and not is_integral(a.dtype):
        r = derived_tolerance(a.dtype if dtype is None else dtype, *terms)
        finite = np.abs(
            a[np.isfinite(a)].astype(np.complex128 if a.dtype.kind == "c" else np.float64)
        )
        scale = float(finite.max()) if finite.size else 0.0
        return compare_arrays(a, b, r, (atol or r) * scale)
    return compare_arrays(a, b, rtol or 0.0, atol or 0.0)


def _recheck_in_f64(
    report: Report,
    run: Callable[[str, list[np.ndarray]], list[np.ndarray]],
    programs: tuple[str, str],
    input_sets: Sequence[list[np.ndarray]],
    differences: list[list[float | None]],
    how: tuple[list[str], bool, float | None, tuple[int, float]],
    introduced: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]],
) -> bool:
    """Run both programs again with every float type promoted to f64 (``promote_to_f64``)
    and compare each output at the tolerance of its own type. Re-associating a sum
    changes it by rounding: an ill-conditioned program (a batch norm over two values, a
    difference of near-equal sums) amplifies that past any tolerance in its own types, and
    in f64 the amplified rounding is some 5e8 times smaller, while a wrong result stays
    as wrong. Only the outputs that differed on an input set (``differences``) are judged
    again on it. An output that is rounding noise itself (zero in real arithmetic) has no
    scale to compare at: it agrees if its difference shrank from the one of the same
    inputs in its own type as rounding does (``_rounding_shrink``). If
    every output then agrees, the outputs that differed are marked ``ok in f64
    (rounding)`` and the report is ok; otherwise it is left as it is, with a note.

    An inf or NaN the rewritten program has where the original has a finite value
    (``introduced``; ``how``: the keys, split, atol and terms of the check) is rounding
    only where the exact value is beyond the type's range and the inf has its sign (the
    rewrite's sum overflowed as the exact one does, the original's own sum did not:
    the reference interpreter sums f16 in f16, where 32768 + 16 stays 32768). Returns
    whether the programs ran in f64 (False: not promotable, or an oracle could not)."""
    keys, split, atol, terms = how
    promoted = [promote_to_f64(p) for p in programs]
    if None in promoted:
        why = _not_promotable(programs[promoted.index(None)])
        report.note = _joined(report.note, f"not rechecked in f64 ({why})")
        return False
    _tick().status("a difference beyond the tolerance: checking again in f64")
    worst: tuple[float, int] | None = None
    overflowed: list[int] = []  # outputs whose inf after the rewrite the exact value has
    unexplained: set[int] = set()  # outputs with an inf or NaN after the rewrite it has not
    for trial, (arrays, original) in enumerate(zip(input_sets, differences, strict=True)):
        wide = [_to_f64(a) for a in arrays]
        try:
            out_a, out_b = run(promoted[0], wide), run(promoted[1], wide)
        except NotCheckable as err:  # the difference found in the program's types stands
            report.note = _joined(report.note, f"not rechecked in f64 ({err})")
            return False
        if split:
            out_a, out_b = _join_complex(out_a, keys), _join_complex(out_b, keys)
        for o, a, b in zip(report.outputs, out_a, out_b, strict=True):
            if original[o.index] is None:  # within the tolerance in its own type
                continue
            dtype = _float_dtype(o.dtype)
            intro = introduced.get((trial, o.index))
            if intro is not None:
                if not _overflows(a, *intro, dtype):
                    unexplained.add(o.index)
                    worst = (math.inf, o.index)
                    continue
                overflowed.append(o.index)
            mabs, _, same = _compare(a, b, None, atol, terms, dtype)
            before = original[o.index]
            if not same and math.isfinite(before) and mabs <= before * _rounding_shrink(dtype):
                # rounding noise itself (e.g. the gradient of a bias a batch norm
                # cancels): its difference shrank as rounding does, a wrong result's not
                same = True
            if not same and (worst is None or mabs > worst[0]):
                worst = (mabs, o.index)
    if unexplained:
        report.note = _joined(report.note, _introduced_note(min(unexplained), judged=True))
    if worst is not None:
        if math.isfinite(worst[0]):
            report.note = _joined(
                report.note, f"in f64 too: output {worst[1]} differs (max abs {worst[0]:.3g})"
            )
        return True
    differing = [o for o in report.outputs if not o.ok]
    for o in differing:
        o.ok = o.rounding = True
    report.note = _joined(
        report.note,
        f"{len(differing)} output{'s' if len(differing) > 1 else ''} differed beyond the "
        "tolerance and agree within it with both programs in f64: the rounding of "
        "re-associated sums, amplified by the program",
    )
    if overflowed:
        report.note = _joined(
            report.note,
            f"output {overflowed[0]} has an inf after the rewrite where the original has a "
            "finite value, and its exact (f64) value is beyond its type's range: the "
            "original's sum fell short of it",
        )
    before_only = [o.index for o in differing if math.isinf(o.max_abs)]
    before_only = [i for i in before_only if i not in overflowed]
    if before_only:
        report.note = _joined(
            report.note,
            f"output {before_only[0]} had an inf or NaN before the rewrite only: the "
            "original's sum left its type's range where the rewrite's did not",
        )
    return True


def _overflows(exact: np.ndarray, mask: np.ndarray, after: np.ndarray, dtype: np.dtype) -> bool:
    """Whether every inf or NaN the rewritten program has where the original has not
    (``mask``; ``after``: its values) is an inf whose exact value (``exact``, from the
    program in f64) rounds to inf in ``dtype``, with its sign."""
    threshold = _overflow_threshold(dtype)
    if threshold is None or exact.dtype.kind == "c":
        return False
    want, got = exact[mask].astype(np.float64), after[mask].astype(np.float64)
    with np.errstate(invalid="ignore"):
        return bool(
            np.all(np.isinf(got) & (np.abs(want) >= threshold) & (np.sign(want) == np.sign(got)))
        )


def _rounding_shrink(dtype: np.dtype) -> float:
    """How far, at least, a difference that is rounding shrinks when a program of
    ``dtype`` runs in f64: the ratio of the two epsilons, with a margin of 100 (the
    amplification is the same in both runs; the rounding errors it amplifies vary by a
    few ulps either way)."""
    if not np.issubdtype(dtype, np.inexact) and dtype.kind != "V":  # (V: ml_dtypes' floats)
        return 0.0
    eps, f64 = _dtype_eps(dtype), _dtype_eps(np.dtype(np.float64))
    return 0.0 if eps <= f64 else 100.0 * f64 / eps  # f64 outputs: no shrink to expect


def _joined(note: str, more: str) -> str:
    return "; ".join(part for part in (note, more) if part)


def _float_dtype(name: str) -> np.dtype:
    import ml_dtypes  # noqa: F401 (registers bfloat16 & co. with numpy)

    try:
        return np.dtype(name)
    except TypeError:
        return np.dtype(np.float32)


def _to_f64(a: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "f" or (a.dtype.kind == "V" and not is_integral(a.dtype)):
        return a.astype(np.float64)
    return a


# Element types promote_to_f64 widens, where they end a tensor type (``xf32>``, ``<f32>``).
_WIDENED = re.compile(r"(?<=[x<])(?:f32|f16|bf16)(?=>)")
# A dense literal of a widened type: its hex elements are bit patterns of that type.
_DENSE_HEX = re.compile(
    r"dense<(?P<body>[^<>]*0x[^<>]*)>(?P<colon>\s*:\s*tensor<(?:[^<>]*x)?)(?P<t>f32|f16|bf16)>"
)
_HEX = re.compile(r'"0x[0-9A-Fa-f]*"|0x[0-9A-Fa-f]+')  # a blob of elements, or one
_REFUSED = re.compile(r"complex<|bitcast_convert|custom_call|\bf8E|!quant")
_BITS = {"f32": (np.uint32, np.float32), "f16": (np.uint16, np.float16)}


def _not_promotable(text: str) -> str:
    found = _REFUSED.search(text)
    return f"it has {found.group(0).rstrip('<')}" if found else "its f64 form does not verify"


def promote_to_f64(text: str) -> str | None:
    """``text`` (StableHLO) with every f32, f16 and bf16 tensor type made f64 (constants'
    hex bit patterns rewritten for it; scalar attributes such as a batch norm's epsilon
    keep their types), or None when that is not the same program in wider arithmetic:
    complex or 8-bit float types, bit casts, custom calls (their f64 forms are other
    functions), or a result that does not verify."""
    if _REFUSED.search(text):
        return None
    import ml_dtypes

    def widen_hex(m: re.Match) -> str:
        t = m.group("t")
        uint, flt = _BITS.get(t, (np.uint16, ml_dtypes.bfloat16))

        def one(h: re.Match) -> str:
            token = h.group(0)
            if token.startswith('"'):  # the elements' bytes, little-endian
                blob = np.frombuffer(bytes.fromhex(token[3:-1]), dtype=flt)
                return '"0x' + blob.astype("<f8").tobytes().hex().upper() + '"'
            value = np.array([int(token, 16)], dtype=uint).view(flt).astype(np.float64)
            return f"0x{int(value.view(np.uint64)[0]):016X}"  # one element's bits

        body = _HEX.sub(one, m.group("body"))
        return f"dense<{body}>{m.group('colon')}{t}>"

    try:
        wide = _WIDENED.sub("f64", _DENSE_HEX.sub(widen_hex, text))
    except ValueError:  # a hex blob of an odd length: not ours to read
        return None
    from jaxlib.mlir import ir

    from .context import make_context

    ctx = make_context()
    with ctx, ir.Location.unknown(ctx):
        try:
            ir.Module.parse(wide)
        except ir.MLIRError:
            return None
    return wide


def _typed(array: np.ndarray, key: str) -> np.ndarray:
    """``array`` as the element type ``key`` when .npz gave it as raw bytes: numpy saves
    ml_dtypes' arrays (bfloat16, the float8 kinds) as void ``|V2``, ``|V1``."""
    wanted = DTYPES.get(key)
    if (
        wanted is not None
        and array.dtype.kind == "V"
        and array.dtype.fields is None
        and array.dtype.itemsize == wanted.itemsize
    ):
        return array.view(wanted)
    return array


def load_npz_inputs(path: str, signature: Sequence[ArgSpec]) -> list[list[np.ndarray]]:
    """Input sets from an .npz: arrays named arg0, arg1, ... (one set), or a leading trial
    axis when every array has one more dimension than @main's argument."""
    from .io import InputError

    try:
        try:
            loaded = np.load(path, allow_pickle=False)
        except (ValueError, EOFError):
            raise ValueError("not an .npz archive of arrays arg0, arg1, ...") from None
        if not hasattr(loaded, "files"):
            raise ValueError("not an .npz archive of arrays arg0, arg1, ... (an .npy array)")
        with loaded as data:
            missing = [f"arg{i}" for i in range(len(signature)) if f"arg{i}" not in data.files]
            if missing:
                found = ", ".join(data.files) or "none"
                raise ValueError(
                    f"no array {missing[0]} (@main takes {len(signature)} "
                    f"arguments; the archive has {found})"
                )
            extra = sorted(set(data.files) - {f"arg{i}" for i in range(len(signature))})
            if extra:  # (a stray array is a wrong archive, or the wrong program)
                raise ValueError(
                    f"array {extra[0]} is no argument (@main takes {len(signature)}: arg0"
                    f"{f'..arg{len(signature) - 1}' if len(signature) > 1 else ''})"
                )
            arrays = [_typed(data[f"arg{i}"], key) for i, (_, key) in enumerate(signature)]
    except OSError as err:
        raise InputError(f"{path}: error: cannot read inputs: {err.strerror or err}") from None
    except (ValueError, EOFError) as err:  # not an npz, a pickled array, a missing key
        message = one_line(err)
        raise InputError(f"{path}: error: cannot read inputs: {message}") from None
    if all(a.ndim == len(s) + 1 for a, (s, _) in zip(arrays, signature, strict=True)) and arrays:
        return [[a[t] for a in arrays] for t in range(arrays[0].shape[0])]
    return [arrays]


__all__ = [
    "AUTO_XLA_WORK",
    "DEFAULT_TIMEOUT",
    "ORACLES",
    "PROGRESS_AFTER",
    "PROGRESS_EVERY",
    "NotCheckable",
    "OutputReport",
    "Profile",
    "ProgressTicker",
    "Report",
    "check",
    "compare_arrays",
    "derived_tolerance",
    "interpret",
    "is_integral",
    "load_npz_inputs",
    "main_signature",
    "prepare_for_interpreter",
    "prepare_isolated",
    "program_profile",
    "promote_to_f64",
    "random_inputs",
    "reduction_profile",
    "reduction_size",
    "run_xla",
]
