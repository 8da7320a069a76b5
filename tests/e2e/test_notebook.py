"""Browser: from a notebook (``analysis.dashboard``) and from the command line
(``python -m ui.launch --run ... --qrels ...``) to the app, with no manifest written: the home
page lists the models with the means ``evaluate`` prints; stopping ends every process."""

from __future__ import annotations

import subprocess
import sys
import time
from collections import namedtuple
from pathlib import Path

import pytest

from analysis.io import load_qrels, load_run
from tests.e2e.conftest import (
    ROOT,
    SERVER_START_S,
    WAIT_MS,
    assert_no_exception,
    screenshot,
    wait_ready,
)
from tests.helpers import run_cli
from tests.io.loaders.ranx_shaped import Run

pytestmark = pytest.mark.e2e

DEMO = ROOT / "data" / "demo" / "stark-mag"
METRICS = ["hit@1", "hit@5", "recall@20", "mrr", "ndcg@10"]  # the default headline metrics
TrecQrel = namedtuple("TrecQrel", "query_id doc_id relevance iteration")


@pytest.fixture(scope="module")
def trec(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("trec")
    out = {}
    for model, name in (("bm25", "bm25"), ("ngram", "char-ngram-tfidf")):
        run = load_run(DEMO / "runs" / f"{name}.parquet")
        out[model] = folder / f"{model}.trec"
        out[model].write_text(
            "".join(
                f"{q} Q0 {d} 1 {s!r} x\n"
                for q, d, s in run[["query_id", "doc_id", "score"]].itertuples(False)
            )
        )
    qrels = load_qrels(DEMO / "qrels.parquet")
    out["qrels"] = folder / "qrels.txt"
    out["qrels"].write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in qrels.itertuples(False)))
    return out


def _evaluate_means(run: Path, qrels: Path) -> dict[str, str]:
    """The means ``python -m analysis evaluate`` prints (4 decimals), by metric."""
    done = run_cli("evaluate", "--run", run, "--qrels", qrels, "--metrics", ",".join(METRICS))
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines()[1 : 1 + len(METRICS)]]
    return {metric: mean for metric, mean, _ in rows}


def _assert_leaderboard(page, trec: dict[str, Path]) -> None:
    """Each model's row shows, in its cells' titles, the means of ``evaluate`` on its files."""
    for model in ("bm25", "ngram"):
        row = page.locator(f'table.leaderboard tr[data-model="{model}"]')
        row.wait_for(timeout=WAIT_MS)
        titles = [c.get_attribute("title") for c in row.locator("td[title]").all()]
        shown = {t.split(" = ")[0]: t.split(" = ")[1].split(",")[0] for t in titles if t}
        assert shown == _evaluate_means(trec[model], trec["qrels"]), model


def test_dashboard_from_python_objects_then_stop(trec, page) -> None:
    import analysis
    from analysis.io.adhoc import AdhocInputs, keyed_adhoc_bundle
    from analysis.present.dashboard import adhoc_home, group_members, port_answers

    pyterrier = load_run(trec["bm25"]).rename(columns={"query_id": "qid", "doc_id": "docno"})
    nested: dict = {}
    for q, d, s in load_run(trec["ngram"]).itertuples(False):
        nested.setdefault(q, {})[d] = s
    qrels = [TrecQrel(q, d, r, "0") for q, d, r in load_qrels(trec["qrels"]).itertuples(False)]
    runs = {"bm25": pyterrier, "ngram": Run(nested, name="ngram")}
    app = analysis.dashboard(runs, qrels, name="notebook")
    try:
        assert app.url.startswith("http://127.0.0.1:")
        assert f'href="{app.url}"' in app._repr_html_()
        page.goto(app.url)
        wait_ready(page)
        assert_no_exception(page)
        _assert_leaderboard(page, trec)
        # a user's server: once the browser is idle, it loads plotly's chart code ahead
        page.wait_for_function(
            "() => performance.getEntriesByType('resource')"
            ".some(e => e.name.includes('/PlotlyChart.'))"
        )
        screenshot(page, "notebook-dashboard")
        same = AdhocInputs(
            runs={"bm25": trec["bm25"], "ngram": trec["ngram"]},
            qrels=trec["qrels"],
            name="notebook",
        )
        assert keyed_adhoc_bundle(same, adhoc_home()) == app.bundle  # same content, one bundle
        assert [p.name for p in adhoc_home().iterdir()] == [app.bundle.name]
    finally:
        group = app.process.pid
        app.stop()
    assert not app.running
    assert not port_answers(app.port)
    assert group_members(group) == []
    app.stop()  # a second time: nothing left to do


def test_command_line_form_opens_the_app_on_the_runs(trec, page, tmp_path) -> None:
    from analysis.present.dashboard import group_members, stop_group
    from ui.launch import free_port, healthy

    port = free_port()
    command = [
        sys.executable,
        "-m",
        "ui.launch",
        "--run",
        f"bm25={trec['bm25']}",
        "--run",
        f"ngram={trec['ngram']}",
        "--qrels",
        str(trec["qrels"]),
        "--name",
        "cli",
        "--server.port",
        str(port),
    ]
    log = (tmp_path / "server.log").open("wb")
    server = subprocess.Popen(
        command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        deadline = time.monotonic() + SERVER_START_S  # a generous bound for a busy machine
        while not healthy(f"http://127.0.0.1:{port}"):
            assert server.poll() is None, (tmp_path / "server.log").read_text()
            assert time.monotonic() < deadline, (tmp_path / "server.log").read_text()
            time.sleep(0.2)
        page.goto(f"http://127.0.0.1:{port}/")
        wait_ready(page)
        assert_no_exception(page)
        _assert_leaderboard(page, trec)
        assert "bundle: " in (tmp_path / "server.log").read_text()
    finally:
        stop_group(server, timeout=20)  # the launcher, the server: its whole process group
        log.close()
    assert group_members(server.pid) == []
