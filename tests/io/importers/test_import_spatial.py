"""``import geobloom | geoglue | list``: the real GeoGLUE-clean subset (marker ``real``) from the
raw GeoBloom text files and from the WGS84 CSVs, and hand-made files for the checks (swapped
axes, a UTM zone per point, query types)."""

from __future__ import annotations

import json
from functools import partial

import numpy as np
import pandas as pd
import pytest
from pyproj import Transformer

from analysis.cli import main
from analysis.core.errors import InputError
from analysis.core.metrics import evaluate
from analysis.io import load_run
from analysis.io.bundle import load_dataset, read_manifest
from analysis.io.importers import import_geobloom, import_geoglue, import_list
from analysis.io.importers.querytype import query_chars, query_type

GEO = "geo/geoglue_clean_subset"


@pytest.mark.real
def test_geoglue_clean_from_geobloom_text_and_from_csvs_agree(real_dir, tmp_path) -> None:
    src = real_dir / GEO
    a = import_geobloom(src, tmp_path / "a", crs="EPSG:2385", name="geoglue")
    b = import_geoglue(src, tmp_path / "b", name="geoglue")
    assert a.notes == b.notes == []
    da = load_dataset(read_manifest(tmp_path / "a").datasets["geoglue"], "all")
    db = load_dataset(read_manifest(tmp_path / "b").datasets["geoglue"], "all")
    assert len(da.entities) == len(db.entities) == 5000
    assert len(da.queries) == len(db.queries) == 1000
    pois = da.entities.merge(db.entities, on="doc_id")
    assert len(pois) == 5000
    # the CSVs hold 7 decimals: the two conversions agree to 1e-7 degrees (~1 cm)
    assert np.abs(pois["lat_x"] - pois["lat_y"]).max() < 1e-7
    assert np.abs(pois["lon_x"] - pois["lon_y"]).max() < 1e-7
    assert (pois["name_x"] == pois["name_y"]).all()
    assert pois["lat_x"].between(29, 31).all()  # Hangzhou
    assert pois["lon_x"].between(118, 121).all()
    key = ["query_id", "doc_id"]
    pd.testing.assert_frame_equal(
        da.qrels.sort_values(key, ignore_index=True), db.qrels.sort_values(key, ignore_index=True)
    )
    spec = read_manifest(tmp_path / "a").datasets["geoglue"]
    assert spec.default_split == "test"
    assert set(spec.splits) == {"train", "dev", "test"}
    test = da.queries[da.queries["split"] == "test"]
    assert len(test) == 200
    # Chinese slices: several query types, lengths in characters (not one whitespace word)
    assert set(test["query_type"]) >= {"landmark", "intersection", "address", "name"}
    assert test["query_chars"].nunique() > 20
    assert test["query_chars"].min() >= 5


@pytest.mark.real
def test_geoglue_baselines_are_runs_over_every_query(real_dir, tmp_path) -> None:
    import_geoglue(real_dir / GEO, tmp_path / "b", baselines=True)
    spec = next(iter(read_manifest(tmp_path / "b").datasets.values()))
    assert list(spec.runs) == ["bm25", "char-ngram-tfidf", "bm25-distance-fusion"]
    ds = load_dataset(spec)
    test = ds.qrels[ds.qrels["query_id"].str.startswith("test-")]
    for model in spec.runs:
        run = load_run(spec.runs[model])
        assert run["query_id"].nunique() >= 990
        recall = evaluate(run, test, ["recall@10"])["recall@10"].mean()
        assert 0.4 < recall < 1.0, model


@pytest.mark.real
def test_geobloom_read_easting_first_is_refused_as_swapped(real_dir, tmp_path) -> None:
    with pytest.raises(InputError, match="look swapped") as info:
        import_geobloom(real_dir / GEO, tmp_path / "x", crs="EPSG:2385", easting_first=True)
    assert "poi.txt" in str(info.value)
    assert "northing first" in str(info.value)
    assert not (tmp_path / "x").exists()


@pytest.mark.real
def test_geo_pois_reads_every_poi_format_the_importers_write(real_dir, tmp_path, capsys) -> None:
    import_geobloom(real_dir / GEO, tmp_path / "a", crs="EPSG:2385", name="g")
    reports = []
    for args in (
        ["--pois", str(tmp_path / "a" / "g" / "entities.parquet")],
        ["--pois", str(real_dir / GEO / "geoglue_clean_subset_pois.csv")],
        ["--pois", str(real_dir / GEO / "poi.txt"), "--crs", "EPSG:2385"],
    ):
        assert main(["geo", *args]) == 0
        reports.append(capsys.readouterr().out)
    # the Parquet the importer writes and the raw text give the same report; the CSV too, but
    # for the stack coordinates, which it rounds to 7 decimals
    assert reports[0] == reports[2]
    parquet, csv = json.loads(reports[0]), json.loads(reports[1])
    for a, b in zip(parquet["largest_stacks"], csv["largest_stacks"], strict=True):
        for axis in ("lat", "lon"):
            assert abs(a.pop(axis) - b.pop(axis)) < 1e-7
    assert parquet == csv
    assert parquet["n_pois"] == 5000
    assert parquet["n_stacked"] == 983


# ------------------------------------------------------------------------------- hand-made


def _utm(lat: float, lon: float, zone: int) -> tuple[float, float]:
    t = Transformer.from_crs("EPSG:4326", f"EPSG:{32600 + zone}", always_xy=True)
    return t.transform(lon, lat)


def _list_folder(root, points: list[tuple[str, float, float]], per_point: bool):
    """LIST files for points (id, lat, lon); with ``per_point`` each point is projected in the
    UTM zone of its own longitude, as LIST's preprocessing did."""
    root.mkdir(parents=True)
    rows = []
    for pid, lat, lon in points:
        zone = int((lon + 180) // 6) + 1 if per_point else 50
        x, y = _utm(lat, lon, zone)
        rows.append(f'{pid},"[{x}, {y}]",{pid} 咖啡店')
    (root / "poi.csv").write_text("id,coor,text\n" + "\n".join(rows) + "\n")
    qx, qy = _utm(30.25, 119.99, 50)
    (root / "test").mkdir()
    (root / "test" / "query.csv").write_text(f'id,coor,text\nq1,"[{qx}, {qy}]",咖啡店\n')
    (root / "test" / "qrels.csv").write_text("query_id,poi_id\nq1,p1\nq1,p1\n")
    return root


HANGZHOU = [
    ("p0", 30.24, 119.99),
    ("p1", 30.25, 119.995),
    ("p2", 30.26, 120.004),
    ("p3", 30.27, 120.01),
]


def test_list_per_point_utm_zones_detected_and_converted(tmp_path) -> None:
    root = _list_folder(tmp_path / "hz", HANGZHOU, per_point=True)
    result = import_list(root, tmp_path / "out", crs="EPSG:32650")
    note = " ".join(result.notes)
    assert "UTM zone per point" in note
    assert "2 of 5 points have eastings of EPSG:32651" in note
    ds = load_dataset(next(iter(read_manifest(tmp_path / "out").datasets.values())))
    ent = ds.entities.set_index("doc_id")
    for pid, lat, lon in HANGZHOU:
        assert abs(ent.loc[pid, "lat"] - lat) < 1e-6
        assert abs(ent.loc[pid, "lon"] - lon) < 1e-6


def test_list_one_zone_is_left_alone_and_duplicate_qrels_kept(tmp_path) -> None:
    root = _list_folder(tmp_path / "hz", HANGZHOU, per_point=False)
    result = import_list(root, tmp_path / "out", crs="EPSG:32650", baselines=True)
    assert not any("UTM" in n for n in result.notes)
    spec = next(iter(read_manifest(tmp_path / "out").datasets.values()))
    ds = load_dataset(spec)
    assert abs(ds.entities.set_index("doc_id").loc["p2", "lon"] - 120.004) < 1e-6
    assert len(ds.qrels) == 2  # LIST's repeated gold rows stay; the metric core warns
    assert spec.default_split == "test"
    assert set(ds.queries["query_type"]) == {"category"}
    assert set(spec.runs) == {"bm25", "char-ngram-tfidf", "bm25-distance-fusion"}


def test_list_query_file_without_qrels_is_one_line(tmp_path) -> None:
    root = _list_folder(tmp_path / "hz", HANGZHOU, per_point=False)
    (root / "test" / "qrels.csv").unlink()
    with pytest.raises(InputError, match="no qrels"):
        import_list(root, tmp_path / "out", crs="EPSG:32650")


def test_geoglue_json_records(tmp_path) -> None:
    root = tmp_path / "gg"
    root.mkdir()
    (root / "pois.jsonl").write_text(
        '{"id": "a", "text": "西湖银泰", "gis": ["x", "120.16,30.25"]}\n'
        '{"id": "b", "text": "湖滨步行街", "gis": ["120.17,30.26"]}\n'
    )
    (root / "test.json").write_text(
        '[{"id": "q1", "query": "湖滨步行街附近", "gis": ["120.17,30.26"], "gold": "b"}]'
    )
    import_geoglue(root, tmp_path / "out", baselines=True)
    spec = read_manifest(tmp_path / "out").datasets["gg"]
    ds = load_dataset(spec)
    assert ds.queries[["query_id", "query_type", "query_chars"]].to_dict("list") == {
        "query_id": ["q1"],
        "query_type": ["landmark"],
        "query_chars": [7],
    }
    assert ds.qrels[["query_id", "doc_id"]].to_dict("list") == {"query_id": ["q1"], "doc_id": ["b"]}
    run = load_run(spec.runs["bm25-distance-fusion"])
    assert run.sort_values("rank")["doc_id"].iloc[0] == "b"


def test_query_ids_repeating_across_splits_are_prefixed(tmp_path) -> None:
    root = tmp_path / "gg"
    root.mkdir()
    (root / "pois.csv").write_text("poi_id,text,lat,lon\n1,店,30.2,120.1\n")
    for split in ("train", "test"):
        (root / f"queries_{split}.csv").write_text(
            "query_id,text,lat,lon,gold_poi_ids\n0,店,30.2,120.1,1\n"
        )
    result = import_geoglue(root, tmp_path / "out")
    assert any("prefixed" in n for n in result.notes)
    spec = read_manifest(tmp_path / "out").datasets["gg"]
    assert sorted(load_dataset(spec, "all").queries["query_id"]) == ["test-0", "train-0"]


#: The importer of each layout the empty-file tests build.
IMPORT = {
    "list": partial(import_list, crs="EPSG:32650"),
    "geoglue": import_geoglue,
    "geobloom": partial(import_geobloom, crs="EPSG:2385"),
}


@pytest.mark.parametrize("layout", list(IMPORT))
def test_a_query_file_of_no_query_is_one_line_and_writes_nothing(tmp_path, layout) -> None:
    # its split would be an empty split file: a bundle no reader could open
    root = tmp_path / "src"
    if layout == "list":
        _list_folder(root, HANGZHOU, per_point=False)
        empty = root / "test" / "query.csv"
        empty.write_text("id,coor,text\n")
    elif layout == "geoglue":
        root.mkdir()
        (root / "pois.csv").write_text("poi_id,text,lat,lon\n1,店,30.2,120.1\n")
        (root / "queries_dev.csv").write_text(
            "query_id,text,lat,lon,gold_poi_ids\n0,店,30.2,120.1,1\n"
        )
        empty = root / "queries_test.csv"
        empty.write_text("query_id,text,lat,lon,gold_poi_ids\r\n")
    else:
        root.mkdir()
        (root / "poi.txt").write_text("店\t3355573.717183463\t506802.9412174981\n")
        (root / "dev.txt").write_text("店\t3355573.717183463\t506802.9412174981\t0\n")
        empty = root / "test.txt"
        empty.write_text("")
    with pytest.raises(InputError) as info:
        IMPORT[layout](root, tmp_path / "out")
    assert str(info.value) == f"{empty}: the file holds no query (a header only, or empty)"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("layout", list(IMPORT))
def test_a_poi_file_of_no_poi_is_one_line_and_writes_nothing(tmp_path, layout) -> None:
    # the baselines ended in a traceback (a reduction over no POI); without them every gold
    # was missing
    root = tmp_path / "src"
    if layout == "list":
        _list_folder(root, HANGZHOU, per_point=False)
        empty = root / "poi.csv"
        empty.write_text("id,coor,text\n")
    elif layout == "geoglue":
        root.mkdir()
        empty = root / "pois.csv"
        empty.write_text("\ufeffpoi_id,text,lat,lon\r\n")
        (root / "queries_test.csv").write_text(
            "query_id,text,lat,lon,gold_poi_ids\n0,店,30.2,120.1,1\n"
        )
    else:
        root.mkdir()
        empty = root / "poi.txt"
        empty.write_text("")
        (root / "test.txt").write_text("店\t3355573.717183463\t506802.9412174981\t0\n")
    with pytest.raises(InputError) as info:
        IMPORT[layout](root, tmp_path / "out", baselines=True)
    assert str(info.value) == f"{empty}: the file holds no POI (a header only, or empty)"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("layout", list(IMPORT))
def test_files_naming_no_gold_are_one_line_and_write_nothing(tmp_path, layout) -> None:
    # the bundle had an empty qrels table, which no reader opens
    root = tmp_path / "src"
    if layout == "list":
        _list_folder(root, HANGZHOU, per_point=False)
        (root / "test" / "qrels.csv").write_text("query_id,poi_id\n")
    elif layout == "geoglue":
        root.mkdir()
        (root / "pois.csv").write_text("poi_id,text,lat,lon\n1,店,30.2,120.1\n")
        (root / "queries_test.csv").write_text("query_id,text,lat,lon\n0,店,30.2,120.1\n")
    else:
        root.mkdir()
        (root / "poi.txt").write_text("店\t3355573.717183463\t506802.9412174981\n")
        (root / "test.txt").write_text("店\t3355573.717183463\t506802.9412174981\n")
    with pytest.raises(InputError) as info:
        IMPORT[layout](root, tmp_path / "out")
    assert str(info.value) == (
        f"{root}: no gold POI in the query or qrels files: there is nothing to evaluate"
    )
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("query_id", ["q 1", "#q1"])
def test_a_query_id_no_split_file_can_hold_is_one_line(tmp_path, query_id) -> None:
    # written as is, the split file was refused (whitespace) or skipped the id (#) on reading
    root = tmp_path / "gg"
    root.mkdir()
    (root / "pois.csv").write_text("poi_id,text,lat,lon\n1,店,30.2,120.1\n")
    (root / "queries_test.csv").write_text(
        f"query_id,text,lat,lon,gold_poi_ids\n{query_id},店,30.2,120.1,1\n"
    )
    with pytest.raises(InputError) as info:
        import_geoglue(root, tmp_path / "out")
    assert str(info.value) == (
        f"gg: query id {query_id!r} of split 'test': a split file holds one id per line, so an "
        "id of a split may hold no whitespace and not start with '#'"
    )
    assert not (tmp_path / "out").exists()
    (root / "queries_test.csv").rename(root / "queries.csv")  # no split: the id is fine
    import_geoglue(root, tmp_path / "out")
    ds = load_dataset(read_manifest(tmp_path / "out").datasets["gg"])
    assert ds.queries["query_id"].tolist() == [query_id]


def test_a_query_id_in_two_files_of_one_split_is_one_line(tmp_path) -> None:
    # both became test-0: one query with the other's gold, the second text lost
    root = tmp_path / "gg"
    root.mkdir()
    (root / "pois.csv").write_text("poi_id,text,lat,lon\n1,店,30.2,120.1\n2,馆,30.3,120.2\n")
    header = "query_id,text,lat,lon,gold_poi_ids\n"
    (root / "queries_test_a.csv").write_text(header + "0,店,30.2,120.1,1\n")
    (root / "queries_test_b.csv").write_text(header + "0,馆,30.3,120.2,2\n")
    with pytest.raises(InputError) as info:
        import_geoglue(root, tmp_path / "out")
    assert str(info.value) == (
        f"{root}: query id '0' is in two query files of split 'test': the query ids of one "
        "split must be unique"
    )
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("我想去金星路怎么走", "route"),
        ("闸弄口地铁站D口往东南走90米后左转50米的右手边那栋", "route"),
        ("文一路与学院路交叉口西南方向170米社区卫生服务中心南门", "intersection"),
        ("天香华庭对面南郡正南门", "landmark"),
        ("古墩路东侧康乐新村西门", "landmark"),
        ("中河中路198号小营绿都(西门)", "address"),
        ("莫干山路东村43幢", "address"),
        ("停车场", "category"),
        ("紫金文苑", "name"),
        ("coffee near the lake", "landmark"),
    ],
)
def test_query_type_rules(text: str, kind: str) -> None:
    assert query_type(text) == kind


def test_query_chars_counts_characters_not_words() -> None:
    assert query_chars(["紫金文苑", "a b", "ＡＢ"]).tolist() == [4, 2, 2]


def test_geobloom_query_file_is_not_trec_qrels_and_gives_qrels(tmp_path) -> None:
    from analysis.io import detect_format, load_qrels, load_queries

    path = tmp_path / "test.txt"
    path.write_text("中河中路198号\t3355573.717183463\t506802.9412174981\t4885\n")
    assert detect_format(path) == "geobloom"
    assert load_qrels(path).to_dict("list") == {
        "query_id": ["test-0"],
        "doc_id": ["4885"],
        "relevance": [1],
    }
    with pytest.raises(InputError, match="need the dataset's CRS"):
        load_queries(path)
    trec = tmp_path / "qrels.txt"
    trec.write_text("q1\t0\td1\t1\n")
    assert detect_format(trec) == "trec_qrels"


def test_query_csv_with_gold_poi_ids_is_accepted_as_qrels(tmp_path) -> None:
    from analysis.io import load_qrels

    path = tmp_path / "queries_test.csv"
    path.write_text(
        'query_id,text,lat,lon,gold_poi_ids\nq1,店,30.2,120.1,"[4, 7]"\nq2,x,30,120,9\n'
    )
    assert load_qrels(path)[["query_id", "doc_id"]].to_dict("list") == {
        "query_id": ["q1", "q1", "q2"],
        "doc_id": ["4", "7", "9"],
    }


def test_geobloom_northing_first_with_an_easting_first_crs_is_refused(tmp_path) -> None:
    """GeoBloom writes (northing, easting); UTM's own order is (easting, northing)."""
    root = tmp_path / "gb"
    root.mkdir()
    x, y = _utm(30.25, 120.2, 51)
    (root / "poi.txt").write_text(f"A店\t{y}\t{x}\nB店\t{y + 10}\t{x + 10}\n")
    (root / "test.txt").write_text(f"A\t{y}\t{x}\t0\n")
    with pytest.raises(InputError, match="look swapped for EPSG:32651") as info:
        import_geobloom(root, tmp_path / "out", crs="EPSG:32651")
    assert str(info.value).startswith(str(root / "poi.txt"))
    # the same points written easting first, as the CRS orders them, import
    (root / "poi.txt").write_text(f"A店\t{x}\t{y}\nB店\t{x + 10}\t{y + 10}\n")
    (root / "test.txt").write_text(f"A\t{x}\t{y}\t0\n")
    import_geobloom(root, tmp_path / "out", crs="EPSG:32651")
    ds = load_dataset(next(iter(read_manifest(tmp_path / "out").datasets.values())))
    assert abs(ds.entities["lat"].iloc[0] - 30.25) < 1e-6


@pytest.mark.real
def test_geoglue_bundle_numbers_equal_evaluate_on_the_source_qrels(real_dir, tmp_path) -> None:
    src = real_dir / GEO
    import_geoglue(src, tmp_path / "b", name="g", baselines=True)
    spec = read_manifest(tmp_path / "b").datasets["g"]
    ds = load_dataset(spec)
    test_ids = set(ds.queries.loc[ds.queries["split"] == "test", "query_id"])
    metrics = ["recall@1", "recall@10", "ndcg@10", "mrr"]
    run_file = spec.runs["bm25-distance-fusion"]
    mine = evaluate(load_run(run_file), ds.qrels[ds.qrels["query_id"].isin(test_ids)], metrics)
    mine = mine.set_index("query_id").sort_index()[metrics]
    for qrels in (src / "test.txt", src / "geoglue_clean_subset_queries_test.csv"):
        out = tmp_path / f"{qrels.stem}.csv"
        args = ["evaluate", "--run", str(run_file), "--qrels", str(qrels)]
        assert main([*args, "--metrics", ",".join(metrics), "--out", str(out)]) == 0
        source = pd.read_csv(out, dtype={"query_id": str}).set_index("query_id").sort_index()
        pd.testing.assert_frame_equal(mine, source[metrics], check_dtype=False)
    assert mine["recall@10"].mean() == pytest.approx(0.71)


def test_cli_import_geoglue_and_geobloom_needs_a_crs(tmp_path, capsys) -> None:
    root = tmp_path / "gg"
    root.mkdir()
    (root / "pois.csv").write_text("poi_id,text,lat,lon\n1,店,30.2,120.1\n")
    (root / "queries_test.csv").write_text(
        "query_id,text,lat,lon,gold_poi_ids\nq,店,30.2,120.1,1\n"
    )
    assert main(["import", "geoglue", "--root", str(root), "--out", str(tmp_path / "o")]) == 0
    assert "gg: 1 queries, 1 qrels rows, 1 entities, runs: none" in capsys.readouterr().out
    with pytest.raises(SystemExit) as info:
        main(["import", "geobloom", "--root", str(root), "--out", str(tmp_path / "o2")])
    assert info.value.code == 2
    assert "--crs" in capsys.readouterr().err
