"""``python -m penguin_opt``: the same as the ``penguin-opt`` command."""

import sys

from .cli import main

sys.exit(main())
