"""``analysis.dashboard``'s handle without a browser: a missing Streamlit is one line, the handle's
HTML is a link, and stopping ends a whole process tree (the browser tests start the app)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

import analysis
from analysis.core.errors import MissingDependency, missing_extra
from analysis.present import dashboard as dash


def test_without_streamlit_one_line_names_the_extra(monkeypatch, tmp_path) -> None:
    monkeypatch.setitem(sys.modules, "streamlit", None)  # as if not installed
    with pytest.raises(MissingDependency) as err:
        analysis.dashboard({"m": {"q": {"d": 1.0}}}, {"q": {"d": 1}})
    assert str(err.value) == (
        "the dashboard needs Streamlit: pip install 'retrieval-error-dashboard[app]'"
    )
    assert not dash.adhoc_home().exists()  # nothing written before the check


def test_missing_optional_packages_name_their_extra() -> None:
    assert missing_extra(ModuleNotFoundError("x", name="plotly.graph_objects")) == (
        "plotly is not installed: pip install 'retrieval-error-dashboard[app]'"
    )
    assert "[scale]" in str(missing_extra(ModuleNotFoundError("x", name="duckdb")))
    assert missing_extra(ModuleNotFoundError("x", name="numpy")) is None  # not an extra: a bug
    assert missing_extra(MissingDependency("to_ranx needs ranx: pip install ranx")) == (
        "to_ranx needs ranx: pip install ranx"
    )


class _Process:
    def __init__(self, code: int | None) -> None:
        self.code = code

    def poll(self) -> int | None:
        return self.code


def test_the_handle_is_a_link_in_jupyter(tmp_path) -> None:
    handle = dash.Dashboard(
        url="http://127.0.0.1:8600/?bundle=a%22b",
        bundle=tmp_path / "a<b>",
        port=8600,
        process=_Process(None),  # type: ignore[arg-type]
        log=(tmp_path / "log").open("wb"),
    )
    shown = handle._repr_html_()
    assert shown.startswith('<a href="http://127.0.0.1:8600/?bundle=a%22b" target="_blank"')
    assert "<code>a&lt;b&gt;</code>" in shown
    handle.process = _Process(0)  # type: ignore[assignment]
    assert shown != handle._repr_html_()
    assert handle._repr_html_().endswith("(stopped)")
    handle.log.close()


def test_stop_group_ends_every_process_of_the_tree(tmp_path) -> None:
    """A parent that ignores SIGTERM and a child that ignores it too: both end (SIGKILL after
    the grace period), as do the ones that obey."""
    script = tmp_path / "tree.sh"
    script.write_text(
        "trap '' TERM\nsh -c \"trap '' TERM; sleep 300\" &\nsleep 300 &\necho started\nwait\n"
    )
    process = subprocess.Popen(["sh", str(script)], stdout=subprocess.PIPE, start_new_session=True)
    assert process.stdout is not None
    assert process.stdout.readline() == b"started\n"
    deadline = time.monotonic() + 30
    while len(dash.group_members(process.pid)) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)  # sh, sh -c, and two sleeps
    assert len(dash.group_members(process.pid)) >= 3
    dash.stop_group(process, timeout=1.0)
    assert process.poll() is not None
    assert dash.group_members(process.pid) == []
    process.stdout.close()


def test_a_port_in_use_is_refused(tmp_path) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert dash.port_answers(port)
        with pytest.raises(OSError, match=f"port {port} on 127.0.0.1 is in use"):
            dash.serve_bundle(Path(tmp_path), port=port)


@pytest.mark.parametrize("port", [-1, 65536, "8080", 8080.0, True])
def test_a_port_that_is_none_is_one_line_before_anything_is_written(
    port, monkeypatch, tmp_path
) -> None:
    from analysis.core.errors import InputError

    monkeypatch.setenv("RETRIEVAL_DASHBOARD_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(InputError) as err:
        analysis.dashboard({"m": {"q": {"d": 1.0}}}, {"q": {"d": 1}}, port=port)
    assert str(err.value) == (
        f"port: {port!r}: a TCP port is an integer in 1-65535 (None or 0: a free one)"
    )
    assert not dash.adhoc_home().exists()


def test_measures_of_files_reach_the_app_and_those_of_a_notebook_are_refused(
    monkeypatch, tmp_path
) -> None:
    """The app runs in its own process: a measure declared in a ``.py`` file is loaded there as
    a plugin; one defined in a notebook cell (module ``__main__``) cannot be, and naming it is
    one line before anything is written."""
    from analysis.core.errors import InputError
    from analysis.core.measures import register_measure, unregister_measure
    from analysis.core.plugins import ENV, load_plugin
    from tests.helpers import PLUGIN, drop_plugin, write_plugin

    monkeypatch.setenv("RETRIEVAL_DASHBOARD_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv(ENV, "mylab.other")
    plugin = write_plugin(tmp_path)
    cell: dict = {"__name__": "__main__"}
    exec("def cell_measure(ranked_rel, n_rel, k):\n    return n_rel * 0.0\n", cell)
    try:
        load_plugin(str(plugin))
        register_measure("cell_measure", cell["cell_measure"])
        env = dash._environment(tmp_path)
        assert env[ENV] == f"mylab.other,{plugin.resolve()}"
        dash._check_metrics(["found@5", "mrr"])  # from a file: fine
        with pytest.raises(InputError) as err:
            analysis.dashboard({"m": {"q": {"d": 1.0}}}, {"q": {"d": 1}}, metrics="cell_measure@5")
        assert str(err.value).startswith(
            "metrics: cell_measure@5: the measure 'cell_measure' is defined in this notebook or "
            "script (or a file whose path holds a comma), which the app's own process cannot "
            "load; define it in a .py file"
        )
        assert not dash.adhoc_home().exists()
        odd = write_plugin(tmp_path, PLUGIN.replace('"found"', '"odd_found"'), "a,b.py")
        load_plugin(str(odd))  # its path cannot be one item of a comma-separated list
        assert "a,b.py" not in dash._environment(tmp_path)[ENV]
        with pytest.raises(InputError, match=r"^metrics: odd_found@5: the measure 'odd_found'"):
            dash._check_metrics("odd_found@5")
    finally:
        unregister_measure("cell_measure")
        drop_plugin(plugin, "found", "dcg_sum")
        drop_plugin(tmp_path / "a,b.py", "odd_found")


def test_output_after_stop_is_empty_not_an_error(tmp_path) -> None:
    """``output()`` flushed the log that ``stop()`` had closed: ValueError (I/O operation on a
    closed file) instead of the text (none: the log is removed with the server)."""
    import tempfile

    log = tempfile.NamedTemporaryFile(dir=tmp_path, suffix=".log", delete=False)  # noqa: SIM115
    process = subprocess.Popen(
        [sys.executable, "-c", "print('started')"], stdout=log, start_new_session=True
    )
    handle = dash.Dashboard(
        url="http://127.0.0.1:1/", bundle=tmp_path, port=dash.free_port(), process=process, log=log
    )
    dash._track(handle)  # as serve_bundle does
    process.wait()
    assert handle.output() == "started\n"
    handle.stop(timeout=5.0)
    assert handle.output() == ""
    assert not Path(log.name).exists()


def test_an_interrupt_while_waiting_for_the_server_stops_it(monkeypatch, tmp_path) -> None:
    """Interrupting the wait for the app to answer (a notebook's stop button) left the server
    running with no handle to stop it (only the interpreter's exit did)."""
    started = []

    def spawn(folder: Path, port: int, address: str) -> dash.Dashboard:
        log = (tmp_path / "log").open("wb")
        process = subprocess.Popen(["sleep", "300"], stdout=log, start_new_session=True)
        started.append(process)
        return dash.Dashboard(url="u", bundle=folder, port=port, process=process, log=log)

    def interrupted(base: str) -> bool:
        raise KeyboardInterrupt

    monkeypatch.setattr(dash, "_spawn", spawn)
    monkeypatch.setattr(dash, "_healthy", interrupted)
    with pytest.raises(KeyboardInterrupt):
        dash.serve_bundle(tmp_path, timeout=60)
    (process,) = started
    assert process.poll() is not None
    assert not any(handle.process is process for handle in dash._RUNNING)


def test_metrics_that_are_no_names_are_one_line_with_a_notebook_measure(
    monkeypatch, tmp_path
) -> None:
    """With a measure defined in the notebook, ``metrics=5`` raised TypeError ('int' object is
    not iterable) from the check of notebook measures instead of the bundle's one line."""
    import analysis.core.plugins as plugins
    from analysis.core.errors import InputError

    monkeypatch.setenv("RETRIEVAL_DASHBOARD_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(plugins, "measure_sources", lambda: ([], ["cell_measure"]))
    with pytest.raises(InputError) as err:
        analysis.dashboard({"m": {"q": {"d": 1.0}}}, {"q": {"d": 1}}, metrics=5)  # type: ignore[arg-type]
    assert str(err.value) == "--metrics: 5: give metric names (a list or 'hit@1,mrr')"
    assert not dash.adhoc_home().exists()
