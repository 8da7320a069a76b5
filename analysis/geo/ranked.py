"""The geo columns of one model from the metric core's own ranking (ranked once per model).

:func:`ranked_geo_columns` gives exactly :func:`analysis.geo.diagnostics.model_geo_columns`'s
columns, but reads the ranking the core computed for the model's metrics
(:func:`analysis.core.ranked.evaluate_run_ranked`) instead of ranking the run again:

* the diagnostics (:func:`analysis.geo.diagnostics.geo_diagnostics`) are taken over the whole
  ranking, whose ranks the prefix of ``model_geo_columns`` reproduces;
* the twin-aware ``twin_recall@10`` and ``twin_ndcg@10`` are the metric core's values on the
  twin run (each twin renamed to its group's first POI, then per (query, group) the best-ranked
  row kept; :func:`analysis.geo.canonicalize_twins`) cut to the rows a cutoff of 10 can reach:
  per query the twin run's rows whose score, as a 32-bit float, is at least that of its 10th
  row. The twin run keeps the ranking's order, in which scores never increase (as float32,
  under either tie policy), so these rows are a prefix holding every row tied with the 10th:
  re-ranked by the core, their top 10 is the whole twin run's top 10, and recall@10 and
  nDCG@10 (whose denominators come from the qrels) are those of the whole twin run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from analysis.core import ranking as rk
from analysis.core.metrics import TiePolicy, evaluate_arrays
from analysis.core.ranked import RankedRun
from analysis.geo.diagnostics import TWIN_METRICS, GeoIndex, _diagnostics

TWIN_CUTOFF = 10  # the cutoff of TWIN_METRICS


def ranked_geo_columns(
    ranking: RankedRun,
    index: GeoIndex,
    ties: TiePolicy = "trec_eval",
    k: int = 10,
    relevance_threshold: int = 1,
    first_gold_rank: np.ndarray | None = None,
    strict: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """For one model, from its ranking: the diagnostics of
    :func:`analysis.geo.geo_diagnostics` (stack-mates counted in the top ``k``) and
    ``twin_recall@10``, ``twin_ndcg@10`` (relevant = ``relevance >= relevance_threshold``, the
    tie policy ``ties`` the ranking was made with), one row per qrels query, as
    :func:`analysis.geo.model_geo_columns` returns them (see the module docstring).

    ``first_gold_rank``: per query of ``index.queries``, the rank of its first document with
    ``relevance >= 1`` (0: none retrieved; ``inf``: not known), as the metric core's
    diagnostics give it at relevance threshold 1. The diagnostics then read the top
    ``k`` rows, the first gold's row and, only where the first gold's stack holds other POIs,
    the rows above it (elsewhere no row above it can sit on its coordinate); without it every
    ranked row is looked up.

    ``strict``: ``query_id, recall@10, ndcg@10`` of the same ranking at the same threshold
    (the metric core's own values), when known. A query with no renamed twin among the rows the
    twin metrics read, and no judged twin, has twin-aware values equal to these (its twin run is
    a prefix of its ranking), so only the other queries are evaluated again.
    """
    ix = index
    q = rk.index_of(ranking.query_ids, ix.query_set)[ranking.codes]  # -1: not a qrels query
    judged = q >= 0
    if judged.all():
        rows, rank, scores = ranking.rows, ranking.rank, ranking.scores
    else:
        q = q[judged]
        rows, rank, scores = ranking.rows[judged], ranking.rank[judged], ranking.scores[judged]
    nq = len(ix.queries)
    bound = np.full(nq, np.inf)
    gold_rows = np.zeros(0, dtype=np.int64)
    if first_gold_rank is not None:
        bound, gold_rows = _gold_bound(ranking, ix, q, rows, first_gold_rank, k)
    with np.errstate(over="ignore"):
        s32 = scores.astype(np.float32)
    pos, floor = _looked_up(ranking, ix, q, rank, rows, s32, bound, gold_rows)
    sel = np.flatnonzero(pos > -2)
    q, pos, rank, rows, scores, s32 = q[sel], pos[sel], rank[sel], rows[sel], scores[sel], s32[sel]
    geo = _diagnostics(q, pos, rank, ix, k)
    looked = _LookedUp(q, pos, rows, scores, s32, floor)
    twin = _twin_values(ranking, index, (ties, relevance_threshold), looked,
                        _strict_values(strict, ix))  # fmt: skip
    for column in twin.columns[1:]:  # both tables: one row per qrels query, in the same order
        geo[column] = twin[column].to_numpy()
    return geo


def _gold_bound(
    ranking: RankedRun,
    ix: GeoIndex,
    q: np.ndarray,
    rows: np.ndarray,
    first_gold_rank: np.ndarray,
    k: int,
) -> tuple[np.ndarray, np.ndarray]:
    """``(bound per query, first gold rows)``: the ranked rows (positions in ``q``) of each
    query's first gold (rank ``first_gold_rank``) and the rank up to which the diagnostics read
    every row: ``first_gold_rank`` where that gold sits on a stack of two or more POIs (a row
    above it may sit on its coordinate), ``k`` elsewhere (the first gold's own row is read
    anyway); ``inf`` where the first gold's rank is not known."""
    first = np.asarray(first_gold_rank, dtype=np.float64)
    bound = np.maximum(first, k)
    starts, sizes = rk.group_starts(q)
    start = np.zeros(len(ix.queries), dtype=np.int64)
    size = np.zeros(len(ix.queries), dtype=np.int64)
    start[q[starts]], size[q[starts]] = starts, sizes
    has = np.isfinite(first) & (first >= 1) & (first <= size)
    at = np.flatnonzero(has)
    gold_rows = start[at] + first[at].astype(np.int64) - 1
    gold_docs = np.unique(ix.gold_keys % max(len(ix.docs), 1))  # the docs that are gold anywhere
    found = rk.index_of(rk.take(ranking.file_docs, rows[gold_rows]), rk.take(ix.doc_set, gold_docs))
    doc = np.where(found >= 0, gold_docs[np.maximum(found, 0)], -1)
    located = ix.stack[ix.stack >= 0]
    stack_size = np.bincount(located, minlength=ix.n_stacks) if len(located) else np.zeros(1, int)
    stack = np.where(doc >= 0, ix.stack[np.maximum(doc, 0)], -1)
    alone = (doc >= 0) & ((stack < 0) | (stack_size[np.maximum(stack, 0)] < 2))
    bound[at[alone]] = k
    return bound, gold_rows


def _strict_values(strict: pd.DataFrame | None, ix: GeoIndex) -> dict[str, np.ndarray] | None:
    """``strict``'s ``recall@10`` and ``ndcg@10`` per query of ``ix.queries`` (NaN: absent), or
    ``None`` when not given or without those columns."""
    if strict is None or not set(TWIN_METRICS) <= set(strict.columns):
        return None
    at = ix.queries.get_indexer(strict["query_id"].astype("str"))
    out = {}
    for m in TWIN_METRICS:
        column = np.full(len(ix.queries), np.nan)
        column[at[at >= 0]] = strict[m].to_numpy(dtype=np.float64)[at >= 0]
        out[m] = column
    return out


def _looked_up(
    ranking: RankedRun,
    ix: GeoIndex,
    q: np.ndarray,
    rank: np.ndarray,
    rows: np.ndarray,
    s32: np.ndarray,
    bound: np.ndarray,
    also: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """``(doc number of each row, floor per query)``: the rows of rank <= ``bound``, the rows
    ``also`` and those of the twin prefix (scored, as float32, at least the query's floor) are
    looked up in the index (-1: not in it), the others are left at -2.

    The floor is the score at rank ``R`` (``-inf`` when the query has fewer rows), for an ``R``
    with ``R >= 10 + C(R)``, ``C(R)`` being the renamed twins ranked ``<= R``: merging twins
    drops at most ``C(R)`` of the first ``R`` rows (a row is dropped only where an earlier one
    holds its twin group, and each group's rows but one are renamed twins), so the rows scored at
    least as high as rank ``R`` hold the twin run's first 10 rows and every row tied with its
    10th. ``R`` starts at 10 and grows to ``10 + C(R)`` until it holds, looking up more rows as
    it grows."""
    nq = len(ix.queries)
    starts, sizes = rk.group_starts(q)
    first_row = np.zeros(nq, dtype=np.int64)
    count = np.zeros(nq, dtype=np.int64)
    first_row[q[starts]], count[q[starts]] = starts, sizes
    pos = np.full(len(q), -2, dtype=np.int64)
    renamed = np.zeros(len(q), dtype=bool)
    reach = np.full(nq, TWIN_CUTOFF, dtype=np.int64)
    # the first look-up takes a margin of 10 more rows, so that R rarely outgrows it
    wanted = rank <= np.maximum(bound, 2 * TWIN_CUTOFF)[q]
    wanted[also] = True
    while True:
        floor = np.full(nq, -np.inf, dtype=np.float32)
        full = count >= reach
        floor[full] = s32[first_row[full] + reach[full] - 1]
        wanted |= s32 >= floor[q]
        need = np.flatnonzero(wanted & (pos == -2))
        if len(need):  # each look-up hashes the index's ids again: few of them
            found = rk.index_of(rk.take(ranking.file_docs, rows[need]), ix.doc_set)
            pos[need] = found
            if ix.has_twins:
                renamed[need] = (found >= 0) & (ix.canonical[np.maximum(found, 0)] != found)
        twins = np.flatnonzero(renamed)
        dropped = np.bincount(q[twins[rank[twins] <= reach[q[twins]]]], minlength=nq)
        grown = np.maximum(reach, TWIN_CUTOFF + dropped)
        if np.array_equal(grown, reach):
            return pos, floor
        reach = grown


@dataclass(frozen=True)
class _LookedUp:
    """The looked-up ranked rows of the qrels queries, in rank order: query number ``q``, doc
    number ``pos``, file row ``rows``, ``scores`` and as float32 ``s32``; and the floor of
    each query (see :func:`_looked_up`)."""

    q: np.ndarray
    pos: np.ndarray
    rows: np.ndarray
    scores: np.ndarray
    s32: np.ndarray
    floor: np.ndarray


def _twin_values(
    ranking: RankedRun,
    ix: GeoIndex,
    policy: tuple[TiePolicy, int],
    looked: _LookedUp,
    strict: dict[str, np.ndarray] | None = None,
) -> pd.DataFrame:
    """``query_id, twin_recall@10, twin_ndcg@10`` from the ``looked`` up rows: the rows scored
    at least their query's floor are deduplicated by twin group, then cut after the rows tied
    with the 10th. ``policy``: the tie policy and the relevance threshold. ``strict``: the
    metric core's values per query (see :func:`ranked_geo_columns`), taken for the queries the
    twins leave unchanged."""
    ties, relevance_threshold = policy
    q, pos, rows, scores, s32, floor = (looked.q, looked.pos, looked.rows, looked.scores,
                                        looked.s32, looked.floor)  # fmt: skip
    nq = len(ix.queries)
    renamed = np.zeros(len(q), dtype=bool)
    group = pos
    if ix.has_twins:
        group = np.where(pos >= 0, ix.canonical[np.maximum(pos, 0)], -1)
        renamed = (pos >= 0) & (group != pos)
    head = np.flatnonzero(s32 >= floor[q])  # a prefix of each query
    keep = np.ones(len(head), dtype=bool)
    if renamed[head].any():  # keep the first row of each (query, twin group)
        inside = np.flatnonzero(pos[head] >= 0)  # docs outside the index are unique
        key = q[head][inside].astype(np.int64) * len(ix.docs) + group[head][inside]
        keep[inside[pd.Series(key).duplicated().to_numpy()]] = False
    kept = head[keep]
    tenth = np.full(nq, -np.inf, dtype=np.float32)
    last = rank_within(q[kept]) == TWIN_CUTOFF
    tenth[q[kept][last]] = s32[kept][last]
    cut = kept[s32[kept] >= tenth[q[kept]]]
    if strict is not None:  # only the queries twins can change are evaluated again
        changed = ix.renamed_gold.copy()
        changed[q[head[renamed[head]]]] = True
        cut = cut[changed[q[cut]]]
    doc_ids = rk.take(ranking.file_docs, rows[cut])
    if renamed[cut].any():
        canonical = rk.take(ix.doc_set, np.maximum(group[cut], 0))
        doc_ids = pc.if_else(rk.from_numpy(renamed[cut]), canonical, doc_ids.cast(pa.string()))
    query_ids, columns, _, _ = evaluate_arrays(
        rk.take(ix.query_set, q[cut]),
        doc_ids,
        scores[cut],
        ix.twin_qrels,
        list(TWIN_METRICS),
        ties=ties,
        relevance_threshold=relevance_threshold,
        split=ix.twin_qrels.attrs.get("split_queries"),
    )
    at = rk.index_of(query_ids, ix.query_set)
    twin = pd.DataFrame({"query_id": pd.Series(ix.queries, dtype="str")})
    for m in TWIN_METRICS:  # NaN for a query the twin qrels leave out (outside their split)
        column = np.full(nq, np.nan)
        column[at] = columns[m]
        if strict is not None:
            column = np.where(changed, column, strict[m])
        twin[f"twin_{m}"] = column
    return twin


def rank_within(groups: np.ndarray) -> np.ndarray:
    """1-based place of each row in its (contiguous) group."""
    return rk.positions(groups) if len(groups) else np.zeros(0, dtype=np.int64)
