"""Tests for analysis.io.bundle: manifests, dataset loading and manifest errors."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pandas as pd
import pytest

from analysis.core.errors import InputError
from analysis.io.bundle import Bundle, load_dataset, load_model_run, read_manifest
from analysis.stats.perquery import per_query_table

MANIFEST = """\
name = "tiny"
description = "a test bundle"

[datasets.web]
family = "generic"
queries = "web/queries.csv"
qrels = "web/qrels.txt"
entities = "web/entities.parquet"
metrics = ["hit@1", "ndcg@10"]
query_type = "synthetic"

[datasets.stark]
family = "stark"
queries = "stark/stark_qa.csv"
qrels = "stark/stark_qa.csv"
runs = { ada = "stark/eval_results_test.csv" }
splits = { test = "stark/split/test.index", val = "stark/split/val.index" }
query_groups = "stark/query_groups/group_query_test.json"
metapaths = "stark/metapaths/test.json"
relevance_threshold = 1

[datasets.auto]
"""


def _make_bundle(root: Path, manifest: str = MANIFEST) -> Path:
    (root / "web" / "runs").mkdir(parents=True)
    (root / "web" / "queries.csv").write_text("query_id,text,length\n007,first,1\n8,second,2\n")
    (root / "web" / "qrels.txt").write_text("007 0 d1 1\n8 0 d2 2\n8 0 d2 1\n")
    pd.DataFrame({"doc_id": ["d1", "d2"], "name": ["one", "two"], "text": ["a", "b"]}).to_parquet(
        root / "web" / "entities.parquet"
    )
    (root / "web" / "runs" / "bm25.run").write_text("007 Q0 d1 1 2.0 bm25\n8 Q0 d1 1 1.0 bm25\n")
    (root / "web" / "runs" / "dense-v2.run.gz").write_bytes(
        gzip.compress(b"007 Q0 d2 1 0.5 dense\n8 Q0 d2 1 0.9 dense\n")
    )
    (root / "web" / "runs" / "notes.md").write_text("not a run\n")

    stark = root / "stark"
    for sub in ("split", "query_groups", "metapaths"):
        (stark / sub).mkdir(parents=True)
    (stark / "stark_qa.csv").write_text(
        'id,query,answer_ids\n1,"a\nmulti-line query","[10, 11]"\n2,b,[12]\n3,c,"[\'13\']"\n'
    )
    (stark / "eval_results_test.csv").write_text(
        'idx,query_id,pred_rank,hit@1\n0,1,"[11, 10]",1.0\n1,2,"[5, 12]",0.0\n'
    )
    (stark / "split" / "test.index").write_text("1\n2\n")
    (stark / "split" / "val.index").write_text("3\n")
    (stark / "query_groups" / "group_query_test.json").write_text(
        json.dumps({"0": {"pattern": "x -> y", "query_idx": [1]}})
    )
    (stark / "metapaths" / "test.json").write_text(
        json.dumps([{"q_id": 2, "rg": {"Metapath": "a -> b"}}])
    )

    (root / "auto" / "runs").mkdir(parents=True)
    (root / "auto" / "qrels.tsv").write_text("query_id\tdoc_id\trelevance\n01\tx\t1\n")
    (root / "auto" / "runs" / "m.csv").write_text("query_id,doc_id,score\n01,x,1.0\n")
    (root / "bundle.toml").write_text(manifest)
    return root


def test_read_manifest(tmp_path: Path) -> None:
    root = _make_bundle(tmp_path)
    bundle = read_manifest(root)
    assert isinstance(bundle, Bundle)
    assert read_manifest(root / "bundle.toml") == bundle
    assert (bundle.name, bundle.description) == ("tiny", "a test bundle")
    assert list(bundle.datasets) == ["web", "stark", "auto"]
    web = bundle.datasets["web"]
    assert web.family == "generic"
    assert web.metrics == ("hit@1", "ndcg@10")
    assert web.query_type == "synthetic"
    # runs folder by default; the model name is the file stem without .run(.gz); notes.md skipped
    assert list(web.runs) == ["bm25", "dense-v2"]
    assert web.runs["dense-v2"].name == "dense-v2.run.gz"
    stark = bundle.datasets["stark"]
    assert stark.queries == stark.qrels
    assert list(stark.runs) == ["ada"]
    assert set(stark.splits) == {"test", "val"}
    assert stark.metrics == ("hit@1", "hit@5", "recall@20", "mrr")  # the family's defaults
    auto = bundle.datasets["auto"]
    assert auto.qrels.name == "qrels.tsv"
    assert auto.queries is None
    assert list(auto.runs) == ["m"]


def test_load_dataset_generic(tmp_path: Path) -> None:
    spec = read_manifest(_make_bundle(tmp_path)).datasets["web"]
    data = load_dataset(spec)
    assert data.name == "web"
    assert data.models == ["bm25", "dense-v2"]
    assert data.queries.to_dict("list") == {
        "query_id": ["007", "8"],
        "text": ["first", "second"],
        "length": [1, 2],
        "dataset": ["web", "web"],
        "query_type": ["synthetic", "synthetic"],
    }
    assert data.qrels["query_id"].tolist() == ["007", "8", "8"]
    assert data.entities is not None
    assert data.entities["name"].tolist() == ["one", "two"]
    assert data.edges is None
    dense = load_model_run(spec, "dense-v2")
    assert dense.to_dict("list") == {
        "query_id": ["007", "8"],
        "doc_id": ["d2", "d2"],
        "score": [0.5, 0.9],
    }
    with pytest.raises(InputError, match="no run for model 'bm26'"):
        load_model_run(spec, "bm26")


def test_load_dataset_stark_qa_as_queries_and_qrels(tmp_path: Path) -> None:
    spec = read_manifest(_make_bundle(tmp_path)).datasets["stark"]
    data = load_dataset(spec)
    q = data.queries.set_index("query_id")
    assert list(q.index) == ["1", "2", "3"]
    assert q.loc["1", "text"] == "a\nmulti-line query"
    assert q["split"].to_dict() == {"1": "test", "2": "test", "3": "val"}
    assert q["pattern"].to_dict() == {"1": "x -> y", "2": "none", "3": "none"}
    assert q["metapath"].to_dict() == {"1": "none", "2": "a -> b", "3": "none"}
    assert q["query_type"].unique().tolist() == ["all"]
    assert q["dataset"].unique().tolist() == ["stark"]
    assert data.qrels.to_dict("list") == {
        "query_id": ["1", "1", "2", "3"],
        "doc_id": ["10", "11", "12", "13"],
        "relevance": [1, 1, 1, 1],
    }
    run = load_model_run(spec, "ada")
    assert run["doc_id"].tolist() == ["11", "10", "5", "12"]
    assert run["rank"].tolist() == [1, 2, 1, 2]


def test_load_dataset_without_queries_uses_the_qrels_ids(tmp_path: Path) -> None:
    data = load_dataset(read_manifest(_make_bundle(tmp_path)).datasets["auto"])
    assert data.queries["query_id"].tolist() == ["01"]
    assert data.queries["text"].tolist() == [""]
    assert data.queries["query_type"].tolist() == ["all"]


# --------------------------------------------------------------------------------------------
# errors


def _manifest_error(root: Path, manifest: str) -> InputError:
    (root / "bundle.toml").write_text(manifest)
    with pytest.raises(InputError) as info:
        read_manifest(root)
    return info.value


def test_no_manifest(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        read_manifest(tmp_path)
    assert str(info.value) == f"{tmp_path / 'bundle.toml'}: no bundle manifest (bundle.toml) here"


def test_toml_syntax_error_reports_the_line(tmp_path: Path) -> None:
    _make_bundle(tmp_path)
    error = _manifest_error(tmp_path, 'name = "x"\n\n[datasets.web\nqrels = "web/qrels.txt"\n')
    assert error.line == 3
    assert str(error).startswith(f"{tmp_path / 'bundle.toml'}:3: invalid TOML")


def test_not_utf8_manifest(tmp_path: Path) -> None:
    (tmp_path / "bundle.toml").write_bytes(b'name = "\xff"\n')
    with pytest.raises(InputError, match="not UTF-8"):
        read_manifest(tmp_path)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('qrels = "web/qrels.txt"\nqrles = "x"\n', "dataset 'web': unknown key(s) qrles"),
        ('qrels = "web/qrels.txt"\nruns = "web/models"\n', "runs folder 'models' does not exist"),
        ('qrels = "web/absent.txt"\n', "dataset 'web': qrels 'web/absent.txt' does not exist"),
        (
            'qrels = "web/qrels.txt"\nqueries = "nope.csv"\n',
            "dataset 'web': queries 'nope.csv' does not exist",
        ),
        ('qrels = "web/qrels.txt"\nruns = { a = "web/x.run" }\n', "run 'a': 'web/x.run'"),
        ('qrels = "web/qrels.txt"\nsplits = { t = "s.index" }\n', "split file 's.index'"),
        ('qrels = "web/qrels.txt"\nfamily = "other"\n', "family must be one of"),
        ('qrels = "web/qrels.txt"\nmetrics = "hit@1"\n', "metrics must be a list"),
        ('qrels = "web/qrels.txt"\nrelevance_threshold = 0\n', "relevance_threshold"),
        ("qrels = 3\n", "qrels must be a path string"),
        ('qrels = "web/qrels.txt"\nruns = "web/empty"\n', "holds no run file"),
    ],
)
def test_dataset_errors(tmp_path: Path, body: str, message: str) -> None:
    _make_bundle(tmp_path)
    (tmp_path / "web" / "empty").mkdir()
    error = _manifest_error(tmp_path, f"[datasets.web]\n{body}")
    assert message in str(error)
    assert str(error).startswith(f"{tmp_path / 'bundle.toml'}: ")


def test_missing_qrels(tmp_path: Path) -> None:
    (tmp_path / "d" / "runs").mkdir(parents=True)
    (tmp_path / "d" / "queries.csv").write_text("query_id,text\n1,a\n")
    error = _manifest_error(tmp_path, "[datasets.d]\n")
    assert str(error) == (
        f"{tmp_path / 'bundle.toml'}: dataset 'd': no qrels "
        '(set qrels = "..." or add <dataset>/qrels.*)'
    )


def test_two_run_files_of_one_model_are_refused(tmp_path: Path) -> None:
    """bm25.trec and bm25.tsv in a runs folder are both model bm25: one used to replace the
    other without a word."""
    (tmp_path / "d" / "runs").mkdir(parents=True)
    (tmp_path / "d" / "qrels.txt").write_text("q 0 a 1\n")
    (tmp_path / "d" / "runs" / "bm25.trec").write_text("q Q0 a 1 2.0 x\n")
    (tmp_path / "d" / "runs" / "bm25.tsv").write_text("query_id\tdoc_id\tscore\nq\tb\t1\n")
    error = _manifest_error(tmp_path, "[datasets.d]\n")
    assert str(error) == (
        f"{tmp_path / 'bundle.toml'}: dataset 'd': run files 'bm25.trec' and 'bm25.tsv' are "
        "both model 'bm25': keep one, or name each file in a runs table (runs = {name = \"file\"})"
    )


def test_a_run_file_name_that_is_not_utf8_names_its_model_with_u_fffd(tmp_path: Path) -> None:
    """A TREC run named ``bm\\xff25.trec`` (Latin-1 bytes) ended in a UnicodeEncodeError
    traceback when its name, kept as a surrogate escape, became an Arrow string."""
    (tmp_path / "d" / "runs").mkdir(parents=True)
    (tmp_path / "d" / "qrels.txt").write_text("q 0 a 1\n")
    (tmp_path / "d" / "runs" / os.fsdecode(b"bm\xff25.trec")).write_text("q Q0 a 1 2.0 x\n")
    (tmp_path / "bundle.toml").write_text('name = "t"\n[datasets.d]\n')
    spec = read_manifest(tmp_path).datasets["d"]
    assert list(spec.runs) == ["bm\ufffd25"]
    ds = load_dataset(spec)
    runs = {model: load_model_run(spec, model) for model in spec.runs}
    table, _ = per_query_table(ds.queries, ds.qrels, runs, dataset="d", metrics=["hit@1"])
    assert table["model"].tolist() == ["bm\ufffd25"]
    assert table["hit@1"].tolist() == [1.0]


def test_a_queries_split_column_gives_way_to_the_manifests_split_files(tmp_path: Path) -> None:
    """A queries file with its own ``split`` column and a manifest naming split files gave
    ``split_x``/``split_y`` and a KeyError traceback on every page."""
    (tmp_path / "d" / "runs").mkdir(parents=True)
    (tmp_path / "d" / "queries.csv").write_text("query_id,text,split\nq1,a,test\nq2,b,val\n")
    (tmp_path / "d" / "qrels.txt").write_text("q1 0 a 1\nq2 0 b 1\n")
    (tmp_path / "d" / "runs" / "m.trec").write_text("q1 Q0 a 1 1.0 x\n")
    (tmp_path / "d" / "dev.txt").write_text("q2\n")
    (tmp_path / "bundle.toml").write_text(
        'name = "t"\n[datasets.d]\nsplits = { dev = "d/dev.txt" }\n'
    )
    spec = read_manifest(tmp_path).datasets["d"]
    queries = load_dataset(spec).queries
    assert queries[["query_id", "split"]].to_numpy().tolist() == [["q1", "none"], ["q2", "dev"]]
    assert load_dataset(spec, split="dev").queries["query_id"].tolist() == ["q2"]


def test_missing_runs_folder_by_default(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "qrels.txt").write_text("q 0 a 1\n")
    error = _manifest_error(tmp_path, "[datasets.d]\n")
    assert "dataset 'd': runs folder 'runs' does not exist" in str(error)


def test_no_datasets(tmp_path: Path) -> None:
    error = _manifest_error(tmp_path, 'name = "empty"\n')
    assert "no [datasets.<name>] table" in str(error)
