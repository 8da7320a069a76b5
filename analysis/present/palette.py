"""Colours and fonts shared by the app, the figures and every export.

* Models: Okabe & Ito's colour-blind-safe categorical palette (Okabe & Ito 2008, "Color
  Universal Design"), without black and grey (grey means "tie" or "not significant" in the
  figures). A model's colour is keyed by its *name*, not its position: the name's BLAKE2b hash
  picks its preferred colour, so ``bm25`` has the same colour on every dataset, page and export.
  Two names of one bundle that prefer the same colour are resolved deterministically
  (:func:`model_colours`: names in sorted order, each takes its preferred colour or the next
  free one), so the colours depend only on the set of model names of the bundle. No model
  colour is red, so no model reads as "bad".
* Deltas (A − B) and wins/losses: a diverging blue–orange pair (blue = A better, orange = B
  better, grey = tie), distinguishable under the common colour-vision deficiencies;
  :data:`DIVERGING_SCALE` is the matching continuous plotly colour scale (centred at 0).
* Sequential values (heatmaps of a metric): viridis, scaled to the data by the caller.
* Fonts: one stack naming Noto Sans CJK (Debian ``fonts-noto-cjk``) so that Chinese POI names
  render in the browser, in kaleido's PNG/SVG exports and in the offline report.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

import numpy as np

#: Okabe–Ito categorical colours (black and grey left out), in their usual order.
MODEL_COLOURS: tuple[str, ...] = (
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#D55E00",  # vermillion
    "#F0E442",  # yellow
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


def sequential_colours(values: Iterable[float]) -> list[str]:
    """``rgb(r, g, b)`` of each value on :data:`SEQUENTIAL_SCALE` from 0 to 1 (values outside
    clipped to it), each channel interpolated linearly between the scale's two nearest stops
    and rounded (half to even): the colour plotly.js draws for that number on a colour axis
    with ``cmin=0, cmax=1``. A missing value (NaN) gets a transparent colour: no cell is drawn.

    Bar cells get these strings rather than the numbers: plotly.js reads each bar's colour for
    its opacity and, for a number, logs a warning with a stack trace per bar, so a grid of
    thousands of cells keeps the browser busy for seconds."""
    from plotly.colors import get_colorscale, hex_to_rgb

    stops = get_colorscale(SEQUENTIAL_SCALE)
    at = np.array([float(s) for s, _ in stops])
    rgb = np.array([hex_to_rgb(c) for _, c in stops], dtype=np.float64)
    x = np.clip(np.asarray(list(values), dtype=np.float64), 0.0, 1.0)
    missing = np.isnan(x)
    channels = np.rint([np.interp(np.where(missing, 0.0, x), at, rgb[:, c]) for c in range(3)])
    return [
        "rgba(0, 0, 0, 0)" if gap else f"rgb({r}, {g}, {b})"
        for gap, (r, g, b) in zip(missing.tolist(), channels.T.astype(int).tolist(), strict=True)
    ]


#: Highlight of gold rows in tables (light green works on white and on the dark theme's cells).
GOLD_ROW_CSS = "background-color: rgba(0, 158, 115, 0.18)"

#: Font stack naming a CJK font, for plotly layouts, kaleido exports and the HTML report.
FONT_FAMILY = (
    '"Noto Sans", "Noto Sans CJK SC", "Noto Sans CJK JP", "Source Han Sans SC", '
    '"PingFang SC", "Microsoft YaHei", system-ui, sans-serif'
)


def preferred_colour(name: str) -> int:
    """Index into :data:`MODEL_COLOURS` preferred by model ``name``: the first 8 bytes of
    BLAKE2b(name, UTF-8) as a big-endian integer, modulo the number of colours (stable across
    processes and machines, unlike Python's ``hash``)."""
    digest = hashlib.blake2b(str(name).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % len(MODEL_COLOURS)


def model_colours(models: Iterable[str], universe: Iterable[str] = ()) -> dict[str, str]:
    """``{model: colour}`` for ``models``, keyed by name (:func:`preferred_colour`).

    The colours are assigned over ``universe | models`` (pass every model name of the bundle as
    ``universe``, so a model keeps its colour on every dataset): the names in sorted order each
    take their preferred colour, or, when an earlier name took it, the next free one in palette
    order. With more names than colours the palette is used again (a second round). The result
    depends only on the set of names, never on their order or on the dataset shown."""
    names = sorted({str(m) for m in universe} | {str(m) for m in models})
    taken: set[int] = set()
    assigned: dict[str, str] = {}
    for name in names:
        if len(taken) == len(MODEL_COLOURS):
            taken.clear()
        slot = preferred_colour(name)
        while slot in taken:
            slot = (slot + 1) % len(MODEL_COLOURS)
        taken.add(slot)
        assigned[name] = MODEL_COLOURS[slot]
    return {str(m): assigned[str(m)] for m in models}
