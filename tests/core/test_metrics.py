"""Tests for analysis.core.metrics: every metric against pytrec_eval (trec_eval semantics) on random
runs, cross-checks with ir_measures, and hand-made edge cases with exact expected values."""

from __future__ import annotations

import itertools
import math
from functools import cache

import ir_measures
import numpy as np
import pandas as pd
import pytest
from ir_measures import RR, P, R, Success, nDCG

from analysis.core import ranking as rk
from analysis.core.errors import InputError
from analysis.core.measures import card
from analysis.core.metrics import (
    Evaluation,
    Metric,
    check_data,
    evaluate,
    evaluate_arrays,
    evaluate_run,
    parse_metric,
    parse_metrics,
    rank_run,
    run_arrays,
)
from tests.helpers import (
    ALL_METRICS,
    assert_matches_pytrec,
    presorted,
    pytrec_eval_per_query,
    random_collection,
)

REGIMES = ("unique", "ties", "graded")


@cache
def _collection(regime: str, long_ids: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    seed = {"unique": 1, "ties": 2, "graded": 3}[regime] + (10 if long_ids else 0)
    return random_collection(seed, regime, long_ids=long_ids)


@cache
def _reference(regime: str, level: int = 1, long_ids: bool = False) -> dict:
    run, qrels = _collection(regime, long_ids)
    return pytrec_eval_per_query(run, qrels, relevance_level=level)


def _frame(rows: list[tuple], columns: tuple[str, ...] = ("query_id", "doc_id", "score")):
    frame = pd.DataFrame(rows, columns=list(columns))
    for c in ("query_id", "doc_id"):
        frame[c] = frame[c].astype("str")
    return frame


def _qrels(rows: list[tuple]) -> pd.DataFrame:
    return _frame(rows, ("query_id", "doc_id", "relevance"))


def _codes(warnings) -> dict[str, int]:
    return {w.code: w.count for w in warnings}


# --------------------------------------------------------------------------------------------
# random runs against pytrec_eval


def test_random_collections_have_the_advertised_shape() -> None:
    for regime in REGIMES:
        run, qrels = _collection(regime)
        assert run["query_id"].nunique() >= 300
        assert run.groupby("query_id").size().min() == 100
        q_run, q_rel = set(run["query_id"]), set(qrels["query_id"])
        assert len(q_rel - q_run) >= 10  # missing from the run
        assert len(q_run - q_rel) >= 5  # not in the qrels
        n_tied = run.duplicated(["query_id", "score"]).sum()
        if regime == "ties":
            assert n_tied > len(run) / 2
        else:
            assert n_tied == 0
        if regime == "graded":
            assert {-1, 0, 1, 2, 3} <= set(qrels["relevance"])


@pytest.mark.parametrize("regime", REGIMES)
def test_every_metric_equals_pytrec_eval(regime: str) -> None:
    run, qrels = _collection(regime)
    ours = evaluate(run, qrels, ALL_METRICS)
    assert list(ours.columns) == ["query_id", *ALL_METRICS]
    assert_matches_pytrec(ours, run, qrels, reference=_reference(regime))


@pytest.mark.parametrize("regime", REGIMES)
def test_row_order_does_not_change_the_result(regime: str, monkeypatch: pytest.MonkeyPatch) -> None:
    run, qrels = _collection(regime)
    expected = evaluate(run, qrels, ALL_METRICS)
    orders: list[rk.Order] = []
    real_order_run = rk.order_run

    def spy(*args, **kwargs):
        order = real_order_run(*args, **kwargs)
        orders.append(order)
        return order

    monkeypatch.setattr(rk, "order_run", spy)
    shuffled = run.sample(frac=1.0, random_state=99).reset_index(drop=True)
    got_shuffled = evaluate(shuffled, qrels, ALL_METRICS)
    assert orders[-1].perm is not None  # the sort path
    by_query = presorted(run, seed=5)
    got_sorted = evaluate(by_query, qrels, ALL_METRICS)
    assert orders[-1].perm is None  # the no-sort fast path
    if regime == "ties":
        assert orders[-1].moved is not None  # docs inside ties were reordered
        assert len(orders[-1].moved) > 1000
    pd.testing.assert_frame_equal(got_shuffled, expected)
    pd.testing.assert_frame_equal(got_sorted, expected)
    assert_matches_pytrec(got_sorted, by_query, qrels, reference=_reference(regime))
    assert_matches_pytrec(got_shuffled, shuffled, qrels, reference=_reference(regime))


def test_presorted_input_with_ties_gives_trec_eval_tie_order() -> None:
    run, _ = _collection("ties")
    by_query = presorted(run, seed=11)
    a = rank_run(by_query)
    # both paths give the same ranking, row for row (queries in order of first appearance)
    pd.testing.assert_frame_equal(a, rank_run(run))
    assert a["query_id"].drop_duplicates().tolist() == run["query_id"].drop_duplicates().tolist()
    # inside each tie, doc ids descend (bytes)
    same = (a["query_id"].shift() == a["query_id"]) & (a["score"].shift() == a["score"])
    prev = a["doc_id"].shift()
    assert all(p.encode() > d.encode() for p, d in zip(prev[same], a["doc_id"][same], strict=True))


@pytest.mark.parametrize("regime", REGIMES)
def test_relevance_level_2_equals_pytrec_eval(regime: str) -> None:
    run, qrels = _collection(regime)
    if regime != "graded":  # make graded judgements out of the binary ones
        qrels = qrels.assign(relevance=qrels["relevance"] * (1 + np.arange(len(qrels)) % 3))
    ours = evaluate(run, qrels, ALL_METRICS, relevance_threshold=2)
    assert_matches_pytrec(ours, run, qrels, relevance_level=2)
    # and the threshold matters on these data
    base = evaluate(run, qrels, ["hit@10"]).set_index("query_id")["hit@10"]
    assert (ours.set_index("query_id")["hit@10"] != base).any()


def test_long_ids_equal_pytrec_eval() -> None:
    run, qrels = _collection("ties", long_ids=True)
    lengths = run["doc_id"].str.len()
    assert lengths.min() > 8
    assert lengths.max() == 40
    ours = evaluate(run, qrels, ALL_METRICS)
    assert_matches_pytrec(ours, run, qrels, reference=_reference("ties", long_ids=True))


def test_ids_of_different_lengths_in_run_and_qrels_match_exactly() -> None:
    # one short and one long id in the run, only the short one in the qrels: the short id must
    # match whatever the longest id of each array (trec_eval: hit@1 = mrr = 1)
    run = _frame([("q1", "d1", 3.0), ("q1", "a_very_long_document_id_1234", 2.0)])
    qrels = _qrels([("q1", "d1", 1)])
    got = evaluate(run, qrels, ["hit@1", "mrr", "map", "rprec"])
    assert got.iloc[0, 1:].tolist() == [1.0, 1.0, 1.0, 1.0]
    # and the other way round: the long id judged, a short one ranked first
    run = _frame([("q1", "x", 3.0), ("q1", "a_very_long_document_id_1234", 2.0)])
    qrels = _qrels([("q1", "a_very_long_document_id_1234", 1), ("q2", "y" * 70, 1)])
    got = evaluate(run, qrels, ["hit@1", "hit@2", "mrr"])
    assert got.iloc[0, 1:].tolist() == [0.0, 1.0, 0.5]


def test_equal_ids_in_different_chunks_match(monkeypatch: pytest.MonkeyPatch) -> None:
    run, qrels = _collection("ties", long_ids=True)
    expected = evaluate_run(run, qrels, ALL_METRICS, diagnostics=True)
    monkeypatch.setattr(rk, "CHUNK", 64)  # many chunks, each with its own doc dictionary
    got = evaluate_run(run, qrels, ALL_METRICS, diagnostics=True)
    pd.testing.assert_frame_equal(got.per_query, expected.per_query)
    assert_matches_pytrec(got.per_query, run, qrels, reference=_reference("ties", long_ids=True))


def test_duplicate_docs_at_scale_equal_the_deduplicated_run() -> None:
    run, qrels = _collection("unique")
    rng = np.random.default_rng(4)
    extra = run.iloc[rng.choice(len(run), size=2000, replace=False)]
    extra = extra.assign(score=extra["score"] + rng.normal(0, 2, size=len(extra)))
    with_dup = pd.concat([run, extra], ignore_index=True).sample(frac=1.0, random_state=4)
    best = with_dup.groupby(["query_id", "doc_id"], as_index=False)["score"].max()
    result = evaluate_run(with_dup, qrels, ALL_METRICS)
    assert _codes(result.warnings)["duplicate_docs"] == 2000
    assert_matches_pytrec(result.per_query, best, qrels)


_IR_MEASURES = [
    ("ndcg@10", nDCG @ 10),
    ("mrr", RR),
    ("hit@1", Success @ 1),
    ("recall@20", R @ 20),
    ("precision@5", P @ 5),
]


@pytest.mark.parametrize(
    ("ours", "measure", "regime"),
    [(o, m, r) for o, m in _IR_MEASURES for r in ("ties", "graded")]
    # ir_measures computes RR@k with its msmarco provider, which breaks ties its own way (not
    # trec_eval's doc id order), so RR@10 is only compared where scores are unique
    + [("mrr@10", RR @ 10, "graded"), ("mrr@10", RR @ 10, "unique")],
)
def test_ir_measures_cross_check(ours: str, measure, regime: str) -> None:
    run, qrels = _collection(regime)
    got = evaluate(run, qrels, [ours]).set_index("query_id")[ours]
    per_query = {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, run)}
    assert len(per_query) > 250
    for q, value in per_query.items():
        assert got[q] == pytest.approx(value, abs=1e-9), q
    both = [q for q in got.index if q in per_query]
    aggregate = ir_measures.calc_aggregate([measure], qrels, run)[measure]
    assert got[both].mean() == pytest.approx(aggregate, abs=1e-9)


# --------------------------------------------------------------------------------------------
# tie policies


def test_trec_eval_policy_orders_doc_ids_descending_by_bytes() -> None:
    rows = [("q", d, 1.0) for d in ["a", "b", "10", "9", "é", "z", "Z"]]
    rows.append(("q", "top", 2.0))
    ranked = rank_run(_frame(rows))
    # bytes descending: "é" (0xC3 0xA9) > "z" > "b" > "a" > "Z" > "9" > "10"
    assert ranked["doc_id"].tolist() == ["top", "é", "z", "b", "a", "Z", "9", "10"]
    assert ranked["rank"].tolist() == list(range(1, 9))
    stable = rank_run(_frame(rows), ties="stable")
    assert stable["doc_id"].tolist() == ["top", "a", "b", "10", "9", "é", "z", "Z"]


@pytest.mark.parametrize(("gold", "rr_trec", "rr_stable"), [("a", 0.5, 1.0), ("b", 1.0, 0.5)])
def test_tie_policy_changes_the_metric(gold: str, rr_trec: float, rr_stable: float) -> None:
    run = _frame([("q", "a", 1.0), ("q", "b", 1.0)])
    qrels = _qrels([("q", gold, 1)])
    assert evaluate(run, qrels, ["mrr"])["mrr"].iloc[0] == rr_trec
    assert evaluate(run, qrels, ["mrr"], ties="stable")["mrr"].iloc[0] == rr_stable


@pytest.mark.parametrize(("gold", "expected"), [("9", 1.0), ("10", 0.5)])
def test_numeric_looking_doc_ids_tie_as_strings_like_pytrec_eval(gold: str, expected: float):
    run = _frame([("q", "10", 1.0), ("q", "9", 1.0)])
    qrels = _qrels([("q", gold, 1)])
    ours = evaluate(run, qrels, ["mrr"])
    assert ours["mrr"].iloc[0] == expected
    assert_matches_pytrec(ours, run, qrels, ["mrr"])


def test_unknown_tie_policy_is_rejected() -> None:
    run = _frame([("q", "a", 1.0)])
    with pytest.raises(ValueError, match="tie policy"):
        evaluate(run, _qrels([("q", "a", 1)]), ["mrr"], ties="random")  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# duplicates and warnings


def test_duplicate_doc_keeps_best_ranked_occurrence() -> None:
    run = _frame(
        [
            ("q1", "a", 3.0),
            ("q1", "b", 2.0),
            ("q1", "a", 1.0),  # worse copy of a
            ("q1", "c", 0.5),
            ("q1", "b", 5.0),  # better copy of b
            ("q2", "x", 1.0),
            ("q2", "x", 1.0),  # exact copy
            ("q2", "y", 0.0),
        ]
    )
    ranked = rank_run(run)
    assert ranked.to_dict("list") == {
        "query_id": ["q1", "q1", "q1", "q2", "q2"],
        "doc_id": ["b", "a", "c", "x", "y"],
        "score": [5.0, 3.0, 0.5, 1.0, 0.0],
        "rank": [1, 2, 3, 1, 2],
    }
    qrels = _qrels([("q1", "c", 1), ("q2", "y", 1)])
    result = evaluate_run(run, qrels, ["mrr", "precision"])
    assert result.per_query["mrr"].tolist() == [1 / 3, 1 / 2]
    assert result.per_query["precision"].tolist() == [1 / 3, 1 / 2]  # dups not counted
    (dup,) = [w for w in result.warnings if w.code == "duplicate_docs"]
    assert dup.count == 3
    assert "3 duplicate documents in the run (in 2 queries)" in dup.message


def test_duplicate_qrels_collapse_to_max_relevance() -> None:
    run = _frame([("q", "a", 2.0), ("q", "b", 1.0)])
    qrels = _qrels([("q", "b", 1), ("q", "b", 3), ("q", "b", 0), ("q", "a", 0), ("r", "z", 1)])
    qrels.loc[len(qrels)] = ["r", "z", 1]
    result = evaluate_run(run, qrels, ["recall@2", "ndcg@2"])
    row = result.per_query.set_index("query_id").loc["q"]
    assert row["recall@2"] == 1.0  # b counted once, not capped at 1/3
    # gain 3 at rank 2 over the ideal gain 3 at rank 1
    assert row["ndcg@2"] == pytest.approx((3 / math.log2(3)) / 3, abs=1e-12)
    (dup,) = [w for w in result.warnings if w.code == "duplicate_qrels"]
    assert dup.count == 3  # 2 extra rows for (q, b), 1 for (r, z)
    assert "(in 2 queries)" in dup.message


def test_missing_and_extra_queries_warnings() -> None:
    run = _frame([("q1", "a", 1.0), ("x1", "a", 1.0), ("x2", "a", 1.0)])
    qrels = _qrels([("q1", "a", 1), ("m1", "a", 1), ("m2", "a", 1), ("m3", "b", 1)])
    result = evaluate_run(run, qrels, ["hit@1", "mrr"])
    assert result.per_query["query_id"].tolist() == ["q1", "m1", "m2", "m3"]
    assert result.per_query["hit@1"].tolist() == [1.0, 0.0, 0.0, 0.0]
    warnings = {w.code: w for w in result.warnings}
    assert warnings["missing_from_run"].count == 3
    assert warnings["missing_from_run"].examples == ("m1", "m2", "m3")
    assert "3 of 4 queries in the qrels are missing from the run" in str(
        warnings["missing_from_run"]
    )
    assert warnings["not_in_qrels"].count == 2
    assert set(warnings["not_in_qrels"].examples) == {"x1", "x2"}
    assert "number their queries differently" in warnings["not_in_qrels"].message
    assert "split" not in warnings["not_in_qrels"].message  # 3 of 4 qrels queries unanswered
    assert result.means() == {"hit@1": 0.25, "mrr": 0.25}  # missing queries count as 0


def test_a_run_of_every_split_against_one_splits_qrels_names_the_other_splits() -> None:
    """A run over train/dev/test scored with the test qrels (GeoGLUE's layout): the hint names
    the other splits, not an id convention."""
    run = _frame([(q, "a", 1.0) for q in ("test-1", "train-1", "train-2", "dev-1")])
    qrels = _qrels([("test-1", "a", 1)])
    (found,) = [w for w in evaluate_run(run, qrels, ["mrr"]).warnings if w.code == "not_in_qrels"]
    assert "3 of 4 queries in the run are not in the qrels" in found.message
    assert "queries of other splits" in found.message
    assert "convention" not in found.message
    assert "Amazon" not in found.message


def test_no_relevant_query_scores_zero_and_is_flagged() -> None:
    run = _frame([("q1", "a", 1.0), ("q2", "b", 1.0)])
    qrels = _qrels([("q1", "a", 1), ("q2", "b", 0), ("q2", "c", -1)])
    result = evaluate_run(run, qrels, ALL_METRICS, diagnostics=True)
    row = result.per_query.set_index("query_id").loc["q2"]
    assert all(row[m] == 0.0 for m in ALL_METRICS)
    assert bool(row["no_relevant"])
    assert row["n_gold"] == 0
    assert _codes(result.warnings)["no_relevant"] == 1


def test_gold_exceeds_k_warning() -> None:
    qrels = _qrels([("q1", f"d{i}", 1) for i in range(6)] + [("q2", "d0", 1)])
    run = _frame([("q1", f"d{i}", float(-i)) for i in range(6)] + [("q2", "d0", 1.0)])
    result = evaluate_run(run, qrels, ["recall@5", "recall@20", "hit@1"])
    codes = _codes(result.warnings)
    assert codes["gold_exceeds_5"] == 1
    assert "gold_exceeds_20" not in codes
    assert result.per_query["recall@5"].tolist() == [5 / 6, 1.0]
    assert check_data(run, qrels, ["recall@5"])[0].code == "gold_exceeds_5"


def test_precision_divides_by_k_even_when_fewer_docs_are_returned() -> None:
    run = _frame([("q", "a", 2.0), ("q", "b", 1.0)])
    qrels = _qrels([("q", "a", 1), ("q", "z", 1)])
    row = evaluate(run, qrels, ["precision@10", "P@1", "precision", "P@2"]).iloc[0]
    assert row["precision@10"] == 0.1
    assert row["P@1"] == 1.0
    assert row["P@2"] == 0.5
    assert row["precision"] == 0.5  # whole list: 1 of 2 returned
    assert_matches_pytrec(evaluate(run, qrels, ["precision@10"]), run, qrels, ["precision@10"])


def test_mrr_at_k() -> None:
    run = _frame([("q", "a", 3.0), ("q", "b", 2.0), ("q", "c", 1.0)])
    qrels = _qrels([("q", "c", 1)])
    row = evaluate(run, qrels, ["mrr", "mrr@2", "mrr@3", "RR@1"]).iloc[0]
    assert (row["mrr"], row["mrr@2"], row["mrr@3"], row["RR@1"]) == (1 / 3, 0.0, 1 / 3, 0.0)


# --------------------------------------------------------------------------------------------
# diagnostics and tie sensitivity


def test_diagnostics_on_a_hand_made_case() -> None:
    run = _frame(
        [
            ("q1", "b", 3.0),
            ("q1", "a", 2.0),
            ("q1", "c", 2.0),
            ("q1", "d", 1.0),
            ("q2", "x", 1.0),
            ("q2", "y", 0.5),
            ("q9", "a", 1.0),
        ]
    )
    qrels = _qrels([("q1", "a", 1), ("q1", "z", 1), ("q2", "x", 0), ("q3", "d", 1)])
    result = evaluate_run(run, qrels, ["hit@1", "hit@2", "mrr", "recall@2"], diagnostics=True)
    pq = result.per_query.set_index("query_id")
    # trec_eval order of q1: b, c, a (c > a), d -> the gold a at rank 3
    assert pq.loc["q1", "first_gold_rank"] == 3
    assert pq.loc["q1", "mrr"] == 1 / 3
    assert pq.loc["q1", "mrr_min"] == 1 / 3
    assert pq.loc["q1", "mrr_max"] == 1 / 2
    assert pq.loc["q1", "hit@2_min"] == 0.0
    assert pq.loc["q1", "hit@2_max"] == 1.0
    assert pq.loc["q1", "recall@2_max"] == 0.5
    assert pq.loc["q1", "hit@1_min"] == pq.loc["q1", "hit@1_max"] == 0.0
    assert bool(pq.loc["q1", "tied_at_cutoff"])  # ranks 2 and 3 tie across k = 2
    assert bool(pq.loc["q1", "tie_sensitive"])
    assert pq.loc["q1", "n_gold"] == 2
    assert pq.loc["q1", "n_retrieved"] == 4
    assert not pq.loc["q1", "missing_from_run"]
    assert np.isnan(pq.loc["q2", "first_gold_rank"])
    assert bool(pq.loc["q2", "no_relevant"])
    assert not pq.loc["q2", "tie_sensitive"]
    assert not pq.loc["q2", "tied_at_cutoff"]
    assert bool(pq.loc["q3", "missing_from_run"])
    assert pq.loc["q3", "n_retrieved"] == 0
    assert pq.loc["q3", "n_gold"] == 1
    assert np.isnan(pq.loc["q3", "first_gold_rank"])
    assert list(pq.index) == ["q1", "q2", "q3"]
    ties = next(w for w in result.warnings if w.code == "ties")
    assert ties.count == 1
    assert ties.message == "1 query has tied scores; it changes value with the tie order"


def test_tied_at_cutoff_only_when_a_tie_spans_rank_k_and_k_plus_1() -> None:
    run = _frame([("q", "a", 3.0), ("q", "b", 2.0), ("q", "c", 2.0), ("q", "d", 1.0)])
    qrels = _qrels([("q", "a", 1)])
    flag = {
        k: bool(evaluate(run, qrels, [f"hit@{k}"], diagnostics=True)["tied_at_cutoff"].iloc[0])
        for k in (1, 2, 3, 4)
    }
    assert flag == {1: False, 2: True, 3: False, 4: False}
    # the tie does not involve a gold doc: no metric depends on it
    diag = evaluate(run, qrels, ["hit@2"], diagnostics=True).iloc[0]
    assert not diag["tie_sensitive"]


def test_gold_tied_with_non_gold_across_the_cutoff() -> None:
    run = _frame([("q", "g", 1.0), ("q", "n1", 1.0), ("q", "n2", 1.0), ("q", "low", 0.0)])
    qrels = _qrels([("q", "g", 1)])
    row = evaluate(run, qrels, ["hit@1", "mrr", "ndcg@3"], diagnostics=True).iloc[0]
    assert row["hit@1"] == 0.0  # trec_eval order: n2, n1, g
    assert (row["hit@1_min"], row["hit@1_max"]) == (0.0, 1.0)
    assert (row["mrr_min"], row["mrr_max"]) == (1 / 3, 1.0)
    assert row["ndcg@3_min"] == pytest.approx(0.5)
    assert row["ndcg@3_max"] == 1.0
    assert row["tie_sensitive"]
    assert row["tied_at_cutoff"]


def test_without_ties_min_and_max_equal_the_value() -> None:
    run, qrels = _collection("unique")
    pq = evaluate(run, qrels, ["hit@1", "ndcg@10"], diagnostics=True)
    for m in ("hit@1", "ndcg@10"):
        assert (pq[f"{m}_min"] == pq[m]).all()
        assert (pq[f"{m}_max"] == pq[m]).all()
    assert not pq["tie_sensitive"].any()
    assert not pq["tied_at_cutoff"].any()


@pytest.mark.parametrize("policy", ["trec_eval", "stable"])
def test_policy_value_lies_between_min_and_max(policy: str) -> None:
    run, qrels = _collection("ties")
    qrels = qrels.assign(relevance=qrels["relevance"] * (1 + np.arange(len(qrels)) % 3))
    pq = evaluate(run, qrels, ALL_METRICS, ties=policy, diagnostics=True)  # type: ignore[arg-type]
    sensitive = np.zeros(len(pq), dtype=bool)
    for m in ALL_METRICS:
        assert (pq[f"{m}_min"] <= pq[m] + 1e-12).all(), m
        assert (pq[m] <= pq[f"{m}_max"] + 1e-12).all(), m
        sensitive |= (pq[f"{m}_max"] - pq[f"{m}_min"]).to_numpy() > 0
    assert sensitive.sum() > 50
    assert (pq["tie_sensitive"].to_numpy() == sensitive).all()


def _tie_orders(group: pd.DataFrame) -> list[list[str]]:
    """Every ranking of the group's docs consistent with its scores (all orders of each tie)."""
    blocks = [
        list(itertools.permutations(g["doc_id"])) for _, g in group.groupby("score", sort=True)
    ][::-1]
    return [[d for block in combo for d in block] for combo in itertools.product(*blocks)]


@pytest.mark.parametrize("threshold", [1, 2])
def test_min_max_equal_brute_force_over_all_tie_orders(threshold: int) -> None:
    rng = np.random.default_rng(7)
    rows, qrows = [], []
    for q in range(30):
        n = int(rng.integers(2, 7))
        for i in range(n):
            rows.append((f"q{q}", f"d{i}", float(rng.integers(0, 3))))
        for i in rng.choice(n + 2, size=3, replace=False):
            qrows.append((f"q{q}", f"d{i}", int(rng.integers(0, 3))))
    run, qrels = _frame(rows), _qrels(qrows)
    metrics = ["hit@1", "hit@3", "recall@2", "precision@3", "mrr", "mrr@2", "ndcg@3", "ndcg"]
    diag = evaluate(run, qrels, metrics, diagnostics=True, relevance_threshold=threshold)
    # every tie order of every query as its own query with distinct scores, in one evaluation
    perm_rows, perm_qrels = [], []
    for q, group in run.groupby("query_id", sort=False):
        for j, docs in enumerate(_tie_orders(group)):
            pid = f"{q}|{j}"
            perm_rows += [(pid, d, float(-r)) for r, d in enumerate(docs)]
            judged = qrels[qrels["query_id"] == q]
            perm_qrels += [
                (pid, d, r) for d, r in zip(judged["doc_id"], judged["relevance"], strict=True)
            ]
    brute = evaluate(_frame(perm_rows), _qrels(perm_qrels), metrics, relevance_threshold=threshold)
    brute["query_id"] = brute["query_id"].str.split("|").str[0]
    lo = brute.groupby("query_id").min()
    hi = brute.groupby("query_id").max()
    diag = diag.set_index("query_id")
    for m in metrics:
        np.testing.assert_allclose(diag.loc[lo.index, f"{m}_min"], lo[m], atol=1e-12, err_msg=m)
        np.testing.assert_allclose(diag.loc[hi.index, f"{m}_max"], hi[m], atol=1e-12, err_msg=m)
    assert (diag.loc[lo.index, "tie_sensitive"] == (lo != hi).any(axis=1)).all()


# --------------------------------------------------------------------------------------------
# relevance threshold, rank-only runs, bad scores, ids


def test_relevance_threshold_2_semantics() -> None:
    run = _frame([("q", "a", 2.0), ("q", "b", 1.0)])
    qrels = _qrels([("q", "a", 1), ("q", "b", 2)])
    metrics = ["hit@1", "mrr", "recall@1", "recall@2", "ndcg@2"]
    row = evaluate(run, qrels, metrics, relevance_threshold=2, diagnostics=True).iloc[0]
    assert row["hit@1"] == 0.0  # a (relevance 1) is not relevant at threshold 2
    assert row["mrr"] == 0.5
    assert row["recall@1"] == 0.0
    assert row["recall@2"] == 1.0  # one relevant doc (b)
    assert row["n_gold"] == 1
    # ndcg keeps every positive judged relevance as gain
    dcg = 1 + 2 / math.log2(3)
    idcg = 2 + 1 / math.log2(3)
    assert row["ndcg@2"] == pytest.approx(dcg / idcg, abs=1e-12)
    with pytest.raises(ValueError, match="relevance_threshold"):
        evaluate(run, qrels, ["mrr"], relevance_threshold=0)


def test_a_no_relevant_query_scores_ndcg_from_gains_below_the_threshold_as_its_card_says():
    run = _frame([("q", "a", 2.0), ("q", "b", 1.0)])
    qrels = _qrels([("q", "b", 1)])
    row = evaluate(run, qrels, ["ndcg", "mrr"], relevance_threshold=2, diagnostics=True).iloc[0]
    assert bool(row["no_relevant"])
    assert row["mrr"] == 0.0
    assert row["ndcg"] == pytest.approx(1 / math.log2(3), abs=1e-15)  # pytrec_eval's ndcg
    assert "score 0 and" not in dict(card("ndcg@5").lines())["Queries without relevant documents"]


def test_run_with_rank_and_no_score() -> None:
    run = _frame([("q", "a", 2), ("q", "b", 1), ("q", "c", 3)], ("query_id", "doc_id", "rank"))
    qrels = _qrels([("q", "a", 1)])
    ranked = rank_run(run)
    assert ranked["doc_id"].tolist() == ["b", "a", "c"]
    assert ranked["rank"].tolist() == [1, 2, 3]
    assert evaluate(run, qrels, ["mrr"])["mrr"].iloc[0] == 0.5
    with pytest.raises(InputError, match="rank"):
        evaluate(run.assign(rank=["1", "x", "3"]), qrels, ["mrr"])
    with pytest.raises(InputError, match="score"):
        evaluate(run.drop(columns="rank"), qrels, ["mrr"])


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), "abc"])
def test_non_finite_score_raises(bad: object) -> None:
    run = _frame([("q", "a", 1.0), ("q", "b", 2.0)])
    run["score"] = pd.Series([1.0, bad], dtype=object)
    with pytest.raises(InputError) as info:
        evaluate(run, _qrels([("q", "a", 1)]), ["mrr"])
    assert str(info.value) == f"run: score {bad!r} of row 2 is not a finite number"


def test_non_finite_score_raises_in_evaluate_arrays() -> None:
    q, d, _ = run_arrays(_frame([("q", "a", 1.0), ("q", "b", 2.0)]))
    with pytest.raises(InputError, match="not a finite number"):
        evaluate_arrays(q, d, np.array([1.0, np.nan]), _qrels([("q", "a", 1)]), ["mrr"])


def test_non_integer_relevance_raises() -> None:
    run = _frame([("q", "a", 1.0)])
    qrels = _qrels([("q", "a", 1)])
    qrels["relevance"] = ["x"]
    with pytest.raises(InputError, match="relevance 'x' of row 1 is not an integer"):
        evaluate(run, qrels, ["mrr"])


def test_missing_ids_raise() -> None:
    run = pd.DataFrame({"query_id": ["1", None], "doc_id": ["a", "b"], "score": [1.0, 2.0]})
    qrels = _qrels([("1", "a", 1)])
    with pytest.raises(InputError) as info:
        evaluate(run, qrels, ["mrr"])
    assert str(info.value) == "run: query_id of row 2 is missing"
    qrels_missing = pd.DataFrame({"query_id": ["1"], "doc_id": [None], "relevance": [1]})
    with pytest.raises(InputError) as info:
        evaluate(run.iloc[:1], qrels_missing, ["mrr"])
    assert str(info.value) == "qrels: doc_id of row 1 is missing"


def test_missing_columns_raise() -> None:
    with pytest.raises(InputError, match="missing column"):
        evaluate(_frame([("q", "a", 1.0)]).drop(columns="doc_id"), _qrels([]), ["mrr"])
    with pytest.raises(InputError, match="relevance"):
        evaluate(_frame([("q", "a", 1.0)]), _qrels([]).drop(columns="relevance"), ["mrr"])


def test_numeric_looking_ids_stay_strings() -> None:
    run = _frame([("007", "1", 1.0), ("7", "01", 1.0), ("7", "2", 0.5)])
    qrels = _qrels([("007", "01", 1), ("7", "1", 1), ("7", "2", 1)])
    pq = evaluate(run, qrels, ["hit@1", "mrr"]).set_index("query_id")
    assert list(pq.index) == ["007", "7"]
    assert pq.loc["007", "mrr"] == 0.0  # "1" is not "01"
    assert pq.loc["7", "mrr"] == 0.5  # "01" is not "1"
    ranked = rank_run(run)
    assert ranked["query_id"].tolist() == ["007", "7", "7"]
    assert ranked["doc_id"].tolist() == ["1", "01", "2"]


def test_integer_columns_are_read_as_strings() -> None:
    run = pd.DataFrame({"query_id": [7, 7], "doc_id": [1, 2], "score": [2.0, 1.0]})
    qrels = pd.DataFrame({"query_id": ["7"], "doc_id": ["2"], "relevance": [1]})
    assert evaluate(run, qrels, ["mrr"])["mrr"].tolist() == [0.5]


def test_rank_run_output_order_and_ranks() -> None:
    run = _frame(
        [
            ("q2", "a", 0.1),
            ("q1", "x", 0.5),
            ("q2", "b", 0.9),
            ("q1", "y", 0.7),
            ("q2", "c", 0.1),
        ]
    ).assign(extra="dropped")
    ranked = rank_run(run)
    assert list(ranked.columns) == ["query_id", "doc_id", "score", "rank"]
    assert ranked.to_dict("list") == {
        "query_id": ["q2", "q2", "q2", "q1", "q1"],
        "doc_id": ["b", "c", "a", "y", "x"],
        "score": [0.9, 0.1, 0.1, 0.7, 0.5],
        "rank": [1, 2, 3, 1, 2],
    }
    assert rank_run(run, ties="stable")["doc_id"].tolist() == ["b", "a", "c", "y", "x"]


def test_empty_run_scores_every_query_zero() -> None:
    run = _frame([])
    qrels = _qrels([("q", "a", 1)])
    result = evaluate_run(run, qrels, ["hit@1", "ndcg@10"])
    assert result.per_query["hit@1"].tolist() == [0.0]
    assert _codes(result.warnings)["missing_from_run"] == 1


# --------------------------------------------------------------------------------------------
# metric names


@pytest.mark.parametrize(
    ("text", "measure", "k"),
    [
        ("hit@1", "hit", 1),
        ("Success@5", "hit", 5),
        ("success_5", "hit", 5),
        ("hits@10", "hit", 10),
        ("recall@20", "recall", 20),
        ("R@20", "recall", 20),
        ("recall_100", "recall", 100),
        ("recall", "recall", None),
        ("P@5", "precision", 5),
        ("precision@10", "precision", 10),
        ("nDCG@10", "ndcg", 10),
        ("ndcg_cut_10", "ndcg", 10),
        ("ndcg_cut.10", None, None),
        ("ndcg", "ndcg", None),
        ("mrr", "mrr", None),
        ("MRR@10", "mrr", 10),
        ("RR@10", "mrr", 10),
        ("recip_rank", "mrr", None),
        (" hit@1 ", "hit", 1),
    ],
)
def test_parse_metric_aliases(text: str, measure: str | None, k: int | None) -> None:
    if measure is None:
        with pytest.raises(ValueError, match="unknown metric"):
            parse_metric(text)
        return
    metric = parse_metric(text)
    assert (metric.measure, metric.k, metric.label) == (measure, k, text.strip())
    assert metric.name == (measure if k is None else f"{measure}@{k}")


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("mapp", "unknown metric 'mapp'"),
        ("rprec@5", "takes no cutoff"),
        ("hit@", "unknown metric"),
        ("hit@x", "unknown metric"),
        ("hit@-1", "unknown metric"),
        ("", "unknown metric"),
        ("hit@0", "cutoff must be at least 1"),
        ("ndcg@0", "cutoff must be at least 1"),
    ],
)
def test_parse_metric_errors(text: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        parse_metric(text)


def test_parse_metrics_lists() -> None:
    got = parse_metrics("hit@1, mrr,,hit@1,nDCG@10")
    assert [m.label for m in got] == ["hit@1", "mrr", "nDCG@10"]
    assert parse_metrics(["P@5", Metric("mrr", None, "mrr")])[1].label == "mrr"
    with pytest.raises(ValueError, match="no metric requested"):
        parse_metrics(" , ")
    with pytest.raises(ValueError, match="unknown metric"):
        evaluate(_frame([("q", "a", 1.0)]), _qrels([("q", "a", 1)]), "hit@1,bogus")


def test_columns_are_named_as_requested() -> None:
    run = _frame([("q", "a", 2.0), ("q", "b", 1.0)])
    qrels = _qrels([("q", "b", 1)])
    result = evaluate_run(run, qrels, "Success@1,RR,nDCG@10,P@2")
    assert isinstance(result, Evaluation)
    assert list(result.per_query.columns) == ["query_id", "Success@1", "RR", "nDCG@10", "P@2"]
    assert result.per_query.iloc[0].tolist() == [
        "q",
        0.0,
        0.5,
        pytest.approx(1 / math.log2(3)),
        0.5,
    ]
    assert [m.name for m in result.metrics] == ["hit@1", "mrr", "ndcg@10", "precision@2"]


def test_objects_that_are_no_dataframe_are_one_line() -> None:
    """A dict or a ranx-like object given to evaluate raised AttributeError from inside the
    core; a pyarrow table was said to miss the columns it has."""
    import pyarrow as pa

    run, qrels = _frame([("q", "a", 1.0)]), _qrels([("q", "a", 1)])
    with pytest.raises(InputError) as info:
        evaluate({"q": {"a": 1.0}}, qrels, ["mrr"])
    assert str(info.value) == "run: a dict is not a DataFrame; read it with analysis.as_run()"
    with pytest.raises(InputError) as info:
        evaluate(run, {"q": {"a": 1}}, ["mrr"])
    assert str(info.value) == "qrels: a dict is not a DataFrame; read it with analysis.as_qrels()"
    with pytest.raises(
        InputError, match=r"^run: a Table is not a DataFrame; read it with analysis"
    ):
        evaluate(pa.Table.from_pandas(run), qrels, ["mrr"])


def test_ids_that_are_no_strings_or_integers_are_one_line() -> None:
    """Float qrels ids were written "1.0" and silently matched no run id "1" (every query
    scored 0); an object column mixing integers and strings raised ArrowInvalid."""
    run = pd.DataFrame({"query_id": [1, 2], "doc_id": ["a", "b"], "score": [1.0, 1.0]})
    qrels = pd.DataFrame({"query_id": [1.0, 2.0], "doc_id": ["a", "b"], "relevance": [1, 1]})
    with pytest.raises(InputError) as info:
        evaluate(run, qrels, ["mrr"])
    assert (
        str(info.value)
        == "qrels: column query_id has type float64; ids must be strings or integers"
    )
    with pytest.raises(InputError, match=r"^run: column doc_id has type bool; ids must be"):
        evaluate(run.assign(doc_id=[True, False]), qrels.astype({"query_id": int}), ["mrr"])
    mixed = run.assign(query_id=pd.Series([1, "2"], dtype=object))
    got = evaluate(mixed, qrels.assign(query_id=["1", "2"]), ["mrr"])
    assert got.to_dict("list") == {"query_id": ["1", "2"], "mrr": [1.0, 1.0]}
    with pytest.raises(InputError) as info:
        evaluate(run.assign(query_id=pd.Series([1, 2.5], dtype=object)), qrels, ["mrr"])
    assert str(info.value) == "run: query_id 2.5 of row 2 is not a string or an integer"
    empty = pd.DataFrame({"query_id": [], "doc_id": [], "score": []})
    assert evaluate(empty, qrels.astype({"query_id": int}), ["mrr"])["mrr"].tolist() == [0.0, 0.0]


@pytest.mark.parametrize("bad", [float("inf"), 1e30, 2**63])
def test_relevance_beyond_int64_raises(bad: object) -> None:
    """An infinite or huge relevance was cast to int64's minimum (a silent non-relevant)."""
    qrels = _qrels([("q", "a", 1)])
    qrels["relevance"] = pd.Series([bad], dtype=object if isinstance(bad, int) else float)
    with pytest.raises(InputError) as info:
        evaluate(_frame([("q", "a", 1.0)]), qrels, ["mrr"])
    assert str(info.value) == f"qrels: relevance {bad!r} of row 1 is outside the 64-bit range"
