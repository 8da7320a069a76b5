"""The Map page's glue: page-local URL values, selection events, cached map work, the basemap
check and the tables' column help (the page itself only reads state and draws).

Basemap check: with the CARTO basemap the browser downloads tiles from cartocdn.com. A small
script (``st.html`` with JavaScript) requests one tile; when that fails it writes, in words,
that the basemap could not be loaded and that the map still shows the data and the offline
context layer.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pandas as pd
import streamlit as st

from analysis.geo import geo_diagnostics, stack_report
from analysis.geo import mapdata as geomap
from analysis.geo.datum import DATUMS
from analysis.geo.mapdata.context import parse_datum
from analysis.io.bundle import Bundle, Dataset
from ui import cards, data
from ui.urlstate import url_toggle, url_widget, write_param

LAST_EVENT = "_map_last_event"
TWIN_HELP = (
    "Twin-aware: twins (same normalized text at the same coordinate, other id) count as one "
    "document, so a retrieved twin of a gold counts as the gold and a gold twin group counts "
    "once (analysis.geo.canonicalize_twins). Strict: ids must match."
)


def reset_query() -> None:
    """Another dataset: its queries and POIs differ, so forget the query and the POI."""
    st.session_state.pop("map_q", None)
    write_param("q", None)
    write_param("poi", None)


def clear_poi() -> None:
    write_param("poi", None)


def take_selection(chart_key: str, event: Any) -> None:
    """Select the POI of a new click on chart ``chart_key`` (a selection that differs from the
    one this chart reported last; a stale selection kept by the widget is ignored). Each map
    keeps one key whatever it shows, so the browser updates the drawn map in place instead of
    building a new one (a new WebGL context and its shaders, seconds without a GPU); a
    selection made on the previous data is the one reported last, so it is ignored."""
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


# ------------------------------------------------------------------------------ cached work


def _digest(*parts: object) -> str:
    return hashlib.sha1(repr(parts).encode()).hexdigest()


def dataset_key(bundle: Bundle, name: str) -> str:
    """A short cache key of a dataset's manifest entry and the files it reads (a string, so
    Streamlit hashes it cheaply on every rerun)."""
    spec = bundle.datasets[name]
    return _digest(str(bundle.root), spec, data.stamp(spec.queries, spec.qrels, spec.entities))


def run_key(bundle: Bundle, name: str, model: str, ties: str) -> str:
    """A short cache key of a model's run file (or upload: its name and the SHA-256 of its
    content, so two uploads of one name and size never share a cached top k) under a tie
    policy."""
    spec = bundle.datasets[name]
    upload = data.uploads(name).get(model)
    up = (upload[0], hashlib.sha256(upload[1]).hexdigest()) if upload else None
    return _digest(name, model, ties, data.stamp(*data.model_files(spec, model)), up)


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
def dataset_map(
    _index: pd.DataFrame, key: str, tol: float, basemap: str, datum: str
) -> geomap.StaticDeck:
    del key, tol
    return geomap.dataset_deck(_index, basemap=basemap, datum=datum)


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
    datum: str,
) -> tuple[pd.DataFrame, geomap.StaticDeck]:
    """Points and deck of one query; ``key`` covers the dataset, runs, tolerance and query."""
    del key
    points = geomap.query_points(_gold, _rankings, _index, k=k, model_names=_names)
    return points, geomap.query_deck(points, _query, basemap=basemap, datum=datum)


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


BASEMAP_FAILED = (
    "The CARTO basemap could not be loaded: this browser cannot reach cartocdn.com (no "
    "internet, or blocked). The maps still show the data and the offline context layer "
    "(district boundaries, graticule, scale bar); choose Basemap: none to work offline."
)
_CHECK_JS = """<div class="basemap-status" style="color:#b45309;font-size:0.9rem"></div>
<script>
(function () {
  var box = document.currentScript ? document.currentScript.previousElementSibling : null;
  var boxes = document.querySelectorAll('.basemap-status');
  box = box || boxes[boxes.length - 1];
  var say = function () {
    if (box) { box.textContent = MESSAGE; box.setAttribute('role', 'alert'); }
  };
  var timer = setTimeout(say, 8000);
  fetch('https://basemaps.cartocdn.com/light_all/0/0/0.png', {mode: 'no-cors', cache: 'no-store'})
    .then(function () { clearTimeout(timer); })
    .catch(function () { clearTimeout(timer); say(); });
})();
</script>"""


def basemap_check() -> None:
    """Tell the user, in words, when the browser cannot load CARTO's tiles."""
    st.html(_CHECK_JS.replace("MESSAGE", json.dumps(BASEMAP_FAILED)), unsafe_allow_javascript=True)


def diagnostics_columns(k: int) -> dict[str, Any]:
    """Column help of the geo diagnostics table."""
    number = st.column_config.NumberColumn
    return {
        "query → nearest gold (m)": number(
            help="Haversine distance from the query point to the nearest gold POI."
        ),
        "query → top-1 (m)": number(
            help="Haversine distance from the query point to the model's rank-1 POI."
        ),
        "gold stack size": number(
            help="POIs on the gold's exact coordinate (the largest over the gold POIs)."
        ),
        "first gold rank": number(
            help="Rank of the best-ranked gold POI in the model's whole list (empty: none)."
        ),
        "indistinguishable": st.column_config.CheckboxColumn(
            help="A non-gold POI ranked above the first gold sits on that gold's coordinate: "
            "location cannot tell them apart, only text can."
        ),
        "non-gold above gold on its coordinate": number(
            help="Non-gold POIs ranked above the first gold on the first gold's coordinate."
        ),
        "gold stack-mates in top k": number(
            help=f"Non-gold POIs in the top {k} on a gold POI's exact coordinate."
        ),
    }


def twin_columns() -> dict[str, Any]:
    """Column help of the strict vs twin-aware table."""
    number = st.column_config.NumberColumn
    return {
        "strict": number(help=TWIN_HELP, format="%.3f"),
        "twin-aware": number(help=TWIN_HELP, format="%.3f"),
        "mean strict": number(
            help="Mean over every query of the dataset. " + TWIN_HELP, format="%.3f"
        ),
        "mean twin-aware": number(
            help="Mean over every query of the dataset. " + TWIN_HELP, format="%.3f"
        ),
        "metric": st.column_config.TextColumn(
            help=f"{cards.sentence('recall@10')} {cards.sentence('ndcg@10')}"
        ),
    }


def controls(spatial: list[str]) -> tuple[str, float, str, str]:
    """The dataset, tolerance, basemap and datum widgets (seeded from and written to the
    URL); the basemap check runs when CARTO is chosen."""
    url_widget(
        "map_md",
        "md",
        lambda raw: raw if raw in spatial else None,
        spatial[0],
        spatial.__contains__,
    )
    url_widget("map_tol", "tol", geomap.parse_tolerance, 0.0)
    url_widget("map_basemap", "basemap", geomap.parse_basemap, "none")
    url_widget("map_datum", "datum", parse_datum, "wgs84")
    c_ds, c_tol, c_base, c_datum = st.columns([2, 3, 2, 2])
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
    datum = c_datum.radio(
        "POI datum",
        list(DATUMS),
        key="map_datum",
        horizontal=True,
        format_func=lambda d: {"wgs84": "WGS84", "gcj02": "GCJ-02"}[d],
        help="The datum of the dataset's coordinates. WGS84 (GPS, OpenStreetMap; the demo) or "
        "GCJ-02 (Chinese map services such as Amap/Gaode: LIST, GeoGLUE). It places the offline "
        "district boundaries, which are stored in WGS84 and drawn ~500 m east in GCJ-02.",
    )
    if basemap == "carto":
        basemap_check()
    write_param("datum", datum)
    write_param("md", md)
    write_param("tol", f"{tol:g}")
    write_param("basemap", basemap)
    return md, tol, basemap, datum


STACK_MAP_HELP = (
    "Draw every stack of the dataset (red columns, height = stack size) over a sample of its "
    "POIs on a map. Off by default: a map is drawn in software by a browser without a graphics "
    "card, which takes seconds for thousands of POIs; the query's map below is always drawn."
)


def stack_map_toggle() -> bool:
    """The *Stacks on a map* toggle (URL parameter ``stackmap=1``, default off): whether the
    page draws the dataset's stacks on a map."""
    return url_toggle("Stacks on a map", "map_stackmap", "stackmap", STACK_MAP_HELP)


def stack_metrics(report: dict[str, Any]) -> None:
    """The dataset's duplicate-coordinate numbers as five metrics."""
    m1, m2, m3, m4, m5 = st.columns(5)
    m1.metric(
        "POIs",
        f"{report['n_pois']:,}",
        help=f"Rows of the entities table; {report['n_located']:,} have a coordinate.",
    )
    m2.metric(
        "Share stacked",
        f"{report['share_stacked']:.1%}",
        help="POIs that share their coordinate with at least one other POI (a stack of size "
        f">= 2) over located POIs: {report['n_stacked']:,} / {report['n_located']:,}.",
    )
    m3.metric("Stacks", f"{report['n_stacks']:,}", help="Coordinates holding two or more POIs.")
    m4.metric(
        "Largest stack", f"{report['largest_stack']:,}", help="POIs on the most crowded stack."
    )
    m5.metric(
        "Twin groups",
        f"{report['n_twin_groups']:,}",
        help="Groups of POIs with the same normalized text (NFKC, case-folded, spaces collapsed) "
        f"on the same stack under different ids; {report['n_twin_duplicates']:,} redundant copies.",
    )
