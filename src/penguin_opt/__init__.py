"""penguin-opt: the Neuron hlo2penguin canonicalization passes on real MLIR.

The names below are imported when first used: ``import penguin_opt`` (which every
``penguin-opt`` command does first) loads no MLIR, so the command can install its signal
handlers before the half second jaxlib takes to import.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING

# name -> the module that defines it
_WHERE = {
    "Result": "api",
    "load": "api",
    "load_file": "api",
    "parse": "api",
    "run": "api",
    "to_text": "api",
    "make_context": "context",
    "InputError": "io",
    "InputNotFoundError": "io",
    "InputWarning": "io",
    "PASSES": "passes",
    "PassError": "passes.base",
    "PipelineError": "pipeline",
}

if TYPE_CHECKING:
    from .api import Result, load, load_file, parse, run, to_text
    from .context import make_context
    from .io import InputError, InputNotFoundError, InputWarning
    from .passes import PASSES
    from .passes.base import PassError
    from .pipeline import PipelineError


def __getattr__(name: str) -> object:
    """The API's names, imported when first asked for; ``__version__``, read from the
    installed metadata (reading it at import would cost every command tens of
    milliseconds)."""
    if name == "__version__":
        from .cli_common import version

        return version()
    where = _WHERE.get(name)
    if where is not None:
        value = getattr(importlib.import_module(f".{where}", __name__), name)
    elif _is_submodule(name):
        value = importlib.import_module(f".{name}", __name__)  # a submodule: penguin_opt.io
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def _is_submodule(name: str) -> bool:
    if name.startswith("_") or not name.isidentifier():
        return False
    try:
        return importlib.util.find_spec(f"{__name__}.{name}") is not None
    except (ImportError, ValueError):
        return False


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE, "__version__"])


__all__ = [
    "PASSES",
    "InputError",
    "InputNotFoundError",
    "InputWarning",
    "PassError",
    "PipelineError",
    "Result",
    "__version__",
    "load",
    "load_file",
    "make_context",
    "parse",
    "run",
    "to_text",
]
