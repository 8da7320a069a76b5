"""Tests for analysis.core.engines.dask: the DuckDB engine's passes as Dask tasks give the
in-memory core's per-query CSV byte for byte, on local threads and on a local cluster of
separate processes (``dask scheduler`` + two ``dask worker``); a cluster that cannot run the
plan is one line naming the fix. The engine matrix (every engine, layout and id encoding) is in
tests/core/test_engines.py."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.core import engines
from analysis.core.engines import Options
from analysis.core.engines import dask as dask_engine
from analysis.core.errors import InputError
from analysis.core.metrics import evaluate_arrays, qrels_arrays, run_arrays
from tests.core.test_duckdb import _cli, _codes, _collection, _csv_bytes, _parquet
from tests.helpers import ALL_METRICS


def evaluate_dask(run: Path, qrels: tuple, metrics: list[str], **options: object) -> tuple:
    return engines.evaluate(run, qrels, metrics, "dask", Options(**options))  # type: ignore[arg-type]


def _cut_files(run: pd.DataFrame, folder: Path, inside: int) -> Path:
    """The run sorted by query in six files of whole queries, but the first cut falls ``inside``
    rows into a query."""
    run = run.sort_values("query_id", kind="stable").reset_index(drop=True)
    starts = np.flatnonzero(run["query_id"].ne(run["query_id"].shift()).to_numpy())
    sixth = [int(starts[len(starts) * i // 6]) for i in range(6)]
    cuts = [0, sixth[1] + inside, *sixth[2:], len(run)]
    folder.mkdir()
    for i, (lo, hi) in enumerate(itertools.pairwise(cuts)):
        _parquet(run.iloc[lo:hi], folder / f"part-{i}.parquet")
    return folder


def test_a_query_split_between_two_files_is_reduced_once(tmp_path: Path) -> None:
    """Six files of whole queries but one, whose rows are cut between the first two files: the
    query must still be ranked as one list. (Dask's own reader once fused the query-id column
    of two files into one partition but not the whole rows, so a check of the query ids per
    partition saw no query shared and ranked that query twice, among half of its documents.)"""
    run, qrels = _collection(25, "ties")
    folder = _cut_files(run, tmp_path / "parts", inside=40)
    core = evaluate_arrays(*run_arrays(run), qrels_arrays(qrels), ALL_METRICS)
    ours = evaluate_dask(folder, qrels_arrays(qrels), ALL_METRICS, threads=2)
    assert _csv_bytes(ours, tmp_path / "a.csv") == _csv_bytes(core, tmp_path / "b.csv")
    assert _codes(ours[2]) == _codes(core[2])


def test_bad_input_is_one_clear_error(tmp_path: Path) -> None:
    qrels = qrels_arrays(pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevance": [1]}))
    nan = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [1.0, np.nan]})
    path = _parquet(nan, tmp_path / "n.parquet")
    with pytest.raises(InputError, match=r"n\.parquet: row 2: score \S+ is not a finite number"):
        evaluate_dask(path, qrels, ["mrr"])
    no_score = pd.DataFrame({"query_id": ["q"], "doc_id": ["a"]})
    with pytest.raises(InputError, match="missing column"):
        evaluate_dask(_parquet(no_score, tmp_path / "m.parquet"), qrels, ["mrr"])
    with pytest.raises(InputError, match="no such file"):
        evaluate_dask(tmp_path / "absent.parquet", qrels, ["mrr"])
    with pytest.raises(InputError, match="the glob matches no file"):
        evaluate_dask(tmp_path / "absent" / "*.parquet", qrels, ["mrr"])
    text = tmp_path / "run.trec"
    text.write_text("q Q0 a 1 1.0 t\n")
    with pytest.raises(InputError, match="--engine dask: reads Parquet runs"):
        evaluate_dask(text, qrels, ["mrr"])


def test_cli_engine_dask_writes_the_memory_engine_file(tmp_path: Path, dask_cluster: str) -> None:
    """Local threads, and the cluster given by --scheduler: the memory engine's bytes."""
    run, qrels = _collection(22, "ties")
    path = _parquet(run, tmp_path / "run.parquet")
    qrels_path = tmp_path / "qrels.csv"
    qrels.to_csv(qrels_path, index=False)
    outs = {}
    for name, extra in (("memory", []), ("dask", []), ("cluster", ["--scheduler", dask_cluster])):
        outs[name] = tmp_path / f"{name}.csv"
        engine = "memory" if name == "memory" else "dask"
        proc = _cli("evaluate", "--run", path, "--qrels", qrels_path, "--engine", engine,
                    "--out", outs[name], *extra)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr == ""  # no progress when piped, no version table of Dask's
    assert outs["memory"].read_bytes() == outs["dask"].read_bytes()
    assert outs["memory"].read_bytes() == outs["cluster"].read_bytes()


def test_passes_run_as_tasks_on_both_workers_with_no_shuffle(
    tmp_path: Path, dask_cluster: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whole-query files and a file of whole-query row groups: one task per pass of the plan
    (DuckDB on the worker, reduced rows back), spread over both workers, and nothing else
    moved between them."""
    from distributed import Client, get_task_stream

    run, qrels = _collection(23, "ties", long_ids=True)
    folder = _cut_files(run, tmp_path / "parts", inside=0)
    core = _csv_bytes(evaluate_arrays(*run_arrays(run), qrels_arrays(qrels), ALL_METRICS),
                      tmp_path / "core.csv")  # fmt: skip
    monkeypatch.setattr(engines.passes, "MAX_ROWS", len(run) // 5)
    with Client(dask_cluster) as client, get_task_stream(client) as stream:
        ours = evaluate_dask(folder, qrels_arrays(qrels), ALL_METRICS, scheduler=dask_cluster)
    assert _csv_bytes(ours, tmp_path / "a.csv") == core
    names = [str(t["key"]) for t in stream.data]
    assert all("run_pass" in k or "_scan_file" in k for k in names), names
    passes_run = [t for t, k in zip(stream.data, names, strict=True) if "run_pass" in k]
    assert len(passes_run) >= 5
    assert len({t["worker"] for t in passes_run}) == 2


def test_a_cluster_without_the_library_or_with_other_versions_is_one_line(
    tmp_path: Path, dask_cluster: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    run, qrels = _collection(26, "unique")
    path = _parquet(run, tmp_path / "run.parquet")
    missing = "__import__('analysis_not_installed')"
    monkeypatch.setattr(dask_engine, "_PROBE", missing)
    with pytest.raises(InputError) as info:
        evaluate_dask(path, qrels_arrays(qrels), ["mrr"], scheduler=dask_cluster)
    text = str(info.value)
    assert "cannot import this library (No module named 'analysis_not_installed')" in text
    assert "pip install" in text
    assert "\n" not in text
    monkeypatch.undo()
    here = dask_engine.versions()
    monkeypatch.setattr(dask_engine, "versions", lambda: {**here, "duckdb": "0.0.1"})
    with pytest.raises(InputError, match=r"runs duckdb 2\.\S+ \(here 0\.0\.1\).*pip install"):
        evaluate_dask(path, qrels_arrays(qrels), ["mrr"], scheduler=dask_cluster)
