"""Home: the selected dataset's leaderboard (models x headline metrics, CIs, significance
letters, improved/degraded against a baseline; run groups as rows of their own), metrics per
fold of fold groups, quality against cost, every other dataset's on demand, data checks
grouped by dataset and severity, and run upload.

Page-local URL parameters: ``baseline`` (a model of the dataset), ``all=1`` (show every
dataset's leaderboard), ``all_page`` (which page of them), ``costs=1`` (draw the
quality-against-cost chart), ``cost`` (its number).

"Every dataset" is computed lazily: the other datasets' leaderboards come in pages of
:data:`ALL_PER_PAGE` (10), and only the page shown is loaded and evaluated, so a bundle of
2,000 datasets costs ten leaderboards per page, not 2,000.
"""

from __future__ import annotations

import streamlit as st

from analysis.core.errors import InputError
from analysis.present.leaderboard import check_table, leaderboard_html
from ui import data, jobs, paging, widgets
from ui import groups as groups_ui
from ui.state import headline_metrics, sidebar
from ui.urlstate import url_widget, write_param

st.set_page_config(page_title="Retrieval error analysis", layout="wide")
sel = sidebar()

st.title("Retrieval error analysis")
widgets.require_bundle(sel)
st.caption(widgets.escape_markdown(f"Bundle {sel.bundle.name}: {sel.bundle.description}"))
widgets.upload_expander(sel)
widgets.require_datasets(sel)

NONE = "(none)"
ALL_PER_PAGE = 10
name = str(sel.dataset)
spec = sel.bundle.datasets[name]
models = data.models_of(sel.bundle, [name])
url_widget("home_baseline", "baseline", lambda raw: raw if raw in models else None, NONE)
url_widget("home_all", "all", lambda raw: raw == "1", False)


checks: dict = {}


@st.cache_resource(max_entries=32, show_spinner=False)
def _checks(names: tuple, key: tuple, _warnings: dict):
    """:func:`check_table` of the shown datasets, once per table."""
    return check_table(_warnings)


def board(dataset: str, split: str | None, key: str, baseline: str | None) -> None:
    """One dataset's leaderboard (or its loading error)."""
    ds_spec = sel.bundle.datasets[dataset]
    metrics = headline_metrics(ds_spec)
    _, found, failed = jobs.need(
        f"Computing the per-query table of {dataset}", data.per_query, sel.bundle, [dataset],
        sel.ties, split, name=f"per_query_{key}",
    )  # fmt: skip
    checks.update(found)
    if failed:
        widgets.show_errors(failed, key="reload_data" if key == "main" else f"reload_{key}")
        return
    try:
        table = jobs.need(
            f"Computing the leaderboard of {dataset} (bootstrap CIs, tests)", data.leaderboard,
            sel.bundle, dataset, sel.ties, split, metrics, baseline, name=f"leaderboard_{key}",
        )  # fmt: skip
    except (InputError, OSError) as exc:  # changed on disk since the line above
        widgets.show_errors(
            {dataset: str(exc)}, key="reload_data" if key == "main" else f"reload_{key}"
        )
        return
    if table.empty or "n" not in table.columns:
        widgets.explain_no_run(sel, "app.py", dataset)
        return
    shown = [m for m in metrics if m in table.columns]
    body = leaderboard_html(table, shown, baseline=baseline, dataset=dataset)
    st.html(widgets.LEADERBOARD_CSS + body)


st.subheader(widgets.escape_markdown(f"Leaderboard: {name}"))
split_note = f" Split: {widgets.escape_markdown(sel.split)}." if sel.split else ""
st.caption(
    "Mean over every query of the dataset's qrels (queries missing from a run count as 0); "
    "small: the seeded 95% bootstrap CI (hover a cell for n). Bold: best of the column. "
    "Letters: the models this one beats significantly (paired t-test, Holm-corrected over "
    "the model pairs of the metric, p < 0.05). A run group (one model's seeds or folds) is a "
    "row of its own above its runs: a seed group's mean is that of its per-query seed means, "
    "its CI resamples queries and seeds, its tests pair the seed means (not against its own "
    "runs)." + split_note
)
baseline = st.selectbox(
    "Baseline",
    [NONE, *models],
    key="home_baseline",
    help="Counts, per metric, the queries where each model is better (+) or worse (−) than "
    "this model (as PyTerrier's baseline=).",
)
write_param("baseline", None if baseline == NONE else str(baseline))
base = None if baseline == NONE else str(baseline)
with jobs.section():
    board(name, sel.split, "main", base)
with jobs.section():
    try:
        groups_ui.fold_section(sel, name, sel.split, headline_metrics(spec))
        groups_ui.cost_section(sel, name, sel.split, headline_metrics(spec))
    except (InputError, OSError):  # the leaderboard above shows the loading error
        pass

show_all = st.toggle(
    "Leaderboards of every dataset of the bundle",
    key="home_all",
    help="One leaderboard per dataset (each on its own queries; nothing is pooled), "
    f"{ALL_PER_PAGE} per page. Computed once per dataset, then cached.",
)
write_param("all", "1" if show_all else None)
if show_all:
    others = [other for other in sel.bundle.datasets if other != name]
    for other in paging.page_of(
        others, ALL_PER_PAGE, key="home_all_page", param="all_page", what="datasets"
    ):
        st.subheader(widgets.escape_markdown(f"Leaderboard: {other}"))
        with jobs.section():
            board(other, None, other, None)

st.subheader("Data checks")
st.caption("Each finding once: qrels findings for the dataset, run findings with their models.")
shown_names = list(dict.fromkeys(d for d, _ in checks))
fp = data.fingerprint(sel.bundle, shown_names, sel.ties, sel.split)
found = _checks(tuple(sorted(checks)), fp, checks)
if found.empty:
    st.info("No data problems found.")
else:
    st.dataframe(
        found,
        hide_index=True,
        width="stretch",
        key="checks",
        column_config={
            **{c: st.column_config.Column(c, width="small") for c in ("severity", "count")},
            "message": st.column_config.TextColumn("message", width=1200),
        },
    )

spatial = any(s.family == "spatial" for s in sel.bundle.datasets.values())
widgets.preload_charts("plotly", *(["deck"] if spatial else []))
