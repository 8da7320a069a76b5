"""Benchmark: click latency as a person feels it, in a real browser, against Streamlit's floor.

Starts two Streamlit servers on loopback: (a) a trivial app written by this script to a
temporary folder (a selectbox and a line of text: the fastest a Streamlit click can be on this
machine, the *floor*) and (b) this project's app, on the demo bundle and then on a generated
10k-query x 3-model bundle. Playwright drives Debian's chromium; each click is timed from the
mouse event to the end of the rerun it caused: the server's ``script_finished`` message on the
app's websocket (Streamlit's ForwardMsg, decoded here), then ``[data-testid=stApp]
[data-test-script-state=notRunning]`` and two animation frames (the new content painted). The
websocket is used because a fast rerun can flip the page's script state to "running" and back
within one React render, so the attribute alone can miss it.

Clicks timed on the app: the sidebar metric and model A (home page), the "Slice by" column
(Slices), a row of the failing-queries table (Queries). Also timed: the home page ready after
the server is up (first request), with an empty disk cache and after a restart, beside the
trivial app's page ready. Printed per scenario: median, p90, slowest, the floor (the trivial
app's median click) and the ratios median/floor and p90/floor.

Targets (the project's): median <= 2x floor, p90 <= 3x floor, no click over 1.5 s, home ready
<= 2 s after the server is up.

Usage::

    python bench/clicks.py [--repeat 10] [--queries 10000] [--app-root DIR ...] [--no-big]
                           [--port PORT]

``--app-root`` runs other checkouts of the app (e.g. an older commit exported with
``git archive``) one after the other against the same floor. The floor is measured before and
after the apps; every ratio is against the median of both floors' clicks (the load of a shared
machine changes during a run). Each app and bundle starts with an empty disk cache of tables
(``RETRIEVAL_DASHBOARD_CACHE_DIR`` in a temporary folder); "home ready" is given for that first
start and for a restart of the server (the cache then warm). Servers are started by
:func:`ui.launch.serving`, as in the browser tests.
Children run with compiled bytecode, as an installed copy does (:mod:`_bytecode`).
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

from _bytecode import user_bytecode  # noqa: E402

from ui.launch import BROWSER_ARGS, READY, free_port, serving  # noqa: E402  (one server start for bench and tests)

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = list(BROWSER_ARGS)
TRIVIAL_APP = """import streamlit as st

choice = st.selectbox("Choice", ["alpha", "beta", "gamma", "delta"], key="choice")
st.write(f"Selected: {choice}")
"""
FRAMES = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"


def make_big_bundle(folder: Path, n_queries: int, n_models: int = 3, seed: int = 0) -> None:
    """One STaRK-shaped dataset: ``n_queries`` queries (text, type, split), 1-20 gold each out of
    20k docs, ``n_models`` TREC runs of 100 docs per query (one with tied integer scores)."""
    rng = np.random.default_rng(seed)
    ds = folder / "big"
    (ds / "runs").mkdir(parents=True)
    words = np.array(["red", "blue", "shoe", "lamp", "river", "paper", "gene", "drug", "cafe"])
    with (ds / "queries.csv").open("w") as f:
        f.write("query_id,text,query_type\n")
        for q in range(n_queries):
            text = " ".join(rng.choice(words, rng.integers(3, 12)))
            f.write(f"q{q},{text},{'human' if q % 10 == 0 else 'synthesized'}\n")
    gold = {}
    with (ds / "qrels.txt").open("w") as f:
        for q in range(n_queries):
            gold[q] = rng.choice(20_000, rng.integers(1, 20), replace=False)
            f.writelines(f"q{q} 0 d{d} 1\n" for d in gold[q])
    for m in range(n_models):
        model, ties = f"model-{'abc'[m % 3]}{m // 3 or ''}", m == 1
        lines = []
        for q in range(n_queries):
            keep = rng.choice(gold[q], min(len(gold[q]), int(rng.integers(0, 4))), replace=False)
            docs = np.unique(np.r_[keep, rng.choice(20_000, 100)])[:100]
            rng.shuffle(docs)
            scores = np.sort(rng.integers(0, 20, len(docs)) if ties else rng.random(len(docs)))
            lines.extend(
                f"q{q} Q0 d{d} {r} {float(s):.6f} {model}\n"
                for r, (d, s) in enumerate(zip(docs, scores[::-1], strict=True), start=1)
            )
        (ds / "runs" / f"{model}.run").write_text("".join(lines))
    (folder / "bundle.toml").write_text(
        'name = "bench"\n[datasets.big]\nfamily = "stark"\n'
        'queries = "big/queries.csv"\nqrels = "big/qrels.txt"\nruns = "big/runs"\n'
        'metrics = ["hit@1", "hit@5", "recall@20", "mrr"]\n'
    )


def open_page(page, url: str) -> float:
    """Load ``url`` and wait for its run to finish and paint; returns the seconds until then.

    The page must be watched (:func:`watch`): it is ready once the server has sent the run's
    ``script_finished`` and the page shows no script running. It is then left 200 ms to
    settle: when another run follows the first within them (the page is not ready, or the
    server sent another ``script_finished``), the page is ready only once that run is painted,
    and the time counts up to then, the settling wait included (the figure can only be too
    high)."""
    done = FINISHED[id(page)]
    before = len(done)
    t = time.perf_counter()
    page.goto(url)
    while len(done) == before:  # the page's run has finished on the server
        if time.perf_counter() - t > 120:
            raise SystemExit(f"error: {url} finished no run within 120 s")
        page.wait_for_timeout(5)
    page.wait_for_selector(READY, timeout=120_000)
    page.evaluate(FRAMES)
    ready = time.perf_counter() - t
    runs = len(done)
    page.wait_for_timeout(200)
    if len(done) != runs or page.locator(READY).count() == 0:
        page.wait_for_selector(READY, timeout=120_000)
        page.evaluate(FRAMES)
        ready = time.perf_counter() - t
    return ready


FINISHED: dict[int, list[float]] = {}
#: Seconds from each click to its script_finished message (server time plus transport).
SERVER: list[float] = []


def watch(page) -> None:
    """Record the arrival time of every ``script_finished`` message the page receives."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    done = FINISHED.setdefault(id(page), [])

    def on_frame(payload: bytes | str) -> None:
        if isinstance(payload, bytes):
            try:
                kind = ForwardMsg.FromString(payload).WhichOneof("type")
            except Exception:
                return
            if kind == "script_finished":
                done.append(time.perf_counter())

    page.on("websocket", lambda ws: ws.on("framereceived", on_frame))


def timed(page, action: Callable[[], None], timeout: float = 60.0) -> float:
    """Seconds from ``action`` (a click) to the end of the rerun it caused, painted."""
    done = FINISHED[id(page)]
    n0 = len(done)
    start = time.perf_counter()
    action()
    while len(done) == n0:
        if time.perf_counter() - start > timeout:
            raise SystemExit("error: a click caused no rerun within the timeout")
        page.wait_for_timeout(5)
    SERVER.append(done[n0] - start)
    page.wait_for_selector(READY, timeout=60_000)
    page.evaluate(FRAMES)
    return time.perf_counter() - start


def pick_option(page, scope: str, label: str, i: int) -> Callable[[], None]:
    """An action choosing another option of the selectbox labelled ``label`` in ``scope``:
    opens the list and clicks option ``i`` modulo its length (the current option skipped)."""
    box = page.locator(f"{scope} [data-testid=stSelectbox]").filter(
        has=page.get_by_text(label, exact=True)
    )
    field = box.first.locator("input[role=combobox]").first
    current = field.input_value()
    field.click()
    options = page.locator("[role=listbox] [role=option]")
    options.first.wait_for(timeout=10_000)
    count = options.count()
    choices = [j for j in range(count) if options.nth(j).inner_text().strip() != current] or [0]
    target = options.nth(choices[i % len(choices)])
    return target.click


def click_row(page, table_key: str, row: int) -> Callable[[], None]:
    """An action ticking the selection checkbox of ``row`` in the dataframe with ``key``."""
    grid = page.locator(f".st-key-{table_key} [data-testid=stDataFrame]")
    grid.wait_for(timeout=30_000)
    box = grid.bounding_box()
    assert box is not None
    x, y = box["x"] + 18, box["y"] + 35 + 35 * row + 17
    return lambda: page.mouse.click(x, y)


def stats(times: list[float]) -> tuple[float, float, float]:
    arr = np.asarray(times)
    return float(np.median(arr)), float(np.percentile(arr, 90)), float(arr.max())


def report(
    name: str, times: list[float], floor: float, server: list[float] | None = None
) -> tuple[float, float, float]:
    med, p90, worst = stats(times)
    until = f"  (finished msg median {np.median(server):.3f} s)" if server else ""
    until += f"  slowest: click {int(np.argmax(times)) + 1} of {len(times)}"
    ok = med <= 2 * floor and p90 <= 3 * floor and worst <= 1.5
    print(
        f"{name:<34} n={len(times):<3} median {med:5.3f} s  p90 {p90:5.3f} s  slowest "
        f"{worst:5.3f} s  median/floor {med / floor:4.2f}  p90/floor {p90 / floor:4.2f}"
        f"  {'ok' if ok else 'MISSES TARGET'}{until}",
        flush=True,
    )
    return med, p90, worst


def floor_clicks(browser, port: int, repeat: int) -> tuple[float, list[float], list[float]]:
    """(page ready seconds, click times, times to script_finished) of the trivial app."""
    SERVER.clear()
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "trivial.py"
        script.write_text(TRIVIAL_APP)
        with serving(script, port or free_port(), preload=False) as url:  # Streamlit's own
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            watch(page)
            ready = open_page(page, url)
            times = [timed(page, pick_option(page, "", "Choice", i)) for i in range(repeat)]
            page.close()
    return ready, times, list(SERVER)


def _scenario(page, actions: Callable[[int], Callable[[], None]], repeat: int):
    """(click times, times to the script_finished message) of ``repeat`` clicks."""
    SERVER.clear()
    times = [timed(page, actions(i)) for i in range(repeat)]
    return times, list(SERVER)


def app_clicks(browser, app: Path, port: int, repeat: int, env: dict[str, str], params: str):
    """Every scenario on one bundle, with an empty disk cache of tables (``env`` names it);
    then a restart of the server. Returns (home ready seconds on the first start, on the
    restart, {scenario: (times, server)})."""
    out: dict[str, tuple[list[float], list[float]]] = {}
    side, main = "[data-testid=stSidebar]", "[data-testid=stMain]"
    with serving(app, port or free_port(), env) as url:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        watch(page)
        ready = open_page(page, f"{url}/{params}")
        for label in ("Metric", "Model A"):
            open_page(page, f"{url}/{params}")
            out[f"home: sidebar {label}"] = _scenario(
                page, lambda i, label=label: pick_option(page, side, label, i), repeat
            )
        open_page(page, f"{url}/Slices{params}")
        out["slices: slice column"] = _scenario(
            page, lambda i: pick_option(page, main, "Slice by", i), repeat
        )
        open_page(page, f"{url}/Queries{params}")
        out["queries: select a row"] = _scenario(
            page, lambda i: click_row(page, "failures", i % 3), repeat
        )
        page.close()
    with serving(app, port or free_port(), env) as url:  # a restart: the disk cache is warm
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        watch(page)
        again = open_page(page, f"{url}/{params}")
        page.close()
    return ready, again, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10, help="clicks per scenario")
    parser.add_argument("--queries", type=int, default=10_000, help="queries of the big bundle")
    parser.add_argument(
        "--app-root", type=Path, nargs="+", default=[ROOT],
        help="folder(s) with app.py; several are measured one after the other against one floor",
    )  # fmt: skip
    parser.add_argument("--no-big", action="store_true", help="skip the 10k-query bundle")
    parser.add_argument(
        "--port", type=int, default=0, help="port of every server, one after the other "
        "(default: a free port for each)",
    )  # fmt: skip
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    apps = [root.resolve() / "app.py" for root in args.app_root]
    tmp = tempfile.TemporaryDirectory()
    user_bytecode(Path(tmp.name), tuple(app.parent for app in apps))
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} on {os.cpu_count()} cores", flush=True)
    results = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        floors = [floor_clicks(browser, args.port, args.repeat)]
        bundles = [("demo", {}, "?")]
        if not args.no_big:
            root = Path(tmp.name) / "roots"
            t = time.perf_counter()
            make_big_bundle(root / "bench", args.queries)
            print(f"generated {args.queries} queries x 3 models in {time.perf_counter() - t:.1f} s")
            bundles.append((f"{args.queries} queries x 3", {"RETRIEVAL_DASHBOARD_DATA_ROOTS":
                                                              str(root)}, "?"))  # fmt: skip
        for a, app in enumerate(apps):
            for b, (name, env, params) in enumerate(bundles):
                print(f"measuring {app} on {name}", flush=True)
                cache = {"RETRIEVAL_DASHBOARD_CACHE_DIR": str(Path(tmp.name) / f"cache-{a}-{b}")}
                found = app_clicks(browser, app, args.port, args.repeat, env | cache, params)
                results.append((app, name, *found))
        floors.append(floor_clicks(browser, args.port, args.repeat))
        browser.close()
    tmp.cleanup()
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} at the end")
    _print(floors, results)


def _print(floors, results) -> None:
    """The tables: every ratio against the median of the floor clicks before and after."""
    floor_times = floors[0][1] + floors[1][1]
    floor = statistics.median(floor_times)
    print(f"floor (median of {len(floor_times)} clicks, before and after): {floor:.3f} s; trivial "
          f"app page ready {floors[0][0]:.2f} s / {floors[1][0]:.2f} s")  # fmt: skip
    for when, (_, times, until) in zip(("before", "after"), floors, strict=True):
        report(f"floor: trivial app selectbox ({when})", times, floor, until)
    for app, name, ready, again, scenarios in results:
        print(f"app {app}")
        print(f"[{name}] home ready after server up: {ready:.2f} s (empty disk cache), "
              f"{again:.2f} s after a restart ({'ok' if again <= 2 else 'MISSES TARGET'} for "
              "<= 2 s)")  # fmt: skip
        every: list[float] = []
        for scenario, (times, until) in scenarios.items():
            report(f"[{name}] {scenario}", times, floor, until)
            every += times
        report(f"[{name}] all clicks", every, floor)


if __name__ == "__main__":
    main()
