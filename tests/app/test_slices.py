"""AppTest: the Slices page (mean per slice with CIs, heatmap, worst slices) on the demo."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest

from analysis.stats import NGOLD_BUCKETS
from tests.app.conftest import no_exception, open_page

PAGE = "1_Slices.py"
DEMO_DATASETS = {"stark-amazon", "stark-mag", "stark-prime", "beijing", "shanghai", "geo-glue"}


def _array(value: object) -> list:
    """A plotly JSON array: a plain list, or plotly's typed array ``{"dtype", "bdata"}``."""
    if isinstance(value, dict) and "bdata" in value:
        arr = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        if "shape" in value:
            shape = [int(s) for s in str(value["shape"]).split(",")]
            arr = arr.reshape(shape)
        return arr.tolist()
    return list(value)


def _figures(at) -> dict[str, dict]:
    """The page's plotly figures by widget key suffix (``bars``, ``heatmap``)."""
    out = {}
    for element in at.get("plotly_chart"):
        spec = json.loads(element.proto.spec)
        kind = "heatmap" if spec["data"][0]["type"] == "heatmap" else "bars"
        out[kind] = spec
    return out


def _frame(at, which: str):
    """The worst-slices table (``"worst"``, it has a ``gap`` column) or the table of slice means
    (``"means"``); AppTest does not expose a dataframe's key."""
    for element in at.dataframe:
        frame = element.value
        if ("gap" in frame.columns) == (which == "worst"):
            return frame
    raise AssertionError(f"no {which} table on the page")


def _param(at, name: str) -> str:
    value = at.query_params[name]
    return value[0] if isinstance(value, list) else value


def test_renders_on_demo_with_charts_and_worst_table():
    at = open_page(PAGE)
    no_exception(at)
    assert not at.warning
    assert at.selectbox(key="slices_column").value == "dataset"
    figs = _figures(at)
    bars = figs["bars"]
    names = [t["name"] for t in bars["data"]]
    assert names == ["bm25-kb-propagation", "bm25", "char-ngram-tfidf", "bm25-distance-fusion"]
    assert set().union(*(t["x"] for t in bars["data"])) == DEMO_DATASETS
    assert all("error_y" in t and "n = " in t["hovertemplate"] for t in bars["data"])
    heat = figs["heatmap"]["data"][0]
    assert len(heat["y"]) == 4
    assert set(heat["x"]) == DEMO_DATASETS
    worst = _frame(at, "worst")
    assert len(worst) > 5
    assert worst["gap"].is_monotonic_increasing
    assert (worst["n"] >= 10).all()
    assert _param(at, "slice") == "dataset"


def test_changing_slice_column_changes_chart_and_url():
    at = open_page(PAGE)
    at.selectbox(key="slices_column").select("n_gold_bucket").run()
    no_exception(at)
    bars = _figures(at)["bars"]
    assert bars["layout"]["xaxis"]["categoryarray"] == [b for b in NGOLD_BUCKETS if b != "0"]
    table = _frame(at, "means")
    assert set(table["value"]) == {"1", "2–5", "6–20", ">20"}
    assert _param(at, "slice") == "n_gold_bucket"


def test_changing_metric_changes_means():
    at = open_page(PAGE)
    before = _frame(at, "means")
    at.selectbox(key="w_measure").select("mrr").run()
    no_exception(at)
    after = _frame(at, "means")
    assert "mrr" in _figures(at)["bars"]["data"][0]["hovertemplate"]
    assert before[["model", "value"]].equals(after[["model", "value"]])
    assert not np.allclose(before["mean"], after["mean"])


def test_narrowing_models_changes_traces_and_url():
    at = open_page(PAGE)
    at.multiselect(key="slices_models").set_value(["bm25", "char-ngram-tfidf"]).run()
    no_exception(at)
    bars = _figures(at)["bars"]
    assert [t["name"] for t in bars["data"]] == ["bm25", "char-ngram-tfidf"]
    assert _figures(at)["heatmap"]["data"][0]["y"] == ["bm25", "char-ngram-tfidf"]
    assert _param(at, "models") == "bm25,char-ngram-tfidf"


def test_changing_model_a_changes_worst_slices():
    at = open_page(PAGE, a="bm25")
    before = _frame(at, "worst")
    at.selectbox(key="w_model_a").select("char-ngram-tfidf").run()
    no_exception(at)
    after = _frame(at, "worst")
    assert before["overall"].iloc[0] != after["overall"].iloc[0]


def test_min_slice_size_filters_worst_slices():
    at = open_page(PAGE)
    at.number_input(key="slices_min_n").set_value(500).run()
    no_exception(at)
    worst = _frame(at, "worst")
    assert (worst["n"] >= 500).all()
    assert _param(at, "min_n") == "500"


def test_permalink_reopens_same_selections():
    at = open_page(
        PAGE,
        slice="n_gold_bucket",
        metric="recall",
        k="20",
        a="bm25",
        models="bm25,bm25-kb-propagation",
        min_n="100",
    )
    no_exception(at)
    assert at.selectbox(key="slices_column").value == "n_gold_bucket"
    assert at.selectbox(key="w_measure").value == "recall"
    assert at.selectbox(key="w_k").value == 20
    assert at.selectbox(key="w_model_a").value == "bm25"
    assert at.multiselect(key="slices_models").value == ["bm25-kb-propagation", "bm25"]
    assert at.number_input(key="slices_min_n").value == 100
    bars = _figures(at)["bars"]
    assert "recall@20" in bars["data"][0]["hovertemplate"]
    assert [t["name"] for t in bars["data"]] == ["bm25-kb-propagation", "bm25"]
    table = _frame(at, "means")
    assert table["value"].drop_duplicates().tolist() == ["1", "2–5", "6–20", ">20"]
    worst = _frame(at, "worst")
    assert (worst["n"] >= 100).all()
    # model A's gap is measured against its own overall recall@20
    one = table.loc[table["model"] == "bm25"]
    overall = float((one["mean"] * one["n"]).sum() / one["n"].sum())
    assert worst["overall"].iloc[0] == pytest.approx(overall)


def test_invalid_local_params_fall_back():
    at = open_page(PAGE, slice="no-such-column", models="nobody", min_n="-3")
    no_exception(at)
    assert at.selectbox(key="slices_column").value == "dataset"
    assert len(at.multiselect(key="slices_models").value) == 4
    assert at.number_input(key="slices_min_n").value == 10


def test_clearing_datasets_shows_info():
    at = open_page(PAGE)
    at.multiselect(key="w_datasets").set_value([]).run()
    no_exception(at)
    assert any("at least one dataset" in i.value for i in at.info)
    assert not at.get("plotly_chart")
    assert not at.dataframe


def test_no_model_selected_shows_info():
    at = open_page(PAGE)
    at.multiselect(key="slices_models").set_value([]).run()
    no_exception(at)
    assert any("at least one model" in i.value for i in at.info)
    assert not at.get("plotly_chart")
    assert len(_frame(at, "worst")) > 0  # model A's table is still shown


def test_single_dataset_defaults_to_a_varied_column():
    at = open_page(PAGE, datasets="beijing")
    no_exception(at)
    column = at.selectbox(key="slices_column").value
    assert column != "dataset"
    bars = _figures(at)["bars"]
    assert len(bars["data"]) == 3
    assert len(bars["layout"]["xaxis"]["categoryarray"]) > 1
