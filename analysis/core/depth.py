"""Saved depth: how many documents a run kept per query, and which metrics read deeper.

A run file keeps the top ``d`` documents of each query: ``d`` is the query's *saved depth*, the
length of its list after duplicate documents are dropped (``saved_depth``, the same number as
``n_retrieved``); the run's *usual depth* ``D`` is the most common ``d`` among the queries it
answers. Every metric is computed from the saved ranks (as trec_eval does), so a relevant
document beyond a query's list counts as not retrieved. An evaluator that scores every
candidate (STaRK's: the documents a run did not save tie below the saved ones) can still credit
it, so whenever a metric reads ranks beyond the saved list and a relevant document is missing
from it, the value here is a lower bound of that evaluator's.

Which metrics read beyond the saved list of a query with ``d`` documents:

* ``hit@k``, ``recall@k``, ``precision@k``, ``ndcg@k``, ``map@k``, ``mrr@k``: when ``k > d``;
* ``mrr``, ``map``, ``ndcg``, ``recall``, ``hit`` (no cutoff) read the whole ranking: always;
* ``rprec`` reads ranks up to R, the query's number of relevant documents: when ``R > d``;
* ``precision`` without a cutoff reads exactly the saved list: never.

A query is *affected* for a metric when the metric reads beyond its list and a relevant document
is missing from the list (for ``hit`` and ``mrr``: no relevant document is in it, since only the
first one counts; for ``ndcg``, whose gains are every positive relevance whatever the threshold,
a document of any positive grade). :func:`depth_warnings` says so once per run and metric, with
counts; queries missing from the run altogether are left to the "missing from the run" check,
queries without a relevant document to the "no relevant" check. ``gold_beyond_depth`` flags the
queries the run answered whose list holds none of their relevant documents.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from analysis.core import ranking as rk
from analysis.core.errors import DataWarning, agreeing
from analysis.core.measures import REGISTRY
from analysis.core.names import Metric

CREDIT = "an evaluator that scores every candidate (STaRK's) may credit them"


def _credit(n: int, who: str = "") -> str:
    """:data:`CREDIT` for ``n`` queries (``who`` in place of its object: ``the rest``)."""
    return CREDIT.removesuffix("them") + (who or agreeing(n)[2])


def usual_depth(n_ret: np.ndarray) -> int:
    """The most common list length among the queries with a list (the largest of equally common
    ones); 0 when no query has one."""
    answered = n_ret[n_ret > 0]
    if len(answered) == 0:
        return 0
    values, counts = np.unique(answered, return_counts=True)
    return int(values[counts == counts.max()].max())


def depth_flags(n_ret: np.ndarray, n_rel: np.ndarray, n_found: np.ndarray) -> dict:
    """The per-query columns ``saved_depth`` (the list's length, 0 for a query missing from the
    run) and ``gold_beyond_depth`` (the run answered the query, it has relevant documents and
    none of them is in the saved list)."""
    return {
        "saved_depth": np.asarray(n_ret, dtype=np.int64),
        "gold_beyond_depth": (n_ret > 0) & (n_rel > 0) & (n_found == 0),
    }


def _reads_beyond(metric: Metric, n_ret: np.ndarray, n_rel: np.ndarray) -> np.ndarray | None:
    """Per query, whether ``metric`` reads ranks beyond the saved list; None: never (what each
    measure reads is declared in the measure registry)."""
    reads = REGISTRY[metric.measure].depth
    if reads == "relevant":
        return n_rel > n_ret
    if metric.k is not None:
        return n_ret < metric.k
    if reads == "saved":
        return None
    return np.ones(len(n_ret), dtype=bool)


def _depth_text(depths: np.ndarray) -> str:
    """``the saved depth D`` when the lists share one length, else ``their saved lists
    (usually D documents)``."""
    usual = usual_depth(depths)
    if len(np.unique(depths)) <= 1:
        return f"the saved depth {usual}"
    return f"their saved lists (usually {usual} documents)"


#: measures whose gains are every positive relevance, whatever the threshold
GRADED = frozenset({"ndcg"})


def depth_warnings(
    queries: pa.Array,
    n_ret: np.ndarray,
    n_rel: np.ndarray,
    n_found: np.ndarray,
    wanted: Sequence[Metric],
    graded: tuple[np.ndarray, np.ndarray] | None = None,
) -> list[DataWarning]:
    """One warning per metric that reads beyond the saved lists of queries missing relevant
    documents there (module docstring), code ``saved_depth:<metric>``.

    Args:
        queries: the query ids of the qrels (``n_ret``, ``n_rel``, ``n_found`` follow them).
        n_ret: documents saved per query (0: missing from the run).
        n_rel: relevant documents per query.
        n_found: relevant documents in the saved list per query.
        wanted: the metrics evaluated.
        graded: documents of positive gain per query and those in the saved list, for the
            measures of :data:`GRADED` (None: ``n_rel`` and ``n_found``, as with threshold 1).
    """
    out = []
    nq = len(n_ret)
    answered = (n_ret > 0) & (n_rel > 0)

    def missing(total: np.ndarray, found: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(none in the saved list, only part of them in it) among the answered queries."""
        return answered & (found == 0), answered & (found > 0) & (found < total)

    relevant = missing(n_rel, n_found)
    positive = missing(*graded) if graded is not None else relevant
    for m in wanted:
        beyond = _reads_beyond(m, n_ret, n_rel)
        if beyond is None:
            continue
        none_found, partial = positive if m.measure in GRADED else relevant
        zero = none_found & beyond
        # only the first relevant document counts (hit, mrr): 0 unless one is within the cutoff
        first_only = REGISTRY[m.measure].first_only
        part = partial & beyond if not first_only else np.zeros(nq, dtype=bool)
        if not zero.any() and not part.any():
            continue
        affected = np.flatnonzero(zero | part)
        if m.k is not None:
            message = _cutoff_message(m, n_ret, answered & beyond, zero, part, nq)
        else:
            message = _whole_message(m, n_ret, zero, part, nq)
        out.append(
            DataWarning(
                f"saved_depth:{m.label}",
                len(affected),
                message,
                tuple(str(x) for x in rk.take(queries, affected[:5]).to_pylist()),
            )
        )
    return out


def _whole_message(
    m: Metric, n_ret: np.ndarray, zero: np.ndarray, part: np.ndarray, nq: int
) -> str:
    """The message of a metric without cutoff (``rprec``: ranks up to R)."""
    reads = (
        "reads ranks up to R (the query's number of relevant documents)"
        if REGISTRY[m.measure].depth == "relevant"
        else "reads the whole ranking"
    )
    lead = f"{m.label} {reads}: "
    n_zero, n_part = int(zero.sum()), int(part.sum())
    if n_zero:
        has, its, _ = agreeing(n_zero)
        text = (
            f"{n_zero} of {nq} queries {has} no relevant document within "
            f"{_depth_text(n_ret[zero])}: {its} {m.label} is 0 here; {_credit(n_zero)}"
        )
        if n_part:
            has, its, _ = agreeing(n_part)
            text += (
                f"; {n_part} more {has} only part of {its} relevant documents in the saved "
                f"list: {its} {m.label} is a lower bound"
            )
        return lead + text
    has, its, _ = agreeing(n_part)
    return lead + (
        f"{n_part} of {nq} queries {has} only part of {its} relevant documents within "
        f"{_depth_text(n_ret[part])}: {its} {m.label} is a lower bound; "
        f"{_credit(n_part, 'the rest')}"
    )


def _cutoff_message(
    m: Metric, n_ret: np.ndarray, short: np.ndarray, zero: np.ndarray, part: np.ndarray, nq: int
) -> str:
    """The message of a metric with cutoff k read beyond the saved lists of ``short`` queries."""
    k = m.k
    depths = n_ret[short]
    saved = f"{int(depths.max())} < {k}" if len(np.unique(depths)) <= 1 else (
        f"fewer than {k} (at most {int(depths.max())})"
    )  # fmt: skip
    text = f"{m.label} reads ranks up to {k} but the run saved {saved} for {int(short.sum())} "
    text += f"of {nq} queries"
    n_zero, n_part = int(zero.sum()), int(part.sum())
    if n_zero:
        has, its, _ = agreeing(n_zero)
        text += (
            f"; {n_zero} of them {has} no relevant document in the saved list: {its} "
            f"{m.label} is 0 here; {_credit(n_zero)}"
        )
    if n_part:
        has, its, _ = agreeing(n_part)
        more = "more" if n_zero else "of them"
        text += (
            f"; {n_part} {more} {has} only part of {its} relevant documents in the saved list: "
            f"{its} {m.label} is a lower bound"
        )
    return text
