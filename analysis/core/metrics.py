"""Per-query retrieval metrics with trec_eval semantics, vectorized over the whole run.

A run is a table ``query_id, doc_id, score`` (any row order); qrels are ``query_id, doc_id,
relevance``. Ids are strings. A document is *relevant* when ``relevance >= relevance_threshold``
(default 1, trec_eval's ``-l 1``).

Ranking
    Rows are sorted by score, descending. Equal scores are ordered by the tie policy:
    ``trec_eval`` (default): scores are compared as 32-bit floats, as trec_eval stores them (scores
    that differ in float64 but not in float32 tie), and equal ones are ordered by doc id
    descending, comparing bytes as trec_eval's ``strcmp`` does; ``stable``: equal float64 scores
    keep their file order. Formats that carry ranks but no scores (STaRK's ``pred_rank``) are
    loaded with decreasing scores, so both policies keep their order. A document listed twice for
    one query keeps its best-ranked occurrence (a warning counts them).

Metrics
    Each measure is declared once in :mod:`analysis.core.measures` (name, aliases, cutoff rule,
    formula, trec_eval/ir_measures/STaRK/LIST references, kernel): its :data:`REGISTRY
    <analysis.core.measures.REGISTRY>` is the list of metrics, ``python -m analysis
    --help-metrics`` prints every measure's card and :func:`analysis.core.measures.card` gives
    one. A user adds a measure with :func:`analysis.core.measures.register_measure`.

Splits
    ``split`` (query ids, e.g. a STaRK ``split/test.index``) restricts the evaluated queries: qrels
    queries outside it are dropped (not scored 0), run queries outside it are ignored without a
    warning; an ``info`` note counts both. Qrels loaded through a bundle split carry their split in
    ``qrels.attrs["split_queries"]``, which is used when ``split`` is not given.

Compatibility variants (``compat``, never the default)
    ``"stark"``: gold ids that are not ``candidates`` are dropped from the qrels, as STaRK's
    evaluator does (it scores candidates only, so such golds can never be retrieved); a query left
    without gold scores 0. ``"list"``: LIST's ``brute_search.py``: duplicate qrels rows are counted,
    ``recall@k = |R ∩ top k| / min(#gold rows, k)`` and IDCG@k is the DCG of ``min(#gold rows, k)``
    docs of gain 1.

Edge cases
    * a query in the qrels but absent from the run scores 0 on every metric and is counted
      (trec_eval ``-c``); a warning says how many;
    * a query in the run but not in the qrels is left out, with a warning;
    * a query without any relevant doc scores 0 and is flagged ``no_relevant`` (nDCG counts
      every positive gain: above threshold 1 a retrieved doc below it scores, as trec_eval);
    * duplicate qrels rows are collapsed to their maximum relevance, with a warning;
    * a metric that reads ranks beyond a query's saved list (``recall@50`` of a run saved at
      depth 20, ``mrr`` of any run) while relevant documents are missing from it gets a warning
      with the counts (:mod:`analysis.core.depth`): its value is a lower bound.

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

import dataclasses
import functools
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypedDict, Unpack

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from analysis.core import depth
from analysis.core import kernels as kn
from analysis.core import ranking as rk
from analysis.core.checks import Coverage, data_warnings
from analysis.core.errors import DataWarning, InputError
from analysis.core.inputs import (
    Qrels,
    QrelsArrays,
    Split,
    candidate_qrels,
    prepare_qrels,
    qrels_arrays,
    require_table,
    restrict_qrels,
    run_arrays,
    split_array,
)
from analysis.core.measures import Judged
from analysis.core.names import (  # noqa: F401 (re-exported: the public names of the core)
    DEFAULT_METRICS,
    TIE_POLICIES,
    Metric,
    TiePolicy,
    parse_metric,
    parse_metrics,
)
from analysis.core.options import check_options

_OVERLAP_ROWS = 1 << 18  # runs from this size prepare their qrels on a thread of their own

if TYPE_CHECKING:  # pandas is imported where tables are built, not by the command line's core
    import pandas as pd

Compat = Literal["trec_eval", "stark", "list"]
COMPAT: tuple[str, ...] = ("trec_eval", "stark", "list")


@dataclass(frozen=True)
class Evaluation:
    """Result of :func:`evaluate_run`: the per-query table and the data-check warnings."""

    per_query: pd.DataFrame
    warnings: tuple[DataWarning, ...]
    metrics: tuple[Metric, ...]

    def means(self) -> dict[str, float]:
        """Mean of each metric over every query of the qrels (missing queries count as 0)."""
        return {m.label: float(self.per_query[m.label].mean()) for m in self.metrics}


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
    doc_codes: rk.DocCodes  # exact doc codes per row (one dictionary per chunk of queries)
    scores: np.ndarray  # score per row (float64, as read)
    tie_scores: np.ndarray  # score per row as the tie policy compares them
    qrels_code: np.ndarray | None  # run query code of each qrels row (-1: not in the run)
    starts: np.ndarray  # first row of each query code
    sizes: np.ndarray  # rows of each query code
    n_duplicate_rows: int
    n_duplicate_queries: int

    @functools.cached_property
    def ties(self) -> rk.Ties | None:
        """Rows tied as the tie policy compares scores (:func:`~analysis.core.ranking.tie_blocks`;
        the ones :func:`~analysis.core.ranking.order_run` found, unless rows were dropped)."""
        if self.order.found_ties:
            return self.order.ties
        return rk.tie_blocks(self.codes, self.tie_scores)

    def rank_of(self, rows: np.ndarray) -> np.ndarray:
        """1-based rank of the given rows."""
        return rows - self.starts[self.codes[rows]] + 1


def _rank(
    queries: rk.Ids,
    docs: rk.Ids,
    scores: np.ndarray,
    ties: str,
    q: Qrels | Future[Qrels] | None = None,
) -> _Ranked:
    """The ranked run; ``q`` (the prepared qrels, or a future of them, being prepared on another
    thread meanwhile) is needed only once the run is in order."""
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
    codes, dictionary = rk.encode(queries)
    compared = rk.tie_scores(scores, ties)
    order = rk.order_run(codes, compared, docs, ties)
    if order.perm is not None:
        codes, scores, compared = codes[order.perm], scores[order.perm], compared[order.perm]
    qrels_code = None
    if isinstance(q, Future):
        q = q.result()
    if q is not None:  # the qrels docs are encoded with the run's (one dictionary per chunk)
        qrels_code = rk.index_of(q.queries, dictionary)[q.query_index]
    doc_codes = rk.doc_codes(codes, docs, order, qrels_code, None if q is None else q.docs)
    dup = rk.duplicate_rows(codes, doc_codes)
    n_dup_queries = 0
    if len(dup):
        n_dup_queries = len(np.unique(codes[dup]))
        keep = np.ones(len(codes), dtype=bool)
        keep[dup] = False
        kept = np.flatnonzero(keep)
        order = rk.Order(order.source(kept))
        codes, scores, doc_codes = codes[keep], scores[keep], doc_codes.keep(kept)
        compared = compared[keep]
    n_queries = len(dictionary)
    # the ranked codes ascend (grouped by query): sizes by binary search, in the codes' own dtype
    # (bincount would first copy every code to int64)
    edges = np.searchsorted(codes, np.arange(n_queries + 1, dtype=codes.dtype)).astype(np.int64)
    sizes, starts = np.diff(edges), edges[:-1]
    return _Ranked(
        codes=codes,
        dictionary=dictionary,
        docs=docs,
        order=order,
        doc_codes=doc_codes,
        scores=scores,
        tie_scores=compared,
        qrels_code=qrels_code,
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
    docs = rk.take(ranked.docs, src)
    return pd.DataFrame(
        {
            "query_id": ranked.dictionary.take(rk.from_numpy(ranked.codes)).to_pandas(),
            "doc_id": docs.to_pandas(),
            "score": ranked.scores,
            "rank": ranked.rank_of(np.arange(len(ranked.codes))),
        }
    )


# --------------------------------------------------------------------------------------------
# public API


class Options(TypedDict, total=False):
    """The keyword options of :func:`evaluate_run`, :func:`evaluate` and :func:`check_data`."""

    ties: TiePolicy
    relevance_threshold: int
    diagnostics: bool
    split: Split
    compat: Compat
    candidates: Split


def evaluate_run(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    metrics: str | Iterable[str] = DEFAULT_METRICS,
    **options: Unpack[Options],
) -> Evaluation:
    """Evaluate a run against qrels: per-query metrics plus data-check warnings.

    Args:
        run: ``query_id, doc_id, score`` (or ``rank`` instead of ``score``), any row order.
        qrels: ``query_id, doc_id, relevance``.
        metrics: names such as ``["hit@1", "recall@20", "mrr", "ndcg@10"]`` or a comma list.
        ties: ``"trec_eval"`` (float32 scores, doc id descending among equal scores) or
            ``"stable"`` (file order).
        relevance_threshold: a doc is relevant when ``relevance >= relevance_threshold`` (>= 1).
        diagnostics: also return ``n_gold``, ``n_retrieved``, ``first_gold_rank``,
            ``missing_from_run``, ``no_relevant``, ``saved_depth``, ``gold_beyond_depth``
            (:mod:`analysis.core.depth`), ``tied_at_cutoff``, ``<metric>_min/_max`` and
            ``tie_sensitive``.
        split: evaluate only these queries (module docstring); default
            ``qrels.attrs.get("split_queries")``.
        compat: ``"trec_eval"`` (default), ``"stark"`` or ``"list"`` (module docstring).
        candidates: the candidate doc ids (``compat="stark"`` only).

    Returns:
        :class:`Evaluation` whose ``per_query`` has one row per qrels query (order of first
        appearance in the qrels): ``query_id`` then one float column per metric, named as
        requested.
    """
    import pandas as pd

    require_table(run, "run")
    require_table(qrels, "qrels")
    if options.get("split") is None:
        options = {**options, "split": qrels.attrs.get("split_queries")}
    found = evaluate_arrays(*run_arrays(run), qrels, metrics, **options)
    query_ids, columns, warnings, wanted = found
    per_query = pd.DataFrame({"query_id": pd.Series(query_ids.to_pylist(), dtype="str"), **columns})
    return Evaluation(per_query, tuple(warnings), tuple(wanted))


def evaluate_arrays(
    queries: rk.Ids,
    docs: rk.Ids,
    scores: np.ndarray,
    qrels: pd.DataFrame | QrelsArrays,
    metrics: str | Iterable[str] = DEFAULT_METRICS,
    *,
    ranking: list[_Ranked] | None = None,
    **options: Unpack[Options],
) -> tuple[pa.Array, dict[str, np.ndarray], list[DataWarning], list[Metric]]:
    """:func:`evaluate_run` on a run given as columns (Arrow id arrays and a score array), for
    large files read straight into Arrow; returns ``(query ids, columns, warnings, metrics)``.
    ``options`` are those of :func:`evaluate_run` (an unknown one is a ``TypeError``);
    ``ranking``: a list the ranked run is appended to (see
    :func:`analysis.core.ranked.evaluate_run_ranked`)."""
    check_options("evaluate_arrays", options, Options)
    wanted = parse_metrics(metrics)
    threshold = options.get("relevance_threshold", 1)
    if int(threshold) < 1:
        raise ValueError("relevance_threshold must be at least 1")
    compat, candidates = options.get("compat", "trec_eval"), options.get("candidates")
    if compat not in COMPAT:
        raise ValueError(f"unknown compatibility variant {compat!r} (known: {', '.join(COMPAT)})")
    if compat == "stark" and candidates is None:
        raise ValueError("compat='stark' needs the candidate doc ids (candidates=...)")
    split = options.get("split")
    arrays, n_split_dropped, n_not_candidates = _scoped_qrels(qrels, split, compat, candidates)
    ranked, q = _rank_with_qrels(queries, docs, scores, options.get("ties", "trec_eval"), arrays)
    if ranking is not None:
        ranking.append(ranked)
    # query numbering: run code -> qrels index (and qrels row -> run code: ranked.qrels_code)
    run_to_qrels = rk.index_of(ranked.dictionary, q.queries)
    judged, rows, n_judged = _judge(ranked, q, run_to_qrels, wanted, threshold, compat)
    values = kn.scores(wanted, judged)
    columns: dict[str, np.ndarray] = {m.label: values[m.label] for m in wanted}
    n_found = np.bincount(judged.qi[judged.relevant], minlength=judged.nq)
    n_positive_found = np.bincount(judged.qi[judged.gain > 0], minlength=judged.nq)
    if options.get("diagnostics", False):
        columns.update(_diagnostic_columns(wanted, ranked, run_to_qrels, rows, judged, values))
    outside = None
    if split is not None:
        outside = rk.to_numpy(pc.invert(pc.is_in(ranked.dictionary, value_set=split_array(split))))
    coverage = Coverage(
        run_to_qrels,
        judged.n_ret,
        judged.n_rel,
        outside,
        n_split_dropped,
        n_not_candidates,
        n_judged,
    )
    warnings = data_warnings(
        q,
        ranked,
        coverage,
        wanted,
        _tied_queries(ranked, run_to_qrels),
        columns.get("tie_sensitive"),
        compat,
    )
    # nDCG's gains: every positive grade (LIST's variant: binary, the relevant documents only)
    n_pos = judged.n_rel if compat == "list" else np.bincount(q.query_index[q.relevance > 0],
                                                               minlength=judged.nq)  # fmt: skip
    graded = (n_pos, n_positive_found)
    warnings += depth.depth_warnings(q.queries, judged.n_ret, judged.n_rel, n_found, wanted, graded)
    return q.queries, columns, warnings, wanted


def _scoped_qrels(
    qrels: pd.DataFrame | QrelsArrays, split: Split, compat: Compat, candidates: Split
) -> tuple[QrelsArrays, int, int]:
    """The qrels as arrays, cut to the split and (STaRK variant) to the candidates, with the
    number of qrels queries the split dropped (qrels already cut by
    :func:`analysis.io.bundle.load_dataset` carry that count) and of gold ids dropped as not
    candidates."""
    arrays = qrels if isinstance(qrels, tuple) else qrels_arrays(qrels)
    n_split_dropped = 0 if isinstance(qrels, tuple) else int(qrels.attrs.get("split_dropped", 0))
    if split is not None:
        arrays, n_dropped_here = restrict_qrels(arrays, split)
        n_split_dropped += n_dropped_here
    n_not_candidates = 0
    if compat == "stark":
        arrays, n_not_candidates = candidate_qrels(arrays, candidates)
    return arrays, n_split_dropped, n_not_candidates


def _rank_with_qrels(
    queries: rk.Ids, docs: rk.Ids, scores: np.ndarray, ties: TiePolicy, arrays: QrelsArrays
) -> tuple[_Ranked, Qrels]:
    """The ranked run and the prepared qrels; from :data:`_OVERLAP_ROWS` rows the qrels are
    prepared on a second core while the run is put in order."""
    if len(scores) < _OVERLAP_ROWS:
        q = prepare_qrels(*arrays)
        return _rank(queries, docs, scores, ties, q), q
    with ThreadPoolExecutor(max_workers=1) as pool:
        future = pool.submit(prepare_qrels, *arrays)
        ranked = _rank(queries, docs, scores, ties, future)
        return ranked, future.result()


def _judge(
    ranked: _Ranked,
    q: Qrels,
    run_to_qrels: np.ndarray,
    wanted: Sequence[Metric],
    threshold: int,
    compat: Compat,
) -> tuple[Judged, np.ndarray, np.ndarray]:
    """The ranked rows with a positive gain as :class:`Judged` (with the per-query counts and
    ideal DCGs; LIST's variant: duplicate gold rows count, binary gains, an ideal list of
    min(rows, k) docs), those rows' positions in the ranked run, and per qrels query the
    documents of its list the qrels judge, whatever the grade."""
    nq = len(q.queries)
    rows, qrows = rk.lookup_pairs(ranked.codes, ranked.doc_codes, ranked.qrels_code)
    n_judged = np.bincount(run_to_qrels[ranked.codes[rows]], minlength=nq)
    rel_hit = q.relevance[qrows]
    positive = rel_hit > 0  # only positive gains matter
    rows, rel_rows = rows[positive], rel_hit[positive]
    qi = run_to_qrels[ranked.codes[rows]]
    rank = ranked.rank_of(rows)
    gain = rel_rows.astype(np.float64)
    relevant = rel_rows >= threshold
    in_qrels = run_to_qrels >= 0
    n_ret = np.zeros(nq, dtype=np.int64)
    n_ret[run_to_qrels[in_qrels]] = ranked.sizes[in_qrels]
    is_rel = q.relevance >= threshold
    n_rel = np.bincount(q.query_index[is_rel], minlength=nq).astype(np.float64)
    cutoffs = {m.k for m in wanted if m.measure == "ndcg"}
    recall_denominator = None
    if compat == "list":  # LIST: duplicate gold rows count, ideal list of min(rows, k) docs
        gold_rows = np.bincount(q.query_index[is_rel], weights=q.rows_per_pair[is_rel],
                                minlength=nq).astype(np.int64)  # fmt: skip
        idcg = kn.ideal_dcg(q.query_index, q.relevance, nq, cutoffs, count=gold_rows)
        recall_denominator = {
            m.k: (gold_rows if m.k is None else np.minimum(gold_rows, m.k)).astype(np.float64)
            for m in wanted
            if m.measure == "recall"
        }
        gain = (rel_rows >= threshold).astype(np.float64)  # binary gains
    else:
        idcg = kn.ideal_dcg(q.query_index, q.relevance, nq, cutoffs)
    judged = Judged(qi, rank, gain, relevant, n_rel, n_ret, idcg, recall_denominator)
    return judged, rows, n_judged


def _diagnostic_columns(
    wanted: Sequence[Metric],
    ranked: _Ranked,
    run_to_qrels: np.ndarray,
    rows: np.ndarray,
    judged: Judged,
    values: dict[str, np.ndarray],
) -> dict[str, np.ndarray]:
    """``n_gold``, ``n_retrieved``, ``first_gold_rank`` (nan: no relevant doc retrieved),
    ``missing_from_run``, ``no_relevant``, the depth flags and the tie diagnostics."""
    qi, rank, relevant = judged.qi, judged.rank, judged.relevant
    first = np.full(judged.nq, np.inf)
    np.minimum.at(first, qi[relevant], rank[relevant])  # few rows: relevant retrieved docs
    n_found = np.bincount(qi[relevant], minlength=judged.nq)
    return {
        "n_gold": judged.n_rel.astype(np.int64),
        "n_retrieved": judged.n_ret,
        "first_gold_rank": np.where(np.isfinite(first), first, np.nan),
        "missing_from_run": judged.n_ret == 0,
        "no_relevant": judged.n_rel == 0,
        **depth.depth_flags(judged.n_ret, judged.n_rel, n_found),
        **_tie_diagnostics(wanted, ranked, ranked.ties, run_to_qrels, rows, judged, values),
    }


def _tied_queries(ranked: _Ranked, run_to_qrels: np.ndarray) -> np.ndarray | None:
    """The qrels indexes of the queries with tied scores (``None``: the run has no ties)."""
    if ranked.ties is None:
        return None
    tied_codes = np.unique(ranked.codes[ranked.ties.rows])
    return run_to_qrels[tied_codes][run_to_qrels[tied_codes] >= 0]


def _tie_diagnostics(
    wanted: Sequence[Metric],
    ranked: _Ranked,
    ties: rk.Ties | None,
    run_to_qrels: np.ndarray,
    rows: np.ndarray,
    judged: Judged,
    values: dict[str, np.ndarray],
) -> dict[str, np.ndarray]:
    """``<metric>_min/_max`` over tie orders, ``tied_at_cutoff`` and ``tie_sensitive``. Ties are
    the rows whose scores are equal as the tie policy compares them (float32 for trec_eval);
    ``judged``: the gain rows ``rows`` as ranked for ``values``, re-ranked here per tie order."""
    out: dict[str, np.ndarray] = {}
    nq, gain, relevant = judged.nq, judged.gain, judged.relevant
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
        qi = run_to_qrels[ranked.codes[rows]]
        # order inside a tie by (relevant, gain): the best order maximizes every metric at once
        key = gain + relevant * (gain.max() + 1.0 if len(gain) else 1.0)
        for best, suffix in ((False, "_min"), (True, "_max")):
            rank = kn.tie_rank(ranked.rank_of(rows), key, block, start_rank, end_rank, best)
            bound = kn.scores(wanted, dataclasses.replace(judged, qi=qi, rank=rank))
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


def evaluate(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    metrics: str | Iterable[str] = DEFAULT_METRICS,
    **options: Unpack[Options],
) -> pd.DataFrame:
    """Per-query metrics: :func:`evaluate_run` without the warnings.

    >>> run = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    >>> qrels = pd.DataFrame({"query_id": ["1"], "doc_id": ["b"], "relevance": [1]})
    >>> evaluate(run, qrels, ["hit@1", "mrr"]).iloc[0].to_dict()
    {'query_id': '1', 'hit@1': 0.0, 'mrr': 0.5}
    """
    return evaluate_run(run, qrels, metrics, **options).per_query


def check_data(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    metrics: str | Iterable[str] = DEFAULT_METRICS,
    **options: Unpack[Options],
) -> list[DataWarning]:
    """The data checks alone (missing queries, duplicates, ties, answer sets larger than k);
    options as :func:`evaluate_run` (diagnostics are always computed)."""
    return list(evaluate_run(run, qrels, metrics, **{**options, "diagnostics": True}).warnings)
