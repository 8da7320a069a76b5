"""AppTest: the Map page (stack diagnostics, per-query map, POI selection by permalink)."""

from __future__ import annotations

import json

import pytest

from analysis.geo import coordinate_stacks
from analysis.io.bundle import load_dataset, read_manifest
from tests.app.conftest import ROOT, no_exception, open_page

PAGE = "4_Map.py"
#: every test only reads the demo bundle: they share the tables the first one computed
pytestmark = pytest.mark.usefixtures("shared_demo_root")


def _param(at, name: str) -> str | None:
    value = at.query_params.get(name)
    if isinstance(value, list):
        return value[-1] if value else None
    return value


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _decks(at) -> list[dict]:
    return [json.loads(el.proto.json) for el in at.get("deck_gl_json_chart")]


def _stack_table(at):
    tables = [d.value for d in at.dataframe if "selected" in d.value.columns]
    return tables[0] if tables else None


def test_renders_on_geo_glue_without_basemap():
    at = open_page(PAGE, datasets="geo-glue")
    no_exception(at)
    metrics = _metrics(at)
    assert metrics["POIs"] == "4,000"
    assert metrics["Share stacked"] == "20.2%"  # 806 of 4,000 POIs share a coordinate
    assert metrics["Largest stack"] == "16"
    assert _param(at, "md") == "geo-glue"
    assert _param(at, "basemap") == "none"
    assert _param(at, "tol") == "0"
    q = _param(at, "q")
    assert q is not None
    assert at.selectbox(key="map_q").value == q
    decks = _decks(at)
    assert len(decks) == 1  # the query's map; the dataset's stacks only on request
    assert at.toggle(key="map_stackmap").value is False
    assert _param(at, "stackmap") is None
    ids = {layer["id"] for layer in decks[0]["layers"]}
    assert {"gold", "model_A", "model_B", "arcs_A", "arcs_B", "query"} <= ids
    assert _stack_table(at) is None  # nothing selected yet
    at.toggle(key="map_stackmap").set_value(True).run()
    no_exception(at)
    assert _param(at, "stackmap") == "1"
    decks = _decks(at)
    assert len(decks) == 2
    assert {"dataset_pois", "dataset_stacks"} <= {layer["id"] for layer in decks[0]["layers"]}
    for deck in decks:
        assert "mapProvider" not in deck  # map_provider=None: nothing needs the internet
        assert all(layer["id"] and layer["pickable"] for layer in deck["layers"])


def test_stack_map_from_the_url():
    at = open_page(PAGE, datasets="geo-glue", stackmap="1")
    no_exception(at)
    assert at.toggle(key="map_stackmap").value is True
    assert len(_decks(at)) == 2
    at = open_page(PAGE, datasets="geo-glue", stackmap="yes")  # not "1": off
    no_exception(at)
    assert at.toggle(key="map_stackmap").value is False
    assert len(_decks(at)) == 1


def _table_with(at, column: str):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_default_query_is_a_failure_of_model_a():
    at = open_page(PAGE, datasets="geo-glue", metric="hit", k="1")
    no_exception(at)
    twins = _table_with(at, "twin-aware")
    a_rows = twins[twins["model"].str.startswith("A: ")]
    # geo-glue has one gold per query, so recall@1 = hit@1: A misses the default query at 1
    assert a_rows.set_index("metric").loc["recall@1", "strict"] == 0.0
    diag = _table_with(at, "first gold rank")
    assert diag["model"].tolist()[0].startswith("A: ")
    assert len(diag) == 2


def test_changing_dataset_and_tolerance_changes_stack_metrics():
    at = open_page(PAGE, dataset="beijing")
    no_exception(at)
    assert at.selectbox(key="map_md").value == "beijing"
    beijing = _metrics(at)
    assert beijing["Share stacked"] == "0.0%"  # no exact duplicates in the Beijing demo
    at.selectbox(key="w_dataset").select("geo-glue").run()
    no_exception(at)
    glue = _metrics(at)
    assert glue["Share stacked"] == "20.2%"
    assert _param(at, "md") == "geo-glue"
    at.select_slider(key="map_tol").set_value(50.0).run()
    no_exception(at)
    wide = _metrics(at)
    assert wide["Share stacked"] == "27.7%"
    assert int(wide["Stacks"]) > int(glue["Stacks"])
    assert _param(at, "tol") == "50"


def test_permalink_reopens_query_and_selected_poi():
    bundle = read_manifest(ROOT / "data" / "demo")
    pois = load_dataset(bundle.datasets["geo-glue"]).entities
    stacks = coordinate_stacks(pois)
    big = stacks.loc[stacks["stack_size"].idxmax()]
    poi = str(big["doc_id"])
    at = open_page(PAGE, datasets="geo-glue", md="geo-glue", q="test-5", poi=poi, tol="0")
    no_exception(at)
    assert at.selectbox(key="map_q").value == "test-5"
    table = _stack_table(at)
    assert table is not None
    assert len(table) == int(big["stack_size"])
    assert table["doc_id"].iloc[0] == poi
    assert bool(table["selected"].iloc[0])
    assert table["selected"].sum() == 1
    assert _param(at, "poi") == poi
    # a rerun keeps the selection
    at.run()
    no_exception(at)
    assert _stack_table(at)["doc_id"].iloc[0] == poi
    assert at.selectbox(key="map_q").value == "test-5"


def test_dataset_removed_in_sidebar_falls_back():
    at = open_page(PAGE, dataset="geo-glue", md="geo-glue", q="test-5")
    no_exception(at)
    assert at.selectbox(key="map_md").value == "geo-glue"
    at.selectbox(key="w_dataset").select("beijing").run()
    no_exception(at)
    assert at.selectbox(key="map_md").value == "beijing"
    assert at.selectbox(key="map_q").value != "test-5"
    assert _param(at, "md") == "beijing"
    assert _metrics(at)["Share stacked"] == "0.0%"


def test_invalid_url_values_fall_back():
    at = open_page(PAGE, datasets="geo-glue", md="nope", tol="7", basemap="x", q="zz", poi="zz")
    no_exception(at)
    assert at.selectbox(key="map_md").value == "geo-glue"
    assert at.select_slider(key="map_tol").value == 0.0
    assert at.radio(key="map_basemap").value == "none"
    assert at.selectbox(key="map_q").value != "zz"
    assert _stack_table(at) is None
    assert _param(at, "poi") is None


def test_carto_basemap_is_opt_in():
    at = open_page(PAGE, datasets="geo-glue", basemap="carto")
    no_exception(at)
    decks = _decks(at)
    assert all(deck.get("mapProvider") == "carto" for deck in decks)


def test_non_spatial_datasets_show_info():
    at = open_page(PAGE, datasets="stark-amazon,stark-mag")
    no_exception(at)
    assert any("lat\\/lon coordinates" in info.value for info in at.info)  # Markdown-escaped
    assert not at.get("deck_gl_json_chart")
    assert not at.metric


def test_maps_are_top_down_over_the_offline_context_layer():
    at = open_page(PAGE, datasets="geo-glue", md="geo-glue", q="test-5", stackmap="1")
    no_exception(at)
    assert _param(at, "datum") == "wgs84"
    assert len(_decks(at)) == 2
    for deck in _decks(at):
        assert deck["initialViewState"]["pitch"] == 0
        ids = [layer["id"] for layer in deck["layers"]]
        assert ids[0] == "context_districts"  # Hangzhou's districts
        assert ids[-1] == "labels"  # their names: the map's one text layer
        assert "context_scale" in ids
    wgs = _decks(at)[-1]["layers"][0]["data"][0]["path"][0]  # the query's map
    at = open_page(PAGE, datasets="geo-glue", md="geo-glue", q="test-5", datum="gcj02")
    no_exception(at)
    assert at.radio(key="map_datum").value == "gcj02"
    gcj = _decks(at)[-1]["layers"][0]["data"][0]["path"][0]
    assert gcj[0] > wgs[0]  # GCJ-02 lies east of WGS84 in China
    at = open_page(PAGE, datasets="geo-glue", datum="bd09")
    assert at.radio(key="map_datum").value == "wgs84"


def test_carto_basemap_adds_the_offline_check():
    at = open_page(PAGE, datasets="geo-glue", basemap="carto")
    no_exception(at)
    assert any("could not be loaded" in h.proto.body for h in at.get("html"))
    at = open_page(PAGE, datasets="geo-glue")
    assert not at.get("html")
