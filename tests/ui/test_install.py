"""The package is installable: build system, console scripts and the app launcher."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from tests.helpers import run_main
from ui import launch

ROOT = Path(__file__).resolve().parents[2]


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
    nothing of the app's Streamlit side but ``ui._compat``, which creates no Streamlit cache:
    it sets the server's request-head limit) is imported."""
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
    assert out[1:] == ["exit 0", "True True", "['ui._compat']"]


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
    # generous bounds for a busy machine, not speed checks
    with launch.serving(ROOT / "app.py", launch.free_port(), env, timeout=300):
        deadline = time.monotonic() + 240
        while len(list(tmp_path.glob("perquery-*.parquet"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
    assert len(list(tmp_path.glob("perquery-*.parquet"))) >= 2  # per-query table, leaderboard


#: the library's own dependencies and theirs, pinned in the fresh environment to the versions
#: this interpreter has (the versions the rest of the suite tests)
CORE = ("numpy", "pandas", "pyarrow", "scipy", "python-dateutil", "six")
WHEELS_ENV = "RETRIEVAL_DASHBOARD_TEST_WHEELS"
APP_LINE = "pip install 'retrieval-error-dashboard[app]'"


def _wheel_cache() -> Path:
    """Where the dependencies' wheels are kept between runs (``$RETRIEVAL_DASHBOARD_TEST_WHEELS``,
    else ``~/.cache/retrieval-dashboard-test-wheels``): the first run downloads them, later
    runs install without the network."""
    folder = Path(
        os.environ.get(WHEELS_ENV) or Path.home() / ".cache" / "retrieval-dashboard-test-wheels"
    )
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _pip(python: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    """This interpreter's pip acting on the environment of ``python`` (which has no pip of its
    own: a venv without pip is made in a second, and no bytecode is compiled)."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "--disable-pip-version-check",
            *map(str, args),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def _fresh_environment(folder: Path) -> Path:
    """A venv (no system site packages) with the project's wheel and its dependencies only;
    returns its ``bin`` folder."""
    from importlib.metadata import version

    from tests.helpers import build_wheel

    wheel = build_wheel(folder)
    venv = folder / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300
    )
    python = venv / "bin" / "python"
    pins = folder / "pins.txt"
    pins.write_text("".join(f"{name}=={version(name)}\n" for name in CORE))
    cache = _wheel_cache()
    install = (
        "install",
        "-q",
        "--no-compile",
        "--no-index",
        "--find-links",
        cache,
        "-c",
        pins,
        wheel,
    )
    done = _pip(python, *install)
    if done.returncode != 0:  # a wheel is not in the cache yet: fetch them (only then)
        fetched = _pip(python, "download", "-q", "--only-binary", ":all:", "-d", cache, "-r", pins)
        assert fetched.returncode == 0, fetched.stderr[-2000:]
        done = _pip(python, *install)
    assert done.returncode == 0, done.stderr[-2000:]
    return venv / "bin"


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> Path:
    """The ``bin`` folder of a fresh environment holding the library alone."""
    return _fresh_environment(tmp_path_factory.mktemp("fresh"))


def _run(cwd: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=300, check=False
    )


DEMO = ROOT / "data" / "demo" / "stark-mag"
GIVEN = ("--run", DEMO / "runs" / "bm25.parquet", "--qrels", DEMO / "qrels.parquet")


def test_the_library_alone_installs_with_its_four_dependencies(fresh) -> None:
    listed = _pip(fresh / "python", "list", "--format=freeze").stdout
    names = {line.split("==")[0].lower().replace("_", "-") for line in listed.split()}
    assert names - {"tzdata"} == {*CORE, "retrieval-error-dashboard"}
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert [d.split(">=")[0] for d in meta["dependencies"]] == [
        "numpy",
        "pandas",
        "pyarrow",
        "scipy",
    ]
    assert set(meta["optional-dependencies"]) == {"app", "geo", "scale", "export", "all"}


def test_evaluate_and_bundle_work_without_the_extras(fresh, tmp_path) -> None:
    done = _run(
        tmp_path, fresh / "retrieval-analysis", "evaluate", *GIVEN, "--out", tmp_path / "pq.csv"
    )
    assert done.returncode == 0, done.stderr
    here = run_main("evaluate", *GIVEN)  # this environment's CLI, in this process
    assert here.returncode == 0, here.stderr
    assert done.stdout == here.stdout  # the same means as in this environment
    assert "hit@1        0.4048  420" in done.stdout
    made = _run(tmp_path, fresh / "retrieval-analysis", "bundle", *GIVEN, "--out", tmp_path / "b")
    assert made.returncode == 0, made.stderr
    assert (tmp_path / "b" / "bundle.toml").is_file()


def test_a_missing_extra_is_one_line_naming_it(fresh, tmp_path) -> None:
    def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
        return _run(tmp_path, fresh / "retrieval-analysis", *args)

    app = _run(tmp_path, fresh / "retrieval-dashboard")
    assert app.returncode == 2
    assert app.stderr == f"error: the app needs Streamlit, which is not installed: {APP_LINE}\n"
    report = cli("report", "--bundle", ROOT / "data" / "demo", "--out", tmp_path / "r.html")
    assert report.returncode == 2
    assert report.stderr == f"error: plotly is not installed: {APP_LINE}\n"
    duck = cli("evaluate", *GIVEN, "--engine", "duckdb", "--out", tmp_path / "d.csv")
    assert duck.returncode == 2
    assert duck.stderr == f"error: duckdb is not installed: {APP_LINE.replace('app', 'scale')}\n"
    code = (
        "import analysis\n"
        "try:\n"
        "    analysis.dashboard({'m': {'q': {'d': 1.0}}}, {'q': {'d': 1}})\n"
        "except ImportError as e:\n"
        "    print(e)\n"
    )
    shown = _run(tmp_path, fresh / "python", "-c", code)
    assert shown.stdout == f"the dashboard needs Streamlit: {APP_LINE}\n"
