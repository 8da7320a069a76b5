"""Ad-hoc bundles: runs and qrels given as files or objects -> the documented bundle format,
keyed by content; ``python -m analysis bundle``; the app launcher's ``--run``/``--qrels``."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from analysis.core.errors import InputError
from analysis.io import load_qrels, load_run
from analysis.io.adhoc import AdhocInputs, keyed_adhoc_bundle, run_argument, save_bundle
from analysis.io.bundle import load_dataset, load_model_run, read_manifest
from analysis.stats.perquery import per_query_table
from tests.helpers import ROOT, run_cli
from tests.loaders.ranx_shaped import Run

DEMO = ROOT / "data" / "demo" / "stark-mag"


@pytest.fixture(scope="module")
def trec(tmp_path_factory) -> dict[str, Path]:
    """Two demo runs and the demo qrels as TREC files."""
    folder = tmp_path_factory.mktemp("trec")
    out = {}
    for model in ("bm25", "char-ngram-tfidf"):
        run = load_run(DEMO / "runs" / f"{model}.parquet")
        lines = (
            f"{q} Q0 {d} 1 {s!r} {model}\n"
            for q, d, s in run[["query_id", "doc_id", "score"]].itertuples(False)
        )
        out[model] = folder / f"{model}.trec"
        out[model].write_text("".join(lines))
    qrels = load_qrels(DEMO / "qrels.parquet")
    out["qrels"] = folder / "qrels.txt"
    out["qrels"].write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in qrels.itertuples(False)))
    return out


def _table(bundle: Path) -> pd.DataFrame:
    manifest = read_manifest(bundle)
    (spec,) = manifest.datasets.values()
    ds = load_dataset(spec)
    runs = {m: load_model_run(spec, m) for m in spec.runs}
    table, _ = per_query_table(ds.queries, ds.qrels, runs, dataset="x", metrics=list(spec.metrics))
    return table.sort_values(["model", "query_id"]).reset_index(drop=True)


def test_objects_and_files_make_bundles_with_the_same_per_query_table(trec, tmp_path) -> None:
    run = load_run(trec["bm25"])
    nested: dict = {}
    for q, d, s in run.itertuples(False):
        nested.setdefault(q, {})[d] = s
    qrels = load_qrels(trec["qrels"]).rename(
        columns={"query_id": "qid", "doc_id": "docno", "relevance": "label"}
    )
    from_files = save_bundle(
        {"bm25": trec["bm25"], "ngram": trec["char-ngram-tfidf"]}, trec["qrels"], tmp_path / "files"
    )
    ngram = load_run(trec["char-ngram-tfidf"]).rename(
        columns={"query_id": "qid", "doc_id": "docno"}
    )
    from_objects = save_bundle({"bm25": Run(nested), "ngram": ngram}, qrels, tmp_path / "objects")
    table = _table(from_files)
    assert set(table["model"]) == {"bm25", "ngram"}
    assert len(table) == 2 * 420
    pd.testing.assert_frame_equal(_table(from_objects), table)
    text = (from_files / "bundle.toml").read_text()
    assert 'metrics = ["hit@1", "hit@5", "recall@20", "mrr", "ndcg@10"]' in text
    assert 'family = "generic"' in text


def test_same_content_one_bundle_new_content_another(trec, tmp_path) -> None:
    home = tmp_path / "bundles"
    inputs = AdhocInputs(runs={"bm25": trec["bm25"]}, qrels=trec["qrels"], name="mag")
    first = keyed_adhoc_bundle(inputs, home)
    stamps = {p: p.stat().st_mtime_ns for p in first.rglob("*")}
    again = keyed_adhoc_bundle(
        AdhocInputs(
            runs={"bm25": load_run(trec["bm25"])}, qrels=load_qrels(trec["qrels"]), name="mag"
        ),
        home,
    )
    assert again == first
    assert {p: p.stat().st_mtime_ns for p in first.rglob("*")} == stamps  # left untouched
    assert [p.name for p in home.iterdir()] == [first.name]  # no staging folder left
    other = keyed_adhoc_bundle(
        AdhocInputs(runs={"bm25": trec["bm25"]}, qrels=trec["qrels"], name="mag", metrics="mrr"),
        home,
    )
    assert other != first
    assert other.name.startswith("mag-")
    assert sorted(p.name for p in home.iterdir()) == sorted([first.name, other.name])
    (first / "mag" / "qrels.parquet").write_bytes(b"damaged")  # a damaged copy is replaced
    assert keyed_adhoc_bundle(inputs, home) == first
    assert load_qrels(first / "mag" / "qrels.parquet").equals(load_qrels(trec["qrels"]))


def test_split_queries_and_spatial_family(tmp_path) -> None:
    run = pd.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["p1", "p2"], "score": [1.0, 1.0]})
    qrels = pd.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["p1", "p1"], "relevance": [1, 1]})
    queries = pd.DataFrame(
        {"query_id": ["q1", "q2"], "text": ["a", "b"], "lat": [30.0, 30.1], "lon": [120.0, 120.1]}
    )
    pois = pd.DataFrame(
        {"doc_id": ["p1", "p2"], "name": ["x", "y"], "lat": [30.0, 30.2], "lon": [120.0, 120.2]}
    )
    out = save_bundle(
        {"m": run}, qrels, tmp_path / "b", queries=queries, entities=pois, split=["q2"], name="geo"
    )
    spec = read_manifest(out).datasets["geo"]
    assert spec.family == "spatial"
    assert spec.crs == "EPSG:4326"
    assert spec.default_split == "split"
    ds = load_dataset(spec)
    assert ds.queries["query_id"].tolist() == ["q2"]
    assert ds.entities is not None
    split_file = tmp_path / "test.index"
    split_file.write_text("q1\n")
    out = save_bundle({"m": run}, qrels, tmp_path / "c", split=split_file)
    assert read_manifest(out).datasets["adhoc"].default_split == "test"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": "bad name"}, "--name: 'bad name': use 1-64 letters"),
        ({"runs": {}}, "runs: give at least one run"),
        (
            {"runs": {"a/b": {"q": {"d": 1.0}}, "a__b": {"q": {"d": 1.0}}}},
            "runs: models 'a/b' and 'a__b' share the file name",
        ),
        ({"metrics": ["hit@0"]}, "--metrics: "),
        ({"split": []}, "split: the split holds no query id"),
    ],
)
def test_bad_inputs_are_one_line(kwargs, message, tmp_path) -> None:
    given = {"runs": {"m": {"q": {"d": 1.0}}}, "qrels": {"q": {"d": 1}}, **kwargs}
    with pytest.raises(InputError) as err:
        save_bundle(out=tmp_path / "b", **given)
    assert str(err.value).startswith(message)
    assert not (tmp_path / "b").exists()


def test_run_argument() -> None:
    assert run_argument("bm25=runs/x.trec") == ("bm25", "runs/x.trec")
    assert run_argument("runs/bm25.trec.gz") == ("bm25", "runs/bm25.trec.gz")
    with pytest.raises(InputError, match="expected NAME=PATH"):
        run_argument("=x.trec")


def test_bundle_command(trec, tmp_path) -> None:
    out = tmp_path / "shared"
    done = run_cli(
        "bundle",
        "--run",
        f"bm25={trec['bm25']}",
        "--run",
        trec["char-ngram-tfidf"],
        "--qrels",
        trec["qrels"],
        "--queries",
        DEMO / "queries.parquet",
        "--name",
        "mag",
        "--out",
        out,
    )
    assert done.returncode == 0, done.stderr
    assert (
        done.stdout.splitlines()[0]
        == "mag: 420 queries, 3,285 qrels rows, 0 entities, runs: bm25, char-ngram-tfidf"
    )
    spec = read_manifest(out).datasets["mag"]
    assert list(spec.runs) == ["bm25", "char-ngram-tfidf"]
    assert "query_type" in load_dataset(spec).queries.columns
    evaluated = run_cli(
        "evaluate", "--bundle", out, "--dataset", "mag", "--out", tmp_path / "pq.csv"
    )
    assert evaluated.returncode == 0, evaluated.stderr
    bad = tmp_path / "bad.txt"
    bad.write_text("q1 0 d1 1\nq1 0 d2 1.5\n")
    failed = run_cli("bundle", "--run", trec["bm25"], "--qrels", bad, "--out", tmp_path / "never")
    assert failed.returncode == 2
    assert failed.stderr == f"error: {bad}:2: relevance '1.5' is not an integer\n"
    assert not (tmp_path / "never").exists()
    inside = run_cli(
        "bundle", "--run", trec["bm25"], "--qrels", trec["qrels"], "--out", trec["qrels"].parent
    )
    assert inside.returncode == 2
    assert "must lie outside the input" in inside.stderr


def test_launcher_reads_the_adhoc_options_and_passes_the_rest_on(trec, tmp_path) -> None:
    from ui import launch

    argv = [
        "--run",
        f"bm25={trec['bm25']}",
        "--server.port",
        "8600",
        "--qrels",
        str(trec["qrels"]),
        "--name",
        "mag",
        "--",
        "--script-arg",
    ]
    rest, env = launch.adhoc(argv, {"X": "1"})
    assert rest == ["--server.port", "8600", "--", "--script-arg"]
    folder = Path(env[launch.ROOTS_ENV])
    assert folder.parent.name == "bundles"
    assert folder.name.startswith("mag-")
    assert list(read_manifest(folder).datasets) == ["mag"]
    assert env["X"] == "1"
    assert launch.adhoc(["--server.port", "8600"], {"X": "1"}) == (
        ["--server.port", "8600"],
        {"X": "1"},
    )
    assert launch.adhoc(["--", "--run", "x"], {}) == (["--", "--run", "x"], {})
    assert (
        launch.prepare(["--run", "x=/nonexistent", "--qrels", "q"], launch.find_app(), tmp_path)
        is None
    )


def test_the_app_upload_reads_ranx_json_and_pyterrier_tables(trec) -> None:
    import json

    from ui.data import _read_upload

    run = load_run(trec["bm25"])
    nested: dict = {}
    for q, d, s in run.itertuples(False):
        nested.setdefault(q, {})[d] = s
    got = _read_upload("bm25.json", json.dumps(nested, indent=2).encode())
    pd.testing.assert_frame_equal(got, run)
    table = run.rename(columns={"query_id": "qid", "doc_id": "docno"}).to_csv(index=False)
    pd.testing.assert_frame_equal(_read_upload("bm25.csv", table.encode()), run)
    with pytest.raises(InputError, match=r"^bm25.json:1: query 'q', doc 'd': score"):
        _read_upload("bm25.json", b'{"q": {"d": "x"}}')
