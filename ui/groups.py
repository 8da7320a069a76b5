"""Streamlit glue of the home page's run-group and cost views: quality against cost (the Pareto
chart of the sidebar metric against a number of each run, drawn on request: the first chart of
a visit makes the browser load and compile the chart code) and the metrics per fold of fold
groups. The numbers come from :mod:`analysis.present.pareto` and
:mod:`analysis.stats.groups`."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from analysis.core.errors import InputError
from analysis.present.groups import fold_table
from analysis.present.pareto import cost_keys, pareto_figure, pareto_points
from analysis.stats.groups import fold_summary, group_members
from ui import data, jobs, widgets
from ui.state import Selection
from ui.urlstate import url_toggle, url_widget, write_param

PARETO_HELP = (
    "One point per model: the mean of the metric with its 95% CI (a seed group's resamples "
    "queries and seeds) against the chosen number of the run (the manifest's run_metadata, or "
    "ir_metadata beside the run). The dashed line is the Pareto front: the models no other "
    "model beats on both axes. A seed group's runs are small faded points, off the front."
)


@st.cache_resource(max_entries=32, show_spinner=False)
def _figure(key: tuple, metric: str, cost: str, lower: bool, _board, _meta, _members) -> dict:
    points = pareto_points(_board, _meta, metric, cost, members=_members, lower_is_better=lower)
    figure = pareto_figure(points, metric, cost, lower_is_better=lower)
    return {"figure": figure.to_dict(), "points": points}


def _per_query(sel: Selection, name: str, split: str | None) -> tuple | None:
    """The dataset's per-query table once the leaderboard's job has computed it, else None
    (the leaderboard above shows the progress and reruns the page when it is done)."""
    args = (sel.bundle, [name], sel.ties, split)
    return data.per_query(*args) if jobs.ready(data.per_query, *args) else None


def _cost_chart_toggle(keys: list[str]) -> bool:
    """The *Draw the chart* toggle of quality against cost (URL parameter ``costs=1``, default
    off): the chart's code (plotly.js, 4.7 MB that the browser compiles) is then loaded by the
    page that needs it, not by every first visit of Home."""
    help_ = widgets.escape_markdown(
        f"The models' runs have numbers ({', '.join(keys)}): the sidebar metric against one of "
        "them, with the Pareto front."
    )
    return url_toggle("Draw the chart", "home_costs", "costs", help_)


def cost_section(sel: Selection, name: str, split: str | None, metrics: list[str]) -> None:
    """Quality against cost for dataset ``name`` (nothing when no two models have a number),
    drawn when its toggle is on."""
    assert sel.bundle is not None
    try:
        meta = data.run_metadata(sel.bundle, name)
    except InputError as exc:
        st.warning(widgets.escape_markdown(f"Run metadata could not be read: {exc}"))
        return
    keys = cost_keys(meta)
    if not keys or sel.metric not in metrics:
        return
    st.subheader("Quality against cost")
    if not _cost_chart_toggle(keys):
        return
    url_widget("home_cost", "cost", lambda raw: raw if raw in keys else None, keys[0])
    left, right = st.columns([2, 1])
    cost = left.selectbox("Cost", keys, key="home_cost", help=PARETO_HELP)
    write_param("cost", None if cost == keys[0] else str(cost))
    more = "Turn off for a number where more is better (throughput)."
    lower = right.toggle("Lower is better", value=True, key="home_cost_lower", help=more)
    found = _per_query(sel, name, split)
    if found is None:
        return
    table = found[0]
    board = jobs.need(f"Computing the leaderboard of {name}", data.leaderboard, sel.bundle, name,
                      sel.ties, split, metrics, name="leaderboard_cost")  # fmt: skip
    members = {m: g for g, (kind, runs) in group_members(table).items() if kind == "seeds"
               for m in runs}  # fmt: skip
    fp = data.fingerprint(sel.bundle, [name], sel.ties, split)
    numbers = tuple(sorted((m, tuple(sorted(v.items()))) for m, v in meta.items()))
    made = _figure((fp, numbers), sel.metric, cost, lower, board, meta, members)
    st.plotly_chart(widgets.plotly_figure(made["figure"]), key="pareto")
    missing = [m for m in board["model"] if m not in set(made["points"]["model"])]
    note = f" No {cost} for: {', '.join(missing)}." if missing else ""
    st.caption(widgets.escape_markdown(PARETO_HELP + note))


@st.cache_resource(max_entries=16, show_spinner="Metrics per fold…")
def _folds(key: tuple, column: str, metrics: tuple[str, ...], models: tuple, _table) -> object:
    summary = fold_summary(_table, column, list(metrics), list(models))
    return fold_table(summary, list(metrics))


def fold_section(sel: Selection, name: str, split: str | None, metrics: list[str]) -> None:
    """Metrics per fold and pooled, for every model, when the dataset has a fold group."""
    assert sel.bundle is not None
    found = _per_query(sel, name, split)
    if found is None:
        return
    table, _, errors = found
    if errors or table.empty:
        return
    columns = [c for c in table.columns if c == "fold" or str(c).startswith("fold (")]
    if not columns:
        return
    with st.expander("Metrics per fold (cross-validation)", expanded=False):
        st.caption("Each fold's queries and all of them pooled (95% bootstrap CI). A fold "
                   "group's row of a query is the run of the query's fold; the fold is also a "
                   "slice on the Slices page.")  # fmt: skip
        fp = data.fingerprint(sel.bundle, [name], sel.ties, split)
        models = tuple(data.models_of(sel.bundle, [name]))
        present = [m for m in metrics if m in table.columns]
        for column in columns:
            shown: pd.DataFrame = _folds(fp, column, tuple(present), models, table)  # type: ignore[assignment]
            st.dataframe(shown, hide_index=True, width="stretch", key=f"folds_{column}")
