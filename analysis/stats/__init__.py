"""Layer 4 — statistics over per-query tables: bootstrap CIs, paired tests, Holm correction,
slices, the per-query table itself and the failing-query filters.

May import :mod:`analysis.core`, :mod:`analysis.geo`, :mod:`analysis.baselines` and
:mod:`analysis.io`. The statistics of :mod:`analysis.stats.inference` (its ``__all__``: bootstrap
CIs, paired comparisons, Holm, slices and the slice labels) are re-exported here, so
``from analysis.stats import mean_ci`` works; the other modules are imported by name
(``from analysis.stats import failures``).
"""

from analysis.stats import inference as _inference
from analysis.stats.inference import *  # noqa: F403  (the names listed in inference.__all__)

__all__ = list(_inference.__all__)
