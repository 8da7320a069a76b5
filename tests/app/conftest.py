"""AppTest fixtures: clear Streamlit's caches between tests and open pages of the app."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from tests.conftest import LAST_TEST
from ui import visitors

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
TIMEOUT = 60


@pytest.fixture(autouse=True, scope="session")
def _components_scanned_once() -> Iterator[None]:
    """Each new AppTest's first run looks for installed Streamlit components by reading the
    metadata of every installed distribution (about 0.1 s, and this folder makes some 400
    AppTests). The installed packages do not change during a run, so the scan is done once
    per process and its result given to every AppTest."""
    from streamlit.components.v2 import manifest_scanner

    scan = manifest_scanner.scan_component_manifests
    found = scan()
    manifest_scanner.scan_component_manifests = lambda max_workers=None: list(found)
    yield
    manifest_scanner.scan_component_manifests = scan


@pytest.fixture(autouse=True, scope="session")
def _scripts_compiled_once() -> Iterator[None]:
    """Each new AppTest compiles the page scripts it runs again (Streamlit's script cache lives
    in the test's own runner; a server compiles each page once): about a tenth of this folder's
    CPU time. A script is compiled once per process here, and again when its file changes (its
    path, size and modification time are the key, with Streamlit's magic setting, which changes
    the code), as a server does on its first run of it."""
    from streamlit import config
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache

    compile_script = ScriptCache.get_bytecode
    compiled: dict[tuple, object] = {}

    def get_bytecode(self: ScriptCache, script_path: str) -> object:
        path = Path(script_path).absolute()
        stat = path.stat()
        key = (str(path), stat.st_size, stat.st_mtime_ns,
               config.get_option("runner.magicEnabled"))  # fmt: skip
        if key not in compiled:
            compiled[key] = compile_script(self, script_path)
        return compiled[key]

    ScriptCache.get_bytecode = get_bytecode
    yield
    ScriptCache.get_bytecode = compile_script


@pytest.fixture(autouse=True)
def _no_work_ahead(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pages run as on a server started with ``RETRIEVAL_DASHBOARD_WARM_UP=0``: they queue no
    prefetch, the values a visitor would likely ask for next, which no test waits for and which
    would only compete with its own runs for the CPU. A test of the warm-up, which a server runs
    with its prefetches, sets it back."""
    monkeypatch.setenv(visitors.WARM_UP_ENV, "0")


@pytest.fixture(autouse=True)
def _notes_in_tmp(tmp_path, monkeypatch):
    """Annotations written by a page go to a temporary notes folder, not the user's."""
    monkeypatch.setenv("RETRIEVAL_DASHBOARD_NOTES_DIR", str(tmp_path / "notes"))


@pytest.fixture
def roots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A data root in tmp_path, the only one the app sees."""
    root = tmp_path / "roots"
    root.mkdir()
    monkeypatch.setenv("RETRIEVAL_DASHBOARD_DATA_ROOTS", str(root))
    return root


#: (data root, node id) of the last test that shared Streamlit's caches
_previous_shared: list[tuple[object, str] | None] = [None]


def keeps_caches(previous: tuple[object, str] | None, shared: object, last: str | None) -> bool:
    """Whether a test sharing the data root ``shared`` (``None``: it shares nothing) keeps
    Streamlit's caches: only when ``previous`` (root, node id) says the test that shared them
    last shared the same root and was the last test of this process (``last``)."""
    return shared is not None and previous == (shared, last)


@pytest.fixture(autouse=True)
def _clear_caches(request: pytest.FixtureRequest, _notes_in_tmp, _private_table_cache):
    """Streamlit's caches are cleared before and after each test, with one exception: tests
    that only read one data root built once for their module (a fixture named ``shared_*``
    returning that root, set up after the per-test notes and cache folders so its own
    folders win) keep the tables the test run just before them in this process computed from
    the same root (not when any other test ran in between: one outside this folder may run
    pages on other roots and leave its values behind). Those tables are keyed by the files'
    stamps, so they are the tables a fresh run computes."""
    names = [n for n in request.fixturenames if n.startswith("shared_")]
    shared = request.getfixturevalue(names[0]) if names else None
    if not keeps_caches(_previous_shared[0], shared, request.session.stash.get(LAST_TEST, None)):
        st.cache_data.clear()
        st.cache_resource.clear()
    _previous_shared[0] = (shared, request.node.nodeid) if shared is not None else None
    yield
    if shared is None:
        st.cache_data.clear()
        st.cache_resource.clear()


@pytest.fixture
def shared_demo_root(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The demo bundle's data root (the app's default, ``data/``) for a test that only reads
    it: such tests share Streamlit's caches (see :func:`_clear_caches`)."""
    return share_root(monkeypatch, ROOT / "data")


def share_root(monkeypatch: pytest.MonkeyPatch, root: Path, **env: Path) -> Path:
    """Point the app at the data ``root`` (and ``RETRIEVAL_DASHBOARD_<KEY>`` at each of
    ``env``: ``NOTES_DIR``, ``CACHE_DIR``) for a ``shared_*`` fixture; returns ``root``."""
    monkeypatch.setenv("RETRIEVAL_DASHBOARD_DATA_ROOTS", str(root))
    for key, value in env.items():
        monkeypatch.setenv(f"RETRIEVAL_DASHBOARD_{key}", str(value))
    return root


def open_page(page: str | None = None, **params: str) -> AppTest:
    """Run ``app.py`` (or switch to ``pages/<page>``) with URL query params; returns the AppTest."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    if page is not None:
        at.switch_page(f"pages/{page}")
        at.run()
    return at


def open_expander(at: AppTest, key: str) -> AppTest:
    """Open the keyed expander ``key`` (one whose content is drawn only while it is open) as a
    click on its label does: set its state and rerun."""
    at.session_state[key] = True
    return at.run()


def export_button(at: AppTest, figure: str):
    """The "Render PNG, SVG and caption" button of the paper export of ``figure`` (the
    control's key), its expander opened first."""
    return open_expander(at, f"paper_open_{figure}").button(key=f"paper_{figure}")


def open_directly(page: str | None = None, **params: str) -> AppTest:
    """Run ``pages/<page>`` (``None``: ``app.py``) as the first page of a new session, as a link
    to it opens it: one script run, where :func:`open_page` runs the home page first."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for key, value in params.items():
        at.query_params[key] = value
    if page is not None:
        at.switch_page(f"pages/{page}")
    at.run()
    return at


def leaderboards(at: AppTest) -> pd.DataFrame | None:
    """The home page's leaderboard tables (``st.html``) as rows ``dataset, model, n, cells``
    (``cells``: the row's HTML); ``None`` when the page shows none."""
    rows = []
    for element in at.get("html"):
        body = element.proto.body
        for table in re.findall(r'<table class="leaderboard" data-dataset="([^"]*)">(.*?)</table>',
                                body, flags=re.S):  # fmt: skip
            dataset, inner = table
            for model, cells in re.findall(r'<tr data-model="([^"]*)">(.*?)</tr>', inner, re.S):
                n = int(re.findall(r"<td>(\d+)</td>", cells)[0])
                rows.append({"dataset": html.unescape(dataset), "model": html.unescape(model),
                             "n": n, "cells": cells})  # fmt: skip
    return pd.DataFrame(rows) if rows else None


def no_exception(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def make_wide_bundle(folder: Path, n_values: int = 60) -> Path:
    """A one-dataset bundle shaped like STaRK-MAG with MoR metapaths: a ``metapath`` column of
    ``n_values`` long values (sizes from 30 queries down to 2), queries, qrels and two TREC runs.
    Returns the data root to put in ``RETRIEVAL_DASHBOARD_DATA_ROOTS``."""
    rng = np.random.default_rng(7)
    ds = folder / "wide" / "mag"
    (ds / "runs").mkdir(parents=True)
    sizes = np.maximum(2, np.linspace(30, 2, n_values).astype(int))
    paths = np.repeat(
        [f"paper -> author -> institution -> paper #{i:02d} (cites; written by)" for i in
         range(n_values)], sizes
    )  # fmt: skip
    n_queries = len(paths)
    lines = ["query_id,text,metapath"]
    lines += [f"q{i},papers about topic {i % 17} by authors of group {i % 5},{p}"
              for i, p in enumerate(paths)]  # fmt: skip
    (ds / "queries.csv").write_text("\n".join(lines) + "\n")
    (ds / "qrels.txt").write_text("".join(f"q{i} 0 d{i % 300} 1\n" for i in range(n_queries)))
    for model, hit in (("mor", 0.7), ("bm25", 0.4)):
        out = []
        for i in range(n_queries):
            docs = [f"d{(i * 7 + j) % 300}" for j in range(20)]
            if rng.random() < hit:
                docs[int(rng.integers(0, 5))] = f"d{i % 300}"
            out += [f"q{i} Q0 {d} {r + 1} {20 - r} {model}\n" for r, d in enumerate(docs)]
        (ds / "runs" / f"{model}.run").write_text("".join(out))
    (folder / "wide" / "bundle.toml").write_text(
        'name = "wide"\n[datasets.mag]\nfamily = "stark"\nqueries = "mag/queries.csv"\n'
        'qrels = "mag/qrels.txt"\nruns = "mag/runs"\n'
        'metrics = ["hit@1", "hit@5", "recall@20", "mrr"]\n'
    )
    return folder
