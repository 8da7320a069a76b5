"""Colours and fonts shared by the app, the figures and every export.

* Models: Okabe & Ito's colour-blind-safe categorical palette (Okabe & Ito 2008, "Color
  Universal Design"), without black; model ``i`` (in the order given) gets ``MODEL_COLOURS[i %
  8]``. No model colour is red, so no model reads as "bad".
* Deltas (A − B) and wins/losses: a diverging blue–orange pair (blue = A better, orange = B
  better, grey = tie), distinguishable under the common colour-vision deficiencies;
  :data:`DIVERGING_SCALE` is the matching continuous plotly colour scale (centred at 0).
* Sequential values (heatmaps of a metric): viridis, scaled to the data by the caller.
* Fonts: one stack naming Noto Sans CJK (Debian ``fonts-noto-cjk``) so that Chinese POI names
  render in the browser, in kaleido's PNG/SVG exports and in the offline report.
"""

from __future__ import annotations

from collections.abc import Sequence

#: Okabe–Ito categorical colours (black left out), in their usual order.
MODEL_COLOURS: tuple[str, ...] = (
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#D55E00",  # vermillion
    "#F0E442",  # yellow
    "#999999",  # grey
)

#: A better than B (positive delta), B better than A (negative), tie.
WIN_COLOUR = "#2166AC"
LOSS_COLOUR = "#E08214"
TIE_COLOUR = "#9E9E9E"
SELECTED_COLOUR = "#111111"

#: Continuous diverging scale for deltas, orange (negative) – white (0) – blue (positive).
DIVERGING_SCALE: tuple[tuple[float, str], ...] = (
    (0.0, "#B35806"),
    (0.25, "#F1A340"),
    (0.5, "#F7F7F7"),
    (0.75, "#67A9CF"),
    (1.0, "#2166AC"),
)

#: Sequential scale for a metric's values (scale the range to the data).
SEQUENTIAL_SCALE = "Viridis"

#: Highlight of gold rows in tables (light green works on white and on the dark theme's cells).
GOLD_ROW_CSS = "background-color: rgba(0, 158, 115, 0.18)"

#: Font stack naming a CJK font, for plotly layouts, kaleido exports and the HTML report.
FONT_FAMILY = (
    '"Noto Sans", "Noto Sans CJK SC", "Noto Sans CJK JP", "Source Han Sans SC", '
    '"PingFang SC", "Microsoft YaHei", system-ui, sans-serif'
)


def model_colours(models: Sequence[str]) -> dict[str, str]:
    """``{model: colour}`` in the order given (the i-th model gets the i-th Okabe–Ito colour)."""
    return {m: MODEL_COLOURS[i % len(MODEL_COLOURS)] for i, m in enumerate(models)}
