"""Many programs in one command: compile caches, dump directories, several inputs.

``penguin-opt IN [IN ...] -p PIPELINE -o OUTDIR``: every program found (a directory is
walked recursively; a torch-xla dump holds several) runs through the same pipeline with
the same flags, each in a worker process of its own (``--jobs N``), so that an LLVM abort or
a segfault is that program's ``error`` and the batch goes on; ``--timeout S`` bounds each
program. Outputs mirror the inputs' relative paths under OUTDIR. Progress is a bar on a
terminal and a line per program elsewhere; a summary table follows, and ``--report FILE``
writes every program's record as JSON. ``--executor dask://HOST:PORT`` runs the same work
on a dask.distributed cluster (the ``cluster`` extra).

Exit code: 3 if a program's results differ, else 1 if a program failed or timed out,
else 4 if one was not checkable, else 0. Files that are no program are listed as skipped
and never change the exit code.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import io
import json
import os
import queue
import stat
import sys
import threading
import time
import warnings
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, TextIO

from .cli_common import (
    EXIT_FAILURE,
    EXIT_MISMATCH,
    EXIT_NOT_CHECKABLE,
    EXIT_NOT_READY,
    EXIT_OK,
    UsageError,
    on_abandon,
    one_line,
    one_line_warnings_recorded,
    shown_name,
)

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Iterator

    from .diagnostics_check import Chunk
    from .io import Source
    from .passes.base import RunState

__all__ = ["STATUSES", "Job", "plan", "run_batch", "run_job"]

STATUSES = ("ok", "error", "mismatch", "not-checkable", "timeout")


@dataclass(frozen=True)
class Job:
    """One program of the batch: where it is read from and where its output goes."""

    input: str  # the file, as the user's path leads to it
    output: str  # the output file under OUTDIR
    graph: int | None = None  # its graph in a torch-xla dump
    graph_hash: str | None = None
    chunk: int | None = None  # its chunk of a text file run with --split-input-file
    unreadable: str | None = None  # a directory that could not be listed: why (its error)
    shown: str | None = None  # the input as the user named it, when ``input`` is not that
    shown_output: str | None = None

    @property
    def label(self) -> str:
        """The name as messages show it (see ``shown_name``)."""
        return shown_name(self.name)

    @property
    def name(self) -> str:
        """The program's name in the report: its path (as the user named it) and its
        graph or chunk."""
        path = self.shown or self.input
        if self.graph is not None:
            return f"{path}#graph{self.graph}"
        return path if self.chunk is None else f"{path}#chunk{self.chunk}"


@dataclass
class Record:
    """What the report says of one program."""

    input: str
    output: str | None
    status: str
    error: str | None = None
    statistics: dict = field(default_factory=dict)
    ops_before: int | None = None
    ops_after: int | None = None
    seconds: float = 0.0
    equivalence: dict | None = None
    diagnostics: list[str] = field(default_factory=list)
    readiness: list[dict] | None = None  # --penguin-readiness findings
    remarks: list[dict] | None = None  # --remarks*: every remark recorded
    remark_lines: list[str] = field(default_factory=list)  # the ones --remarks shows
    graph: int | None = None
    graph_hash: str | None = None
    chunk: int | None = None


# -- planning -------------------------------------------------------------------------


def plan(
    inputs: list[str], outdir: str, emit: str, split: str | None = None
) -> tuple[list[Job], list[tuple[str, str]]]:
    """The jobs for ``inputs`` (files and directories) and the files skipped, with why;
    ``split``: the ``--split-input-file`` marker (each chunk of a text file is a job).

    A file named on the command line is always a program (a failure is its error); in a
    directory, files that compile caches and dumps keep beside their programs (NEFFs,
    JSON, logs, LLVM IR, XLA's post-optimization modules, ...; see
    :func:`penguin_opt.formats.companion_reason`) and empty files are skipped.
    """
    from .emit import EMIT_SUFFIXES
    from .formats import companion_reason

    suffix = EMIT_SUFFIXES[emit]
    jobs: list[Job] = []
    skipped: list[tuple[str, str]] = []
    for path in inputs:
        if path == "-":
            raise UsageError("standard input cannot be one of several inputs")
        if os.path.isdir(path):
            for file, rel, why in _walk(path):
                if rel is None:  # a directory that cannot be listed: its programs are lost
                    jobs.append(Job(file, outdir, unreadable=why))
                    continue
                reason = why or companion_reason(os.path.basename(file))
                if reason is None and _is_empty(file):
                    reason = "an empty file"
                if reason is not None:
                    skipped.append((file, reason))
                else:
                    jobs.extend(_jobs_of(file, os.path.join(outdir, rel), suffix, split))
        else:
            out_stem = os.path.join(outdir, os.path.basename(path))
            jobs.extend(_jobs_of(path, out_stem, suffix, split))
    # a file named twice (or under two directories named) is one program: the first
    unique: dict[tuple, Job] = {}
    for job in jobs:
        unique.setdefault((os.path.realpath(job.input), job.graph, job.chunk), job)
    jobs = list(unique.values())
    inputs_read = {os.path.realpath(job.input) for job in jobs if job.unreadable is None}
    seen: dict[str, str] = {}
    for job in jobs:
        if job.unreadable is not None:
            continue
        if os.path.realpath(job.output) in inputs_read:
            raise UsageError(
                f"the output for '{job.label}' would overwrite the input "
                f"'{job.output}': choose another -o directory"
            )
        other = seen.setdefault(os.path.normpath(job.output), job.name)
        if other != job.name:
            raise UsageError(
                f"'{shown_name(other)}' and '{job.label}' would both be written to "
                f"'{job.output}': run them separately"
            )
    return jobs, list(dict.fromkeys(skipped))


def _walk(root: str) -> Iterator[tuple[str, str | None, str | None]]:
    """(path, path relative to ``root``, why it is no program or None) of every entry
    under ``root`` that is not a directory walked into, sorted: a FIFO, a device or a
    socket, a symbolic link to nothing, a symbolic link to a directory (not followed) and
    a hidden directory are no program; an entry that cannot be read (a directory that
    cannot be listed, a file in one that cannot be entered) comes as (its path, None,
    the error)."""
    errors: list[OSError] = []
    for dirpath, dirnames, filenames in os.walk(root, onerror=errors.append):
        yield from _unlisted(errors)
        walked = []
        for name in sorted(dirnames):
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                yield path, os.path.relpath(path, root), "a symbolic link to a directory"
            elif name.startswith("."):
                yield path, os.path.relpath(path, root), "a hidden directory"
            else:
                walked.append(name)
        dirnames[:] = walked
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            yield path, os.path.relpath(path, root), _no_program(path)
    yield from _unlisted(errors)


def _no_program(path: str) -> str | None:
    """Why the directory entry ``path`` (not a directory) is no program, or None; raises
    nothing: an entry that cannot be read is the job's error."""
    try:
        mode = os.stat(path).st_mode
    except OSError as err:
        if os.path.islink(path) and err.errno in (errno.ENOENT, errno.ELOOP):
            return "a symbolic link to nothing"
        return None  # (its job says why it cannot be read)
    if stat.S_ISREG(mode):
        return None
    return "not a regular file (a FIFO, a device or a socket)"


def _unlisted(errors: list[OSError]) -> Iterator[tuple[str, None, str]]:
    for err in errors:
        yield err.filename, None, f"cannot read the directory: {err.strerror or err}"
    errors.clear()


def _is_empty(path: str) -> bool:
    try:
        return os.path.getsize(path) == 0
    except OSError:
        return False


def _jobs_of(path: str, out_stem: str, suffix: str, split: str | None) -> list[Job]:
    """One job per program of ``path``: the graphs of a torch-xla dump; with ``split``,
    the chunks of a text file that has more than one; else the file. Only a regular file
    is looked into (a FIFO or a device is the worker's to read), and only its first MiB
    unless that is a dump or chunks are asked for."""
    from .formats import is_graph_dump, programs_in
    from .io import InputError, read_source

    whole = [Job(path, out_stem + suffix)]
    try:
        if not os.path.isfile(path):
            return whole
        with open(path, "rb") as f:
            head = f.read(1 << 20)
        if not is_graph_dump(head):
            return whole if split is None else _chunk_jobs(path, out_stem, suffix, split)
        source = read_source(path)
    except (OSError, InputError):
        return whole  # its error is the job's
    return [
        Job(path, f"{out_stem}.graph{p.graph}{suffix}", p.graph, p.graph_hash)
        for p in programs_in(source)
    ]


def _chunk_jobs(path: str, out_stem: str, suffix: str, split: str) -> list[Job]:
    """A job per chunk of text file ``path`` (one for the file if it has one chunk, or is
    no text: a binary program has no chunks)."""
    with open(path, "rb") as f:
        count = len(_split(f.read(), split))
    if count <= 1:
        return [Job(path, out_stem + suffix)]
    return [Job(path, f"{out_stem}.chunk{k}{suffix}", chunk=k) for k in range(count)]


def _split(data: bytes, split: str) -> list[Chunk]:
    """The ``split``-marked chunks of ``data``; none if it is no UTF-8 text."""
    from .diagnostics_check import split_chunks

    try:
        return split_chunks(data.decode("utf-8"), split)
    except UnicodeDecodeError:
        return []


# the chunks of the file this process split last, by what the file is then: each chunk of
# a file is a job, and the jobs of one file mostly reach the same worker in a row
_SPLIT: dict[tuple, list[Chunk]] = {}


def _chunk_source(job: Job, split: str) -> Source:
    """Chunk ``job.chunk`` of its file, padded so that MLIR's line numbers are the
    file's, named as the job (the file read and split once per worker, not per chunk)."""
    from .io import InputError, Source, read_source

    try:
        st = os.stat(job.input)
        key = (job.input, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, split)
    except OSError:
        key = None
    chunks = _SPLIT.get(key) if key else None
    if chunks is None:
        chunks = _split(read_source(job.input).data, split)
        _SPLIT.clear()
        if key:
            _SPLIT[key] = chunks
    if job.chunk is None or job.chunk >= len(chunks):
        raise InputError(f"{job.label}: error: the file changed: it has no such chunk now")
    return Source(job.label, chunks[job.chunk].program(several=True).text.encode())


# -- one program, in a worker process -------------------------------------------------

_PIPELINES: dict[tuple[str, str], object] = {}


def run_job(job: Job, args: argparse.Namespace) -> dict:
    """Run one program as ``penguin-opt`` would and write its output; the report record.

    Runs in a worker process: nothing is printed (diagnostics and the check's report go
    into the record)."""
    from .cli import _error_line, _resize_mode, _run_one
    from .formats import graph_format_error, programs_in
    from .io import Source, read_source, write_output
    from .passes.base import RunState
    from .pipeline import IRPrinting, Pipeline

    start = time.perf_counter()
    if job.unreadable is not None:
        return _failed(job, "error", f"{job.label}: error: {job.unreadable}")
    record = _record(job, "ok")
    state = RunState()
    texts: list[str] = []
    counts: dict[str, int] = {}
    caught: list[warnings.WarningMessage] = []
    try:
        if job.chunk is not None:
            source = _chunk_source(job, args.split_input_file)
        else:
            source = read_source(job.input)
        if job.graph is not None:
            source = programs_in(source)[job.graph].source
            error = graph_format_error(source, source.data.decode("utf-8"))
            if error is not None:
                raise error
        source = Source(job.label, source.data)
        key = (args.pipeline_text, args.verify_mode)
        pipeline = _PIPELINES.get(key)
        if pipeline is None and args.pipeline_text is not None:
            pipeline = _PIPELINES[key] = Pipeline(args.pipeline_text, verify=args.verify_mode)
        with one_line_warnings_recorded() as caught:  # the input's: into the record
            output = _run_one(
                args,
                pipeline,
                IRPrinting(),
                source,
                state,
                texts if args.check_equivalence else None,
                counts=counts,
                as_bytes=True,  # straight to the output file
            )
    except Exception as err:
        record.status, record.error = "error", _naming(job.label, _error_line(err, job.label))
        output = None
    record.statistics = state.statistics_dict()
    record.diagnostics = [  # each names the program (a location may name a .py file)
        *(_naming(job.label, str(w.message)) for w in caught),
        *(_naming(job.label, d.render(job.label)) for d in state.diagnostics),
    ]
    if args.penguin_readiness:
        record.readiness = [f.to_dict() for f in state.findings]
    if state.recorder is not None:
        from .cli import _remark_lines

        record.remarks = [r.to_dict() for r in state.recorder.remarks]
        record.remark_lines = _remark_lines(args, state)
    record.ops_before, record.ops_after = counts.get("before"), counts.get("after")
    if output is not None and args.check_equivalence:
        _check(record, texts, args, state, _resize_mode(pipeline), job.label)
    if output is not None and record.status == "ok":
        try:
            os.makedirs(os.path.dirname(job.output) or ".", exist_ok=True)
            write_output(job.output, output)
            record.output = job.shown_output or job.output
        except OSError as err:  # the directory could not be made
            reason = err.strerror or one_line(err)
            record.status = "error"
            record.error = f"{shown_name(job.output)}: error: cannot write output: {reason}"
        except Exception as err:  # OutputError: one line naming the output already
            record.status, record.error = "error", one_line(err)
    record.seconds = round(time.perf_counter() - start, 3)
    return asdict(record)


_RUNNER: queue.Queue | None = None
_RUNNER_LOCK = threading.Lock()


def run_job_deep(job: Job, args: argparse.Namespace) -> dict:
    """:func:`run_job` on this process's job thread, which has the command's 512 MiB stack
    (MLIR's parser and passes recurse per nesting level: a worker's main thread would die
    where a single run does not). One thread runs every job of the process, so that the
    oracle children its checks spawn (which die with the thread that spawned them) live
    from one program to the next."""
    global _RUNNER
    from .cli_common import STACK_BYTES

    with _RUNNER_LOCK:
        if _RUNNER is None:
            _RUNNER = queue.Queue()
            previous = threading.stack_size(STACK_BYTES)
            try:
                threading.Thread(
                    target=_run_jobs, args=(_RUNNER,), name="penguin-opt-jobs", daemon=True
                ).start()
            finally:
                threading.stack_size(previous)
    box: list = []
    finished = threading.Event()
    _RUNNER.put((job, args, box, finished))
    finished.wait()
    ok, value = box[0]
    if not ok:
        raise value
    return value


def _run_jobs(tasks: queue.Queue) -> None:
    while True:
        job, args, box, finished = tasks.get()
        try:
            box.append((True, run_job(job, args)))
        except BaseException as err:  # re-raised in the thread that asked
            box.append((False, err))
        finally:
            finished.set()


def _check(
    record: Record,
    texts: list[str],
    args: argparse.Namespace,
    state: RunState,
    resize_mode: str,
    name: str,
) -> None:
    """The check of a program (``name``, as messages show it) into its record: a
    mismatch's or a not-checkable's line names the program, as an error's does."""
    from .check_cli import run_check
    from .cli import _only_exact_rewrites, _xla_reorders

    buffer = io.StringIO()
    with contextlib.redirect_stderr(buffer):
        code = run_check(
            texts[0],
            texts[1],
            args,
            exact=_only_exact_rewrites(state),
            xla_reorders=_xla_reorders(state),
            resize_mode=resize_mode,
            progress=False,
        )
    lines = [line for line in buffer.getvalue().splitlines() if line.strip()]
    result = {EXIT_OK: "match", EXIT_MISMATCH: "mismatch", EXIT_NOT_CHECKABLE: "not-checkable"}.get(
        code, "error"
    )
    record.equivalence = {"result": result, "report": lines}
    if result != "match":
        record.status = {"match": "ok", "error": "error"}.get(result, result)
        record.error = f"{name}: {lines[-1] if lines else result}"


def run_job_isolated(job: Job, args: argparse.Namespace, timeout: float | None, kind: str) -> dict:
    """:func:`run_job` in the child process of ``kind``: a crash or a timeout is the
    program's record, never this process's end."""
    from . import isolated
    from .io import remove_temporaries

    start = time.perf_counter()
    _IN_FLIGHT.add(job.output)
    try:
        return isolated.call(kind, run_job_deep, job, args, timeout=timeout, stderr="watch")
    except isolated.ChildTimedOut:
        status, error = "timeout", f"{job.label}: error: timed out after {timeout:g} s"
    except isolated.ChildDied as died:
        why = died.reason or died.signal or "an LLVM abort or a crash"
        status = "error"
        error = f"{job.label}: error: the worker process died while processing this program ({why})"
    except isolated.Stopped:
        raise
    except Exception as err:
        status, error = "error", f"{job.label}: error: internal error: {one_line(err, 300)}"
    finally:
        _IN_FLIGHT.discard(job.output)
    remove_temporaries(job.output)  # the killed worker may have been writing it
    return _failed(job, status, error, time.perf_counter() - start)


def _failed(job: Job, status: str, error: str, seconds: float = 0.0) -> dict:
    """The record of a job whose worker gave none (it died, timed out, or failed)."""
    record = _record(job, status, error)
    record.seconds = round(seconds, 3)
    return asdict(record)


def _naming(label: str, line: str) -> str:
    """An error line that names the program: as it is when it starts with the program's
    name, else after it (a location can name another file: the Python source that
    optimized HLO's metadata points at, say)."""
    return line if line.startswith(f"{label}:") else f"{label}: {line}"


def _record(job: Job, status: str, error: str | None = None) -> Record:
    """A new record of ``job``: its name, graph and chunk."""
    return Record(
        job.name, None, status, error, graph=job.graph, graph_hash=job.graph_hash, chunk=job.chunk
    )


_IN_FLIGHT: set[str] = set()  # outputs whose worker is running


@on_abandon
def _remove_in_flight_temporaries() -> None:
    """On SIGINT/SIGTERM the workers are killed: remove what they were writing."""
    from .io import remove_temporaries

    for path in list(_IN_FLIGHT):
        remove_temporaries(path)


def program_timeout(args: argparse.Namespace) -> float:
    """What ``--timeout`` allows one program of a batch: that much for reading it and its
    passes, and as much again for each oracle run its check may make (two programs, each
    trial, an XLA verdict re-decided by the interpreter), so that a slow oracle is the
    check's ``not-checkable``, as in a single run, not the program's ``timeout``."""
    runs = 2 * 2 * max(1, args.trials) if args.check_equivalence else 0
    return args.timeout * (1 + runs)


def _absolute(job: Job) -> Job:
    return dataclasses.replace(
        job,
        input=os.path.abspath(job.input),
        output=os.path.abspath(job.output),
        shown=job.shown or job.input,
        shown_output=job.shown_output or job.output,
    )


def _dask_task(job: Job, args: argparse.Namespace, timeout: float | None) -> dict:
    """A program on a dask worker: in a child of the worker if the worker may have
    children (a daemonic worker may not: then in the worker itself)."""
    import multiprocessing

    if multiprocessing.current_process().daemon:
        return run_job_deep(job, args)
    return run_job_isolated(job, args, timeout, f"batch-{threading.get_ident()}")


# -- the batch ------------------------------------------------------------------------


_TRACKER_LEAKS = "ignore::UserWarning:multiprocessing.resource_tracker"


def _quiet_resource_tracker() -> None:
    """A worker that dies (MLIR crashed it) leaves the semaphores of the oracle pools it
    ran registered with multiprocessing's resource tracker, which removes them at the end
    and says so in a warning after the summary ("There appear to be 10 leaked semaphore
    objects"): ignored, by the ``-W`` flags the tracker process is started with (those of
    ``sys.warnoptions`` when it starts, with the batch's first pool)."""
    if _TRACKER_LEAKS not in sys.warnoptions:
        sys.warnoptions.append(_TRACKER_LEAKS)


def run_batch(jobs: list[Job], skipped: list[tuple[str, str]], args: argparse.Namespace) -> int:
    """Run ``jobs``, show progress and the summary, write the report; the exit code."""
    start = time.perf_counter()
    progress = Progress(len(jobs), sys.stderr)
    for path, reason in skipped:
        progress.write(f"skipped {shown_name(path)}: {reason}")
    records: list[dict | None] = [None] * len(jobs)

    def done(index: int, record: dict) -> None:
        records[index] = record
        progress.finished(record)

    _quiet_resource_tracker()
    executor = args.executor or "local"
    if executor == "local":
        _run_local(jobs, args, done)
    elif executor.startswith("dask://"):
        _run_dask(jobs, args, done, executor[len("dask://") :])
    else:  # pragma: no cover - the parser refuses other values
        raise UsageError(f"--executor: unknown executor '{executor}'")
    progress.close()
    finished = [r for r in records if r is not None]
    summary = summarize(finished, skipped, time.perf_counter() - start, args.penguin_readiness)
    print_summary(summary, finished, sys.stderr)
    from .io import OutputError, write_output

    try:
        if args.remarks_file:
            _write_remarks_file(args.remarks_file, finished)
        if args.pass_statistics_json:
            statistics = json.dumps(summed_statistics(finished), indent=2) + "\n"
            write_output(args.pass_statistics_json, statistics)
        if args.report:
            payload = {
                "programs": finished,
                "skipped": [{"input": p, "reason": r} for p, r in skipped],
                "summary": summary,
            }
            write_output(args.report, json.dumps(payload, indent=2) + "\n")
    except OutputError as err:
        print(str(err), file=sys.stderr)
        return EXIT_FAILURE
    return summary["exit_code"]


def _write_remarks_file(path: str, records: list[dict]) -> None:
    """Every program's remarks in one file (JSON or YAML, as for one program)."""
    from .io import write_output
    from .remarks import Remark, remarks_yaml

    if path.endswith(".json"):
        rows = [{"input": r["input"], **m} for r in records for m in r.get("remarks") or ()]
        write_output(path, json.dumps(rows, indent=2) + "\n")
        return
    fields = {f for f in Remark.__dataclass_fields__}
    remarks = [
        Remark(**{k: v for k, v in m.items() if k in fields})
        for r in records
        for m in r.get("remarks") or ()
    ]
    write_output(path, remarks_yaml(remarks))


def _run_local(
    jobs: list[Job], args: argparse.Namespace, done: Callable[[int, dict], None]
) -> None:
    """``--jobs`` threads, each feeding one long-lived worker process of its own."""
    work: queue.Queue = queue.Queue()
    for item in enumerate(jobs):
        work.put(item)
    count = max(1, min(args.jobs, len(jobs)))
    lock = threading.Lock()
    failures: list[BaseException] = []

    def worker(number: int) -> None:
        from . import isolated

        kind = f"batch-{number}"
        try:
            while True:
                try:
                    index, job = work.get_nowait()
                except queue.Empty:
                    return
                record = run_job_isolated(job, args, program_timeout(args), kind)
                with lock:
                    done(index, record)
        except BaseException as err:  # Stopped (the command is being stopped), ...
            failures.append(err)
        finally:
            isolated.close(kind)  # before this thread ends: its child would die with it

    threads = [threading.Thread(target=worker, args=(n,), daemon=True) for n in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        raise failures[0]


def _run_dask(
    jobs: list[Job], args: argparse.Namespace, done: Callable[[int, dict], None], address: str
) -> None:
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise UsageError(
            "--executor dask://... needs dask.distributed: pip install 'penguin-opt[cluster]'"
        ) from None
    try:
        client = Client(f"tcp://{address}", timeout=30)
    except Exception as err:
        raise UsageError(
            f"--executor: cannot reach the dask scheduler at {address}: {one_line(err, 200)}"
        ) from None
    with client:
        # The workers resolve paths from their own working directory: give them absolute
        # paths (the cluster must share the filesystem the inputs and -o are on).
        futures = {
            client.submit(_dask_task, _absolute(job), args, program_timeout(args), pure=False): (
                i,
                job,
            )
            for i, job in enumerate(jobs)
        }
        for future in as_completed(futures):
            index, job = futures[future]
            try:
                record = future.result()
            except Exception as err:  # KilledWorker (the worker died with it), ...
                record = _failed(
                    job,
                    "error",
                    f"{job.label}: error: the dask task failed: "
                    f"{type(err).__name__}: {one_line(err, 300)}",
                )
            done(index, record)


# -- progress and the summary ---------------------------------------------------------


class Progress:
    """A progress bar (tqdm) on a terminal, else one line per finished program."""

    def __init__(self, total: int, stream: TextIO) -> None:
        self.total, self.count, self.stream = total, 0, stream
        self.bar = None
        if _is_terminal(stream):
            from tqdm import tqdm

            self.bar = tqdm(
                total=total, file=stream, unit="program", dynamic_ncols=True, leave=False
            )

    def write(self, line: str) -> None:
        if self.bar is not None:
            self.bar.write(line, file=self.stream)
        else:
            print(line, file=self.stream, flush=True)

    def finished(self, record: dict) -> None:
        self.count += 1
        line = f"[{self.count}/{self.total}] {record['status']:<13} {describe(record)}"
        for extra in (*(record.get("diagnostics") or ()), *(record.get("remark_lines") or ())):
            self.write(extra)
        if self.bar is not None:
            if record["status"] != "ok":
                self.write(line)
            self.bar.set_postfix_str(os.path.basename(record["input"]), refresh=False)
            self.bar.update(1)
        else:
            self.write(line)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def describe(record: dict) -> str:
    if record["status"] != "ok":
        return record.get("error") or shown_name(record["input"])
    rewritten = sum(st["rewritten"] for per in record["statistics"].values() for st in per.values())
    ops = (
        f"{record['ops_before']:,} -> {record['ops_after']:,} ops, "
        if record.get("ops_before") is not None
        else ""
    )
    check = record.get("equivalence")
    checked = f", results {check['result']}" if check else ""
    return (
        f"{shown_name(record['input'])} -> {shown_name(record['output'])} "
        f"({ops}{rewritten:,} rewrite{'s' * (rewritten != 1)}"
        f"{checked}, {record['seconds']:.1f} s)"
    )


def summed_statistics(records: list[dict]) -> dict:
    """The programs' statistics summed, pass by pass and rewriter by rewriter."""
    total: dict = {}
    for r in records:
        for pass_name, per in r["statistics"].items():
            into_pass = total.setdefault(pass_name, {})
            for rewriter, st in per.items():
                into = into_pass.setdefault(rewriter, {"matched": 0, "rewritten": 0, "skipped": {}})
                into["matched"] += st["matched"]
                into["rewritten"] += st["rewritten"]
                for reason, n in st["skipped"].items():
                    into["skipped"][reason] = into["skipped"].get(reason, 0) + n
    for per in total.values():
        for st in per.values():
            st["skipped"] = dict(sorted(st["skipped"].items()))
    return total


def summarize(records: list[dict], skipped: list, seconds: float, mode: str | None = None) -> dict:
    statuses = Counter(r["status"] for r in records)
    rewriters: dict[str, dict[str, int]] = {}
    for r in records:
        for per in r["statistics"].values():
            for name, st in per.items():
                total = rewriters.setdefault(name, {"matched": 0, "rewritten": 0, "skipped": 0})
                total["matched"] += st["matched"]
                total["rewritten"] += st["rewritten"]
                total["skipped"] += sum(st["skipped"].values())
    summary = {
        "programs": len(records),
        **{status: statuses.get(status, 0) for status in STATUSES},
        "skipped_files": len(skipped),
        "ops_before": sum(r["ops_before"] or 0 for r in records),
        "ops_after": sum(r["ops_after"] or 0 for r in records),
        "rewriters": rewriters,
        "seconds": round(seconds, 3),
    }
    every = [f for r in records for f in r.get("readiness") or ()]
    findings = Counter(f["kind"] for f in every if not f["hazard"])
    hazards = Counter(f["kind"] for f in every if f["hazard"])
    if findings:
        summary["readiness"] = dict(sorted(findings.items()))
    if hazards:  # (never a refusal: a single run's summary counts them apart too)
        summary["readiness_hazards"] = dict(sorted(hazards.items()))
    refused = bool(findings)
    summary["exit_code"] = exit_code(statuses, not_ready=refused and mode == "error")
    return summary


def exit_code(statuses: Counter, *, not_ready: bool = False) -> int:
    """3 (a mismatch) over 1 (an error or timeout) over 5 (``--penguin-readiness=error``
    and an op Neuron would refuse) over 4 (not checkable) over 0."""
    if statuses.get("mismatch"):
        return EXIT_MISMATCH
    if statuses.get("error") or statuses.get("timeout"):
        return EXIT_FAILURE
    if not_ready:
        return EXIT_NOT_READY
    if statuses.get("not-checkable"):
        return EXIT_NOT_CHECKABLE
    return EXIT_OK


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' * (n != 1)}"


def print_summary(summary: dict, records: list[dict], stream: TextIO) -> None:
    counts = ", ".join(f"{summary[s]} {s}" for s in STATUSES)
    print(
        f"penguin-opt: {_count(summary['programs'], 'program')}: {counts}; "
        f"{_count(summary['skipped_files'], 'file')} skipped; {summary['seconds']:.1f} s",
        file=stream,
    )
    print(f"  ops: {summary['ops_before']:,} before, {summary['ops_after']:,} after", file=stream)
    if summary["rewriters"]:
        width = max(len(n) for n in summary["rewriters"])
        print(
            f"  {'rewriter':<{width}}  {'matched':>9}  {'rewritten':>9}  {'skipped':>9}",
            file=stream,
        )
        for name, st in summary["rewriters"].items():
            print(
                f"  {name:<{width}}  {st['matched']:>9,}  {st['rewritten']:>9,}  "
                f"{st['skipped']:>9,}",
                file=stream,
            )
    if summary.get("readiness") or summary.get("readiness_hazards"):
        parts = [
            f"{what}: " + ", ".join(f"{k} {n:,}" for k, n in summary[key].items())
            for what, key in (("findings", "readiness"), ("hazards", "readiness_hazards"))
            if summary.get(key)
        ]
        print(f"  penguin readiness (the report has each) {'; '.join(parts)}", file=stream)
    for r in records:
        if r["status"] != "ok":
            # an error line says what it is ("X: error: ...", "X: equivalence: MISMATCH")
            print(f"  {r.get('error') or r['status'] + ': ' + r['input']}", file=stream)
