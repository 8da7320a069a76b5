"""Tests for analysis.stats.failures: filters, ordering, URL values, selection mapping, details."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.present.rankings import gold_table
from analysis.stats import MISSING_LABEL, failures


def _rows() -> pd.DataFrame:
    """One model's per-query rows over two datasets (query id "1" in both)."""
    return pd.DataFrame(
        {
            "dataset": ["a", "a", "a", "a", "b", "b"],
            "model": "m",
            "query_id": ["1", "2", "3", "4", "1", "007"],
            "recall@5": [1.0, 0.5, 0.0, 0.3, 0.0, 0.25],
            "recall@5_min": [1.0, 0.5, 0.0, 0.3, 0.0, 0.0],
            "recall@5_max": [1.0, 0.5, 0.0, 0.3, 0.0, 0.5],
            "n_gold": [1, 2, 7, 10, 1, 4],
            "first_gold_rank": [1.0, 2.0, np.nan, 3.0, 40.0, 4.0],
            "missing_from_run": [False, False, True, False, False, False],
            "no_relevant": False,
            "tied_at_cutoff": [False, False, False, False, False, True],
            "tie_sensitive": [False, False, False, True, False, True],
            "text": ["alpha", "beta " * 40, "gamma", "delta", "epsilon", "zeta"],
            "query_type": ["x", "y", "x", "y", "x", None],
            "split": ["test", "test", "val", "val", "test", "test"],
        }
    )


def test_default_threshold_lists_every_query_below_one_worst_first():
    view = failures.failing_queries(_rows(), "recall@5")
    # not the perfect query (a, 1); ties at 0 broken by best value, then no gold retrieved first
    assert list(zip(view["dataset"], view["query_id"], strict=True)) == [
        ("a", "3"),
        ("b", "1"),
        ("b", "007"),
        ("a", "4"),
        ("a", "2"),
    ]
    assert list(view.index) == list(range(5))
    assert list(view.columns[:5]) == ["dataset", "query_id", "text", "recall@5", "recall@5_min"]
    assert view["first_gold_rank"].dtype == "Int64"
    assert view["first_gold_rank"].isna().tolist() == [True, False, False, False, False]


def test_threshold_is_inclusive_and_tolerant_of_rounding():
    rows = _rows()
    rows.loc[3, "recall@5"] = 0.1 * 3  # 0.30000000000000004
    view = failures.failing_queries(rows, "recall@5", failures.FailureFilter(max_value=0.3))
    assert set(view["query_id"]) == {"3", "1", "007", "4"}
    assert failures.failing_queries(rows, "recall@5", failures.FailureFilter(max_value=0.0))[
        "query_id"
    ].tolist() == [
        "3",
        "1",
    ]


def test_threshold_mask_failures_vs_at_most():
    values = pd.Series([0.0, 0.5, 0.999, 1.0, np.nan])
    assert failures.threshold_mask(values, 1.0).tolist() == [True, True, True, False, False]
    assert failures.threshold_mask(values, 0.5).tolist() == [True, True, False, False, False]


def test_slice_filter_uses_labels_and_missing_label():
    view = failures.failing_queries(
        _rows(), "recall@5", failures.FailureFilter(slice_column="query_type", slice_values=("x",))
    )
    assert set(view["query_id"]) == {"3", "1"}
    assert "query_type" in view.columns  # the slice column is shown when filtering by it
    missing = failures.failing_queries(
        _rows(),
        "recall@5",
        failures.FailureFilter(slice_column="query_type", slice_values=(MISSING_LABEL,)),
    )
    assert missing["query_id"].tolist() == ["007"]
    # no values selected: no slice filter
    assert (
        len(
            failures.failing_queries(
                _rows(), "recall@5", failures.FailureFilter(slice_column="query_type")
            )
        )
        == 5
    )


def test_slice_options_are_sorted_labels():
    assert failures.slice_options(_rows(), "query_type") == sorted(["x", "y", MISSING_LABEL])
    assert failures.slice_options(_rows(), "nope") == []
    assert failures.slice_options(_rows(), None) == []
    floats = pd.Series([1.0, 2.0, np.nan])
    assert failures.slice_labels(floats).tolist() == ["1", "2", MISSING_LABEL]


def test_tie_only_uses_the_metric_bounds():
    view = failures.failing_queries(_rows(), "recall@5", failures.FailureFilter(tie_only=True))
    # (a, 4) is tie-sensitive for another metric only, so it is not kept
    assert view["query_id"].tolist() == ["007"]
    no_bounds = _rows().drop(columns=["recall@5_min", "recall@5_max"])
    view = failures.failing_queries(no_bounds, "recall@5", failures.FailureFilter(tie_only=True))
    assert set(view["query_id"]) == {"4", "007"}


def test_missing_only_and_empty_result():
    view = failures.failing_queries(_rows(), "recall@5", failures.FailureFilter(missing_only=True))
    assert view["query_id"].tolist() == ["3"]
    assert "missing from run" in view["flags"].iloc[0]
    empty = failures.failing_queries(
        _rows(), "recall@5", failures.FailureFilter(missing_only=True, tie_only=True)
    )
    assert empty.empty
    assert "flags" in empty.columns


def test_a_dataset_without_the_flag_columns_gets_no_flags():
    """Datasets concatenated where one lacks the diagnostics: its flags are missing (NaN), which
    is no flag, not True."""
    with_flags = pd.DataFrame({"dataset": "d1", "query_id": ["1", "2"], "mrr": [0.0, 0.5],
                               "missing_from_run": [True, False], "tied_at_cutoff": False,
                               "tie_sensitive": False})  # fmt: skip
    without = pd.DataFrame({"dataset": "d2", "query_id": ["3"], "mrr": [0.0]})
    rows = pd.concat([with_flags, without], ignore_index=True)
    view = failures.failing_queries(rows, "mrr")
    flags = dict(zip(view["query_id"], view["flags"], strict=True))
    assert flags == {"1": "missing from run", "3": "", "2": ""}
    missing = failures.failing_queries(rows, "mrr", failures.FailureFilter(missing_only=True))
    assert missing["query_id"].tolist() == ["1"]
    tied = failures.failing_queries(rows, "mrr", failures.FailureFilter(tie_only=True))
    assert tied.empty


def test_unknown_metric_raises():
    with pytest.raises(KeyError, match=r"ndcg@10"):
        failures.failing_queries(_rows(), "ndcg@10")


def test_text_is_cut_and_flags_name_diagnostics():
    view = failures.failing_queries(_rows(), "recall@5", text_chars=20)
    beta = view.loc[view["query_id"] == "2", "text"].iloc[0]
    assert len(beta) == 20
    assert beta.endswith("…")
    flags = dict(zip(view["query_id"], view["flags"], strict=True))
    assert flags["007"] == "tie-sensitive, tied at a cutoff"
    assert flags["3"] == "missing from run, more gold than k"
    assert flags["4"] == "more gold than k"
    assert flags["2"] == ""


def test_more_gold_than_k_only_for_recall():
    rows = _rows().rename(columns=lambda c: c.replace("recall@5", "hit@5"))
    flags = failures.query_flags(rows, "hit@5")
    assert not flags.str.contains("more gold").any()


def test_parse_threshold_snaps_and_rejects():
    assert failures.parse_threshold("0.5") == 0.5
    assert failures.parse_threshold("0.52") == 0.5
    assert failures.parse_threshold("1") == 1.0
    assert failures.parse_threshold("0") == 0.0
    for raw in (None, "abc", "-0.1", "1.5", "nan", "inf"):
        assert failures.parse_threshold(raw) is None
    assert failures.format_threshold(0.5) == "0.5"
    assert failures.format_threshold(0.0) == "0"
    assert failures.threshold_label(1.0) == "< 1 (failures)"
    assert failures.threshold_label(0.25) == "≤ 0.25"


def test_parse_top_and_flag():
    assert failures.parse_top("50") == 50
    for raw in (None, "0", "-3", "x", str(failures.MAX_TOP + 1), "2.5"):
        assert failures.parse_top(raw) is None
    assert failures.parse_flag("1")
    assert failures.parse_flag("true")
    assert not failures.parse_flag("0")
    assert not failures.parse_flag(None)


def test_parse_values_rejoins_values_with_commas():
    options = ["[0.1, 0.5)", "[0.5, 2]", "a", "a,b"]
    raw = failures.format_values(["[0.1, 0.5)", "a", "[0.5, 2]"])
    assert failures.parse_values(raw, options) == ["[0.1, 0.5)", "a", "[0.5, 2]"]
    # shortest match first: "a,b" splits into "a" and the unknown "b"
    assert failures.parse_values("a,b", ["a", "a,b"]) == ["a"]
    assert failures.parse_values("a,b", ["a,b"]) == ["a,b"]
    assert failures.parse_values("zz,a,a", options) == ["a"]
    assert failures.parse_values("", options) == []
    assert failures.parse_values(None, options) == []


def _parse_values_reference(raw: str, options: list[str]) -> list[str]:
    """The rule of :func:`failures.parse_values` written plainly (every span tried)."""
    if not raw:
        return []
    known, pieces, out, i = set(options), raw.split(","), [], 0
    while i < len(pieces):
        for j in range(i + 1, len(pieces) + 1):
            candidate = ",".join(pieces[i:j])
            if candidate in known:
                out += [] if candidate in out else [candidate]
                i = j
                break
        else:
            i += 1
    return out


def test_parse_values_agrees_with_the_plain_rule_on_random_links():
    rng = np.random.default_rng(0)
    alphabet = ["a", "b", ",", " ", "[", ")"]
    for _ in range(3000):
        options = ["".join(rng.choice(alphabet, rng.integers(0, 6))) for _ in range(4)]
        raw = ",".join(rng.choice([*options, "a", "", "zz"], rng.integers(0, 10)))
        assert failures.parse_values(raw, options) == _parse_values_reference(raw, options)


def test_parse_values_of_a_long_link():
    """A link of 4,000+ characters, each value a bucket label with a comma: every value found
    once, in URL order (the plain rule tries every span: cubic in the commas)."""
    options = [f"[{i}, {i + 1})" for i in range(60)]
    raw = ",".join(options * 40)
    assert len(raw) > 4000
    assert failures.parse_values(raw, options) == options
    assert failures.parse_values("x," * 50_000, options) == []


def test_selection_maps_to_dataset_and_query():
    view = failures.failing_queries(_rows(), "recall@5")
    event = {"selection": {"rows": [1], "columns": [], "cells": []}}
    rows = failures.selection_rows(event)
    assert rows == [1]
    assert failures.selected_query(view, rows) == ("b", "1")
    assert failures.selected_query(view, []) is None
    assert failures.selected_query(view, None) is None
    assert failures.selected_query(view, [99]) is None  # stale selection
    assert failures.selection_rows(None) is None
    assert failures.selection_rows({"other": 1}) is None


def test_row_of_and_resolve_query_handle_repeated_ids():
    rows = _rows()
    view = failures.failing_queries(rows, "recall@5")
    assert failures.row_of(view, "b", "1") == 1
    assert failures.row_of(view, "a", "1") is None  # perfect, so filtered out
    assert failures.row_of(view.iloc[0:0], "a", "1") is None
    assert failures.resolve_query(rows, "1", "b") == ("b", "1")
    assert failures.resolve_query(rows, "1", None) == ("a", "1")
    assert failures.resolve_query(rows, "1", "nope") == ("a", "1")
    assert failures.resolve_query(rows, "007", "a") == ("b", "007")
    assert failures.resolve_query(rows, "7", None) is None  # ids are strings
    assert failures.resolve_query(rows, None, "a") is None
    assert failures.resolve_query(rows.iloc[0:0], "1", "a") is None


def test_model_rows_selects_one_model():
    table = pd.concat([_rows(), _rows().assign(model="other")], ignore_index=True)
    assert len(failures.model_rows(table, "other")) == 6
    assert failures.model_rows(table, None).empty
    assert failures.model_rows(pd.DataFrame(), "m").empty


def test_query_metadata_lists_facts_as_text():
    rows = _rows()
    row = failures.query_row(rows, "b", "007")
    meta = failures.query_metadata(row, "recall@5", ["query_type", "dataset", "absent"])
    facts = dict(zip(meta["field"], meta["value"], strict=True))
    assert facts["dataset"] == "b"
    assert facts["query_id"] == "007"
    assert facts["query_type"] == MISSING_LABEL
    assert facts["first_gold_rank"] == "4"
    assert facts["recall@5"] == "0.2500 (ties: 0.0000 to 0.5000)"
    assert facts["tie_sensitive"] == "yes"
    assert facts["flags"] == "tie-sensitive, tied at a cutoff"
    assert list(meta["field"]).count("query_type") == 1
    none = dict(failures.query_metadata(failures.query_row(rows, "a", "3"), "recall@5").values)
    assert none["first_gold_rank"] == "none"
    assert none["recall@5"] == "0.0000"
    assert failures.query_row(rows, "a", "zz") is None


def test_query_metadata_skips_missing_extra_slices():
    rows = _rows().assign(district=["d1", None, None, None, None, None])
    meta = failures.query_metadata(failures.query_row(rows, "a", "2"), "recall@5", ["district"])
    assert "district" not in set(meta["field"])
    meta = failures.query_metadata(failures.query_row(rows, "a", "1"), "recall@5", ["district"])
    assert dict(meta.values)["district"] == "d1"


def test_query_metadata_says_no_for_a_missing_flag():
    """A query of a dataset without the flag columns (NaN in a table of several datasets)."""
    with_flags = pd.DataFrame({"dataset": "d1", "query_id": ["1"], "mrr": [0.0],
                               "missing_from_run": [True], "tied_at_cutoff": [False]})  # fmt: skip
    without = pd.DataFrame({"dataset": "d2", "query_id": ["3"], "mrr": [0.0]})
    rows = pd.concat([with_flags, without], ignore_index=True)
    facts = dict(failures.query_metadata(failures.query_row(rows, "d2", "3"), "mrr").values)
    assert facts["missing_from_run"] == "no"
    assert facts["tied_at_cutoff"] == "no"
    assert facts["flags"] == "none"


def test_gold_with_ranks_orders_by_rank_unretrieved_last():
    ranked = pd.DataFrame(
        {
            "query_id": ["q", "q", "q", "r"],
            "doc_id": ["d3", "x", "d1", "d2"],
            "score": [3.0, 2.0, 1.0, 5.0],
            "rank": [1, 2, 3, 1],
        }
    )
    qrels = pd.DataFrame(
        {"query_id": ["q", "q", "q", "r"], "doc_id": ["d1", "d2", "d3", "d2"], "relevance": 1}
    )
    ranking = failures.query_ranking(ranked, "q")
    assert ranking["doc_id"].tolist() == ["d3", "x", "d1"]
    gold = failures.gold_with_ranks(gold_table(qrels, None, "q"), ranking)
    assert gold["doc_id"].tolist() == ["d3", "d1", "d2"]
    assert gold["rank"].tolist()[:2] == [1, 3]
    assert pd.isna(gold["rank"].iloc[2])
    assert list(gold.columns[:2]) == ["doc_id", "rank"]


def test_entities_for_uses_an_index_and_skips_unknown_ids():
    entities = pd.DataFrame(
        {"doc_id": ["d1", "d2", "d1", "d3"], "name": ["one", "two", "dup", "three"]}
    )
    index = failures.entity_index(entities)
    assert index.to_dict() == {"d1": 0, "d2": 1, "d3": 3}
    sub = failures.entities_for(entities, index, ["d3", "zz", "d1", "d3"])
    assert sub["name"].tolist() == ["three", "one"]
    assert failures.entities_for(entities, None, ["d2"])["name"].tolist() == ["two"]
    assert failures.entities_for(None, None, ["d2"]) is None
    assert failures.entities_for(entities, index, []).empty
    qrels = pd.DataFrame({"query_id": ["q", "r", "q"], "doc_id": ["a", "b", "c"], "relevance": 1})
    assert failures.query_qrels(qrels, "q")["doc_id"].tolist() == ["a", "c"]
