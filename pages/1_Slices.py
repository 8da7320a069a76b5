"""Slices: the selected metric by slice (dataset, query type, answer-set size bucket, split, any
metadata column) with 95% bootstrap CIs, models side by side; a model x slice heatmap; and the
slices where model A does worst, worst first.

Models: by default every model of the selected datasets; a page-local multiselect narrows them
(sidebar model A/B only matter for the worst-slices table, which is model A's). Page-local URL
parameters: ``slice`` (slice column), ``models`` (comma-separated model names; absent or
only unknown names = all, empty = none), ``min_n`` (minimum slice size of the worst-slices
table, default 10).
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from analysis.present.slicing import (
    default_slice_column,
    slice_bar_figure,
    slice_heatmap_figure,
    slice_summary,
    worst_slices,
)
from analysis.stats.perquery import slice_columns
from ui import data, widgets
from ui.state import local_param, set_local_param, sidebar

DEFAULT_MIN_N = 10
SLICE_HELP = (
    "A slice is one value of this column: dataset, query type, answer-set size bucket "
    "(n_gold_bucket: number of relevant documents), split, query length (words, quartiles) "
    "or a metadata column of the queries file. Missing values form the slice '(missing)'."
)


@st.cache_data(show_spinner=False, max_entries=64)
def _summary(rows: pd.DataFrame, metric: str, column: str, models: tuple[str, ...]) -> pd.DataFrame:
    return slice_summary(rows, metric, column, list(models))


@st.cache_data(show_spinner=False, max_entries=64)
def _worst(
    rows: pd.DataFrame, metric: str, model: str, columns: tuple[str, ...], min_n: int
) -> pd.DataFrame:
    return worst_slices(rows, metric, model, list(columns), min_size=min_n)


def _keep_in_url(key: str, param: str, encode: Callable[[object], str]) -> Callable[[], None]:
    """on_change callback: write the widget's new value to the page-local URL parameter."""

    def on_change() -> None:
        set_local_param(param, encode(st.session_state[key]))

    return on_change


def _parse_min_n(raw: str | None) -> int:
    try:
        value = int(raw) if raw is not None else DEFAULT_MIN_N
    except ValueError:
        return DEFAULT_MIN_N
    return value if value >= 1 else DEFAULT_MIN_N


st.set_page_config(page_title="Slices", layout="wide")
sel = sidebar()

st.title("Slices")
widgets.require_datasets(sel)

table, _warnings, errors = data.per_query(sel.bundle, sel.datasets, sel.ties, sel.split)
widgets.show_errors(errors)
metric = sel.metric
if table.empty or metric not in table.columns:
    st.info("No per-query results for the selected datasets and metric.")
    st.stop()
columns = slice_columns(table)
if not columns:
    st.info("The selected datasets have no slice column.")
    st.stop()

present = set(map(str, table["model"].unique()))
all_models = [m for m in data.models_of(sel.bundle, sel.datasets) if m in present]
all_models += sorted(present - set(all_models))

# Page-local choices: the URL is the source of truth; invalid values fall back to defaults.
raw_slice = local_param("slice")
column = raw_slice if raw_slice in columns else str(default_slice_column(table, columns))
raw_models = local_param("models")
wanted = set((raw_models or "").split(","))
chosen = [m for m in all_models if m in wanted]
# absent or only unknown names: all models; an explicit empty value: none (the user cleared it)
models = chosen if chosen or raw_models == "" else all_models
min_n = _parse_min_n(local_param("min_n"))

st.session_state["slices_column"] = column
st.session_state["slices_models"] = models
st.session_state["slices_min_n"] = min_n
set_local_param("slice", column)
set_local_param("models", ",".join(models))
set_local_param("min_n", str(min_n))

left, right = st.columns([1, 3])
left.selectbox(
    "Slice by",
    columns,
    key="slices_column",
    on_change=_keep_in_url("slices_column", "slice", str),
    help=SLICE_HELP,
)
right.multiselect(
    "Models",
    all_models,
    key="slices_models",
    on_change=_keep_in_url("slices_models", "models", lambda v: ",".join(v)),  # type: ignore[arg-type]
    help="Models drawn side by side (default: every model of the selected datasets). "
    "A model only counts the queries of the datasets it has a run for.",
)
selected = list(st.session_state["slices_models"])

metric_help = widgets.metric_help(sel.measure)
st.subheader(
    "Mean per slice",
    help=f"{metric_help} Bars: mean over the queries of the slice (queries missing from a "
    "run count as 0); error bars: seeded 95% percentile bootstrap CI; n in the hover.",
)
st.caption(f"Metric {metric}. " + metric_help)
if not selected:
    st.info("Select at least one model to draw the slice charts.")
else:
    summary = _summary(table[["model", metric, column]], metric, column, tuple(selected))
    if summary.empty:
        st.info("No query of the selected models has a value for this metric.")
    else:
        st.plotly_chart(
            slice_bar_figure(summary, metric, column, selected), key="slices_bars", width="stretch"
        )
        st.subheader(
            "Heatmap: model × slice",
            help=f"{metric_help} Each cell is the mean of the metric for one model on one "
            "slice; the hover adds the 95% CI and n. Blank: the model has no query there.",
        )
        st.plotly_chart(
            slice_heatmap_figure(summary, metric, column, selected),
            key="slices_heatmap",
            width="stretch",
        )
        with st.expander("Table of slice means", expanded=False):
            st.dataframe(
                summary,
                hide_index=True,
                width="stretch",
                key="slices_table",
                column_config={
                    "value": st.column_config.TextColumn("slice value"),
                    "mean": st.column_config.NumberColumn(
                        f"mean {metric}", format="%.3f", help=metric_help
                    ),
                    "ci_low": st.column_config.NumberColumn("95% CI low", format="%.3f"),
                    "ci_high": st.column_config.NumberColumn("95% CI high", format="%.3f"),
                    "n": st.column_config.NumberColumn("n", help="Queries in the slice."),
                },
            )

st.subheader(
    "Worst slices first (model A)",
    help="Every slice of every slice column with at least the minimum number of queries, "
    "sorted by gap = slice mean − model A's overall mean (most negative first). 'below': the "
    "whole 95% CI lies under the overall mean (a screening flag, not a test). " + metric_help,
)
st.number_input(
    "Minimum slice size",
    min_value=1,
    step=1,
    key="slices_min_n",
    on_change=_keep_in_url("slices_min_n", "min_n", lambda v: str(int(v))),  # type: ignore[arg-type]
    help="Slices with fewer queries are left out of the worst-slices table (small slices "
    "have wide CIs).",
)
model_a = sel.model_a
if model_a is None or model_a not in present:
    st.info("Model A has no run on the selected datasets.")
    st.stop()
st.text(f"Model A: {model_a}")
keep = list(dict.fromkeys(["model", "dataset", "query_id", metric, *columns]))
rows_a = table.loc[table["model"] == model_a, keep]
worst = _worst(rows_a, metric, model_a, tuple(columns), min_n)
if worst.empty:
    st.info("No slice has at least the minimum number of queries.")
else:
    st.dataframe(
        worst,
        hide_index=True,
        width="stretch",
        key="slices_worst",
        column_config={
            "slice": st.column_config.TextColumn("slice column"),
            "value": st.column_config.TextColumn("slice value"),
            "n": st.column_config.NumberColumn("n", help="Queries of model A in the slice."),
            "mean": st.column_config.NumberColumn(
                f"mean {metric}", format="%.3f", help=metric_help
            ),
            "ci_low": st.column_config.NumberColumn("95% CI low", format="%.3f"),
            "ci_high": st.column_config.NumberColumn("95% CI high", format="%.3f"),
            "overall": st.column_config.NumberColumn(
                "overall mean", format="%.3f", help="Model A's mean over all its queries."
            ),
            "gap": st.column_config.NumberColumn(
                "gap", format="%+.3f", help="Slice mean − overall mean."
            ),
            "below": st.column_config.CheckboxColumn(
                "CI below overall", help="The whole 95% CI lies under the overall mean."
            ),
        },
    )
