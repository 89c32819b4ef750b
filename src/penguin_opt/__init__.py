"""penguin-opt: the Neuron hlo2penguin canonicalization passes on real MLIR."""

from .api import Result, load, load_file, parse, run, to_text
from .cli_common import version as _version
from .context import make_context
from .io import InputError, InputNotFoundError, InputWarning
from .passes import PASSES
from .passes.base import PassError
from .pipeline import PipelineError

__version__ = _version()

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
