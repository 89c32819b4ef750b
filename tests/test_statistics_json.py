"""--pass-statistics-json: the statistics as JSON, the same numbers as the text report."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
PIPELINE = "inline,stablehlo-canonicalize-for-penguin,stablehlo-canonicalize-conv"


def penguin_opt(*args):
    return subprocess.run(
        [sys.executable, "-m", "penguin_opt", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )


def parse_text_report(stderr: str) -> dict:
    """The text report of --pass-statistics read back into the JSON's shape."""
    stats: dict = {}
    pass_name = rewriter = None
    for line in stderr.splitlines():
        if line.startswith("===") or "Pass statistics report" in line or not line.strip():
            continue
        if not line.startswith(" "):
            pass_name = line.strip()
            stats[pass_name] = {}
        elif not line.strip().startswith("(S)"):
            rewriter = line.strip()
            stats[pass_name][rewriter] = {"matched": 0, "rewritten": 0, "skipped": {}}
        else:
            n, what, reason = re.fullmatch(r"\s*\(S\)\s+(\d+) (\w+)\s+- (.*)", line).groups()
            st = stats[pass_name][rewriter]
            if what == "skipped":
                st["skipped"][reason] = int(n)
            else:
                st[what] = int(n)
    return stats


def test_json_equals_the_text_report(tmp_path):
    out = tmp_path / "s.json"
    for example in ("argsort_model.mlir", "strided_conv.mlir"):
        proc = penguin_opt(
            EXAMPLES / example,
            "-p",
            PIPELINE,
            "--pass-statistics",
            "--pass-statistics-json",
            out,
            "-o",
            tmp_path / "o.mlir",
        )
        assert proc.returncode == 0, proc.stderr
        data = json.loads(out.read_text())
        assert data == parse_text_report(proc.stderr)
        assert sum(st["rewritten"] for per in data.values() for st in per.values()) > 0


def test_json_of_split_input_sums_the_chunks(tmp_path):
    text = (EXAMPLES / "argsort_model.mlir").read_text()
    src = tmp_path / "two.mlir"
    src.write_text(text + "\n// -----\n" + text)
    single = tmp_path / "one.json"
    penguin_opt(
        EXAMPLES / "argsort_model.mlir",
        "-p",
        PIPELINE,
        "--pass-statistics-json",
        single,
        "-o",
        tmp_path / "o.mlir",
    )
    proc = penguin_opt(
        src, "-p", PIPELINE, "--split-input-file", "--pass-statistics-json", tmp_path / "two.json"
    )
    assert proc.returncode == 0, proc.stderr
    one, two = json.loads(single.read_text()), json.loads((tmp_path / "two.json").read_text())
    for pass_name, per in one.items():
        for rewriter, st in per.items():
            assert two[pass_name][rewriter]["rewritten"] == 2 * st["rewritten"]
            assert two[pass_name][rewriter]["matched"] == 2 * st["matched"]


def test_json_of_a_batch_sums_its_programs(tmp_path):
    proc = penguin_opt(
        EXAMPLES / "argsort_model.mlir",
        EXAMPLES / "strided_conv.mlir",
        "-p",
        PIPELINE,
        "-o",
        tmp_path / "out",
        "--pass-statistics-json",
        tmp_path / "s.json",
        "--report",
        tmp_path / "r.json",
    )
    assert proc.returncode == 0, proc.stderr
    summed = json.loads((tmp_path / "s.json").read_text())
    programs = json.loads((tmp_path / "r.json").read_text())["programs"]
    for pass_name, per in summed.items():
        for rewriter, st in per.items():
            assert st["rewritten"] == sum(
                p["statistics"][pass_name][rewriter]["rewritten"] for p in programs
            )


def test_unwritable_json_is_one_line(tmp_path):
    proc = penguin_opt(
        EXAMPLES / "argsort_model.mlir",
        "-p",
        PIPELINE,
        "--pass-statistics-json",
        tmp_path / "missing" / "s.json",
        "-o",
        tmp_path / "o.mlir",
    )
    assert proc.returncode == 1
    assert proc.stderr.strip().endswith("cannot write output: No such file or directory")
    assert len(proc.stderr.strip().splitlines()) == 1
