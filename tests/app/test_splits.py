"""AppTest: a dataset with splits offers a split choice, and every page uses that split's
queries only (built against ``DatasetSpec.splits`` / ``default_split``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from tests.app.conftest import ROOT, leaderboards, make_wide_bundle, no_exception, open_page


@pytest.fixture
def split_root(tmp_path: Path, monkeypatch) -> Path:
    root = make_wide_bundle(tmp_path)  # 931 queries q0..q930
    folder = root / "wide"
    (folder / "mag" / "split").mkdir()
    (folder / "mag" / "split" / "train.index").write_text("".join(f"q{i}\n" for i in range(600)))
    (folder / "mag" / "split" / "test.index").write_text(
        "".join(f"q{i}\n" for i in range(600, 931))
    )
    manifest = (folder / "bundle.toml").read_text()
    manifest += 'splits = { train = "mag/split/train.index", test = "mag/split/test.index" }\n'
    (folder / "bundle.toml").write_text(manifest)
    monkeypatch.setenv("RETRIEVAL_DASHBOARD_DATA_ROOTS", str(root))
    return root


def test_split_choice_restricts_every_statistic(split_root):
    at = open_page()
    no_exception(at)
    split = at.selectbox(key="w_split")
    assert split.options == ["train", "test", "all"]
    total = leaderboards(at)["n"].iloc[0]
    at.selectbox(key="w_split").select("test").run()
    no_exception(at)
    assert leaderboards(at)["n"].tolist() == [331, 331]
    assert at.query_params["split"] in ("test", ["test"])
    at.selectbox(key="w_split").select("all").run()
    assert leaderboards(at)["n"].iloc[0] == 931
    assert total in (931, 331, 600)  # the manifest's default split, else all


def test_split_link_reaches_the_other_pages(split_root):
    at = open_page("2_Queries.py", split="train")
    no_exception(at)
    listed = next(d.value for d in at.dataframe if d.key == "failures")
    assert listed["query_id"].str[1:].astype(int).max() < 600
    compare = open_page("3_Compare.py", split="test")
    no_exception(compare)
    assert {m.label: m.value for m in compare.metric}["Paired queries"] == "331"
    assert not any("not in the qrels" in t.value for t in compare.warning)


@pytest.fixture
def split_geo_root(tmp_path, monkeypatch):
    """The demo's geo-glue dataset with two splits of its 400 queries (a: the first 200)."""
    folder = tmp_path / "root" / "geo"
    shutil.copytree(ROOT / "data" / "demo" / "geo-glue", folder / "geo-glue")
    ids = pd.read_parquet(folder / "geo-glue" / "qrels.parquet")["query_id"].unique().tolist()
    queries = folder / "geo-glue" / "queries.parquet"
    pd.read_parquet(queries).drop(columns="split").to_parquet(queries)  # the manifest's splits
    (folder / "a.index").write_text("".join(f"{q}\n" for q in ids[:200]))
    (folder / "b.index").write_text("".join(f"{q}\n" for q in ids[200:]))
    (folder / "bundle.toml").write_text(
        '[datasets.geo-glue]\nfamily = "spatial"\ncrs = "EPSG:4326"\n'
        'queries = "geo-glue/queries.parquet"\nqrels = "geo-glue/qrels.parquet"\n'
        'entities = "geo-glue/entities.parquet"\nruns = "geo-glue/runs"\n'
        'metrics = ["recall@1", "recall@10", "ndcg@10", "mrr"]\n'
        'splits = { a = "a.index", b = "b.index" }\n'
    )
    monkeypatch.setenv("RETRIEVAL_DASHBOARD_DATA_ROOTS", str(tmp_path / "root"))
    return set(ids[200:])


def _q(at) -> str | None:
    value = at.query_params.get("q")
    return value[-1] if isinstance(value, list) else value


def test_the_default_query_follows_the_split(split_geo_root):
    """The query the page opens on is model A's worst of the chosen split: the one of the
    split opened before must not be served from the cache."""
    first = open_page("4_Map.py", split="a")
    no_exception(first)
    assert _q(first) not in split_geo_root
    at = open_page("4_Map.py", split="b")
    no_exception(at)
    assert _q(at) in split_geo_root


def test_the_analyses_follow_the_split(split_root):
    """The failure taxonomy is cached by the per-query table's key: the split opened before
    must not be served (train has 600 queries, test 331)."""

    def queries(split: str) -> list[int]:
        at = open_page("6_Analyses.py", split=split)
        no_exception(at)
        counts = next(d.value for d in at.dataframe if d.key == "taxonomy_counts")
        return counts["queries"].tolist()

    assert queries("test") == [331, 331]
    assert queries("train") == [600, 600]
