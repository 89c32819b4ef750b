"""What ``penguin-opt`` and ``penguin-check`` share: exit codes, the argument parser with
mlir-opt's option habits, usage errors and the equivalence-check options.

mlir-opt (LLVM's ``cl``) habits the parser keeps:

* long options take one dash or two (``-split-input-file`` is ``--split-input-file``);
* a boolean flag also takes ``=true|false|1|0`` (``--verify-each=0``);
* an option with an optional value takes it only after ``=`` (``--split-input-file=MARK``),
  so a following input path is never swallowed;
* no abbreviations: ``--mlir-print-ir-after`` is not ``--mlir-print-ir-after-all``.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import math
import os
import re
import select
import signal
import sys
import tempfile
import threading
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from types import FrameType

__all__ = [
    "DEFAULT_TIMEOUT",
    "EXIT_FAILURE",
    "EXIT_INTERRUPTED",
    "EXIT_MISMATCH",
    "EXIT_NOT_CHECKABLE",
    "EXIT_NOT_READY",
    "EXIT_OK",
    "EXIT_TERMINATED",
    "EXIT_USAGE",
    "OneLineWarning",
    "Parser",
    "UsageError",
    "add_check_options",
    "add_version_option",
    "chunk_replayed",
    "chunk_started",
    "exit_with_parent",
    "fatal_line",
    "native_stderr_captured",
    "on_abandon",
    "on_finish",
    "one_line",
    "one_line_warnings_recorded",
    "output_silenced",
    "positive_int",
    "quiet_stdout",
    "run_command",
    "shown_name",
    "spooled_stdin",
    "stage",
    "supervise",
    "version",
    "watch_native_stderr",
    "watched",
]

EXIT_OK = 0
EXIT_FAILURE = 1  # the input cannot be read, or a pass failed
EXIT_USAGE = 2  # bad flag, unknown pass or option
EXIT_MISMATCH = 3  # --check-equivalence / penguin-check: the results differ
EXIT_NOT_CHECKABLE = 4  # no oracle can run the program
EXIT_NOT_READY = 5  # --penguin-readiness=error: Neuron's next stages would refuse an op
EXIT_INTERRUPTED = 130  # SIGINT
EXIT_TERMINATED = 143  # SIGTERM

# MLIR's parser, verifier, printer and passes recurse once per nesting level (regions,
# attributes): on the main thread's 8 MiB stack a few thousand levels crash the process.
# Commands run in a thread with this stack (virtual memory, touched only as deep as the
# input needs); io.MAX_NESTING keeps text inputs within what it was measured to take.
STACK_BYTES = 512 << 20
DEFAULT_TIMEOUT = 600.0  # seconds per oracle run (--timeout)

_cleanups: list[Callable[[], None]] = []
_finishers: list[Callable[[], None]] = []


def on_abandon(fn: Callable[[], None]) -> Callable[[], None]:
    """Register ``fn`` to run when a command is stopped by SIGINT/SIGTERM."""
    _cleanups.append(fn)
    return fn


def on_finish(fn: Callable[[], None]) -> Callable[[], None]:
    """Register ``fn`` to run in the command's thread when the command ends normally."""
    _finishers.append(fn)
    return fn


class _Terminated(BaseException):
    pass


def _terminate(signum: int, frame: FrameType | None) -> NoReturn:
    _ignore_stops()  # a second signal (the group's, after the parent's) must not cut the
    raise _Terminated  # cleanup short


def _interrupt(signum: int, frame: FrameType | None) -> NoReturn:
    _ignore_stops()
    raise KeyboardInterrupt


def _ignore_stops() -> None:
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(ValueError):
            signal.signal(signum, signal.SIG_IGN)


def run_command(fn: Callable[[], int], *, prog: str, argv: list[str]) -> int:
    """``fn()`` in a worker thread with a big stack; SIGINT (exit 130) or SIGTERM (143)
    stops it: child processes are killed, temporary files removed, nothing printed. The
    process never dies of a signal from deep input or an interrupted callback. A
    UsageError is ``PROG: error: ...`` (exit 2), a broken stdout pipe a quiet exit 1, and
    any other exception (a bug of ours) one ``internal error`` line (``--debug``: with
    its traceback)."""
    outcome: list = []
    fn = _guarded(fn, prog, "--debug" in argv)
    if sys.stderr is None:  # started with stderr closed: messages go nowhere, not to stdout
        sys.stderr = open(os.devnull, "w")  # lives as long as the process

    def target() -> None:
        try:
            outcome.append(fn())
        except BaseException as err:  # handed to the main thread
            outcome.append(err)
        for finish in reversed(_finishers):
            try:
                finish()
            except Exception:  # best effort: the command's answer is given
                pass

    main_thread = threading.current_thread() is threading.main_thread()
    previous: dict[int, object] = {}
    try:
        if main_thread:  # ours first, then the early ones go (no moment without either)
            from . import launch

            previous[signal.SIGTERM] = signal.signal(signal.SIGTERM, _terminate)
            interrupt = signal.getsignal(signal.SIGINT)
            if interrupt is signal.default_int_handler or signal.SIGINT in launch.replaced:
                previous[signal.SIGINT] = signal.signal(signal.SIGINT, _interrupt)
        settle_signals(previous)
        previous_size = threading.stack_size(STACK_BYTES)
        try:
            worker = threading.Thread(target=target, name="penguin-opt", daemon=True)
            worker.start()
        finally:
            threading.stack_size(previous_size)
        while worker.is_alive():
            worker.join(0.25)
    except KeyboardInterrupt:
        _abandon(EXIT_INTERRUPTED)
    except _Terminated:
        _abandon(EXIT_TERMINATED)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)  # type: ignore[arg-type]
    result = outcome[0]
    if isinstance(result, BaseException):
        raise result
    return result


# ------------------------------------------------------------- the supervising parent


def exit_with_parent(parent: int) -> None:
    """Child-process initializer: die with the parent (even one killed by SIGKILL, when
    nothing could stop the child) instead of running on as an orphan. On Linux the kernel
    does it (PR_SET_PDEATHSIG; an oracle's C++ call holds the GIL, so no thread of the
    child could); elsewhere a thread polls the parent between calls."""
    import ctypes
    import time

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):

        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(1.0)
            os._exit(1)

        threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()
    if os.getppid() != parent:  # the parent was gone before the death signal was armed
        os._exit(1)


_NO_SUPERVISOR_ENV = "PENGUIN_OPT_NO_SUPERVISOR"  # any value: no fork (e.g. under gdb)
_stage_fd: int | None = None  # the child's end of the pipe to its supervising parent

# (pid, fd): the file that native code's stderr goes to while native_stderr_captured runs
# in process ``pid``, which a watching process reads if this one dies (set by supervise
# in its child, by watch_native_stderr in an isolated call); emptied after each capture
_watched_log: tuple[int, int] | None = None
_capturing = 0  # native_stderr_captured blocks open in this process
_KEPT: list[object] = []  # the supervised child's watched file


def watch_native_stderr(fd: int | None) -> None:
    """From now on (until called with None), the captures of :func:`native_stderr_captured`
    in this process write to the file ``fd``, which the process watching this one reads if
    this one dies: the fatal line native code wrote before it aborted is there."""
    global _watched_log
    _watched_log = None if fd is None else (os.getpid(), fd)


def watched() -> bool:
    """Whether a process watches this one for its native code's last words (see
    :func:`watch_native_stderr`): a command's supervised child, a batch worker."""
    return _watched_log is not None and _watched_log[0] == os.getpid()


@contextlib.contextmanager
def native_stderr_captured(*, forward: bool = False) -> Iterator[list[str]]:
    """Collect what native code writes to file descriptor 2 (LLVM's ``errs()``, absl's
    logs, MLIR's diagnostics) during the block instead of letting it reach the user's
    terminal; yields a list that holds the captured text once the block ends, which is
    also written to stderr then if ``forward``. If native code ends the process inside the
    block (``LLVM ERROR``, a failed CHECK), its last words are in the watched file (see
    :func:`watch_native_stderr`): the watching process makes them part of its one line."""
    global _capturing
    captured: list[str] = []
    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:  # no stderr at all: nothing to capture
        yield captured
        return
    watched = _watched_log is not None and _watched_log[0] == os.getpid() and not _capturing
    with contextlib.ExitStack() as stack:
        if watched:
            sink = _watched_log[1]
            _empty(sink)
        else:
            sink = stack.enter_context(tempfile.TemporaryFile()).fileno()
        os.dup2(sink, 2)
        _capturing += 1
        try:
            yield captured
        finally:
            _capturing -= 1
            os.dup2(saved, 2)
            os.close(saved)
            text = _read_fd(sink)
            if watched:
                _empty(sink)
            captured.append(text)
            if forward and text:
                sys.stderr.write(text)
                sys.stderr.flush()


def _empty(fd: int) -> None:
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)  # shared with every dup of it, fd 2 included


def _read_fd(fd: int) -> str:
    """The whole text of the file open as ``fd``, read without moving its offset."""
    try:
        return os.pread(fd, os.fstat(fd).st_size, 0).decode("utf-8", "replace")
    except OSError:
        return ""


# absl's log prefix: "F1201 14:20:11.776846   29897 array.h:316] "
_ABSL_PREFIX = re.compile(r"(?:^|(?<=LLVM ERROR: ))[FE]\d{4} [\d:.]+\s+\d+ [^\]]*\] ")


def fatal_line(stderr: str) -> str:
    """The fatal line in what a dead process wrote to stderr: an LLVM ERROR, a failed
    CHECK (absl's ``F`` line) without absl's prefix, or a C++ exception nothing caught
    (``terminate called after throwing an instance of 'T'`` and its ``what():`` line, as
    ``T: what``); "" if there is none."""
    lines = stderr.splitlines()
    for i, line in enumerate(lines):
        if (line.startswith("F") and _ABSL_PREFIX.match(line)) or "LLVM ERROR" in line:
            return one_line(_ABSL_PREFIX.sub("", line), 300)
        thrown = _TERMINATE.search(line)
        if thrown:
            what = lines[i + 1].strip() if i + 1 < len(lines) else ""
            what = what.removeprefix("what():").strip()
            return one_line(f"{thrown.group(1)}{': ' if what else ''}{what}", 300)
    return ""


_TERMINATE = re.compile(r"terminate called after throwing an instance of '([^']*)'")


def shown_name(path: str) -> str:
    """``path`` as messages and MLIR's locations show it: a name that is not UTF-8 (os's
    surrogate escapes, which MLIR cannot take) with U+FFFD for its bytes that are not,
    and a control character (a newline would break a one-line message) as MLIR prints
    it in a location, ``\\0A``."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        path = os.fsencode(path).decode("utf-8", "replace")
    return _CONTROL.sub(lambda m: f"\\{ord(m.group()):02X}", path)


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def settle_signals(taken: dict[int, object]) -> None:
    """Give back the handlers ``launch`` replaced for the time the command took to
    import (Python's KeyboardInterrupt for SIGINT; SIGTERM and SIGHUP their default),
    except for the signals in ``taken`` (whose handlers the command has just installed):
    there the replaced handler becomes the one restored when the command ends."""
    from . import launch

    for signum, handler in launch.replaced.items():
        if signum in taken:
            taken[signum] = handler
        else:
            signal.signal(signum, handler)  # type: ignore[arg-type]
    launch.replaced.clear()


def supervise(prog: str) -> None:
    """Run the rest of this command in a forked child; the parent waits and exits with its
    code. MLIR inside jaxlib can crash the process on some inputs (a segfault in its parser
    or printer, an LLVM abort in a pass), which no Python code can catch: the parent then
    prints one line, ``FILE: error: MLIR crashed the process (SIGSEGV) while parsing``
    (what the child last told it through :func:`stage`), removes the temporary output the
    child announced, and exits 1. A crash inside a ``--split-input-file`` chunk (see
    :func:`chunk_started`) ends only that chunk: the parent forks a new child that goes
    on from there. SIGINT, SIGTERM and SIGHUP are passed on to the child, which dies with
    the parent (even one killed by SIGKILL)."""
    global _stage_fd, _spool
    if not hasattr(os, "fork") or os.environ.get(_NO_SUPERVISOR_ENV):
        return
    parent = os.getpid()
    try:
        spool = tempfile.TemporaryFile()  # the stdin a resumed child reads again
    except OSError:
        return
    while True:
        try:
            log = tempfile.TemporaryFile()  # no name: shared with the child, gone with both
            read_end, write_end = os.pipe()
            with warnings.catch_warnings():  # numpy's BLAS threads: safe, it handles fork
                warnings.filterwarnings("ignore", ".*multi-threaded.*fork", DeprecationWarning)
                pid = os.fork()
        except OSError:  # no processes left: run unsupervised (or end a resumed run)
            if not _resumed:
                return
            print(f"{prog}: error: cannot go on after a crash: no process left", file=sys.stderr)
            os._exit(EXIT_FAILURE)
        if pid == 0:
            os.close(read_end)
            _stage_fd, _spool = write_end, spool.fileno()
            _KEPT.extend((log, spool))  # open as long as the child runs
            watch_native_stderr(log.fileno())
            exit_with_parent(parent)
            if "--debug" in sys.argv:  # a crash also prints where Python was
                import faulthandler

                # to stderr as it is now: native_stderr_captured swaps fd 2 for a file
                debug_stream = os.fdopen(os.dup(2), "w")
                _KEPT.append(debug_stream)
                faulthandler.enable(debug_stream)
            return
        os.close(write_end)
        status, told, stopped = _wait_for(pid, read_end)
        os.close(read_end)
        if os.WIFEXITED(status):
            os._exit(os.WEXITSTATUS(status))
        signum = os.WTERMSIG(status)
        fatal = fatal_line(_read_fd(log.fileno()))
        log.close()
        chunk = told.chunk
        if (
            stopped
            or signum in (*_FORWARDED, signal.SIGPIPE)
            or chunk is None
            or not told.resumable
            or chunk <= max(_resumed, default=-1)  # again, or in a chunk run again: give up
        ):
            os._exit(_died(signum, told, prog, fatal))
        _remove(told.temporaries)
        _resumed[chunk] = _death_message(signum, told, fatal)


def stage(
    doing: str | None = None,
    *,
    file: str | None = None,
    temporary: str | None = None,
    done: str | None = None,
) -> None:
    """Tell the supervising parent (if any) what the command does now (``doing``, e.g.
    "parsing"), on which input (``file``), or which temporary output it created or
    finished with (``temporary``/``done``): named or removed if MLIR crashes."""
    if _stage_fd is None:
        return
    lines = [(k, v) for k, v in (("F", file), ("D", doing), ("T", temporary), ("U", done)) if v]
    text = "".join(f"{k}\t{one_line(v, 500)}\n" for k, v in lines)
    with contextlib.suppress(OSError):
        os.write(_stage_fd, text.encode("utf-8", "replace"))


# in a child forked again after a --split-input-file chunk crashed the one before it:
# chunk index -> what ended it (the error of that chunk, in this child's output)
_resumed: dict[int, str] = {}
_spool: int | None = None  # the supervised children's file for the stdin they read


def chunk_started(index: int | None) -> str | None:
    """Tell the supervising parent that ``--split-input-file`` chunk ``index`` runs now
    (None: none does): if MLIR crashes the process inside it, the parent forks a new child
    that runs the command again and goes on after it. Returns what ended that chunk in an
    earlier child (the chunk's error, ``MLIR crashed the process (...) while ...``), or
    None: then run it. The chunks before the last one that crashed already wrote their
    output (see :func:`chunk_replayed`)."""
    if _stage_fd is not None:
        with contextlib.suppress(OSError):
            os.write(_stage_fd, f"C\t{'' if index is None else index}\n".encode())
    return None if index is None else _resumed.get(index)


def chunk_replayed(index: int) -> bool:
    """Whether chunk ``index`` is run again only for what the command sums over the chunks
    (statistics, timings, ``--verify-diagnostics``): an earlier child already wrote its
    output and its diagnostics; this run must write none of it."""
    return bool(_resumed) and index < max(_resumed)


def spooled_stdin(read: Callable[[], bytes]) -> bytes:
    """What ``read()`` (reading stdin) returns, kept for a child that runs the command
    again after a chunk crashed (stdin is consumed by then): that child gets it back
    without calling ``read``."""
    if _spool is None:
        return read()
    if _resumed:
        return os.pread(_spool, os.fstat(_spool).st_size, 0)
    data = read()
    try:
        kept = os.pwrite(_spool, data, 0) == len(data)
    except OSError:
        kept = False
    if not kept and _stage_fd is not None:  # no child can go on after a crash
        with contextlib.suppress(OSError):
            os.write(_stage_fd, b"N\t-\n")
    return data


@contextlib.contextmanager
def output_silenced() -> Iterator[None]:
    """Nothing written to stdout or stderr during the block (Python's or native code's)
    reaches them: for a chunk :func:`chunk_replayed`."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        for fd, copy in zip((1, 2), saved, strict=True):
            os.dup2(copy, fd)
            os.close(copy)
        os.close(null)


_FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # exits 130, 143, 129


class _Told:
    """What the supervised child last said through :func:`stage`."""

    def __init__(self) -> None:
        self.file = self.doing = ""
        self.chunk: int | None = None  # the --split-input-file chunk running
        self.resumable = True  # a new child can go on after a crash in a chunk
        self.temporaries: set[str] = set()
        self._pending = b""

    def take(self, chunk: bytes) -> None:
        *lines, self._pending = (self._pending + chunk).split(b"\n")
        for line in lines:
            key, _, value = line.decode("utf-8", "replace").partition("\t")
            if key == "F":
                self.file, self.doing = value, ""
            elif key == "D":
                self.doing = value
            elif key == "T":
                self.temporaries.add(value)
            elif key == "U":
                self.temporaries.discard(value)
            elif key == "C":
                self.chunk = int(value) if value else None
            elif key == "N":
                self.resumable = False


def _wait_for(pid: int, read_end: int) -> tuple[int, _Told, bool]:
    """The child's wait status, what it last told, and whether a stop signal came (passed
    on to it)."""
    stopped = False

    def forward(signum: int, frame: FrameType | None) -> None:
        nonlocal stopped
        stopped = True
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)

    for signum in _FORWARDED:
        signal.signal(signum, forward)
    told = _Told()
    pipe_open = True
    while True:
        if pipe_open and select.select([read_end], [], [], 0.5)[0]:
            chunk = os.read(read_end, 1 << 16)
            told.take(chunk)
            pipe_open = bool(chunk)  # at EOF the child is gone: wait for it below
            continue
        done, status = os.waitpid(pid, os.WNOHANG if pipe_open else 0)
        if done:
            break
    while pipe_open and select.select([read_end], [], [], 0)[0]:  # its last words
        chunk = os.read(read_end, 1 << 16)
        told.take(chunk)
        pipe_open = bool(chunk)
    return status, told, stopped


def _remove(paths: set[str]) -> None:
    for path in paths:
        with contextlib.suppress(OSError):
            os.unlink(path)


def _death_message(signum: int, told: _Told, fatal: str = "") -> str:
    """What killed the child (``signum``), and what it was doing then."""
    try:
        name = signal.Signals(signum).name
    except ValueError:
        name = f"signal {signum}"
    what = (
        f"the process was killed ({name}; by the kernel, if memory ran out)"
        if signum == signal.SIGKILL
        else f"MLIR crashed the process ({name}{': ' if fatal else ''}{fatal})"
    )
    return f"{what} while {told.doing}" if told.doing else what


def _died(signum: int, told: _Told, prog: str, fatal: str = "") -> int:
    """The exit code (and the one line) for a child killed by ``signum``."""
    _remove(told.temporaries)
    if signum in _FORWARDED:  # stopped, as the command would have been: quietly
        return 128 + signum
    if signum == signal.SIGPIPE:  # the reader of stdout went away: quietly
        return EXIT_FAILURE
    head = f"{told.file}: error: " if told.file else f"{prog}: error: "
    print(f"{head}{_death_message(signum, told, fatal)}", file=sys.stderr, flush=True)
    return EXIT_FAILURE


def one_line(value: object, limit: int | None = None) -> str:
    """``str(value)`` with every run of whitespace (newlines included) one space, cut to
    ``limit`` characters: how an error or a diagnostic becomes part of one stderr line."""
    text = " ".join(str(value).split())
    return text if limit is None else text[:limit]


class OneLineWarning(UserWarning):
    """A warning whose message is a whole diagnostic line (``FILE:LINE:COL: warning:
    ...``): the commands print it as it is, without Python's source line."""


def _one_line_warnings(show: Callable[..., None]) -> Callable[..., None]:
    """``warnings.showwarning`` printing a OneLineWarning as its line, others by ``show``."""

    def show_warning(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ANN001
        if issubclass(category, OneLineWarning):
            print(str(message), file=sys.stderr)
        else:
            show(message, category, filename, lineno, file, line)

    return show_warning


@contextlib.contextmanager
def one_line_warnings_recorded() -> Iterator[list[warnings.WarningMessage]]:
    """The OneLineWarnings raised inside (each one, every time), in the list it gives,
    filled when the block ends (also by an exception); other warnings are shown as usual."""
    kept: list[warnings.WarningMessage] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", OneLineWarning)
        try:
            yield kept
        finally:
            kept += [w for w in caught if issubclass(w.category, OneLineWarning)]
    for w in caught:
        if not issubclass(w.category, OneLineWarning):
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)


def _guarded(fn: Callable[[], int], prog: str, debug: bool) -> Callable[[], int]:
    def guarded() -> int:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("always", OneLineWarning)  # each input's, each time
                warnings.showwarning = _one_line_warnings(warnings.showwarning)
                return fn()
        except UsageError as err:
            if debug:
                traceback.print_exc()
            print(f"{prog}: error: {err}", file=sys.stderr)
            return EXIT_USAGE
        except KeyboardInterrupt:
            return EXIT_INTERRUPTED
        except BrokenPipeError:  # the reader went away (`... | head`): quietly
            quiet_stdout()
            return EXIT_FAILURE
        except Exception as err:  # a bug of ours: still one line
            if debug:
                traceback.print_exc()
            message = one_line(err, 500)
            print(
                f"{prog}: error: internal error: {type(err).__name__}: {message}", file=sys.stderr
            )
            return EXIT_FAILURE

    return guarded


def quiet_stdout() -> None:
    """After a broken pipe: point stdout at /dev/null so nothing more (and no error at
    interpreter exit) reaches the closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout closed or not a file
        pass


def _abandon(code: int) -> None:
    # A second Ctrl-C (the terminal's, after the supervising parent's) must not cut the
    # cleanup short.
    with contextlib.suppress(ValueError):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Whatever the worker thread prints from now on (an oracle it sees die, say) is not
    # the user's: stdout and stderr go to /dev/null before anything is stopped.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        for fd in (1, 2):
            os.dup2(devnull, fd)
    except OSError:
        pass
    for cleanup in reversed(_cleanups):
        try:
            cleanup()
        except Exception:  # best effort on the way out
            pass
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except Exception:  # best effort on the way out
            pass
    os._exit(code)


_TRUE, _FALSE = ("true", "1", "on", "yes"), ("false", "0", "off", "no")


class UsageError(Exception):
    """A command-line usage error (exit 2, one line)."""


def version() -> str:
    from importlib import metadata

    try:
        return metadata.version("penguin-opt")
    except metadata.PackageNotFoundError:  # running from a source tree
        return "unknown"


class _VersionAction(argparse.Action):
    """``--version``: print ``PROG VERSION`` and exit 0, the version read only then
    (importlib.metadata costs every other command tens of milliseconds at start)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:  # noqa: ANN401 - argparse's
        kwargs.setdefault("help", "show program's version number and exit")
        super().__init__(option_strings, dest=argparse.SUPPRESS, nargs=0, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None) -> NoReturn:  # noqa: ANN001
        # argparse's own version action prints so (a failing stdout falls back to stderr)
        parser._print_message(f"{parser.prog} {version()}\n", sys.stdout)
        parser.exit()


def add_version_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--version", action=_VersionAction)


def _bool(text: str) -> bool:
    lowered = text.lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise argparse.ArgumentTypeError(f"expected true/false or 1/0, got '{text}'")


class Parser(argparse.ArgumentParser):
    """argparse with mlir-opt's option spelling (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # noqa: ANN401 - ArgumentParser's
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        self._bare_values: dict[str, str] = {}  # option -> value when given without '='

    def error(self, message: str) -> NoReturn:  # one line, exit 2
        raise UsageError(message)

    def format_usage(self) -> str:
        return self._optional_values_shown(super().format_usage())

    def format_help(self) -> str:
        return self._optional_values_shown(super().format_help())

    def _optional_values_shown(self, text: str) -> str:
        """``--name[=VALUE]`` for the options whose value is optional (argparse shows
        ``--name VALUE``, as if one were needed, and a value goes only after '=')."""
        for name in sorted(self._bare_values, key=len, reverse=True):
            text = re.sub(rf"(?<![\w-]){re.escape(name)} ([^\s,\]]+)", rf"{name}[=\1]", text)
        return text

    def add_flag(
        self,
        name: str,
        help: str,
        *,
        default: bool = False,
        group: argparse._ArgumentGroup | None = None,
        dest: str | None = None,
    ) -> argparse.Action:
        """A boolean flag: ``--name`` or ``--name=true|false|1|0``."""
        return self.add_optional_value(
            name,
            "true",
            help=help,
            type=_bool,
            default=default,
            group=group,
            dest=dest,
            metavar="BOOL",
        )

    def add_optional_value(
        self,
        name: str,
        bare: str,
        *,
        group: argparse._ArgumentGroup | None = None,
        **kwargs: Any,  # noqa: ANN401 - add_argument's keywords, whatever they are
    ) -> argparse.Action:
        """``--name`` alone means ``--name=<bare>``; any other value only after '='."""
        self._bare_values[name] = bare
        kwargs.setdefault("metavar", "VALUE")
        return (group or self).add_argument(name, **kwargs)

    def parse_args(
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        return super().parse_args(self.normalize(list(args or [])), namespace)

    def take_flags(
        self, argv: list[str], wanted: Callable[[str], bool]
    ) -> tuple[list[str], list[tuple[str, str]]]:
        """Take out of ``argv`` the flags this parser does not know whose name (without
        its dashes, one or two) ``wanted`` accepts: (the other arguments, each taken flag
        as (name, the text after '=') in order). An option's value is never taken."""
        actions = self._option_string_actions
        rest: list[str] = []
        taken: list[tuple[str, str]] = []
        args = iter(argv)
        for arg in args:
            if arg == "--":
                rest += [arg, *args]
                break
            key, eq, value = arg.partition("=")
            if key[:1] != "-" or key in ("-", "--"):
                rest.append(arg)
                continue
            long = "-" + key if key[:2] != "--" else key
            action = actions.get(key) or actions.get(long)
            if action is not None:
                rest.append(arg)
                bare = key in self._bare_values or long in self._bare_values
                if not eq and not bare and action.nargs != 0:
                    rest.extend(itertools.islice(args, 1))  # the option's value
            elif wanted(key.lstrip("-")):
                taken.append((key.lstrip("-"), value))
            else:
                rest.append(arg)  # argparse's "unrecognized arguments"
        return rest, taken

    def normalize(self, argv: list[str]) -> list[str]:
        longs = {s for action in self._actions for s in action.option_strings if s[:2] == "--"}
        out: list[str] = []
        for index, arg in enumerate(argv):
            if arg == "--":
                out.extend(argv[index:])
                break
            if arg[:1] == "-" and arg[:2] != "--" and len(arg) > 2:
                candidate = "-" + arg
                if candidate.split("=", 1)[0] in longs:
                    arg = candidate
                elif getattr(self._option_string_actions.get(arg[:2]), "nargs", None) == 0:
                    # An unknown long option after one dash, not -h with a value.
                    self.error(f"unrecognized arguments: {arg}")
            if arg in self._bare_values:
                arg = f"{arg}={self._bare_values[arg]}"
            out.append(arg)
        return out


def _number(kind: type, what: str, *, positive: bool) -> Callable[[str], int | float]:
    """An argparse type: a finite ``kind`` (int or float) >= 0, or > 0 if ``positive``."""
    bound = "> 0" if positive else ">= 0"

    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got '{text}'") from None
        if not math.isfinite(value) or value < 0 or (positive and value == 0):
            raise argparse.ArgumentTypeError(f"expected {what} {bound}, got {text}")
        return value

    return parse


_non_negative_int = _number(int, "an integer", positive=False)
positive_int = _number(int, "an integer", positive=True)
_tolerance = _number(float, "a finite number", positive=False)
_positive_float = _number(float, "a finite number", positive=True)


def add_check_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("equivalence check")
    g.add_argument(
        "--seed", type=_non_negative_int, default=0, help="seed of the random inputs (default 0)"
    )
    g.add_argument("--trials", type=positive_int, default=2, help="random input sets (default 2)")
    g.add_argument(
        "--rtol",
        type=_tolerance,
        default=None,
        help="relative tolerance for float outputs (default: derived from the "
        "dtype and the largest reduction; exact for constant-fold-only runs)",
    )
    g.add_argument(
        "--atol",
        type=_tolerance,
        default=None,
        help="absolute tolerance, relative to each output's largest magnitude",
    )
    g.add_argument(
        "--oracle",
        choices=("auto", "interpreter", "xla", "both"),
        default="auto",
        help="StableHLO reference interpreter, XLA CPU, both, or auto (default: the "
        "interpreter for programs of up to 5,000,000 element operations, XLA above, where "
        "the interpreter checks again any difference XLA finds and decides; each falls "
        "back to the other when it cannot run the program; see the README)",
    )
    g.add_argument(
        "--inputs",
        metavar="NPZ",
        help="read inputs from an .npz (arg0, arg1, ...; optional leading trial axis)",
    )
    g.add_argument(
        "--dynamic-dim-size",
        type=positive_int,
        default=None,
        metavar="N",
        help="size of every dynamic dimension of @main's arguments in random inputs: the "
        "programs are specialized to it before they run (default: a dynamically shaped "
        "program is checkable only with --inputs, whose arrays give the sizes)",
    )
    g.add_argument(
        "--timeout",
        type=_positive_float,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help="seconds one oracle run may take before the program is reported "
        "not checkable; in a batch of several programs (penguin-opt), also the "
        "seconds each program may take in all, or it is a timeout "
        "(default %(default)g)",
    )
    g.add_argument(
        "--resize-nearest-grad-mode",
        choices=("mean", "sum"),
        default=None,
        help="meaning of ResizeNearestGrad custom calls (default: the pipeline's "
        "option, else mean)",
    )
