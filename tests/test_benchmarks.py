"""The benchmark command runs end to end and its floor is a floor.

`python -m benchmarks.run` is how the performance issue's targets are checked; these tests
run it on the 1k-op modules only (seconds), never time anything themselves, and check the
report's structure and the one inequality the floor measurement promises: the least work
the bindings allow is never more than what our passes spend.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    cache = tmp_path_factory.mktemp("bench")
    out = cache / "performance.md"
    env = {**os.environ, "PENGUIN_BENCH_CACHE": str(cache)}
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.run", "--sizes", "1k", "--corpus", "0",
         "--no-memory", "--no-folds", "--reps", "1", "-o", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out.read_text(), json.loads((cache / "last_run.json").read_text()), proc.stdout


def test_report_has_every_table(small_run):
    doc, _, stdout = small_run
    for heading in ("### stablehlo", "### mhlo", "### Floor: the least work these bindings allow",
                    "## Targets"):
        assert heading in doc, heading
    assert "<!-- Everything below this line is kept" in doc
    assert doc.split("<!--")[0].strip() in stdout  # the printed table is the written one


def test_floor_counts_the_rewrites_and_stays_below_the_passes(small_run):
    _, data, _ = small_run
    sys.path.insert(0, str(ROOT))
    from benchmarks.run import ModuleResult, Timing

    for raw in data["results"]:
        r = ModuleResult(**{**raw, "times": {k: Timing(**t) for k, t in raw["times"].items()}})
        f = r.floor
        # Every rewrite erases the op it rewrites, and our passes create ops for most.
        assert f["erases"] >= r.rewrites > 0
        assert f["creates"] > 0 and f["rauws"] > 0
        assert 0 < f["create_us"] < 1000 and 0 < f["rauw_us"] < 1000 and 0 < f["erase_us"] < 1000
        assert r.floor_cpu(verify=False) < r.floor_cpu()
        assert f["walk"] > 0
        assert r.floor_cpu() < r.times["both"].cpu, (r.name, r.dialect)
