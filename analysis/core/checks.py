"""The data checks of an evaluation: queries missing from the run or from the qrels, queries
without a relevant doc, a run none of whose lists holds a relevant doc, duplicate docs and qrels
rows, answer sets larger than k, ties, and the counts of a split."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from analysis.core import ranking as rk
from analysis.core.errors import DataWarning, agreeing, counted
from analysis.core.names import Metric


def _examples(ids: Iterable[object], n: int = 5) -> tuple[str, ...]:
    return tuple(str(x) for x in list(ids)[:n])


def _first_ids(ids: pa.Array, n: int = 5) -> tuple[str, ...]:
    """The ``n`` smallest of distinct ``ids`` (as strings, by bytes): examples that do not depend
    on the order the run's lines, or an engine's passes, gave them in."""
    if len(ids) > n:
        ids = ids.take(pc.select_k_unstable(ids, n, sort_keys=[("ids", "ascending")]))
    return tuple(str(x) for x in pc.array_take(ids, pc.array_sort_indices(ids)).to_pylist())


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


@dataclass(frozen=True)
class Coverage:
    """Which queries one evaluation saw.

    ``run_to_qrels``: per run query, its index among the qrels queries (-1: not in the qrels);
    ``n_ret`` and ``n_rel``: per qrels query, the documents retrieved and the relevant ones.
    With a split, ``outside_split`` says per run query whether it lies outside the split and
    ``n_split_dropped`` counts the qrels queries the split dropped; ``n_not_candidates`` counts
    the gold ids the STaRK variant dropped. ``n_found``: per qrels query, the documents of its
    list the qrels judge, whatever the grade (relevant, below the relevance threshold, 0 or
    negative; None: not checked)."""

    run_to_qrels: np.ndarray
    n_ret: np.ndarray
    n_rel: np.ndarray
    outside_split: np.ndarray | None = None
    n_split_dropped: int = 0
    n_not_candidates: int = 0
    n_found: np.ndarray | None = None


def data_warnings(
    q: Any,
    ranked: Any,
    coverage: Coverage,
    wanted: Sequence[Metric],
    tied_queries: np.ndarray | None,
    tie_sensitive: np.ndarray | None,
    compat: str = "trec_eval",
) -> list[DataWarning]:
    """The warnings of one evaluation (``q``: the prepared qrels, ``ranked``: the ranked run),
    in this order: the split and STaRK-variant notes, queries missing from the run, run queries
    not in the qrels, queries without a relevant document, a run that found no relevant
    document at all, duplicate docs and qrels rows, answer sets larger than a recall cutoff,
    ties.

    With a split, run queries outside the split are not reported as "not in the qrels"; an
    ``info`` note counts them and the qrels queries dropped. With ``compat="list"`` (recall@k
    divides by min(#gold rows, k), so it can always reach 1) no query is reported for having
    more relevant documents than k. The examples of a warning about
    qrels queries are the first ones in the qrels' order; those of run queries outside the qrels
    the smallest ids.
    """
    missing = np.flatnonzero(coverage.n_ret == 0)
    return [
        *_notes(len(q.queries), coverage),
        *_coverage_warnings(q, ranked, coverage, missing),
        *_no_match_warnings(coverage),
        *_duplicate_warnings(q, ranked),
        *(_cap_warnings(q, coverage.n_rel, wanted) if compat != "list" else []),
        *_tie_warnings(q, tied_queries, tie_sensitive),
    ]


def _notes(nq: int, coverage: Coverage) -> list[DataWarning]:
    """The ``info`` notes: what the split kept and dropped, the gold ids that are not
    candidates."""
    out = []
    if coverage.outside_split is not None:
        n_outside = int(coverage.outside_split.sum())
        out.append(
            DataWarning(
                "split",
                nq,
                f"split: {counted(nq, 'query', 'queries')} evaluated; "
                f"{counted(coverage.n_split_dropped, 'query', 'queries')} of the qrels outside "
                f"the split dropped, {counted(n_outside, 'query', 'queries')} of the run outside "
                "the split ignored",
                level="info",
            )
        )
    n_not_candidates = coverage.n_not_candidates
    if n_not_candidates:
        out.append(
            DataWarning(
                "not_candidates",
                n_not_candidates,
                f"STaRK variant: {counted(n_not_candidates, 'gold id')} that "
                f"{'is not a candidate' if n_not_candidates == 1 else 'are not candidates'} "
                "dropped",
                level="info",
            )
        )
    return out


def _coverage_warnings(
    q: Any, ranked: Any, coverage: Coverage, missing: np.ndarray
) -> list[DataWarning]:
    """Queries missing from the run, run queries not in the qrels (outside the split ones
    aside), queries without a relevant document."""
    out = []
    nq = len(q.queries)
    if len(missing):
        out.append(
            DataWarning(
                "missing_from_run",
                len(missing),
                f"{len(missing)} of {nq} queries in the qrels "
                f"{'is' if len(missing) == 1 else 'are'} missing from the run; "
                f"{'it scores' if len(missing) == 1 else 'they score'} 0 on every metric "
                "(as trec_eval -c)",
                _examples(rk.take(q.queries, missing).to_pylist()),
            )
        )
    outside = coverage.outside_split
    unknown = coverage.run_to_qrels < 0
    if outside is not None:
        unknown &= ~outside
    extra = np.flatnonzero(unknown)
    if len(extra):
        n_run = int(len(coverage.run_to_qrels) - (outside.sum() if outside is not None else 0))
        hint = _unknown_ids_hint(len(extra), n_run, len(missing), nq)
        out.append(
            DataWarning(
                "not_in_qrels",
                len(extra),
                f"{len(extra)} of {n_run} queries in the run "
                f"{'is' if len(extra) == 1 else 'are'} not in the qrels; "
                f"{'it is' if len(extra) == 1 else 'they are'} left out{hint}",
                _first_ids(rk.take(ranked.dictionary, extra)),
            )
        )
    no_rel = np.flatnonzero(coverage.n_rel == 0)
    if len(no_rel):
        out.append(
            DataWarning(
                "no_relevant",
                len(no_rel),
                f"{counted(len(no_rel), 'query', 'queries')} "
                f"{agreeing(len(no_rel))[0]} no relevant document in the qrels; "
                f"{'it scores' if len(no_rel) == 1 else 'they score'} 0",
                _examples(rk.take(q.queries, no_rel).to_pylist()),
            )
        )
    return out


NO_MATCH_MIN_QUERIES = 5


def _no_match_warnings(coverage: Coverage) -> list[DataWarning]:
    """A run none of whose lists holds a relevant document, over at least
    :data:`NO_MATCH_MIN_QUERIES` answered queries that have relevant documents: hit, recall,
    MRR and the like are 0 on every query, which is far more often two id conventions than a
    model (a CSV written with ``, `` keeps a space before each id: `` d1`` matches no ``d1``).
    With fewer queries, a run that finds nothing is plausible: no warning. A list holding a
    document the qrels judge with any other grade (below the relevance threshold, 0, negative)
    shows that the ids match: no warning either."""
    if coverage.n_found is None:
        return []
    answered = (coverage.n_ret > 0) & (coverage.n_rel > 0)
    n_answered = int(answered.sum())
    if n_answered < NO_MATCH_MIN_QUERIES or coverage.n_found[answered].any():
        return []
    return [
        DataWarning(
            "no_match",
            n_answered,
            f"none of the {n_answered} queries the run answers has a relevant document in its "
            "list: check that the run and the qrels name documents the same way (a CSV "
            "written with ', ' keeps a space before each id; prefixes; leading zeros)",
        )
    ]


def _duplicate_warnings(q: Any, ranked: Any) -> list[DataWarning]:
    """Duplicate documents in the run, duplicate qrels rows."""
    out = []
    if ranked.n_duplicate_rows:
        out.append(
            DataWarning(
                "duplicate_docs",
                ranked.n_duplicate_rows,
                f"{counted(ranked.n_duplicate_rows, 'duplicate document')} in the run "
                f"(in {counted(ranked.n_duplicate_queries, 'query', 'queries')}); the best-ranked "
                "occurrence is kept",
            )
        )
    if q.n_duplicate_rows:
        out.append(
            DataWarning(
                "duplicate_qrels",
                q.n_duplicate_rows,
                f"{counted(q.n_duplicate_rows, 'duplicate qrels row')} "
                f"(in {counted(q.n_duplicate_queries, 'query', 'queries')}); "
                "each pair keeps its maximum relevance",
            )
        )
    return out


def _cap_warnings(q: Any, n_rel: np.ndarray, wanted: Sequence[Metric]) -> list[DataWarning]:
    """Per recall cutoff k, the queries with more than k relevant documents."""
    out = []
    for k in sorted({m.k for m in wanted if m.measure == "recall" and m.k is not None}):
        over = np.flatnonzero(n_rel > k)
        if len(over):
            out.append(
                DataWarning(
                    f"gold_exceeds_{k}",
                    len(over),
                    f"{counted(len(over), 'query', 'queries')} "
                    f"{agreeing(len(over))[0]} more than "
                    f"{counted(k, 'relevant document')}, so recall@{k} cannot reach 1 for "
                    f"{agreeing(len(over))[2]}",
                    _examples(rk.take(q.queries, over).to_pylist()),
                )
            )
    return out


def _tie_warnings(
    q: Any, tied_queries: np.ndarray | None, tie_sensitive: np.ndarray | None
) -> list[DataWarning]:
    """The queries with tied scores, and how many of them change value with the tie order;
    the examples are the first tied queries in the qrels' order (whatever order the run, or an
    engine's parallel passes, gave them in)."""
    if tied_queries is None or not len(tied_queries):
        return []
    tied_queries = np.unique(tied_queries)
    n, detail = len(tied_queries), ""
    if tie_sensitive is not None:
        n_sensitive = int(tie_sensitive.sum())
        if n == 1:
            detail = f"; it {'changes' if n_sensitive else 'does not change'} value"
        else:
            detail = f"; {n_sensitive} of them {'changes' if n_sensitive == 1 else 'change'} value"
        detail += " with the tie order"
    return [
        DataWarning(
            "ties",
            n,
            f"{counted(n, 'query', 'queries')} {agreeing(n)[0]} tied scores{detail}",
            _examples(rk.take(q.queries, tied_queries).to_pylist()),
        )
    ]
