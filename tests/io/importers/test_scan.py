"""Folder scans for the Open data page: formats, roles, first problems; bundles from chosen
files; the importer a folder's layout calls for."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from analysis.core.errors import InputError
from analysis.io import load_run
from analysis.io.bundle import load_dataset, read_manifest
from analysis.io.importers import build_bundle, scan_folder, suggest_importer


def _folder(root: Path) -> Path:
    (root / "split").mkdir(parents=True)
    (root / "query_groups").mkdir()
    (root / "stark_qa.csv").write_text('id,query,answer_ids\n1,a,"[5]"\n2,b,"[6, 7]"\n')
    (root / "split" / "test.index").write_text("1\n")
    (root / "query_groups" / "group_query_test.json").write_text(
        json.dumps({"0": {"pattern": "brand names", "query_idx": [1]}})
    )
    (root / "run.trec").write_text("1 Q0 5 1 1.0 t\n2 Q0 6 1 1.0 t\n")
    (root / "bad.trec").write_text("1 Q0 5 1 1.0 t\n1 Q0\n")
    (root / "entities.jsonl").write_text('{"doc_id": "5", "name": "five", "text": "x"}\n')
    (root / "eval_metrics_test.json").write_text('{"mrr": 0.5}')
    return root


def test_scan_reports_format_roles_rows_and_first_problem(tmp_path) -> None:
    reports = {r.rel: r for r in scan_folder(_folder(tmp_path / "f"))}
    assert reports["stark_qa.csv"].format == "stark_qa"
    assert reports["stark_qa.csv"].roles == ("queries", "qrels")
    assert reports["stark_qa.csv"].rows == 2
    assert reports["split/test.index"].roles == ("split",)
    assert reports["query_groups/group_query_test.json"].roles == ("query_groups",)
    assert reports["run.trec"].roles == ("run",)
    assert reports["entities.jsonl"].roles == ("entities",)
    assert reports["bad.trec"].roles == ()
    assert reports["bad.trec"].problem.startswith(f"{tmp_path / 'f' / 'bad.trec'}:2:")
    assert reports["eval_metrics_test.json"].problem == "a metrics summary: not needed"


def test_build_bundle_from_chosen_files(tmp_path) -> None:
    src = _folder(tmp_path / "f")
    build_bundle(
        tmp_path / "out",
        "mine",
        qrels=[src / "stark_qa.csv"],
        queries=[src / "stark_qa.csv"],
        entities=src / "entities.jsonl",
        runs=[src / "run.trec"],
        splits=[src / "split" / "test.index"],
        query_groups=[src / "query_groups" / "group_query_test.json"],
    )
    spec = read_manifest(tmp_path / "out").datasets["mine"]
    assert spec.family == "stark"
    assert spec.default_split == "test"
    ds = load_dataset(spec, "all")
    assert ds.queries.set_index("query_id")["pattern"].to_dict() == {
        "1": "brand names",
        "2": "none",
    }
    assert set(ds.queries["query_type"]) == {"synthesized"}
    assert ds.entities["name"].tolist() == ["five"]
    assert list(spec.runs) == ["run"]


def test_build_bundle_refuses_an_input_inside_the_output(tmp_path) -> None:
    src = _folder(tmp_path / "f")
    with pytest.raises(InputError, match="may not hold an input file"):
        build_bundle(src, "x", qrels=[src / "stark_qa.csv"])


def test_build_bundle_replaces_only_a_bundle(tmp_path) -> None:
    src = _folder(tmp_path / "f")
    other = tmp_path / "notes"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    with pytest.raises(InputError, match=r"non-empty folder without bundle\.toml"):
        build_bundle(other, "x", qrels=[src / "stark_qa.csv"])
    assert (other / "keep.txt").read_text() == "mine"
    assert sorted(p.name for p in other.iterdir()) == ["keep.txt"]
    build_bundle(tmp_path / "out", "x", qrels=[src / "stark_qa.csv"])
    build_bundle(tmp_path / "out", "y", qrels=[src / "stark_qa.csv"])  # a bundle is replaced
    assert list(read_manifest(tmp_path / "out").datasets) == ["y"]


def test_build_bundle_names_a_model_whose_file_name_is_not_utf8(tmp_path) -> None:
    src = _folder(tmp_path / "f")
    run = src / os.fsdecode(b"r\xff.csv")  # a surrogate escape: no UTF-8 manifest holds it
    run.write_text('idx,query_id,pred_rank\n0,1,"[5]"\n')
    build_bundle(tmp_path / "out", "x", qrels=[src / "stark_qa.csv"], runs=[run])
    spec = read_manifest(tmp_path / "out").datasets["x"]
    assert list(spec.runs) == ["r\ufffd"]


def test_build_bundle_keeps_every_run_whose_stems_repeat(tmp_path) -> None:
    src = _folder(tmp_path / "f")
    for folder in ("a/x", "b/x"):  # one folder name twice, and one stem twice in a folder
        (src / folder).mkdir(parents=True)
        (src / folder / "run.trec").write_text(f"1 Q0 {len(folder)} 1 1.0 t\n")
    (src / "a" / "x" / "run.tsv").write_text("query_id\tdoc_id\tscore\n1\t7\t1.0\n")
    runs = [src / "a/x/run.trec", src / "a/x/run.tsv", src / "b/x/run.trec"]
    build_bundle(tmp_path / "out", "x", qrels=[src / "stark_qa.csv"], runs=runs)
    spec = read_manifest(tmp_path / "out").datasets["x"]
    assert list(spec.runs) == ["a/x/run.trec", "x/run.tsv", "b/x/run.trec"]
    assert load_run(spec.runs["x/run.tsv"])["doc_id"].tolist() == ["7"]
    assert len({spec.runs[m] for m in spec.runs}) == 3


def test_suggest_importer(tmp_path) -> None:
    assert suggest_importer(_folder(tmp_path / "f")) == "stark"
    gb = tmp_path / "gb"
    gb.mkdir()
    (gb / "poi.txt").write_text("a\t1.5\t2.5\n")
    (gb / "test.txt").write_text("a\t1.5\t2.5\t0\n")
    assert suggest_importer(gb) == "geobloom"
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "run.trec").write_text("1 Q0 5 1 1.0 t\n")
    assert suggest_importer(plain) is None


def test_scan_tells_ranx_runs_from_ranx_qrels(tmp_path) -> None:
    (tmp_path / "bm25.json").write_text(json.dumps({"1": {"5": 12.5, "6": 3.0}}, indent=2))
    (tmp_path / "qrels.json").write_text(json.dumps({"1": {"5": 1}, "2": {"6": 2}}, indent=2))
    (tmp_path / "pt.csv").write_text("qid,docno,score,rank\n007,5,1.5,0\n")
    reports = {r.rel: r for r in scan_folder(tmp_path)}
    assert (reports["bm25.json"].format, reports["bm25.json"].roles) == ("ranx_json", ("run",))
    assert reports["qrels.json"].roles == ("qrels", "run")
    assert reports["qrels.json"].rows == 2
    assert (reports["pt.csv"].format, reports["pt.csv"].roles) == ("table", ("run",))
