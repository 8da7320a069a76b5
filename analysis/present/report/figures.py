"""The report's plotly figures, in the app's palette and font stack
(:mod:`analysis.present.palette`): model i of the table gets the i-th Okabe-Ito colour in every
figure, significant differences the "win" blue, the rest grey; every layout names
:data:`~analysis.present.palette.FONT_FAMILY` (Noto Sans CJK for Chinese names) so the browser,
kaleido's PNG/SVG and the offline report render the same glyphs. Data text goes through
:func:`~analysis.present.export.plotly_text`."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from analysis.present.export import plotly_text
from analysis.present.palette import FONT_FAMILY, TIE_COLOUR, WIN_COLOUR, model_colours
from analysis.present.report.model import ALPHA

__all__ = ["compare_figure", "layout", "leaderboard_figure", "slice_figure"]


def layout(fig: go.Figure, title: str, height: int) -> go.Figure:
    """Title top-left, white template, horizontal legend, the shared font stack."""
    fig.update_layout(
        title={
            "text": plotly_text(title),
            "x": 0.0,
            "y": 0.99,
            "yref": "container",
            "yanchor": "top",
        },
        height=height,
        template="plotly_white",
        margin={"l": 10, "r": 10, "t": 100, "b": 40},
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.0, "x": 0},
        font={"size": 14, "family": FONT_FAMILY},
    )
    return fig


def leaderboard_figure(
    board: pd.DataFrame, datasets: Sequence[str], chosen: Mapping[str, str], models: Sequence[str]
) -> go.Figure:
    """One panel per dataset: the report metric of every model with 95% CI error bars; model
    colours follow ``models`` (:func:`~analysis.present.palette.model_colours`) and a legend
    names them (no rotated tick labels that would run into the next row of panels)."""
    colours = model_colours(models)
    names = [
        d for d in datasets if ((board["dataset"] == d) & (board["metric"] == chosen[d])).any()
    ]
    cols = min(3, max(1, len(names)))
    rows = max(1, math.ceil(len(names) / cols))
    titles = [plotly_text(f"{d} — {chosen[d]}") for d in names]
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=titles or None)
    seen: set[str] = set()
    for i, name in enumerate(names):
        part = board.loc[(board["dataset"] == name) & (board["metric"] == chosen[name])]
        for rec in part.to_dict("records"):
            model = str(rec["model"])
            fig.add_trace(
                go.Bar(
                    x=[plotly_text(model)],
                    y=[rec["mean"]],
                    name=plotly_text(model),
                    legendgroup=plotly_text(model),
                    showlegend=model not in seen,
                    marker_color=colours.get(model, TIE_COLOUR),
                    error_y={
                        "type": "data",
                        "symmetric": False,
                        "array": [rec["ci_high"] - rec["mean"]],
                        "arrayminus": [rec["mean"] - rec["ci_low"]],
                    },
                    hovertemplate=(
                        f"{plotly_text(model)}<br>mean %{{y:.3f}}<br>95% CI "
                        f"[{rec['ci_low']:.3f}, {rec['ci_high']:.3f}]<br>n {int(rec['n'])}"
                        "<extra></extra>"
                    ),
                ),
                row=i // cols + 1,
                col=i % cols + 1,
            )
            seen.add(model)
    fig.update_yaxes(rangemode="tozero")
    fig.update_xaxes(showticklabels=False)
    layout(fig, "Leaderboard: report metric per dataset (95% CI)", 330 * rows + 80)
    fig.update_layout(legend={"y": -0.03, "yanchor": "top"})  # under the panels, clear of titles
    return fig


def slice_figure(
    summary: pd.DataFrame, dataset: str, metric: str, models: Sequence[str]
) -> go.Figure:
    """Horizontal bars: the report metric per slice value and model, 95% CI error bars."""
    colours = model_colours(models)
    labels = list(dict.fromkeys(summary["label"]))
    fig = go.Figure()
    shown = list(dict.fromkeys(summary["model"]))
    for model in shown:
        part = summary.loc[summary["model"] == model]
        fig.add_trace(
            go.Bar(
                y=[plotly_text(v) for v in part["label"]],
                x=part["mean"],
                orientation="h",
                name=plotly_text(model),
                marker_color=colours.get(str(model), TIE_COLOUR),
                error_x={
                    "type": "data",
                    "symmetric": False,
                    "array": (part["ci_high"] - part["mean"]).tolist(),
                    "arrayminus": (part["mean"] - part["ci_low"]).tolist(),
                },
                customdata=np.stack([part["n"], part["ci_low"], part["ci_high"]], axis=1),
                hovertemplate="%{y}<br>mean %{x:.3f}<br>95% CI [%{customdata[1]:.3f}, "
                "%{customdata[2]:.3f}]<br>n %{customdata[0]}<extra>"
                + plotly_text(model)
                + "</extra>",
            )
        )
    fig.update_layout(barmode="group")
    fig.update_yaxes(
        categoryorder="array", categoryarray=[plotly_text(v) for v in labels][::-1], automargin=True
    )
    fig.update_xaxes(title_text=plotly_text(metric), rangemode="tozero")
    height = 140 + len(labels) * (14 * max(1, len(shown)) + 8)
    return layout(fig, f"{dataset}: {metric} by slice (95% CI)", min(max(height, 360), 1400))


def compare_figure(comp: pd.DataFrame, model_a: str, model_b: str) -> go.Figure:
    """Delta = A − B per dataset and metric with its 95% CI; significant after Holm in the
    palette's "win" blue, the others grey."""
    labels = [
        plotly_text(f"{d} · {m}") for d, m in zip(comp["dataset"], comp["metric"], strict=True)
    ]
    significant = (comp["p_holm"] < ALPHA).to_numpy()
    fig = go.Figure()
    for flag, name, color in (
        (True, "significant (Holm)", WIN_COLOUR),
        (False, "not significant", TIE_COLOUR),
    ):
        mask = significant == flag
        part = comp.loc[mask]
        fig.add_trace(
            go.Scatter(
                x=part["delta"],
                y=[lab for lab, m in zip(labels, mask, strict=True) if m],
                mode="markers",
                name=name,
                marker={"color": color, "size": 11},
                error_x={
                    "type": "data",
                    "symmetric": False,
                    "array": (part["ci_high"] - part["delta"]).tolist(),
                    "arrayminus": (part["delta"] - part["ci_low"]).tolist(),
                },
                customdata=np.stack([part["p_holm"], part["n"]], axis=1) if len(part) else None,
                hovertemplate="%{y}<br>delta %{x:.3f}<br>p (Holm) %{customdata[0]:.4f}"
                "<br>n %{customdata[1]}<extra></extra>",
            )
        )
    fig.add_vline(x=0, line_dash="dash", line_color="#333")
    fig.update_yaxes(categoryorder="array", categoryarray=labels[::-1], automargin=True)
    fig.update_xaxes(title_text=plotly_text(f"delta = {model_a} − {model_b} (95% CI)"))
    return layout(
        fig, "A vs B: difference per dataset and metric", max(360, 120 + 30 * len(labels))
    )
