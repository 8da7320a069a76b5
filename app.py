"""Home: the bundle, the leaderboard (dataset x model x metric with 95% CIs) and data checks."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from analysis.core.errors import InputError
from ui import data, widgets
from ui.state import sidebar

st.set_page_config(page_title="Retrieval error analysis", layout="wide")
sel = sidebar()

st.title("Retrieval error analysis")
widgets.require_bundle(sel)
st.caption(widgets.escape_markdown(f"Bundle {sel.bundle.name}: {sel.bundle.description}"))

with st.expander("Add a run (upload)", expanded=False):
    names = list(sel.bundle.datasets)
    target = st.selectbox("Dataset of the run", names, key="upload_dataset")
    uploaded = st.file_uploader(
        "Run file (TREC run, STaRK eval_results CSV, or a query_id/doc_id/score table)",
        key="upload_file",
    )
    if uploaded is not None and target:
        if uploaded.size > widgets.MAX_UPLOAD_BYTES:
            st.error(
                widgets.escape_markdown(
                    f"{uploaded.name}: the file is {uploaded.size / 2**20:.1f} MB, larger than "
                    f"the {widgets.MAX_UPLOAD_MB} MB limit for uploads; put large runs in a "
                    "bundle folder instead"
                )
            )
        else:
            before = dict(data.uploads(target))
            try:
                model = data.add_upload(target, uploaded.name, uploaded.getvalue())
            except InputError as exc:
                st.error(widgets.escape_markdown(str(exc)))
            else:
                if before.get(model) != data.uploads(target).get(model):
                    st.rerun()  # a new run: draw the sidebar again so it lists the model
                st.success(widgets.escape_markdown(f"Added model {model} to {target}."))

widgets.require_datasets(sel)

table, warnings, errors = data.per_query(sel.bundle, sel.datasets, sel.ties)
widgets.show_errors(errors)
if table.empty:
    st.stop()

st.subheader("Leaderboard")
st.caption(
    "Mean over every query of the qrels (queries missing from a run count as 0), with n and a "
    "seeded 95% bootstrap CI. " + widgets.metric_help(sel.measure)
)
metrics = widgets.headline_metrics(sel, table)
board = data.summary(sel.bundle, sel.datasets, sel.ties, metrics, ["dataset", "model"])
view = widgets.format_ci_table(board, metrics)
st.dataframe(view, hide_index=True, width="stretch", key="leaderboard")

st.subheader("Data checks")
rows = [
    {"dataset": ds, "model": model, "check": w.code, "count": w.count, "message": w.message}
    for (ds, model), items in warnings.items()
    for w in items
]
if rows:
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="checks")
else:
    st.success("No data problems found.")
