"""Tests for analysis.present.figures: figure exports (HTML offline; PNG/SVG through kaleido +
chromium)."""

from __future__ import annotations

import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from analysis.present import figures
from analysis.present.escape import plotly_text
from analysis.present.figures import ImageExportError, figure_html, figure_image

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-output" / "exports"


class _Attrs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.urls += [v or "" for k, v in attrs if k in ("src", "href")]


def _figure() -> go.Figure:
    fig = go.Figure(go.Bar(x=[plotly_text("<b>m</b>"), "b"], y=[0.4, 0.7], name="model"))
    fig.update_layout(title="test chart", width=640, height=400)
    return fig


def test_figure_html_is_offline_and_has_no_plotly_link():
    text = figure_html(_figure(), title="<chart>")
    parser = _Attrs()
    parser.feed(text)
    assert parser.urls == []  # no src/href at all: plotly.js is inline
    assert "<title>&lt;chart&gt;</title>" in text
    assert '"displaylogo": false' in text
    assert len(text) > 1_000_000  # plotly.js itself is inside


def test_figure_image_png_and_svg(chromium_path):
    """The PNG export of one chart, with the chromium that CI installs (kept as an artifact)."""
    del chromium_path
    fig = _figure()
    png = figure_image(fig, "png")
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert (width, height) == (1600, 800)  # at least 800 x 400 at scale 2
    svg = figure_image(fig, "svg", scale=1)
    assert b"<svg" in svg[:200]
    assert b"test chart" in svg
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "chart.png").write_bytes(png)


def test_png_export_with_chinese_labels_is_2x_in_the_palette_and_cjk_font(chromium_path):
    """A report figure with Chinese names: PNG at 2x (>= 1600 px wide) in the app's palette;
    the SVG names the CJK font stack. The PNG is kept in test-output/exports for a look."""
    del chromium_path
    from analysis.present.palette import model_colours
    from analysis.present.report.figures import leaderboard_figure

    board = pd.DataFrame(
        {
            "dataset": ["北京", "北京", "上海", "上海"],
            "model": ["稠密检索", "BM25 基线", "稠密检索", "BM25 基线"],
            "metric": "recall@10",
            "n": 100,
            "mean": [0.61, 0.42, 0.55, 0.47],
            "ci_low": [0.55, 0.36, 0.49, 0.41],
            "ci_high": [0.67, 0.48, 0.61, 0.53],
        }
    )
    chosen = {"北京": "recall@10", "上海": "recall@10"}
    colours = model_colours(["稠密检索", "BM25 基线"])
    fig = leaderboard_figure(board, ["北京", "上海"], chosen, colours)
    assert fig.data[0].marker.color == colours["稠密检索"]
    png = figure_image(fig, "png")
    width = int.from_bytes(png[16:20], "big")
    assert width >= 1600
    svg = figure_image(fig, "svg").decode("utf-8")
    assert "Noto Sans CJK SC" in svg
    assert "稠密检索" in svg
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "leaderboard-cjk.png").write_bytes(png)


def test_figure_image_without_browser_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("BROWSER_PATH", str(tmp_path / "no-such-chrome"))
    assert figures.browser_path() is None
    with pytest.raises(ImageExportError, match="needs Chrome or Chromium") as info:
        figure_image(_figure(), "png")
    assert "\n" not in str(info.value)


def test_figure_image_with_a_broken_browser_fails_fast():
    """A 'browser' that exits at once: a one-line error instead of kaleido waiting forever
    (in a subprocess: the failure is remembered by the process)."""
    code = (
        "import plotly.graph_objects as go\n"
        "from analysis.present.figures import figure_image, ImageExportError\n"
        "for _ in range(2):\n"
        "    try:\n"
        "        figure_image(go.Figure(go.Bar(x=[1], y=[1])), 'png', timeout=50)\n"
        "    except ImageExportError as exc:\n"
        "        print('ERROR', exc)\n"
    )
    env = {**os.environ, "BROWSER_PATH": "/bin/true"}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("ERROR")]
    assert lines == ["ERROR the browser used for image export (/bin/true) failed to start or "
                     "stopped; restart the app"] * 2  # fmt: skip


def test_browser_path_honours_browser_path(monkeypatch, tmp_path):
    fake = tmp_path / "chrome"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("BROWSER_PATH", str(fake))
    assert figures.browser_path() == str(fake)


def test_figure_image_rejects_unknown_format():
    with pytest.raises(ValueError, match="png"):
        figure_image(_figure(), "jpg")


def test_sequential_colours_are_plotlys_colours_on_the_scale():
    """Written-out cell colours are those plotly computes for the numbers on the sequential
    scale from 0 to 1 (values outside clipped), so a chart looks as it did with the numbers."""
    from plotly.colors import sample_colorscale

    from analysis.present.palette import SEQUENTIAL_SCALE, sequential_colours

    values = [0.0, 1.0, 0.5, 1 / 3, *np.random.default_rng(3).random(500)]
    assert sequential_colours(values) == sample_colorscale(SEQUENTIAL_SCALE, values)
    assert sequential_colours([-0.5, 7.0]) == sequential_colours([0.0, 1.0])
    assert sequential_colours([]) == []
    assert sequential_colours([float("nan"), 1.0]) == ["rgba(0, 0, 0, 0)", "rgb(253, 231, 37)"]
