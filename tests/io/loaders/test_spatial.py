"""Tests for analysis.io.spatial on small hand-made files."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pyproj import Transformer

from analysis.core.errors import InputError
from analysis.io.spatial import (
    detect_spatial_format,
    load_geobloom_pois,
    load_geobloom_queries,
    load_geoglue_pois,
    load_geoglue_queries,
    load_latlon_pois,
    load_latlon_queries,
    load_list_pois,
    load_list_qrels,
    load_list_queries,
    load_pois,
    load_queries,
)

# Hangzhou-ish points straddling nothing in particular
LATS = np.array([30.2741, 30.2800, 30.3000])
LONS = np.array([120.1551, 120.1600, 120.2000])


def _write(path: Path, text: str, *, bom: bool = False, crlf: bool = False) -> Path:
    if crlf:
        text = text.replace("\n", "\r\n")
    data = (("\ufeff" if bom else "") + text).encode("utf-8")
    if path.name.endswith(".gz"):
        with gzip.open(path, "wb") as fh:
            fh.write(data)
    else:
        path.write_bytes(data)
    return path


def _utm50(lat: np.ndarray, lon: np.ndarray) -> tuple[list[float], list[float]]:
    t = Transformer.from_crs("EPSG:4326", "EPSG:32650", always_xy=True)
    x, y = t.transform(lon, lat)
    return x.tolist(), y.tolist()


def _epsg2385(lat: np.ndarray, lon: np.ndarray) -> tuple[list[float], list[float]]:
    """(northing, easting) in EPSG:2385's authority order, as GeoBloom writes X, Y."""
    t = Transformer.from_crs("EPSG:4326", "EPSG:2385")  # authority order: (lat, lon) -> (N, E)
    north, east = t.transform(lat, lon)
    return north.tolist(), east.tolist()


def _assert_error(exc: pytest.ExceptionInfo[InputError], path: Path, line: int | None) -> None:
    msg = str(exc.value)
    assert "\n" not in msg
    assert path.name in msg
    if line is not None:
        assert f"{path.name}:{line}:" in msg, msg
        assert exc.value.line == line


# --------------------------------------------------------------------------------------------
# LIST
# --------------------------------------------------------------------------------------------


def _list_files(tmp_path: Path) -> tuple[Path, Path, Path]:
    x, y = _utm50(LATS, LONS)
    poi = "id,coor,text\n" + "".join(
        f'{i},"[{a!r}, {b!r}]",{t}\n'
        for i, a, b, t in zip(["007", "8", "9"], x, y, "ABC", strict=True)
    )
    query = "id,coor,text\n" + f'q01,"[{x[0]!r}, {y[0]!r}]",coffee near lake\n'
    qrels = "query_id,poi_id\nq01,007\nq01,8\nq01,007\n"
    return (
        _write(tmp_path / "poi.csv", poi),
        _write(tmp_path / "query.csv", query),
        _write(tmp_path / "qrels.csv", qrels),
    )


def test_list_pois_queries_qrels(tmp_path: Path) -> None:
    poi_path, query_path, qrels_path = _list_files(tmp_path)
    pois = load_list_pois(poi_path, "EPSG:32650")
    assert pois.columns.tolist()[:6] == ["doc_id", "name", "text", "type", "lat", "lon"]
    assert pois["doc_id"].tolist() == ["007", "8", "9"]
    assert pois["name"].tolist() == pois["text"].tolist() == ["A", "B", "C"]
    np.testing.assert_allclose(pois["lat"], LATS, atol=1e-9)
    np.testing.assert_allclose(pois["lon"], LONS, atol=1e-9)
    assert {"x", "y"} <= set(pois.columns)

    queries = load_list_queries(query_path, "EPSG:32650")
    assert queries["query_id"].tolist() == ["q01"]
    assert queries["text"].tolist() == ["coffee near lake"]
    assert queries["lat"].iloc[0] == pytest.approx(LATS[0], abs=1e-9)

    qrels = load_list_qrels(qrels_path)
    assert qrels.to_numpy().tolist() == [["q01", "007", 1], ["q01", "8", 1], ["q01", "007", 1]]
    assert qrels["relevance"].dtype == np.int64

    assert detect_spatial_format(poi_path) == "list"
    auto = load_pois(poi_path, crs="EPSG:32650")
    pd.testing.assert_frame_equal(auto, pois)
    q_auto, q_qrels = load_queries(query_path, crs="EPSG:32650")
    pd.testing.assert_frame_equal(q_auto, queries)
    assert q_qrels.empty
    assert q_qrels.columns.tolist() == ["query_id", "doc_id", "relevance"]


def test_list_needs_crs_and_good_coor(tmp_path: Path) -> None:
    poi_path, _, _ = _list_files(tmp_path)
    with pytest.raises(InputError, match="CRS") as exc:
        load_pois(poi_path)
    _assert_error(exc, poi_path, None)

    bad = _write(tmp_path / "bad.csv", 'id,coor,text\n1,"[1, 2]",a\n2,"[3; 4]",b\n')
    with pytest.raises(InputError, match="coor") as exc:
        load_list_pois(bad, "EPSG:32650")
    _assert_error(exc, bad, 3)

    nonnum = _write(tmp_path / "nonnum.csv", 'id,coor,text\n1,"[500000, abc]",a\n')
    with pytest.raises(InputError, match="not a number") as exc:
        load_list_pois(nonnum, "EPSG:32650")
    _assert_error(exc, nonnum, 2)


# --------------------------------------------------------------------------------------------
# GeoGLUE JSON / JSONL
# --------------------------------------------------------------------------------------------


def _gis(lat: float, lon: float) -> list[object]:
    return [[1, 2, 3], [4, 5], [6], f"{lon},{lat}"]


def test_geoglue_json_array_and_jsonl(tmp_path: Path) -> None:
    records = [
        {"id": "p0", "text": "West Lake", "gis": _gis(LATS[0], LONS[0]), "city": "Hangzhou"},
        {"id": "p1", "text": "Lingyin", "gis": _gis(LATS[1], LONS[1]), "city": "Hangzhou"},
    ]
    arr = _write(tmp_path / "pois.json", json.dumps(records, indent=2, ensure_ascii=False))
    jsonl = _write(
        tmp_path / "pois.jsonl", "".join(json.dumps(r) + "\n" for r in records), crlf=True
    )
    for path in (arr, jsonl):
        assert detect_spatial_format(path) == "geoglue"
        pois = load_geoglue_pois(path)
        assert pois["doc_id"].tolist() == ["p0", "p1"]
        assert pois["text"].tolist() == ["West Lake", "Lingyin"]
        np.testing.assert_allclose(pois["lat"], LATS[:2])
        np.testing.assert_allclose(pois["lon"], LONS[:2])  # "lon,lat": longitude first
        assert pois["city"].tolist() == ["Hangzhou", "Hangzhou"]
        pd.testing.assert_frame_equal(load_pois(path), pois)


def test_geoglue_records_without_ids_and_queries_with_gold(tmp_path: Path) -> None:
    recs = [{"text": "a", "gis": _gis(1.0, 2.0)}, {"text": "b", "gis": _gis(3.0, 4.0)}]
    path = _write(tmp_path / "noid.jsonl", "\n".join(json.dumps(r) for r in recs) + "\n")
    assert load_geoglue_pois(path)["doc_id"].tolist() == ["0", "1"]

    queries = [
        {"query_id": "q1", "query": "tea", "gis": _gis(1.0, 2.0), "gold_poi_ids": ["007", "9"]},
        {"query_id": "q2", "query": "cafe", "gis": _gis(1.0, 2.0), "gold_poi_ids": "12"},
    ]
    qpath = _write(tmp_path / "queries.json", json.dumps(queries))
    q, qrels = load_geoglue_queries(qpath)
    assert q["query_id"].tolist() == ["q1", "q2"]
    assert q["text"].tolist() == ["tea", "cafe"]
    assert "gold_poi_ids" not in q.columns
    assert qrels.to_numpy().tolist() == [["q1", "007", 1], ["q1", "9", 1], ["q2", "12", 1]]
    q_auto, qrels_auto = load_queries(qpath)
    pd.testing.assert_frame_equal(q_auto, q)
    pd.testing.assert_frame_equal(qrels_auto, qrels)


def test_geoglue_bad_gis_names_line(tmp_path: Path) -> None:
    good = {"id": "a", "text": "x", "gis": _gis(1.0, 2.0)}
    bad = {"id": "b", "text": "y", "gis": [[1], "2.0;1.0"]}
    jsonl = _write(tmp_path / "bad.jsonl", json.dumps(good) + "\n\n" + json.dumps(bad) + "\n")
    with pytest.raises(InputError, match="lon,lat") as exc:
        load_geoglue_pois(jsonl)
    _assert_error(exc, jsonl, 3)

    arr = _write(tmp_path / "bad.json", json.dumps([good, bad], indent=1))
    with pytest.raises(InputError, match="lon,lat") as exc:
        load_pois(arr)
    line = arr.read_text().split("\n").index(" {", 2) + 1  # where the second record starts
    _assert_error(exc, arr, line)

    out_of_range = {"id": "c", "text": "z", "gis": _gis(95.0, 2.0)}
    oor = _write(tmp_path / "oor.jsonl", json.dumps(good) + "\n" + json.dumps(out_of_range))
    with pytest.raises(InputError, match="latitude") as exc:
        load_geoglue_pois(oor)
    _assert_error(exc, oor, 2)

    broken = _write(tmp_path / "broken.jsonl", json.dumps(good) + "\n{not json\n")
    with pytest.raises(InputError, match="invalid JSON") as exc:
        load_geoglue_pois(broken)
    _assert_error(exc, broken, 2)


# --------------------------------------------------------------------------------------------
# GeoBloom text files
# --------------------------------------------------------------------------------------------


def _geobloom_lines(lat: np.ndarray, lon: np.ndarray, texts: list[str]) -> str:
    north, east = _epsg2385(lat, lon)
    return "".join(f"{t}\t{n!r}\t{e!r}\n" for t, n, e in zip(texts, north, east, strict=True))


def test_geobloom_pois_and_queries(tmp_path: Path) -> None:
    texts = ["Bank A,finance,ATM", "Hotel B,hotel", "Cafe C"]
    poi_path = _write(tmp_path / "poi.txt", _geobloom_lines(LATS, LONS, texts))
    pois = load_geobloom_pois(poi_path, "EPSG:2385")
    assert pois["doc_id"].tolist() == ["0", "1", "2"]
    assert pois["name"].tolist() == ["Bank A", "Hotel B", "Cafe C"]
    assert pois["text"].tolist() == texts
    np.testing.assert_allclose(pois["lat"], LATS, atol=1e-9)
    np.testing.assert_allclose(pois["lon"], LONS, atol=1e-9)
    assert detect_spatial_format(poi_path) == "geobloom"
    pd.testing.assert_frame_equal(load_pois(poi_path, crs="EPSG:2385"), pois)

    # a file written (easting, northing) reads the same with always_xy=True
    north, east = _epsg2385(LATS, LONS)
    swapped = "".join(f"{t}\t{e!r}\t{n!r}\n" for t, n, e in zip(texts, north, east, strict=True))
    sw_path = _write(tmp_path / "swapped.txt", swapped)
    sw = load_geobloom_pois(sw_path, "EPSG:2385", always_xy=True)
    np.testing.assert_allclose(sw["lat"], LATS, atol=1e-9)

    qn, qe = _epsg2385(LATS[:2], LONS[:2])
    qtext = f"near bank\t{qn[0]!r}\t{qe[0]!r}\t0\ncafe\t{qn[1]!r}\t{qe[1]!r}\t2\n"
    q_path = _write(tmp_path / "test.txt", qtext)
    queries, qrels = load_geobloom_queries(q_path, "EPSG:2385")
    assert queries["query_id"].tolist() == ["test-0", "test-1"]
    assert queries["text"].tolist() == ["near bank", "cafe"]
    np.testing.assert_allclose(queries["lat"], LATS[:2], atol=1e-9)
    assert qrels.to_numpy().tolist() == [["test-0", "0", 1], ["test-1", "2", 1]]
    q2, qrels2 = load_queries(q_path, crs="EPSG:2385", id_prefix="")
    assert q2["query_id"].tolist() == ["0", "1"]
    assert qrels2["query_id"].tolist() == ["0", "1"]

    no_gold = _write(tmp_path / "dev.txt", f"x\t{qn[0]!r}\t{qe[0]!r}\n")
    q3, qrels3 = load_geobloom_queries(no_gold, "EPSG:2385")
    assert q3["query_id"].tolist() == ["dev-0"]
    assert qrels3.empty


def test_geobloom_errors(tmp_path: Path) -> None:
    north, east = _epsg2385(LATS, LONS)
    rows = [f"t{i}\t{n!r}\t{e!r}" for i, (n, e) in enumerate(zip(north, east, strict=True))]

    bad_num = _write(tmp_path / "poi.txt", "\n".join([rows[0], "t1\tabc\t5", rows[2]]) + "\n")
    with pytest.raises(InputError, match="X coordinate is not a number") as exc:
        load_geobloom_pois(bad_num, "EPSG:2385")
    _assert_error(exc, bad_num, 2)

    blank = _write(tmp_path / "blank.txt", "\n".join([rows[0], "", rows[1]]) + "\n\n")
    with pytest.raises(InputError, match="blank line") as exc:
        load_geobloom_pois(blank, "EPSG:2385")
    _assert_error(exc, blank, 2)

    fields = _write(tmp_path / "fields.txt", "\n".join([rows[0], rows[1] + "\textra"]))
    with pytest.raises(InputError, match="tab-separated") as exc:
        load_geobloom_pois(fields, "EPSG:2385")
    _assert_error(exc, fields, 2)

    far = _write(tmp_path / "far.txt", "\n".join([rows[0], "t\t1e12\t1e12"]))
    with pytest.raises(InputError, match="axis order") as exc:
        load_geobloom_pois(far, "EPSG:2385")
    _assert_error(exc, far, 2)

    # the first line lacks its gold: it is the line named, not the next one
    first = _write(tmp_path / "first.txt", "\n".join([rows[0]] + [r + "\t3" for r in rows[1:]]))
    with pytest.raises(InputError) as exc:
        load_geobloom_queries(first, "EPSG:2385")
    assert str(exc.value) == (
        f"{first}:1: expected 4 tab-separated fields (text, X, Y[, gold]), got 3"
    )

    gold = _write(tmp_path / "gold.txt", rows[0] + "\t3\n" + rows[1] + "\tx7\n")
    with pytest.raises(InputError, match="gold") as exc:
        load_geobloom_queries(gold, "EPSG:2385")
    _assert_error(exc, gold, 2)

    good = _write(tmp_path / "good.txt", "\n".join(rows) + "\n")
    with pytest.raises(InputError, match="CRS"):
        load_geobloom_pois(good, "EPSG:999999")


# --------------------------------------------------------------------------------------------
# lat/lon CSV
# --------------------------------------------------------------------------------------------


def test_latlon_pois_and_queries(tmp_path: Path) -> None:
    poi = (
        "poi_id,name,text,lat,lon,category\n"
        "007,West Lake,West Lake scenic area,30.2741,120.1551,007\n"
        '8,"Cafe, B","Cafe, B\nsecond line",30.28,120.16,cafe\n'
    )
    path = _write(tmp_path / "pois.csv", poi)
    pois = load_latlon_pois(path)
    assert pois.columns.tolist() == ["doc_id", "name", "text", "type", "lat", "lon", "category"]
    assert pois["doc_id"].tolist() == ["007", "8"]
    assert pois["category"].tolist() == ["007", "cafe"]
    assert pois["text"].iloc[1] == "Cafe, B\nsecond line"
    assert pois["lat"].dtype == np.float64
    assert detect_spatial_format(path) == "latlon"
    pd.testing.assert_frame_equal(load_pois(path), pois)

    name_only = _write(tmp_path / "name_only.csv", "id,name,latitude,lng\n1,Foo,1.5,2.5\n")
    p2 = load_latlon_pois(name_only)
    assert p2[["doc_id", "name", "text", "lat", "lon"]].to_numpy().tolist() == [
        ["1", "Foo", "Foo", 1.5, 2.5]
    ]

    q = "query_id,text,lat,lon,gold_poi_ids,split\nq1,tea,30.27,120.15,007,test\n"
    q += 'q2,cafe,30.28,120.16,"[8, 9]",test\nq3,none,30.2,120.1,,test\n'
    qpath = _write(tmp_path / "queries.csv", q)
    queries, qrels = load_latlon_queries(qpath)
    assert queries.columns.tolist() == ["query_id", "text", "lat", "lon", "split"]
    assert qrels.to_numpy().tolist() == [["q1", "007", 1], ["q2", "8", 1], ["q2", "9", 1]]
    q_auto, qrels_auto = load_queries(qpath)
    pd.testing.assert_frame_equal(q_auto, queries)
    pd.testing.assert_frame_equal(qrels_auto, qrels)


def test_gz_bom_crlf(tmp_path: Path) -> None:
    csv_text = "doc_id,text,lat,lon\n001,Alpha,30.1,120.1\n002,Beta,30.2,120.2\n"
    plain = load_latlon_pois(_write(tmp_path / "plain.csv", csv_text))
    for name, bom, crlf in [
        ("a.csv.gz", False, False),
        ("b.csv", True, True),
        ("c.csv.gz", True, True),
    ]:
        path = _write(tmp_path / name, csv_text, bom=bom, crlf=crlf)
        got = load_pois(path)
        pd.testing.assert_frame_equal(got, plain)
        assert not got["text"].str.contains("\r").any()

    txt = _geobloom_lines(LATS, LONS, ["x", "y", "z"])
    plain_txt = load_geobloom_pois(_write(tmp_path / "poi.txt", txt), "EPSG:2385")
    for name in ("poi2.txt.gz", "poi3.txt"):
        path = _write(tmp_path / name, txt, bom=True, crlf=True)
        assert detect_spatial_format(path) == "geobloom"
        pd.testing.assert_frame_equal(load_pois(path, crs="EPSG:2385"), plain_txt)

    recs = [{"id": "a", "text": "x", "gis": _gis(1.0, 2.0)}]
    jgz = _write(tmp_path / "p.jsonl.gz", json.dumps(recs[0]) + "\n", bom=True, crlf=True)
    assert load_pois(jgz)["doc_id"].tolist() == ["a"]


# --------------------------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------------------------


def test_non_numeric_coordinate(tmp_path: Path) -> None:
    path = _write(tmp_path / "pois.csv", "doc_id,text,lat,lon\n1,a,30,120\n2,b,thirty,120\n")
    with pytest.raises(InputError, match="latitude is not a number") as exc:
        load_pois(path)
    _assert_error(exc, path, 3)

    empty = _write(tmp_path / "empty.csv", "doc_id,text,lat,lon\n1,a,30,\n")
    with pytest.raises(InputError, match="missing longitude") as exc:
        load_pois(empty)
    _assert_error(exc, empty, 2)


def test_out_of_range_latitude_line_after_multiline_field(tmp_path: Path) -> None:
    text = 'doc_id,text,lat,lon\n1,"two\nlines",30,120\n\n2,b,91.5,120\n'
    path = _write(tmp_path / "pois.csv", text, crlf=True)
    with pytest.raises(InputError, match=r"latitude 91\.5 out of range") as exc:
        load_pois(path)
    _assert_error(exc, path, 5)

    lon = _write(tmp_path / "lon.csv", "doc_id,text,lat,lon\n1,a,30,181\n")
    with pytest.raises(InputError, match=r"longitude 181\.0 out of range") as exc:
        load_pois(lon)
    _assert_error(exc, lon, 2)

    inf = _write(tmp_path / "inf.csv", "doc_id,text,lat,lon\n1,a,inf,120\n")
    with pytest.raises(InputError, match="out of range") as exc:
        load_pois(inf)
    _assert_error(exc, inf, 2)


def test_missing_column(tmp_path: Path) -> None:
    path = _write(tmp_path / "pois.csv", "doc_id,text,lat\n1,a,30\n")
    with pytest.raises(InputError, match="unrecognised spatial format") as exc:
        load_pois(path)
    _assert_error(exc, path, 1)
    with pytest.raises(InputError, match="missing column lon") as exc:
        load_latlon_pois(path)
    _assert_error(exc, path, 1)

    no_id = _write(tmp_path / "noid.csv", "name,text,lat,lon\na,a,30,120\n")
    with pytest.raises(InputError, match="missing column doc_id or poi_id or id") as exc:
        load_pois(no_id)
    _assert_error(exc, no_id, 1)

    no_text = _write(tmp_path / "list.csv", 'id,coor\n1,"[1, 2]"\n')
    with pytest.raises(InputError, match="missing column text") as exc:
        load_list_pois(no_text, "EPSG:32650")
    _assert_error(exc, no_text, 1)

    qrels = _write(tmp_path / "qrels.csv", "query_id,doc\nq,1\n")
    with pytest.raises(InputError, match="poi_id") as exc:
        load_list_qrels(qrels)
    _assert_error(exc, qrels, 1)


def test_duplicate_and_empty_ids(tmp_path: Path) -> None:
    dup = _write(tmp_path / "dup.csv", "doc_id,text,lat,lon\n7,a,1,1\n8,b,1,1\n7,c,1,1\n")
    with pytest.raises(InputError, match=r"duplicate POI id '7' \(first on line 2\)") as exc:
        load_pois(dup)
    _assert_error(exc, dup, 4)

    empty = _write(tmp_path / "empty.csv", "doc_id,text,lat,lon\n7,a,1,1\n ,b,1,1\n")
    with pytest.raises(InputError, match="empty POI id") as exc:
        load_pois(empty)
    _assert_error(exc, empty, 3)


def test_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        load_pois(tmp_path / "missing.csv")
    latin = tmp_path / "latin.csv"
    latin.write_bytes("doc_id,text,lat,lon\n1,caf\xe9,1,1\n".encode("latin-1"))
    with pytest.raises(InputError, match="UTF-8") as exc:
        load_pois(latin)
    _assert_error(exc, latin, 2)
    notgz = _write(tmp_path / "x.csv.gz.txt", "a")
    fake_gz = tmp_path / "fake.csv.gz"
    fake_gz.write_bytes(b"not gzip at all")
    with pytest.raises(InputError, match="cannot read"):
        load_pois(fake_gz)
    with pytest.raises(InputError, match="unrecognised"):
        load_pois(notgz)
    ragged = _write(tmp_path / "ragged.csv", "doc_id,text,lat,lon\n1,a,1,1\n2,b,1,1,extra,more\n")
    with pytest.raises(InputError, match="malformed CSV") as exc:
        load_pois(ragged)
    _assert_error(exc, ragged, 3)


def test_inputs_are_not_written(tmp_path: Path) -> None:
    poi_path, query_path, qrels_path = _list_files(tmp_path)
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in (poi_path, query_path, qrels_path)}
    load_pois(poi_path, crs="EPSG:32650")
    load_queries(query_path, crs="EPSG:32650")
    load_list_qrels(qrels_path)
    after = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in before}
    assert before == after
    assert sorted(p.name for p in tmp_path.iterdir()) == ["poi.csv", "qrels.csv", "query.csv"]


@pytest.mark.parametrize(("name", "text"), [("e.json", "[ ]"), ("e.json", ""), ("e.jsonl", "\n\n")])
def test_geoglue_file_of_no_record_says_so(tmp_path: Path, name: str, text: str) -> None:
    # it was "records have no text field", which sends one looking for a text key
    path = _write(tmp_path / name, text)
    for load in (load_pois, load_queries):
        with pytest.raises(InputError) as exc:
            load(path)
        assert str(exc.value) == f"{path}: the file holds no record (empty, or an empty list)"


def test_a_query_table_whose_gold_column_is_empty_is_no_qrels(tmp_path: Path) -> None:
    # read as qrels of no row, evaluate averaged over no query (nan) with a warning only
    from analysis.io import load_qrels

    path = _write(tmp_path / "queries.csv", "query_id,text,lat,lon,gold_poi_ids\nq1,a,30,120,\n")
    with pytest.raises(InputError) as exc:
        load_qrels(path)
    assert str(exc.value) == f"{path}: the gold_poi_ids column names no gold id (every cell empty)"


def test_geoglue_wrapped_records_and_missing_id(tmp_path: Path) -> None:
    recs = [{"id": "a", "text": "x", "gis": _gis(1.0, 2.0)}, {"text": "y", "gis": _gis(1.0, 2.0)}]
    wrapped = _write(tmp_path / "wrapped.json", json.dumps({"version": 1, "data": recs}, indent=2))
    with pytest.raises(InputError, match="record 1: empty POI id") as exc:
        load_pois(wrapped)
    _assert_error(exc, wrapped, None)
    assert exc.value.line is None

    recs[1]["id"] = "b"
    wrapped = _write(tmp_path / "wrapped2.json", json.dumps({"version": 1, "data": recs}, indent=2))
    assert load_pois(wrapped)["doc_id"].tolist() == ["a", "b"]
    # the same object written on one line (json.dumps without indent) is not one record
    one_line = _write(tmp_path / "wrapped3.json", json.dumps({"version": 1, "data": recs}))
    assert load_pois(one_line)["doc_id"].tolist() == ["a", "b"]
