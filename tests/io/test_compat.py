"""Compatibility variants: STaRK (gold ids that are not candidates dropped) on the real ada-002
files, LIST (recall over min(#gold rows, k), IDCG over the same count) on hand-made cases."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.core.metrics import evaluate, evaluate_run
from analysis.io.stark import read_stark_eval, read_stark_qa


def _frame(rows: list[tuple], columns: list[str]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=columns)
    for c in ("query_id", "doc_id"):
        frame[c] = frame[c].astype("str")
    return frame


def _run(query: str, docs: list[str]) -> pd.DataFrame:
    return _frame([(query, d, float(len(docs) - i)) for i, d in enumerate(docs)],
                  ["query_id", "doc_id", "score"])  # fmt: skip


def _dcg(gains: list[float]) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


def test_list_variant_counts_duplicate_gold_rows() -> None:
    run = _run("q", ["a", "c", "b", "e", "f"])
    qrels = _frame([("q", "a", 1), ("q", "a", 1), ("q", "b", 1)],
                   ["query_id", "doc_id", "relevance"])  # fmt: skip
    got = evaluate(run, qrels, ["recall@5", "ndcg@5", "recall@2"], compat="list").iloc[0]
    # LIST: |relevant in top 5| / min(3 gold rows, 5); IDCG over min(3, 5) ideal positions
    assert got["recall@5"] == pytest.approx(2 / 3)
    assert got["ndcg@5"] == pytest.approx(_dcg([1, 0, 1]) / _dcg([1, 1, 1]))
    assert got["recall@2"] == pytest.approx(1 / 2)
    default = evaluate(run, qrels, ["recall@5", "ndcg@5"]).iloc[0]
    assert default["recall@5"] == 1.0  # trec_eval: duplicates collapsed, 2 of 2
    assert default["ndcg@5"] == pytest.approx(_dcg([1, 0, 1]) / _dcg([1, 1]))


def test_list_variant_with_more_gold_than_k() -> None:
    run = _run("q", ["a", "x", "b", "c"])
    qrels = _frame([("q", d, 1) for d in "abcd"], ["query_id", "doc_id", "relevance"])
    got = evaluate(run, qrels, ["recall@2", "ndcg@2", "recall@4", "ndcg@4"], compat="list")
    row = got.iloc[0]
    assert row["recall@2"] == pytest.approx(1 / 2)  # min(4, 2) = 2
    assert row["ndcg@2"] == pytest.approx(_dcg([1, 0]) / _dcg([1, 1]))
    assert row["recall@4"] == pytest.approx(3 / 4)
    assert row["ndcg@4"] == pytest.approx(_dcg([1, 0, 1, 1]) / _dcg([1, 1, 1, 1]))
    default = evaluate(run, qrels, ["recall@2"]).iloc[0]
    assert default["recall@2"] == pytest.approx(1 / 4)


def test_stark_variant_drops_gold_ids_that_are_not_candidates() -> None:
    run = _run("q", ["p1", "p2", "p3"])
    qrels = _frame([("q", "p2", 1), ("q", "author9", 1), ("r", "author8", 1)],
                   ["query_id", "doc_id", "relevance"])  # fmt: skip
    result = evaluate_run(run, qrels, ["recall@2", "hit@1"], compat="stark",
                          candidates=["p1", "p2", "p3", "p4"])  # fmt: skip
    got = result.per_query.set_index("query_id")
    assert got.loc["q", "recall@2"] == 1.0  # the non-candidate gold does not count
    assert got.loc["r", "recall@2"] == 0.0  # no candidate gold left: scores 0, stays counted
    assert {w.code: w.count for w in result.warnings}["not_candidates"] == 2
    assert evaluate(run, qrels, ["recall@2"]).set_index("query_id").loc["q", "recall@2"] == 0.5
    with pytest.raises(ValueError, match="candidates"):
        evaluate(run, qrels, ["recall@2"], compat="stark")


@pytest.mark.real
@pytest.mark.parametrize("domain", ["mag", "amazon", "prime"])
def test_stark_variant_reproduces_the_real_ada002_recall_columns(
    real_dir: Path, domain: str
) -> None:
    folder = real_dir / "stark" / domain
    run, file_metrics = read_stark_eval(
        folder / "runs/ada-002/eval_results_human_generated_eval.csv"
    )
    _, qrels = read_stark_qa(folder / "stark_qa_human_generated_eval.csv")
    # STaRK ranks candidates only (MAG: papers, Amazon: products, Prime: every node), and the
    # node ids of one type are contiguous: the candidates are the ids between the smallest and
    # the largest predicted id (the shared files carry no node types)
    ids = run["doc_id"].astype(np.int64)
    candidates = [str(i) for i in range(int(ids.min()), int(ids.max()) + 1)]
    metrics = ["recall@20", "recall@50", "recall@100"]
    ours = evaluate(run, qrels, metrics, compat="stark", candidates=candidates)
    ours = ours.set_index("query_id").loc[file_metrics["query_id"]]
    theirs = file_metrics.set_index("query_id")
    for m in metrics:
        np.testing.assert_allclose(ours[m].to_numpy(), theirs[m].to_numpy(), atol=1e-6, err_msg=m)
    default = evaluate(run, qrels, metrics).set_index("query_id").loc[file_metrics["query_id"]]
    differ = np.flatnonzero(np.abs(default["recall@100"].to_numpy() - theirs["recall@100"]) > 1e-6)
    if domain == "mag":  # query 50: one of its two gold ids is not a paper
        assert theirs.index[differ].tolist() == ["50"]
        assert default.loc["50", "recall@100"] == 0.5
        assert theirs.loc["50", "recall@100"] == 1.0
    else:
        assert len(differ) == 0
