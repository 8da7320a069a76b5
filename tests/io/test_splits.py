"""Splits: ``evaluate --split FILE``, bundle ``splits``/``split``, ``load_dataset(spec, split)``,
``evaluate --bundle``, STaRK submission files and metric-name errors in manifests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.core.errors import InputError
from analysis.core.metrics import evaluate_run
from analysis.io import load_run
from analysis.io.bundle import load_dataset, load_model_run, read_manifest
from analysis.stats.perquery import per_query_table
from tests.helpers import run_main

ROOT = Path(__file__).resolve().parents[2]


_cli = run_main


def _write_collection(folder: Path, seed: int = 0) -> tuple[Path, Path, list[str]]:
    rng = np.random.default_rng(seed)
    run_lines, qrels_lines = [], []
    for q in range(40):
        for r, d in enumerate(rng.choice(60, size=20, replace=False)):
            run_lines.append(f"q{q} Q0 d{d} {r + 1} {20 - r + rng.random():.6f} sys")
        for d in rng.choice(60, size=3, replace=False):
            qrels_lines.append(f"q{q} 0 d{d} 1")
    run = folder / "run.txt"
    qrels = folder / "qrels.txt"
    run.write_text("\n".join(run_lines) + "\n")
    qrels.write_text("\n".join(qrels_lines) + "\n")
    split = [f"q{q}" for q in range(0, 40, 3)] + ["q999"]  # q999: in no file
    return run, qrels, split


def test_split_equals_a_hand_filtered_qrels(tmp_path: Path) -> None:
    run, qrels, split = _write_collection(tmp_path)
    index = tmp_path / "test.index"
    index.write_text("\n".join(split) + "\n")
    filtered = tmp_path / "filtered.qrels"
    keep = set(split)
    filtered.write_text(
        "".join(line + "\n" for line in qrels.read_text().splitlines() if line.split()[0] in keep)
    )
    metrics = "hit@1,recall@5,mrr,ndcg@10,map,rprec"
    a = _cli("evaluate", "--run", run, "--qrels", qrels, "--split", index, "--metrics", metrics,
             "--out", tmp_path / "a.csv")  # fmt: skip
    b = _cli("evaluate", "--run", run, "--qrels", filtered, "--metrics", metrics,
             "--out", tmp_path / "b.csv")  # fmt: skip
    assert a.returncode == 0, a.stderr
    assert b.returncode == 0, b.stderr
    got, expected = pd.read_csv(tmp_path / "a.csv"), pd.read_csv(tmp_path / "b.csv")
    pd.testing.assert_frame_equal(got, expected)
    assert len(got) == 14
    # both counts on stdout; the run queries outside the split are not "not in the qrels"
    assert "26 queries of the qrels outside the split dropped" in a.stdout
    assert "26 queries of the run outside the split ignored" in a.stdout
    assert "not in the qrels" not in a.stdout
    assert "not in the qrels" in b.stdout  # without the split they are warned about


MANIFEST = """\
[datasets.web]
family = "generic"
qrels = "web/qrels.txt"
runs = "web/runs"
splits = { test = "web/split/test.index", train = "web/split/train.index" }
split = "test"
metrics = ["hit@1", "mrr", "map"]
"""


def _bundle(tmp_path: Path, manifest: str = MANIFEST) -> Path:
    folder = tmp_path / "web"
    (folder / "runs").mkdir(parents=True)
    (folder / "split").mkdir()
    run, _, split = _write_collection(folder)
    run.rename(folder / "runs" / "bm25.run")
    _write_collection(folder / "runs", seed=1)[0].rename(folder / "runs" / "dense.run")
    (folder / "runs" / "qrels.txt").unlink()
    (folder / "split" / "test.index").write_text("\n".join(split) + "\n")
    train = [f"q{q}" for q in range(40) if f"q{q}" not in set(split)]
    (folder / "split" / "train.index").write_text("\n".join(train) + "\n")
    (tmp_path / "bundle.toml").write_text(manifest)
    return tmp_path


def test_bundle_split_means_agree_between_the_cli_and_the_per_query_table(tmp_path: Path) -> None:
    root = _bundle(tmp_path)
    spec = read_manifest(root).datasets["web"]
    assert spec.default_split == "test"
    assert set(spec.splits) == {"test", "train"}
    for split, n in ((None, 14), ("test", 14), ("train", 26), ("all", 40)):
        ds = load_dataset(spec, split)
        assert ds.split == (None if split == "all" else split or "test")
        assert ds.qrels["query_id"].nunique() == n
        runs = {m: load_model_run(spec, m) for m in spec.runs}
        table, warnings = per_query_table(
            ds.queries, ds.qrels, runs, dataset="web", metrics=list(spec.metrics)
        )
        assert not any(w.code == "not_in_qrels" for found in warnings.values() for w in found)
        out = tmp_path / f"out_{split}.csv"
        args = ["evaluate", "--bundle", root, "--dataset", "web", "--out", out]
        result = _cli(*args, *(["--split", split] if split else []))
        assert result.returncode == 0, result.stderr
        got = pd.read_csv(out, dtype={"query_id": str})
        assert list(got.columns) == ["model", "query_id", "hit@1", "mrr", "map"]
        assert len(got) == 2 * n
        expected = table.groupby("model")[["hit@1", "mrr", "map"]].mean()
        means = got.groupby("model")[["hit@1", "mrr", "map"]].mean()
        pd.testing.assert_frame_equal(means, expected.loc[means.index], check_exact=False)
    with pytest.raises(InputError, match=r"no split 'dev' \(known: test, train, all\)"):
        load_dataset(spec, "dev")


def test_load_dataset_split_restricts_queries_and_qrels(tmp_path: Path) -> None:
    spec = read_manifest(_bundle(tmp_path)).datasets["web"]
    ds = load_dataset(spec, "train")
    assert set(ds.qrels["query_id"]) == set(ds.queries["query_id"])
    assert len(ds.queries) == 26
    run = load_model_run(spec, "bm25")
    result = evaluate_run(run, ds.qrels, ["hit@1"])  # the split travels with the qrels
    notes = {w.code: w for w in result.warnings}
    assert "not_in_qrels" not in notes
    assert notes["split"].level == "info"
    assert "14 queries of the run outside the split ignored" in notes["split"].message
    assert "14 queries of the qrels outside the split dropped" in notes["split"].message


def test_every_entry_point_says_the_same_split_counts(tmp_path: Path) -> None:
    """``evaluate --split FILE`` on the whole qrels, ``evaluate --bundle`` and the per-query
    table of the app (the home page's data checks) print the same split note."""
    root = _bundle(tmp_path)
    folder = root / "web"
    note = (
        "split: 14 queries evaluated; 26 queries of the qrels outside the split dropped, "
        "26 queries of the run outside the split ignored"
    )
    by_file = _cli("evaluate", "--run", folder / "runs" / "bm25.run", "--qrels",
                   folder / "qrels.txt", "--split", folder / "split" / "test.index")  # fmt: skip
    by_bundle = _cli("evaluate", "--bundle", root, "--dataset", "web", "--out", tmp_path / "o.csv")
    assert note in by_file.stdout, by_file.stdout
    assert f"bm25: {note}" in by_bundle.stdout + by_bundle.stderr
    spec = read_manifest(root).datasets["web"]
    ds = load_dataset(spec)
    runs = {"bm25": load_model_run(spec, "bm25")}
    _, warnings = per_query_table(ds.queries, ds.qrels, runs, dataset="web", metrics=["mrr"])
    (split,) = [w for found in warnings.values() for w in found if w.code == "split"]
    assert split.message == note


@pytest.mark.parametrize(
    ("body", "match"),
    [
        ('split = "dev"', r"split 'dev' is not one of the splits \(known: test, train, all\)"),
        ('metrics = ["hit@1", "map@0"]', "cutoff must be at least 1"),
        ('metrics = ["hits_at_one"]', "unknown metric 'hits_at_one' \\(known: hit@k"),
        ("metrics = []", "metrics is empty"),
    ],
)
def test_manifest_split_and_metric_errors_are_one_line(tmp_path: Path, body: str, match: str):
    manifest = MANIFEST.replace('split = "test"', "").replace(
        'metrics = ["hit@1", "mrr", "map"]', ""
    )
    root = _bundle(tmp_path, manifest + body + "\n")
    with pytest.raises(InputError, match=match) as info:
        read_manifest(root)
    assert "\n" not in str(info.value)
    result = _cli("validate", "--bundle", root)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert "Traceback" not in result.stderr


def test_stark_submission_files_load_like_eval_results(tmp_path: Path) -> None:
    with_idx = tmp_path / "eval_results_test.csv"
    with_idx.write_text('idx,query_id,pred_rank\n0,5,"[3, 1, 2]"\n1,6,"[9]"\n')
    bare = tmp_path / "submission.csv"
    bare.write_text('query_id,pred_rank\n5,"[3, 1, 2]"\n6,"[9]"\n')
    long = tmp_path / "long.csv"
    long.write_text('query_id,pred_rank\n5,"[' + ", ".join(map(str, range(150))) + ']"\n')
    a, b = load_run(with_idx), load_run(bare)
    pd.testing.assert_frame_equal(a, b)
    assert a["doc_id"].tolist() == ["3", "1", "2", "9"]
    assert a["rank"].tolist() == [1, 2, 3, 1]
    assert len(load_run(long)) == 150


def test_evaluate_with_a_split_stays_pandas_free(tmp_path: Path) -> None:
    run, qrels, split = _write_collection(tmp_path)
    index = tmp_path / "test.index"
    index.write_text("\n".join(split) + "\n")
    code = (
        "import sys\n"
        "from analysis.cli import main\n"
        f"main(['evaluate', '--run', {str(run)!r}, '--qrels', {str(qrels)!r}, '--split', "
        f"{str(index)!r}, '--metrics', 'map,mrr'])\n"
        "print('pandas' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, check=True)  # fmt: skip
    assert proc.stdout.strip().splitlines()[-1] == "False"


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n\n"])
def test_a_split_file_without_a_query_id_is_one_error_line(tmp_path: Path, text: str) -> None:
    run, qrels, _ = _write_collection(tmp_path)
    split = tmp_path / "empty.index"
    split.write_text(text)
    out = tmp_path / "out.csv"
    for command in ("evaluate", "compare"):
        runs = ["--run", run] if command == "evaluate" else ["--run", run, "--run", f"b={run}"]
        args = [command, *runs, "--qrels", qrels, "--split", split]
        proc = _cli(*args, *(["--out", out] if command == "evaluate" else []))
        assert proc.returncode == 2, proc.stdout
        assert proc.stderr == f"error: {split}: the file holds no query id (one id per line)\n"
    assert not out.exists()
