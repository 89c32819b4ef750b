"""Bad input, one class per test: the promises hold (see support.hostile).

Every case asserts the documented exit code, exactly one stderr line for an error
(warnings and remarks aside), no traceback, no death by signal, no file left at the
output path after a failure, and the input untouched.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from support.hostile import ROOT, assert_kept_promises, assert_one_line_error, error_lines, run
from support.programs import MALFORMED_DYNAMIC_CONV

import penguin_opt
from penguin_opt import equivalence

EXAMPLE = ROOT / "examples" / "argsort_model.mlir"

ADD = """func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.add %a, %a : tensor<3xf32>
  return %0 : tensor<3xf32>
}
"""
TWO_RESULTS = """func.func @main(%a: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0 = stablehlo.add %a, %a : tensor<3xf32>
  return %0, %a : tensor<3xf32>, tensor<3xf32>
}
"""
FOREVER = """func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.while(%it = %x) : tensor<f32>
    cond {
      %t = stablehlo.constant dense<true> : tensor<i1>
      stablehlo.return %t : tensor<i1>
    } do {
      %y = stablehlo.add %it, %it : tensor<f32>
      stablehlo.return %y : tensor<f32>
    }
  return %0 : tensor<f32>
}
"""


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def nested_case(depth: int) -> str:
    head = "func.func @main(%i: tensor<i32>, %x: tensor<f32>) -> tensor<f32> {\n"
    body = "".join(f'  %r{d} = "stablehlo.case"(%i) ({{\n' for d in range(depth))
    body += "    stablehlo.return %x : tensor<f32>\n"
    for d in reversed(range(depth)):
        body += "  }) : (tensor<i32>) -> tensor<f32>\n"
        if d:
            body += f"    stablehlo.return %r{d} : tensor<f32>\n"
    return head + body + "  return %r0 : tensor<f32>\n}\n"


def failed_without_output(proc, out: Path, code: int, needle: str) -> None:
    assert_one_line_error(proc, code, needle)
    assert not out.exists()
    assert not list(out.parent.glob(".penguin-opt-*"))


# ----------------------------------------------------------------------- signals


def test_deep_nesting_runs_where_the_main_thread_stack_crashed(tmp_path):
    src = write(tmp_path, "deep.mlir", nested_case(3000))  # ~2,040 levels crashed before
    before = src.read_bytes()
    proc = run(
        src, "-p", "inline,stablehlo-canonicalize-for-penguin,cse", "-o", tmp_path / "out.mlir"
    )
    assert_kept_promises(proc, codes=(0,))
    assert src.read_bytes() == before


@pytest.mark.parametrize(
    "text",
    [
        "func.func @main() attributes {a = " + "[" * 12000 + "]" * 12000 + "} {\n  return\n}\n",
        nested_case(5200),
    ],
    ids=["array-attribute", "nested-case"],
)
def test_nesting_beyond_the_limit_is_one_line(tmp_path, text):
    src = write(tmp_path, "deep.mlir", text)
    out = tmp_path / "out.mlir"
    proc = run(src, "-p", "cse", "-o", out)
    failed_without_output(proc, out, 1, "levels deep, more than the 10000")


def _lexed_depth(data: bytes, *, hlo: bool = False) -> tuple[int, bool]:
    """What the parser reaches, spelled out byte by byte as MLIR's lexer (or, ``hlo``,
    XLA's) reads text: (the deepest nesting before the first lexical error, whether there
    was none). Strings with backslash escapes (an MLIR string may not span a line; a
    backslash outside a string is an error), `//`
    comments to a newline or a carriage return, HLO's `/* */` comments; brackets
    ``([{<`` (HLO: ``([{``), `->` no bracket, a closing bracket with none open (an error
    for the parser) counted as nothing."""
    opens, closes = (b"([{", b")]}") if hlo else (b"([{<", b")]}>")
    depth = deepest = i = 0
    while i < len(data):
        if data[i] == ord('"'):
            i += 1
            while i < len(data) and data[i] != ord('"'):
                if data[i] == ord("\n") and not hlo:
                    return deepest, False
                i += 2 if data[i] == ord("\\") else 1
            if i >= len(data):
                return deepest, False
        elif data[i] == ord("\\"):  # only a string's escapes have one
            return deepest, False
        elif data[i : i + 2] == b"//":
            while i < len(data) and data[i] not in b"\r\n":
                i += 1
        elif hlo and data[i : i + 2] == b"/*":
            end = data.find(b"*/", i + 2)
            if end < 0:
                return deepest, False
            i = end + 1
        elif not hlo and data[i : i + 2] == b"->":
            i += 1
        elif data[i] in opens:
            depth += 1
            deepest = max(deepest, depth)
        elif data[i] in closes:
            depth = max(depth - 1, 0)
        i += 1
    return deepest, True


@settings(max_examples=600, deadline=None)
@given(
    data=st.lists(st.sampled_from(list(b'(({<}])>"\\x/-\n\r*')), max_size=120).map(bytes),
    chunk=st.sampled_from([1, 2, 3, 7, 64, 1 << 20]),
    hlo=st.booleans(),
)
# a chunk that starts with a quote the previous chunk's last byte escapes
@example(data=b'\\"(', chunk=1, hlo=False)
@example(data=b'x\\"(', chunk=2, hlo=False)
@example(data=b'"(\\"', chunk=3, hlo=False)
@example(data=b"// ((\n(", chunk=1, hlo=False)
@example(data=b'"//(" (\n// "\n((', chunk=2, hlo=False)
@example(data=b"// c\r(((((x)))))\n//", chunk=7, hlo=False)  # \r ends a comment
@example(data=b'x"x)//[\r//"[[//(', chunk=5, hlo=False)  # a string may hold a \r
@example(data=b'"\\\\" (( // ((', chunk=3, hlo=False)  # an escaped backslash
@example(data=b"/* // */ (((((x)))))", chunk=4, hlo=True)  # HLO's block comment
@example(data=b"<<<->>>", chunk=1, hlo=False)  # an arrow's > closes nothing
@example(data=b">>>(((", chunk=2, hlo=False)  # nor does a stray one
def test_nesting_depth_never_falls_short_of_the_parser(data, chunk, hlo):
    """The guard may count more than the parser reaches (after a lexical error it stops
    while the guard goes on), never less: less lets a deep file through to a crash. On
    text without lexical errors it counts exactly that. (Reviews found comments, `\r`,
    `<`, escaped backslashes and HLO's block comments each hiding brackets once.)"""
    from penguin_opt.io import nesting_depth

    reached, clean = _lexed_depth(data, hlo=hlo)
    measured = nesting_depth(data, chunk, hlo=hlo)
    assert measured >= reached
    if clean:
        assert measured == reached


def test_comments_with_brackets_are_not_nesting(tmp_path):
    lines = "".join(f"  // step {i}: this is sad :( (see [{i}\n" for i in range(10_001))
    src = write(tmp_path, "sad.mlir", f"module {{\n{lines}}}\n")
    proc = run(src, "-o", tmp_path / "out.mlir")
    assert proc.returncode == 0, proc.stderr


def test_native_pass_abort_is_one_line(tmp_path):
    """jaxlib up to 0.10.2 aborts in this conversion (LLVM ERROR); 0.12 rejects the op."""
    src = write(tmp_path, "conv.mlir", MALFORMED_DYNAMIC_CONV)
    out = tmp_path / "out.mlir"
    proc = run(src, "-p", "hlo-legalize-to-stablehlo", "-o", out)
    failed_without_output(proc, out, 1, "conv.mlir")
    line = error_lines(proc)[0]
    assert (
        "hlo-legalize-to-stablehlo aborted the process (LLVM ERROR" in line
        or "'stablehlo.dynamic_conv' op operand #2" in line
    ), line


def _long_module(tmp_path: Path) -> Path:
    """150,000 broadcast_in_dim ops of a non-constant: every for-penguin pass visits each
    one in Python (replaceBroadcastInDimWithConstants' root, skipped)."""
    lines = [
        "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {",
        "  %v0 = stablehlo.add %a, %a : tensor<4xf32>",
    ]
    lines += [
        f"  %v{i} = stablehlo.broadcast_in_dim %v{i - 1}, dims = [0] : "
        "(tensor<4xf32>) -> tensor<4xf32>"
        for i in range(1, 150_000)
    ]
    lines += ["  return %v149999 : tensor<4xf32>", "}"]
    return write(tmp_path, "long.mlir", "\n".join(lines) + "\n")


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
@pytest.mark.parametrize("stage", ["passes", "check"])
def test_interrupted_run_exits_quietly_without_output(tmp_path, sig, code, stage):
    """Stopped while the passes (Python walk callbacks included) run, or while the checker
    waits for its oracles: the exit code of the signal, nothing printed, no output."""
    out = tmp_path / "out.mlir"
    if stage == "passes":
        src = _long_module(tmp_path)
        args = ["-p", ",".join(["stablehlo-canonicalize-for-penguin"] * 40)]
    else:
        src = write(tmp_path, "forever.mlir", FOREVER)
        args = ["-p", "cse", "--check-equivalence", "--timeout", "100"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "penguin_opt", src, *args, "-o", out],
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=ROOT,
    )
    time.sleep(4)  # parsing done, passes or oracles under way
    assert proc.poll() is None, "finished before the signal: make the work longer"
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err.decode()[-500:]
    # nothing but the checker's progress lines ("equivalence: ..., 3 s")
    assert all(
        re.fullmatch(r"equivalence: .*, \d+ s", line) for line in err.decode().splitlines()
    ), err.decode()
    assert not out.exists()
    assert not list(tmp_path.glob(".penguin-opt-*"))


@pytest.mark.parametrize(
    ("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)]
)
def test_a_signal_at_any_moment_of_the_start_is_quiet(tmp_path, sig, code):
    """A terminal's Ctrl-C reaches the whole process group, at any moment: while Python
    imports the command and jaxlib (a KeyboardInterrupt traceback; a SIGTERM killed the
    process), or once the supervising parent and its child both run (the child got the
    signal twice and the second cut its cleanup short). Always the signal's exit code,
    nothing printed."""
    early = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from penguin_opt import launch; launch._early_signals(); print('in', flush=True);"
            " import penguin_opt.cli, jaxlib.mlir.ir, time; time.sleep(60)",
        ],
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=ROOT,
    )
    assert early.stdout.readline() == b"in\n"  # the entry point's first step is done
    early.send_signal(sig)
    _, err = early.communicate(timeout=60)
    assert (early.returncode, err) == (code, b"")
    src = write(tmp_path, "in.mlir", EXAMPLE.read_text())
    for delay in (0.2, 0.4, 0.7, 1.0):
        proc = subprocess.Popen(
            [sys.executable, "-m", "penguin_opt", src, "-p", "cse", "-o", tmp_path / "o.mlir"],
            stderr=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=ROOT,
            start_new_session=True,
        )
        time.sleep(delay)
        with contextlib.suppress(ProcessLookupError):  # finished already
            os.killpg(proc.pid, sig)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode in (code, 0), (delay, proc.returncode, err.decode()[-800:])
        assert err == b"", (delay, err.decode()[-800:])


# ----------------------------------------------------------------------- the checker


@pytest.mark.parametrize(("before", "after"), [(ADD, TWO_RESULTS), (TWO_RESULTS, ADD)])
def test_checker_different_outputs_are_a_mismatch(tmp_path, before, after):
    a, b = write(tmp_path, "a.mlir", before), write(tmp_path, "b.mlir", after)
    proc = run(a, b, tool="penguin_opt.check_cli")
    assert proc.returncode == 3, proc.stderr
    assert b"the results differ" in proc.stderr
    assert b"Traceback" not in proc.stderr


@pytest.mark.parametrize(
    "flag",
    [
        ["--trials", "0"],
        ["--rtol", "-1"],
        ["--rtol", "nan"],
        ["--atol", "inf"],
        ["--seed", "-1"],
        ["--timeout", "0"],
        ["--trials", "x"],
    ],
)
def test_checker_numeric_options_are_validated(tmp_path, flag):
    a = write(tmp_path, "a.mlir", ADD)
    assert_one_line_error(run(a, a, *flag, tool="penguin_opt.check_cli"), 2, flag[0])
    assert_one_line_error(run(a, "-p", "cse", "--check-equivalence", *flag), 2, flag[0])


def test_checker_api_validates_too():
    for kwargs in (
        {"trials": 0},
        {"rtol": -1.0},
        {"atol": float("nan")},
        {"seed": -1},
        {"timeout": 0},
    ):
        with pytest.raises(ValueError, match="must be"):
            equivalence.check(ADD, ADD, **kwargs)


HUGE = """func.func @main(%a: tensor<100000x100000xi8>) -> tensor<i32> {
  %0 = stablehlo.get_dimension_size %a, dim = 0 : (tensor<100000x100000xi8>) -> tensor<i32>
  return %0 : tensor<i32>
}
"""


@pytest.mark.parametrize(
    ("text", "flags"),
    [
        (HUGE, ()),
        (HUGE.replace("100000x100000", "?x100000"), ("--dynamic-dim-size", "100000000000")),
        (HUGE.replace("100000x100000", "?x100000"), ("--dynamic-dim-size", "9" * 20)),
    ],
)
def test_checker_inputs_beyond_memory_are_not_checkable(tmp_path, text, flags):
    """Were "internal error: MemoryError" (or numpy's dimension ValueError), exit 1."""
    a = write(tmp_path, "a.mlir", text)
    for proc in (
        run(a, a, *flags, tool="penguin_opt.check_cli"),
        run(a, "-p", "stablehlo-canonicalize-for-penguin", "--check-equivalence", *flags),
    ):
        assert proc.returncode == 4, proc.stderr
        assert len(error_lines(proc)) == 1, proc.stderr
        assert b"more than half of the memory here" in proc.stderr, proc.stderr
        assert b"internal error" not in proc.stderr


def test_a_notes_whole_function_is_cut_in_the_error_line(tmp_path):
    """MLIR's "see current operation" note of a native pass on func.func printed the whole
    function in the one line (27 KB for a Keras training step, outside tester F)."""
    body = "".join(f"  %{i + 1} = stablehlo.add %{i}, %{i} : tensor<3xf32>\n" for i in range(300))
    text = (
        "func.func @main(%0: tensor<3xf32>) -> tensor<3xf32> {\n"
        f"{body}  return %300 : tensor<3xf32>\n}}\n"
    )
    a = write(tmp_path, "a.mlir", text)
    types = "{types='tensor<3xf32>,tensor<3xf32>'}"
    line = assert_one_line_error(run(a, "-p", f"stablehlo-refine-arguments{types}"), 1, "a.mlir")
    assert "(note: see current operation: " in line, line
    assert line.endswith(" ...)"), line
    assert len(line) < len(str(a)) + 500, len(line)


def test_checker_timeout_is_not_checkable(tmp_path):
    a = write(tmp_path, "a.mlir", FOREVER)
    proc = run(a, a, "--timeout", "2", tool="penguin_opt.check_cli")
    assert proc.returncode == 4, proc.stderr
    assert b"did not finish within 2 s" in proc.stderr


def _wait_for_cpu(pid: int, seconds: float, deadline: float = 120) -> None:
    """Until process ``pid`` has used ``seconds`` of CPU time (or ``deadline`` wall
    seconds have passed)."""
    tick = os.sysconf("SC_CLK_TCK")
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        if (int(fields[11]) + int(fields[12])) / tick >= seconds:  # utime + stime
            return
        time.sleep(0.02)


def _children(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return [int(x) for x in out.split()]


def _descendants(pid: int) -> list[int]:
    """Children, their children, and so on (the command's supervised child first)."""
    found, todo = [], [pid]
    while todo:
        kids = _children(todo.pop(0))
        found += kids
        todo += kids
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize(
    ("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGKILL, -9)]
)
def test_checker_stopped_by_a_signal_leaves_no_process(tmp_path, sig, code):
    a = write(tmp_path, "a.mlir", FOREVER)
    proc = subprocess.Popen(
        [sys.executable, "-m", "penguin_opt.check_cli", a, a, "--timeout", "100"],
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=ROOT,
    )
    deadline = time.time() + 60
    # the supervised child and its two oracle children, running the endless loop
    while time.time() < deadline and len(_descendants(proc.pid)) < 3:
        time.sleep(0.2)
    time.sleep(1.0)
    children = _descendants(proc.pid)
    assert children
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code
    if sig != signal.SIGKILL:  # (after SIGKILL multiprocessing's tracker may still warn)
        assert err == b""
    deadline = time.time() + 10
    while time.time() < deadline and any(_alive(c) for c in children):
        time.sleep(0.2)
    assert not [c for c in children if _alive(c)]


def test_oracle_child_exception_is_not_checkable():
    from support.oracle_children import raise_memory_error

    with pytest.raises(equivalence.NotCheckable, match="MemoryError"):
        equivalence._run_child("test-memory-error", raise_memory_error, ADD, [])


@pytest.mark.parametrize(
    ("name", "content", "needle"),
    [
        ("missing.npz", None, "No such file"),
        ("wrong.npz", "wrong-keys", "no array arg0"),
        ("extra.npz", "extra-key", "array arg9 is no argument"),
        ("text.npz", b"hello", "not an .npz archive"),
        ("array.npy", "npy", "an .npy array"),
    ],
)
def test_checker_bad_inputs_file_is_one_line(tmp_path, name, content, needle):
    a = write(tmp_path, "a.mlir", ADD)
    path = tmp_path / name
    if content == "wrong-keys":
        np.savez(path, x=np.zeros(3, np.float32))
    elif content == "extra-key":  # (a stray array was ignored silently; the API refused)
        np.savez(path, arg0=np.zeros(3, np.float32), arg9=np.zeros(3))
    elif content == "npy":
        np.save(path, np.zeros(3))
        path = tmp_path / "array.npy"
    elif content is not None:
        path.write_bytes(content)
    assert_one_line_error(run(a, a, "--inputs", path, tool="penguin_opt.check_cli"), 1, needle)


# ----------------------------------------------------------------------- writing output


@pytest.mark.parametrize("where", ["missing/out.mlir", "file/out.mlir", "adir"])
def test_failed_writes_are_one_line(tmp_path, where):
    (tmp_path / "file").write_text("x")
    (tmp_path / "adir").mkdir()
    assert_one_line_error(
        run(EXAMPLE, "-p", "cse", "-o", tmp_path / where), 1, "cannot write output"
    )


def test_writes_into_proc_and_immutable_directories_are_one_line(tmp_path):
    line = assert_one_line_error(
        run(EXAMPLE, "-p", "cse", "-o", "/proc/version"), 1, "cannot write output"
    )
    assert "cannot create a file in /proc to replace it" in line, line  # not just ENOENT
    frozen = tmp_path / "frozen"
    frozen.mkdir()
    if subprocess.run(["chattr", "+i", frozen], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not available here")
    try:
        assert_one_line_error(
            run(EXAMPLE, "-p", "cse", "-o", frozen / "out.mlir"), 1, "cannot write output"
        )
    finally:
        subprocess.run(["chattr", "-i", frozen], capture_output=True)


def test_full_disk_and_closed_streams_are_one_line():
    for redirect in ("> /dev/full", ">&-", "--split-input-file > /dev/full"):
        proc = subprocess.run(
            f"{sys.executable} -m penguin_opt {EXAMPLE} -p cse {redirect}",
            shell=True,
            capture_output=True,
            cwd=ROOT,
        )
        assert_one_line_error(proc, 1, "cannot write output")
    proc = subprocess.run(  # (streamed chunks: was an internal AttributeError)
        f"{sys.executable} -m penguin_opt {EXAMPLE} -p cse --split-input-file >&-",
        shell=True,
        capture_output=True,
        cwd=ROOT,
    )
    assert_one_line_error(proc, 1, "-: error: cannot write output: standard output is closed")
    proc = subprocess.run(
        f"{sys.executable} -m penguin_opt {EXAMPLE} -p cse | head -c 1",
        shell=True,
        capture_output=True,
        cwd=ROOT,
    )
    assert b"Traceback" not in proc.stderr
    assert b"Broken" not in proc.stderr


@pytest.mark.parametrize("split", [False, True])
def test_a_reader_that_leaves_mid_output_is_exit_1_quietly(tmp_path, split):
    """`penguin-opt big.mlir | head -c 100`: the pipe takes 64 KiB, the reader leaves; the
    rest of the output cannot be written, so the command failed (exit 1), quietly. (A
    buffered write returned a short count and swallowed the EPIPE: exit 0.)"""
    ops = "".join(f"  %{i} = stablehlo.add %a, %a : tensor<2xf32>\n" for i in range(4000))
    src = write(
        tmp_path,
        "big.mlir",
        f"func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {{\n{ops}  return %a : "
        "tensor<2xf32>\n}\n",
    )
    flags = ["--split-input-file"] if split else []
    proc = subprocess.Popen(
        [sys.executable, "-m", "penguin_opt", src, *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    assert len(proc.stdout.read(100)) == 100
    proc.stdout.close()
    assert proc.wait(timeout=120) == 1
    assert proc.stderr.read() == b""


def test_file_names_that_are_not_utf8_or_hold_a_newline(tmp_path):
    """A valid program whose name is not UTF-8 was an internal error (MLIR takes UTF-8
    names only); a name with a newline split a batch's progress line. Both are shown
    as one line: U+FFFD for the bad byte, a newline as MLIR prints it (\\0A)."""
    good, bad = os.fsdecode(b"good\xffname.mlir"), "bad\nname.mlir"
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / good).write_text(EXAMPLE.read_text())
    (tmp_path / "in" / bad).write_text("func.func @main() {\n  %0 = stablehlo.bogus\n}\n")
    proc = run(tmp_path / "in" / good, "-p", "inline", "-o", tmp_path / "one.mlir")
    assert proc.returncode == 0, proc.stderr
    proc = run(tmp_path / "in" / bad)
    assert_one_line_error(proc, 1, "bad\\0Aname.mlir:2:8: error: custom op")
    proc = run(tmp_path / "in", "-o", tmp_path / "out", "--report", tmp_path / "r.json")
    assert proc.returncode == 1, proc.stderr
    # the report keeps the paths themselves: they open again
    inputs = [r["input"] for r in json.loads((tmp_path / "r.json").read_text())["programs"]]
    assert sorted(os.path.basename(os.fsencode(i)) for i in inputs) == sorted(
        [b"bad\nname.mlir", b"good\xffname.mlir"]
    )
    lines = proc.stderr.decode().splitlines()
    assert any(line.startswith("[") and "good\ufffdname.mlir -> " in line for line in lines)
    assert any(line.startswith("[") and "bad\\0Aname.mlir:2:8: error: " in line for line in lines)
    assert (tmp_path / "out" / (good + ".mlir")).exists()


def test_out_of_memory_reading_names_the_file(monkeypatch, tmp_path):
    """(`penguin-opt /dev/zero` under a memory limit was 'internal error: MemoryError:')."""
    from penguin_opt import io

    class Endless:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def read(self):
            raise MemoryError

    monkeypatch.setattr(io, "open", lambda *a, **k: Endless(), raising=False)
    with pytest.raises(io.InputError, match=r"^/dev/zero: error: cannot read input: out of mem"):
        io.read_source("/dev/zero")


def test_bytecode_whose_strings_are_not_utf8_is_one_line(tmp_path):
    """A dialect name that is not UTF-8 in a bytecode file makes MLIR's diagnostic
    handler throw inside the bindings: C++'s terminate printed two raw lines before the
    crash line. Now one line, the exception in it; in a batch, the program's error."""
    made = run(EXAMPLE, "--emit=bytecode", "-o", tmp_path / "m.mlirbc")
    assert made.returncode == 0, made.stderr
    data = (tmp_path / "m.mlirbc").read_bytes()
    at = data.index(b"func")
    bad = write(tmp_path, "bad.mlirbc", data[: at + 2] + b"\x85" + data[at + 3 :])
    line = assert_one_line_error(run(bad), 1, "bad.mlirbc: error: MLIR crashed the process")
    assert "conversion error" in line, line
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "bad.mlirbc").write_bytes(bad.read_bytes())
    proc = run(tmp_path / "d", "-o", tmp_path / "out")
    assert proc.returncode == 1
    assert b"terminate called" not in proc.stderr
    assert b"process died while processing this program (nanobind" in proc.stderr
    # unsupervised (under a debugger, say) nothing can make it one line: what C++ said is
    # all there is, and it reaches stderr (a review found it captured and lost)
    env = {**os.environ, "PENGUIN_OPT_NO_SUPERVISOR": "1"}
    proc = run(bad, env=env)
    assert proc.returncode == -signal.SIGABRT
    assert b"conversion error" in proc.stderr


@pytest.mark.parametrize(
    ("content", "where"),
    [
        (b"module {\n  // caf\xe9\n}\n", "2:9: error: byte 0xe9 is not UTF-8"),
        (ADD.encode().replace(b"@main", b"@m\xff"), "1:13: error: byte 0xff is not UTF-8"),
        (b"HloModule m\n\nENTRY e {\n  ROOT p = f32[] parameter(0) // \xc3\n}\n", "4:34:"),
    ],
)
def test_text_that_is_not_utf8_says_where(tmp_path, content, where):
    """A stray Latin-1 byte in a text file was "not a program" (read as a proto)."""
    bad = write(tmp_path, "latin1.mlir", content)
    line = assert_one_line_error(run(bad), 1, "latin1.mlir:")
    assert where in line, line
    assert "not UTF-8" in line, line


@pytest.mark.parametrize(
    "content", [b"\x0a\x05jit_f\x12\xff\xfe", b"jit_f\xff\xfe\x12", b"text\xe9\x00"]
)
def test_a_proto_with_bytes_that_are_not_utf8_is_still_not_a_program(tmp_path, content):
    """A control byte anywhere (a proto's tags and lengths), even after text-like bytes."""
    bad = write(tmp_path, "garbage.pb", content)
    assert_one_line_error(run(bad), 1, "garbage.pb: error: not a program")


def test_missing_input_with_an_existing_output(tmp_path):
    out = write(tmp_path, "out.mlir", "keep me")
    assert_one_line_error(run(tmp_path / "missing.mlir", "-o", out), 1, "cannot read input")
    assert out.read_text() == "keep me"


def test_stdin_redirected_from_the_output_file_is_refused(tmp_path):
    src = write(tmp_path, "in.mlir", EXAMPLE.read_text())
    with open(src, "rb") as stdin:
        proc = subprocess.run(
            [sys.executable, "-m", "penguin_opt", "-", "-p", "cse", "-o", src],
            stdin=stdin,
            capture_output=True,
            cwd=ROOT,
        )
    assert_one_line_error(proc, 2, "refusing to overwrite standard input")
    assert src.read_text() == EXAMPLE.read_text()


# ----------------------------------------------------------------------- valid programs


SORT_WITHOUT_DIMENSION = """func.func @main(%a: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xi32>) {
  %i = stablehlo.iota dim = 1 : tensor<2x4xi32>
  %0:2 = "stablehlo.sort"(%a, %i) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>, %p: tensor<i32>, %q: tensor<i32>):
    %c = stablehlo.compare LT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) : (tensor<2x4xf32>, tensor<2x4xi32>) -> (tensor<2x4xf32>, tensor<2x4xi32>)
  return %0#0, %0#1 : tensor<2x4xf32>, tensor<2x4xi32>
}
"""
COMPLEX_ATTRIBUTES = """func.func @main(%a: tensor<2x4xf32>, %t: tensor<2x3xf32>, %x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x4xf32>) -> (tensor<2x4xi32>, tensor<3x2x3xf32>, tensor<1x3x3x4xf32>) {
  %i = stablehlo.iota dim = 1 : tensor<2x4xi32>
  %0:2 = "stablehlo.sort"(%a, %i) ({
  ^bb0(%p: tensor<f32>, %q: tensor<f32>, %r: tensor<i32>, %s: tensor<i32>):
    %c = stablehlo.compare LT, %p, %q : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 1 : i64, foo = dense<(1.0,2.0)> : tensor<complex<f32>>} : (tensor<2x4xf32>, tensor<2x4xi32>) -> (tensor<2x4xf32>, tensor<2x4xi32>)
  %b = "stablehlo.broadcast"(%t) {broadcast_sizes = array<i64: 3>, foo = dense<(1.0,2.0)> : tensor<complex<f32>>} : (tensor<2x3xf32>) -> tensor<3x2x3xf32>
  %y = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, foo = dense<(1.0,2.0)> : tensor<complex<f32>>} : (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x3x3x4xf32>
  return %0#1, %b, %y : tensor<2x4xi32>, tensor<3x2x3xf32>, tensor<1x3x3x4xf32>
}
"""
NON_UTF8_NAMES = """func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.custom_call @"Aws\\FFErf"(%a) {backend_config = "x"} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = call @"f\\FF"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
func.func private @"f\\FF"(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
"""
HUGE_ZERO_SIZED = """func.func @main(%a: tensor<0x4294967296x4294967296xf32>) -> tensor<0x4294967296x4294967296xf32> {
  %0 = stablehlo.add %a, %a : tensor<0x4294967296x4294967296xf32>
  return %0 : tensor<0x4294967296x4294967296xf32>
}
"""


@pytest.mark.parametrize(
    ("text", "pipeline"),
    [
        (SORT_WITHOUT_DIMENSION, "stablehlo-canonicalize-for-penguin,cse"),
        (SORT_WITHOUT_DIMENSION, "stablehlo-legalize-to-hlo,canonicalize-for-penguin"),
        (COMPLEX_ATTRIBUTES, "stablehlo-canonicalize-for-penguin,stablehlo-canonicalize-conv"),
        (
            COMPLEX_ATTRIBUTES,
            "stablehlo-legalize-to-hlo,canonicalize-for-penguin,canonicalize-conv",
        ),
        (NON_UTF8_NAMES, "inline,stablehlo-canonicalize-for-penguin"),
        (HUGE_ZERO_SIZED, "stablehlo-canonicalize-for-penguin"),
    ],
    ids=[
        "sort-without-dimension",
        "sort-without-dimension-mhlo",
        "complex-attributes",
        "complex-attributes-mhlo",
        "non-utf8-names",
        "huge-zero-sized",
    ],
)
def test_valid_programs_once_internal_errors(tmp_path, text, pipeline):
    src = write(tmp_path, "p.mlir", text)
    proc = run(src, "-p", pipeline, "-o", tmp_path / "out.mlir")
    assert_kept_promises(proc, codes=(0,))


def test_valid_programs_keep_their_results(tmp_path):
    src = write(tmp_path, "p.mlir", SORT_WITHOUT_DIMENSION)
    proc = run(
        src,
        "-p",
        "stablehlo-canonicalize-for-penguin",
        "--check-equivalence",
        "-o",
        tmp_path / "out.mlir",
        "--pass-statistics",
    )
    assert_kept_promises(proc, codes=(0,))
    assert b"(S)      1 rewritten" in proc.stderr  # the sort without dimension is fused


def test_unreadable_attributes_skip_the_rewrite(tmp_path):
    module = penguin_opt.parse(COMPLEX_ATTRIBUTES)
    stats = penguin_opt.run(
        module, "stablehlo-canonicalize-for-penguin,stablehlo-canonicalize-conv"
    ).statistics
    assert (
        stats["stablehlo-canonicalize-for-penguin"]["fuseIotaSort"].skipped[
            "attribute-not-readable"
        ]
        == 1
    )
    assert (
        stats["stablehlo-canonicalize-conv"]["explicitlyStride"].skipped["attribute-not-readable"]
        == 1
    )


def test_an_unreadable_attribute_leaves_the_gate_reason_first():
    """A conv the gate rejects is counted with the gate's reason even when one of its
    attributes cannot be read (the pass reads every attribute once, before the gate)."""
    rejected = COMPLEX_ATTRIBUTES.replace("tensor<1x8x8x3xf32>", "tensor<1x1x8x3xf32>").replace(
        "tensor<1x3x3x4xf32>", "tensor<1x1x3x4xf32>"
    )
    rejected = rejected.replace("stride = [2, 2]", "stride = [1, 2], pad = [[1, 1], [0, 0]]")
    module = penguin_opt.parse(rejected)
    stats = penguin_opt.run(module, "stablehlo-canonicalize-conv").statistics
    skipped = stats["stablehlo-canonicalize-conv"]["explicitlyStride"].skipped
    assert dict(skipped) == {"spatial-extent-1": 1}


def test_huge_dimension_numbers_are_one_line(tmp_path):
    src = write(
        tmp_path,
        "conv.mlir",
        """func.func @main(%x: tensor<1x8x9x2xf32>, %w: tensor<3x3x2x4xf32>) -> tensor<1x4x7x4xf32> {
  %y = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 4294967296, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 1], pad = [[1, 1], [0, 0]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x9x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x4x7x4xf32>
  return %y : tensor<1x4x7x4xf32>
}
""",
    )
    out = tmp_path / "out.mlir"
    failed_without_output(
        run(src, "-p", "stablehlo-canonicalize-conv", "-o", out),
        out,
        1,
        "conv.mlir: error: cannot parse",
    )


# ----------------------------------------------------------------------- diagnostics


def test_bad_bytecode_and_artifacts_are_one_line(tmp_path):
    import jax
    import jax.numpy as jnp
    from jax import export

    artifact = export.export(jax.jit(jnp.sin))(jnp.zeros(3)).mlir_module_serialized
    cut = write(tmp_path, "cut.bin", artifact[:60])
    assert_one_line_error(run(cut, "-p", "cse"), 1, "cut.bin: error:")
    garbage = write(tmp_path, "garbage.mlirbc", b"ML\xefR\x06garbage")
    line = assert_one_line_error(run(garbage, "-p", "cse"), 1, "garbage.mlirbc: error:")
    assert ":0:0" not in line  # no position: the file alone
    made = run(EXAMPLE, "--emit=bytecode", "-o", tmp_path / "m.mlirbc")
    assert made.returncode == 0, made.stderr
    data = (tmp_path / "m.mlirbc").read_bytes()
    for size in (8, 20, len(data) // 3, len(data) - 10):  # MLIR's words: "attempting to parse"
        cut = write(tmp_path, f"cut{size}.mlirbc", data[:size])
        line = assert_one_line_error(run(cut), 1, f"cut{size}.mlirbc: error:")
        assert line.endswith(
            "(the bytecode ends before its sections do: a truncated or corrupted file?)"
        )


def test_bytecode_from_a_newer_writer_says_so(tmp_path):
    """A jax.export of jax 0.12.1 read under jax 0.10.2 said only "unregistered operation
    'vhlo.custom_call_v2'" (outside tester F): a failed read whose header names a newer
    writer than this jaxlib's says which versions (here a header made newer, a body cut)."""
    import re

    import jax
    import jax.numpy as jnp
    from jax import export

    artifact = export.export(jax.jit(jnp.sin))(jnp.zeros(3)).mlir_module_serialized
    version = re.search(rb"StableHLO_v(\d+)\.", artifact[:32])
    assert version is not None, artifact[:32]
    newer = artifact.replace(version.group(0), b"StableHLO_v99.", 1)
    bad = write(tmp_path, "new.mlirbc", newer[: len(newer) // 2])
    line = assert_one_line_error(run(bad), 1, "new.mlirbc: error:")
    assert "(the artifact is StableHLO v99." in line, line
    assert "the newest this jaxlib reads" in line, line
    made = run(EXAMPLE, "--emit=bytecode", "-o", tmp_path / "m.mlirbc")
    assert made.returncode == 0, made.stderr
    data = (tmp_path / "m.mlirbc").read_bytes()
    producer = re.search(rb"MLIR\d+", data[:32])
    assert producer is not None, data[:32]
    newer = data.replace(producer.group(0), b"MLIR99"[: len(producer.group(0))], 1)
    bad = write(tmp_path, "new2.mlirbc", newer[: len(newer) // 2])
    line = assert_one_line_error(run(bad), 1, "new2.mlirbc: error:")
    assert "(written by MLIR99" in line, line
    cut = write(tmp_path, "cut.mlirbc", data[: len(data) // 2])  # same writer: no such words
    assert "written by" not in assert_one_line_error(run(cut), 1, "cut.mlirbc: error:")


_COMPARATOR = """{
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %p = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }"""
_PENGUIN_SORT = """func.func @main(%x: tensor<4xf32>) -> tensor<4xi32> {{
  %0:2 = "stablehlo.sort"(%x) {regions} {{dimension = 0 : i64}} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi32>)
  return %0#1 : tensor<4xi32>
}}
"""


@pytest.mark.parametrize(
    ("regions", "needle"),
    [
        ("({})", "region #0 ('comparator') failed to verify constraint"),
        (
            f"({_COMPARATOR}, {{\n  ^bb0(%a: tensor<f32>):\n    stablehlo.return %a : tensor<f32>\n  }})",
            "requires one region",
        ),
        ("", "requires one region"),
    ],
    ids=["empty-comparator", "two-regions", "no-region"],
)
def test_malformed_penguin_form_sorts_are_one_line(tmp_path, regions, needle):
    """A penguin-form sort (one operand fewer than results) that no sort could be: MLIR's
    error at the sort, never an internal error, and never a sort rebuilt without what the
    text holds (a second region was dropped once)."""
    src = write(tmp_path, "s.mlir", _PENGUIN_SORT.format(regions=regions))
    out = tmp_path / "out.mlir"
    proc = run(src, "-p", "stablehlo-canonicalize-for-penguin", "-o", out)
    line = assert_one_line_error(proc, 1, "s.mlir:2:10: error: 'stablehlo.sort' op")
    assert needle in line
    assert not out.exists()


def test_a_penguin_form_sort_reads_back():
    """The control for the malformed cases: the same sort with its one comparator."""
    text = _PENGUIN_SORT.format(regions=f"({_COMPARATOR})")
    proc = run("-", "-p", "stablehlo-canonicalize-for-penguin", stdin=text.encode())
    assert_kept_promises(proc, codes=(0,))
    assert b'"stablehlo.sort"(%arg0)' in proc.stdout


def test_bad_native_option_is_one_line():
    assert_one_line_error(
        run(EXAMPLE, "-p", "canonicalize{max-iterations=abc}"), 2, "'abc' value invalid"
    )


# ----------------------------------------------------------------------- resource bounds


def test_splat_convert_folds_to_a_splat(tmp_path):
    src = write(
        tmp_path,
        "splat.mlir",
        """func.func @main() -> tensor<10000000000xi32> {
  %0 = stablehlo.constant dense<1.5> : tensor<10000000000xf32>
  %1 = stablehlo.convert %0 : (tensor<10000000000xf32>) -> tensor<10000000000xi32>
  return %1 : tensor<10000000000xi32>
}
""",
    )
    # the peak memory of penguin-opt alone: measured by a parent that runs nothing else
    measure = (
        "import resource, subprocess, sys\n"
        "proc = subprocess.run([sys.executable, '-m', 'penguin_opt', sys.argv[1], '-p',"
        " 'stablehlo-canonicalize-for-penguin'], capture_output=True)\n"
        "sys.stderr.buffer.write(proc.stderr)\n"
        "print(proc.returncode, b'dense<1> : tensor<10000000000xi32>' in proc.stdout,"
        " resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", measure, src], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    code, folded, peak_kib = proc.stdout.split()
    assert (code, folded) == ("0", "True"), proc.stderr
    assert int(peak_kib) < 2 * 1024 * 1024  # far below the 40 GB it would take


def test_inline_growth_is_bounded(tmp_path):
    lines = [
        "func.func @main(%x: tensor<f32>) -> tensor<f32> {",
        "  %0 = call @f0(%x) : (tensor<f32>) -> tensor<f32>",
        "  return %0 : tensor<f32>",
        "}",
    ]
    for i in range(24):
        lines += [
            f"func.func private @f{i}(%x: tensor<f32>) -> tensor<f32> {{",
            f"  %0 = call @f{i + 1}(%x) : (tensor<f32>) -> tensor<f32>",
            f"  %1 = call @f{i + 1}(%0) : (tensor<f32>) -> tensor<f32>",
            "  return %1 : tensor<f32>",
            "}",
        ]
    lines += [
        "func.func private @f24(%x: tensor<f32>) -> tensor<f32> {",
        "  %0 = stablehlo.add %x, %x : tensor<f32>",
        "  return %0 : tensor<f32>",
        "}",
    ]
    src = write(tmp_path, "dag.mlir", "\n".join(lines) + "\n")
    out = tmp_path / "out.mlir"
    failed_without_output(
        run(src, "-p", "inline{max-inlined-ops=100000}", "-o", out),
        out,
        1,
        "inlining would create more than 100000 ops",
    )


# ----------------------------------------------------------------------- smaller


def test_verify_diagnostics_failure_writes_no_output(tmp_path):
    src = write(tmp_path, "w.mlir", ADD.replace("  %0", "  // expected-error @+1 {{nope}}\n  %0"))
    out = tmp_path / "out.mlir"
    proc = run(src, "-p", "cse", "--verify-diagnostics", "-o", out)
    assert proc.returncode == 1
    assert not out.exists()


def test_split_input_file_with_check_equivalence_is_a_batch_of_chunks(tmp_path):
    """One file's chunks, each checked: a batch into -o DIR (it was refused while two
    files ran; the README promised each chunk checked). Without a directory: exit 2."""
    src = write(tmp_path, "a.mlir", f"{ADD}// -----\n{ADD.replace('add', 'multiply')}")
    flags = ("-p", "cse", "--split-input-file", "--check-equivalence")
    assert_one_line_error(run(src, *flags), 2, "name an output directory with -o DIR/")
    # a name that is no directory is not quietly made one (a review)
    assert_one_line_error(run(src, *flags, "-o", tmp_path / "o.mlir"), 2, "-o DIR/")
    assert not (tmp_path / "o.mlir").exists()
    proc = run(src, *flags, "-o", f"{tmp_path / 'out'}/")
    assert proc.returncode == 0, proc.stderr
    assert b"2 programs: 2 ok" in proc.stderr, proc.stderr
    assert proc.stderr.count(b"results match") == 2, proc.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "a.mlir.chunk0.mlir",
        "a.mlir.chunk1.mlir",
    ]
    stdin = run("-", *flags, "-o", tmp_path / "o2", stdin=src.read_bytes())
    assert_one_line_error(stdin, 2, "nor with --split-input-file on stdin")  # (no batch)


@pytest.mark.parametrize(
    "pipeline",
    [
        "cse",
        "canonicalize",
        "symbol-dce",
        "stablehlo-legalize-to-hlo",
        "stablehlo-legalize-to-hlo,hlo-legalize-to-stablehlo",
    ],
)
def test_our_output_goes_through_native_only_pipelines(tmp_path, pipeline):
    ours = tmp_path / "ours.mlir"
    assert (
        run(EXAMPLE, "-p", "inline,stablehlo-canonicalize-for-penguin", "-o", ours).returncode == 0
    )
    proc = run(ours, "-p", pipeline)
    assert_kept_promises(proc, codes=(0,))
    assert b'.sort"(%arg0)' in proc.stdout  # still the penguin form


def test_api_errors():
    assert penguin_opt.InputError is penguin_opt.io.InputError
    with pytest.raises(penguin_opt.InputError, match="empty"):
        penguin_opt.load("")
    with pytest.raises(penguin_opt.InputError, match="empty"):
        penguin_opt.parse(b"  \n")


def test_error_lines_for_the_whole_class_of_usage_errors(tmp_path):
    src = write(tmp_path, "a.mlir", ADD)
    for args in (["-p", "no-such-pass"], ["--nope"], ["-p", "cse", "--timeout", "-3"]):
        proc = run(src, *args)
        assert_kept_promises(proc, codes=(2,))
        assert len(error_lines(proc)) == 1


# A quantized element type under a bounds encoding: jaxlib 0.10.2's parser segfaults on it.
QUANT_WITH_BOUNDS = """func.func @main(%arg0: tensor<?x?xf32, #stablehlo.bounds<4, 4>>) -> () {
  %0 = stablehlo.uniform_quantize %arg0 : (tensor<?x?xf32, #stablehlo.bounds<4, 4>>) -> tensor<?x?x!quant.uniform<i8:f32, 1.000000e+00:3>, #stablehlo.bounds<4, 4>>
  return
}
"""


@pytest.mark.parametrize("tool", ["penguin_opt", "penguin_opt.check_cli"])
def test_mlir_crashing_in_the_parser_is_one_line(tmp_path, tool):
    src = write(tmp_path, "q.mlir", QUANT_WITH_BOUNDS)
    args = (src,) if tool == "penguin_opt" else (src, src)
    proc = run(*args, tool=tool)
    assert_kept_promises(proc)  # never a signal death, at most one error line
    (line,) = error_lines(proc) or [""]
    if "crashed" in line:  # where MLIR's parser crashes on it (jaxlib 0.10.2's does)
        assert re.fullmatch(
            r".*q\.mlir: error: MLIR crashed the process \(\w+\) while parsing", line
        )


def _supervised_child(proc: subprocess.Popen) -> int:
    deadline = time.time() + 60
    while time.time() < deadline:
        kids = _children(proc.pid)
        if kids:
            return kids[0]
        time.sleep(0.05)
    raise AssertionError("no supervised child")


@pytest.mark.parametrize(
    ("sig", "says", "debug"),
    [
        (signal.SIGSEGV, r"MLIR crashed the process \(SIGSEGV\)", False),
        (signal.SIGABRT, r"MLIR crashed the process \(SIGABRT\)", False),
        (
            signal.SIGKILL,
            r"the process was killed \(SIGKILL; by the kernel, if memory ran out\)",
            False,
        ),
        (signal.SIGSEGV, r"MLIR crashed the process \(SIGSEGV\)", True),
    ],
)
def test_a_crash_of_the_work_is_one_line_and_writes_nothing(tmp_path, sig, says, debug):
    """The command's work runs in a supervised child: whatever kills it (a segfault or an
    abort inside MLIR, the kernel's OOM killer) is one line naming the input and what was
    going on, exit 1, and no output file or temporary is left. With ``--debug`` the
    Python stack where it crashed comes first (it went into the file that holds MLIR's
    stderr while it parses: outside tester I)."""
    body = "".join(
        f"  %{i + 1} = stablehlo.add %{i}, %{i} : tensor<4xf32>\n" for i in range(150_000)
    )
    src = write(
        tmp_path,
        "big.mlir",
        f"func.func @main(%0: tensor<4xf32>) -> tensor<4xf32> {{\n{body}  return %150000 : tensor<4xf32>\n}}\n",
    )
    out = tmp_path / "out" / "o.mlir"
    out.parent.mkdir()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "penguin_opt",
            src,
            "-p",
            "stablehlo-canonicalize-for-penguin",
            "-o",
            out,
            *(["--debug"] if debug else []),
        ],
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=ROOT,
    )
    child = _supervised_child(proc)
    _wait_for_cpu(child, 1.0)  # past its imports, into the work (a wall-clock second was
    os.kill(child, sig)  # not always that on a loaded machine: the file was not named yet)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err
    lines = err.decode().splitlines()
    if debug:
        assert "(most recent call first):" in err.decode(), lines
        assert re.search(r'File ".*penguin_opt.*", line \d+ in \w+', err.decode()), lines
        lines = lines[-1:]
    assert len(lines) == 1, lines
    assert re.fullmatch(rf".*big\.mlir: error: {says}( while \w.*)?", lines[0]), lines[0]
    assert list(out.parent.iterdir()) == []


# Two public functions and no @main: Shardy's propagation fails a CHECK on it ("Failed to
# lookup function: main", an LLVM ERROR and abort) in jaxlib 0.10.2 and 0.12; 0.9.2's runs.
NO_MAIN = """func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  return %a : tensor<2xf32>
}
func.func @g(%a: tensor<2xf32>) -> tensor<2xf32> {
  return %a : tensor<2xf32>
}
"""
ABORTING_NATIVE_PASS = "sdy-basic-propagate"


def _run_native_pass_plainly(src: Path, pass_name: str) -> subprocess.CompletedProcess:
    """This jaxlib's pass ``pass_name`` run on ``src`` in a process of its own, without
    penguin-opt (to see whether it kills the process)."""
    code = (
        "import sys; from jaxlib.mlir import ir, passmanager;"
        "from penguin_opt.context import make_context;"
        "ctx = make_context(); m = ir.Module.parse(open(sys.argv[1]).read(), ctx);"
        f"passmanager.PassManager.parse('builtin.module({pass_name})', ctx).run("
        "m.operation)"
    )
    return subprocess.run([sys.executable, "-c", code, src], capture_output=True, cwd=ROOT)


def _native_pass_aborts(src: Path) -> bool:
    """Whether this jaxlib's pass aborts on ``src`` when run plainly (no penguin-opt)."""
    proc = _run_native_pass_plainly(src, ABORTING_NATIVE_PASS)
    return proc.returncode < 0 and b"LLVM ERROR" in proc.stderr


def test_a_native_pass_aborting_is_one_line_with_its_llvm_error(tmp_path):
    """A native pass that aborts the process (not one of the known ones run isolated) takes
    the supervised child with it: the one line carries what LLVM said before the abort,
    and nothing of it reaches the terminal on its own."""
    src = write(tmp_path, "two.mlir", NO_MAIN)
    if not _native_pass_aborts(src):
        pytest.skip(f"this jaxlib's {ABORTING_NATIVE_PASS} does not abort on it")
    out = tmp_path / "o.mlir"
    proc = run(src, "-p", ABORTING_NATIVE_PASS, "-o", out)
    assert_kept_promises(proc)
    assert proc.returncode == 1
    (line,) = proc.stderr.decode().splitlines()
    assert re.fullmatch(
        r".*two\.mlir: error: MLIR crashed the process \(SIGABRT: LLVM ERROR: Check failed: "
        rf".*main\) while running {ABORTING_NATIVE_PASS}",
        line,
    ), line
    assert not out.exists()


def test_a_native_pass_aborting_in_a_batch_is_the_programs_error_line(tmp_path):
    src = write(tmp_path, "two.mlir", NO_MAIN)
    if not _native_pass_aborts(src):
        pytest.skip(f"this jaxlib's {ABORTING_NATIVE_PASS} does not abort on it")
    ok = write(tmp_path, "ok.mlir", ADD)
    proc = run(src, ok, "-p", ABORTING_NATIVE_PASS, "-o", tmp_path / "out")
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.decode().splitlines()
    fatal = [line for line in lines if "LLVM ERROR" in line]
    assert fatal, lines
    for line in fatal:  # only inside the program's record, never a line of its own
        assert re.search(
            r"two\.mlir: error: the worker process died while processing this program "
            r"\(LLVM ERROR: Check failed: .*main\)$",
            line,
        ), line
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["ok.mlir.mlir"]


def test_a_module_whose_text_is_not_utf8_is_one_line_and_no_output(tmp_path):
    # An opaque attribute holds raw bytes, which MLIR's printer writes as they are: text
    # that is not UTF-8 would not read back, so nothing is written.
    from jaxlib.mlir import ir

    from penguin_opt.context import make_context

    with make_context(allow_unregistered=True) as ctx, ir.Location.unknown(ctx):
        module = ir.Module.parse('"x.op"() : () -> ()')
        op = module.body.operations[0]
        op.attributes["a"] = ir.OpaqueAttr.get("x", b"\xff\xfe", ir.NoneType.get())
        src = tmp_path / "bad.mlirbc"
        with open(src, "wb") as f:
            module.operation.write_bytecode(f)
    out = tmp_path / "out.mlir"
    proc = run(src, "--allow-unregistered-dialect", "-o", out)
    failed_without_output(proc, out, 1, "is not UTF-8")


# A chunk that crashes a native pass in some jaxlib, as (pass, chunk): integer division by
# a zero constant in stablehlo-refine-shapes' folder (SIGFPE in jaxlib 0.9.2 and 0.10.2),
# and NO_MAIN in Shardy's propagation (an abort in 0.10.2 and 0.12).
DIV_BY_ZERO = """func.func @div_by_zero() -> tensor<i32> {
  %six = stablehlo.constant dense<6> : tensor<i32>
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %0 = stablehlo.divide %six, %zero : tensor<i32>
  return %0 : tensor<i32>
}
"""
CRASHING_CHUNKS = [("stablehlo-refine-shapes", DIV_BY_ZERO), (ABORTING_NATIVE_PASS, NO_MAIN)]


def _crashing_chunk(tmp_path: Path) -> tuple[str, str]:
    """A (pass, chunk) of CRASHING_CHUNKS that kills the process in this jaxlib."""
    for pass_name, text in CRASHING_CHUNKS:
        src = write(tmp_path, "probe.mlir", text)
        if _run_native_pass_plainly(src, pass_name).returncode < 0:
            return pass_name, text
    pytest.skip("no chunk of CRASHING_CHUNKS crashes this jaxlib's passes")


def _chunks_around(crash: str) -> tuple[str, list[int]]:
    """Five chunks, the second and the fourth ``crash``; and the first line of each."""
    fine = [
        ADD.replace("@main", f"@main_{n}").replace("add", op)
        for n, op in enumerate(("add", "multiply", "subtract"))
    ]
    chunks = [fine[0], crash, fine[1], crash, fine[2]]
    lines, line = [], 1
    for chunk in chunks:
        lines.append(line)
        line += chunk.count("\n") + 1
    return "// -----\n".join(chunks), lines


@pytest.mark.parametrize("via", ["file", "stdin"])
def test_a_chunk_that_crashes_mlir_does_not_stop_the_rest(tmp_path, via):
    """--split-input-file: MLIR crashing the process inside a chunk is that chunk's error
    line (naming where the chunk starts); the chunks after it still run, in order, from a
    file or from stdin (read once, kept for the child that goes on)."""
    pass_name, crash = _crashing_chunk(tmp_path)
    text, first_lines = _chunks_around(crash)
    src = write(tmp_path, "five.mlir", text)
    args = ("-", "--split-input-file", "-p", pass_name)
    proc = run(*args, stdin=text.encode()) if via == "stdin" else run(src, *args[1:])
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr.decode()
    name = "<stdin>" if via == "stdin" else re.escape(str(src))
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 2, lines
    for line, first in zip(lines, first_lines[1::2], strict=True):
        assert re.fullmatch(
            rf"{name}: error: MLIR crashed the process \(SIG\w+.*\) while running "
            rf"{pass_name} \(the chunk at line {first}\)",
            line,
        ), line
    pieces = proc.stdout.decode().split("// -----\n")
    assert len(pieces) == 5, pieces
    for n, index in enumerate((0, 2, 4)):
        assert f"@main_{n}(" in pieces[index], pieces
    assert pieces[1] == pieces[3] == ""


def test_a_chunk_that_crashes_mlir_leaves_the_statistics_of_the_others(tmp_path):
    """The statistics summed over the chunks are those of the chunks that did not crash
    (the chunks before a crash counted once), and no -o file is written."""
    pass_name, crash = _crashing_chunk(tmp_path)
    text, _ = _chunks_around(crash)
    src = write(tmp_path, "five.mlir", text)
    fine = write(tmp_path, "three.mlir", "// -----\n".join(text.split("// -----\n")[::2]))
    pipeline = f"{pass_name},stablehlo-canonicalize-for-penguin"
    stats = {}
    for path in (src, fine):
        out = tmp_path / f"{path.stem}.out.mlir"
        proc = run(
            path,
            "--split-input-file",
            "-p",
            pipeline,
            "-o",
            out,
            "--pass-statistics-json",
            tmp_path / f"{path.stem}.json",
        )
        assert proc.returncode == (1 if path == src else 0), proc.stderr
        assert out.exists() == (path == fine)
        stats[path.stem] = (tmp_path / f"{path.stem}.json").read_text()
    seen = json.loads(stats["three"])["stablehlo-canonicalize-for-penguin"]
    assert seen["removeDeadZeroSizedTensorOps"]["matched"] == 3 * 2  # add/mul/sub, return
    assert stats["five"] == stats["three"]


def test_ctrl_c_on_a_batch_prints_no_worker_traceback(tmp_path):
    """A terminal's Ctrl-C reaches the batch's worker processes too: each printed a
    KeyboardInterrupt traceback (outside tester I). The workers leave SIGINT to the
    parent, which kills them: exit 130, nothing on stderr but the progress lines."""
    (tmp_path / "in").mkdir()
    for i in range(8):
        write(tmp_path / "in", f"p{i}.mlir", EXAMPLE.read_text())
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "penguin_opt",
            tmp_path / "in",
            "-o",
            tmp_path / "out",
            "-p",
            "inline,stablehlo-canonicalize-for-penguin",
            "--jobs",
            "2",
            "--check-equivalence",
            "--trials",
            "3",
        ],
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=ROOT,
        start_new_session=True,
    )
    assert proc.stderr.readline().startswith(b"[1/8] ok")  # the workers are at work
    os.killpg(proc.pid, signal.SIGINT)
    _, rest = proc.communicate(timeout=120)
    assert proc.returncode == 130, rest.decode()[-800:]
    assert b"Traceback" not in rest, rest.decode()[-1500:]
    assert b"KeyboardInterrupt" not in rest, rest.decode()[-1500:]


# A complex -> pred convert of a constant: jaxlib's HLO importer segfaults on it (0.9.2 to
# 0.12: it ends the process while MLIR's stderr goes into the supervisor's file)
CRASHING_HLO = """HloModule c

ENTRY main {
  k = c64[2] constant({(1, 2), (nan, 1)})
  ROOT a = pred[2] convert(k)
}
"""


def test_debug_shows_the_python_stack_of_a_crash_while_mlir_stderr_is_captured(tmp_path):
    """``--debug`` promised the Python stack where MLIR crashed; it went into the file that
    holds MLIR's stderr while it parses, and only the crash line came out (outside tester
    I). The stack now goes to the command's stderr, the line last."""
    src = write(tmp_path, "c.hlo", CRASHING_HLO)
    plain = run(src)
    if b"crashed the process" not in plain.stderr:
        pytest.skip(f"this jaxlib's HLO importer does not crash on it: {plain.stderr[-200:]!r}")
    assert plain.stderr.decode().count("\n") == 1
    debug = run(src, "--debug")
    err = debug.stderr.decode()
    assert debug.returncode == 1, err
    assert "(most recent call first):" in err, err
    assert re.search(r'File ".*io\.py", line \d+ in _import_hlo', err), err
    assert err.strip().splitlines()[-1] == plain.stderr.decode().strip()
