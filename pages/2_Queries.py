"""Queries: browse the queries model A fails, and inspect one (text, gold, ranked list).

Page-local URL parameters: ``max`` (metric threshold, default "< 1"), ``slice`` and ``values``
(slice filter), ``tie_only=1``, ``missing=1``, ``q``/``qd`` (the selected query and its dataset),
``top`` (length of the ranked list, default 20). Only non-default values are written.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from analysis.core.errors import InputError
from analysis.present.rankings import gold_table, ranking_table
from analysis.stats import failures
from analysis.stats.perquery import slice_columns
from ui import data, widgets
from ui.state import local_param, set_local_param, sidebar

st.set_page_config(page_title="Queries", layout="wide")
sel = sidebar()

TABLE_KEY = "failures"
LAST_SELECTION = "_queries_last_selection"
WRITTEN = "_queries_url_written"
NO_SLICE = "(none)"
HIGHLIGHT_ROWS = 100


def url_widget(key: str, name: str, parse: Callable[[str | None], object], default: object) -> None:
    """Seed widget ``key`` from the page-local URL parameter ``name`` when the widget has no
    state yet (first run, back from another page) or the URL changed behind our back (a deep
    link, Back/Forward); invalid or absent values give ``default``."""
    raw = local_param(name)
    written = st.session_state.setdefault(WRITTEN, {})
    if key not in st.session_state or raw != written.get(name):
        value = parse(raw) if raw is not None else None
        st.session_state[key] = default if value is None else value


@st.cache_resource(max_entries=8, show_spinner=False)
def entity_lookup(key: int, _entities: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
    """The doc id index of an entity table, built once. ``key`` is ``id(_entities)``; the entry
    keeps a reference to the table, so the id cannot be reused by another table meanwhile."""
    del key
    return _entities, failures.entity_index(_entities)


def write_param(name: str, value: str | None) -> None:
    """Write a page-local URL parameter (``None`` removes it) and remember what was written."""
    set_local_param(name, value)
    st.session_state.setdefault(WRITTEN, {})[name] = value


st.title("Failing queries")
widgets.require_datasets(sel)

table, _warnings, errors = data.per_query(sel.bundle, sel.datasets, sel.ties, sel.split)
widgets.show_errors(errors)
if table.empty:
    st.info("No per-query results for the selected datasets.")
    st.stop()
if sel.model_a is None:
    st.info("The selected datasets have no run: add one on the Home page.")
    st.stop()

metric = sel.metric
metric_help = widgets.metric_help(sel.measure)
rows = failures.model_rows(table, sel.model_a)
if rows.empty or metric not in rows.columns:
    st.info("Model A has no per-query results for this metric on the selected datasets.")
    st.stop()
lacking = sorted(set(sel.datasets) - set(rows["dataset"].unique().tolist()) - set(errors))
if lacking:
    st.caption(f"Model A has no run on {len(lacking)} of the selected datasets.")

# ---------------------------------------------------------------------------------- filters

slices = [NO_SLICE, *slice_columns(rows)]
url_widget("queries_max", "max", failures.parse_threshold, failures.FAILURES)
url_widget("queries_slice", "slice", lambda raw: raw if raw in slices else None, NO_SLICE)
url_widget("queries_tie_only", "tie_only", failures.parse_flag, False)
url_widget("queries_missing", "missing", failures.parse_flag, False)

c_max, c_slice, c_values, c_flags = st.columns([2, 2, 3, 2])
max_value = c_max.select_slider(
    f"{metric} at most",
    options=list(failures.THRESHOLDS),
    format_func=failures.threshold_label,
    key="queries_max",
    help=f"Lists model A's queries whose {metric} is at most this value; '< 1 (failures)', the "
    f"default, lists every query below a perfect score. {metric_help}",
)
slice_column = c_slice.selectbox(
    "Slice",
    slices,
    key="queries_slice",
    help="Keep only the queries of some values of a slice column (query type, answer-set size "
    "bucket, split, metadata).",
)
options = failures.slice_options(rows, None if slice_column == NO_SLICE else slice_column)
url_widget("queries_values", "values", lambda raw: failures.parse_values(raw, options) or None, [])
st.session_state["queries_values"] = [v for v in st.session_state["queries_values"] if v in options]
slice_values = c_values.multiselect(
    "Values",
    options,
    key="queries_values",
    disabled=slice_column == NO_SLICE,
    help="The slice values to keep (none selected: all).",
)
tie_only = c_flags.checkbox(
    "Only tie-sensitive",
    key="queries_tie_only",
    help=f"Queries whose {metric} changes with the order of equal scores (its best and worst "
    "value over all tie orders differ).",
)
missing_only = c_flags.checkbox(
    "Only missing from run",
    key="queries_missing",
    help="Queries of the qrels that model A's run has no line for (they score 0 on every "
    "metric, as trec_eval -c).",
)
write_param("max", None if max_value == failures.FAILURES else failures.format_threshold(max_value))
write_param("slice", None if slice_column == NO_SLICE else slice_column)
write_param(
    "values",
    failures.format_values(slice_values) if slice_column != NO_SLICE and slice_values else None,
)
write_param("tie_only", "1" if tie_only else None)
write_param("missing", "1" if missing_only else None)

view = failures.failing_queries(
    rows,
    metric,
    max_value=max_value,
    slice_column=None if slice_column == NO_SLICE else slice_column,
    slice_values=slice_values,
    tie_only=tie_only,
    missing_only=missing_only,
)

# ---------------------------------------------------------------- selection <-> URL (q, qd)

state = st.session_state.get(TABLE_KEY)
current = failures.selection_rows(state)
last = st.session_state.get(LAST_SELECTION)
if current is not None and last is not None and current != last:
    # the user changed the selection: the rows refer to this table (same filters as last run)
    picked = failures.selected_query(view, current)
    if picked is not None:
        write_param("qd", picked[0])
        write_param("q", picked[1])
    else:
        write_param("qd", None)
        write_param("q", None)

link_q, link_qd = local_param("q"), local_param("qd")
chosen = failures.resolve_query(rows, link_q, link_qd)
if chosen is not None and link_qd != chosen[0]:
    write_param("qd", chosen[0])
position = failures.row_of(view, *chosen) if chosen is not None else None
wanted = [position] if position is not None else []
if current != wanted:
    # keep the table's highlighted row in step with the query shown (deep link, new filters)
    st.session_state[TABLE_KEY] = {"selection": {"rows": wanted, "columns": [], "cells": []}}
st.session_state[LAST_SELECTION] = wanted

# ---------------------------------------------------------------------------------- table

st.caption(
    f"{len(view)} of {len(rows)} queries of model A pass the filters, worst first. "
    "Select a row to inspect the query."
)
if view.empty:
    st.info("No query matches these filters.")
else:
    st.dataframe(
        view,
        hide_index=True,
        width="stretch",
        height=min(420, 38 + 35 * len(view)),
        key=TABLE_KEY,
        on_select="rerun",
        selection_mode="single-row",
        column_config={
            "text": st.column_config.TextColumn("text", width="medium"),
            metric: st.column_config.NumberColumn(metric, format="%.3f", help=metric_help),
            f"{metric}_min": st.column_config.NumberColumn(
                f"{metric}_min", format="%.3f", help="Worst value over all orders of tied scores."
            ),
            f"{metric}_max": st.column_config.NumberColumn(
                f"{metric}_max", format="%.3f", help="Best value over all orders of tied scores."
            ),
            "n_gold": st.column_config.NumberColumn("n_gold", help="Relevant documents."),
            "first_gold_rank": st.column_config.NumberColumn(
                "first_gold_rank", help="Rank of the first relevant document (empty: none)."
            ),
            "flags": st.column_config.TextColumn("flags", help="Diagnostics of the query."),
        },
    )

# ---------------------------------------------------------------------------------- detail

if link_q and chosen is None:
    st.warning("The query of the link (q) is not among model A's queries of these datasets.")
if chosen is None:
    st.stop()

dataset_name, query_id = chosen
row = failures.query_row(rows, dataset_name, query_id)
if row is None:  # resolve_query found it, so this cannot happen; stay safe
    st.stop()
st.divider()
st.subheader("Query")
st.code(str(row.get("text", "")), language=None, wrap_lines=True)

value = float(row[metric])
lo, hi = row.get(f"{metric}_min", value), row.get(f"{metric}_max", value)
first = row.get("first_gold_rank")
m1, m2, m3, m4 = st.columns(4)
m1.metric(metric, f"{value:.3f}", help=metric_help)
m2.metric(
    "Tie range",
    f"{float(lo):.3f} – {float(hi):.3f}",
    help=f"Worst and best {metric} over all orders of tied scores.",
)
m3.metric(
    "First gold rank",
    "none" if first is None or pd.isna(first) else str(int(first)),
    help="Rank of the first relevant document in model A's whole list (MRR = 1 / this rank).",
)
m4.metric("Gold documents", str(int(row.get("n_gold", 0))), help="Relevant documents (qrels).")

spec = sel.bundle.datasets[dataset_name]
if spec.family == "spatial":
    st.info("This is a spatial dataset: the Map page shows this query on a map.")

try:
    ds = data.dataset(sel.bundle, dataset_name)
    ranked = data.ranked_run(sel.bundle, dataset_name, sel.model_a, sel.ties)
except (InputError, OSError) as exc:
    st.error(widgets.escape_markdown(f"Dataset {dataset_name} could not be loaded: {exc}"))
    st.stop()
ranking = failures.query_ranking(ranked, query_id)
qrels = failures.query_qrels(ds.qrels, query_id)
entities = None
if ds.entities is not None:
    index = entity_lookup(id(ds.entities), ds.entities)[1]
    needed = pd.concat([qrels["doc_id"], ranking["doc_id"]], ignore_index=True)
    entities = failures.entities_for(ds.entities, index, needed)

left, right = st.columns([1, 2])
with left:
    st.subheader("Metadata")
    meta = failures.query_metadata(row, metric, [c for c in slices if c != NO_SLICE])
    st.dataframe(
        meta, hide_index=True, width="stretch", height=38 + 35 * len(meta), key="query_meta"
    )
with right:
    st.subheader("Gold documents")
    gold = gold_table(qrels, entities, query_id, threshold=spec.relevance_threshold)
    if gold.empty:
        st.info("This query has no relevant document in the qrels.")
    else:
        st.dataframe(
            failures.gold_with_ranks(gold, ranking),
            hide_index=True,
            width="stretch",
            key="gold",
            column_config={
                "rank": st.column_config.NumberColumn(
                    "rank", help="Rank in model A's whole list (empty: not retrieved)."
                ),
                "text": st.column_config.TextColumn("text", width="large"),
            },
        )

st.subheader("Model A's ranked list")
url_widget("queries_top", "top", failures.parse_top, failures.DEFAULT_TOP)
top = st.columns([1, 4])[0].number_input(
    "Top N",
    min_value=1,
    max_value=failures.MAX_TOP,
    step=10,
    key="queries_top",
    help="How many of model A's top-ranked documents to list.",
)
write_param("top", None if top == failures.DEFAULT_TOP else str(int(top)))
listing = ranking_table(
    ranking, qrels, entities, query_id, top=int(top), threshold=spec.relevance_threshold
)
if listing.empty:
    st.info("Model A returned no document for this query.")
else:
    n_gold_top = int(listing["gold"].sum())
    where = "none retrieved" if first is None or pd.isna(first) else f"rank {int(first)}"
    st.caption(
        f"{n_gold_top} gold document(s) in the top {len(listing)} (ticked in the gold column); "
        f"first gold: {where}. 'tied' marks scores shared with another document."
    )
    # gold rows highlighted (a Styler costs ~1 ms per 10 rows: only for short lists)
    styled = (
        listing.style.apply(
            lambda r: ["background-color: rgba(33, 195, 84, 0.18)" if r["gold"] else ""] * len(r),
            axis=1,
        )
        if len(listing) <= HIGHLIGHT_ROWS
        else listing
    )
    st.dataframe(
        styled,
        hide_index=True,
        width="stretch",
        height=38 + 35 * min(len(listing), 20),
        key="ranking",
        column_config={
            "gold": st.column_config.CheckboxColumn("gold", help="Relevant per the qrels."),
            "tied": st.column_config.CheckboxColumn(
                "tied", help="Its score equals another listed document's score."
            ),
            "score": st.column_config.NumberColumn("score", format="%.4f"),
            "text": st.column_config.TextColumn("text", width="large"),
        },
    )
