"""Tests for analysis.geo: distances, one-CRS conversion, stacks, twins, per-query diagnostics."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from pyproj import Transformer

from analysis.core.errors import InputError
from analysis.geo import (
    EARTH_RADIUS_M,
    canonicalize_twins,
    coordinate_stacks,
    geo_diagnostics,
    haversine_m,
    normalize_text,
    stack_report,
    to_wgs84,
    twins,
)

M_PER_DEG = EARTH_RADIUS_M * math.pi / 180.0  # metres per degree of latitude on the sphere


def _pois(rows: list[tuple[str, str, float, float]]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=["doc_id", "text", "lat", "lon"])
    df["doc_id"] = df["doc_id"].astype("str")
    df["name"] = df["text"]
    return df


def _metrics():
    """The metric core, once it exists (written in parallel by another engineer)."""
    return pytest.importorskip("analysis.core.metrics")


def _by_query(res: pd.DataFrame) -> pd.DataFrame:
    return res.set_index("query_id") if "query_id" in res.columns else res


# --------------------------------------------------------------------------------------------
# haversine
# --------------------------------------------------------------------------------------------


def test_haversine_beijing_shanghai() -> None:
    # Tiananmen Square -> People's Square: ~1,067 km
    d = haversine_m(39.9087, 116.3975, 31.2317, 121.4726)
    assert isinstance(d, float)
    assert d == pytest.approx(1_067_000, rel=0.005)


def test_haversine_paris_london() -> None:
    assert haversine_m(48.8566, 2.3522, 51.5074, -0.1278) == pytest.approx(343_500, rel=0.005)


def test_haversine_zero_symmetric_and_quarter_meridian() -> None:
    assert haversine_m(30.1, 120.2, 30.1, 120.2) == 0.0
    a = haversine_m(10.0, 20.0, -5.0, 170.0)
    assert a == pytest.approx(haversine_m(-5.0, 170.0, 10.0, 20.0), rel=1e-12)
    assert haversine_m(0.0, 0.0, 90.0, 0.0) == pytest.approx(math.pi / 2 * EARTH_RADIUS_M)


def test_haversine_antimeridian() -> None:
    d = haversine_m(0.0, 179.999, 0.0, -179.999)
    assert d == pytest.approx(0.002 * M_PER_DEG, rel=1e-6)  # ~222 m, not ~40,000 km
    assert haversine_m(0.0, 180.0, 0.0, -180.0) == pytest.approx(0.0, abs=1e-6)


def test_haversine_vectorized_and_nan() -> None:
    lat2 = np.array([0.0, 1.0, np.nan])
    d = haversine_m(0.0, 0.0, lat2, 0.0)
    assert d.shape == (3,)
    assert d[0] == 0.0
    assert d[1] == pytest.approx(M_PER_DEG)
    assert np.isnan(d[2])
    # antipodal points: no NaN from rounding
    assert haversine_m(0.0, 0.0, 0.0, 180.0) == pytest.approx(math.pi * EARTH_RADIUS_M)


# --------------------------------------------------------------------------------------------
# one CRS per dataset
# --------------------------------------------------------------------------------------------


def test_one_crs_across_utm_boundary_keeps_2km() -> None:
    """Two points ~2 km apart on either side of 120°E (UTM zones 50/51)."""
    lat = 31.0
    lon = np.array([120.0 - 0.0105, 120.0 + 0.0105])
    truth = haversine_m(lat, lon[0], lat, lon[1])
    assert truth == pytest.approx(2000, rel=0.01)

    zone50 = Transformer.from_crs("EPSG:4326", "EPSG:32650", always_xy=True)
    zone51 = Transformer.from_crs("EPSG:4326", "EPSG:32651", always_xy=True)
    x, y = zone50.transform(lon, np.full(2, lat))

    # one CRS for the dataset: the round trip and the distance survive
    la, lo = to_wgs84(x, y, "EPSG:32650")
    np.testing.assert_allclose(la, lat, atol=1e-9)
    np.testing.assert_allclose(lo, lon, atol=1e-9)
    assert haversine_m(la[0], lo[0], la[1], lo[1]) == pytest.approx(truth, abs=0.01)
    assert math.hypot(x[1] - x[0], y[1] - y[0]) == pytest.approx(2000, rel=0.01)

    # LIST's per-point zone: the second point's easting comes from zone 51. Read as one plane
    # (or converted with one dataset CRS) the 2 km pair is ~570 km apart.
    x51, y51 = zone51.transform(lon[1], lat)
    assert math.hypot(x51 - x[0], y51 - y[0]) == pytest.approx(575_000, rel=0.02)
    la2, lo2 = to_wgs84([x[0], x51], [y[0], y51], "EPSG:32650")
    assert haversine_m(la2[0], lo2[0], la2[1], lo2[1]) > 500_000


def test_to_wgs84_axis_order_epsg2385() -> None:
    """EPSG:2385's authority order is (northing, easting), GeoBloom's (X, Y)."""
    north, east = 3358142.0812192573, 519099.5152475653  # first POI of GeoGLUE-clean
    lat_a, lon_a = to_wgs84([north], [east], "EPSG:2385", always_xy=False)
    lat_b, lon_b = to_wgs84([east], [north], "EPSG:2385", always_xy=True)
    assert lat_a[0] == pytest.approx(30.3428828, abs=1e-7)
    assert lon_a[0] == pytest.approx(120.1986367, abs=1e-7)
    assert lat_b[0] == pytest.approx(lat_a[0], abs=1e-12)
    assert lon_b[0] == pytest.approx(lon_a[0], abs=1e-12)


def test_to_wgs84_unknown_crs() -> None:
    with pytest.raises(ValueError, match="CRS"):
        to_wgs84([0.0], [0.0], "EPSG:999999")


# --------------------------------------------------------------------------------------------
# stacks
# --------------------------------------------------------------------------------------------


def _line_pois() -> pd.DataFrame:
    """A, B identical; C 5 m north of A; D 13 m north of A (8 m from C); E far; F unlocated."""
    lat0, lon0 = 30.0, 120.0
    return _pois(
        [
            ("A", "a", lat0, lon0),
            ("B", "b", lat0, lon0),
            ("C", "c", lat0 + 5 / M_PER_DEG, lon0),
            ("D", "d", lat0 + 13 / M_PER_DEG, lon0),
            ("E", "e", 31.0, 121.0),
            ("F", "f", np.nan, np.nan),
        ]
    )


def test_stacks_exact() -> None:
    out = coordinate_stacks(_line_pois())
    assert out["stack_id"].tolist() == [0, 0, 1, 2, 3, -1]
    assert out["stack_size"].tolist() == [2, 2, 1, 1, 1, 0]
    assert out["doc_id"].tolist() == list("ABCDEF")  # original columns and order kept


def test_stacks_with_tolerance_single_linkage() -> None:
    pois = _line_pois()
    t6 = coordinate_stacks(pois, tolerance_m=6.0)
    assert t6["stack_id"].tolist() == [0, 0, 0, 1, 2, -1]
    assert t6["stack_size"].tolist() == [3, 3, 3, 1, 1, 0]
    # 10 m: D is 8 m from C, so it joins through C although it is 13 m from A
    t10 = coordinate_stacks(pois, tolerance_m=10.0)
    assert t10["stack_size"].tolist() == [4, 4, 4, 4, 1, 0]
    # 4 m: only the exact duplicates
    assert coordinate_stacks(pois, tolerance_m=4.0)["stack_size"].tolist() == [2, 2, 1, 1, 1, 0]


@pytest.mark.parametrize("tolerance_m", [1e-13, 1e-300, 5e-324])
def test_stacks_with_a_tolerance_below_float_resolution_are_the_exact_stacks(
    tolerance_m: float,
) -> None:
    exact = coordinate_stacks(_line_pois())["stack_size"].tolist()
    assert exact == [2, 2, 1, 1, 1, 0]
    assert coordinate_stacks(_line_pois(), tolerance_m)["stack_size"].tolist() == exact


def test_stacks_tolerance_across_antimeridian_and_signed_zero() -> None:
    pois = _pois(
        [
            ("w", "w", 0.0, 180.0 - 5 / M_PER_DEG),
            ("e", "e", 0.0, -180.0 + 5 / M_PER_DEG),
            ("z1", "z", 0.0, 0.0),
            ("z2", "z", -0.0, -0.0),
        ]
    )
    assert coordinate_stacks(pois)["stack_size"].tolist() == [1, 1, 2, 2]
    assert coordinate_stacks(pois, tolerance_m=11.0)["stack_size"].tolist() == [2, 2, 2, 2]


def test_stacks_bad_input() -> None:
    with pytest.raises(ValueError, match="tolerance_m"):
        coordinate_stacks(_line_pois(), tolerance_m=-1)
    with pytest.raises(InputError, match="lat"):
        coordinate_stacks(pd.DataFrame({"doc_id": ["a"], "lon": [1.0]}))


@pytest.mark.parametrize("tolerance_m", [0.0, 5.0])
@pytest.mark.parametrize(
    ("lat", "lon", "message"),
    [
        (np.inf, 120.0, r"^pois: row 2 \(doc_id 'b'\): latitude inf out of range \[-90, 90\]$"),
        (30.0, -np.inf, r"row 2 \(doc_id 'b'\): longitude -inf out of range \[-180, 180\]"),
        (120.2, 30.2, r"latitude 120.2 out of range \[-90, 90\] \(are lat and lon swapped\?\)"),
        (30.0, 180.5, r"row 2 \(doc_id 'b'\): longitude 180.5 out of range"),
    ],
)
def test_stacks_and_twins_reject_coordinates_off_the_globe(
    lat: float, lon: float, message: str, tolerance_m: float
) -> None:
    pois = _pois([("a", "x", 30.0, 120.0), ("b", "x", lat, lon), ("c", "x", np.nan, np.nan)])
    for fn in (coordinate_stacks, twins, stack_report):
        with pytest.raises(InputError, match=message):
            fn(pois, tolerance_m)


# --------------------------------------------------------------------------------------------
# twins
# --------------------------------------------------------------------------------------------


def test_normalize_text() -> None:
    s = pd.Series(["  Ｃａｆé\u3000 Ｘ ", "CAFÉ x", None, "Straße"])
    assert normalize_text(s).tolist() == ["café x", "café x", "", "strasse"]


def test_twins() -> None:
    pois = _pois(
        [
            ("1", "Café  X", 30.0, 120.0),
            ("2", "café x", 30.0, 120.0),  # twin of 1 (case, whitespace)
            ("3", "ＣＡＦÉ X", 30.0, 120.0),  # twin of 1 (NFKC full-width)
            ("4", "Café X", 30.1, 120.0),  # same text, other coordinate
            ("5", "Bakery", 30.0, 120.0),  # same coordinate, other text
            ("6", "", 31.0, 121.0),  # empty text never twins
            ("7", "", 31.0, 121.0),
            ("8", "Bakery", 30.0, 120.0),  # twin of 5
            ("9", "Café X", np.nan, np.nan),  # unlocated
        ]
    )
    out = twins(pois)
    assert out["twin_group"].tolist() == [0, 0, 0, -1, 1, -1, -1, 1, -1]
    assert out["twin_group_size"].tolist() == [3, 3, 3, 1, 2, 1, 1, 2, 1]
    assert out["twin_canonical"].tolist() == ["1", "1", "1", "4", "5", "6", "7", "5", "9"]

    rep = stack_report(pois)
    assert rep["n_twin_groups"] == 2
    assert rep["n_twins"] == 5
    assert rep["n_twin_duplicates"] == 3


def test_twins_with_tolerance() -> None:
    pois = _pois([("a", "X", 30.0, 120.0), ("b", "x", 30.0 + 3 / M_PER_DEG, 120.0)])
    assert twins(pois)["twin_group"].tolist() == [-1, -1]
    assert twins(pois, tolerance_m=5)["twin_group"].tolist() == [0, 0]


def test_twins_duplicate_ids_rejected() -> None:
    pois = _pois([("a", "x", 1.0, 1.0), ("a", "x", 1.0, 1.0)])
    with pytest.raises(InputError, match="duplicate doc_id"):
        twins(pois)


# --------------------------------------------------------------------------------------------
# stack report
# --------------------------------------------------------------------------------------------


def test_stack_report_counts_and_json() -> None:
    pois = _pois(
        [
            ("a", "x", 1.0, 1.0),
            ("b", "y", 1.0, 1.0),
            ("c", "x", 1.0, 1.0),
            ("d", "x", 2.0, 2.0),
            ("e", "z", 2.0, 2.0),
            ("f", "w", 3.0, 3.0),
            ("g", "w", np.nan, np.nan),
        ]
    )
    rep = stack_report(pois)
    json.dumps(rep)  # plain types only
    assert rep["n_pois"] == 7
    assert rep["n_located"] == 6
    assert rep["n_stacked"] == 5
    assert rep["n_stacks"] == 2
    assert rep["largest_stack"] == 3
    assert rep["share_stacked"] == pytest.approx(5 / 6)
    assert rep["stack_size_histogram"] == {1: 1, 2: 1, 3: 1}
    assert rep["n_twin_groups"] == 1  # a and c
    assert rep["n_twins"] == 2
    top = rep["largest_stacks"][0]
    assert top == {"stack_id": 0, "size": 3, "lat": 1.0, "lon": 1.0, "doc_ids": ["a", "b", "c"]}
    assert [s["size"] for s in rep["largest_stacks"]] == [3, 2]
    for value in rep.values():
        assert not isinstance(value, np.generic)


def test_stack_report_clusters_once_with_the_twins_of_its_own_stacks(monkeypatch) -> None:
    """The stacks are computed once (single linkage at a tolerance is the slow part) and the
    twins are counted in those stacks: the same counts as :func:`twins` gives."""
    import analysis.geo.geometry as geometry

    calls = []
    real = geometry._stack_labels
    monkeypatch.setattr(geometry, "_stack_labels", lambda *a: calls.append(a) or real(*a))
    rng = np.random.default_rng(3)
    rows = [(f"p{i}", str(rng.integers(3)), 30 + rng.integers(4) * 1e-5, 120.0) for i in range(60)]
    pois = _pois(rows)
    rep = stack_report(pois, tolerance_m=1.5)
    assert len(calls) == 1
    groups = twins(pois, tolerance_m=1.5)["twin_group"]
    assert rep["n_twin_groups"] == groups.max() + 1
    assert rep["n_twins"] == (groups >= 0).sum()


def test_stack_report_empty() -> None:
    rep = stack_report(_pois([]))
    assert rep["n_pois"] == 0
    assert rep["largest_stack"] == 0
    assert rep["share_stacked"] == 0.0
    assert rep["stack_size_histogram"] == {}


# --------------------------------------------------------------------------------------------
# per-query diagnostics
# --------------------------------------------------------------------------------------------

P = (30.0, 120.0)
R = (30.01, 120.0)  # ~1.1 km north of P
Q = (30.0, 120.01)  # ~960 m east of P


def _diag_tables() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    pois = _pois(
        [
            ("g", "gold", *P),
            ("s1", "other one", *P),
            ("s2", "other two", *P),
            ("far", "far", *Q),
            ("g2", "gold two", *R),
        ]
    )
    queries = pd.DataFrame(
        {
            "query_id": ["q1", "q2", "q3", "q4", "q5"],
            "text": ["t"] * 5,
            "lat": [P[0], R[0], P[0], P[0], np.nan],
            "lon": [P[1], R[1], P[1], P[1], np.nan],
        }
    )
    qrels = pd.DataFrame(
        {
            "query_id": ["q1", "q2", "q3", "q4", "q4", "q5", "q5"],
            "doc_id": ["g", "g2", "g", "g", "g2", "g", "s1"],
            "relevance": [1, 1, 1, 1, 1, 1, 0],
        }
    )
    run_rows = [
        ("q1", ["s1", "far", "g", "s2"]),  # a stack-mate of the gold above it
        ("q2", ["far", "g2"]),  # gold alone on its coordinate
        ("q3", ["far", "s1"]),  # gold not retrieved
        ("q4", ["s1", "g2", "g"]),  # first gold is g2 at R; s1 sits on g (not g2)
        ("q5", ["s1", "g"]),  # s1 judged non-relevant (0): still non-gold
        ("qx", ["g"]),  # not in qrels: ignored
    ]
    run = pd.DataFrame(
        [(q, d, 1.0 / r, r) for q, docs in run_rows for r, d in enumerate(docs, start=1)],
        columns=["query_id", "doc_id", "score", "rank"],
    )
    return run, qrels, queries, pois


def test_geo_diagnostics_hand_made() -> None:
    run, qrels, queries, pois = _diag_tables()
    out = geo_diagnostics(run, qrels, queries, pois, k=10).set_index("query_id")
    assert out.index.tolist() == ["q1", "q2", "q3", "q4", "q5"]
    d_pq = haversine_m(*P, *Q)
    d_pr = haversine_m(*P, *R)

    q1 = out.loc["q1"]
    assert q1["first_gold_rank"] == 3
    assert bool(q1["indistinguishable"]) is True
    assert q1["n_above_gold_on_gold_coord"] == 1  # s1; s2 is below the gold
    assert q1["stackmates_in_top_k"] == 2  # s1 and s2
    assert q1["gold_stack_size"] == 3
    assert q1["dist_query_gold_m"] == 0.0
    assert q1["dist_query_top1_m"] == 0.0

    q2 = out.loc["q2"]
    assert q2["first_gold_rank"] == 2
    assert bool(q2["indistinguishable"]) is False
    assert q2["gold_stack_size"] == 1
    assert q2["dist_query_top1_m"] == pytest.approx(haversine_m(*R, *Q))

    q3 = out.loc["q3"]
    assert pd.isna(q3["first_gold_rank"])
    assert bool(q3["indistinguishable"]) is False
    assert q3["stackmates_in_top_k"] == 1  # s1 shares g's coordinate
    assert q3["dist_query_top1_m"] == pytest.approx(d_pq)

    q4 = out.loc["q4"]
    assert q4["first_gold_rank"] == 2
    assert bool(q4["indistinguishable"]) is False  # "the gold's coordinate" = first gold's (R)
    assert q4["dist_query_gold_m"] == 0.0  # nearest gold g
    assert q4["gold_stack_size"] == 3

    q5 = out.loc["q5"]
    assert bool(q5["indistinguishable"]) is True
    assert np.isnan(q5["dist_query_gold_m"])
    assert np.isnan(q5["dist_query_top1_m"])
    assert d_pr > 1000

    assert out["first_gold_rank"].dtype == "Int64"
    assert out["indistinguishable"].dtype == bool


def test_geo_diagnostics_k_limits_stackmates() -> None:
    run, qrels, queries, pois = _diag_tables()
    out = geo_diagnostics(run, qrels, queries, pois, k=2).set_index("query_id")
    assert out.loc["q1", "stackmates_in_top_k"] == 1
    assert bool(out.loc["q1", "indistinguishable"]) is True  # whole ranking, not only top k


def test_geo_diagnostics_needs_ranks() -> None:
    run, qrels, queries, pois = _diag_tables()
    with pytest.raises(InputError, match="rank"):
        geo_diagnostics(run.drop(columns="rank"), qrels, queries, pois)


def test_geo_diagnostics_with_rank_run() -> None:
    metrics = _metrics()
    run, qrels, queries, pois = _diag_tables()
    ranked = metrics.rank_run(run.drop(columns="rank"), ties="trec_eval")
    out = geo_diagnostics(ranked, qrels, queries, pois).set_index("query_id")
    assert out.loc["q1", "first_gold_rank"] == 3
    assert bool(out.loc["q1", "indistinguishable"]) is True


# --------------------------------------------------------------------------------------------
# twin-aware evaluation
# --------------------------------------------------------------------------------------------


def _twin_tables() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    pois = _pois(
        [
            ("g", "Golden Dragon", *P),
            ("x", "Other", *Q),
            ("g_twin", "golden  dragon", *P),  # twin of g, later in the table
            ("y", "Golden Dragon", *R),  # same text elsewhere: not a twin
        ]
    )
    run = pd.DataFrame(
        {
            "query_id": ["q1", "q1", "q1", "q2", "q2", "q2", "q3"],
            "doc_id": ["g_twin", "x", "g", "g", "x", "g_twin", "y"],
            "score": [0.9, 0.8, 0.7, 0.9, 0.8, 0.7, 0.5],
            "rank": [1, 2, 3, 1, 2, 3, 1],
        }
    )
    qrels = pd.DataFrame(
        {
            "query_id": ["q1", "q2", "q2", "q3"],
            "doc_id": ["g", "g", "g_twin", "g"],
            "relevance": [1, 1, 2, 1],
        }
    )
    return run, qrels, pois


def test_canonicalize_twins_tables() -> None:
    run, qrels, pois = _twin_tables()
    run_c, qrels_c = canonicalize_twins(run, qrels, pois)
    assert run_c[["query_id", "doc_id", "rank"]].to_numpy().tolist() == [
        ["q1", "g", 1],  # g_twin at rank 1 counts as g; the real g at rank 3 is dropped
        ["q1", "x", 2],
        ["q2", "g", 1],
        ["q2", "x", 2],
        ["q3", "y", 1],
    ]
    assert run_c["score"].tolist() == [0.9, 0.8, 0.9, 0.8, 0.5]
    assert qrels_c.to_numpy().tolist() == [["q1", "g", 1], ["q2", "g", 2], ["q3", "g", 1]]
    # inputs untouched
    assert run["doc_id"].tolist()[0] == "g_twin"


def test_canonicalize_twins_without_rank_uses_best_score() -> None:
    run, qrels, pois = _twin_tables()
    run_c, _ = canonicalize_twins(run.drop(columns="rank"), qrels, pois)
    q1 = run_c[run_c["query_id"] == "q1"]
    assert q1["doc_id"].tolist() == ["g", "x"]
    assert q1["score"].tolist() == [0.9, 0.8]


def test_twin_aware_recall_ndcg() -> None:
    metrics = _metrics()
    run, qrels, pois = _twin_tables()
    names = ["recall@1", "recall@2", "ndcg@10"]
    strict = _by_query(metrics.evaluate(run, qrels, metrics=names, ties="trec_eval"))
    run_c, qrels_c = canonicalize_twins(run, qrels, pois)
    aware = _by_query(metrics.evaluate(run_c, qrels_c, metrics=names, ties="trec_eval"))
    # q1: only the twin is at rank 1
    assert strict.loc["q1", "recall@1"] == 0.0
    assert aware.loc["q1", "recall@1"] == 1.0
    assert aware.loc["q1", "ndcg@10"] == pytest.approx(1.0)
    # q2: both twins judged; strict needs both, twin-aware counts one gold group
    assert strict.loc["q2", "recall@2"] == 0.5
    assert aware.loc["q2", "recall@2"] == 1.0
    assert aware.loc["q2", "ndcg@10"] == pytest.approx(1.0)
    # q3: same text at another coordinate is not a twin
    assert strict.loc["q3", "recall@1"] == 0.0
    assert aware.loc["q3", "recall@1"] == 0.0


# --------------------------------------------------------------------------------------------
# real data: GeoGLUE-clean subset (5,000 Hangzhou POIs)
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def geoglue_pois(real_dir):
    from analysis.io.spatial import load_pois

    folder = real_dir / "geo" / "geoglue_clean_subset"
    txt = load_pois(folder / "poi.txt", crs="EPSG:2385")
    csv = load_pois(folder / "geoglue_clean_subset_pois.csv")
    return txt, csv


@pytest.mark.real
def test_real_geoglue_stacks_and_twins(geoglue_pois) -> None:
    txt, csv = geoglue_pois
    assert len(txt) == len(csv) == 5000
    assert txt["doc_id"].tolist() == csv["doc_id"].tolist()
    assert (txt["text"] == csv["text"]).all()
    assert (txt["name"] == csv["name"]).all()
    # the CSV's lat/lon are the same conversion rounded to 7 decimals
    assert np.abs(txt["lat"] - csv["lat"]).max() < 1e-7
    assert np.abs(txt["lon"] - csv["lon"]).max() < 1e-7

    reports = [stack_report(df) for df in (txt, csv)]
    for rep in reports:
        assert rep["n_pois"] == 5000
        assert rep["n_stacked"] == 983  # POIs in exact-coordinate stacks
        assert rep["n_stacks"] == 428
        assert rep["largest_stack"] == 16
        # "405 POI records have an identical twin under another id": 405 twin groups, i.e.
        # 405 first records whose text and coordinate are repeated by 503 later records
        # (908 POIs in twin groups).
        assert rep["n_twin_groups"] == 405
        assert rep["n_twins"] == 908
        assert rep["n_twin_duplicates"] == 503
    assert {k: v for k, v in reports[0].items() if k != "largest_stacks"} == {
        k: v for k, v in reports[1].items() if k != "largest_stacks"
    }

    # the released dup_of column is exactly our twin_canonical for the redundant copies
    dup_of = csv["dup_of"]
    assert int((dup_of != "").sum()) == 503
    assert dup_of[dup_of != ""].nunique() == 405
    tw = twins(txt)
    later = tw["twin_canonical"] != tw["doc_id"]
    assert (later.to_numpy() == (dup_of != "").to_numpy()).all()
    assert (tw.loc[later, "twin_canonical"].to_numpy() == dup_of[dup_of != ""].to_numpy()).all()


@pytest.mark.real
def test_real_geoglue_distance_only_ranking(real_dir, geoglue_pois) -> None:
    """A pure-location retriever: its top-1 is never farther than the gold."""
    from analysis.io.spatial import load_queries

    pois = geoglue_pois[0]
    queries, qrels = load_queries(
        real_dir / "geo" / "geoglue_clean_subset" / "test.txt", crs="EPSG:2385"
    )
    dist = haversine_m(
        queries["lat"].to_numpy()[:, None],
        queries["lon"].to_numpy()[:, None],
        pois["lat"].to_numpy()[None, :],
        pois["lon"].to_numpy()[None, :],
    )
    order = np.argsort(dist, axis=1, kind="stable")[:, :100]
    n_q = len(queries)
    run = pd.DataFrame(
        {
            "query_id": np.repeat(queries["query_id"].to_numpy(), 100),
            "doc_id": pois["doc_id"].to_numpy()[order.ravel()],
            "score": -np.take_along_axis(dist, order, axis=1).ravel(),
            "rank": np.tile(np.arange(1, 101), n_q),
        }
    )
    out = geo_diagnostics(run, qrels, queries, pois, k=10)
    assert len(out) == n_q == 200
    assert (out["dist_query_top1_m"] <= out["dist_query_gold_m"] + 1e-6).all()
    assert out["gold_stack_size"].notna().all()
    assert (out["gold_stack_size"] >= 1).all()
    # every query whose gold shares a coordinate, if retrieved after a stack-mate, is flagged
    flagged = out["indistinguishable"]
    assert (out.loc[flagged, "gold_stack_size"] >= 2).all()
    assert flagged.any()  # stacked golds lose to stack-mates under a location-only ranking

    # twin-aware evaluation can only help: a twin of the gold counts as the gold
    metrics = _metrics()
    names = ["recall@10", "ndcg@10"]
    strict = _by_query(metrics.evaluate(run, qrels, metrics=names))
    run_c, qrels_c = canonicalize_twins(run, qrels, pois)
    aware = _by_query(metrics.evaluate(run_c, qrels_c, metrics=names))
    assert (aware["recall@10"] >= strict["recall@10"]).all()
    assert aware["recall@10"].mean() > strict["recall@10"].mean()


@pytest.mark.real
@pytest.mark.parametrize("split", ["train", "dev", "test"])
def test_real_geoglue_queries_gold_match(real_dir, geoglue_pois, split) -> None:
    from analysis.io.spatial import load_queries

    folder = real_dir / "geo" / "geoglue_clean_subset"
    q_txt, qrels_txt = load_queries(folder / f"{split}.txt", crs="EPSG:2385")
    q_csv, qrels_csv = load_queries(folder / f"geoglue_clean_subset_queries_{split}.csv")
    n = {"train": 700, "dev": 100, "test": 200}[split]
    assert len(q_txt) == len(q_csv) == len(qrels_txt) == n
    assert q_txt["query_id"].tolist() == q_csv["query_id"].tolist()
    assert q_txt["query_id"].iloc[0] == f"{split}-0"
    assert (q_txt["text"] == q_csv["text"]).all()
    assert np.abs(q_txt["lat"] - q_csv["lat"]).max() < 1e-7
    assert np.abs(q_txt["lon"] - q_csv["lon"]).max() < 1e-7
    pd.testing.assert_frame_equal(qrels_txt, qrels_csv)
    assert qrels_txt["doc_id"].isin(geoglue_pois[0]["doc_id"]).all()


def test_geo_command_says_when_crs_is_not_used(tmp_path) -> None:
    """``--crs`` converts projected x/y only: given with a lat/lon file it is not used, and a
    note on stderr says so (the report is the same); with a GeoBloom file it is used, no note."""
    from tests.helpers import run_main

    latlon = tmp_path / "pois.csv"
    latlon.write_text("doc_id,text,lat,lon\na,x,30.0,120.0\nb,y,30.0,120.0\n")
    plain = run_main("geo", "--pois", latlon)
    given = run_main("geo", "--pois", latlon, "--crs", "EPSG:2385")
    assert plain.returncode == given.returncode == 0
    assert given.stdout == plain.stdout
    assert plain.stderr == ""
    assert given.stderr == (
        f"note: --crs EPSG:2385 is not used: {latlon} holds WGS84 lat/lon, not projected x/y\n"
    )
    projected = tmp_path / "poi.txt"
    projected.write_text("a shop\t3358142.08\t519099.51\nb shop\t3358142.08\t519099.51\n")
    done = run_main("geo", "--pois", projected, "--crs", "EPSG:2385")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert json.loads(done.stdout)["n_stacked"] == 2
