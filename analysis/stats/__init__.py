"""Layer 4 — statistics over per-query tables: bootstrap CIs, paired tests, Holm correction,
slices, the per-query table itself and the failing-query filters.

May import :mod:`analysis.core`, :mod:`analysis.geo`, :mod:`analysis.baselines` and
:mod:`analysis.io`. The statistics of :mod:`analysis.stats.inference` are re-exported here.
"""

from analysis.stats.inference import (
    ALL_LABEL,
    MISSING_LABEL,
    NGOLD_BUCKETS,
    PairedComparison,
    bootstrap_ci,
    bucket_numeric,
    compare_slices,
    holm,
    mean_ci,
    n_gold_bucket,
    paired_comparison,
    slice_finder,
    win_tie_loss,
)

__all__ = [
    "ALL_LABEL",
    "MISSING_LABEL",
    "NGOLD_BUCKETS",
    "PairedComparison",
    "bootstrap_ci",
    "bucket_numeric",
    "compare_slices",
    "holm",
    "mean_ci",
    "n_gold_bucket",
    "paired_comparison",
    "slice_finder",
    "win_tie_loss",
]
