"""Tests for analysis.present.export: table writers (CSV, Markdown, LaTeX, HTML) on known numbers,
the escaping helpers, and figure exports (HTML offline; PNG/SVG through kaleido + chromium)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from analysis.present import export
from analysis.present.export import (
    Estimate,
    ImageExportError,
    StyledTable,
    escape_latex,
    escape_markdown,
    figure_html,
    figure_image,
    format_p,
    markdown_frame,
    plotly_text,
    results_table,
    to_csv,
    to_html,
    to_latex,
    to_markdown,
)

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-output" / "exports"


def _board() -> pd.DataFrame:
    """A mean_ci-shaped leaderboard with known numbers: on d1 model 'm_1' is best on both
    metrics; on d2 'a|b' and 'c' tie on hit@1."""
    rows = [
        ("d1", "m_1", "hit@1", 100, 0.5, 0.4, 0.62),
        ("d1", "m_1", "mrr", 100, 0.61, 0.55, 0.66),
        ("d1", "m2", "hit@1", 100, 0.3, 0.21, 0.39),
        ("d1", "m2", "mrr", 100, 0.45, 0.4, 0.5),
        ("d2", "a|b", "hit@1", 50, 0.2, 0.1, 0.3),
        ("d2", "c", "hit@1", 50, 0.2, 0.12, 0.28),
        ("d2", "a|b", "mrr", 50, 0.7, 0.6, 0.8),
        ("d2", "c", "mrr", 50, 0.1, 0.05, 0.15),
    ]
    return pd.DataFrame(
        rows, columns=["dataset", "model", "metric", "n", "mean", "ci_low", "ci_high"]
    )


def _pvalues() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "dataset": ["d1", "d1", "d2", "d2"],
            "model": ["m2", "m2", "c", "c"],
            "metric": ["hit@1", "mrr", "hit@1", "mrr"],
            "p_holm": [0.001, 0.2, 1.0, 0.04],
        }
    )


@pytest.fixture
def table() -> StyledTable:
    return results_table(_board(), ["hit@1", "mrr"], pvalues=_pvalues())


# --------------------------------------------------------------------------- escaping


def test_escape_markdown_escapes_every_ascii_punctuation_and_flattens_lines():
    text = "**b** _i_ [x](y) <b>&amp; $x$ :red[z] `c` # h | 1. a\nnext"
    out = escape_markdown(text)
    # every ASCII punctuation character is preceded by a backslash: removing the escaped pairs
    # leaves no punctuation at all
    assert re.search(r"[!-/:-@\[-`{-~]", re.sub(r"\\[!-/:-@\[-`{-~]", "", out)) is None
    assert "\n" not in out
    assert out.startswith(r"\*\*b\*\* \_i\_ \[x\]\(y\) \<b\>\&amp\; \$x\$ \:red\[z\]")
    assert escape_markdown(None) == ""
    assert escape_markdown("plain words 42") == "plain words 42"
    assert escape_markdown("a\\b") == "a\\\\b"


def test_escape_latex_known_strings():
    assert escape_latex("bm25_x & 50% #1 {a} ~ ^ $ \\ <>") == (
        r"bm25\_x \& 50\% \#1 \{a\} \textasciitilde{} \textasciicircum{} \$ \textbackslash{} "
        r"\textless{}\textgreater{}"
    )
    assert escape_latex("two\nlines") == "two lines"


def test_plotly_text_neutralizes_tags_and_entities():
    assert plotly_text("<a href='x'>&amp;</a>") == "&lt;a href='x'>&amp;amp;&lt;/a>"


def test_format_p():
    assert format_p(0.0004) == "<0.001"
    assert format_p(0.0123) == "0.012"
    assert format_p(float("nan")) == "–"


def test_estimate_half_width_is_the_larger_side():
    assert Estimate(0.5, 0.4, 0.62).half_width == pytest.approx(0.12)
    assert Estimate(0.5, 0.3, 0.55).half_width == pytest.approx(0.2)
    assert Estimate(0.5).half_width is None
    assert Estimate(0.5, float("nan"), 0.6).half_width is None


# --------------------------------------------------------------------------- results table


def test_results_table_bold_best_ties_and_marks(table):
    cells = table.cells
    assert cells[["dataset", "model"]].to_numpy().tolist() == [
        ["d1", "m_1"], ["d1", "m2"], ["d2", "a|b"], ["d2", "c"]
    ]  # fmt: skip
    assert table.bold["hit@1"].tolist() == [True, False, True, True]  # d2 tie: both bold
    assert table.bold["mrr"].tolist() == [True, False, True, False]
    assert table.marks["hit@1"].tolist() == ["", "*", "", ""]  # 0.001 < 0.05; 1.0 not
    assert table.marks["mrr"].tolist() == ["", "", "", "*"]  # 0.2 not; 0.04 < 0.05
    assert not table.bold[["dataset", "model"]].to_numpy().any()
    assert cells.loc[0, "hit@1"] == Estimate(0.5, 0.4, 0.62)
    assert any("Holm-corrected over 4 comparisons" in n for n in table.notes)


def test_results_table_keep_leaves_other_cells_missing():
    t = results_table(_board(), ["hit@1", "mrr"], keep={("d1", "hit@1"), ("d2", "mrr")})
    assert t.cells["mrr"].iloc[0] is None  # d1 mrr not kept
    assert t.cells["hit@1"].iloc[2] is None  # d2 hit@1 not kept
    assert isinstance(t.cells["hit@1"].iloc[0], Estimate)
    assert t.marks.to_numpy().tolist() == [[""] * 4] * 4  # no p-values, no marks


def test_results_table_rejects_bad_input():
    with pytest.raises(ValueError, match="column"):
        results_table(_board().drop(columns="ci_low"), ["hit@1"])
    with pytest.raises(ValueError, match="group"):
        results_table(_board(), ["hit@1"], group="metric")


# --------------------------------------------------------------------------- writers


def test_markdown_writer_known_output(table):
    md = to_markdown(table)
    lines = md.splitlines()
    assert lines[0] == r"| dataset | model | hit\@1 | mrr |"
    assert lines[1] == "| --- | --- | ---: | ---: |"
    assert lines[2] == r"| d1 | m\_1 | **0.500** ± 0.120 | **0.610** ± 0.060 |"
    assert lines[3] == r"| d1 | m2 | 0.300 ± 0.090\* | 0.450 ± 0.050 |"
    assert lines[4] == r"| d2 | a\|b | **0.200** ± 0.100 | **0.700** ± 0.100 |"
    assert lines[5] == r"| d2 | c | **0.200** ± 0.080 | 0.100 ± 0.050\* |"
    assert r"Bold\: best mean per dataset and metric\." in md


def test_latex_writer_booktabs_bold_and_marks(table):
    tex = to_latex(table, caption="Results_1", label="tab:res ults", group="dataset")
    assert tex.startswith("% booktabs table: needs \\usepackage{booktabs}")
    lines = tex.splitlines()[1:]
    assert lines[:5] == [
        r"\begin{table}[t]",
        r"\centering",
        r"\caption{Results\_1}",
        r"\label{tab:results}",
        r"\begin{tabular}{llrr}",
    ]
    assert lines[5] == r"\toprule"
    assert lines[6] == r"dataset & model & hit@1 & mrr \\"
    assert lines[7] == r"\midrule"
    assert lines[8] == r"d1 & m\_1 & \textbf{0.500} $\pm$ 0.120 & \textbf{0.610} $\pm$ 0.060 \\"
    assert lines[9] == r"d1 & m2 & 0.300 $\pm$ 0.090$^{*}$ & 0.450 $\pm$ 0.050 \\"
    assert lines[10] == r"\midrule"  # a new dataset starts a block
    assert lines[11] == r"d2 & a|b & \textbf{0.200} $\pm$ 0.100 & \textbf{0.700} $\pm$ 0.100 \\"
    assert lines[12] == r"d2 & c & \textbf{0.200} $\pm$ 0.080 & 0.100 $\pm$ 0.050$^{*}$ \\"
    assert lines[13:16] == [r"\bottomrule", r"\end{tabular}", lines[15]]
    assert lines[15].startswith(r"\par\smallskip{\footnotesize ")
    assert lines[-1] == r"\end{table}"
    assert tex.count(r"\textbf") == 5


def test_writers_on_plain_frames_format_and_escape():
    df = pd.DataFrame(
        {
            "name": ["<b>x</b> & *y*", None],
            "n": [3, 4],
            "value": [0.12345, np.nan],
            "flag": [True, False],
        }
    )
    md = to_markdown(df, digits=2)
    assert r"\<b\>x\<\/b\> \& \*y\*" in md
    assert "| – | 4 | – | no |" in md
    assert "| 0.12 |" in md
    tex = to_latex(df, digits=2)
    assert r"\begin{tabular}{lrrl}" in tex
    assert r"\textless{}b\textgreater{}x\textless{}/b\textgreater{} \& *y*" in tex
    html_text = to_html(df)
    assert "<b>x" not in html_text
    assert "&lt;b&gt;x&lt;/b&gt; &amp; *y*" in html_text
    assert 'data-value="0.12345"' in html_text
    assert to_csv(df).splitlines() == [
        "name,n,value,flag",
        "<b>x</b> & *y*,3,0.12345,True",
        ",4,,False",
    ]


def test_csv_of_styled_table_writes_the_numbers(table):
    lines = to_csv(table).splitlines()
    assert lines[0] == "dataset,model,metric,n,mean,ci_low,ci_high,best,p_holm"
    assert "d1,m2,hit@1,100,0.3,0.21,0.39,False,0.001" in lines
    plain = StyledTable(cells=pd.DataFrame({"m": ["a"], "v": [Estimate(0.5, 0.4, 0.7)]}))
    assert to_csv(plain).splitlines() == ["m,v,v_ci_low,v_ci_high", "a,0.5,0.4,0.7"]


def test_html_writer_bold_marks_and_values(table):
    out = to_html(table, table_id="t1")
    assert out.startswith('<table id="t1">')
    assert '<td class="num" data-value="0.5"><strong>0.500</strong> ± 0.120</td>' in out
    assert '<td class="num" data-value="0.3">0.300 ± 0.090<sup>*</sup></td>' in out
    assert "<td>a|b</td>" in out


def test_markdown_frame_for_st_table(table):
    frame = markdown_frame(table)
    assert list(frame.columns) == ["dataset", "model", r"hit\@1", "mrr"]
    assert frame.iloc[0, 2] == "**0.500** ± 0.120"
    assert frame.iloc[1, 2] == r"0.300 ± 0.090\*"
    assert frame.iloc[0, 1] == r"m\_1"


def test_display_frame_is_plain_text(table):
    frame = export.display_frame(table)
    assert frame.iloc[1, 2] == "0.300 ± 0.090*"
    assert frame.iloc[2, 1] == "a|b"


# --------------------------------------------------------------------------- figures


class _Attrs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.urls += [v or "" for k, v in attrs if k in ("src", "href")]


def _figure() -> go.Figure:
    fig = go.Figure(go.Bar(x=[plotly_text("<b>m</b>"), "b"], y=[0.4, 0.7], name="model"))
    fig.update_layout(title="test chart", width=640, height=400)
    return fig


def test_figure_html_is_offline_and_has_no_plotly_link():
    text = figure_html(_figure(), title="<chart>")
    parser = _Attrs()
    parser.feed(text)
    assert parser.urls == []  # no src/href at all: plotly.js is inline
    assert "<title>&lt;chart&gt;</title>" in text
    assert '"displaylogo": false' in text
    assert len(text) > 1_000_000  # plotly.js itself is inside


def test_figure_image_png_and_svg(chromium_path):
    """The PNG export of one chart, with the chromium that CI installs (kept as an artifact)."""
    del chromium_path
    fig = _figure()
    png = figure_image(fig, "png")
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert (width, height) == (1600, 800)  # at least 800 x 400 at scale 2
    svg = figure_image(fig, "svg", scale=1)
    assert b"<svg" in svg[:200]
    assert b"test chart" in svg
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "chart.png").write_bytes(png)


def test_png_export_with_chinese_labels_is_2x_in_the_palette_and_cjk_font(chromium_path):
    """A report figure with Chinese names: PNG at 2x (>= 1600 px wide) in the app's palette;
    the SVG names the CJK font stack. The PNG is kept in test-output/exports for a look."""
    del chromium_path
    from analysis.present.palette import MODEL_COLOURS
    from analysis.present.report.figures import leaderboard_figure

    board = pd.DataFrame(
        {
            "dataset": ["北京", "北京", "上海", "上海"],
            "model": ["稠密检索", "BM25 基线", "稠密检索", "BM25 基线"],
            "metric": "recall@10",
            "n": 100,
            "mean": [0.61, 0.42, 0.55, 0.47],
            "ci_low": [0.55, 0.36, 0.49, 0.41],
            "ci_high": [0.67, 0.48, 0.61, 0.53],
        }
    )
    chosen = {"北京": "recall@10", "上海": "recall@10"}
    fig = leaderboard_figure(board, ["北京", "上海"], chosen, ["稠密检索", "BM25 基线"])
    assert fig.data[0].marker.color == MODEL_COLOURS[0]
    png = figure_image(fig, "png")
    width = int.from_bytes(png[16:20], "big")
    assert width >= 1600
    svg = figure_image(fig, "svg").decode("utf-8")
    assert "Noto Sans CJK SC" in svg
    assert "稠密检索" in svg
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "leaderboard-cjk.png").write_bytes(png)


def test_figure_image_without_browser_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("BROWSER_PATH", str(tmp_path / "no-such-chrome"))
    assert export.browser_path() is None
    with pytest.raises(ImageExportError, match="needs Chrome or Chromium") as info:
        figure_image(_figure(), "png")
    assert "\n" not in str(info.value)


def test_figure_image_with_a_broken_browser_fails_fast():
    """A 'browser' that exits at once: a one-line error instead of kaleido waiting forever
    (in a subprocess: the failure is remembered by the process)."""
    code = (
        "import plotly.graph_objects as go\n"
        "from analysis.present.export import figure_image, ImageExportError\n"
        "for _ in range(2):\n"
        "    try:\n"
        "        figure_image(go.Figure(go.Bar(x=[1], y=[1])), 'png', timeout=50)\n"
        "    except ImageExportError as exc:\n"
        "        print('ERROR', exc)\n"
    )
    env = {**os.environ, "BROWSER_PATH": "/bin/true"}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("ERROR")]
    assert lines == ["ERROR the browser used for image export (/bin/true) failed to start or "
                     "stopped; restart the app"] * 2  # fmt: skip


def test_browser_path_honours_browser_path(monkeypatch, tmp_path):
    fake = tmp_path / "chrome"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("BROWSER_PATH", str(fake))
    assert export.browser_path() == str(fake)


def test_figure_image_rejects_unknown_format():
    with pytest.raises(ValueError, match="png"):
        figure_image(_figure(), "jpg")
