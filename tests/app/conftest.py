"""AppTest fixtures: clear Streamlit's caches between tests and open pages of the app."""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
TIMEOUT = 60


@pytest.fixture(autouse=True)
def _notes_in_tmp(tmp_path, monkeypatch):
    """Annotations written by a page go to a temporary notes folder, not the user's."""
    monkeypatch.setenv("RETRIEVAL_DASHBOARD_NOTES_DIR", str(tmp_path / "notes"))


@pytest.fixture(autouse=True)
def _clear_caches():
    st.cache_data.clear()
    st.cache_resource.clear()
    yield
    st.cache_data.clear()
    st.cache_resource.clear()


def open_page(page: str | None = None, **params: str) -> AppTest:
    """Run ``app.py`` (or switch to ``pages/<page>``) with URL query params; returns the AppTest."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    if page is not None:
        at.switch_page(f"pages/{page}")
        at.run()
    return at


def no_exception(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
