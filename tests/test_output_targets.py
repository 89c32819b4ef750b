"""-o writes through to what is not a regular file and replaces regular files atomically."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "argsort_model.mlir"


def penguin_opt(*args):
    return subprocess.run(
        [sys.executable, "-m", "penguin_opt", EXAMPLE, "-p", "cse", *map(str, args)],
        capture_output=True,
        cwd=ROOT,
    )


def expected() -> bytes:
    proc = penguin_opt()
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod of a character device needs root")
def test_character_device_is_written_through(tmp_path):
    node = tmp_path / "null"
    os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a /dev/null of our own
    proc = penguin_opt("-o", node)
    assert proc.returncode == 0, proc.stderr
    assert stat.S_ISCHR(os.stat(node).st_mode)
    assert os.stat(node).st_rdev == os.makedev(1, 3)


def test_fifo_is_written_through(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    proc = penguin_opt("-o", fifo)
    reader.join(timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert received == [expected()]


def test_symlink_target_keeps_its_inode(tmp_path):
    target = tmp_path / "real.mlir"
    target.write_text("old\n")
    link = tmp_path / "link.mlir"
    link.symlink_to(target)
    inode = os.stat(target).st_ino
    proc = penguin_opt("-o", link)
    assert proc.returncode == 0, proc.stderr
    assert link.is_symlink()
    assert os.stat(target).st_ino == inode
    assert target.read_bytes() == expected()


def test_regular_files_keep_their_mode_and_new_ones_follow_the_umask(tmp_path):
    existing = tmp_path / "existing.mlir"
    existing.write_text("old\n")
    existing.chmod(0o640)
    assert penguin_opt("-o", existing).returncode == 0
    assert stat.S_IMODE(os.stat(existing).st_mode) == 0o640
    assert existing.read_bytes() == expected()
    old = os.umask(0o027)
    try:
        new = tmp_path / "new.mlir"
        assert penguin_opt("-o", new).returncode == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(new).st_mode) == 0o640


@pytest.mark.parametrize("where", ["missing/out.mlir", "file/out.mlir", "."])
def test_unwritable_output_is_one_line(tmp_path, where):
    (tmp_path / "file").write_text("x")
    proc = penguin_opt("-o", tmp_path / where)
    assert proc.returncode == 1
    lines = proc.stderr.decode().strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "cannot write output" in lines[0], proc.stderr
    assert not list(tmp_path.glob("**/.penguin-opt-*"))


def test_dev_stdout_is_stdout():
    proc = penguin_opt("-o", "/dev/stdout")
    assert proc.returncode == 0
    assert proc.stdout == expected()
