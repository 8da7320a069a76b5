"""Complementarity: solved sets, UpSet intersections and the oracle on a hand-made table."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.stats.complementarity import intersections, oracle, solved_matrix


def _table() -> pd.DataFrame:
    # queries 1..5; A solves 1,2,3; B solves 3,4; C solves 3; nobody solves 5
    values = {
        "A": [1.0, 1.0, 1.0, 0.0, 0.0],
        "B": [0.0, 0.5, 1.0, 1.0, 0.0],
        "C": [0.0, 0.0, 1.0, 0.0, 0.2],
    }
    rows = []
    for model, vals in values.items():
        for i, v in enumerate(vals):
            rows.append(
                {
                    "dataset": "d",
                    "model": model,
                    "query_id": str(i + 1),
                    "hit@1": v,
                    "type": "x" if i < 3 else "y",
                }
            )
    return pd.DataFrame(rows)


def test_solved_and_exclusive_intersections():
    solved = solved_matrix(_table(), "hit@1")
    assert solved.sum().to_dict() == {"A": 3, "B": 2, "C": 1}
    inter = intersections(solved)
    sizes = dict(zip(inter["models"], inter["n"], strict=True))
    assert sizes == {"A": 2, "A & B & C": 1, "B": 1, "(none)": 1}
    assert inter["n"].sum() == 5
    assert inter.iloc[0]["models"] == "A"
    row = inter[inter["models"] == "A & B & C"].iloc[0]
    assert row["n_models"] == 3
    assert bool(row["in:A"])
    assert bool(row["in:C"])
    # a lower threshold counts B's 0.5 as solved
    assert solved_matrix(_table(), "hit@1", threshold=0.5)["B"].sum() == 3


def test_oracle_is_the_mean_of_the_per_query_best():
    out = oracle(_table(), "hit@1")
    row = out.iloc[0]
    assert row["n"] == 5
    assert row["mean:A"] == pytest.approx(0.6)
    assert row["best_model"] == "A"
    assert row["oracle"] == pytest.approx((1 + 1 + 1 + 1 + 0.2) / 5)
    assert row["oracle_gain"] == pytest.approx(row["oracle"] - 0.6)
    by = oracle(_table(), "hit@1", by=["type"]).set_index("type")
    assert by.loc["x", "oracle"] == pytest.approx(1.0)
    assert by.loc["y", "best_model"] == "B"
    assert by.loc["y", "oracle"] == pytest.approx(0.6)


def test_queries_missing_for_a_model_are_left_out_and_bad_names_raise():
    table = _table()
    table = table[~((table["model"] == "C") & (table["query_id"] == "5"))]
    assert len(solved_matrix(table, "hit@1")) == 4
    assert oracle(table, "hit@1").iloc[0]["n"] == 4
    with pytest.raises(ValueError, match="metric"):
        solved_matrix(table, "mrr")
    with pytest.raises(ValueError, match="unknown model"):
        oracle(table, "hit@1", models=["A", "Z"])
    assert list(solved_matrix(table, "hit@1", models=["B", "A"]).columns) == ["B", "A"]


@pytest.mark.parametrize("names", [("n", "dataset", "query_id"), ("models", "share", "_oracle")])
def test_any_model_name_gives_the_same_tables(names: tuple[str, str, str]) -> None:
    """Models named as the tables' own columns (``n``, ``models``, ``share``) or the per-query
    keys (``dataset``, ``query_id``) give the numbers of models named A, B and C."""
    rename = dict(zip("ABC", names, strict=True))
    table = _table().replace({"model": rename})
    inter, expected = (
        intersections(solved_matrix(table, "hit@1")),
        intersections(solved_matrix(_table(), "hit@1")),
    )

    def members(label: str) -> set[str]:
        return set() if label == "(none)" else set(label.split(" & "))

    assert [members(m) for m in inter["models"]] == [
        {rename[p] for p in members(m)} for m in expected["models"]
    ]
    assert inter[["n_models", "n", "share"]].equals(expected[["n_models", "n", "share"]])
    assert inter[[f"in:{rename[m]}" for m in "ABC"]].to_numpy().tolist() == (
        expected[["in:A", "in:B", "in:C"]].to_numpy().tolist()
    )
    for by in ((), ("type",)):
        got, want = oracle(table, "hit@1", by=list(by)), oracle(_table(), "hit@1", by=list(by))
        assert got["best_model"].tolist() == [rename[m] for m in want["best_model"]]
        cols = [f"mean:{m}" for m in "ABC"]
        assert got[[f"mean:{rename[m]}" for m in "ABC"]].to_numpy().tolist() == (
            want[cols].to_numpy().tolist()
        )
        assert got[["n", "oracle", "oracle_gain"]].equals(want[["n", "oracle", "oracle_gain"]])
