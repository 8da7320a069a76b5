"""Tests for analysis.core.checks: the data-check warnings' counts, examples and wording, on
hand-made runs whose answers are counted by hand."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from analysis.core import engines
from analysis.core.metrics import evaluate_run, qrels_arrays


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


def test_a_count_of_one_reads_in_the_singular() -> None:
    """One query or row: "1 query has", "1 duplicate document ... (in 1 query)", never
    "1 queries have"."""
    run = _frame([("q1", "a", 1.0), ("q1", "a", 0.5), ("q1", "b", 1.0), ("x", "a", 1.0)])
    qrels = _qrels([("q1", "a", 0), ("q1", "b", 1), ("q1", "b", 1), ("q1", "c", 1), ("m", "a", 0)])
    result = evaluate_run(run, qrels, ["hit@1", "recall@1"], diagnostics=True)
    messages = {w.code: w.message for w in result.warnings}
    assert messages["missing_from_run"].startswith("1 of 2 queries in the qrels is missing")
    assert messages["not_in_qrels"].startswith(
        "1 of 2 queries in the run is not in the qrels; it is left out"
    )
    assert messages["no_relevant"] == ("1 query has no relevant document in the qrels; it scores 0")
    assert messages["duplicate_docs"].startswith("1 duplicate document in the run (in 1 query);")
    assert messages["duplicate_qrels"].startswith("1 duplicate qrels row (in 1 query);")
    assert messages["gold_exceeds_1"].startswith(
        "1 query has more than 1 relevant document, so recall@1"
    )
    assert messages["ties"] == "1 query has tied scores; it changes value with the tie order"
    without_diagnostics = evaluate_run(run, qrels, ["hit@1"]).warnings
    assert [w.message for w in without_diagnostics if w.code == "ties"] == [
        "1 query has tied scores"
    ]


def test_counts_above_one_read_in_the_plural() -> None:
    run = _frame([(q, d, 1.0) for q in ("q1", "q2") for d in ("a", "b", "a")])
    qrels = _qrels([(q, d, 1) for q in ("q1", "q2", "m1", "m2") for d in ("a", "b", "c")])
    result = evaluate_run(run, qrels, ["hit@1", "recall@2"], diagnostics=True)
    messages = {w.code: w.message for w in result.warnings}
    assert messages["missing_from_run"].startswith("2 of 4 queries in the qrels are missing")
    assert messages["duplicate_docs"].startswith("2 duplicate documents in the run (in 2 queries)")
    assert messages["gold_exceeds_2"].startswith("4 queries have more than 2 relevant documents")
    assert messages["ties"] == (
        "2 queries have tied scores; 0 of them change value with the tie order"
    )


def test_no_match_stays_silent_when_the_run_finds_judged_documents_below_the_threshold(
    tmp_path: Path,
) -> None:
    """Relevant means grade 2 here; every query's list holds its grade-1 document, so the run
    and the qrels name documents the same way: the run found no relevant document, which the
    metrics say, but the id-convention warning would be a false alarm (on every engine)."""
    rows = [(f"q{i}", d, s) for i in range(6) for d, s in (("x", 2.0), ("one", 1.0))]
    qrels = _qrels([(f"q{i}", d, g) for i in range(6) for d, g in (("one", 1), ("two", 2))])
    path = tmp_path / "run.parquet"
    pq.write_table(pa.Table.from_pandas(_frame(rows), preserve_index=False), path)
    for engine in ("memory", "duckdb"):
        options = engines.Options(relevance_threshold=2)
        found = engines.evaluate(path, qrels_arrays(qrels), ["hit@1"], engine, options)
        assert "no_match" not in {w.code for w in found[2]}, engine
    # grade-1 documents unknown to the qrels: the warning stays
    renamed = [(q, " " + d, s) for q, d, s in rows]
    codes = {w.code for w in evaluate_run(_frame(renamed), qrels, ["hit@1"]).warnings}
    assert "no_match" in codes


def test_more_gold_than_k_is_not_reported_where_recall_divides_by_k() -> None:
    """LIST's recall@k divides by min(#gold, k): three golds, two of them in the top 2, give
    recall@2 = 1, so "recall@2 cannot reach 1" would be false; trec_eval's recall keeps it."""
    run = _frame([("q", "a", 3.0), ("q", "b", 2.0), ("q", "c", 1.0)])
    qrels = _qrels([("q", d, 1) for d in ("a", "b", "c")])
    listed = evaluate_run(run, qrels, ["recall@2"], compat="list")
    assert listed.per_query["recall@2"].tolist() == [1.0]
    assert "gold_exceeds_2" not in {w.code for w in listed.warnings}
    trec = evaluate_run(run, qrels, ["recall@2"])
    assert trec.per_query["recall@2"].tolist() == [2 / 3]
    assert {w.code: w.count for w in trec.warnings}["gold_exceeds_2"] == 1
