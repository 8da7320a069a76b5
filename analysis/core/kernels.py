"""Metric kernels: per-query values from the few rows of a ranked run that hold a judged doc.

Inputs are the rows with a positive gain (query index ``qi``, 1-based ``rank``, ``gain``, and
whether the doc is ``relevant``), the number of relevant docs per query ``n_rel``, the number of
returned docs ``n_ret`` and the ideal DCG per cutoff. Nothing loops over queries; formulas are in
:mod:`analysis.core.metrics`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from analysis.core import ranking as rk
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
    """Metric values per query from the rows holding a positive gain (query, rank, gain).

    ``recall_denominator`` (LIST's variant) replaces ``n_rel`` as the divisor of recall@k.
    """
    nq = len(n_rel)
    out: dict[str, np.ndarray] = {}
    rq, rr = qi[relevant], rank[relevant]
    by_rank = np.lexsort((rr, rq))
    rq_s, rr_s = rq[by_rank], rr[by_rank]
    precision_at = rk.positions(rq_s) / rr_s  # precision at the rank of each relevant doc
    first = np.full(nq, np.inf)
    if len(rq):
        np.minimum.at(first, rq, rr)  # rows are few: only relevant retrieved docs
    with np.errstate(divide="ignore", invalid="ignore"):
        for m in metrics:
            limit = m.k if m.k is not None else np.inf
            within = rr <= limit
            hits = np.bincount(rq[within], minlength=nq).astype(np.float64)
            if m.measure == "hit":
                value = (hits > 0).astype(np.float64)
            elif m.measure == "recall":
                denom = n_rel if recall_denominator is None else recall_denominator[m.k]
                value = np.where(denom > 0, hits / np.maximum(denom, 1), 0.0)
            elif m.measure == "precision":
                denom = np.full(nq, float(m.k)) if m.k is not None else n_ret.astype(np.float64)
                value = np.where(denom > 0, hits / np.maximum(denom, 1), 0.0)
            elif m.measure == "mrr":
                value = np.where(first <= limit, 1.0 / first, 0.0)
            elif m.measure == "map":  # trec_eval map / map_cut_k: divided by all relevant
                w = np.where(rr_s <= limit, precision_at, 0.0)
                total = np.bincount(rq_s, weights=w, minlength=nq)
                value = np.where(n_rel > 0, total / np.maximum(n_rel, 1), 0.0)
            elif m.measure == "rprec":  # trec_eval Rprec: precision at rank R
                top_r = np.bincount(rq[rr <= n_rel[rq]], minlength=nq).astype(np.float64)
                value = np.where(n_rel > 0, top_r / np.maximum(n_rel, 1), 0.0)
            else:  # ndcg
                keep = rank <= limit
                w = np.where(keep, gain / np.log2(rank + 1.0), 0.0)
                dcg = np.bincount(qi, weights=w, minlength=nq)
                ideal = idcg[m.k]
                value = np.where(ideal > 0, dcg / np.where(ideal > 0, ideal, 1.0), 0.0)
            out[m.label] = value
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
