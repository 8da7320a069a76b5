"""``python -m analysis``: see :mod:`analysis.cli`."""

import sys

from analysis.cli import console

sys.exit(console())
