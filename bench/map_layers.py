"""What a map costs the browser, layer kind by layer kind: the Map page's query map of the real
GeoGLUE bundle, drawn alone, whole and with layers left out.

The GeoGLUE bundle is written by ``import geoglue --baselines`` from the shared real files
(``_bundles.make_geoglue_bundle``); the Map page (AppTest) gives the map it sends on its first
visit (the default query, models A and B). A trivial Streamlit app then draws that map's JSON
with only some of its layers, and a fresh page of the benchmark's browser (``BROWSER_ARGS``)
loads each variant in turn, ``--rounds`` times: the time from the navigation to the map drawn
and shown (``_browser.open_page``: the page ready, then the frame after the map's last draw),
and the browser's CPU seconds. The floor is the same app without a map.

Without a graphics card (``--disable-gpu``) chromium draws WebGL in software (SwiftShader),
where each kind of layer links its own shader programs on every visit: what a layer kind costs
here is what it adds to the Map page's first paint on such a machine.

    python bench/map_layers.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _browser import open_page, watch
from _bundles import REAL, make_geoglue_bundle

from tests.conftest import CHROMIUM
from ui.launch import BROWSER_ARGS, free_port, serving

ROOT = Path(__file__).resolve().parents[1]
VIEWPORT = {"width": 1400, "height": 900}

#: variant -> the layer id prefixes it keeps (``None``: every layer; empty: no map at all)
VARIANTS: dict[str, tuple[str, ...] | None] = {
    "no map (the floor)": (),
    "points (query, gold, top k)": ("query", "gold", "model_"),
    "points + arcs": ("query", "gold", "model_", "arcs_"),
    "points + stack columns": ("query", "gold", "model_", "stacks"),
    "points + arcs + stack columns": ("query", "gold", "model_", "arcs_", "stacks"),
    "the whole map (+ district paths and labels)": None,
}

APP = '''
import json
import pydeck as pdk
import streamlit as st

class Raw(pdk.Deck):
    """A deck whose JSON is given as it is."""
    def __init__(self, text):
        super().__init__()
        self.text = text
    def to_json(self):
        return self.text

spec = json.loads(open(MAP_JSON, encoding="utf-8").read())
keep = st.query_params.get("keep")
st.title("map")
if keep != "":
    if keep is not None:
        wanted = tuple(keep.split(","))
        spec["layers"] = [l for l in spec["layers"] if l["id"].startswith(wanted)]
    st.pydeck_chart(Raw(json.dumps(spec)), height=520, key="map")
'''


def page_map(root: Path) -> tuple[str, list[tuple[str, str, int]]]:
    """The JSON of the map the Map page draws on its first visit of the bundle under ``root``,
    and its layers (id, type, rows)."""
    from streamlit.testing.v1 import AppTest

    from analysis.io.bundle import read_manifest

    os.environ["RETRIEVAL_DASHBOARD_DATA_ROOTS"] = str(root)
    bundle = next(root.rglob("bundle.toml")).parent
    dataset = next(iter(read_manifest(bundle).datasets))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.query_params["datasets"] = dataset
    at.run()
    at.switch_page("pages/4_Map.py")
    at.run()
    text = at.get("deck_gl_json_chart")[-1].proto.json
    layers = [
        (lay["id"], lay["@@type"], len(lay.get("data") or [])) for lay in json.loads(text)["layers"]
    ]
    return text, layers


def measure(url: str, rounds: int) -> dict[str, list[tuple[float, float]]]:
    """(seconds until drawn, browser CPU seconds) of each variant, ``rounds`` times, the
    variants taking turns."""
    from urllib.parse import quote

    from playwright.sync_api import sync_playwright

    found: dict[str, list[tuple[float, float]]] = {v: [] for v in VARIANTS}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=list(BROWSER_ARGS))
        page = browser.new_page(viewport=VIEWPORT)
        watch(page)
        open_page(page, f"{url}/?keep=")  # the app's code loaded once before the first timing
        for _ in range(rounds):
            for variant, keep in VARIANTS.items():
                page.goto("about:blank")
                query = "" if keep is None else f"?keep={quote(','.join(keep))}"
                t = open_page(page, f"{url}/{query}")
                found[variant].append((t.seconds, t.browser_cpu))
        browser.close()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if not REAL.is_dir():
        raise SystemExit(f"error: no real files at {REAL}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        make_geoglue_bundle(work / "roots" / "geoglue")
        text, layers = page_map(work / "roots")
        (work / "map.json").write_text(text, encoding="utf-8")
        app = work / "app.py"
        app.write_text(f"MAP_JSON = {str(work / 'map.json')!r}\n" + APP, encoding="utf-8")
        with serving(app, free_port(), preload=False) as url:
            found = measure(url, args.rounds)
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end")
    print(f"the Map page's map: {len(text) / 1024:.0f} kB, layers " + ", ".join(
        f"{i} ({t}, {n} rows)" for i, t, n in layers))  # fmt: skip
    floor = statistics.median(s for s, _ in found["no map (the floor)"])
    print(f"{'variant':<46} {'drawn, median':>14} {'- floor':>8} {'browser CPU':>12}  all (s)")
    for variant, runs in found.items():
        med = statistics.median(s for s, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        print(f"{variant:<46} {med:12.2f} s {med - floor:6.2f} s {cpu:10.2f} s  "
              f"{' '.join(f'{s:.2f}' for s, _ in runs)}")  # fmt: skip


if __name__ == "__main__":
    main()
