"""The written diff of two rankings: each sentence type once on hand-made rankings, the facts
behind them, escaping wherever the sentences are shown, and ``compare --per-query``."""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd
import pytest

from analysis.present.diffsummary import KINDS, Outcome, diff_sentences, diff_text
from analysis.present.report.document import _query_html
from analysis.present.report.model import QueryView
from analysis.stats.rankdiff import Place, poi_places, rank_diff
from tests.helpers import run_main


def _run(docs: list[str], scores: list[float] | None = None, qid: str = "q1") -> pd.DataFrame:
    scores = scores if scores is not None else [float(10 - i) for i in range(len(docs))]
    return pd.DataFrame({"query_id": qid, "doc_id": docs, "score": scores,
                         "rank": range(1, len(docs) + 1)})  # fmt: skip


QRELS = pd.DataFrame({"doc_id": ["g1", "g2", "j0", "n1"], "relevance": [2, 1, 0, 0]})


def _kinds(sentences: list[tuple[str, str]]) -> dict[str, str]:
    kinds = [k for k, _ in sentences]
    assert len(kinds) == len(set(kinds))  # each kind at most once
    assert kinds == [k for k in KINDS if k in kinds]  # in the documented order
    return dict(sentences)


def test_outcome_gold_moves_reversals_mover_and_unjudged() -> None:
    # A: n1 (judged 0) first, gold g1 second; B: g1 first, two unjudged docs enter the top 3
    a = _run(["n1", "g1", "j0", "u1", "g2"])
    b = _run(["g1", "u2", "u3", "j0", "n1", "g2"])
    diff = rank_diff(a, b, QRELS, k=3, suspects={"u2"})
    assert [(m.doc_id, m.rank_a, m.rank_b) for m in diff.gold] == [("g1", 2, 1), ("g2", 5, 6)]
    assert (diff.n_fixed, diff.fixed, diff.n_broken) == (1, (("g1", "n1"),), 0)
    assert (diff.mover.doc_id, diff.mover.rank_a, diff.mover.rank_b) == ("u2", None, 2)
    assert diff.unjudged_b == ("u2", "u3")
    assert diff.suspects_b == ("u2",)
    assert diff.unjudged_a == ()
    said = _kinds(diff_sentences(diff, Outcome("ndcg@3", 0.4, 0.8)))
    assert said["outcome"] == "ndcg@3: A 0.400, B 0.800; B is better by 0.400."
    assert said["gold"] == "Gold documents, rank in A → B: g1 2 → 1, g2 5 → 6."
    assert said["reversals"] == (
        "Rank reversals among judged documents: B puts the more relevant document first in 1 "
        "pair that A had the other way (g1 above n1)."
    )
    assert said["mover"] == "Largest mover: u2 (unjudged), rank not retrieved → 2."
    assert said["unjudged"] == (
        "2 unjudged documents enter B's top 3 but not A's (u2, u3), 1 suspected missing answer "
        "among them (u2)."
    )
    assert "ties" not in said
    assert "poi" not in said


def test_broken_reversals_and_a_gold_that_is_lost() -> None:
    a = _run(["g2", "j0"])
    b = _run(["j0", "x9"])
    diff = rank_diff(a, b, QRELS, k=2)
    assert (diff.n_fixed, diff.n_broken) == (0, 1)
    assert diff.broken == (("j0", "g2"),)  # B puts the less relevant first
    said = _kinds(diff_sentences(diff, Outcome("mrr", 1.0, 0.0)))
    assert "g2 1 → not retrieved" in said["gold"]
    assert "g1 not retrieved → not retrieved" in said["gold"]
    assert (
        "the less relevant one first in 1 pair that A had right (j0 above g2)"
        in (said["reversals"])
    )
    assert said["outcome"] == "mrr: A 1.000, B 0.000; A is better by 1.000."


def test_outcome_of_values_that_differ_past_three_decimals() -> None:
    diff = rank_diff(_run(["g1"]), _run(["g1"]), QRELS, k=1)
    said = _kinds(diff_sentences(diff, Outcome("ndcg@3", 0.50012, 0.50041)))
    assert said["outcome"] == "ndcg@3: A 0.5001, B 0.5004; B is better by 0.0003."
    said = _kinds(diff_sentences(diff, Outcome("ndcg@3", 0.4, 0.8)))
    assert said["outcome"] == "ndcg@3: A 0.400, B 0.800; B is better by 0.400."


def test_ties_that_decide_the_outcome() -> None:
    # B's gold shares its score with two non-relevant documents at ranks 1-3
    a = _run(["x1", "g1"], [2.0, 1.0])
    b = _run(["n1", "x2", "g1"], [5.0, 5.0, 5.0])
    diff = rank_diff(a, b, QRELS, k=1, ties="trec_eval")
    assert diff.tie_b is not None
    assert (diff.tie_b.doc_id, diff.tie_b.size, diff.tie_b.first_rank, diff.tie_b.last_rank) == (
        "g1", 3, 1, 3)  # fmt: skip
    assert diff.tie_a is None
    deciding = Outcome("hit@1", 0.0, 0.0, (0.0, 0.0), (0.0, 1.0))
    said = _kinds(diff_sentences(diff, deciding))
    assert said["ties"] == (
        "Ties decide the outcome: over the orders of tied scores A scores 0.000 and B "
        "0.000–1.000, so B could come out ahead or level (in B, gold g1 shares score 5 with 2 "
        "other documents at ranks 1–3)."
    )  # A scores 0 in every order: it can never come out ahead
    both = Outcome("hit@1", 0.5, 0.5, (0.0, 1.0), (0.0, 1.0))
    assert "so either could come out ahead" in _kinds(diff_sentences(diff, both))["ties"]
    settled = Outcome("hit@1", 1.0, 0.0, (1.0, 1.0), (0.0, 0.5))
    said = _kinds(diff_sentences(diff, settled))
    assert said["ties"].startswith("Tied scores move the values (A scores 1.000 and B 0.000–0.500)")
    assert "but not which model is ahead" in said["ties"]


def test_scores_tie_as_32_bit_floats_under_trec_eval() -> None:
    close = 1.0 + 1e-9  # equal in float32, not in float64
    b = _run(["n1", "g1"], [close, 1.0])
    assert rank_diff(b, b, QRELS, k=1, ties="trec_eval").tie_b is not None
    assert rank_diff(b, b, QRELS, k=1, ties="stable").tie_b is None


def test_poi_stacks_and_twins() -> None:
    places = {
        "n1": Place(5, 3, "n1"),  # on the gold's coordinate
        "g1": Place(5, 3, "g1"),
        "t1": Place(7, 2, "g2"),  # a twin of gold g2 (same text and place, another id)
        "g2": Place(7, 2, "g2"),
    }
    a = _run(["n1", "g1"])
    b = _run(["g1", "t1"])
    diff = rank_diff(a, b, QRELS, k=2, places=places)
    assert diff.on_gold_spot_a == (("n1", 3),)
    assert diff.twins_b == (("t1", "g2"),)
    said = _kinds(diff_sentences(diff, Outcome("recall@2", 0.5, 0.5)))
    assert said["poi"] == (
        "POIs: A ranks n1 above the first gold on the gold's coordinate (a stack of 3 POIs); "
        "B's top 2 holds t1 (twin of gold g2), the same text and place under another id."
    )
    assert said["outcome"] == "recall@2 is 0.500 for both A and B."


def test_poi_places_from_entities() -> None:
    pois = pd.DataFrame({
        "doc_id": ["a", "b", "c", "d"], "text": ["x", "x", "y", "z"],
        "lat": [30.0, 30.0, 30.0, 31.0], "lon": [120.0, 120.0, 120.0, 121.0],
    })  # fmt: skip
    places = poi_places(pois)
    assert places["a"] == Place(places["a"].stack, 3, "a")
    assert places["b"].canonical == "a"  # b is a's twin
    assert places["c"].canonical == "c"
    assert places["d"].size == 1


def test_the_diff_is_text_and_is_escaped_where_shown() -> None:
    evil = "<img src=x onerror=alert(1)>*_`$"
    qrels = pd.DataFrame({"doc_id": [evil], "relevance": [1]})
    diff = rank_diff(_run(["x", evil]), _run([evil]), qrels, k=1)
    text = diff_text(diff, Outcome("mrr", 0.5, 1.0))
    assert evil in text  # plain text: the renderers escape it
    view = QueryView("d", "q1", "query", pd.DataFrame(), pd.DataFrame(), pd.DataFrame(),
                     diff=(text,))  # fmt: skip
    page = _query_html(view, "k")
    assert evil not in page
    assert html.escape(evil) in page


def test_compare_per_query_writes_the_summaries(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 g1 1\nq2 0 g2 1\n")
    (tmp_path / "a.run").write_text("q1 Q0 n1 1 3 a\nq1 Q0 g1 2 2 a\nq2 Q0 g2 1 5 a\n")
    (tmp_path / "b.run").write_text("q1 Q0 g1 1 3 b\nq1 Q0 n1 2 2 b\nq2 Q0 x 1 5 b\n")
    per = tmp_path / "per.csv"
    runs = ["--run", f"A={tmp_path / 'a.run'}", "--run", f"B={tmp_path / 'b.run'}"]
    done = run_main(
        "compare", "--qrels", qrels, *runs, "--metrics", "mrr,hit@1", "--per-query", per
    )
    assert done.returncode == 0, done.stderr
    rows = pd.read_csv(per, dtype={"query_id": str})
    assert list(rows.columns) == ["query_id", "metric", "a", "b", "value_a", "value_b", "delta",
                                  "summary"]  # fmt: skip
    assert len(rows) == 4  # 2 queries x 2 metrics x 1 pair
    q1 = rows.set_index(["query_id", "metric"]).loc[("q1", "mrr")]
    assert (q1["value_a"], q1["value_b"], q1["delta"]) == (0.5, 1.0, -0.5)
    assert q1["summary"].startswith("mrr: A 0.500, B 1.000; B is better by 0.500. ")
    assert "g1 2 → 1" in q1["summary"]
    q2 = rows.set_index(["query_id", "metric"]).loc[("q2", "hit@1")]
    assert "g2 1 → not retrieved" in q2["summary"]
    assert "1 unjudged document enters B's top 1 but not A's (x)" in q2["summary"]


@pytest.mark.parametrize("suffix", [".xlsx"])
def test_per_query_refuses_an_unknown_format(tmp_path: Path, suffix: str) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 g1 1\n")
    (tmp_path / "a.run").write_text("q1 Q0 g1 1 3 a\n")
    done = run_main("compare", "--qrels", qrels, "--run", tmp_path / "a.run", "--run",
                   f"b={tmp_path / 'a.run'}", "--per-query", tmp_path / f"per{suffix}")  # fmt: skip
    assert done.returncode == 2
    assert "unknown output format" in done.stderr
    assert not (tmp_path / f"per{suffix}").exists()
