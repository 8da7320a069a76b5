"""The package is installable: build system, console scripts and the app launcher."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import tomllib
from pathlib import Path

from ui import launch

ROOT = Path(__file__).resolve().parents[1]


def test_pyproject_declares_the_build_and_the_console_scripts() -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["build-system"]["build-backend"] == "setuptools.build_meta"
    assert meta["project"]["scripts"] == {
        "retrieval-analysis": "analysis.cli:console",
        "retrieval-dashboard": "ui.launch:main",
    }
    found = meta["tool"]["setuptools"]["packages"]["find"]["include"]
    assert set(found) == {"analysis*", "demo*", "ui*"}
    shipped = meta["tool"]["setuptools"]["data-files"]
    assert shipped["share/retrieval-dashboard"] == ["app.py"]
    for patterns in shipped.values():
        for pattern in patterns:
            assert list(ROOT.glob(pattern)), pattern


def test_launcher_runs_the_project_app_on_localhost() -> None:
    app = launch.find_app()
    assert app == ROOT / "app.py"
    cmd = launch.command(app, ["--server.port", "8513"])
    assert cmd[:5] == [sys.executable, "-m", "ui.serve", "run", str(app)]
    assert cmd[5:] == ["--server.address", "127.0.0.1", "--server.port", "8513"]


def test_launcher_makes_data_roots_absolute(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(launch.ROOTS_ENV, f"rel{os.pathsep}{tmp_path}")
    env = launch.environment(ROOT / "app.py", tmp_path)
    assert env[launch.ROOTS_ENV] == f"{tmp_path / 'rel'}{os.pathsep}{tmp_path}"
    monkeypatch.delenv(launch.ROOTS_ENV)
    # a source checkout keeps its own data/ (the demo bundle): no root is imposed
    assert launch.ROOTS_ENV not in launch.environment(ROOT / "app.py", tmp_path)
    # an installed copy without data/ beside app.py: ./data of the starting folder
    installed = tmp_path / "share" / "app.py"
    assert launch.environment(installed, tmp_path)[launch.ROOTS_ENV] == str(tmp_path / "data")


def test_the_server_imports_the_library_before_streamlit_starts() -> None:
    """``python -m ui.serve`` is Streamlit's command line, run after the analysis library (and
    nothing of the app's Streamlit side) is imported."""
    code = (
        "import sys\n"
        "from ui import serve\n"
        "try:\n"
        "    serve.main(['--version'])\n"
        "except SystemExit as exc:\n"
        "    print('exit', exc.code)\n"
        "print(all(name in sys.modules for name in serve.PRELOAD), 'pandas' in sys.modules)\n"
        "print(sorted(n for n in sys.modules if n.startswith('ui.') and n != 'ui.serve'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout.splitlines()  # fmt: skip
    assert out[0].startswith("Streamlit, version ")
    assert out[1:] == ["exit 0", "True True", "[]"]


def test_local_url_of_the_server_for_the_warm_up() -> None:
    from ui.serve import _local_url

    assert _local_url("127.0.0.1", 8501, "") == "http://127.0.0.1:8501"
    assert _local_url("0.0.0.0", 8600, "/dash/") == "http://127.0.0.1:8600/dash"
    assert _local_url("::1", 8601, None) == "http://[::1]:8601"
    assert _local_url(None, 8502, None) == "http://127.0.0.1:8502"
    assert _local_url("unix:///tmp/s.sock", 0, None) is None


def test_the_server_computes_its_main_page_before_anyone_visits(tmp_path) -> None:
    """Started as the launcher starts it, and visited by no one, the server runs its main page
    once: the home page's per-query table and leaderboard land in the disk cache."""
    env = {"RETRIEVAL_DASHBOARD_CACHE_DIR": str(tmp_path)}
    with launch.serving(ROOT / "app.py", launch.free_port(), env):
        deadline = time.monotonic() + 120  # a generous bound, not a speed check
        while len(list(tmp_path.glob("perquery-*.parquet"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
    assert len(list(tmp_path.glob("perquery-*.parquet"))) >= 2  # per-query table, leaderboard
