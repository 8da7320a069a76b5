"""Cached steps of the Queries page: model A's rows, the filtered list and the entity index,
each computed once per per-query table (its fingerprint) and choice, shared read-only."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from analysis.stats import failures
from analysis.stats.perquery import slice_columns

#: rows of the failing-queries list sent to the browser (the worst first; previous / next still
#: walk every query that passes the filters)
LIST_MAX = 5_000


def list_note(shown: int, passing: int) -> str:
    """The list's caption addition when it shows only the first ``shown`` of ``passing``."""
    if shown >= passing:
        return ""
    return f" The list shows the worst {shown:,}; search or filter to reach the others."


@st.cache_resource(max_entries=8, show_spinner=False)
def entity_lookup(key: int, _entities: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
    """The doc id index of an entity table, built once. ``key`` is ``id(_entities)``; the entry
    keeps a reference to the table, so the id cannot be reused by another table meanwhile."""
    del key
    return _entities, failures.entity_index(_entities)


@st.cache_resource(max_entries=16, show_spinner=False)
def model_rows(key: tuple, model: str, _table: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Model A's rows of the per-query table and their slice columns, once per table."""
    rows = failures.model_rows(_table, model)
    return rows, [c for c in slice_columns(rows) if c != "dataset"]


@st.cache_resource(max_entries=64, show_spinner=False)
def failing(
    key: tuple, model: str, metric: str, filters: tuple, _rows: pd.DataFrame
) -> pd.DataFrame:
    """The filtered list (:func:`failures.failing_queries`), once per filter choice."""
    return failures.failing_queries(_rows, metric, failures.FailureFilter(*filters))
