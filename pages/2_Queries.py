"""Queries: browse the queries model A fails (a full-height list with search), and inspect one:
its text, gold documents and model A's ranked list with the query's terms highlighted, gold
rows marked, first-gold rank, and for POIs the distance to the query and twin / stack marks;
previous / next without going back to the list.

Page-local URL parameters: ``search``, ``max`` (metric threshold, default "< 1"), ``slice`` and
``values`` (slice filter), ``tie_only=1``, ``missing=1``, ``q``/``qd`` (the selected query and
its dataset), ``top`` (length of the ranked list, default 20). Only non-default values are
written.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from analysis.core.errors import InputError
from analysis.present import querydetail
from analysis.present.notices import no_text_note
from analysis.present.rankings import gold_table, ranking_table
from analysis.stats import failures
from ui import data, jobs, queries, widgets
from ui.annotations import annotation_panel
from ui.lazy import lazy_expander
from ui.state import sidebar
from ui.urlstate import local_param, url_widget, write_param

st.set_page_config(page_title="Queries", layout="wide")
sel = sidebar()

TABLE_KEY = "failures"
LAST_SELECTION = "_queries_last_selection"
NO_SLICE = "(none)"
LIST_HEIGHT = 760


def _go(target: tuple[str, str] | None) -> None:
    if target is not None:
        write_param("qd", target[0])
        write_param("q", target[1])


st.title("Failing queries")
widgets.require_datasets(sel)
widgets.require_runs(sel, "pages/2_Queries.py")
table, _warnings, errors = jobs.need(
    "Computing the per-query table", data.per_query, sel.bundle, sel.datasets, sel.ties,
    sel.split,
)  # fmt: skip
widgets.show_errors(errors)
if table.empty:
    st.info("No per-query results for the selected dataset.")
    st.stop()
metric = sel.metric
metric_help = widgets.metric_help(sel.metric)
fp = data.fingerprint(sel.bundle, sel.datasets, sel.ties, sel.split)
rows, row_slices = queries.model_rows(fp, sel.model_a, table)
if rows.empty or metric not in rows.columns:
    st.info("Model A has no per-query results for this metric on the selected dataset.")
    st.stop()

# ---------------------------------------------------------------------------------- filters
slices = [NO_SLICE, *row_slices]
url_widget("queries_search", "search", lambda raw: raw, "")
url_widget("queries_max", "max", failures.parse_threshold, failures.FAILURES)
url_widget("queries_slice", "slice", lambda raw: raw if raw in slices else None, NO_SLICE)
url_widget("queries_tie_only", "tie_only", failures.parse_flag, False)
url_widget("queries_missing", "missing", failures.parse_flag, False)

c_search, c_max, c_slice, c_values, c_flags = st.columns([3, 2, 2, 3, 2])
search = c_search.text_input(
    "Search", key="queries_search", placeholder="query text or id",
    help="Keeps the queries whose id or text contains this (case-insensitive, literal).",
)  # fmt: skip
max_value = c_max.select_slider(
    f"{metric} at most", options=list(failures.THRESHOLDS), format_func=failures.threshold_label,
    key="queries_max",
    help=f"Lists model A's queries whose {metric} is at most this value; '< 1 (failures)', the "
    f"default, lists every query below a perfect score. {metric_help}",
)  # fmt: skip
slice_column = c_slice.selectbox(
    "Slice", slices, key="queries_slice",
    help="Keep only the queries of some values of a slice column.",
)  # fmt: skip
options = failures.slice_options(rows, None if slice_column == NO_SLICE else slice_column)
url_widget("queries_values", "values", lambda raw: failures.parse_values(raw, options) or None, [])
st.session_state["queries_values"] = [v for v in st.session_state["queries_values"] if v in options]
slice_values = c_values.multiselect(
    "Values", options, key="queries_values", disabled=slice_column == NO_SLICE,
    help="The slice values to keep (none selected: all).",
)  # fmt: skip
tie_only = c_flags.checkbox(
    "Only tie-sensitive", key="queries_tie_only",
    help=f"Queries whose {metric} changes with the order of equal scores.",
)  # fmt: skip
missing_only = c_flags.checkbox(
    "Only missing from run", key="queries_missing",
    help="Queries of the qrels that model A's run has no line for (they score 0).",
)  # fmt: skip
write_param("search", search.strip() or None)
write_param("max", None if max_value == failures.FAILURES else failures.format_threshold(max_value))
write_param("slice", None if slice_column == NO_SLICE else slice_column)
write_param(
    "values",
    failures.format_values(slice_values) if slice_column != NO_SLICE and slice_values else None,
)
write_param("tie_only", "1" if tie_only else None)
write_param("missing", "1" if missing_only else None)

filters = (max_value, None if slice_column == NO_SLICE else slice_column, tuple(slice_values),
           tie_only, missing_only, search)  # fmt: skip
view = queries.failing(fp, sel.model_a, metric, filters, rows)
data.prefetch_ranked(sel.bundle, str(sel.dataset), sel.model_a, sel.ties)  # for the detail


def _sync_selection(
    listed: pd.DataFrame, rows: pd.DataFrame
) -> tuple[tuple[str, str] | None, str | None]:
    """The query to show: the list's selection goes to the URL (``q``, ``qd``) when the user
    changed it, then the URL decides (a deep link, Back/Forward), and the list's highlighted
    row follows. Returns the ``(dataset, query id)`` shown (``None``: none) and the link's
    ``q``."""
    state = st.session_state.get(TABLE_KEY)
    current = failures.selection_rows(state)
    last = st.session_state.get(LAST_SELECTION)
    if current is not None and last is not None and current != last:
        picked = failures.selected_query(listed, current)  # the user changed the selection
        write_param("qd", picked[0] if picked else None)
        write_param("q", picked[1] if picked else None)

    link_q, link_qd = local_param("q"), local_param("qd")
    chosen = failures.resolve_query(rows, link_q, link_qd)
    if chosen is not None and link_qd != chosen[0]:
        write_param("qd", chosen[0])
    position = failures.row_of(listed, *chosen) if chosen is not None else None
    wanted = [position] if position is not None else []
    if current != wanted:
        # keep the list's highlighted row in step with the query shown (deep link, new filters)
        st.session_state[TABLE_KEY] = {"selection": {"rows": wanted, "columns": [], "cells": []}}
    st.session_state[LAST_SELECTION] = wanted
    return chosen, link_q


def _query_list(listed: pd.DataFrame, view: pd.DataFrame, rows: pd.DataFrame) -> None:
    """The list of the queries that pass the filters (a selectable table), worst first."""
    note = queries.list_note(len(listed), len(view))
    st.caption(f"{len(view)} of {len(rows)} queries of model A pass the filters, worst first. "
               f"Select a row to inspect the query.{note}")  # fmt: skip
    if view.empty:
        st.info("No query matches these filters.")
        return
    st.dataframe(
        listed, hide_index=True, width="stretch", height=LIST_HEIGHT, key=TABLE_KEY,
        on_select="rerun", selection_mode="single-row",
        column_config={
            "dataset": None,
            "text": st.column_config.TextColumn("text", width="large"),
            metric: st.column_config.NumberColumn(metric, format="%.3f", help=metric_help),
            f"{metric}_min": None,
            f"{metric}_max": None,
            "n_gold": st.column_config.NumberColumn("n_gold", help="Relevant documents."),
            "first_gold_rank": st.column_config.NumberColumn(
                "first gold", help="Rank of the first relevant document (empty: none)."),
            "flags": st.column_config.TextColumn("flags", help="Diagnostics of the query."),
        },
    )  # fmt: skip


def _query_header(view: pd.DataFrame, row: pd.Series, chosen: tuple[str, str]) -> None:
    """Previous / Next, the query's id and text, and its key numbers."""
    dataset_name, query_id = chosen
    before, after = failures.neighbours(view, dataset_name, query_id)
    b1, b2, b3 = st.columns([1, 1, 3])
    b1.button("← Previous", key="q_prev", disabled=before is None, on_click=_go, args=(before,))
    b2.button("Next →", key="q_next", disabled=after is None, on_click=_go, args=(after,))
    b3.text(f"query id: {query_id}")
    widgets.query_text(str(row.get("text", "")))

    value = float(row[metric])
    lo, hi = row.get(f"{metric}_min", value), row.get(f"{metric}_max", value)
    first = row.get("first_gold_rank")
    m1, m2, m3, m4 = st.columns(4)
    m1.metric(metric, f"{value:.3f}", help=metric_help)
    m2.metric("Tie range", f"{float(lo):.3f} – {float(hi):.3f}",
              help=f"Worst and best {metric} over all orders of tied scores.")  # fmt: skip
    m3.metric("First gold rank", "none" if first is None or pd.isna(first) else str(int(first)),
              help="Rank of the first relevant document in model A's whole list.")  # fmt: skip
    m4.metric("Gold documents", str(int(row.get("n_gold", 0))), help="Relevant documents.")


def _query_data(chosen: tuple[str, str]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame | None]:
    """Model A's ranking of the query, its qrels and the entities of both (``None`` without an
    entity table); a dataset that cannot be loaded stops the page with its error."""
    dataset_name, query_id = chosen
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
        index = queries.entity_lookup(id(ds.entities), ds.entities)[1]
        needed = pd.concat([qrels["doc_id"], ranking["doc_id"]], ignore_index=True)
        entities = failures.entities_for(ds.entities, index, needed)
    return ranking, qrels, entities


def _documents(row: pd.Series, chosen: tuple[str, str]) -> pd.DataFrame:
    """The gold documents and model A's ranked list (top N) of the query, query terms marked
    and, for POIs, distances and twin / stack marks; returns the list drawn."""
    dataset_name, query_id = chosen
    spec = sel.bundle.datasets[dataset_name]
    ranking, qrels, entities = _query_data(chosen)
    terms = querydetail.query_terms(str(row.get("text", "")))
    no_text = no_text_note(spec.family)
    lat, lon = row.get("lat"), row.get("lon")
    located = lat is not None and lon is not None and pd.notna(lat) and pd.notna(lon)
    q_lat, q_lon = (float(lat), float(lon)) if located else (None, None)

    st.subheader("Gold documents")
    gold = gold_table(qrels, entities, query_id, threshold=spec.relevance_threshold)
    if gold.empty:
        st.info("This query has no relevant document in the qrels.")
    else:
        gold = failures.gold_with_ranks(gold, ranking).assign(gold=True)
        gold = querydetail.geo_marks(gold, gold, q_lat, q_lon)
        st.html(widgets.RANKING_CSS + querydetail.ranking_html(gold, terms, no_text=no_text))

    st.subheader("Model A's ranked list")
    url_widget("queries_top", "top", failures.parse_top, failures.DEFAULT_TOP)
    top = st.columns([1, 3])[0].number_input(
        "Top N", min_value=1, max_value=failures.MAX_TOP, step=10, key="queries_top",
        help="How many of model A's top-ranked documents to list.",
    )  # fmt: skip
    write_param("top", None if top == failures.DEFAULT_TOP else str(int(top)))
    listing = ranking_table(
        ranking, qrels, entities, query_id, top=int(top), threshold=spec.relevance_threshold
    )
    if listing.empty:
        st.info("Model A returned no document for this query.")
        return listing
    listing = querydetail.geo_marks(listing, gold, q_lat, q_lon)
    first = row.get("first_gold_rank")
    where = "none retrieved" if first is None or pd.isna(first) else f"rank {int(first)}"
    st.caption(
        f"{int(listing['gold'].sum())} gold document(s) in the top {len(listing)} "
        f"(highlighted rows); first gold: {where}. Query terms are marked in the text. "
        "tied: score shared with another document; twin: same name and coordinate as a "
        "gold POI; stack: on a gold POI's coordinate."
    )
    st.html(widgets.RANKING_CSS + querydetail.ranking_html(listing, terms, no_text=no_text))
    return listing


@st.fragment
def browse(view: pd.DataFrame, rows: pd.DataFrame, slices: list[str]) -> None:
    """The list and the selected query. A fragment: selecting a row or pressing Previous / Next
    reruns only this part, not the sidebar and the filters."""
    listed = view.head(queries.LIST_MAX)  # what the list shows (the browser draws it)
    chosen, link_q = _sync_selection(listed, rows)
    left, right = st.columns([2, 3])
    with left:
        _query_list(listed, view, rows)
    with right:
        if link_q and chosen is None:
            st.warning("The query of the link (q) is not among model A's queries of this dataset.")
        if chosen is None:
            st.info("Select a query in the list to inspect it.")
            st.stop()
        row = failures.query_row(rows, *chosen)
        if row is None:
            st.stop()
        _query_header(view, row, chosen)
        listing = _documents(row, chosen)
        box = lazy_expander("Query metadata", "query_meta_open")
        if box is not None:
            meta = failures.query_metadata(row, metric, [c for c in slices if c != NO_SLICE])
            box.dataframe(meta, hide_index=True, width="stretch", key="query_meta")
        annotation_panel(sel, chosen[0], chosen[1], listing["doc_id"].tolist())


browse(view, rows, slices)
