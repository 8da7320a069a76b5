"""Browser: on the Analyses page a click on a taxonomy count lists that count's queries, and
the Coverage tab shows judged@k per model."""

from __future__ import annotations

import re

import pytest

from tests.e2e.conftest import WAIT_MS, assert_no_exception, screenshot, wait_ready

pytestmark = pytest.mark.e2e

COUNTS = ".st-key-taxonomy_counts [data-testid=stDataFrame]"
HEADER_PX = 35  # glide data grid: header and row height of st.dataframe
ROW_PX = 35
# model -> hit, no gold, not a candidate, tie, suspected, near miss (stark-prime has no
# coordinates: no location column)
NEAR_MISS_STEPS = 6


def test_a_click_on_a_count_lists_its_queries_and_coverage_shows(server, page):
    page.goto(f"{server}/Analyses?datasets=stark-prime&a=bm25&metric=hit%405")
    wait_ready(page)
    assert_no_exception(page)
    grid = page.locator(COUNTS)
    grid.wait_for(timeout=WAIT_MS)
    box = grid.bounding_box()
    assert box is not None
    # the model cell of the second row, then to the "near miss" count with the arrow keys
    page.mouse.click(box["x"] + 40, box["y"] + HEADER_PX + ROW_PX * 1 + ROW_PX / 2)
    wait_ready(page)
    for _ in range(NEAR_MISS_STEPS):
        page.keyboard.press("ArrowRight")
    wait_ready(page)
    assert_no_exception(page)
    # the second row is bm25 (the first bm25-kb-propagation, the boxes' defaults)
    caption = page.get_by_text(re.compile(r"^\d+ queries of bm25 are 'near miss'\.$"))
    caption.wait_for(timeout=WAIT_MS)
    assert screenshot(page, "analyses-taxonomy-click").stat().st_size > 10_000

    page.get_by_role("tab", name="Coverage").click()
    page.get_by_text("judged@5: the share of each query's top 5", exact=False).wait_for(
        timeout=WAIT_MS
    )
    page.get_by_text("Suspected missing answers", exact=True).wait_for(timeout=WAIT_MS)
    assert_no_exception(page)
    assert screenshot(page, "analyses-coverage").stat().st_size > 10_000
