"""Who runs a page: a person, or the server's warm-up (:mod:`ui.warm`), whose sessions say so
in their ``User-Agent``; and when a person last started a run (the warm-up waits for idle
time)."""

from __future__ import annotations

import time

USER_AGENT = "retrieval-dashboard-warm-up"
_last_visitor_run = 0.0


def is_warm_up_session() -> bool:
    """Whether the current run is one of the warm-up's (its ``User-Agent``)."""
    import streamlit as st

    try:
        return st.context.headers.get("User-Agent") == USER_AGENT
    except Exception:  # no session (a background thread): not a warm-up run
        return False


def note_run() -> None:
    """Called at the start of every page run: remembers when a person last started one."""
    global _last_visitor_run
    if not is_warm_up_session():
        _last_visitor_run = time.monotonic()


def quiet_for() -> float:
    """Seconds since a person last started a page run."""
    return time.monotonic() - _last_visitor_run
