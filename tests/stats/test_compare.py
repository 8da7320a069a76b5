"""Tests for analysis.present.compare: pairing, summary, tables, figures and selection mapping."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from analysis.present import compare
from analysis.stats import bootstrap_ci, compare_slices, paired_comparison


def _row(ds: str, model: str, qid: str, mrr: float, rank: float, text: str, kind: str) -> dict:
    return {"dataset": ds, "model": model, "query_id": qid, "mrr": mrr, "first_gold_rank": rank,
            "text": text, "n_gold": 2, "kind": kind}  # fmt: skip


def _table() -> pd.DataFrame:
    """Two models on two datasets; 'x' is only scored by A; 'n' has a NaN for B; d3 has no B."""
    values = {
        ("d1", "q1"): (1.0, 0.0),
        ("d1", "q2"): (0.5, 0.5),
        ("d1", "q3"): (0.0, 1.0),
        ("d1", "q4"): (1.0, 0.25),
        ("d2", "q1"): (0.2, 0.1),
        ("d2", "n"): (0.3, math.nan),
    }
    rows = []
    for (ds, qid), (a, b) in values.items():
        kind = "x" if ds == "d1" else "y"
        rows.append(_row(ds, "A", qid, a, 1.0 if a == 1 else math.nan, f"text of {qid}", kind))
        rows.append(_row(ds, "B", qid, b, 4.0, f"text of {qid}", kind))
    rows.append(_row("d1", "A", "x", 1.0, 1.0, "only A", "x"))
    rows.append(_row("d3", "A", "z", 1.0, 1.0, "no B here", "z"))
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- pairing


def test_pair_models_pairs_by_dataset_and_query():
    paired = compare.pair_models(_table(), "A", "B", "mrr")
    assert list(paired.columns) == [
        "dataset", "query_id", "a", "b", "delta", "rank_a", "rank_b", "text", "n_gold",
    ]  # fmt: skip
    assert list(zip(paired["dataset"], paired["query_id"], strict=True)) == [
        ("d1", "q1"), ("d1", "q2"), ("d1", "q3"), ("d1", "q4"), ("d2", "q1"),
    ]  # fmt: skip
    np.testing.assert_allclose(paired["delta"], paired["a"] - paired["b"])
    np.testing.assert_allclose(paired["delta"], [1.0, 0.0, -1.0, 0.75, 0.1])
    assert paired.attrs["n_only_a"] == 2  # "x" and "z"
    assert paired.attrs["n_only_b"] == 0
    assert paired.attrs["n_missing"] == 1  # d2/n has NaN for B
    assert paired.attrs["unpaired_datasets"] == ["d3"]
    assert paired.loc[0, "rank_a"] == 1.0
    assert paired.loc[0, "rank_b"] == 4.0


def test_pair_models_rejects_bad_input():
    table = _table()
    with pytest.raises(ValueError, match="same model"):
        compare.pair_models(table, "A", "A", "mrr")
    with pytest.raises(ValueError, match="not found"):
        compare.pair_models(table, "A", "B", "ndcg@10")
    dup = pd.concat([table, table.iloc[[0]]], ignore_index=True)
    with pytest.raises(ValueError, match="duplicated"):
        compare.pair_models(dup, "A", "B", "mrr")


def test_pair_models_without_common_queries_is_empty():
    paired = compare.pair_models(_table(), "A", "nobody", "mrr")
    assert paired.empty
    assert paired.attrs["unpaired_datasets"] == ["d1", "d2", "d3"]


def test_summarize_matches_stats():
    paired = compare.pair_models(_table(), "A", "B", "mrr")
    summary = compare.summarize(paired, n_resamples=2000, seed=3)
    expected = paired_comparison(paired["a"], paired["b"], n_resamples=2000, seed=3)
    assert summary.comparison == expected
    assert summary.ci_a == bootstrap_ci(paired["a"], n_resamples=2000, seed=3)
    assert summary.ci_b == bootstrap_ci(paired["b"], n_resamples=2000, seed=3)
    assert (summary.comparison.wins, summary.comparison.ties, summary.comparison.losses) == (
        3, 1, 1,
    )  # fmt: skip


def test_summarize_empty_gives_nan():
    empty = compare.pair_models(_table(), "A", "nobody", "mrr")
    summary = compare.summarize(empty)
    assert summary.comparison.n == 0
    assert math.isnan(summary.comparison.delta)
    assert all(math.isnan(v) for v in (*summary.ci_a, *summary.ci_b))


@pytest.mark.parametrize(
    ("p", "text"),
    [(math.nan, "n/a"), (0.0, "<0.0001"), (5e-5, "<0.0001"), (0.0321, "0.032"), (1.0, "1")],
)
def test_format_p(p, text):
    assert compare.format_p(p) == text


def test_format_value():
    assert compare.format_value(0.12345) == "0.123"
    assert compare.format_value(0.5, "+.2f") == "+0.50"
    assert compare.format_value(math.nan) == "n/a"
    assert compare.format_value(math.inf, "+.2f") == "+∞"
    assert compare.format_value(-math.inf) == "−∞"


def test_format_ci():
    assert compare.format_ci(0.1234, 0.5) == "[0.123, 0.500]"
    assert compare.format_ci(math.nan, 0.5) == "[n/a]"


# --------------------------------------------------------------------------- tables


def test_biggest_changes_orders_by_delta_then_ids():
    paired = pd.DataFrame(
        {
            "dataset": ["d2", "d1", "d1", "d1", "d1", "d1"],
            "query_id": ["a", "b", "a", "c", "d", "e"],
            "a": [1.0, 1.0, 1.0, 0.0, 0.5, 0.2],
            "b": [0.0, 0.0, 0.0, 1.0, 0.5, 0.3],
            "text": ["x" * 100, "short", "", "", "", ""],
        }
    )
    paired["delta"] = paired["a"] - paired["b"]
    wins, losses = compare.biggest_changes(paired, n=2, text_chars=10)
    # three wins of +1: ordered by dataset, then query id; n = 2 keeps the first two
    assert list(zip(wins["dataset"], wins["query_id"], strict=True)) == [("d1", "a"), ("d1", "b")]
    assert list(losses["query_id"]) == ["c", "e"]  # -1 before -0.1; the tie is in neither
    assert (wins["delta"] > 0).all()
    assert (losses["delta"] < 0).all()
    assert list(wins.index) == [0, 1]
    full, _ = compare.biggest_changes(paired, n=10, text_chars=10)
    assert full.loc[2, "text"] == "x" * 9 + "…"
    assert full.loc[1, "text"] == "short"


def test_slice_view_formats_compare_slices():
    table = _table().dropna(subset=["mrr"])
    table = table[table["query_id"] != "n"]
    comp = compare_slices(table, ["mrr"], "A", "B", ["kind"], n_resamples=500)
    view = compare.slice_view(comp)
    assert "metric" not in view.columns
    assert list(view["value"]) == ["all", "x", "y"]
    assert view.loc[0, "ci"] == compare.format_ci(comp.loc[0, "ci_low"], comp.loc[0, "ci_high"])
    assert (view["significant"] == (comp["p_holm"] < 0.05)).all()
    np.testing.assert_array_equal(view["d_z"], comp["effect_size"])  # NaN: one pair in "y"


def test_slice_view_lists_numeric_slice_values_in_numeric_order():
    """Per-slice deltas of a numeric column (answer-set sizes 1, 3, 10, 12) read 1, 3, 10, 12,
    not the text order 1, 10, 12, 3; "all" stays first and two metrics keep their blocks."""
    rng = np.random.default_rng(0)
    rows = []
    for i, size in enumerate(["10", "3", "12", "1"] * 6):
        for model in ("A", "B"):
            score = {"mrr": float(rng.random()), "hit@1": float(rng.random() < 0.5)}
            rows.append({"dataset": "d", "model": model, "query_id": f"q{i}", "n_gold": size,
                         **score})  # fmt: skip
    table = pd.DataFrame(rows)
    comp = compare_slices(table, ["mrr", "hit@1"], "A", "B", ["n_gold"], n_resamples=200)
    assert sorted(set(comp["value"]) - {"all"}) == ["1", "10", "12", "3"]  # text order as made
    view = compare.slice_view(comp)
    for metric in ("mrr", "hit@1"):
        block = view.loc[view["metric"] == metric, "value"].tolist()
        assert block == ["all", "1", "3", "10", "12"], metric
    assert view["metric"].tolist() == ["mrr"] * 5 + ["hit@1"] * 5  # each metric in one block


def test_resolve_query():
    paired = pd.DataFrame({"dataset": ["d1", "d2", "d1"], "query_id": ["1", "1", "2"]})
    assert compare.resolve_query(paired, "2", None) == ("d1", "2")
    assert compare.resolve_query(paired, "1", "d2") == ("d2", "1")
    assert compare.resolve_query(paired, "1", None) is None  # ambiguous
    assert compare.resolve_query(paired, "1", "d9") is None
    assert compare.resolve_query(paired, "9", "d1") is None
    assert compare.resolve_query(paired, None, "d1") is None


def test_gold_with_ranks():
    gold = pd.DataFrame({"doc_id": ["g1", "g2", "g3"], "relevance": [1, 1, 1], "name": list("abc")})
    ranked_a = pd.DataFrame(
        {"query_id": ["q", "q", "q", "o"], "doc_id": ["x", "g2", "g1", "g3"], "rank": [1, 2, 3, 1]}
    )
    out = compare.gold_with_ranks(gold, ranked_a, None, "q")
    assert list(out.columns) == ["doc_id", "rank_a", "rank_b", "relevance", "name"]
    assert out["rank_a"].tolist()[:2] == [3, 2]
    assert out["rank_a"].isna().tolist() == [False, False, True]  # g3 only for another query
    assert out["rank_b"].isna().all()
    assert list(gold.columns) == ["doc_id", "relevance", "name"]  # input untouched


def test_gold_highlight_marks_gold_rows_per_side():
    both = pd.DataFrame(
        {
            "rank": [1, 2],
            "A: doc_id": ["d1", "d2"],
            "A: gold": [True, False],
            "B: doc_id": ["d2", None],
            "B: gold": [False, np.nan],
        }
    )
    css = compare.gold_highlight(both)
    assert css.loc[0, "A: doc_id"]
    assert css.loc[0, "A: gold"]
    assert not css.loc[0, "B: doc_id"]
    assert not css.loc[1].any()
    assert not css["rank"].any()
    single = pd.DataFrame({"rank": [1, 2], "gold": [False, True], "name": ["n", "m"]})
    css = compare.gold_highlight(single)
    assert css.loc[1, "name"]
    assert not css.loc[0, "name"]
    assert not css.loc[1, "rank"]


# --------------------------------------------------------------------------- figures


def _paired(n: int = 40, discrete: bool = True, datasets=("d1", "d2")) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, n).astype(float) if discrete else rng.random(n)
    b = rng.integers(0, 2, n).astype(float) if discrete else rng.random(n)
    return pd.DataFrame(
        {
            "dataset": [datasets[i % len(datasets)] for i in range(n)],
            "query_id": [f"q{i}" for i in range(n)],
            "a": a,
            "b": b,
            "delta": a - b,
            "text": [f"query <b>{i}</b> & more" for i in range(n)],
        }
    )


def test_is_discrete():
    assert compare.is_discrete(np.array([0, 1, 1, 0]))
    assert not compare.is_discrete(np.linspace(0, 1, 50))


def test_jitter_amplitude_keeps_neighbouring_values_apart():
    assert compare.jitter_amplitude(np.array([0.0, 1.0, 1.0])) == compare.JITTER
    assert compare.jitter_amplitude(np.array([1.0])) == compare.JITTER
    small = compare.jitter_amplitude(np.array([0.0, 0.25, 1 / 3, 0.5, 1.0]))
    assert small == pytest.approx(compare.JITTER_GAP * (1 / 3 - 0.25))
    assert 2 * small < 1 / 3 - 0.25  # the two clouds do not touch


def test_scatter_figure_points_map_back_to_queries():
    paired = _paired()
    fig = compare.scatter_figure(paired, ("m<1>", "m2"), "hit@10")
    assert [t.name for t in fig.data] == ["d1", "d2"]
    assert all(isinstance(t, go.Scatter) for t in fig.data)
    got = {}
    for trace in fig.data:
        for (ds, qid), x, y in zip(trace.customdata, trace.x, trace.y, strict=True):
            got[(ds, qid)] = (x, y)
    assert len(got) == len(paired)
    for row in paired.itertuples():
        x, y = got[(row.dataset, row.query_id)]
        # discrete metric: jittered for display, at most JITTER away, not exactly on the value
        assert abs(x - row.a) <= compare.JITTER
        assert abs(y - row.b) <= compare.JITTER
    assert any(got[k][0] != a for k, a in zip(got, paired["a"], strict=False))
    # hover labels escape data text and keep the exact values
    hover = fig.data[0].hovertext[0]
    assert "&lt;b>0&lt;/b> &amp; more" in hover
    assert "<b>" not in hover
    assert "<b>0" not in hover
    assert f"A: {paired.loc[0, 'a']:.4g}" in hover
    assert "m&lt;1>" in fig.layout.xaxis.title.text
    line = fig.layout.shapes[0]
    assert (line.x0, line.y0, line.x1, line.y1) == (line.x0, line.x0, line.x1, line.x1)


def test_scatter_figure_continuous_is_not_jittered_and_uses_webgl_when_large():
    paired = _paired(discrete=False)
    fig = compare.scatter_figure(paired, ("a", "b"), "mrr", webgl_above=10)
    assert all(isinstance(t, go.Scattergl) for t in fig.data)
    trace = fig.data[0]
    rows = paired[paired["dataset"] == "d1"]
    np.testing.assert_array_equal(trace.x, rows["a"].to_numpy())
    np.testing.assert_array_equal(trace.y, rows["b"].to_numpy())
    assert "query" not in trace.hovertext[0]  # large figure: ids and values only


def test_scatter_figure_draws_a_seeded_sample_of_a_large_table():
    paired = _paired(50)
    fig = compare.scatter_figure(paired, ("a", "b"), "mrr", max_points=20)
    ids = [q for trace in fig.data for _, q in trace.customdata]
    assert len(ids) == 20
    assert set(ids) <= set(paired["query_id"])
    assert "20 of 50 queries" in fig.layout.title.text
    again = compare.scatter_figure(paired, ("a", "b"), "mrr", max_points=20)
    assert [q for trace in again.data for _, q in trace.customdata] == ids
    whole = compare.scatter_figure(paired, ("a", "b"), "mrr")
    assert sum(len(trace.customdata) for trace in whole.data) == 50
    assert whole.layout.title.text is None


def test_scatter_figure_marks_selected_query():
    paired = _paired()
    fig = compare.scatter_figure(paired, ("a", "b"), "hit@1", selected=("d2", "q3"))
    assert len(fig.data) == 3
    ring = fig.data[-1]
    assert ring.name == "selected query"
    assert [list(c) for c in ring.customdata] == [["d2", "q3"]]
    d2 = fig.data[1]
    pos = [tuple(c) for c in d2.customdata].index(("d2", "q3"))
    assert (ring.x[0], ring.y[0]) == (d2.x[pos], d2.y[pos])  # same (jittered) place


def test_highlight_query_adds_a_ring_without_touching_the_cached_dict():
    paired = _paired()
    base = compare.scatter_figure(paired, ("a", "b"), "hit@1").to_dict()
    n_traces = len(base["data"])
    fig = compare.highlight_query(base, ("d1", "q4"))
    assert isinstance(fig, go.Figure)
    assert len(fig.data) == n_traces + 1
    assert [list(c) for c in fig.data[-1].customdata] == [["d1", "q4"]]
    expected = compare.scatter_figure(paired, ("a", "b"), "hit@1", selected=("d1", "q4"))
    assert fig.data[-1].x[0] == pytest.approx(expected.data[-1].x[0])
    assert len(base["data"]) == n_traces  # the cached dict is unchanged
    assert len(compare.highlight_query(base, ("d1", "nope")).data) == n_traces
    assert len(compare.highlight_query(base, None).data) == n_traces


def test_histogram_bins_discrete_one_bar_per_value():
    delta = np.array([1.0, 0.0, 0.0, -1.0, 1.0, 0.5])
    bins, ids = compare.histogram_bins(delta)
    assert bins["center"].tolist() == [-1.0, 0.0, 0.5, 1.0]
    assert bins["count"].tolist() == [1, 2, 1, 2]
    assert bins["kind"].tolist() == ["loss", "tie", "win", "win"]
    assert bins["bin"].tolist() == [0, 1, 2, 3]
    np.testing.assert_array_equal(bins["center"].to_numpy()[ids], delta)


def test_histogram_bins_continuous_keeps_ties_apart():
    rng = np.random.default_rng(1)
    delta = np.concatenate([rng.uniform(-1, 1, 500), np.zeros(100)])
    bins, ids = compare.histogram_bins(delta, per_side=10)
    assert bins["count"].sum() == delta.size
    assert np.bincount(ids).tolist() == bins["count"].tolist()
    tie = bins[bins["kind"] == "tie"]
    assert len(tie) == 1
    assert tie["count"].iloc[0] == 100
    for row in bins.itertuples():
        member = delta[ids == row.bin]
        if row.kind == "win":
            assert (member > row.lo).all()
            assert (member <= row.hi + 1e-12).all()
            assert row.lo >= 0
        elif row.kind == "loss":
            assert (member >= row.lo - 1e-12).all()
            assert (member < row.hi).all()
            assert row.hi <= 0
        else:
            assert (member == 0).all()
    assert len(bins) <= 21


def test_histogram_bins_float_rounding_twins_share_one_visible_bar():
    a = np.array([1 / 2, 1 / 3, 1.0, 0.0, 1 / 2])  # reciprocal ranks
    b = np.array([1 / 3, 1 / 6, 1.0, 1.0, 0.0])
    delta = a - b  # 1/2 - 1/3 and 1/3 - 1/6 differ in the last bit
    bins, ids = compare.histogram_bins(delta)
    assert bins["label"].tolist() == ["-1", "0 (tie)", "+0.167", "+0.5"]
    assert bins["count"].tolist() == [1, 1, 2, 1]
    assert ids.tolist() == [2, 2, 1, 0, 3]
    assert bins["width"].min() == pytest.approx(0.8 / 6)


def test_histogram_bins_a_rounding_size_delta_keeps_the_bars_wide():
    seeds = np.array([0.1, 0.2, 0.3])
    noise = seeds.sum() / 3 - 0.2  # a seed mean against the same value: 2.8e-17
    delta = np.array([noise, 0.0, 0.5, 1.0, -1.0])
    bins, _ = compare.histogram_bins(delta)
    assert noise > 0
    assert bins["count"].tolist() == [1, 1, 1, 1, 1]  # the rounding-size delta stays a win
    assert bins["kind"].tolist() == ["loss", "tie", "win", "win", "win"]
    assert bins["width"].min() == pytest.approx(0.4)


def test_histogram_bins_empty():
    bins, ids = compare.histogram_bins(np.array([]))
    assert bins.empty
    assert ids.size == 0


def test_delta_histogram_of_no_query_is_an_empty_chart():
    bins, _ = compare.histogram_bins(np.array([]))
    fig = compare.delta_histogram(bins, ("a", "b"), "hit@1")
    assert len(fig.data[0].x) == 0
    assert len(fig.data[0].width) == 0


def test_delta_histogram_colours_and_customdata():
    bins, _ = compare.histogram_bins(np.array([1.0, 0.0, -1.0]))
    fig = compare.delta_histogram(bins, ("a", "b"), "hit@1", selected_bin=2)
    bar = fig.data[0]
    assert list(bar.marker.color) == [compare.LOSS_COLOUR, compare.TIE_COLOUR, compare.WIN_COLOUR]
    assert [int(c[0]) for c in bar.customdata] == [0, 1, 2]
    assert list(bar.marker.line.width) == [0, 0, 3]


# --------------------------------------------------------------------------- selection events


def _event(points, **extra):
    return {"selection": {"points": points, "point_indices": [], "box": [], "lasso": [], **extra}}


def test_point_query_from_a_scatter_click_round_trips():
    paired = _paired()
    fig = compare.scatter_figure(paired, ("a", "b"), "hit@1")
    custom = fig.data[1].customdata[5]
    event = _event([{"curve_number": 1, "point_index": 5, "x": 0.1, "y": 1.0,
                     "customdata": list(custom)}])  # fmt: skip
    found = compare.point_query(event)
    assert found == (custom[0], custom[1])
    assert compare.resolve_query(paired, found[1], found[0]) == found


def test_point_query_without_usable_points():
    assert compare.point_query(None) is None
    assert compare.point_query(_event([])) is None
    assert compare.point_query(_event([{"x": 1, "y": 2}])) is None
    assert compare.point_query(_event([{"customdata": "d1"}])) is None
    # a bare selection (without the "selection" wrapper) also works
    assert compare.point_query({"points": [{"customdata": ["d", 7]}]}) == ("d", "7")


def test_point_bin():
    assert compare.point_bin(_event([{"customdata": [3, -0.5, 0.0, 9, "x"]}])) == 3
    assert compare.point_bin(_event([{"customdata": ["x"]}, {"customdata": [1]}])) == 1
    assert compare.point_bin(_event([])) is None


def test_row_query():
    table = pd.DataFrame({"dataset": ["d1", "d2"], "query_id": ["a", "b"]})
    event = {"selection": {"rows": [1], "columns": [], "cells": []}}
    assert compare.row_query(event, table) == ("d2", "b")
    assert compare.row_query({"selection": {"rows": [5]}}, table) is None
    assert compare.row_query({"selection": {"rows": []}}, table) is None
    assert compare.row_query(None, table) is None


def test_selection_signature_tells_new_clicks():
    empty = compare.selection_signature(_event([]))
    assert empty == "" == compare.selection_signature(None)
    one = compare.selection_signature(_event([{"customdata": ["d", "1"]}]))
    two = compare.selection_signature(_event([{"customdata": ["d", "2"]}]))
    assert one
    assert one != two
    assert one == compare.selection_signature(_event([{"customdata": ["d", "1"]}]))
    assert compare.selection_signature({"selection": {"rows": [0], "columns": []}})


def test_lists_for_json_keeps_values_and_turns_object_arrays_into_lists():
    fig = {
        "data": [
            {
                "customdata": np.array([["d1", "q1"], ["d2", "q2"]], dtype=object),
                "hovertext": np.array(["a", "b"], dtype=object),
                "x": np.array([0.1, 0.2]),
            }
        ],
        "layout": {"title": "t"},
    }
    out = compare.lists_for_json(fig)
    trace = out["data"][0]
    assert trace["customdata"] == [["d1", "q1"], ["d2", "q2"]]
    assert trace["hovertext"] == ["a", "b"]
    assert isinstance(trace["x"], np.ndarray)  # numeric arrays stay arrays (base64 in JSON)
    assert out["layout"] == {"title": "t"}
    assert isinstance(fig["data"][0]["customdata"], np.ndarray)  # the input is not modified
