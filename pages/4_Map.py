"""Map: duplicate-coordinate diagnostics of a spatial dataset and per-query maps for A and B.

Page-local URL parameters: ``md`` (the spatial dataset), ``tol`` (stack tolerance in metres,
default 0 = exact), ``basemap`` (``none``, the default, works offline; ``carto`` needs internet
in the browser), ``q`` (the query; default model A's worst failing query on the dataset by the
selected metric) and ``poi`` (the selected POI, whose stack is listed). Clicking a POI or a stack
column on either map selects it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

from analysis.core.errors import InputError
from analysis.geo import geo_diagnostics, stack_report
from analysis.geo import mapdata as geomap
from analysis.io.bundle import Bundle, Dataset
from analysis.stats.perquery import MEASURE_HELP
from ui import data, widgets
from ui.state import local_param, set_local_param, sidebar

st.set_page_config(page_title="Map", layout="wide")
sel = sidebar()

WRITTEN = "_map_url_written"
LAST_EVENT = "_map_last_event"
TWIN_HELP = (
    "Twin-aware: twins (same normalized text at the same coordinate, other id) count as one "
    "document, so a retrieved twin of a gold counts as the gold and a gold twin group counts "
    "once (analysis.geo.canonicalize_twins). Strict: ids must match."
)


# ------------------------------------------------------------------------------ URL glue


def url_widget(
    key: str,
    name: str,
    parse: Callable[[str | None], object],
    default: object,
    valid: Callable[[object], bool] | None = None,
) -> None:
    """Seed widget ``key`` from URL parameter ``name`` when the widget has no state yet or the
    URL changed behind our back (deep link, Back/Forward); invalid or absent: ``default``. A
    kept value that ``valid`` rejects (its options changed) falls back to ``default`` too."""
    raw = local_param(name)
    written = st.session_state.setdefault(WRITTEN, {})
    if key not in st.session_state or raw != written.get(name):
        value = parse(raw) if raw is not None else None
        st.session_state[key] = default if value is None else value
    elif valid is not None and not valid(st.session_state[key]):
        st.session_state[key] = default  # the options changed under the widget


def write_param(name: str, value: str | None) -> None:
    """Write a page-local URL parameter (``None`` removes it) and remember what was written."""
    set_local_param(name, value)
    st.session_state.setdefault(WRITTEN, {})[name] = value


def reset_query() -> None:
    """Another dataset: its queries and POIs differ, so forget the query and the POI."""
    st.session_state.pop("map_q", None)
    write_param("q", None)
    write_param("poi", None)


def clear_poi() -> None:
    write_param("poi", None)


def take_selection(chart_key: str, event: Any) -> None:
    """Select the POI of a new click on chart ``chart_key`` (a selection that differs from the
    one this chart reported last; a stale selection kept by the widget is ignored)."""
    selection = dict(event.selection) if event is not None else {}
    signature = json.dumps(selection, sort_keys=True, default=str)
    last = st.session_state.setdefault(LAST_EVENT, {})
    previous = last.get(chart_key)
    last[chart_key] = signature
    if signature == previous:
        return
    doc = geomap.selected_doc(selection)
    if doc is not None:
        write_param("poi", doc)


def chart_key(prefix: str, *parts: object) -> str:
    """A widget key per dataset/tolerance/query (ids hashed: keys become CSS class names), so
    a chart's selection never outlives the data it was made on."""
    digest = hashlib.sha1(json.dumps([str(p) for p in parts]).encode()).hexdigest()[:12]
    return f"{prefix}_{digest}"


# ------------------------------------------------------------------------------ cached work


def _digest(*parts: object) -> str:
    return hashlib.sha1(repr(parts).encode()).hexdigest()


def dataset_key(bundle: Bundle, name: str) -> str:
    """A short cache key of a dataset's manifest entry and the files it reads (a string, so
    Streamlit hashes it cheaply on every rerun)."""
    spec = bundle.datasets[name]
    return _digest(str(bundle.root), spec, data.stamp(spec.queries, spec.qrels, spec.entities))


def run_key(bundle: Bundle, name: str, model: str, ties: str) -> str:
    """A short cache key of a model's run file (or upload) under a tie policy."""
    spec = bundle.datasets[name]
    upload = data.uploads(name).get(model)
    up = (upload[0], len(upload[1])) if upload else None
    return _digest(name, model, ties, data.stamp(spec.runs.get(model)), up)


@st.cache_resource(max_entries=16, show_spinner=False)
def stacks_of(
    _entities: pd.DataFrame, key: str, tol: float
) -> tuple[pd.DataFrame, dict[str, Any], pd.DataFrame, Any]:
    """POI index with stacks, stack report, largest-stacks table and histogram (read-only)."""
    del key
    index = geomap.poi_index(_entities, tol)
    report = stack_report(_entities, tol)
    largest = geomap.largest_stacks_table(report, index)
    return index, report, largest, geomap.histogram_figure(report)


@st.cache_resource(max_entries=16, show_spinner=False)
def dataset_map(_index: pd.DataFrame, key: str, tol: float, basemap: str) -> geomap.StaticDeck:
    del key, tol
    return geomap.dataset_deck(_index, basemap=basemap)


@st.cache_resource(max_entries=32, show_spinner=False)
def topk(_ranked: pd.DataFrame, key: str) -> pd.DataFrame:
    del key
    return geomap.topk_index(_ranked)


@st.cache_resource(max_entries=32, show_spinner=False)
def diagnostics(_ranked: pd.DataFrame, _ds: Dataset, key: str, k: int) -> pd.DataFrame:
    del key
    return geo_diagnostics(_ranked, _ds.qrels, _ds.queries, _ds.entities, k=k)


@st.cache_resource(max_entries=32, show_spinner=False)
def twin_eval(
    _ranked: pd.DataFrame, _ds: Dataset, key: str, tol: float, metrics: tuple[str, ...]
) -> pd.DataFrame:
    del key
    return geomap.strict_vs_twin_aware(
        _ranked,
        _ds.qrels,
        _ds.entities,
        metrics,
        tolerance_m=tol,
        relevance_threshold=_ds.spec.relevance_threshold,
    )


@st.cache_resource(max_entries=64, show_spinner=False)
def query_map(
    _index: pd.DataFrame,
    _rankings: dict[str, pd.DataFrame],
    _query: dict[str, Any],
    _gold: tuple[str, ...],
    _names: dict[str, str],
    key: str,
    k: int,
    basemap: str,
) -> tuple[pd.DataFrame, geomap.StaticDeck]:
    """Points and deck of one query; ``key`` covers the dataset, runs, tolerance and query."""
    del key
    points = geomap.query_points(_gold, _rankings, _index, k=k, model_names=_names)
    return points, geomap.query_deck(points, _query, basemap=basemap)


@st.cache_resource(max_entries=16, show_spinner=False)
def queries_of(
    _ds: Dataset, key: str
) -> tuple[list[str], dict[str, str], pd.DataFrame, dict[str, tuple[str, ...]]]:
    """Query ids of the qrels (first appearance), their labels (id -> text start), the
    queries table indexed by id, and each query's relevant doc ids (relevance >= the
    dataset's threshold)."""
    del key
    qrels = _ds.qrels.assign(
        query_id=_ds.qrels["query_id"].astype("str"), doc_id=_ds.qrels["doc_id"].astype("str")
    )
    ids = list(dict.fromkeys(qrels["query_id"]))
    queries = _ds.queries.drop_duplicates("query_id").set_index("query_id", drop=False)
    text = queries["text"].fillna("").astype("str").str.slice(0, 70)
    relevant = qrels[qrels["relevance"] >= _ds.spec.relevance_threshold]
    gold = {
        str(qid): tuple(dict.fromkeys(docs))
        for qid, docs in relevant.groupby("query_id", sort=False)["doc_id"]
    }
    return ids, dict(zip(queries.index, text, strict=True)), queries, gold


@st.cache_data(max_entries=64, show_spinner=False)
def default_query_of(_table: pd.DataFrame, key: str, model: str | None, metric: str) -> str | None:
    """:func:`analysis.geo.mapdata.default_query` on the per-query table of one dataset."""
    del key
    return geomap.default_query(_table, str(_table["dataset"].iloc[0]), model, metric)


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
    st.info(
        "The map needs a dataset whose entities (POIs) have lat/lon coordinates, such as the "
        "demo's beijing, shanghai or geo-glue. Select one in the sidebar."
    )
    st.stop()

url_widget(
    "map_md", "md", lambda raw: raw if raw in spatial else None, spatial[0], spatial.__contains__
)
url_widget("map_tol", "tol", geomap.parse_tolerance, 0.0)
url_widget("map_basemap", "basemap", geomap.parse_basemap, "none")
c_ds, c_tol, c_base = st.columns([2, 3, 2])
md = c_ds.selectbox(
    "Spatial dataset",
    spatial,
    key="map_md",
    on_change=reset_query,
    help="The selected datasets whose POIs have coordinates.",
)
tol = c_tol.select_slider(
    "Stack tolerance",
    options=list(geomap.TOLERANCES),
    key="map_tol",
    format_func=lambda t: "exact" if t == 0 else f"{t:g} m",
    help="POIs form a stack when they share a coordinate: exactly (default), or within this "
    "many metres by single linkage (a chain of POIs each at most this far from the next). "
    "Stacks, twins and the POI list use it; per-query diagnostics use exact stacks.",
)
basemap = c_base.radio(
    "Basemap",
    list(geomap.BASEMAPS),
    key="map_basemap",
    horizontal=True,
    format_func=lambda b: {"none": "none (offline)", "carto": "CARTO"}[b],
    help="'none' draws only the data and works offline. CARTO's map tiles are downloaded by "
    "your browser from cartocdn.com (needs internet).",
)
write_param("md", md)
write_param("tol", f"{tol:g}")
write_param("basemap", basemap)

ds = data.dataset(sel.bundle, md)
dkey = dataset_key(sel.bundle, md)
try:
    index, report, largest, histogram = stacks_of(ds.entities, dkey, tol)
except InputError as exc:
    st.error("The POIs of this dataset cannot be analysed:")
    st.code(str(exc), language=None)
    st.stop()

# ---------------------------------------------------------------------------- dataset panel

st.subheader("Duplicate coordinates")
m1, m2, m3, m4, m5 = st.columns(5)
m1.metric(
    "POIs",
    f"{report['n_pois']:,}",
    help=f"Rows of the entities table; {report['n_located']:,} have a coordinate.",
)
m2.metric(
    "Share stacked",
    f"{report['share_stacked']:.1%}",
    help="POIs that share their coordinate with at least one other POI (a stack of size >= 2) "
    f"over located POIs: {report['n_stacked']:,} / {report['n_located']:,}.",
)
m3.metric("Stacks", f"{report['n_stacks']:,}", help="Coordinates holding two or more POIs.")
m4.metric("Largest stack", f"{report['largest_stack']:,}", help="POIs on the most crowded stack.")
m5.metric(
    "Twin groups",
    f"{report['n_twin_groups']:,}",
    help="Groups of POIs with the same normalized text (NFKC, case-folded, spaces collapsed) "
    f"on the same stack under different ids; {report['n_twin_duplicates']:,} redundant copies.",
)
h_col, t_col = st.columns([2, 3])
h_col.plotly_chart(histogram, key="map_hist", width="stretch")
t_col.caption("Largest stacks (up to 10 example names each)")
t_col.dataframe(
    largest,
    hide_index=True,
    width="stretch",
    key="map_largest",
    column_config={"size": st.column_config.NumberColumn(help="POIs in the stack.")},
)
st.caption(
    "Stacks as columns (height = stack size) over the dataset's POIs (grey). Click a column or "
    "a POI to list every POI at its coordinate below."
)
ds_chart = chart_key("map_ds", md, tol)
ds_event = st.pydeck_chart(
    dataset_map(index, dkey, tol, basemap),
    on_select="rerun",
    selection_mode="single-object",
    key=ds_chart,
    height=420,
)
take_selection(ds_chart, ds_event)

# ---------------------------------------------------------------------------- per-query panel

st.subheader("One query on the map")
query_ids, labels, queries, gold_of = queries_of(ds, dkey)
table, _warnings, perq_errors = data.per_query(sel.bundle, [md], sel.ties)
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
    uploads = [(m, f, len(c)) for m, (f, c) in data.uploads(md).items()]
    key = _digest(dkey, sel.ties, data.stamp(*ds.spec.runs.values()), uploads)
    default_q = default_query_of(table, key, sel.model_a, sel.metric)
known = set(query_ids)
url_widget(
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
    on_change=clear_poi,
    format_func=lambda qid: f"{qid} · {labels.get(qid, '')}",
    help=f"Opens on model A's worst failing query by {sel.metric} (value < 1). "
    + widgets.metric_help(sel.measure),
)
write_param("q", q)
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
    rkey = run_key(sel.bundle, md, model, sel.ties)
    keys.append(rkey)
    rankings[label] = geomap.query_ranking(topk(ranked, rkey), q)
    try:
        diags[label] = diagnostics(ranked, ds, dkey + rkey, sel.k)
        evals[label] = twin_eval(ranked, ds, dkey + rkey, tol, metric_names)
    except InputError as exc:
        st.error(f"Geo diagnostics of model {label} failed:")
        st.code(f"{model} on {md}: {exc}", language=None)
if not models:
    st.caption("No run on this dataset: only the query and its gold POIs are drawn.")

k = min(sel.k, geomap.MAX_K)
points, deck = query_map(
    index, rankings, query, gold, models, _digest(dkey, keys, tol, q, models), k, basemap
)
unlocated = points[~points["located"]]
st.caption(
    f"Purple: the query. Amber discs: gold POIs. Blue: model A's top {k}, orange: model B's "
    "(dark = hit, pale = miss); arcs run from the query to each retrieved POI; grey columns: "
    "stacks (height = stack size). Points sharing a coordinate are spread by a few metres for "
    "display only. Click a POI or column to list its stack."
    + (f" {len(unlocated)} drawn items have no coordinate." if len(unlocated) else "")
)
q_chart = chart_key("map_query", md, tol, q)
q_event = st.pydeck_chart(
    deck, on_select="rerun", selection_mode="single-object", key=q_chart, height=520
)
take_selection(q_chart, q_event)

d_col, e_col = st.columns(2)
d_col.caption("Geo diagnostics of this query (exact stacks)")
d_col.dataframe(
    geomap.query_diagnostics_table(diags, q, models),
    hide_index=True,
    width="stretch",
    key="map_diagnostics",
    column_config={
        "query → nearest gold (m)": st.column_config.NumberColumn(
            help="Haversine distance from the query point to the nearest gold POI."
        ),
        "query → top-1 (m)": st.column_config.NumberColumn(
            help="Haversine distance from the query point to the model's rank-1 POI."
        ),
        "gold stack size": st.column_config.NumberColumn(
            help="POIs on the gold's exact coordinate (the largest over the gold POIs)."
        ),
        "first gold rank": st.column_config.NumberColumn(
            help="Rank of the best-ranked gold POI in the model's whole list (empty: none)."
        ),
        "indistinguishable": st.column_config.CheckboxColumn(
            help="A non-gold POI ranked above the first gold sits on that gold's coordinate: "
            "location cannot tell them apart, only text can."
        ),
        "non-gold above gold on its coordinate": st.column_config.NumberColumn(
            help="Non-gold POIs ranked above the first gold on the first gold's coordinate."
        ),
        "gold stack-mates in top k": st.column_config.NumberColumn(
            help=f"Non-gold POIs in the top {sel.k} on a gold POI's exact coordinate."
        ),
    },
)
e_col.caption(f"Strict vs twin-aware (twins at tolerance {tol:g} m)")
e_col.dataframe(
    geomap.twin_aware_table(evals, q, metric_names, models),
    hide_index=True,
    width="stretch",
    key="map_twins",
    column_config={
        "strict": st.column_config.NumberColumn(help=TWIN_HELP, format="%.3f"),
        "twin-aware": st.column_config.NumberColumn(help=TWIN_HELP, format="%.3f"),
        "mean strict": st.column_config.NumberColumn(
            help="Mean over every query of the dataset. " + TWIN_HELP, format="%.3f"
        ),
        "mean twin-aware": st.column_config.NumberColumn(
            help="Mean over every query of the dataset. " + TWIN_HELP, format="%.3f"
        ),
        "metric": st.column_config.TextColumn(
            help=f"{MEASURE_HELP['recall']} {MEASURE_HELP['ndcg']}"
        ),
    },
)

# ---------------------------------------------------------------------------- selected POI

st.subheader("Selected POI and its stack")
poi = local_param("poi")
if poi is not None and poi not in index.index:
    write_param("poi", None)
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
