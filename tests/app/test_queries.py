"""AppTest: the Queries page (failing-query browser) on the demo bundle."""

from __future__ import annotations

import html
import re
from functools import cache

import pandas as pd
import pytest

from analysis.io.bundle import load_dataset, read_manifest
from tests.app.conftest import ROOT, no_exception, open_expander, open_page

#: every test only reads the demo bundle: they share Streamlit's caches (shared_demo_root)
pytestmark = pytest.mark.usefixtures("shared_demo_root")

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


def _meta(at) -> dict:
    """The query's metadata table, drawn once its expander is opened (opened here)."""
    assert not [d for d in at.dataframe if list(d.value.columns) == ["field", "value"]]
    open_expander(at, "query_meta_open")
    found = [d.value for d in at.dataframe if list(d.value.columns) == ["field", "value"]]
    assert len(found) == 1
    return dict(found[0].values)


def _html(at) -> list[str]:
    """The detail tables (gold documents first, then model A's ranked list)."""
    return [e.proto.body for e in at.get("html")]


def _rows(body: str) -> list[str]:
    return body.split("<tbody>", 1)[1].split("<tr")[1:]


def _shown_query(at) -> str | None:
    """The text of the selected query (the escaped box of ``widgets.query_text``)."""
    for element in at.get("html"):
        found = re.search(r'<div class="query-text">(.*?)</div>', element.proto.body, re.S)
        if found:
            return html.unescape(found.group(1))
    return None


def _select(at, row: int) -> None:
    # AppTest cannot click the grid; a keyed dataframe's selection is set through session state
    at.session_state["failures"] = {"selection": {"rows": [row], "columns": [], "cells": []}}
    at.run()


def test_renders_failing_queries_of_model_a_on_demo():
    at = open_page(PAGE)
    no_exception(at)
    view = _failures(at)
    assert len(view) > 50
    assert set(view.columns) >= {"query_id", "text", "hit@1", "n_gold", "first_gold_rank"}
    assert (view["hit@1"] < 1).all()  # failures only, by default
    assert view["hit@1"].is_monotonic_increasing  # worst first
    assert set(view["dataset"]) == {"stark-amazon"}  # one dataset at a time
    assert "Hit@k" in at.select_slider(key="queries_max").help
    assert _shown_query(at) is None  # nothing selected yet


def test_search_filters_by_text_and_id():
    at = open_page(PAGE, dataset="stark-mag", a="bm25")
    view = _failures(at)
    word = str(view.loc[0, "text"]).split()[0]
    at.text_input(key="queries_search").input(word.upper()).run()
    no_exception(at)
    found = _failures(at)
    assert 0 < len(found) <= len(view)
    full = [_text("stark-mag", q).casefold() for q in found["query_id"]]
    assert all(word.casefold() in t for t in full)
    assert _param(at, "search") == word.upper()
    at.text_input(key="queries_search").input(str(view.loc[2, "query_id"])).run()
    assert str(view.loc[2, "query_id"]) in set(_failures(at)["query_id"])


def test_threshold_and_slice_filters_change_the_row_count():
    at = open_page(PAGE, dataset="beijing", a="bm25", metric="recall@20")
    no_exception(at)
    before = len(_failures(at))
    at.select_slider(key="queries_max").set_value(0.0).run()
    no_exception(at)
    zero = _failures(at)
    assert 0 < len(zero) < before
    assert (zero["recall@20"] == 0).all()
    assert _param(at, "max") == "0"
    at.selectbox(key="queries_slice").select("n_gold_bucket").run()
    at.multiselect(key="queries_values").select("1").run()
    no_exception(at)
    sliced = _failures(at)
    assert 0 < len(sliced) < len(zero)
    assert (sliced["n_gold"] == 1).all()
    assert _param(at, "values") == "1"


def test_tie_and_missing_checkboxes_filter():
    at = open_page(PAGE, dataset="stark-prime", a="bm25", metric="hit@5")
    all_rows = len(_failures(at))
    at.checkbox(key="queries_tie_only").check().run()
    no_exception(at)
    ties = _failures(at)
    assert 0 < len(ties) < all_rows
    assert ties["flags"].str.contains("tie").all()
    assert _param(at, "tie_only") == "1"
    assert _param(at, "ties") == "trec_eval"  # the shared tie policy is untouched


def test_selecting_a_row_shows_query_highlighted_text_gold_rows_and_url():
    at = open_page(PAGE, dataset="stark-amazon", a="bm25")
    view = _failures(at)
    dataset, query_id = view.loc[3, "dataset"], view.loc[3, "query_id"]
    _select(at, 3)
    no_exception(at)
    assert _param(at, "q") == query_id
    assert _param(at, "qd") == dataset
    assert _shown_query(at) == _text(dataset, query_id)
    gold, ranking = _html(at)[-2:]
    assert len(_rows(ranking)) == 20  # top 20 by default
    assert "<mark>" in ranking  # query terms highlighted in the entity text
    assert "background-color" in gold  # gold rows highlighted
    _select(at, 0)
    assert _param(at, "q") == view.loc[0, "query_id"]


def test_previous_and_next_walk_the_list():
    at = open_page(PAGE, dataset="stark-mag", a="bm25")
    view = _failures(at)
    _select(at, 1)
    at.button(key="q_next").click().run()
    no_exception(at)
    assert _param(at, "q") == view.loc[2, "query_id"]
    assert _shown_query(at) == _text("stark-mag", view.loc[2, "query_id"])
    at.button(key="q_prev").click().run()
    at.button(key="q_prev").click().run()
    assert _param(at, "q") == view.loc[0, "query_id"]
    assert at.button(key="q_prev").disabled


def test_permalink_reopens_the_query_even_outside_the_filtered_table():
    at = open_page(PAGE, dataset="stark-mag", a="bm25", q="5", max="0", top="5")
    no_exception(at)
    assert _shown_query(at) == _text("stark-mag", "5")
    meta = _meta(at)
    assert meta["query_id"] == "5"
    gold, ranking = _html(at)[-2:]
    assert len(_rows(ranking)) == 5
    assert len(_rows(gold)) == int(meta["n_gold"])
    assert at.number_input(key="queries_top").value == 5


def test_poi_detail_shows_distance_and_twin_or_stack_marks():
    at = open_page(PAGE, dataset="geo-glue", a="bm25", metric="recall@10")
    view = _failures(at)
    marked = False
    for row in range(min(len(view), 12)):
        _select(at, row)
        no_exception(at)
        ranking = _html(at)[-1]
        assert "<th>distance</th>" in ranking
        assert " km</td>" in ranking or " m</td>" in ranking
        marked |= "mark-twin" in ranking or "mark-stack" in ranking
    assert marked  # Geo-Glue's shifted coordinates put non-gold POIs on gold spots


def test_query_link_resolves_and_bad_link_warns():
    at = open_page(PAGE, dataset="beijing", a="bm25", q="00001")
    no_exception(at)
    assert _param(at, "qd") == "beijing"
    assert _shown_query(at) == _text("beijing", "00001")
    bad = open_page(PAGE, dataset="geo-glue", a="bm25", q="no-such-query")
    no_exception(bad)
    assert _shown_query(bad) is None
    assert len(bad.warning) == 1


def test_filters_matching_nothing_show_info():
    at = open_page(PAGE, dataset="beijing", a="bm25", missing="1", tie_only="1")
    no_exception(at)
    assert not [d for d in at.dataframe if d.key == "failures"]
    assert any("No query matches" in i.value for i in at.info)


def test_invalid_url_values_fall_back_to_defaults():
    at = open_page(PAGE, dataset="geo-glue", max="2", slice="nope", values="x", top="0",
                   tie_only="maybe")  # fmt: skip
    no_exception(at)
    assert at.select_slider(key="queries_max").value == 1.0
    assert at.selectbox(key="queries_slice").value == "(none)"
    assert at.multiselect(key="queries_values").value == []
    assert not at.checkbox(key="queries_tie_only").value
    assert _param(at, "max") is None
    assert _param(at, "slice") is None
