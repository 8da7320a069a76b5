"""Slices: the selected metric by slice (query type, answer-set size bucket, split, query
length, any metadata column) with 95% bootstrap CIs, models side by side as horizontal bars; a
slice x model heatmap scaled to the data; and the slices where model A does worst.

One minimum slice size applies to every chart and table; beyond the top N values (by queries)
the rest is one "(other)" slice. Page-local URL parameters: ``slice``, ``models``
(comma-separated; absent = all, empty = none), ``sort`` (natural/size/value), ``top``,
``min_n``.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from analysis.present import paper_figures, slicing
from analysis.present.compare import lists_for_json
from analysis.present.notices import no_slice_message
from analysis.stats import failures
from analysis.stats.perquery import slice_columns
from ui import cards, data, jobs, paper, widgets
from ui.lazy import lazy_expander
from ui.state import sidebar
from ui.urlstate import url_widget, write_param

DEFAULT_MIN_N, DEFAULT_TOP = 10, 15
SLICE_HELP = (
    "A slice is one value of this column: query type, answer-set size bucket (n_gold_bucket: "
    "number of relevant documents), split, query length (words; characters for Chinese text), "
    "distance buckets (POIs) or a metadata column of the queries file. Missing, empty and "
    "'none' values form the slice '(missing)'."
)
TOP_HELP = "The N values with the most queries; the others form one '(other)' slice."
MIN_HELP = "Slices with fewer queries are left out of every chart and table here."
SORT_LABELS = {"natural": "natural order", "size": "size (most queries first)",
               "value": "value (model A's lowest first)"}  # fmt: skip


def _int(low: int, high: int):
    def parse(raw: str | None) -> int | None:
        try:
            value = int(raw or "")
        except ValueError:
            return None
        return value if low <= value <= high else None

    return parse


@st.cache_resource(max_entries=256, show_spinner="Bootstrapping slice means…")
def _summary(
    key: tuple, metric: str, column: str, models: tuple[str, ...], top: int, min_n: int,
    _table: pd.DataFrame,
) -> pd.DataFrame:  # fmt: skip
    wanted = dict.fromkeys(("dataset", "query_id", "model", metric, column))
    rows = _table[[c for c in wanted if c in _table.columns]]
    return slicing.slice_summary(rows, metric, column, list(models), top_n=top, min_size=min_n)


@st.cache_resource(max_entries=64, show_spinner=False)
def _figures(
    key: tuple, metric: str, column: str, colours: tuple[tuple[str, str], ...], top: int,
    min_n: int, sort: str, anchor: str, _summary: pd.DataFrame,
) -> tuple[list[str], dict, dict]:  # fmt: skip
    """Slice order and both figures as (read-only, shared) dicts, built once per choice;
    ``colours``: the selected models, in order, with their colours."""
    order = slicing.slice_order(_summary, sort, anchor)
    models = [m for m, _ in colours]
    bars = slicing.slice_bar_figure(_summary, metric, column, models, order, colours=dict(colours))
    heat = slicing.slice_heatmap_figure(_summary, metric, column, models, order)
    return order, lists_for_json(bars.to_dict()), lists_for_json(heat.to_dict())


@st.cache_resource(max_entries=16, show_spinner=False)
def _columns(key: tuple, _table: pd.DataFrame) -> tuple[list[str], str]:
    """The slice columns of the dataset's table (one dataset: no ``dataset`` column) and the
    default one, computed once per table."""
    columns = [c for c in slice_columns(_table) if c != "dataset"]
    return columns, str(slicing.default_slice_column(_table, columns)) if columns else ""


@st.cache_resource(max_entries=64, show_spinner="Finding model A's worst slices…")
def _worst(
    key: tuple, metric: str, model: str, columns: tuple[str, ...], min_n: int,
    _table: pd.DataFrame,
) -> pd.DataFrame:  # fmt: skip
    keep = list(dict.fromkeys(["model", "dataset", "query_id", metric, *columns]))
    rows = _table.loc[_table["model"] == model, keep]
    return slicing.worst_slices(rows, metric, model, list(columns), min_size=min_n)


st.set_page_config(page_title="Slices", layout="wide")
sel = sidebar()
st.title("Slices")
widgets.require_datasets(sel)
widgets.require_runs(sel, "pages/1_Slices.py")

table, _warnings, errors = jobs.need(
    "Computing the per-query table", data.per_query, sel.bundle, sel.datasets, sel.ties,
    sel.split,
)  # fmt: skip
widgets.show_errors(errors)
metric = sel.metric
if table.empty or metric not in table.columns:
    st.info("No per-query results for the selected dataset and metric.")
    st.stop()
key = data.fingerprint(sel.bundle, sel.datasets, sel.ties, sel.split)
columns, default_column = _columns(key, table)
if not columns:
    st.info("The selected dataset has no slice column.")
    st.stop()
present = set(map(str, table["model"].unique()))
all_models = [m for m in data.models_of(sel.bundle, sel.datasets) if m in present]
all_models += sorted(present - set(all_models))


def _controls(columns: list[str], default_column: str, all_models: list[str]) -> tuple:
    """The controls (seeded from the URL, written back): column, models, sort, top N, min n."""

    def models_of_url(raw: str | None) -> list[str] | None:
        if raw is None:
            return None
        named = set(failures.parse_values(raw, all_models))  # a name may hold commas
        chosen = [m for m in all_models if m in named]
        return chosen if chosen or raw == "" else None  # only unknown names: all models

    url_widget("slices_column", "slice", lambda r: r if r in columns else None, default_column)
    url_widget("slices_models", "models", models_of_url, all_models)
    url_widget("slices_sort", "sort", lambda r: r if r in slicing.SORTS else None, "natural")
    url_widget("slices_top", "top", _int(1, 500), DEFAULT_TOP)
    url_widget("slices_min_n", "min_n", _int(1, 10**9), DEFAULT_MIN_N)
    c1, c2 = st.columns([1, 3])
    column = c1.selectbox("Slice by", columns, key="slices_column", help=SLICE_HELP)
    selected = c2.multiselect(
        "Models", all_models, key="slices_models",
        help="Models drawn side by side (default: every model with a run on the dataset).",
    )  # fmt: skip
    c1, c2, c3 = st.columns(3)
    sort = c1.selectbox("Sort slices by", list(slicing.SORTS), key="slices_sort",
                        format_func=SORT_LABELS.get)  # fmt: skip
    top = int(c2.number_input("Top N values", 1, 500, key="slices_top", help=TOP_HELP))
    min_n = int(c3.number_input("Minimum slice size", 1, key="slices_min_n", help=MIN_HELP))
    write_param("slice", None if column == default_column else column)
    write_param("models", None if selected == all_models else ",".join(selected))
    write_param("sort", None if sort == "natural" else sort)
    write_param("top", None if top == DEFAULT_TOP else str(top))
    write_param("min_n", None if min_n == DEFAULT_MIN_N else str(min_n))
    return column, selected, sort, top, min_n


def _charts(
    table: pd.DataFrame, key: tuple, column: str, selected: list[str], sort: str, top: int,
    min_n: int,
) -> None:  # fmt: skip
    """The bars and the heatmap of the slice means (and their table)."""
    metric_help = widgets.metric_help(sel.metric)
    st.subheader(
        "Mean per slice",
        help=f"{metric_help} Bars: mean over the queries of the slice (queries missing from a "
        "run count as 0); error bars: seeded 95% percentile bootstrap CI; n in the hover.",
    )
    where = f"{sel.dataset} ({sel.split})" if sel.split else str(sel.dataset)
    st.caption(widgets.escape_markdown(f"Metric {metric} on {where}."))
    cards.about(metric, key="slices_about_metric")
    if not selected:
        st.info("Select at least one model to draw the slice charts.")
        return
    summary = jobs.need(
        "Bootstrapping slice means", _summary, key, metric, column, tuple(selected), top, min_n,
        _table=table,
    )  # fmt: skip
    for other in columns:  # the page's slice columns: the next choice of column is ready
        if other != column:
            jobs.prefetch(_summary, key, metric, other, tuple(selected), top, min_n, _table=table)
    if summary.empty:
        largest = slicing.largest_slice(table, metric, selected, [column])
        st.info(widgets.escape_markdown(no_slice_message(column, min_n, largest)))
        return
    anchor = str(sel.model_a if sel.model_a in selected else selected[0])
    colours = tuple(paper.bundle_colours(sel.bundle, selected).items())
    order, bars, heat = _figures(key, metric, column, colours, top, min_n, sort, anchor, summary)
    st.plotly_chart(widgets.plotly_figure(bars), key="slices_bars", width="stretch")
    shown = (key, metric, column, tuple(selected), top, min_n, sort, anchor)
    chart = paper_figures.SliceChart(
        summary, metric, column, order, str(sel.dataset), min_n, dict(colours)
    )
    stem = paper.file_stem(sel.bundle_id, sel.dataset, metric, column)
    paper.export_control(
        "slices_bars", shown, f"{stem}_bars", lambda: paper_figures.slice_bars_paper(chart)
    )
    st.subheader(
        "Heatmap: slice × model",
        help=f"{metric_help} Each cell is the mean of one model on one slice; the colour "
        "scale spans the shown means (not 0–1). The hover adds the 95% CI and n.",
    )
    st.plotly_chart(widgets.plotly_figure(heat), key="slices_heatmap", width="stretch")
    paper.export_control(
        "slices_heatmap", shown, f"{stem}_heatmap", lambda: paper_figures.slice_heatmap_paper(chart)
    )
    box = lazy_expander("Table of slice means", "slices_table_open")
    if box is not None:
        box.dataframe(
            summary, hide_index=True, width="stretch", key="slices_table",
            column_config={
                "value": st.column_config.TextColumn("slice value", width="large"),
                "mean": st.column_config.NumberColumn(f"mean {metric}", format="%.3f"),
                "ci_low": st.column_config.NumberColumn("95% CI low", format="%.3f"),
                "ci_high": st.column_config.NumberColumn("95% CI high", format="%.3f"),
                "n": st.column_config.NumberColumn("n", help="Queries in the slice."),
            },
        )  # fmt: skip


def _worst_table(
    table: pd.DataFrame, key: tuple, columns: list[str], present: set[str], min_n: int
) -> None:
    """Model A's worst slices over every slice column."""
    st.subheader(
        "Worst slices first (model A)",
        help="Every value of every slice column with at least the minimum slice size, sorted by "
        "gap = slice mean − model A's overall mean (most negative first). 'below': the whole 95% "
        "CI lies under the overall mean (a screening flag, not a test). "
        + widgets.metric_help(sel.metric),
    )
    model_a = sel.model_a
    if model_a is None or model_a not in present:
        st.info("Model A has no run on the selected dataset.")
        return
    st.text(f"Model A: {model_a}")
    worst = jobs.need(
        "Finding model A's worst slices", _worst, key, metric, model_a, tuple(columns), min_n,
        _table=table,
    )  # fmt: skip
    if worst.empty:
        largest = slicing.largest_slice(table, metric, [model_a], columns)
        st.info(widgets.escape_markdown(no_slice_message(None, min_n, largest)))
        return
    st.dataframe(
        worst, hide_index=True, width="stretch", key="slices_worst",
        column_config={
            "slice": st.column_config.TextColumn("slice column"),
            "value": st.column_config.TextColumn("slice value", width="large"),
            "n": st.column_config.NumberColumn("n", help="Queries of model A in the slice."),
            "mean": st.column_config.NumberColumn(f"mean {metric}", format="%.3f"),
            "ci_low": st.column_config.NumberColumn("95% CI low", format="%.3f"),
            "ci_high": st.column_config.NumberColumn("95% CI high", format="%.3f"),
            "overall": st.column_config.NumberColumn("overall mean", format="%.3f"),
            "gap": st.column_config.NumberColumn("gap", format="%+.3f",
                                                 help="Slice mean − overall mean."),
            "below": st.column_config.CheckboxColumn(
                "CI below overall", help="The whole 95% CI lies under the overall mean."),
        },
    )  # fmt: skip


@st.fragment
def slices_view(
    table: pd.DataFrame, key: tuple, columns: list[str], default_column: str,
    all_models: list[str], present: set[str],
) -> None:  # fmt: skip
    """Everything below the sidebar. A fragment: changing a control here reruns only this part,
    not the sidebar and the loading of the per-query table."""
    column, selected, sort, top, min_n = _controls(columns, default_column, all_models)
    with jobs.section():
        _charts(table, key, column, selected, sort, top, min_n)
    with jobs.section():
        _worst_table(table, key, columns, present, min_n)


slices_view(table, key, columns, default_column, all_models, present)
