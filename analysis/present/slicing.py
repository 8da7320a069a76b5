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
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from analysis.present.export import plotly_text
from analysis.stats import MISSING_LABEL, mean_ci, slice_finder

__all__ = [
    "SUMMARY_COLUMNS",
    "WORST_COLUMNS",
    "default_slice_column",
    "heatmap_frames",
    "order_slice_values",
    "plotly_text",
    "slice_bar_figure",
    "slice_heatmap_figure",
    "slice_labels",
    "slice_summary",
    "worst_slices",
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


def slice_labels(series: pd.Series) -> pd.Series:
    """The slice values of a column as strings; missing values become ``"(missing)"``.
    Integer-valued floats lose their ``.0`` (``2.0`` -> ``"2"``); booleans give
    ``"True"``/``"False"``."""
    present = series.notna().to_numpy()
    if pd.api.types.is_float_dtype(series):
        values = series.to_numpy(dtype=float, na_value=np.nan)
        text = [
            str(int(v)) if ok and v.is_integer() else str(v)
            for v, ok in zip(values.tolist(), present.tolist(), strict=True)
        ]
    else:
        text = series.astype(object).astype(str).tolist()
    out = np.where(present, np.asarray(text, dtype=object), MISSING_LABEL)
    return pd.Series(out, index=series.index, name=series.name, dtype=str)


def _sort_key(label: str) -> tuple[int, float, int, str]:
    if label == MISSING_LABEL:
        return (2, 0.0, 0, label)
    match = _NUMBER.match(label)
    if match is None:
        return (1, 0.0, 0, label.casefold())
    sign, number = match.groups()
    above = 1 if sign and sign[0] in ">≥" else 0  # ">20" after "20" and "6–20"
    return (0, float(number), above, label)


def order_slice_values(labels: Iterable[str]) -> list[str]:
    """Distinct ``labels`` in display order: numeric-looking labels by their leading number
    (``"1" < "2–5" < "6–20" < ">20"``; a ``>``/``≥`` prefix sorts after the same number), then
    the others case-insensitively, ``"(missing)"`` last."""
    return sorted(dict.fromkeys(map(str, labels)), key=_sort_key)


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


def slice_summary(
    table: pd.DataFrame,
    metric: str,
    column: str,
    models: Sequence[str] | None = None,
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int | None = 0,
) -> pd.DataFrame:
    """Mean of ``metric`` per (model, value of ``column``) with n and a bootstrap CI.

    Each row is ``mean_ci`` of the metric over that model's queries in that slice (a row equals
    :func:`analysis.stats.bootstrap_ci` on those values, same seed). Rows with a NaN metric are
    left out. ``models`` (default: every model of the table, in table order) fixes which models
    are kept and their order; a model without any row is absent from the result.

    Returns:
        Columns ``model, value, n, mean, ci_low, ci_high`` (``value`` is the slice label, a
        string), sorted by slice value (:func:`order_slice_values`), then model order. Empty
        (with these columns) when nothing is left.

    Raises:
        ValueError: ``metric``, ``column`` or ``model`` not in the table; bad CI settings.
    """
    rows = _metric_rows(table, metric, [column])
    order = list(dict.fromkeys(rows["model"].astype(str))) if models is None else list(models)
    rows = rows.loc[rows["model"].astype(str).isin(order)]
    if rows.empty:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in SUMMARY_COLUMNS})
    frame = pd.DataFrame(
        {
            "model": rows["model"].astype(str).to_numpy(),
            _LABEL: slice_labels(rows[column]).to_numpy(),
            metric: pd.to_numeric(rows[metric]).to_numpy(dtype=float),
        }
    )
    out = mean_ci(
        frame, metric, by=["model", _LABEL], confidence=confidence,
        n_resamples=n_resamples, seed=seed,
    )  # fmt: skip
    out = out.rename(columns={_LABEL: "value"})
    value_rank = {v: i for i, v in enumerate(order_slice_values(out["value"]))}
    model_rank = {m: i for i, m in enumerate(order)}
    out = out.assign(_v=out["value"].map(value_rank), _m=out["model"].map(model_rank)).sort_values(
        ["_v", "_m"], kind="stable"
    )
    out["n"] = out["n"].astype(np.int64)
    return out[list(SUMMARY_COLUMNS)].reset_index(drop=True)


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
    out = {}
    for field in ("mean", "n", "ci_low", "ci_high"):
        wide = summary.pivot_table(index="model", columns="value", values=field, aggfunc="first")
        wide = wide.reindex(index=order, columns=values)
        wide.index.name, wide.columns.name = "model", "value"
        out[field] = wide.fillna(0).astype(np.int64) if field == "n" else wide.astype(float)
    return out


def slice_bar_figure(
    summary: pd.DataFrame, metric: str, column: str, models: Sequence[str] | None = None
) -> go.Figure:
    """Grouped bars: mean of ``metric`` per slice value of ``column``, one bar per model, with
    asymmetric 95% CI error bars (``ci_high - mean`` up, ``mean - ci_low`` down); the hover shows
    model, slice, mean, CI and n. Slice values on the x axis in display order; one trace per
    model in ``models`` order (default: order of first appearance), models without rows skipped.
    """
    values = [plotly_text(v) for v in order_slice_values(summary["value"])]
    order = list(dict.fromkeys(summary["model"])) if models is None else list(models)
    fig = go.Figure()
    for model in order:
        part = summary.loc[summary["model"] == model]
        if part.empty:
            continue
        mean = part["mean"].to_numpy(dtype=float)
        low = part["ci_low"].to_numpy(dtype=float)
        high = part["ci_high"].to_numpy(dtype=float)
        fig.add_trace(
            go.Bar(
                name=plotly_text(model),
                x=[plotly_text(v) for v in part["value"]],
                y=mean,
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": high - mean,
                    "arrayminus": mean - low,
                },
                customdata=np.column_stack([part["n"].to_numpy(dtype=float), low, high]),
                hovertemplate=(
                    "%{fullData.name}<br>"
                    + plotly_text(column)
                    + " = %{x}<br>"
                    + plotly_text(metric)
                    + " = %{y:.3f} [%{customdata[1]:.3f}, %{customdata[2]:.3f}]"
                    "<br>n = %{customdata[0]:,.0f}<extra></extra>"
                ),
            )
        )
    fig.update_layout(
        barmode="group",
        xaxis={"title": plotly_text(column), "type": "category"},
        yaxis={"title": f"mean {plotly_text(metric)} (95% CI)", "rangemode": "tozero"},
        legend={"title": "model"},
        margin={"t": 30, "b": 10},
    )
    fig.update_xaxes(categoryorder="array", categoryarray=values)
    return fig


def slice_heatmap_figure(
    summary: pd.DataFrame, metric: str, column: str, models: Sequence[str] | None = None
) -> go.Figure:
    """Heatmap of the mean of ``metric``: rows = models, columns = slice values of ``column``
    (colour scale fixed to [0, 1], the range of every dashboard metric); each cell shows the mean,
    the hover adds the 95% CI and n. Empty cells (no query of that model in that slice) are blank.
    """
    frames = heatmap_frames(summary, models)
    mean = frames["mean"]
    custom = np.dstack(
        [
            frames["n"].to_numpy(dtype=float),
            frames["ci_low"].to_numpy(dtype=float),
            frames["ci_high"].to_numpy(dtype=float),
        ]
    )
    fig = go.Figure(
        go.Heatmap(
            z=mean.to_numpy(dtype=float),
            x=[plotly_text(v) for v in mean.columns],
            y=[plotly_text(m) for m in mean.index],
            customdata=custom,
            zmin=0.0,
            zmax=1.0,
            colorscale="RdYlGn",
            colorbar={"title": plotly_text(metric)},
            texttemplate="%{z:.3f}",
            hoverongaps=False,
            hovertemplate=(
                "model %{y}<br>"
                + plotly_text(column)
                + " = %{x}<br>"
                + plotly_text(metric)
                + " = %{z:.3f} [%{customdata[1]:.3f}, %{customdata[2]:.3f}]"
                "<br>n = %{customdata[0]:,.0f}<extra></extra>"
            ),
        )
    )
    fig.update_layout(
        xaxis={"title": plotly_text(column), "type": "category"},
        yaxis={"title": "model", "type": "category", "autorange": "reversed"},
        height=max(220, 60 + 45 * len(mean.index)),
        margin={"t": 30, "b": 10},
    )
    return fig


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
