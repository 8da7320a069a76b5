"""The private attributes of third-party libraries that ``ui/_compat.py`` and
``analysis/present/_compat.py`` rely on still exist in the installed versions: when an upgrade
removes one, these tests fail (the code itself only degrades: a slower first page, a validated
figure, a kaleido failure noticed later)."""

from __future__ import annotations

import importlib
import inspect

import plotly.graph_objects as go
import uvicorn

from analysis.present import _compat as present_compat
from ui import _compat as ui_compat


def test_streamlit_still_has_the_repl_hint_flag() -> None:
    module, name = ui_compat.REPL_FLAG
    assert hasattr(importlib.import_module(module), name)


def test_streamlit_still_gives_uvicorn_its_options_from_one_function() -> None:
    module, name = ui_compat.UVICORN_OPTIONS
    options = getattr(importlib.import_module(module), name)
    assert isinstance(options(), dict)
    assert "h11_max_incomplete_event_size" in inspect.signature(uvicorn.Config).parameters
    ui_compat.allow_long_request_heads(1 << 20)
    ui_compat.allow_long_request_heads(1 << 20)  # a second time changes nothing
    options = getattr(importlib.import_module(module), name)
    assert options()["h11_max_incomplete_event_size"] == 1 << 20
    assert not hasattr(options.__wrapped__, "__wrapped__")  # wrapped once, not twice


def test_streamlit_script_run_context_still_names_its_page() -> None:
    module, name = ui_compat.RUN_CONTEXT
    get_ctx = getattr(importlib.import_module(module), name)
    assert callable(get_ctx)
    from streamlit.runtime.scriptrunner import ScriptRunContext

    assert isinstance(getattr(ScriptRunContext, "page_script_hash", None), property)
    assert ui_compat.page_script_hash() == ""  # outside a script run


def test_streamlit_still_has_what_the_page_jobs_use() -> None:
    """A stop exception, a run identity, the logger of the missing-context warning, the test
    runtime told from a server's, and the chart components' code files."""
    module, name = ui_compat.STOP
    stop = getattr(importlib.import_module(module), name)
    assert stop is ui_compat.stop_exception()
    from streamlit.runtime.scriptrunner import ScriptRunContext

    assert "shared" in ScriptRunContext.__dataclass_fields__
    assert ui_compat.run_identity() is None  # outside a script run
    assert not ui_compat.in_script_run()
    assert not ui_compat.in_server()
    import logging

    assert ui_compat.RUN_CONTEXT_LOGGER in logging.Logger.manager.loggerDict
    assert len(ui_compat.chart_chunks(("PlotlyChart", "DeckGlJsonChart"))) == 2


def test_kaleido_still_keeps_its_server_thread() -> None:
    """The one server per process, whose ``open`` starts the thread the code watches."""
    module, name = present_compat.KALEIDO_SERVER
    server = getattr(importlib.import_module(module), name)
    opened = inspect.getsource(type(server).open)
    assert f"self.{present_compat.KALEIDO_THREAD}" in opened
    assert f"self.{present_compat.KALEIDO_THREAD}.start()" in opened
    assert present_compat.kaleido_server_alive()  # not started: no thread to have died


def test_plotly_still_builds_a_figure_without_validating_it() -> None:
    spec = go.Figure(go.Bar(x=["a"], y=[1])).to_dict()
    go.Figure(spec, **{present_compat.PLOTLY_NO_VALIDATION: False})  # TypeError once removed
    figure = present_compat.figure_unvalidated(spec)
    assert figure.data[0].x == ("a",)


def test_streamlit_still_reads_a_plotly_figure_through_to_dict() -> None:
    """``ui.widgets.plotly_figure`` hands ``st.plotly_chart`` a figure whose ``to_dict()`` is the
    cached dict itself: Streamlit must still take the figure's dict from ``to_dict()`` (else the
    chart is still right, only copied again on every rerun)."""
    import plotly.tools
    from streamlit.elements import plotly_chart

    from ui import widgets

    spec = go.Figure(go.Bar(x=["a"], y=[1])).to_dict()
    assert "return_figure_from_figure_or_data" in inspect.getsource(plotly_chart)
    figure = widgets.plotly_figure(spec)
    assert plotly.tools.return_figure_from_figure_or_data(figure, True) is spec
