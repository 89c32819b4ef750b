"""How close each simple rewriter is to the least its binding calls cost: ours against a
minimal inline loop doing the same rewrites on the same ops.

    python -m benchmarks.minimal                    # 100k-op modules, both dialects
    python -m benchmarks.minimal --size 1M --dialects stablehlo --reps 5

For each rewriter below, a fresh clone of the synthetic module is brought to the state that
rewriter sees in a run of the for-penguin pass (the rewriters before it in the table run
first, through the pass's own sweep), then either our rewriter runs (``run_on``: its match,
skip reasons, statistics, the sweep's bookkeeping) or a minimal loop over the same live
worklist does the same rewrites with the cheapest binding idioms measured here and no
bookkeeping at all (no statistics, no skip reasons, no identity tracking; it handles only
what the synthetic module holds). The two alternate, process CPU time, min of ``--reps``;
the first repetition checks that both leave byte-identical module text, so a minimal loop
cannot drift into doing less. ``ours / minimal`` is what our protocol, sweep and general
matching cost over the binding calls themselves: the share of a rewriter's time that any
restructuring in Python could still remove.

Two more rows, each on a module the for-penguin pass has run on: the conv pass (its walk
and both rewrites, as one minimal loop) and the penguin-aware verifier's swap of the
penguin-form sorts for their expansions and back (the verification itself is the
floor's). A total per dialect follows, in µs per op of the module: with the floor's
verification and the walk that lists the roots, what no implementation can skip.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable

import numpy as np

from benchmarks.generate import module_path
from benchmarks.run import measure_alternating, parse_size, pass_names


class _Minimal:
    """The minimal loops of one dialect: each takes a rewriter's live worklist (in the
    state a pass run leaves it for that rewriter) and returns the rewrites it did."""

    def __init__(self, dialect) -> None:
        self.dialect = dialect
        self.constant = dialect.op("constant")

    def loops(self) -> dict[str, Callable[[list], int]]:
        return {
            "canonicalizeTupleOp": self.tuples,
            "replaceGetDimensionSize": self.dimension_sizes,
            "replaceConvertsWithConstants": self.converts,
            "replaceBroadcastsWithBroadcastInDim": self.broadcasts,
            "replaceBroadcastInDimWithConstants": self.broadcast_folds,
            "fuseIotaSort": self.sorts,
            "replaceInvalidBackendConfigs": self.backend_configs,
            "lowerResizeNearestGrad": self.resize_grads,
        }

    def _replace_by_constant(self, op, attr, result_type) -> None:
        from jaxlib.mlir import ir

        new = ir.Operation.create(
            self.constant,
            results=[result_type],
            attributes={"value": attr},
            loc=op.location,
            ip=ir.InsertionPoint(op),
        )
        op.result.replace_all_uses_with(new.result)
        op.erase()

    def tuples(self, ops: list) -> int:
        from jaxlib.mlir import ir

        tuple_name, producers = self.dialect.op("tuple"), []
        for op in ops:
            producer = op.operands[0].owner
            if producer.name != tuple_name:
                continue
            index = ir.IntegerAttr(op.attributes["index"]).value
            op.result.replace_all_uses_with(producer.operands[index])
            op.erase()
            producers.append(producer)
        for producer in producers:  # the synthetic module's tuples feed no tuples
            try:
                if next(iter(producer.result.uses), None) is None:
                    producer.operation.erase()
            except RuntimeError:  # erased already, through another object for it
                pass
        return len(ops)

    def dimension_sizes(self, ops: list) -> int:
        from jaxlib.mlir import ir

        from penguin_opt.elements import dtype_of, make_elements

        made = {}
        for op in ops:
            dim = ir.IntegerAttr(op.attributes["dimension"]).value
            size = ir.RankedTensorType(op.operands[0].type).shape[dim]
            result_type = op.result.type
            attr = made.get((size, result_type))
            if attr is None:
                dtype = dtype_of(ir.ShapedType(result_type).element_type)
                attr = made[size, result_type] = make_elements(
                    np.array(size).astype(dtype), result_type
                )
            self._replace_by_constant(op, attr, result_type)
        return len(ops)

    # The two folds are written out in full, not through a shared helper: a call or a
    # generator per op cost the minimal broadcast_in_dim fold 10% (7.2 -> 8.0 µs per root).
    def converts(self, ops: list) -> int:
        from jaxlib.mlir import ir

        from penguin_opt.convert_math import convert_array
        from penguin_opt.elements import make_elements, read_elements, type_key

        folds, done = {}, 0
        for op in ops:
            value = op.operands[0]
            src = value.owner
            if getattr(type(src), "OPERATION_NAME", None) != self.constant:
                continue
            src_attr = src.attributes["value"]
            result_type = op.result.type
            attr = folds.get((src_attr, result_type))
            if attr is None:
                st, rt = ir.ShapedType(value.type), ir.ShapedType(result_type)
                key = type_key(st.element_type)
                values = read_elements(src_attr, key, tuple(st.shape))
                folded = convert_array(values, key, type_key(rt.element_type))
                attr = folds[src_attr, result_type] = make_elements(folded, result_type)
            self._replace_by_constant(op, attr, result_type)
            done += 1
        return done

    def broadcast_folds(self, ops: list) -> int:
        from jaxlib.mlir import ir

        from penguin_opt.elements import make_elements, read_elements, type_key
        from penguin_opt.ir_util import i64_values
        from penguin_opt.passes.penguin_rewriters import broadcast_in_dim

        folds, done = {}, 0
        for op in ops:
            value = op.operands[0]
            src = value.owner
            if getattr(type(src), "OPERATION_NAME", None) != self.constant:
                continue
            src_attr = src.attributes["value"]
            result_type = op.result.type
            dims = op.attributes["broadcast_dimensions"]
            attr = folds.get((src_attr, result_type, dims))
            if attr is None:
                st = ir.ShapedType(value.type)
                values = read_elements(src_attr, type_key(st.element_type), tuple(st.shape))
                shape = tuple(ir.ShapedType(result_type).shape)
                folded = broadcast_in_dim(values, list(i64_values(dims)), shape)
                attr = folds[src_attr, result_type, dims] = make_elements(folded, result_type)
            self._replace_by_constant(op, attr, result_type)
            if next(iter(src.result.uses), None) is None:
                src.operation.erase()
            done += 1
        return done

    def broadcasts(self, ops: list) -> int:
        from jaxlib.mlir import ir

        remarks, dims_made = [], {}
        for op in ops:
            operand = op.operands[0]
            if getattr(type(operand.owner), "OPERATION_NAME", None) != self.constant:
                remarks.append(str(op.location))  # the remark ours records
            prefix = len(op.attributes["broadcast_sizes"])
            rank = ir.RankedTensorType(operand.type).rank
            dims = dims_made.get((prefix, rank))
            if dims is None:
                dims = dims_made[prefix, rank] = self.dialect.i64_list(range(prefix, prefix + rank))
            new = ir.Operation.create(
                self.dialect.op("broadcast_in_dim"),
                results=[op.result.type],
                operands=[operand],
                attributes={"broadcast_dimensions": dims},
                loc=op.location,
                ip=ir.InsertionPoint(op),
            )
            op.result.replace_all_uses_with(new.result)
            op.erase()
        return len(ops)

    def sorts(self, ops: list) -> int:
        from jaxlib.mlir import ir

        iota_name, done = self.dialect.op("iota"), 0
        for op in ops:
            operands = op.operands
            if len(operands) != 2:
                continue
            iota = operands[1].owner
            if getattr(type(iota), "OPERATION_NAME", None) != iota_name:
                continue
            attributes = op.attributes
            attributes = {name: attributes[name] for name in attributes}
            dim = ir.IntegerAttr(attributes["dimension"]).value  # non-negative here
            if ir.IntegerAttr(iota.attributes["iota_dimension"]).value != dim:
                continue
            new = ir.Operation.create(
                op.name,
                results=list(op.results.types),
                operands=[operands[0]],
                attributes=attributes,
                regions=1,
                loc=op.location,
                ip=ir.InsertionPoint(op),
            )
            op.regions[0].blocks[0].append_to(new.regions[0])
            for old, value in zip(op.results, new.results, strict=True):
                old.replace_all_uses_with(value)
            op.erase()
            if next(iter(iota.result.uses), None) is None:
                iota.operation.erase()
            done += 1
        return done

    def backend_configs(self, ops: list) -> int:
        from jaxlib.mlir import ir

        from penguin_opt.passes.penguin_rewriters import (
            _INVALID_CONFIG_BYTE,
            _KEPT_CUSTOM_CALL_ATTRS,
        )

        none, false = ir.StringAttr.get("None"), ir.BoolAttr.get(False)
        warnings, done = [], 0
        for op in ops:
            attributes = op.attributes
            attributes = {name: attributes[name] for name in attributes}
            target = attributes["call_target_name"]
            if ir.StringAttr(target).value != "AwsNeuronErf":
                continue
            raw = ir.StringAttr(attributes["backend_config"]).value_bytes
            if not _INVALID_CONFIG_BYTE.search(raw):
                continue
            warnings.append(str(op.location))  # the warning ours emits
            kept = {"call_target_name": target, "backend_config": none, "has_side_effect": false}
            for name in ("api_version", *_KEPT_CUSTOM_CALL_ATTRS):
                if name in attributes:
                    kept[name] = attributes[name]
            new = ir.Operation.create(
                op.name,
                results=[op.result.type],
                operands=list(op.operands),
                attributes=kept,
                loc=op.location,
                ip=ir.InsertionPoint(op),
            )
            op.result.replace_all_uses_with(new.result)
            op.erase()
            done += 1
        return done

    def resize_grads(self, ops: list) -> int:
        from jaxlib.mlir import ir

        from penguin_opt.dialect import i64_matrix
        from penguin_opt.elements import dtype_of, make_elements

        d, made, done = self.dialect, {}, 0
        for op in ops:
            if ir.StringAttr(op.attributes["call_target_name"]).value != "ResizeNearestGrad":
                continue
            operand = op.operands[0]
            result_type = op.result.type
            grad, result = ir.RankedTensorType(operand.type), ir.RankedTensorType(result_type)
            key = (grad, result)
            plan = made.get(key)
            if plan is None:  # attributes and types per (operand type, result type)
                element, rank = grad.element_type, grad.rank
                scale = [o // i for o, i in zip(grad.shape, result.shape, strict=True)]
                scalar = ir.RankedTensorType.get([], element)
                dtype = dtype_of(element)
                ones = d.i64_list([1] * rank)
                plan = made[key] = (
                    scalar,
                    make_elements(np.zeros((), dtype), scalar),
                    {
                        "window_dimensions": d.i64_list(scale),
                        "window_strides": d.i64_list(scale),
                        "base_dilations": ones,
                        "window_dilations": ones,
                        "padding": i64_matrix([[0, 0]] * rank),
                    },
                    make_elements(np.array(math.prod(scale), dtype), scalar),
                    {"broadcast_sizes": d.i64_list(result.shape)},
                )
            scalar, zero, window_attributes, volume, sizes = plan
            loc, ip = op.location, ir.InsertionPoint(op)
            z = ir.Operation.create(
                self.constant, results=[scalar], attributes={"value": zero}, loc=loc, ip=ip
            )
            window = ir.Operation.create(
                d.op("reduce_window"),
                results=[result_type],
                operands=[operand, z.result],
                attributes=window_attributes,
                regions=1,
                loc=loc,
                ip=ip,
            )
            block = window.regions[0].blocks.append(scalar, scalar)
            add = ir.Operation.create(
                d.op("add"),
                results=[scalar],
                operands=list(block.arguments),
                loc=loc,
                ip=ir.InsertionPoint(block),
            )
            ir.Operation.create(
                d.op("return"), operands=[add.result], loc=loc, ip=ir.InsertionPoint(block)
            )
            v = ir.Operation.create(
                self.constant, results=[scalar], attributes={"value": volume}, loc=loc, ip=ip
            )
            b = ir.Operation.create(
                d.op("broadcast"),
                results=[result_type],
                operands=[v.result],
                attributes=sizes,
                loc=loc,
                ip=ip,
            )
            div = ir.Operation.create(
                d.op("divide"),
                results=[result_type],
                operands=[window.result, b.result],
                loc=loc,
                ip=ip,
            )
            op.result.replace_all_uses_with(div.result)
            op.erase()
            done += 1
        return done


def minimal_convs(dialect, ops: list) -> int:
    """canonicalize-conv's two rewrites of each of ``ops`` (every conv, after the
    for-penguin pass) as one minimal loop: per conv, its attributes and operand types read,
    the pad and the partial convs of its (cached) plan created, its uses replaced, the conv
    erased; no intermediate padded conv, no gate reasons, no statistics. Plans come from
    our own planning code, once per conv shape (as ours, not priced per op); it handles
    what the synthetic module holds: padded convs strided into several phases whose sums
    keep the result type, without rhs_dilation."""
    from jaxlib.mlir import ir

    from penguin_opt.passes.base import RunState
    from penguin_opt.passes.canonicalize_conv import (
        _GEOMETRY_ATTRIBUTES,
        ConvGate,
        ExplicitlyPad,
        ExplicitlyStride,
        _Builder,
        conv_geometry,
    )
    from penguin_opt.passes.sweep import Sweep

    builder = _Builder(Sweep(dialect, "minimal", RunState(), {}))  # plans only
    gate, stride, plans, done = ConvGate(), ExplicitlyStride(), {}, 0
    names = {m: dialect.op(m) for m in ("constant", "pad", "slice", "convolution", "add")}
    for conv in ops:
        attrs = conv.attributes
        attributes = {name: attrs[name] for name in attrs}
        lhs, rhs = conv.operands
        result = conv.result
        key = (
            lhs.type,
            rhs.type,
            result.type,
            *(attributes.get(name) for name in _GEOMETRY_ATTRIBUTES),
        )
        plan = plans.get(key)
        if plan is None:  # once per conv shape, by our own planning code
            g = conv_geometry(conv, dialect, builder, attributes)
            if gate.reject(conv, dialect, g) is not None:
                raise SystemExit("minimal_convs: a conv the gate rejects")
            padded = ExplicitlyPad._plan(g, builder)
            element = builder.element(lhs.type)
            padded_type = builder.tensor(padded.padded.lhs_shape, element)
            steps = stride._steps(conv, padded.padded, builder, (key[2], padded_type, key[1]))
            if isinstance(steps, str) or steps[0] != key[2] or len(steps[2]) < 2:
                raise SystemExit("minimal_convs: handles padded, strided f32 convs only")
            if any(dilated for *_, dilated in steps[2]):
                raise SystemExit("minimal_convs: handles convs without rhs_dilation only")
            plan = plans[key] = (
                builder.zero(conv, element),
                padded_type,
                padded.pad,
                padded.no_padding,
                steps[1],  # the unit window strides
                steps[2],  # per partial conv: its lhs slice and kernel slice, or None
            )
        zero, padded_type, pad_attributes, no_padding, unit, parts = plan
        loc, ip = conv.location, ir.InsertionPoint(conv)
        cst = ir.Operation.create(
            names["constant"], results=[zero.type], attributes={"value": zero}, loc=loc, ip=ip
        )
        pad = ir.Operation.create(
            names["pad"],
            results=[padded_type],
            operands=[lhs, cst.result],
            attributes=pad_attributes,
            loc=loc,
            ip=ip,
        ).result
        attributes["padding"] = no_padding
        attributes["window_strides"] = unit
        result_type, total = result.type, None
        for x_slice, w_slice, _, _ in parts:
            operands = []
            for value, spec in ((pad, x_slice), (rhs, w_slice)):  # each sliced, or whole
                if spec is not None:
                    value = ir.Operation.create(
                        names["slice"],
                        results=spec[0],
                        operands=[value],
                        attributes=spec[1],
                        loc=loc,
                        ip=ip,
                    ).result
                operands.append(value)
            part = ir.Operation.create(
                names["convolution"],
                results=[result_type],
                operands=operands,
                attributes=attributes,
                loc=loc,
                ip=ip,
            ).result
            if total is not None:
                part = ir.Operation.create(
                    names["add"], results=[result_type], operands=[total, part], loc=loc, ip=ip
                ).result
            total = part
        result.replace_all_uses_with(total)
        conv.erase()
        done += 1
    return done


def _compare_conv(master, dialect_name: str, reps: int) -> tuple[int, float, float]:
    """(convs, ours s, minimal s): the conv pass's run (its walk included) against a
    name-dispatched walk and :func:`minimal_convs`, each on a clone of ``master`` that the
    for-penguin pass has run on (the state a pipeline hands the conv pass)."""
    from penguin_opt.passes import PASSES
    from penguin_opt.passes.base import RunState
    from penguin_opt.passes.sweep import collect

    names = pass_names(dialect_name)
    first, conv_pass = PASSES[names["for-penguin"]](), PASSES[names["conv"]]()
    conv_name = conv_pass.dialect.op("convolution")
    texts: dict[str, str] = {}
    roots = [0]

    def prepared():
        module = master.clone()
        first.run(module, RunState())
        return module

    def finish(label: str) -> Callable:
        def done(module) -> None:
            if label not in texts:
                texts[label] = module.get_asm()
            module.erase()

        return done

    def minimal(module) -> None:
        functions = list(module.regions[0].blocks[0].operations)
        roots[0] = minimal_convs(conv_pass.dialect, collect(functions, [conv_name])[conv_name])

    timings = measure_alternating(
        {
            "ours": (lambda m: conv_pass.run(m, RunState()), prepared, finish("ours")),
            "minimal": (minimal, prepared, finish("minimal")),
        },
        reps=reps,
    )
    if texts["ours"] != texts["minimal"]:
        raise SystemExit(f"{conv_pass.name}: the minimal loop's output differs")
    return roots[0], timings["ours"].cpu, timings["minimal"].cpu


def minimal_swap(sorts: list, iota_name: str) -> list:
    """The verifier's swap of each penguin-form sort for its expansion (an iota, and a sort
    with it as last operand, the comparator moved over, the uses taken over), as a minimal
    loop; returns what :func:`minimal_swap_back` undoes. It handles what the synthetic
    module holds: sorts with a non-negative ``dimension``."""
    from jaxlib.mlir import ir

    swapped = []
    for sort in sorts:
        attrs = sort.attributes
        attributes = {name: attrs[name] for name in attrs}
        results = sort.results
        types = list(results.types)
        loc, ip = sort.location, ir.InsertionPoint(sort)
        iota = ir.Operation.create(
            iota_name,
            results=[types[-1]],
            attributes={"iota_dimension": attributes["dimension"]},
            loc=loc,
            ip=ip,
        )
        expanded = ir.Operation.create(
            sort.name,
            results=types,
            operands=[*sort.operands, iota.result],
            attributes=attributes,
            regions=1,
            loc=loc,
            ip=ip,
        )
        sort.regions[0].blocks[0].append_to(expanded.regions[0])
        for old, new in zip(results, expanded.results, strict=True):
            old.replace_all_uses_with(new)
        sort.detach_from_parent()
        swapped.append((sort, expanded, iota))
    return swapped


def minimal_swap_back(swapped: list) -> None:
    """Undo :func:`minimal_swap`: each sort back in its place, the expansions erased."""
    from jaxlib.mlir import ir

    for sort, expanded, iota in swapped:
        ir.InsertionPoint(expanded).insert(sort)
        expanded.regions[0].blocks[0].append_to(sort.regions[0])
        for old, new in zip(expanded.results, sort.results, strict=True):
            old.replace_all_uses_with(new)
        expanded.erase()
        iota.erase()


def _compare_swap(master, dialect_name: str, reps: int) -> tuple[int, float, float]:
    """(penguin-form sorts, ours s, minimal s): the penguin-aware verifier's swap of the
    sorts for their expansions and back (the verification itself left out: the floor
    prices it), ours (``penguin_sort``'s) against :func:`minimal_swap`, each on a clone of
    ``master`` that the for-penguin pass has run on, its sorts listed beforehand (the conv
    pass's walk lists them for the verifier)."""
    from penguin_opt import penguin_sort
    from penguin_opt.passes import PASSES
    from penguin_opt.passes.base import RunState
    from penguin_opt.passes.sweep import collect

    first = PASSES[pass_names(dialect_name)["for-penguin"]]()
    d = first.dialect
    iota_name = d.op("iota")

    def prepared():
        module = master.clone()
        first.run(module, RunState())
        functions = list(module.regions[0].blocks[0].operations)
        sorts = collect(functions, [d.op("sort")])[d.op("sort")]
        return module, [s for s in sorts if penguin_sort.is_penguin_sort(s)]

    def minimal(arg) -> None:
        minimal_swap_back(minimal_swap(arg[1], iota_name))

    def ours_in(sorts: list) -> list:
        swapped: list = []
        penguin_sort._swap_in_expansions(sorts, swapped)
        return swapped

    def ours(arg) -> None:
        penguin_sort._swap_back(ours_in(arg[1]))

    # Both expand to the same text and come back to the text they started from.
    texts = []
    for swap_in, swap_back in (
        (ours_in, penguin_sort._swap_back),
        (lambda sorts: minimal_swap(sorts, iota_name), minimal_swap_back),
    ):
        module, sorts = prepared()
        roots, before = len(sorts), module.get_asm()
        swapped = swap_in(sorts)
        texts.append(module.get_asm())
        swap_back(swapped)
        if module.get_asm() != before:
            raise SystemExit("penguin-sort swap: the module did not come back as it was")
        module.erase()
    if texts[0] != texts[1]:
        raise SystemExit("penguin-sort swap: the minimal loop's expansion differs")
    timings = measure_alternating(
        {
            "ours": (ours, prepared, lambda arg: arg[0].erase()),
            "minimal": (minimal, prepared, lambda arg: arg[0].erase()),
        },
        reps=reps,
    )
    return roots, timings["ours"].cpu, timings["minimal"].cpu


def _compare_one(master, pass_, index: int, loop: Callable, reps: int) -> tuple[int, float, float]:
    """(roots, ours s, minimal s) for rewriter ``index`` of ``pass_``'s table."""
    from penguin_opt.passes.base import RunState

    rewriter = pass_.rewriters()[index]
    texts: dict[str, str] = {}
    roots = [0]

    def prepared():
        module = master.clone()
        functions, table, sweep = pass_.begin(module, RunState())  # as the pass's run
        for earlier in table[:index]:
            earlier.run_on(functions, sweep)
        worklist = sweep.worklists[pass_.dialect.op(rewriter.root)]
        live = [o for o in worklist if not sweep.is_erased(o)]
        roots[0] = len(live)
        return module, functions, sweep, live

    def finish(label: str) -> Callable:
        def done(arg) -> None:
            if label not in texts:
                texts[label] = arg[0].get_asm()
            arg[0].erase()

        return done

    timings = measure_alternating(
        {
            "ours": (lambda a: rewriter.run_on(a[1], a[2]), prepared, finish("ours")),
            "minimal": (lambda a: loop(a[3]), prepared, finish("minimal")),
        },
        reps=reps,
    )
    if texts["ours"] != texts["minimal"]:
        raise SystemExit(f"{pass_.name} {rewriter.name}: the minimal loop's output differs")
    return roots[0], timings["ours"].cpu, timings["minimal"].cpu


CONV_ROW = "canonicalize-conv"  # the conv pass's two rewrites, as one row
SWAP_ROW = "penguin-sort swap"  # the penguin-aware verifier's swap of sorts, and back


def compare(
    dialect: str, size: int, reps: int, only: set[str] | None = None
) -> tuple[list[tuple[str, int, float, float]], int]:
    """((rewriter, roots, ours µs/root, minimal µs/root) per rewriter with a minimal loop,
    the conv pass last; the module's op count)."""
    from jaxlib.mlir import ir

    from benchmarks.run import count_ops
    from penguin_opt.context import make_context
    from penguin_opt.passes import PASSES
    from penguin_opt.penguin_sort import parse_text

    path, _ = module_path(dialect, size)
    pass_ = PASSES[pass_names(dialect)["for-penguin"]]()
    loops = _Minimal(pass_.dialect).loops()
    rows = []
    with make_context() as ctx, ir.Location.unknown(ctx):
        master = parse_text(path.read_text(), str(path))
        ops = count_ops(master)
        for index, rewriter in enumerate(pass_.rewriters()):
            loop = loops.get(rewriter.name)
            if loop is None or (only and rewriter.name not in only):
                continue
            roots, ours, least = _compare_one(master, pass_, index, loop, reps)
            n = max(roots, 1)
            rows.append((rewriter.name, roots, ours / n * 1e6, least / n * 1e6))
        if "conv" in pass_names(dialect) and (not only or CONV_ROW in only):
            roots, ours, least = _compare_conv(master, dialect, reps)
            n = max(roots, 1)
            rows.append((CONV_ROW, roots, ours / n * 1e6, least / n * 1e6))
        if not only or SWAP_ROW in only:
            roots, ours, least = _compare_swap(master, dialect, reps)
            n = max(roots, 1)
            rows.append((SWAP_ROW, roots, ours / n * 1e6, least / n * 1e6))
        master.operation.erase()
    return rows, ops


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.minimal", description=__doc__)
    p.add_argument("--size", default="100k", help="synthetic module size (default 100k)")
    p.add_argument("--dialects", default="stablehlo,mhlo")
    p.add_argument("--reps", type=int, default=5, help="repetitions, min taken (default 5)")
    p.add_argument(
        "--rewriters",
        default="",
        help=f"comma-separated names, '{CONV_ROW}' for the conv pass, '{SWAP_ROW}' for the "
        "verifier's swap of penguin-form sorts (default: all)",
    )
    args = p.parse_args(argv)
    only = set(filter(None, args.rewriters.split(",")))
    size = parse_size(args.size)
    print("| dialect | rewriter | roots | ours µs/root | minimal µs/root | ours / minimal |")
    print("|---|---|---:|---:|---:|---:|")
    totals = []
    for dialect in args.dialects.split(","):
        rows, ops = compare(dialect, size, args.reps, only)
        for name, roots, ours, least in rows:
            ratio = ours / least
            print(f"| {dialect} | {name} | {roots:,} | {ours:.2f} | {least:.2f} | {ratio:.2f} |")
            sys.stdout.flush()
        # per op of the module: the rows' seconds (µs per root x roots) over its ops
        ours = sum(r[1] * r[2] for r in rows) / ops
        least = sum(r[1] * r[3] for r in rows) / ops
        totals.append((dialect, len(rows), ops, ours, least))
    print()
    print("| dialect | rows | module ops | ours µs/op | minimal µs/op | ours / minimal |")
    print("|---|---:|---:|---:|---:|---:|")
    for dialect, n, ops, ours, least in totals:
        print(f"| {dialect} | {n} | {ops:,} | {ours:.2f} | {least:.2f} | {ours / least:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
