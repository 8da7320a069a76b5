"""Ad-hoc bundles: runs and qrels given as files or objects -> the documented bundle format,
keyed by content; ``python -m analysis bundle``; the app launcher's ``--run``/``--qrels``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from analysis.core.errors import InputError
from analysis.io import load_qrels, load_run
from analysis.io.adhoc import AdhocInputs, keyed_adhoc_bundle, run_argument, save_bundle
from analysis.io.bundle import load_dataset, load_model_run, read_manifest
from analysis.stats.perquery import per_query_table
from tests.helpers import ROOT, run_main
from tests.io.loaders.ranx_shaped import Run

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
    kept, given = load_qrels(first / "mag" / "qrels.parquet"), load_qrels(trec["qrels"])
    order = ["query_id", "doc_id"]  # written in canonical order
    assert kept.equals(given.sort_values(order, kind="stable", ignore_index=True))


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
        ({"metrics": 5}, "--metrics: 5: give metric names"),
        ({"name": "x" * 5000}, "--name: '" + "x" * 58 + "…: use 1-64 letters"),
        ({"split": []}, "split: the split holds no query id"),
        ({"runs": [{"q": {"d": 1.0}}]}, "runs: give at least one run"),
        ({"runs": {"a\nb": {"q": {"d": 1.0}}}}, "runs: model name 'a\\nb': use 1-200 printable"),
        ({"runs": {"bm25\u202etxt": {"q": {"d": 1.0}}}}, "runs: model name 'bm25\\u202etxt'"),
        ({"runs": {"x" * 201: {"q": {"d": 1.0}}}}, "runs: model name 'xxxxx"),
        ({"runs": {"BM25": {"q": {"d": 1.0}}, "bm25": {"q": {"d": 1.0}}}},
         "runs: models 'BM25' and 'bm25' differ only in case or Unicode form; rename one"),
        ({"runs": {"\u00e9": {"q": {"d": 1.0}}, "e\u0301": {"q": {"d": 1.0}}}},
         "runs: models '\u00e9' and 'e\u0301' differ only in case or Unicode form"),
        ({"runs": {"m": {}}}, "run 'm': holds no data (an empty mapping)"),
        ({"qrels": {"q": {}}}, "qrels: holds no data (every query's mapping is empty)"),
        ({"split": [None]}, "split: query id None is not a string or an integer"),
        ({"split": ["q\nr"]}, "split: query id 'q\\nr' is empty or holds a line break"),
        ({"split": b"q"}, "split: a bytes is not a split file"),
        ({"split": ["elsewhere"]}, "split: none of the split's 1 query ids is in the qrels"),
        ({"queries": pd.DataFrame([["q", "a", "b"]], columns=["query_id", "text", "text"])},
         "queries: column 'text' appears more than once"),
        ({"queries": pd.DataFrame({"query_id": ["q"], "text": [""], "lat": [91.0], "lon": [0]}),
          "entities": pd.DataFrame({"doc_id": ["d"], "lat": [1.0], "lon": [1.0]})},
         "queries: query_id 'q': lat 91.0 is not a number in [-90, 90] (WGS84 degrees)"),
        ({"queries": pd.DataFrame({"query_id": ["q"], "text": [""], "lat": [1.0], "lon": [0]}),
          "entities": pd.DataFrame({"doc_id": ["d"], "lat": [1.0], "lon": ["east"]})},
         "entities: doc_id 'd': lon 'east' is not a number in [-180, 180]"),
    ],
)  # fmt: skip
def test_bad_inputs_are_one_line(kwargs, message, tmp_path) -> None:
    given = {"runs": {"m": {"q": {"d": 1.0}}}, "qrels": {"q": {"d": 1}}, **kwargs}
    with pytest.raises(InputError) as err:
        save_bundle(out=tmp_path / "b", **given)
    assert str(err.value).startswith(message)
    assert not (tmp_path / "b").exists()


def test_model_names_are_labels_and_their_files_stay_valid(tmp_path) -> None:
    """Names in any script get their own files; a very long name a bounded one; names with
    ``=``, ``/``, ``..``, Markdown or HTML are plain labels."""
    run = {"q": {"d": 1.0}}
    names = ["检索", "排序", "a=b", "../x", "<b>x</b>", "**bold**", "y" * 200]
    out = save_bundle(dict.fromkeys(names, run), {"q": {"d": 1}}, tmp_path / "b")
    spec = read_manifest(out).datasets["adhoc"]
    assert list(spec.runs) == names
    files = [Path(p).name for p in spec.runs.values()]
    assert files[:2] == ["检索.parquet", "排序.parquet"]
    assert len(set(files)) == len(files)
    assert all(len(f.encode()) <= 120 for f in files)
    assert all(spec.runs[m].is_relative_to(out) for m in names)


def test_names_windows_reserves_for_devices_make_no_such_file(tmp_path) -> None:
    """A model named ``con``, ``NUL.txt`` or ``com1`` gets a run file Windows can open (not
    the device), and a dataset named ``aux`` is refused like any name that is no folder."""
    run = {"q": {"d": 1.0}}
    names = ["con", "NUL.txt", "com1", "lpt9 "]
    out = save_bundle(dict.fromkeys(names, run), {"q": {"d": 1}}, tmp_path / "b")
    spec = read_manifest(out).datasets["adhoc"]
    stems = [Path(p).name.split(".")[0].casefold() for p in spec.runs.values()]
    assert stems == ["con_", "nul_", "com1_", "lpt9_"]
    with pytest.raises(InputError, match="'aux': a dataset name is one folder name"):
        save_bundle({"m": run}, {"q": {"d": 1}}, tmp_path / "c", name="aux")


def test_runs_beyond_the_limit_are_refused_before_reading_any(monkeypatch, tmp_path) -> None:
    from analysis.io import adhoc

    monkeypatch.setattr(adhoc, "MAX_MODELS", 3)
    runs = {f"m{i}": "never-read.trec" for i in range(4)}
    with pytest.raises(InputError, match=r"^runs: 4 runs: an ad-hoc bundle takes at most 3$"):
        save_bundle(runs, {"q": {"d": 1}}, tmp_path / "b")


def test_the_same_content_in_any_order_is_one_bundle(tmp_path) -> None:
    """The order of queries, of qrels and of untied documents makes no new bundle; the order of
    tied documents does (the stable tie policy reads it), for tables and mappings alike."""
    import random

    rows = [(f"q{i % 7}", f"d{i}", float(i % 5)) for i in range(200)]
    qrels = [(f"q{i}", f"d{i}", 1) for i in range(7)]

    def shuffled(items: list, seed: int) -> list:
        items = list(items)
        random.Random(seed).shuffle(items)
        return items

    def nested(items: list) -> dict:
        out: dict = {}
        for q, d, v in items:
            out.setdefault(q, {})[d] = v
        return out

    def keyed(run: object, seed: int) -> Path:
        qrels_in = nested(shuffled(qrels, seed))
        return keyed_adhoc_bundle(AdhocInputs({"m": run}, qrels_in), tmp_path / "bundles")

    columns = ["query_id", "doc_id", "score"]
    given = shuffled(rows, 1)
    regrouped = sorted(given, key=lambda r: r[2])  # rows moved, tied rows in their order
    assert regrouped != given
    first = keyed(nested(given), 1)
    assert keyed(Run(nested(regrouped)), 2) == first
    assert keyed(pd.DataFrame(regrouped, columns=columns), 3) == first
    assert keyed(pd.DataFrame(shuffled(rows, 4), columns=columns), 4) != first  # other ties
    run = load_run(first / "adhoc" / "runs" / "m.parquet")
    assert run["query_id"].is_monotonic_increasing
    assert (run.groupby("query_id")["score"].diff().dropna() <= 0).all()


@pytest.mark.parametrize("ties", ["trec_eval", "stable"])
@pytest.mark.parametrize("shape", ["dict", "ranx", "table", "pyterrier"])
def test_a_bundle_evaluates_as_the_same_run_written_as_a_trec_file(tmp_path, shape, ties) -> None:
    """Per query, every metric of the bundle's run equals that of the run written as a TREC
    file in the order it was given, under both tie policies (ties, duplicates, integer ids)."""
    import random

    from analysis.core.metrics import evaluate

    rng = random.Random(7)
    rows = [(str(q), f"d{d}", float(rng.randint(0, 3))) for q in range(8) for d in
            rng.sample(range(40), 25)]  # fmt: skip
    if shape in ("table", "pyterrier"):
        rows += [(*rows[0][:2], 9.0), rows[5]]  # a pair twice
    qrels = [(str(q), f"d{d}", rng.randint(0, 2)) for q in range(8) for d in range(0, 40, 3)]
    nested: dict = {}
    for q, d, s in rows:
        nested.setdefault(q, {})[d] = s
    frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    given = {
        "dict": nested,
        "ranx": Run(nested),
        "table": frame,
        "pyterrier": frame.rename(columns={"query_id": "qid", "doc_id": "docno"}).assign(rank=0),
    }[shape]
    trec = tmp_path / "run.trec"
    trec.write_text("".join(f"{q} Q0 {d} 0 {s!r} t\n" for q, d, s in rows))
    qrels_frame = pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"])
    out = save_bundle({"m": given}, qrels_frame, tmp_path / "b")
    spec = read_manifest(out).datasets["adhoc"]
    metrics = ["hit@1", "mrr", "ndcg@10", "recall@20", "map", "P@5"]
    kept = evaluate(load_run(spec.runs["m"]), load_qrels(spec.qrels), metrics, ties=ties)
    written = evaluate(load_run(trec), load_qrels(spec.qrels), metrics, ties=ties)
    pd.testing.assert_frame_equal(
        kept.sort_values("query_id", ignore_index=True),
        written.sort_values("query_id", ignore_index=True),
    )


def test_a_crashed_writers_staging_folder_is_removed_later(tmp_path) -> None:
    import os
    import subprocess

    from analysis.io.adhoc import remove_stale_staging

    home = tmp_path / "bundles"
    home.mkdir()
    ended = subprocess.Popen(["true"])  # a process id that has just ended (and is reaped)
    assert ended.wait() == 0
    dead = home / f".staging-{ended.pid}-abc"
    live = home / f".staging-{os.getpid()}-def"
    fresh = home / ".staging-999999999-new"
    for folder in (dead, live, fresh):
        (folder / "bundle").mkdir(parents=True)
    for folder in (dead, live):
        os.utime(folder, (1, 1))
    assert remove_stale_staging(home) == [dead]
    assert live.exists()
    assert fresh.exists()  # too recent: its process may run on another machine


def test_run_argument() -> None:
    assert run_argument("bm25=runs/x.trec") == ("bm25", "runs/x.trec")
    assert run_argument("runs/bm25.trec.gz") == ("bm25", "runs/bm25.trec.gz")
    with pytest.raises(InputError, match="expected NAME=PATH"):
        run_argument("=x.trec")


def test_bundle_command(trec, tmp_path) -> None:
    out = tmp_path / "shared"
    done = run_main(
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
    evaluated = run_main(
        "evaluate", "--bundle", out, "--dataset", "mag", "--out", tmp_path / "pq.csv"
    )
    assert evaluated.returncode == 0, evaluated.stderr
    bad = tmp_path / "bad.txt"
    bad.write_text("q1 0 d1 1\nq1 0 d2 1.5\n")
    failed = run_main("bundle", "--run", trec["bm25"], "--qrels", bad, "--out", tmp_path / "never")
    assert failed.returncode == 2
    assert failed.stderr == f"error: {bad}:2: relevance '1.5' is not an integer\n"
    assert not (tmp_path / "never").exists()
    inside = run_main(
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


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"metadata": {"bm25": 3}}, "metadata of 'bm25': 3 is not a mapping: give {name: number}"),
        ({"metadata": [1]}, "metadata: [1] is not a mapping: give {model: {name: number}}"),
        ({"groups": ["bm25"]}, "groups: ['bm25'] is not a mapping: give {name: [run, ...]}"),
    ],
)
def test_metadata_and_groups_that_are_no_mappings_are_one_line(kwargs, message, tmp_path) -> None:
    """``metadata={"bm25": 3}`` raised TypeError from ``dict(3)``; a list of groups or of
    metadata raised AttributeError."""
    run = pd.DataFrame({"query_id": ["q"], "doc_id": ["d"], "score": [1.0]})
    qrels = pd.DataFrame({"query_id": ["q"], "doc_id": ["d"], "relevance": [1]})
    with pytest.raises(InputError) as err:
        save_bundle({"bm25": run}, qrels, tmp_path / "out", **kwargs)
    assert str(err.value) == message


def test_fold_runs_answering_one_query_are_refused_before_anything_is_written(tmp_path) -> None:
    """Folds ``f1`` and ``f2`` whose runs both answer ``q`` made a bundle that every later
    command refused; the bundle is now not written. A seed group's runs answer every query."""
    run = pd.DataFrame({"query_id": ["q", "r"], "doc_id": ["d", "e"], "score": [1.0, 1.0]})
    qrels = pd.DataFrame({"query_id": ["q", "r"], "doc_id": ["d", "e"], "relevance": [1, 1]})
    runs = {"f1": run, "f2": run.iloc[:1]}
    with pytest.raises(InputError) as err:
        save_bundle(runs, qrels, tmp_path / "out", groups={"cv": {"a": "f1", "b": "f2"}})
    assert str(err.value) == (
        "groups: group 'cv': query 'q' is answered by the runs of folds 'a' and 'b'; each "
        "fold's run answers its own queries"
    )
    assert not (tmp_path / "out").exists()
    runs = {"f1": run.iloc[1:], "f2": run.iloc[:1]}
    save_bundle(runs, qrels, tmp_path / "out", groups={"cv": {"a": "f1", "b": "f2"}})
    save_bundle(runs, qrels, tmp_path / "seeds", groups={"s": ["f1", "f2"]})


def test_a_folder_of_bundles_that_is_a_file_is_one_line(tmp_path) -> None:
    """A folder of bundles (the dashboard's cache folder) that is a file, or lies below one,
    raised FileExistsError / NotADirectoryError."""
    inputs = AdhocInputs(runs={"m": {"q": {"a": 1.0}}}, qrels={"q": {"a": 1}})
    (tmp_path / "file").write_text("x")
    home = tmp_path / "file"
    below = "a part of the path is a file, not a folder"
    for folder, why in ((home, "is a file, not a folder"), (home / "bundles", below)):
        with pytest.raises(InputError) as err:
            keyed_adhoc_bundle(inputs, folder)
        assert str(err.value) == f"{folder}: cannot write: {why}"
    assert (tmp_path / "file").read_text() == "x"


def test_a_split_of_numpy_integers_is_read(tmp_path) -> None:
    """A split given as a numpy array of integer ids (``df["qid"].unique()``) was refused:
    "query id 1 is not a string or an integer"; numpy booleans still are."""
    import numpy as np

    run, qrels = {1: {"a": 1.0}, 2: {"a": 1.0}}, {1: {"a": 1}, 2: {"a": 1}}
    out = save_bundle({"m": run}, qrels, tmp_path / "b", split=np.array([2]))
    assert load_dataset(read_manifest(out).datasets["adhoc"]).queries["query_id"].tolist() == ["2"]
    with pytest.raises(InputError, match=r"^split: query id True is not a string or an integer$"):
        save_bundle({"m": run}, qrels, tmp_path / "c", split=np.array([True]))


def test_a_file_in_place_of_the_bundle_folder_is_replaced(trec, tmp_path) -> None:
    """The bundles folder is a cache: a file (truncated, garbage) where the bundle's folder
    goes is replaced by the bundle, as a damaged copy is."""
    home = tmp_path / "bundles"
    inputs = AdhocInputs(runs={"bm25": trec["bm25"]}, qrels=trec["qrels"], name="mag")
    first = keyed_adhoc_bundle(inputs, home)
    table = _table(first)
    shutil.rmtree(first)
    first.write_bytes(b"\0garbage")
    assert keyed_adhoc_bundle(inputs, home) == first
    pd.testing.assert_frame_equal(_table(first), table)
