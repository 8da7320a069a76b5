"""Browser: the offline HTML report opened from disk with the network blocked, and the Report
page (download of the report, presentation mode)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from analysis.present.report import write_report
from tests.e2e.conftest import assert_no_exception, screenshot, wait_ready

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
EXTERNAL = re.compile(r"""(src|href)\s*=\s*["']?\s*(https?:|//)""", re.I)


def test_report_file_renders_charts_offline(browser, tmp_path):
    out = tmp_path / "report.html"
    write_report(ROOT / "data" / "demo", out, datasets=["geo-glue", "stark-mag"])
    n_charts = len(re.findall(r'class="plotly-graph-div"', out.read_text(encoding="utf-8")))
    assert n_charts >= 4  # leaderboard, two slice charts, A vs B

    context = browser.new_context(viewport={"width": 1300, "height": 900}, offline=True)
    requests: list[str] = []
    errors: list[str] = []

    def block(route) -> None:
        requests.append(route.request.url)
        if route.request.url.startswith("file:"):
            route.continue_()
        else:
            route.abort()

    page = context.new_page()
    page.route("**/*", block)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(out.as_uri())
    charts = page.locator(".plotly-graph-div.js-plotly-plot")
    expect(charts).to_have_count(n_charts, timeout=30_000)
    for i in range(n_charts):
        chart = charts.nth(i)
        chart.scroll_into_view_if_needed()
        expect(chart.locator(".main-svg").first).to_be_visible()
        # drawn data: bar or marker paths in the traces of the plot
        assert chart.locator("g.trace path").count() > 0
    assert page.get_by_text("Worst queries of model A on geo-glue").count() == 1
    assert errors == []
    assert [u for u in requests if not u.startswith("file:")] == []
    page.locator("#leaderboard").scroll_into_view_if_needed()
    screenshot(page, "report-file")
    context.close()


def test_report_page_download_and_presentation_mode(server, page, tmp_path):
    page.goto(f"{server}/Report?datasets=geo-glue&a=bm25&section=leaderboard")
    wait_ready(page, timeout=120_000)
    assert_no_exception(page)
    expect(page.locator("[data-testid=stPlotlyChart]").first).to_be_visible(timeout=60_000)
    expect(page.locator("[data-testid=stSidebar]")).to_be_visible()
    screenshot(page, "report")

    with page.expect_download(timeout=60_000) as info:
        page.get_by_role("button", name=re.compile("Download the report")).click()
    path = tmp_path / "downloaded.html"
    info.value.save_as(path)
    text = path.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    assert "Slices of geo-glue" in text
    assert EXTERNAL.search(text.split("<body>", 1)[1].split("<script", 1)[0]) is None

    page.get_by_text("Presentation mode").click()
    expect(page).to_have_url(re.compile(r"[?&]present=1"), timeout=30_000)
    wait_ready(page)
    assert_no_exception(page)
    expect(page.locator("[data-testid=stSidebar]")).to_be_hidden()
    expect(page).to_have_url(re.compile(r"[?&]slide=1"))
    page.get_by_role("button", name="Next ▶").click()
    expect(page).to_have_url(re.compile(r"[?&]slide=2"), timeout=30_000)
    wait_ready(page)
    page.get_by_role("button", name="Next ▶").click()
    expect(page).to_have_url(re.compile(r"[?&]slide=3"), timeout=30_000)
    wait_ready(page)
    assert_no_exception(page)
    chart = page.locator("[data-testid=stPlotlyChart]")
    expect(chart).to_have_count(1)
    expect(chart.locator(".main-svg").first).to_be_visible()
    screenshot(page, "report-present")

    # the link reopens the same slide in presentation mode
    other = page.context.new_page()
    other.goto(page.url)
    wait_ready(other, timeout=120_000)
    expect(other.locator("[data-testid=stSidebar]")).to_be_hidden()
    expect(other.get_by_text(re.compile(r"^Slide 3 of \d+$"))).to_be_visible()
    other.close()
