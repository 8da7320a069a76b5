"""Checks of exported figures: every text of an SVG inside its canvas, measured by chromium.

:func:`text_boxes` opens the SVG in a page of the given Playwright browser and returns the
bounding box (``getBoundingClientRect``, in the SVG's own pixels) of every non-empty ``<text>``
element; :func:`clipped` lists the texts that reach outside the canvas. Used by the unit tests
of :mod:`analysis.present.paper` and by the browser tests of the export buttons.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_MEASURE = """() => {
  const svg = document.querySelector('svg');
  const out = [];
  for (const t of svg.querySelectorAll('text')) {
    const text = (t.textContent || '').trim();
    if (!text) continue;
    const style = getComputedStyle(t);
    const hidden = style.display === 'none' || style.visibility === 'hidden';
    if (hidden || style.opacity === '0') continue;
    const r = t.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    out.push({text, x0: r.left, y0: r.top, x1: r.right, y1: r.bottom,
              transform: t.getAttribute('transform') || ''});
  }
  return {width: svg.width.baseVal.value, height: svg.height.baseVal.value, texts: out};
}"""


@dataclass(frozen=True)
class Box:
    text: str
    x0: float
    y0: float
    x1: float
    y1: float
    transform: str


@dataclass(frozen=True)
class Measured:
    width: float
    height: float
    texts: list[Box]


def text_boxes(browser, svg: bytes | str) -> Measured:
    """The canvas size and every text's box of ``svg`` rendered by ``browser`` (Playwright)."""
    body = svg.decode("utf-8") if isinstance(svg, bytes) else svg
    context = browser.new_context(viewport={"width": 3000, "height": 4000})
    try:
        page = context.new_page()
        page.set_content(
            '<html><body style="margin:0">' + body + "</body></html>", wait_until="load"
        )
        page.evaluate("document.fonts.ready.then(() => true)")
        found = page.evaluate(_MEASURE)
    finally:
        context.close()
    boxes = [Box(**t) for t in found["texts"]]
    return Measured(float(found["width"]), float(found["height"]), boxes)


def clipped(measured: Measured, tolerance: float = 1.0) -> list[Box]:
    """The texts whose box reaches outside the canvas by more than ``tolerance`` px."""
    w, h, t = measured.width, measured.height, tolerance
    return [b for b in measured.texts if b.x0 < -t or b.y0 < -t or b.x1 > w + t or b.y1 > h + t]


def rotated(measured: Measured) -> list[Box]:
    """Texts drawn rotated (a ``rotate(`` in their transform)."""
    return [b for b in measured.texts if re.search(r"rotate\(\s*-?[1-9]", b.transform)]
