"""Browser: the Slices page on the demo bundle (deep link as the first request)."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import assert_no_exception, screenshot, wait_ready

pytestmark = pytest.mark.e2e


def test_slices_loads_with_charts_and_keeps_choices_in_url(server, page):
    page.goto(f"{server}/Slices?slice=n_gold_bucket&metric=recall&k=20&a=bm25")
    wait_ready(page)
    assert_no_exception(page)
    charts = page.locator("[data-testid=stPlotlyChart]")
    charts.first.wait_for()
    assert charts.count() == 2
    page.get_by_text("Worst slices first (model A)").first.wait_for()
    page.locator(".js-plotly-plot .xtick").first.wait_for()
    ticks = page.locator(".js-plotly-plot").first.locator(".xtick").all_text_contents()
    assert ticks == ["1", "2–5", "6–20", ">20"]
    assert "slice=n_gold_bucket" in page.url
    assert "metric=recall" in page.url
    assert "k=20" in page.url
    assert screenshot(page, "slices").stat().st_size > 10_000
