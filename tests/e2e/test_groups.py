"""Browser: run groups, the written diff, quality against cost and every model per query, on
the demo (stark-prime: the dense seed group and latencies) and on a bundle with 8 models (five
runs and a seed group of three, each with a latency)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import assert_no_exception, screenshot, serve_for_module, wait_ready

pytestmark = pytest.mark.e2e

PRIME = "dataset=stark-prime&metric=mrr"
N_QUERIES = 150
#: The first visit of Compare loads the rankings of both models and every seed; on a loaded
#: 2-core machine that can take more than a minute.
SLOW = 240_000
EIGHT = ("bm25", "splade", "colbert", "rerank", "hybrid", "dense-s1", "dense-s2", "dense-s3")


def make_eight_bundle(folder: Path) -> Path:
    """A data root holding ``eight``: 150 queries with one gold each, 8 runs of 30 documents
    (the gold at a rank drawn per model and query, seeded), a seed group ``dense`` of the last
    three and a ``latency_ms`` per run."""
    rng = np.random.default_rng(8)
    ds = folder / "eight" / "web"
    (ds / "runs").mkdir(parents=True)
    (ds / "qrels.txt").write_text("".join(f"q{q} 0 g{q} 1\n" for q in range(N_QUERIES)))
    difficulty = rng.random(N_QUERIES)
    for i, model in enumerate(EIGHT):
        skill = 0.3 + 0.08 * i if not model.startswith("dense") else 0.55
        lines = []
        for q in range(N_QUERIES):
            docs = [f"d{(q * 13 + j * 7 + i) % 500}" for j in range(30)]
            if rng.random() < skill + 0.3 * (0.5 - difficulty[q]):
                docs[min(29, int(rng.geometric(0.4)) - 1)] = f"g{q}"
            lines += [f"q{q} Q0 {d} {r + 1} {30 - r} {model}\n" for r, d in enumerate(docs)]
        (ds / "runs" / f"{model}.run").write_text("".join(lines))
    latency = ", ".join(f'"{m}" = {{ latency_ms = {2.0 + 3 * i} }}' for i, m in enumerate(EIGHT))
    (folder / "eight" / "bundle.toml").write_text(
        'name = "eight"\n[datasets.web]\nqrels = "web/qrels.txt"\nruns = "web/runs"\n'
        'metrics = ["hit@1", "hit@5", "mrr"]\n'
        '[datasets.web.groups.dense]\nseeds = ["dense-s1", "dense-s2", "dense-s3"]\n'
        f"[datasets.web.run_metadata]\n{latency.replace(', ', chr(10))}\n"
    )
    return folder


@pytest.fixture(scope="module")
def eight_server(chromium_path: str, tmp_path_factory) -> Iterator[str]:
    """A server on the 8-model bundle."""
    del chromium_path
    root = make_eight_bundle(tmp_path_factory.mktemp("eight"))
    yield from serve_for_module({"RETRIEVAL_DASHBOARD_DATA_ROOTS": str(root)})


def _click_first_cell(page) -> None:
    """Click a cell of the Every model chart (hover first: plotly picks the point)."""
    chart = page.locator("[data-testid=stPlotlyChart]").first
    chart.wait_for(timeout=60_000)
    chart.scroll_into_view_if_needed()
    points = chart.locator(".barlayer .point path")
    points.first.wait_for(timeout=60_000)
    box = points.nth(0).bounding_box()
    assert box is not None
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.wait_for_timeout(300)
    page.mouse.click(x, y)


def _cells(page) -> int:
    """The cells the Every model chart draws (once it has drawn)."""
    chart = page.locator("[data-testid=stPlotlyChart]").first
    chart.wait_for(timeout=60_000)
    points = chart.locator(".barlayer .point path")
    points.first.wait_for(timeout=60_000)
    return points.count()


def test_demo_home_shows_the_seed_group_and_quality_against_cost(server, page):
    page.goto(f"{server}/?{PRIME}&costs=1")
    wait_ready(page)
    assert_no_exception(page)
    row = page.locator('tr[data-model="dense"]')
    expect(row).to_contain_text("3 seeds, mean", timeout=60_000)
    page.get_by_text("Quality against cost").first.wait_for()
    chart = page.locator("[data-testid=stPlotlyChart]").first
    chart.scroll_into_view_if_needed()
    expect(chart.locator(".scatterlayer .trace")).to_have_count(8)  # 7 models and the front
    expect(chart).to_contain_text("latency_ms (lower is better)")
    screenshot(page, "groups-home-demo")


def test_demo_compare_seed_sensitivity_and_written_diff(server, page):
    page.goto(f"{server}/Compare?{PRIME}&a=dense&b=bm25&q=5&qd=stark-prime")
    wait_ready(page, timeout=SLOW)
    assert_no_exception(page)
    page.get_by_text("Seed sensitivity").first.wait_for(timeout=60_000)
    page.get_by_text("All 3 seed pairs give A − B the same sign").first.wait_for()
    diff = page.locator("ul.written-diff li")
    diff.first.wait_for(timeout=60_000)
    assert diff.count() >= 3
    expect(diff.first).to_contain_text("mrr: A 0.005, B 0.026; B is better by 0.021.")
    expect(page.locator("ul.written-diff")).to_contain_text("Gold document, rank in A → B")
    screenshot(page, "groups-compare-demo")


def test_demo_every_model_click_opens_the_query(server, page):
    page.goto(f"{server}/Every_model?{PRIME}")
    wait_ready(page)
    assert_no_exception(page)
    assert _cells(page) == 7 * 420
    screenshot(page, "every-model-demo")
    _click_first_cell(page)
    expect(page).to_have_url(re.compile(r"/Queries\?.*[?&]?q="), timeout=60_000)
    wait_ready(page)
    assert_no_exception(page)
    page.get_by_text("Failing queries").first.wait_for()
    line = page.locator("[data-testid=stText]").filter(has_text=re.compile(r"^query id: "))
    line.first.wait_for(timeout=60_000)


def test_eight_models_home_compare_and_every_model(eight_server, page):
    page.goto(f"{eight_server}/?bundle=eight&metric=mrr&costs=1")
    wait_ready(page)
    assert_no_exception(page)
    expect(page.locator("table.leaderboard tbody tr")).to_have_count(9, timeout=60_000)
    expect(page.locator('tr[data-model="dense"]')).to_contain_text("3 seeds, mean")
    chart = page.locator("[data-testid=stPlotlyChart]").first
    chart.scroll_into_view_if_needed()
    expect(chart.locator(".scatterlayer .trace")).to_have_count(10)  # 9 models and the front
    screenshot(page, "groups-home-eight")

    page.goto(f"{eight_server}/Every_model?bundle=eight&metric=hit%401&show=split")
    wait_ready(page)
    assert_no_exception(page)
    cells = _cells(page)
    assert cells > 0
    assert cells % 9 == 0  # 8 runs and the seed group
    expect(page.get_by_text(re.compile(r"^split$")).first).to_be_visible()
    screenshot(page, "every-model-eight")
    _click_first_cell(page)
    expect(page).to_have_url(re.compile(r"/Queries\?"), timeout=60_000)
    wait_ready(page)
    assert_no_exception(page)

    page.goto(f"{eight_server}/Compare?bundle=eight&metric=mrr&a=dense&b=hybrid&q=q3&qd=web")
    wait_ready(page, timeout=SLOW)
    assert_no_exception(page)
    page.get_by_text("Seed sensitivity").first.wait_for(timeout=60_000)
    page.locator("ul.written-diff li").first.wait_for(timeout=60_000)
    screenshot(page, "groups-compare-eight")
