"""The examples run as scripts: ``examples/notebook.py`` opens the dashboard on runs held in
Python and stops it."""

from __future__ import annotations

import subprocess
import sys
from urllib.parse import urlparse

from analysis.core.metrics import evaluate
from analysis.io import load_qrels, load_run
from analysis.present.dashboard import adhoc_home, port_answers
from tests.helpers import ROOT


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
