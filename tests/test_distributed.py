"""Tests for analysis.stats.distributed: the Dask plan (shuffle by query, rank per partition,
reduce, core kernels) gives the in-memory core's per-query CSV byte for byte, in local mode."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.core.errors import InputError
from analysis.core.metrics import evaluate_arrays, qrels_arrays, run_arrays
from analysis.stats.distributed import evaluate_dask, whole_queries
from tests.helpers import ALL_METRICS, assert_matches_pytrec
from tests.test_outofcore import _cli, _codes, _collection, _csv_bytes, _frame, _parquet


@pytest.mark.parametrize(
    ("regime", "long_ids"), [("unique", False), ("ties", False), ("ties", True), ("graded", False)]
)
def test_partitioned_parquet_gives_the_core_bytes(
    tmp_path: Path, regime: str, long_ids: bool
) -> None:
    run, qrels = _collection(21, regime, long_ids)
    folder = tmp_path / "run"
    for i, part in enumerate(np.array_split(np.arange(len(run)), 5)):  # queries split apart
        folder.mkdir(exist_ok=True)
        _parquet(run.iloc[part], folder / f"part-{i}.parquet")
    core = evaluate_arrays(*run_arrays(run), qrels_arrays(qrels), ALL_METRICS)
    ours = evaluate_dask(folder, qrels_arrays(qrels), ALL_METRICS, npartitions=3)
    assert _csv_bytes(ours, tmp_path / "a.csv") == _csv_bytes(core, tmp_path / "b.csv")
    assert _codes(ours[2]) == _codes(core[2])


def test_float32_ties_and_byte_order_equal_pytrec_eval(tmp_path: Path) -> None:
    docs = ["a", "z", "é", "€", "😀"]
    run = pd.DataFrame(
        {
            "query_id": ["q"] * 5 + ["r"] * 5,
            "doc_id": docs + docs,
            "score": [1.0, 1.0 + 1e-12, 1.0, 1.0 - 1e-12, 1.0, 2.0, 1.0, 1.0, 1.0, 0.5],
        }
    )
    qrels = pd.DataFrame({"query_id": ["q", "r"], "doc_id": ["é", "z"], "relevance": [1, 1]})
    got = _frame(evaluate_dask(_parquet(run, tmp_path / "r.parquet"), qrels_arrays(qrels),
                               ["mrr", "ndcg@10"]))  # fmt: skip
    assert got["mrr"].tolist() == [1 / 3, 1 / 4]
    assert_matches_pytrec(got, run, qrels, ["mrr", "ndcg@10"])


def test_bad_input_is_one_clear_error(tmp_path: Path) -> None:
    qrels = qrels_arrays(pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevance": [1]}))
    nan = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [1.0, np.nan]})
    with pytest.raises(InputError, match="not a finite number"):
        evaluate_dask(_parquet(nan, tmp_path / "n.parquet"), qrels)
    no_score = pd.DataFrame({"query_id": ["q"], "doc_id": ["a"]})
    with pytest.raises(InputError, match="missing column"):
        evaluate_dask(_parquet(no_score, tmp_path / "m.parquet"), qrels)
    with pytest.raises(InputError, match="no such file"):
        evaluate_dask(tmp_path / "absent.parquet", qrels)


def test_cli_engine_dask_writes_the_memory_engine_file(tmp_path: Path) -> None:
    run, qrels = _collection(22, "ties")
    path = _parquet(run, tmp_path / "run.parquet")
    qrels_path = tmp_path / "qrels.csv"
    qrels.to_csv(qrels_path, index=False)
    outs = {}
    for engine in ("memory", "dask"):
        outs[engine] = tmp_path / f"{engine}.csv"
        proc = _cli("evaluate", "--run", path, "--qrels", qrels_path, "--engine", engine,
                    "--out", outs[engine])  # fmt: skip
        assert proc.returncode == 0, proc.stderr
    assert outs["memory"].read_bytes() == outs["dask"].read_bytes()


def _folders(run: pd.DataFrame, root: Path) -> dict[str, Path]:
    """The run as 4 Parquet files twice: rows cut anywhere (queries split across files) and
    whole queries per file."""
    folders = {"split": root / "split", "whole": root / "whole"}
    for folder in folders.values():
        folder.mkdir()
    for i, part in enumerate(np.array_split(np.arange(len(run)), 4)):
        _parquet(run.iloc[part], folders["split"] / f"part-{i}.parquet")
    queries = pd.unique(run["query_id"])
    for i, chunk in enumerate(np.array_split(queries, 4)):
        _parquet(run[run["query_id"].isin(chunk)], folders["whole"] / f"part-{i}.parquet")
    return folders


def test_files_of_whole_queries_need_no_shuffle_and_give_the_same_bytes(tmp_path: Path) -> None:
    import dask.dataframe as dd

    run, qrels = _collection(24, "ties")
    folders = _folders(run, tmp_path)
    assert not whole_queries(dd.read_parquet(str(folders["split"] / "*.parquet")))
    assert whole_queries(dd.read_parquet(str(folders["whole"] / "*.parquet")))
    core = evaluate_arrays(*run_arrays(run), qrels_arrays(qrels), ALL_METRICS)
    for folder in folders.values():
        ours = evaluate_dask(folder, qrels_arrays(qrels), ALL_METRICS)
        assert _csv_bytes(ours, tmp_path / "a.csv") == _csv_bytes(core, tmp_path / "b.csv")


def test_a_local_dask_cluster_gives_the_core_bytes(tmp_path: Path) -> None:
    """The plan on a ``distributed.LocalCluster`` (2 worker processes, reached through the
    scheduler address as a user gives it): the per-query CSV is the in-memory core's, byte for
    byte, with a shuffle (queries split across files) and without (whole queries per file), and
    both workers reduced partitions."""
    distributed = pytest.importorskip("distributed")
    run, qrels = _collection(23, "ties", long_ids=True)
    folders = _folders(run, tmp_path)
    core = evaluate_arrays(*run_arrays(run), qrels_arrays(qrels), ALL_METRICS)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        for layout, folder in folders.items():
            with distributed.get_task_stream(client) as stream:
                ours = evaluate_dask(folder, qrels_arrays(qrels), ALL_METRICS,
                                     scheduler=cluster.scheduler_address)  # fmt: skip
            assert _csv_bytes(ours, tmp_path / "a.csv") == _csv_bytes(core, tmp_path / "b.csv")
            assert _codes(ours[2]) == _codes(core[2])
            keys = [str(task["key"]) for task in stream.data]
            assert any("shuffle" in key for key in keys) == (layout == "split")
            workers = {t["worker"] for t, key in zip(stream.data, keys, strict=True)
                       if "_reduce" in key}  # fmt: skip
            assert len(workers) == 2


def test_a_query_split_between_two_files_is_reduced_once(tmp_path: Path) -> None:
    """Six files of whole queries but one, whose rows are cut between the first two files: the
    query must still be ranked as one list. Dask reads the query ids alone in fewer, fused
    partitions (two files each) than the whole rows (one file each), so a check of the query
    ids per partition sees no query shared between partitions and the query is ranked twice,
    among half of its documents each time."""
    run, qrels = _collection(25, "ties")
    run = run.sort_values("query_id", kind="stable").reset_index(drop=True)
    starts = np.flatnonzero(run["query_id"].ne(run["query_id"].shift()).to_numpy())
    sixth = [int(starts[len(starts) * i // 6]) for i in range(6)]
    cuts = [0, sixth[1] + 40, *sixth[2:], len(run)]  # the second cut falls inside a query
    folder = tmp_path / "parts"
    folder.mkdir()
    for i, (lo, hi) in enumerate(zip(cuts[:-1], cuts[1:], strict=True)):
        _parquet(run.iloc[lo:hi], folder / f"part-{i}.parquet")
    core = evaluate_arrays(*run_arrays(run), qrels_arrays(qrels), ALL_METRICS)
    ours = evaluate_dask(folder, qrels_arrays(qrels), ALL_METRICS)
    assert _csv_bytes(ours, tmp_path / "a.csv") == _csv_bytes(core, tmp_path / "b.csv")
