"""Browser: the Queries page on the demo bundle (click a row, permalink, reload)."""

from __future__ import annotations

import re

import pytest

from analysis.io.bundle import load_dataset, read_manifest
from tests.e2e.conftest import ROOT, assert_no_exception, screenshot, wait_ready

pytestmark = pytest.mark.e2e

TABLE = ".st-key-failures [data-testid=stDataFrame]"
HEADER_PX = 35  # glide data grid: header and row height of st.dataframe
ROW_PX = 35
CHECKBOX_X = 18  # the row-selection checkbox column, left of the first data column


def _query_text(dataset: str, query_id: str) -> str:
    queries = load_dataset(read_manifest(ROOT / "data" / "demo").datasets[dataset]).queries
    return str(queries.loc[queries["query_id"] == query_id, "text"].iloc[0])


def _shown_query(page) -> str:
    code = page.locator("[data-testid=stCode] code").first
    code.wait_for(timeout=30_000)
    return code.inner_text().strip()


def test_click_row_shows_query_and_permalink_reopens_it(server, page):
    page.goto(f"{server}/Queries?datasets=stark-mag&a=bm25&metric=hit&k=10")
    wait_ready(page)
    assert_no_exception(page)
    assert page.locator("[data-testid=stCode]").count() == 0  # nothing selected yet
    grid = page.locator(TABLE)
    grid.wait_for()
    box = grid.bounding_box()
    assert box is not None

    # the grid is a canvas: click the selection checkbox of the third row
    row = 2
    target = (box["x"] + CHECKBOX_X, box["y"] + HEADER_PX + ROW_PX * row + ROW_PX / 2)
    page.mouse.click(*target)
    page.wait_for_url(re.compile(r"[?&]q=[^&]+"), timeout=30_000)
    wait_ready(page)
    assert_no_exception(page)
    query_id = re.search(r"[?&]q=([^&]+)", page.url).group(1)
    assert re.search(r"[?&]qd=stark-mag(&|$)", page.url)
    expected = _query_text("stark-mag", query_id)
    assert _shown_query(page) == expected
    page.get_by_text("Model A's ranked list").first.wait_for()

    # reloading the permalink shows the same query
    link = page.url
    page.goto(link)
    wait_ready(page)
    assert_no_exception(page)
    assert f"q={query_id}" in page.url
    assert _shown_query(page) == expected

    page.set_viewport_size({"width": 1400, "height": 2400})
    page.wait_for_timeout(500)
    assert screenshot(page, "queries").stat().st_size > 10_000
