"""Judgement coverage and suspected missing answers.

Two questions a strict metric cannot answer:

* **Was the top k judged at all?** For qrels with explicit non-relevant rows (TREC pools),
  :func:`judgement_coverage` gives, per query, ``judged@k`` = (documents of the top k that have a
  qrels row, whatever its relevance) / (documents in the top k), and ``unjudged@k``, their count
  (Elastic's ``_rank_eval`` "unrated docs"). A low judged@k means the metric scores unjudged
  documents as non-relevant. With positives-only qrels (STaRK), judged@k is just precision and
  says nothing; :func:`has_explicit_negatives` tells which kind a qrels table is.
* **Is a "wrong" answer maybe right?** STaRK's answer sets are incomplete. For positives-only
  qrels, :func:`suspected_missing_answers` lists the retrieved non-gold entities of the top k that
  look like the gold: the same entity ``type`` as a gold of the query and, where the knowledge
  base has edges, shared relations with that gold: a neighbour in common through the same
  relation (an edge ``(relation, neighbour)`` both have, in either direction: the same brand,
  author, pathway ...) in at least ``min_relations`` (default 2) different relation types, or in
  every relation type when the knowledge base has fewer. One shared category or colour alone is
  too common to suggest a missing answer (on the demo's Amazon-like KB it matches most
  retrieved products). Without edges the type is
  the only evidence, and when every entity has the same type it is no evidence: nothing is
  suspected then. These are candidates for review; they never change a metric by themselves
  (a reviewer's judgement does, through amended qrels, beside the strict numbers).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from analysis.core.metrics import TiePolicy, evaluate
from analysis.io.amended import amended_qrels
from analysis.stats._common import flag_values

__all__ = [
    "coverage_summary",
    "has_explicit_negatives",
    "judgement_coverage",
    "most_unjudged",
    "strict_and_amended",
    "suspected_counts",
    "suspected_missing_answers",
]

SUSPECT_COLUMNS = ["query_id", "doc_id", "rank", "type", "gold_id", "shared_relations"]


def has_explicit_negatives(qrels: pd.DataFrame, relevance_threshold: int = 1) -> bool:
    """True when the qrels hold rows below the relevance threshold (judged non-relevant)."""
    rel = pd.to_numeric(qrels["relevance"], errors="coerce")
    return bool((rel < relevance_threshold).any())


def _top(ranked: pd.DataFrame, k: int) -> pd.DataFrame:
    top = ranked.loc[ranked["rank"] <= k, ["query_id", "doc_id", "rank"]].copy()
    top["query_id"] = top["query_id"].astype("str")
    top["doc_id"] = top["doc_id"].astype("str")
    return top


def judgement_coverage(ranked: pd.DataFrame, qrels: pd.DataFrame, k: int = 10) -> pd.DataFrame:
    """Per query of the qrels: ``query_id, n_top, judged@k, unjudged@k``.

    ``ranked`` is a ranked run (``query_id, doc_id, rank``, as from
    :func:`analysis.core.metrics.rank_run`). ``n_top`` = documents in the top k (fewer than k when
    the run returned fewer); ``judged@k`` = judged / n_top (NaN when the run returned nothing for
    the query); ``unjudged@k`` = n_top - judged. Duplicate qrels rows count once.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    top = _top(ranked, k)
    judged = qrels[["query_id", "doc_id"]].astype("str").drop_duplicates()
    judged["judged"] = True
    top = top.merge(judged, on=["query_id", "doc_id"], how="left")
    top["judged"] = flag_values(top["judged"])
    agg = top.groupby("query_id", sort=False).agg(
        n_top=("doc_id", "size"), judged=("judged", "sum")
    )
    queries = pd.Index(qrels["query_id"].astype("str").drop_duplicates(), name="query_id")
    agg = agg.reindex(queries)
    n_top = agg["n_top"].fillna(0).astype(np.int64)
    n_judged = agg["judged"].fillna(0).astype(np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(n_top > 0, n_judged / np.maximum(n_top, 1), np.nan)
    return pd.DataFrame(
        {
            "query_id": queries.astype("str"),
            "n_top": n_top.to_numpy(),
            f"judged@{k}": share,
            f"unjudged@{k}": (n_top - n_judged).to_numpy(),
        }
    )


def coverage_summary(
    runs: Mapping[str, pd.DataFrame],
    qrels: pd.DataFrame,
    k: int = 10,
    judgements: pd.DataFrame | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """judged@k of every model, per query and as a mean.

    A document counts as judged when the qrels have a row for it (whatever its relevance) or,
    when ``judgements`` are given, a reviewer judged it (relevance 0 too): the qrels are the
    amended ones (:func:`analysis.io.amended.amended_qrels`), so judging a document moves it
    from "unjudged" to "judged" here without touching the strict metrics.

    Returns ``(per_query, summary)``: ``per_query`` = :func:`judgement_coverage` rows with a
    ``model`` column first; ``summary`` = one row per model: ``model, n, judged@k`` (mean over
    the ``n`` queries the run returned a document for; a query missing from the run has no top
    k and is left out of the mean), ``unjudged@k`` (mean count), ``queries_with_unjudged``
    (queries with at least one unjudged document in the top k), ``unjudged_total``.
    """
    base = qrels if judgements is None or judgements.empty else amended_qrels(qrels, judgements)
    judged, unjudged = f"judged@{k}", f"unjudged@{k}"
    tables, rows = [], []
    for model, run in runs.items():
        table = judgement_coverage(run, base, k)
        table.insert(0, "model", model)
        tables.append(table)
        seen = table[table["n_top"] > 0]
        rows.append(
            {
                "model": model,
                "n": len(seen),
                judged: float(seen[judged].mean()) if len(seen) else np.nan,
                unjudged: float(seen[unjudged].mean()) if len(seen) else np.nan,
                "queries_with_unjudged": int((seen[unjudged] > 0).sum()),
                "unjudged_total": int(seen[unjudged].sum()),
            }
        )
    columns = ["model", "query_id", "n_top", judged, unjudged]
    per_query = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=columns)
    summary = pd.DataFrame(
        rows, columns=["model", "n", judged, unjudged, "queries_with_unjudged", "unjudged_total"]
    )
    return per_query, summary


def most_unjudged(per_query: pd.DataFrame, model: str, n: int = 50) -> pd.DataFrame:
    """The ``n`` queries of ``model`` with the most unjudged documents in the top k (ties: the
    lower judged@k first, then query id), queries with none left out."""
    judged = next(c for c in per_query.columns if c.startswith("judged@"))
    unjudged = judged.replace("judged@", "unjudged@")
    rows = per_query[(per_query["model"] == model) & (per_query[unjudged] > 0)]
    rows = rows.sort_values(
        [unjudged, judged, "query_id"], ascending=[False, True, True], kind="stable"
    )
    return rows.head(n).reset_index(drop=True)


def _neighbours(edges: pd.DataFrame, ids: pd.Index) -> pd.DataFrame:
    """``node, relation, other`` for both directions of the edges touching ``ids``."""
    e = edges[["src_id", "relation", "dst_id"]].astype("str")
    fwd = e[e["src_id"].isin(ids)].rename(columns={"src_id": "node", "dst_id": "other"})
    bwd = e[e["dst_id"].isin(ids)].rename(columns={"dst_id": "node", "src_id": "other"})
    return pd.concat([fwd, bwd], ignore_index=True).drop_duplicates()


def suspected_missing_answers(
    ranked: pd.DataFrame,
    qrels: pd.DataFrame,
    entities: pd.DataFrame | None,
    edges: pd.DataFrame | None = None,
    *,
    k: int = 10,
    relevance_threshold: int = 1,
    min_relations: int = 2,
) -> pd.DataFrame:
    """Retrieved non-gold entities of the top k that share type (and relations) with a gold.

    Returns one row per (query, retrieved doc), the best matching gold kept:
    ``query_id, doc_id, rank, type, gold_id, shared_relations`` (``shared_relations`` = number
    of relation types in which the doc and ``gold_id`` have a common neighbour, at least
    ``min(min_relations, relation types in the edges)``; 0 when there are no edges).
    Empty when there are no entities, no ``type`` column, or (without edges) a single entity
    type. Judged non-relevant documents (explicit qrels rows) are never suspects.
    """
    if entities is None or "type" not in entities.columns or entities.empty:
        return pd.DataFrame(columns=SUSPECT_COLUMNS)
    use_edges = edges is not None and not edges.empty
    types = entities[["doc_id", "type"]].astype("str").drop_duplicates("doc_id")
    if not use_edges and types["type"].nunique() < 2:
        return pd.DataFrame(columns=SUSPECT_COLUMNS)
    q = qrels[["query_id", "doc_id", "relevance"]].copy()
    q["query_id"], q["doc_id"] = q["query_id"].astype("str"), q["doc_id"].astype("str")
    gold = q.loc[pd.to_numeric(q["relevance"]) >= relevance_threshold, ["query_id", "doc_id"]]
    gold = gold.drop_duplicates().merge(types, on="doc_id").rename(columns={"doc_id": "gold_id"})
    top = _top(ranked, k).merge(q[["query_id", "doc_id"]], how="left", indicator=True)
    top = top.loc[top["_merge"] == "left_only", ["query_id", "doc_id", "rank"]]  # unjudged only
    cand = top.merge(types, on="doc_id").merge(gold, on=["query_id", "type"])
    if cand.empty:
        return pd.DataFrame(columns=SUSPECT_COLUMNS)
    if use_edges:
        ids = pd.Index(pd.concat([cand["doc_id"], cand["gold_id"]]).unique())
        nb = _neighbours(edges, ids)
        shared = cand.merge(nb, left_on="doc_id", right_on="node").merge(
            nb, left_on=["gold_id", "relation", "other"], right_on=["node", "relation", "other"]
        )
        counts = shared.groupby(["query_id", "doc_id", "gold_id"], sort=False)["relation"]
        counts = counts.nunique().rename("shared_relations").reset_index()
        needed = max(1, min(min_relations, edges["relation"].nunique()))
        cand = cand.merge(counts[counts["shared_relations"] >= needed])
    else:
        cand["shared_relations"] = 0
    cand = cand.sort_values(
        ["query_id", "rank", "shared_relations", "gold_id"], ascending=[True, True, False, True]
    ).drop_duplicates(["query_id", "doc_id"])
    out = cand[SUSPECT_COLUMNS].sort_values(["query_id", "rank"], kind="stable")
    return out.reset_index(drop=True)


def suspected_counts(suspects: pd.DataFrame) -> pd.Series:
    """Number of suspected missing answers per query (a Series indexed by ``query_id``)."""
    return suspects.groupby("query_id").size().rename("n_suspected")


def strict_and_amended(
    runs: Mapping[str, pd.DataFrame],
    qrels: pd.DataFrame,
    judgements: pd.DataFrame | None,
    metrics: Sequence[str],
    *,
    ties: TiePolicy = "trec_eval",
    relevance_threshold: int = 1,
) -> pd.DataFrame:
    """Mean metrics of each run against the strict qrels and against the qrels with the
    reviewers' judgements applied (:func:`analysis.io.amended.amended_qrels`), side by side.

    Returns ``model, metric, strict, amended, delta, n_strict, n_amended, queries_changed``
    (``delta = amended - strict``; ``queries_changed`` = queries whose value differs). Both are
    computed by the metric core with the same settings; the strict numbers are never replaced.
    """
    amended = amended_qrels(qrels, judgements)
    rows = []
    for model, run in runs.items():
        strict = evaluate(run, qrels, metrics, ties=ties, relevance_threshold=relevance_threshold)
        new = evaluate(run, amended, metrics, ties=ties, relevance_threshold=relevance_threshold)
        both = strict.merge(new, on="query_id", how="outer", suffixes=("", " (amended)"))
        for metric in metrics:
            a, b = both[metric], both[f"{metric} (amended)"]
            changed = int(((a - b).abs() > 1e-12).sum() + (a.isna() != b.isna()).sum())
            rows.append(
                {
                    "model": model,
                    "metric": metric,
                    "strict": float(strict[metric].mean()) if len(strict) else np.nan,
                    "amended": float(new[metric].mean()) if len(new) else np.nan,
                    "n_strict": len(strict),
                    "n_amended": len(new),
                    "queries_changed": changed,
                }
            )
    out = pd.DataFrame(
        rows,
        columns=[
            "model", "metric", "strict", "amended", "n_strict", "n_amended", "queries_changed",
        ],
    )  # fmt: skip
    out.insert(4, "delta", out["amended"] - out["strict"])
    return out
