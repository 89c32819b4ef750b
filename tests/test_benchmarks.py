"""The benchmark command runs end to end and its floor is a floor.

`python -m benchmarks.run` is how the performance issue's targets are checked; these tests
run it on the 1k-op modules only (seconds), never time anything themselves, and check the
report's structure and the one inequality the floor measurement promises: the least work
the bindings allow is never more than what our passes spend.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _benchmark(cache: Path, module: str, *args: str) -> subprocess.CompletedProcess:
    """``python -m benchmarks.MODULE ARGS`` with its modules cached in ``cache``; it must
    exit 0."""
    proc = subprocess.run(
        [sys.executable, "-m", f"benchmarks.{module}", *args],
        cwd=ROOT,
        env={**os.environ, "PENGUIN_BENCH_CACHE": str(cache)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    cache = tmp_path_factory.mktemp("bench")
    out = cache / "performance.md"
    env = {**os.environ, "PENGUIN_BENCH_CACHE": str(cache)}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.run",
            "--sizes",
            "1k",
            "--corpus",
            "0",
            "--no-memory",
            "--no-folds",
            "--reps",
            "1",
            "-o",
            str(out),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out.read_text(), json.loads((cache / "last_run.json").read_text()), proc.stdout


def test_report_has_every_table(small_run):
    doc, _, stdout = small_run
    for heading in (
        "### stablehlo",
        "### mhlo",
        "### Floor: the least work these bindings allow",
        "## Targets",
    ):
        assert heading in doc, heading
    assert "<!-- Everything below this line is kept" in doc
    assert doc.split("<!--")[0].strip() in stdout  # the printed table is the written one


def test_end_to_end_column(small_run):
    """Each synthetic module is also run as a user runs it (penguin-opt IN -p ... -o OUT),
    against the same command with native canonicalize: two timings and their ratio."""
    doc, data, _ = small_run
    assert "end to end both/native (cpu, wall)" in doc
    for raw in data["results"]:
        for key in ("e2e native", "e2e both"):
            t = raw["times"][key]
            assert 0 < t["cpu"], (raw["name"], raw["dialect"], key)
            assert 0 < t["wall"], (raw["name"], raw["dialect"], key)


def test_floor_stays_below_the_passes(small_run, monkeypatch):
    _, data, _ = small_run
    monkeypatch.syspath_prepend(str(ROOT))
    from benchmarks.run import ModuleResult, Timing

    for raw in data["results"]:
        r = ModuleResult(**{**raw, "times": {k: Timing(**t) for k, t in raw["times"].items()}})
        f = r.floor
        assert f, f"no floor for {r.name} {r.dialect} (the floor child failed)"
        assert f["creates"] > 0
        assert f["erases"] > 0
        for key in ("create_us", "clone_us", "erase_us"):
            assert 0 < f[key] < 1000, key
        assert 0 < f["walk"]
        assert 0 < f["verify_output"]
        assert r.floor_verify() == f["verify_output"]
        assert r.floor_cpu(verify=False) < r.floor_cpu()
        assert r.floor_cpu() < r.times["both"].cpu, (r.name, r.dialect)


NET = """func.func @main(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<2x4xf32>, tensor<4xf32>) {
  %c = stablehlo.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  %0 = stablehlo.convert %c : (tensor<4xi32>) -> tensor<4xf32>
  %1 = "stablehlo.broadcast"(%0) {broadcast_sizes = array<i64: 2>} : (tensor<4xf32>) -> tensor<2x4xf32>
  %2 = stablehlo.add %a, %0 : tensor<4xf32>
  return %2, %1, %a : tensor<4xf32>, tensor<2x4xf32>, tensor<4xf32>
}
"""


def test_net_edits_count_what_the_output_changes_by_name(monkeypatch):
    """convert(constant) folds to a constant (the source stays), the legacy broadcast of it
    becomes a broadcast_in_dim that the next rewriter folds to a constant: our passes create
    three ops and erase three on the way (the broadcast_in_dim they make is folded again),
    but the output differs from the input by two constants more and a convert and a
    broadcast less."""
    monkeypatch.syspath_prepend(str(ROOT))
    from jaxlib.mlir import ir

    from benchmarks.run import net_edits, op_names
    from penguin_opt.context import make_context
    from penguin_opt.penguin_sort import parse_text

    with make_context(), ir.Location.unknown():
        module = parse_text(NET, "net")
        assert op_names(module)["stablehlo.constant"] == 1
        edits = net_edits(module, "stablehlo-canonicalize-for-penguin,stablehlo-canonicalize-conv")
        names = op_names(module)
    assert names["stablehlo.constant"] == 3
    assert names["stablehlo.convert"] == 0
    assert names["stablehlo.broadcast"] == 0
    assert names["stablehlo.broadcast_in_dim"] == 0
    assert edits == {"creates": 2, "erases": 2}


def test_floor_arithmetic(monkeypatch):
    """floor_cpu: creates at the cheaper of create and clone, erases, the walk for StableHLO
    only, and the verification of the output (or none), whatever the input's costs."""
    monkeypatch.syspath_prepend(str(ROOT))
    from benchmarks.run import ModuleResult, Timing

    floor = {
        "creates": 1000,
        "erases": 400,
        "create_us": 3.0,
        "clone_us": 2.0,
        "erase_us": 0.5,
        "walk": 0.010,
        "verify_output": 0.006,
    }
    times = {"verify": Timing(0.003, 0.003)}
    edits = (1000 * 2.0 + 400 * 0.5) * 1e-6
    shlo = ModuleResult("m", "stablehlo", 10_000, dict(times), floor=dict(floor))
    mhlo = ModuleResult("m", "mhlo", 10_000, dict(times), floor=dict(floor))
    assert shlo.floor_cpu() == pytest.approx(edits + 0.010 + 0.006)
    assert shlo.floor_cpu(verify=False) == pytest.approx(edits + 0.010)
    assert mhlo.floor_cpu() == pytest.approx(edits + 0.006)
    assert mhlo.floor_cpu(verify=False) == pytest.approx(edits)
    mhlo.times["verify"] = Timing(0.009, 0.009)
    assert mhlo.floor_cpu() == pytest.approx(edits + 0.006)


REGION = """func.func @main(%g: tensor<1x4x4x1xf32>) -> tensor<1x2x2x1xf32> {
  %0 = stablehlo.custom_call @ResizeNearestGrad(%g) {backend_config = ""} : (tensor<1x4x4x1xf32>) -> tensor<1x2x2x1xf32>
  return %0 : tensor<1x2x2x1xf32>
}
"""


def test_net_edits_do_not_count_ops_inside_created_regions(monkeypatch):
    """A ResizeNearestGrad lowering creates a reduce_window whose body (an add and a
    return) comes with it from one clone: only the top-level ops count."""
    monkeypatch.syspath_prepend(str(ROOT))
    from jaxlib.mlir import ir

    from benchmarks.run import net_edits, op_names
    from penguin_opt.context import make_context
    from penguin_opt.penguin_sort import parse_text

    with make_context(), ir.Location.unknown():
        module = parse_text(REGION, "region")
        edits = net_edits(module, "stablehlo-canonicalize-for-penguin")
        names = op_names(module)
    assert names["stablehlo.reduce_window"] == 1
    assert names["stablehlo.custom_call"] == 0
    assert "stablehlo.add" not in names  # inside the reduce_window's body
    created = sum(n for name, n in names.items() if name != "func.return")
    assert edits == {"creates": created, "erases": 1}


# ------------------------------------------------------------------ the native probe


@pytest.mark.native
@pytest.mark.skipif(
    shutil.which(os.environ.get("CC", "cc")) is None,
    reason="the native probe compiles a C file; no C compiler here",
)
def test_native_probe_runs_and_checks_itself(tmp_path):
    """`python -m benchmarks.native_probe` on the 1k modules: it exits 0 only if every
    count the native side reports equals the bindings' own (ops walked, ops priced,
    zero-sized matches against the StableHLO pass's statistic) and the module verifies and
    prints the same after the native edits."""
    proc = _benchmark(tmp_path, "native_probe", "--sizes", "1k", "--reps", "1")
    rows = [
        line.split("|") for line in proc.stdout.splitlines() if line.startswith("| synthetic 1k")
    ]
    assert [row[2].strip() for row in rows] == ["stablehlo", "mhlo"] * 2  # the two tables
    assert [len(row) for row in rows] == [12, 12, 8, 8]
    data = json.loads(proc.stdout.splitlines()[0].split(": ", 1)[1])
    assert data["ops"] == 1059
    assert data["zero_sized"] == 22
    assert data["adds"] > 0
    # the native walk is the cheap one; a wrong address would have crashed or miscounted
    assert 0 < data["native_walk"] < data["python_walk"]
    # one whole rewrite, natively and in Python, with the same output (checked by the probe)
    assert data["broadcasts"] == 11
    assert 0 < data["native_broadcast_us"] < data["python_broadcast_us"]
    assert "| synthetic 1k | mhlo | 11 |" in proc.stdout


@pytest.mark.native
def test_elf_reader_finds_local_functions_and_refuses_the_rest(monkeypatch, tmp_path):
    monkeypatch.syspath_prepend(str(ROOT))
    from benchmarks.native_probe import ProbeError, elf_functions, jaxlib_library

    lib = jaxlib_library()
    found = elf_functions(lib, ["mlirOperationWalk", "mlirOperationGetName"])
    assert len(set(found.values())) == 2
    assert all(v > 0 for v in found.values())
    with pytest.raises(ProbeError, match="mlirNoSuchFunction defined 0 times"):
        elf_functions(lib, ["mlirNoSuchFunction"])
    with pytest.raises(ProbeError, match="mlirOperationWalk defined 0 times"):
        elf_functions(lib, ["mlirOperationWalk"], table=11)  # local: not exported
    text = tmp_path / "not.so"
    text.write_text("hello")
    with pytest.raises(ProbeError, match="not a 64-bit little-endian ELF"):
        elf_functions(text, ["x"])


@pytest.mark.native
@pytest.mark.skipif(
    shutil.which(os.environ.get("CC", "cc")) is None,
    reason="needs a C compiler to make the library",
)
def test_elf_reader_refuses_a_name_two_functions_share(monkeypatch, tmp_path):
    """Two translation units may each have a local function of the same name: the probe
    must not pick one of them."""
    monkeypatch.syspath_prepend(str(ROOT))
    from benchmarks.native_probe import ProbeError, elf_functions

    for i in (1, 2):
        (tmp_path / f"u{i}.c").write_text(
            f"__attribute__((noinline, used)) static int twin(int x) {{ return x + {i}; }}\n"
            f"int entry{i}(int x) {{ return twin(x); }}\n"
        )
    lib = tmp_path / "twins.so"
    cc = shutil.which(os.environ.get("CC", "cc"))
    subprocess.run(
        [
            cc,
            "-O2",
            "-shared",
            "-fPIC",
            "-o",
            str(lib),
            str(tmp_path / "u1.c"),
            str(tmp_path / "u2.c"),
        ],
        check=True,
    )
    assert set(elf_functions(lib, ["entry1", "entry2"])) == {"entry1", "entry2"}
    with pytest.raises(ProbeError, match="twin defined 2 times"):
        elf_functions(lib, ["twin"])


ZERO_SIZED = """func.func @main(%a: tensor<4x0xf32>, %d: tensor<?x0xf32>, %p: tensor<i1>, %s: tensor<0x4xf32>, %sc: tensor<4xf32>) -> tensor<4x0xf32> {
  %0 = stablehlo.add %a, %a : tensor<4x0xf32>
  %1 = stablehlo.abs %d : tensor<?x0xf32>
  %2 = stablehlo.custom_call @foo(%a) : (tensor<4x0xf32>) -> tensor<4x0xf32>
  %3 = stablehlo.constant dense<> : tensor<0x3xf32>
  %4:3 = "stablehlo.batch_norm_training"(%s, %sc, %sc) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64} : (tensor<0x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<0x4xf32>, tensor<4xf32>, tensor<4xf32>)
  %5 = "stablehlo.if"(%p) ({
    %6 = stablehlo.negate %a : tensor<4x0xf32>
    stablehlo.return %6 : tensor<4x0xf32>
  }, {
    stablehlo.return %a : tensor<4x0xf32>
  }) : (tensor<i1>) -> tensor<4x0xf32>
  %7 = stablehlo.multiply %sc, %sc : tensor<4xf32>
  %8 = mhlo.add %a, %a : tensor<4x0xf32>
  %9 = stablehlo.sine %sc : tensor<4xf32>
  return %0 : tensor<4x0xf32>
}
func.func private @helper(%x: tensor<0xf32>) -> tensor<0xf32> {
  %0 = stablehlo.negate %x : tensor<0xf32>
  return %0 : tensor<0xf32>
}
"""


@pytest.mark.native
@pytest.mark.skipif(
    shutil.which(os.environ.get("CC", "cc")) is None,
    reason="the native probe compiles a C file; no C compiler here",
)
def test_native_scan_matches_the_rewriter_on_the_hard_cases(monkeypatch, tmp_path):
    """Matches: a 0 in a later dimension, an op inside a region, an op of a private
    function (3). Not: a dynamic shape, an effectful op, a constant, an op only some of
    whose results are zero-sized, a return, an if, another dialect's op, non-empty ops.
    The native scan, the bindings' reference and the pass itself (on @main: 2) agree."""
    monkeypatch.setenv("PENGUIN_BENCH_CACHE", str(tmp_path))
    monkeypatch.syspath_prepend(str(ROOT))
    from jaxlib.mlir import ir

    from benchmarks.native_probe import NativeProbe, module_pointer, python_zero_sized
    from penguin_opt.context import make_context
    from penguin_opt.penguin_sort import parse_text
    from penguin_opt.pipeline import Pipeline

    probe = NativeProbe()
    with make_context(), ir.Location.unknown():
        module = parse_text(ZERO_SIZED, "zero_sized")
        assert probe.scan(module_pointer(module), "stablehlo")[0] == 3
        assert python_zero_sized(module, "stablehlo") == 3
        state = Pipeline("stablehlo-canonicalize-for-penguin").run(module)
    stats = state.statistics["stablehlo-canonicalize-for-penguin"]
    assert stats["removeDeadZeroSizedTensorOps"].rewritten == 2


BROADCASTS = {
    "stablehlo": """func.func @main(%a: tensor<2x3xf32>, %d: tensor<?xf32>, %v: tensor<2xf32>) -> (tensor<5x4x2x3xf32>, tensor<4xf32>, tensor<4x?xf32>, tensor<3x4x2xf32>) {
  %0 = stablehlo.broadcast %a, sizes = [5, 4] : (tensor<2x3xf32>) -> tensor<5x4x2x3xf32>
  %c = stablehlo.constant dense<1.0> : tensor<f32>
  %1 = stablehlo.broadcast %c, sizes = [4] : (tensor<f32>) -> tensor<4xf32>
  %2 = stablehlo.broadcast %d, sizes = [4] : (tensor<?xf32>) -> tensor<4x?xf32>
  %3 = stablehlo.broadcast %v, sizes = [4] : (tensor<2xf32>) -> tensor<4x2xf32>
  %4 = stablehlo.broadcast %3, sizes = [3] : (tensor<4x2xf32>) -> tensor<3x4x2xf32>
  return %0, %1, %2, %4 : tensor<5x4x2x3xf32>, tensor<4xf32>, tensor<4x?xf32>, tensor<3x4x2xf32>
}
""",
    "mhlo": """func.func @main(%a: tensor<2x3xf32>, %d: tensor<?xf32>, %v: tensor<2xf32>) -> (tensor<5x4x2x3xf32>, tensor<4x?xf32>, tensor<4xi32>, tensor<3x4x2xf32>) {
  %0 = "mhlo.broadcast"(%a) <{broadcast_sizes = dense<[5, 4]> : tensor<2xi64>}> : (tensor<2x3xf32>) -> tensor<5x4x2x3xf32>
  %1 = "mhlo.broadcast"(%d) <{broadcast_sizes = dense<4> : tensor<1xi64>}> : (tensor<?xf32>) -> tensor<4x?xf32>
  %c = mhlo.constant dense<7> : tensor<i32>
  %2 = "mhlo.broadcast"(%c) <{broadcast_sizes = dense<4> : tensor<1xi64>}> : (tensor<i32>) -> tensor<4xi32>
  %3 = "mhlo.broadcast"(%v) <{broadcast_sizes = dense<4> : tensor<1xi64>}> : (tensor<2xf32>) -> tensor<4x2xf32>
  %4 = "mhlo.broadcast"(%3) <{broadcast_sizes = dense<3> : tensor<1xi64>}> : (tensor<4x2xf32>) -> tensor<3x4x2xf32>
  return %0, %1, %2, %4 : tensor<5x4x2x3xf32>, tensor<4x?xf32>, tensor<4xi32>, tensor<3x4x2xf32>
}
""",
}


@pytest.mark.native
@pytest.mark.skipif(
    shutil.which(os.environ.get("CC", "cc")) is None,
    reason="the native probe compiles a C file; no C compiler here",
)
@pytest.mark.parametrize("dialect", ["stablehlo", "mhlo"])
def test_native_rewrite_matches_the_rewriter_on_the_hard_cases(dialect, monkeypatch, tmp_path):
    """Two sizes over a rank-2 operand (P != R), a rank-0 constant, an argument operand
    (a remark), a dynamic result (skipped), a broadcast of a broadcast: the native
    rewrite finds, rewrites and remarks on what the Python rewriter does, with the same
    output, locations included (legacy_broadcast checks; any failure raises here)."""
    monkeypatch.setenv("PENGUIN_BENCH_CACHE", str(tmp_path))
    monkeypatch.syspath_prepend(str(ROOT))
    from jaxlib.mlir import ir

    from benchmarks.native_probe import NativeProbe, legacy_broadcast
    from penguin_opt.context import make_context
    from penguin_opt.penguin_sort import parse_text

    def check(ok, what):
        assert ok, what

    with make_context(), ir.Location.unknown():
        module = parse_text(BROADCASTS[dialect], "broadcasts.mlir")
        result = legacy_broadcast(module, dialect, NativeProbe(), 1, check)
    assert (result["broadcasts_found"], result["broadcasts"], result["broadcast_remarks"]) == (
        5,
        4,
        3,
    )


def test_measure_alternating_interleaves_and_rotates(monkeypatch):
    """Every repetition runs each function once, on its own setup, starting one further
    along each time; each result is the min of its own runs."""
    monkeypatch.syspath_prepend(str(ROOT))
    from benchmarks.run import measure_alternating

    calls, made, dropped = [], [], []

    def setup():
        made.append(len(made))
        return made[-1]

    runs = {label: (lambda arg, label=label: calls.append((label, arg))) for label in "abc"}
    times = measure_alternating(runs, reps=3, setup=setup, teardown=dropped.append)
    assert [label for label, _ in calls] == list("abcbcacab")
    assert [arg for _, arg in calls] == list(range(9)) == dropped  # a fresh setup per run
    assert set(times) == set("abc")
    assert all(0 <= t.cpu < 1 and 0 <= t.wall < 1 for t in times.values())
    calls.clear()
    measure_alternating(runs, reps=2, setup=setup, teardown=dropped.append, warmup=True)
    assert [label for label, _ in calls] == list("abcabcbca")  # one untimed run first


def test_minimal_loops_do_what_our_rewriters_do(tmp_path):
    """`python -m benchmarks.minimal` on the 1k modules: it exits 0 only if each minimal
    loop leaves the module text our rewriter (or the conv pass, or the verifier's swap of
    sorts) leaves, and prints a row per rewriter and a total per dialect."""
    proc = _benchmark(tmp_path, "minimal", "--size", "1k", "--reps", "1")
    table, totals = proc.stdout.split("\n\n")
    rows = [line for line in table.splitlines() if line.startswith("| ")][1:]
    assert len(rows) == 20, proc.stdout  # (8 rewriters, the conv pass, the swap) x 2 dialects
    assert [row.split("|")[2].strip() for row in rows[8:10]] == [
        "canonicalize-conv",
        "penguin-sort swap",
    ]
    assert [row.split("|")[2].strip() for row in rows[18:]] == [
        "canonicalize-conv",
        "penguin-sort swap",
    ]
    for row in rows:
        ours, least = (float(cell) for cell in row.split("|")[4:6])
        assert ours > 0, row
        assert least > 0, row
    sums = [line for line in totals.splitlines() if line.startswith("| ")][1:]
    assert [row.split("|")[1:3] for row in sums] == [[" stablehlo ", " 10 "], [" mhlo ", " 10 "]]
