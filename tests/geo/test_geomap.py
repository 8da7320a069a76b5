"""Tests for analysis.geo.mapdata: decks and layers, escaping, display jitter, colours, tables."""

from __future__ import annotations

import html
import json
import math
import re

import numpy as np
import pandas as pd
import pydeck as pdk
import pytest

from analysis.geo import EARTH_RADIUS_M, haversine_m
from analysis.geo import mapdata as geomap

M_PER_DEG = EARTH_RADIUS_M * math.pi / 180.0
EVIL = "<img src=x onerror=alert(1)>"
EVIL_ESCAPED = "&lt;img src=x onerror=alert(1)&gt;"

P = (30.0, 120.0)
Q = (30.01, 120.0)  # ~1.1 km north of P
R = (30.0, 120.01)  # ~960 m east of P


def _pois() -> pd.DataFrame:
    rows = [
        ("g", EVIL, *P),  # the gold, with a hostile name
        ("s1", "stack mate one", *P),
        ("s2", "stack mate two", *P),
        ("far", "far away", *Q),
        ("x", "east", *R),
        ("nowhere", "no coordinate", np.nan, np.nan),
    ]
    df = pd.DataFrame(rows, columns=["doc_id", "name", "lat", "lon"])
    df["text"] = df["name"] + " text"
    return df


def _index(tol: float = 0.0) -> pd.DataFrame:
    return geomap.poi_index(_pois(), tol)


def _rankings() -> dict[str, pd.DataFrame]:
    a = pd.DataFrame({"doc_id": ["s1", "g", "far", "nowhere"], "rank": [1, 2, 3, 4]})
    b = pd.DataFrame({"doc_id": ["x", "s2"], "rank": [1, 2]})
    return {"A": a, "B": b}


def _points(k: int = 10) -> pd.DataFrame:
    return geomap.query_points(
        ["g"], _rankings(), _index(), k=k, model_names={"A": "bm25", "B": "<b>dense</b>"}
    )


QUERY = {"query_id": "q<1>", "text": "coffee <script>alert(1)</script>", "lat": Q[0], "lon": R[1]}


def _spec(deck, context: bool = False) -> dict:
    """The deck's JSON; without the offline context (its layers and its rows of the text layer,
    which have no doc id) unless ``context``."""
    spec = json.loads(deck.to_json())
    if not context:
        spec["layers"] = [x for x in spec["layers"] if not x["id"].startswith("context_")]
        for layer in spec["layers"]:
            if layer["id"] == "labels":
                layer["data"] = [row for row in layer["data"] if row["doc_id"]]
        spec["layers"] = [x for x in spec["layers"] if x["id"] != "labels" or x["data"]]
    return spec


# --------------------------------------------------------------------------------------------
# layers


def test_query_deck_layers_have_ids_and_are_pickable() -> None:
    spec = _spec(geomap.query_deck(_points(), QUERY))
    ids = [layer["id"] for layer in spec["layers"]]
    assert ids == [
        "stacks", "arcs_A", "arcs_B", "gold", "model_A", "model_B", "query", "labels"
    ]  # fmt: skip
    for layer in spec["layers"]:
        assert layer["pickable"] is True, layer["id"]
    # every POI layer row carries its doc id (what a click selects)
    for layer in spec["layers"]:
        if layer["id"] not in ("query", "labels"):
            assert all(row["doc_id"] for row in layer["data"]), layer["id"]
    assert spec["layers"][-2]["data"][0]["doc_id"] == ""  # the query is not a POI
    bare = json.loads(geomap.query_deck(_points(), QUERY, context=False).to_json())
    assert all(row["doc_id"] for row in bare["layers"][-1]["data"])  # the ring and the badge
    assert spec["initialViewState"]["pitch"] == 0  # top-down


def test_context_layers_under_the_data_offline() -> None:
    spec = _spec(geomap.query_deck(_points(), QUERY), context=True)
    ids = [layer["id"] for layer in spec["layers"]]
    # Hangzhou's districts (P is at 30.0 N, 120.0 E, in Hangzhou's west), then grid and scale
    assert ids[:3] == ["context_districts", "context_graticule", "context_scale"]
    assert ids[3] == "stacks"
    assert all(layer["pickable"] for layer in spec["layers"])
    labels = spec["layers"][-1]["data"]
    names = {row["text"] for row in labels}
    assert names & {"余杭区", "西湖区", "临安区", "富阳区"}
    assert all(row["doc_id"] == "" for layer in spec["layers"][:3] for row in layer["data"])
    (label,) = [r["text"] for r in labels if r["tip_title"].startswith("scale: ")]
    assert label.endswith((" m", " km"))
    assert label.split()[0][0] in "125"
    # the scale bar's length matches its label at its latitude
    path = spec["layers"][2]["data"][0]["path"]
    lat = path[1][1]
    metres = (path[2][0] - path[1][0]) * M_PER_DEG * math.cos(math.radians(lat))
    value, unit = label.split()
    assert metres == pytest.approx(float(value) * (1000 if unit == "km" else 1), rel=1e-6)
    assert "cartocdn" not in json.dumps(spec)
    assert (
        _spec(geomap.query_deck(_points(), QUERY, context=False), context=True)["layers"][0]["id"]
        == "stacks"
    )


def test_context_layer_datum_shift() -> None:
    from analysis.geo.datum import gcj02_to_wgs84, wgs84_to_gcj02
    from analysis.geo.mapdata import context

    wgs = _spec(geomap.query_deck(_points(), QUERY), context=True)["layers"][0]["data"][0]
    gcj = _spec(geomap.query_deck(_points(), QUERY, datum="gcj02"), context=True)["layers"][0]
    first = np.asarray(wgs["path"][0])
    moved = np.asarray(gcj["data"][0]["path"][0])
    shift_m = haversine_m(first[1], first[0], moved[1], moved[0])
    assert 300 < shift_m < 700  # GCJ-02 is ~500 m off WGS84 around Hangzhou
    expected = wgs84_to_gcj02(first[0], first[1])
    assert moved == pytest.approx(np.array(expected), abs=1e-6)
    back = gcj02_to_wgs84(*expected)
    assert np.array(back) == pytest.approx(first, abs=1e-7)
    assert context.parse_datum("gcj02") == "gcj02"
    assert context.parse_datum("bd09") is None
    with pytest.raises(ValueError, match="datum"):
        context.context_layers((120.0, 30.0, 120.1, 30.1), datum="bd09")


def test_context_elsewhere_is_graticule_and_scale_only() -> None:
    from analysis.geo.mapdata import context

    ids = [layer.id for layer in context.context_layers((2.2, 48.8, 2.5, 48.9))]  # Paris
    assert ids == ["context_graticule", "context_scale", "context_labels"]
    assert context.context_layers((1.0, 1.0, 1.0, 1.0)) == []  # empty box


def test_context_near_a_pole_stays_within_the_maps_latitudes() -> None:
    from analysis.geo.mapdata import base, context

    for lat in (80.0, -80.0, 84.9):
        layers, _ = context.context_parts(base.view_bounds(base._view(lat, 15.0, 3e6)))
        lats = [p[1] for layer in layers for row in layer.data for p in row["path"]]
        assert len(lats) >= 8
        assert max(map(abs, lats)) <= 85.051129  # where Web Mercator ends


def test_simplify_path_keeps_the_shape_within_the_tolerance() -> None:
    from analysis.geo.mapdata.context import simplify_path

    # a square ring with many vertices on straight sides and one spike
    side = np.linspace(0.0, 1.0, 11)
    ring = np.vstack(
        [
            np.column_stack([side, np.zeros(11)]),
            np.column_stack([np.ones(10), side[1:]]),
            np.column_stack([side[::-1][1:], np.ones(10)]),
            np.column_stack([np.zeros(10), side[::-1][1:]]),
        ]
    )
    ring[5, 1] = -0.05  # a spike of 0.05 on the bottom side
    kept = simplify_path(ring, 0.01)
    assert kept[0].tolist() == kept[-1].tolist() == [0.0, 0.0]  # the ring stays closed
    assert {(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0), (0.5, -0.05)} <= {
        tuple(v) for v in kept.tolist()
    }
    assert len(kept) == 8  # the corners, the spike and its two neighbours
    assert len(simplify_path(ring, 0.1)) == 5  # the spike is under this tolerance
    assert simplify_path(ring, 0.0) is ring  # no tolerance: unchanged
    assert simplify_path(ring[:2], 1.0) is not None


def test_clip_path_keeps_the_runs_inside_the_box() -> None:
    from analysis.geo.mapdata.context import clip_path

    line = np.array([[x, 0.0] for x in range(10)], dtype=np.float64)
    assert [p.tolist() for p in clip_path(line, (-1.0, -1.0, 20.0, 1.0))] == [line.tolist()]
    pieces = clip_path(line, (3.5, -1.0, 5.5, 1.0))  # vertices 4 and 5 inside
    assert [p[:, 0].tolist() for p in pieces] == [[3.0, 4.0, 5.0, 6.0]]  # and one beyond
    # a line leaving and re-entering the box: two pieces
    zigzag = np.array([[0, 0], [0, 5], [0.5, 6], [1, 5], [1, 0], [2, 0], [2, 5]], dtype=float)
    pieces = clip_path(zigzag, (-0.5, -0.5, 2.5, 1.0))
    assert [p.tolist() for p in pieces] == [
        [[0, 0], [0, 5]],
        [[1, 5], [1, 0], [2, 0], [2, 5]],
    ]
    assert clip_path(line, (20.0, 20.0, 30.0, 30.0)) == []  # nothing inside


def test_context_districts_only_near_the_view() -> None:
    """A street-level view in Hangzhou gets pieces of the nearby boundaries only, far fewer
    vertices than the city has; a city-wide view gets the simplified city."""
    from analysis.geo.mapdata import context

    def drawn(bounds):
        layers = {layer.id: layer for layer in context.context_layers(bounds)}
        paths = layers["context_districts"].data
        names = {row["tip_title"] for row in paths}
        in_hangzhou = sum(len(row["path"]) for row in paths if row["tip_name"] == "Hangzhou")
        return names, in_hangzhou, paths

    hangzhou = [d for d in context.districts() if d["city"] == "Hangzhou"]
    city_vertices = sum(len(r) for d in hangzhou for r in d["rings"])
    street = (120.15, 30.25, 120.17, 30.26)  # West Lake, 2 km x 1 km
    names, vertices, paths = drawn(street)
    assert "西湖区" in names
    assert "淳安县" not in names  # Chun'an is ~100 km west: left out
    assert 0 < vertices < city_vertices / 5
    lon0, lat0, lon1, lat1 = street
    w = h = context.MIN_MARGIN_DEG  # the least margin, larger than this view
    for row in paths:  # every piece has a vertex in the view and its margin
        pts = np.asarray(row["path"])
        inside = (
            (pts[:, 0] >= lon0 - w) & (pts[:, 0] <= lon1 + w)
            & (pts[:, 1] >= lat0 - h) & (pts[:, 1] <= lat1 + h)
        )  # fmt: skip
        assert inside.any()
    city = (119.0, 29.5, 120.8, 30.6)
    names, vertices, _ = drawn(city)
    assert {d["name"] for d in hangzhou} <= names
    assert vertices < city_vertices / 2  # a pixel of a city-wide view drops most


def test_query_deck_contents() -> None:
    spec = _spec(geomap.query_deck(_points(k=10), QUERY))
    layers = {layer["id"]: layer for layer in spec["layers"]}
    assert [r["doc_id"] for r in layers["gold"]["data"]] == ["g"]
    # A's unlocated "nowhere" is not drawn; drawn in descending rank so rank 1 is on top
    assert [r["rank"] for r in layers["model_A"]["data"]] == [3, 2, 1]
    assert [r["doc_id"] for r in layers["model_B"]["data"]] == ["s2", "x"]
    # one column for the stack at P (g, s1, s2), height = stack size
    assert len(layers["stacks"]["data"]) == 1
    assert layers["stacks"]["data"][0]["stack_size"] == 3
    assert layers["stacks"]["data"][0]["doc_id"] == "g"  # gold first
    assert len(layers["arcs_A"]["data"]) == 3
    # centred on the gold
    view = spec["initialViewState"]
    assert (view["latitude"], view["longitude"]) == P
    assert 3 <= view["zoom"] <= 17


def test_a_stack_at_the_gold_is_a_ring_in_pixels_with_its_size() -> None:
    """The stack at P holds the gold g and s1 (A's rank 1) and s2 (B's rank 2): three POIs a
    few metres apart, one disc when zoomed out. They are spread on a ring of pixel offsets (the
    same at every zoom) around a badge saying 3, which lets a click through to the POIs under
    it (a selected POI's stack is listed)."""
    spec = _spec(geomap.query_deck(_points(), QUERY, context=False))
    (text,) = [layer for layer in spec["layers"] if layer["@@type"] == "TextLayer"]
    assert text["getPixelOffset"] == "@@=offset"
    assert text["pickable"] is True
    ring = [r for r in text["data"] if r["text"] == geomap.query.RING_GLYPH]
    assert [r["doc_id"] for r in ring] == ["g", "s1", "s2"]  # gold first, then rank
    offsets = [tuple(r["offset"]) for r in ring]
    assert len(set(offsets)) == 3
    for dx, dy in offsets:
        assert math.hypot(dx, dy) == pytest.approx(geomap.query.RING_PX, abs=0.05)
    assert offsets[0] == (0.0, -geomap.query.RING_PX)  # the gold on top
    assert {tuple(r["position"]) for r in ring} == {P[::-1]}  # true coordinate, no jitter
    assert ring[0]["color"] == geomap.GOLD_COLOR
    assert all(r["bg"][3] == 0 and r["border"][3] == 0 for r in ring)  # no box
    (badge,) = [r for r in text["data"] if r["text"] != geomap.query.RING_GLYPH]
    assert (badge["text"], badge["doc_id"], badge["tip_title"]) == ("3", "g", "Stack of 3 POIs")
    assert badge["position"] == [P[1], P[0]]
    assert badge["offset"] == [0.0, 0.0]
    assert (badge["bg"][3], badge["border"][3]) == (255, 255)  # a white box with a border
    assert text["background"] is True


def test_a_stack_with_one_drawn_poi_gets_a_badge_but_no_ring() -> None:
    pts = geomap.query_points(["far"], {"A": pd.DataFrame({"doc_id": ["s1"], "rank": [1]})},
                              _index(), k=10)  # fmt: skip
    ring, badges = geomap.query.stack_ring(pts)
    assert ring.empty
    assert badges["label"].tolist() == ["3"]  # s1's stack: g, s1, s2


def test_a_query_without_stacks_has_no_ring_or_badge() -> None:
    pts = geomap.query_points(["far"], {"A": pd.DataFrame({"doc_id": ["x"], "rank": [1]})},
                              _index(), k=10)  # fmt: skip
    spec = _spec(geomap.query_deck(pts, QUERY))
    assert "labels" not in [layer["id"] for layer in spec["layers"]]
    assert "stacks" not in [layer["id"] for layer in spec["layers"]]


def test_k_caps_the_drawn_lists() -> None:
    pts = _points(k=1)
    assert pts.loc[pts["role"] == "A", "doc_id"].tolist() == ["s1"]
    assert pts.loc[pts["role"] == "B", "doc_id"].tolist() == ["x"]
    many = pd.DataFrame({"doc_id": ["g"] * 80, "rank": range(1, 81)})
    pts = geomap.query_points([], {"A": many}, _index(), k=100)
    assert len(pts) == geomap.MAX_K


def test_basemap_none_needs_no_internet_and_carto_is_opt_in() -> None:
    none = _spec(geomap.query_deck(_points(), QUERY))
    assert "mapProvider" not in none
    assert "cartocdn" not in json.dumps(none)
    carto = _spec(geomap.query_deck(_points(), QUERY, basemap="carto"))
    assert carto["mapProvider"] == "carto"
    assert "cartocdn" in carto["mapStyle"]
    ds = _spec(geomap.dataset_deck(_index()))
    assert "mapProvider" not in ds


def test_query_without_coordinates_has_no_arcs_or_query_point() -> None:
    spec = _spec(geomap.query_deck(_points(), {"query_id": "q", "text": "t"}))
    ids = [layer["id"] for layer in spec["layers"]]
    assert "query" not in ids
    assert not any(i.startswith("arcs_") for i in ids)
    assert spec["initialViewState"]["latitude"] == P[0]  # still centred on the gold


@pytest.mark.parametrize(("lat", "lon"), [(120.2, 30.2), (30.0, 200.0), (-91.0, 0.0)])
def test_a_query_point_off_the_globe_is_not_drawn(lat: float, lon: float) -> None:
    query = {"query_id": "q", "text": "t", "lat": lat, "lon": lon}
    unlocated = _points().assign(located=False)  # nothing else to centre on
    for points, centre in ((_points(), P), (unlocated, (0.0, 0.0))):
        spec = _spec(geomap.query_deck(points, query))
        ids = [layer["id"] for layer in spec["layers"]]
        assert "query" not in ids
        assert not any(i.startswith("arcs_") for i in ids)
        view = spec["initialViewState"]
        assert (view["latitude"], view["longitude"]) == centre


def test_dataset_deck_layers() -> None:
    spec = _spec(geomap.dataset_deck(_index()))
    layers = {layer["id"]: layer for layer in spec["layers"]}
    assert set(layers) == {"dataset_pois", "dataset_stacks"}
    assert spec["initialViewState"]["pitch"] == 0
    assert all(layer["pickable"] for layer in layers.values())
    assert len(layers["dataset_pois"]["data"]) == 5  # located POIs only
    stacks = layers["dataset_stacks"]["data"]
    assert [(s["doc_id"], s["stack_size"]) for s in stacks] == [("g", 3)]
    thin = _spec(geomap.dataset_deck(_index(), max_points=2))
    pois = next(layer for layer in thin["layers"] if layer["id"] == "dataset_pois")
    assert len(pois["data"]) == 2  # every 3rd of 5 located POIs


def test_maps_of_pois_whose_coordinates_are_text() -> None:
    pois = _pois()
    as_text = pois.assign(lat=pois["lat"].astype("str"), lon=pois["lon"].astype("str"))
    index = geomap.poi_index(as_text)
    assert index["lat"].dtype == np.float64
    assert geomap.dataset_deck(index).to_json() == geomap.dataset_deck(_index()).to_json()
    names = {"A": "bm25", "B": "<b>dense</b>"}
    points = geomap.query_points(["g"], _rankings(), index, k=10, model_names=names)
    assert (
        geomap.query_deck(points, QUERY).to_json() == geomap.query_deck(_points(), QUERY).to_json()
    )


def _drawn_lons(spec: dict) -> list[float]:
    """Every longitude a deck draws a data row at (points, arcs, columns, labels)."""
    out = []
    for layer in spec["layers"]:
        for row in layer["data"]:
            out += [row[key] for key in ("lon", "x_lon", "q_lon") if key in row]
            out += [row["position"][0]] if "position" in row else []
    return out


def test_maps_across_the_antimeridian_draw_the_points_side_by_side() -> None:
    east, west = 179.99995, -179.99995  # 11 m apart, across the antimeridian
    pois = pd.DataFrame({"doc_id": ["g", "e", "w1", "w2"], "name": ["g", "e", "w1", "w2"],
                         "lat": [0.0] * 4, "lon": [east, east, west, west]})  # fmt: skip
    index = geomap.poi_index(pois)
    ranking = pd.DataFrame({"doc_id": ["w1", "w2", "e"], "rank": [1, 2, 3]})
    decks = [geomap.dataset_deck(index)]
    for gold in (["g"], []):  # centred on the gold, or on the POIs
        points = geomap.query_points(gold, {"A": ranking}, index, k=10)
        decks += [
            geomap.query_deck(points, {"query_id": "q", "lat": 0.0, "lon": west}),
            geomap.query_deck(points, {"query_id": "q"}),
        ]
    for deck in decks:
        spec = _spec(deck)
        centre = spec["initialViewState"]["longitude"]
        assert abs(abs(centre) - 180.0) < 0.001
        drawn = _drawn_lons(spec)
        assert len(drawn) >= 4
        assert all(abs(lon - centre) < 0.001 for lon in drawn), (centre, drawn)


def test_dataset_deck_without_stacks_or_coordinates() -> None:
    lone = _pois().iloc[[0, 3, 4]]
    spec = _spec(geomap.dataset_deck(geomap.poi_index(lone)))
    assert [layer["id"] for layer in spec["layers"]] == ["dataset_pois"]
    empty = _pois().iloc[[5]]
    assert _spec(geomap.dataset_deck(geomap.poi_index(empty)))["layers"] == []


def test_static_deck_serializes_once() -> None:
    deck = geomap.query_deck(_points(), QUERY)
    first = deck.to_json()
    assert deck.to_json() is first
    json.loads(first)


# --------------------------------------------------------------------------------------------
# escaping


def test_escape_text() -> None:
    assert geomap.escape_text([EVIL, None, np.nan, "a & b", "x" * 200], limit=10) == [
        "&lt;img src=…",
        "",
        "",
        "a &amp; b",
        "x" * 9 + "…",
    ]
    assert geomap.escape_text(pd.Series(["'\""])) == ["&#x27;&quot;"]


def test_tooltip_fields_are_escaped() -> None:
    pts = _points()
    gold = pts[pts["role"] == "gold"].iloc[0]
    assert gold["name"] == EVIL  # the data itself is untouched
    assert gold["tip_name"] == EVIL_ESCAPED
    b_title = pts.loc[pts["role"] == "B", "tip_title"].iloc[0]
    assert "&lt;b&gt;dense&lt;/b&gt;" in b_title
    text = geomap.query_deck(pts, QUERY).to_json()
    assert "<img" not in text
    assert "<script" not in text
    assert "<b>dense" not in text
    assert EVIL_ESCAPED in text
    assert "q&lt;1&gt;" in text
    # tooltips only interpolate the escaped fields
    assert set(_fields(geomap.TOOLTIP["html"])) == {"tip_title", "tip_name", "tip_detail"}
    ds_text = geomap.dataset_deck(_index()).to_json()
    assert "<img" not in ds_text
    assert EVIL_ESCAPED in ds_text


def _fields(template: str) -> list[str]:
    import re

    return re.findall(r"{(.*?)}", template)


def _interpolate(template: str, row: dict) -> str:
    """A tooltip as deck.gl's and Streamlit's renderers build it: the template's ``{field}``s,
    one after another, each replaced at its first occurrence in the text built so far."""
    out = template
    for match in _fields(template):
        if match in row:
            out = out.replace("{" + match + "}", str(row[match]), 1)
    return out


def test_tooltip_text_with_braces_is_not_read_as_a_field() -> None:
    pois = _pois()
    pois.loc[pois["doc_id"] == "g", "name"] = "cafe {tip_detail} {tip_name} {doc_id}"
    index = geomap.poi_index(pois)
    pts = geomap.query_points(["g"], _rankings(), index, k=10, model_names={"A": "{tip_name}"})
    template = geomap.TOOLTIP["html"]
    shown = []
    for deck in (geomap.query_deck(pts, QUERY), geomap.dataset_deck(index)):
        for layer in json.loads(deck.to_json())["layers"]:
            for row in layer["data"]:
                if "tip_title" not in row:
                    continue
                once = re.sub(r"{(.*?)}", lambda m, r=row: str(r[m.group(1)]), template)
                assert _interpolate(template, row) == once, layer["id"]
                shown.append(html.unescape(once))
    assert any("cafe {tip_detail} {tip_name} {doc_id}" in text for text in shown)
    assert any("Model A ({tip_name})" in text for text in shown)


def test_every_drawn_row_has_the_tooltip_fields() -> None:
    spec = _spec(geomap.query_deck(_points(), QUERY))
    for layer in spec["layers"]:
        for row in layer["data"]:
            assert {"tip_title", "tip_name", "tip_detail"} <= set(row), layer["id"]


# --------------------------------------------------------------------------------------------
# jitter


def test_jitter_moves_only_duplicates() -> None:
    lat = np.array([30.0, 30.0, 30.0, 31.0, np.nan, 32.0])
    lon = np.array([120.0, 120.0, 120.0, 121.0, 1.0, 122.0])
    jl, jo = geomap.jitter(lat, lon)
    # unique coordinates and NaN untouched
    assert (jl[3], jo[3]) == (31.0, 121.0)
    assert (jl[5], jo[5]) == (32.0, 122.0)
    assert np.isnan(jl[4])
    # the three duplicates: moved, apart from each other, within a few metres
    moved = list(zip(jl[:3], jo[:3], strict=True))
    assert len(set(moved)) == 3
    d = haversine_m(30.0, 120.0, jl[:3], jo[:3])
    assert np.all(d > 0.5)
    assert np.all(d < 10.0)
    np.testing.assert_allclose(d, geomap.JITTER_STEP_M * np.sqrt([1, 2, 3]), rtol=1e-3)
    # inputs untouched
    assert lat[0] == 30.0


def test_jitter_keeps_a_stack_at_a_pole_on_the_globe() -> None:
    for pole in (-90.0, 90.0):
        lat, lon = geomap.jitter(np.full(5, pole), np.zeros(5))
        assert np.all(np.abs(lat) <= 90.0)
        assert len(set(zip(lat.tolist(), lon.tolist(), strict=True))) == 5  # still spread
        pois = pd.DataFrame({"doc_id": list("abc"), "name": list("abc"), "lat": [pole] * 3,
                             "lon": [0.0] * 3})  # fmt: skip
        ranking = pd.DataFrame({"doc_id": ["b", "c"], "rank": [1, 2]})
        points = geomap.query_points(["a"], {"A": ranking}, geomap.poi_index(pois), k=10)
        spec = _spec(geomap.query_deck(points, {"query_id": "q", "lat": pole, "lon": 0.0}))
        lats = [row[key] for layer in spec["layers"] for row in layer["data"]
                for key in ("lat", "x_lat", "q_lat") if key in row]  # fmt: skip
        assert len(lats) >= 5
        assert all(abs(v) <= 90.0 for v in lats)


def test_jitter_is_deterministic() -> None:
    rng = np.random.default_rng(0)
    lat = rng.choice([30.0, 30.1, 30.2], size=50)
    lon = np.full(50, 120.0)
    a = geomap.jitter(lat, lon)
    b = geomap.jitter(lat.copy(), lon.copy())
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    empty = geomap.jitter([], [])
    assert empty[0].size == 0


def test_query_points_jitter_only_in_display_columns() -> None:
    pts = _points()
    located = pts[pts["located"]]
    # g appears as gold and in A's list, s1/s2 share its coordinate: all on P, all displaced
    on_p = located[(located["lat"] == P[0]) & (located["lon"] == P[1])]
    assert len(on_p) == 4
    assert on_p[["x_lat", "x_lon"]].drop_duplicates().shape[0] == 4
    assert not ((on_p["x_lat"] == P[0]) & (on_p["x_lon"] == P[1])).any()
    # x is alone (B only): not moved
    x = located[located["doc_id"] == "x"].iloc[0]
    assert (x["x_lat"], x["x_lon"]) == R
    unlocated = pts[~pts["located"]]
    assert unlocated["doc_id"].tolist() == ["nowhere"]


# --------------------------------------------------------------------------------------------
# colours


def test_colours_by_hit_and_miss() -> None:
    pts = _points().set_index(["role", "doc_id"])
    a_hit = pts.loc[("A", "g"), "color"]
    a_miss = pts.loc[("A", "s1"), "color"]
    b_miss = pts.loc[("B", "x"), "color"]
    gold = pts.loc[("gold", "g"), "color"]
    assert bool(pts.loc[("A", "g"), "hit"]) is True
    assert bool(pts.loc[("A", "s1"), "hit"]) is False
    assert a_hit == geomap.MODEL_COLORS["A"][True]
    assert a_miss == geomap.MODEL_COLORS["A"][False]
    assert b_miss == geomap.MODEL_COLORS["B"][False]
    assert gold == geomap.GOLD_COLOR
    colours = [tuple(c) for c in (a_hit, a_miss, b_miss, gold, geomap.MODEL_COLORS["B"][True])]
    assert len(set(colours)) == 5
    titles = pts["tip_title"]
    assert titles.loc[("A", "g")] == "Model A (bm25) · rank 2 · hit"
    assert titles.loc[("A", "s1")].endswith("miss")
    assert "A: rank 2, B: —" in pts.loc[("gold", "g"), "tip_detail"]


# --------------------------------------------------------------------------------------------
# tables and small helpers


def test_parse_url_values() -> None:
    assert geomap.parse_tolerance("50") == 50.0
    assert geomap.parse_tolerance("0") == 0.0
    assert geomap.parse_tolerance("7") is None
    assert geomap.parse_tolerance("nan") is None
    assert geomap.parse_tolerance(None) is None
    assert geomap.parse_basemap("carto") == "carto"
    assert geomap.parse_basemap("mapbox") is None


def test_has_coordinates() -> None:
    assert geomap.has_coordinates(_pois())
    assert not geomap.has_coordinates(None)
    assert not geomap.has_coordinates(pd.DataFrame({"doc_id": ["a"], "name": ["b"]}))
    assert not geomap.has_coordinates(pd.DataFrame({"lat": [np.nan], "lon": [np.nan]}))


def test_default_query_is_the_worst_failure() -> None:
    table = pd.DataFrame(
        {
            "dataset": ["d"] * 5 + ["e"],
            "model": ["m", "m", "m", "m", "other", "m"],
            "query_id": ["q1", "q2", "q3", "q4", "q5", "q6"],
            "hit@1": [1.0, 0.5, 0.0, 0.0, 0.0, 0.0],
        }
    )
    assert geomap.default_query(table, "d", "m", "hit@1") == "q3"  # first of the worst
    perfect = table.assign(**{"hit@1": 1.0})
    assert geomap.default_query(perfect, "d", "m", "hit@1") == "q1"
    assert geomap.default_query(table, "d", None, "hit@1") is None
    assert geomap.default_query(table, "d", "m", "mrr") is None
    assert geomap.default_query(table, "zz", "m", "hit@1") is None


def test_selected_doc() -> None:
    sel = {"indices": {"model_A": [0]}, "objects": {"model_A": [{"doc_id": "s1", "rank": 1}]}}
    assert geomap.selected_doc(sel) == "s1"
    query = {"indices": {"query": [0]}, "objects": {"query": [{"doc_id": ""}]}}
    assert geomap.selected_doc(query) is None
    assert geomap.selected_doc({"indices": {}, "objects": {}}) is None
    assert geomap.selected_doc(None) is None


def test_stack_members() -> None:
    index = _index()
    ranks = {"A": pd.Series([1, 2], index=["s1", "g"])}
    out = geomap.stack_members(index, "s2", gold_ids=["g"], ranks=ranks)
    assert out["doc_id"].tolist() == ["s2", "g", "s1"]  # selected, gold, table order
    assert out["selected"].tolist() == [True, False, False]
    assert out["gold"].tolist() == [False, True, False]
    assert out["rank A"].tolist()[1:] == [2, 1]
    assert pd.isna(out["rank A"].iloc[0])
    assert out["name"].iloc[1] == EVIL  # plain text in the table (st.dataframe shows text)
    assert geomap.stack_members(index, "unknown").empty
    alone = geomap.stack_members(index, "nowhere")
    assert alone["doc_id"].tolist() == ["nowhere"]
    # a 1.2 km tolerance joins P, Q and R into one stack
    wide = geomap.stack_members(_index(1200.0), "x")
    assert set(wide["doc_id"]) == {"g", "s1", "s2", "far", "x"}


def test_largest_stacks_table() -> None:
    report = {
        "largest_stacks": [
            {"stack_id": 0, "size": 3, "lat": P[0], "lon": P[1], "doc_ids": ["g", "s1", "s2"]}
        ]
    }
    table = geomap.largest_stacks_table(report, _index())
    assert table.columns.tolist() == ["stack_id", "size", "lat", "lon", "names", "doc_ids"]
    assert table["names"].iloc[0] == f"{EVIL} | stack mate one | stack mate two"
    assert geomap.largest_stacks_table({}, _index()).empty


def test_histogram_figure() -> None:
    fig = geomap.histogram_figure({"stack_size_histogram": {1: 100, 3: 2}, "tolerance_m": 5.0})
    assert list(fig.data[0].x) == [1, 3]
    assert list(fig.data[0].y) == [100, 2]
    assert fig.layout.yaxis.type == "log"
    assert fig.layout.yaxis.dtick == 1  # labels at powers of ten only: none overlap
    assert list(fig.layout.xaxis.tickvals) == [1, 3]


def test_topk_index_and_query_ranking() -> None:
    ranked = pd.DataFrame(
        {
            "query_id": ["q1", "q1", "q2"],
            "doc_id": ["b", "a", "c"],
            "score": [2, 1, 1],
            "rank": [1, 2, 1],
        }
    )
    idx = geomap.topk_index(ranked, keep=1)
    assert geomap.query_ranking(idx, "q1")["doc_id"].tolist() == ["b"]
    assert geomap.query_ranking(idx, "missing").empty
    assert geomap.query_ranking(None, "q1").empty


def test_strict_vs_twin_aware() -> None:
    pois = pd.DataFrame(
        {
            "doc_id": ["g", "x", "g_twin"],
            "name": ["Golden Dragon", "Other", "golden  dragon"],
            "lat": [P[0], Q[0], P[0]],
            "lon": [P[1], Q[1], P[1]],
        }
    )
    pois["text"] = pois["name"]
    ranked = pd.DataFrame(
        {
            "query_id": ["q1"] * 3,
            "doc_id": ["g_twin", "x", "g"],
            "score": [3.0, 2.0, 1.0],
            "rank": [1, 2, 3],
        }
    )
    qrels = pd.DataFrame({"query_id": ["q1"], "doc_id": ["g"], "relevance": [1]})
    out = geomap.strict_vs_twin_aware(ranked, qrels, pois, ["recall@1", "ndcg@10"])
    row = out.set_index("query_id").loc["q1"]
    assert row["recall@1"] == 0.0
    assert row["recall@1 twin-aware"] == 1.0
    assert row["ndcg@10"] == pytest.approx(0.5)  # gold at rank 3: 1 / log2(4)
    assert row["ndcg@10 twin-aware"] == pytest.approx(1.0)
    table = geomap.twin_aware_table({"A": out}, "q1", ["recall@1"], {"A": "m"})
    assert table.to_dict("records") == [
        {
            "model": "A: m",
            "metric": "recall@1",
            "strict": 0.0,
            "twin-aware": 1.0,
            "mean strict": 0.0,
            "mean twin-aware": 1.0,
        }
    ]
    missing = geomap.twin_aware_table({"A": out}, "nope", ["recall@1"], {"A": "m"})
    assert np.isnan(missing["strict"].iloc[0])


def test_query_diagnostics_table() -> None:
    diag = pd.DataFrame(
        {
            "query_id": ["q1"],
            "dist_query_gold_m": [12.345],
            "dist_query_top1_m": [np.nan],
            "gold_stack_size": pd.array([3], dtype="Int64"),
            "first_gold_rank": pd.array([pd.NA], dtype="Int64"),
            "indistinguishable": [False],
            "n_above_gold_on_gold_coord": [0],
            "stackmates_in_top_k": [2],
        }
    )
    out = geomap.query_diagnostics_table({"A": diag, "B": diag}, "q1", {"A": "a", "B": "b"})
    assert out["model"].tolist() == ["A: a", "B: b"]
    assert out["query → nearest gold (m)"].tolist() == [12.3, 12.3]
    assert out["gold stack size"].tolist() == [3, 3]
    assert pd.isna(out["first gold rank"].iloc[0])
    assert out["gold stack-mates in top k"].tolist() == [2, 2]
    empty = geomap.query_diagnostics_table({"A": diag}, "other", {"A": "a"})
    assert len(empty) == 1
    assert pd.isna(empty["gold stack size"].iloc[0])


def test_every_text_of_a_map_is_one_text_layer_holding_the_drawn_characters() -> None:
    """District names, the scale bar's length, the stack ring and the stack's size badge are
    rows of one TextLayer on top, whose character set (the font atlas the browser draws) is
    the characters drawn, and the digits and units of any stack size or scale bar."""
    for deck in (geomap.query_deck(_points(), QUERY), geomap.dataset_deck(_index())):
        spec = json.loads(deck.to_json())
        texts = [layer for layer in spec["layers"] if layer["@@type"] == "TextLayer"]
        assert [layer["id"] for layer in texts] == ["labels"]
        assert spec["layers"][-1] is texts[0]
        assert texts[0]["parameters"] == {"depthCompare": "always"}  # over the columns
        drawn = {char for row in texts[0]["data"] for char in row["text"]}
        assert texts[0]["characterSet"] == "".join(sorted(drawn | set("0123456789 km")))
        assert "区" in drawn  # Hangzhou's district names
        assert {"m"} <= drawn  # the scale bar's "m" or "km"
    rows = json.loads(geomap.query_deck(_points(), QUERY).to_json())["layers"][-1]["data"]
    assert {geomap.query.RING_GLYPH, "3"} <= {row["text"] for row in rows}


def test_static_deck_json_is_pydecks_json_compact() -> None:
    text = geomap.query_deck(_points(), QUERY).to_json()
    fresh = geomap.query_deck(_points(), QUERY)
    assert json.loads(text) == json.loads(pdk.Deck.to_json(fresh))
    assert "\n" not in text  # compact (pydeck indents)
