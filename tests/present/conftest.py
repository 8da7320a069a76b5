"""Fixtures shared by the report's test files."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.present import report

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"


@pytest.fixture(scope="session")
def demo_content() -> report.ReportContent:
    """The report content of the whole demo bundle (A/B by default), built once per test
    process for every file that only reads it."""
    return report.bundle_content(DEMO)
