"""The model corpus: real architectures exported to StableHLO/HLO, swept through the
pipelines in both dialects and checked (``python -m tools.corpus``, docs/corpus.md),
and the harness for the shared public corpus of upstream test programs (``shared``).

Keras/keras-hub models need the ``corpus`` extra (``pip install -e '.[corpus]'``); the
``jax`` family needs nothing beyond penguin-opt's own dependencies.
"""
