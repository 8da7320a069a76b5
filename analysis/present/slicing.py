"""Slice tables and figures for the Slices page: a metric's mean per slice value and model with
bootstrap CIs, the model x slice heatmap, and the slices where a model does worst.

A *slice* is one value of one slice column of the per-query table (``dataset``, ``query_type``,
``n_gold_bucket``, ``split``, any categorical metadata column; see
:func:`analysis.stats.perquery.slice_columns`). Conventions:

* A missing slice value is its own slice, labelled ``"(missing)"`` (e.g. ``metapath`` on the
  spatial datasets, which have none) and shown last.
* Every mean is over the queries of that model in that slice (queries missing from a run count
  as 0, as everywhere in the per-query table); ``n`` is that number of queries. Rows whose metric
  is NaN (a metric not computed for one dataset) are left out of the mean and of ``n``.
* CIs are the seeded percentile bootstrap of :func:`analysis.stats.mean_ci` (95% by default).
* Slice values are ordered for display by :func:`order_slice_values`: numeric-looking labels
  (``"1"``, ``"2–5"``, ``">20"``, ``"[0.1, 0.5)"``) by their lower edge, then the other labels
  alphabetically, ``"(missing)"`` last.
* Labels and model names come from data files; :func:`plotly_text` escapes them before they go
  into a plotly figure (plotly interprets a subset of HTML in every text string).

The module never imports streamlit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TypedDict, Unpack

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from analysis.core.options import check_options
from analysis.present.axislabels import axis_labels, wrap_label
from analysis.present.escape import plotly_text
from analysis.present.palette import FONT_FAMILY, SEQUENTIAL_SCALE, model_colours
from analysis.stats import MISSING_LABEL, mean_ci, slice_finder

__all__ = [
    "SUMMARY_COLUMNS",
    "WORST_COLUMNS",
    "axis_labels",
    "default_slice_column",
    "heat_range",
    "heatmap_frames",
    "largest_slice",
    "order_slice_values",
    "plotly_text",
    "slice_bar_figure",
    "slice_heatmap_figure",
    "slice_labels",
    "slice_order",
    "slice_summary",
    "sort_slice_rows",
    "top_values",
    "worst_slices",
    "wrap_label",
]

#: Columns of :func:`slice_summary`.
SUMMARY_COLUMNS: tuple[str, ...] = ("model", "value", "n", "mean", "ci_low", "ci_high")
#: Columns of :func:`worst_slices` (those of :func:`analysis.stats.slice_finder`).
WORST_COLUMNS: tuple[str, ...] = (
    "slice", "value", "n", "mean", "ci_low", "ci_high", "overall", "gap", "below",
)  # fmt: skip

_QUERY_KEYS = ["dataset", "query_id"]
_LABEL = "\x00value"  # a column name that cannot collide with a real one
_NUMBER = re.compile(r"^[\[(]?\s*([<>≤≥]=?)?\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)")


#: Values that mean "no value" in real files (STaRK's split/metapath fill, empty strings).
MISSING_LIKE = frozenset({"", "none", "None", "nan", "NaN", "null", "<NA>"})
#: Label of the slice that gathers every value beyond the top N.
OTHER_LABEL = "(other)"


def slice_labels(series: pd.Series) -> pd.Series:
    """The slice values of a column as strings; missing values, empty strings and ``"none"``
    (see :data:`MISSING_LIKE`) become ``"(missing)"``. Integer-valued floats lose their ``.0``
    (``2.0`` -> ``"2"``); booleans give ``"True"``/``"False"``."""
    present = series.notna().to_numpy()
    if pd.api.types.is_float_dtype(series):
        values = series.to_numpy(dtype=float, na_value=np.nan)
        text = [
            str(int(v)) if ok and v.is_integer() else str(v)
            for v, ok in zip(values.tolist(), present.tolist(), strict=True)
        ]
    else:
        text = series.astype(object).astype(str).tolist()
    arr = np.asarray(text, dtype=object)
    present = present & ~pd.Series(arr).str.strip().isin(MISSING_LIKE).to_numpy()
    out = np.where(present, arr, MISSING_LABEL)
    return pd.Series(out, index=series.index, name=series.name, dtype=str)


def _sort_key(label: str) -> tuple[int, float, int, str]:
    if label == MISSING_LABEL:
        return (3, 0.0, 0, label)
    if label.startswith(OTHER_LABEL):
        return (2, 0.0, 0, label)
    match = _NUMBER.match(label)
    if match is None:
        return (1, 0.0, 0, label.casefold())
    sign, number = match.groups()
    # "<0.5 km" before "0.5–2 km"; ">20" after "20" and "6–20"
    side = (1 if sign[0] in ">≥" else -1) if sign else 0
    return (0, float(number), side, label)


def order_slice_values(labels: Iterable[str]) -> list[str]:
    """Distinct ``labels`` in display order: numeric-looking labels by their leading number
    (``"1" < "2–5" < "6–20" < ">20"``, ``"<0.5 km" < "0.5–2 km" < "2–5 km"``; a ``<``/``≤``
    prefix sorts before the same number, ``>``/``≥`` after), then the others
    case-insensitively, then ``"(other)"``, ``"(missing)"`` last."""
    return sorted(dict.fromkeys(map(str, labels)), key=_sort_key)


def sort_slice_rows(
    frame: pd.DataFrame, column: str, first: Sequence[str] = (), *, within: str | None = None
) -> pd.DataFrame:
    """``frame``'s rows with the values of ``column`` in natural order
    (:func:`order_slice_values`: ``0, 1, 3, 10, 12``, not ``0, 1, 10, 12, 3``), after the
    ``first`` columns (kept in their order of appearance) and, with ``within``, only among
    the rows of each value of that column (e.g. the rows of one slice column of a table of
    several). Other orders are kept (stable)."""
    if frame.empty or column not in frame.columns:
        return frame
    labels = frame[column].astype(str)
    rank = {v: i for i, v in enumerate(order_slice_values(labels))}
    keys = {f"\x00{c}": pd.factorize(frame[c])[0] for c in [*first, *([within] if within else [])]}
    keys["\x00value"] = labels.map(rank).to_numpy()
    order = pd.DataFrame(keys, index=frame.index).sort_values(list(keys), kind="stable").index
    return frame.loc[order].reset_index(drop=True)


def largest_slice(
    table: pd.DataFrame, metric: str, models: Sequence[str], columns: Sequence[str]
) -> int:
    """The query count of the biggest slice of any of ``models`` over ``columns`` (values as
    :func:`slice_labels` gives them; rows with a NaN ``metric`` left out, as every slice
    statistic does); 0 when no row is left. What an empty slice chart compares its minimum
    slice size with."""
    rows = table.loc[table["model"].astype(str).isin(list(map(str, models)))]
    rows = rows.loc[rows[metric].notna()] if metric in rows.columns else rows.iloc[:0]
    sizes = [
        int(
            slice_labels(rows[c]).groupby(rows["model"].astype(str).to_numpy()).value_counts().max()
        )
        for c in columns
        if c in rows.columns and len(rows)
    ]
    return max(sizes, default=0)


def default_slice_column(table: pd.DataFrame, columns: Sequence[str]) -> str | None:
    """The first of ``columns`` that splits ``table`` into more than one slice (a missing value
    is a slice of its own), else the first column; ``None`` when ``columns`` is empty.
    Example: with one dataset selected, ``dataset`` is skipped for ``query_type``."""
    for column in columns:
        labels = slice_labels(table[column])
        if len(labels) and (labels != labels.iloc[0]).any():
            return column
    return columns[0] if columns else None


def _metric_rows(table: pd.DataFrame, metric: str, columns: Sequence[str]) -> pd.DataFrame:
    if table.columns.duplicated().any():
        dup = sorted(set(table.columns[table.columns.duplicated()].map(str)))
        raise ValueError(f"per-query table: duplicated column(s) {dup}")
    missing = [c for c in ["model", metric, *columns] if c not in table.columns]
    if missing:
        raise ValueError(
            f"per-query table: column(s) {missing} not found; available: {list(table.columns)}"
        )
    values = pd.to_numeric(table[metric], errors="coerce")
    return table.loc[np.isfinite(values.to_numpy(dtype=float, na_value=np.nan))]


class SummaryOptions(TypedDict, total=False):
    """The keyword options of :func:`slice_summary`: the bootstrap's ``confidence``,
    ``n_resamples`` and ``seed``, the values kept (``top_n``) and the smallest row
    (``min_size``)."""

    confidence: float
    n_resamples: int
    seed: int | None
    top_n: int | None
    min_size: int


def slice_summary(
    table: pd.DataFrame,
    metric: str,
    column: str,
    models: Sequence[str] | None = None,
    **options: Unpack[SummaryOptions],
) -> pd.DataFrame:
    """Mean of ``metric`` per (model, value of ``column``) with n and a bootstrap CI.

    Options (keywords, :class:`SummaryOptions`): ``confidence`` (0.95), ``n_resamples``
    (10,000), ``seed`` (0), ``top_n`` (``None``) and ``min_size`` (1).

    Each row is ``mean_ci`` of the metric over that model's queries in that slice (a row equals
    :func:`analysis.stats.bootstrap_ci` on those values, same seed). Rows with a NaN metric are
    left out. ``models`` (default: every model of the table, in table order) fixes which models
    are kept and their order; a model without any row is absent from the result.

    ``top_n``: keep the ``top_n`` values with the most queries (ties: display order) and gather
    the rest into one slice ``"(other)"`` (its mean is over all of their queries, not a mean of
    means); ``None`` keeps every value. ``min_size``: rows with fewer queries are dropped
    (applied after ``top_n``, so a small "other" slice is dropped too).

    Returns:
        Columns ``model, value, n, mean, ci_low, ci_high`` (``value`` is the slice label, a
        string), sorted by slice value (:func:`order_slice_values`), then model order. Empty
        (with these columns) when nothing is left.

    Raises:
        ValueError: ``metric``, ``column`` or ``model`` not in the table; bad CI settings.
    """
    check_options("slice_summary", options, SummaryOptions)
    top_n, min_size = options.get("top_n"), options.get("min_size", 1)
    rows = _metric_rows(table, metric, [column])
    order = list(dict.fromkeys(rows["model"].astype(str))) if models is None else list(models)
    rows = rows.loc[rows["model"].astype(str).isin(order)]
    if rows.empty:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in SUMMARY_COLUMNS})
    if min_size < 1:
        raise ValueError(f"min_size must be >= 1, got {min_size}")
    labels = slice_labels(rows[column])
    if top_n is not None:
        labels = top_values(labels, rows, top_n)
    frame = pd.DataFrame(
        {
            "model": rows["model"].astype(str).to_numpy(),
            _LABEL: labels.to_numpy(),
            metric: pd.to_numeric(rows[metric]).to_numpy(dtype=float),
        }
    )
    out = mean_ci(
        frame, metric, by=["model", _LABEL], confidence=options.get("confidence", 0.95),
        n_resamples=options.get("n_resamples", 10_000), seed=options.get("seed", 0),
    )  # fmt: skip
    out = out.rename(columns={_LABEL: "value"})
    value_rank = {v: i for i, v in enumerate(order_slice_values(out["value"]))}
    model_rank = {m: i for i, m in enumerate(order)}
    out = out.assign(_v=out["value"].map(value_rank), _m=out["model"].map(model_rank)).sort_values(
        ["_v", "_m"], kind="stable"
    )
    out["n"] = out["n"].astype(np.int64)
    out = out.loc[out["n"] >= min_size]
    return out[list(SUMMARY_COLUMNS)].reset_index(drop=True)


def top_values(labels: pd.Series, rows: pd.DataFrame, top_n: int) -> pd.Series:
    """``labels`` with every value beyond the ``top_n`` largest (by distinct queries, ties in
    display order; ``"(missing)"`` counts as a value) replaced by ``"(other)"``; unchanged when
    there are at most ``top_n + 1`` values (an "other" of one value would hide its name).

    Raises:
        ValueError: ``top_n < 1``.
    """
    if top_n < 1:
        raise ValueError(f"top_n must be >= 1, got {top_n}")
    keys = [c for c in _QUERY_KEYS if c in rows.columns]
    frame = pd.DataFrame({"label": labels.to_numpy()})
    for c in keys:
        frame[c] = rows[c].to_numpy()
    sizes = frame.drop_duplicates() if keys else frame
    counts = sizes["label"].value_counts()
    if len(counts) <= top_n + 1:
        return labels
    rank = {v: i for i, v in enumerate(order_slice_values(counts.index))}
    ordered = sorted(counts.index, key=lambda v: (-counts[v], rank[v]))
    keep = set(ordered[:top_n])
    other = f"{OTHER_LABEL} {len(ordered) - top_n} values"
    out = np.where(labels.isin(keep).to_numpy(), labels.to_numpy(), other)
    return pd.Series(out, index=labels.index, name=labels.name, dtype=str)


SORTS: tuple[str, ...] = ("natural", "size", "value")


def slice_order(summary: pd.DataFrame, by: str = "natural", model: str | None = None) -> list[str]:
    """The slice values of a :func:`slice_summary` in display order, top first.

    ``natural``: :func:`order_slice_values` (numeric buckets by their numbers); ``size``: most
    queries first; ``value``: lowest mean of ``model`` first (default: the first model of the
    summary), so the worst slices lead; values without a row for that model go last. "(other)"
    and "(missing)" always come last.

    Raises:
        ValueError: an unknown ``by``.
    """
    if by not in SORTS:
        raise ValueError(f"sort must be one of {SORTS}, got {by!r}")
    natural = order_slice_values(summary["value"])
    if by == "natural" or summary.empty:
        return natural
    rank = {v: i for i, v in enumerate(natural)}
    tail = [v for v in natural if v.startswith((OTHER_LABEL, MISSING_LABEL))]
    head = [v for v in natural if v not in tail]
    if by == "size":
        size = summary.groupby("value")["n"].max()
        head.sort(key=lambda v: (-size.get(v, 0), rank[v]))
    else:
        first = model if model is not None else str(summary["model"].iloc[0])
        mean = summary.loc[summary["model"] == first].set_index("value")["mean"]
        head.sort(key=lambda v: (v not in mean.index, mean.get(v, 0.0), rank[v]))
    return head + tail


def heatmap_frames(
    summary: pd.DataFrame, models: Sequence[str] | None = None
) -> dict[str, pd.DataFrame]:
    """The :func:`slice_summary` rows as model x slice-value matrices.

    Returns:
        ``{"mean", "n", "ci_low", "ci_high"}`` -> DataFrame with one row per model (``models``
        order, default summary order) and one column per slice value (display order). A model
        with no query in a slice has NaN there (``n`` is 0).
    """
    order = list(dict.fromkeys(summary["model"])) if models is None else list(models)
    values = order_slice_values(summary["value"])
    row = {m: i for i, m in enumerate(order)}
    col = {v: j for j, v in enumerate(values)}
    keep = summary["model"].isin(row).to_numpy()
    i = summary["model"][keep].map(row).to_numpy(dtype=np.int64)
    j = summary["value"][keep].map(col).to_numpy(dtype=np.int64)
    index = pd.Index(order, name="model")
    columns = pd.Index(values, name="value", dtype=object)
    out = {}
    for field in ("mean", "n", "ci_low", "ci_high"):
        grid = np.full((len(order), len(values)), np.nan)
        grid[i, j] = summary[field][keep].to_numpy(dtype=float)  # one row per (model, value)
        frame = pd.DataFrame(grid, index=index, columns=columns)
        out[field] = frame.fillna(0).astype(np.int64) if field == "n" else frame
    return out


def _slice_hover(head: str, column: str, metric: str, axis: str) -> str:
    """Hover template of a slice mean: ``head`` (the model), ``column = value`` (customdata[3],
    the full value), ``metric = mean [low, high]`` (the mean on ``axis``, the CI in
    customdata[1:3]) and ``n`` (customdata[0]); data names through :func:`plotly_text`."""
    return (
        f"{head}<br>"
        + plotly_text(column)
        + " = %{customdata[3]}<br>"
        + plotly_text(metric)
        + f" = %{{{axis}:.3f}} [%{{customdata[1]:.3f}}, %{{customdata[2]:.3f}}]"
        "<br>n = %{customdata[0]:,.0f}<extra></extra>"
    )


#: Pixels per line of a wrapped axis label (12 px font), and the gap between two labels.
_LINE_PX, _LABEL_GAP_PX = 16, 6


def _rows_height(labels: Sequence[str], per_value: int) -> int:
    """Plot height for one category row per label: ``per_value`` pixels, or more when a
    label wrapped onto several lines (:func:`wrap_label`) needs them, so wrapped labels of
    neighbouring rows never overlap."""
    return sum(
        max(per_value, _LINE_PX * (str(label).count("<br>") + 1) + _LABEL_GAP_PX)
        for label in labels
    )


def slice_bar_figure(
    summary: pd.DataFrame,
    metric: str,
    column: str,
    models: Sequence[str] | None = None,
    order: Sequence[str] | None = None,
    *,
    colours: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
) -> go.Figure:
    """Horizontal grouped bars: mean of ``metric`` per slice value of ``column`` (one row per
    value, ``order`` top to bottom, default :func:`slice_order`), one bar per model (``models``
    order, each in its colour: ``colours``, default
    :func:`~analysis.present.palette.model_colours` of ``models``) with asymmetric 95% CI error
    bars. Axis labels are wrapped (:func:`wrap_label`) unless ``labels`` (value -> label,
    already escaped for plotly) gives them; the hover shows the full value, model, mean, CI
    and n."""
    order = list(order) if order is not None else slice_order(summary)
    if labels is None:
        labels = dict(zip(order, axis_labels(order), strict=True))
    else:
        labels = {v: labels[v] for v in order}
    models = list(dict.fromkeys(summary["model"])) if models is None else list(models)
    colours = {**model_colours(models), **(colours or {})}
    fig = go.Figure()
    for model in models:
        part = summary.loc[(summary["model"] == model) & summary["value"].isin(labels)]
        if part.empty:
            continue
        mean = part["mean"].to_numpy(dtype=float)
        low = part["ci_low"].to_numpy(dtype=float)
        high = part["ci_high"].to_numpy(dtype=float)
        full = [plotly_text(v) for v in part["value"]]
        fig.add_trace(
            go.Bar(
                name=plotly_text(model),
                orientation="h",
                y=[labels[v] for v in part["value"]],
                x=mean,
                marker_color=colours[model],
                error_x={
                    "type": "data",
                    "symmetric": False,
                    "array": high - mean,
                    "arrayminus": mean - low,
                    "thickness": 1,
                },
                customdata=np.column_stack(
                    [part["n"].to_numpy(dtype=float), low, high, np.asarray(full, dtype=object)]
                ),
                hovertemplate=_slice_hover("%{fullData.name}", column, metric, "x"),
            )
        )
    per_value = 16 * max(1, len(fig.data)) + 8
    fig.update_layout(
        barmode="group",
        xaxis={"title": f"mean {plotly_text(metric)} (95% CI)", "rangemode": "tozero"},
        yaxis={"title": plotly_text(column), "type": "category", "automargin": True},
        legend={"title": "model", "orientation": "h", "y": 1.02, "yanchor": "bottom"},
        height=int(min(4000, max(260, 90 + _rows_height([labels[v] for v in order], per_value)))),
        margin={"t": 40, "b": 10, "l": 10},
        font={"family": FONT_FAMILY},
    )
    fig.update_yaxes(
        categoryorder="array", categoryarray=[labels[v] for v in order], autorange="reversed"
    )
    return fig


def slice_heatmap_figure(
    summary: pd.DataFrame,
    metric: str,
    column: str,
    models: Sequence[str] | None = None,
    order: Sequence[str] | None = None,
    *,
    labels: Mapping[str, str] | None = None,
) -> go.Figure:
    """Heatmap of the mean of ``metric``: rows = slice values of ``column`` (``order`` top to
    bottom), columns = models. The sequential colour scale (palette ``SEQUENTIAL_SCALE``) spans
    the data's own range (min to max of the shown means; ±0.05 around a single value), so
    0.85 and 0.97 differ. Each cell shows the mean; the hover adds the full value, CI and n.
    Empty cells (no query of that model in that slice) are blank. ``labels`` as in
    :func:`slice_bar_figure`."""
    frames = heatmap_frames(summary, models)
    order = list(order) if order is not None else slice_order(summary)
    mean = frames["mean"].reindex(columns=order).T
    n = frames["n"].reindex(columns=order).T.fillna(0)
    low = frames["ci_low"].reindex(columns=order).T
    high = frames["ci_high"].reindex(columns=order).T
    full = np.repeat(
        np.asarray([plotly_text(v) for v in order], dtype=object)[:, None], mean.shape[1], axis=1
    )
    custom = np.dstack(
        [n.to_numpy(dtype=float), low.to_numpy(dtype=float), high.to_numpy(dtype=float), full]
    )
    z = mean.to_numpy(dtype=float)
    zmin, zmax = heat_range(z)
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=[plotly_text(m) for m in mean.columns],
            y=axis_labels(order) if labels is None else [labels[v] for v in order],
            customdata=custom,
            zmin=zmin,
            zmax=zmax,
            colorscale=SEQUENTIAL_SCALE,
            colorbar={"title": plotly_text(metric)},
            texttemplate="%{z:.3f}",
            hoverongaps=False,
            hovertemplate=_slice_hover("model %{x}", column, metric, "z"),
        )
    )
    fig.update_layout(
        xaxis={"title": "model", "type": "category", "side": "top"},
        yaxis={"title": plotly_text(column), "type": "category", "autorange": "reversed",
               "automargin": True},
        height=int(min(4000, max(220, 90 + _rows_height(list(fig.data[0].y), 30)))),
        margin={"t": 60, "b": 10, "l": 10},
        font={"family": FONT_FAMILY},
    )  # fmt: skip
    return fig


def heat_range(z: np.ndarray) -> tuple[float, float]:
    """Colour range of a heatmap: the finite values' min and max (one value v: v ± 0.05;
    none: 0 to 1)."""
    finite = z[np.isfinite(z)]
    if finite.size == 0:
        return 0.0, 1.0
    lo, hi = float(finite.min()), float(finite.max())
    if hi - lo < 1e-12:
        return lo - 0.05, hi + 0.05
    return lo, hi


def worst_slices(
    table: pd.DataFrame,
    metric: str,
    model: str,
    slice_cols: Sequence[str],
    *,
    min_size: int = 10,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int | None = 0,
) -> pd.DataFrame:
    """Slices where ``model`` does worst on ``metric``, worst first.

    :func:`analysis.stats.slice_finder` over every column of ``slice_cols``: for each slice with
    at least ``min_size`` queries, ``gap = slice mean - overall mean`` of the model (overall =
    all its queries with a finite metric), n, the slice mean's bootstrap CI and ``below`` (the
    whole CI lies below the overall mean; a screening flag, not a test). Sorted by gap ascending,
    larger n first on ties. Rows with a NaN metric are left out.

    Returns:
        Columns ``slice, value, n, mean, ci_low, ci_high, overall, gap, below``; empty (with
        these columns) when the model has no row or no slice reaches ``min_size``.

    Raises:
        ValueError: a missing column, ``min_size < 1``, bad CI settings.
    """
    cols = list(dict.fromkeys(slice_cols))
    rows = _metric_rows(table, metric, [*_QUERY_KEYS, *cols])
    keep = list(dict.fromkeys(["model", *_QUERY_KEYS, metric, *cols]))
    rows = rows.loc[rows["model"].astype(str) == str(model), keep]
    if min_size < 1:
        raise ValueError(f"min_size must be >= 1, got {min_size}")
    if rows.empty or not cols or len(rows) < min_size:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in WORST_COLUMNS})
    rows = rows.assign(**{c: slice_labels(rows[c]) for c in cols})
    out = slice_finder(
        rows, metric, str(model), cols, min_size=min_size, confidence=confidence,
        n_resamples=n_resamples, seed=seed,
    )  # fmt: skip
    if out.empty:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in WORST_COLUMNS})
    return out[list(WORST_COLUMNS)]
