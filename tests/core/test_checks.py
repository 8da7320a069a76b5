"""Tests for analysis.core.checks: the data-check warnings' counts, examples and wording, on
hand-made runs whose answers are counted by hand."""

from __future__ import annotations

import pandas as pd

from analysis.core.metrics import evaluate_run


def _frame(rows: list[tuple[str, str, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])


def _qrels(rows: list[tuple[str, str, int]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])


def _warnings(run: pd.DataFrame, qrels: pd.DataFrame, **options: object) -> dict:
    result = evaluate_run(run, qrels, ["hit@1", "recall@1"], **options)  # type: ignore[arg-type]
    return {w.code: w for w in result.warnings}


def test_tie_examples_follow_the_qrels_order_as_every_other_query_warning() -> None:
    """The run lists q3, q2, q1; the qrels q1, q2, q3: the tied queries' examples are in the
    qrels' order, as the missing and no-relevant examples are."""
    run = _frame([(q, d, 1.0) for q in ("q3", "q2", "q1") for d in ("a", "b")])
    qrels = _qrels([("q1", "a", 1), ("q2", "a", 1), ("q3", "a", 1)])
    ties = _warnings(run, qrels)["ties"]
    assert ties.count == 3
    assert ties.examples == ("q1", "q2", "q3")


def test_not_in_qrels_examples_are_the_first_ids_in_id_order() -> None:
    """The examples of the run queries outside the qrels do not depend on the run's line order
    (an out-of-core engine has no line order to keep): the smallest ids, as strings."""
    qrels = _qrels([("q1", "a", 1)])
    rows = [("q1", "a", 1.0), *[(f"x{i}", "a", 1.0) for i in (9, 3, 7, 1, 8, 2, 5)]]
    forward = _warnings(_frame(rows), qrels)["not_in_qrels"]
    backward = _warnings(_frame(rows[::-1]), qrels)["not_in_qrels"]
    assert forward.count == backward.count == 7
    assert forward.examples == backward.examples == ("x1", "x2", "x3", "x5", "x7")
