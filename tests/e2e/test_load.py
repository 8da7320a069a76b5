"""Browser: five sessions on five different pages of one server at once.

Five browser contexts (five Streamlit sessions) open Home, Slices, Queries, Compare and Map
together, then each moves on to the next page, again all at once. Every page must reach the
ready state without an ``stException`` and show its own heading; each wait may take up to the
suite's :data:`~tests.e2e.conftest.WAIT_MS`. The five sessions open their first pages beside
a CPU hog the test starts itself (a process busy at the lowest priority, ``nice 19``): five
scripts on cold pages at once are more work than cores on a 2-core machine, and the hog takes
every moment of CPU they leave, so no core is idle while the sessions wait (checking that every
session gets there, not how fast). At the lowest priority it takes almost nothing the test's own
processes, or the rest of the suite on the other worker, want. The hog is stopped once every
session has shown its first page. The server listens on 127.0.0.1 only, and the pages may not send a
request anywhere else.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from tests.e2e.conftest import READY, assert_no_exception

pytestmark = pytest.mark.e2e

PAGES = [
    ("/?metric=ndcg&k=10", "Leaderboard"),
    ("/Slices?slice=n_gold_bucket", "Mean per slice"),
    ("/Queries?datasets=stark-amazon&a=bm25", "Failing queries"),
    ("/Compare?datasets=stark-mag&a=bm25&b=char-ngram-tfidf", "Compare two models"),
    ("/Map?datasets=geo-glue&md=geo-glue&basemap=none", "Duplicate coordinates"),
]


@pytest.fixture
def cpu_hog() -> Iterator[subprocess.Popen]:
    """A process that keeps a CPU core busy at the lowest priority until the test stops it
    (:func:`_stop`) or ends."""
    busy = "import os\nos.nice(19)\nwhile True: pass"
    hog = subprocess.Popen([sys.executable, "-c", busy], stdin=subprocess.DEVNULL)
    try:
        yield hog
    finally:
        _stop(hog)


def _stop(hog: subprocess.Popen) -> None:
    if hog.poll() is None:
        hog.kill()
    hog.wait()


def _open_all(pages, server: str, targets: list[tuple[str, str]]) -> None:
    """Start every navigation first (so the server runs the five scripts at the same time)."""
    for page, (path, _) in zip(pages, targets, strict=True):
        page.goto(server + path, wait_until="commit")


def _wait_all(pages, targets: list[tuple[str, str]]) -> None:
    """Each page's ready state and heading (the contexts' default limit, WAIT_MS, each)."""
    for page, (path, heading) in zip(pages, targets, strict=True):
        page.wait_for_selector(READY)
        page.get_by_text(heading, exact=False).first.wait_for()
        page.wait_for_selector(READY)
        assert_no_exception(page)
        assert page.locator("[data-testid=stAlertContentError]").count() == 0, path


def test_five_sessions_on_different_pages_at_once(server, browser, cpu_hog) -> None:
    host = urlsplit(server).hostname
    assert host == "127.0.0.1"
    outside: list[str] = []

    def guard(route) -> None:
        if urlsplit(route.request.url).hostname in (host, None) or route.request.url.startswith(
            ("data:", "blob:")
        ):
            route.continue_()
        else:  # loopback only: nothing leaves the machine
            outside.append(route.request.url)
            route.abort()

    contexts = [browser.new_context(viewport={"width": 1280, "height": 900}) for _ in PAGES]
    try:
        pages = []
        for context in contexts:
            context.route("**/*", guard)
            pages.append(context.new_page())
        _open_all(pages, server, PAGES)
        _wait_all(pages, PAGES)
        assert cpu_hog.poll() is None  # it was busy the whole time
        assert os.getpriority(os.PRIO_PROCESS, cpu_hog.pid) == 19
        _stop(cpu_hog)
        # every session moves on to the next page, all at once
        rotated = PAGES[1:] + PAGES[:1]
        _open_all(pages, server, rotated)
        _wait_all(pages, rotated)
    finally:
        for context in contexts:
            context.close()
    assert not outside, outside
