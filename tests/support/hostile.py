"""Running penguin-opt/penguin-check as a user would, and the promises every run keeps."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_NOTE = re.compile(r"^\S.*?: (warning|remark): ")


def run(
    *args, tool: str = "penguin_opt", stdin: bytes | None = None, timeout: float = 300, **kwargs
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", tool, *map(str, args)],
        input=stdin,
        capture_output=True,
        cwd=kwargs.pop("cwd", ROOT),
        timeout=timeout,
        **kwargs,
    )


def error_lines(proc: subprocess.CompletedProcess) -> list[str]:
    """stderr lines that are not warnings or remarks."""
    text = proc.stderr.decode(errors="replace")
    return [line for line in text.splitlines() if line.strip() and not _NOTE.match(line)]


def assert_kept_promises(proc: subprocess.CompletedProcess, *, codes=(0, 1)) -> None:
    """No signal death, a documented exit code, no traceback or internal error, and for
    a failure exactly one error line."""
    err = proc.stderr.decode(errors="replace")
    assert proc.returncode >= 0, f"died by signal {-proc.returncode}: {err[-500:]}"
    assert proc.returncode in codes, f"exit {proc.returncode}: {err[-500:]}"
    assert "Traceback" not in err, err[-2000:]
    assert "internal error" not in err, err[-500:]
    if proc.returncode not in (0,):
        lines = error_lines(proc)
        assert len(lines) == 1, f"expected one error line, got {lines[:5]}"


def assert_one_line_error(proc: subprocess.CompletedProcess, code: int, needle: str) -> str:
    assert_kept_promises(proc, codes=(code,))
    line = error_lines(proc)[0]
    assert needle in line, line
    return line
