"""Every private Streamlit attribute the app uses, in one place.

Each use degrades to doing nothing when a newer Streamlit drops the attribute; the tests
(``tests/ui/test_third_party.py``) fail instead, so that a Streamlit upgrade that removes one is
noticed and this module adapted:

* ``streamlit.delta_generator._use_warning_has_been_displayed``: Streamlit checks once per
  process, at the first element, whether it runs in a Python REPL to print a hint, with
  ``inspect.stack()``, which reads the source of every frame (0.2-0.5 s of the first page after
  a start). Under ``streamlit run`` there is no REPL: :func:`skip_repl_check` marks the hint as
  shown. Nothing else reads the flag.
* ``streamlit.runtime.scriptrunner.get_script_run_ctx().page_script_hash``: the page the
  current script run draws (:func:`page_script_hash`), which page-local URL state is kept per.
* ``get_script_run_ctx()`` itself (:func:`in_script_run`: uploads are a session's, background
  jobs have none) and its ``shared`` state, new at every run (:func:`run_identity`: a run's
  budget of waiting, :mod:`ui.jobs`).
* ``streamlit.runtime.scriptrunner_utils.exceptions.StopException``: what ``st.stop()`` raises
  (:func:`stop_exception`); a pending job stops its section the same way.
* AppTest puts a mock in place of the runtime (:func:`in_server`: jobs wait without a budget
  outside a server).
* The logger that warns of a missing script run context (:data:`RUN_CONTEXT_LOGGER`), which
  the jobs' threads, running no script by design, keep quiet.
* Streamlit's static folder holds each chart component's code as ``<Name>.<hash>.js``
  (:func:`chart_chunks`), which the home page lets the browser load ahead.
* ``streamlit.web.server.starlette.starlette_server._get_uvicorn_config_kwargs``: the options
  Streamlit gives uvicorn, which offer no limit on a request's head. Uvicorn parses HTTP with
  h11, which refuses a request head over 16 KiB (a plain "Invalid HTTP request received.")
  whenever it arrives in more than one read, as a long link does on a busy machine, so a link
  the pages accept (:data:`ui.urlstate.MAX_PARAM_CHARS` characters per parameter) got that page
  at random. :func:`allow_long_request_heads` adds h11's limit to those options.
"""

from __future__ import annotations

import functools
import importlib
from pathlib import Path

#: The private names this module reads: (module, attribute).
REPL_FLAG = ("streamlit.delta_generator", "_use_warning_has_been_displayed")
RUN_CONTEXT = ("streamlit.runtime.scriptrunner", "get_script_run_ctx")
STOP = ("streamlit.runtime.scriptrunner_utils.exceptions", "StopException")
UVICORN_OPTIONS = ("streamlit.web.server.starlette.starlette_server", "_get_uvicorn_config_kwargs")
RUN_CONTEXT_LOGGER = "streamlit.runtime.scriptrunner_utils.script_run_context"
#: Streamlit's folder of component code (``<Name>.<hash>.js``), under its package
STATIC_JS = ("static", "static", "js")


def skip_repl_check() -> None:
    """Mark Streamlit's "running in a REPL" hint as shown (see the module docstring)."""
    import streamlit.delta_generator as dg

    if hasattr(dg, REPL_FLAG[1]):
        setattr(dg, REPL_FLAG[1], True)


def allow_long_request_heads(limit: int) -> None:
    """Let the server started in this process take request heads of up to ``limit`` bytes
    however they arrive (see the module docstring); does nothing when Streamlit no longer has
    the function or serves with something other than uvicorn. Call it before the server starts."""
    try:
        module = importlib.import_module(UVICORN_OPTIONS[0])
    except ImportError:  # pragma: no cover - streamlit internals moved
        return
    options = getattr(module, UVICORN_OPTIONS[1], None)
    if options is None or getattr(options, "request_head_limit", None) == limit:
        return

    @functools.wraps(options)
    def with_limit() -> dict:
        return {**options(), "h11_max_incomplete_event_size": limit}

    with_limit.request_head_limit = limit  # type: ignore[attr-defined]
    setattr(module, UVICORN_OPTIONS[1], with_limit)


def page_script_hash() -> str:
    """The hash of the page the current script run draws (``""`` outside a script run or when
    Streamlit no longer offers it)."""
    try:
        from streamlit.runtime.scriptrunner import get_script_run_ctx
    except ImportError:  # pragma: no cover - streamlit internals moved
        return ""
    ctx = get_script_run_ctx()
    return str(getattr(ctx, "page_script_hash", "")) if ctx is not None else ""


def _run_context():
    try:
        from streamlit.runtime.scriptrunner import get_script_run_ctx
    except ImportError:  # pragma: no cover - streamlit internals moved
        return None
    return get_script_run_ctx(suppress_warning=True)


def in_script_run() -> bool:
    """Whether the current thread runs a session's script (not a background thread)."""
    return _run_context() is not None


def run_identity() -> int | None:
    """An identity of the current script run (``None`` outside one): Streamlit makes new
    shared state for every run."""
    ctx = _run_context()
    shared = getattr(ctx, "shared", None) if ctx is not None else None
    return id(shared) if shared is not None else None


def stop_exception() -> type[BaseException]:
    """The exception ``st.stop()`` raises (a script control exception Streamlit ends a run
    with, quietly)."""
    from streamlit.runtime.scriptrunner_utils.exceptions import StopException

    return StopException


def in_server() -> bool:
    """Whether a Streamlit server runs this process (AppTest puts a mock runtime in place)."""
    from streamlit.runtime import Runtime

    return Runtime.exists() and type(Runtime.instance()) is Runtime


@functools.cache
def chart_chunks(names: tuple[str, ...]) -> tuple[str, ...]:
    """The file names of the chart components ``names`` (e.g. ``PlotlyChart``) in Streamlit's
    static folder; a name with no file is left out."""
    import streamlit

    folder = Path(streamlit.__file__).parent.joinpath(*STATIC_JS)
    found = [sorted(folder.glob(f"{name}.*.js")) for name in names]
    return tuple(files[0].name for files in found if files)
