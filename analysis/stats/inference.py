"""Statistics for per-query tables: bootstrap CIs, paired tests, Holm correction, slices.

Every function consumes plain arrays or a *per-query table* (:mod:`analysis.stats.perquery`):
one row per ``(dataset, query_id, model)`` with one float column per metric (``hit@1``,
``mrr``, ...) and slice columns (``query_type``, ``n_gold_bucket``, ``split``, any categorical
metadata).

Conventions (they hold in every function of this module):

* **Delta is "A minus B"**: ``delta = mean(a - b)``; a positive delta means model A scores higher.
  A *win* is a query with ``a - b > eps``, a *loss* one with ``a - b < -eps``, a *tie* the rest.
* **Bootstrap** intervals of the mean: below 100 values (:data:`BCA_BELOW`) they are BCa
  intervals (``scipy.stats.bootstrap(method="BCa")``: bias-corrected and accelerated; percentile
  intervals under-cover on small skewed samples, e.g. 79 % instead of 95 % for an MRR-like metric
  at n = 30, BCa 86 %); from 100 values on, percentile intervals: with ``alpha = 1 - confidence``
  the ``alpha/2`` and ``1 - alpha/2`` quantiles (numpy's default linear interpolation)
  of ``n_resamples`` means of resamples of size n drawn with replacement. No bootstrap helps a
  sample of rare events that holds none (30 queries, 5 % hit rate: a fifth of such samples are
  all zero and get the interval [0, 0]); read such intervals with their n. The mean of a
  resample depends only on how often each value is drawn, so the kernel draws either an index
  matrix of shape ``(B, n)`` (chunked; shared by all samples of the same size) or, when a few
  values are frequent (each occurring >= 32 times: zeros, hit@k, MRR, most metric deltas),
  multinomial counts of those k values plus "the rest", shape ``(B, k + 1)``, and index draws
  for the rest only. Both give the same bootstrap distribution; the second is much cheaper on
  tied data.
* **Seeds**: ``seed`` is an int (or ``None`` for fresh entropy). Each sample is resampled from
  its own generator ``default_rng(SeedSequence(seed, spawn_key=(stream,)))`` (stream 0 for the
  bootstrap, 1 for the randomization test), so a sample's interval or p-value depends only on its
  values, ``n_resamples`` and ``seed``, not on the other groups computed in the same call: a row
  of :func:`mean_ci` equals :func:`bootstrap_ci` on that group's values (in table order), and a
  row of :func:`compare_slices` equals :func:`paired_comparison` on that slice, for the same seed.
  Groups of equal size share one index matrix, which is how the grouped versions stay vectorized.
* **Randomization test** (paired, sign-flip, two-sided): statistic ``T = sum(s_i * d_i)`` with
  ``d = a - b`` and random signs ``s_i``; zero differences are dropped (flipping them changes
  nothing). With m non-zero differences, if ``2**m <= n_resamples`` all sign patterns are enumerated
  and ``p = #{|T| >= |T_obs|} / 2**m`` (the identity pattern is among them; this equals
  ``scipy.stats.permutation_test(..., permutation_type="samples")`` with its exact enumeration).
  Otherwise ``p = (1 + #{|T_b| >= |T_obs|}) / (1 + B)`` over B random sign patterns: the "+1"
  counts the observed labelling, so p is never 0 and the test stays valid (Phipson & Smyth 2010).
  The random patterns are drawn over all n positions of the sample (signs on zeros change
  nothing) from the seed and n only, so every sample of length n shares them (one matrix
  product for many model pairs and metrics); samples with few distinct values use binomial
  flip counts instead. A result is kept in a bounded memo keyed by the exact values.
  Equality is judged with a relative tolerance of 1e-10 of ``sum(|d|)`` so that float rounding does
  not split values that are equal in exact arithmetic.
* **Missing values**: NaN or infinite metric values are errors (they usually mean a metric was not
  computed for some dataset); filter them out first.

The module never imports streamlit. The code lives in :mod:`analysis.stats.bootstrap`,
:mod:`analysis.stats.paired` and :mod:`analysis.stats.slices`; this module re-exports it.
"""

from __future__ import annotations

from analysis.stats._common import ALL_LABEL, MISSING_LABEL, NGOLD_BUCKETS, flag_values
from analysis.stats.bootstrap import BCA_BELOW, bootstrap_ci, mean_ci
from analysis.stats.paired import PairedComparison, holm, paired_comparison, win_tie_loss
from analysis.stats.slices import bucket_numeric, compare_slices, n_gold_bucket, slice_finder

__all__ = [
    "ALL_LABEL",
    "BCA_BELOW",
    "MISSING_LABEL",
    "NGOLD_BUCKETS",
    "PairedComparison",
    "bootstrap_ci",
    "bucket_numeric",
    "compare_slices",
    "flag_values",
    "holm",
    "mean_ci",
    "n_gold_bucket",
    "paired_comparison",
    "slice_finder",
    "win_tie_loss",
]
