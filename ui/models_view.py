"""Streamlit glue of the Every model page: cached grids and figures, the models in the URL and
the chart's clicks (:mod:`analysis.stats.allmodels`, :func:`analysis.present.groups.
grid_figure`)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from analysis.present.compare import lists_for_json
from analysis.present.groups import grid_figure
from analysis.stats.allmodels import model_grid
from analysis.stats.failures import parse_values

HELP = {
    "all fail": "Queries no chosen model solves.",
    "one solves": "Queries exactly one chosen model solves (which one: the solver column).",
    "split": "Queries two or more models solve and at least one fails.",
    "all solve": "Queries every chosen model solves.",
    "chart": "One row per query, most disagreement (standard deviation of the models' values) "
    "first; colour: the metric, 0 (dark) to 1 (yellow). Click a cell to open the query on the "
    "Queries page with that model as A.",
}


def parse_models(raw: str | None, models: list[str]) -> list[str]:
    """A comma list of model names from the URL: the known ones, in the given order, once. A
    name may hold commas itself (run files such as ``bm25,k1=0.9.run``):
    :func:`analysis.stats.failures.parse_values` joins the pieces back."""
    return parse_values(raw, models)


def format_models(chosen: list[str], default: list[str]) -> str | None:
    """The URL value of the chosen models (``None`` for the default choice)."""
    return None if list(chosen) == list(default) else ",".join(chosen)


@st.cache_resource(max_entries=16, show_spinner="Every model, per query…")
def grid(key: tuple, metric: str, models: tuple, threshold: float, _table) -> pd.DataFrame:
    """:func:`analysis.stats.allmodels.model_grid` of the table, once per choice."""
    return model_grid(_table, metric, list(models), threshold=threshold)


@st.cache_resource(max_entries=16, show_spinner=False)
def figure(key: tuple, metric: str, models: tuple, threshold: float, show: str, _rows) -> dict:
    """The chart of the drawn rows as a (read-only, shared) figure dict."""
    del threshold, show  # cache keys: they decide the rows
    return lists_for_json(grid_figure(_rows, list(models), metric).to_dict())


def clicked(event: object) -> tuple[str, str] | None:
    """``(query id, model)`` of the cell a chart selection holds, or None."""
    points = []
    if hasattr(event, "get"):
        points = list((event.get("selection") or {}).get("points") or [])  # type: ignore[union-attr]
    for point in points:
        custom = point.get("customdata")
        if isinstance(custom, list | tuple) and len(custom) == 2:
            return str(custom[0]), str(custom[1])
    return None
