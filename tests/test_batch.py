"""Batches: a compile-cache-shaped directory, several inputs, multi-graph dumps, the report,
progress, exit codes, a worker that dies or hangs, and a dask.distributed cluster."""

from __future__ import annotations

import errno
import io
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from support import caches

from penguin_opt import batch, formats
from penguin_opt.io import InputError, Source

ROOT = Path(__file__).resolve().parents[1]
PIPELINE = "inline,stablehlo-canonicalize-for-penguin,stablehlo-canonicalize-conv"
GOOD = "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  return %a : tensor<2xf32>\n}\n"


def penguin_opt(*args, cwd=ROOT, timeout=600):
    return subprocess.run(
        [sys.executable, "-m", "penguin_opt", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
    )


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return caches.build(tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="module")
def checked_batch(cache, tmp_path_factory):
    """The issue's command on the mixed directory: --jobs 2 --check-equivalence --report."""
    out = tmp_path_factory.mktemp("out") / "canonical"
    report = out.parent / "r.json"
    proc = penguin_opt(
        cache, "-p", PIPELINE, "-o", out, "--jobs", "2", "--check-equivalence", "--report", report
    )
    return proc, out, json.loads(report.read_text())


def _expected(cache: Path) -> dict[str, str]:
    expected = {str(cache / k): v for k, v in caches.PROGRAMS.items()}
    expected.update({str(cache / p): "ok" for p in caches.xla_dump_programs(cache)})
    return expected


def test_mixed_cache_every_program_ok_garbage_one_error(cache, checked_batch):
    proc, _, report = checked_batch
    statuses = {r["input"]: r["status"] for r in report["programs"]}
    assert statuses == _expected(cache), proc.stderr
    assert proc.returncode == 1, proc.stderr  # the garbage file's error
    garbage = next(r for r in report["programs"] if r["status"] == "error")
    assert garbage["error"].startswith(f"{cache / 'garbage.bin'}: error: not a program")
    assert "\n" not in garbage["error"]
    assert "Traceback" not in proc.stderr


def test_mixed_cache_outputs_mirror_inputs_and_read_back(cache, checked_batch):
    _, out, report = checked_batch
    for r in report["programs"]:
        if r["status"] != "ok":
            assert r["output"] is None
            continue
        path, _, graph = r["input"].partition("#")
        rel = os.path.relpath(path, cache)
        name = f"{rel}.{graph}.mlir" if graph else f"{rel}.mlir"
        assert r["output"] == str(out / name)
        assert r["equivalence"]["result"] == "match", r
        text = Path(r["output"]).read_text()
        assert text.startswith("module"), r["output"]
        again = penguin_opt(r["output"], "-p", PIPELINE)  # outputs are programs again
        assert again.returncode == 0, again.stderr


def test_mixed_cache_skipped_and_summary(cache, checked_batch):
    proc, _, report = checked_batch
    skipped = {s["input"] for s in report["skipped"]}
    for rel in caches.SKIPPED:
        assert str(cache / rel) in skipped
        assert f"skipped {cache / rel}: " in proc.stderr
    dump = {str(p) for p in (cache / "xla_dump").rglob("*") if p.is_file()}
    programs = {str(cache / p) for p in caches.xla_dump_programs(cache)}
    assert dump - programs <= skipped  # XLA's companions (.ll, .o, after-optimizations)
    summary = report["summary"]
    statuses = Counter(r["status"] for r in report["programs"])
    assert summary["programs"] == len(report["programs"])
    assert {s: summary[s] for s in batch.STATUSES} == {s: statuses[s] for s in batch.STATUSES}
    assert summary["exit_code"] == proc.returncode
    assert summary["ops_before"] == sum(r["ops_before"] or 0 for r in report["programs"])
    rewritten = sum(
        st["rewritten"]
        for r in report["programs"]
        for per in r["statistics"].values()
        for st in per.values()
    )
    assert sum(st["rewritten"] for st in summary["rewriters"].values()) == rewritten > 0
    assert f"penguin-opt: {summary['programs']} programs: {summary['ok']} ok" in proc.stderr
    # not a terminal: one line per finished program
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("[")]
    assert len(lines) == summary["programs"]
    assert lines[-1].startswith(f"[{summary['programs']}/{summary['programs']}] ")


def test_mixed_cache_statistics_equal_single_runs(cache, checked_batch, tmp_path):
    """Each program's record holds the statistics a run on that file alone prints."""
    from penguin_opt.passes.base import RunState
    from penguin_opt.pipeline import print_statistics

    _, _, report = checked_batch
    for suffix in ("MODULE_1/model.hlo_module.pb", "MODULE_2/model.hlo_module.pb"):
        record = next(r for r in report["programs"] if r["input"].endswith(suffix))
        state = RunState()
        for pass_name, per in record["statistics"].items():
            for rewriter, st in per.items():
                into = state.rewriter(pass_name, rewriter)
                into.matched, into.rewritten = st["matched"], st["rewritten"]
                into.skipped.update(st["skipped"])
        expected = io.StringIO()
        print_statistics(state, out=expected)
        single = penguin_opt(
            record["input"], "-p", PIPELINE, "--pass-statistics", "-o", tmp_path / "single.mlir"
        )
        assert single.returncode == 0, single.stderr
        assert single.stderr == expected.getvalue()
        assert (tmp_path / "single.mlir").read_text() == Path(record["output"]).read_text()
    conv = next(
        r for r in report["programs"] if r["input"].endswith("MODULE_2/model.hlo_module.pb")
    )
    conv = conv["statistics"]["stablehlo-canonicalize-conv"]
    assert conv["explicitlyPad"]["rewritten"] == conv["explicitlyStride"]["rewritten"] == 1


def test_several_programs_need_an_output_directory(cache, tmp_path):
    proc = penguin_opt(cache, "-p", PIPELINE)
    assert proc.returncode == 2
    assert proc.stderr.strip().endswith("several programs: name an output directory with -o DIR")
    not_dir = tmp_path / "file.mlir"
    not_dir.write_text("")
    proc = penguin_opt(cache / "exported.jax", cache / "garbage.bin", "-o", not_dir)
    assert proc.returncode == 2
    assert "need a directory" in proc.stderr


def test_torch_xla_dump_alone_is_a_batch(cache, tmp_path):
    dump = cache / "torch_xla_graphs.txt"
    proc = penguin_opt(dump, "-p", PIPELINE)
    assert proc.returncode == 2, proc.stderr
    proc = penguin_opt(dump, "-p", PIPELINE, "-o", tmp_path / "graphs")
    assert proc.returncode == 0, proc.stderr
    names = sorted(p.name for p in (tmp_path / "graphs").iterdir())
    assert names == ["torch_xla_graphs.txt.graph0.mlir", "torch_xla_graphs.txt.graph1.mlir"]


def test_batch_refuses_one_program_flags(cache, tmp_path):
    for flag in ("--mlir-print-ir-after-all", "--mlir-timing"):
        proc = penguin_opt(cache, "-p", PIPELINE, "-o", tmp_path / "o", flag)
        assert proc.returncode == 2, flag
        assert "works on one program" in proc.stderr


SPLIT = """\
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<1.0> : tensor<f32>
  %b = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %0 = stablehlo.add %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
// -----
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.negate %a : tensor<5xf32>
  return %0 : tensor<4xf32>
}
// -----
HloModule m

ENTRY main {
  p = f32[2,3] parameter(0)
  ROOT t = f32[3,2] transpose(p), dimensions={1,0}
}
"""


def test_split_input_file_in_a_batch_runs_each_chunk_as_a_program(tmp_path):
    """With --split-input-file each chunk of a text file with several is a program of the
    batch (FILE#chunkK, output FILE.chunkK.mlir), checked on its own and reported at the
    file's line numbers; a file without markers, and a binary one, stay one program."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "split.mlir").write_text(SPLIT)
    (tmp_path / "in" / "one.mlir").write_text(GOOD)
    made = penguin_opt(tmp_path / "in" / "one.mlir", "--emit=bytecode", "-o", tmp_path / "bc")
    assert made.returncode == 0, made.stderr
    (tmp_path / "in" / "one.mlirbc").write_bytes((tmp_path / "bc").read_bytes())
    out, report = tmp_path / "out", tmp_path / "r.json"
    proc = penguin_opt(
        tmp_path / "in", "-p", "stablehlo-canonicalize-for-penguin", "-o", out,
        "--split-input-file", "--check-equivalence", "--jobs", "2", "--report", report,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    records = {r["input"]: r for r in json.loads(report.read_text())["programs"]}
    split = str(tmp_path / "in" / "split.mlir")
    alone = [str(tmp_path / "in" / "one.mlir"), str(tmp_path / "in" / "one.mlirbc")]
    assert sorted(records) == sorted([*(f"{split}#chunk{k}" for k in range(3)), *alone])
    assert [records[f"{split}#chunk{k}"]["chunk"] for k in range(3)] == [0, 1, 2]
    assert records[str(tmp_path / "in" / "one.mlir")]["chunk"] is None
    folds = records[f"{split}#chunk0"]["statistics"]["stablehlo-canonicalize-for-penguin"]
    assert folds["replaceBroadcastInDimWithConstants"]["rewritten"] == 1
    for k in (0, 2):
        assert records[f"{split}#chunk{k}"]["status"] == "ok"
        assert records[f"{split}#chunk{k}"]["equivalence"]["result"] == "match"
    assert records[f"{split}#chunk1"]["status"] == "error"
    assert records[f"{split}#chunk1"]["error"].startswith(f"{split}#chunk1:9:25: error: ")
    names = sorted(p.name for p in out.iterdir())
    assert names == [
        "one.mlir.mlir", "one.mlirbc.mlir", "split.mlir.chunk0.mlir", "split.mlir.chunk2.mlir"
    ]  # fmt: skip
    assert "stablehlo.transpose" in (out / "split.mlir.chunk2.mlir").read_text()
    assert "broadcast_in_dim" not in (out / "split.mlir.chunk0.mlir").read_text()
    # any --emit kind: a file per chunk (one run refuses it: one file for all chunks)
    proc = penguin_opt(
        tmp_path / "in", "-o", tmp_path / "bco", "--split-input-file", "--emit=bytecode"
    )
    assert proc.returncode == 1, proc.stderr  # (chunk 1's error)
    assert (tmp_path / "bco" / "split.mlir.chunk2.mlirbc").read_bytes().startswith(b"ML\xefR")


def test_entries_that_are_no_program_are_listed_never_dropped(tmp_path):
    """A FIFO, a symbolic link to nothing, a symbolic link to a directory and a hidden
    directory inside a walked directory are skipped, with why; a directory that cannot be
    listed, and a file in one that cannot be entered, are errors (their programs are
    lost); a file named twice, or under two directories named, is one program, in the
    order first named. (All were silently dropped, misnamed, reordered or run twice.)"""
    tree = tmp_path / "in"
    for sub in ("closed", "shut", "sub", ".hidden", "real"):
        (tree / sub).mkdir(parents=True)
    (tree / "a.mlir").write_text(GOOD)
    (tree / "sub" / "b.mlir").write_text(GOOD)
    (tree / "closed" / "c.mlir").write_text(GOOD)
    (tree / "shut" / "s.mlir").write_text(GOOD)
    os.mkfifo(tree / "pipe.mlir")
    (tree / "dangling.mlir").symlink_to(tmp_path / "nowhere")
    (tree / "linked").symlink_to(tree / "real")
    command = [sys.executable, "-m", "penguin_opt", tree / "sub" / "b.mlir", tree, tree / "sub"]
    command += [tree / "a.mlir", "-o", tmp_path / "o", "--report", tmp_path / "r.json"]
    if os.geteuid() == 0:  # root reads any directory: drop that power for the run
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv")
        drop = "-dac_override,-dac_read_search,-fowner"
        command = ["setpriv", f"--bounding-set={drop}", f"--inh-caps={drop}", *command]
    (tree / "closed").chmod(0)
    (tree / "shut").chmod(0o644)  # listed, not entered
    try:
        proc = subprocess.run(
            list(map(str, command)), capture_output=True, text=True, cwd=ROOT, timeout=600
        )
    finally:
        (tree / "closed").chmod(0o755)
        (tree / "shut").chmod(0o755)
    assert proc.returncode == 1, proc.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    skipped = {Path(s["input"]).name: s["reason"] for s in report["skipped"]}
    assert skipped == {
        ".hidden": "a hidden directory",
        "dangling.mlir": "a symbolic link to nothing",
        "linked": "a symbolic link to a directory",
        "pipe.mlir": "not a regular file (a FIFO, a device or a socket)",
    }
    assert len(report["skipped"]) == 4
    names = [Path(r["input"]).name for r in report["programs"]]
    assert names == ["b.mlir", "a.mlir", "closed", "s.mlir"]  # (the batch's order)
    records = {Path(r["input"]).name: r for r in report["programs"]}
    assert records["a.mlir"]["status"] == records["b.mlir"]["status"] == "ok"
    assert records["closed"]["error"].endswith(
        "closed: error: cannot read the directory: Permission denied"
    )
    assert records["s.mlir"]["error"].endswith(
        "s.mlir: error: cannot read input: Permission denied"
    )


def test_a_not_checkable_program_is_named_in_its_line(tmp_path):
    """(Its progress and summary lines said only 'equivalence: not checkable: ...'.)"""
    odd = tmp_path / "odd.mlir"
    odd.write_text(
        "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %0 = stablehlo.custom_call @no_such_target(%a) : (tensor<2xf32>) -> tensor<2xf32>\n"
        "  return %0 : tensor<2xf32>\n}\n"
    )
    (tmp_path / "good.mlir").write_text(GOOD)
    report = tmp_path / "r.json"
    proc = penguin_opt(
        odd, tmp_path / "good.mlir", "-p", "inline", "-o", tmp_path / "o",
        "--check-equivalence", "--report", report,
    )  # fmt: skip
    assert proc.returncode == 4, proc.stderr
    record = next(r for r in json.loads(report.read_text())["programs"] if r["input"] == str(odd))
    assert record["status"] == "not-checkable"
    assert record["error"].startswith(f"{odd}: equivalence: not checkable: ")
    assert any(
        line.startswith("[") and f"{odd}: equivalence" in line for line in proc.stderr.splitlines()
    )


def test_an_error_located_in_another_file_names_the_program(tmp_path):
    """An op's location can name another file (optimized HLO's metadata names the Python
    source): the progress line, the summary and the report name the program first. The
    summary's line is the error line alone (it said 'error: X: error: ...')."""
    odd = tmp_path / "odd.mlir"
    odd.write_text(
        "func.func @main(%a: tensor<2xf32>) -> tensor<1xf32> {\n"
        "  %0 = stablehlo.custom_call @ResizeNearestGrad(%a, %a) : "
        '(tensor<2xf32>, tensor<2xf32>) -> tensor<1xf32> loc("model.py":7:3)\n'
        "  return %0 : tensor<1xf32>\n}\n"
    )
    warned = tmp_path / "warned.mlir"
    warned.write_text(
        "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
        '  %0 = stablehlo.custom_call @AwsNeuronErf(%a) {backend_config = "{m: 1}"} : '
        '(tensor<2xf32>) -> tensor<2xf32> loc("model.py":9:1)\n'
        "  return %0 : tensor<2xf32>\n}\n"
    )
    report = tmp_path / "r.json"
    proc = penguin_opt(
        odd, warned, "-p", "stablehlo-canonicalize-for-penguin",
        "-o", tmp_path / "o", "--report", report,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    programs = json.loads(report.read_text())["programs"]
    (warning,) = next(r for r in programs if r["input"] == str(warned))["diagnostics"]
    assert warning.startswith(f"{warned}: model.py:9:1: warning: AwsNeuronErf"), warning
    assert warning in proc.stderr.splitlines(), proc.stderr  # (a warning's line: as the record)
    record = next(r for r in programs if r["input"] == str(odd))
    line = f"{odd}: model.py:7:3: error: 'stablehlo.custom_call' op ResizeNearestGrad: only one"
    assert record["error"].startswith(line), record["error"]
    lines = proc.stderr.splitlines()
    assert any(ln.startswith("[") and ln.endswith(record["error"]) for ln in lines), lines
    assert f"  {record['error']}" in lines, lines  # the summary's
    assert not any(ln.startswith("  error: ") for ln in lines), lines


def test_outputs_never_overwrite_inputs(tmp_path):
    (tmp_path / "a").write_text("module {}\n")
    (tmp_path / "a.mlir").write_text("module {}\n")
    proc = penguin_opt(tmp_path / "a", tmp_path / "a.mlir", "-o", tmp_path)
    assert proc.returncode == 2
    assert "would overwrite the input" in proc.stderr
    assert (tmp_path / "a.mlir").read_text() == "module {}\n"


def test_emit_suffix_and_bytecode_outputs(cache, tmp_path):
    proc = penguin_opt(
        cache / "exported.jax",
        cache / "neuronxcc-2.0/MODULE_3/model.hlo",
        "-p",
        PIPELINE,
        "-o",
        tmp_path,
        "--emit=bytecode",
    )
    assert proc.returncode == 0, proc.stderr
    outputs = sorted(p.name for p in tmp_path.iterdir())
    assert outputs == ["exported.jax.mlirbc", "model.hlo.mlirbc"]
    assert (tmp_path / "model.hlo.mlirbc").read_bytes().startswith(b"ML\xefR")


# -- exit codes and records -----------------------------------------------------------


@pytest.mark.parametrize(
    ("statuses", "code"),
    [
        ({"ok": 3}, 0),
        ({"ok": 1, "not-checkable": 1}, 4),
        ({"timeout": 1, "not-checkable": 1}, 1),
        ({"error": 1, "not-checkable": 2}, 1),
        ({"mismatch": 1, "error": 1, "not-checkable": 1}, 3),
    ],
)
def test_exit_code_precedence(statuses, code):
    assert batch.exit_code(Counter(statuses)) == code


def test_a_worker_that_dies_is_that_programs_error(tmp_path):
    """A job whose worker is killed (as by an LLVM abort) is an error record; the next
    job gets a fresh worker."""
    from penguin_opt import isolated

    fifo = tmp_path / "never-written"  # reading it blocks the worker
    os.mkfifo(fifo)
    args = _args()
    kind = "test-batch-dies"
    result: list[dict] = []
    runner = threading.Thread(
        target=lambda: result.append(
            batch.run_job_isolated(batch.Job(str(fifo), str(tmp_path / "o.mlir")), args, 120, kind)
        )
    )
    runner.start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        pool = isolated._POOLS.get(kind)
        processes = list(getattr(pool, "_processes", {}).values()) if pool else []
        if processes and processes[0].is_alive():
            time.sleep(3)  # let it reach the blocking open()
            os.kill(processes[0].pid, 9)
            break
        time.sleep(0.1)
    runner.join(timeout=60)
    assert result
    assert result[0]["status"] == "error"
    assert "the worker process died" in result[0]["error"]
    good = tmp_path / "good.mlir"
    good.write_text(GOOD)
    again = batch.run_job_isolated(batch.Job(str(good), str(tmp_path / "g.mlir")), args, 120, kind)
    isolated.close(kind)
    assert again["status"] == "ok", again


def test_a_worker_crashed_after_a_check_leaves_one_line(tmp_path):
    """A worker that checked a program and then crashed in MLIR's parser left its oracle
    pools' semaphores to multiprocessing's resource tracker, whose warning ("leaked
    semaphore objects") followed the summary; the line said "an LLVM abort or a crash"
    where the single run names the signal (outside tester E)."""
    (tmp_path / "a_good.mlir").write_text(GOOD)
    (tmp_path / "b_quant.mlir").write_text(
        "func.func @main(%arg0: tensor<?x?xf32, #stablehlo.bounds<4, 4>>) -> () {\n"
        "  %0 = stablehlo.uniform_quantize %arg0 : (tensor<?x?xf32, #stablehlo.bounds<4, 4>>)"
        " -> tensor<?x?x!quant.uniform<i8:f32, 1.000000e+00:3>, #stablehlo.bounds<4, 4>>\n"
        "  return\n}\n"
    )
    proc = penguin_opt(
        tmp_path / "a_good.mlir", tmp_path / "b_quant.mlir", "-p", "inline",
        "-o", tmp_path / "o", "--jobs", "1", "--check-equivalence",
    )  # fmt: skip
    assert "leaked" not in proc.stderr, proc.stderr
    assert "Warning" not in proc.stderr, proc.stderr
    if "worker process died" in proc.stderr:  # where MLIR's parser crashes on it (0.10.2)
        assert "b_quant.mlir: error: the worker process died while processing this " \
            "program (SIGSEGV)" in proc.stderr, proc.stderr  # fmt: skip


def test_a_program_over_the_timeout_is_a_timeout(tmp_path):
    fifo = tmp_path / "never-written"
    os.mkfifo(fifo)
    good = tmp_path / "good.mlir"
    good.write_text(GOOD)
    proc = penguin_opt(
        fifo,
        good,
        "-p",
        PIPELINE,
        "-o",
        tmp_path / "out",
        "--timeout",
        "5",
        "--jobs",
        "1",
        "--report",
        tmp_path / "r.json",
    )
    assert proc.returncode == 1, proc.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    statuses = {Path(r["input"]).name: r["status"] for r in report["programs"]}
    assert statuses == {"never-written": "timeout", "good.mlir": "ok"}
    assert "timed out after 5 s" in proc.stderr


def _args(**overrides):
    from penguin_opt.cli import build_parser

    args = build_parser().parse_args(["-p", PIPELINE])
    args.pipeline_text, args.verify_mode, args.emit = PIPELINE, "default", "mlir"
    for k, v in overrides.items():
        setattr(args, k, v)
    return args


# -- progress -------------------------------------------------------------------------


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _record(status="ok", name="m.pb"):
    return {
        "input": name,
        "output": name + ".mlir",
        "status": status,
        "error": None if status == "ok" else f"{name}: error: bad",
        "statistics": {},
        "ops_before": 3,
        "ops_after": 2,
        "seconds": 0.5,
        "equivalence": None,
        "diagnostics": [],
    }


def test_progress_on_a_terminal_is_a_bar():
    stream = _Terminal()
    progress = batch.Progress(2, stream)
    progress.finished(_record())
    progress.finished(_record("error", "bad.pb"))
    progress.close()
    text = stream.getvalue()
    assert "2/2" in text  # tqdm's counter
    assert "program" in text  # and unit
    assert "bad.pb: error: bad" in text  # failures are printed above the bar
    assert "[1/2] ok" not in text  # no per-program lines for successes


def test_progress_elsewhere_is_a_line_per_program():
    stream = io.StringIO()
    progress = batch.Progress(2, stream)
    progress.finished(_record())
    progress.finished(_record("error", "bad.pb"))
    progress.close()
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("[1/2] ok")
    assert lines[1] == "[2/2] error         bad.pb: error: bad"


# -- formats --------------------------------------------------------------------------


def test_hloproto_wrapper_is_unwrapped(cache):
    (path,) = [p for p in caches.xla_dump_programs(cache) if p.endswith(".hlo.pb")]
    data = (cache / path).read_bytes()
    payload = formats.hlo_module_payload(data)
    assert payload != data
    assert data[0] == 0x0A  # field 1, length-delimited
    module = (cache / "neuronxcc-2.0/MODULE_1/model.hlo_module.pb").read_bytes()
    assert formats.hlo_module_payload(module) == module  # an HloModuleProto stays
    assert formats.hlo_module_payload(b"\x0a\x03abc") == b"\x0a\x03abc"


def test_torch_xla_graphs_keep_the_dumps_line_numbers():
    dump = caches.torch_xla_dump(
        [
            "HloModule ok\n\nENTRY main {\n  ROOT c = f32[] constant(1)\n}",
            'module {\n  %0 = "bad.op"() : () -> ()\n}',
        ]
    )
    programs = formats.programs_in(Source("d.txt", dump.encode()))
    assert [p.graph for p in programs] == [0, 1]
    assert [p.graph_hash for p in programs] == ["9a0c0000", "9a0c0001"]
    bad_line = dump.splitlines().index('  %0 = "bad.op"() : () -> ()') + 1
    from penguin_opt import api

    with pytest.raises(InputError, match=rf"^d\.txt#graph1:{bad_line}:\d+: error: "):
        api.load_source(programs[1].source)


def test_torch_xla_ir_text_graph_is_a_one_line_error(tmp_path):
    dump = tmp_path / "ir.txt"
    dump.write_text(caches.torch_xla_dump(["IR {\n  %0 = f32[] prim::Constant()\n}"]))
    proc = penguin_opt(dump)
    assert proc.returncode == 1
    assert proc.stderr.strip() == (
        f"{dump}#graph0: error: this graph is torch-xla's IR text, "
        "not a program: dump with XLA_SAVE_TENSORS_FMT=hlo (or "
        "stablehlo)"
    )


def test_jax_export_blob_reads_as_its_module(cache):
    from penguin_opt import api

    module = api.load(str(cache / "exported.jax"))
    assert "stablehlo.sort" in api.to_text(module)


def test_garbage_is_not_a_flatbuffer_nor_a_proto():
    garbage = bytes(range(256)) * 8
    assert formats.jax_export_module(Source("g", garbage)) is None
    assert formats.hlo_module_payload(garbage) == garbage


# -- a dask.distributed cluster -------------------------------------------------------


@pytest.mark.parametrize("daemon", [False, True])
def test_dask_executor_gives_the_local_report(cache, checked_batch, tmp_path, daemon):
    """Non-daemonic workers run each program in a child of their own, with its check;
    daemonic ones (dask's default) run it in the worker, where no child (no oracle) may
    start: the same report without the check."""
    distributed = pytest.importorskip("distributed")
    import dask

    _, _, local = checked_batch
    check = [] if daemon else ["--check-equivalence"]
    with (
        dask.config.set({"distributed.worker.daemon": daemon}),
        distributed.LocalCluster(
            n_workers=1,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=50,
        ) as cluster,
    ):
        address = cluster.scheduler_address.removeprefix("tcp://")
        report = tmp_path / "r.json"
        proc = penguin_opt(
            cache,
            "-p",
            PIPELINE,
            "-o",
            tmp_path / "out",
            *check,
            "--executor",
            f"dask://{address}",
            "--report",
            report,
        )
    remote = json.loads(report.read_text())
    assert proc.returncode == local["summary"]["exit_code"], proc.stderr

    def essentials(rep):
        return sorted(
            (
                r["input"],
                r["status"],
                json.dumps(r["statistics"], sort_keys=True),
                r["ops_before"],
                r["ops_after"],
            )
            for r in rep["programs"]
        )

    assert essentials(remote) == essentials(local)
    assert {r["input"] for r in remote["skipped"]} == {r["input"] for r in local["skipped"]}


def test_a_killed_writers_temporaries_are_removed(tmp_path):
    from penguin_opt.io import remove_temporaries, temporary_prefix

    def temporary(output: str, random: str) -> Path:
        path = tmp_path / (temporary_prefix(str(tmp_path / output)) + random + ".tmp")
        path.write_text("partial")
        return path

    mine = temporary("a.mlir", "x1abcdef")
    other = temporary("b.mlir", "x2abcdef")
    longer = temporary("a.mlir.x.mlir", "x3abcdef")  # its prefix begins like a.mlir's
    remove_temporaries(str(tmp_path / "a.mlir"))
    assert not mine.exists()
    assert other.exists()  # another worker's, still being written
    assert longer.exists()


@pytest.mark.parametrize(("sig", "code"), [(2, 130), (15, 143)])
def test_an_interrupted_batch_stops_its_workers_quietly(tmp_path, sig, code):
    fifo = tmp_path / "never-written"
    os.mkfifo(fifo)
    good = tmp_path / "good.mlir"
    good.write_text(GOOD)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "penguin_opt",
            fifo,
            good,
            "-p",
            PIPELINE,
            "-o",
            tmp_path / "out",
            "--jobs",
            "2",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    time.sleep(6)  # both workers started; one blocked on the FIFO
    assert proc.poll() is None
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err.decode()
    assert b"Traceback" not in err
    assert not list(tmp_path.glob("**/.penguin-opt-*"))
    # no worker is left reading the FIFO: opening it to write finds no reader (ENXIO)
    deadline = time.monotonic() + 10
    while _has_reader(fifo):
        assert time.monotonic() < deadline, "a worker still reads the FIFO"
        time.sleep(0.2)


def _has_reader(fifo: Path) -> bool:
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError as err:
        if err.errno == errno.ENXIO:
            return False
        raise
    return True


def test_emit_executable_outputs_run_on_xla_with_the_inputs_results(cache, tmp_path):
    """--emit=executable: every program of the cache, canonicalized, runs under XLA (through
    jax's public API, the checker's xla oracle) with the input program's results."""
    from penguin_opt import api, equivalence

    out = tmp_path / "exec"
    report = tmp_path / "r.json"
    proc = penguin_opt(cache, "-p", PIPELINE, "-o", out, "--emit=executable", "--report", report)
    records = json.loads(report.read_text())["programs"]
    ok = [r for r in records if r["status"] == "ok"]
    assert len(ok) == len(records) - 1, proc.stderr  # all but the garbage file
    for r in ok:
        path, _, graph = r["input"].partition("#")
        source = Source(r["input"], Path(path).read_bytes())
        if graph:
            source = formats.programs_in(source)[int(graph.removeprefix("graph"))].source
        before = api.to_text(api.load_source(source))
        after = Path(r["output"]).read_text()
        result = equivalence.check(before, after, oracle="xla", trials=1)
        assert result.oracle == "xla", r["input"]
        assert result.ok, (r["input"], result.table())


# -- review findings: each a promise of the README --------------------------------------


def _two(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "a.mlir", tmp_path / "b.mlir"
    a.write_text(GOOD)
    b.write_text(GOOD)
    return a, b


@pytest.mark.parametrize("flag", ["--report", "--remarks-file", "--pass-statistics-json"])
def test_side_outputs_never_overwrite_an_input(tmp_path, flag):
    a, b = _two(tmp_path)
    for inputs in ([a, b], [a]):  # a batch, and one program
        proc = penguin_opt(*inputs, "-p", PIPELINE, "-o", tmp_path / "out", flag, a)
        assert proc.returncode == 2, proc.stderr
        assert "refusing to overwrite the input file" in proc.stderr
        assert a.read_text() == GOOD


def test_a_batch_accepts_the_nesting_a_single_run_accepts(tmp_path):
    deep = tmp_path / "deep.mlir"
    depth = 9000
    deep.write_text(f"module attributes {{a.x = {'[' * depth}1{']' * depth}}} {{}}\n")
    _, b = _two(tmp_path)
    proc = penguin_opt(deep, b, "-o", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr


def test_progress_lines_survive_remarks(tmp_path):
    a, b = _two(tmp_path)
    a.write_text((ROOT / "examples" / "argsort_model.mlir").read_text())
    proc = penguin_opt(a, b, "-p", PIPELINE, "-o", tmp_path / "out", "--jobs", "1", "--remarks")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert sum(ln.startswith("[") and "] ok " in ln for ln in lines) == 2
    assert any(": remark: [fuseIotaSort]" in ln for ln in lines)


@pytest.mark.parametrize("flag", ["--remarks=[", "--remarks-missed=("])
def test_a_bad_remarks_regex_is_a_usage_error(tmp_path, flag):
    a, b = _two(tmp_path)
    for inputs in ([a, b], [a]):
        proc = penguin_opt(*inputs, "-p", PIPELINE, "-o", tmp_path / "out", flag)
        assert proc.returncode == 2, proc.stderr
        assert "is not a regular expression" in proc.stderr
        assert "internal error" not in proc.stderr


def test_torch_xla_ir_text_graph_in_a_batch_keeps_its_error(tmp_path):
    dump = tmp_path / "save.txt"
    hlo = "HloModule ok\n\nENTRY main {\n  ROOT c = f32[] constant(1)\n}"
    dump.write_text(caches.torch_xla_dump([hlo, "IR {\n  %0 = f32[] prim::Constant()\n}"]))
    proc = penguin_opt(dump, "-o", tmp_path / "out", "--report", tmp_path / "r.json")
    records = json.loads((tmp_path / "r.json").read_text())["programs"]
    assert [r["status"] for r in records] == ["ok", "error"], proc.stderr
    assert records[1]["error"].endswith("dump with XLA_SAVE_TENSORS_FMT=hlo (or stablehlo)")


def test_an_unwritable_report_is_one_line(tmp_path):
    a, b = _two(tmp_path)
    proc = penguin_opt(
        a, b, "-p", PIPELINE, "-o", tmp_path / "out", "--report", tmp_path / "missing" / "r.json"
    )
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.endswith("cannot write output: No such file or directory")
    assert "internal error" not in proc.stderr


def test_a_file_that_only_looks_like_a_dump_is_one_program(tmp_path):
    odd = tmp_path / "odd.txt"
    odd.write_text("## BEGIN_GRAPHS\nnot a program\n")
    assert not formats.is_graph_dump(odd.read_bytes())
    _two(tmp_path)
    proc = penguin_opt(tmp_path, "-o", tmp_path / "out", "--report", tmp_path / "r.json")
    inputs = {
        Path(r["input"]).name: r["status"]
        for r in json.loads((tmp_path / "r.json").read_text())["programs"]
    }
    assert inputs["odd.txt"] == "error", proc.stderr


def test_an_output_directory_that_cannot_be_made_is_one_line(tmp_path):
    a, b = _two(tmp_path)
    proc = penguin_opt(a, b, "-o", a / "sub")
    assert proc.returncode == 1
    assert proc.stderr.strip() == (
        f"{a / 'sub'}: error: cannot make the output directory: Not a directory"
    )


def test_a_slow_oracle_is_not_checkable_not_a_timeout():
    args = _args(check_equivalence=True, trials=2, timeout=10.0)
    assert batch.program_timeout(args) > 2 * 2 * 10.0  # every oracle run of the check fits
    assert batch.program_timeout(_args(timeout=10.0)) == 10.0


def test_an_xla_text_dump_is_a_batch_of_its_programs(tmp_path):
    """XLA_FLAGS=--xla_dump_to=DIR --xla_dump_hlo_as_text writes its compile options and
    topology as .textproto: read as programs, they failed the batch (outside tester G)."""
    import jax
    import jax.numpy as jnp

    dump = tmp_path / "dump"
    script = (
        "import jax, jax.numpy as jnp\n"
        "jax.jit(lambda x: jnp.sort(x) * 2).lower(jnp.zeros(4)).compile()\n"
    )
    env = {
        **os.environ,
        "XLA_FLAGS": f"--xla_dump_to={dump} --xla_dump_hlo_as_text",
        "JAX_PLATFORMS": "cpu",
    }
    made = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True)
    assert made.returncode == 0, made.stderr
    del jax, jnp  # (the dump is made in a child: its XLA flags are its own)
    proc = penguin_opt(dump, "-o", tmp_path / "out", "--jobs", "1")
    assert proc.returncode == 0, proc.stderr
    for name in ("compile_options", "topology"):
        if list(dump.rglob(f"{name}.textproto")):
            assert f"{name}.textproto: XLA compile options or topology" in proc.stderr


def test_summary_counts_readiness_hazards_apart_from_findings():
    """The batch summary called a hazard a finding ("penguin readiness findings: ...
    convert-fold 1") where a single run counts them apart and =error exits 0 for them
    (outside tester I)."""

    def record(*found: tuple[str, bool]) -> dict:
        return {
            "status": "ok",
            "statistics": {},
            "ops_before": 1,
            "ops_after": 1,
            "readiness": [{"kind": k, "hazard": h} for k, h in found],
        }

    hazard_only = batch.summarize([record(("convert-fold", True))], [], 1.0, "error")
    assert "readiness" not in hazard_only
    assert hazard_only["readiness_hazards"] == {"convert-fold": 1}
    assert hazard_only["exit_code"] == 0
    both = [record(("convert-fold", True)), record(("tuple", False), ("tuple", False))]
    summary = batch.summarize(both, [], 1.0, "error")
    assert (summary["readiness"], summary["exit_code"]) == ({"tuple": 2}, 5)
    stream = io.StringIO()
    batch.print_summary(summary, both, stream)
    assert (
        "  penguin readiness (the report has each) findings: tuple 2; hazards: convert-fold 1\n"
        in stream.getvalue()
    ), stream.getvalue()


def test_progress_and_summary_count_in_the_singular():
    """ "1 rewrite", "1 program", "1 file" (outside tester K saw "1 rewrites")."""
    record = {
        "status": "ok",
        "input": "a.mlir",
        "output": "out/a.mlir",
        "ops_before": 3,
        "ops_after": 2,
        "seconds": 0.5,
        "statistics": {"p": {"r": {"matched": 1, "rewritten": 1, "skipped": {}}}},
    }
    assert batch.describe(record) == "a.mlir -> out/a.mlir (3 -> 2 ops, 1 rewrite, 0.5 s)"
    summary = batch.summarize([record], [("b.txt", "not a program")], 1.0)
    out = io.StringIO()
    batch.print_summary(summary, [record], out)
    first = out.getvalue().splitlines()[0]
    assert first.startswith("penguin-opt: 1 program: 1 ok, "), first
    assert "; 1 file skipped; 1.0 s" in first, first
