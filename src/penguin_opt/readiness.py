"""``--penguin-readiness``: what Neuron's next stages would still refuse, and the hazards
of the seeds' literal reading.

After the pipeline, every op the Penguin tensorizer (or the conv device lowering after it)
refuses by a statement of the seed documents is a :class:`Finding`; so is every place in
the *input* where the seeds' literal reading of Neuron computes something other than the
program (a hazard: a remark, never an error). Each finding cites the seed statement it
rests on (``docs/seed-notes.md``, "Penguin readiness"). Findings are exact: an op is
reported only when the statement applies to it, never on a guess.

Kinds (``Finding.kind``):

``resize-nearest-grad``
    a ``ResizeNearestGrad`` custom call left (Neuron's downstream error names it).
``broadcast``
    a legacy ``broadcast`` left (the tensorizer only accepts ``broadcast_in_dim``).
``tuple``
    a ``tuple`` or ``get_tuple_element`` left (no first-class tuples).
``get-dimension-size``
    a ``get_dimension_size`` left (a run-time dimension read: dynamic, unranked or unfolded).
``dynamic-shape``
    an op result (or a function signature) with a dynamic or unranked shape.
``erf-backend-config``
    an ``AwsNeuronErf`` custom call whose string backend_config still has a byte that is
    neither ASCII alphanumeric nor ``"`` (what replaceInvalidBackendConfigs replaces).
``conv-padding-stride``
    a convolution (or a dynamic_conv with a constant padding) with non-zero padding or a
    non-unit window stride, with the reason canonicalize-conv left it (its gate's skip
    reason, with the gate options of the pipeline's conv pass, else the defaults).
``iota-sort``
    a two-operand sort whose index operand is exactly the positions along the sort
    dimension: an iota seen through reshape, broadcast_in_dim, broadcast, transpose or
    convert (fuseIotaSort's exact match misses it), or an iota the pipeline did not fuse.
``zero-sized``
    a side-effect-free op whose results are all zero-element tensors, which the StableHLO
    twin's removeDeadZeroSizedTensorOps removes (MHLO: no twin rewriter does).

Hazards (``hazard=True``, in the input):

``resize-nearest-grad-mean``
    a ``ResizeNearestGrad`` the seed lowers to the window *mean* (window volume > 1, float).
``convert-fold``
    a ``convert(constant)`` whose folded values differ under the seed's paths (float
    results through ``float`` then ``double``, integer results through a 32-bit ``int``).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np
from jaxlib.mlir import ir

from ._compat import E8M0_CONVERTS_AS_MODELLED
from .convert_math import convert_array, differing
from .dialect import MHLO, STABLEHLO
from .elements import DTYPES, UnsupportedElementType, constant_value, is_float_key, type_key
from .ir_util import (
    defining_op_of,
    entry_function,
    i64_values,
    ops_named,
    static_shape,
    string_value,
    symbol_name,
)
from .passes.base import location_triple_text
from .penguin_sort import is_penguin_sort, sort_dimension

if TYPE_CHECKING:
    from .pipeline import Pipeline

SEED = "000_25e9a1dd83ab8682.txt"  # CanonicalizeForTensorizer
CONV_SEED = "003_60ff786d33fcbc65.txt"  # CanonicalizeConv

# The seed statement each kind rests on (docs/seed-notes.md, "Penguin readiness").
SEEDS: dict[str, str] = {
    "resize-nearest-grad": (
        f'{SEED} lowerResizeNearestGrad: "A separate downstream diagnostic (\\"op '
        "ResizeNearestGrad operation should be lowered to supported operations before "
        'reaching this stage\\" ...) fires only if a ResizeNearestGrad survives past this pass"'
    ),
    "broadcast": (
        f'{SEED} replaceBroadcastsWithBroadcastInDim: "The tensorizer (and the downstream '
        'constant-folder #8) only accept the canonical mhlo.broadcast_in_dim"'
    ),
    "tuple": (
        f'{SEED} canonicalizeTupleOp: "The tensorizer is a flat-value IR with no '
        'first-class tuples."'
    ),
    "get-dimension-size": (
        f'{SEED} replaceGetDimensionSize: "The Penguin tensorizer is a static-shape IR — it '
        'has no run-time dimension-read op."'
    ),
    "dynamic-shape": (
        f'{SEED} replaceGetDimensionSize: "The Penguin tensorizer is a static-shape IR"'
    ),
    "erf-backend-config": (
        f'{SEED} replaceInvalidBackendConfigs: "if its backend_config string carries any '
        'character the tensorizer\'s Erf handler cannot parse" / "\\"Invalid\\" means the '
        'config contains a byte that is neither alphanumeric nor a double-quote"'
    ),
    "conv-padding-stride": (
        f'{CONV_SEED} Cross-References: "Conv Device-Lowering Selection — 6.8.1, the next '
        'stage; expects zero-padding, unit-stride convs"'
    ),
    "iota-sort": (
        f'{SEED} fuseIotaSort: "if (iota.getTypeID() != mhlo::IotaOp::id): continue" / "The '
        "Penguin tensorizer tracks the permuted indices intrinsically inside its sort "
        'lowering, so the explicit iota operand is dead weight."'
    ),
    "zero-sized": (
        f'{SEED} StableHLO twin: "It has one additional rewriter the MHLO side lacks: '
        'removeDeadZeroSizedTensorOps ..., which DCEs ops producing zero-element tensors."'
    ),
    "resize-nearest-grad-mean": (
        f'{SEED} lowerResizeNearestGrad: "the gradient w.r.t. each input pixel is therefore '
        'the mean of the scale^ndim co-located output gradients" / "div = '
        'create(DivOp::build(rw, volB))"'
    ),
    "convert-fold": (
        f'{SEED} replaceConvertsWithConstants: "vals = [ (double)e for e in '
        'srcAttr.getValues<float>() ]" (float results) / "vals = srcAttr.getValues<int>()" '
        "(integer results)"
    ),
}
HAZARDS = frozenset({"resize-nearest-grad-mean", "convert-fold"})


@dataclass(frozen=True)
class Finding:
    """One op Neuron's next stages refuse (or, ``hazard``, one place the seeds' literal
    reading computes something other than the program)."""

    kind: str
    hazard: bool
    op: str  # the op's name, e.g. 'stablehlo.tuple'
    location: str | None  # "file:line:col" (the input's name for MLIR's nameless buffer)
    message: str
    seed: str  # the seed statement it rests on
    function: str | None = None  # the enclosing func.func's name

    def render(self, name: str, mode: str = "warn") -> str:
        """One line: ``LOC: warning|error: [KIND] MESSAGE`` (``mode`` warn|error); hazards
        always ``LOC: remark: [hazard: KIND] MESSAGE (as read: SEED)``."""
        where = self.location or name
        if self.hazard:
            return f"{where}: remark: [hazard: {self.kind}] {self.message} (as read: {self.seed})"
        severity = "error" if mode == "error" else "warning"
        return f"{where}: {severity}: [{self.kind}] {self.message}"

    def to_dict(self) -> dict:
        return asdict(self)


def summary_lines(findings: list[Finding]) -> list[str]:
    """``penguin readiness: N findings: KIND n, ...; M hazards: KIND m, ...`` (kinds by
    count, then name), or ``... nothing left that the tensorizer refuses``."""
    refused = Counter(f.kind for f in findings if not f.hazard)
    hazards = Counter(f.kind for f in findings if f.hazard)
    if refused:
        n = sum(refused.values())
        head = f"{n} finding{'s' * (n != 1)}: {_by_count(refused)}"
    else:
        head = "nothing left that the tensorizer refuses"
    if hazards:
        m = sum(hazards.values())
        head += f"; {m} hazard{'s' * (m != 1)}: {_by_count(hazards)}"
    return [f"penguin readiness: {head}"]


def _by_count(counts: Counter) -> str:
    return ", ".join(f"{k} {n}" for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def findings(
    before: ir.Operation | None, after: ir.Operation, name: str, *, pipeline: Pipeline | None = None
) -> list[Finding]:
    """The findings of ``after`` (the module after the pipeline), in program order, then
    the hazards of ``before`` (the input; None: none). ``name`` replaces MLIR's nameless
    buffer ``-`` in locations; ``pipeline`` (a :class:`penguin_opt.pipeline.Pipeline` or
    None) gives the conv gate options and the ResizeNearestGrad mode."""
    context = _PipelineFacts.of(pipeline)
    after = after.operation
    with after.context:
        live = _live(after)
        try:
            scan = _Scan(name, context)
            live.walk(scan.visitor(), ir.WalkOrder.PRE_ORDER)
            found = scan.found
        finally:
            live.erase()
        if before is not None:
            live = _live(before.operation)
            try:
                found += _hazards(live, name, context)
            finally:
                live.erase()
    return found


def _live(module: ir.Operation) -> ir.Operation:
    """A copy of ``module`` without the private functions nothing reaches (MLIR's
    ``symbol-dce``): what Neuron compiles. XLA's HLO importer keeps a private copy of each
    computation a while or conditional inlined into its regions, which no op uses; their
    ops are no findings (an instruction's copy is located where the live op is)."""
    from jaxlib.mlir import passmanager

    live = module.clone()
    entry, public = entry_function(live)
    if entry is None and not public:
        return live  # no entry to reach anything from: every function counts
    # the passes run on @main whatever its visibility; nested modules are no functions
    kept = [entry] if entry is not None else []
    kept += [op for op in live.regions[0].blocks[0].operations if op.name == "builtin.module"]
    for op in kept:
        if "sym_visibility" in op.attributes:
            del op.operation.attributes["sym_visibility"]
    pm = passmanager.PassManager.parse("builtin.module(symbol-dce)")
    pm.enable_verifier(False)  # (penguin-form sorts are not valid StableHLO/MHLO)
    try:
        pm.run(live)
    except Exception:  # symbol-dce fails nothing it can read; if it did, keep every op
        live.erase()
        live = module.clone()
    return live


# ------------------------------------------------------------------ the pipeline's facts


@dataclass(frozen=True)
class _PipelineFacts:
    gates: dict  # dialect prefix -> ConvGate of the pipeline's (last) conv pass of it
    resize_mode: str | None  # the (first) for-penguin pass's resize-nearest-grad-mode
    for_penguin: frozenset[str] = frozenset()  # the dialects of the for-penguin passes run

    @staticmethod
    def of(pipeline: Pipeline | None) -> _PipelineFacts:
        from .passes.canonicalize_conv import CanonicalizeConv
        from .passes.canonicalize_for_penguin import CanonicalizeForPenguin

        gates, mode, for_penguin = {}, None, set()
        for el in getattr(pipeline, "elements", ()) or ():
            ours = el.ours
            if isinstance(ours, CanonicalizeConv):
                gates[ours.dialect.prefix] = ours.gate()
            elif isinstance(ours, CanonicalizeForPenguin):
                for_penguin.add(ours.dialect.prefix)
                if mode is None:
                    mode = ours.resize_nearest_grad_mode
        return _PipelineFacts(gates, mode, frozenset(for_penguin))


# --------------------------------------------------------------------------- helpers

_DIALECTS = {"mhlo": MHLO, "stablehlo": STABLEHLO}
_FOR_PENGUIN = {
    "mhlo": "canonicalize-for-penguin",
    "stablehlo": "stablehlo-canonicalize-for-penguin",
}
_CONV_PASS = {"mhlo": "canonicalize-conv", "stablehlo": "stablehlo-canonicalize-conv"}
_INVALID_CONFIG_BYTE = re.compile(rb'[^A-Za-z0-9"]')  # as replaceInvalidBackendConfigs
_DYNAMIC, _ZERO_SIZED = 1, 2  # what a result type is, as bits


def _function_of(op: ir.Operation) -> str | None:
    parent = op.parent
    while parent is not None:
        if parent.name == "func.func":
            try:
                return symbol_name(parent)
            except (KeyError, RuntimeError):
                return None
        parent = parent.parent
    return None


def _where(op: ir.Operation) -> str:
    f = _function_of(op)
    return f"@{f}" if f else "its function"


def _run_advice(rewriter: str, verb: str, op: ir.Operation, prefix: str) -> str:
    return f"{rewriter} {verb} it: run {_FOR_PENGUIN[prefix]} on {_where(op)}"


def _target(op: ir.Operation) -> str | None:
    attributes = op.attributes
    if "call_target_name" not in attributes:
        return None
    return string_value(attributes["call_target_name"])


def _ints(values: Iterable) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


# ------------------------------------------------------------------ the walk of ``after``


class _Scan:
    """One pre-order walk of the module: each op of a kind a finding names is looked at
    by its handler; every op's result types are classified (memoized per type)."""

    def __init__(self, name: str, facts: _PipelineFacts) -> None:
        self.name, self.facts = name, facts
        self.found: list[Finding] = []
        self.types: dict[ir.Type, int] = {}  # type -> _DYNAMIC | _ZERO_SIZED bits
        handlers: dict[str, Callable[[ir.Operation, str], None]] = {
            "custom_call": self.custom_call,
            "broadcast": self.broadcast,
            "tuple": self.tuple,
            "get_tuple_element": self.get_tuple_element,
            "get_dimension_size": self.get_dimension_size,
            "convolution": self.convolution,
            "dynamic_conv": self.convolution,
            "sort": self.sort,
        }
        self.dispatch = {f"{p}.{m}": (h, p) for p in _DIALECTS for m, h in handlers.items()}

    def add(self, kind: str, op: ir.Operation, message: str) -> None:
        self.found.append(
            Finding(
                kind=kind,
                hazard=kind in HAZARDS,
                op=op.name,
                location=location_triple_text(str(op.location), self.name, op.name),
                message=message,
                seed=SEEDS[kind],
                function=_function_of(op),
            )
        )

    def classify(self, t: ir.Type) -> int:
        """``_DYNAMIC`` | ``_ZERO_SIZED`` bits of a type (memoized: types are uniqued)."""
        c = self.types.get(t)
        if c is None:
            c = self.types[t] = (_DYNAMIC * _is_dynamic(t)) | (_ZERO_SIZED * _is_zero_sized(t))
        return c

    def visitor(self) -> Callable[[ir.Operation], ir.WalkResult]:
        """The walk's callback: a handler per named kind, every op's result types."""
        dispatch, known, classify = self.dispatch, self.types, self.classify
        advance = ir.WalkResult.ADVANCE

        def visit(op: ir.Operation) -> ir.WalkResult:
            name = op.name
            handler = dispatch.get(name)
            if handler is not None:
                handler[0](op, handler[1])
            elif name == "func.func":
                self.function_signature(op)
            flags = 0
            for t in op.results.types:
                c = known.get(t)
                flags |= classify(t) if c is None else c
            if flags:
                self.shapes(op, name, flags)
            return advance

        return visit

    def shapes(self, op: ir.Operation, name: str, flags: int) -> None:
        types = op.results.types
        if flags & _DYNAMIC:
            shown = ", ".join(str(t) for t in types if self.classify(t) & _DYNAMIC)
            self.add(
                "dynamic-shape",
                op,
                f"'{name}' has a dynamic or unranked result ({shown}): the Penguin "
                "tensorizer is a static-shape IR",
            )
        if flags & _ZERO_SIZED:
            self.zero_sized(op, name, types)

    # -- per kind

    def function_signature(self, op: ir.Operation) -> None:
        try:
            ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
        except (KeyError, ValueError, TypeError):
            return
        parts = [
            f"argument {i}: {t}" for i, t in enumerate(ftype.inputs) if self.classify(t) & _DYNAMIC
        ]
        parts += [
            f"result {i}: {t}" for i, t in enumerate(ftype.results) if self.classify(t) & _DYNAMIC
        ]
        if parts:
            self.add(
                "dynamic-shape",
                op,
                f"@{symbol_name(op)} has dynamic or unranked types in its signature "
                f"({', '.join(parts)}): the Penguin tensorizer is a static-shape IR",
            )

    def custom_call(self, op: ir.Operation, prefix: str) -> None:
        target = _target(op)
        if target == "ResizeNearestGrad":
            self.resize_nearest_grad(op, prefix)
        elif target == "AwsNeuronErf":
            self.erf(op, prefix)

    def resize_nearest_grad(self, op: ir.Operation, prefix: str) -> None:
        why = _resize_left_because(op, self.facts.resize_mode or "mean")
        if why is None:
            why = _run_advice("lowerResizeNearestGrad", "lowers", op, prefix)
        self.add(
            "resize-nearest-grad",
            op,
            f"'{op.name}' @ResizeNearestGrad left ({why}): Neuron's next stage fails "
            'with "op ResizeNearestGrad operation should be lowered to supported '
            'operations before reaching this stage"',
        )

    def erf(self, op: ir.Operation, prefix: str) -> None:
        attributes = op.attributes
        config = attributes["backend_config"] if "backend_config" in attributes else None
        if not isinstance(config, ir.StringAttr):
            return  # none (valid), or a dictionary: not the string the handler reads
        raw = ir.StringAttr(config).value_bytes
        bad = sorted(set(_INVALID_CONFIG_BYTE.findall(raw)))
        if not bad:
            return
        shown = ", ".join(repr(b.decode("latin-1")) for b in bad[:6])
        more = f" and {len(bad) - 6} more" if len(bad) > 6 else ""
        why = _run_advice("replaceInvalidBackendConfigs", "replaces", op, prefix)
        self.add(
            "erf-backend-config",
            op,
            f"'{op.name}' @AwsNeuronErf backend_config {raw.decode(errors='replace')!r} "
            f"has bytes the tensorizer's Erf handler cannot parse ({shown}{more}; it "
            f"takes ASCII letters, digits and '\"'; {why})",
        )

    def broadcast(self, op: ir.Operation, prefix: str) -> None:
        operand = op.operands[0].type
        if not isinstance(operand, ir.RankedTensorType):
            why = "replaceBroadcastsWithBroadcastInDim skips an unranked operand"
        elif static_shape(op.results[0].type) is None:
            why = "replaceBroadcastsWithBroadcastInDim skips a dynamic result"
        else:
            why = _run_advice("replaceBroadcastsWithBroadcastInDim", "rewrites", op, prefix)
        self.add(
            "broadcast",
            op,
            f"legacy '{op.name}' left ({why}): the tensorizer only accepts the "
            "canonical broadcast_in_dim",
        )

    def tuple(self, op: ir.Operation, prefix: str) -> None:
        users = sorted(
            {use.owner.name for r in op.results for use in r.uses} - {f"{prefix}.get_tuple_element"}
        )
        if users:
            why = f"used by {', '.join(repr(u) for u in users)}"
        elif not any(True for r in op.results for _ in r.uses):
            why = (
                "unused; canonicalizeTupleOp erases only the tuples whose "
                "get_tuple_element users it folds"
            )
        else:
            why = _run_advice(
                "canonicalizeTupleOp", "folds the get_tuple_element users of", op, prefix
            )
        self.add(
            "tuple",
            op,
            f"'{op.name}' left ({why}): the tensorizer is a flat-value IR with no "
            "first-class tuples",
        )

    def get_tuple_element(self, op: ir.Operation, prefix: str) -> None:
        producer = defining_op_of(op.operands[0])
        if producer is not None and producer.name == f"{prefix}.tuple":
            of = f"a '{producer.name}'"
            why = _run_advice("canonicalizeTupleOp", "folds", op, prefix)
        else:
            of = "a block argument" if producer is None else f"a '{producer.name}' result"
            why = "canonicalizeTupleOp folds only get_tuple_element(tuple(...))"
        self.add(
            "tuple",
            op,
            f"'{op.name}' of {of} left ({why}): the tensorizer is a flat-value IR with "
            "no first-class tuples",
        )

    def get_dimension_size(self, op: ir.Operation, prefix: str) -> None:
        operand = op.operands[0].type
        dim = int(ir.IntegerAttr(op.attributes["dimension"]).value)
        if not isinstance(operand, ir.RankedTensorType):
            what = f"of an unranked operand ({operand})"
        elif ir.RankedTensorType(operand).is_dynamic_dim(dim):
            what = f"of dynamic dimension {dim} of {operand}"
        else:
            what = (
                f"of static dimension {dim} of {operand}; "
                f"{_run_advice('replaceGetDimensionSize', 'folds', op, prefix)}"
            )
        self.add(
            "get-dimension-size",
            op,
            f"'{op.name}' {what}: the Penguin tensorizer is a static-shape IR with no "
            "run-time dimension-read op",
        )

    def convolution(self, op: ir.Operation, prefix: str) -> None:
        found = _conv_strides_padding(op)
        if found is None:
            return
        strides, padding, unknown_padding = found
        if all(s == 1 for s in strides) and not any(padding) and not unknown_padding:
            return
        parts = []
        if any(s != 1 for s in strides):
            parts.append(f"window_strides {_ints(strides)}")
        if any(padding):
            pairs = [list(padding[i : i + 2]) for i in range(0, len(padding), 2)]
            parts.append(f"padding {_ints(_ints(p) for p in pairs)}")
        if not parts:
            return  # padding an operand we cannot read: not known to be non-zero
        why = self.conv_reason(op, prefix)
        self.add(
            "conv-padding-stride",
            op,
            f"'{op.name}' has {' and '.join(parts)} ({why}): the conv device lowering "
            "expects zero-padding, unit-stride convs",
        )

    def conv_reason(self, op: ir.Operation, prefix: str) -> str:
        """Why canonicalize-conv leaves the conv: its gate's skip reason (with the
        pipeline's options, else the defaults), or explicitlyStride's."""
        from .passes.canonicalize_conv import ConvGate

        conv_pass = _CONV_PASS[prefix]
        if op.name.endswith(".dynamic_conv"):
            return f"{conv_pass} rewrites only '{prefix}.convolution'"
        gate = self.facts.gates.get(prefix)
        reason = (gate or ConvGate()).reject(op, _DIALECTS[prefix])
        if reason is not None:
            return f"{conv_pass} gate: {reason}"
        reason = _stride_skip_reason(op, prefix)
        if reason is not None:
            return f"{conv_pass} explicitlyStride: {reason}"
        if gate is None:
            return f"{conv_pass}'s gate accepts it: run {conv_pass}"
        return f"{conv_pass}'s gate accepts it"

    def sort(self, op: ir.Operation, prefix: str) -> None:
        if is_penguin_sort(op) or len(op.operands) != 2 or len(op.results) != 2:
            return
        try:
            dim = sort_dimension(op)
        except (ValueError, TypeError):
            return
        ramp = _index_ramp(op.operands[1], prefix)
        if ramp is None or ramp[0] != dim:
            return
        chain = ramp[1]
        if len(chain) == 1:
            what = "an iota along the sort dimension"
            why = _run_advice("fuseIotaSort", "fuses", op, prefix)
        else:
            what = (
                f"the positions along sort dimension {dim}, an iota through "
                f"{' -> '.join(chain[1:])}"
            )
            why = "fuseIotaSort matches only an iota operand"
        self.add(
            "iota-sort",
            op,
            f"'{op.name}' index operand is {what} ({why}): the tensorizer tracks the "
            "permuted indices intrinsically, an explicit index operand is dead weight",
        )

    def zero_sized(self, op: ir.Operation, name: str, types: list[ir.Type]) -> None:
        from .passes.penguin_rewriters import RemoveDeadZeroSizedTensorOps

        prefix = name.partition(".")[0]
        if prefix not in _DIALECTS:
            return
        if RemoveDeadZeroSizedTensorOps.skip_reason(op, prefix) is not None:
            return
        shown = ", ".join(str(t) for t in types)
        if prefix == "mhlo" and "stablehlo" in self.facts.for_penguin:
            why = (  # an MHLO op left in a StableHLO program (XLA's importer makes some)
                f"an MHLO op: {_FOR_PENGUIN['stablehlo']}'s removeDeadZeroSizedTensorOps "
                "rewrites StableHLO ops only, and the MHLO twin has none"
            )
        elif prefix == "mhlo":
            why = "the MHLO twin has no removeDeadZeroSizedTensorOps"
        else:
            why = (
                f"removeDeadZeroSizedTensorOps replaces it by an empty constant: run "
                f"{_FOR_PENGUIN[prefix]} on {_where(op)}"
            )
        self.add(
            "zero-sized",
            op,
            f"'{name}' has only zero-element results ({shown}; {why}): Neuron's next "
            "stages expect no zero-sized tensors",
        )


def _is_dynamic(t: ir.Type) -> bool:
    if isinstance(t, ir.RankedTensorType):
        return not ir.RankedTensorType(t).has_static_shape
    if isinstance(t, ir.UnrankedTensorType):
        return True
    if isinstance(t, ir.TupleType):
        tup = ir.TupleType(t)
        return any(_is_dynamic(tup.get_type(i)) for i in range(tup.num_types))
    return False


def _is_zero_sized(t: ir.Type) -> bool:
    shape = static_shape(t)
    return shape is not None and 0 in shape


def _resize_left_because(op: ir.Operation, mode: str) -> str | None:
    """Why lowerResizeNearestGrad leaves (or refuses) ``op``; None if it lowers it."""
    from .passes.penguin_rewriters import Unsupported, resize_factors

    if len(op.operands) != 1:
        return "lowerResizeNearestGrad refuses it: only one operand allowed"
    if len(op.results) != 1:
        return "lowerResizeNearestGrad refuses it: only one output allowed"
    verdict = resize_factors(op.operands[0].type, op.results[0].type, mode)
    if isinstance(verdict, Unsupported):
        return f"lowerResizeNearestGrad refuses it: {verdict.message.partition(': ')[2]}"
    if isinstance(verdict, str):
        return f"lowerResizeNearestGrad skips {_RESIZE_SKIPS.get(verdict, verdict)}"
    return None


_RESIZE_SKIPS = {  # lowerResizeNearestGrad's skip reasons as readiness says them
    "unranked": "an unranked shape",
    "dynamic-shape": "a dynamic shape",
    "mean-of-non-float": "the mean of a non-float gradient",
    "empty-window": "a factor of 0 (an empty gradient dim under a non-empty result dim)",
}


def _stride_skip_reason(op: ir.Operation, prefix: str) -> str | None:
    """explicitlyStride's skip reason for a conv its gate accepts: a sum of several
    polyphase partial convs that would not be exact (``_inexact_sum``)."""
    from .passes.canonicalize_conv import _inexact_sum, conv_geometry

    g = conv_geometry(op, _DIALECTS[prefix])
    if g is None:
        return None
    phases = 1
    for k, s, r in zip(g.kernel_extents, g.strides, g.rhs_dilation, strict=True):
        if s != 1 and k != 1:
            phases *= min(k, s // math.gcd(r, s))
    return _inexact_sum(op) if phases > 1 else None


def _conv_strides_padding(op: ir.Operation) -> tuple[list[int], list[int], bool] | None:
    """(window strides, padding edges flat, whether the padding is unknown) of a
    convolution, None if its attributes cannot be read. Absent attributes are their
    defaults (stride 1, padding 0)."""
    attributes = op.attributes
    try:
        strides = i64_values(attributes["window_strides"]) if "window_strides" in attributes else []
        if op.name.endswith(".dynamic_conv"):
            padding, unknown = _constant_padding(op)
        else:
            padding = i64_values(attributes["padding"]) if "padding" in attributes else []
            unknown = False
    except (ValueError, TypeError, UnsupportedElementType):
        return None
    return strides, padding, unknown


def _constant_padding(op: ir.Operation) -> tuple[list[int], bool]:
    """A dynamic_conv's padding operand (its third) if a constant defines it."""
    if len(op.operands) < 3:
        return [], True
    src = defining_op_of(op.operands[2])
    if src is None or not src.name.endswith(".constant"):
        return [], True
    values = constant_value(src)
    if values is None:
        return [], True
    return [int(v) for v in np.asarray(values).reshape(-1)], False


# ------------------------------------------------------------------------ index ramps

_RAMP_OPS = frozenset({"reshape", "broadcast_in_dim", "broadcast", "transpose", "convert"})


def _index_ramp(value: ir.Value, prefix: str) -> tuple[int, list[str]] | None:
    """(d, chain) if ``value`` holds exactly the positions along dimension ``d``
    (``value[i] == i[d]`` for every index ``i``, along an extent of at least 2): an iota
    seen through shape-only ops (``chain``: the op names from the iota out)."""
    chain: list[ir.Operation] = []
    while True:
        op = defining_op_of(value)
        if op is None or op.name.partition(".")[0] != prefix:
            return None
        mnemonic = op.name.partition(".")[2]
        chain.append(op)
        if mnemonic == "iota":
            break
        if mnemonic not in _RAMP_OPS or len(op.operands) != 1:
            return None
        value = op.operands[0]
    chain.reverse()
    iota = chain[0]
    shape = static_shape(iota.results[0].type)
    if shape is None or 0 in shape:
        return None
    d = int(ir.IntegerAttr(iota.attributes["iota_dimension"]).value)
    n = shape[d] if 0 <= d < len(shape) else 0
    if n < 2 or not _holds_indices(n, _element_key(iota.results[0].type)):
        return None
    for op in chain[1:]:
        out = static_shape(op.results[0].type)
        if out is None:
            return None
        d = _ramp_through(op, shape, out, d, n)
        if d is None:
            return None
        shape = out
    return d, [op.name for op in chain]


def _ramp_through(
    op: ir.Operation, shape: tuple[int, ...], out: tuple[int, ...], d: int, n: int
) -> int | None:
    """The dimension the positions along ``d`` (extent ``n``) of ``op``'s operand (shape
    ``shape``) run along in its result (shape ``out``), if they still are positions."""
    mnemonic = op.name.partition(".")[2]
    if mnemonic == "convert":
        return d if _holds_indices(n, _element_key(op.results[0].type)) else None
    if mnemonic == "reshape":  # value(linear) = (linear // s) % n, s = the elements after d
        s = int(np.prod(shape[d + 1 :], dtype=np.int64))
        for e in range(len(out)):
            if out[e] == n and int(np.prod(out[e + 1 :], dtype=np.int64)) == s:
                return e
        return None
    if mnemonic == "broadcast_in_dim":
        dims = i64_values(op.attributes["broadcast_dimensions"])
        return dims[d] if out[dims[d]] == n else None
    if mnemonic == "broadcast":
        return d + len(out) - len(shape)
    if mnemonic == "transpose":
        perm = i64_values(op.attributes["permutation"])
        return perm.index(d)
    return None


def _element_key(t: ir.Type) -> str:
    return type_key(ir.ShapedType(t).element_type)


def _holds_indices(n: int, key: str) -> bool:
    """Whether element type ``key`` holds every integer 0..n-1 exactly."""
    if key == "i1":
        return n <= 2
    m = re.fullmatch(r"(u?)i(\d+)", key)
    if m:
        bits = int(m.group(2))
        return n - 1 <= (2**bits - 1 if m.group(1) else 2 ** (bits - 1) - 1)
    if not is_float_key(key):
        return False
    import ml_dtypes

    if n - 1 > 2 ** (ml_dtypes.finfo(DTYPES[key]).nmant + 1):
        return False
    probe = np.array([0, n - 1], dtype=np.int64)
    try:
        back = convert_array(convert_array(probe, "i64", key), key, "i64")
    except (ValueError, UnsupportedElementType):
        return False
    return bool((back == probe).all())


# --------------------------------------------------------------- hazards of ``before``


def _hazards(before: ir.Operation, name: str, facts: _PipelineFacts) -> list[Finding]:
    out: list[Finding] = []
    names = [f"{p}.{m}" for p in _DIALECTS for m in ("convert", "custom_call")]
    for op in ops_named(before, names):
        if op.name.endswith(".custom_call"):
            message = _resize_mean_hazard(op, facts)
            kind = "resize-nearest-grad-mean"
        else:
            message = _convert_hazard(op)
            kind = "convert-fold"
        if message is not None:
            out.append(
                Finding(
                    kind=kind,
                    hazard=True,
                    op=op.name,
                    location=location_triple_text(str(op.location), name, op.name),
                    message=message,
                    seed=SEEDS[kind],
                    function=_function_of(op),
                )
            )
    return out


def _resize_mean_hazard(op: ir.Operation, facts: _PipelineFacts) -> str | None:
    """The hazard of a ResizeNearestGrad the seed lowers to the window mean: one with a
    window volume above 1 and a float gradient (the seed's legality holds)."""
    from .passes.penguin_rewriters import resize_factors

    if _target(op) != "ResizeNearestGrad" or _resize_left_because(op, "mean") is not None:
        return None
    scale = resize_factors(op.operands[0].type, op.results[0].type, "mean")
    assert isinstance(scale, list)  # (lowered: its factors)
    volume = int(np.prod(scale, dtype=np.int64))
    if volume <= 1 or 0 in ir.RankedTensorType(op.results[0].type).shape:
        return None  # the mean of one element is the element; an empty result has none
    factor = "x".join(str(s) for s in scale)
    if facts.resize_mode == "sum":
        ours = "; the pipeline's resize-nearest-grad-mode=sum lowers it to the window sum"
    elif facts.resize_mode == "mean":
        ours = "; the pipeline's resize-nearest-grad-mode=mean lowers it as the seed does"
    else:
        ours = ""
    return (
        f"'{op.name}' @ResizeNearestGrad, upsampling factor {factor} (window volume "
        f"{volume}): Neuron lowers it to the window mean, the window sum divided by "
        f"{volume}, where the gradient of nearest upsampling is the window sum{ours}"
    )


def _convert_hazard(op: ir.Operation) -> str | None:
    """The hazard of a ``convert(constant)`` whose fold under the seed's paths differs from
    ``convert``: the count of differing elements and the first of them."""
    prefix = op.name.partition(".")[0]
    src = defining_op_of(op.operands[0])
    if src is None or src.name != f"{prefix}.constant":
        return None
    result_type = op.results[0].type
    if static_shape(result_type) is None:
        return None
    src_key, dst_key = _element_key(src.results[0].type), _element_key(result_type)
    if any(k not in DTYPES or k.startswith("complex") for k in (src_key, dst_key)):
        return None
    if not E8M0_CONVERTS_AS_MODELLED and "f8E8M0FNU" in (src_key, dst_key):
        return None  # convert_array's model of these is not this jaxlib's
    try:
        values = constant_value(src)
    except UnsupportedElementType:
        return None
    if values is None:
        return None
    values = np.asarray(values)
    differ = literal_fold_differences(values, src_key, dst_key)
    if differ is None:
        return None
    count, index, source, exact, literal = differ
    where = _ints(np.unravel_index(index, values.shape)) if values.ndim else "[]"
    return (
        f"'{op.name}' of a constant ({src.results[0].type} -> "
        f"{result_type}): {count} of {values.size} element"
        f"{'s' * (values.size != 1)} fold differently as read, e.g. {where}: "
        f"{_fmt(source)} -> {_fmt(literal)}, where convert gives {_fmt(exact)}"
    )


def literal_convert(values: np.ndarray, src_key: str, dst_key: str) -> np.ndarray:
    """``convert`` of ``values`` as the seed's replaceConvertsWithConstants reads: float
    results through ``getValues<float>`` (the value as a C ``float``: one rounding to f32)
    then ``double`` (exact), then the destination (one rounding); integer results through
    ``getValues<int>`` (a 32-bit ``int``: integers wrap, floats truncate toward zero and
    NaN or out-of-range values give x86-64's ``cvttsd2si`` result ``INT32_MIN``), then the
    destination width (two's complement; ``i1``: non-zero)."""
    if is_float_key(dst_key):
        f32 = convert_array(values, src_key, "f32")
        return convert_array(convert_array(f32, "f32", "f64"), "f64", dst_key)
    if is_float_key(src_key):
        x = convert_array(values, src_key, "f64")  # exact: f64 holds every narrower float
        with np.errstate(invalid="ignore"):
            t = np.trunc(x)
            ok = (t >= -(2.0**31)) & (t <= 2.0**31 - 1)
        i32 = np.where(ok, t, -(2.0**31)).astype(np.int32)
    else:
        i32 = convert_array(values, src_key, "i32")
    return convert_array(i32, "i32", dst_key)


def literal_fold_differences(
    values: np.ndarray, src_key: str, dst_key: str
) -> tuple[int, int, np.generic, np.generic, np.generic] | None:
    """(the count of elements whose literal fold differs from ``convert``, the flat index
    of the first, its source value, its ``convert`` value, its literal value), or None when
    none differs. Both NaN counts as equal; otherwise bits are compared. A splat (every
    stride 0) is computed on one element."""
    values = np.asarray(values)
    splat = values.size > 1 and not any(values.strides)
    flat = (
        values[(0,) * values.ndim].reshape(1) if splat else np.ascontiguousarray(values).reshape(-1)
    )
    try:
        exact = convert_array(flat, src_key, dst_key)
        literal = literal_convert(flat, src_key, dst_key)
    except (ValueError, UnsupportedElementType):
        return None
    hits = np.flatnonzero(differing(exact, literal))
    if hits.size == 0:
        return None
    first = int(hits[0])
    count = values.size if splat else int(hits.size)
    return count, first, flat[first], exact[first], literal[first]


def _fmt(x: np.generic) -> str:
    x = np.asarray(x)[()]
    kind = np.asarray(x).dtype.kind
    if kind == "b":
        return "true" if x else "false"
    if kind in "iu":
        return str(int(x))
    if kind == "f" and np.isfinite(x):
        # numpy's own str() of a float changed between versions (3000000000.0 / 3e+09)
        if x == 0 or 1e-4 <= abs(x) < 1e16:
            return np.format_float_positional(x, unique=True, trim="0")
        return np.format_float_scientific(x, unique=True, trim="0")
    return str(x)


__all__ = [
    "HAZARDS",
    "SEEDS",
    "Finding",
    "findings",
    "literal_convert",
    "literal_fold_differences",
    "summary_lines",
]
