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
    if "```mlir" in README[max(0, start - 10) : start]:  # the anchor opens the block
        start = README.rindex("```mlir", 0, start)
    match = re.compile(r"```mlir\n(.*?)```", re.S).search(README, start)
    return match.group(1)


def halves(block: str) -> tuple[list[str], list[str]]:
    before, after = re.split(r"^// after.*$", block, maxsplit=1, flags=re.M)

    def lines(text):
        return [
            x.strip()
            for x in text.splitlines()
            if x.strip() and not x.strip().startswith("//") and x.strip() != "..."
        ]

    return lines(before), lines(after)


def penguin_opt(*args) -> list[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "penguin_opt", *args], capture_output=True, text=True, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr
    return [x.strip() for x in proc.stdout.splitlines()]


@pytest.mark.parametrize(
    ("anchor", "source", "before_cmd", "after_cmd"),
    [
        (
            "Before and after (`penguin-opt examples/argsort_model.mlir",
            None,
            ["examples/argsort_model.mlir", "-p", "inline"],
            ["examples/argsort_model.mlir", "-p", "inline,stablehlo-canonicalize-for-penguin"],
        ),
        (
            "// before (examples/strided_conv.mlir)",
            "examples/strided_conv.mlir",
            None,
            ["examples/strided_conv.mlir", "-p", "stablehlo-canonicalize-conv"],
        ),
    ],
)
def test_before_after_blocks_are_real_output(anchor, source, before_cmd, after_cmd):
    before, after = halves(block_after(anchor))
    assert before
    assert after
    real_before = (
        [x.strip() for x in (ROOT / source).read_text().splitlines()]
        if source
        else penguin_opt(*before_cmd)
    )
    real_after = penguin_opt(*after_cmd)
    for line in before:
        assert line in real_before, line
    for line in after:
        assert line in real_after, line


def test_running_a_canonicalized_program_with_jax(tmp_path):
    """The README's --emit=executable command, then its jax snippet, as written."""
    start = README.index("### Running a canonicalized program with jax")
    command = re.compile(r"```sh\n(.*?)\n```", re.S).search(README, start).group(1)
    snippet = re.compile(r"```python\n(.*?)```", re.S).search(README, start).group(1)
    args = command.split()
    assert args[0] == "penguin-opt"
    args = [str(ROOT / a) if a.startswith("examples/") else a.strip("'") for a in args[1:]]
    proc = subprocess.run(
        [sys.executable, "-m", "penguin_opt", *args], capture_output=True, text=True, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    run = subprocess.run(
        [sys.executable, "-c", snippet], capture_output=True, text=True, cwd=tmp_path
    )
    assert run.returncode == 0, run.stderr


def _stderr_example(anchor: str, tmp_path: Path) -> tuple[list[str], list[str]]:
    """(what the README shows, what its command prints on stderr) for the ``sh`` and
    ``text`` blocks after ``anchor``; the command's ``-o`` goes to ``tmp_path``."""
    start = README.index(anchor)
    command = re.compile(r"```sh\n(.*?)\n\s*```", re.S).search(README, start).group(1)
    shown = re.compile(r"```text\n(.*?)\n\s*```", re.S).search(README, start).group(1)
    args = [a.strip("'") for a in command.split()[1:]]
    args[args.index("-o") + 1] = str(tmp_path / "out.mlir")
    proc = subprocess.run(
        [sys.executable, "-m", "penguin_opt", *args], capture_output=True, text=True, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr
    return [line.strip() for line in shown.splitlines()], proc.stderr.splitlines()


@pytest.mark.parametrize(
    "anchor",
    ["## What changed: remarks", "* `--print-changes`", "## What Neuron will still reject"],
)
def test_stderr_examples_are_what_penguin_opt_prints(anchor, tmp_path):
    shown, printed = _stderr_example(anchor, tmp_path)
    assert printed == shown
