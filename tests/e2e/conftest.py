"""Browser tests: a real Streamlit server on loopback, driven by Playwright with Debian's
chromium (no browser download). Marked ``e2e``; they skip when chromium is absent unless
``REQUIRE_E2E=1`` (set by ``.ci/run``). Screenshots go to ``test-output/screenshots``.

Every wait is for a state (the script's ``notRunning`` state, a heading, a URL, a drawn canvas),
never a sleep sized for an idle machine, and every wait may take up to :data:`WAIT_MS` (240 s;
``RETRIEVAL_DASHBOARD_E2E_WAIT_S`` changes it): every browser context, navigation and
``expect`` uses it, so the suite passes on a busy machine (the load test runs five sessions
beside a CPU hog it starts) and only a page that never gets there fails.

Servers: :func:`server` (the demo bundle, as the README's command serves it) lives for the
whole run, since most files use it (one server for every xdist worker). Every other server
belongs to one test file (the 60-value bundle, the real-data bundles, the audit, paper,
8-model and hostile bundles, the annotation restarts): it is module-scoped
(:func:`serve_for_module`) or lives within one test, so it stops when its file ends instead of
running beside the rest of the session. These servers run without the app's background
warm-up of every page (:data:`NO_WARM_UP`): its visits of every page of every dataset and
metric (about 30 CPU seconds on the demo) would only compete with the tests' own clicks, and a
page a test opens computes what it needs, as on a server whose warm-up has not reached it yet.
The same setting leaves out the pages' prefetches (what a visitor will likely ask next,
computed behind every visitor's work) and the home page's loading of chart code ahead in the
browser (about a CPU second per home page load: plotly's and, with a spatial dataset, deck.gl's
code compiled in idle time for a person's next click, which a test makes at once).
The warm-up is tested by the servers ``tests/e2e/test_warm_up.py`` starts, and it runs in
those the notebook and command-line forms start in ``tests/e2e/test_notebook.py``, as a user's
server has it (stopping them stops the warm-up too; the notebook's checks that the browser loads
plotly's code ahead).

Browser: one chromium per xdist worker and one context in it (:func:`_worker_context`) with
one tab, which each test's :func:`page` navigates anew (a Streamlit session of its own at each
page load), as one person opens link after link in the tab they have: its cache keeps the app's
scripts, and the code chromium compiled from them, from one file to the next. Tests that need
a browser of their own (offline, two people, five sessions at once) open their own context."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ui.launch import READY

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "test-output" / "screenshots"
#: the longest any single wait may take (ms): a limit for a busy machine, not an expectation
WAIT_MS = int(float(os.environ.get("RETRIEVAL_DASHBOARD_E2E_WAIT_S", "240")) * 1000)
SERVER_START_S = WAIT_MS / 1000
#: the environment that turns the server's warm-up off (see the module docstring)
NO_WARM_UP = {"RETRIEVAL_DASHBOARD_WARM_UP": "0"}
#: a tab's size unless a test sets its own
VIEWPORT = {"width": 1400, "height": 1000}

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="session")
def server(chromium_path: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL of a Streamlit server running app.py on the demo bundle: one for the whole
    run, shared by the xdist workers (:func:`_shared_server`)."""
    del chromium_path  # only to skip/fail early when there is no browser
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        yield from _serve(NO_WARM_UP)
    else:  # the workers' temporary folders share the run's folder
        yield from _shared_server(tmp_path_factory.getbasetemp().parent)


def _shared_server(folder: Path) -> Iterator[str]:
    """The demo server (:func:`_serve`) of one pytest run with xdist workers: the first
    worker to need it starts it and writes its URL in ``folder``, the others use that one, as
    several people use one server (so its warm-up, and every page a test computes, is done
    once, not once per worker). Every worker that uses it leaves its process id in ``folder``
    until its session ends; the worker that started it stops it when no other user is left
    (finished, or died)."""
    import fcntl
    import json

    from ui.serve import healthy

    users = folder / "demo-server-users"
    users.mkdir(exist_ok=True)
    me = users / str(os.getpid())
    state = folder / "demo-server.json"
    started = None
    with (folder / "demo-server.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        url = json.loads(state.read_text())["url"] if state.exists() else None
        if url is None or not healthy(url):  # none yet (or its worker died with it)
            started = _serve(NO_WARM_UP)
            url = next(started)
            state.write_text(json.dumps({"url": url}))
        me.touch()
    try:
        yield url
    finally:
        me.unlink(missing_ok=True)
        if started is not None:
            while any(_alive(int(user.name)) for user in users.iterdir()):
                time.sleep(0.5)
            state.unlink(missing_ok=True)
            started.close()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process of that id: alive
        return True
    return True


@pytest.fixture(scope="module")
def wide_server(chromium_path: str, tmp_path_factory) -> Iterator[str]:
    """Base URL of a server on a bundle with a 60-value slice column (MoR metapaths' shape)."""
    del chromium_path
    from tests.app.conftest import make_wide_bundle

    root = make_wide_bundle(tmp_path_factory.mktemp("wide"))
    yield from serve_for_module({"RETRIEVAL_DASHBOARD_DATA_ROOTS": str(root)})


@pytest.fixture(scope="module")
def real_roots(real_dir: Path, tmp_path_factory) -> Path:
    """A data root with bundles written by the importers from the shared real files: ``geo``
    (``import geoglue --baselines``: 1,000 GeoGLUE queries over 5,000 Hangzhou POIs with names
    and text, three baseline runs) and ``mag`` (``import stark`` of STaRK-MAG: the synthesized
    queries with their splits and 52 MoR metapaths on the test split, the human queries with the
    real ada-002 run). The shared files hold no run on MAG's synthesized queries, so the STaRK
    folder given to the importer adds one in STaRK's own ``eval_results`` format: a seeded
    synthetic ranker (:func:`synthetic_stark_run`)."""
    from analysis.io.importers import import_geoglue, import_stark

    roots = tmp_path_factory.mktemp("real-roots")
    import_geoglue(
        real_dir / "geo" / "geoglue_clean_subset", roots / "geo", name="geoglue", baselines=True
    )
    source = _stark_folder(real_dir / "stark" / "mag", roots.parent / "mag-source")
    import_stark(source, roots / "mag", name="mag")
    return roots


@pytest.fixture(scope="module")
def real_server(chromium_path: str, real_roots: Path) -> Iterator[str]:
    """Base URL of a server on :func:`real_roots`."""
    del chromium_path
    yield from serve_for_module({"RETRIEVAL_DASHBOARD_DATA_ROOTS": str(real_roots)})


def _stark_folder(real: Path, folder: Path) -> Path:
    """A STaRK domain folder: links to the real files (a copy of the ada-002 run), plus
    ``runs/synthetic-ranker``."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("stark_qa.csv", "stark_qa_human_generated_eval.csv", "split", "metapaths",
                 "query_groups"):  # fmt: skip
        (folder / name).symlink_to(real / name)
    shutil.copytree(real / "runs" / "ada-002", folder / "runs" / "ada-002")  # links: not read
    out = folder / "runs" / "synthetic-ranker" / "eval_results_test.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    synthetic_stark_run(real, out)
    return folder


def synthetic_stark_run(real: Path, out: Path, depth: int = 100, seed: int = 0) -> None:
    """STaRK ``eval_results_test.csv`` (``idx,query_id,pred_rank``) for the test split of the
    domain folder ``real``: per query ``depth`` node ids, its first gold at a rank drawn from a
    geometric distribution whose success rate depends on the query's metapath (so slices
    differ), the other ids random. Seeded: the same file every time."""
    import json

    import numpy as np

    from analysis.io.stark import read_split_index, read_stark_qa

    rng = np.random.default_rng(seed)
    queries, qrels = read_stark_qa(real / "stark_qa.csv")
    test = set(read_split_index(real / "split" / "test.index")["query_id"].astype(str))
    paths = {str(r["q_id"]): json.dumps(r["rg"].get("Metapath"))
             for r in json.loads((real / "metapaths" / "test.json").read_text())}  # fmt: skip
    rates = {p: 0.05 + 0.9 * (i % 7) / 6 for i, p in enumerate(sorted(set(paths.values())))}
    lines = ["idx,query_id,pred_rank"]
    gold_of = qrels.loc[qrels["relevance"] > 0].groupby("query_id")["doc_id"].agg(list)
    for idx, qid in enumerate(q for q in queries["query_id"].astype(str) if q in test):
        gold = [int(d) for d in gold_of.get(qid, [])]
        drawn = rng.choice(1_900_000, depth + len(gold), replace=False)
        ranked = [int(d) for d in drawn if int(d) not in gold][:depth]
        if gold:
            rank = int(rng.geometric(rates.get(paths.get(qid, ""), 0.3)))
            if rank <= depth:
                ranked[rank - 1] = gold[0]
        lines.append(f'{idx},{qid},"{json.dumps(ranked)}"')
    out.write_text("\n".join(lines) + "\n")


def serve_for_module(extra: dict[str, str]) -> Iterator[str]:
    """The base URL of a server (as :func:`_serve`) for one test file's module-scoped fixture:
    without the warm-up."""
    yield from _serve({**NO_WARM_UP, **extra})


def _serve(extra: dict[str, str]) -> Iterator[str]:
    """The base URL of a server on app.py with ``extra`` added to the environment, for as long
    as the generator is open. The server's table cache and notes go to a temporary folder of
    its own unless ``extra`` names them (never the user's folders, never another server's)."""
    from ui.launch import free_port, serving

    with tempfile.TemporaryDirectory(prefix="e2e-server-") as own:
        env = {"RETRIEVAL_DASHBOARD_CACHE_DIR": str(Path(own) / "cache"),
               "RETRIEVAL_DASHBOARD_NOTES_DIR": str(Path(own) / "notes"), **extra}  # fmt: skip
        try:
            with serving(ROOT / "app.py", free_port(), env, timeout=SERVER_START_S) as url:
                yield url
        except RuntimeError as exc:
            pytest.fail(str(exc))


class _PatientBrowser:
    """The Playwright browser, whose every new context waits up to :data:`WAIT_MS`."""

    def __init__(self, browser) -> None:
        self._browser = browser

    def new_context(self, **kwargs):
        context = self._browser.new_context(**kwargs)
        context.set_default_timeout(WAIT_MS)
        context.set_default_navigation_timeout(WAIT_MS)
        return context

    def __getattr__(self, name: str):
        return getattr(self._browser, name)


@pytest.fixture(scope="session")
def browser(chromium):
    """The process's chromium (``chromium`` in tests/conftest.py), every wait up to
    :data:`WAIT_MS`."""
    from playwright.sync_api import expect

    expect.set_options(timeout=WAIT_MS)
    return _PatientBrowser(chromium)


@pytest.fixture(scope="session")
def _worker_context(browser):
    """The browser context of every :func:`page` of this process (see the module docstring)."""
    context = browser.new_context(viewport=VIEWPORT)
    yield context
    context.close()


class _WorkerTab:
    """The worker's one tab in :func:`_worker_context`, opened on first use and again only if a
    test closed it."""

    def __init__(self, context) -> None:
        self.context = context
        self._tab = None

    def get(self):
        if self._tab is None or self._tab.is_closed():
            self._tab = self.context.new_page()
        return self._tab

    def reset(self) -> None:
        """After a test: the other tabs it opened closed, its routes removed, the viewport
        :data:`VIEWPORT` again, and the tab on ``about:blank`` (which ends its Streamlit
        session, as closing it would)."""
        from playwright.sync_api import Error

        tab = self.get()
        for other in self.context.pages:
            if other is not tab:
                other.close()
        try:
            tab.unroute_all(behavior="ignoreErrors")
            tab.set_viewport_size(VIEWPORT)
            tab.goto("about:blank")
        except Error:  # a tab that no longer answers: the next test gets a new one
            tab.close()


@pytest.fixture(scope="session")
def _worker_tab(_worker_context) -> _WorkerTab:
    return _WorkerTab(_worker_context)


@pytest.fixture
def page(_worker_tab: _WorkerTab):
    """The worker's tab (:data:`VIEWPORT`), which the test navigates: a new Streamlit session
    at each page load, in a tab whose renderer already runs and has compiled the app's scripts
    (a new tab would start a renderer and compile them again: bench/README.md, *One tab per
    worker instead of a new tab per test*). Reset after the test (:meth:`_WorkerTab.reset`)."""
    yield _worker_tab.get()
    _worker_tab.reset()


def wait_ready(page, timeout: float = WAIT_MS) -> None:
    """Wait until the script has finished running (and rendered): the ready state, a pause in
    which a rerun the render triggers would start, and the ready state again."""
    page.wait_for_selector(READY, timeout=timeout)
    page.wait_for_timeout(300)
    page.wait_for_selector(READY, timeout=timeout)


#: a page's part whose job still runs (its progress bar, in a container ``pending_<name>``)
PENDING = "[data-testid=stApp] [class*='st-key-pending_']"


def wait_jobs_done(page, timeout: float = WAIT_MS) -> None:
    """Wait until the page shows no job's progress bar and the script has finished the rerun
    that a finished job starts (the run may be ready while a part still waits for its job)."""
    wait_ready(page, timeout=timeout)
    page.wait_for_function(
        f"() => !document.querySelector({PENDING!r}) && !!document.querySelector({READY!r})",
        timeout=timeout,
        polling=100,
    )
    wait_ready(page, timeout=timeout)


def wait_charts_drawn(page, timeout: float = WAIT_MS) -> None:
    """Wait until every element of the page has been drawn: no element is still the skeleton
    Streamlit shows while it loads the element's code (plotly's, the data grid's ...), and every
    plotly chart has drawn its SVG (which plotly does after the script run)."""
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=stApp] [data-testid=stSkeleton]') && "
        "[...document.querySelectorAll('[data-testid=stPlotlyChart]')]"
        ".every(el => el.querySelector('.main-svg'))",
        timeout=timeout,
        polling=100,
    )


#: the share of a deck.gl canvas's pixels drawn, ``None`` without a WebGL context to read, or
#: ``'lost'`` when chromium's GPU process restarted and took the context with it
_DRAWN = """c => { const g = c.getContext('webgl2') || c.getContext('webgl');
                   if (!g) return null;
                   if (g.isContextLost()) return 'lost';
                   const w = c.width, h = c.height, px = new Uint8Array(4 * w * h);
                   g.readPixels(0, 0, w, h, g.RGBA, g.UNSIGNED_BYTE, px);
                   let n = 0; for (let i = 3; i < px.length; i += 4) if (px[i] > 0) n++;
                   return n / (w * h); }"""


def wait_drawn(canvas, timeout: float = WAIT_MS) -> float | None:
    """Wait until a deck.gl (WebGL) canvas has drawn something; returns the share of pixels
    drawn (``None`` when the canvas has no WebGL context to read).

    When chromium's GPU process restarts (a busy machine: WebGL here is drawn in software), every
    canvas open at the time loses its context for good: deck.gl does not restore it, and the
    canvas stays blank. That is the browser's, not the page's: the page is then loaded again,
    once, and its new canvas must draw; a second loss fails the test."""
    page = canvas.page
    for _ in range(2):
        handle = canvas.element_handle(timeout=timeout)
        page.wait_for_function(
            f"c => {{ const v = ({_DRAWN})(c); return v === null || v === 'lost' || v > 0.001; }}",
            arg=handle, timeout=timeout, polling=250,
        )  # fmt: skip
        drawn = canvas.evaluate(_DRAWN)
        if drawn != "lost":
            return drawn
        page.reload()
        wait_ready(page, timeout=timeout)
        canvas.wait_for(state="visible", timeout=timeout)
        canvas.scroll_into_view_if_needed()
    pytest.fail("the map's WebGL context was lost twice (chromium's GPU process restarted)")


def assert_no_exception(page) -> None:
    errors = page.locator("[data-testid=stException]")
    assert errors.count() == 0, errors.first.inner_text()


def screenshot(page, name: str) -> Path:
    """Save a screenshot of the whole page. Streamlit scrolls inside its own container, so the
    viewport is stretched to the content's height (at most 6000 px) for the shot."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    size = page.viewport_size or VIEWPORT
    height = page.evaluate(
        "() => Math.max(...[...document.querySelectorAll("
        "'[data-testid=stMain], [data-testid=stAppViewContainer], section.main')]"
        ".map(e => e.scrollHeight), document.body.scrollHeight)"
    )
    page.set_viewport_size({"width": size["width"], "height": min(max(height, 600), 6000)})
    page.wait_for_timeout(300)
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(size)
    return path
