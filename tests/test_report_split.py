"""``report --split``: the same split semantics as ``evaluate --bundle --split`` (a name, ``all``,
default = the manifest's default split), the same means as the per-query table and the
evaluate command, the split named in the report, and one clear line for an unknown split."""

from __future__ import annotations

import html
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.core.errors import InputError
from analysis.io.bundle import load_dataset, load_model_run, read_manifest
from analysis.present.report import bundle_content
from analysis.stats.perquery import per_query_table

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = """\
name = "split-test"
[datasets.web]
family = "generic"
qrels = "web/qrels.txt"
runs = "web/runs"
splits = { test = "web/split/test.index", train = "web/split/train.index" }
split = "test"
metrics = ["hit@1", "mrr"]
"""


def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "analysis", *map(str, args)],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def _bundle(root: Path) -> Path:
    rng = np.random.default_rng(3)
    folder = root / "web"
    (folder / "runs").mkdir(parents=True)
    (folder / "split").mkdir()
    qrels = [f"q{q} 0 d{d} 1" for q in range(60) for d in rng.choice(80, 2, replace=False)]
    (folder / "qrels.txt").write_text("\n".join(qrels) + "\n")
    for model in ("bm25", "dense"):
        lines = [
            f"q{q} Q0 d{d} {r + 1} {30 - r + rng.random():.6f} {model}"
            for q in range(60)
            for r, d in enumerate(rng.choice(80, 30, replace=False))
        ]
        (folder / "runs" / f"{model}.run").write_text("\n".join(lines) + "\n")
    test = [f"q{q}" for q in range(0, 60, 3)]
    (folder / "split" / "test.index").write_text("\n".join(test) + "\n")
    train = [f"q{q}" for q in range(60) if q % 3]
    (folder / "split" / "train.index").write_text("\n".join(train) + "\n")
    (root / "bundle.toml").write_text(MANIFEST)
    return root


def _table_means(root: Path, split: str | None) -> pd.DataFrame:
    spec = read_manifest(root).datasets["web"]
    ds = load_dataset(spec, split)
    runs = {m: load_model_run(spec, m) for m in spec.runs}
    table, _ = per_query_table(ds.queries, ds.qrels, runs, dataset="web", metrics=["hit@1", "mrr"])
    return table.groupby("model")[["hit@1", "mrr"]].mean()


@pytest.mark.parametrize(("split", "name", "n"), [(None, "test", 20), ("train", "train", 40),
                                                  ("all", "all", 60)])  # fmt: skip
def test_report_split_gives_the_means_of_the_table_and_of_evaluate(
    tmp_path: Path, split: str | None, name: str, n: int
) -> None:
    root = _bundle(tmp_path / "b")
    expected = _table_means(root, split)
    flag = ["--split", split] if split else []
    out = tmp_path / "eval.csv"
    done = _cli("evaluate", "--bundle", root, "--dataset", "web", "--out", out, *flag)
    assert done.returncode == 0, done.stderr
    evaluated = pd.read_csv(out, dtype={"query_id": str})
    assert evaluated["query_id"].nunique() == n
    pd.testing.assert_frame_equal(
        evaluated.groupby("model")[["hit@1", "mrr"]].mean(), expected, rtol=0, atol=1e-12
    )
    content = bundle_content(root, split=split)
    assert content.splits == {"web": name}
    board = content.numbers["leaderboard"]
    assert (board["n"] == n).all()
    got = board.pivot_table(index="model", columns="metric", values="mean", aggfunc="first")
    got = got[["hit@1", "mrr"]]
    got.columns.name = None
    pd.testing.assert_frame_equal(got, expected, rtol=0, atol=1e-12)
    report = tmp_path / "report.html"
    done = _cli("report", "--bundle", root, "--out", report, *flag)
    assert done.returncode == 0, done.stderr
    text = html.unescape(re.sub(r"<[^>]+>", " ", report.read_text(encoding="utf-8")))
    assert f"Split: web: {name}." in text
    for value in expected.to_numpy().ravel():
        assert f"{value:.3f}" in text  # the leaderboard cells


def test_unknown_split_is_one_line(tmp_path: Path) -> None:
    root = _bundle(tmp_path / "b")
    with pytest.raises(InputError, match="no split 'val'"):
        bundle_content(root, split="val")
    out = tmp_path / "r.html"
    done = _cli("report", "--bundle", root, "--split", "val", "--out", out)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert "no split 'val' (known: test, train, all)" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not out.exists()
