"""Browser tests: a real Streamlit server on loopback, driven by Playwright with Debian's
chromium (no browser download). Marked ``e2e``; they skip when chromium is absent unless
``REQUIRE_E2E=1`` (set by ``.ci/run``). Screenshots go to ``test-output/screenshots``."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "test-output" / "screenshots"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
READY = "[data-testid=stApp][data-test-script-state=notRunning]"

pytestmark = pytest.mark.e2e


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def server(chromium_path: str) -> Iterator[str]:
    """Base URL of a Streamlit server running app.py on the demo bundle."""
    del chromium_path  # only to skip/fail early when there is no browser
    yield from _serve({})


@pytest.fixture(scope="session")
def wide_server(chromium_path: str, tmp_path_factory) -> Iterator[str]:
    """Base URL of a server on a bundle with a 60-value slice column (MoR metapaths' shape)."""
    del chromium_path
    from tests.app.conftest import make_wide_bundle

    root = make_wide_bundle(tmp_path_factory.mktemp("wide"))
    yield from _serve({"RETRIEVAL_DASHBOARD_DATA_ROOTS": str(root)})


def _serve(extra: dict[str, str]) -> Iterator[str]:
    port = _free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **extra}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            str(ROOT / "app.py"),
            "--server.headless",
            "true",
            "--server.address",
            "127.0.0.1",
            "--server.port",
            str(port),
            "--browser.gatherUsageStats",
            "false",
            "--server.fileWatcherType",
            "none",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            time.sleep(0.3)
    else:
        proc.kill()
        out = proc.stdout.read().decode(errors="replace") if proc.stdout else ""
        pytest.fail(f"streamlit did not start: {out[-2000:]}")
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture(scope="session")
def browser(chromium_path: str):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    p = context.new_page()
    yield p
    context.close()


def wait_ready(page, timeout: float = 60_000) -> None:
    """Wait until the script has finished running (and rendered)."""
    page.wait_for_selector(READY, timeout=timeout)
    page.wait_for_timeout(300)
    page.wait_for_selector(READY, timeout=timeout)


def assert_no_exception(page) -> None:
    errors = page.locator("[data-testid=stException]")
    assert errors.count() == 0, errors.first.inner_text()


def screenshot(page, name: str) -> Path:
    """Save a screenshot of the whole page. Streamlit scrolls inside its own container, so the
    viewport is stretched to the content's height (at most 6000 px) for the shot."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    size = page.viewport_size or {"width": 1400, "height": 1000}
    height = page.evaluate(
        "() => Math.max(...[...document.querySelectorAll("
        "'[data-testid=stMain], [data-testid=stAppViewContainer], section.main')]"
        ".map(e => e.scrollHeight), document.body.scrollHeight)"
    )
    page.set_viewport_size({"width": size["width"], "height": min(max(height, 600), 6000)})
    page.wait_for_timeout(300)
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(size)
    return path
