"""Metric kernels: per-query values from the few rows of a ranked run that hold a judged doc.

Inputs are the rows with a positive gain (query index ``qi``, 1-based ``rank``, ``gain``, and
whether the doc is ``relevant``), the number of relevant docs per query ``n_rel``, the number of
returned docs ``n_ret`` and the ideal DCG per cutoff. Nothing loops over queries; each measure's
formula and kernel are declared in :mod:`analysis.core.measures`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from analysis.core import ranking as rk
from analysis.core.measures import REGISTRY, Judged
from analysis.core.names import Metric


def ideal_dcg(
    query_index: np.ndarray,
    relevance: np.ndarray,
    n_queries: int,
    cutoffs: set[int | None],
    count: np.ndarray | None = None,
) -> dict[int | None, np.ndarray]:
    """IDCG per query for each cutoff: judged positive gains sorted descending.

    With ``count`` (LIST's variant), the ideal list is ``count[q]`` docs of gain 1 instead.
    """
    out = {}
    if count is not None:
        for k in cutoffs:
            m = count if k is None else np.minimum(count, k)
            top = int(m.max()) if len(m) else 0
            prefix = np.r_[0.0, np.cumsum(1.0 / np.log2(np.arange(2, top + 2)))]
            out[k] = prefix[m.astype(np.int64)]
        return out
    gain = np.maximum(relevance, 0).astype(np.float64)
    pos = gain > 0
    qi, g = query_index[pos], gain[pos]
    order = np.lexsort((-g, qi))
    qi, g = qi[order], g[order]
    ideal_rank = rk.positions(qi)
    disc = g / np.log2(ideal_rank + 1.0)
    for k in cutoffs:
        w = disc if k is None else np.where(ideal_rank <= k, disc, 0.0)
        out[k] = np.bincount(qi, weights=w, minlength=n_queries)
    return out


def scores(
    metrics: Sequence[Metric],
    qi: np.ndarray,
    rank: np.ndarray,
    gain: np.ndarray,
    relevant: np.ndarray,
    n_rel: np.ndarray,
    n_ret: np.ndarray,
    idcg: dict[int | None, np.ndarray],
    recall_denominator: dict[int | None, np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """Metric values per query from the rows holding a positive gain (query, rank, gain): each
    metric's kernel from the measure registry (:mod:`analysis.core.measures`).

    ``recall_denominator`` (LIST's variant) replaces ``n_rel`` as the divisor of recall@k.
    """
    judged = Judged(qi, rank, gain, relevant, n_rel, n_ret, idcg, recall_denominator)
    out: dict[str, np.ndarray] = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        for m in metrics:
            out[m.label] = REGISTRY[m.measure].kernel(judged, m.k)
    return out


def tie_rank(
    rank: np.ndarray,
    gain: np.ndarray,
    block: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    best: bool,
) -> np.ndarray:
    """Ranks of gain rows when each tie block is reordered by gain (best: descending first)."""
    out = rank.copy()
    tied = np.flatnonzero(block >= 0)
    if len(tied) == 0:
        return out
    b, g = block[tied], gain[tied]
    order = np.lexsort((-g if best else g, b))
    b_sorted = b[order]
    j = rk.positions(b_sorted) - 1
    if best:
        new = start[b_sorted] + j
    else:
        count = np.bincount(b_sorted, minlength=len(start))
        new = end[b_sorted] - count[b_sorted] + 1 + j
    out[tied[order]] = new
    return out
