"""The code base is ruff-clean and ruff-formatted (part of the test suite so CI enforces it)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TREES = ["src", "tests", "tools", "benchmarks"]


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]])
def test_ruff_clean(command):
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    assert ruff, "ruff is part of the [test] extra"
    proc = subprocess.run([ruff, *command, *TREES], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
