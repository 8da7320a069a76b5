"""How differently two models rank, query by query: top-k overlap (no qrels needed) and how the
rank of every gold document moved from A to B.

* Jaccard@k of a query = |top-k(A) ∩ top-k(B)| / |top-k(A) ∪ top-k(B)| over document ids
  (1 = the same set, 0 = disjoint; both lists empty gives 1). A query in only one run is
  compared with an empty list (Jaccard 0 when the other list is not empty).
* "Most different rankings" (DiffIR's idea): queries sorted by Jaccard@k ascending, then by
  query id; it uses the runs only, so it works without relevance judgements. When
  :mod:`analysis.stats.disagree` provides rank-biased overlap it is added as ``rbo``.
* Gold rank changes: for each relevant (query, doc) pair its rank in A's and in B's whole list
  (missing = not retrieved). Ranks are grouped into buckets ``1``, ``2–5``, ``6–10``,
  ``11–20``, ``21–100``, ``>100``, ``not retrieved`` for the transition matrix.

The module never imports streamlit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from analysis.present.export import plotly_text
from analysis.present.palette import (
    FONT_FAMILY,
    LOSS_COLOUR,
    SEQUENTIAL_SCALE,
    TIE_COLOUR,
    WIN_COLOUR,
)

__all__ = [
    "RANK_BUCKETS",
    "gold_rank_changes",
    "query_rank_figure",
    "rank_bucket",
    "topk_overlap",
    "transition_figure",
    "transition_matrix",
]

RANK_BUCKETS: tuple[str, ...] = ("1", "2–5", "6–10", "11–20", "21–100", ">100", "not retrieved")
_EDGES = np.array([1, 5, 10, 20, 100])


def topk_overlap(ranked_a: pd.DataFrame, ranked_b: pd.DataFrame, k: int = 10) -> pd.DataFrame:
    """Per query, the overlap of the two top-``k`` lists (``query_id, doc_id, rank`` tables as
    from :func:`analysis.core.metrics.rank_run`).

    Returns:
        ``query_id, n_a, n_b, shared, jaccard`` for every query of either run, sorted by
        ``jaccard`` ascending then query id (most different first).

    Raises:
        ValueError: ``k < 1``.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    top_a = ranked_a.loc[ranked_a["rank"] <= k, ["query_id", "doc_id"]].drop_duplicates()
    top_b = ranked_b.loc[ranked_b["rank"] <= k, ["query_id", "doc_id"]].drop_duplicates()
    n_a = top_a.groupby("query_id").size()
    n_b = top_b.groupby("query_id").size()
    shared = top_a.merge(top_b, on=["query_id", "doc_id"]).groupby("query_id").size()
    queries = set(ranked_a["query_id"].unique()) | set(ranked_b["query_id"].unique())
    ids = pd.Index(sorted(queries), name="query_id")
    out = pd.DataFrame(index=ids)
    out["n_a"] = n_a.reindex(ids, fill_value=0).astype(np.int64)
    out["n_b"] = n_b.reindex(ids, fill_value=0).astype(np.int64)
    out["shared"] = shared.reindex(ids, fill_value=0).astype(np.int64)
    union = out["n_a"] + out["n_b"] - out["shared"]
    out["jaccard"] = np.where(union > 0, out["shared"] / union.where(union > 0, 1), 1.0)
    out = out.reset_index()
    return out.sort_values(["jaccard", "query_id"], kind="stable", ignore_index=True)


def gold_rank_changes(
    ranked_a: pd.DataFrame,
    ranked_b: pd.DataFrame,
    qrels: pd.DataFrame,
    *,
    threshold: int = 1,
    queries: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Every relevant (query, doc) pair with its rank in A and in B.

    Returns:
        ``query_id, doc_id, rank_a, rank_b`` (nullable integers; missing = not retrieved) and
        ``change`` = ``rank_a - rank_b`` (positive: B ranks the gold higher; missing when
        either is missing), for the qrels queries (``queries`` restricts them).
    """
    gold = qrels.loc[qrels["relevance"] >= threshold, ["query_id", "doc_id"]].drop_duplicates()
    if queries is not None:
        gold = gold.loc[gold["query_id"].isin(list(queries))]
    out = gold
    for side, ranked in (("a", ranked_a), ("b", ranked_b)):
        ranks = ranked[["query_id", "doc_id", "rank"]].drop_duplicates(["query_id", "doc_id"])
        out = out.merge(ranks.rename(columns={"rank": f"rank_{side}"}), how="left")
    out["rank_a"] = out["rank_a"].astype("Int64")
    out["rank_b"] = out["rank_b"].astype("Int64")
    out["change"] = out["rank_a"] - out["rank_b"]
    return out.reset_index(drop=True)


def rank_bucket(ranks: pd.Series) -> pd.Series:
    """The :data:`RANK_BUCKETS` label of each rank (missing: ``"not retrieved"``)."""
    values = ranks.to_numpy(dtype=float, na_value=np.nan)
    codes = np.searchsorted(_EDGES, values, side="left")
    codes = np.where(np.isnan(values), len(RANK_BUCKETS) - 1, codes)
    return pd.Series(np.asarray(RANK_BUCKETS, dtype=object)[codes], index=ranks.index)


def transition_matrix(changes: pd.DataFrame) -> pd.DataFrame:
    """Counts of gold documents by (bucket in A, bucket in B): rows A, columns B, both in
    :data:`RANK_BUCKETS` order (every bucket present, zeros included)."""
    a = pd.Categorical(rank_bucket(changes["rank_a"]), categories=RANK_BUCKETS)
    b = pd.Categorical(rank_bucket(changes["rank_b"]), categories=RANK_BUCKETS)
    return pd.crosstab(a, b, dropna=False).reindex(
        index=list(RANK_BUCKETS), columns=list(RANK_BUCKETS), fill_value=0
    )


def transition_figure(matrix: pd.DataFrame, names: tuple[str, str]) -> go.Figure:
    """Heatmap of :func:`transition_matrix`: where each gold document sits in A (rows) and in B
    (columns); the diagonal = same bucket, above it = B ranks the gold higher. Colour: counts
    (sequential scale scaled to the data); each cell shows its count."""
    z = matrix.to_numpy(dtype=float)
    fig = go.Figure(
        go.Heatmap(
            z=z, x=list(matrix.columns), y=list(matrix.index), colorscale=SEQUENTIAL_SCALE,
            zmin=0, zmax=max(1.0, float(z.max())), texttemplate="%{z:,.0f}",
            hovertemplate=f"rank in {plotly_text(names[0])}: %{{y}}<br>rank in "
            f"{plotly_text(names[1])}: %{{x}}<br>%{{z:,.0f}} gold documents<extra></extra>",
            colorbar={"title": "gold docs"},
        )
    )  # fmt: skip
    fig.update_layout(
        xaxis={"title": f"rank in B ({plotly_text(names[1])})", "type": "category"},
        yaxis={"title": f"rank in A ({plotly_text(names[0])})", "type": "category",
               "autorange": "reversed"},
        height=380, margin={"t": 20, "b": 10, "l": 10, "r": 10}, font={"family": FONT_FAMILY},
    )  # fmt: skip
    return fig


def query_rank_figure(changes: pd.DataFrame, names: tuple[str, str], depth: int) -> go.Figure:
    """One query's Δrank chart: a line per gold document from its rank in A to its rank in B
    (blue when A ranks it higher, i.e. A better; orange when B does; grey when equal);
    ``not retrieved`` is drawn at ``depth + 1``. Log rank axis, rank 1 on top; the two model
    names are categories, A left (a name like ``0.1`` is not read as a number)."""
    fig = go.Figure()
    beyond = depth + 1
    for rec in changes.to_dict("records"):
        ra = beyond if pd.isna(rec["rank_a"]) else int(rec["rank_a"])
        rb = beyond if pd.isna(rec["rank_b"]) else int(rec["rank_b"])
        colour = WIN_COLOUR if ra < rb else LOSS_COLOUR if ra > rb else TIE_COLOUR
        doc = plotly_text(rec["doc_id"])
        fig.add_trace(
            go.Scatter(
                x=[plotly_text(names[0]), plotly_text(names[1])], y=[ra, rb],
                mode="lines+markers", line={"color": colour}, name=doc, showlegend=False,
                hovertemplate=f"{doc}<br>rank %{{y}}<extra></extra>",
            )
        )  # fmt: skip
    fig.update_layout(
        xaxis={"type": "category", "categoryorder": "array",
               "categoryarray": [plotly_text(names[0]), plotly_text(names[1])]},
        yaxis={"title": f"rank (log; {beyond} = not retrieved)", "type": "log",
               "autorange": "reversed"},
        height=320, margin={"t": 20, "b": 10, "l": 10, "r": 10}, font={"family": FONT_FAMILY},
    )  # fmt: skip
    return fig
