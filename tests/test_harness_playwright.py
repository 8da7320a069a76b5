"""The browser tests' harness: one Playwright per test process."""

from __future__ import annotations

from tests.helpers import ROOT

START = "sync_playwright" + "()"


def test_every_browser_starts_from_the_one_session_playwright() -> None:
    """Playwright's sync API cannot start in a thread while another is open there, and the
    browser tests keep theirs open for the session; a module starting its own failed whenever
    xdist gave it a worker that had run a browser test before. So only the session fixture
    ``playwright`` (tests/conftest.py) starts one, and every browser is launched from it."""
    starts = sorted(
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "tests").rglob("*.py")
        if START in path.read_text(encoding="utf-8")
    )
    assert starts == ["tests/conftest.py"]
