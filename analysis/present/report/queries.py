"""The worst queries of model A and the gold documents and rankings of a few of them."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from analysis.io.bundle import Dataset
from analysis.present.rankings import gold_table, ranking_table, side_by_side
from analysis.present.report.model import QUERY_TEXT_CHARS, RANK_DEPTH, QueryView

__all__ = ["query_views", "worst_queries"]


def worst_queries(
    table: pd.DataFrame, name: str, metric: str, model_a: str, model_b: str | None
) -> pd.DataFrame:
    """Model A's queries of one dataset, worst first: lowest report metric, then the largest
    loss against B, then the deepest first gold rank (no gold retrieved first), then query id.
    Query text is cut to QUERY_TEXT_CHARS characters."""
    sub = table.loc[(table["dataset"] == name) & (table["model"] == model_a)]
    cols = [c for c in ("query_id", "text", metric, "first_gold_rank", "n_gold") if c in sub]
    rows = sub[cols].copy()
    if f"{metric}_min" in sub.columns:
        rows["tie-dependent"] = ~np.isclose(sub[f"{metric}_min"], sub[f"{metric}_max"])
    if "indistinguishable" in sub.columns and sub["indistinguishable"].notna().any():
        rows["non-gold on gold coordinate"] = sub["indistinguishable"].fillna(False).astype(bool)
    if "first_gold_rank" in rows.columns:
        rows["first_gold_rank"] = rows["first_gold_rank"].astype("Int64")
    col_a, col_b = f"{metric} A", f"{metric} B"
    rows = rows.rename(columns={metric: col_a}).reset_index(drop=True)
    if model_b is not None:
        b = table.loc[
            (table["dataset"] == name) & (table["model"] == model_b), ["query_id", metric]
        ]
        rows = rows.merge(b.rename(columns={metric: col_b}), on="query_id", how="left")
        delta = rows[col_a] - rows[col_b].fillna(rows[col_a])
    else:
        delta = pd.Series(0.0, index=rows.index)
    rank = (
        rows["first_gold_rank"].astype("Float64").fillna(np.inf).astype(float)
        if "first_gold_rank" in rows
        else pd.Series(np.inf, rows.index)
    )
    order = pd.DataFrame(
        {
            "a": rows[col_a].to_numpy(),
            "d": delta.to_numpy(),
            "r": -rank.to_numpy(),
            "q": rows["query_id"].astype(str).to_numpy(),
        }
    ).sort_values(["a", "d", "r", "q"], kind="stable")
    rows = rows.iloc[order.index.to_numpy()].reset_index(drop=True)
    if "text" in rows.columns:
        text = rows["text"].fillna("").astype(str)
        rows["text"] = text.where(
            text.str.len() <= QUERY_TEXT_CHARS, text.str.slice(0, QUERY_TEXT_CHARS - 1) + "…"
        )
    return rows


def query_views(
    name: str,
    rows: pd.DataFrame,
    dataset: Dataset,
    ranked: Callable[[str, str], pd.DataFrame],
    model_a: str,
    model_b: str | None,
) -> list[QueryView]:
    """Gold and both rankings (top :data:`RANK_DEPTH`) of each query of ``rows`` (worst-queries
    rows of one dataset). The run, qrels and entities are cut to these queries and documents
    first, so the cost does not grow with the collection."""
    ids = rows["query_id"].astype(str).tolist()
    threshold = dataset.spec.relevance_threshold
    qrels = dataset.qrels.loc[dataset.qrels["query_id"].isin(ids)]
    runs = {}
    for model in (model_a, model_b):
        if model is not None:
            run = ranked(name, model)
            runs[model] = run.loc[run["query_id"].isin(ids)]
    entities = dataset.entities
    if entities is not None and "doc_id" in entities.columns:
        docs = set(qrels["doc_id"])
        for run in runs.values():
            docs |= set(run.loc[run["rank"] <= RANK_DEPTH, "doc_id"])
        entities = entities.loc[entities["doc_id"].isin(docs)]
    texts: dict[str, str] = {}
    if "text" in dataset.queries.columns:
        part = dataset.queries.loc[dataset.queries["query_id"].isin(ids)]
        texts = dict(zip(part["query_id"].astype(str), part["text"].astype(str), strict=True))
    views = []
    for row in rows.to_dict("records"):
        qid = str(row["query_id"])
        gold = gold_table(qrels, entities, qid, threshold=threshold)
        tables = [
            ranking_table(runs[m], qrels, entities, qid, top=RANK_DEPTH, threshold=threshold)
            for m in runs
        ]
        if len(tables) == 2:
            rankings = side_by_side(tables[0], tables[1], (model_a, str(model_b)))
        else:
            rankings = side_by_side(tables[0], tables[0].iloc[0:0], (model_a, "\x00"))
            rankings = rankings[[c for c in rankings.columns if not c.startswith("\x00")]]
        facts = pd.DataFrame([{k: v for k, v in row.items() if k != "text"}])
        gold = gold.drop(columns=["lat", "lon"], errors="ignore")
        views.append(QueryView(name, qid, texts.get(qid, ""), facts, gold, rankings))
    return views
