"""Browser: a metric's card is one click away (the sidebar's "About <metric>" popover) and one
hover away (the leaderboard header's title)."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import SHOTS, assert_no_exception, wait_ready

pytestmark = pytest.mark.e2e


def test_the_metric_card_opens_from_the_sidebar(server, page):
    page.goto(f"{server}/?metric=recall@20")
    wait_ready(page)
    assert_no_exception(page)
    header = page.locator("table.leaderboard th", has_text="recall@20").first
    header.wait_for()
    assert (header.get_attribute("title") or "").startswith("recall@20 — Recall@20")
    page.locator("[data-testid=stSidebar]").get_by_text("About recall@20").click()
    card = page.locator("[data-testid=stPopoverBody]")
    card.get_by_text("relevant documents in the top 20 / all relevant documents |R|").wait_for(
        timeout=30_000
    )
    text = card.inner_text()
    for label in ("Formula", "Cutoff", "trec_eval", "STaRK evaluator", "LIST", "Saved depth"):
        assert label in text
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / "metric-card.png"
    page.screenshot(path=str(path))
    assert path.stat().st_size > 10_000
