"""The commands' entry points: quiet signal handlers first, then the command.

Importing the command (and jaxlib after it) takes a while; a Ctrl-C in that time would
print Python's KeyboardInterrupt traceback, and a SIGTERM or SIGHUP would kill the process
by the signal. Until the command's own handlers take over (``supervise`` in the parent,
``run_command``, through ``cli_common.settle_signals``, in the process that runs it),
those signals end it at once, quietly, with the usual codes (130, 143, 129): nothing has
been written or started yet.
"""

from __future__ import annotations

import os
import signal

_STOPS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# the handlers the early ones replaced (a signal the shell ignores stays ignored)
replaced: dict[int, object] = {}


def _quiet_exit(signum: int, _frame: object) -> None:
    os._exit(128 + signum)


def _early_signals() -> None:
    for signum in _STOPS:
        current = signal.getsignal(signum)
        if current in (signal.SIG_DFL, signal.default_int_handler):
            replaced[signum] = current
            signal.signal(signum, _quiet_exit)


def penguin_opt() -> int:
    """The ``penguin-opt`` command."""
    _early_signals()
    from .cli import main

    return main()


def penguin_check() -> int:
    """The ``penguin-check`` command."""
    _early_signals()
    from .check_cli import penguin_check_main

    return penguin_check_main()
