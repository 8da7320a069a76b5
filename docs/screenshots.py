"""The README's screenshots, cut from those the browser tests take.

``python -m pytest tests/e2e`` saves full-page screenshots of the app on the demo bundle (and,
with the real benchmark files, on imported bundles) in ``test-output/screenshots/``; this
script keeps the top of the ones the README shows, 1000 px wide, in ``docs/screenshots/``::

    python -m pytest tests/e2e && python docs/screenshots.py
"""

from __future__ import annotations

import sys
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "test-output" / "screenshots"
TARGET = ROOT / "docs" / "screenshots"
WIDTH = 1000
#: README name -> (browser-test screenshot, height kept in the test's pixels)
SHOTS = {
    "home": ("home", 1000),
    "slices": ("slices", 1200),
    "queries": ("queries", 1300),
    "compare": ("compare", 1300),
    "map": ("map", 1300),
    "report": ("report", 1100),
    "analyses": ("analyses-taxonomy-click", 1200),
    "open-data": ("audits-open-data-flickr-import", 1300),
}


def main() -> int:
    TARGET.mkdir(parents=True, exist_ok=True)
    missing = [src for src, _ in SHOTS.values() if not (SOURCE / f"{src}.png").is_file()]
    if missing:
        print(f"error: {SOURCE}: no screenshot {', '.join(missing)} (run the browser tests)")
        return 2
    for name, (src, height) in SHOTS.items():
        with Image.open(SOURCE / f"{src}.png") as image:
            top = image.crop((0, 0, image.width, min(height, image.height)))
            size = (WIDTH, round(top.height * WIDTH / top.width))
            small = top.convert("RGB").resize(size, Image.LANCZOS).quantize(128)
            small.save(TARGET / f"{name}.png", optimize=True)
    print(f"{len(SHOTS)} screenshots in {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
