"""Pairing and table shaping for the Compare page: model A against model B, query by query.

The statistics themselves come from :mod:`analysis.stats`; this module pairs the per-query rows of
two models, shapes the tables and figures the page shows, and maps chart/table selection events
back to a query. It never imports streamlit.

Conventions (as in :mod:`analysis.stats`):

* Queries are paired by ``(dataset, query_id)``; a query scored by only one of the two models, or
  whose metric value is missing for either model, is left out (counted in ``attrs``).
* ``delta = a - b`` ("A minus B"): positive means model A scores higher on that query. A *win*
  (for A) is ``delta > 0``, a *loss* ``delta < 0``, a *tie* ``delta == 0``.
* Text from data files (ids, query text, model and dataset names) that goes into a Plotly figure is
  HTML-escaped first: Plotly interprets a few tags (``<b>``, ``<a href>``) in hover labels, legends
  and titles, and data text must be shown as text.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.present.compare_figures import (  # noqa: F401 - the page's API
    BINS_PER_SIDE,
    DISCRETE_MAX_VALUES,
    HOVER_TEXT_CHARS,
    JITTER,
    JITTER_GAP,
    MAX_DISTINCT_BARS,
    TEXT_CHARS,
    WEBGL_ABOVE,
    _truncate,
    delta_histogram,
    highlight_query,
    histogram_bins,
    is_discrete,
    jitter_amplitude,
    lists_for_json,
    scatter_figure,
    with_highlight,
)
from analysis.present.palette import (  # noqa: F401 - re-exported
    GOLD_ROW_CSS,
    LOSS_COLOUR,
    SELECTED_COLOUR,
    TIE_COLOUR,
    WIN_COLOUR,
)
from analysis.present.slicing import sort_slice_rows
from analysis.stats import PairedComparison, bootstrap_ci, flag_values, paired_comparison

__all__ = [
    "QUERY_KEYS",
    "Summary",
    "biggest_changes",
    "delta_histogram",
    "format_ci",
    "format_p",
    "format_value",
    "gold_highlight",
    "gold_with_ranks",
    "highlight_query",
    "histogram_bins",
    "is_discrete",
    "jitter_amplitude",
    "pair_models",
    "point_bin",
    "point_query",
    "query_list",
    "resolve_query",
    "row_query",
    "scatter_figure",
    "selection_signature",
    "slice_view",
    "summarize",
    "with_highlight",
]

QUERY_KEYS: tuple[str, str] = ("dataset", "query_id")

# colour-blind-safe diverging pair shared with the exports: blue = A better, orange = B better
GOLD_CELL = GOLD_ROW_CSS.split(":", 1)[1].strip()


# --------------------------------------------------------------------------- pairing


def pair_models(per_query: pd.DataFrame, model_a: str, model_b: str, metric: str) -> pd.DataFrame:
    """The queries scored by both models, one row each, with A's and B's value of ``metric``.

    Columns: ``dataset, query_id, a, b, delta`` (``= a - b``), ``rank_a, rank_b`` (first gold rank,
    NaN when no gold was retrieved; present when the table has ``first_gold_rank``) and ``text``,
    ``n_gold`` when the table has them (read from A's rows). Rows keep the order of A's rows.

    ``attrs``: ``n_only_a`` / ``n_only_b`` (queries scored by only one model), ``n_missing``
    (paired queries dropped because the metric is NaN for A or B) and ``unpaired_datasets``
    (selected datasets where one of the models has no row at all).

    Raises:
        ValueError: a missing column, ``model_a == model_b``, or a duplicated (dataset, query_id)
            for one model.
    """
    needed = [*QUERY_KEYS, "model", metric]
    missing = [c for c in needed if c not in per_query.columns]
    if missing:
        raise ValueError(f"per-query table: column(s) {missing} not found")
    if model_a == model_b:
        raise ValueError(f"model A and model B are the same model ({model_a!r})")
    keys = list(QUERY_KEYS)
    extra = [c for c in ("text", "n_gold") if c in per_query.columns]
    has_rank = "first_gold_rank" in per_query.columns
    rank = ["first_gold_rank"] if has_rank else []

    def rows(model: str, columns: list[str]) -> pd.DataFrame:
        out = per_query.loc[per_query["model"] == model, columns]
        dup = out.duplicated(keys)
        if dup.any():
            first = out.loc[dup, keys].iloc[0].tolist()
            raise ValueError(
                f"model {model!r} has duplicated (dataset, query_id) rows, e.g. {first}"
            )
        return out

    rows_a = rows(model_a, [*keys, metric, *rank, *extra]).rename(
        columns={metric: "a", "first_gold_rank": "rank_a"}
    )
    rows_b = rows(model_b, [*keys, metric, *rank]).rename(
        columns={metric: "b", "first_gold_rank": "rank_b"}
    )
    paired = rows_a.merge(rows_b, on=keys, how="inner")
    n_both = len(paired)
    values = paired[["a", "b"]].astype(float)
    ok = np.isfinite(values.to_numpy()).all(axis=1)
    paired = paired.loc[ok].reset_index(drop=True)
    paired["a"] = paired["a"].astype(float)
    paired["b"] = paired["b"].astype(float)
    paired["delta"] = paired["a"] - paired["b"]
    order = [*keys, "a", "b", "delta", *(["rank_a", "rank_b"] if has_rank else []), *extra]
    paired = paired[order]

    ds_a = set(rows_a["dataset"].unique())
    ds_b = set(rows_b["dataset"].unique())
    all_ds = list(per_query["dataset"].unique())  # in order of appearance
    paired.attrs["n_only_a"] = len(rows_a) - n_both
    paired.attrs["n_only_b"] = len(rows_b) - n_both
    paired.attrs["n_missing"] = int((~ok).sum())
    paired.attrs["unpaired_datasets"] = [d for d in all_ds if not (d in ds_a and d in ds_b)]
    return paired


@dataclass(frozen=True)
class Summary:
    """A against B over the paired queries: :func:`analysis.stats.paired_comparison` plus the
    bootstrap CI of each model's mean (same seed and number of resamples)."""

    comparison: PairedComparison
    ci_a: tuple[float, float]
    ci_b: tuple[float, float]


def summarize(
    paired: pd.DataFrame, *, n_resamples: int = 10_000, seed: int = 0, confidence: float = 0.95
) -> Summary:
    """Paired comparison of ``paired["a"]`` against ``paired["b"]`` (see
    :func:`analysis.stats.paired_comparison` for every statistic and its edge cases), and the
    percentile bootstrap CI of each mean. An empty table gives NaN statistics."""
    kw = {"n_resamples": n_resamples, "seed": seed, "confidence": confidence}
    comp = paired_comparison(paired["a"], paired["b"], **kw)
    if paired.empty:
        nan = (math.nan, math.nan)
        return Summary(comp, nan, nan)
    return Summary(comp, bootstrap_ci(paired["a"], **kw), bootstrap_ci(paired["b"], **kw))


def format_p(p: float) -> str:
    """A p-value for display: ``"n/a"`` for NaN, ``"<0.0001"`` below 1e-4, else 2 significant
    digits (``0.032``, ``0.41``, ``1``)."""
    if p is None or not math.isfinite(p):
        return "n/a"
    if p < 1e-4:
        return "<0.0001"
    return f"{p:.2g}"


def format_value(x: float, spec: str = ".3f") -> str:
    """A statistic for display with format ``spec``; ``"n/a"`` for NaN, ``"+∞"``/``"−∞"`` for
    infinities (Cohen's d_z of a constant non-zero difference)."""
    if x is None or math.isnan(x):
        return "n/a"
    if math.isinf(x):
        return "+∞" if x > 0 else "−∞"
    return format(x, spec)


def format_ci(low: float, high: float, digits: int = 3) -> str:
    """``"[low, high]"`` with ``digits`` decimals; ``"[n/a]"`` when either bound is NaN."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return "[n/a]"
    return f"[{low:.{digits}f}, {high:.{digits}f}]"


# --------------------------------------------------------------------------- tables


def query_list(rows: pd.DataFrame, *, text_chars: int = TEXT_CHARS) -> pd.DataFrame:
    """Rows of a paired table as a display table: ``dataset, query_id, text`` (truncated to
    ``text_chars``), ``a, b, delta``, ``rank_a, rank_b`` (when present); index reset so that a
    selected row position maps back with :func:`row_query`."""
    cols = [c for c in (*QUERY_KEYS, "text", "a", "b", "delta", "rank_a", "rank_b") if c in rows]
    out = rows[cols].reset_index(drop=True)
    if "text" in out.columns:
        out["text"] = _truncate(out["text"], text_chars)
    return out


def biggest_changes(
    paired: pd.DataFrame, n: int = 10, *, text_chars: int = TEXT_CHARS
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ``n`` biggest wins of A (largest ``delta > 0``) and losses (most negative
    ``delta < 0``), as :func:`query_list` tables. Ties in delta are ordered by dataset, then
    query id (stable, so the same data gives the same rows). Ties (``delta == 0``) are in neither
    table; either table can be empty."""
    ordered = paired.sort_values(list(QUERY_KEYS), kind="stable")
    wins = ordered[ordered["delta"] > 0].sort_values("delta", ascending=False, kind="stable")
    losses = ordered[ordered["delta"] < 0].sort_values("delta", ascending=True, kind="stable")
    return (
        query_list(wins.head(n), text_chars=text_chars),
        query_list(losses.head(n), text_chars=text_chars),
    )


def slice_view(comp: pd.DataFrame) -> pd.DataFrame:
    """A :func:`analysis.stats.compare_slices` result for display: ``slice, value, n, mean_a,
    mean_b, delta, ci`` (the delta's CI as ``"[low, high]"``), ``wins, ties, losses, d_z,
    p_randomization, p_holm`` and ``significant`` (``p_holm < 0.05``). The ``metric`` column is
    dropped when it holds a single metric."""
    out = comp.copy()
    out["ci"] = [format_ci(lo, hi) for lo, hi in zip(out["ci_low"], out["ci_high"], strict=True)]
    out = out.rename(columns={"effect_size": "d_z"})
    out["significant"] = out["p_holm"] < 0.05
    cols = ["slice", "value", "metric", "n", "mean_a", "mean_b", "delta", "ci", "wins", "ties",
            "losses", "d_z", "p_randomization", "p_holm", "significant"]  # fmt: skip
    if len(set(out["metric"])) <= 1:
        cols.remove("metric")
    # each slice column's values in natural order (3 before 10), "all" first as given
    out = sort_slice_rows(out, "value", ["metric"], within="slice")
    return out[cols].reset_index(drop=True)


def resolve_query(
    paired: pd.DataFrame, query_id: str | None, dataset: str | None
) -> tuple[str, str] | None:
    """The paired query named by URL values: ``(dataset, query_id)`` when that pair is in
    ``paired``; without ``dataset``, the query id's dataset when exactly one selected dataset
    has it. None otherwise (unknown id, ambiguous id, unknown dataset)."""
    if not query_id:
        return None
    match = paired["query_id"] == query_id
    if dataset:
        match &= paired["dataset"] == dataset
    found = paired.loc[match, "dataset"].unique()
    if len(found) != 1:
        return None
    return str(found[0]), str(query_id)


def gold_with_ranks(
    gold: pd.DataFrame,
    ranked_a: pd.DataFrame | None,
    ranked_b: pd.DataFrame | None,
    query_id: str,
) -> pd.DataFrame:
    """``gold`` (:func:`analysis.present.rankings.gold_table`) with ``rank_a`` and ``rank_b``: the
    rank of each gold doc in A's and B's whole ranked list of the query (nullable int, missing when
    the model did not retrieve it or has no run). Placed after ``doc_id``."""
    out = gold.copy()
    for col, ranked in (("rank_a", ranked_a), ("rank_b", ranked_b)):
        if ranked is None:
            ranks = pd.Series(pd.NA, index=out.index, dtype="Int64")
        else:
            rows = ranked.loc[ranked["query_id"] == query_id, ["doc_id", "rank"]]
            lookup = rows.drop_duplicates("doc_id").set_index("doc_id")["rank"]
            ranks = out["doc_id"].map(lookup).astype("Int64")
        out[col] = ranks.to_numpy()
    pos = list(out.columns).index("doc_id") + 1
    cols = list(out.columns)
    cols = [
        *cols[:pos],
        "rank_a",
        "rank_b",
        *[c for c in cols[pos:] if c not in ("rank_a", "rank_b")],
    ]
    return out[cols]


def gold_highlight(frame: pd.DataFrame, colour: str = GOLD_CELL) -> pd.DataFrame:
    """CSS for ``Styler.apply(..., axis=None)``: the cells of a (side-by-side) ranking that
    belong to a gold document get a background. A column ``"<p>gold"`` (``gold`` or
    ``"<name>: gold"``) marks every column starting with the same prefix ``<p>``."""
    columns = [str(c) for c in frame.columns]
    marked = np.zeros((len(frame), len(columns)), dtype=bool)
    for col, name in zip(frame.columns, columns, strict=True):
        if not name.endswith("gold"):
            continue
        prefix = name[: -len("gold")]
        flags = flag_values(frame[col])
        for j, other in enumerate(columns):
            if other.startswith(prefix) and (prefix or other != "rank"):
                marked[:, j] |= flags
    css = np.where(marked, f"background-color: {colour}", "")
    return pd.DataFrame(css, index=frame.index, columns=frame.columns)


# --------------------------------------------------------------------------- selection events


def _points(selection: Mapping | None) -> list[Mapping]:
    """The selected points of a ``st.plotly_chart`` event (the event itself or its
    ``selection``)."""
    if not selection:
        return []
    inner = selection.get("selection", selection)
    points = inner.get("points", []) if isinstance(inner, Mapping) else []
    return [p for p in points if isinstance(p, Mapping)]


def point_query(selection: Mapping | None) -> tuple[str, str] | None:
    """``(dataset, query_id)`` of the first selected scatter point (its ``customdata[0:2]``), or
    None when nothing usable is selected."""
    for point in _points(selection):
        custom = point.get("customdata")
        if isinstance(custom, Sequence) and not isinstance(custom, str) and len(custom) >= 2:
            return str(custom[0]), str(custom[1])
    return None


def point_bin(selection: Mapping | None) -> int | None:
    """The bar (``customdata[0]``) of the first selected histogram bar, or None."""
    for point in _points(selection):
        custom = point.get("customdata")
        if isinstance(custom, Sequence) and not isinstance(custom, str) and len(custom) >= 1:
            try:
                return int(custom[0])
            except (TypeError, ValueError):
                continue
    return None


def row_query(selection: Mapping | None, table: pd.DataFrame) -> tuple[str, str] | None:
    """``(dataset, query_id)`` of the first selected row of a ``st.dataframe`` selection event
    over ``table`` (row positions index ``table``), or None (no row, position out of range)."""
    if not selection:
        return None
    inner = selection.get("selection", selection)
    rows = inner.get("rows", []) if isinstance(inner, Mapping) else []
    for pos in rows:
        if isinstance(pos, int) and 0 <= pos < len(table):
            row = table.iloc[pos]
            return str(row["dataset"]), str(row["query_id"])
    return None


def selection_signature(selection: Mapping | None) -> str:
    """A canonical string of a selection event (to tell a new click from a selection that is
    still held by its widget on later reruns); ``""`` for no selection."""
    if not selection:
        return ""
    inner = selection.get("selection", selection)
    if isinstance(inner, Mapping):
        keys = ("points", "rows", "box", "lasso", "point_indices")
        if not any(inner.get(k) for k in keys):
            return ""
    return json.dumps(selection, sort_keys=True, default=str)
