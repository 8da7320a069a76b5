"""Browser: the Slices page, on the demo and on a 60-value slice column."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import assert_no_exception, screenshot, wait_ready

pytestmark = pytest.mark.e2e


def _ticks(page) -> list[str]:
    """The y tick labels of the bar chart, top to bottom."""
    page.locator(".js-plotly-plot .ytick").first.wait_for()
    ticks = page.locator(".js-plotly-plot").first.locator(".ytick")
    found = [(ticks.nth(i).bounding_box(), ticks.nth(i).text_content()) for i in
             range(ticks.count())]  # fmt: skip
    return [text or "" for box, text in sorted(found, key=lambda t: t[0]["y"] if t[0] else 0)]


def test_slices_loads_with_horizontal_bars_in_numeric_order(server, page):
    page.goto(f"{server}/Slices?dataset=beijing&slice=n_gold_bucket&a=bm25")
    wait_ready(page)
    assert_no_exception(page)
    charts = page.locator("[data-testid=stPlotlyChart]")
    charts.first.wait_for()
    assert charts.count() == 2
    page.get_by_text("Worst slices first (model A)").first.wait_for()
    ticks = _ticks(page)
    assert ticks == [t for t in ("1", "2–5", "6–20", ">20") if t in ticks]
    assert "slice=n_gold_bucket" in page.url
    assert screenshot(page, "slices").stat().st_size > 10_000


def test_slice_by_a_sixty_value_column(wide_server, page):
    page.goto(f"{wide_server}/Slices?slice=metapath")
    wait_ready(page)
    assert_no_exception(page)
    ticks = _ticks(page)
    assert len(ticks) == 16  # top 15 values + "(other)"
    assert ticks[-1].startswith("(other) 45 values")
    box = page.locator("[data-testid=stPlotlyChart]").first.bounding_box()
    assert box is not None
    assert box["height"] >= 400  # one readable row per value, not a squashed strip
    # the whole column, sorted by value: every value gets its own row
    page.goto(f"{wide_server}/Slices?slice=metapath&top=60&min_n=2&sort=value")
    wait_ready(page)
    assert_no_exception(page)
    assert len(_ticks(page)) == 60
    assert screenshot(page, "slices-60-values").stat().st_size > 10_000
