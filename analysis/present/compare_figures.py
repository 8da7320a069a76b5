"""Figures of the Compare page: the per-query scatter of A against B (jittered for discrete
metrics, WebGL for many points), the selected-query ring, and the delta histogram in the
palette's diverging colours (blue = A better, orange = B better, grey = ties).

Text from data files that goes into a figure goes through
:func:`analysis.present.escape.plotly_text` first (Plotly interprets a few tags, entities and
``%{...}`` fields); ``customdata`` keeps the raw ids, which no template of these figures shows.
The module never imports streamlit.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from analysis.present._compat import figure_unvalidated
from analysis.present.escape import plotly_text, plotly_texts
from analysis.present.palette import LOSS_COLOUR, SELECTED_COLOUR, TIE_COLOUR, WIN_COLOUR

#: A metric with at most this many distinct values (over A and B) is "discrete": the scatter
#: jitters its points (display only) so that overlapping queries stay visible and clickable.
DISCRETE_MAX_VALUES = 11
#: Largest half-width of the uniform display jitter, in metric units (metrics lie in [0, 1]);
#: the jitter is also at most :data:`JITTER_GAP` times the smallest gap between values.
JITTER = 0.1
JITTER_GAP = 0.3
#: Query text is truncated to this many characters in the tables and hover labels.
TEXT_CHARS = 80
#: Query text in the scatter's hover label is truncated to this many characters.
HOVER_TEXT_CHARS = 60
#: Non-zero deltas with at most this many distinct values get one histogram bar per value.
MAX_DISTINCT_BARS = 41
#: Otherwise, the number of equal-width bars on each side of zero.
BINS_PER_SIDE = 20
#: The scatter switches to WebGL (one canvas instead of one SVG element per point) above this.
WEBGL_ABOVE = 5000
#: The scatter draws at most this many queries (a seeded random sample beyond: the figure the
#: browser receives stays under about 1 MB).
MAX_SCATTER_POINTS = 10_000


def _truncate(text: pd.Series, limit: int) -> pd.Series:
    text = text.fillna("").astype("str")
    return text.where(text.str.len() <= limit, text.str.slice(0, limit - 1) + "…")


# --------------------------------------------------------------------------- figures


def is_discrete(values: np.ndarray | pd.Series, max_values: int = DISCRETE_MAX_VALUES) -> bool:
    """True when ``values`` hold at most ``max_values`` distinct numbers (e.g. hit@k: 0 and 1;
    recall@k on one-gold queries)."""
    return np.unique(np.asarray(values, dtype=float)).size <= max_values


def jitter_amplitude(values: np.ndarray) -> float:
    """Half-width of the display jitter of a discrete metric: ``min(JITTER, JITTER_GAP * g)``
    with g the smallest gap between distinct values (``JITTER`` for a single value), so jittered
    clouds of neighbouring values never overlap."""
    distinct = np.unique(np.asarray(values, dtype=float))
    if distinct.size < 2:
        return JITTER
    return float(min(JITTER, JITTER_GAP * np.diff(distinct).min()))


def _jitter(n: int, amplitude: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.uniform(-amplitude, amplitude, n), rng.uniform(-amplitude, amplitude, n)


def scatter_figure(
    paired: pd.DataFrame,
    names: tuple[str, str],
    metric: str,
    *,
    selected: tuple[str, str] | None = None,
    seed: int = 0,
    webgl_above: int = WEBGL_ABOVE,
    max_points: int = MAX_SCATTER_POINTS,
) -> go.Figure:
    """Per-query scatter, x = A's value, y = B's value, one trace per dataset, and the diagonal
    y = x (points below it are wins of A).

    For a discrete metric (:func:`is_discrete` over A and B) each point is moved by a seeded
    uniform jitter of at most :func:`jitter_amplitude` on each axis, in display only: the hover
    label shows the exact values. Every point carries ``customdata = [dataset, query_id]``, so a
    click maps back to its query (:func:`point_query`); the hover label shows the ids, the query
    text (truncated; left out above ``webgl_above`` points to keep the figure small) and both
    values. ``selected`` adds a ring around that query (see :func:`highlight_query`). Above
    ``webgl_above`` points the traces use WebGL. Above ``max_points`` queries, a random sample of
    ``max_points`` of them (seeded, in table order) is drawn and the title says so; a selected
    query outside it gets no ring.
    """
    total = len(paired)
    if total > max_points:
        keep = np.random.default_rng(seed).choice(total, max_points, replace=False)
        paired = paired.iloc[np.sort(keep)]
    n = len(paired)
    a = paired["a"].to_numpy(dtype=float)
    b = paired["b"].to_numpy(dtype=float)
    both = np.concatenate([a, b])
    discrete = n > 0 and is_discrete(both)
    dx, dy = _jitter(n, jitter_amplitude(both), seed) if discrete else (np.zeros(n), np.zeros(n))
    x, y = a + dx, b + dy
    label, custom = _scatter_labels(paired, a, b, with_text=n <= webgl_above)
    trace_type = go.Scattergl if n > webgl_above else go.Scatter
    datasets = custom[:, 0]
    traces = []
    for name in dict.fromkeys(datasets.tolist()):
        mask = datasets == name
        traces.append(
            trace_type(
                x=x[mask],
                y=y[mask],
                mode="markers",
                name=plotly_text(name),
                customdata=custom[mask],
                hovertext=label[mask],
                hoverinfo="text",
                marker={"size": 7, "opacity": 0.6},
            )
        )
    fig = go.Figure(traces)
    lo = min(0.0, float(np.min(x)), float(np.min(y))) if n else 0.0
    hi = max(1.0, float(np.max(x)), float(np.max(y))) if n else 1.0
    pad = 0.05 * (hi - lo)
    fig.add_shape(
        type="line", x0=lo, y0=lo, x1=hi, y1=hi, line={"dash": "dash", "color": TIE_COLOUR}
    )
    fig.update_layout(
        xaxis={"title": {"text": f"{plotly_text(metric)}, A: {plotly_text(names[0])}"},
               "range": [lo - pad, hi + pad]},
        yaxis={"title": {"text": f"{plotly_text(metric)}, B: {plotly_text(names[1])}"},
               "range": [lo - pad, hi + pad]},
        legend={"title": {"text": "dataset"}},
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        height=480,
        clickmode="event+select",
    )  # fmt: skip
    if n < total:
        fig.update_layout(title={"text": f"{n:,} of {total:,} queries (seeded random sample)",
                                 "font": {"size": 12}}, margin={"t": 40})  # fmt: skip
    if selected is not None:
        trace = _selected_trace(fig.data, selected)
        if trace is not None:
            fig.add_trace(trace)
    return fig


def _scatter_labels(
    paired: pd.DataFrame, a: np.ndarray, b: np.ndarray, *, with_text: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Hover labels (``dataset / query_id``, the truncated query text when ``with_text`` and the
    table has one, then A's and B's exact values) and ``customdata`` rows ``[dataset,
    query_id]`` of the scatter's points, in table order."""
    label = plotly_texts(paired["dataset"]) + " / " + plotly_texts(paired["query_id"])
    if "text" in paired.columns and with_text:
        label = label + "<br>" + plotly_texts(_truncate(paired["text"], HOVER_TEXT_CHARS))
    values = pd.Series([f"<br>A: {va:.4g}<br>B: {vb:.4g}" for va, vb in zip(a, b, strict=True)])
    custom = np.empty((len(paired), 2), dtype=object)
    custom[:, 0] = paired["dataset"].astype("str").to_numpy()
    custom[:, 1] = paired["query_id"].astype("str").to_numpy()
    return label.to_numpy(dtype=object) + values.to_numpy(dtype=object), custom


def _array(values: object) -> np.ndarray:
    """A numeric trace array from a figure or a figure dict. Plotly >= 6 writes numpy arrays in
    ``to_dict()`` as ``{"dtype": "f8", "bdata": <base64>, ["shape": ...]}``."""
    if isinstance(values, Mapping) and "bdata" in values:
        arr = np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"])
        shape = values.get("shape")
        if shape:
            arr = arr.reshape([int(v) for v in str(shape).split(",")])
        return arr
    return np.asarray(values)


def _selected_trace(traces: Sequence, selected: tuple[str, str]) -> go.Scatter | None:
    for trace in traces:
        custom = trace["customdata"] if isinstance(trace, Mapping) else trace.customdata
        if custom is None:
            continue
        custom = np.asarray(custom, dtype=object)
        if custom.ndim != 2 or custom.shape[1] < 2:
            continue
        mask = (custom[:, 0] == selected[0]) & (custom[:, 1] == selected[1])
        if mask.any():
            x = _array(trace["x"] if isinstance(trace, Mapping) else trace.x)[mask]
            y = _array(trace["y"] if isinstance(trace, Mapping) else trace.y)[mask]
            hover = trace.get("hovertext") if isinstance(trace, Mapping) else trace.hovertext
            hover = np.asarray(hover, dtype=object)[mask] if hover is not None else None
            return go.Scatter(
                x=x,
                y=y,
                mode="markers",
                name="selected query",
                customdata=custom[mask],
                hovertext=hover,
                hoverinfo="text",
                marker={
                    "size": 18,
                    "symbol": "circle-open",
                    "color": SELECTED_COLOUR,
                    "line": {"width": 3},
                },
            )
    return None


def lists_for_json(figure: Mapping) -> dict:
    """The figure dict with every object (string) array of its traces turned into a list.

    Plotly sends numeric arrays base64-encoded, but an object array (ids, hover texts) goes
    through a slow element-by-element cleaning; plain lists of strings serialize about three
    times faster (10k points: ~0.04 s instead of ~0.13 s on every rerun)."""
    out = dict(figure)
    out["data"] = [
        {
            k: v.tolist() if isinstance(v, np.ndarray) and v.dtype == object else v
            for k, v in trace.items()
        }
        for trace in figure.get("data", [])
    ]
    return out


def highlight_query(figure: Mapping, selected: tuple[str, str] | None) -> go.Figure:
    """The figure of a dict made by ``scatter_figure(...).to_dict()``, with a ring around
    ``selected`` added as a last trace (an unknown query or None adds nothing).

    The dict is not modified. It was validated when the figure was built, so the figure is made
    without validating again (:func:`analysis.present._compat.figure_unvalidated`), so a cached
    dict can be highlighted on every rerun."""
    return figure_unvalidated(with_highlight(figure, selected))


def with_highlight(figure: Mapping, selected: tuple[str, str] | None) -> dict:
    """The dict of :func:`highlight_query` (a new dict sharing the traces of ``figure``, which
    is not modified): ``figure`` with the ring around ``selected`` as a last trace."""
    out = dict(figure)
    if selected is not None:
        trace = _selected_trace(figure.get("data", []), selected)
        if trace is not None:
            out["data"] = [*figure["data"], trace.to_plotly_json()]
    return out


#: Deltas closer than this share of the largest ``|delta|`` are one value of the histogram.
ROUNDING = 1e-9


def _first_of_close(values: np.ndarray, tol: float) -> np.ndarray:
    """The sorted distinct ``values`` without those within ``tol`` of the value before them
    (each run of float-rounding twins keeps its smallest)."""
    if values.size < 2:
        return values
    return values[np.r_[True, np.diff(values) > tol]]


def histogram_bins(
    delta: np.ndarray | pd.Series,
    *,
    max_distinct: int = MAX_DISTINCT_BARS,
    per_side: int = BINS_PER_SIDE,
) -> tuple[pd.DataFrame, np.ndarray]:
    """Bars of the delta histogram and the bar of every query.

    Ties (``delta == 0``) always get their own bar. Non-zero deltas with at most ``max_distinct``
    distinct values get one bar per value (values equal up to float rounding, within
    :data:`ROUNDING` times the largest ``|delta|`` and of the same sign, share the bar of the
    smallest: MRR's ``1/2 − 1/3`` and ``1/3 − 1/6`` are one value; bars are 0.8 times the
    smallest gap between bars wide, leaving out gaps within that rounding, so a delta of
    ``4e-17`` beside the ties still has its own bar but does not make every bar invisible);
    otherwise, with ``M = max |delta|`` and
    ``w = M / per_side``, bar ``j`` on the positive side holds ``j*w < delta <= (j+1)*w`` (mirrored
    on the negative side), so no bar straddles zero. Empty bars are dropped; bars are numbered
    ``0..`` from the most negative.

    Returns:
        ``(bins, ids)``: ``bins`` with columns ``bin, lo, hi, center, width, count, kind``
        (``loss``/``tie``/``win``) and ``label``; ``ids[i]`` is the bin of ``delta[i]``. No
        delta gives no bar (numeric empty columns: :func:`delta_histogram` draws an empty
        chart).
    """
    d = np.asarray(delta, dtype=float)
    if d.size == 0:
        numbers = {c: pd.Series(dtype=float) for c in ("lo", "hi", "center", "width")}
        empty = pd.DataFrame(
            {"bin": pd.Series(dtype=np.int64), **numbers, "count": pd.Series(dtype=np.int64),
             "kind": pd.Series(dtype=object), "label": pd.Series(dtype=object)}
        )  # fmt: skip
        return empty, np.zeros(0, dtype=np.int64)
    nonzero = np.unique(d[d != 0])
    tol = ROUNDING * float(np.abs(nonzero).max()) if nonzero.size else 0.0
    merged = np.r_[_first_of_close(nonzero[nonzero < 0], tol),
                   _first_of_close(nonzero[nonzero > 0], tol)]  # fmt: skip
    if merged.size <= max_distinct:
        values = np.union1d(merged, [0.0])
        key = np.searchsorted(values, d, side="right") - 1  # the bar a delta's twins start
        lo = hi = values
        gaps = np.diff(values)
        gaps = gaps[gaps > tol]  # a rounding-size delta beside the ties: not the bar width
        gap = gaps.min() if gaps.size else 1.0
        width = np.full(values.size, 0.8 * gap)
        labels = [f"{v:+.3g}" if v else "0 (tie)" for v in values]
    else:
        m = float(np.abs(nonzero).max())
        w = m / per_side
        steps = np.ceil(np.abs(d) / w).clip(1, per_side).astype(np.int64)  # 1..per_side
        key = np.where(d > 0, per_side + steps, np.where(d < 0, per_side - steps, per_side))
        idx = np.arange(2 * per_side + 1)
        side = idx - per_side
        lo = np.where(side > 0, (side - 1) * w, np.where(side < 0, side * w, 0.0))
        hi = np.where(side > 0, side * w, np.where(side < 0, (side + 1) * w, 0.0))
        width = np.where(side == 0, 0.6 * w, 0.9 * w)
        labels = [
            "0 (tie)" if s == 0 else (f"({a:.3g}, {b:.3g}]" if s > 0 else f"[{a:.3g}, {b:.3g})")
            for s, a, b in zip(side, lo, hi, strict=True)
        ]
    counts = np.bincount(key, minlength=len(lo))
    centers = np.where(np.asarray(lo) == np.asarray(hi), lo, (np.asarray(lo) + hi) / 2)
    bins = pd.DataFrame(
        {
            "lo": np.asarray(lo, dtype=float),
            "hi": np.asarray(hi, dtype=float),
            "center": centers.astype(float),
            "width": np.asarray(width, dtype=float),
            "count": counts,
            "label": labels,
        }
    )
    bins["kind"] = np.where(bins["center"] > 0, "win", np.where(bins["center"] < 0, "loss", "tie"))
    keep = bins["count"] > 0
    renumber = np.cumsum(keep.to_numpy()) - 1
    ids = renumber[key].astype(np.int64)
    bins = bins.loc[keep].reset_index(drop=True)
    bins.insert(0, "bin", np.arange(len(bins)))
    return bins[["bin", "lo", "hi", "center", "width", "count", "kind", "label"]], ids


def delta_histogram(
    bins: pd.DataFrame,
    names: tuple[str, str],
    metric: str,
    *,
    selected_bin: int | None = None,
) -> go.Figure:
    """Bar chart of :func:`histogram_bins`: wins of A blue, losses orange, ties grey (palette's
    diverging pair, colour-blind safe); each bar
    carries ``customdata = [bin, lo, hi, count, label]`` (:func:`point_bin` maps a click back).
    ``selected_bin`` gets a dark outline."""
    colours = bins["kind"].map({"win": WIN_COLOUR, "loss": LOSS_COLOUR, "tie": TIE_COLOUR})
    outline = [3 if b == selected_bin else 0 for b in bins["bin"]]
    custom = bins[["bin", "lo", "hi", "count", "label"]].to_numpy(dtype=object)
    fig = go.Figure(
        go.Bar(
            x=bins["center"],
            y=bins["count"],
            width=bins["width"],
            customdata=custom,
            marker={
                "color": colours.tolist(),
                "line": {"width": outline, "color": SELECTED_COLOUR},
            },
            hovertemplate="delta %{customdata[4]}: %{y} queries<extra></extra>",
            name="queries",
        )
    )
    fig.update_layout(
        xaxis={"title": {"text": f"delta = A − B ({plotly_text(metric)}); > 0: "
                                 f"{plotly_text(names[0])} better"}},
        yaxis={"title": {"text": "queries"}},
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        height=480,
        showlegend=False,
        clickmode="event+select",
        bargap=0,
    )  # fmt: skip
    return fig
