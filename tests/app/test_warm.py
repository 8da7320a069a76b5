"""AppTest: the warm-up's visits fill every cache the pages read (a visitor's first visit of any
page, with any headline metric, computes nothing new), and a page drawn while the warm-up is
still computing shows its placeholders, not an error."""

from __future__ import annotations

import threading
import time

import pytest
from streamlit.runtime.caching.cache_data_api import _data_caches
from streamlit.runtime.caching.cache_resource_api import _resource_caches
from streamlit.testing.v1 import AppTest

from tests.app.conftest import make_wide_bundle, no_exception, open_directly
from ui import data, jobs, visitors, warm

PAGE_FILES = {"": None, "Slices": "1_Slices.py", "Queries": "2_Queries.py",
              "Compare": "3_Compare.py", "Map": "4_Map.py", "Report": "5_Report.py",
              "Analyses": "6_Analyses.py", "Open_data": "7_Open_data.py",
              "Every_model": "8_Every_model.py"}  # fmt: skip
WAIT = 120  # seconds: generous limits for a loaded machine, never a timing assertion


@pytest.fixture
def wide_root(tmp_path, monkeypatch):
    """A data root holding one bundle of one dataset (two models, four headline metrics)."""
    root = make_wide_bundle(tmp_path / "roots", n_values=8)
    monkeypatch.setenv("RETRIEVAL_DASHBOARD_DATA_ROOTS", str(root))
    monkeypatch.setenv("RETRIEVAL_DASHBOARD_CACHE_DIR", str(tmp_path / "cache"))
    return root


def _visit(page: str, query: dict[str, str]) -> AppTest:
    """A new session's run of ``page`` (a URL path, ``""`` = home) with ``query``."""
    at = open_directly(PAGE_FILES[page], **query)
    no_exception(at)
    return at


def _idle() -> None:
    """Until the jobs the pages queued (prefetches) are over."""
    deadline = time.monotonic() + WAIT
    while not jobs.pool().idle():
        assert time.monotonic() < deadline, "the page jobs did not end"
        time.sleep(0.05)


def _cached() -> set[tuple[str, str]]:
    """Every entry of Streamlit's caches and of the app's own tables store: what was computed."""
    found: set[tuple[str, str]] = set()
    for cache in _resource_caches._function_caches.get(None, {}).values():
        found |= {(cache.display_name, key) for key in list(cache._mem_cache.keys())}
    for cache in _data_caches._function_caches.get(None, {}).values():
        found |= {(cache.display_name, key) for key in list(cache.storage._mem_cache.keys())}
    for kind in ("per_query", "dataset"):
        found |= {(kind, repr(key)) for key in list(data._lru(kind)._items)}
    return found


def test_after_the_warm_up_no_page_computes_anything(wide_root, monkeypatch):
    monkeypatch.delenv(visitors.WARM_UP_ENV)  # a server's warm-up: the pages' prefetches too
    plan = list(warm.plan())
    pages = {v.page for v in plan}
    assert pages == set(PAGE_FILES)  # every page is visited
    metrics = ["hit@1", "hit@5", "recall@20", "mrr"]
    assert {v.query.get("metric") for v in plan} == {None, *metrics[1:]}
    for target in plan:
        _visit(target.page, target.query)
    _idle()
    warmed = _cached()
    assert warmed
    for page in PAGE_FILES:  # a visitor's first visits, default metric then every other one
        for metric in metrics:
            _visit(page, {"metric": metric} if metric != metrics[0] else {})
            _idle()
            assert _cached() - warmed == set(), (page, metric)


@pytest.fixture
def slow_tables(monkeypatch):
    """Per-query tables that stay "being computed" until the test releases them (as while the
    warm-up computes them), and runs that wait for no job at all."""
    release = threading.Event()
    real = data.per_query

    def per_query(*args, **kwargs):
        assert release.wait(WAIT)
        return real(*args, **kwargs)

    monkeypatch.setattr(data, "per_query", per_query)
    monkeypatch.setattr(jobs, "ALWAYS_BUDGET", True)
    monkeypatch.setattr(jobs, "WAIT_S", 0.0)
    yield release
    release.set()


@pytest.mark.parametrize("page", [p for p in PAGE_FILES if p not in ("Map", "Open_data")])
def test_a_page_drawn_mid_warm_up_shows_its_placeholder(wide_root, slow_tables, page):
    at = _visit(page, {})
    assert [p for p in at.get("progress") if "query table" in p.proto.text], page
    assert at.title  # the page's header is drawn at once
    slow_tables.set()
    _until_drawn(at)


def _until_drawn(at: AppTest, runs: int = 8) -> None:
    """Rerun ``at`` (as its placeholders do) until it shows no placeholder: each run may find
    the page's next job still running."""
    for _ in range(runs):
        _idle()
        at.run()
        no_exception(at)
        if not at.get("progress"):
            return
    pytest.fail("the page still shows placeholders")


def test_the_map_drawn_mid_warm_up_shows_its_placeholder(slow_tables, monkeypatch):
    """The demo's geo-glue (POIs with coordinates); Open data reads no per-query table."""
    monkeypatch.delenv("RETRIEVAL_DASHBOARD_DATA_ROOTS", raising=False)
    at = _visit("Map", {"dataset": "geo-glue"})
    assert at.get("progress")  # the first job the map waits for: its stacks or its tables
    assert at.title
    slow_tables.set()
    _until_drawn(at)
    assert at.get("deck_gl_json_chart")


def test_the_home_page_goes_on_below_a_pending_leaderboard(wide_root, slow_tables):
    at = _visit("", {})
    assert [p for p in at.get("progress") if "query table of mag" in p.proto.text]
    assert "Data checks" in [h.value for h in at.subheader]  # the section after it is drawn
