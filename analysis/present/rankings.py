"""One query's ranking, gold set and entity text, as tables the pages show.

Entity text is returned as plain strings; the pages render it as text (never Markdown/HTML).
"""

from __future__ import annotations

import pandas as pd

TEXT_CHARS = 300


def _entity_columns(entities: pd.DataFrame | None) -> pd.DataFrame | None:
    if entities is None:
        return None
    cols = [c for c in ("doc_id", "name", "text", "type", "lat", "lon") if c in entities.columns]
    return entities[cols].drop_duplicates("doc_id")


def _shorten(text: pd.Series, limit: int) -> pd.Series:
    text = text.fillna("").astype("str")
    return text.where(text.str.len() <= limit, text.str.slice(0, limit - 1) + "…")


def gold_table(
    qrels: pd.DataFrame, entities: pd.DataFrame | None, query_id: str, *, threshold: int = 1
) -> pd.DataFrame:
    """The relevant docs of one query: ``doc_id, relevance, name, text, ...`` (relevance
    descending, duplicates collapsed to their maximum)."""
    rows = qrels[(qrels["query_id"] == query_id) & (qrels["relevance"] >= threshold)]
    rows = rows.groupby("doc_id", as_index=False, sort=False)["relevance"].max()
    ent = _entity_columns(entities)
    if ent is not None:
        rows = rows.merge(ent, on="doc_id", how="left")
    if "text" in rows.columns:
        rows["text"] = _shorten(rows["text"], TEXT_CHARS)
    return rows.sort_values(["relevance", "doc_id"], ascending=[False, True], ignore_index=True)


def ranking_table(
    ranked: pd.DataFrame,
    qrels: pd.DataFrame,
    entities: pd.DataFrame | None,
    query_id: str,
    *,
    top: int = 20,
    threshold: int = 1,
) -> pd.DataFrame:
    """The top ``top`` of one query's ranked run (``query_id, doc_id, score, rank`` as from
    :func:`analysis.core.metrics.rank_run`) with ``gold`` (relevant per the qrels), ``relevance``,
    ``tied`` (score shared with another doc of the list) and the entity ``name``/``text``.

    A rank-only run (:func:`rank_only`: STaRK's ``pred_rank`` lists, scored ``n − rank + 1``
    by the loader) has no ``score`` column: those numbers were made up from the ranks."""
    rows = ranked[ranked["query_id"] == query_id]
    scored = not rank_only(rows)
    tied = rows["score"].duplicated(keep=False)
    rows = rows.assign(tied=tied.to_numpy())
    rows = rows[rows["rank"] <= top][["rank", "doc_id", "score", "tied"]]
    judged = (
        qrels[qrels["query_id"] == query_id].groupby("doc_id", as_index=False)["relevance"].max()
    )
    rows = rows.merge(judged, on="doc_id", how="left")
    rows["relevance"] = rows["relevance"].fillna(0).astype("int64")
    rows.insert(1, "gold", rows["relevance"] >= threshold)
    ent = _entity_columns(entities)
    if ent is not None:
        rows = rows.merge(ent, on="doc_id", how="left")
    if "text" in rows.columns:
        rows["text"] = _shorten(rows["text"], TEXT_CHARS)
    rows = rows.sort_values("rank", ignore_index=True)
    return rows if scored else rows.drop(columns="score")


def rank_only(rows: pd.DataFrame) -> bool:
    """True when the ``score, rank`` rows of one query are the scores a loader gives a ranked
    list without scores: rank ``1..n`` scored ``n, n − 1, …, 1`` (STaRK's ``pred_rank``).
    An empty list is not rank-only."""
    if rows.empty:
        return False
    rank = rows["rank"].to_numpy(dtype="float64")
    score = rows["score"].to_numpy(dtype="float64")
    return bool((score == len(rows) - rank + 1).all())


def side_by_side(left: pd.DataFrame, right: pd.DataFrame, names: tuple[str, str]) -> pd.DataFrame:
    """Two :func:`ranking_table` results next to each other by rank: ``rank``, then
    ``<name>: doc_id``, ``<name>: gold``, ``<name>: name`` for each side."""
    cols = [c for c in ("doc_id", "gold", "name") if c in left.columns or c in right.columns]
    a = left.set_index("rank")[[c for c in cols if c in left.columns]]
    b = right.set_index("rank")[[c for c in cols if c in right.columns]]
    a.columns = [f"{names[0]}: {c}" for c in a.columns]
    b.columns = [f"{names[1]}: {c}" for c in b.columns]
    return a.join(b, how="outer").reset_index()
