"""Fixtures of the ui tests."""

from __future__ import annotations

import pytest
import streamlit as st


@pytest.fixture
def fresh_pool():
    """A new jobs pool (it lives in Streamlit's resource cache) for the test, and after it."""
    st.cache_resource.clear()
    yield
    st.cache_resource.clear()
