"""Tests for analysis.present.export: table writers (CSV, Markdown, LaTeX, HTML) on known numbers.
Figure exports are tested in test_figures.py, the escaping helpers in test_escape.py."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.present import export
from analysis.present.export import (
    Estimate,
    StyledTable,
    format_p,
    markdown_frame,
    results_table,
    to_csv,
    to_html,
    to_latex,
    to_markdown,
)


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
    assert tex.isascii()  # the notes' "±" as $\pm$: pdflatex reads every character
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


def test_figure_and_escape_names_stay_importable_from_export():
    """The figure exports and escaping helpers moved to their own modules; export re-exports
    the very same objects."""
    from analysis.present import escape, figures

    for name in figures.__all__:
        assert getattr(export, name) is getattr(figures, name)
    for name in escape.__all__:
        assert getattr(export, name) is getattr(escape, name)


def test_latex_rows_starting_with_a_bracket_or_star_are_not_read_as_arguments():
    """``\\\\`` and the booktabs rules take an optional ``[...]`` (and ``\\\\`` a ``*``) from the
    next line: a row (or header) whose first cell starts with ``[`` or ``*`` starts with
    ``{}`` so LaTeX reads it as text."""
    df = pd.DataFrame({"[col]": ["[ablation] bm25", "*star", "plain"], "v": [0.5, 0.25, 0.75]})
    tex = to_latex(df, group="[col]")
    lines = tex.splitlines()
    start = lines.index(r"\toprule") + 1
    rows = [line for line in lines[start : lines.index(r"\bottomrule")] if line != r"\midrule"]
    assert rows == [
        r"{}[col] & v \\",
        r"{}[ablation] bm25 & 0.500 \\",
        r"{}*star & 0.250 \\",
        r"plain & 0.750 \\",
    ]


def test_html_data_value_of_a_numpy_estimate_is_a_number():
    """``data-value`` holds the number itself for an estimate of numpy floats, never its repr
    (``np.float64(0.5)``)."""
    cells = pd.DataFrame({"v": [Estimate(np.float64(0.5), np.float64(0.4), np.float64(0.6))]})
    assert 'data-value="0.5"' in to_html(StyledTable(cells=cells))
