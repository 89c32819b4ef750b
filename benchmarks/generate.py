"""Synthetic StableHLO/MHLO modules of a given op count for the benchmark.

One ``func.func @main`` (the scope of the for-penguin passes) threads a ``tensor<4x8xf32>``
accumulator through ``units`` copies of a unit of about 100 ops: ordinary arithmetic
(elementwise, dot_general, transpose, reshape, a reduce with its body, compare/select,
non-constant converts and broadcasts that the rewriters visit and skip) and one instance of
every pattern the passes rewrite:

* fuseIotaSort: ``sort(x, iota)`` with its comparator
* canonicalizeTupleOp: ``get_tuple_element(tuple(..))``
* replaceGetDimensionSize (then convert and broadcast_in_dim of the folded constant)
* replaceConvertsWithConstants: ``convert(constant)``
* replaceInvalidBackendConfigs: ``custom_call @AwsNeuronErf`` with a bad backend_config
* lowerResizeNearestGrad: ``custom_call @ResizeNearestGrad``
* replaceBroadcastsWithBroadcastInDim: legacy ``broadcast(constant)``
* replaceBroadcastInDimWithConstants: ``broadcast_in_dim(constant)`` (three per unit)
* removeDeadZeroSizedTensorOps: a ``0x8`` slice and add (StableHLO)
* canonicalize-conv: a strided, padded 3x3 convolution

About 10% of the ops are rewritten, as in the one-in-ten matches of real training steps.
Every value feeds the result, so native ``canonicalize`` (which also erases dead ops) does
no free dead-code removal. Constants differ per unit (attributes are uniqued per context).
The MHLO twin is the same module through the native ``stablehlo-legalize-to-hlo`` pass.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

F = "tensor<4x8xf32>"
ARITH_REPEATS = 3  # ordinary arithmetic blocks per unit
CACHE = Path(
    os.environ.get("PENGUIN_BENCH_CACHE", Path(tempfile.gettempdir()) / "penguin-opt-bench")
)


class _Unit:
    def __init__(self, counter: int):
        self.n = counter
        self.lines: list[str] = []
        self.ops = 0

    def v(self) -> str:
        name = f"%{self.n}"
        self.n += 1
        return name

    def op(self, text: str, nested: int = 0) -> str:
        """Emit ``%new = text`` (``{}`` in text is not used); returns the new value."""
        name = self.v()
        self.lines.append(f"    {name} = {text}")
        self.ops += 1 + nested
        return name


def _arith(u: _Unit, acc: str) -> str:
    a1 = u.op(f"stablehlo.add {acc}, %arg1 : {F}")
    a2 = u.op(f"stablehlo.multiply {a1}, {a1} : {F}")
    a3 = u.op(f"stablehlo.tanh {a2} : {F}")
    a4 = u.op(
        f"stablehlo.dot_general {a3}, %arg2, contracting_dims = [1] x [0] : "
        f"({F}, tensor<8x8xf32>) -> {F}"
    )
    a5 = u.op(f"stablehlo.exponential {a4} : {F}")
    a6 = u.op(f"stablehlo.subtract {a5}, {a1} : {F}")
    a7 = u.op(f"stablehlo.transpose {a6}, dims = [1, 0] : ({F}) -> tensor<8x4xf32>")
    a8 = u.op(f"stablehlo.reshape {a7} : (tensor<8x4xf32>) -> {F}")
    zero = u.op("stablehlo.constant dense<0.000000e+00> : tensor<f32>")
    a9 = u.op(
        f"stablehlo.reduce({a8} init: {zero}) applies stablehlo.add across dimensions = [1] "
        f": ({F}, tensor<f32>) -> tensor<4xf32>",
        nested=2,
    )
    a10 = u.op(f"stablehlo.broadcast_in_dim {a9}, dims = [0] : (tensor<4xf32>) -> {F}")
    a11 = u.op(f"stablehlo.divide {a8}, {a10} : {F}")
    a12 = u.op(f"stablehlo.maximum {a11}, {a6} : {F}")
    a13 = u.op(f"stablehlo.compare GT, {a12}, {a1} : ({F}, {F}) -> tensor<4x8xi1>")
    a14 = u.op(f"stablehlo.select {a13}, {a12}, {a1} : tensor<4x8xi1>, {F}")
    a15 = u.op(f"stablehlo.convert {a13} : (tensor<4x8xi1>) -> {F}")
    a16 = u.op(f"stablehlo.add {a14}, {a15} : {F}")
    a17 = u.op(f"stablehlo.negate {a16} : {F}")
    a18 = u.op(f"stablehlo.abs {a17} : {F}")
    return u.op(f"stablehlo.log_plus_one {a18} : {F}")


def _floats(k: int, n: int = 8) -> str:
    return ", ".join(f"{(k * 7 + i) % 1000 * 0.25:e}" for i in range(n))


def _patterns(u: _Unit, acc: str, k: int) -> str:
    # fuseIotaSort
    iota = u.op("stablehlo.iota dim = 1 : tensor<4x8xi32>")
    srt = u.v()
    u.lines.append(
        f'    {srt}:2 = "stablehlo.sort"({acc}, {iota}) '
        "<{dimension = 1 : i64, is_stable = true}> ({\n"
        "    ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):\n"
        "      %cmp = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
        "      stablehlo.return %cmp : tensor<i1>\n"
        f"    }}) : ({F}, tensor<4x8xi32>) -> ({F}, tensor<4x8xi32>)"
    )
    u.ops += 3
    si = u.op(f"stablehlo.convert {srt}#1 : (tensor<4x8xi32>) -> {F}")
    b1 = u.op(f"stablehlo.add {srt}#0, {si} : {F}")
    # canonicalizeTupleOp
    tup = u.op(f"stablehlo.tuple {b1}, {acc} : tuple<{F}, {F}>")
    g = u.op(f"stablehlo.get_tuple_element {tup}[0] : (tuple<{F}, {F}>) -> {F}")
    # replaceGetDimensionSize (-> constant -> convert folded -> broadcast_in_dim folded)
    d = u.op(f"stablehlo.get_dimension_size {g}, dim = 1 : ({F}) -> tensor<i32>")
    df = u.op(f"stablehlo.convert {d} : (tensor<i32>) -> tensor<f32>")
    db = u.op(f"stablehlo.broadcast_in_dim {df}, dims = [] : (tensor<f32>) -> {F}")
    b2 = u.op(f"stablehlo.multiply {g}, {db} : {F}")
    # replaceConvertsWithConstants, then replaceBroadcastInDimWithConstants
    ints = ", ".join(str((k * 13 + i) % 997 - 400) for i in range(8))
    c4 = u.op(f"stablehlo.constant dense<[{ints}]> : tensor<8xi32>")
    c4f = u.op(f"stablehlo.convert {c4} : (tensor<8xi32>) -> tensor<8xf32>")
    c4b = u.op(f"stablehlo.broadcast_in_dim {c4f}, dims = [1] : (tensor<8xf32>) -> {F}")
    b3 = u.op(f"stablehlo.add {b2}, {c4b} : {F}")
    # replaceInvalidBackendConfigs
    e = u.op(
        f'stablehlo.custom_call @AwsNeuronErf({b3}) {{backend_config = "{{mode: {k % 7}}}"}} '
        f": ({F}) -> {F}"
    )
    # lowerResizeNearestGrad
    r = u.op(
        "stablehlo.custom_call @ResizeNearestGrad(%arg5) : "
        "(tensor<1x4x8x1xf32>) -> tensor<1x2x4x1xf32>"
    )
    rr = u.op(f"stablehlo.reshape {r} : (tensor<1x2x4x1xf32>) -> tensor<8xf32>")
    rb = u.op(f"stablehlo.broadcast_in_dim {rr}, dims = [1] : (tensor<8xf32>) -> {F}")
    b4 = u.op(f"stablehlo.add {e}, {rb} : {F}")
    # replaceBroadcastsWithBroadcastInDim (then folded)
    c7 = u.op(f"stablehlo.constant dense<[{_floats(k)}]> : tensor<8xf32>")
    bc = u.op(f"stablehlo.broadcast {c7}, sizes = [4] : (tensor<8xf32>) -> {F}")
    b5 = u.op(f"stablehlo.multiply {b4}, {bc} : {F}")
    # removeDeadZeroSizedTensorOps (StableHLO)
    z = u.op(f"stablehlo.slice {b5} [0:0, 0:8] : ({F}) -> tensor<0x8xf32>")
    z2 = u.op(f"stablehlo.add {z}, {z} : tensor<0x8xf32>")
    b6 = u.op(f"stablehlo.concatenate {b5}, {z2}, dim = 0 : ({F}, tensor<0x8xf32>) -> {F}")
    # canonicalize-conv: strided, padded 3x3 convolution
    cv = u.op(
        "stablehlo.convolution(%arg3, %arg4) "
        "dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], "
        "window = {stride = [2, 2], pad = [[1, 1], [1, 1]]} "
        "{batch_group_count = 1 : i64, feature_group_count = 1 : i64} : "
        "(tensor<1x8x8x2xf32>, tensor<3x3x2x2xf32>) -> tensor<1x4x4x2xf32>"
    )
    cvr = u.op(f"stablehlo.reshape {cv} : (tensor<1x4x4x2xf32>) -> {F}")
    return u.op(f"stablehlo.add {b6}, {cvr} : {F}")


UNIT_OPS = None  # set on first use: ops per unit


def stablehlo_module(target_ops: int) -> tuple[str, int]:
    """StableHLO text of about ``target_ops`` ops (every op, nested ones included)."""
    head = (
        "module @bench {\n"
        f"  func.func @main(%arg0: {F}, %arg1: {F}, %arg2: tensor<8x8xf32>, "
        "%arg3: tensor<1x8x8x2xf32>, %arg4: tensor<3x3x2x2xf32>, "
        f"%arg5: tensor<1x4x8x1xf32>) -> {F} {{\n"
    )
    parts = [head]
    ops = 3  # module, func, return
    acc, counter, k = "%arg0", 0, 0
    while ops < target_ops:
        u = _Unit(counter)
        for _ in range(ARITH_REPEATS):
            acc = _arith(u, acc)
        acc = _patterns(u, acc, k)
        parts.append("\n".join(u.lines) + "\n")
        ops += u.ops
        counter, k = u.n, k + 1
    parts.append(f"    return {acc} : {F}\n  }}\n}}\n")
    return "".join(parts), ops


def to_mhlo(text: str) -> str:
    """The MHLO twin: ``stablehlo-legalize-to-hlo`` on the StableHLO module, printed."""
    from jaxlib.mlir import ir, passmanager

    from penguin_opt.context import make_context

    ctx = make_context()
    with ctx, ir.Location.unknown(ctx):
        module = ir.Module.parse(text)
        passmanager.PassManager.parse("builtin.module(stablehlo-legalize-to-hlo)").run(
            module.operation
        )
        return str(module)


def module_path(dialect: str, target_ops: int) -> tuple[Path, int]:
    """A cached file with the module (generated on first use) and its op count."""
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"synthetic_{dialect}_{target_ops}.mlir"
    count_path = path.with_suffix(".ops")
    if not (path.exists() and count_path.exists()):
        text, ops = stablehlo_module(target_ops)
        if dialect == "mhlo":
            text = to_mhlo(text)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(text)
        tmp.replace(path)
        count_path.write_text(str(ops))
    return path, int(count_path.read_text())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("ops", type=int, help="approximate op count")
    ap.add_argument("--dialect", choices=("stablehlo", "mhlo"), default="stablehlo")
    ap.add_argument("-o", "--output", help="write here (default: stdout)")
    args = ap.parse_args(argv)
    text, ops = stablehlo_module(args.ops)
    if args.dialect == "mhlo":
        text = to_mhlo(text)
    if args.output:
        Path(args.output).write_text(text)
        print(f"{args.output}: {ops} ops", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
