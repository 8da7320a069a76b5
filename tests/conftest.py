"""Shared fixtures.

Tests marked ``real`` read the real benchmark files in ``../shared/real`` beside the project. They
skip when that folder is absent, unless ``REQUIRE_REAL=1`` (set by ``.ci/run``), in which case a
missing folder is a failure. Tests marked ``e2e`` need Debian's chromium; they skip when it is
absent unless ``REQUIRE_E2E=1``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT.parent / "shared" / "real"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


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
    """Path of Debian's chromium; skip (or fail under REQUIRE_E2E=1) when absent."""
    if not Path(CHROMIUM).exists():
        if _require("REQUIRE_E2E"):
            pytest.fail("REQUIRE_E2E is set but chromium is not installed")
        pytest.skip("chromium not installed")
    return CHROMIUM


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
