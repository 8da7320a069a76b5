"""Per-query geo diagnostics, computed once per dataset and vectorized per model.

A :class:`GeoIndex` holds what depends only on the dataset (the POIs' exact coordinate stacks,
their twin groups, the query points, the gold pairs and the per-query columns that do not
depend on a run: distance to the nearest gold and the gold's stack size). Evaluating a model
then takes numpy passes over its run, keyed by integer codes (ids are matched exactly as
strings through ``pandas.Index.get_indexer``), instead of pandas merges and a second pass over
stacks and twins per model.

:func:`model_geo_columns` also ranks only the rows a diagnostic can look at. Every diagnostic
reads ranks up to the first gold or up to the cutoff ``k``, and the twin-aware metrics read
the first 10 documents after twins are merged. Those rows all have a score at least
``t = min(best gold score, m-th best score)`` with ``m = max(k, 10) + c``, where ``c`` counts
the query's rows whose document (or twin group) already occurred in the query: a row at
position ``p`` of the deduplicated ranking has at most ``p - 1 + c`` raw rows scored above it.
The rows scored at least ``t`` (compared as 32-bit floats, so every tie, under either the
float32 or the float64 reading of scores, is kept whole) form a prefix of the ranking, whose
ranks are therefore the ranks in the whole run: the prefix gives exactly the numbers of the
whole run, for any tie policy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa

from analysis.core import ranking as rk
from analysis.core.errors import InputError
from analysis.core.metrics import TiePolicy, evaluate, rank_run, run_arrays
from analysis.geo.geometry import (
    _check_range,
    _require_unique_ids,
    _twin_groups,
    coordinate_stacks,
    haversine_m,
)

TWIN_METRICS = ("recall@10", "ndcg@10")
GEO_COLUMNS = (
    "query_id",
    "dist_query_gold_m",
    "dist_query_top1_m",
    "gold_stack_size",
    "first_gold_rank",
    "indistinguishable",
    "n_above_gold_on_gold_coord",
    "stackmates_in_top_k",
)


@dataclass(frozen=True)
class GeoIndex:
    """Dataset-level structures for the geo diagnostics (see :func:`geo_index`).

    Documents are numbered by ``docs`` (the POIs first, in table order, then gold ids that are
    not POIs); queries by ``queries`` (the qrels' query ids, in order of first appearance).
    """

    queries: pd.Index
    docs: pd.Index
    query_set: pa.Array  # the same ids as Arrow strings, for lookups
    doc_set: pa.Array
    stack: np.ndarray  # exact stack per doc, -1 when not a located POI
    lat: np.ndarray  # per doc, NaN when not a located POI
    lon: np.ndarray
    canonical: np.ndarray  # per doc: the doc number of its twin group's first POI (or itself)
    qlat: np.ndarray  # per qrels query, NaN when the query has no point
    qlon: np.ndarray
    gold_keys: np.ndarray  # sorted ``query * n_docs + doc`` of the relevant pairs
    gold_stack_keys: np.ndarray  # sorted ``query * n_stacks + stack`` of the located gold
    n_stacks: int
    static: pd.DataFrame  # query_id, dist_query_gold_m, gold_stack_size (one row per query)
    twin_qrels: pd.DataFrame  # the qrels with twins merged (canonical ids, max relevance)
    renamed_gold: np.ndarray  # per query: a judged doc of the query is a (non-first) twin

    @property
    def has_twins(self) -> bool:
        return bool(np.any(self.canonical != np.arange(len(self.canonical))))


def _require_qrels_columns(qrels: pd.DataFrame) -> None:
    missing = [c for c in ("query_id", "doc_id", "relevance") if c not in qrels.columns]
    if missing:
        raise InputError("qrels", None, f"missing column(s) {', '.join(missing)}")


def _lookup(values: pd.Series | pd.Index | np.ndarray, value_set: pa.Array) -> np.ndarray:
    """Position of each id string in ``value_set`` (unique strings), -1 when absent: an exact
    hash lookup in Arrow."""
    arr = values.array if isinstance(values, pd.Series | pd.Index) else values
    return rk.index_of(rk.as_string_array(pd.array(arr, dtype="str")), value_set)


def _member(sorted_keys: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """``np.isin(keys, sorted_keys)`` for sorted unique ``sorted_keys``, by binary search."""
    if len(sorted_keys) == 0:
        return np.zeros(len(keys), dtype=bool)
    pos = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
    return sorted_keys[pos] == keys


def _group_first(groups: np.ndarray, order_key: np.ndarray) -> np.ndarray:
    """Row of the smallest ``order_key`` in each group (earlier row on equal keys), as an
    array of row positions, one per group present (in no particular order). Rows already
    grouped with the key ascending inside each group (a ranking) need no sort."""
    if len(groups) == 0:
        return np.zeros(0, dtype=np.int64)
    change = groups[1:] != groups[:-1]
    if not np.any(~change & (order_key[1:] < order_key[:-1])):  # ascending inside each run
        starts = np.flatnonzero(np.r_[True, change])
        if len(starts) == len(np.unique(groups[starts])):  # each group is one contiguous run
            return starts
    order = np.lexsort((np.arange(len(groups)), order_key, groups))
    g = groups[order]
    first = np.r_[True, g[1:] != g[:-1]] if len(g) else np.zeros(0, dtype=bool)
    return order[first]


def geo_index(qrels: pd.DataFrame, queries: pd.DataFrame, pois: pd.DataFrame) -> GeoIndex:
    """Compute the dataset-level part of the geo diagnostics once: exact stacks, twins, query
    points, gold pairs, and per query the distance to the nearest located gold
    (``dist_query_gold_m``) and the largest stack of its located gold (``gold_stack_size``).

    ``pois`` need unique ``doc_id`` and numeric ``lat, lon`` (a POI with a NaN coordinate is in
    no stack and has no twin); ``queries`` unique ``query_id`` (``lat, lon`` optional; a value
    that is not a number is no point); gold means ``relevance >= 1``. Raises ``InputError`` on
    duplicate ids, missing columns, or an infinite or out-of-range latitude or longitude of a
    POI or a query (naming the row).
    """
    _require_unique_ids(pois, "doc_id", "pois")
    _require_unique_ids(queries, "query_id", "queries")
    _require_qrels_columns(qrels)
    qrels_q = qrels["query_id"].astype("str")
    qrels_d = qrels["doc_id"].astype("str")
    qids = pd.Index(pd.unique(qrels_q), dtype="str")
    st = coordinate_stacks(pois)
    poi_ids = st["doc_id"].astype("str").to_numpy(dtype=object)
    poi_set = pa.array(poi_ids, type=pa.string())
    query_set = pa.array(qids.to_numpy(dtype=object), type=pa.string())
    n_pois = len(poi_ids)
    # every qrels row looked up once: its query's number and its doc's (POIs first, then the
    # relevant docs that are not POIs, in order of first appearance)
    jq = _lookup(qrels_q, query_set)
    jd = _lookup(qrels_d, poi_set)
    relevance = pd.to_numeric(qrels["relevance"], errors="coerce").to_numpy(np.float64)
    outside = np.flatnonzero(jd < 0)
    rel_out = outside[relevance[outside] >= 1]
    extra = pd.unique(qrels_d.to_numpy(dtype=object)[rel_out])
    if len(outside):
        found = pd.Index(extra, dtype="str").get_indexer(qrels_d.to_numpy(dtype=object)[outside])
        jd[outside] = np.where(found >= 0, n_pois + found, -1)
    docs = pd.Index(np.r_[poi_ids, extra], dtype="str")
    doc_set = pa.array(docs.to_numpy(dtype=object), type=pa.string())
    n_docs = len(docs)
    sid = st["stack_id"].to_numpy(dtype=np.int64)
    stack = np.r_[sid, np.full(len(extra), -1, dtype=np.int64)]
    size = np.r_[st["stack_size"].to_numpy(dtype=np.int64), np.zeros(len(extra), np.int64)]
    lat = np.r_[pd.to_numeric(st["lat"]).to_numpy(np.float64), np.full(len(extra), np.nan)]
    lon = np.r_[pd.to_numeric(st["lon"]).to_numpy(np.float64), np.full(len(extra), np.nan)]
    canonical = np.arange(n_docs, dtype=np.int64)
    if "text" in pois.columns:  # each twin -> the group's first POI in table order
        canonical[:n_pois] = _twin_groups(sid, pois["text"])[2]
    qpos = pd.Index(queries["query_id"].astype("str")).get_indexer(qids)
    qlat = np.full(len(qids), np.nan)
    qlon = np.full(len(qids), np.nan)
    if {"lat", "lon"} <= set(queries.columns):
        raw_lat = pd.to_numeric(queries["lat"], errors="coerce").to_numpy(np.float64)
        raw_lon = pd.to_numeric(queries["lon"], errors="coerce").to_numpy(np.float64)
        _check_range(raw_lat, raw_lon, queries, "queries")
        found = qpos >= 0
        qlat[found], qlon[found] = raw_lat[qpos[found]], raw_lon[qpos[found]]
    relevant = np.flatnonzero(relevance >= 1)
    gq, gd = jq[relevant], jd[relevant]
    gold_keys = np.unique(gq.astype(np.int64) * n_docs + gd)
    located = stack[gd] >= 0
    n_stacks = int(sid.max()) + 1 if len(sid) and sid.max() >= 0 else 1
    gold_stack_keys = np.unique(gq[located].astype(np.int64) * n_stacks + stack[gd][located])
    nearest = np.full(len(qids), np.nan)
    dist = haversine_m(qlat[gq[located]], qlon[gq[located]], lat[gd[located]], lon[gd[located]])
    np.fmin.at(nearest, gq[located], np.asarray(dist, dtype=np.float64))  # NaN-skipping min
    biggest = np.full(len(qids), -1, dtype=np.int64)
    np.maximum.at(biggest, gq[located], size[gd[located]])
    static = pd.DataFrame(
        {
            "query_id": pd.Series(qids, dtype="str"),
            "dist_query_gold_m": nearest,
            "gold_stack_size": pd.array(np.where(biggest >= 0, biggest, 0), dtype="Int64"),
        }
    )
    static.loc[biggest < 0, "gold_stack_size"] = pd.NA
    none = np.zeros(len(qids), dtype=bool)
    index = GeoIndex(qids, docs, query_set, doc_set, stack, lat, lon, canonical, qlat, qlon,
                     gold_keys, gold_stack_keys, n_stacks, static, qrels, none)  # fmt: skip
    twin_qrels = _twin_qrels(qrels, index if index.has_twins else None, jd)
    renamed = (jd >= 0) & (canonical[np.maximum(jd, 0)] != jd)
    renamed_gold = np.zeros(len(qids), dtype=bool)
    renamed_gold[jq[renamed]] = True
    return GeoIndex(**{**index.__dict__, "twin_qrels": twin_qrels, "renamed_gold": renamed_gold})


def _twin_qrels(qrels: pd.DataFrame, index: GeoIndex | None, pos: np.ndarray) -> pd.DataFrame:
    """The qrels with each twin replaced by its group's canonical id, one row per (query, doc)
    with the maximum relevance (as :func:`analysis.geo.canonicalize_twins`); ``pos``: each
    row's doc number in ``index.docs`` (-1 outside)."""
    qr = qrels.copy()
    qr["query_id"] = qr["query_id"].astype("str")
    qr["doc_id"] = qr["doc_id"].astype("str")
    if index is not None:
        canon = np.where(pos >= 0, index.canonical[np.maximum(pos, 0)], -1)
        renamed = (pos >= 0) & (canon != pos)
        if renamed.any():
            ids = qr["doc_id"].to_numpy(dtype=object)
            ids[renamed] = index.docs[canon[renamed]]
            qr["doc_id"] = pd.array(ids, dtype="str")
    qr["_pos"] = np.arange(len(qr))
    qr = qr.sort_values(["relevance", "_pos"], ascending=[False, True], kind="stable")
    qr = qr.drop_duplicates(["query_id", "doc_id"], keep="first").sort_values("_pos")
    return qr.drop(columns="_pos").reset_index(drop=True)


def geo_diagnostics(
    ranked_run: pd.DataFrame,
    qrels: pd.DataFrame,
    queries: pd.DataFrame,
    pois: pd.DataFrame,
    k: int = 10,
    *,
    index: GeoIndex | None = None,
) -> pd.DataFrame:
    """Per-query geo diagnostics, one row per query id in ``qrels`` (the rows of
    ``analysis.core.metrics.evaluate``, so the two tables merge one-to-one on ``query_id``).

    Columns:

    * ``dist_query_gold_m``: haversine distance (m) from the query point to the *nearest*
      relevant POI (``relevance >= 1``); NaN when the query or all its gold lack coordinates.
    * ``dist_query_top1_m``: distance from the query point to the rank-1 document; NaN when the
      query has no ranking or the document is not a located POI.
    * ``gold_stack_size`` (Int64): the largest exact-coordinate stack size over the query's gold
      POIs (1 = the gold sits alone); NA when no gold is a located POI.
    * ``first_gold_rank`` (Int64): rank of the best-ranked relevant document; NA if none is
      retrieved.
    * ``n_above_gold_on_gold_coord`` (int): non-gold POIs ranked above the first retrieved gold
      that sit on *that* gold's exact coordinate (same exact stack).
    * ``indistinguishable`` (bool): ``n_above_gold_on_gold_coord > 0`` -- a non-gold POI ranked
      above the first gold sits on the gold's coordinate, where "the gold's coordinate" is the
      coordinate of the first-ranked gold (the one that sets ``first_gold_rank``). A retriever
      cannot separate these POIs by location; only text can. False when no gold is retrieved
      or the first gold has no coordinate. Ranks are taken over the whole ranking, not only the
      top ``k``.
    * ``stackmates_in_top_k`` (int): non-gold POIs in the top ``k`` that share an exact
      coordinate with any gold of the query.

    ``ranked_run`` must already be ranked (``query_id, doc_id, rank``; see
    ``analysis.core.metrics.rank_run``). Query ids of the run that are not in ``qrels`` are
    ignored. ``queries`` without ``lat``/``lon`` columns give NaN distances. ``pois`` needs
    unique ``doc_id`` and numeric ``lat, lon``. ``index``: the dataset's :func:`geo_index`
    (built from ``qrels, queries, pois`` when not given).
    """
    for col in ("query_id", "doc_id", "rank"):
        if col not in ranked_run.columns:
            raise InputError(
                "run",
                None,
                f"missing column {col} (rank the run first, e.g. analysis.core.metrics.rank_run)",
            )
    ix = index if index is not None else geo_index(qrels, queries, pois)
    q = _lookup(ranked_run["query_id"], ix.query_set)
    d = _lookup(ranked_run["doc_id"], ix.doc_set)
    rank = pd.to_numeric(ranked_run["rank"], errors="raise").to_numpy(dtype=np.int64)
    return _diagnostics(q, d, rank, ix, k)


def _diagnostics(
    q: np.ndarray, d: np.ndarray, rank: np.ndarray, ix: GeoIndex, k: int
) -> pd.DataFrame:
    """:func:`geo_diagnostics` from the rows' query and doc numbers (-1 outside the index)."""
    nq, n_docs = len(ix.queries), len(ix.docs)
    keep = q >= 0
    if not keep.all():
        q, d, rank = q[keep], d[keep], rank[keep]
    known = d >= 0
    gold_doc = np.zeros(n_docs + 1, dtype=bool)  # docs that are gold somewhere; last: unknown
    gold_doc[ix.gold_keys % max(n_docs, 1)] = True
    gold = gold_doc[d]  # candidates, then confirmed by (query, doc)
    gold[gold] = _member(ix.gold_keys, q[gold].astype(np.int64) * n_docs + d[gold])
    stack = np.where(known, ix.stack[np.maximum(d, 0)], -1)

    top1_dist = np.full(nq, np.nan)
    top = _group_first(q, rank)
    if len(top):
        dt = np.where(known[top], d[top], 0)
        far = haversine_m(ix.qlat[q[top]], ix.qlon[q[top]], ix.lat[dt], ix.lon[dt])
        top1_dist[q[top]] = np.where(known[top], far, np.nan)

    first_rank = np.full(nq, np.iinfo(np.int64).max)
    first_stack = np.full(nq, -1, dtype=np.int64)
    g_rows = np.flatnonzero(gold)
    fg = g_rows[_group_first(q[g_rows], rank[g_rows])]
    first_rank[q[fg]], first_stack[q[fg]] = rank[fg], stack[fg]

    fs = first_stack[q]
    above = ~gold & (rank < first_rank[q]) & (fs >= 0) & (stack == fs)
    n_above = np.bincount(q[above], minlength=nq)
    mate = ~gold & (rank <= k) & (stack >= 0)
    mate[mate] = _member(ix.gold_stack_keys, q[mate].astype(np.int64) * ix.n_stacks + stack[mate])
    n_mates = np.bincount(q[mate], minlength=nq)

    retrieved = np.zeros(nq, dtype=bool)
    retrieved[q[fg]] = True
    first_gold = pd.arrays.IntegerArray(np.where(retrieved, first_rank, 0), ~retrieved)
    columns = {
        "query_id": ix.static["query_id"],
        "dist_query_gold_m": ix.static["dist_query_gold_m"],
        "dist_query_top1_m": top1_dist,
        "gold_stack_size": ix.static["gold_stack_size"],
        "first_gold_rank": first_gold,
        "indistinguishable": n_above > 0,
        "n_above_gold_on_gold_coord": n_above.astype(np.int64),
        "stackmates_in_top_k": n_mates.astype(np.int64),
    }
    return pd.DataFrame({c: columns[c] for c in GEO_COLUMNS})


def _doc_groups(docs: pd.Series, ix: GeoIndex) -> tuple[np.ndarray, np.ndarray]:
    """``(doc number, twin group)`` of each row: the doc's number in ``ix.docs`` (-1 outside)
    and its group's canonical number (docs outside the index are their own group, numbered
    from ``len(ix.docs)``)."""
    pos = _lookup(docs, ix.doc_set)
    group = np.where(pos >= 0, ix.canonical[np.maximum(pos, 0)], -1)
    outside = np.flatnonzero(pos < 0)
    if len(outside):
        codes, _ = pd.factorize(docs.to_numpy(dtype=object)[outside])
        group[outside] = len(ix.docs) + codes
    return pos, group


def _sorted_groups(q: np.ndarray, scores: np.ndarray, n_q: int) -> tuple[np.ndarray, np.ndarray]:
    """Row order putting each query's rows together by score descending, and the first
    position of each query code ``0..n_q-1`` in that order (no sort when the file is already
    so); a code without rows starts where the next one does."""
    change = np.flatnonzero(q[1:] != q[:-1]) + 1
    starts = np.r_[0, change] if len(q) else np.zeros(0, dtype=np.int64)
    same = q[1:] == q[:-1]
    grouped = len(starts) == np.count_nonzero(np.bincount(q, minlength=n_q))
    if grouped and not np.any(same & (scores[1:] > scores[:-1])):
        order = np.arange(len(q))
    else:
        order = np.lexsort((-scores, q))
    sizes = np.bincount(q, minlength=n_q)
    return order, np.cumsum(sizes) - sizes


def _prefix(run: pd.DataFrame, ix: GeoIndex, k: int) -> pd.DataFrame:
    """The rows of ``run`` (queries of the qrels only) that the diagnostics and the twin-aware
    metrics can look at: per query, every row scored at least ``min(best gold score, m-th best
    score)`` as 32-bit floats, ``m = max(k, 10) + repeated rows`` (see the module docstring)."""
    _, _, scores = run_arrays(run)
    qpos = _lookup(run["query_id"], ix.query_set)
    rows = np.flatnonzero(qpos >= 0)
    q, s = qpos[rows], scores[rows]
    docs = run["doc_id"] if len(rows) == len(run) else run["doc_id"].iloc[rows]
    dpos, group = _doc_groups(docs, ix)
    nq = len(ix.queries)
    repeated = pd.Series(q * (len(ix.docs) + len(rows)) + group).duplicated().to_numpy()
    extra = np.bincount(q[repeated], minlength=nq)
    gold = dpos >= 0
    gold[gold] = _member(ix.gold_keys, q[gold].astype(np.int64) * len(ix.docs) + dpos[gold])
    best_gold = np.full(nq, -np.inf)
    np.maximum.at(best_gold, q[gold], s[gold])
    best_gold[np.bincount(q[gold], minlength=nq) == 0] = np.inf  # no gold: the top m only
    order, starts = _sorted_groups(q, s, nq)
    sizes = np.bincount(q, minlength=nq)
    m = np.minimum(min(max(k, 10), len(rows)) + extra, sizes)  # a huge k: every row
    present = sizes > 0
    mth = np.full(nq, np.inf)
    mth[present] = s[order[starts[present] + m[present] - 1]]
    with np.errstate(over="ignore"):
        cut = np.minimum(best_gold, mth).astype(np.float32)
        keep = s.astype(np.float32) >= cut[q]
    return run.iloc[rows[keep]]


def model_geo_columns(
    run: pd.DataFrame,
    index: GeoIndex,
    ties: TiePolicy = "trec_eval",
    k: int = 10,
    strict: pd.DataFrame | None = None,
    relevance_threshold: int = 1,
) -> pd.DataFrame:
    """For one model: :func:`geo_diagnostics` (from ``index``) and the twin-aware
    ``twin_recall@10`` and ``twin_ndcg@10`` (a twin of a gold counts as the gold; see
    :func:`analysis.geo.canonicalize_twins`), one row per qrels query.

    Only the prefix of each query's ranking that these columns can depend on is ranked (see
    the module docstring); the numbers are those of the whole run. ``strict``: the model's
    ``query_id, recall@10, ndcg@10`` over the whole run (relevant = ``relevance >= 1``, the same
    tie policy), when known: a query none of whose ranked or judged documents is a twin of
    another has twin-aware values equal to these, so only the other queries are evaluated.
    ``relevance_threshold``: relevant means ``relevance >= relevance_threshold`` in the
    twin-aware metrics, as in the dataset's other metrics.
    """
    ranked = rank_run(_prefix(run, index, k), ties)
    q = _lookup(ranked["query_id"], index.query_set)
    pos, group = _doc_groups(ranked["doc_id"], index)
    geo = _diagnostics(q, pos, ranked["rank"].to_numpy(dtype=np.int64), index, k)
    names = ["query_id", *(f"twin_{m}" for m in TWIN_METRICS)]
    twin_run, affected = _twin_run(ranked, index, q, pos, group)
    if strict is None:
        twin = evaluate(
            twin_run,
            index.twin_qrels,
            list(TWIN_METRICS),
            ties=ties,
            relevance_threshold=relevance_threshold,
        )
        twin.columns = names
        return geo.merge(twin, on="query_id", how="left")
    affected |= index.renamed_gold
    twin = strict[["query_id", *TWIN_METRICS]].copy()
    twin.columns = names
    if affected.any():
        qrels = index.twin_qrels
        sub_qrels = qrels[affected[_lookup(qrels["query_id"], index.query_set)]]
        sub_run = twin_run[affected[_lookup(twin_run["query_id"], index.query_set)]]
        part = evaluate(
            sub_run,
            sub_qrels,
            list(TWIN_METRICS),
            ties=ties,
            relevance_threshold=relevance_threshold,
        ).set_index("query_id")
        rows = affected[_lookup(twin["query_id"], index.query_set)]
        for m in TWIN_METRICS:
            column = twin[f"twin_{m}"].to_numpy(dtype=np.float64, copy=True)
            column[rows] = part.loc[twin["query_id"][rows], m].to_numpy(dtype=np.float64)
            twin[f"twin_{m}"] = column
    return geo.merge(twin, on="query_id", how="left")


def _twin_run(
    ranked: pd.DataFrame, ix: GeoIndex, q: np.ndarray, pos: np.ndarray, group: np.ndarray
) -> tuple[pd.DataFrame, np.ndarray]:
    """A ranked run (as :func:`analysis.core.metrics.rank_run` returns it: grouped by query,
    in rank order) with twins merged: each twin renamed to its canonical id, then per
    (query, canonical doc) the best-ranked row kept and ranks renumbered (as
    :func:`analysis.geo.canonicalize_twins` does for a ranked run); and, per qrels query,
    whether any of its rows was renamed (only those queries can change). ``q``, ``pos`` and
    ``group``: each row's query number, doc number and twin group (see :func:`_doc_groups`)."""
    affected = np.zeros(len(ix.queries), dtype=bool)
    if not ix.has_twins:
        return ranked, affected
    renamed = (pos >= 0) & (group != pos)
    affected[q[renamed & (q >= 0)]] = True
    n = len(ix.docs) + len(ranked)
    keep = ~pd.Series(q.astype(np.int64) * n + group).duplicated().to_numpy()
    out = ranked[keep].copy()
    if renamed[keep].any():
        ids = out["doc_id"].astype("str").to_numpy(dtype=object)
        ids[renamed[keep]] = ix.docs[group[keep][renamed[keep]]]
        out["doc_id"] = pd.array(ids, dtype="str")
    out["rank"] = rk.positions(q[keep])
    return out.reset_index(drop=True), affected
