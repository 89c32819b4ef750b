"""Child-process bodies for the checker's harness tests (picklable: importable by name)."""


def raise_memory_error(payload: bytes) -> bytes:
    raise MemoryError("out of memory while allocating the interpreter's buffers")


def child_pid(payload: bytes) -> int:
    import os

    return os.getpid()
