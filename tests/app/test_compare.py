"""AppTest: the Compare page (model A against model B) on the demo bundle."""

from __future__ import annotations

import dataclasses
import json

import pandas as pd

import ui.state as ui_state
from tests.app.conftest import no_exception, open_page

PAGE = "3_Compare.py"


def _param(at, name: str) -> str | None:
    value = at.query_params.get(name)
    return value[0] if isinstance(value, list) else value


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _frame(at, key: str) -> pd.DataFrame:
    return next(d for d in at.dataframe if d.key == key).value


def _texts(at) -> list[str]:
    return [t.value for t in at.text]


def _charts(at) -> dict[str, dict]:
    """The Plotly specs of the page: scatter first, histogram second."""
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    return dict(zip(["scatter", "hist"], specs, strict=False))


def _side_by_side(at) -> pd.DataFrame:
    return next(
        d.value for d in at.dataframe if any(str(c).endswith(": gold") for c in d.value.columns)
    )


def test_renders_summary_charts_and_tables_on_demo():
    at = open_page(PAGE)
    no_exception(at)
    metrics = _metrics(at)
    # default A (bm25-kb-propagation) only has runs on the three STaRK datasets (420 queries)
    assert metrics["Paired queries"] == "1,260"
    assert any("Left out" in t and "beijing" in t for t in _texts(at))
    wins, ties, losses = (int(v) for v in metrics["Win / tie / loss (A)"].split(" / "))
    assert wins + ties + losses == 1260
    for label in ("p (paired t-test)", "p (Wilcoxon)", "p (randomization)", "Effect size d_z"):
        assert metrics[label]
    assert all(m.help for m in at.metric)  # every statistic explains itself on hover
    charts = _charts(at)
    assert {t["name"] for t in charts["scatter"]["data"]} == {
        "stark-amazon", "stark-mag", "stark-prime",
    }  # fmt: skip
    assert sum(len(t["customdata"]) for t in charts["scatter"]["data"]) == 1260
    # hit@10: three bars (-1, 0, +1) whose counts are the losses, ties and wins
    bars = charts["hist"]["data"][0]["customdata"]  # [bin, lo, hi, count, label]
    assert [(bar[1], bar[3]) for bar in bars] == [(-1.0, losses), (0.0, ties), (1.0, wins)]
    win_table = _frame(at, "wins")
    assert 0 < len(win_table) <= 10
    assert (win_table["delta"] > 0).all()
    assert (_frame(at, "losses")["delta"] < 0).all()
    slices = next(d.value for d in at.dataframe if "p_holm" in d.value.columns)
    assert slices.loc[0, "value"] == "all"
    assert slices.loc[0, "n"] == 1260
    assert set(slices["slice"]) == {"all", "dataset"}  # default: the dataset column


def test_changing_model_b_and_metric_changes_the_summary():
    at = open_page(PAGE)
    before = _metrics(at)
    at.selectbox(key="w_model_b").select("char-ngram-tfidf").run()
    no_exception(at)
    after_b = _metrics(at)
    assert _param(at, "b") == "char-ngram-tfidf"
    assert after_b["Mean A"] == before["Mean A"]
    assert after_b["Mean B"] != before["Mean B"]
    assert after_b["Delta (A − B)"] != before["Delta (A − B)"]
    at.selectbox(key="w_measure").select("mrr").run()
    no_exception(at)
    after_metric = _metrics(at)
    assert after_metric["Mean A"] != after_b["Mean A"]
    assert any("metric: mrr" in t for t in _texts(at))


def test_permalink_shows_both_rankings_of_the_query():
    at = open_page(PAGE)
    top = _frame(at, "wins").iloc[0]
    dataset, query_id = top["dataset"], top["query_id"]
    at = open_page(PAGE, q=query_id, qd=dataset)
    no_exception(at)
    assert f"dataset: {dataset}    query id: {query_id}" in _texts(at)
    both = _side_by_side(at)
    assert list(both["rank"]) == list(range(1, 21))
    assert "bm25-kb-propagation: name" in both.columns
    assert "bm25: name" in both.columns
    # A's first gold is marked at A's first-gold rank (a win, so A found a gold)
    first = int(top["rank_a"])
    if first <= 20:
        assert bool(both.loc[both["rank"] == first, "bm25-kb-propagation: gold"].iloc[0])
    gold = _frame_with(at, "relevance")
    assert len(gold) >= 1
    assert gold["rank_a"].min() == first
    # the scatter rings the query
    ring = _charts(at)["scatter"]["data"][-1]
    assert ring["name"] == "selected query"
    assert ring["customdata"] == [[dataset, query_id]]


def _frame_with(at, column: str) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_scatter_click_opens_the_query_and_writes_the_url():
    at = open_page(PAGE)
    point = {"curve_number": 1, "point_index": 3, "customdata": ["stark-mag", "7"]}
    event = {"selection": {"points": [point], "point_indices": [3], "box": [], "lasso": []}}
    at.session_state["scatter"] = event
    at.run()
    no_exception(at)
    assert _param(at, "q") == "7"
    assert _param(at, "qd") == "stark-mag"
    assert "dataset: stark-mag    query id: 7" in _texts(at)
    # a table row selected later replaces it; the scatter's held selection does not come back
    losses = _frame(at, "losses")
    at.session_state["losses"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    assert _param(at, "q") == losses.loc[0, "query_id"]
    assert _param(at, "qd") == losses.loc[0, "dataset"]
    at.button(key="close_query").click().run()
    no_exception(at)
    assert _param(at, "q") is None
    assert not any(t.startswith("dataset: ") for t in _texts(at))


def test_histogram_bar_lists_its_queries():
    at = open_page(PAGE, bin="0")  # the most negative bar: B better
    no_exception(at)
    rows = _frame(at, "bin_queries")
    assert len(rows) > 0
    assert (rows["delta"] < 0).all()
    assert (rows["delta"] == -1).all()  # hit@10: one bar per delta value
    points = [{"customdata": [2]}]
    at.session_state["delta_hist"] = {
        "selection": {"points": points, "point_indices": [], "box": [], "lasso": []}
    }
    at.run()
    assert _param(at, "bin") == "2"
    assert (_frame(at, "bin_queries")["delta"] > 0).all()


def test_slice_choice_lives_in_the_url():
    at = open_page(PAGE, slice="n_gold_bucket")
    no_exception(at)
    assert at.selectbox(key="cmp_slice").value == "n_gold_bucket"
    slices = _frame_with(at, "p_holm")
    assert set(slices["slice"]) == {"all", "n_gold_bucket"}
    at.selectbox(key="cmp_slice").select("all").run()
    no_exception(at)
    assert _param(at, "slice") == "all"
    slices = _frame_with(at, "p_holm")
    assert {"dataset", "query_type", "n_gold_bucket"} <= set(slices["slice"])
    assert (slices["p_holm"] >= slices["p_randomization"] - 1e-12).all()


def test_invalid_local_params_fall_back():
    at = open_page(PAGE, q="no-such-query", qd="stark-mag", bin="999", slice="nope")
    no_exception(at)
    assert any("not among the queries" in w.value for w in at.warning)
    assert _param(at, "q") is None
    assert _param(at, "bin") is None
    assert at.selectbox(key="cmp_slice").value == "dataset"


def test_models_without_a_common_dataset_show_info():
    at = open_page(PAGE, a="bm25-kb-propagation", b="bm25-distance-fusion")
    no_exception(at)
    assert any("No query is scored by both" in i.value for i in at.info)
    assert not at.get("plotly_chart")


def test_single_model_shows_info(monkeypatch):
    real = ui_state.sidebar
    monkeypatch.setattr(ui_state, "sidebar", lambda: dataclasses.replace(real(), model_b=None))
    at = open_page(PAGE)
    no_exception(at)
    assert any("needs two models" in i.value for i in at.info)
    assert not at.metric


def test_no_dataset_shows_info(monkeypatch):
    real = ui_state.sidebar

    def no_datasets() -> ui_state.Selection:
        return dataclasses.replace(real(), datasets=[], model_a=None, model_b=None)

    monkeypatch.setattr(ui_state, "sidebar", no_datasets)
    at = open_page(PAGE)
    no_exception(at)
    assert any("at least one dataset" in i.value for i in at.info)
    assert not at.dataframe
