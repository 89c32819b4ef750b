"""``python -m penguin_opt``: the same as the ``penguin-opt`` command."""

import sys

from .launch import penguin_opt

sys.exit(penguin_opt())
