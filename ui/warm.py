"""The server's warm-up: headless visits of every page, so that a person's first visit of a page
finds its tables, statistics and figures computed.

Once the server answers, :func:`run` visits pages the way a browser does: it opens a session
on the app's websocket (``/_stcore/stream``), asks for a run of a page with a query string
(Streamlit's ``rerun_script`` message) and waits for the run to finish. The page computes what
it shows and keeps it in the caches every session shares (and the per-query tables and
leaderboards in the disk cache); a warm-up run waits for its jobs instead of drawing
placeholders (:mod:`ui.jobs`). Its sessions say so in their ``User-Agent``
(:mod:`ui.visitors`), and their jobs queue behind every visitor's.

The visits (:func:`plan`), most wanted first, for the first bundle (the one a new visitor
sees): the home page; every page on the default dataset; every page that depends on the metric
with each other headline metric of that dataset (the sidebar's Metric); then every page of
each other dataset of the bundle. Pages queue what a visitor will likely ask for next (Slices,
Compare and the failure taxonomy: the other slice columns; Open data: the folders' files;
:func:`ui.jobs.prefetch`), so those are computed in the same idle time.

The warm-up gives way to people (:mod:`ui.visitors`): a visit starts only when no person's
page run is in progress, none ended within :data:`IDLE_S` seconds (the browser is still drawing
what it received) and no person's job is waiting or ended within that time. A visit already
under way pauses while a person's run is in progress: at its start and before each job it asks
for (:func:`ui.jobs.need`); the jobs' threads take no warm-up job meanwhile. A visitor who
comes mid-way thus waits only for what their page still misses, and the warm-up's page runs
do not compete with theirs for the server's time.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

from ui import visitors

#: seconds since a person's page run (or job) ended before the next warm-up visit
IDLE_S = 2.0
VISIT_TIMEOUT_S = 600.0
#: pages that show nothing that depends on the sidebar's metric (home: every headline metric)
METRIC_FREE = ("Open_data",)
ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Visit:
    """One page run: ``page`` is the page's URL path (``""`` = home), ``query`` its query
    parameters."""

    page: str
    query: dict[str, str] = field(default_factory=dict)

    @property
    def query_string(self) -> str:
        return urlencode(self.query)


def pages() -> list[str]:
    """URL paths of the pages other than home, in sidebar order (``7_Open_data.py`` ->
    ``Open_data``, Streamlit's rule for the pages/ directory)."""
    from ui.state import page_label

    return [page_label(p).replace(" ", "_") for p in sorted((ROOT / "pages").glob("*.py"))]


def plan() -> Iterator[Visit]:
    """The visits of the first bundle under the data roots, most wanted first (see the module
    docstring)."""
    from ui import data
    from ui.state import headline_metrics

    yield Visit("")
    bundles = data.available_bundles()
    if not bundles:
        return
    bundle = data.load_bundle(next(iter(bundles.values())))
    names = list(bundle.datasets)
    if not names:
        return
    first, others = names[0], names[1:]
    yield from (Visit(p) for p in pages())
    for metric in headline_metrics(bundle.datasets[first])[1:]:
        yield from (Visit(p, {"metric": metric}) for p in pages() if p not in METRIC_FREE)
    for name in others:
        yield from (Visit(p, {"dataset": name}) for p in ["", *pages()])


def visit(base_url: str, target: Visit, timeout: float = VISIT_TIMEOUT_S) -> bool:
    """Run one page on the server at ``base_url`` (``http://host:port[/base]``) as a browser
    would, in a session of its own; True when the run finished."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from websockets.sync.client import connect

    url = base_url.replace("http", "ws", 1) + "/_stcore/stream"
    message = BackMsg()
    message.rerun_script.query_string = target.query_string
    message.rerun_script.page_name = target.page
    deadline = time.monotonic() + timeout
    headers = {"User-Agent": visitors.USER_AGENT}
    with connect(url, subprotocols=["streamlit"], additional_headers=headers,  # type: ignore[list-item]
                 max_size=None, open_timeout=timeout) as ws:  # fmt: skip
        ws.send(message.SerializeToString())
        while time.monotonic() < deadline:
            raw = ws.recv(timeout=max(deadline - time.monotonic(), 0.0))
            if isinstance(raw, bytes) and ForwardMsg.FromString(raw).WhichOneof("type") == (
                "script_finished"
            ):
                return True
    return False


def _wait_idle(since: float = -math.inf) -> None:
    """Until no person's page run or job has been in progress for :data:`IDLE_S` seconds, nor
    since ``since`` (a ``time.monotonic()``)."""
    from ui.jobs import pool

    last_job = since
    while True:
        if pool().visitors_waiting():
            last_job = time.monotonic()
        quiet = min(visitors.quiet_for(), time.monotonic() - last_job)
        if not visitors.busy() and quiet >= IDLE_S:
            return
        time.sleep(visitors.POLL_S)


def run(base_url: str) -> int:
    """Every visit of :func:`plan`, one after the other, each in idle time, then the jobs
    they queued; returns how many visits ran. A visit that fails is logged and skipped. The
    home page is visited at once (a person who comes then shares its computations); the next
    visit waits :data:`IDLE_S` more, the time a browser opened with the server takes to ask
    for its first page."""
    from ui.jobs import pool

    started, done = time.monotonic(), 0
    for target in plan():
        if done:  # the first visit (home) does not wait; the next waits IDLE_S after it
            _wait_idle(since=time.monotonic() if done == 1 else -math.inf)
        try:
            done += visit(base_url, target)
        except Exception as exc:  # the app keeps working without it
            _log().warning("warm-up visit /%s?%s failed: %s", target.page, target.query_string,
                           exc)  # fmt: skip
    while not pool().idle():  # what the pages queued for later
        time.sleep(0.2)
    _log().info("warm-up: %d page runs in %.1f s", done, time.monotonic() - started)
    return done


def _log():
    from streamlit.logger import get_logger

    return get_logger(__name__)
