"""Browser: the home page on the demo bundle."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import assert_no_exception, screenshot, wait_ready

pytestmark = pytest.mark.e2e


def test_home_loads_and_keeps_selection_in_url(server, page):
    page.goto(f"{server}/?metric=ndcg&k=20&datasets=beijing,shanghai")
    wait_ready(page)
    assert_no_exception(page)
    page.get_by_text("Leaderboard").first.wait_for()
    assert "metric=ndcg" in page.url
    assert "k=20" in page.url
    assert "datasets=beijing%2Cshanghai" in page.url or "datasets=beijing,shanghai" in page.url
    assert screenshot(page, "home").stat().st_size > 10_000
