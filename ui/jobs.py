"""Heavy computations of the pages, shared by every session and run off the page's own run.

A page asks for a value with :func:`need`: a cached function and its arguments, as it would
call it. The call is a *job*, identified by the function and its arguments (arguments whose
name starts with ``_`` are left out, as Streamlit's caches leave them out of their keys; a
bundle counts by its folder, a selection by its URL values, lists as tuples). Jobs run on a
small pool of background threads; a job asked for while it is queued or running (by another
session, or by the server's warm-up, :mod:`ui.warm`) is not started again: the caller waits for
that one. The values themselves live in the functions' own caches (keyed by the files' stamps):
once a job has ended well, a page asking for it again calls the function in its own run (a
cache hit, or a new computation there when the cache has dropped the value since).

The page's run waits for its jobs up to :data:`WAIT_S` in all (a run's budget). A job still
running after that is drawn as a placeholder: a progress bar saying what is being computed and
for how long, in a container keyed ``pending_<name>``, refreshed by a small fragment every
:data:`POLL_S` seconds, which reruns the page once the job is done. :func:`need` then stops the
run like ``st.stop()``; inside ``with section():`` only that section stops and the page goes
on, so no section blocks the others. The server's warm-up sessions, and runs without a server
(Streamlit's AppTest), wait without a budget. A
session holding uploaded runs computes in its own run (the jobs' threads cannot see a
session's uploads).

Visitors' jobs go before the warm-up's, at most one warm-up job runs at a time and none
starts while a person's page run is in progress (:func:`ui.visitors.busy`), so a person's click
never queues behind the whole warm-up; a warm-up run waits for that before it asks for a job.
:data:`COMPUTED` counts the jobs run per function.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import math
import re
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from typing import Any, TypeVar

import streamlit as st

from ui import _compat, visitors

T = TypeVar("T")

#: seconds a page's run waits for its jobs in all before it draws placeholders
WAIT_S = 1.0
#: seconds between two checks of a placeholder
POLL_S = 0.4
#: runs without a server wait for their jobs too (see :func:`budgeted`; tests set it)
ALWAYS_BUDGET = False
VISITOR, WARM_UP = 0, 1
WORKERS = 2
THREAD_NAME = "page-jobs"
#: job keys remembered as done (a page calls their function directly: the value is cached)
DONE = 8192
#: jobs run, per function (``module.qualname``)
COMPUTED: Counter[str] = Counter()


class Pending(_compat.stop_exception()):  # type: ignore[misc]
    """A job the page needs is not done: its placeholder is drawn. Stops the run like
    ``st.stop()``; :func:`section` catches it so that the rest of the page is drawn."""


class _Pool:
    """The jobs queued or running (key -> Future and its priority) and their queue, served by
    :data:`WORKERS` daemon threads started on first use; a warm-up job is taken only while no
    other one runs and no person's page run is in progress."""

    def __init__(self) -> None:
        self._futures: dict[tuple, Future] = {}
        self._priority: dict[tuple, int] = {}
        self._queue: list[tuple[int, int, tuple, Future, Callable[[], Any]]] = []
        self._ready = threading.Condition()
        self._order = itertools.count()
        self._threads: list[threading.Thread] = []
        self._warm_busy = 0
        self.started: dict[tuple, float] = {}
        #: keys of the jobs that ended well, most recent last (their values are likely cached)
        self.done: OrderedDict[tuple, None] = OrderedDict()

    def submit(self, key: tuple, make: Callable[[], Any], priority: int) -> Future:
        """The future of ``key``: the known one (a queued job asked for by a visitor moves up
        to the visitor's priority), else a new job queued at ``priority``."""
        with self._ready:
            future = self._futures.get(key)
            if future is None:
                future = self._futures[key] = Future()
                self._priority[key] = priority
            elif priority < self._priority[key] and key not in self.started:
                self._priority[key] = priority
            else:
                return future
            self._queue.append((priority, next(self._order), key, future, make))
            self._ready.notify()
            self._threads = [t for t in self._threads if t.is_alive()]
            while len(self._threads) < WORKERS:
                thread = threading.Thread(target=self._work, name=THREAD_NAME, daemon=True)
                self._threads.append(thread)
                thread.start()
        return future

    def peek(self, key: tuple) -> Future | None:
        with self._ready:
            return self._futures.get(key)

    def idle(self) -> bool:
        """No job queued or running."""
        with self._ready:
            return not self._futures

    def visitors_waiting(self) -> bool:
        """A visitor's job is queued or running."""
        with self._ready:
            return VISITOR in self._priority.values()

    def _take(self) -> tuple[int, tuple, Future, Callable[[], Any]]:
        """The next job to run (waits): the first visitor job, else the first warm-up job
        while no other warm-up job runs and no person's run is in progress (looked at again
        every :data:`ui.visitors.POLL_S` seconds). Queue entries of jobs taken earlier are
        dropped (a job moved up to a visitor's priority has two)."""
        with self._ready:
            while True:
                self._queue = [
                    e for e in self._queue
                    if self._futures.get(e[2]) is e[3] and e[2] not in self.started
                ]  # fmt: skip
                warm_ok = not self._warm_busy and not visitors.busy()
                eligible = [e for e in self._queue if e[0] == VISITOR or warm_ok]
                if eligible:
                    entry = min(eligible, key=lambda e: e[:2])
                    self._queue.remove(entry)
                    priority, _, key, future, make = entry
                    self.started[key] = time.monotonic()
                    self._warm_busy += priority == WARM_UP
                    return priority, key, future, make
                held = self._queue and not self._warm_busy  # by a person's run: look again
                self._ready.wait(visitors.POLL_S if held else None)

    def _work(self) -> None:
        while True:
            priority, key, future, make = self._take()
            try:
                COMPUTED[key[0]] += 1
                value = make()
            except BaseException as exc:  # handed to whoever waits
                self._forget(key, priority)
                future.set_exception(exc)
            else:
                self._forget(key, priority, ok=True)
                future.set_result(value)

    def _forget(self, key: tuple, priority: int, ok: bool = False) -> None:
        """A job is over: later calls ask the function (and its cache) again."""
        with self._ready:
            del self._futures[key], self._priority[key], self.started[key]
            if ok:
                self.done[key] = None
                self.done.move_to_end(key)
                while len(self.done) > DONE:
                    self.done.popitem(last=False)
            self._warm_busy -= priority == WARM_UP
            self._ready.notify_all()


class _QuietWorkers(logging.Filter):
    """Drops Streamlit's "missing ScriptRunContext" warning in the jobs' threads: they run no
    script by design (they only call cached functions)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return threading.current_thread().name != THREAD_NAME


@st.cache_resource(max_entries=1, show_spinner=False)
def pool() -> _Pool:
    """The process's jobs (shared by every session; cleared with Streamlit's caches)."""
    logger = logging.getLogger(_compat.RUN_CONTEXT_LOGGER)
    if not any(isinstance(f, _QuietWorkers) for f in logger.filters):
        logger.addFilter(_QuietWorkers())
    return _Pool()


def job_key(fn: Callable[..., Any], args: tuple, kwargs: dict[str, Any]) -> tuple:
    """``(module.qualname, args, keyword args)`` made hashable (:func:`_hashable`); keyword
    arguments whose name starts with ``_`` are left out, as Streamlit's caches leave them out."""
    name = f"{fn.__module__}.{getattr(fn, '__qualname__', repr(fn))}"
    kept = tuple(sorted((k, _hashable(v)) for k, v in kwargs.items() if not k.startswith("_")))
    return (name, tuple(_hashable(a) for a in args), kept)


def _hashable(value: Any) -> Any:
    """A hashable stand-in of an argument: lists and tuples item by item, dicts as sorted
    items, a bundle by its folder, a selection by its URL values; other values as they are
    (a value that cannot be hashed raises TypeError: pass it as a ``_name`` keyword)."""
    from analysis.io.bundle import Bundle

    if isinstance(value, list | tuple):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    if isinstance(value, Bundle):
        return ("bundle", str(value.root))
    if callable(getattr(value, "url_params", None)):  # a selection (ui.state.Selection)
        return ("selection", tuple(sorted(value.url_params().items())))
    hash(value)
    return value


def warming_up() -> bool:
    """Whether this run belongs to the server's warm-up (:mod:`ui.warm`)."""
    return visitors.is_warm_up_session()


def budgeted() -> bool:
    """Whether runs wait at most :data:`WAIT_S` for their jobs: in a server, not in a run
    without one (Streamlit's AppTest, bare mode), unless :data:`ALWAYS_BUDGET` is set."""
    return ALWAYS_BUDGET or _compat.in_server()


_RUNS = threading.local()


def _deadline() -> float:
    """When this script run stops waiting for jobs (the first wait of a run sets it)."""
    run = _compat.run_identity()
    if getattr(_RUNS, "run", None) != run:
        _RUNS.run, _RUNS.deadline = run, time.monotonic() + WAIT_S
    return _RUNS.deadline


def need(label: str, fn: Callable[..., T], *args: Any, name: str = "", **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` computed as a shared job (see the module docstring); ``fn``
    should be a cached function. Raises :class:`Pending` (after drawing the placeholder
    ``pending_<name>`` with ``label``) when the job is not done within the run's budget; an
    error of ``fn`` is raised here."""
    key = job_key(fn, args, kwargs)
    if _done(key):
        return fn(*args, **kwargs)  # computed before: from the function's cache
    warm = warming_up()
    if warm:
        visitors.wait_quiet()  # a person's run goes first
    future = pool().submit(key, lambda: fn(*args, **kwargs), WARM_UP if warm else VISITOR)
    timeout = None if warm or not budgeted() else max(0.0, _deadline() - time.monotonic())
    with contextlib.suppress(TimeoutError):
        return future.result(timeout=timeout)
    placeholder(label, key, name or key[0].rsplit(".", 1)[-1].strip("_"))
    raise Pending


def ready(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> bool:
    """Whether ``fn(*args, **kwargs)`` is done as a job (or the session holds uploads, which
    compute on the page): a part of a page that only adds to what another part waits for can
    then be drawn without a placeholder of its own."""
    return _done(job_key(fn, args, kwargs))


def _done(key: tuple) -> bool:
    return _has_uploads() or key in pool().done


def prefetch(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Queue ``fn(*args, **kwargs)`` as a job behind every visitor's (the value the page will
    likely need next, e.g. another slice column), without waiting for it. Nothing is queued
    for a session holding uploaded runs, nor with ``RETRIEVAL_DASHBOARD_WARM_UP=0``
    (:func:`ui.visitors.warm_up_off`: no work ahead of a visitor)."""
    if visitors.warm_up_off() or _has_uploads():
        return
    key = job_key(fn, args, kwargs)
    if key not in pool().done:
        pool().submit(key, lambda: fn(*args, **kwargs), WARM_UP)


def _has_uploads() -> bool:
    from ui.data import UPLOADS

    return bool(st.session_state.get(UPLOADS))


def placeholder(label: str, key: tuple, name: str) -> None:
    """The progress bar of a running job, redrawn every :data:`POLL_S` seconds; reruns the
    page when the job is done."""
    from analysis.present.export import escape_markdown

    started = pool().started.get(key, time.monotonic())
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", name)
    label = escape_markdown(label)

    @st.fragment(run_every=POLL_S)
    def waiting() -> None:
        future = pool().peek(key)
        if future is None or future.done():
            st.rerun()
        elapsed = time.monotonic() - started
        with st.container(key=f"pending_{name}"):
            # an honest bar cannot know the end: it fills as 1 - exp(-t / 5 s)
            st.progress(1 - math.exp(-elapsed / 5), text=f"{label} ({elapsed:.0f} s)")

    waiting()


def only_when(shown: bool) -> None:
    """First line of a ``with ..., section():`` block drawn only when ``shown`` (e.g. a lazy
    tab that is not open: Streamlit then sends nothing of it); ends the block otherwise."""
    if not shown:
        raise Pending


@contextlib.contextmanager
def section() -> Iterator[None]:
    """A part of the page: a job it needs that is not done leaves its placeholder here, and
    the page goes on below."""
    with contextlib.suppress(Pending):
        yield
