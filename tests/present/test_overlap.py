"""Top-k overlap (Jaccard@k) and gold rank changes between two rankings."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.present.overlap import (
    gold_rank_changes,
    query_rank_figure,
    rank_bucket,
    topk_overlap,
    transition_matrix,
)


def _ranked(rows: dict[str, list[str]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"query_id": q, "doc_id": d, "score": float(-r), "rank": r + 1}
            for q, docs in rows.items()
            for r, d in enumerate(docs)
        ]
    )


def test_jaccard_at_k_most_different_first():
    a = _ranked({"same": ["x", "y"], "half": ["x", "y"], "none": ["x"], "only_a": ["x"]})
    b = _ranked({"same": ["y", "x"], "half": ["x", "z"], "none": ["q"]})
    out = topk_overlap(a, b, k=2).set_index("query_id")
    assert out.loc["same", "jaccard"] == 1.0
    assert out.loc["half", "jaccard"] == pytest.approx(1 / 3)
    assert out.loc["none", "jaccard"] == 0.0
    assert out.loc["only_a", "jaccard"] == 0.0
    ordered = topk_overlap(a, b, k=2)["query_id"].tolist()
    assert ordered[-1] == "same"
    assert topk_overlap(a, b, k=1).set_index("query_id").loc["half", "jaccard"] == 1.0
    with pytest.raises(ValueError, match="k must be"):
        topk_overlap(a, b, k=0)


def test_gold_rank_changes_and_transition_matrix():
    a = _ranked({"q": ["g1", "n", "g2"]})
    b = _ranked({"q": ["n", "g1"]})
    qrels = pd.DataFrame({"query_id": ["q", "q", "q"], "doc_id": ["g1", "g2", "g3"],
                          "relevance": [1, 1, 0]})  # fmt: skip
    out = gold_rank_changes(a, b, qrels).set_index("doc_id")
    assert list(out.index) == ["g1", "g2"]  # g3 is not relevant
    assert out.loc["g1", "rank_a"] == 1
    assert out.loc["g1", "rank_b"] == 2
    assert out.loc["g1", "change"] == -1
    assert pd.isna(out.loc["g2", "rank_b"])
    matrix = transition_matrix(out.reset_index())
    assert matrix.loc["1", "2–5"] == 1
    assert matrix.loc["2–5", "not retrieved"] == 1
    assert int(matrix.to_numpy().sum()) == 2


def test_rank_buckets():
    ranks = pd.Series([1, 2, 5, 6, 10, 11, 20, 21, 100, 101, None], dtype="Int64")
    assert rank_bucket(ranks).tolist() == [
        "1", "2–5", "2–5", "6–10", "6–10", "11–20", "11–20", "21–100", "21–100", ">100",
        "not retrieved",
    ]  # fmt: skip


def test_query_rank_figure_keeps_number_like_model_names_as_two_categories():
    changes = pd.DataFrame({"doc_id": ["d1"], "rank_a": pd.array([1], dtype="Int64"),
                            "rank_b": pd.array([5], dtype="Int64")})  # fmt: skip
    fig = query_rank_figure(changes, ("0.1", "0.25"), 20)
    assert fig.layout.xaxis.type == "category"
    assert list(fig.layout.xaxis.categoryarray) == ["0.1", "0.25"]
