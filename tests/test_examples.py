"""The examples run as scripts: ``examples/notebook.py`` opens the dashboard on runs held in
Python and stops it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from urllib.parse import urlparse

import pandas as pd

from analysis.core.metrics import evaluate
from analysis.io import load_qrels, load_run
from analysis.present.dashboard import adhoc_home, port_answers
from tests.helpers import ROOT, run_cli, run_main


def test_the_notebook_example_runs_as_a_script() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "examples.notebook"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    means, url, stopped = done.stdout.splitlines()
    demo = ROOT / "data" / "demo" / "stark-mag"
    want = evaluate(
        load_run(demo / "runs" / "char-ngram-tfidf.parquet"),
        load_qrels(demo / "qrels.parquet"),
        ["hit@1", "mrr"],
    )
    assert means == str(want[["hit@1", "mrr"]].mean().round(4).to_dict())
    assert url.startswith("http://127.0.0.1:")
    (bundle,) = adhoc_home().iterdir()  # the test's own cache folder
    assert url.endswith(f"/?bundle={bundle.name}")
    assert bundle.name.startswith("notebook-example-")
    assert stopped == "stopped"
    assert not port_answers(int(urlparse(url).port or 0))


def test_the_importer_example_is_one_more_import_command(tmp_path) -> None:
    folder = tmp_path / "lab"
    (folder / "runs").mkdir(parents=True)
    good = ROOT / "tests" / "bad_input" / "good"
    (folder / "qrels.txt").write_bytes((good / "qrels.txt").read_bytes())
    (folder / "runs" / "bm25.trec").write_bytes((good / "run.txt").read_bytes())
    plugin = ["--plugin", str(ROOT / "examples" / "trecdir_importer.py")]
    out, table = tmp_path / "bundle", tmp_path / "per_query.csv"
    done = run_cli("import", "trecdir", *plugin, "--root", folder, "--out", out)
    assert done.returncode == 0, done.stderr
    done = run_main("evaluate", "--bundle", str(out), "--dataset", "lab",
                    "--metrics", "mrr,ndcg@10", "--out", str(table))  # fmt: skip
    assert done.returncode == 0, done.stderr
    got = pd.read_csv(table, dtype={"query_id": str}).set_index("query_id")
    want = evaluate(load_run(good / "run.txt"), load_qrels(good / "qrels.txt"), ["mrr", "ndcg@10"])
    want = want.set_index("query_id")
    assert (got["model"] == "bm25").all()
    pd.testing.assert_frame_equal(got[["mrr", "ndcg@10"]].sort_index(), want.sort_index())


def test_the_page_example_lists_the_queries_no_model_solves(tmp_path, monkeypatch) -> None:
    """The example copied into ``pages/`` of a copy of the app's scripts shows the queries
    where every model's hit@1 is 0, as the command line computes them."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    st.cache_data.clear()  # what an earlier AppTest of this process cached (its data roots)
    st.cache_resource.clear()
    app = tmp_path / "app"
    (app / "pages").mkdir(parents=True)
    shutil.copy(ROOT / "app.py", app / "app.py")
    for page in (ROOT / "pages").glob("*.py"):
        shutil.copy(page, app / "pages" / page.name)
    shutil.copy(ROOT / "examples" / "unsolved_page.py", app / "pages" / "9_Unsolved.py")
    monkeypatch.setenv("RETRIEVAL_DASHBOARD_NOTES_DIR", str(tmp_path / "notes"))
    at = AppTest.from_file(str(app / "app.py"), default_timeout=120)
    at.query_params.update({"dataset": "stark-mag", "metric": "hit@1"})
    at.run()
    at.switch_page("pages/9_Unsolved.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    shown = sorted(at.dataframe[0].value["query_id"].astype(str))

    table = tmp_path / "per_query.csv"
    args = ["evaluate", "--bundle", str(ROOT / "data" / "demo"), "--dataset", "stark-mag",
            "--metrics", "hit@1", "--out", str(table)]  # fmt: skip
    done = run_main(*args)
    assert done.returncode == 0, done.stderr
    rows = pd.read_csv(table, dtype={"query_id": str})
    best = rows.groupby("query_id")["hit@1"].max()
    assert shown == sorted(best.index[best == 0])
    assert 0 < len(shown) < len(best)
