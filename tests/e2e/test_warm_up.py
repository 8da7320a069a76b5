"""The server's warm-up in a real server: ``python -m ui.serve`` visits every page of the plan
over the app's websocket (as a browser does) and each visit runs without error;
``RETRIEVAL_DASHBOARD_WARM_UP=0`` turns it off."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.app.conftest import make_wide_bundle
from ui import serve, visitors
from ui.launch import free_port, serving

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
WAIT = 600  # seconds: a generous limit for a loaded machine, never a timing assertion


def test_the_warm_up_visits_every_page_of_its_plan(tmp_path):
    root = make_wide_bundle(tmp_path / "roots", n_values=8)
    env = {"RETRIEVAL_DASHBOARD_DATA_ROOTS": str(root),
           "RETRIEVAL_DASHBOARD_CACHE_DIR": str(tmp_path / "cache"),
           "RETRIEVAL_DASHBOARD_NOTES_DIR": str(tmp_path / "notes")}  # fmt: skip
    log = tmp_path / "server.log"
    with serving(ROOT / "app.py", free_port(), env, timeout=WAIT, log=log):
        deadline = time.monotonic() + WAIT
        while "warm-up: " not in log.read_text(errors="replace"):
            assert time.monotonic() < deadline, log.read_text(errors="replace")[-2000:]
            time.sleep(0.5)
    text = log.read_text(errors="replace")
    # one dataset, four headline metrics: home + 8 pages, then the 7 pages that depend on the
    # metric (all but Open data) for each other metric
    assert "warm-up: 30 page runs" in text, text[-2000:]
    assert "failed" not in text
    assert "Traceback" not in text


def test_the_warm_up_is_off_when_the_environment_says_so(monkeypatch):
    monkeypatch.setenv(visitors.WARM_UP_ENV, "0")
    assert not serve.warm_up_wanted(["run", "app.py"])
    monkeypatch.setenv(visitors.WARM_UP_ENV, "1")
    assert serve.warm_up_wanted(["run", "app.py"])
    assert not serve.warm_up_wanted(["--version"])
