"""Tests for analysis.present.slicing: slice labels and order, per-slice means with CIs, heatmap
matrices, figures and the worst-slices table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.present.notices import no_slice_message, one_model_message
from analysis.present.slicing import (
    SUMMARY_COLUMNS,
    WORST_COLUMNS,
    axis_labels,
    default_slice_column,
    heat_range,
    heatmap_frames,
    largest_slice,
    order_slice_values,
    plotly_text,
    slice_bar_figure,
    slice_heatmap_figure,
    slice_labels,
    slice_order,
    slice_summary,
    sort_slice_rows,
    worst_slices,
    wrap_label,
)
from analysis.stats import NGOLD_BUCKETS, bootstrap_ci, slice_finder
from analysis.stats.perquery import query_lengths

B = 2_000  # bootstrap resamples in tests (the statistics module tests the kernel itself)


def _table(seed: int = 0, n: int = 120) -> pd.DataFrame:
    """Two models on the same n queries, plus a third model on the first half only."""
    rng = np.random.default_rng(seed)
    qids = [f"q{i:03d}" for i in range(n)]
    kind = np.where(np.arange(n) % 3 == 0, "human", "synthesized")
    bucket = np.array(["1", "2–5", "6–20", ">20"])[np.arange(n) % 4]
    region = np.where(np.arange(n) % 5 == 0, None, np.where(np.arange(n) % 2, "north", "south"))
    frames = []
    for model, shift, rows in (("m1", 0.0, n), ("m2", 0.2, n), ("m3", 0.1, n // 2)):
        base = np.clip(rng.random(n) * 0.8 + shift, 0, 1)
        frames.append(
            pd.DataFrame(
                {
                    "dataset": "ds",
                    "model": model,
                    "query_id": qids,
                    "score": base,
                    "query_type": kind,
                    "n_gold_bucket": bucket,
                    "region": region,
                }
            ).iloc[:rows]
        )
    return pd.concat(frames, ignore_index=True)


# --------------------------------------------------------------------------- labels and order


def test_plotly_text_escapes_tags_but_keeps_greater_than():
    assert plotly_text("<b>x</b> & y") == "&lt;b>x&lt;/b> &amp; y"
    assert plotly_text(">20") == ">20"
    assert plotly_text(7) == "7"


def test_slice_labels_missing_and_integer_floats():
    s = pd.Series([2.0, np.nan, 3.5], name="k")
    assert slice_labels(s).tolist() == ["2", "(missing)", "3.5"]
    t = pd.Series(["a", None, "b"], dtype="object")
    out = slice_labels(t)
    assert out.tolist() == ["a", "(missing)", "b"]
    assert out.index.equals(t.index)
    assert slice_labels(pd.Series([True, False])).tolist() == ["True", "False"]


def test_order_of_answer_set_buckets_and_ranges():
    assert order_slice_values(reversed(NGOLD_BUCKETS)) == list(NGOLD_BUCKETS)
    assert order_slice_values(["10–15", "6–9", "16–17", "18–31"]) == [
        "6–9",
        "10–15",
        "16–17",
        "18–31",
    ]
    assert order_slice_values(["[0.5, 2.3]", "[0.1, 0.5)"]) == ["[0.1, 0.5)", "[0.5, 2.3]"]


def test_order_puts_text_after_numbers_and_missing_last():
    labels = ["(missing)", "beta", "Alpha", "3", "1", "beta"]
    assert order_slice_values(labels) == ["1", "3", "Alpha", "beta", "(missing)"]


def test_default_slice_column_skips_constant_columns():
    table = _table()
    assert default_slice_column(table, ["dataset", "query_type"]) == "query_type"
    assert default_slice_column(table, ["dataset"]) == "dataset"
    assert default_slice_column(table, []) is None
    half = table.assign(tag=np.where(table.index < 5, "x", None))
    assert default_slice_column(half, ["dataset", "tag"]) == "tag"  # missing is its own slice


# --------------------------------------------------------------------------- slice_summary


def test_slice_summary_means_n_and_ci_match_bootstrap():
    table = _table()
    out = slice_summary(table, "score", "query_type", n_resamples=B, seed=3)
    assert tuple(out.columns) == SUMMARY_COLUMNS
    assert set(out["model"]) == {"m1", "m2", "m3"}
    for row in out.itertuples():
        values = table.loc[
            (table["model"] == row.model) & (table["query_type"] == row.value), "score"
        ]
        assert row.n == len(values)
        assert row.mean == pytest.approx(values.mean())
        low, high = bootstrap_ci(values.to_numpy(), n_resamples=B, seed=3)
        assert (row.ci_low, row.ci_high) == pytest.approx((low, high))
        assert row.ci_low <= row.mean <= row.ci_high


def test_slice_summary_orders_values_then_models():
    table = _table()
    out = slice_summary(table, "score", "n_gold_bucket", ["m2", "m1"], n_resamples=B)
    assert list(dict.fromkeys(out["value"])) == ["1", "2–5", "6–20", ">20"]
    assert out["model"].tolist()[:2] == ["m2", "m1"]
    assert "m3" not in set(out["model"])


def test_slice_summary_missing_values_form_their_own_slice():
    out = slice_summary(_table(), "score", "region", ["m1"], n_resamples=B)
    assert out["value"].tolist() == ["north", "south", "(missing)"]
    assert out["n"].tolist() == [48, 48, 24]


def test_slice_summary_drops_nan_metric_rows():
    table = _table()
    table.loc[0:9, "score"] = np.nan  # m1, first ten queries
    out = slice_summary(table, "score", "query_type", ["m1"], n_resamples=B)
    assert out["n"].sum() == 110
    assert np.isfinite(out["mean"]).all()


def test_slice_summary_empty_and_errors():
    table = _table()
    empty = slice_summary(table, "score", "query_type", ["nobody"], n_resamples=B)
    assert empty.empty
    assert tuple(empty.columns) == SUMMARY_COLUMNS
    with pytest.raises(ValueError, match="nope"):
        slice_summary(table, "score", "nope")
    with pytest.raises(ValueError, match="no_metric"):
        slice_summary(table, "no_metric", "query_type")


# --------------------------------------------------------------------------- heatmap


def test_heatmap_frames_models_by_values_with_gaps():
    table = _table()
    table = table.loc[~((table["model"] == "m3") & (table["n_gold_bucket"] == ">20"))]
    summary = slice_summary(table, "score", "n_gold_bucket", n_resamples=B)
    frames = heatmap_frames(summary, ["m3", "m1", "m2"])
    mean = frames["mean"]
    assert mean.index.tolist() == ["m3", "m1", "m2"]
    assert mean.columns.tolist() == ["1", "2–5", "6–20", ">20"]
    assert np.isnan(mean.loc["m3", ">20"])
    assert frames["n"].loc["m3", ">20"] == 0
    assert frames["n"].loc["m1", "1"] == 30
    expected = table.loc[(table["model"] == "m2") & (table["n_gold_bucket"] == "1"), "score"]
    assert mean.loc["m2", "1"] == pytest.approx(expected.mean())


# --------------------------------------------------------------------------- figures


def test_bar_figure_horizontal_one_trace_per_model_with_ci_error_bars():
    summary = slice_summary(_table(), "score", "n_gold_bucket", ["m1", "m2"], n_resamples=B)
    fig = slice_bar_figure(summary, "score", "n_gold_bucket")
    assert [t.name for t in fig.data] == ["m1", "m2"]
    assert fig.layout.barmode == "group"
    assert all(t.orientation == "h" for t in fig.data)
    assert list(fig.layout.yaxis.categoryarray) == ["1", "2–5", "6–20", ">20"]
    assert fig.layout.yaxis.autorange == "reversed"  # first value on top
    m2 = summary.loc[summary["model"] == "m2"]
    trace = fig.data[1]
    np.testing.assert_allclose(trace.x, m2["mean"])
    np.testing.assert_allclose(trace.error_x.array, m2["ci_high"] - m2["mean"])
    np.testing.assert_allclose(trace.error_x.arrayminus, m2["mean"] - m2["ci_low"])
    np.testing.assert_allclose(np.asarray(trace.customdata)[:, 0].astype(float), m2["n"])
    assert "n = " in trace.hovertemplate
    assert "score" in trace.hovertemplate
    assert fig.data[0].marker.color != fig.data[1].marker.color
    reordered = slice_bar_figure(summary, "score", "n_gold_bucket", ["m2", "absent", "m1"])
    assert [t.name for t in reordered.data] == ["m2", "m1"]


def test_figures_escape_data_text():
    table = _table()
    table["model"] = table["model"].replace({"m1": "<b>evil</b>"})
    table["query_type"] = table["query_type"].replace({"human": "<i>h</i>"})
    summary = slice_summary(table, "score", "query_type", n_resamples=B)
    bar = slice_bar_figure(summary, "score", "<col>")
    assert bar.data[0].name == "&lt;b>evil&lt;/b>"
    assert "&lt;i>h&lt;/i>" in bar.data[0].y
    assert "<col>" not in bar.data[0].hovertemplate
    heat = slice_heatmap_figure(summary, "score", "<col>")
    assert "&lt;b>evil&lt;/b>" in heat.data[0].x
    assert all("<i>" not in str(v) for v in heat.data[0].y)


def test_heatmap_rows_are_slices_and_scale_fits_the_data():
    summary = slice_summary(_table(), "score", "query_type", n_resamples=B)
    fig = slice_heatmap_figure(summary, "score", "query_type")
    heat = fig.data[0]
    frames = heatmap_frames(summary)
    np.testing.assert_allclose(np.asarray(heat.z), frames["mean"].to_numpy().T)
    assert list(heat.y) == ["human", "synthesized"]
    assert list(heat.x) == ["m1", "m2", "m3"]
    z = frames["mean"].to_numpy()
    assert heat.zmin == pytest.approx(z.min())
    assert heat.zmax == pytest.approx(z.max())
    assert np.asarray(heat.customdata).shape == (2, 3, 4)
    assert "customdata[0]" in heat.hovertemplate
    assert heat_range(np.array([0.5, np.nan])) == (0.45, 0.55)


def test_top_values_gather_the_rest_into_other_with_pooled_mean():
    rows = pd.DataFrame(
        {
            "dataset": "d",
            "query_id": [f"q{i}" for i in range(10)],
            "model": "m",
            "v": ["a"] * 4 + ["b"] * 3 + ["c"] * 2 + ["d"],
            "score": [1.0] * 4 + [0.0] * 3 + [1.0, 0.0, 1.0],
        }
    )
    out = slice_summary(rows, "score", "v", top_n=2, n_resamples=B)
    assert list(out["value"]) == ["a", "b", "(other) 2 values"]
    other = out.iloc[2]
    assert other["n"] == 3
    assert other["mean"] == pytest.approx(2 / 3)  # pooled over queries, not a mean of means
    small = slice_summary(rows, "score", "v", top_n=2, min_size=4, n_resamples=B)
    assert list(small["value"]) == ["a"]
    assert slice_summary(rows, "score", "v", top_n=3, n_resamples=B)["value"].nunique() == 4


def test_slice_order_by_size_value_and_natural():
    summary = pd.DataFrame(
        {
            "model": "m",
            "value": ["0.5–2 km", "<0.5 km", ">5 km", "(missing)"],
            "n": [5, 50, 10, 99],
            "mean": [0.9, 0.2, 0.5, 0.0],
            "ci_low": 0.0,
            "ci_high": 1.0,
        }
    )
    assert slice_order(summary) == ["<0.5 km", "0.5–2 km", ">5 km", "(missing)"]
    assert slice_order(summary, "size") == ["<0.5 km", ">5 km", "0.5–2 km", "(missing)"]
    assert slice_order(summary, "value") == ["<0.5 km", ">5 km", "0.5–2 km", "(missing)"]
    with pytest.raises(ValueError, match="sort"):
        slice_order(summary, "nope")


def test_missing_like_values_are_one_slice():
    labels = slice_labels(pd.Series(["x", "none", "", None, " "]))
    assert list(labels) == ["x"] + ["(missing)"] * 4


def test_wrap_label_wraps_escapes_and_cuts():
    text = "paper -> author -> institution -> paper -> field of study -> paper <b>"
    out = wrap_label(text, width=20, max_lines=2)
    assert out.count("<br>") == 1
    assert out.endswith("…")
    assert "<b>" not in out
    assert wrap_label("北京市海淀区中关村大街一号", width=5).count("<br>") == 2
    assert len(set(axis_labels([text, text + " x"]))) == 2


def test_axis_labels_stay_unique_when_a_value_looks_like_a_numbered_label():
    values = ["x (2)", "x", "x", "a  b", "a b"]
    labels = axis_labels(values)
    assert len(set(labels)) == len(values)
    assert labels[:2] == ["x (2)", "x"]


def test_query_length_in_characters_for_cjk_text():
    cjk = pd.DataFrame({"text": ["北京 咖啡馆", "上海市浦东新区 银行"]})
    lengths, unit = query_lengths(cjk)
    assert unit == "characters"
    assert list(lengths) == [5, 9]
    latin = pd.DataFrame({"text": ["red shoes for running", "lamp"]})
    lengths, unit = query_lengths(latin)
    assert (unit, list(lengths)) == ("words", [4, 1])
    given = pd.DataFrame({"text": ["a b"], "query_chars": [12]})
    assert query_lengths(given)[0].tolist() == [12]


# --------------------------------------------------------------------------- worst_slices


def test_worst_slices_matches_slice_finder_and_sorts_by_gap():
    table = _table()
    cols = ["query_type", "n_gold_bucket"]
    out = worst_slices(table, "score", "m1", cols, min_size=5, n_resamples=B, seed=1)
    ref = slice_finder(table, "score", "m1", cols, min_size=5, n_resamples=B, seed=1)
    assert tuple(out.columns) == WORST_COLUMNS
    pd.testing.assert_frame_equal(out.reset_index(drop=True), ref[list(WORST_COLUMNS)])
    assert out["gap"].is_monotonic_increasing
    overall = table.loc[table["model"] == "m1", "score"].mean()
    assert out["overall"].iloc[0] == pytest.approx(overall)
    assert len(out) == 2 + 4


def test_worst_slices_min_size_and_missing_values():
    table = _table()
    out = worst_slices(table, "score", "m1", ["region"], min_size=30, n_resamples=B)
    assert set(out["value"]) == {"north", "south"}  # "(missing)" has 24 queries
    out = worst_slices(table, "score", "m1", ["region"], min_size=1, n_resamples=B)
    assert "(missing)" in set(out["value"])
    assert (out["n"] >= 1).all()


def test_worst_slices_empty_cases_and_errors():
    table = _table()
    for model, size in (("nobody", 1), ("m1", 1000)):
        out = worst_slices(table, "score", model, ["query_type"], min_size=size)
        assert out.empty
        assert tuple(out.columns) == WORST_COLUMNS
    assert worst_slices(table, "score", "m1", []).empty
    with pytest.raises(ValueError, match="min_size"):
        worst_slices(table, "score", "m1", ["query_type"], min_size=0)
    doubled = pd.concat([table, table[["dataset"]]], axis=1)
    with pytest.raises(ValueError, match="duplicated"):
        worst_slices(doubled, "score", "m1", ["query_type"])


def test_worst_slices_accepts_dataset_among_slice_columns():
    table = _table()
    other = table.assign(dataset="ds2", score=table["score"] * 0.5)
    both = pd.concat([table, other], ignore_index=True)
    out = worst_slices(both, "score", "m2", ["dataset", "query_type"], n_resamples=B)
    assert out.iloc[0]["slice"] == "dataset"
    assert out.iloc[0]["value"] == "ds2"
    assert bool(out.iloc[0]["below"])


def test_sort_slice_rows_puts_numeric_values_in_numeric_order():
    """Tables of slice values (oracle by slice, taxonomy by slice, A vs B per slice) list
    0, 1, 3, 10, 12 — not the text order 0, 1, 10, 12, 3 — per model and per slice column."""
    values = ["0", "1", "10", "12", "3", "(missing)"]
    frame = pd.DataFrame({"model": ["b"] * 6 + ["a"] * 6, "v": values * 2, "n": range(12)})
    out = sort_slice_rows(frame, "v", ["model"])
    assert out["model"].tolist() == ["b"] * 6 + ["a"] * 6  # models keep their order
    assert out["v"].tolist()[:6] == ["0", "1", "3", "10", "12", "(missing)"]
    comp = pd.DataFrame(
        {"slice": ["all", "len", "len", "len", "bucket", "bucket"],
         "value": ["all", "10–12 words", "6–9 words", "21–31 words", ">20", "1"]}
    )  # fmt: skip
    out = sort_slice_rows(comp, "value", within="slice")
    assert out["value"].tolist() == [
        "all", "6–9 words", "10–12 words", "21–31 words", "1", ">20",
    ]  # fmt: skip
    assert sort_slice_rows(comp.iloc[:0], "value").empty


def test_largest_slice_counts_one_models_scored_queries_per_value():
    table = pd.DataFrame(
        {"model": ["a"] * 5 + ["b"] * 3, "mrr": [1, np.nan, 0, 1, 1, 0, 0, 0],
         "c": ["x", "x", "y", "x", None, "x", "x", "x"]}
    )  # fmt: skip
    assert largest_slice(table, "mrr", ["a"], ["c"]) == 2  # the NaN row is no query of a slice
    assert largest_slice(table, "mrr", ["a", "b"], ["c"]) == 3  # per model, never summed
    assert largest_slice(table, "mrr", ["nobody"], ["c"]) == 0
    assert no_slice_message("c", 10, 3) == (
        "No slice of c has at least 10 queries (the largest has 3). Set Minimum slice size to 3 "
        "or less to see the slices."
    )
    assert no_slice_message(None, 10, 0).startswith("No slice has a query with a result")


def test_one_model_message_names_the_run_and_the_datasets_with_two():
    text = one_model_message("mag-human", ["ada-002"], ["mag-synth", "prime"])
    assert text.startswith("mag-human has only one run (ada-002), and this needs two")
    assert "The bundle's datasets with two runs or more: mag-synth and prime." in text
    assert "datasets with two runs" not in one_model_message("d", [], [])
    assert one_model_message("d", [], []).startswith("d has no run")
    assert one_model_message("d", ["a", "b"], []).startswith("Choose a model B in the sidebar")


def test_wrapped_labels_get_rows_tall_enough_not_to_overlap():
    """AvaTaR's sentence-long patterns wrap onto 3 lines: each row of the bars and of the
    heatmap is at least 3 lines tall, so neighbouring labels never overlap."""
    patterns = [
        f"Queries number {i} about genes and proteins leading to a disease" for i in range(14)
    ]
    rows = [{"model": "m", "value": v, "n": 5, "mean": 0.5, "ci_low": 0.4, "ci_high": 0.6}
            for v in patterns]  # fmt: skip
    summary = pd.DataFrame(rows)
    order = slice_order(summary)
    assert all(label.count("<br>") == 2 for label in axis_labels(order))  # 3 lines each
    bars = slice_bar_figure(summary, "mrr", "pattern", ["m"], order)
    heat = slice_heatmap_figure(summary, "mrr", "pattern", ["m"], order)
    for fig in (bars, heat):
        assert fig.layout.height >= 90 + 14 * (3 * 16 + 6)
    short = summary.assign(value=[f"p{i}" for i in range(14)])
    assert (
        slice_bar_figure(short, "mrr", "p", ["m"], slice_order(short)).layout.height == 90 + 14 * 24
    )
