"""The README's before/after blocks show what the commands really print."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def block_after(anchor: str) -> str:
    start = README.index(anchor)
    if "```mlir" in README[max(0, start - 10):start]:  # the anchor opens the block
        start = README.rindex("```mlir", 0, start)
    match = re.compile(r"```mlir\n(.*?)```", re.S).search(README, start)
    return match.group(1)


def halves(block: str) -> tuple[list[str], list[str]]:
    before, after = re.split(r"^// after.*$", block, maxsplit=1, flags=re.M)

    def lines(text):
        return [x.strip() for x in text.splitlines()
                if x.strip() and not x.strip().startswith("//") and x.strip() != "..."]
    return lines(before), lines(after)


def penguin_opt(*args) -> list[str]:
    proc = subprocess.run([sys.executable, "-m", "penguin_opt", *args], capture_output=True,
                          text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    return [x.strip() for x in proc.stdout.splitlines()]


@pytest.mark.parametrize(("anchor", "source", "before_cmd", "after_cmd"), [
    ("Before and after (`penguin-opt examples/argsort_model.mlir", None,
     ["examples/argsort_model.mlir", "-p", "inline"],
     ["examples/argsort_model.mlir", "-p", "inline,stablehlo-canonicalize-for-penguin"]),
    ("// before (examples/strided_conv.mlir)", "examples/strided_conv.mlir", None,
     ["examples/strided_conv.mlir", "-p", "stablehlo-canonicalize-conv"]),
])
def test_before_after_blocks_are_real_output(anchor, source, before_cmd, after_cmd):
    before, after = halves(block_after(anchor))
    assert before
    assert after
    real_before = ([x.strip() for x in (ROOT / source).read_text().splitlines()]
                   if source else penguin_opt(*before_cmd))
    real_after = penguin_opt(*after_cmd)
    for line in before:
        assert line in real_before, line
    for line in after:
        assert line in real_after, line
