"""From a notebook to the dashboard in one call::

    import analysis
    app = analysis.dashboard({"bm25": bm25_run, "dense": "dense.trec"}, qrels)
    app            # in Jupyter: a link to the app (app.show() embeds it)
    app.stop()     # ends the server and every process it started

:func:`dashboard` writes an ad-hoc bundle (:mod:`analysis.io.adhoc`) into
``<cache>/bundles/<name>-<content hash>`` (the cache folder of the per-query tables,
``$RETRIEVAL_DASHBOARD_CACHE_DIR``, else ``~/.cache/retrieval-dashboard``), then starts the app
on it in a background process: ``python -m ui.launch`` (the project's launcher, which runs the
app through ``ui/serve.py``) with that bundle folder as the only data root, on 127.0.0.1 and a
free port (or ``port``). The returned :class:`Dashboard` holds the URL, which opens that bundle.
The same content gives the same bundle folder, untouched, so the app's disk cache of its
per-query tables is used again; new content gives a new folder beside it. Bundles are not
removed by themselves: delete ``<cache>/bundles`` to reclaim the space.

User measures (:func:`analysis.register_measure`) reach the app when they are declared in a
``.py`` file (a plugin, or any imported module): the server loads those files as plugins,
besides those of ``RETRIEVAL_DASHBOARD_PLUGINS``. A measure defined in a notebook cell lives
only in the notebook's process: naming it in ``metrics`` is refused (one line saying to move it
to a file), and it is not among the app's metrics.

The library does not import Streamlit or the app: without Streamlit installed the call fails
with one line naming ``pip install 'retrieval-error-dashboard[app]'``. The server is started
in its own process group (a session on POSIX), so :meth:`Dashboard.stop` ends the launcher,
the server and anything they started, and waits until none of them is left and the port
answers no more; servers still running when the interpreter exits are stopped then
(``atexit``).
"""

from __future__ import annotations

import atexit
import contextlib
import html
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import webbrowser
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Unpack

from analysis.core.errors import InputError, MissingDependency
from analysis.io.adhoc import AdhocInputs, AdhocOptions, keyed_adhoc_bundle
from analysis.present.escape import escape_html

APP_EXTRA = "pip install 'retrieval-error-dashboard[app]'"
ROOTS_ENV = "RETRIEVAL_DASHBOARD_DATA_ROOTS"
LOCALHOST = "127.0.0.1"
_PROJECT = Path(__file__).resolve().parents[2]  # the folder holding the analysis and ui packages
_RUNNING: set[Dashboard] = set()
_EXIT_HOOK: list[bool] = []


def adhoc_home() -> Path:
    """The folder of the content-keyed ad-hoc bundles: ``<cache folder>/bundles``."""
    from analysis.stats.cache import cache_dir

    return cache_dir() / "bundles"


def require_app() -> None:
    """Raise :class:`MissingDependency` (one line naming the extra) unless Streamlit and the
    app's launcher can be imported."""
    if importlib.util.find_spec("streamlit") is None:
        raise MissingDependency(f"the dashboard needs Streamlit: {APP_EXTRA}")
    if not (_PROJECT / "ui" / "launch.py").is_file():
        raise MissingDependency(
            f"the dashboard's app (the ui package) is not installed: {APP_EXTRA}"
        )


def free_port() -> int:
    """A TCP port of 127.0.0.1 that is free now (the system picks it)."""
    with socket.socket() as s:
        s.bind((LOCALHOST, 0))
        return int(s.getsockname()[1])


def port_answers(port: int) -> bool:
    """Whether something accepts connections on 127.0.0.1:``port``."""
    with contextlib.suppress(OSError), socket.create_connection((LOCALHOST, port), timeout=1):
        return True
    return False


def _healthy(base: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes of process group ``pgid``; on systems without ``/proc``,
    ``[pgid]`` while a signal can reach the group."""
    proc = Path("/proc")
    if not proc.is_dir():
        try:
            os.killpg(pgid, 0)
        except OSError:
            return []
        return [pgid]
    members = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()  # after "pid (comm) ": state ppid pgrp
        if len(fields) > 2 and fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(entry.name))
    return members


@dataclass(eq=False)
class Dashboard:
    """A running dashboard: ``url`` opens its bundle, ``bundle`` is the bundle folder.

    In Jupyter the handle shows as a link; :meth:`show` embeds the app; :meth:`stop` ends it
    (also a ``with`` block's end, and the interpreter's exit).
    """

    url: str
    bundle: Path
    port: int
    process: subprocess.Popen = field(repr=False)
    log: IO[bytes] = field(repr=False)

    @property
    def running(self) -> bool:
        """Whether the server process is still alive."""
        return self.process.poll() is None

    def output(self) -> str:
        """What the server printed so far (its stdout and stderr); empty once :meth:`stop` has
        removed the log."""
        if not self.log.closed:
            self.log.flush()
        return (
            Path(self.log.name).read_text(errors="replace") if Path(self.log.name).exists() else ""
        )

    def stop(self, timeout: float = 15.0) -> None:
        """End the launcher, the server and every process they started (SIGTERM to the process
        group, SIGKILL to what is left after ``timeout`` seconds), and wait until the port
        answers no more. Calling it again does nothing."""
        if self not in _RUNNING and self.process.returncode is not None:
            return  # stopped before: the group id may belong to another process by now
        _RUNNING.discard(self)
        if os.name == "posix":
            stop_group(self.process, timeout)
        else:  # pragma: no cover - Windows: the process tree by taskkill
            subprocess.run(
                ["taskkill", "/F", "/T", "/PID", str(self.process.pid)],
                capture_output=True,
                check=False,
            )
            self.process.wait()
        deadline = time.monotonic() + timeout
        while port_answers(self.port) and time.monotonic() < deadline:
            time.sleep(0.05)
        with contextlib.suppress(OSError):
            self.log.close()
            Path(self.log.name).unlink()

    def show(self, width: str | int = "100%", height: int = 800) -> Any:
        """The app in an ``IFrame`` (IPython's), for a Jupyter cell. The URL is 127.0.0.1: the
        browser showing the notebook must run on the machine that runs Python (on a remote
        Jupyter server, forward the port first, e.g. ``ssh -L PORT:127.0.0.1:PORT``).

        Raises:
            MissingDependency: IPython is not installed.
        """
        try:
            from IPython.display import IFrame
        except ImportError:
            raise MissingDependency("show() needs IPython (Jupyter): pip install ipython") from None
        return IFrame(self.url, width=width, height=height)

    def _repr_html_(self) -> str:
        state = "" if self.running else " (stopped)"
        url = html.escape(self.url, quote=True)
        name = escape_html(self.bundle.name)
        link = f'<a href="{url}" target="_blank" rel="noopener">{url}</a>'
        return f"{link} &middot; bundle <code>{name}</code>{state}"

    def __enter__(self) -> Dashboard:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def stop_group(process: subprocess.Popen, timeout: float) -> None:
    """SIGTERM the process group led by ``process``; SIGKILL whatever is left after
    ``timeout`` seconds; reap ``process``."""
    pgid = process.pid  # the leader of its own session: its pid is the group id
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=0.05)
        if process.poll() is not None and not group_members(pgid):
            return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)
    process.wait()
    kill_deadline = time.monotonic() + timeout
    while group_members(pgid) and time.monotonic() < kill_deadline:
        time.sleep(0.05)


def bundle_url(port: int, bundle: Path) -> str:
    """The app's URL on this machine that opens ``bundle`` (its folder name is its id when the
    folder is the only data root)."""
    return f"http://{LOCALHOST}:{port}/?bundle={urllib.parse.quote(bundle.name, safe='')}"


def _command(port: int, address: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "ui.launch",
        "--server.port",
        str(port),
        "--server.address",
        address,
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
    ]


def _environment(bundle: Path) -> dict[str, str]:
    """This process's environment, the bundle as the only data root, and as plugins those of
    ``RETRIEVAL_DASHBOARD_PLUGINS`` plus the files of the user measures registered here."""
    from analysis.core.plugins import ENV, env_plugins, measure_sources

    env = dict(os.environ)
    env[ROOTS_ENV] = str(bundle.resolve())
    env["PYTHONUNBUFFERED"] = "1"
    plugins = list(dict.fromkeys([*env_plugins(env), *measure_sources()[0]]))
    if plugins:
        env[ENV] = ",".join(plugins)
    return env


def _check_port(port: object) -> int | None:
    """``port`` as given, None for "a free one" (None or 0).

    Raises:
        InputError: not an integer in 0-65535.
    """
    if port is None or port == 0:
        return None
    if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
        raise InputError(
            "port", None, f"{port!r}: a TCP port is an integer in 1-65535 (None or 0: a free one)"
        )
    return port


def _check_metrics(metrics: Sequence[str] | str | None) -> None:
    """Refuse a metric whose user measure the app's process cannot load.

    Raises:
        InputError: naming the measure and what to do.
    """
    from analysis.core.names import parse_metrics
    from analysis.core.plugins import measure_sources

    local = set(measure_sources()[1])
    if not metrics or not local:
        return
    try:
        wanted = parse_metrics(metrics)
    except (TypeError, ValueError):  # not metric names: the bundle's own check names it
        return
    for metric in wanted:
        if metric.measure in local:
            raise InputError(
                "metrics",
                None,
                f"{metric.label}: the measure {metric.measure!r} is defined in this notebook or "
                "script (or a file whose path holds a comma), which the app's own process cannot "
                "load; define it in a .py file and load that with "
                "analysis.core.plugins.load_plugin('file.py')",
            )


def _spawn(folder: Path, port: int, address: str) -> Dashboard:
    """Start ``python -m ui.launch`` on ``folder`` in a new session (its own process group),
    its output in a temporary log file."""
    log = tempfile.NamedTemporaryFile(  # noqa: SIM115 (closed by Dashboard.stop)
        prefix="retrieval-dashboard-", suffix=".log", delete=False
    )
    group: dict[str, Any] = {"start_new_session": True}
    if os.name != "posix":  # pragma: no cover
        group = {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}  # type: ignore[attr-defined]
    process = subprocess.Popen(
        _command(port, address),
        cwd=_PROJECT,  # where `python -m ui.launch` finds the ui package
        env=_environment(folder),
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        **group,
    )
    url = bundle_url(port, folder)
    return Dashboard(url=url, bundle=folder, port=port, process=process, log=log)


def serve_bundle(
    bundle: str | Path,
    port: int | None = None,
    address: str = LOCALHOST,
    open_browser: bool = False,
    timeout: float = 120.0,
) -> Dashboard:
    """Start the app on the bundle folder ``bundle`` (the only data root) in the background and
    return once it answers. ``port``: a free one when None or 0; ``address``: where the server
    listens (127.0.0.1 unless you pass another, e.g. ``"0.0.0.0"`` to share it on a network,
    behind your own authentication); ``open_browser``: open the URL in this machine's browser.

    Raises:
        MissingDependency: Streamlit (or the app) is not installed.
        InputError: ``port`` is not an integer in 0-65535.
        OSError: ``port`` is taken.
        RuntimeError: the server did not answer within ``timeout`` seconds (with the end of
            its output).

    The server is stopped when it does not start, and when the wait is interrupted.
    """
    require_app()
    folder = Path(bundle).expanduser().resolve()
    port = _check_port(port)
    if port is None:
        port = free_port()
    elif port_answers(port):
        raise OSError(f"port {port} on {LOCALHOST} is in use")
    handle = _spawn(folder, port, address)
    _track(handle)
    base = f"http://{LOCALHOST}:{port}"
    deadline = time.monotonic() + timeout
    try:
        while not _healthy(base):
            if not handle.running or time.monotonic() > deadline:
                tail = handle.output()[-2000:]
                raise RuntimeError(f"the dashboard did not start: {tail.strip() or 'no output'}")
            time.sleep(0.1)
    except BaseException:  # also an interrupt while waiting: no server is left without a handle
        handle.stop()
        raise
    if open_browser:
        webbrowser.open(handle.url)
    return handle


def dashboard(
    runs: Mapping[str, object],
    qrels: object,
    *,
    port: int | None = None,
    open_browser: bool = False,
    **options: Unpack[AdhocOptions],
) -> Dashboard:
    """Open the dashboard on runs and qrels held in a notebook; see the module docstring.
    Every argument after ``qrels`` is a keyword (``options``: the fields of
    :class:`analysis.io.adhoc.AdhocInputs`).

    Args:
        runs: model name -> run: a path (TREC, ranx JSON/``.lz4``, CSV/Parquet/JSONL, STaRK
            ``eval_results``), a DataFrame (``query_id, doc_id, score``, or PyTerrier's ``qid,
            docno, score``), a ranx ``Run``, a dict ``{query_id: {doc_id: score}}``, records
            (see :mod:`analysis.io.objects`).
        qrels: a path, a DataFrame (``query_id, doc_id, relevance``, PyTerrier's ``qid, docno,
            label``), a ranx ``Qrels``, a dict ``{query_id: {doc_id: relevance}}``, an
            ir_datasets dataset or its ``qrels_iter()``.
        queries: optional queries (path, DataFrame ``query_id, text`` + slice columns, PyTerrier
            topics ``qid, query``, dict ``{query_id: text}``, ir_datasets ``queries_iter()``).
        entities: optional documents (path, DataFrame ``doc_id, name, text``, dict
            ``{doc_id: text}``, ir_datasets ``docs_iter()``).
        name: the bundle's and dataset's name (default ``adhoc``).
        metrics: the headline metrics (default ``hit@1, hit@5, recall@20, mrr, ndcg@10``).
        split: evaluate only these query ids: a split file or an iterable of ids.
        port: the port on 127.0.0.1 (None or 0: a free one).
        open_browser: also open the URL in this machine's browser.
        groups: runs of one model: ``{"dense": ["dense-s1", "dense-s2", "dense-s3"]}``
            (seeds: compared by their per-query means) or ``{"ltr": {"f1": "ltr-f1", ...}}``
            (folds, each run over its fold's queries); names of ``runs``.
        metadata: numbers per run or group for the quality-against-cost chart,
            ``{"bm25": {"latency_ms": 4.2, "index_mb": 310}}``.

    Returns:
        A :class:`Dashboard` (``.url``, ``.bundle``, ``.stop()``, ``.show()``).

    Raises:
        MissingDependency: Streamlit is not installed (one line naming the extra).
        InputError: a run, qrels or other input that cannot be read, a port that is not one,
            a metric of a measure defined in the notebook (one line naming it).
        TypeError: a keyword that is not one of the above.
    """
    require_app()
    _check_port(port)
    _check_metrics(options.get("metrics"))
    inputs = AdhocInputs(runs=runs, qrels=qrels, **options)
    folder = keyed_adhoc_bundle(inputs, adhoc_home())
    return serve_bundle(folder, port=port, open_browser=open_browser)


def _stop_all() -> None:
    for handle in list(_RUNNING):
        with contextlib.suppress(Exception):
            handle.stop(timeout=5.0)


def _track(handle: Dashboard) -> None:
    """Keep ``handle`` to stop it at the interpreter's exit (the exit hook is registered with
    the first server, not at import)."""
    if not _EXIT_HOOK:
        atexit.register(_stop_all)
        _EXIT_HOOK.append(True)
    _RUNNING.add(handle)
