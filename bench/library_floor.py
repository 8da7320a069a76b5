"""Benchmark: what Streamlit, plotly and pydeck alone cost a click, against the clicks' floor.

The click benchmark (``clicks.py``) compares the app's clicks with a trivial app's (a selectbox
and a line of text). This script measures, in the same browser and in one run, apps written
here that use no code of this project, so the project's targets can be read against what the
libraries themselves cost on this machine:

* ``text``: the trivial app (the floor);
* ``one chart``: the selectbox and one plotly bar chart of 10 bars, redrawn on each choice;
* ``page``: what a dashboard page holds: a heading, a 50-bar chart, a 420-point scatter and a
  histogram side by side, and a 50 x 6 table (``st.dataframe``), redrawn on each choice;
* ``link to page``: a two-page app (``st.navigation``, its links drawn with
  ``st.sidebar.page_link`` as the app draws its own); the sidebar link from a text page to the
  ``page`` above and back, timed on the way there (each run of the chart page follows a run of
  the other page, as a person's visit of a page after another);
* ``one map``: the selectbox (in the sidebar) and one pydeck map of 200 points (a
  ``ScatterplotLayer``, no basemap, as the app's maps are offline), redrawn on each choice;
  timed until the map has drawn (:mod:`_browser`);
* ``link to map``: the link, as in ``link to page``, to a page drawing one map of the five
  layer kinds the app's query map draws (paths, columns, arcs, points, text), 200 points.

Each app runs on its own server; the click benchmark's browser (Debian's chromium, headless,
with its flags) opens it, and every action is timed from the click to the end of the rerun
it caused, painted (:mod:`_browser`). Two rounds over the apps; printed per app: median and
p90 of its actions against the floor's median, and the browser's CPU seconds per action.

Usage::

    python bench/library_floor.py [--clicks 12] [--rounds 2]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _browser import Timing, open_page, page_link, pick_option, timed, watch  # noqa: E402
from clicks import CHROMIUM, summary  # noqa: E402  (the click benchmark's browser and statistics)

from ui.launch import BROWSER_ARGS, free_port, serving  # noqa: E402

OPTIONS = ["alpha", "beta", "gamma", "delta"]
#: the selectbox, and ``i``: the index of the choice (each choice draws other numbers)
CHOICE = (
    f'choice = st.selectbox("Choice", {OPTIONS!r}, key="choice")\ni = {OPTIONS!r}.index(choice)\n'
)
TEXT = "import streamlit as st\n" + CHOICE + 'st.write(f"Selected: {choice}")\n'
ONE_CHART = (
    "import streamlit as st\nimport plotly.graph_objects as go\n" + CHOICE
    + "bars = go.Bar(x=[f'm{j}' for j in range(10)], y=[(7 * j + i) % 10 for j in range(10)])\n"
    + 'st.plotly_chart(go.Figure(bars), key="chart")\n'
)  # fmt: skip
PAGE_BODY = """rng = np.random.default_rng(i)
st.subheader("Mean per slice")
st.plotly_chart(go.Figure(go.Bar(x=[f"slice {j}" for j in range(50)], y=rng.random(50))),
                key="bars")
left, right = st.columns(2)
left.plotly_chart(go.Figure(go.Scatter(x=rng.random(420), y=rng.random(420), mode="markers")),
                  key="scatter")
right.plotly_chart(go.Figure(go.Histogram(x=rng.random(420))), key="histogram")
st.dataframe(pd.DataFrame(rng.random((50, 6)), columns=list("abcdef")), key="table")
"""
PAGE_IMPORTS = "import numpy as np\nimport pandas as pd\nimport plotly.graph_objects as go\n"
PAGE = "import streamlit as st\n" + PAGE_IMPORTS + CHOICE + PAGE_BODY
ONE_MAP_BODY = """points = [{"lon": 120.1 + 0.001 * ((7 * j + i) % 200), "lat": 30.2 + 0.001 * j}
          for j in range(200)]
layer = pdk.Layer("ScatterplotLayer", points, get_position=["lon", "lat"], get_radius=30,
                  get_fill_color=[0, 114, 178])
view = pdk.ViewState(longitude=120.2, latitude=30.3, zoom=11)
st.pydeck_chart(pdk.Deck(layers=[layer], initial_view_state=view, map_provider=None), key="map")
"""
#: a map of the layer kinds the app's query map draws: points, columns, arcs, paths and text
MAP_PAGE_BODY = """points = [{"lon": 120.1 + 0.001 * ((7 * j + i) % 200), "lat": 30.2 + 0.001 * j,
           "n": 1 + j % 5, "name": f"POI {j}"} for j in range(200)]
origin = [120.2, 30.3]
layers = [
    pdk.Layer("PathLayer", [{"path": [[120.0, 30.1], [120.4, 30.1], [120.4, 30.5]]}],
              get_path="path", get_width=20, get_color=[150, 150, 150]),
    pdk.Layer("ColumnLayer", points[::10], get_position=["lon", "lat"], get_elevation="n",
              elevation_scale=50, radius=40, get_fill_color=[120, 120, 120]),
    pdk.Layer("ArcLayer", points[:10], get_source_position=origin,
              get_target_position=["lon", "lat"], get_width=2),
    pdk.Layer("ScatterplotLayer", points, get_position=["lon", "lat"], get_radius=30,
              get_fill_color=[0, 114, 178], pickable=True),
    pdk.Layer("TextLayer", points[:20], get_position=["lon", "lat"], get_text="name",
              get_size=12),
]
view = pdk.ViewState(longitude=120.2, latitude=30.3, zoom=11)
st.pydeck_chart(pdk.Deck(layers=layers, initial_view_state=view, map_provider=None), key="map")
"""
SIDEBAR_CHOICE = CHOICE.replace("st.selectbox", "st.sidebar.selectbox")  # the list off the map
ONE_MAP = "import streamlit as st\nimport pydeck as pdk\n" + SIDEBAR_CHOICE + ONE_MAP_BODY


def two_pages(imports: str, choice: str, body: str) -> str:
    """An app of two pages (``st.navigation``, links drawn with ``st.sidebar.page_link`` as the
    app draws its own): "Start", a line of text, and "Charts", ``choice`` and ``body``."""
    indented = (choice + body).replace("\n", "\n    ").rstrip()
    return (
        "import streamlit as st\n" + imports
        + "def start():\n    st.write('Start')\n\n"
        + "def charts():\n    " + indented + "\n\n"
        + 'pages = [st.Page(start, title="Start"), st.Page(charts, title="Charts")]\n'
        + 'chosen = st.navigation(pages, position="hidden")\n'
        + "for p in pages:\n    st.sidebar.page_link(p)\n"
        + "chosen.run()\n"
    )  # fmt: skip


APPS = {
    "text": TEXT,
    "one chart": ONE_CHART,
    "page": PAGE,
    "link to page": two_pages(PAGE_IMPORTS, CHOICE, PAGE_BODY),
    "one map": ONE_MAP,
    "link to map": two_pages("import pydeck as pdk\n", SIDEBAR_CHOICE, MAP_PAGE_BODY),
}


def measure(browser, script: Path, name: str, clicks: int) -> list[Timing]:
    """Open the app and time ``clicks`` actions: choices of the selectbox, or for a two-page
    app the link to the chart page (the link back to the text page is not timed)."""
    with serving(script, free_port(), preload=False) as url:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        watch(page)
        open_page(page, url)
        out = []
        for i in range(clicks):
            if name.startswith("link to"):
                out.append(timed(page, page_link(page, "Charts")))
                timed(page, page_link(page, "Start"))
            else:
                out.append(timed(page, pick_option(page, "", "Choice", i)))
        page.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clicks", type=int, default=12, help="timed actions per app and round")
    parser.add_argument("--rounds", type=int, default=2, help="rounds over the apps")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    found: dict[str, list[Timing]] = {name: [] for name in APPS}
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=list(BROWSER_ARGS))
        for _ in range(args.rounds):
            for name, text in APPS.items():
                script = Path(tmp) / f"{name.replace(' ', '_')}.py"
                script.write_text(text)
                found[name] += measure(browser, script, name, args.clicks)
        browser.close()
    floor = statistics.median(t.seconds for t in found["text"])
    print(f"floor: median of {len(found['text'])} clicks of the text app {floor:.3f} s")
    print(f"{'app':<14} {'median':>13} {'p90':>13} {'browser CPU':>12}")
    for name, times in found.items():
        med, p90, _ = summary([t.seconds for t in times])
        cpu = statistics.median(t.browser_cpu for t in times)
        print(f"{name:<14} {med:6.3f} ({med / floor:4.2f}x) {p90:6.3f} ({p90 / floor:4.2f}x) "
              f"{cpu:10.2f} s")  # fmt: skip


if __name__ == "__main__":
    main()
