"""Figures for papers (analysis.present.paper, paper_figures, mapfigure), model colours keyed by
name, and the CJK font check. The exports are rendered by kaleido and measured by chromium:
every text inside the canvas, no rotated Chinese, with long AvaTaR-like pattern labels and
Chinese labels. The PNGs are kept in test-output/exports for a look."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.geo import mapdata as geomap
from analysis.geo.geometry import stack_report
from analysis.present import fonts, paper_figures
from analysis.present.compare_figures import histogram_bins
from analysis.present.overlap import transition_matrix
from analysis.present.palette import MODEL_COLOURS, model_colours, preferred_colour
from analysis.present.paper import (
    caption_latex,
    display_width,
    has_cjk,
    paper_figure,
    paper_image,
    short_labels,
    shorten,
)
from analysis.present.report.figures import leaderboard_figure
from analysis.present.slicing import slice_order, slice_summary
from analysis.stats.complementarity import intersections, solved_matrix
from tests.figure_check import clipped, rotated, text_boxes
from tests.helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-output" / "exports"

#: AvaTaR's query-group patterns are sentences (STaRK-Prime's, shortened here only by choice).
AVATAR = [
    "Queries involving cell structures that interact with genes/proteins impacted by specific "
    "compounds",
    "Queries listing conditions similar to a specific disease, with a focus on symptoms or "
    "contraindication with a drug",
    "Queries about subordination in biological pathways involving gene/protein and leading to "
    "a disease",
]
CHINESE = ["杭州市西湖区文三路与学院路交叉口东南角的咖啡店和书店", "北京银行"]
MODELS = ["bm25", "稠密检索模型 dense-retriever-with-a-very-long-name-v2"]


def _table(seed: int = 0) -> pd.DataFrame:
    """Per-query rows of two models: AvaTaR-like and Chinese slice values, numeric buckets
    ("1", "3", "10", "12"), and one slice of a single query."""
    rng = np.random.default_rng(seed)
    rows = []
    for i, value in enumerate([*AVATAR, *CHINESE, "1", "3", "10", "12", "lonely"]):
        for q in range(1 if value == "lonely" else 12):
            for model in MODELS:
                rows.append({"dataset": "d", "query_id": f"{i}-{q}", "model": model,
                             "mrr": float(rng.random()), "类别": value})  # fmt: skip
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- text fitting


def test_widths_count_cjk_twice_and_cuts_end_with_an_ellipsis():
    assert display_width("ab北京") == 6
    assert shorten("北京银行北京银行", 7) == "北京银…"
    assert display_width(shorten(AVATAR[0], 36)) <= 36
    assert shorten("short  text\nhere", 36) == "short text here"
    assert all(has_cjk(t) for t in ("杭州", "ソウル", "서울"))
    assert not has_cjk("Zürich")


def test_short_labels_key_the_cut_values_and_say_n():
    labels, key = short_labels([*AVATAR[:2], "3", "<b>&%{x}"], sizes={"3": 1, AVATAR[0]: 120})
    assert labels["3"] == "3 (n = 1)"  # a slice of one query says so
    assert labels[AVATAR[0]].startswith("[1] Queries involving")
    assert labels[AVATAR[0]].endswith("… (n = 120)")
    assert labels[AVATAR[1]].startswith("[2] ")
    assert key == [("[1]", AVATAR[0]), ("[2]", AVATAR[1])]
    assert labels["<b>&%{x}"] == "&lt;b>&amp;&#37;{x}"  # escaped for plotly


def test_short_labels_of_values_alike_on_one_line_stay_distinct():
    """Values that differ only in their spaces or line breaks (``a b``, ``a  b``, ``a\\nb``)
    read alike on one line: each but the first gets a key mark, so no two slices share a
    category of the chart (plotly would draw them on one bar); a value written like a mark
    does not take another's label."""
    values = ["a b", "a  b", "a\nb", "[2] a b"]
    labels, key = short_labels(values, sizes=dict.fromkeys(values, 10))
    assert len(set(labels.values())) == len(values)
    assert labels["a b"] == "a b (n = 10)"
    assert labels["a  b"] == "[1] a b (n = 10)"
    assert key[:2] == [("[1]", "a  b"), ("[2]", "a\nb")]
    assert [full for _, full in key] == ["a  b", "a\nb", "[2] a b"]


def test_paper_figure_title_legend_axes_and_caption():
    summary = slice_summary(_table(), "mrr", "类别", MODELS, min_size=1)
    order = slice_order(summary)
    pf = paper_figures.slice_bars_paper(
        paper_figures.SliceChart(summary, "mrr", "类别", order, "d", 1)
    )
    fig = pf.figure
    assert fig.layout.title.x == 0
    assert fig.layout.title.pad.l == 20  # off the left edge
    # the Chinese y-axis title is written upright above the plot, not as a rotated axis title
    assert fig.layout.yaxis.title.text is None
    assert [a.text for a in fig.layout.annotations] == ["类别"]
    # the long model name is cut in the legend and spelled out in the caption
    assert fig.data[1].name.endswith("…")
    assert f"= {MODELS[1]}" in pf.caption
    for pattern in AVATAR:  # every cut label in full
        assert pattern in pf.caption
    assert "every slice is shown, however few its queries" in pf.caption  # min 1: no "fewer than 1"
    assert "fewer than" not in pf.caption
    ticks = list(fig.layout.yaxis.categoryarray)
    assert ticks[:4] == ["1 (n = 12)", "3 (n = 12)", "10 (n = 12)", "12 (n = 12)"]  # numeric
    assert "lonely (n = 1)" in ticks


def test_caption_latex_escapes_and_labels():
    fig = paper_figure(
        leaderboard_figure(_board(), ["北京"], {"北京": "recall@10"}),
        title="R&D_50% #1",
        caption="x_y",
    )
    tex = caption_latex(fig, "demo_北京 fig", image="b_demo_recall@10.png")
    assert tex.startswith("\\begin{figure}[t]")
    assert "\\caption{R\\&D\\_50\\% \\#1. x\\_y. Legend: " in tex
    assert "\\label{fig:demo_-fig}" in tex
    # a file name is read verbatim by \includegraphics: "_" stays, "@" (not in file names the
    # app writes) is replaced, nothing is escaped
    assert "\\includegraphics[width=\\linewidth]{b_demo_recall-10.png}" in tex


# --------------------------------------------------------------------------- colours


def test_a_model_keeps_its_colour_on_every_dataset_and_in_every_order():
    bundle = ["bm25", "char-ngram-tfidf", "bm25-distance-fusion", "ada-002", "dense"]
    one = model_colours(["bm25", "dense"], bundle)
    other = model_colours(["dense", "ada-002", "bm25"], bundle)
    assert one["bm25"] == other["bm25"]
    assert one["dense"] == other["dense"]
    everyone = model_colours(bundle)
    assert len(set(everyone.values())) == len(bundle)  # collisions resolved within the bundle
    assert everyone == model_colours(list(reversed(bundle)))
    # bm25 and char-ngram-tfidf prefer the same colour: the name first in sorted order keeps it
    assert preferred_colour("bm25") == preferred_colour("char-ngram-tfidf")
    assert everyone["bm25"] == MODEL_COLOURS[preferred_colour("bm25")]
    assert everyone["char-ngram-tfidf"] != everyone["bm25"]
    assert "#999999" not in MODEL_COLOURS  # grey means "tie"/"not significant"


def test_more_models_than_colours_reuse_the_palette():
    names = [f"m{i}" for i in range(20)]
    colours = model_colours(names)
    assert set(colours.values()) == set(MODEL_COLOURS)


# --------------------------------------------------------------------------- fonts


def test_cjk_font_warning_only_with_cjk_text_and_no_font(monkeypatch):
    monkeypatch.setattr(fonts, "cjk_font_available", lambda: False)
    assert fonts.needs_cjk_warning(["plain", "杭州"])
    assert not fonts.needs_cjk_warning(["plain", "Zürich"])
    monkeypatch.setattr(fonts, "cjk_font_available", lambda: True)
    assert not fonts.needs_cjk_warning(["杭州"])


def test_fc_list_answer_and_the_environment_override(monkeypatch):
    fonts.cjk_font_available.cache_clear()
    monkeypatch.setenv("RETRIEVAL_DASHBOARD_ASSUME_NO_CJK_FONT", "1")
    try:
        assert fonts.cjk_font_available() is False
    finally:
        fonts.cjk_font_available.cache_clear()
    monkeypatch.delenv("RETRIEVAL_DASHBOARD_ASSUME_NO_CJK_FONT")
    assert fonts.cjk_font_available() is True  # CI installs fonts-noto-cjk
    fonts.cjk_font_available.cache_clear()


# --------------------------------------------------------------------------- rendering


def _board() -> pd.DataFrame:
    return pd.DataFrame(
        {"dataset": "北京", "model": MODELS, "metric": "recall@10", "n": 100,
         "mean": [0.61, 0.42], "ci_low": [0.55, 0.36], "ci_high": [0.67, 0.48]}
    )  # fmt: skip


def _map_points() -> tuple[pd.DataFrame, dict]:
    """A 4-POI stack at the gold (GeoGLUE's privacy shift), two lists of 10; B's 10th result
    (p10) lies 55 km away, the others within 2.5 km."""
    base = (30.27, 120.15)
    pois = [("g", "金色咖啡店", *base)] + [(f"s{i}", f"同址店铺{i}", *base) for i in range(3)]
    pois += [(f"p{i}", f"远处店铺{i}", base[0] + 0.002 * i, base[1] + 0.003) for i in range(12)]
    pois[4 + 10] = ("p10", "另一区的同名店", base[0] + 0.5, base[1] + 0.003)  # 55 km north
    frame = pd.DataFrame(pois, columns=["doc_id", "name", "lat", "lon"]).assign(text="")
    index = geomap.poi_index(frame, 0.0)
    a = pd.DataFrame({"doc_id": ["s0", "p1", "g", *[f"p{i}" for i in range(2, 9)]],
                      "rank": range(1, 11)})  # fmt: skip
    b = pd.DataFrame({"doc_id": ["p3", "s1", "s2", *[f"p{i}" for i in range(4, 11)]],
                      "rank": range(1, 11)})  # fmt: skip
    pts = geomap.query_points(["g"], {"A": a, "B": b}, index, k=10,
                              model_names={"A": MODELS[0], "B": MODELS[1]})  # fmt: skip
    query = {"query_id": "test-7", "text": "西湖边的咖啡店", "lat": base[0] + 0.01, "lon": base[1]}
    return pts, query


def _figures() -> dict[str, object]:
    """Every paper builder on hostile shapes: long AvaTaR-like and Chinese labels and names."""
    table = _table()
    summary = slice_summary(table, "mrr", "类别", MODELS, min_size=1)
    order = slice_order(summary)
    paired = pd.DataFrame({"dataset": "d", "query_id": [f"q{i}" for i in range(40)],
                           "a": np.linspace(0, 1, 40), "b": np.linspace(1, 0, 40)})  # fmt: skip
    paired["delta"] = paired["a"] - paired["b"]
    names = (MODELS[1], MODELS[0])
    changes = pd.DataFrame({"query_id": "q1", "doc_id": ["d1", "长文档标识符"],
                            "rank_a": pd.array([3, None], dtype="Int64"),
                            "rank_b": pd.array([1, 40], dtype="Int64")})  # fmt: skip
    changes["change"] = changes["rank_a"] - changes["rank_b"]
    pois = _map_points()[0].drop_duplicates("doc_id")[["doc_id", "name", "lat", "lon"]]
    pois = pois.assign(text=pois["name"])
    solved = solved_matrix(table, "mrr", threshold=0.5, models=MODELS)
    pts, query = _map_points()
    return {
        "slice-bars": paper_figures.slice_bars_paper(
            paper_figures.SliceChart(summary, "mrr", "类别", order, "prime-synthesized", 1)
        ),
        "slice-heatmap": paper_figures.slice_heatmap_paper(
            paper_figures.SliceChart(summary, "mrr", "类别", order, "杭州 GeoGLUE", 1)
        ),
        "scatter": paper_figures.scatter_paper(paired, names, "mrr", dataset="d"),
        "delta-histogram": paper_figures.delta_histogram_paper(
            histogram_bins(paired["delta"])[0], names, "mrr", dataset="d"
        ),
        "transition": paper_figures.transition_paper(
            transition_matrix(changes), names, dataset="d"
        ),
        "query-rank": paper_figures.query_rank_paper(changes, names, 20, dataset="d", query="q1"),
        "stacks": paper_figures.stack_histogram_paper(stack_report(pois), dataset="geoglue"),
        "solved": paper_figures.solved_paper(intersections(solved), "mrr", 0.5, dataset="d"),
        "map": paper_figures.map_snapshot_paper(
            pts, query, {"A": MODELS[0], "B": MODELS[1]}, dataset="geoglue", k=10
        ),
        "report-leaderboard": paper_figures.block_paper(
            leaderboard_figure(_board(), ["北京"], {"北京": "recall@10"}),
            "Leaderboard chart",
            "The report metric of each dataset; error bars: 95% CI.",
        ),
    }


def test_every_paper_figure_renders_with_no_clipped_or_rotated_cjk_text(chromium):
    """Kaleido's SVG of each builder, measured by chromium: every text inside the canvas,
    no Chinese text rotated; the PNG is 2x the SVG's size."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for name, figure in _figures().items():
        svg = paper_image(figure, "svg")
        measured = text_boxes(chromium, svg)
        assert measured.texts, name
        assert (measured.width, measured.height) == (figure.width, figure.height), name
        assert clipped(measured) == [], (name, clipped(measured))
        assert [b.text for b in rotated(measured) if has_cjk(b.text)] == [], name
        left = min(b.x0 for b in measured.texts)
        assert left >= 4, (name, left)  # nothing touches the left edge
        png = paper_image(figure, "png")
        size = (int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big"))
        assert size == (2 * figure.width, 2 * figure.height), name
        (ARTIFACTS / f"paper-{name}.png").write_bytes(png)
        (ARTIFACTS / f"paper-{name}.svg").write_bytes(svg)
        (ARTIFACTS / f"paper-{name}.tex").write_text(caption_latex(figure, name), "utf-8")


def test_a_far_result_is_drawn_on_the_maps_edge_with_its_distance():
    """B's 10th result 55 km north would squeeze the query, the gold stack and 18 results
    within 2.5 km into a blot: it is drawn on the frame's edge, due north, with its
    distance; the caption says so."""
    pts, query = _map_points()
    pf = paper_figures.map_snapshot_paper(
        pts, query, {"A": MODELS[0], "B": MODELS[1]}, dataset="geoglue", k=10
    )
    spec = json.loads(pf.figure.to_json())
    b = next(t for t in spec["data"] if str(t.get("name", "")).startswith("B: "))
    far = [i for i, text in enumerate(b["text"]) if "(" in text]
    assert [b["text"][i] for i in far] == ["10 (56 km)"]
    xs = [float(x) for t in spec["data"] for x in _array(t.get("x", []))]
    ys = [float(y) for t in spec["data"] for y in _array(t.get("y", []))]
    assert max(ys) == pytest.approx(float(_array(b["y"])[far[0]]))  # the top of the frame
    # the frame holds the near points (in metres), not 55 km of empty map
    assert spec["layout"]["yaxis"]["title"]["text"] == "north (m)"
    assert max(ys) < 4000
    assert abs(float(_array(b["x"])[far[0]])) < 500  # in its own direction (north)
    assert max(map(abs, xs)) < 4000
    assert "1 result farther away is drawn on the frame's edge" in pf.caption
    near, *_ = _map_points()
    near = near.loc[near["doc_id"] != "p10"]  # every result near: drawn to scale, no note
    plain = paper_figures.map_snapshot_paper(
        near, query, {"A": MODELS[0], "B": MODELS[1]}, dataset="geoglue", k=10
    )
    assert "frame's edge" not in plain.caption


def _array(value: object) -> list:
    """A plotly JSON array: a list, or a typed array ``{"dtype", "bdata"}``."""
    if isinstance(value, dict) and "bdata" in value:
        import base64

        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"]).tolist()
    return list(value)


def test_the_same_model_colour_in_figures_of_two_datasets():
    bundle = [*MODELS, "ada-002"]
    colours = model_colours(bundle)
    first = slice_summary(_table(0), "mrr", "类别", MODELS, min_size=1)
    second = slice_summary(_table(1), "mrr", "类别", MODELS[::-1], min_size=1)
    figs = [
        paper_figures.slice_bars_paper(
            paper_figures.SliceChart(s, "mrr", "类别", slice_order(s), d, 1, colours)
        ).figure
        for s, d in ((first, "one"), (second, "two"))
    ]
    for fig in figs:
        spec = json.loads(fig.to_json())
        by_name = {t["name"][:10]: t["marker"]["color"] for t in spec["data"]}
        assert by_name["bm25"] == colours["bm25"]
        assert by_name[MODELS[1][:10]] == colours[MODELS[1]]


def test_the_report_command_warns_about_chinese_text_without_a_cjk_font(tmp_path, monkeypatch):
    folder = tmp_path / "b" / "poi"
    (folder / "runs").mkdir(parents=True)
    (folder / "queries.csv").write_text("query_id,text\nq1,西湖边的咖啡店\nq2,北京银行\n", "utf-8")
    (folder / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d2 1\n")
    (folder / "runs" / "bm25.run").write_text("q1 Q0 d1 1 2.0 x\nq2 Q0 d1 1 2.0 x\n")
    (tmp_path / "b" / "bundle.toml").write_text(
        '[datasets.poi]\nqueries = "poi/queries.csv"\nqrels = "poi/qrels.txt"\nruns = "poi/runs"\n'
    )
    args = ("report", "--bundle", tmp_path / "b", "--out", tmp_path / "r.html")
    monkeypatch.setenv("RETRIEVAL_DASHBOARD_ASSUME_NO_CJK_FONT", "1")
    warned = run_cli(*args)
    assert warned.returncode == 0, warned.stderr
    assert "warning: Chinese, Japanese and Korean text will show as boxes" in warned.stderr
    assert "fonts-noto-cjk" in warned.stderr
    monkeypatch.delenv("RETRIEVAL_DASHBOARD_ASSUME_NO_CJK_FONT")
    quiet = run_cli(*args)
    assert quiet.returncode == 0, quiet.stderr
    assert "will show as boxes" not in quiet.stderr  # CI installs fonts-noto-cjk


def test_captions_hold_no_math_sign_pdflatex_cannot_read() -> None:
    """Every figure's LaTeX snippet writes the math signs of its caption (``−``, ``≥``, ``Δ``
    ...) as math-mode commands: pdflatex's UTF-8 input stops at them."""
    signs = set("−≥≤≠≈→←∞Δ±×")
    for name, fig in _figures().items():
        tex = caption_latex(fig, name, image=f"{name}.png")
        assert not set(tex) & signs, (name, sorted(set(tex) & signs))


def test_long_model_names_that_start_alike_keep_their_own_legend_entries():
    one, two = (
        "model-with-a-very-long-name-number-one-v1",
        "model-with-a-very-long-name-number-one-v2",
    )
    three = "model-with-a-very-long-name-number-one-v2 and more"
    summary = pd.DataFrame({
        "model": [one, two, three], "value": "x", "n": 3, "mean": [0.2, 0.3, 0.4],
        "ci_low": 0.1, "ci_high": 0.5,
    })  # fmt: skip
    chart = paper_figures.SliceChart(summary, "hit@1", "t", ["x"], "d", 1)
    fig = paper_figures.slice_bars_paper(chart)
    entries = [trace.name for trace in fig.figure.data]
    assert len(set(entries)) == 3
    assert all(display_width(e) <= 28 for e in entries)
    assert entries[0] == "model-with-a-very-long-name…"
    assert entries[1].endswith("-one-v2")
    for entry, name in zip(entries, (one, two, three), strict=True):
        assert f"{entry} = {name}" in fig.caption


def test_query_rank_paper_keeps_long_names_that_start_alike_apart():
    names = (
        "model-with-a-very-long-name-number-one-v1",
        "model-with-a-very-long-name-number-one-v2",
    )
    changes = pd.DataFrame({"doc_id": ["d1"], "rank_a": pd.array([1], dtype="Int64"),
                            "rank_b": pd.array([5], dtype="Int64")})  # fmt: skip
    fig = paper_figures.query_rank_paper(changes, names, 20, dataset="d", query="q1")
    a, b = fig.figure.data[0].x
    assert a != b
    assert display_width(a) <= 28
    assert display_width(b) <= 28
    assert b.endswith("-one-v2")


def test_slice_heatmap_caption_names_no_error_bars():
    summary = pd.DataFrame({"model": ["a", "b"], "value": "x", "n": 3, "mean": [0.2, 0.3],
                            "ci_low": 0.1, "ci_high": 0.5})  # fmt: skip
    chart = paper_figures.SliceChart(summary, "hit@1", "t", ["x"], "d", 1)
    assert "error bars" not in paper_figures.slice_heatmap_paper(chart).caption
    assert "error bars: seeded 95% bootstrap CI" in paper_figures.slice_bars_paper(chart).caption
