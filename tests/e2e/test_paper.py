"""Browser: real data, paper-ready (marker ``real``), on bundles the importers write from the
shared real files: STaRK-Prime as imported (a synthesized set without a run, the human set with
ada-002's rank-only run and AvaTaR's pattern groups, no ``--skb``) and GeoGLUE with its three
baseline runs, plus a bundle of two GeoGLUE splits whose model sets differ and hold a model
named in Chinese.

Shown: the default dataset has a run; the empty states' text and link; exports for a paper
from the Slices, Compare, Map, Analyses and Report pages, downloaded and measured in chromium
(every text inside the canvas, no rotated Chinese) with AvaTaR's long pattern labels and a
Chinese model name; the same model colour on two datasets. Screenshots go to
``test-output/screenshots``; the exported files to ``test-output/exports``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from playwright.sync_api import expect

from analysis.present.palette import model_colours
from analysis.present.paper import has_cjk
from tests.e2e.conftest import ROOT, assert_no_exception, screenshot, serve_for_module, wait_ready
from tests.figure_check import clipped, rotated, text_boxes

pytestmark = [pytest.mark.e2e, pytest.mark.real]

EXPORTS = ROOT / "test-output" / "exports"
CHINESE_MODEL = "距离融合检索模型-bm25-distance-fusion"
LONG = 180_000  # ms: a figure is rendered by kaleido inside a loaded server


def _two_splits(roots: Path) -> None:
    """``geo-two``: GeoGLUE's test and dev splits as two datasets over the imported files,
    with different model sets (char-ngram-tfidf is the 2nd model on one, the 1st on the
    other) and, on dev, the fusion run under a Chinese name."""
    files = "../geo/geoglue"
    common = (
        'family = "spatial"\ncrs = "EPSG:4326"\n'
        f'queries = "{files}/queries.parquet"\nqrels = "{files}/qrels.parquet"\n'
        f'entities = "{files}/entities.parquet"\n'
        f'splits = {{ dev = "{files}/split/dev.index", test = "{files}/split/test.index" }}\n'
        'metrics = ["recall@10", "ndcg@10", "mrr"]\n'
    )
    run = f"{files}/runs/{{}}.parquet"
    (roots / "geo-two").mkdir()
    (roots / "geo-two" / "bundle.toml").write_text(
        'name = "geo-two"\n\n[datasets.geoglue-test]\n' + common + 'split = "test"\n'
        f'runs = {{ bm25 = "{run.format("bm25")}", '
        f'char-ngram-tfidf = "{run.format("char-ngram-tfidf")}" }}\n\n'
        "[datasets.geoglue-dev]\n" + common + 'split = "dev"\n'
        f'runs = {{ char-ngram-tfidf = "{run.format("char-ngram-tfidf")}", '
        f'"{CHINESE_MODEL}" = "{run.format("bm25-distance-fusion")}" }}\n',
        encoding="utf-8",
    )


@pytest.fixture(scope="module")
def paper_roots(real_dir: Path, tmp_path_factory) -> Path:
    from analysis.io.importers import import_geoglue, import_stark

    roots = tmp_path_factory.mktemp("paper-roots")
    import_stark(real_dir / "stark" / "prime", roots / "prime")
    import_geoglue(
        real_dir / "geo" / "geoglue_clean_subset", roots / "geo", name="geoglue", baselines=True
    )
    _two_splits(roots)
    return roots


@pytest.fixture(scope="module")
def paper_server(chromium_path: str, paper_roots: Path) -> Iterator[str]:
    del chromium_path
    yield from serve_for_module({"RETRIEVAL_DASHBOARD_DATA_ROOTS": str(paper_roots)})


def _open(page, url: str) -> None:
    page.goto(url)
    wait_ready(page, timeout=LONG)
    assert_no_exception(page)


def _export(page, browser, index: int, name: str) -> tuple[str, list[str]]:
    """Open the ``index``-th "Export for a paper" control of the page, render, download the
    SVG, PNG and caption; check the SVG in chromium; return the caption (LaTeX) and the
    SVG's texts."""
    wait_ready(page, timeout=LONG)
    box = page.get_by_test_id("stExpander").filter(has_text="Export for a paper").nth(index)
    box.scroll_into_view_if_needed()
    render = box.get_by_role("button", name="Render PNG, SVG and caption")
    if not render.is_visible():
        box.locator("summary").click()  # the expander's content is drawn by the rerun it starts
        wait_ready(page, timeout=LONG)  # as a person, click Render once the page has settled
    render.click()
    svg_button = box.get_by_test_id("stDownloadButton").filter(has_text="SVG")
    try:
        svg_button.wait_for(timeout=LONG)
    except Exception:
        screenshot(page, f"paper-failed-{name}")
        raise
    wait_ready(page, timeout=LONG)
    EXPORTS.mkdir(parents=True, exist_ok=True)
    files = {}
    for label, ext in (("SVG", "svg"), ("PNG (2x)", "png"), ("LaTeX caption", "tex")):
        with page.expect_download(timeout=LONG) as info:
            box.get_by_test_id("stDownloadButton").filter(has_text=label).click()
        path = EXPORTS / f"browser-{name}.{ext}"
        info.value.save_as(path)
        files[ext] = path.read_bytes()
    measured = text_boxes(browser, files["svg"])
    assert measured.texts, name
    assert clipped(measured) == [], (name, clipped(measured))
    assert [b.text for b in rotated(measured) if has_cjk(b.text)] == [], name
    png = files["png"]
    size = (int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big"))
    assert size == (2 * measured.width, 2 * measured.height), name  # PNG at 2x
    tex = files["tex"].decode("utf-8")
    assert tex.startswith("\\begin{figure}"), name
    assert "\\caption{" in tex, name
    return tex, [b.text for b in measured.texts]


def test_an_imported_stark_bundle_opens_on_its_run_and_every_empty_state_explains(
    paper_server, page
):
    _open(page, f"{paper_server}/?bundle=prime")
    expect(page).to_have_url(re.compile(r"dataset=prime-human"), timeout=LONG)
    page.get_by_text("Leaderboard: prime-human").first.wait_for()
    # the synthesized queries have no run: the page says why, where the runs are, what to do
    _open(page, f"{paper_server}/Slices?bundle=prime&dataset=prime-synthesized")
    page.get_by_text("prime-synthesized has no run, so there are no per-query results").wait_for()
    page.get_by_text("runs/<model>/ of the STaRK folder", exact=False).first.wait_for()
    screenshot(page, "paper-empty-slices")
    page.get_by_role("link", name="Open prime-human").click()
    expect(page).to_have_url(re.compile(r"/Slices\?.*dataset=prime-human"), timeout=LONG)
    wait_ready(page, timeout=LONG)
    page.locator("[data-testid=stPlotlyChart]").first.wait_for(timeout=LONG)
    # ada-002's pred_rank run: ranks, no made-up scores; no SKB: the text says which flag
    query = "bundle=prime&dataset=prime-human&a=ada-002&q=0&qd=prime-human"
    _open(page, f"{paper_server}/Queries?{query}")
    ranking = page.locator("table.ranking").last
    ranking.wait_for(timeout=LONG)
    head = ranking.locator("thead").inner_text()
    assert "rank" in head
    assert "score" not in head
    assert "1000.0000" not in ranking.inner_text()
    assert ranking.get_by_text("(no text: import with --skb)").count() == 20
    screenshot(page, "paper-rank-only-no-skb")
    # one run on prime-human: Compare says it needs a second and how to add one
    _open(page, f"{paper_server}/Compare?bundle=prime&dataset=prime-human")
    page.get_by_text("prime-human has only one run (ada-002), and this needs two").wait_for()
    page.get_by_text("upload one on the Home page (Add a run)", exact=False).first.wait_for()
    screenshot(page, "paper-empty-compare-one-run")


def test_slices_export_with_avatar_pattern_labels(paper_server, browser, page):
    _open(
        page,
        f"{paper_server}/Slices?bundle=prime&dataset=prime-human&slice=pattern&min_n=1&top=20",
    )
    page.locator("[data-testid=stPlotlyChart]").first.wait_for(timeout=LONG)
    tex, texts = _export(page, browser, 0, "slices-avatar-patterns")
    assert any(t.endswith("(n = 1)") for t in texts)  # a one-query pattern says n
    assert any(t.startswith("[1] Queries") and "…" in t for t in texts)  # cut on the axis
    whole = (
        "Queries about subordination in biological pathways involving gene/protein and "
        "leading to a disease"
    )
    assert whole in tex  # cut on the axis, whole in the caption
    _export(page, browser, 1, "slices-heatmap-avatar-patterns")
    screenshot(page, "paper-slices-avatar-patterns")


def test_compare_map_analyses_and_report_exports_with_a_chinese_model_name(
    paper_server, browser, page
):
    base = f"{paper_server}/{{}}?bundle=geo-two&dataset=geoglue-dev&metric=mrr"
    models = f"&a={quote(CHINESE_MODEL)}&b=char-ngram-tfidf"
    _open(page, base.format("Compare") + models)
    page.get_by_text("Per query: A against B").first.wait_for(timeout=LONG)
    tex, texts = _export(page, browser, 0, "compare-scatter")
    assert CHINESE_MODEL in tex
    assert any("距离融合" in t for t in texts)  # the Chinese name in the figure
    _export(page, browser, 1, "compare-delta-histogram")
    screenshot(page, "paper-compare")
    _open(page, base.format("Map") + models + "&md=geoglue-dev&q=dev-9")  # stacks in both lists
    page.get_by_text("One query on the map").first.wait_for(timeout=LONG)
    tex, _ = _export(page, browser, 1, "map-snapshot")  # 0: the stack-size histogram
    assert "spread on a ring" in tex
    screenshot(page, "paper-map")
    _open(page, base.format("Analyses") + models)
    page.get_by_role("tab", name="Complementarity").click()
    _export(page, browser, 0, "analyses-solved")
    _open(page, base.format("Report") + models + "&section=slices")
    _export(page, browser, 0, "report-slices")
    screenshot(page, "paper-report-slices")


def _colours(page) -> dict[str, str]:
    """Trace name -> bar colour of the page's first plotly chart (the slice bars)."""
    page.locator(".js-plotly-plot").first.wait_for(timeout=LONG)
    pairs = page.evaluate(
        "() => document.querySelector('.js-plotly-plot').data"
        ".map(t => [t.name, t.marker && t.marker.color])"
    )
    return {str(name): str(colour) for name, colour in pairs}


def test_the_same_model_colour_on_two_datasets(paper_server, page):
    url = f"{paper_server}/Slices?bundle=geo-two&dataset={{}}&metric=mrr&slice=query_type"
    _open(page, url.format("geoglue-test"))
    test = _colours(page)
    _open(page, url.format("geoglue-dev"))
    dev = _colours(page)
    assert set(test) == {"bm25", "char-ngram-tfidf"}
    assert set(dev) == {"char-ngram-tfidf", CHINESE_MODEL}
    # 2nd model on one dataset, 1st on the other: one colour, that of its name in the bundle
    assert test["char-ngram-tfidf"] == dev["char-ngram-tfidf"]
    expected = model_colours(["bm25", "char-ngram-tfidf", CHINESE_MODEL])
    assert test == {m: expected[m] for m in test}
    assert dev == {m: expected[m] for m in dev}
    screenshot(page, "paper-colours-geoglue-dev")
