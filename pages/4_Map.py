"""Map: duplicate-coordinate diagnostics of a spatial dataset and per-query maps for A and B.

Page-local URL parameters: ``md`` (the spatial dataset), ``tol`` (stack tolerance in metres,
default 0 = exact), ``basemap`` (``none``, the default, works offline; ``carto`` needs internet
in the browser, and a message says so when its tiles cannot load), ``datum`` (``wgs84``, the
default, or ``gcj02``: the datum of the dataset's coordinates, which places the offline district
boundaries), ``q`` (the query; default model A's worst failing query on the dataset by the
selected metric), ``poi`` (the selected POI, whose stack is listed) and ``stackmap`` (``1``: the
dataset's stacks are drawn on a map too). Clicking a POI or a stack column on either map selects
it.

The map of the whole dataset's stacks is drawn on request (the *Stacks on a map* toggle, kept in
the URL), not on every visit: each map is a WebGL canvas of its own, which a browser without a
graphics card draws in software, seconds of work for thousands of POIs; the numbers, the
histogram and the largest-stacks table above it say how much the dataset is stacked, and the
query's map below shows the stacks that matter to the query.

Maps are top-down over an offline context layer (district boundaries of Beijing, Shanghai and
Hangzhou, cut to the view and simplified to its scale, a graticule and a scale bar); the glue
lives in :mod:`ui.map_view`.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from analysis.core.errors import InputError
from analysis.geo import mapdata as geomap
from analysis.present import paper_figures
from ui import data, jobs, paper, widgets
from ui import map_view as mv
from ui.state import sidebar
from ui.urlstate import local_param

st.set_page_config(page_title="Map", layout="wide")
sel = sidebar()

# ------------------------------------------------------------------------------ page

st.title("Map")
widgets.require_datasets(sel)

spatial: list[str] = []
errors: dict[str, str] = {}
for name in sel.datasets:
    try:
        loaded = data.dataset(sel.bundle, name)
    except (InputError, OSError) as exc:
        errors[name] = str(exc)
        continue
    if geomap.has_coordinates(loaded.entities):
        spatial.append(name)
widgets.show_errors(errors)
if not spatial:
    widgets.explain_no_map(sel, "pages/4_Map.py")
    st.stop()

md, tol, basemap, datum = mv.controls(spatial)

ds = data.dataset(sel.bundle, md)
dkey = mv.dataset_key(sel.bundle, md)
try:
    index, report, largest, histogram = jobs.need(
        "Finding the dataset's stacks of POIs", mv.stacks_of, _entities=ds.entities, key=dkey,
        tol=tol,
    )  # fmt: skip
except InputError as exc:
    st.error("The POIs of this dataset cannot be analysed:")
    st.code(str(exc), language=None)
    st.stop()

# ---------------------------------------------------------------------------- dataset panel

st.subheader("Duplicate coordinates")
mv.stack_metrics(report)
h_col, t_col = st.columns([2, 3])
with h_col:
    st.plotly_chart(histogram, key="map_hist", width="stretch")
    paper.export_control(
        "map_hist", (dkey, tol), paper.file_stem(sel.bundle_id, md, f"tol{tol:g}m", "stacks"),
        lambda: paper_figures.stack_histogram_paper(report, dataset=md),
    )  # fmt: skip
t_col.caption("Largest stacks (up to 10 example names each)")
t_col.dataframe(
    largest,
    hide_index=True,
    width="stretch",
    key="map_largest",
    column_config={"size": st.column_config.NumberColumn(help="POIs in the stack.")},
)
if mv.stack_map_toggle():
    st.caption(
        "Stacks as red columns (top-down: Ctrl + drag tilts the map to show their heights = "
        "stack sizes) over the dataset's POIs (grey) and the offline context layer. Click a "
        "column or a POI to list every POI at its coordinate below."
    )
    ds_chart = "map_ds"  # one key per map whatever it shows: see mv.take_selection
    ds_event = st.pydeck_chart(
        mv.dataset_map(index, dkey, tol, basemap, datum),
        on_select="rerun",
        selection_mode="single-object",
        key=ds_chart,
        height=420,
    )
    mv.take_selection(ds_chart, ds_event)

# ---------------------------------------------------------------------------- per-query panel

st.subheader("One query on the map")
query_ids, labels, queries, gold_of = mv.queries_of(ds, dkey)
table, _warnings, perq_errors = jobs.need(
    "Computing the per-query table", data.per_query, sel.bundle, [md], sel.ties, sel.split
)
widgets.show_errors(perq_errors, key="reload_data_runs")
models = {
    label: model
    for label, model in (("A", sel.model_a), ("B", sel.model_b))
    if model is not None and model in data.models_of(sel.bundle, [md])
}
if not query_ids:
    st.info("This dataset has no query with judged documents.")
    st.stop()
default_q = None
if not table.empty:
    key = mv._digest(dkey, data.fingerprint(sel.bundle, [md], sel.ties, sel.split))
    default_q = mv.default_query_of(table, key, sel.model_a, sel.metric)
known = set(query_ids)
mv.url_widget(
    "map_q",
    "q",
    lambda raw: raw if raw in known else None,
    default_q or query_ids[0],
    known.__contains__,
)
q = st.selectbox(
    "Query",
    query_ids,
    key="map_q",
    on_change=mv.clear_poi,
    format_func=lambda qid: f"{qid} · {labels.get(qid, '')}",
    help=f"Opens on model A's worst failing query by {sel.metric} (value < 1). "
    + widgets.metric_help(sel.metric),
)
mv.write_param("q", q)
query: dict[str, Any] = {"query_id": q, "text": "", "lat": None, "lon": None}
if q in queries.index:
    first = queries.loc[q]
    for field in ("text", "lat", "lon"):
        value = first.get(field)
        if value is not None and not pd.isna(value):
            query[field] = str(value) if field == "text" else float(value)
st.text(query["text"] or "(no query text)")
gold = gold_of.get(q, ())

rankings: dict[str, pd.DataFrame] = {}
diags: dict[str, pd.DataFrame] = {}
evals: dict[str, pd.DataFrame] = {}
keys: list[str] = []
metric_names = (f"recall@{sel.k}", f"ndcg@{sel.k}")
for label, model in models.items():
    try:
        ranked = data.ranked_run(sel.bundle, md, model, sel.ties)
    except (InputError, OSError) as exc:
        st.error(f"The run of model {label} could not be loaded:")
        st.code(f"{model} on {md}: {exc}", language=None)
        continue
    rkey = mv.run_key(sel.bundle, md, model, sel.ties)
    keys.append(rkey)
    rankings[label] = geomap.query_ranking(mv.topk(ranked, rkey), q)
    try:
        diags[label] = jobs.need(
            f"Geo diagnostics of model {label}", mv.diagnostics, _ranked=ranked, _ds=ds,
            key=dkey + rkey, k=sel.k,
        )  # fmt: skip
        evals[label] = jobs.need(
            f"Strict and twin-aware metrics of model {label}", mv.twin_eval, _ranked=ranked,
            _ds=ds, key=dkey + rkey, tol=tol, metrics=metric_names,
        )  # fmt: skip
    except InputError as exc:
        st.error(f"Geo diagnostics of model {label} failed:")
        st.code(f"{model} on {md}: {exc}", language=None)
if not models:
    widgets.explain_no_run(sel, "pages/4_Map.py", md)
    st.caption("Only the query and its gold POIs are drawn.")

k = min(sel.k, geomap.MAX_K)
points, deck = mv.query_map(
    index, rankings, query, gold, models, mv._digest(dkey, keys, tol, q, models), k, basemap, datum
)
unlocated = points[~points["located"]]
st.caption(
    f"Purple: the query. Amber discs: gold POIs. Blue: model A's top {k}, orange: model B's "
    "(dark = hit, pale = miss); arcs run from the query to each retrieved POI; grey columns: "
    "stacks (height = stack size). Points sharing a coordinate are spread by a few metres for "
    "display only. Grey lines: district boundaries, graticule and scale bar (offline, in the "
    "chosen datum). Click a POI or column to list its stack."
    + (f" {len(unlocated)} drawn items have no coordinate." if len(unlocated) else "")
)
q_chart = "map_query"
q_event = st.pydeck_chart(
    deck, on_select="rerun", selection_mode="single-object", key=q_chart, height=520
)
mv.take_selection(q_chart, q_event)
paper.export_control(
    "map_snapshot", (dkey, tol, q, tuple(models.items()), k, tuple(keys)),
    paper.file_stem(sel.bundle_id, md, q, "map"),
    lambda: paper_figures.map_snapshot_paper(points, query, models, dataset=md, k=k),
)  # fmt: skip

d_col, e_col = st.columns(2)
d_col.caption("Geo diagnostics of this query (exact stacks)")
d_col.dataframe(
    geomap.query_diagnostics_table(diags, q, models),
    hide_index=True,
    width="stretch",
    key="map_diagnostics",
    column_config=mv.diagnostics_columns(sel.k),
)
e_col.caption(f"Strict vs twin-aware (twins at tolerance {tol:g} m)")
e_col.dataframe(
    geomap.twin_aware_table(evals, q, metric_names, models),
    hide_index=True,
    width="stretch",
    key="map_twins",
    column_config=mv.twin_columns(),
)

# ---------------------------------------------------------------------------- selected POI

st.subheader("Selected POI and its stack")
poi = local_param("poi")
if poi is not None and poi not in index.index:
    mv.write_param("poi", None)
    poi = None
if poi is None:
    st.caption(
        "No POI selected: click a POI or a stack column on a map to list every POI at its "
        "coordinate."
    )
else:
    ranks = {f"{label}": r.set_index("doc_id")["rank"] for label, r in rankings.items()}
    members = geomap.stack_members(index, poi, gold_ids=gold, ranks=ranks)
    st.caption(
        f"The selected POI (first row) and every other POI of its stack at tolerance {tol:g} m; "
        "'gold' and the ranks refer to the selected query."
    )
    st.text(f"POI {poi} · {len(members)} POIs in its stack · query {q}")
    with st.container(key="map_poi_box"):
        st.dataframe(
            members,
            hide_index=True,
            width="stretch",
            key="map_poi_stack",
            column_config={
                "gold": st.column_config.CheckboxColumn(help="Relevant for the selected query."),
                **{
                    f"rank {label}": st.column_config.NumberColumn(
                        help=f"Rank in model {label}'s list for the selected query (empty: not "
                        f"in the top {geomap.KEEP_RANKS})."
                    )
                    for label in rankings
                },
            },
        )
