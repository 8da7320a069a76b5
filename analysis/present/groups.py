"""Views of run groups (seeds and folds of one model): the seed-sensitivity heatmap and its
sentences, the per-fold table, and the note on a group's ranking.

* :func:`sensitivity_figure`: the mean difference A − B for every pair of seeds (A's seeds as
  rows, B's as columns), on the diverging delta scale centred at 0, each cell written;
* :func:`sensitivity_sentences`: how many seed pairs give A − B another sign than the seed
  means do, and how many queries change winner with the seed pair;
* :func:`fold_table`: :func:`analysis.stats.groups.fold_summary` as one row per model and fold
  with a ``mean [low, high]`` text column per metric;
* :func:`group_label`: ``dense (3 seeds, per-query means)`` for a seed group;
* :func:`grid_figure`: every model per query, the metric as colour (a click picks a query).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from analysis.present.escape import plotly_text
from analysis.present.palette import (
    DIVERGING_SCALE,
    FONT_FAMILY,
    SEQUENTIAL_SCALE,
    sequential_colours,
)
from analysis.stats.allmodels import model_column
from analysis.stats.groups import SeedSensitivity

__all__ = [
    "fold_table",
    "grid_figure",
    "group_label",
    "sensitivity_figure",
    "sensitivity_sentences",
]


def group_label(model: str, groups: Mapping[str, tuple[str, Sequence[str]]]) -> str:
    """The model's name, with ``(n seeds, per-query means)`` or ``(n folds)`` for a group."""
    kind, members = groups.get(model, ("run", [model]))
    if kind == "seeds":
        return f"{model} ({len(members)} seeds, per-query means)"
    if kind == "folds":
        return f"{model} ({len(members)} folds)"
    return model


def _seed_names(model: str, groups: Mapping[str, tuple[str, Sequence[str]]]) -> list[str]:
    kind, members = groups.get(model, ("run", [model]))
    return list(members) if kind == "seeds" else [model]


def sensitivity_figure(
    result: SeedSensitivity,
    models: tuple[str, str],
    groups: Mapping[str, tuple[str, Sequence[str]]],
    metric: str,
) -> go.Figure:
    """Heatmap of :attr:`SeedSensitivity.deltas` (rows: A's seeds, columns: B's)."""
    rows = [plotly_text(m) for m in _seed_names(models[0], groups)]
    cols = [plotly_text(m) for m in _seed_names(models[1], groups)]
    z = result.deltas
    limit = float(np.nanmax(np.abs(z))) if z.size and np.isfinite(z).any() else 1.0
    text = [[f"{v:+.3f}" for v in row] for row in z]
    fig = go.Figure(go.Heatmap(
        z=z, x=cols, y=rows, text=text, texttemplate="%{text}", colorscale=list(DIVERGING_SCALE),
        zmin=-limit or -1, zmax=limit or 1, colorbar={"title": {"text": "A − B"}},
        hovertemplate="A seed %{y}<br>B seed %{x}<br>mean(A − B) = %{z:.4f}<extra></extra>",
    ))  # fmt: skip
    fig.update_layout(
        height=120 + 45 * len(rows), font={"family": FONT_FAMILY},
        margin={"l": 20, "r": 20, "t": 30, "b": 40},
        title={"text": f"mean {plotly_text(metric)} difference per seed pair",
               "font": {"size": 13}},
        xaxis={"title": {"text": "B"}, "type": "category"},
        yaxis={"title": {"text": "A"}, "type": "category", "autorange": "reversed"},
    )  # fmt: skip
    return fig


def sensitivity_sentences(result: SeedSensitivity, metric: str) -> list[str]:
    """Plain sentences: the seed-mean delta, the pairs whose sign differs, the queries whose
    winner depends on the seed pair (their share in whole percent; ``<1%`` and ``>99%``
    rather than 0% or 100% when some but not all change)."""
    n, flips = result.n_pairs, result.n_flips
    sign = "A ahead" if result.delta > 0 else ("B ahead" if result.delta < 0 else "level")
    out = [f"Mean {metric} difference of the seed means: {result.delta:+.4f} ({sign})."]
    if flips:
        out.append(f"{flips} of {n} seed pairs give A − B another sign: which model looks better "
                   "depends on the seeds picked.")  # fmt: skip
    else:
        out.append(f"All {n} seed pairs give A − B the same sign as the seed means.")
    total = result.query_unstable.size
    share = _percent(result.n_unstable, total)
    out.append(f"{result.n_unstable:,} of {total:,} queries ({share}) change winner "
               "(A, B or tie) with the seed pair.")  # fmt: skip
    return out


def _percent(part: int, total: int) -> str:
    """``part`` of ``total`` as a whole percentage, never rounded to 0% or 100% when it is
    neither (``<1%``, ``>99%``); no total gives ``0%``."""
    if not total or not part:
        return "0%"
    if part == total:
        return "100%"
    share = 100 * part / total
    return "<1%" if share < 1 else ">99%" if share > 99 else f"{share:.0f}%"


def fold_table(summary: pd.DataFrame, metrics: Sequence[str]) -> pd.DataFrame:
    """One row per model and fold (``pooled`` last), ``n`` and a ``mean [low, high]`` text
    column per metric, from :func:`analysis.stats.groups.fold_summary`."""
    cells = summary.assign(
        cell=[f"{m:.3f} [{lo:.3f}, {hi:.3f}]" for m, lo, hi in
              zip(summary["mean"], summary["ci_low"], summary["ci_high"], strict=True)]
    )  # fmt: skip
    wide = cells.pivot_table(
        index=["model", "fold", "n"], columns="metric", values="cell", aggfunc="first", sort=False
    ).reset_index()
    wide.columns.name = None
    return wide[["model", "fold", "n", *[m for m in metrics if m in wide.columns]]]


def grid_figure(grid: pd.DataFrame, models: Sequence[str], metric: str) -> go.Figure:
    """Every model per query (:func:`analysis.stats.allmodels.model_grid`): one cell per query
    (row, most disagreeing at the top) and model (column), coloured by the metric on the
    sequential scale from 0 to 1; a click selects a (query, model) cell (``customdata``: query
    id and model). Cells are horizontal bars, one trace per model (a bar from ``i`` to
    ``i + 1`` in row ``q``), so they tile like a heatmap and can be clicked and selected (a
    heatmap cannot be selected in Streamlit). Each cell's colour is written out
    (:func:`~analysis.present.palette.sequential_colours`); the colour bar is drawn by a last
    trace without points, on the figure's colour axis."""
    n = len(grid)
    ids = grid["query_id"].astype(str).tolist()
    fig = go.Figure()
    for i, column in enumerate(models):
        values = grid[model_column(metric, column)].to_numpy(dtype=np.float64)
        name = plotly_text(column)
        pairs = zip(ids, values, strict=True)
        hover = [f"query {plotly_text(q)}<br>{name}: {v:.3f}" for q, v in pairs]
        fig.add_trace(go.Bar(
            x=np.ones(n), y=np.arange(n), base=np.full(n, float(i)), orientation="h", width=1.0,
            name=name, customdata=[[q, column] for q in ids], hovertext=hover, hoverinfo="text",
            marker={"color": sequential_colours(values), "line": {"width": 0}},
        ))  # fmt: skip
    fig.add_trace(go.Scatter(
        x=[None], y=[None], mode="markers", hoverinfo="skip", showlegend=False,
        marker={"color": [0.0], "coloraxis": "coloraxis"},
    ))  # fmt: skip
    fig.update_layout(
        height=int(min(900, max(260, 120 + 4 * n))), font={"family": FONT_FAMILY},
        showlegend=False, bargap=0, barmode="overlay", clickmode="event+select",
        dragmode=False, margin={"l": 60, "r": 20, "t": 30, "b": 20},
        coloraxis={"colorscale": SEQUENTIAL_SCALE, "cmin": 0.0, "cmax": 1.0,
                   "colorbar": {"title": {"text": plotly_text(metric)}}},
        xaxis={"side": "top", "range": [0, len(models)], "showgrid": False, "zeroline": False,
               "tickvals": [i + 0.5 for i in range(len(models))],
               "ticktext": [plotly_text(m) for m in models]},
        yaxis={"autorange": "reversed", "title": {"text": "queries, most disagreement first"},
               "showticklabels": False, "showgrid": False, "zeroline": False},
    )  # fmt: skip
    return fig
