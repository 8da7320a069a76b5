"""Every model, per query: the dataset's queries x models, the sidebar metric as colour, the
queries the models disagree on most at the top; filters "all fail", "one solves", "split",
"all solve"; a click on a cell opens the query on the Queries page with that model as A.

For 3 to 12 models (2 work too); a dataset with more models shows 12 at a time, chosen in the
Models box. At most 2,000 queries are drawn (12,000 cells: 1,000 queries for 12 models), the
ones the models disagree on most; the counts cover every query.

Page-local URL parameters: ``models`` (comma list), ``solved`` (threshold), ``show`` (filter).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from analysis.stats import failures
from analysis.stats.allmodels import (
    MAX_MODELS,
    OUTCOMES,
    bounded,
    model_column,
    outcome_counts,
    query_limit,
)
from ui import analyses as an
from ui import compare as cmp
from ui import data, jobs, models_view, widgets
from ui.state import sidebar
from ui.urlstate import url_widget, write_param

ALL = "all queries"
st.set_page_config(page_title="Every model", layout="wide")
sel = sidebar()
st.title("Every model, per query")
widgets.require_datasets(sel)
table, _warnings, errors = jobs.need(
    "Computing the per-query table", data.per_query, sel.bundle, sel.datasets, sel.ties,
    sel.split,
)  # fmt: skip
widgets.show_errors(errors)
dataset = str(sel.dataset)
models = [m for m in data.models_of(sel.bundle, [dataset]) if m in set(table.get("model", []))]
if table.empty or sel.metric not in table.columns or not models:
    st.info("This dataset has no per-query results (no run, or it could not be loaded).")
    st.stop()

url_widget("every_models", "models",  # a link naming more models than the box takes: the first
           lambda raw: models_view.parse_models(raw, models)[:MAX_MODELS] or None,
           models[:MAX_MODELS])  # fmt: skip
default_solved = 1.0 if sel.measure == "hit" else 0.5
url_widget("every_solved", "solved", failures.parse_threshold, default_solved)
url_widget("every_show", "show", lambda raw: raw if raw in (ALL, *OUTCOMES) else None, ALL)
left, middle, right = st.columns([4, 2, 3])
chosen = left.multiselect(
    "Models", models, key="every_models", max_selections=MAX_MODELS,
    help=f"The columns, in this order (at most {MAX_MODELS}).",
)  # fmt: skip
threshold = middle.select_slider(
    f"Solved: {sel.metric} at least", options=list(failures.THRESHOLDS), key="every_solved",
    help="A model solves a query when its value reaches this.",
)  # fmt: skip
show = right.segmented_control("Show", [ALL, *OUTCOMES], key="every_show") or ALL
write_param("models", models_view.format_models(chosen, models[:MAX_MODELS]))
write_param("solved", None if threshold == default_solved else failures.format_threshold(threshold))
write_param("show", None if show == ALL else show)
if len(models) > MAX_MODELS:
    st.caption(f"The dataset has {len(models)} models; the chart shows {MAX_MODELS} at most: "
               "choose them in the Models box.")  # fmt: skip
if not chosen:
    st.info("Choose at least one model.")
    st.stop()

fp = data.fingerprint(sel.bundle, sel.datasets, sel.ties, sel.split)
grid = models_view.grid(fp, sel.metric, tuple(chosen), float(threshold), table)
counts = outcome_counts(grid)
for col, outcome in zip(st.columns(len(OUTCOMES)), OUTCOMES, strict=True):
    col.metric(outcome, f"{counts[outcome]:,}", help=models_view.HELP[outcome])
shown = grid if show == ALL else grid.loc[grid["outcome"] == show]
limit = query_limit(len(chosen))
drawn, cut = bounded(shown, limit)
note = (f"Showing the {limit:,} queries the models disagree on most, of {len(shown):,}; "
        "the counts above cover every query. " if cut else "")  # fmt: skip
left_out = grid.attrs.get("n_left_out", 0)
if left_out:
    note += f"{left_out:,} queries some chosen model has no value for are left out. "
st.caption(note + models_view.HELP["chart"])

new, event = cmp.new_event("every_grid")
if new:
    target = models_view.clicked(event)
    if target is not None:
        query_id, model = target
        params = {**sel.url_params(), "a": model, "q": query_id, "qd": dataset}
        st.switch_page("pages/2_Queries.py", query_params=params)
if drawn.empty:
    st.info("No query has this outcome.")
    st.stop()
figure = models_view.figure(fp, sel.metric, tuple(chosen), float(threshold), show, drawn)
st.plotly_chart(widgets.plotly_figure(figure), on_select="rerun", selection_mode="points",
                key="every_grid")  # fmt: skip

st.subheader("The queries, as listed")
text = table.loc[table["model"] == chosen[0], ["query_id", "text"]] if "text" in table else None
listed = drawn if text is None else drawn.merge(text.astype({"query_id": "str"}), how="left")
opener = listed["solver"].fillna(chosen[0]).astype(str)
listed = listed.assign(open=[an.query_links(sel, dataset, m, [q])[0]
                             for m, q in zip(opener, listed["query_id"], strict=True)])  # fmt: skip
values = [model_column(sel.metric, m) for m in chosen]
columns = ["query_id", "text", "outcome", "solver", "disagreement", *values, "open"]
st.dataframe(
    pd.DataFrame(listed[[c for c in columns if c in listed]]), hide_index=True, width="stretch",
    height=360, key="every_table",
    column_config={"open": an.link_column(), "text": st.column_config.TextColumn(width="large"),
                   "disagreement": st.column_config.NumberColumn(format="%.3f")},
)  # fmt: skip
