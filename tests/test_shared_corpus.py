"""The shared public corpus (../shared/corpus/public): upstream programs nobody here wrote.

Every chunk (``// -----``) of every file in manifest.json must load (or be rejected by
MLIR's own parser), run through both dialects' pipelines without a pass error or invalid
IR, and keep its results: the before/after programs must agree (bitwise, or within the
derived tolerance where canonicalize-conv reorders sums) and the ``check.expect_*``
expectations that held before the passes must still hold. The rules are in
``tools/corpus/shared.py``. CI runs a deterministic sample of about one chunk in
sixteen; the whole sweep is ``pytest -m slow tests/test_shared_corpus.py`` (or
``python -m tools.corpus --shared yes``, which prints the counts).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools.corpus import shared

ROOT = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "public"
if not (ROOT / "manifest.json").exists():
    pytest.skip(f"no shared corpus at {ROOT}", allow_module_level=True)

CI_EVERY = 16
CASES = shared.cases(ROOT)
CI_CASES = shared.sample(CASES, CI_EVERY)
CI_IDS = {c.id for c in CI_CASES}
REST = [c for c in CASES if c.id not in CI_IDS]


@pytest.fixture(scope="module", autouse=True)
def _worker():
    yield
    shared.shutdown_worker()  # joining it at interpreter exit can hang


def _check(case: shared.Case) -> shared.ChunkResult:
    r = shared.run_case_isolated(case)
    details = "\n".join([r.status, *r.mismatches, *r.expectations_broken])
    assert not r.failed, details
    return r


def test_every_manifest_file_is_there():
    manifest = json.loads((ROOT / "manifest.json").read_text())
    missing = [rel for rel in manifest if not (ROOT / rel).exists()]
    assert not missing
    assert len({c.file for c in CASES}) == len([r for r in manifest if r.endswith(".mlir")])


def test_the_ci_sample_covers_every_source():
    sources = {c.file.split("/")[0] for c in CI_CASES}
    assert sources == {"stablehlo", "mlir-hlo", "byteir"}, sources


@pytest.mark.parametrize("case", CI_CASES, ids=lambda c: c.id)
def test_chunk_keeps_results(case):
    _check(case)


@pytest.mark.slow
@pytest.mark.parametrize("case", REST, ids=lambda c: c.id)
def test_chunk_keeps_results_full(case):
    _check(case)
