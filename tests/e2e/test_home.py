"""Browser: the home page on the demo bundle."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import assert_no_exception, screenshot, wait_ready

pytestmark = pytest.mark.e2e


def test_home_one_dataset_leaderboard_home_first_and_no_deploy_button(server, page):
    page.goto(f"{server}/?dataset=beijing&metric=ndcg@10")
    wait_ready(page)
    assert_no_exception(page)
    board = page.locator("table.leaderboard")
    board.first.wait_for()
    assert board.count() == 1
    assert board.first.locator("b").count() >= 1  # the best of each column in bold
    assert "metric=ndcg%4010" in page.url or "metric=ndcg@10" in page.url
    nav = page.locator("[data-testid=stSidebar] [data-testid=stPageLink]")
    assert nav.first.inner_text().strip() == "Home"
    assert page.get_by_text("Deploy", exact=True).count() == 0  # toolbarMode = viewer
    assert screenshot(page, "home").stat().st_size > 10_000


def test_old_links_with_several_datasets_open_the_first(server, page):
    page.goto(f"{server}/?metric=recall&k=20&datasets=shanghai,beijing")
    wait_ready(page)
    assert_no_exception(page)
    page.get_by_text("Leaderboard: shanghai").first.wait_for()
    assert "dataset=shanghai" in page.url
    assert "datasets=" not in page.url
