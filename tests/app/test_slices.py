"""AppTest: the Slices page (mean per slice with CIs, heatmap, worst slices) on the demo."""

from __future__ import annotations

import base64
import json
import re

import numpy as np
import pytest

from analysis.stats import NGOLD_BUCKETS
from tests.app.conftest import (
    export_button,
    make_wide_bundle,
    no_exception,
    open_expander,
    open_page,
)

PAGE = "1_Slices.py"


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
    (``"means"``, drawn once its expander is opened: opened here when it is not yet);
    AppTest does not expose a dataframe's key."""
    for attempt in range(2):
        for element in at.dataframe:
            frame = element.value
            if ("gap" in frame.columns) == (which == "worst"):
                return frame
        if which == "worst" or attempt:
            break
        open_expander(at, "slices_table_open")
    raise AssertionError(f"no {which} table on the page")


def _param(at, name: str) -> str:
    value = at.query_params[name]
    return value[0] if isinstance(value, list) else value


def _wide(tmp_path, monkeypatch, **params):
    monkeypatch.setenv("RETRIEVAL_DASHBOARD_DATA_ROOTS", str(make_wide_bundle(tmp_path)))
    return open_page(PAGE, **params)


def test_renders_on_demo_with_horizontal_bars_heatmap_and_worst_table(shared_demo_root):
    at = open_page(PAGE)
    no_exception(at)
    assert not at.warning
    assert at.selectbox(key="slices_column").value == "query_type"
    figs = _figures(at)
    bars = figs["bars"]
    names = [t["name"] for t in bars["data"]]
    assert names == ["bm25-kb-propagation", "bm25", "char-ngram-tfidf"]
    assert all(t["orientation"] == "h" and "error_x" in t for t in bars["data"])
    assert len({t["marker"]["color"] for t in bars["data"]}) == 3
    heat = figs["heatmap"]["data"][0]
    assert heat["colorscale"][0][1] != "rgb(165,0,38)"  # not RdYlGn
    z = [v for row in _array(heat["z"]) for v in row if v is not None]
    assert heat["zmin"] == pytest.approx(min(z))
    assert heat["zmax"] == pytest.approx(max(z))
    worst = _frame(at, "worst")
    assert len(worst) > 3
    assert worst["gap"].is_monotonic_increasing
    assert (worst["n"] >= 10).all()


def test_changing_slice_column_changes_chart_and_url(shared_demo_root):
    at = open_page(PAGE)
    at.selectbox(key="slices_column").select("n_gold_bucket").run()
    no_exception(at)
    bars = _figures(at)["bars"]
    shown = bars["layout"]["yaxis"]["categoryarray"]
    assert shown == [b for b in NGOLD_BUCKETS if b in shown]
    assert _param(at, "slice") == "n_gold_bucket"


def test_distance_buckets_in_numeric_order(shared_demo_root):
    at = open_page(PAGE, dataset="beijing", slice="dist_gold_bucket")
    no_exception(at)
    order = _figures(at)["bars"]["layout"]["yaxis"]["categoryarray"]
    known = [b for b in ("<0.5 km", "0.5–2 km", "2–5 km", ">5 km") if b in order]
    assert [b for b in order if b in known] == known
    assert len(known) >= 2


def test_changing_metric_changes_means(shared_demo_root):
    at = open_page(PAGE)
    before = _frame(at, "means")
    at.selectbox(key="w_metric").select("mrr").run()
    no_exception(at)
    after = _frame(at, "means")
    assert "mrr" in _figures(at)["bars"]["data"][0]["hovertemplate"]
    assert before[["model", "value"]].equals(after[["model", "value"]])
    assert not np.allclose(before["mean"], after["mean"])


def test_narrowing_models_changes_traces_and_url(shared_demo_root):
    at = open_page(PAGE)
    at.multiselect(key="slices_models").set_value(["bm25", "char-ngram-tfidf"]).run()
    no_exception(at)
    assert [t["name"] for t in _figures(at)["bars"]["data"]] == ["bm25", "char-ngram-tfidf"]
    assert _figures(at)["heatmap"]["data"][0]["x"] == ["bm25", "char-ngram-tfidf"]
    assert _param(at, "models") == "bm25,char-ngram-tfidf"


def test_min_slice_size_applies_to_every_chart_and_table(shared_demo_root):
    at = open_page(PAGE, slice="n_gold_bucket")
    at.number_input(key="slices_min_n").set_value(100).run()
    no_exception(at)
    assert (_frame(at, "worst")["n"] >= 100).all()
    means = _frame(at, "means")
    assert (means["n"] >= 100).all()
    assert _param(at, "min_n") == "100"


def test_a_minimum_no_slice_reaches_says_the_largest_slice_and_what_to_do(shared_demo_root):
    at = open_page(PAGE, slice="n_gold_bucket", min_n="100000")
    no_exception(at)
    assert not at.get("plotly_chart")
    infos = [re.sub(r"\\(.)", r"\1", i.value) for i in at.info]  # Markdown escapes undone
    charts = next(i for i in infos if i.startswith("No slice of n_gold_bucket has"))
    worst = next(i for i in infos if i.startswith("No slice has at least"))
    for text in (charts, worst):
        assert "at least 100,000 queries (the largest has " in text
        largest = int(text.split("(the largest has ")[1].split(")")[0].replace(",", ""))
        assert 1 <= largest < 100_000
        assert f"Set Minimum slice size to {largest:,} or less" in text


def test_sixty_value_column_top_n_other_and_wrapped_labels(tmp_path, monkeypatch):
    at = _wide(tmp_path, monkeypatch, slice="metapath")
    no_exception(at)
    bars = _figures(at)["bars"]
    order = bars["layout"]["yaxis"]["categoryarray"]
    assert len(order) == 16  # top 15 + "(other)"
    assert order[-1].startswith("(other) 45 values")
    assert all("<br>" in label for label in order[:-1])  # long labels wrapped
    assert "(cites; written by)" in str(bars["data"][0]["customdata"])  # full text on hover
    assert bars["layout"]["height"] >= 400
    means = _frame(at, "means")
    assert (means["n"] >= 10).all()
    other = means[means["value"].str.startswith("(other)")]
    assert (other["n"] > 30).all()


def test_sort_by_value_puts_lowest_first(tmp_path, monkeypatch):
    at = _wide(tmp_path, monkeypatch, slice="metapath", sort="value", top="60", min_n="2")
    no_exception(at)
    means = _frame(at, "means")
    assert means["value"].nunique() == 60
    order = _figures(at)["bars"]["layout"]["yaxis"]["categoryarray"]
    assert len(order) == 60
    first_model = means[means["model"] == "mor"].set_index("value")["mean"]
    values = first_model.sort_values(kind="stable").to_numpy()
    assert values[0] <= values[-1]
    heat = _figures(at)["heatmap"]["data"][0]
    assert len(heat["y"]) == 60


def test_permalink_reopens_same_selections(shared_demo_root):
    at = open_page(
        PAGE, slice="n_gold_bucket", metric="recall@20", a="bm25",
        models="bm25,bm25-kb-propagation", min_n="20", sort="size", top="3",
    )  # fmt: skip
    no_exception(at)
    assert at.selectbox(key="slices_column").value == "n_gold_bucket"
    assert at.selectbox(key="w_metric").value == "recall@20"
    assert at.multiselect(key="slices_models").value == ["bm25-kb-propagation", "bm25"]
    assert at.number_input(key="slices_min_n").value == 20
    assert at.number_input(key="slices_top").value == 3
    assert at.selectbox(key="slices_sort").value == "size"
    table = _frame(at, "means")
    sizes = table.groupby("value")["n"].max()
    order = _figures(at)["bars"]["layout"]["yaxis"]["categoryarray"]
    plain = [v for v in order if not v.startswith("(")]
    assert [sizes[v] for v in plain] == sorted(sizes[plain], reverse=True)


def test_a_link_keeps_a_model_whose_name_holds_a_comma(roots):
    """Model names come from run file names, which may hold commas (``bm25,k1=0.9.run``): a
    ``models`` link naming one opens with it chosen."""
    ds = roots / "b" / "web"
    (ds / "runs").mkdir(parents=True)
    (ds / "qrels.txt").write_text("".join(f"q{q} 0 g{q} 1\n" for q in range(20)))
    for i, name in enumerate(["bm25,k1=0.9", "dense", "late"]):
        hits = "".join(f"q{q} Q0 {'g' if (q + i) % 3 else 'x'}{q} 1 1 t\n" for q in range(20))
        (ds / "runs" / f"{name}.run").write_text(hits)
    (roots / "b" / "bundle.toml").write_text(
        'name = "b"\n[datasets.web]\nqrels = "web/qrels.txt"\nruns = "web/runs"\n'
    )
    at = open_page(PAGE, models="bm25,k1=0.9,late")
    no_exception(at)
    assert at.multiselect(key="slices_models").value == ["bm25,k1=0.9", "late"]


def test_invalid_local_params_fall_back(shared_demo_root):
    at = open_page(PAGE, slice="no-such-column", models="nobody", min_n="-3", sort="x")
    no_exception(at)
    assert at.selectbox(key="slices_column").value == "query_type"
    assert len(at.multiselect(key="slices_models").value) == 3
    assert at.number_input(key="slices_min_n").value == 10
    assert at.selectbox(key="slices_sort").value == "natural"


def test_no_model_selected_shows_info(shared_demo_root):
    at = open_page(PAGE)
    at.multiselect(key="slices_models").set_value([]).run()
    no_exception(at)
    assert any("at least one model" in i.value for i in at.info)
    assert not at.get("plotly_chart")
    assert len(_frame(at, "worst")) > 0  # model A's table is still shown


def test_every_run_sends_the_browser_the_kept_controls(shared_demo_root):
    """A browser that re-creates a control (after a fragment's or a placeholder's rerun) builds
    it from what the run sent: each run after the first, here the one of an export click, must
    send the kept value of every control, not leave the browser the widget's own default (an
    empty Models list, Top N = 1)."""
    at = open_page(PAGE, models="bm25", min_n="20", sort="size", top="3")
    export_button(at, "slices_bars").click().run()
    no_exception(at)
    controls = {
        "slices_column": at.selectbox(key="slices_column"),
        "slices_models": at.multiselect(key="slices_models"),
        "slices_sort": at.selectbox(key="slices_sort"),
        "slices_top": at.number_input(key="slices_top"),
        "slices_min_n": at.number_input(key="slices_min_n"),
    }
    assert {k: w.proto.set_value for k, w in controls.items()} == dict.fromkeys(controls, True)
    assert list(controls["slices_models"].proto.raw_values) == ["bm25"]
    assert controls["slices_top"].proto.value == 3
    assert controls["slices_min_n"].proto.value == 20
    assert _param(at, "top") == "3"
    assert _param(at, "models") == "bm25"
