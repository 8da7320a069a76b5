"""Browser: find and inspect a failing query with entity text on the Queries page."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from analysis.io.bundle import load_dataset, read_manifest
from tests.e2e.conftest import ROOT, WAIT_MS, assert_no_exception, screenshot, wait_ready

pytestmark = pytest.mark.e2e

TABLE = ".st-key-failures [data-testid=stDataFrame]"
HEADER_PX = 35  # glide data grid: header and row height of st.dataframe
ROW_PX = 35
CHECKBOX_X = 18  # the row-selection checkbox column, left of the first data column


def _query_text(dataset: str, query_id: str) -> str:
    queries = load_dataset(read_manifest(ROOT / "data" / "demo").datasets[dataset]).queries
    return str(queries.loc[queries["query_id"] == query_id, "text"].iloc[0])


def _shown_query(page) -> str:
    code = page.locator("div.query-text").first
    code.wait_for(timeout=WAIT_MS)
    return code.inner_text().strip()


def _click_row(page, row: int) -> None:
    grid = page.locator(TABLE)
    grid.wait_for()
    box = grid.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + CHECKBOX_X, box["y"] + HEADER_PX + ROW_PX * row + ROW_PX / 2)


def test_find_and_inspect_a_failing_query_with_entity_text(server, page):
    page.goto(f"{server}/Queries?dataset=stark-amazon&a=bm25&metric=hit@1")
    wait_ready(page)
    assert_no_exception(page)
    assert page.locator("div.query-text").count() == 0  # nothing selected yet
    search = page.get_by_test_id("stTextInputField").first
    search.fill("glove")
    search.press("Enter")
    expect(page).to_have_url(re.compile(r"[?&]search=glove"), timeout=WAIT_MS)
    wait_ready(page)

    _click_row(page, 0)
    expect(page).to_have_url(re.compile(r"[?&]q=[^&]+"), timeout=WAIT_MS)
    wait_ready(page)
    assert_no_exception(page)
    query_id = re.search(r"[?&]q=([^&]+)", page.url).group(1)
    text = _query_text("stark-amazon", query_id)
    assert _shown_query(page) == text
    assert "glove" in text.casefold()
    ranking = page.locator("table.ranking").last
    ranking.wait_for()
    assert ranking.locator("tbody tr").count() == 20
    assert ranking.locator("mark").count() >= 1  # query terms highlighted in entity text
    assert page.locator("table.ranking tr[style*=background]").count() >= 1  # gold rows

    # next without going back to the list, then the permalink reopens the query
    page.get_by_role("button", name="Next →").click()
    wait_ready(page)
    assert_no_exception(page)
    assert not re.search(rf"[?&]q={re.escape(query_id)}(&|$)", page.url)
    link = page.url
    shown = _shown_query(page)
    page.goto(link)
    wait_ready(page)
    assert _shown_query(page) == shown
    page.set_viewport_size({"width": 1400, "height": 2000})
    page.wait_for_timeout(500)
    assert screenshot(page, "queries").stat().st_size > 10_000


def test_poi_query_shows_distances(server, page):
    page.goto(f"{server}/Queries?dataset=geo-glue&a=bm25&metric=recall@10")
    wait_ready(page)
    _click_row(page, 0)
    expect(page).to_have_url(re.compile(r"[?&]q=[^&]+"), timeout=WAIT_MS)
    wait_ready(page)
    assert_no_exception(page)
    ranking = page.locator("table.ranking").last
    ranking.wait_for()
    assert ranking.locator("th", has_text="distance").count() == 1
    assert re.search(r"\d( m| km)", ranking.inner_text())
    screenshot(page, "queries-poi")
