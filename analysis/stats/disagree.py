"""Disagreement between two runs, query by query, without qrels.

For every query, the top ``k`` documents of run A and of run B (as ranked by
:func:`analysis.core.metrics.rank_run`, after the tie policy) are compared by three measures:

``jaccard@k``
    ``|A_k ∩ B_k| / |A_k ∪ B_k|``, the share of shared documents, order ignored.

``rbo``
    Rank-biased overlap, extrapolated (RBO_ext; Webber, Moffat & Zobel 2010, "A similarity
    measure for indefinite rankings", eq. 32). With ``X_d`` the overlap of the two lists' first
    ``d`` documents, the shorter list ``S`` of length ``s`` and the longer ``L`` of length ``l``::

        RBO_ext = (1-p)/p · [ Σ_{d=1..l} X_d/d · p^d + Σ_{d=s+1..l} X_s (d-s)/(s·d) · p^d ]
                  + [ (X_l - X_s)/l + X_s/s ] · p^l

    For lists of equal length ``k`` this is eq. 30, ``(1-p)/p Σ_{d≤k} X_d/d p^d + X_k/k p^k``:
    the agreement seen at depth ``k`` is assumed to hold below it. Identical lists give 1,
    disjoint lists 0. ``p`` (default 0.9) sets the top-weightedness: the first ``d`` ranks carry
    ``1 - p^(d-1) + (1-p)/p · d · (ln(1/(1-p)) - Σ_{i<d} p^i/i)`` of the weight (eq. 21; 86% for
    the top 10 at p = 0.9).

``tau_ap``
    Kendall's AP rank correlation (Yilmaz, Aslam & Robertson 2008) of the documents that both
    top-k lists contain, in their relative orders. With the documents ordered by a reference
    list, ``τ_AP(X | ref) = 2/(n-1) · Σ_{i=2..n} C(i)/(i-1) - 1``, where ``C(i)`` counts the
    documents above position ``i`` in the reference that X also ranks above it. A swap near the
    top costs more than one near the bottom. τ_AP is not symmetric; as DiffIR does, the value
    reported is the mean of ``τ_AP(A | B)`` and ``τ_AP(B | A)``, so swapping the runs changes
    nothing. Membership differences are what Jaccard and RBO measure; τ_AP is about order only.

Edge cases: the queries are those of either run (first appearance in A, then new ones of B).
A query one run has no document for gets ``jaccard@k = 0`` and ``rbo = 0``; τ_AP needs two
shared documents and is NaN with fewer (a single shared document gives NaN, not 1). A query
with no document in either list cannot occur (it would not be in either run).

``k`` is capped by the longest list of either run: beyond it every top-k list is the whole
list, so ``--k 3000`` on runs of 100 documents per query computes (and reports, under the name
``jaccard@3000``) the values of k = 100. ``k`` above :data:`MAX_K` is refused, and so is a
``(queries, k)`` matrix of more than :data:`MAX_CELLS` cells (about 60 bytes each at the peak):
one query listing 10,000 documents widens every query's row to them.

Everything is vectorized over queries: the top-k lists are a ``(queries, k)`` integer matrix;
documents are matched between the two lists by sorting (no ``k × k`` comparison), and τ_AP
counts concordant pairs by merging sorted halves, level by level: memory is O(queries × k) and
time O(queries × k log² k).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.core.metrics import TiePolicy, rank_run

__all__ = [
    "MAX_CELLS",
    "MAX_K",
    "disagreement",
    "most_different",
    "rbo_ext",
    "tau_ap",
    "top_k_matrix",
]

#: The largest cutoff accepted: a (queries × k) matrix per run is held in memory.
MAX_K = 10_000
#: The most cells of that matrix (queries × k after the cap by the longest list): about 3 GB.
MAX_CELLS = 50_000_000


def top_k_matrix(
    ranked: pd.DataFrame, query_ids: pd.Index, doc_codes: pd.Index, k: int
) -> np.ndarray:
    """Doc codes of the top ``k`` of each query, shape ``(len(query_ids), k)``, -1 padded.

    ``ranked`` is ``query_id, doc_id, rank`` (one row per query and doc, ranks 1..n, as from
    :func:`rank_run`); ``doc_codes`` maps doc ids to integer codes by position.
    """
    top = ranked.loc[ranked["rank"] <= k, ["query_id", "doc_id", "rank"]]
    out = np.full((len(query_ids), k), -1, dtype=np.int64)
    rows = query_ids.get_indexer(top["query_id"].astype("str"))
    cols = top["rank"].to_numpy(dtype=np.int64) - 1
    out[rows, cols] = doc_codes.get_indexer(top["doc_id"].astype("str"))
    return out


def _positions(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """For each cell of ``a``: the position in the same row of ``b`` of the same doc code, -1
    when ``b`` lacks it or the cell is padding. One sort of ``b``'s (row, code) keys and a
    binary search per cell of ``a``: O(n k log(n k)) time, O(n k) memory."""
    n, k = a.shape
    out = np.full((n, k), -1, dtype=np.int64)
    if n == 0 or k == 0:
        return out
    span = int(max(a.max(), b.max())) + 2  # codes are >= -1; a key is row * span + code + 1
    step = max(1, (1 << 62) // span)  # rows per chunk, so that every key fits in int64
    cols = np.arange(k, dtype=np.int64)
    for start in range(0, n, step):
        sa, sb = a[start : start + step], b[start : start + step]
        valid = sb.ravel() >= 0
        if not valid.any():
            continue
        rows = np.arange(len(sa), dtype=np.int64)[:, None] * span
        keys_b = (rows + sb + 1).ravel()[valid]
        where_b = np.broadcast_to(cols, sb.shape).ravel()[valid]
        order = np.argsort(keys_b, kind="stable")
        keys_b, where_b = keys_b[order], where_b[order]
        keys_a = (rows + sa + 1).ravel()
        idx = np.minimum(np.searchsorted(keys_b, keys_a), len(keys_b) - 1)
        hit = (sa.ravel() >= 0) & (keys_b[idx] == keys_a)
        out[start : start + step] = np.where(hit, where_b[idx], -1).reshape(sa.shape)
    return out


def _match_depths(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each position of ``a``: the position in ``b`` of the same doc (-1 if absent).

    Returns ``(pos_in_b, pos_in_a_of_b, depth)``: ``depth`` is ``max(i, j) + 1`` for a doc at
    position i of a and j of b (the depth at which it joins the overlap), ``k + 1`` when b lacks it.
    """
    k = a.shape[1]
    pos_b, pos_a = _positions(a, b), _positions(b, a)
    i = np.arange(k)[None, :]
    depth = np.where(pos_b >= 0, np.maximum(i, pos_b) + 1, k + 1)
    return pos_b, pos_a, depth


def rbo_ext(a: np.ndarray, b: np.ndarray, p: float = 0.9) -> np.ndarray:
    """RBO_ext (Webber et al. 2010, eq. 32; see the module docstring) of each row pair.

    Args:
        a, b: ``(n, k)`` integer matrices of doc codes, each row a ranked list without
            repeats, padded with -1 at the end (a list may be shorter than k).
        p: persistence, ``0 < p < 1``.

    Returns:
        ``(n,)`` floats in [0, 1]; 0 when one list is empty, NaN when both are.
    """
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be strictly between 0 and 1, got {p!r}")
    n, k = a.shape
    len_a, len_b = (a >= 0).sum(axis=1), (b >= 0).sum(axis=1)
    s, l_ = np.minimum(len_a, len_b), np.maximum(len_a, len_b)
    _, _, depth = _match_depths(a, b)
    d = np.arange(1, k + 1)
    # X[:, d-1] = overlap at depth d = number of shared docs whose depth is <= d
    rows = np.arange(n)
    counts = np.bincount((rows[:, None] * (k + 2) + depth).ravel(), minlength=n * (k + 2))
    x = np.cumsum(counts.reshape(n, k + 2)[:, 1 : k + 1], axis=1).astype(np.float64)
    s_idx, l_idx = np.maximum(s - 1, 0), np.maximum(l_ - 1, 0)
    x_s, x_l = x[rows, s_idx], x[rows, l_idx]
    pd_ = p ** d.astype(np.float64)
    within_l = d[None, :] <= l_[:, None]
    beyond_s = within_l & (d[None, :] > s[:, None])
    with np.errstate(divide="ignore", invalid="ignore"):
        first = np.where(within_l, x / d * pd_, 0.0).sum(axis=1)
        extra = np.where(
            beyond_s, x_s[:, None] * (d - s[:, None]) / (s[:, None] * d) * pd_, 0.0
        ).sum(axis=1)
        tail = ((x_l - x_s) / l_ + x_s / s) * p ** l_.astype(np.float64)
        value = (1.0 - p) / p * (first + extra) + tail
    value = np.where(s == 0, 0.0, value)
    value = np.where(l_ == 0, np.nan, value)
    return np.clip(value, 0.0, 1.0)


def _smaller_before(rows: np.ndarray, rank: np.ndarray, value: np.ndarray) -> np.ndarray:
    """For each element: how many elements of its row with a smaller ``rank`` have a smaller
    ``value`` (values distinct within a row; ``rank`` 0..m-1 within each row).

    Bottom-up merge counting, vectorized over every row at once: at the level of width w, each
    element in the right half of its block of 2w ranks counts the left-half elements of the
    block below its value (one sort per level, log2(max m) levels)."""
    counts = np.zeros(len(value), dtype=np.int64)
    top = int(rank.max()) + 1 if len(rank) else 0
    width = 1
    while width < top:
        block = rank // (2 * width)
        right = (rank // width) % 2 == 1
        order = np.lexsort((value, block, rows))
        r_s, b_s, left_s = rows[order], block[order], ~right[order]
        before = np.cumsum(left_s) - left_s  # left elements before each, over every group
        start = np.r_[True, (r_s[1:] != r_s[:-1]) | (b_s[1:] != b_s[:-1])]
        group = np.cumsum(start) - 1
        before = before - before[np.flatnonzero(start)][group]
        counts[order[~left_s]] += before[~left_s]
        width *= 2
    return counts


def _tau_ap_directed(pos_x: np.ndarray) -> np.ndarray:
    """τ_AP(X | ref) over the docs both lists hold, from ``pos_x[r, i]`` = position in X of the
    doc at position i of the reference list (-1 when X lacks it or position i is padding).

    ``C(i)``, the shared docs above position i in the reference that X also ranks above it, is
    counted by :func:`_smaller_before` (no ``k × k`` comparison)."""
    shared = pos_x >= 0
    m = shared.sum(axis=1)
    rows, cols = np.nonzero(shared)  # row-major: reference order within each row
    rank = (np.cumsum(shared, axis=1) - 1)[rows, cols]  # 0-based rank among the shared docs
    c = _smaller_before(rows, rank, pos_x[rows, cols]).astype(np.float64)
    terms = np.where(rank >= 1, c / np.maximum(rank, 1), 0.0)
    total = np.bincount(rows, weights=terms, minlength=len(pos_x))
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = 2.0 / (m - 1) * total - 1.0
    return np.where(m >= 2, tau, np.nan)


def tau_ap(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Symmetric τ_AP of each row pair: ``(τ_AP(a | b) + τ_AP(b | a)) / 2`` over the docs both
    rows hold (module docstring). NaN with fewer than two shared docs."""
    pos_b, pos_a, _ = _match_depths(a, b)
    # pos_b: for a's docs, their position in b (reference a); pos_a: the converse
    return (_tau_ap_directed(pos_b) + _tau_ap_directed(pos_a)) / 2.0


def jaccard(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``|A ∩ B| / |A ∪ B|`` of each row pair (-1 = padding); NaN when both rows are empty."""
    pos_b, _, _ = _match_depths(a, b)
    inter = (pos_b >= 0).sum(axis=1)
    union = (a >= 0).sum(axis=1) + (b >= 0).sum(axis=1) - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union > 0, inter / np.maximum(union, 1), np.nan)


def disagreement(
    run_a: pd.DataFrame,
    run_b: pd.DataFrame,
    *,
    k: int = 10,
    p: float = 0.9,
    ties: TiePolicy = "trec_eval",
) -> pd.DataFrame:
    """Per-query disagreement of two runs (no qrels): ``query_id, jaccard@<k>, rbo, tau_ap``.

    Both runs are ranked with the tie policy first (:func:`rank_run`), then cut at ``k``.
    Rows follow the queries of A (first appearance), then the queries only B has; see the module
    docstring for the formulas and edge cases.

    ``k`` larger than the longest list of either run computes the values of that length (the
    same numbers: every list is whole); the column keeps the name ``jaccard@<k>``.

    Raises:
        ValueError: ``k`` not an integer in 1..:data:`MAX_K`, ``p`` outside (0, 1), or more
            than :data:`MAX_CELLS` queries × k.
    """
    if isinstance(k, bool) or int(k) != k or not 1 <= k <= MAX_K:
        raise ValueError(f"k must be an integer from 1 to {MAX_K}, got {k!r}")
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be strictly between 0 and 1, got {p!r}")
    label = f"jaccard@{int(k)}"
    ra, rb = rank_run(run_a, ties), rank_run(run_b, ties)
    longest = max([int(r["rank"].max()) for r in (ra, rb) if len(r)], default=1)
    k = min(int(k), longest)
    qa, qb = ra["query_id"].astype("str"), rb["query_id"].astype("str")
    query_ids = pd.Index(pd.concat([qa, qb], ignore_index=True).drop_duplicates())
    if len(query_ids) * k > MAX_CELLS:
        raise ValueError(
            f"k = {k:,} over {len(query_ids):,} queries needs {len(query_ids) * k:,} cells per "
            f"run, more than the {MAX_CELLS:,} allowed (the longest list has {longest:,} "
            "documents): use a smaller k"
        )
    docs = pd.concat(
        [ra.loc[ra["rank"] <= k, "doc_id"], rb.loc[rb["rank"] <= k, "doc_id"]], ignore_index=True
    )
    doc_codes = pd.Index(docs.astype("str").drop_duplicates())
    a = top_k_matrix(ra, query_ids, doc_codes, k)
    b = top_k_matrix(rb, query_ids, doc_codes, k)
    return pd.DataFrame(
        {
            "query_id": pd.Series(query_ids, dtype="str"),
            label: jaccard(a, b),
            "rbo": rbo_ext(a, b, p),
            "tau_ap": tau_ap(a, b),
        }
    )


def most_different(table: pd.DataFrame, n: int | None = None) -> pd.DataFrame:
    """The rows of :func:`disagreement` most different first: RBO ascending, then Jaccard
    ascending, then τ_AP ascending (NaN last), then query id. ``n`` keeps the first n rows."""
    jac = next((c for c in table.columns if c.startswith("jaccard@")), None)
    keys = ["rbo", *([jac] if jac else []), "tau_ap", "query_id"]
    out = table.sort_values(keys, na_position="last", kind="stable").reset_index(drop=True)
    return out if n is None else out.head(n)
