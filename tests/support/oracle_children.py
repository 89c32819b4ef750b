"""Child-process bodies for the checker's harness tests (picklable: importable by name)."""


def raise_memory_error(payload: bytes) -> bytes:
    raise MemoryError("out of memory while allocating the interpreter's buffers")


def child_pid(payload: bytes) -> int:
    import os

    return os.getpid()


def die_by(payload: bytes) -> bytes:
    """End the child by the signal named in ``payload`` (as a crash or an abort would)."""
    import os
    import signal

    os.kill(os.getpid(), getattr(signal, payload.decode()))
    return b""


def abort_with_llvm_error(payload: bytes) -> bytes:
    """Write an LLVM ERROR line to file descriptor 2 and abort, as native code does."""
    import os

    os.write(2, b"some log line\nLLVM ERROR: " + payload + b"\n")
    os.abort()


def write_to_stderr(payload: bytes) -> bytes:
    """Write ``payload`` to file descriptor 2 (as native code would) and return it."""
    import os

    os.write(2, payload)
    return payload
