"""A page of your own: the queries no model solves on the selected dataset.

Copy it into ``pages/`` (``pages/9_Unsolved.py``: the number orders the sidebar's links, the
rest is the label). A page reads the sidebar's selection, calls the library and draws; it
computes nothing itself.
"""

from __future__ import annotations

import streamlit as st

from analysis.stats import complementarity
from ui import data, widgets
from ui.state import sidebar

st.set_page_config(page_title="Unsolved", layout="wide")
sel = sidebar()
st.title("Queries no model solves")
widgets.require_datasets(sel)
table, _warnings, errors = data.per_query(sel.bundle, sel.datasets, sel.ties, sel.split)
widgets.show_errors(errors)
solved = complementarity.solved_matrix(table, sel.metric)
unsolved = solved.index[~solved.any(axis=1)].to_frame(index=False)
st.caption(f"{len(unsolved):,} of {len(solved):,} queries: no model reaches {sel.metric} = 1.")
st.dataframe(unsolved, hide_index=True)
