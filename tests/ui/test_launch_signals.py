"""Stopping the app: SIGTERM or Ctrl-C's SIGINT to ``python -m ui.launch`` stops the whole
process tree (the launcher and the Streamlit server it started) and frees the port.

The tree is read from ``/proc`` (Linux) while the server answers; after the signal every one of
those processes must be gone (not merely orphaned) and the port must take a new listener.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ui import launch
from ui.serve import healthy

ROOT = Path(__file__).resolve().parents[2]
START_S = 240  # a loaded machine starts Streamlit slowly: a limit, not an expectation
STOP_S = 120

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


def _parent(pid: int) -> int | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(text.rsplit(")", 1)[1].split()[1])  # the field after the state


def _alive(pid: int) -> bool:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return text.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has exited


def _tree(root: int) -> set[int]:
    """``root`` and every process descending from it."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            parent = _parent(int(entry.name))
            if parent is not None:
                parents[int(entry.name)] = parent
    found = {root}
    grew = True
    while grew:
        more = {pid for pid, parent in parents.items() if parent in found} - found
        grew = bool(more)
        found |= more
    return found


def _wait_until(condition, limit: float, what: str) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"{what} within {limit} s")
        time.sleep(0.2)


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as a new server would
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGINT"])
def test_a_signal_to_the_launcher_stops_the_whole_tree_and_frees_the_port(
    signame: str, tmp_path: Path
) -> None:
    port = launch.free_port()
    env = {
        **os.environ,
        "RETRIEVAL_DASHBOARD_WARM_UP": "0",
        "RETRIEVAL_DASHBOARD_NOTES_DIR": str(tmp_path / "notes"),
        "PYTHONPATH": str(ROOT),  # the launcher runs from another folder
    }
    with (tmp_path / "log.txt").open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "ui.launch", "--server.port", str(port), *launch.QUIET],
            cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            url = f"http://127.0.0.1:{port}"
            _wait_until(lambda: healthy(url) or proc.poll() is not None, START_S, "no server")
            assert proc.poll() is None, (tmp_path / "log.txt").read_text()
            tree = _tree(proc.pid)
            assert len(tree) >= 2, tree  # the launcher and the server
            proc.send_signal(getattr(signal, signame))
            proc.wait(timeout=STOP_S)
        finally:
            if proc.poll() is None:
                for pid in _tree(proc.pid):
                    os.kill(pid, signal.SIGKILL)
                proc.wait()
    try:
        _wait_until(lambda: not any(_alive(pid) for pid in tree), STOP_S, "processes left")
    finally:  # a failing launcher leaves its server behind: stop it here, by its own PID
        for pid in [pid for pid in tree if _alive(pid)]:
            os.kill(pid, signal.SIGKILL)
    _wait_until(lambda: _port_free(port), STOP_S, f"port {port} still taken")


def test_the_launcher_returns_the_signal_exit_code_of_a_killed_child(tmp_path: Path) -> None:
    script = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
    code = launch.run_forwarding([sys.executable, "-c", script], cwd=tmp_path, env=os.environ)
    assert code == 128 + signal.SIGKILL
