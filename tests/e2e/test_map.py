"""Browser: the Map page on the demo (no basemap: nothing needs the internet)."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import (
    READY,
    SHOTS,
    WAIT_MS,
    assert_no_exception,
    screenshot,
    wait_drawn,
    wait_ready,
)

pytestmark = pytest.mark.e2e

CHART = "[data-testid=stDeckGlJsonChart]"


def click_when_idle(page, x: float, y: float) -> None:
    """Click a deck.gl map at ``(x, y)`` once it has picked the object there and drawn what
    the hover changed.

    deck.gl reports a click only as a tap: pointer down and up handled within 250 ms of each
    other (by the clock at handling), and its pointer-down handler picks synchronously. So the
    press is made only when the map is interactive (the tooltip of the object under the pointer
    shows) and has no frame left to draw, in place (no second move). With software WebGL on a
    heavily loaded machine the pick alone can still take longer than 250 ms (700 ms was seen at
    load 17 on 2 cores); the click is then a long press and selects nothing."""
    page.mouse.move(x, y)
    page.wait_for_function(
        "() => [...document.querySelectorAll('.deck-tooltip')]"
        ".some(t => t.style.display !== 'none' && t.innerText.trim() !== '')",
        timeout=WAIT_MS,
    )
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    page.mouse.down()
    page.mouse.up()


#: how long a tap may take to start the page's run (the selection sent to the server) before
#: the user taps again
TAP_WAIT_MS = 8_000
TAPS = 4
SELECTED = "() => /[?&]poi=/.test(window.location.search)"
#: the selection is in the URL, or the run it started is under way
ANSWERED = f"() => ({SELECTED})() || !document.querySelector({READY!r})"
#: the selection is in the URL, or a run ended without it
FINISHED = f"() => ({SELECTED})() || !!document.querySelector({READY!r})"


def tap_until_selected(page, x: float, y: float) -> None:
    """Tap at ``(x, y)`` (:func:`click_when_idle`) until the selection is in the URL, as a user
    taps again when a tap selected nothing: a tap that became a long press (see
    :func:`click_when_idle`) sends nothing, so a second tap cannot select twice. A tap that
    selected starts the page's run at once; one that starts nothing within
    :data:`TAP_WAIT_MS`, or whose run ends without the selection, is tapped again (a run once
    started may take up to :data:`WAIT_MS`). Fails when none of :data:`TAPS` taps selects.
    Streamlit writes the URL with history.replaceState (no navigation event)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for _ in range(TAPS):
        click_when_idle(page, x, y)
        try:
            page.wait_for_function(ANSWERED, timeout=TAP_WAIT_MS, polling=50)
        except PlaywrightTimeout:  # nothing started
            pass
        else:  # a run that never ends fails the test
            page.wait_for_function(FINISHED, timeout=WAIT_MS)
            if page.evaluate(SELECTED):
                return
        page.mouse.move(x + 40, y + 40)  # away, so the next tap hovers the POI anew
    pytest.fail(f"{TAPS} taps on the map selected no POI")


def test_map_renders_and_click_selects_poi(server, page):
    # The per-query map is centred on the query's gold POI: a click in the middle of its
    # canvas lands on that POI (or a copy of it in A's/B's list, or its stack column).
    page.goto(f"{server}/Map?datasets=geo-glue&md=geo-glue&q=test-1&basemap=none")
    wait_ready(page)
    assert_no_exception(page)
    assert "poi=" not in page.url
    page.get_by_text("No POI selected", exact=False).first.wait_for()
    charts = page.locator(CHART)
    charts.first.locator("canvas").first.wait_for(state="visible", timeout=WAIT_MS)
    assert charts.count() == 1  # the query's map; the dataset's stacks only on request
    canvas = charts.first.locator("canvas").first
    canvas.scroll_into_view_if_needed()
    wait_drawn(canvas)  # deck.gl has drawn its first frame
    box = canvas.bounding_box()
    assert box is not None
    assert box["width"] > 300
    assert box["height"] > 300
    tap_until_selected(page, box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    wait_ready(page)
    assert_no_exception(page)
    table = page.locator(".st-key-map_poi_box [data-testid=stDataFrame]")
    table.wait_for(state="visible", timeout=WAIT_MS)
    assert "q=test-1" in page.url
    table.scroll_into_view_if_needed()
    assert screenshot(page, "map").stat().st_size > 10_000


def test_map_offline_context_layer_and_basemap_message(server, page):
    """The offline context layer is drawn (district names in Chinese, scale bar) with no
    request leaving the machine; with CARTO chosen and its tiles unreachable, a message says
    so in words."""
    outside: list[str] = []

    def guard(route) -> None:
        url = route.request.url
        if url.startswith(server):
            route.continue_()
        else:
            outside.append(url)
            route.abort()

    page.route("**/*", guard)
    page.goto(f"{server}/Map?datasets=beijing&md=beijing&basemap=none")
    wait_ready(page)
    assert_no_exception(page)
    charts = page.locator(CHART)
    charts.first.locator("canvas").first.wait_for(state="visible", timeout=WAIT_MS)
    canvas = charts.first.locator("canvas").first
    canvas.scroll_into_view_if_needed()
    # the canvas is not blank: district lines, labels and the scale bar are drawn
    drawn = wait_drawn(canvas)
    assert drawn is None or drawn > 0.001
    assert outside == []
    SHOTS.mkdir(parents=True, exist_ok=True)
    charts.first.screenshot(path=str(SHOTS / "map-context.png"))
    assert screenshot(page, "map-offline").stat().st_size > 10_000

    page.goto(f"{server}/Map?datasets=beijing&md=beijing&basemap=carto")
    wait_ready(page)
    assert_no_exception(page)
    message = page.get_by_text("The CARTO basemap could not be loaded", exact=False)
    message.wait_for(state="visible", timeout=WAIT_MS)
    assert any("cartocdn" in u for u in outside)  # the browser tried, and could not
    screenshot(page, "map-carto-offline")
