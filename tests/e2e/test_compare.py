"""Browser: the Compare page. Clicking a point of the scatter opens that query, and the URL
then reopens the same view on a new page load (a new session), in the tab the tests share (a
new tab would start a renderer and compile the app's scripts again)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import WAIT_MS, assert_no_exception, screenshot, wait_ready

pytestmark = pytest.mark.e2e

DETAIL = re.compile(r"^query id: .+$")
#: the centre (x, y) of the scatter's left-most drawn point, in page coordinates
LEFTMOST_POINT = """el => {
  const boxes = [...el.querySelectorAll('.scatterlayer path.point')]
    .map(p => p.getBoundingClientRect()).filter(b => b.width > 0 && b.height > 0);
  const b = boxes.reduce((a, c) => (c.x < a.x ? c : a));
  return [b.x + b.width / 2, b.y + b.height / 2];
}"""


def _shown_query(page) -> str:
    """The "query id: …" line of the query detail (waits for it)."""
    line = page.locator("[data-testid=stText]").filter(has_text=DETAIL).first
    line.wait_for(timeout=WAIT_MS)
    return line.inner_text().strip()


def _click_a_point(page) -> None:
    chart = page.locator("[data-testid=stPlotlyChart]").first
    chart.wait_for()
    chart.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    chart.locator(".scatterlayer path.point").first.wait_for()
    # a point well inside the plot (the legend sits on the right): the left-most one, found in
    # one call rather than one round trip per point
    x, y = chart.evaluate(LEFTMOST_POINT)
    # plotly's drag layer covers the points: hover first (plotly picks the point), then click
    page.mouse.move(x, y)
    page.wait_for_timeout(300)
    page.mouse.click(x, y)


def test_clicking_a_scatter_point_opens_the_query_and_the_url_reopens_it(server, page):
    page.goto(f"{server}/Compare?dataset=stark-mag&metric=mrr")
    wait_ready(page)
    assert_no_exception(page)
    page.get_by_text("Per query: A against B").first.wait_for()
    assert "q=" not in page.url

    _click_a_point(page)
    # Streamlit writes the URL with history.replaceState: poll the URL rather than wait for a
    # navigation
    expect(page).to_have_url(re.compile(r"[?&]q="), timeout=WAIT_MS)
    wait_ready(page)
    assert_no_exception(page)
    shown = _shown_query(page)
    assert re.search(r"[?&]qd=stark-mag", page.url)
    # both rankings side by side, with the gold column of each model
    page.get_by_text("Top 20 of both models").first.wait_for()
    page.get_by_text("Δrank of each gold document").first.wait_for()
    page.get_by_text("Most different rankings (Jaccard@k)").first.wait_for()
    screenshot(page, "compare")

    url = page.url  # opened again: a new page load, a new session of its own
    page.goto("about:blank")
    page.goto(url)
    wait_ready(page)
    assert_no_exception(page)
    assert _shown_query(page) == shown
    assert "metric=mrr" in page.url
