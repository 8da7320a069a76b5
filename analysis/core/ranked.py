"""A run's metrics and its ranking from one ranking pass, for callers that read both.

:func:`evaluate_run_ranked` is :func:`analysis.core.metrics.evaluate_run` (the same per-query
values, warnings and metrics) that also returns the ranking those values were computed on, as
a :class:`RankedRun`: the geo diagnostics read the ranked rows of every model, and ranking the
run again for them would repeat the costliest step of the evaluation.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from analysis.core import ranking as rk
from analysis.core.inputs import run_arrays
from analysis.core.metrics import DEFAULT_METRICS, Evaluation, TiePolicy, evaluate_arrays

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class RankedRun:
    """A run as the metrics ranked it: after the tie policy, duplicate docs removed (the
    best-ranked occurrence kept), each query's rows contiguous and in rank order. Ranked row
    ``i`` is file row ``rows[i]``; its doc id is ``file_docs[rows[i]]``."""

    query_ids: pa.Array  # the run's query ids, by code (order of first appearance)
    codes: np.ndarray  # query code of each ranked row
    rows: np.ndarray  # file row of each ranked row
    file_docs: rk.Ids  # doc ids in file order
    scores: np.ndarray  # score of each ranked row (float64, as read)
    rank: np.ndarray  # 1-based rank of each ranked row


def evaluate_run_ranked(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    metrics: str | Iterable[str] = DEFAULT_METRICS,
    *,
    ties: TiePolicy = "trec_eval",
    relevance_threshold: int = 1,
    diagnostics: bool = False,
) -> tuple[Evaluation, RankedRun]:
    """``(evaluate_run(run, qrels, metrics, ...), ranking)`` from a single ranking of ``run``.

    Arguments as :func:`analysis.core.metrics.evaluate_run` (the split is the qrels' own,
    ``qrels.attrs["split_queries"]``, as there by default). The ranking covers every query of
    the run, judged or not.
    """
    import pandas as pd

    box: list = []
    query_ids, columns, warnings, wanted = evaluate_arrays(
        *run_arrays(run),
        qrels,
        metrics,
        ties=ties,
        relevance_threshold=relevance_threshold,
        diagnostics=diagnostics,
        split=qrels.attrs.get("split_queries"),
        ranking=box,
    )
    per_query = pd.DataFrame({"query_id": pd.Series(query_ids.to_pylist(), dtype="str"), **columns})
    ranked = box[0]
    every = np.arange(len(ranked.codes))
    ranking = RankedRun(
        query_ids=ranked.dictionary,
        codes=ranked.codes,
        rows=ranked.order.source(every),
        file_docs=ranked.docs,
        scores=ranked.scores,
        rank=ranked.rank_of(every),
    )
    return Evaluation(per_query, tuple(warnings), tuple(wanted)), ranking
