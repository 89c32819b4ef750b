"""penguin-opt: the Neuron hlo2penguin canonicalization passes on real MLIR."""

from .api import Result, load, run, to_text
from .context import make_context
from .passes import PASSES
from .passes.base import PassError
from .pipeline import PipelineError

__all__ = [
    "PASSES",
    "PassError",
    "PipelineError",
    "Result",
    "load",
    "make_context",
    "run",
    "to_text",
]
