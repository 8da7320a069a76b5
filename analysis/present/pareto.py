"""Quality against cost: a headline metric against a number of each run (``latency_ms``,
``cost``, ``index_mb``, ... from the manifest's ``run_metadata`` or ir_metadata beside the runs,
:func:`analysis.io.groups.run_metadata`), with the metric's CI and the Pareto front.

* :func:`pareto_points`: one point per model of the leaderboard that has the number: the
  model's mean of the metric and its 95% CI (the leaderboard's: a seed group's resamples
  queries and seeds), the number as given, and ``front``: no other point is at least as good on
  both axes and better on one (lower cost -- or higher, for a key where more is better -- and a
  higher metric). The runs of a seed group are drawn as small points and left out of the front
  (the group's point stands for them).
* :func:`pareto_figure`: the points with vertical error bars, the front as a step line, names
  as labels (escaped: plotly reads HTML and templates in text).
* :func:`cost_keys`: the numeric keys two or more models have, ``latency_ms`` first.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from analysis.present.escape import plotly_text
from analysis.present.palette import FONT_FAMILY, model_colours

__all__ = ["PREFERRED", "cost_keys", "pareto_figure", "pareto_front", "pareto_points"]

#: Keys offered first when present, in this order.
PREFERRED = ("latency_ms", "cost", "index_mb")
POINT_COLUMNS = ("model", "kind", "member_of", "cost", "value", "ci_low", "ci_high", "front")


def cost_keys(metadata: Mapping[str, Mapping[str, float]]) -> list[str]:
    """Keys that two or more models have a number for: :data:`PREFERRED` first, then by name."""
    counts: dict[str, int] = {}
    for numbers in metadata.values():
        for key in numbers:
            counts[key] = counts.get(key, 0) + 1
    keys = [k for k, n in counts.items() if n >= 2]
    return [k for k in PREFERRED if k in keys] + sorted(k for k in keys if k not in PREFERRED)


def pareto_front(
    cost: np.ndarray, value: np.ndarray, *, lower_is_better: bool = True
) -> np.ndarray:
    """Whether each point is on the Pareto front: no other point has a cost at least as good
    and a value at least as high, with one of the two strictly better. Equal points are all on
    the front."""
    c = np.asarray(cost, dtype=np.float64) * (1.0 if lower_is_better else -1.0)
    v = np.asarray(value, dtype=np.float64)
    as_good = (c[None, :] <= c[:, None]) & (v[None, :] >= v[:, None])  # [i, j]: j vs i
    better = (c[None, :] < c[:, None]) | (v[None, :] > v[:, None])
    return ~(as_good & better).any(axis=1)


def pareto_points(
    board: pd.DataFrame,
    metadata: Mapping[str, Mapping[str, float]],
    metric: str,
    key: str,
    *,
    members: Mapping[str, str] | None = None,
    lower_is_better: bool = True,
) -> pd.DataFrame:
    """The chart's points (module docstring) from a leaderboard of one dataset
    (:func:`analysis.present.leaderboard.leaderboard`: ``model, kind``, the metric's mean and
    ``ci_low``/``ci_high``) and the models' numbers. ``members``: run -> its seed group.
    Columns :data:`POINT_COLUMNS`, in the leaderboard's order; models without ``key`` are left
    out."""
    groups = dict(members or {})
    rows = []
    for row in board.to_dict("records"):
        model = str(row["model"])
        number = metadata.get(model, {}).get(key)
        if number is None or not np.isfinite(row.get(metric, np.nan)):
            continue
        rows.append({
            "model": model, "kind": row.get("kind", "run"), "member_of": groups.get(model),
            "cost": float(number), "value": float(row[metric]),
            "ci_low": float(row[f"{metric} ci_low"]), "ci_high": float(row[f"{metric} ci_high"]),
        })  # fmt: skip
    points = pd.DataFrame(rows, columns=list(POINT_COLUMNS[:-1]))
    points["front"] = False
    main = points["member_of"].isna().to_numpy()
    if main.any():
        front = pareto_front(points.loc[main, "cost"].to_numpy(),
                             points.loc[main, "value"].to_numpy(),
                             lower_is_better=lower_is_better)  # fmt: skip
        points.loc[main, "front"] = front
    return points[list(POINT_COLUMNS)]


def pareto_figure(
    points: pd.DataFrame,
    metric: str,
    key: str,
    *,
    colours: Mapping[str, str] | None = None,
    lower_is_better: bool = True,
    height: int = 420,
) -> go.Figure:
    """Metric against ``key``: a point per model with its 95% CI as a vertical bar, labelled
    with its name; the Pareto front as a dashed step line (from the best cost on, across to the
    next point's cost, then up to its value: every corner is reached by a point, whichever way
    the cost is better); runs of a seed group small and faded."""
    colours = dict(colours or model_colours(list(points["model"])))
    fig = go.Figure()
    front = points.loc[points["front"]].sort_values("cost", ascending=lower_is_better)
    if len(front) > 1:
        fig.add_trace(go.Scatter(
            x=front["cost"], y=front["value"], mode="lines", name="Pareto front",
            line={"dash": "dash", "color": "#555555", "shape": "hv"},
            hoverinfo="skip",
        ))  # fmt: skip
    for row in points.to_dict("records"):
        fig.add_trace(_point(row, metric, key, colours.get(row["model"], "#0072B2")))
    direction = "lower is better" if lower_is_better else "higher is better"
    if len(points):
        low, high = float(points["cost"].min()), float(points["cost"].max())
        pad = 0.12 * (high - low) or 0.5 * abs(high) or 1.0  # room for the names
        fig.update_xaxes(range=[low - pad, high + pad])
    fig.update_layout(
        height=height, font={"family": FONT_FAMILY}, showlegend=False,
        margin={"l": 60, "r": 20, "t": 30, "b": 50},
        xaxis={"title": {"text": f"{plotly_text(key)} ({direction})"}},
        yaxis={"title": {"text": f"{plotly_text(metric)} (mean, 95% CI)"}},
    )  # fmt: skip
    return fig


def _point(row: Mapping, metric: str, key: str, colour: str) -> go.Scatter:
    member = row["member_of"] is not None and not pd.isna(row["member_of"])
    name = plotly_text(row["model"])
    hover = (f"{name}<br>{plotly_text(key)} = {row['cost']:g}<br>{plotly_text(metric)} = "
             f"{row['value']:.4f} [{row['ci_low']:.4f}, {row['ci_high']:.4f}]")  # fmt: skip
    if row["front"]:
        hover += "<br>on the Pareto front"
    return go.Scatter(
        x=[row["cost"]], y=[row["value"]], mode="markers" if member else "markers+text",
        text=[name], textposition="top center", name=name,
        marker={"size": 7 if member else 12, "color": colour, "opacity": 0.45 if member else 1,
                "line": {"width": 2 if row["front"] else 0, "color": "#111111"}},
        error_y={"type": "data", "symmetric": False, "array": [row["ci_high"] - row["value"]],
                 "arrayminus": [row["value"] - row["ci_low"]], "visible": not member},
        hovertext=[hover], hoverinfo="text", customdata=[row["model"]],
    )  # fmt: skip
