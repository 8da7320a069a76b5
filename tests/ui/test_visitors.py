"""The warm-up gives way to a person (ui.visitors, ui.jobs, ui.warm): while a person's page run
is in progress no warm-up job starts, a warm-up run waits before its next job and the warm-up
starts no visit; a person's own jobs still run; all of it goes on once the run has ended."""

from __future__ import annotations

import threading

import pytest

from ui import jobs, visitors, warm

WAIT = 60  # seconds: generous limits for a loaded machine, never a timing assertion


pytestmark = pytest.mark.usefixtures("fresh_pool")


@pytest.fixture
def person():
    """A person's page run in progress (a thread that noted its run), until ``release`` is
    set; the run's thread is joined at the end."""
    noted, release = threading.Event(), threading.Event()

    def run():
        visitors.note_run()
        noted.set()
        assert release.wait(WAIT)

    thread = threading.Thread(target=run, name="a person's run")
    thread.start()
    assert noted.wait(WAIT)
    yield release, thread
    release.set()
    thread.join(WAIT)


def _end(person) -> None:
    release, thread = person
    release.set()
    thread.join(WAIT)
    assert not thread.is_alive()


def test_a_run_is_in_progress_until_its_thread_ends(person):
    assert visitors.busy()
    assert visitors.quiet_for() == 0.0
    _end(person)
    assert not visitors.busy()
    assert visitors.quiet_for() >= 0.0


def test_no_warm_up_job_starts_while_a_person_runs_a_page(person):
    pool = jobs.pool()
    warm_started = threading.Event()
    warm_job = pool.submit(("warm",), warm_started.set, jobs.WARM_UP)
    mine = pool.submit(("mine",), lambda: "value", jobs.VISITOR)
    assert mine.result(WAIT) == "value"  # the person's own job runs meanwhile
    # a warm-up job queued before the person's job is still not started after it has run
    assert not warm_started.is_set()
    assert not warm_job.done()
    _end(person)
    warm_job.result(WAIT)
    assert warm_started.is_set()


def test_a_warm_up_run_waits_before_its_next_job(person, monkeypatch):
    monkeypatch.setattr(jobs, "warming_up", lambda: True)
    asked = threading.Event()
    got: list[str] = []

    def warm_run():
        asked.set()
        got.append(jobs.need("a table", lambda: "table"))

    thread = threading.Thread(target=warm_run)
    thread.start()
    assert asked.wait(WAIT)
    thread.join(3 * visitors.POLL_S)
    assert thread.is_alive()  # still waiting for the person's run to end
    assert not got
    _end(person)
    thread.join(WAIT)
    assert got == ["table"]


def test_the_warm_up_starts_no_visit_while_a_person_runs_a_page(person, monkeypatch):
    monkeypatch.setattr(warm, "IDLE_S", 0.0)
    waiter = threading.Thread(target=warm._wait_idle)
    waiter.start()
    waiter.join(3 * visitors.POLL_S)
    assert waiter.is_alive()
    _end(person)
    waiter.join(WAIT)
    assert not waiter.is_alive()
