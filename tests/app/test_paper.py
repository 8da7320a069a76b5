"""AppTest: an imported STaRK bundle opens on its dataset with a run; every page without
per-query results says why and links to the datasets with runs; rank-only runs show no
scores; blank entity text names the importer flag; Compare's per-slice table starts on a
column with more than one value; a comparison on a dataset with one run says it needs a
second; MRR's causes say "top 10", not "k = 10"; the CJK font warning
is shown once; the export control renders a figure for a paper."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from analysis.io.importers import import_stark
from tests.app.conftest import export_button, make_wide_bundle, no_exception, open_page

ROOTS_ENV = "RETRIEVAL_DASHBOARD_DATA_ROOTS"


@pytest.fixture(scope="module")
def _prime_roots(real_dir, tmp_path_factory) -> Path:
    """The data root of :func:`prime`, imported once for this file (the tests only read it)."""
    roots = tmp_path_factory.mktemp("prime") / "roots"
    import_stark(real_dir / "stark" / "prime", roots / "prime")
    return roots


@pytest.fixture
def shared_prime(_prime_roots, monkeypatch) -> Path:
    """STaRK-Prime as imported from the real folder: synthesized queries without a run, the
    human-generated ones with ada-002 (a rank-only ``pred_rank`` run), no ``--skb``; the tests
    only read it and share Streamlit's caches (``tests/app/conftest.py``)."""
    monkeypatch.setenv(ROOTS_ENV, str(_prime_roots))
    return _prime_roots


def _infos(at) -> str:
    return " ".join(i.value for i in at.info)


def _frame(at, key: str):
    return next(d for d in at.dataframe if d.key == key).value


def _plain(text: str) -> str:
    """Markdown escaped by escape_markdown, read back."""
    return re.sub(r"\\(.)", r"\1", text)


@pytest.mark.real
def test_an_imported_stark_bundle_opens_on_the_dataset_with_a_run(shared_prime):
    at = open_page(None, bundle="prime")
    no_exception(at)
    assert at.sidebar.selectbox(key="w_dataset").value == "prime-human"
    assert at.sidebar.selectbox(key="w_model_a").value == "ada-002"
    assert "prime-human" in at.query_params["dataset"]


PAGES = ["1_Slices.py", "2_Queries.py", "3_Compare.py", "5_Report.py", "6_Analyses.py"]


@pytest.mark.real
@pytest.mark.parametrize("page", [None, *PAGES])
def test_a_dataset_without_a_run_says_why_and_links_to_the_one_with_runs(shared_prime, page):
    at = open_page(page, bundle="prime", dataset="prime-synthesized")
    no_exception(at)
    text = _plain(_infos(at))
    assert "prime-synthesized has no run, so there are no per-query results to show" in text
    assert "The bundle's runs are on prime-human" in text
    assert "runs/<model>/ of the STaRK folder" in text  # what the importer needs
    links = [e.proto for e in at.get("page_link") if e.proto.label.startswith("Open prime")]
    assert [_plain(link.label) for link in links] == ["Open prime-human"]
    assert "dataset=prime-human" in links[0].query_string
    assert "bundle=prime" in links[0].query_string


@pytest.mark.real
@pytest.mark.parametrize("page", ["3_Compare.py", "6_Analyses.py"])
def test_a_dataset_with_one_run_says_a_comparison_needs_a_second(shared_prime, page):
    tab = {"tab": "Disagreement A vs B"} if page == "6_Analyses.py" else {}  # a lazy tab
    at = open_page(page, bundle="prime", dataset="prime-human", **tab)
    no_exception(at)
    text = _plain(_infos(at))
    assert "prime-human has only one run (ada-002), and this needs two: model A and model B" in text
    assert "add a second run: upload one on the Home page (Add a run)" in text
    assert "Choose a model B" not in text  # there is none to choose
    assert not [e for e in at.get("page_link") if e.proto.label.startswith("Open prime")]


def test_a_map_without_coordinates_says_why_and_links_the_spatial_datasets(shared_demo_root):
    at = open_page("4_Map.py", dataset="stark-mag")  # the demo: three spatial datasets
    no_exception(at)
    text = _plain(_infos(at))
    assert "stark-mag's entities have no lat/lon coordinates (STaRK's knowledge-base" in text
    assert "The bundle's spatial datasets: beijing, shanghai and geo-glue" in text
    links = [_plain(e.proto.label) for e in at.get("page_link")]
    links = [label for label in links if label.startswith("Open ") and label != "Open data"]
    assert links == ["Open beijing", "Open shanghai", "Open geo-glue"]


@pytest.mark.real
def test_a_bundle_without_coordinates_says_how_to_get_a_map(shared_prime):
    at = open_page("4_Map.py", bundle="prime", dataset="prime-human")
    no_exception(at)
    text = _plain(_infos(at))
    assert "prime-human's entities have no lat/lon coordinates" in text
    assert "No dataset of this bundle has coordinates: import POIs with their location" in text


@pytest.mark.real
def test_rank_only_runs_show_ranks_and_blank_text_names_the_skb_flag(shared_prime):
    at = open_page("2_Queries.py", bundle="prime", dataset="prime-human", a="ada-002", q="0",
                   qd="prime-human")  # fmt: skip
    no_exception(at)
    tables = [e.proto.body for e in at.get("html") if "<table class='ranking'>" in e.proto.body]
    assert len(tables) == 2  # gold, then ada-002's ranking
    ranking = tables[-1]
    head = ranking.split("</thead>")[0]
    assert "<th>score</th>" not in head  # pred_rank has no scores: none are made up
    assert "1000.0000" not in ranking
    assert "<th>rank</th>" in head
    assert ranking.count("(no text: import with --skb)") == 20


def test_compare_slices_start_on_a_column_with_more_than_one_value(tmp_path, monkeypatch):
    """A dataset whose query_type has one value (a manifest's query_type, as every STaRK
    human-generated set): the per-slice table starts on the metapath column."""
    monkeypatch.setenv(ROOTS_ENV, str(make_wide_bundle(tmp_path)))
    at = open_page("3_Compare.py", bundle="wide", dataset="mag", a="mor", b="bm25")
    no_exception(at)
    assert at.selectbox(key="cmp_slice").value == "metapath"
    view = at.dataframe[-1].value  # the per-slice table comes last
    assert set(view["slice"]) == {"all", "metapath"}  # the whole dataset, then each value
    assert view["value"].nunique() > 1


def test_mrr_causes_read_the_top_10_and_text_datasets_list_no_coordinate_cause(shared_demo_root):
    at = open_page("6_Analyses.py", dataset="stark-mag", metric="mrr")
    no_exception(at)
    caption = " ".join(c.value for c in at.caption)
    assert "in the top 10 (mrr has no cutoff" in caption
    assert "k = 10" not in caption
    assert "location-indistinguishable" not in _frame(at, "taxonomy_counts").columns
    spatial = open_page("6_Analyses.py", dataset="beijing", metric="recall@10")
    assert "location-indistinguishable" in _frame(spatial, "taxonomy_counts").columns
    assert "at k = 10 (the cutoff of recall@10)" in " ".join(c.value for c in spatial.caption)


def test_the_cjk_font_warning_is_shown_once(monkeypatch):
    import ui.paper

    monkeypatch.setattr(ui.paper, "cjk_font_available", lambda: False)
    monkeypatch.setattr("analysis.present.fonts.cjk_font_available", lambda: False)
    at = open_page(None, dataset="beijing")
    no_exception(at)
    warned = [w.value for w in at.sidebar.warning if "will show as boxes" in w.value]
    assert len(warned) == 1
    assert "fonts\\-noto\\-cjk" in warned[0]
    at.run()
    assert not [w for w in at.sidebar.warning if "will show as boxes" in w.value]


def test_no_warning_without_cjk_text(monkeypatch):
    import ui.paper

    monkeypatch.setattr(ui.paper, "cjk_font_available", lambda: False)
    monkeypatch.setattr("analysis.present.fonts.cjk_font_available", lambda: False)
    at = open_page(None, dataset="stark-mag")
    no_exception(at)
    assert not [w for w in at.sidebar.warning if "will show as boxes" in w.value]


def test_slices_export_for_a_paper(chromium_path):
    del chromium_path
    at = open_page("1_Slices.py", dataset="stark-prime", a="bm25")
    no_exception(at)
    export_button(at, "slices_bars").click().run()
    no_exception(at)
    (done,) = [v for k, v in at.session_state["_paper_exports"].items() if k[0] == "slices_bars"]
    assert done["png"].startswith(b"\x89PNG")
    assert b"<svg" in done["svg"][:300]
    assert "\\caption{stark-prime: hit@1 by" in done["tex"]
    assert "slices of fewer than 10 queries are left out" in done["caption"]
    labels = [b.label for b in at.get("download_button")]
    assert {"PNG (2x)", "SVG", "LaTeX caption"} <= set(labels)
