"""Browser: the three jobs on bundles the importers made from the shared real files (marker
``real``): find and inspect a failing GeoGLUE query with its POI names and text; compare two
GeoGLUE baselines and open a query from the scatter; slice STaRK-MAG's test queries by their MoR
metapath (51 values and "(missing)": the real cardinality of a metapath column)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from analysis.io.bundle import Dataset, load_dataset, read_manifest
from analysis.present.slicing import slice_labels
from tests.e2e.conftest import WAIT_MS, assert_no_exception, screenshot, wait_ready
from tests.e2e.test_compare import _click_a_point
from tests.e2e.test_compare import _shown_query as _compare_query
from tests.e2e.test_queries import _click_row, _shown_query
from tests.e2e.test_slices import _ticks

pytestmark = [pytest.mark.e2e, pytest.mark.real]


def _imported(roots: Path, bundle: str, dataset: str) -> Dataset:
    """The dataset as the app reads it, from the bundle the importer wrote."""
    return load_dataset(read_manifest(roots / bundle).datasets[dataset], split="all")


def test_real_geoglue_failing_query_with_poi_names_and_text(real_server, real_roots, page):
    page.goto(f"{real_server}/Queries?bundle=geo&dataset=geoglue&a=bm25&metric=recall@10")
    wait_ready(page)
    assert_no_exception(page)
    caption = page.get_by_text(re.compile(r"\d+ of 200 queries of model A pass the filters"))
    caption.first.wait_for()  # the test split (200 queries), failures only
    _click_row(page, 0)
    expect(page).to_have_url(re.compile(r"[?&]q=test-\d+"), timeout=WAIT_MS)
    wait_ready(page)
    assert_no_exception(page)
    query_id = re.search(r"[?&]q=(test-\d+)", page.url).group(1)
    ds = _imported(real_roots, "geo", "geoglue")
    text = ds.queries.set_index("query_id").loc[query_id, "text"]
    assert _shown_query(page) == text
    gold, ranking = page.locator("table.ranking").first, page.locator("table.ranking").last
    gold.wait_for()
    (gold_id,) = ds.qrels.loc[ds.qrels["query_id"] == query_id, "doc_id"]
    name = ds.entities.set_index("doc_id").loc[gold_id, "name"]
    assert name in gold.inner_text()  # the gold POI by its name, not a bare row number
    rows = ranking.locator("tbody tr")
    assert rows.count() == 20
    assert ranking.locator("b").count() == 20  # every retrieved POI shows its name
    assert ranking.locator("mark").count() >= 1  # the query's CJK bigrams in the POI text
    assert re.search(r"\d( m| km)", ranking.inner_text())  # distance to the query
    screenshot(page, "real-geoglue-queries")


def test_real_geoglue_compare_two_baselines_and_open_a_query(real_server, real_roots, page):
    page.goto(
        f"{real_server}/Compare?bundle=geo&dataset=geoglue&a=bm25-distance-fusion&b=bm25&metric=mrr"
    )
    wait_ready(page)
    assert_no_exception(page)
    page.get_by_text("Per query: A against B").first.wait_for()
    _click_a_point(page)
    expect(page).to_have_url(re.compile(r"[?&]q=test-\d+"), timeout=WAIT_MS)
    wait_ready(page)
    assert_no_exception(page)
    query_id = re.search(r"[?&]q=(test-\d+)", page.url).group(1)
    assert _compare_query(page) == f"query id: {query_id}"
    page.get_by_text("Top 20 of both models").first.wait_for()
    page.get_by_text("Δrank of each gold document").first.wait_for()
    screenshot(page, "real-geoglue-compare")


def test_real_mag_slice_by_the_metapaths_of_the_test_split(real_server, real_roots, page):
    ds = _imported(real_roots, "mag", "mag-synthesized")
    labels = slice_labels(ds.queries.loc[ds.queries["split"] == "test", "metapath"])
    n_values = labels.nunique()
    assert n_values == 52  # 51 metapaths and "(missing)" (62 queries have none)
    base = f"{real_server}/Slices?bundle=mag&dataset=mag-synthesized&slice=metapath"
    page.goto(base)
    wait_ready(page)
    assert_no_exception(page)
    ticks = _ticks(page)
    assert len(ticks) == 16  # top 15 values + "(other)"
    (other,) = [t for t in ticks if t.startswith("(other)")]
    assert other.startswith(f"(other) {n_values - 15} values")
    # every value, sorted by model A's mean (the whole test split has 2,665 queries)
    page.goto(f"{base}&top=60&min_n=1&sort=value")
    wait_ready(page)
    assert_no_exception(page)
    assert len(_ticks(page)) == n_values
    box = page.locator("[data-testid=stPlotlyChart]").first.bounding_box()
    assert box is not None
    assert box["height"] >= 20 * n_values  # one readable row per value
    screenshot(page, "real-mag-slices-52-metapaths")
