"""Failure taxonomy and judgement coverage on hand-made tables."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from analysis.core.metrics import rank_run
from analysis.stats.coverage import (
    coverage_summary,
    has_explicit_negatives,
    judgement_coverage,
    most_unjudged,
    suspected_counts,
    suspected_missing_answers,
)
from analysis.stats.taxonomy import (
    CATEGORIES,
    LOCATION,
    applicable_categories,
    category_queries,
    classify,
    classify_dataset,
    gold_candidates,
    taxonomy_counts,
)


def _per_query() -> pd.DataFrame:
    nan = np.nan
    return pd.DataFrame(
        {
            "model": ["m"] * 9,
            "query_id": [str(i) for i in range(9)],
            "n_gold": [1, 0, 1, 1, 1, 1, 1, 1, 1],
            "first_gold_rank": [1, nan, 5, 11, 12, 15, 25, nan, 20],
            "hit@10_max": [1, 0, 1, 1, 0, 0, 0, 0, 0],
            "indistinguishable": [False, False, False, False, True, False, False, False, False],
            "slice": ["a", "a", "a", "b", "b", "b", "b", "b", "a"],
        }
    )


def test_each_cause_and_the_precedence():
    table = _per_query()
    n_cand = pd.Series([1, 0, 1, 1, 1, 1, 1, 1, 0], index=table["query_id"])
    suspected = pd.DataFrame({"model": ["m", "m"], "query_id": ["5", "0"]})
    out = classify(table, k=10, n_gold_candidates=n_cand, suspected=suspected)
    assert out["category"].astype(str).tolist() == [
        "hit",  # a hit stays a hit even with a suspect in its top k
        "no gold",  # before "gold not a candidate"
        "hit",
        "tie-dependent",  # rank 11 but a tie order reaches the top 10
        "location-indistinguishable",
        "suspected missing answer",  # rank 15 would otherwise be a near miss
        "retrieved beyond k",
        "not retrieved",
        "gold not a candidate",  # rank 20 would be a near miss
    ]
    # without the optional evidence the causes fall back to the rank-based ones
    bare = classify(table[["model", "query_id", "n_gold", "first_gold_rank"]], k=10)
    assert bare["category"].astype(str).tolist()[3:6] == ["near miss"] * 3
    with pytest.raises(ValueError, match="k must"):
        classify(table, k=0)
    with pytest.raises(ValueError, match="lacks"):
        classify(table.drop(columns="n_gold"))


def test_the_spatial_cause_is_listed_only_where_it_can_occur():
    spatial = classify(_per_query(), k=10)
    assert applicable_categories(spatial) == CATEGORIES
    text_only = classify(_per_query().drop(columns="indistinguishable"), k=10)
    assert LOCATION not in applicable_categories(text_only)
    # a table of several datasets where the geo columns are empty on this one
    empty = classify(_per_query().assign(indistinguishable=np.nan), k=10)
    assert applicable_categories(empty) == tuple(c for c in CATEGORIES if c != LOCATION)


@pytest.mark.parametrize(
    "flag",
    [
        [0.0, 0.0, 0.0, 0.0, 1.0, 0.0, np.nan, 0.0, 0.0],  # float, as a concat of datasets gives
        [False, False, False, False, True, False, None, False, False],  # object with a None
        pd.array([False, False, False, False, True, False, None, False, False], dtype="boolean"),
    ],
    ids=["float", "object", "boolean"],
)
def test_the_spatial_flag_of_any_dtype_with_gaps_classifies_as_the_bool_one(flag):
    """A missing flag counts as not indistinguishable; no pandas warning on the way."""
    expected = classify(_per_query(), k=10)["category"].astype(str).tolist()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = classify(_per_query().assign(indistinguishable=flag), k=10)
    assert out["category"].astype(str).tolist() == expected


def test_counts_partition_the_queries_and_list_every_category():
    out = classify(_per_query(), k=10)
    counts = taxonomy_counts(out)
    assert set(counts["category"]) == set(CATEGORIES)
    assert counts["n"].sum() == 9
    assert counts.loc[counts["category"] == "hit", "n"].item() == 2
    assert counts["share"].sum() == pytest.approx(1.0)
    by = taxonomy_counts(out, by=["slice"])
    assert by.groupby("slice")["n"].sum().to_dict() == {"a": 4, "b": 5}
    picked = category_queries(out, "m", "not retrieved")
    assert picked["query_id"].tolist() == ["7"]


def test_gold_candidates_with_and_without_types():
    qrels = pd.DataFrame(
        {"query_id": ["1", "1", "2", "3"], "doc_id": ["a", "b", "c", "z"], "relevance": [1] * 4}
    )
    entities = pd.DataFrame({"doc_id": ["a", "b", "c"], "type": ["product", "brand", "brand"]})
    assert gold_candidates(qrels, entities).to_dict() == {"1": 2, "2": 1, "3": 0}
    typed = gold_candidates(qrels, entities, ["product"])
    assert typed.to_dict() == {"1": 1, "2": 0, "3": 0}


def _kb():
    entities = pd.DataFrame(
        {
            "doc_id": ["g", "x", "y", "w", "brandA", "brandB"],
            "type": ["product", "product", "product", "brand", "brand", "brand"],
        }
    )
    edges = pd.DataFrame(
        {
            "src_id": ["g", "x", "y"],
            "relation": ["has_brand", "has_brand", "has_brand"],
            "dst_id": ["brandA", "brandA", "brandB"],
        }
    )
    run = pd.DataFrame(
        {
            "query_id": ["1"] * 4,
            "doc_id": ["w", "x", "y", "g"],
            "score": [4.0, 3.0, 2.0, 1.0],
        }
    )
    qrels = pd.DataFrame({"query_id": ["1"], "doc_id": ["g"], "relevance": [1]})
    return entities, edges, rank_run(run), qrels


def test_suspects_share_type_and_a_relation_with_the_gold():
    entities, edges, ranked, qrels = _kb()
    found = suspected_missing_answers(ranked, qrels, entities, edges, k=3)
    # w: other type; y: same type, other brand; x: same type and brand -> the one suspect
    assert found["doc_id"].tolist() == ["x"]
    assert found.iloc[0]["gold_id"] == "g"
    assert found.iloc[0]["shared_relations"] == 1
    assert suspected_counts(found).to_dict() == {"1": 1}
    # without edges the type alone decides (x and y)
    assert suspected_missing_answers(ranked, qrels, entities, None, k=3)["doc_id"].tolist() == [
        "x",
        "y",
    ]
    # a document judged non-relevant is never a suspect
    judged = pd.concat(
        [qrels, pd.DataFrame({"query_id": ["1"], "doc_id": ["x"], "relevance": [0]})]
    )
    assert suspected_missing_answers(ranked, judged, entities, edges, k=3).empty
    # with two relation types, one shared brand is not enough; brand and colour are
    colours = pd.DataFrame(
        {"src_id": ["g", "x", "y"], "relation": "has_color", "dst_id": ["red", "blue", "red"]}
    )
    edges2 = pd.concat([edges, colours], ignore_index=True)
    assert suspected_missing_answers(ranked, qrels, entities, edges2, k=3).empty
    y_brand = pd.DataFrame({"src_id": ["y"], "relation": ["has_brand"], "dst_id": ["brandA"]})
    edges3 = pd.concat([edges2, y_brand], ignore_index=True)
    both = suspected_missing_answers(ranked, qrels, entities, edges3, k=3)
    assert both["doc_id"].tolist() == ["y"]
    assert both["shared_relations"].tolist() == [2]
    loose = suspected_missing_answers(ranked, qrels, entities, edges2, k=3, min_relations=1)
    assert loose["doc_id"].tolist() == ["x", "y"]
    # one entity type and no edges: no evidence at all
    same = entities.assign(type="poi")
    assert suspected_missing_answers(ranked, qrels, same, None, k=3).empty


def test_judgement_coverage_counts_unjudged_docs_in_the_top_k():
    run = pd.DataFrame(
        {"query_id": ["1", "1", "1", "2"], "doc_id": ["a", "b", "c", "a"], "score": [3, 2, 1, 1]}
    )
    qrels = pd.DataFrame(
        {
            "query_id": ["1", "1", "2", "3"],
            "doc_id": ["a", "c", "b", "a"],
            "relevance": [1, 0, 1, 1],
        }
    )
    cov = judgement_coverage(rank_run(run), qrels, k=2).set_index("query_id")
    assert cov.loc["1", "judged@2"] == pytest.approx(0.5)  # a judged, b not
    assert cov.loc["1", "unjudged@2"] == 1
    assert cov.loc["2", "judged@2"] == 0.0
    assert np.isnan(cov.loc["3", "judged@2"])  # nothing retrieved
    assert cov.loc["3", "n_top"] == 0
    assert has_explicit_negatives(qrels)
    assert not has_explicit_negatives(qrels[qrels["relevance"] > 0])


def test_coverage_summary_per_model_and_with_judgements():
    qrels = pd.DataFrame(
        {"query_id": list("1123"), "doc_id": list("acba"), "relevance": [1, 0, 1, 1]}
    )
    m1 = pd.DataFrame(
        {"query_id": ["1", "1", "1", "2", "2"], "doc_id": ["a", "b", "c", "x", "y"],
         "score": [3, 2, 1, 2, 1]}
    )  # fmt: skip
    m2 = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["c", "a"], "score": [2, 1]})
    runs = {"m1": rank_run(m1), "m2": rank_run(m2)}
    per_query, summary = coverage_summary(runs, qrels, k=2)
    by = summary.set_index("model")
    # m1: q1 top 2 = a, b -> 1/2; q2 = x, y -> 0/2; q3 not retrieved (left out of the mean)
    assert by.loc["m1", "n"] == 2
    assert by.loc["m1", "judged@2"] == pytest.approx(0.25)
    assert by.loc["m1", "unjudged@2"] == pytest.approx(1.5)
    assert by.loc["m1", "queries_with_unjudged"] == 2
    assert by.loc["m1", "unjudged_total"] == 3
    # m2: q1 top 2 = c (judged non-relevant), a -> fully judged
    assert by.loc["m2", "n"] == 1
    assert by.loc["m2", "judged@2"] == pytest.approx(1.0)
    assert by.loc["m2", "queries_with_unjudged"] == 0
    assert set(per_query["model"]) == {"m1", "m2"}
    worst = most_unjudged(per_query, "m1")
    assert worst["query_id"].tolist() == ["2", "1"]  # 2 unjudged before 1
    assert most_unjudged(per_query, "m2").empty
    # a reviewer judges b (not relevant) and x: both count as judged now, the qrels unchanged
    judged = pd.DataFrame({"query_id": ["1", "2"], "doc_id": ["b", "x"], "relevance": [0, 1]})
    before = qrels.copy()
    _, amended = coverage_summary(runs, qrels, k=2, judgements=judged)
    pd.testing.assert_frame_equal(qrels, before)
    assert amended.set_index("model").loc["m1", "judged@2"] == pytest.approx(0.75)
    assert amended.set_index("model").loc["m1", "unjudged_total"] == 1
    empty_pq, empty = coverage_summary({}, qrels, k=2)
    assert empty.empty
    assert empty_pq.empty


def test_classify_dataset_marks_the_suspect_query():
    entities, edges, ranked, qrels = _kb()
    per_query = pd.DataFrame(
        {"model": ["m"], "query_id": ["1"], "n_gold": [1], "first_gold_rank": [4.0]}
    )
    out = classify_dataset(per_query, {"m": ranked}, qrels, entities, edges, k=3)
    assert out["category"].astype(str).tolist() == ["suspected missing answer"]
    off = classify_dataset(per_query, {"m": ranked}, qrels, entities, edges, k=3, suspects=False)
    assert off["category"].astype(str).tolist() == ["near miss"]
