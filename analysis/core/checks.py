"""The data checks of an evaluation: queries missing from the run or from the qrels, queries
without a relevant doc, duplicate docs and qrels rows, answer sets larger than k, ties, and the
counts of a split."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from analysis.core import ranking as rk
from analysis.core.errors import DataWarning
from analysis.core.names import Metric


def _examples(ids: Iterable[object], n: int = 5) -> tuple[str, ...]:
    return tuple(str(x) for x in list(ids)[:n])


def _unknown_ids_hint(n_extra: int, n_run: int, n_missing: int, n_qrels: int) -> str:
    """The likely cause when most run queries are not in the qrels. Every qrels query answered
    (or nearly): the run covers more queries than the qrels judge, typically other splits.
    Most qrels queries unanswered too: the two files number their queries differently. Fewer
    than half of the run's queries unknown: no hint."""
    if n_extra <= n_run / 2:
        return ""
    if n_missing <= n_qrels / 2:
        return (
            " — the run also answers queries the qrels do not judge, e.g. the queries of other "
            "splits (evaluate one split: --split FILE, or the bundle's split)"
        )
    return (
        " — most run and qrels query ids differ: the two files number their queries "
        "differently (another id convention or another query set)"
    )


def data_warnings(
    q: Any,
    ranked: Any,
    run_to_qrels: np.ndarray,
    n_ret: np.ndarray,
    n_rel: np.ndarray,
    wanted: Sequence[Metric],
    tied_queries: np.ndarray | None,
    tie_sensitive: np.ndarray | None,
    outside_split: np.ndarray | None = None,
    n_split_dropped: int = 0,
    n_not_candidates: int = 0,
) -> list[DataWarning]:
    """The warnings of one evaluation (``q``: the prepared qrels, ``ranked``: the ranked run).

    With a split (``outside_split``: per run query, whether it lies outside the split), run
    queries outside the split are not reported as "not in the qrels"; an ``info`` note counts
    them and the qrels queries dropped.
    """
    out: list[DataWarning] = []
    nq = len(q.queries)
    if outside_split is not None:
        n_outside = int(outside_split.sum())
        out.append(
            DataWarning(
                "split",
                nq,
                f"split: {nq} queries evaluated; {n_split_dropped} queries of the qrels outside "
                f"the split dropped, {n_outside} queries of the run outside the split ignored",
                level="info",
            )
        )
    if n_not_candidates:
        out.append(
            DataWarning(
                "not_candidates",
                n_not_candidates,
                f"STaRK variant: {n_not_candidates} gold ids that are not candidates dropped",
                level="info",
            )
        )
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
    unknown = run_to_qrels < 0
    if outside_split is not None:
        unknown &= ~outside_split
    extra = np.flatnonzero(unknown)
    if len(extra):
        n_run = int(len(run_to_qrels) - (outside_split.sum() if outside_split is not None else 0))
        hint = _unknown_ids_hint(len(extra), n_run, len(missing), nq)
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
    if tied_queries is not None and len(tied_queries):
        detail = ""
        if tie_sensitive is not None:
            detail = f"; {int(tie_sensitive.sum())} of them change value with the tie order"
        out.append(
            DataWarning(
                "ties",
                len(tied_queries),
                f"{len(tied_queries)} queries have tied scores{detail}",
                _examples(rk.take(q.queries, tied_queries).to_pylist()),
            )
        )
    return out
