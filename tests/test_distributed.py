"""Tests for analysis.stats.distributed: the Dask plan (shuffle by query, rank per partition,
reduce, core kernels) gives the in-memory core's per-query CSV byte for byte, in local mode."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.core.errors import InputError
from analysis.core.metrics import evaluate_arrays, qrels_arrays, run_arrays
from analysis.stats.distributed import evaluate_dask
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
