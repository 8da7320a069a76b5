"""What every out-of-core engine returns and how it becomes the core's per-query output.

An engine reduces the run to **one row per run query** (:data:`REDUCED`): ``q`` (its id),
``n_ret`` (documents after deduplication), ``extra`` (duplicate rows dropped), ``bad`` (rows
with a missing id or a score that is not a finite number), ``tied`` (two of its documents share
a score), ``ranks`` and ``rels`` (the rank and relevance of its judged documents with a positive
gain, by rank) and ``unrated`` (its other judged documents: grade 0 or negative; they only tell
the data checks that the run and the qrels name documents alike). :func:`finish` applies the
core's metric kernels and data checks to those rows, so any engine producing them gets the
in-memory core's per-query values and warnings, bit for bit: queries of the qrels missing from
the run score 0 (trec_eval ``-c``), run queries outside the qrels are left out, queries without
a relevant document score 0.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from analysis.core import checks, depth, inputs, kernels
from analysis.core import metrics as mx
from analysis.core import ranking as rk
from analysis.core.errors import DataWarning
from analysis.core.measures import Judged

REDUCED = pa.schema(
    [
        ("q", pa.string()),
        ("n_ret", pa.int64()),
        ("extra", pa.int64()),
        ("bad", pa.int64()),
        ("tied", pa.bool_()),
        ("ranks", pa.list_(pa.int64())),
        ("rels", pa.list_(pa.int64())),
        ("unrated", pa.int64()),
    ]
)

Result = tuple[pa.Array, dict[str, np.ndarray], list[DataWarning], list[mx.Metric]]


@dataclass(frozen=True)
class _RunSummary:
    """What :func:`analysis.core.checks.data_warnings` reads of a ranked run."""

    dictionary: pa.Array
    n_duplicate_rows: int
    n_duplicate_queries: int


def prepare_gold(
    qrels: mx.QrelsArrays, metrics: str | Iterable[str], relevance_threshold: int
) -> tuple[inputs.Qrels, list[mx.Metric], pa.Table]:
    """The qrels numbered and collapsed as the core does, the parsed metrics, and every judged
    pair as an Arrow table ``q, d, rel`` (what an engine joins the ranked run with: the pairs
    of a positive grade are ranked, the others counted)."""
    wanted = mx.parse_metrics(metrics)
    if int(relevance_threshold) < 1:
        raise ValueError("relevance_threshold must be at least 1")
    q = inputs.prepare_qrels(*qrels)
    gold = pa.table(
        {
            "q": rk.take(q.queries, q.query_index).cast(pa.string()),
            "d": q.docs.cast(pa.string()),
            "rel": rk.from_numpy(q.relevance.astype(np.int64)),
        }
    )
    return q, wanted, gold


def concat(parts: list[pa.Table]) -> pa.Table:
    """The reduced rows of several passes as one table of :data:`REDUCED`."""
    if not parts:
        return REDUCED.empty_table()
    return pa.concat_tables([p.select(REDUCED.names).cast(REDUCED) for p in parts])


def finish(result: pa.Table, q: inputs.Qrels, wanted: list[mx.Metric], threshold: int) -> Result:
    """The core's metric kernels and warnings on the reduced run (see the module docstring);
    returns what :func:`analysis.core.metrics.evaluate_arrays` returns."""
    nq = len(q.queries)
    run_ids = result["q"].combine_chunks().cast(pa.string())
    if len(pc.unique(run_ids)) != len(run_ids):  # a plan that split a query: never a number
        raise RuntimeError("a query was reduced twice (its rows were split between two passes)")
    run_to_qrels = rk.index_of(run_ids, q.queries)
    sizes = rk.to_numpy(result["n_ret"]).astype(np.int64)
    extra = rk.to_numpy(result["extra"]).astype(np.int64)
    tied = rk.to_numpy(result["tied"], fill=0).astype(bool)
    ranks_list = result["ranks"].combine_chunks()
    parent = rk.to_numpy(pc.list_parent_indices(ranks_list)).astype(np.int64)
    rank = rk.to_numpy(pc.list_flatten(ranks_list)).astype(np.int64)
    rel = rk.to_numpy(pc.list_flatten(result["rels"].combine_chunks())).astype(np.int64)
    qi = run_to_qrels[parent]
    gain = rel.astype(np.float64)
    relevant = rel >= threshold
    in_qrels = run_to_qrels >= 0
    n_ret = np.zeros(nq, dtype=np.int64)
    n_ret[run_to_qrels[in_qrels]] = sizes[in_qrels]
    n_rel = np.bincount(q.query_index[q.relevance >= threshold], minlength=nq).astype(np.float64)
    cutoffs = {m.k for m in wanted if m.measure == "ndcg"}
    idcg = kernels.ideal_dcg(q.query_index, q.relevance, nq, cutoffs)
    values = kernels.scores(wanted, Judged(qi, rank, gain, relevant, n_rel, n_ret, idcg))
    columns = {m.label: values[m.label] for m in wanted}
    tied_queries = run_to_qrels[tied][run_to_qrels[tied] >= 0]
    summary = _RunSummary(run_ids, int(extra.sum()), int((extra > 0).sum()))
    n_found = np.bincount(qi[relevant], minlength=nq)
    n_positive_found = np.bincount(qi[gain > 0], minlength=nq)
    unrated = rk.to_numpy(result["unrated"]).astype(np.int64)
    n_judged = n_positive_found + np.bincount(
        run_to_qrels[in_qrels], weights=unrated[in_qrels], minlength=nq
    ).astype(np.int64)
    warnings = checks.data_warnings(
        q,
        summary,  # type: ignore[arg-type]
        checks.Coverage(run_to_qrels, n_ret, n_rel, n_found=n_judged),
        wanted,
        tied_queries if tied.any() else None,
        None,
    )
    # nDCG's gains: every positive grade
    graded = (np.bincount(q.query_index[q.relevance > 0], minlength=nq), n_positive_found)
    warnings += depth.depth_warnings(q.queries, n_ret, n_rel, n_found, wanted, graded)
    return q.queries, columns, warnings, wanted
