"""Benchmarks of penguin-opt's passes against native MLIR (``python -m benchmarks.run``)."""
