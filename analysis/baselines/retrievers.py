"""Every baseline retriever under one import (the names :mod:`analysis.baselines` re-exports).

Kept so that ``from analysis.baselines.retrievers import BM25`` goes on working; the code lives in
:mod:`~analysis.baselines.tokens`, :mod:`~analysis.baselines.ranking`,
:mod:`~analysis.baselines.text`, :mod:`~analysis.baselines.kb` and
:mod:`~analysis.baselines.spatial`.
"""

from __future__ import annotations

# the names and their list live in the package's __init__
from analysis.baselines import *  # noqa: F403
from analysis.baselines import __all__ as __all__
