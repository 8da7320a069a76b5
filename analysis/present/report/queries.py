"""The worst queries of model A and the gold documents, rankings and written diff of a few of
them."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from analysis.core.metrics import parse_metric
from analysis.io.bundle import Dataset
from analysis.present.diffsummary import Outcome, diff_sentences
from analysis.present.rankings import gold_table, ranking_table, side_by_side
from analysis.present.report.model import QUERY_TEXT_CHARS, RANK_DEPTH, QueryView
from analysis.stats import flag_values
from analysis.stats.rankdiff import rank_diff

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
        rows["non-gold on gold coordinate"] = flag_values(sub["indistinguishable"])
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
    table: pd.DataFrame | None = None,
) -> list[QueryView]:
    """Gold and both rankings (top :data:`RANK_DEPTH`) of each query of ``rows`` (worst-queries
    rows of one dataset), and with B the written diff of the two rankings
    (:mod:`analysis.present.diffsummary`; the metric's tie bounds from ``table``, the dataset's
    per-query rows, when given). The run, qrels and entities are cut to these queries and
    documents first, so the cost does not grow with the collection."""
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
        diff = _diff(row, runs, qrels, (model_a, model_b), threshold, table) if model_b else ()
        views.append(QueryView(name, qid, texts.get(qid, ""), facts, gold, rankings, diff))
    return views


def _diff(
    row: dict,
    runs: dict[str, pd.DataFrame],
    qrels: pd.DataFrame,
    models: tuple[str, str | None],
    threshold: int,
    table: pd.DataFrame | None,
) -> tuple[str, ...]:
    """The written diff of one worst query (the report metric's cutoff as k, 10 without)."""
    metric = next(c[: -len(" A")] for c in row if str(c).endswith(" A"))
    values = (row.get(f"{metric} A"), row.get(f"{metric} B"))
    if any(v is None or pd.isna(v) for v in values) or models[1] not in runs:
        return ()
    qid = str(row["query_id"])
    parts = [runs[m].loc[runs[m]["query_id"].astype(str) == qid] for m in models]
    judged = qrels.loc[qrels["query_id"].astype(str) == qid]
    k = parse_metric(metric).k or 10
    diff = rank_diff(parts[0], parts[1], judged, k=k, threshold=threshold)
    bounds = [_bounds(table, m, qid, metric) for m in models]
    outcome = Outcome(metric, float(values[0]), float(values[1]), bounds[0], bounds[1])
    return tuple(text for _, text in diff_sentences(diff, outcome))


def _bounds(
    table: pd.DataFrame | None, model: str | None, qid: str, metric: str
) -> tuple[float, float] | None:
    if table is None or f"{metric}_min" not in table.columns:
        return None
    rows = table.loc[(table["model"] == model) & (table["query_id"].astype(str) == qid)]
    if rows.empty or pd.isna(rows[f"{metric}_min"].iloc[0]):
        return None
    return float(rows[f"{metric}_min"].iloc[0]), float(rows[f"{metric}_max"].iloc[0])
