"""Who runs a page: a person, or the server's warm-up (:mod:`ui.warm`), whose sessions say so
in their ``User-Agent``; whether a person's page run is in progress, and how long ago the last
one ended (the warm-up works only in idle time); whether work ahead of visitors is turned off
(:func:`warm_up_off`).

A run in progress is known by its thread: Streamlit runs a session's script in a thread of its
own, which ends once the session has no rerun queued. :func:`note_run`, called at the start of
every page run, remembers the thread of a person's run; the run is over when the thread has
ended. The end is seen when :func:`busy` or :func:`quiet_for` is next asked (the warm-up asks
every :data:`POLL_S` seconds while it waits), so it counts at most that late.
"""

from __future__ import annotations

import os
import threading
import time

USER_AGENT = "retrieval-dashboard-warm-up"
#: ``0`` turns off every piece of work done ahead of a visitor (:func:`warm_up_off`)
WARM_UP_ENV = "RETRIEVAL_DASHBOARD_WARM_UP"
#: seconds between two checks of a waiting warm-up
POLL_S = 0.1
_lock = threading.Lock()
_running: list[threading.Thread] = []
_last_seen_busy = 0.0


def warm_up_off() -> bool:
    """``RETRIEVAL_DASHBOARD_WARM_UP`` is ``0``: no work ahead of a visitor (the server's warm-up
    of the pages, the pages' prefetches of what a visitor will likely ask next, the chart code
    the home page loads ahead)."""
    return os.environ.get(WARM_UP_ENV, "1") == "0"


def is_warm_up_session() -> bool:
    """Whether the current run is one of the warm-up's (its ``User-Agent``)."""
    import streamlit as st

    try:
        return st.context.headers.get("User-Agent") == USER_AGENT
    except Exception:  # no session (a background thread): not a warm-up run
        return False


def note_run() -> None:
    """Called at the start of every page run: a person's run is remembered as in progress
    until its thread ends; a warm-up run first waits while a person's run is in progress
    (:func:`wait_quiet`)."""
    global _last_seen_busy
    if is_warm_up_session():
        wait_quiet()
        return
    thread = threading.current_thread()
    with _lock:
        _last_seen_busy = time.monotonic()
        if thread not in _running:
            _running.append(thread)


def busy() -> bool:
    """Whether a person's page run is in progress."""
    global _last_seen_busy
    with _lock:
        alive = [t for t in _running if t.is_alive()]
        if _running:  # in progress, or ended since the last look: about now
            _last_seen_busy = time.monotonic()
        _running[:] = alive
        return bool(alive)


def quiet_for() -> float:
    """Seconds since a person's last page run ended (0.0 while one is in progress)."""
    if busy():
        return 0.0
    return time.monotonic() - _last_seen_busy


def wait_quiet(idle: float = 0.0, timeout: float = 60.0) -> None:
    """Wait until no person's page run is in progress and none ended within ``idle``
    seconds, for at most ``timeout`` seconds (a bound: the caller goes on rather than wait
    for ever behind a run that never ends)."""
    deadline = time.monotonic() + timeout
    while quiet_for() <= idle and time.monotonic() < deadline:
        time.sleep(POLL_S)
