"""penguin_opt.isolated: calls in child processes that may die."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from support.oracle_children import (
    abort_with_llvm_error,
    child_pid,
    die_by,
    raise_memory_error,
    write_to_stderr,
)

from penguin_opt import isolated
from penguin_opt.cli_common import run_command


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] == "Z"
    except OSError:
        return True


def test_a_command_ends_with_its_children_closed_not_killed():
    """Children spawned by a command's thread would be killed with it (PR_SET_PDEATHSIG
    follows the spawning thread) and leave broken pools to the interpreter's exit, whose
    concurrent.futures hook then writes to a closed pipe ("Exception ignored ... EBADF"):
    the command closes them itself when it ends."""
    seen = {}

    def command() -> int:
        seen["pid"] = isolated.call("test-close", child_pid, b"")
        seen["processes"] = list(isolated._POOLS["test-close"]._processes.values())
        return 0

    assert run_command(command, prog="test", argv=[]) == 0
    assert "test-close" not in isolated._POOLS
    processes = seen["processes"]
    assert processes
    deadline = time.time() + 10
    while time.time() < deadline and not _gone(seen["pid"]):
        time.sleep(0.1)
    assert _gone(seen["pid"])
    for process in processes:
        process.join(timeout=10)
    assert [p.exitcode for p in processes] == [0] * len(processes)  # exited, not killed


@pytest.mark.parametrize("signal", ["SIGSEGV", "SIGABRT", "SIGBUS"])
def test_a_child_dying_by_a_signal_names_it_and_the_next_call_gets_a_new_child(signal):
    with pytest.raises(isolated.ChildDied) as died:
        isolated.call("test-die", die_by, signal.encode())
    assert died.value.signal == signal
    assert isolated.call("test-die", child_pid, b"") != os.getpid()
    isolated.kill("test-die")


def test_an_oracle_crash_is_not_checkable_with_its_signal(monkeypatch):
    from penguin_opt import equivalence

    monkeypatch.setattr(isolated, "call", lambda kind, fn, *a, **k: _crash(kind, "SIGSEGV"))
    with pytest.raises(
        equivalence.NotCheckable, match=r"^the xla oracle crashed the process \(SIGSEGV\)$"
    ):
        equivalence.run_xla("", [])
    monkeypatch.setattr(isolated, "call", lambda kind, fn, *a, **k: _crash(kind, "SIGABRT"))
    with pytest.raises(equivalence.NotCheckable, match=r"aborted the process \(LLVM ERROR\)$"):
        equivalence.run_xla("", [])


def test_a_captured_abort_gives_its_llvm_error_as_the_reason(capfd):
    """What a captured call writes to stderr stays off the user's terminal; the fatal
    line of an abort is the reason, and so part of the caller's one error line."""
    with pytest.raises(isolated.ChildDied) as died:
        isolated.call("test-abort", abort_with_llvm_error, b"Unsupported op: x.y", stderr="capture")
    assert died.value.signal == "SIGABRT"
    assert died.value.reason == "LLVM ERROR: Unsupported op: x.y"
    assert capfd.readouterr().err == ""
    isolated.kill("test-abort")


@pytest.mark.parametrize("user_asked_for_logs", [False, True])
def test_a_captured_call_that_returns_drops_its_stderr_unless_logs_asked_for(
    capfd, monkeypatch, user_asked_for_logs
):
    if user_asked_for_logs:
        monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "0")
    else:
        monkeypatch.delenv("TF_CPP_MIN_LOG_LEVEL", raising=False)
    kind = f"test-stderr-{user_asked_for_logs}"
    assert isolated.call(kind, write_to_stderr, b"I1205 a log line\n", stderr="capture")
    assert isolated.call(kind, write_to_stderr, b"uncaptured\n") == b"uncaptured\n"
    isolated.kill(kind)
    logged = "I1205 a log line\n" if user_asked_for_logs else ""
    assert capfd.readouterr().err == logged + "uncaptured\n"


def test_an_oracle_abort_is_not_checkable_with_its_llvm_error(monkeypatch):
    from penguin_opt import equivalence

    monkeypatch.setattr(
        isolated, "call", lambda kind, fn, *a, **k: _crash(kind, "SIGABRT", "LLVM ERROR: boom")
    )
    with pytest.raises(
        equivalence.NotCheckable, match=r"^the xla oracle aborted the process \(LLVM ERROR: boom\)$"
    ):
        equivalence.run_xla("", [])


def _crash(kind: str, signal: str, reason: str = ""):
    raise isolated.ChildDied(kind, signal, reason)


def test_an_exception_in_the_child_is_raised_here_and_the_child_lives_on():
    with pytest.raises(MemoryError):
        isolated.call("test-error", raise_memory_error, b"")
    assert isolated.call("test-error", child_pid, b"") != os.getpid()
    isolated.kill("test-error")
    assert "test-error" not in isolated._POOLS


def test_ctrl_c_in_a_script_does_not_wait_for_the_child(tmp_path):
    """A script interrupted (KeyboardInterrupt) while an isolated call ran waited at exit
    for the child to finish its call (95 s of an oracle run: the review). The abandoned
    call's child is killed: the script exits as soon as it handles the interrupt."""

    script = tmp_path / "interrupted.py"
    script.write_text(
        "import sys, time\n"
        "from penguin_opt import isolated\n"
        "print('go', flush=True)\n"
        "try:\n"
        "    isolated.call('test-interrupted', time.sleep, 60)\n"
        "except KeyboardInterrupt:\n"
        "    sys.exit(130)\n"
    )
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    assert proc.stdout.readline() == b"go\n"
    time.sleep(3)  # the child is spawned and sleeping
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err.decode()[-800:]
    assert time.monotonic() - start < 30, err.decode()[-800:]
