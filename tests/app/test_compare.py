"""AppTest: the Compare page (model A against model B) on the demo bundle."""

from __future__ import annotations

import dataclasses
import json

import pandas as pd
import pytest

import ui.state as ui_state
from tests.app.conftest import no_exception, open_expander, open_page

#: every test only reads the demo bundle: they share Streamlit's caches (shared_demo_root)
pytestmark = pytest.mark.usefixtures("shared_demo_root")

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


def test_renders_summary_charts_and_tables_on_one_dataset():
    at = open_page(PAGE)
    no_exception(at)
    metrics = _metrics(at)
    assert metrics["Paired queries"] == "420"  # stark-amazon only: nothing pooled
    wins, ties, losses = (int(v) for v in metrics["Win / tie / loss (A)"].split(" / "))
    assert wins + ties + losses == 420
    for label in ("p (paired t-test)", "p (Wilcoxon)", "p (randomization)", "Effect size d_z"):
        assert metrics[label]
    assert all(m.help for m in at.metric)
    charts = _charts(at)
    assert sum(len(t["customdata"]) for t in charts["scatter"]["data"]) == 420
    bars = charts["hist"]["data"][0]  # hit@1: three bars (-1, 0, +1)
    assert [(bar[1], bar[3]) for bar in bars["customdata"]] == [
        (-1.0, losses), (0.0, ties), (1.0, wins)
    ]  # fmt: skip
    assert "#2166AC" in bars["marker"]["color"]  # blue, not green
    assert (_frame(at, "wins")["delta"] > 0).all()
    assert (_frame(at, "losses")["delta"] < 0).all()
    slices = _frame_with(at, "p_holm")
    assert slices.loc[0, "n"] == 420
    assert set(slices["slice"]) == {"all", "query_type"}


def test_most_different_rankings_need_no_qrels_and_open_a_query():
    at = open_page(PAGE)
    assert not [d for d in at.dataframe if d.key == "different"]  # drawn when opened
    open_expander(at, "cmp_different_open")
    different = _frame(at, "different")
    assert len(different) == 50
    assert different["jaccard"].is_monotonic_increasing
    assert different["jaccard"].between(0, 1).all()
    at.session_state["different"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    no_exception(at)
    assert _param(at, "q") == different.loc[0, "query_id"]
    at.selectbox(key="cmp_overlap_k").select(20).run()
    assert _param(at, "overlap_k") == "20"
    assert at.session_state["cmp_different_open"]  # still open
    assert any("lowest Jaccard@20" in c.value for c in at.caption)


def test_gold_rank_transition_and_query_delta_rank_chart():
    at = open_page(PAGE)
    top = _frame(at, "wins").iloc[0]
    at = open_page(PAGE, q=top["query_id"], qd=top["dataset"])
    no_exception(at)
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert not [s for s in specs if s["data"][0]["type"] == "heatmap"]  # drawn when opened
    open_expander(at, "cmp_transition_open")
    no_exception(at)
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    heat = next(s for s in specs if s["data"][0]["type"] == "heatmap")
    assert heat["data"][0]["y"][0] == "1"
    assert heat["data"][0]["x"][-1] == "not retrieved"
    lines = next(s for s in specs if s["data"][0].get("mode") == "lines+markers")
    assert len(lines["data"]) == int(_frame_with(at, "relevance").shape[0])


def test_changing_model_b_and_metric_changes_the_summary():
    at = open_page(PAGE)
    before = _metrics(at)
    at.selectbox(key="w_model_b").select("char-ngram-tfidf").run()
    no_exception(at)
    after_b = _metrics(at)
    assert _param(at, "b") == "char-ngram-tfidf"
    assert after_b["Mean A"] == before["Mean A"]
    assert after_b["Mean B"] != before["Mean B"]
    at.selectbox(key="w_metric").select("mrr").run()
    no_exception(at)
    assert _metrics(at)["Mean A"] != after_b["Mean A"]
    assert any("metric: mrr" in t for t in _texts(at))


def test_permalink_shows_both_rankings_of_the_query():
    at = open_page(PAGE)
    top = _frame(at, "wins").iloc[0]
    dataset, query_id = top["dataset"], top["query_id"]
    at = open_page(PAGE, q=query_id, qd=dataset)
    no_exception(at)
    assert f"query id: {query_id}" in _texts(at)
    both = _side_by_side(at)
    assert list(both["rank"]) == list(range(1, 21))
    assert "bm25: name" in both.columns
    first = int(top["rank_a"])
    if first <= 20:
        assert bool(both.loc[both["rank"] == first, "bm25-kb-propagation: gold"].iloc[0])
    gold = _frame_with(at, "relevance")
    assert gold["rank_a"].min() == first
    ring = _charts(at)["scatter"]["data"][-1]
    assert ring["name"] == "selected query"
    assert ring["customdata"] == [[dataset, query_id]]


def _frame_with(at, column: str) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_scatter_click_opens_the_query_and_writes_the_url():
    at = open_page(PAGE, dataset="stark-mag")
    point = {"curve_number": 0, "point_index": 3, "customdata": ["stark-mag", "7"]}
    event = {"selection": {"points": [point], "point_indices": [3], "box": [], "lasso": []}}
    at.session_state["scatter"] = event
    at.run()
    no_exception(at)
    assert _param(at, "q") == "7"
    assert _param(at, "qd") == "stark-mag"
    assert "query id: 7" in _texts(at)
    losses = _frame(at, "losses")
    at.session_state["losses"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    assert _param(at, "q") == losses.loc[0, "query_id"]
    at.button(key="close_query").click().run()
    no_exception(at)
    assert _param(at, "q") is None
    assert not any(t.startswith("query id: ") for t in _texts(at))
    names = [t.get("name") for t in _charts(at)["scatter"]["data"]]
    assert "selected query" not in names  # the cached figure of no selection: no ring


def _outlined(at) -> list[int]:
    """The bins of the delta histogram drawn with the selection outline."""
    bars = _charts(at)["hist"]["data"][0]
    widths = bars["marker"]["line"]["width"]
    return [int(c[0]) for c, w in zip(bars["customdata"], widths, strict=True) if w]


def test_cached_histogram_outlines_the_bar_selected_now():
    """The histogram is cached per selected bar: the outline follows each new selection, and
    returning to a bar shows that bar's outline again."""
    at = open_page(PAGE)
    assert _outlined(at) == []
    for chosen in (2, 0, 2):
        points = [{"customdata": [chosen]}]
        at.session_state["delta_hist"] = {
            "selection": {"points": points, "point_indices": [], "box": [], "lasso": []}
        }
        at.run()
        no_exception(at)
        assert _outlined(at) == [chosen]
    at.button(key="clear_bin").click().run()
    assert _outlined(at) == []


def test_histogram_bar_lists_its_queries():
    at = open_page(PAGE, bin="0")  # the most negative bar: B better
    no_exception(at)
    rows = _frame(at, "bin_queries")
    assert len(rows) > 0
    assert (rows["delta"] == -1).all()  # hit@1: one bar per delta value
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
    at.selectbox(key="cmp_slice").select("all").run()
    no_exception(at)
    assert _param(at, "slice") == "all"
    slices = _frame_with(at, "p_holm")
    assert {"query_type", "n_gold_bucket"} <= set(slices["slice"])
    assert "dataset" not in set(slices["slice"])
    assert (slices["p_holm"] >= slices["p_randomization"] - 1e-12).all()


def test_invalid_local_params_fall_back():
    at = open_page(PAGE, q="no-such-query", bin="999", slice="nope", overlap_k="7")
    no_exception(at)
    assert any("not among the queries" in w.value for w in at.warning)
    assert _param(at, "q") is None
    assert _param(at, "bin") is None
    assert at.selectbox(key="cmp_slice").value == "query_type"
    assert open_expander(at, "cmp_different_open").selectbox(key="cmp_overlap_k").value == 10


def test_a_bin_that_is_no_plain_number_is_ignored():
    """``bin=²`` (a digit to ``str.isdigit``, not to ``int``) and a 5,000-digit bin (past
    Python's integer-text limit) open the page without a bar, like any other unknown bin."""
    for raw in ("\u00b2", "9" * 5000):
        at = open_page(PAGE, bin=raw)
        no_exception(at)
        assert not [d for d in at.dataframe if d.key == "bin_queries"]


def test_single_model_shows_info(monkeypatch):
    real = ui_state.sidebar
    monkeypatch.setattr(ui_state, "sidebar", lambda: dataclasses.replace(real(), model_b=None))
    at = open_page(PAGE)
    no_exception(at)
    assert any("Choose a model B in the sidebar" in i.value for i in at.info)
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
