"""Per-query retrieval metrics with trec_eval semantics, vectorized over the whole run.

A run is a table ``query_id, doc_id, score`` (any row order); qrels are ``query_id, doc_id,
relevance``. Ids are strings. A document is *relevant* when ``relevance >= relevance_threshold``
(default 1, trec_eval's ``-l 1``).

Ranking
    Rows are sorted by score, descending. Equal scores are ordered by the tie policy:
    ``trec_eval`` (default) by doc id descending, comparing bytes as trec_eval's ``strcmp`` does;
    ``stable`` in file order. Formats that carry ranks but no scores (STaRK's ``pred_rank``) are
    loaded with decreasing scores, so both policies keep their order. A document listed twice for
    one query keeps its best-ranked occurrence (a warning counts them).

Metrics (``k`` is the cutoff; ``rel_i`` the relevance of the doc at rank ``i``; ``R`` the set of
relevant docs of the query in the qrels):

============  ===================================================  ====================
name          formula                                              reference
============  ===================================================  ====================
hit@k         1 if any relevant doc in ranks 1..k, else 0           trec_eval success_k
recall@k      ``|R ∩ top k| / |R|``                                 trec_eval recall_k
precision@k   ``|R ∩ top k| / k`` (k, even if fewer were returned)  trec_eval P_k
mrr           ``1 / rank`` of the first relevant doc, 0 if none     trec_eval recip_rank
mrr@k         as mrr, 0 when the first relevant rank is beyond k    ir_measures RR@k
ndcg@k        ``DCG@k / IDCG@k``; ``DCG@k = Σ_{i≤k} g_i / log2(i+1)``  trec_eval ndcg_cut_k
============  ===================================================  ====================

The gain ``g_i`` is the judged relevance when positive, else 0 (trec_eval). IDCG@k is the DCG of
the ideal ordering of all judged gains of the query, cut at ``k``. ``hit``, ``recall``,
``precision`` and ``ndcg`` without ``@k`` use the whole returned list.

Edge cases
    * a query in the qrels but absent from the run scores 0 on every metric and is counted
      (trec_eval ``-c``); a warning says how many;
    * a query in the run but not in the qrels is left out, with a warning;
    * a query without any relevant doc scores 0 and is flagged ``no_relevant``;
    * duplicate qrels rows are collapsed to their maximum relevance, with a warning.

Tie sensitivity (``diagnostics=True``)
    For every query and metric, the worst and best value over all orders of tied scores
    (``<metric>_min`` / ``<metric>_max``): the best order puts the higher gains first inside every
    tie, the worst puts them last, which bounds every metric above at once (rearrangement
    inequality). ``tie_sensitive`` flags queries where any metric depends on the tie order.

STaRK's official evaluator scores every candidate, giving the ones outside the saved prediction
list the minimum score minus one (one big tie), so its MRR can be positive when the gold is
beyond the saved list; this module computes from the ranks that were saved, so its MRR can be
slightly lower. torchmetrics >= 1.7.4 also ignores answers with score <= 0 for MRR and recall;
this module does not.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from analysis.core import ranking as rk
from analysis.core.errors import DataWarning, InputError

if TYPE_CHECKING:  # pandas is imported where tables are built, not by the command line's core
    import pandas as pd

TiePolicy = Literal["trec_eval", "stable"]
TIE_POLICIES: tuple[str, ...] = ("trec_eval", "stable")
DEFAULT_METRICS: tuple[str, ...] = ("hit@1", "hit@5", "recall@20", "mrr", "ndcg@10")

_MEASURES = {
    "hit": "hit",
    "success": "hit",
    "hits": "hit",
    "recall": "recall",
    "r": "recall",
    "precision": "precision",
    "p": "precision",
    "ndcg": "ndcg",
    "ndcg_cut": "ndcg",
    "mrr": "mrr",
    "rr": "mrr",
    "recip_rank": "mrr",
}
_METRIC_RE = re.compile(r"^\s*([A-Za-z_]+?)(?:[@_](\d+))?\s*$")


@dataclass(frozen=True)
class Metric:
    """One metric: ``measure`` in {hit, recall, precision, ndcg, mrr}, cutoff ``k`` (``None`` for
    the whole list) and the ``label`` it was requested under (used as the column name)."""

    measure: str
    k: int | None
    label: str

    @property
    def name(self) -> str:
        """Canonical name, e.g. ``ndcg@10``."""
        return self.measure if self.k is None else f"{self.measure}@{self.k}"


def parse_metric(text: str) -> Metric:
    """Parse ``hit@1``, ``recall@20``, ``P@5``, ``nDCG@10``, ``ndcg_cut_10``, ``mrr``, ``RR@10``.

    Raises:
        ValueError: unknown measure, or a cutoff that is not a positive integer.
    """
    match = _METRIC_RE.match(text)
    measure = _MEASURES.get(match.group(1).lower()) if match else None
    if match is None or measure is None:
        known = "hit@k, recall@k, precision@k, ndcg@k, mrr, mrr@k"
        raise ValueError(f"unknown metric {text!r} (known: {known})")
    k = int(match.group(2)) if match.group(2) is not None else None
    if k is not None and k < 1:
        raise ValueError(f"metric {text!r}: the cutoff must be at least 1")
    return Metric(measure, k, text.strip())


def parse_metrics(spec: str | Iterable[str]) -> list[Metric]:
    """Parse a comma-separated string or a sequence of metric names (duplicates removed)."""
    items = spec.split(",") if isinstance(spec, str) else list(spec)
    out: list[Metric] = []
    for item in items:
        if isinstance(item, Metric):
            metric = item
        elif str(item).strip():
            metric = parse_metric(str(item))
        else:
            continue
        if metric.label not in {m.label for m in out}:
            out.append(metric)
    if not out:
        raise ValueError("no metric requested")
    return out


@dataclass(frozen=True)
class Evaluation:
    """Result of :func:`evaluate_run`: the per-query table and the data-check warnings."""

    per_query: pd.DataFrame
    warnings: tuple[DataWarning, ...]
    metrics: tuple[Metric, ...]

    def means(self) -> dict[str, float]:
        """Mean of each metric over every query of the qrels (missing queries count as 0)."""
        return {m.label: float(self.per_query[m.label].mean()) for m in self.metrics}


# --------------------------------------------------------------------------------------------
# input preparation


def _require_columns(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputError(what, None, f"missing column(s) {', '.join(missing)}")


def _run_scores(run: pd.DataFrame) -> np.ndarray:
    import pandas as pd

    if "score" in run.columns:
        scores = pd.to_numeric(run["score"], errors="coerce").to_numpy(dtype=np.float64)
        bad = ~np.isfinite(scores)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            value = run["score"].iloc[[i]].tolist()[0]  # a Python value for the message
            raise InputError("run", None, f"score {value!r} of row {i + 1} is not a finite number")
        return scores
    if "rank" in run.columns:
        ranks = pd.to_numeric(run["rank"], errors="coerce").to_numpy(dtype=np.float64)
        if not np.isfinite(ranks).all():
            raise InputError("run", None, "column rank holds a value that is not a number")
        return -ranks
    raise InputError("run", None, "missing column score (or rank)")


@dataclass(frozen=True)
class _Qrels:
    queries: pa.Array  # qrels query ids, in order of first appearance
    query_index: np.ndarray  # per unique (query, doc) row
    docs: rk.Ids
    doc_fp: np.ndarray
    relevance: np.ndarray
    n_duplicate_rows: int
    n_duplicate_queries: int


QrelsArrays = tuple[rk.Ids, rk.Ids, np.ndarray]


def qrels_arrays(qrels: pd.DataFrame) -> QrelsArrays:
    """``(query ids, doc ids, relevance)`` of a qrels table, after checking the values."""
    import pandas as pd

    _require_columns(qrels, ["query_id", "doc_id", "relevance"], "qrels")
    rel = pd.to_numeric(qrels["relevance"], errors="coerce")
    if rel.isna().any():
        i = int(np.flatnonzero(rel.isna().to_numpy())[0])
        value = qrels["relevance"].iloc[[i]].tolist()[0]
        raise InputError("qrels", None, f"relevance {value!r} of row {i + 1} is not an integer")
    for name in ("query_id", "doc_id"):
        if qrels[name].isna().any():
            i = int(np.flatnonzero(qrels[name].isna().to_numpy())[0])
            raise InputError("qrels", None, f"{name} of row {i + 1} is missing")
    return (
        rk.as_string_array(qrels["query_id"].astype("str")),
        rk.as_string_array(qrels["doc_id"].astype("str")),
        rel.to_numpy().astype(np.int64),
    )


def _prepare_qrels(queries: rk.Ids, docs: rk.Ids, relevance: np.ndarray) -> _Qrels:
    """Number the qrels queries (first appearance) and collapse duplicate (query, doc) pairs to
    their maximum relevance. Duplicates are found on fingerprints, then checked exactly."""
    codes, dictionary = rk.encode(queries)
    codes = codes.astype(np.int64)
    doc_fp = rk.fingerprint(docs)
    key = np.sort(rk.pair_key(codes, doc_fp))
    if not np.any(key[1:] == key[:-1]):  # no duplicate pair (the common case)
        return _Qrels(dictionary, codes, docs, doc_fp, relevance, 0, 0)
    import pandas as pd  # duplicates (or a fingerprint collision): the exact, slower path

    frame = pd.DataFrame({"qi": codes, "d": docs.to_pandas(), "r": relevance})
    dup = frame.duplicated(subset=["qi", "d"], keep=False)
    n_dup_rows = int(dup.sum() - frame[dup].drop_duplicates(["qi", "d"]).shape[0])
    n_dup_queries = int(frame.loc[dup, "qi"].nunique())
    frame = frame.groupby(["qi", "d"], sort=False, as_index=False)["r"].max()
    unique_docs = rk.as_string_array(frame["d"])
    return _Qrels(
        queries=dictionary,
        query_index=frame["qi"].to_numpy(dtype=np.int64),
        docs=unique_docs,
        doc_fp=rk.fingerprint(unique_docs),
        relevance=frame["r"].to_numpy(dtype=np.int64),
        n_duplicate_rows=n_dup_rows,
        n_duplicate_queries=n_dup_queries,
    )


@dataclass(frozen=True)
class _Ranked:
    """A run in (query, rank) order after the tie policy and deduplication.

    Queries are numbered by first appearance (``codes``) and their rows are contiguous, so group
    ``c`` starts at row ``starts[c]`` and the rank of row ``i`` is ``i - starts[codes[i]] + 1``.
    """

    codes: np.ndarray  # run query code per row (contiguous groups, ascending)
    dictionary: pa.Array  # run query ids by code
    docs: rk.Ids  # doc strings in file order
    order: rk.Order  # ranked row -> file row
    doc_fp: np.ndarray  # doc fingerprint per row
    scores: np.ndarray  # score per row
    starts: np.ndarray  # first row of each query code
    sizes: np.ndarray  # rows of each query code
    n_duplicate_rows: int
    n_duplicate_queries: int

    def rank_of(self, rows: np.ndarray) -> np.ndarray:
        """1-based rank of the given rows."""
        return rows - self.starts[self.codes[rows]] + 1


def run_arrays(run: pd.DataFrame) -> tuple[rk.Ids, rk.Ids, np.ndarray]:
    """``(query ids, doc ids, scores)`` of a run table, ids as Arrow strings (zero-copy for
    pandas' ``str`` columns); a table with ranks but no scores gets ``score = -rank``."""
    _require_columns(run, ["query_id", "doc_id"], "run")
    return rk.as_string_array(run["query_id"]), rk.as_string_array(run["doc_id"]), _run_scores(run)


def _rank(queries: rk.Ids, docs: rk.Ids, scores: np.ndarray, ties: str) -> _Ranked:
    if ties not in TIE_POLICIES:
        raise ValueError(f"unknown tie policy {ties!r} (known: {', '.join(TIE_POLICIES)})")
    if not np.isfinite(scores).all():
        i = int(np.flatnonzero(~np.isfinite(scores))[0])
        value = float(scores[i])
        raise InputError("run", None, f"score {value!r} of row {i + 1} is not a finite number")
    for name, ids in (("query_id", queries), ("doc_id", docs)):
        if ids.null_count:  # a missing id would get the code -1 and break the grouping
            i = int(np.flatnonzero(rk.to_numpy(pc.is_null(ids)))[0])
            raise InputError("run", None, f"{name} of row {i + 1} is missing")
    # the doc fingerprints (Arrow and numpy kernels, which release the GIL) are computed on the
    # second core while the queries are numbered and the run is ordered
    with ThreadPoolExecutor(max_workers=1) as pool:
        fingerprints = pool.submit(rk.fingerprint, docs)
        codes, dictionary = rk.encode(queries)
        order = rk.order_run(codes, scores, docs, ties)
        doc_fp = fingerprints.result()
    if order.perm is not None:
        codes, scores, doc_fp = codes[order.perm], scores[order.perm], doc_fp[order.perm]
    elif order.moved is not None:  # only docs inside ties moved
        doc_fp[order.moved] = doc_fp[order.moved_src]
    dup = rk.duplicate_rows(codes, doc_fp, docs, order)
    n_dup_queries = 0
    if len(dup):
        n_dup_queries = len(np.unique(codes[dup]))
        keep = np.ones(len(codes), dtype=bool)
        keep[dup] = False
        order = rk.Order(order.source(np.flatnonzero(keep)))
        codes, scores, doc_fp = codes[keep], scores[keep], doc_fp[keep]
    n_queries = len(dictionary)
    sizes = np.bincount(codes, minlength=n_queries)
    starts = np.r_[0, np.cumsum(sizes)[:-1]] if n_queries else np.zeros(0, dtype=np.int64)
    return _Ranked(
        codes=codes,
        dictionary=dictionary,
        docs=docs,
        order=order,
        doc_fp=doc_fp,
        scores=scores,
        starts=starts,
        sizes=sizes,
        n_duplicate_rows=len(dup),
        n_duplicate_queries=n_dup_queries,
    )


def rank_run(run: pd.DataFrame, ties: TiePolicy = "trec_eval") -> pd.DataFrame:
    """The run as it is evaluated: one row per (query, doc), ordered by query (first appearance)
    and rank, with a 1-based ``rank`` after the tie policy; duplicate docs keep their best rank.

    Returns:
        DataFrame ``query_id, doc_id, score, rank`` (other columns of ``run`` are dropped).
    """
    import pandas as pd

    ranked = _rank(*run_arrays(run), ties)
    src = ranked.order.source(np.arange(len(ranked.codes)))
    docs = ranked.docs.take(rk.from_numpy(src))
    return pd.DataFrame(
        {
            "query_id": ranked.dictionary.take(rk.from_numpy(ranked.codes)).to_pandas(),
            "doc_id": docs.to_pandas(),
            "score": ranked.scores,
            "rank": ranked.rank_of(np.arange(len(ranked.codes))),
        }
    )


# --------------------------------------------------------------------------------------------
# metric kernels


def _ideal_dcg(q: _Qrels, n_queries: int, cutoffs: set[int | None]) -> dict[int | None, np.ndarray]:
    """IDCG per query for each cutoff: judged positive gains sorted descending."""
    gain = np.maximum(q.relevance, 0).astype(np.float64)
    pos = gain > 0
    qi, g = q.query_index[pos], gain[pos]
    order = np.lexsort((-g, qi))
    qi, g = qi[order], g[order]
    ideal_rank = rk.positions(qi)
    disc = g / np.log2(ideal_rank + 1.0)
    out = {}
    for k in cutoffs:
        w = disc if k is None else np.where(ideal_rank <= k, disc, 0.0)
        out[k] = np.bincount(qi, weights=w, minlength=n_queries)
    return out


def _scores(
    metrics: Sequence[Metric],
    qi: np.ndarray,
    rank: np.ndarray,
    gain: np.ndarray,
    relevant: np.ndarray,
    n_rel: np.ndarray,
    n_ret: np.ndarray,
    idcg: dict[int | None, np.ndarray],
) -> dict[str, np.ndarray]:
    """Metric values per query from the rows holding a positive gain (query, rank, gain)."""
    nq = len(n_rel)
    out: dict[str, np.ndarray] = {}
    rq, rr = qi[relevant], rank[relevant]
    first = np.full(nq, np.inf)
    if len(rq):
        np.minimum.at(first, rq, rr)  # rows are few: only relevant retrieved docs
    with np.errstate(divide="ignore", invalid="ignore"):
        for m in metrics:
            within = rr <= (m.k if m.k is not None else np.inf)
            hits = np.bincount(rq[within], minlength=nq).astype(np.float64)
            if m.measure == "hit":
                value = (hits > 0).astype(np.float64)
            elif m.measure == "recall":
                value = np.where(n_rel > 0, hits / np.maximum(n_rel, 1), 0.0)
            elif m.measure == "precision":
                denom = np.full(nq, float(m.k)) if m.k is not None else n_ret.astype(np.float64)
                value = np.where(denom > 0, hits / np.maximum(denom, 1), 0.0)
            elif m.measure == "mrr":
                limit = m.k if m.k is not None else np.inf
                value = np.where(first <= limit, 1.0 / first, 0.0)
            else:  # ndcg
                keep = rank <= (m.k if m.k is not None else np.inf)
                w = np.where(keep, gain / np.log2(rank + 1.0), 0.0)
                dcg = np.bincount(qi, weights=w, minlength=nq)
                ideal = idcg[m.k]
                value = np.where(ideal > 0, dcg / np.where(ideal > 0, ideal, 1.0), 0.0)
            out[m.label] = value
    return out


def _tie_rank(
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


# --------------------------------------------------------------------------------------------
# public API


def evaluate_run(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    metrics: str | Iterable[str] = DEFAULT_METRICS,
    *,
    ties: TiePolicy = "trec_eval",
    relevance_threshold: int = 1,
    diagnostics: bool = False,
) -> Evaluation:
    """Evaluate a run against qrels: per-query metrics plus data-check warnings.

    Args:
        run: ``query_id, doc_id, score`` (or ``rank`` instead of ``score``), any row order.
        qrels: ``query_id, doc_id, relevance``.
        metrics: names such as ``["hit@1", "recall@20", "mrr", "ndcg@10"]`` or a comma list.
        ties: ``"trec_eval"`` (doc id descending among equal scores) or ``"stable"`` (file order).
        relevance_threshold: a doc is relevant when ``relevance >= relevance_threshold`` (>= 1).
        diagnostics: also return ``n_gold``, ``n_retrieved``, ``first_gold_rank``,
            ``missing_from_run``, ``no_relevant``, ``tied_at_cutoff``, ``<metric>_min/_max`` and
            ``tie_sensitive``.

    Returns:
        :class:`Evaluation` whose ``per_query`` has one row per qrels query (order of first
        appearance in the qrels): ``query_id`` then one float column per metric, named as
        requested.
    """
    import pandas as pd

    query_ids, columns, warnings, wanted = evaluate_arrays(
        *run_arrays(run),
        qrels,
        metrics,
        ties=ties,
        relevance_threshold=relevance_threshold,
        diagnostics=diagnostics,
    )
    per_query = pd.DataFrame({"query_id": pd.Series(query_ids.to_pylist(), dtype="str"), **columns})
    return Evaluation(per_query, tuple(warnings), tuple(wanted))


def evaluate_arrays(
    queries: rk.Ids,
    docs: rk.Ids,
    scores: np.ndarray,
    qrels: pd.DataFrame | QrelsArrays,
    metrics: str | Iterable[str] = DEFAULT_METRICS,
    *,
    ties: TiePolicy = "trec_eval",
    relevance_threshold: int = 1,
    diagnostics: bool = False,
) -> tuple[pa.Array, dict[str, np.ndarray], list[DataWarning], list[Metric]]:
    """:func:`evaluate_run` on a run given as columns (Arrow id arrays and a score array), for
    large files read straight into Arrow; returns ``(query ids, columns, warnings, metrics)``."""
    wanted = parse_metrics(metrics)
    if int(relevance_threshold) < 1:
        raise ValueError("relevance_threshold must be at least 1")
    q = _prepare_qrels(*(qrels if isinstance(qrels, tuple) else qrels_arrays(qrels)))
    ranked = _rank(queries, docs, scores, ties)
    nq = len(q.queries)

    # query numbering: run code -> qrels index, and qrels row -> run code
    run_to_qrels = rk.index_of(ranked.dictionary, q.queries)
    qrels_code = rk.index_of(q.queries, ranked.dictionary)[q.query_index]
    rows, qrows = rk.lookup_pairs(
        ranked.codes, ranked.doc_fp, ranked.docs, ranked.order, qrels_code, q.doc_fp, q.docs
    )
    rel_hit = q.relevance[qrows]
    rows, rel_rows = rows[rel_hit > 0], rel_hit[rel_hit > 0]  # only positive gains matter
    qi = run_to_qrels[ranked.codes[rows]]
    rank = ranked.rank_of(rows)
    gain = rel_rows.astype(np.float64)
    relevant = rel_rows >= relevance_threshold
    in_qrels = run_to_qrels >= 0
    n_ret = np.zeros(nq, dtype=np.int64)
    n_ret[run_to_qrels[in_qrels]] = ranked.sizes[in_qrels]
    n_rel = np.bincount(q.query_index[q.relevance >= relevance_threshold], minlength=nq).astype(
        np.float64
    )
    cutoffs = {m.k for m in wanted if m.measure == "ndcg"}
    idcg = _ideal_dcg(q, nq, cutoffs)
    values = _scores(wanted, qi, rank, gain, relevant, n_rel, n_ret, idcg)

    columns: dict[str, np.ndarray] = {m.label: values[m.label] for m in wanted}
    ties_found = rk.tie_blocks(ranked.codes, ranked.scores)
    if diagnostics:
        first = np.full(nq, np.inf)
        np.minimum.at(first, qi[relevant], rank[relevant])  # few rows: relevant retrieved docs
        columns["n_gold"] = n_rel.astype(np.int64)
        columns["n_retrieved"] = n_ret
        columns["first_gold_rank"] = np.where(np.isfinite(first), first, np.nan)
        columns["missing_from_run"] = n_ret == 0
        columns["no_relevant"] = n_rel == 0
        columns.update(
            _tie_diagnostics(
                wanted,
                ranked,
                ties_found,
                run_to_qrels,
                rows,
                rel_rows,
                values,
                nq,
                idcg,
                relevance_threshold,
                n_rel,
                n_ret,
            )
        )
    tied_queries = None
    if ties_found is not None:
        tied_codes = np.unique(ranked.codes[ties_found.rows])
        tied_queries = run_to_qrels[tied_codes][run_to_qrels[tied_codes] >= 0]
    warnings = _warnings(
        q, ranked, run_to_qrels, n_ret, n_rel, wanted, tied_queries, columns.get("tie_sensitive")
    )
    return q.queries, columns, warnings, wanted


def _tie_diagnostics(
    wanted: Sequence[Metric],
    ranked: _Ranked,
    ties: rk.Ties | None,
    run_to_qrels: np.ndarray,
    rows: np.ndarray,
    rel_rows: np.ndarray,
    values: dict[str, np.ndarray],
    nq: int,
    idcg: dict[int | None, np.ndarray],
    threshold: int,
    n_rel: np.ndarray,
    n_ret: np.ndarray,
) -> dict[str, np.ndarray]:
    """``<metric>_min/_max`` over tie orders, ``tied_at_cutoff`` and ``tie_sensitive``."""
    out: dict[str, np.ndarray] = {}
    sensitive = np.zeros(nq, dtype=bool)
    tied_at_cutoff = np.zeros(nq, dtype=bool)
    if ties is None:
        for m in wanted:
            out[f"{m.label}_min"] = values[m.label]
            out[f"{m.label}_max"] = values[m.label]
    else:
        tie_rank = ranked.rank_of(ties.rows)
        starts, sizes = rk.group_starts(ties.block)
        start_rank = tie_rank[starts]
        end_rank = start_rank + sizes - 1
        # the tie block of each gain row, -1 when its score is not tied
        pos = np.searchsorted(ties.rows, rows)
        pos_ok = pos < len(ties.rows)
        inside = np.zeros(len(rows), dtype=bool)
        inside[pos_ok] = ties.rows[pos[pos_ok]] == rows[pos_ok]
        block = np.where(inside, ties.block[np.minimum(pos, len(ties.rows) - 1)], -1)
        gain = rel_rows.astype(np.float64)
        qi = run_to_qrels[ranked.codes[rows]]
        for best, suffix in ((False, "_min"), (True, "_max")):
            rank = _tie_rank(ranked.rank_of(rows), gain, block, start_rank, end_rank, best)
            bound = _scores(wanted, qi, rank, gain, rel_rows >= threshold, n_rel, n_ret, idcg)
            for m in wanted:
                out[f"{m.label}{suffix}"] = bound[m.label]
        for m in wanted:
            sensitive |= out[f"{m.label}_min"] != out[f"{m.label}_max"]
        cutoffs = sorted({m.k for m in wanted if m.k is not None})
        straddle = (ties.block[:-1] == ties.block[1:]) & np.isin(tie_rank[:-1], cutoffs)
        hit_q = run_to_qrels[ranked.codes[ties.rows[:-1][straddle]]]
        tied_at_cutoff[hit_q[hit_q >= 0]] = True
    out["tied_at_cutoff"] = tied_at_cutoff
    out["tie_sensitive"] = sensitive
    return out


def _examples(ids: Iterable[object], n: int = 5) -> tuple[str, ...]:
    return tuple(str(x) for x in list(ids)[:n])


def _warnings(
    q: _Qrels,
    ranked: _Ranked,
    run_to_qrels: np.ndarray,
    n_ret: np.ndarray,
    n_rel: np.ndarray,
    wanted: Sequence[Metric],
    tied_queries: np.ndarray | None,
    tie_sensitive: np.ndarray | None,
) -> list[DataWarning]:
    out: list[DataWarning] = []
    nq = len(q.queries)
    missing = np.flatnonzero(n_ret == 0)
    if len(missing):
        out.append(
            DataWarning(
                "missing_from_run",
                len(missing),
                f"{len(missing)} of {nq} queries in the qrels are missing from the run; "
                "they score 0 on every metric (as trec_eval -c)",
                _examples(rk.take(q.queries, missing).to_pylist()),
            )
        )
    extra = np.flatnonzero(run_to_qrels < 0)
    if len(extra):
        n_run = len(run_to_qrels)
        hint = ""
        if len(extra) > n_run / 2:
            hint = (
                " — most run ids are unknown: the run and the qrels may use different id "
                "conventions (STaRK Amazon re-keyed its query ids in June 2024)"
            )
        out.append(
            DataWarning(
                "not_in_qrels",
                len(extra),
                f"{len(extra)} of {n_run} queries in the run are not in the qrels; they are left "
                f"out{hint}",
                _examples(rk.take(ranked.dictionary, extra).to_pylist()),
            )
        )
    no_rel = np.flatnonzero(n_rel == 0)
    if len(no_rel):
        out.append(
            DataWarning(
                "no_relevant",
                len(no_rel),
                f"{len(no_rel)} queries have no relevant document in the qrels; they score 0",
                _examples(rk.take(q.queries, no_rel).to_pylist()),
            )
        )
    if ranked.n_duplicate_rows:
        out.append(
            DataWarning(
                "duplicate_docs",
                ranked.n_duplicate_rows,
                f"{ranked.n_duplicate_rows} duplicate documents in the run "
                f"(in {ranked.n_duplicate_queries} queries); the best-ranked occurrence is kept",
            )
        )
    if q.n_duplicate_rows:
        out.append(
            DataWarning(
                "duplicate_qrels",
                q.n_duplicate_rows,
                f"{q.n_duplicate_rows} duplicate qrels rows (in {q.n_duplicate_queries} queries); "
                "each pair keeps its maximum relevance",
            )
        )
    for k in sorted({m.k for m in wanted if m.measure == "recall" and m.k is not None}):
        over = np.flatnonzero(n_rel > k)
        if len(over):
            out.append(
                DataWarning(
                    f"gold_exceeds_{k}",
                    len(over),
                    f"{len(over)} queries have more than {k} relevant documents, so recall@{k} "
                    "cannot reach 1 for them",
                    _examples(rk.take(q.queries, over).to_pylist()),
                )
            )
    if tied_queries is not None:
        tied_q = tied_queries
        if len(tied_q):
            detail = ""
            if tie_sensitive is not None:
                n_sens = int(tie_sensitive.sum())
                detail = f"; {n_sens} of them change value with the tie order"
            out.append(
                DataWarning(
                    "ties",
                    len(tied_q),
                    f"{len(tied_q)} queries have tied scores{detail}",
                    _examples(rk.take(q.queries, tied_q).to_pylist()),
                )
            )
    return out


def evaluate(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    metrics: str | Iterable[str] = DEFAULT_METRICS,
    *,
    ties: TiePolicy = "trec_eval",
    relevance_threshold: int = 1,
    diagnostics: bool = False,
) -> pd.DataFrame:
    """Per-query metrics: :func:`evaluate_run` without the warnings.

    >>> run = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    >>> qrels = pd.DataFrame({"query_id": ["1"], "doc_id": ["b"], "relevance": [1]})
    >>> evaluate(run, qrels, ["hit@1", "mrr"]).iloc[0].to_dict()
    {'query_id': '1', 'hit@1': 0.0, 'mrr': 0.5}
    """
    return evaluate_run(
        run,
        qrels,
        metrics,
        ties=ties,
        relevance_threshold=relevance_threshold,
        diagnostics=diagnostics,
    ).per_query


def check_data(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    metrics: str | Iterable[str] = DEFAULT_METRICS,
    *,
    ties: TiePolicy = "trec_eval",
    relevance_threshold: int = 1,
) -> list[DataWarning]:
    """The data checks alone (missing queries, duplicates, ties, answer sets larger than k)."""
    return list(
        evaluate_run(
            run,
            qrels,
            metrics,
            ties=ties,
            relevance_threshold=relevance_threshold,
            diagnostics=True,
        ).warnings
    )
