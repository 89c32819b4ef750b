"""Remarks, remark files, the change view and the API's remarks: one per rewrite."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import penguin_opt

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
PIPELINE = "inline,stablehlo-canonicalize-for-penguin,stablehlo-canonicalize-conv"
REMARK = re.compile(r"^(?P<loc>\S+): remark: \[(?P<rewriter>\w+)\] (?P<text>.*)$")


def penguin_opt_cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "penguin_opt", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )


def rewritten(stats: dict) -> dict[str, int]:
    return {name: st["rewritten"] for per in stats.values() for name, st in per.items()}


@pytest.mark.parametrize("example", ["argsort_model.mlir", "strided_conv.mlir"])
def test_a_remark_per_rewrite(tmp_path, example):
    proc = penguin_opt_cli(
        EXAMPLES / example,
        "-p",
        PIPELINE,
        "--remarks",
        "--pass-statistics-json",
        tmp_path / "s.json",
        "-o",
        tmp_path / "o",
    )
    assert proc.returncode == 0, proc.stderr
    remarks = [REMARK.match(line) for line in proc.stderr.splitlines()]
    assert all(remarks), proc.stderr
    per_rewriter: dict[str, int] = {}
    for m in remarks:
        per_rewriter[m["rewriter"]] = per_rewriter.get(m["rewriter"], 0) + 1
    counts = {
        k: v for k, v in rewritten(json.loads((tmp_path / "s.json").read_text())).items() if v
    }
    assert per_rewriter == counts


def test_remarks_filter_matches_rewriter_names(tmp_path):
    proc = penguin_opt_cli(
        EXAMPLES / "strided_conv.mlir", "-p", PIPELINE, "--remarks=Stride$", "-o", tmp_path / "o"
    )
    lines = proc.stderr.splitlines()
    assert len(lines) == 1
    assert "[explicitlyStride]" in lines[0]


def test_remarks_missed_shows_skips_only(tmp_path):
    proc = penguin_opt_cli(
        EXAMPLES / "argsort_model.mlir",
        "-p",
        PIPELINE,
        "--remarks-missed=Convert",
        "-o",
        tmp_path / "o",
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert lines == [
        f"{EXAMPLES / 'argsort_model.mlir'}:6:10: remark: "
        "[replaceConvertsWithConstants] skipped stablehlo.convert: "
        "operand-not-constant"
    ]
    none = penguin_opt_cli(
        EXAMPLES / "argsort_model.mlir",
        "-p",
        PIPELINE,
        "--remarks-missed=fuseIotaSort",
        "-o",
        tmp_path / "o",
    )
    assert none.stderr == ""  # its one sort was rewritten


def test_remarks_file_yaml_and_json_hold_every_rewrite_and_skip(tmp_path):
    yaml_path, json_path = tmp_path / "r.yaml", tmp_path / "r.json"
    for path in (yaml_path, json_path):
        proc = penguin_opt_cli(
            EXAMPLES / "argsort_model.mlir",
            "-p",
            PIPELINE,
            "--remarks-file",
            path,
            "-o",
            tmp_path / "o",
        )
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr == ""  # the file only: nothing on stderr
    records = json.loads(json_path.read_text())
    kinds = {r["kind"] for r in records}
    assert kinds == {"rewrite", "skip"}
    docs = yaml_path.read_text().split("\n...\n")
    docs = [d for d in docs if d.strip()]
    assert len(docs) == len(records)
    for doc, rec in zip(docs, records, strict=True):
        head = "--- !Passed" if rec["kind"] == "rewrite" else "--- !Missed"
        assert doc.startswith(head)
        assert f"Name: {json.dumps(rec['rewriter'])}" in doc
        assert f"Message: {json.dumps(rec['message'])}" in doc


def test_print_changes_shows_each_op_before_and_after(tmp_path):
    proc = penguin_opt_cli(
        EXAMPLES / "strided_conv.mlir", "-p", PIPELINE, "--print-changes", "-o", tmp_path / "o"
    )
    assert proc.returncode == 0, proc.stderr
    text = proc.stderr
    assert "// ===== stablehlo-canonicalize-conv: explicitlyPad (1 rewrite) =====" in text
    assert "// ===== stablehlo-canonicalize-conv: explicitlyStride (1 rewrite) =====" in text
    pad = text.split("explicitlyPad (1 rewrite)")[1].split("// =====")[0]
    before, after = pad.split("// after:")
    assert "pad = [[1, 1], [0, 0]]" in before
    assert "stablehlo.pad" in after
    assert "pad = [[0, 0], [0, 0]]" in after
    assert text.index("explicitlyPad") < text.index("explicitlyStride")  # pipeline order


def test_api_remarks_are_data():
    module = penguin_opt.load(str(EXAMPLES / "strided_conv.mlir"))
    result = penguin_opt.run(module, PIPELINE, remarks=True, changes=True)
    names = [r.rewriter for r in result.remarks]
    assert names == ["explicitlyPad", "explicitlyStride"]
    assert all(r.kind == "rewrite" for r in result.remarks)
    assert result.remarks[0].before.startswith("%0 = stablehlo.convolution")
    assert any("stablehlo.pad" in a for a in result.remarks[0].after)
    quiet = penguin_opt.run(penguin_opt.load(str(EXAMPLES / "strided_conv.mlir")), PIPELINE)
    assert quiet.remarks == []
    everything = penguin_opt.run(
        penguin_opt.load(str(EXAMPLES / "argsort_model.mlir")), PIPELINE, remarks="all"
    )
    assert {r.kind for r in everything.remarks} == {"rewrite", "skip"}


def test_remarks_do_not_change_the_output(tmp_path):
    plain = penguin_opt_cli(EXAMPLES / "argsort_model.mlir", "-p", PIPELINE)
    remarked = penguin_opt_cli(
        EXAMPLES / "argsort_model.mlir", "-p", PIPELINE, "--remarks=all", "--print-changes"
    )
    assert plain.returncode == remarked.returncode == 0
    assert plain.stdout == remarked.stdout


def test_batch_records_carry_remarks(tmp_path):
    proc = penguin_opt_cli(
        EXAMPLES / "argsort_model.mlir",
        EXAMPLES / "strided_conv.mlir",
        "-p",
        PIPELINE,
        "-o",
        tmp_path / "out",
        "--remarks",
        "--remarks-file",
        tmp_path / "r.json",
        "--report",
        tmp_path / "rep.json",
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "rep.json").read_text())
    for record in report["programs"]:
        shown = [m for m in record["remarks"] if m["kind"] == "rewrite"]
        assert len(shown) == sum(rewritten(record["statistics"]).values())
        assert len(record["remark_lines"]) == len(shown)
    rows = json.loads((tmp_path / "r.json").read_text())
    assert {r["input"] for r in rows} == {
        str(EXAMPLES / "argsort_model.mlir"),
        str(EXAMPLES / "strided_conv.mlir"),
    }


def test_issue_command_on_an_hlo_proto(tmp_path):
    """The whole view of one HLO proto: a remark per rewrite (as many as the statistics'
    rewritten total), the change view, JSON statistics and the readiness report."""
    proto = tmp_path / "model.hlo.pb"
    made = penguin_opt_cli(EXAMPLES / "argsort_conv1d.hlo", "--emit=hlo-proto", "-o", proto)
    assert made.returncode == 0, made.stderr
    proc = penguin_opt_cli(
        proto,
        "-p",
        PIPELINE,
        "--remarks",
        "--print-changes",
        f"--pass-statistics-json={tmp_path / 's.json'}",
        "--penguin-readiness",
        "-o",
        tmp_path / "out.mlir",
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    remarks = [ln for ln in lines if ": remark: [" in ln]
    stats = json.loads((tmp_path / "s.json").read_text())
    assert len(remarks) == sum(rewritten(stats).values()) > 0
    assert sum(ln.startswith("// ===== ") for ln in lines) == len(
        {m.group("rewriter") for m in map(REMARK.match, remarks)}
    )
    assert any(ln.startswith("penguin readiness: ") for ln in lines)
    assert any(": warning: [conv-padding-stride]" in ln for ln in lines)


def test_remarks_on_jax_hlo_are_at_the_instructions_line(tmp_path):
    """jax's HLO names a sort's op_name on the sort and on its get-tuple-element too: the
    remark was placed in the Python source (outside tester G); the op's opcode picks the
    sort's line."""
    import jax
    import jax.numpy as jnp

    text = jax.jit(jnp.argsort).lower(jnp.zeros((4, 6))).compile().as_text()
    hlo = tmp_path / "argsort.hlo"
    hlo.write_text(text)
    lines = text.split("\n")
    sorts = [i + 1 for i, ln in enumerate(lines) if re.search(r"\) sort\(", ln)]
    assert len(sorts) == 1, sorts
    proc = penguin_opt_cli(
        hlo, "-p", "inline,stablehlo-canonicalize-for-penguin", "--remarks=fuseIotaSort",
        "--remarks-missed=fuseIotaSort", "-o", tmp_path / "out.mlir",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    remarks = [ln for ln in proc.stderr.splitlines() if "[fuseIotaSort]" in ln]
    assert remarks, proc.stderr
    assert all(ln.startswith(f"{hlo}:{sorts[0]}:") for ln in remarks), remarks
