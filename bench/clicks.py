"""Benchmark: what a person waits for in a real browser, against Streamlit's floor.

Starts Streamlit servers on loopback: a trivial app written by this script (a selectbox and a
line of text: the fastest a Streamlit click can be on this machine, the *floor*) and this
project's app on each bundle: the demo, STaRK-Prime's human queries imported from the real files
(the real ada-002 run and a perturbed copy as a second model), GeoGLUE imported with its three
baselines (``import geoglue --baselines``) and, with ``--big``, a generated 10k-query x 3-model
bundle. Playwright drives Debian's chromium; every action is timed from the click to the end
of the rerun it caused, painted (:mod:`_browser`).

Per bundle, on a server started with an empty disk cache:

* *home ready*: the home page's first request right after the server answers its health check
  (and again after a restart of the server, the disk cache then warm);
* *visits*: one fresh browser session goes over every page twice, each time following the
  page's sidebar link, changing the page's main control and then the sidebar Metric; the first
  round holds every page's first visit. A person looks at what a click brought before the next
  one: ``--think`` seconds (default 2) pass between the end of an action and the next click
  (time the browser may use for work that no one waits for, such as loading chart code ahead).
  The visits start once the server's warm-up is over (``--no-wait``: at once); they begin with
  the session's opening of the home page (a page load, printed on its own beside the trivial
  app's page ready; ``--rounds 0``: only that). Printed per page and action (first and repeat
  visit): the time, its server part (until ``script_finished``) and paint part, the CPU
  seconds the server and the browser used, the bytes received; then median, p90 and slowest
  against the floor of the clicks (links, controls, Metric), of the clicks with the home
  open, of the first visits and of every link;
* with ``--repeat N`` (N > 0): the earlier scenarios, N clicks each on one control (sidebar
  Metric and Model A on Home, Slices' column, a row of the Queries list).

The floor is measured before and after the apps; every ratio is against the median of both
floors' clicks (the load of a shared machine changes during a run). Targets (the project's):
median <= 2x floor, p90 <= 3x floor, no action over 1.5 s, home ready <= 2 s after the server
is up. Children run with compiled bytecode, as an installed copy does (:mod:`_bytecode`).

Usage::

    python bench/clicks.py [--bundles demo prime geoglue] [--big] [--rounds 2] [--repeat 0]
                           [--app-root DIR ...] [--port PORT]

The real bundles need ``../shared/real`` beside the project (skipped, with a message, without
it). ``--app-root`` measures other checkouts of the app one after the other against one floor.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _browser import (  # noqa: E402
    Timing,
    click_row,
    open_page,
    page_link,
    pick_option,
    pick_radio,
    pick_segment,
    present,
    timed,
    watch,
)
from _bundles import REAL, make_big_bundle, make_geoglue_bundle, make_prime_bundle  # noqa: E402
from _bytecode import user_bytecode  # noqa: E402

from ui.launch import BROWSER_ARGS, free_port, serving  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
TRIVIAL_APP = """import streamlit as st

choice = st.selectbox("Choice", ["alpha", "beta", "gamma", "delta"], key="choice")
st.write(f"Selected: {choice}")
"""
SIDE, MAIN = "[data-testid=stSidebar]", "[data-testid=stMain]"
VIEWPORT = {"width": 1400, "height": 1000}


def _select(label: str) -> Callable:
    return lambda page, i: pick_option(page, MAIN, label, i)


#: page label -> (what its main control is, the action choosing its i-th other value)
PAGES: dict[str, tuple[str, Callable]] = {
    "Home": ("Baseline", _select("Baseline")),
    "Slices": ("Slice by", _select("Slice by")),
    "Queries": ("a row of the list", lambda page, i: click_row(page, "failures", i % 3)),
    "Compare": ("per-slice Slice by", _select("Slice by")),
    "Map": ("Query", _select("Query")),
    "Report": ("Section", lambda page, i: pick_radio(page, MAIN, "Section", i)),
    "Analyses": ("Counts by slice", _select("Counts by slice")),
    "Open data": ("Folder", _select("Folder")),
    "Every model": ("Show", lambda page, i: pick_segment(page, MAIN, "Show", i)),
}
#: the page's control is on the page (a Map of a dataset without coordinates has no Query)
CONTROL_SHOWN = {
    "Queries": ".st-key-failures [data-testid=stDataFrame]",
    "Report": "[data-testid=stRadio]",
    "Every model": "[data-testid=stButtonGroup]",
}


def _has_control(page, label: str, control: str) -> bool:
    selector = CONTROL_SHOWN.get(label)
    if selector is not None:
        return present(page, selector)
    boxes = page.locator(f"{MAIN} [data-testid=stSelectbox]").filter(
        has=page.get_by_text(control.removeprefix("per-slice "), exact=True)
    )
    return boxes.count() > 0


def visits(browser, url: str, rounds: int, think: float) -> dict[tuple[str, str, int], Timing]:
    """One fresh session: ``rounds`` times over every page (link, main control, sidebar
    Metric), ``think`` seconds between an action's end and the next click (a person looks at
    the page). Returns {(page, action, round): timing}."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    watch(page)
    out: dict[tuple[str, str, int], Timing] = {}
    out[("Home", "open", 0)] = open_page(page, url)

    def act(key: tuple[str, str, int], make: Callable[[], Callable[[], None]]) -> None:
        page.wait_for_timeout(think * 1000)
        out[key] = timed(page, make())

    for r in range(rounds):
        for label, (control, action) in PAGES.items():
            act((label, "link", r), lambda label=label: page_link(page, label))
            if _has_control(page, label, control):
                act((label, "control", r), lambda action=action, r=r: action(page, r))
            act((label, "metric", r), lambda r=r: pick_option(page, SIDE, "Metric", r))
    context.close()
    return out


def scenarios(browser, url: str, repeat: int) -> dict[str, list[Timing]]:
    """The earlier scenarios: ``repeat`` clicks on one control each."""
    page = browser.new_page(viewport=VIEWPORT)
    watch(page)
    out: dict[str, list[Timing]] = {}
    for label in ("Metric", "Model A"):
        open_page(page, url)
        out[f"home: sidebar {label}"] = [
            timed(page, pick_option(page, SIDE, label, i)) for i in range(repeat)
        ]
    open_page(page, f"{url}/Slices")
    out["slices: slice column"] = [timed(page, _select("Slice by")(page, i)) for i in range(repeat)]
    open_page(page, f"{url}/Queries")
    out["queries: select a row"] = [
        timed(page, click_row(page, "failures", i % 3)) for i in range(repeat)
    ]
    page.close()
    return out


def floor_clicks(browser, port: int, repeat: int) -> tuple[float, list[Timing]]:
    """(page ready seconds, clicks) of the trivial app."""
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "trivial.py"
        script.write_text(TRIVIAL_APP)
        with serving(script, port or free_port(), preload=False) as url:  # Streamlit's own
            page = browser.new_page(viewport=VIEWPORT)
            watch(page)
            ready = open_page(page, url).seconds
            times = [timed(page, pick_option(page, "", "Choice", i)) for i in range(repeat)]
            page.close()
    return ready, times


def wait_warm_up(log: Path, since: float, timeout: float = 900.0) -> float | None:
    """Seconds from ``since`` until the server's log says its warm-up is over (``None``: the
    warm-up is off, or did not end within ``timeout``)."""
    if os.environ.get("RETRIEVAL_DASHBOARD_WARM_UP") == "0":
        return None
    while time.perf_counter() - since < timeout:
        if "warm-up: " in log.read_text(errors="replace"):
            return time.perf_counter() - since
        time.sleep(0.2)
    return None


def measure_bundle(browser, app: Path, env: dict[str, str], args, log: Path) -> dict:
    """Home ready on an empty disk cache (the first request once the server answers), the
    warm-up's end, the visits (after it), the scenarios, home ready after a restart."""
    found: dict = {}
    with serving(app, args.port or free_port(), env, log=log) as url:
        up = time.perf_counter()
        page = browser.new_page(viewport=VIEWPORT)
        watch(page)
        found["ready"] = open_page(page, url).seconds
        page.close()
        found["warm"] = wait_warm_up(log, up) if args.after_warm_up else None
        found["visits"] = visits(browser, url, args.rounds, args.think)
        found["scenarios"] = scenarios(browser, url, args.repeat) if args.repeat else {}
    with serving(app, args.port or free_port(), env) as url:  # a restart: the disk cache is warm
        page = browser.new_page(viewport=VIEWPORT)
        watch(page)
        found["again"] = open_page(page, url).seconds
        page.close()
    return found


def bundles(names: list[str], big: int, work: Path) -> list[tuple[str, dict[str, str]]]:
    """(name, environment) of each bundle to measure, the data roots written under ``work``."""
    out: list[tuple[str, dict[str, str]]] = []
    for name in names:
        root = work / "roots" / name
        if name == "demo":
            out.append((name, {}))
            continue
        if not REAL.is_dir():
            print(f"skipping {name}: no real files at {REAL}", flush=True)
            continue
        t = time.perf_counter()
        if name == "prime":
            make_prime_bundle(root / "prime", work / "sources")
        else:
            make_geoglue_bundle(root / "geoglue")
        print(f"imported {name} in {time.perf_counter() - t:.1f} s", flush=True)
        out.append((name, {"RETRIEVAL_DASHBOARD_DATA_ROOTS": str(root)}))
    if big:
        root = work / "roots" / "big"
        make_big_bundle(root / "bench", big)
        out.append((f"{big} queries x 3", {"RETRIEVAL_DASHBOARD_DATA_ROOTS": str(root)}))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundles", nargs="+", default=["demo", "prime", "geoglue"],
                        choices=["demo", "prime", "geoglue"])  # fmt: skip
    parser.add_argument("--big", type=int, nargs="?", const=10_000, default=0,
                        help="also a generated bundle of N queries (default 10000)")  # fmt: skip
    parser.add_argument("--rounds", type=int, default=2, help="rounds over every page")
    parser.add_argument("--think", type=float, default=2.0, help="seconds between the end of "
                        "an action and the next click (default 2)")  # fmt: skip
    parser.add_argument("--repeat", type=int, default=0, help="clicks per earlier scenario")
    parser.add_argument("--floor", type=int, default=10, help="clicks of the trivial app")
    parser.add_argument("--no-wait", dest="after_warm_up", action="store_false",
                        help="visit at once, without waiting for the server's warm-up")  # fmt: skip
    parser.add_argument("--app-root", type=Path, nargs="+", default=[ROOT],
                        help="folder(s) with app.py, measured one after the other")  # fmt: skip
    parser.add_argument("--port", type=int, default=0, help="port of every server (default: "
                        "a free port for each)")  # fmt: skip
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    apps = [root.resolve() / "app.py" for root in args.app_root]
    tmp = tempfile.TemporaryDirectory()
    work = Path(tmp.name)
    user_bytecode(work, tuple(app.parent for app in apps))
    print(f"load average {_load()} on {os.cpu_count()} cores", flush=True)
    chosen = bundles(args.bundles, args.big, work)
    results = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=list(BROWSER_ARGS))
        floors = [floor_clicks(browser, args.port, args.floor)]
        for a, app in enumerate(apps):
            for b, (name, env) in enumerate(chosen):
                print(f"measuring {app} on {name} (load average {_load()})", flush=True)
                cache = {"RETRIEVAL_DASHBOARD_CACHE_DIR": str(work / f"cache-{a}-{b}"),
                         "RETRIEVAL_DASHBOARD_NOTES_DIR": str(work / f"notes-{a}-{b}")}  # fmt: skip
                log = work / f"server-{a}-{b}.log"
                results.append((app, name, measure_bundle(browser, app, env | cache, args, log)))
        floors.append(floor_clicks(browser, args.port, args.floor))
        browser.close()
    tmp.cleanup()
    print(f"load average {_load()} at the end")
    _print(floors, results, args.rounds)


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def summary(times: list[float]) -> tuple[float, float, float]:
    """Median, 90th percentile (numpy's, interpolated) and maximum of ``times``."""
    arr = np.asarray(times)
    return float(np.median(arr)), float(np.percentile(arr, 90)), float(arr.max())


def _line(name: str, timings: list[Timing], floor: float) -> str:
    med, p90, worst = summary([t.seconds for t in timings])
    ok = med <= 2 * floor and p90 <= 3 * floor and worst <= 1.5
    return (f"{name:<30} n={len(timings):<3} median {med:5.2f} s  p90 {p90:5.2f} s  slowest "
            f"{worst:5.2f} s  median/floor {med / floor:4.2f}  p90/floor {p90 / floor:4.2f}  "
            f"{'ok' if ok else 'MISSES TARGET'}")  # fmt: skip


def _cell(t: Timing | None) -> str:
    if t is None:
        return f"{'-':>30}"
    return (f"{t.seconds:5.2f} ({t.server:4.2f}+{t.paint:4.2f}) "
            f"{t.server_cpu:4.2f}/{t.browser_cpu:4.2f} {t.nbytes / 1024:5.0f}k")  # fmt: skip


def _table(seen: dict, rounds: int) -> None:
    """Per page and action of each round: seconds, server + paint, CPU seconds, bytes."""
    print("per action: seconds (until script_finished + paint), CPU seconds of the server /"
          " of the browser, kilobytes received; r1 = first visit")  # fmt: skip
    head = "".join(f"{f'{a} r{r + 1}':>32}" for r in range(rounds)
                   for a in ("link", "control", "metric"))  # fmt: skip
    print(f"{'page':<10}{head}")
    for label in PAGES:
        cells = "".join(f"  {_cell(seen.get((label, a, r)))}" for r in range(rounds)
                        for a in ("link", "control", "metric"))  # fmt: skip
        print(f"{label:<10}{cells}")


def _print(floors, results, rounds: int) -> None:
    """The tables: every ratio against the median of the floor clicks before and after."""
    floor_times = [t.seconds for _, times in floors for t in times]
    floor = statistics.median(floor_times)
    ready = f"{floors[0][0]:.2f} s / {floors[1][0]:.2f} s"
    print(f"\nfloor: median of {len(floor_times)} trivial-app clicks (before and after) "
          f"{floor:.3f} s; trivial app page ready {ready}")  # fmt: skip
    for app, name, found in results:
        print(f"\n[{name}] {app}")
        print(f"home ready after server up: {found['ready']:.2f} s (empty disk cache), "
              f"{found['again']:.2f} s after a restart (target <= 2 s)")  # fmt: skip
        if found["warm"] is not None:
            print(f"warm-up over {found['warm']:.1f} s after the server was up; visits after it")
        seen = found["visits"]
        if rounds:
            _table(seen, rounds)
        print(f"fresh session's home open: {_cell(seen[('Home', 'open', 0)]).strip()} "
              f"(a page load: the trivial app's page ready {ready})")  # fmt: skip
        groups = {
            "clicks": [t for (_, a, _), t in seen.items() if a != "open"],
            "clicks and the home open": list(seen.values()),
            "first visits (links of r1)": [t for (_, a, r), t in seen.items()
                                           if a == "link" and r == 0],
            "links": [t for (_, a, _), t in seen.items() if a == "link"],
        }  # fmt: skip
        for title, timings in groups.items():
            if timings:
                print(_line(title, timings, floor))
        for scenario, timings in found["scenarios"].items():
            print(_line(scenario, timings, floor))


if __name__ == "__main__":
    main()
