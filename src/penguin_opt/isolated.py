"""Calls in a child process that may die: the process itself must not.

The reference interpreter, XLA and some native conversions can end the process with an
LLVM ERROR (``abort()``); :func:`call` runs a function in a long-lived spawned child per
``kind`` instead, so that such an end is an exception here (:class:`ChildDied`), as is a
call running longer than its timeout (:class:`ChildTimedOut`, the child is killed). The
children die with this process (even one killed by SIGKILL), never re-import an
unguarded ``__main__`` script, and :func:`shutdown` (run on SIGINT/SIGTERM) kills every
child, one still being spawned included.
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import os
import signal
import sys
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from typing import TYPE_CHECKING, Literal, TypeVar

from .cli_common import exit_with_parent, fatal_line, watch_native_stderr

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from concurrent.futures import Future

__all__ = [
    "ChildDied",
    "ChildTimedOut",
    "Stopped",
    "call",
    "close",
    "close_all",
    "kill",
    "running",
    "shutdown",
]


class ChildDied(Exception):
    """The child process ended during the call (LLVM ERROR, a signal). ``signal``: the
    signal's name (``SIGABRT`` for an LLVM ERROR), None if it exited or is not known;
    ``reason``: the fatal line the call wrote to stderr (``LLVM ERROR: ...``, a failed
    CHECK), "" if it wrote none or its stderr was not captured."""

    def __init__(self, kind: str, signal: str | None = None, reason: str = "") -> None:
        super().__init__(kind)
        self.signal = signal
        self.reason = reason


class ChildTimedOut(Exception):
    """The call ran longer than its timeout; the child was killed."""


class Stopped(Exception):
    """No new child starts: the command is being stopped."""


_T = TypeVar("_T")

_POOLS: dict[str, ProcessPoolExecutor] = {}
_SPAWN_LOCK = threading.Lock()
_SHUT_DOWN = False


def call(
    kind: str,
    fn: Callable[..., _T],
    *args: object,
    timeout: float | None = None,
    stderr: Literal["pass", "capture", "watch"] = "pass",
) -> _T:
    """``fn(*args)`` (``fn`` importable by name, arguments picklable) in the child of
    ``kind``; an exception ``fn`` raises there is raised here.

    ``stderr``: where the call's writes to the child's stderr go.

    * ``"pass"``: to the user's terminal, as they come.
    * ``"capture"``: all of them (native code's LLVM ERROR before an abort, absl logs,
      MLIR's diagnostics) to a file, not the user's terminal; a death's fatal line becomes
      :attr:`ChildDied.reason`, so that it is part of the caller's one error line. The rest
      is dropped, unless the user asked for XLA's logs (``TF_CPP_MIN_LOG_LEVEL=0``): then
      it is written to stderr after the call. Only for a call that starts no child itself
      (a child spawned during the call would keep the file as its stderr).
    * ``"watch"``: to the terminal, except what native code writes inside
      :func:`~penguin_opt.cli_common.native_stderr_captured` blocks (native passes, the
      HLO importer), which goes to a file: a death inside one has its fatal line as
      :attr:`ChildDied.reason`."""
    from concurrent.futures import TimeoutError as FutureTimeout
    from concurrent.futures.process import BrokenProcessPool

    log = None
    if stderr != "pass":
        fd, log = tempfile.mkstemp(prefix="penguin-opt-", suffix=".log")
        os.close(fd)
        if stderr == "capture":
            fn, args = _logged, (log, _logs_asked_for(), fn, *args)
        else:
            fn, args = _watched, (log, fn, *args)
    try:
        with _SPAWN_LOCK:  # no child starts while shutdown runs, or after it
            if _SHUT_DOWN:
                raise Stopped(kind)
            future = _submit(kind, fn, args)
            # its processes, while the pool has them (a broken pool may forget them soon)
            processes = list(_processes(_POOLS.get(kind)).values())
        try:
            return future.result(timeout=timeout)
        except BrokenProcessPool:
            signal = _signal_that_ended(processes)
            kill(kind)
            raise ChildDied(kind, signal, fatal_line(_read(log)) if log else "") from None
        except FutureTimeout:
            kill(kind)
            raise ChildTimedOut(kind) from None
        except KeyboardInterrupt:  # (a script's main thread) the call is abandoned: its
            kill(kind, wait=False)  # child would keep the interpreter's exit waiting
            raise
    finally:
        if log is not None:
            with contextlib.suppress(OSError):
                os.unlink(log)


def _watched(log: str, fn: Callable[..., _T], *args: object) -> _T:
    """Child-process side of ``stderr="watch"``: ``fn(*args)`` with the captures of
    native code's stderr going to the file ``log``."""
    sink = os.open(log, os.O_RDWR)
    watch_native_stderr(sink)
    try:
        return fn(*args)
    finally:
        watch_native_stderr(None)
        os.close(sink)


def _logged(log: str, forward: bool, fn: Callable[..., _T], *args: object) -> _T:
    """Child-process side of ``stderr="capture"``: ``fn(*args)`` with file descriptor 2 on
    the file ``log`` (native code writes there directly), restored after."""
    sys.stderr.flush()
    sink = os.open(log, os.O_WRONLY | os.O_TRUNC)
    saved = os.dup(2)
    os.dup2(sink, 2)
    os.close(sink)
    try:
        return fn(*args)
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        if forward:
            sys.stderr.write(_read(log))
            sys.stderr.flush()


def _read(log: str) -> str:
    """The text of the file ``log`` ("" if it cannot be read)."""
    try:
        with open(log, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def _signal_that_ended(processes: list) -> str | None:
    """The name of the signal one of a broken pool's ``processes`` died by, if one did."""
    import signal

    for process in processes:
        # Dead already: reading the exit code reaps it. The pool's own thread may be
        # reaping it at the same moment, and until it has stored the status it reads None.
        deadline = time.monotonic() + 2.0
        while process.exitcode is None and time.monotonic() < deadline:
            time.sleep(0.01)
        code = process.exitcode
        if code is not None and code < 0:
            try:
                return signal.Signals(-code).name
            except ValueError:
                return f"signal {-code}"
    return None


def _processes(pool: ProcessPoolExecutor | None) -> dict:
    """A pool's worker processes by pid (concurrent.futures keeps them in ``_processes``,
    which a shut-down pool has cleared)."""
    return getattr(pool, "_processes", None) or {}


def _submit(kind: str, fn: Callable[..., _T], args: tuple) -> Future[_T]:
    """Submit to the kind's pool (created, or replaced, as needed; this spawns the child)."""
    pool = _POOLS.get(kind)
    if pool is not None and not all(p.is_alive() for p in _processes(pool).values()):
        # its child died with the thread that spawned it (PR_SET_PDEATHSIG follows the
        # spawning thread), not of this program: start a new one
        kill(kind)
        pool = None
    fresh = pool is None
    if fresh:
        pool = ProcessPoolExecutor(
            max_workers=1,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_child_start,
            initargs=(os.getpid(),),
        )
        _POOLS[kind] = pool
        _register_shutdown()
    with _quiet_xla_logs() if fresh else contextlib.nullcontext(), _main_not_reimported():
        return pool.submit(fn, *args)


def _child_start(parent: int) -> None:
    """A pool child's initializer: it dies with ``parent``, and leaves a terminal's Ctrl-C
    (which reaches the whole process group) to the parent, which kills its children; else
    each child would print a KeyboardInterrupt traceback of its own."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    exit_with_parent(parent)


def kill(kind: str, *, wait: bool = True) -> None:
    """Kill and reap the child of ``kind`` (the next call starts a new one). ``wait``:
    also join the pool's manager thread, so that nothing of the pool is left for the
    interpreter's exit (concurrent.futures' exit hook races a closing pool: EBADF)."""
    pool = _POOLS.pop(kind, None)
    if pool is None:
        return
    processes = list(_processes(pool).values())
    for process in processes:
        if process.is_alive():
            process.kill()
    for process in processes:
        process.join(timeout=5)
    pool.shutdown(wait=wait, cancel_futures=True)


def running(kind: str) -> bool:
    """Whether the child of ``kind`` has been started (and not closed or killed since)."""
    return kind in _POOLS


def close(kind: str) -> None:
    """Let the child of ``kind`` exit and join its pool. Call it from the thread that
    spawned the child before that thread ends: PR_SET_PDEATHSIG would kill the child with
    the thread, leaving a broken pool (and its semaphores) for the interpreter's exit."""
    pool = _POOLS.pop(kind, None)
    if pool is not None:
        pool.shutdown(wait=True, cancel_futures=True)


def close_all() -> None:
    """At the end of a command: :func:`close` every child (they are spawned from the
    command's thread)."""
    for kind in list(_POOLS):
        close(kind)


def _logs_asked_for() -> bool:
    """Whether the user asked for XLA's log lines: ``TF_CPP_MIN_LOG_LEVEL=0``. Any other
    value is not taken as asking: ``import jax`` sets 1 in its process (and so in every
    process it starts, penguin-opt run from a notebook or a test included)."""
    return os.environ.get("TF_CPP_MIN_LOG_LEVEL") == "0"


@contextlib.contextmanager
def _quiet_xla_logs() -> Iterator[None]:
    """XLA's log lines are noise on the user's terminal: INFO ones (device counts), and
    WARNING and ERROR ones with a stack trace (a failed compile logs its status that way),
    which say no more than the status the oracle reports as not checkable in one line. The
    child is spawned (and copies the environment) with TF_CPP_MIN_LOG_LEVEL=3 unless the
    user asked for the logs (0 shows them all); this process's environment is left as it
    was."""
    if _logs_asked_for():
        yield
        return
    saved = os.environ.get("TF_CPP_MIN_LOG_LEVEL")
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    try:
        yield
    finally:
        if saved is None:
            del os.environ["TF_CPP_MIN_LOG_LEVEL"]
        else:
            os.environ["TF_CPP_MIN_LOG_LEVEL"] = saved


@contextlib.contextmanager
def _main_not_reimported() -> Iterator[None]:
    """A spawned child re-imports the parent's ``__main__`` (its file or ``-m`` module):
    from a script without ``if __name__ == "__main__":`` that re-runs the script, whose
    check then cannot start a child and the pool breaks. The children need nothing of
    ``__main__``, so it is hidden from multiprocessing while they spawn."""
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    saved = {key: main.__dict__[key] for key in ("__file__", "__spec__") if key in main.__dict__}
    main.__dict__.pop("__file__", None)
    main.__dict__["__spec__"] = None
    try:
        yield
    finally:
        main.__dict__.pop("__spec__", None)
        main.__dict__.update(saved)


@functools.cache
def _register_shutdown() -> None:
    from .cli_common import on_abandon, on_finish

    on_abandon(shutdown)
    on_finish(close_all)
    if multiprocessing.parent_process() is not None:
        # In a worker process (a batch's): multiprocessing's exit joins every child before
        # the interpreter's exit hooks would shut the pools down, so shut them down first.
        from multiprocessing.util import Finalize

        Finalize(None, close_all, exitpriority=100)


def shutdown() -> None:
    """On SIGINT/SIGTERM: kill every child process of this one (the oracles, one still
    being spawned, which no pool lists yet, and multiprocessing's resource tracker, whose
    leak warnings would reach the user's terminal), then reap the pools'."""
    global _SHUT_DOWN
    from multiprocessing import resource_tracker

    acquired = _SPAWN_LOCK.acquire(timeout=10)  # wait for a spawn under way to finish
    _SHUT_DOWN = True
    if acquired:
        _SPAWN_LOCK.release()
    tracker = getattr(resource_tracker._resource_tracker, "_pid", None)
    children = _child_pids()
    for pid in children:
        if pid != tracker:
            with contextlib.suppress(OSError):
                os.kill(pid, 9)
    for kind in list(_POOLS):
        kill(kind, wait=False)  # the process is about to end: no joining
    if tracker in children:  # last: the pools' shutdown would relaunch it
        with contextlib.suppress(OSError):
            os.kill(tracker, 9)


def _child_pids() -> list[int]:
    """Direct children of this process (Linux /proc; elsewhere the pools' processes)."""
    me, found = os.getpid(), []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return [pid for pool in _POOLS.values() for pid in _processes(pool)]
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 1 and fields[1] == str(me):
            found.append(int(entry))
    return found
