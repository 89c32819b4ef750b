"""penguin-opt: the Neuron hlo2penguin canonicalization passes on real MLIR."""

from .api import Result, load, load_file, parse, run, to_text
from .context import make_context
from .io import InputError, InputNotFoundError, InputWarning
from .passes import PASSES
from .passes.base import PassError
from .pipeline import PipelineError


def __getattr__(name: str) -> str:
    """``__version__``, read from the installed metadata when first asked for (reading it
    at import would cost every command tens of milliseconds)."""
    if name == "__version__":
        from .cli_common import version

        return version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
