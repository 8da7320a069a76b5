"""AppTest: the Report page (summary, sections, exports, presentation mode) on the demo bundle."""

from __future__ import annotations

import pytest

from tests.app.conftest import export_button, no_exception, open_page

PAGE = "5_Report.py"


def _param(at, name: str) -> str | None:
    value = at.query_params.get(name)
    return value[0] if isinstance(value, list) else value


def _downloads(at) -> list[str]:
    return [d.proto.label for d in at.get("download_button")]


def test_summary_is_generated_and_escaped(shared_demo_root):
    at = open_page(PAGE, datasets="beijing", a="bm25", b="char-ngram-tfidf", metric="recall")
    no_exception(at)
    assert _param(at, "section") == "summary"
    assert at.radio(key="report_section").value == "summary"
    summary = next(m.value for m in at.markdown if m.value.startswith("- Best on"))
    # names from files are escaped: '-' and '@' would otherwise be Markdown
    assert summary.startswith(
        r"- Best on beijing by recall\@10\: bm25\-distance\-fusion with 0\.907"
    )
    assert r"A \= bm25 vs B \= char\-ngram\-tfidf\:" in summary
    assert "Download the report (one HTML file, works offline)" in _downloads(at)


def test_leaderboard_section_bold_marks_and_exports(shared_demo_root):
    at = open_page(PAGE, datasets="beijing", a="bm25", section="leaderboard")
    no_exception(at)
    board = at.table[0].value
    assert list(board.columns[:2]) == ["dataset", "model"]
    row = board[board["model"] == r"bm25\-distance\-fusion"].iloc[0]
    assert row[r"recall\@10"].startswith("**0.907** ±")  # best: bold
    other = board[board["model"] == "bm25"].iloc[0]
    assert other[r"recall\@10"].endswith(r"\*")  # significantly below the best (Holm)
    labels = _downloads(at)
    assert labels.count("CSV") == labels.count("Markdown") == labels.count("LaTeX") == 1
    assert "HTML" in labels  # the chart
    assert export_button(at, "report_leaderboard-chart").label == "Render PNG, SVG and caption"
    assert len(at.get("plotly_chart")) == 1


def test_png_export_of_a_chart(chromium_path):
    del chromium_path
    at = open_page(PAGE, datasets="geo-glue", section="leaderboard")
    export_button(at, "report_leaderboard-chart").click().run()
    no_exception(at)
    images = next(iter(at.session_state["_paper_exports"].values()))
    assert images["png"].startswith(b"\x89PNG")
    assert b"<svg" in images["svg"][:200]
    assert "\\caption{Leaderboard chart." in images["tex"]
    assert {"PNG (2x)", "SVG", "LaTeX caption"} <= set(_downloads(at))


def test_png_export_without_browser_shows_a_message(monkeypatch, tmp_path):
    monkeypatch.setenv("BROWSER_PATH", str(tmp_path / "nothing"))
    at = open_page(PAGE, datasets="geo-glue", section="leaderboard")
    export_button(at, "report_leaderboard-chart").click().run()
    no_exception(at)
    assert any("needs Chrome or Chromium" in i.value for i in at.info)
    assert "PNG (2x)" not in _downloads(at)


def test_dataset_filter_and_worst_queries_from_the_url(shared_demo_root):
    at = open_page(
        PAGE,
        dataset="geo-glue",
        a="bm25",
        metric="recall@10",
        section="worst-queries",
        ds="geo-glue",
    )
    no_exception(at)
    assert at.selectbox(key="report_ds").value == "geo-glue"
    worst = at.dataframe[0].value
    assert "recall@10 A" in worst.columns
    assert (worst["recall@10 A"] == 0).all()
    texts = [t.value for t in at.text]
    assert len(texts) == 5  # the text of each worst query, as plain text
    rankings = [d.value for d in at.dataframe if "bm25: gold" in d.value.columns]
    assert len(rankings) == 5
    at.selectbox(key="w_dataset").select("beijing").run()
    assert at.selectbox(key="report_ds").value == "beijing"
    assert at.dataframe[0].value["query_id"].tolist() != worst["query_id"].tolist()


@pytest.mark.parametrize("section", ["slices", "compare", "causes"])
def test_every_section_renders(shared_demo_root, section):
    at = open_page(PAGE, datasets="geo-glue", section=section)
    no_exception(at)
    assert at.radio(key="report_section").value == section
    assert at.get("plotly_chart") or at.table or at.dataframe


def test_invalid_section_falls_back(shared_demo_root):
    at = open_page(PAGE, datasets="geo-glue", section="nope", ds="nope")
    no_exception(at)
    assert _param(at, "section") == "summary"


def test_presentation_mode_is_the_deck_with_navigation(shared_demo_root):
    at = open_page(PAGE, datasets="geo-glue", a="bm25", present="1")
    no_exception(at)
    css = next(m.value for m in at.markdown if '[data-testid="stSidebar"]' in m.value)
    assert '[data-testid="stHeader"]' in css  # no Streamlit chrome
    assert _param(at, "slide") == "1"
    assert at.toggle(key="report_present").value is True
    assert not _downloads(at)  # no export clutter
    assert len(at.table) == 1  # slide 1: the overview table alone
    assert not at.get("plotly_chart")
    headline = at.header[0].value
    assert headline == r"demo\: 1 dataset\, A \= bm25 vs B \= bm25\-distance\-fusion"
    at.button(key="report_next").click().run()
    assert _param(at, "slide") == "2"
    assert len(at.get("plotly_chart")) == 1  # slide 2: one chart (best model per dataset)
    assert not at.table
    assert at.header[0].value.startswith(r"Best on geo\-glue by recall\@1\: ")  # headline metric
    at.button(key="report_prev").click().run()
    assert _param(at, "slide") == "1"
    at.toggle(key="report_present").set_value(False).run()
    no_exception(at)
    assert _param(at, "present") is None
    assert not any("stSidebar" in m.value for m in at.markdown)


def test_presentation_slide_out_of_range_is_clamped(shared_demo_root):
    at = open_page(PAGE, datasets="geo-glue", present="1", slide="999")
    no_exception(at)
    last = int(_param(at, "slide"))
    assert 5 < last <= 12
    assert at.button(key="report_next").disabled
    at = open_page(PAGE, datasets="geo-glue", present="1", slide="x")
    assert _param(at, "slide") == "1"
    assert at.button(key="report_prev").disabled


def test_no_dataset_selected(monkeypatch):
    import dataclasses

    import ui.state as ui_state

    real = ui_state.sidebar
    monkeypatch.setattr(ui_state, "sidebar", lambda: dataclasses.replace(real(), datasets=[]))
    at = open_page(PAGE, datasets="geo-glue")
    no_exception(at)
    assert any("Select at least one dataset" in i.value for i in at.info)
