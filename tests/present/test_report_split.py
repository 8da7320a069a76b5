"""``report --split``: the same split semantics as ``evaluate --bundle --split`` (a name, ``all``,
default = the manifest's default split), the same means as the per-query table and the
evaluate command, the split named in the report, and one clear line for an unknown split."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pandas as pd
import pytest

from analysis.core.errors import InputError
from analysis.io.bundle import load_dataset, load_model_run, read_manifest
from analysis.present.report import bundle_content
from analysis.stats.perquery import per_query_table
from tests.io.test_splits import _bundle, _cli  # 40 queries: split test 14, train 26

ROOT = Path(__file__).resolve().parents[2]


def _table_means(root: Path, split: str | None) -> pd.DataFrame:
    spec = read_manifest(root).datasets["web"]
    ds = load_dataset(spec, split)
    runs = {m: load_model_run(spec, m) for m in spec.runs}
    table, _ = per_query_table(ds.queries, ds.qrels, runs, dataset="web", metrics=["hit@1", "mrr"])
    return table.groupby("model")[["hit@1", "mrr"]].mean()


@pytest.mark.parametrize(("split", "name", "n"), [(None, "test", 14), ("train", "train", 26),
                                                  ("all", "all", 40)])  # fmt: skip
def test_report_split_gives_the_means_of_the_table_and_of_evaluate(
    tmp_path: Path, split: str | None, name: str, n: int
) -> None:
    root = _bundle(tmp_path)
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
    root = _bundle(tmp_path)
    with pytest.raises(InputError, match="no split 'val'"):
        bundle_content(root, split="val")
    out = tmp_path / "r.html"
    done = _cli("report", "--bundle", root, "--split", "val", "--out", out)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert "no split 'val' (known: test, train, all)" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_split_with_no_query_of_the_qrels_is_one_line(tmp_path: Path) -> None:
    """A split none of whose ids the qrels judge gave a report of no dataset ("Datasets:
    none", model B only) and no word of why; now one line naming the split file."""
    root = _bundle(tmp_path)
    (root / "web" / "split" / "train.index").write_text("x1\nx2\n")
    with pytest.raises(InputError, match=r"train\.index: no query of split 'train' is in the"):
        bundle_content(root, split="train")
    out = tmp_path / "r.html"
    done = _cli("report", "--bundle", root, "--split", "train", "--out", out)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not out.exists()
    assert bundle_content(root, split="test").datasets == ("web",)  # the other split reports
