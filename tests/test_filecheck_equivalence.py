"""Every positive FileCheck case of the for-penguin passes keeps its results.

Each ``// -----`` chunk of the pass test files is run through its RUN line's pipeline with
the Python API, then the program before and after is executed by the StableHLO reference
interpreter (MHLO converted to StableHLO first) on seeded random inputs. Outputs must be
bit-identical, except where the rewrite changes arithmetic (the ResizeNearestGrad
lowering reorders the window sum: a relative tolerance of 1e-6, i.e. ~8 f32 ulps for
windows of at most 8 elements).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

import penguin_opt
from penguin_opt.diagnostics_check import split_chunks
from penguin_opt.equivalence import NotCheckable, check

TRANSFORMS = Path(__file__).parent / "filecheck" / "transforms"
FILES = [
    "stablehlo_canonicalize_for_penguin.mlir",
    "stablehlo_canonicalize_for_penguin_options.mlir",
    "canonicalize_for_penguin.mlir",
]


def _pipeline(path: Path) -> str:
    first = next(line for line in path.read_text().splitlines() if line.startswith("// RUN:"))
    words = shlex.split(first[len("// RUN:") :])
    return words[words.index("-p") + 1]


def _cases():
    for name in FILES:
        path = TRANSFORMS / name
        pipeline = _pipeline(path)
        for i, chunk in enumerate(split_chunks(path.read_text())):
            yield pytest.param(chunk.text, pipeline, id=f"{name}:{chunk.first_line}:{i}")


# Chunks whose programs no oracle can run, and why (asserted, so the list stays honest).
NOT_CHECKABLE = {
    "dynamic": re.compile(r"tensor<\?"),
    "tuple argument": re.compile(r"%arg[0-9]+: tuple<"),
    "index argument": re.compile(r"tensor<2xindex>"),
    "unknown custom call": re.compile(r"custom_call @Other"),
}


@pytest.mark.parametrize(("text", "pipeline"), list(_cases()))
def test_chunk_keeps_results(text: str, pipeline: str):
    before = penguin_opt.load(text)
    before_text = penguin_opt.to_text(before)
    result = penguin_opt.run(before, pipeline)
    after_text = penguin_opt.to_text(result.module)
    mode = "sum" if "resize-nearest-grad-mode=sum" in pipeline else "mean"
    rtol = 1e-6 if "ResizeNearestGrad" in text else 0.0
    try:
        report = check(before_text, after_text, seed=1, trials=2, rtol=rtol, resize_mode=mode)
    except NotCheckable as err:
        reasons = [k for k, pattern in NOT_CHECKABLE.items() if pattern.search(text)]
        assert reasons, f"unexpectedly not checkable: {err}"  # noqa: PT017 - then skip
        pytest.skip(f"not checkable ({', '.join(reasons)}): {err}")
    assert report.outputs, "no outputs compared"
    assert report.ok, report.table()
