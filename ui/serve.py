"""``python -m ui.serve run app.py [options]``: Streamlit's own ``streamlit run``, with the
analysis library imported first.

A Streamlit app imports its libraries on its first run, that is while the first visitor waits:
for the home page, pandas and the analysis library take about 0.4 s on a 2-core machine, and
scipy.stats about 0.7 s more when the leaderboard is not on disk yet. This entry point imports
them in the server process before Streamlit starts listening, so the page of the first visitor
only runs the page. Only the library is imported early (it never imports streamlit): the
``ui`` modules create Streamlit caches when imported, and those need Streamlit's runtime,
which exists only once the server starts (``ui._compat``, which creates none, aside).

The server takes request heads of up to :data:`MAX_REQUEST_HEAD_BYTES` (a long link; see
:func:`ui._compat.allow_long_request_heads`).

Then, once the server answers, the pages are visited once, headless, in the server's own
runtime (:mod:`ui.warm`: the home page first, then every page of the default dataset, its other
metrics and slice columns, then the other datasets, each visit in idle time): their tables,
statistics and figures are computed, or read from the disk cache, into the caches every
session shares before a visitor asks for them. ``RETRIEVAL_DASHBOARD_WARM_UP=0`` turns this
off, and with it the other work done ahead of a visitor's next click: the pages' prefetches
(:func:`ui.jobs.prefetch`) and the browser's loading of chart code ahead
(:func:`ui.widgets.preload_charts`); see :func:`ui.visitors.warm_up_off`.

The launcher (:mod:`ui.launch`, ``retrieval-dashboard``), the browser tests and the benchmarks
start the app this way; ``streamlit run app.py`` serves the same app, with a slower first page.
"""

from __future__ import annotations

import importlib
import sys
import threading
import time
import urllib.request
from collections.abc import Sequence

#: the longest request head (request line, URL and headers) the server takes, in bytes: room
#: for a link with several parameters at the pages' bound (``ui.urlstate.MAX_PARAM_CHARS``
#: characters; percent-encoded Chinese text, 147 KiB each), while a connection's buffer stays
#: bounded; a longer head gets the HTTP parser's own "400 Bad Request"
MAX_REQUEST_HEAD_BYTES = 1 << 20

#: what the home page's first run imports (its ``ui`` modules aside); scipy.stats (about 0.7 s)
#: for the leaderboard's paired t-tests, which a table computed before does not need
PRELOAD: tuple[str, ...] = (
    "analysis.core.metrics",
    "analysis.io",
    "analysis.io.bundle",
    "analysis.present.export",
    "analysis.present.leaderboard",
    "analysis.stats",
    "analysis.stats.cache",
    "analysis.stats.perquery",
    "scipy.stats",
)


def main(argv: Sequence[str] | None = None) -> None:
    """Import :data:`PRELOAD`, then run Streamlit's command line with ``argv`` (default: this
    process's arguments), warming the pages up once the server answers (``run`` only); exits
    with Streamlit's exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    for name in PRELOAD:
        importlib.import_module(name)
    from streamlit.web import cli  # before the warm-up thread imports streamlit too

    from ui import _compat

    _compat.allow_long_request_heads(MAX_REQUEST_HEAD_BYTES)

    if warm_up_wanted(args):
        threading.Thread(target=_warm_up, name="warm-up", daemon=True).start()
    sys.argv = ["streamlit", *args]
    cli.main(prog_name="streamlit")


def warm_up_wanted(args: Sequence[str]) -> bool:
    """Whether to warm the pages up: a ``run`` command, unless
    :func:`ui.visitors.warm_up_off`."""
    if len(args) < 2 or args[0] != "run":
        return False
    from ui.visitors import warm_up_off

    return not warm_up_off()


def _warm_up(timeout: float = 120.0) -> None:
    """Visit the app's pages headless (:func:`ui.warm.run`) as soon as the server answers;
    gives up silently (no server within ``timeout``, a Unix socket, HTTPS)."""
    from streamlit import config
    from streamlit.runtime import Runtime

    deadline = time.monotonic() + timeout
    while not Runtime.exists():  # the command line has read its flags once the runtime exists
        if time.monotonic() > deadline:
            return
        time.sleep(0.05)
    url = _local_url(config.get_option("server.address"), config.get_option("server.port"),
                     config.get_option("server.baseUrlPath"))  # fmt: skip
    if url is None or config.get_option("server.sslCertFile"):
        return
    while not healthy(url):
        if time.monotonic() > deadline:
            return
        time.sleep(0.05)
    from ui import warm  # the ui modules need the runtime, which exists now

    warm.run(url)


def _local_url(address: str | None, port: int, base: str | None) -> str | None:
    """This machine's URL of a server listening on ``address`` (``None`` for a Unix socket)."""
    host = address or "127.0.0.1"
    if host.startswith("unix://"):
        return None
    if host in ("0.0.0.0", "::"):
        host = "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    path = (base or "").strip("/")
    return f"http://{host}:{port}" + (f"/{path}" if path else "")


def healthy(url: str) -> bool:
    """Whether the Streamlit server at base URL ``url`` answers its health check."""
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


if __name__ == "__main__":
    main()
