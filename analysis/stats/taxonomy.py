"""A failure taxonomy: why did a model miss a query at cutoff k?

Every (model, query) of a per-query table gets one ``category``. A query is a **hit** when a
relevant document is in the top k (``first_gold_rank <= k``, i.e. ``hit@k = 1``). Otherwise the
first of these causes that applies names it (the precedence, most specific first):

=============================  ==================================================================
category                       condition (all on a query that is not a hit)
=============================  ==================================================================
``no gold``                    the qrels hold no relevant document for the query
``gold not a candidate``       no gold document is among the candidates (the entity table, cut to
                               the candidate types when they are known): no retriever can find it
``tie-dependent``              some order of the tied scores would put a gold in the top k
                               (``hit@k_max = 1``; needs the tie diagnostics)
``location-indistinguishable`` spatial: a non-gold POI ranked above the first gold sits on the
                               gold's coordinate (the per-query ``indistinguishable`` flag)
``suspected missing answer``   the top k holds a retrieved, unjudged entity that shares type and
                               relations with a gold (:mod:`analysis.stats.coverage`): maybe a
                               right answer missing from the qrels
``near miss``                  the first gold is at rank k+1 ... 2k
``retrieved beyond k``         the first gold is ranked below 2k
``not retrieved``              no gold anywhere in the returned list (also: query missing from
                               the run)
=============================  ==================================================================

The categories partition the queries: their counts add up to the number of queries, and the
``hit`` count equals the sum of ``hit@k``. Causes that cannot be checked (no entity table, no tie
diagnostics, not spatial, no suspects given) are simply never assigned.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TypedDict, Unpack

import numpy as np
import pandas as pd

from analysis.core.options import check_options
from analysis.stats._common import flag_values
from analysis.stats.coverage import has_explicit_negatives, suspected_missing_answers

__all__ = [
    "CATEGORIES",
    "FAILURES",
    "applicable_categories",
    "category_queries",
    "classify",
    "classify_dataset",
    "gold_candidates",
    "taxonomy_counts",
]

HIT = "hit"
NO_GOLD = "no gold"
NOT_CANDIDATE = "gold not a candidate"
TIE = "tie-dependent"
LOCATION = "location-indistinguishable"
SUSPECTED = "suspected missing answer"
NEAR_MISS = "near miss"
BEYOND = "retrieved beyond k"
NOT_RETRIEVED = "not retrieved"

#: Failure causes in precedence order (the first that applies wins).
FAILURES: tuple[str, ...] = (
    NO_GOLD, NOT_CANDIDATE, TIE, LOCATION, SUSPECTED, NEAR_MISS, BEYOND, NOT_RETRIEVED,
)  # fmt: skip
#: Every category, ``hit`` first.
CATEGORIES: tuple[str, ...] = (HIT, *FAILURES)


def gold_candidates(
    qrels: pd.DataFrame,
    entities: pd.DataFrame,
    candidate_types: Iterable[str] | None = None,
    *,
    relevance_threshold: int = 1,
) -> pd.Series:
    """Per qrels query, how many of its gold documents are candidates (``query_id`` index).

    A candidate is a document of ``entities`` (of one of ``candidate_types`` when given, e.g.
    ``["product"]`` for STaRK Amazon). STaRK's evaluator drops gold ids that are not candidates;
    here such a query is kept and labelled ``gold not a candidate``.
    """
    cand = entities
    if candidate_types is not None:
        wanted = {str(t) for t in candidate_types}
        cand = entities[entities["type"].astype("str").isin(wanted)]
    ids = pd.Index(cand["doc_id"].astype("str").unique())
    q = qrels[["query_id", "doc_id", "relevance"]]
    gold = q[pd.to_numeric(q["relevance"]) >= relevance_threshold]
    is_cand = gold["doc_id"].astype("str").isin(ids)
    per_query = is_cand.groupby(gold["query_id"].astype("str"), sort=False).sum()
    queries = pd.Index(qrels["query_id"].astype("str").drop_duplicates(), name="query_id")
    return per_query.reindex(queries, fill_value=0).astype(np.int64).rename("n_gold_candidates")


def classify(
    per_query: pd.DataFrame,
    *,
    k: int = 10,
    n_gold_candidates: pd.Series | None = None,
    suspected: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The per-query table with a ``category`` column (module docstring), for cutoff ``k``.

    Args:
        per_query: rows of one dataset (any number of models) with ``model, query_id, n_gold,
            first_gold_rank`` and, when available, ``hit@<k>_max`` (tie diagnostics) and
            ``indistinguishable`` (spatial).
        k: the cutoff.
        n_gold_candidates: :func:`gold_candidates` of the dataset (``query_id`` index).
        suspected: ``model, query_id`` rows of queries whose top k holds a suspected missing
            answer (:func:`analysis.stats.coverage.suspected_missing_answers`, one per model).

    Raises:
        ValueError: ``k < 1`` or a required column missing.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    missing = [c for c in ("model", "query_id", "n_gold", "first_gold_rank") if c not in per_query]
    if missing:
        raise ValueError(f"per-query table lacks column(s) {missing}")
    out = per_query.copy()
    first = pd.to_numeric(out["first_gold_rank"], errors="coerce").to_numpy(dtype=float)
    n_gold = pd.to_numeric(out["n_gold"], errors="coerce").fillna(0).to_numpy()
    conditions: dict[str, np.ndarray] = {NO_GOLD: n_gold <= 0}
    if n_gold_candidates is not None:
        n_cand = out["query_id"].astype("str").map(n_gold_candidates).fillna(0).to_numpy()
        conditions[NOT_CANDIDATE] = n_cand <= 0
    best = f"hit@{k}_max"
    if best in out.columns:
        conditions[TIE] = out[best].to_numpy(dtype=float) >= 1
    if "indistinguishable" in out.columns:
        conditions[LOCATION] = flag_values(out["indistinguishable"])
    if suspected is not None and not suspected.empty:
        keys = pd.MultiIndex.from_frame(suspected[["model", "query_id"]].astype("str"))
        rows = pd.MultiIndex.from_frame(out[["model", "query_id"]].astype("str"))
        conditions[SUSPECTED] = rows.isin(keys)
    conditions[NEAR_MISS] = (first > k) & (first <= 2 * k)
    conditions[BEYOND] = first > 2 * k
    category = np.full(len(out), NOT_RETRIEVED, dtype=object)
    decided = first <= k
    category[decided] = HIT
    for name in FAILURES:
        if name not in conditions:
            continue
        take = conditions[name] & ~decided
        category[take] = name
        decided |= take
    out["category"] = pd.Categorical(category, categories=list(CATEGORIES))
    return out


def taxonomy_counts(classified: pd.DataFrame, by: Sequence[str] = ()) -> pd.DataFrame:
    """Counts per model (and ``by`` slice columns) and category: ``model, *by, category, n,
    share`` (share of the group's queries), every category listed, zeros included."""
    keys = ["model", *by]
    counts = (
        classified.groupby([*keys, "category"], observed=False, sort=True, dropna=False)
        .size()
        .rename("n")
        .reset_index()
    )
    present = classified[keys].drop_duplicates()
    counts = counts.merge(present, on=keys)  # drop group combinations that do not occur
    total = counts.groupby(keys, dropna=False)["n"].transform("sum")
    counts["share"] = np.where(total > 0, counts["n"] / total.where(total > 0, 1), 0.0)
    counts["category"] = counts["category"].astype("str")
    return counts.reset_index(drop=True)


def applicable_categories(classified: pd.DataFrame) -> tuple[str, ...]:
    """The categories that can occur on ``classified`` (:data:`CATEGORIES` order): the spatial
    cause ``location-indistinguishable`` only when the rows carry the ``indistinguishable``
    flag with a value (a dataset with coordinates); every other category always. Tables and
    menus list these, so a text-only dataset shows no column that is zero by construction."""
    spatial = "indistinguishable" in classified.columns and bool(
        classified["indistinguishable"].notna().any()
    )
    return tuple(c for c in CATEGORIES if spatial or c != LOCATION)


def category_queries(classified: pd.DataFrame, model: str, category: str) -> pd.DataFrame:
    """The rows of one model and category (for "click a count, see its queries")."""
    rows = classified[(classified["model"] == model) & (classified["category"] == category)]
    return rows.reset_index(drop=True)


class ClassifyOptions(TypedDict, total=False):
    """The keyword options of :func:`classify_dataset`."""

    k: int
    candidate_types: Iterable[str] | None
    relevance_threshold: int
    suspects: bool


def classify_dataset(
    per_query: pd.DataFrame,
    ranked: Mapping[str, pd.DataFrame],
    qrels: pd.DataFrame,
    entities: pd.DataFrame | None = None,
    edges: pd.DataFrame | None = None,
    **options: Unpack[ClassifyOptions],
) -> pd.DataFrame:
    """:func:`classify` for one dataset, with the candidate check (when there is an entity
    table) and the suspected missing answers of each model's ranked run (``ranked``: model ->
    :func:`analysis.core.metrics.rank_run` output; positives-only qrels only, see
    :mod:`analysis.stats.coverage`). Options (keywords, :class:`ClassifyOptions`): the cutoff
    ``k`` (10), the ``candidate_types`` (default: every entity is a candidate),
    ``relevance_threshold``
    (1) and ``suspects`` (True: look for suspected missing answers)."""
    check_options("classify_dataset", options, ClassifyOptions)
    k, candidate_types = options.get("k", 10), options.get("candidate_types")
    relevance_threshold = options.get("relevance_threshold", 1)
    suspects = options.get("suspects", True)
    n_cand = None
    if entities is not None:
        n_cand = gold_candidates(
            qrels, entities, candidate_types, relevance_threshold=relevance_threshold
        )
    found = []
    if suspects and not has_explicit_negatives(qrels, relevance_threshold):
        for model, run in ranked.items():
            rows = suspected_missing_answers(
                run, qrels, entities, edges, k=k, relevance_threshold=relevance_threshold
            )
            found.append(pd.DataFrame({"model": model, "query_id": rows["query_id"].unique()}))
    suspected = pd.concat(found, ignore_index=True) if found else None
    return classify(per_query, k=k, n_gold_candidates=n_cand, suspected=suspected)
