"""The report's plotly figures, in the app's palette and font stack
(:mod:`analysis.present.palette`): every model has the colour of its name (``colours``, from
:func:`~analysis.present.palette.model_colours` over the bundle's models) in every figure,
significant differences the "win" blue, the rest grey; every layout names
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
from analysis.present.paper import short_labels
from analysis.present.report.model import ALPHA
from analysis.present.slicing import slice_bar_figure

__all__ = ["compare_figure", "layout", "leaderboard_figure", "slice_figure", "slice_label_key"]


def layout(fig: go.Figure, title: str, height: int) -> go.Figure:
    """Title top-left, white template, horizontal legend, the shared font stack."""
    fig.update_layout(
        title={
            "text": plotly_text(title),
            "x": 0.0,
            "xanchor": "left",
            "pad": {"l": 12},  # off the left edge
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
    board: pd.DataFrame,
    datasets: Sequence[str],
    chosen: Mapping[str, str],
    colours: Mapping[str, str] | None = None,
) -> go.Figure:
    """One panel per dataset: the report metric of every model with 95% CI error bars; each
    model in its colour (``colours``: model -> colour, default
    :func:`~analysis.present.palette.model_colours` of the board's models) and a legend naming
    them (no rotated tick labels that would run into the next row of panels)."""
    colours = colours or model_colours(board["model"].astype(str))
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
    summary: pd.DataFrame,
    dataset: str,
    metric: str,
    colours: Mapping[str, str] | None = None,
) -> go.Figure:
    """Horizontal bars of ONE slice column (``summary``: the rows of one ``column`` of the
    report's slice summary, ``value, model, n, mean, ci_low, ci_high``): the report metric per
    slice value (natural order, top to bottom) and model with 95% CI error bars, as on the
    Slices page (:func:`analysis.present.slicing.slice_bar_figure`), titled with the dataset
    and the column. Labels say their n and long ones are cut (:func:`slice_label_key`)."""
    column = str(summary["column"].iloc[0]) if "column" in summary and len(summary) else "slice"
    models = list(dict.fromkeys(summary["model"].astype(str)))
    order = list(dict.fromkeys(summary["value"].astype(str)))
    labels, _ = slice_label_key(summary)
    fig = slice_bar_figure(summary, metric, column, models, order, colours=colours, labels=labels)
    height = int(fig.layout.height or 360) + 60
    return layout(fig, f"{dataset}: {metric} by {column} (95% CI)", min(max(height, 360), 1400))


def slice_label_key(summary: pd.DataFrame) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """Axis labels of a slice chart (:func:`analysis.present.paper.short_labels`: each value
    with its query count, long values cut to ``[i] …``) and the key of the cut values, which
    the block's caption spells out."""
    order = list(dict.fromkeys(summary["value"].astype(str)))
    sizes = summary.groupby("value", sort=False)["n"].max()
    return short_labels(order, sizes={str(v): int(n) for v, n in sizes.items()})


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
