"""Browser: the offline HTML report and slide deck opened from disk with the network blocked, and
the Report page (download of the report, the deck in presentation mode). Every slide is checked
at 1280 x 720 and 1920 x 1080: nothing scrolls (document and Streamlit's scroll container no
higher than the window) and the slide's content ends inside the window."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from analysis.present.report import write_report
from tests.e2e.conftest import (
    READY,
    SHOTS,
    WAIT_MS,
    assert_no_exception,
    screenshot,
    wait_jobs_done,
    wait_ready,
)

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
EXTERNAL = re.compile(r"""(src|href)\s*=\s*["']?\s*(https?:|//)""", re.I)
SIZES = [(1280, 720), (1920, 1080)]
FITS_JS = """() => {
  const main = document.querySelector('[data-testid=stMain]');
  const doc = document.documentElement;
  const nav = document.querySelector('.st-key-deck_nav, .slide.current footer');
  return {doc: doc.scrollHeight, main: main ? main.scrollHeight : 0, height: innerHeight,
          width: innerWidth, docWidth: doc.scrollWidth,
          bottom: nav ? nav.getBoundingClientRect().bottom : -1};
}"""


FITS: dict[str, dict] = {}


def _record(name: str, m: dict) -> None:
    """Keep the measurements in test-output/deck-fit.json (for the closing note)."""
    import json

    FITS[name] = m
    SHOTS.parent.mkdir(parents=True, exist_ok=True)
    (SHOTS.parent / "deck-fit.json").write_text(json.dumps(FITS, indent=1), encoding="utf-8")


def _assert_fits(page, where: str) -> dict:
    m = page.evaluate(FITS_JS)
    _record(where, m)
    assert m["doc"] <= m["height"], (where, m)
    assert m["main"] <= m["height"], (where, m)
    assert m["docWidth"] <= m["width"], (where, m)
    assert 0 < m["bottom"] <= m["height"], (where, m)  # the last row of the slide is visible
    return m


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
    expect(charts).to_have_count(n_charts, timeout=WAIT_MS)
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


#: the deck file's stage is scaled to the window (its ``resize`` handler has run)
STAGE_FITTED_JS = """() => { const r = document.getElementById('stage').getBoundingClientRect();
  return Math.abs(r.width - 1280 * Math.min(innerWidth / 1280, innerHeight / 720)) < 1; }"""


def _check_file_slide_at(page, i: int, width: int, height: int) -> None:
    """Slide ``i`` of the deck file in a ``width`` x ``height`` window: a 16:9 stage inside the
    window, nothing cut off in it, the document does not scroll; a screenshot."""
    page.set_viewport_size({"width": width, "height": height})
    page.wait_for_function(STAGE_FITTED_JS)
    slide = page.locator(".slide.current")
    box = slide.bounding_box()
    assert box is not None
    assert box["x"] >= -1
    assert box["x"] + box["width"] <= width + 1
    assert box["y"] >= -1
    assert box["y"] + box["height"] <= height + 1
    assert abs(box["width"] / box["height"] - 16 / 9) < 0.01  # 16:9 stage
    over = slide.evaluate("s => [s.scrollHeight - s.clientHeight, s.scrollWidth - s.clientWidth]")
    assert over == [0, 0], (i, width, over)  # nothing cut off inside the stage
    _assert_fits(page, f"deck file slide {i} at {width}x{height}")
    if slide.locator(".js-plotly-plot").count():
        expect(slide.locator("g.trace path").first).to_be_attached()
    page.screenshot(path=str(SHOTS / f"deck-file-{width}x{height}-{i:02d}.png"))


def test_deck_file_fits_and_navigates_by_keyboard_offline(browser, tmp_path):
    """Each slide is checked at both window sizes (the stage is scaled to the window on its
    ``resize`` event), in one walk through the slides."""
    out = tmp_path / "slides.html"
    write_report(ROOT / "data" / "demo", out, deck=True)
    text = out.read_text(encoding="utf-8")
    markup = re.sub(r"<script>.*?</script>", "", text, flags=re.S)  # plotly.js names URLs
    assert EXTERNAL.search(markup) is None
    assert "<script src" not in text
    requests: list[str] = []
    errors: list[str] = []

    def record(route) -> None:
        requests.append(route.request.url)
        route.continue_()

    width, height = SIZES[0]
    context = browser.new_context(viewport={"width": width, "height": height}, offline=True)
    page = context.new_page()
    page.route("**/*", record)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(out.as_uri())
    page.wait_for_function("() => window.deck !== undefined")
    n = page.evaluate("deck.count")
    assert 6 <= n <= 12
    for i in range(1, n + 1):
        assert page.evaluate("deck.current()") == i
        for size in SIZES:
            _check_file_slide_at(page, i, *size)
        page.keyboard.press(["ArrowRight", "PageDown", "Space"][i % 3])
    assert page.evaluate("deck.current()") == n  # stays on the last slide
    page.keyboard.press("PageUp")
    page.keyboard.press("ArrowLeft")
    assert page.evaluate("deck.current()") == n - 2
    assert page.url.endswith(f"#slide={n - 2}")
    page.keyboard.press("Home")
    assert page.evaluate("deck.current()") == 1
    assert errors == []
    assert [u for u in requests if not u.startswith("file:")] == []
    context.close()


def test_report_page_download(server, page, tmp_path):
    page.goto(f"{server}/Report?datasets=geo-glue&a=bm25&section=leaderboard")
    wait_ready(page)
    assert_no_exception(page)
    expect(page.locator("[data-testid=stPlotlyChart]").first).to_be_visible(timeout=WAIT_MS)
    expect(page.locator("[data-testid=stSidebar]")).to_be_visible()
    screenshot(page, "report")

    with page.expect_download(timeout=WAIT_MS) as info:
        page.get_by_role("button", name=re.compile("Download the report")).click()
    assert info.value.suggested_filename == "demo_all_recall-1_report.html"  # headline metric
    path = tmp_path / "downloaded.html"
    info.value.save_as(path)
    text = path.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    assert "Slices of geo-glue" in text
    assert EXTERNAL.search(text.split("<body>", 1)[1].split("<script", 1)[0]) is None
    with page.expect_download(timeout=WAIT_MS) as info:
        page.get_by_role("button", name=re.compile("Download the slides")).click()
    assert info.value.suggested_filename == "demo_all_recall-1_slides.html"

    page.get_by_text("Presentation mode").click()
    expect(page).to_have_url(re.compile(r"[?&]present=1"), timeout=WAIT_MS)
    wait_ready(page)
    assert_no_exception(page)
    expect(page.locator("[data-testid=stSidebar]")).to_be_hidden()
    expect(page.locator("[data-testid=stHeader]")).to_be_hidden()
    expect(page).to_have_url(re.compile(r"[?&]slide=1"))


#: every plotly chart of the page has drawn its SVG at the height its element has now (after a
#: resize, plotly redraws at the new height)
CHARTS_AT_SIZE_JS = """() => [...document.querySelectorAll('[data-testid=stPlotlyChart]')]
  .every(el => { const svg = el.querySelector('.main-svg');
                 return svg && Math.abs(svg.getBoundingClientRect().height
                                        - el.getBoundingClientRect().height) <= 2; })"""


def _check_slide_at(page, i: int, width: int, height: int, charts: list[float]) -> None:
    """Slide ``i`` in a ``width`` x ``height`` window: it fits, its charts are whole (their
    heights added to ``charts``); a screenshot."""
    page.set_viewport_size({"width": width, "height": height})
    page.wait_for_selector(READY)
    page.wait_for_function(CHARTS_AT_SIZE_JS)
    _assert_fits(page, f"app slide {i} at {width}x{height}")
    cropped = page.evaluate(
        """() => [...document.querySelectorAll('[data-testid=stPlotlyChart]')].map(el => {
             const svg = el.querySelector('.main-svg');
             return svg ? svg.getBoundingClientRect().height - el.getBoundingClientRect().height
                        : 0; })"""
    )
    assert all(c <= 2 for c in cropped), (i, width, cropped)  # the whole chart is shown
    charts += page.evaluate(
        """() => [...document.querySelectorAll('[data-testid=stPlotlyChart] .main-svg')]
             .map(svg => svg.getBoundingClientRect().height)"""
    )
    page.screenshot(path=str(SHOTS / f"deck-app-{width}x{height}-{i:02d}.png"))


def test_deck_in_the_app_fits_at_both_sizes_and_keys_move(server, browser):
    """Each slide is checked at both window sizes (the layout is CSS of the window's size, so a
    resize shows what a window of that size opens on, without another rerun per slide)."""
    width, height = SIZES[0]
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.goto(f"{server}/Report?present=1&slide=1")
    wait_jobs_done(page)  # the deck's content is a job
    assert_no_exception(page)
    for testid in ("stSidebar", "stHeader", "stToolbar", "stDecoration"):
        expect(page.locator(f"[data-testid={testid}]")).to_be_hidden()
    font = page.evaluate("() => getComputedStyle(document.querySelector('h2')).fontFamily")
    assert "Noto Sans CJK SC" in font  # the theme's font stack names the CJK font
    total = int(re.search(r"of (\d+)", page.locator(".st-key-deck_nav").inner_text()).group(1))
    assert 6 <= total <= 12
    keys = ["ArrowRight", "PageDown", "Space"]
    charts: dict[tuple[int, int], list[float]] = {size: [] for size in SIZES}
    for i in range(1, total + 1):
        expect(page.locator(".st-key-deck_nav")).to_contain_text(f"Slide {i} of {total}")
        assert re.search(rf"[?&]slide={i}(&|$)", page.url)
        for size in SIZES:
            _check_slide_at(page, i, *size, charts[size])
        if i < total:
            page.keyboard.press(keys[i % 3])
            page.wait_for_function(
                f"() => /[?&]slide={i + 1}(&|$)/.test(location.search)", timeout=WAIT_MS
            )
            wait_ready(page)
            assert_no_exception(page)
    # charts use the height the window leaves (not a fixed 440 px): 60-85 % of the window
    for (width, height), found in charts.items():
        assert found, "the deck has chart slides"
        _record(f"app chart heights at {width}x{height}", {"min": min(found), "max": max(found)})
        assert min(found) >= 0.55 * height, (width, found)
        assert max(found) <= 0.85 * height, (width, found)
    page.keyboard.press("PageUp")
    page.wait_for_function(f"() => /[?&]slide={total - 1}(&|$)/.test(location.search)")
    wait_ready(page)
    page.keyboard.press("ArrowLeft")
    page.wait_for_function(f"() => /[?&]slide={total - 2}(&|$)/.test(location.search)")
    wait_ready(page)
    # the link reopens the same slide in presentation mode, in a window of the other size
    other = context.new_page()
    other.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})
    other.goto(page.url)
    wait_ready(other)
    expect(other.locator("[data-testid=stSidebar]")).to_be_hidden()
    expect(other.locator(".st-key-deck_nav")).to_contain_text(f"Slide {total - 2} of {total}")
    context.close()
