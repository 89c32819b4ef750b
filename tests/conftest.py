"""Collect MLIR FileCheck tests: every ``tests/filecheck/**/*.mlir`` RUN line is a test.

``// RUN: penguin-opt %s -p PASS | filecheck %s`` runs under bash with pipefail; ``%s`` is
the file, ``not`` inverts an exit status, and the interpreter's bin directory is put first
on PATH so ``penguin-opt`` and ``filecheck`` are the installed ones.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

FILECHECK_DIR = Path(__file__).parent / "filecheck"


def run_lines(path: Path) -> list[str]:
    runs, current = [], None
    for line in path.read_text().splitlines():
        stripped = line.strip()
        if not stripped.startswith("// RUN:"):
            continue
        body = stripped[len("// RUN:") :].strip()
        current = body if current is None else f"{current} {body}"
        if current.endswith("\\"):
            current = current[:-1].rstrip()
            continue
        runs.append(current)
        current = None
    return runs


def pytest_collect_file(parent, file_path: Path):
    if file_path.suffix == ".mlir" and FILECHECK_DIR in file_path.parents:
        return MlirFile.from_parent(parent, path=file_path)
    return None


class MlirFile(pytest.File):
    def collect(self):
        for i, command in enumerate(run_lines(self.path)):
            yield MlirRun.from_parent(self, name=f"RUN{i + 1}", command=command)


class MlirRun(pytest.Item):
    def __init__(self, *, command: str, **kwargs):
        super().__init__(**kwargs)
        self.command = command

    def runtest(self):
        cmd = self.command.replace("%s", shlex.quote(str(self.path)))
        parts = [p.strip() for p in cmd.split("|")]
        parts = [f"! {p[4:]}" if p.startswith("not ") else p for p in parts]
        cmd = " | ".join(parts)
        env = dict(os.environ)
        env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
        proc = subprocess.run(
            ["bash", "-o", "pipefail", "-c", cmd],
            capture_output=True,
            text=True,
            env=env,
            cwd=self.path.parent,
        )
        if proc.returncode != 0:
            raise FileCheckFailure(cmd, proc)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, FileCheckFailure):
            err = excinfo.value
            return (
                f"command failed (exit {err.proc.returncode}): {err.cmd}\n"
                f"--- stdout ---\n{err.proc.stdout[-4000:]}\n"
                f"--- stderr ---\n{err.proc.stderr[-4000:]}"
            )
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        return self.path, 0, f"{self.path.name}::{self.name}"


class FileCheckFailure(Exception):
    def __init__(self, cmd, proc):
        super().__init__(cmd)
        self.cmd, self.proc = cmd, proc
