"""The shared jobs of the pages (ui.jobs): one computation per key however many ask, visitors
before the warm-up, one warm-up job at a time, errors not kept, done jobs read directly."""

from __future__ import annotations

import threading

import pytest

from ui import jobs, visitors

WAIT = 60  # seconds: generous limits for a loaded machine, never a timing assertion


pytestmark = pytest.mark.usefixtures("fresh_pool")


def _blocker() -> tuple[threading.Event, threading.Event]:
    """(started, release): a job that sets ``started`` and waits for ``release``."""
    return threading.Event(), threading.Event()


def test_a_key_asked_for_while_it_runs_is_computed_once():
    pool = jobs.pool()
    started, release = _blocker()
    calls = []

    def make():
        calls.append(1)
        started.set()
        assert release.wait(WAIT)
        return "value"

    first = pool.submit(("k",), make, jobs.VISITOR)
    assert started.wait(WAIT)
    second = pool.submit(("k",), make, jobs.VISITOR)
    assert second is first
    assert pool.peek(("k",)) is first
    release.set()
    assert first.result(WAIT) == "value"
    assert calls == [1]
    assert ("k",) in pool.done  # over: known as done, its future forgotten
    assert pool.peek(("k",)) is None


def test_visitor_jobs_go_first_and_one_warm_up_job_runs_at_a_time():
    pool = jobs.pool()
    started, release = _blocker()
    order: list[str] = []

    def blocking():
        started.set()
        assert release.wait(WAIT)

    pool.submit(("warm-0",), blocking, jobs.WARM_UP)  # takes a worker and the warm-up's turn
    assert started.wait(WAIT)
    warm = pool.submit(("warm-1",), lambda: order.append("warm"), jobs.WARM_UP)
    visitor = pool.submit(("visitor",), lambda: order.append("visitor"), jobs.VISITOR)
    assert visitor.result(WAIT) is None  # the free worker serves the visitor
    assert not warm.done()  # the second warm-up job waits for the first
    assert pool.visitors_waiting() is False
    release.set()
    warm.result(WAIT)
    assert order == ["visitor", "warm"]
    assert pool.idle()


def test_a_queued_warm_up_job_asked_for_by_a_visitor_moves_up():
    pool = jobs.pool()
    started, release = _blocker()

    def blocking():
        started.set()
        assert release.wait(WAIT)

    pool.submit(("warm-0",), blocking, jobs.WARM_UP)
    assert started.wait(WAIT)
    queued = pool.submit(("shared",), lambda: "shared", jobs.WARM_UP)
    assert pool.submit(("shared",), lambda: "shared", jobs.VISITOR) is queued
    assert queued.result(WAIT) == "shared"  # run by the free worker, before warm-0 ends
    assert not pool.idle()
    release.set()


def test_an_error_reaches_the_caller_and_is_not_kept():
    pool = jobs.pool()

    def fail():
        raise ValueError("broken file")

    with pytest.raises(ValueError, match="broken file"):
        pool.submit(("bad",), fail, jobs.VISITOR).result(WAIT)
    assert ("bad",) not in pool.done
    assert pool.submit(("bad",), lambda: "fixed", jobs.VISITOR).result(WAIT) == "fixed"


def test_job_keys_leave_out_underscore_arguments_and_accept_lists():
    def fn(a, b, _table=None, k=3):
        return a

    one = jobs.job_key(fn, ("x", ["m1", "m2"]), {"_table": object(), "k": 5})
    two = jobs.job_key(fn, ("x", ["m1", "m2"]), {"_table": object(), "k": 5})
    assert one == two
    assert jobs.job_key(fn, ("x", ["m1"]), {"k": 5}) != one
    with pytest.raises(TypeError):
        jobs.job_key(fn, ({1},), {"k": {"unhashable": set()}})


def test_a_prefetch_is_queued_unless_work_ahead_of_visitors_is_off(monkeypatch):
    """``RETRIEVAL_DASHBOARD_WARM_UP=0`` (the browser tests' servers, the AppTests) queues no
    prefetch; a server's default setting queues it behind the visitors' jobs."""
    done: list[str] = []
    ran = threading.Event()

    def compute(name: str) -> None:
        done.append(name)
        ran.set()

    monkeypatch.setenv(visitors.WARM_UP_ENV, "0")
    jobs.prefetch(compute, "off")
    assert jobs.pool().idle()
    monkeypatch.setenv(visitors.WARM_UP_ENV, "1")
    jobs.prefetch(compute, "on")
    assert ran.wait(WAIT)
    assert done == ["on"]
