"""AppTest: the Queries page (failing-query browser) on the demo bundle."""

from __future__ import annotations

from functools import cache

import pandas as pd

from analysis.io.bundle import load_dataset, read_manifest
from tests.app.conftest import ROOT, no_exception, open_page

PAGE = "2_Queries.py"


@cache
def _queries(name: str) -> pd.DataFrame:
    return load_dataset(read_manifest(ROOT / "data" / "demo").datasets[name]).queries


def _text(dataset: str, query_id: str) -> str:
    queries = _queries(dataset)
    return str(queries.loc[queries["query_id"] == query_id, "text"].iloc[0])


def _param(at, name: str) -> str | None:
    value = at.query_params.get(name)
    return value[0] if isinstance(value, list) else value


def _failures(at) -> pd.DataFrame:
    tables = [d for d in at.dataframe if d.key == "failures"]
    assert len(tables) == 1
    return tables[0].value


def _detail(at, which: str) -> pd.DataFrame:
    """A detail table: ``meta`` (field/value), ``gold`` (gold documents) or ``ranking`` (only
    selectable dataframes carry their key in AppTest, so tell them apart by columns)."""
    tests = {
        "meta": lambda cols: cols == ["field", "value"],
        "gold": lambda cols: cols[:3] == ["doc_id", "rank", "relevance"],
        "ranking": lambda cols: cols[:2] == ["rank", "gold"],
    }
    found = [d.value for d in at.dataframe if tests[which](list(d.value.columns))]
    assert len(found) == 1, which
    return found[0]


def _shown_query(at) -> str | None:
    return at.code[0].value if len(at.code) else None


def test_renders_failing_queries_of_model_a_on_demo():
    at = open_page(PAGE)
    no_exception(at)
    view = _failures(at)
    assert len(view) > 50
    assert set(view.columns) >= {
        "dataset",
        "query_id",
        "text",
        "hit@10",
        "hit@10_min",
        "hit@10_max",
        "n_gold",
        "first_gold_rank",
        "flags",
    }
    assert (view["hit@10"] < 1).all()  # failures only, by default
    assert view["hit@10"].is_monotonic_increasing  # worst first
    # the selector explains the metric on hover
    assert "Hit@k" in at.select_slider(key="queries_max").help
    assert _shown_query(at) is None  # nothing selected yet


def test_threshold_and_slice_filters_change_the_row_count():
    at = open_page(PAGE, datasets="stark-mag,beijing,shanghai", a="bm25", metric="recall", k="20")
    no_exception(at)
    before = len(_failures(at))
    at.select_slider(key="queries_max").set_value(0.0).run()
    no_exception(at)
    zero = _failures(at)
    assert 0 < len(zero) < before
    assert (zero["recall@20"] == 0).all()
    assert _param(at, "max") == "0"

    at.selectbox(key="queries_slice").select("dataset").run()
    no_exception(at)
    assert "beijing" in at.multiselect(key="queries_values").options
    at.multiselect(key="queries_values").select("beijing").run()
    no_exception(at)
    sliced = _failures(at)
    assert 0 < len(sliced) < len(zero)
    assert set(sliced["dataset"]) == {"beijing"}
    assert _param(at, "slice") == "dataset"
    assert _param(at, "values") == "beijing"


def test_tie_and_missing_checkboxes_filter():
    at = open_page(PAGE, datasets="stark-amazon,stark-prime", a="bm25")
    all_rows = len(_failures(at))
    at.checkbox(key="queries_missing").check().run()
    no_exception(at)
    missing = _failures(at)
    assert 0 < len(missing) < all_rows
    assert missing["flags"].str.contains("missing from run").all()
    assert _param(at, "missing") == "1"
    at.checkbox(key="queries_missing").uncheck().run()
    at.checkbox(key="queries_tie_only").check().run()
    no_exception(at)
    ties = _failures(at)
    assert 0 < len(ties) < all_rows
    assert (ties["hit@10_min"] != ties["hit@10_max"]).all()
    assert _param(at, "tie_only") == "1"
    assert _param(at, "ties") == "trec_eval"  # the shared tie policy is untouched


def test_selecting_a_row_shows_that_query_and_puts_it_in_the_url():
    at = open_page(PAGE, datasets="stark-amazon,stark-mag", a="bm25")
    view = _failures(at)
    dataset, query_id = view.loc[3, "dataset"], view.loc[3, "query_id"]
    # AppTest cannot click the grid; a keyed dataframe's selection is set through session state
    at.session_state["failures"] = {"selection": {"rows": [3], "columns": [], "cells": []}}
    at.run()
    no_exception(at)
    assert _param(at, "q") == query_id
    assert _param(at, "qd") == dataset
    assert _shown_query(at) == _text(dataset, query_id)
    ranking = _detail(at, "ranking")
    assert len(ranking) == 20  # top 20 by default
    assert ranking["rank"].tolist() == list(range(1, 21))
    assert "gold" in ranking.columns

    # a second selection replaces the first
    at.session_state["failures"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    assert _param(at, "q") == view.loc[0, "query_id"]
    assert _shown_query(at) == _text(view.loc[0, "dataset"], view.loc[0, "query_id"])


def test_permalink_reopens_the_query_even_outside_the_filtered_table():
    # query 5 exists in all three STaRK datasets: qd picks MAG's
    at = open_page(
        PAGE, datasets="stark-amazon,stark-mag", a="bm25", q="5", qd="stark-mag", max="0", top="5"
    )
    no_exception(at)
    assert _shown_query(at) == _text("stark-mag", "5")
    assert _text("stark-mag", "5") != _text("stark-amazon", "5")
    meta = dict(_detail(at, "meta").values)
    assert meta["dataset"] == "stark-mag"
    assert meta["query_id"] == "5"
    ranking = _detail(at, "ranking")
    assert len(ranking) == 5
    assert at.number_input(key="queries_top").value == 5
    gold = _detail(at, "gold")
    assert len(gold) == int(meta["n_gold"])
    # the gold marked in the ranked list are the gold documents
    assert set(ranking.loc[ranking["gold"], "doc_id"]) <= set(gold["doc_id"])
    assert _param(at, "q") == "5"
    assert _param(at, "qd") == "stark-mag"


def test_permalink_highlights_the_row_when_it_is_in_the_table():
    at = open_page(PAGE, datasets="shanghai", a="bm25")
    view = _failures(at)
    dataset, query_id = view.loc[7, "dataset"], view.loc[7, "query_id"]
    again = open_page(PAGE, datasets="shanghai", a="bm25", q=query_id, qd=dataset)
    no_exception(again)
    assert again.session_state["failures"]["selection"]["rows"] == [7]
    assert _shown_query(again) == _text(dataset, query_id)
    # changing a filter keeps the query shown; the highlight follows it or clears
    again.select_slider(key="queries_max").set_value(0.5).run()
    no_exception(again)
    assert _shown_query(again) == _text(dataset, query_id)
    assert _param(again, "q") == query_id


def test_query_without_dataset_in_link_resolves_and_bad_link_warns():
    at = open_page(PAGE, datasets="beijing,shanghai", a="bm25", q="00001")
    no_exception(at)
    assert _param(at, "qd") == "beijing"
    assert _shown_query(at) == _text("beijing", "00001")
    assert any("Map page" in i.value for i in at.info)  # spatial dataset note

    bad = open_page(PAGE, datasets="geo-glue", a="bm25", q="no-such-query")
    no_exception(bad)
    assert _shown_query(bad) is None
    assert len(bad.warning) == 1


def test_filters_matching_nothing_show_info():
    at = open_page(PAGE, datasets="beijing", a="bm25", missing="1", tie_only="1")
    no_exception(at)
    assert not [d for d in at.dataframe if d.key == "failures"]
    assert any("No query matches" in i.value for i in at.info)


def test_invalid_url_values_fall_back_to_defaults():
    at = open_page(
        PAGE, datasets="geo-glue", max="2", slice="nope", values="x", top="0", tie_only="maybe"
    )
    no_exception(at)
    assert at.select_slider(key="queries_max").value == 1.0
    assert at.selectbox(key="queries_slice").value == "(none)"
    assert at.multiselect(key="queries_values").value == []
    assert not at.checkbox(key="queries_tie_only").value
    assert _param(at, "max") is None
    assert _param(at, "slice") is None
