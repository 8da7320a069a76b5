"""``retrieval-dashboard``, ``python -m ui.launch``: start the app (``streamlit run app.py``,
through :mod:`ui.serve`) from any folder.

Where the app is: ``app.py`` and ``pages/`` stay at the top of the project, as Streamlit's pages
directory convention needs (a folder ``pages/`` beside the entry point). The launcher looks for
them

1. beside the ``ui`` package -- a source checkout or an editable install (``pip install -e .``),
   the supported way to install; the demo bundle in ``data/`` is then found as usual;
2. in ``<prefix>/share/retrieval-dashboard/`` -- a regular (wheel) install, where
   ``pyproject.toml`` ships ``app.py``, ``pages/*.py`` and ``.streamlit/config.toml`` as data
   files. The demo bundle is not in the wheel: unless ``RETRIEVAL_DASHBOARD_DATA_ROOTS`` is set,
   the data root is then ``./data`` of the folder the command is started in.

The server listens on 127.0.0.1 only (``--server.address 127.0.0.1``); any further arguments are
passed to ``streamlit run`` (e.g. ``--server.port 8600``).

Ad hoc, with no bundle to write first: ``retrieval-dashboard --run bm25=bm25.trec --run
dense=dense.parquet --qrels qrels.txt [--queries q.tsv] [--entities docs.parquet] [--split FILE]
[--name NAME] [--metrics hit@1,mrr]`` writes the files as a bundle (:mod:`analysis.io.adhoc`;
in ``<cache>/bundles/<name>-<content hash>``, reused for the same content) and serves the app
with that bundle folder as its only data root. The other arguments still go to ``streamlit
run``. The measures of ``RETRIEVAL_DASHBOARD_PLUGINS`` are loaded first, so that ``--metrics``
may name them as the app does. Without Streamlit installed the launcher prints one line naming
``pip install 'retrieval-error-dashboard[app]'`` (exit code 2).

Streamlit runs with the app's folder as its working directory so its ``.streamlit/config.toml``
applies; relative paths in ``RETRIEVAL_DASHBOARD_DATA_ROOTS`` are made absolute first.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from ui.serve import healthy

ROOTS_ENV = "RETRIEVAL_DASHBOARD_DATA_ROOTS"
SHARE = Path("share") / "retrieval-dashboard"
#: the launcher's own options (an ad-hoc bundle); every other argument goes to streamlit run
ADHOC_OPTIONS = (
    "--run", "--qrels", "--queries", "--entities", "--split", "--name", "--metrics", "--group",
    "--folds",
)  # fmt: skip
APP_EXTRA = "pip install 'retrieval-error-dashboard[app]'"


def find_app() -> Path:
    """The ``app.py`` to run (see the module docstring).

    Raises:
        FileNotFoundError: neither a source checkout nor the installed data files hold it.
    """
    beside = Path(__file__).resolve().parents[1] / "app.py"
    if beside.is_file() and (beside.parent / "pages").is_dir():
        return beside
    for prefix in {sysconfig.get_paths()["data"], sys.prefix}:
        shipped = Path(prefix) / SHARE / "app.py"
        if shipped.is_file():
            return shipped
    raise FileNotFoundError(
        "app.py not found beside the ui package or in share/retrieval-dashboard"
    )


def command(app: Path, extra: Sequence[str] = (), preload: bool = True) -> list[str]:
    """The ``streamlit run`` command line for ``app``: through :mod:`ui.serve` (the analysis
    library imported before the server listens, the main page run once when it answers), or
    Streamlit's own with ``preload=False`` (an app that is not this project's)."""
    runner = "ui.serve" if preload else "streamlit"
    return [sys.executable, "-m", runner, "run", str(app), "--server.address", "127.0.0.1", *extra]


def environment(app: Path, cwd: Path) -> dict[str, str]:
    """The environment for the server: data roots made absolute (relative to ``cwd``), and
    ``./data`` as the root of an installed copy that has no demo bundle beside it."""
    env = dict(os.environ)
    raw = env.get(ROOTS_ENV, "")
    if raw:
        roots = [str((cwd / p).resolve()) for p in raw.split(os.pathsep) if p]
        env[ROOTS_ENV] = os.pathsep.join(roots)
    elif not (app.parent / "data").is_dir():
        env[ROOTS_ENV] = str((cwd / "data").resolve())
    return env


#: Options of a server that nobody watches: no browser, no usage statistics, no file watcher.
#: chromium flags of the browser tests and the click benchmark (headless, nothing fetched)
BROWSER_ARGS: tuple[str, ...] = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)
#: the app has finished its rerun (Streamlit's script state on the page)
READY = "[data-testid=stApp][data-test-script-state=notRunning]"
QUIET = ("--server.headless", "true", "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none")  # fmt: skip


def free_port() -> int:
    """A TCP port of 127.0.0.1 that is free now (the system picks it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serving(
    app: Path,
    port: int,
    env: Mapping[str, str] | None = None,
    timeout: float = 90.0,
    preload: bool = True,
    log: Path | None = None,
) -> Iterator[str]:
    """Run ``app`` on 127.0.0.1:``port`` (:data:`QUIET`, the app's folder as working directory,
    ``env`` added to this process's environment; ``preload``: see :func:`command`) for the
    duration of the ``with`` block, for browser tests and benchmarks; yields the base URL once
    ``/_stcore/health`` answers. The server's output goes to ``log`` (default: a temporary
    file); it is stopped (terminate, then kill after 10 s) on exit.

    Raises:
        RuntimeError: the server did not answer within ``timeout`` seconds (the message ends
            with the last 2,000 characters of its output).
    """
    url = f"http://127.0.0.1:{port}"
    with log.open("w+b") if log is not None else tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(
            command(app, ["--server.port", str(port), *QUIET], preload),
            cwd=app.parent,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.monotonic() + timeout
            while not healthy(url):
                if proc.poll() is not None or time.monotonic() > deadline:
                    out.seek(0)
                    output = out.read().decode(errors="replace")[-2000:]
                    raise RuntimeError(f"streamlit did not start for {app}: {output}")
                time.sleep(0.1)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


#: Signals the launcher passes on to the app, and how long it then waits before killing it
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
STOP_GRACE_S = 20.0


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    """Linux: the app gets SIGTERM when the launcher dies, even by SIGKILL."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def run_forwarding(cmd: Sequence[str], *, cwd: Path, env: Mapping[str, str]) -> int:
    """Run ``cmd`` as a child and wait for it; SIGINT, SIGTERM and SIGHUP sent to the launcher
    are passed on to the child, which then has :data:`STOP_GRACE_S` seconds to stop before it is
    killed, so stopping the launcher (Ctrl-C, ``kill``) never leaves the server running. On
    Linux the child is also stopped when the launcher dies without a chance to forward.

    Returns the child's exit code (``128 + n`` when it ended by signal n)."""
    received: list[int] = []
    proc = subprocess.Popen(
        list(cmd), cwd=cwd, env=dict(env),
        preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
    )  # fmt: skip

    def forward(signum: int, frame: object) -> None:
        received.append(signum)
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signum)

    previous = {signum: signal.signal(signum, forward) for signum in FORWARDED}
    try:
        deadline = None
        while proc.poll() is None:
            if received and deadline is None:
                deadline = time.monotonic() + STOP_GRACE_S
            if deadline is not None and time.monotonic() > deadline:
                proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=0.2)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    code = proc.returncode
    return 128 - code if code < 0 else code


def missing_app() -> str | None:
    """One line naming the extra to install when Streamlit is missing, else None."""
    if importlib.util.find_spec("streamlit") is None:
        return f"the app needs Streamlit, which is not installed: {APP_EXTRA}"
    return None


def adhoc(argv: Sequence[str], env: Mapping[str, str]) -> tuple[list[str], dict[str, str]]:
    """Handle the ad-hoc options (:data:`ADHOC_OPTIONS`, before any ``--``): write their bundle
    (or find it written) and make its folder the only data root. Returns the arguments left
    for ``streamlit run`` and the server's environment; without ad-hoc options, both as given.

    Raises:
        InputError: a file that cannot be read, a bad option value (one line naming it).
    """
    args = list(argv)
    cut = args.index("--") if "--" in args else len(args)
    head, tail = args[:cut], args[cut:]
    if not any(a.split("=", 1)[0] in ADHOC_OPTIONS for a in head):
        return args, dict(env)
    from analysis.cli._common import _Parser, add_adhoc_args, adhoc_inputs
    from analysis.core.plugins import env_plugins, load_plugins
    from analysis.io.adhoc import keyed_adhoc_bundle
    from analysis.present.dashboard import adhoc_home

    load_plugins(env_plugins(env))  # --metrics may name the app's plugin measures
    parser = _Parser(prog="retrieval-dashboard", allow_abbrev=False)
    add_adhoc_args(parser)
    options, rest = parser.parse_known_args(head)
    folder = keyed_adhoc_bundle(adhoc_inputs(options), adhoc_home())
    print(f"bundle: {folder}", flush=True)
    return [*rest, *tail], {**env, ROOTS_ENV: str(folder)}


def prepare(argv: Sequence[str], app: Path, cwd: Path) -> tuple[list[str], dict[str, str]] | None:
    """``streamlit run``'s arguments and the server's environment (see :func:`adhoc`), or None
    after printing the one-line error of a missing Streamlit or of bad ad-hoc input."""
    from analysis.core.errors import InputError

    problem = missing_app()
    if problem is None:
        try:
            return adhoc(argv, environment(app, cwd))
        except InputError as exc:
            problem = str(exc)
    sys.stderr.write(f"error: {problem}\n")
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the app; returns streamlit's exit code (2 when the app cannot be found, Streamlit is
    not installed or an ad-hoc input is bad)."""
    extra = list(sys.argv[1:] if argv is None else argv)
    try:
        app = find_app()
    except FileNotFoundError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    prepared = prepare(extra, app, Path.cwd())
    if prepared is None:
        return 2
    extra, env = prepared
    return run_forwarding(command(app, extra), cwd=app.parent, env=env)


if __name__ == "__main__":
    raise SystemExit(main())
