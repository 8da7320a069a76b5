"""Shared fixtures.

Tests marked ``real`` read the real benchmark files in ``../shared/real`` beside the project. They
skip when that folder is absent, unless ``REQUIRE_REAL=1`` (set by ``.ci/run``), in which case a
missing folder is a failure. Tests marked ``e2e`` need Debian's chromium; they skip when it is
absent unless ``REQUIRE_E2E=1``.

The tests write bytecode as a checkout does (``__pycache__``, ignored by git) even where
``PYTHONDONTWRITEBYTECODE`` is set, as some sandboxes and CI images do: the two workers would
otherwise rewrite every test file's asserts from source, and each of the many Python processes
the suite starts (servers, commands, a Dask cluster) compile this project from source.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from ui.launch import BROWSER_ARGS

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT.parent / "shared" / "real"
#: Debian's headless build of chromium (package ``chromium-headless-shell``, the same source as
#: ``chromium``; what Playwright itself runs headless), else the full browser
CHROMIUM = (
    shutil.which("chromium-headless-shell") or shutil.which("chromium") or "/usr/bin/chromium"
)
#: chromium's flags in the tests: the click benchmark's (headless, nothing fetched), no QUIC
CHROMIUM_ARGS = [*BROWSER_ARGS, "--disable-quic"]


def pytest_configure(config: pytest.Config) -> None:
    """Bytecode is written (see the module's docstring); workers and every process the tests
    start inherit the environment set here."""
    del config
    sys.dont_write_bytecode = False
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


#: the node id of the test this process ran last (read by tests/app/conftest.py)
LAST_TEST = pytest.StashKey[str]()


def pytest_runtest_teardown(item: pytest.Item) -> None:
    item.session.stash[LAST_TEST] = item.nodeid


def _require(var: str) -> bool:
    return os.environ.get(var, "") not in ("", "0")


@pytest.fixture(scope="session")
def real_dir() -> Path:
    """The folder of real benchmark files; skip (or fail under REQUIRE_REAL=1) when absent."""
    if not REAL.is_dir():
        if _require("REQUIRE_REAL"):
            pytest.fail(f"REQUIRE_REAL is set but the real-data folder is missing: {REAL}")
        pytest.skip("real benchmark files (../shared/real) not present")
    return REAL


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """Path of Debian's chromium (:data:`CHROMIUM`); skip (or fail under REQUIRE_E2E=1) when
    absent."""
    if not Path(CHROMIUM).exists():
        if _require("REQUIRE_E2E"):
            pytest.fail("REQUIRE_E2E is set but chromium is not installed")
        pytest.skip("chromium not installed")
    return CHROMIUM


@pytest.fixture(scope="session")
def playwright(chromium_path: str):
    """This process's one Playwright (sync API), open for the session: a second one cannot
    start in a thread while one is open, and the browser tests keep theirs for the session, so
    every test that drives chromium starts its browser from this one."""
    from playwright.sync_api import sync_playwright

    del chromium_path  # skip (or fail) first when chromium is missing
    with sync_playwright() as pw:
        yield pw


@pytest.fixture(scope="session")
def chromium(playwright, chromium_path: str):
    """This process's one chromium (:data:`CHROMIUM`, :data:`CHROMIUM_ARGS`), open for the
    session: the browser tests and the paper figures' measurements open their contexts in it."""
    b = playwright.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
    yield b
    b.close()


@pytest.fixture(autouse=True)
def _private_table_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Each test gets an empty per-query table cache (analysis.stats.cache), so a table cached
    by one test never answers another and nothing is written to the user's cache folder."""
    monkeypatch.setenv("RETRIEVAL_DASHBOARD_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory: pytest.TempPathFactory):
    """A local Dask cluster started as a user starts one (``dask scheduler`` and two
    ``dask worker --nthreads 1`` on 127.0.0.1, ports chosen by the system; see
    :mod:`tests.cluster`), for one test file; yields the scheduler's address. Not for the whole
    session: an idle cluster's heartbeats and memory monitors take about a tenth of a core, which
    the rest of the suite needs."""
    from tests.cluster import local_cluster

    with local_cluster(tmp_path_factory.mktemp("dask"), workers=2) as address:
        yield address
