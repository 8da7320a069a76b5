"""Sections drawn only when the reader opens them."""

from __future__ import annotations

import streamlit as st


def lazy_expander(label: str, key: str, *, expanded: bool = False):
    """An expander whose content is drawn only while it is open: the container when open, else
    ``None`` (the closed expander is a single element of the page; opening it reruns the script,
    or the fragment it is in). ``key`` keeps its state across reruns; ``label`` must not change
    with the content (a new label is a new expander, closed again)."""
    box = st.expander(label, expanded=expanded, key=key, on_change="rerun")
    return box if box.open else None
