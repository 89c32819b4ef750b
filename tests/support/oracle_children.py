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
