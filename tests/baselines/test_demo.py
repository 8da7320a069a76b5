"""The committed demo bundle: reproducible byte for byte, and with the properties the app relies on.

Properties are measured on the files in ``data/demo`` (plain pandas, no trust in the generator's
own bookkeeping): dataset sizes, answer-set size buckets, duplicated qrels rows, geo-glue's
coordinate stacks and twins, genuine score ties, and real differences between the models.
"""

from __future__ import annotations

import itertools
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.baselines.retrievers import haversine_m
from analysis.core.errors import InputError
from analysis.core.metrics import evaluate
from demo.generate import DATASETS, build_datasets, generate_bundle

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"
STARK = ("stark-amazon", "stark-mag", "stark-prime")
SPATIAL = ("beijing", "shanghai", "geo-glue")
CENTRES = {"beijing": (39.9042, 116.4074), "shanghai": (31.2304, 121.4737)}


@pytest.fixture(scope="module")
def manifest() -> dict:
    with (DEMO / "bundle.toml").open("rb") as fh:
        return tomllib.load(fh)


@pytest.fixture(scope="module")
def tables(manifest: dict) -> dict[str, dict[str, pd.DataFrame]]:
    """Every dataset's tables, read from the committed bundle through the manifest's paths."""
    out: dict[str, dict[str, pd.DataFrame]] = {}
    for name, spec in manifest["datasets"].items():
        t = {key: pd.read_parquet(DEMO / spec[key]) for key in ("queries", "qrels", "entities")}
        if "edges" in spec:
            t["edges"] = pd.read_parquet(DEMO / spec["edges"])
        for f in sorted((DEMO / spec["runs"]).glob("*.parquet")):
            t[f"run:{f.stem}"] = pd.read_parquet(f)
        out[name] = t
    return out


def _runs(t: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    return {k.removeprefix("run:"): v for k, v in t.items() if k.startswith("run:")}


# ---------------------------------------------------------------------------------------------
# reproducibility
# ---------------------------------------------------------------------------------------------
def test_regenerated_bundle_is_byte_identical(tmp_path: Path) -> None:
    generate_bundle(tmp_path / "demo", seed=0)
    new = {p.relative_to(tmp_path / "demo") for p in (tmp_path / "demo").rglob("*") if p.is_file()}
    old = {p.relative_to(DEMO) for p in DEMO.rglob("*") if p.is_file()}
    assert new == old, "regenerate with: python -m analysis demo --out data/demo"
    differ = [
        str(p)
        for p in sorted(new)
        if (tmp_path / "demo" / p).read_bytes() != (DEMO / p).read_bytes()
    ]
    assert not differ, f"files differ from data/demo: {differ}"


def test_generator_and_baseline_modules_stay_small() -> None:
    """Every module of the generator and of the baseline retrievers is a readable unit."""
    root = DEMO.parents[1]
    sizes = {
        str(p.relative_to(root)): len(p.read_text(encoding="utf-8").splitlines())
        for folder in ("demo", "analysis/baselines")
        for p in sorted((root / folder).rglob("*.py"))
    }
    assert len(sizes) >= 10, sizes  # the packages were found
    assert {p: n for p, n in sizes.items() if n > 500} == {}


@pytest.mark.parametrize("domain", ["amazon", "mag", "prime"])
def test_every_query_wording_is_used(domain: str) -> None:
    """Each ``[queries.<name>]`` table of a STaRK vocabulary is asked for by its domain's code."""
    root = DEMO.parents[1] / "demo"
    with (root / "vocab" / f"{domain}.toml").open("rb") as fh:
        names = tomllib.load(fh)["queries"]
    code = (root / f"{domain}.py").read_text(encoding="utf-8")
    assert len(names) >= 10
    assert [n for n in names if f'"{n}"' not in code] == []


def test_seed_changes_the_data() -> None:
    a, b = build_datasets(0)[0], build_datasets(1)[0]
    assert not a.queries["text"].equals(b.queries["text"])


def test_bundle_is_small_and_parquet() -> None:
    files = [p for p in DEMO.rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in files) <= 25 * 2**20
    assert {p.suffix for p in files} == {".parquet", ".toml"}


# ---------------------------------------------------------------------------------------------
# manifest and table formats
# ---------------------------------------------------------------------------------------------
def test_manifest_lists_six_datasets(manifest: dict) -> None:
    assert manifest["name"] == "demo"
    assert manifest["description"]
    assert tuple(manifest["datasets"]) == DATASETS
    for name, spec in manifest["datasets"].items():
        assert spec["family"] == ("stark" if name in STARK else "spatial")
        assert ("edges" in spec) == (name in STARK)
        assert spec.get("crs") == (None if name in STARK else "EPSG:4326")
        assert spec["metrics"]
        for key in ("queries", "qrels", "entities", "edges"):
            if key in spec:
                assert (DEMO / spec[key]).is_file()
        assert len(list((DEMO / spec["runs"]).glob("*.parquet"))) >= 2


@pytest.mark.parametrize("name", DATASETS)
def test_tables_have_the_vocabulary_and_string_ids(
    tables: dict[str, dict[str, pd.DataFrame]], name: str
) -> None:
    t = tables[name]
    q, qrels, ents = t["queries"], t["qrels"], t["entities"]
    assert list(q.columns[:3]) == ["query_id", "text", "query_type"]
    assert list(qrels.columns) == ["query_id", "doc_id", "relevance"]
    assert list(ents.columns[:4]) == ["doc_id", "name", "text", "type"]
    for frame, col in [(q, "query_id"), (qrels, "query_id"), (qrels, "doc_id"), (ents, "doc_id")]:
        assert pd.api.types.is_string_dtype(frame[col].dtype), (col, frame[col].dtype)
    assert q["query_id"].is_unique
    assert ents["doc_id"].is_unique
    assert qrels["relevance"].dtype == np.int64
    assert (qrels["relevance"] == 1).all()
    assert set(qrels["query_id"]) == set(q["query_id"])  # every query has gold, no stray ids
    assert set(qrels["doc_id"]) <= set(ents["doc_id"])
    assert q["text"].str.len().min() > 0
    if "edges" in t:
        e = t["edges"]
        assert list(e.columns) == ["src_id", "relation", "dst_id"]
        assert set(e["src_id"]) | set(e["dst_id"]) <= set(ents["doc_id"])
    if name in SPATIAL:
        for frame in (q, ents):
            assert frame["lat"].dtype == np.float64
            assert np.isfinite(frame[["lat", "lon"]].to_numpy()).all()


@pytest.mark.parametrize("name", DATASETS)
def test_runs_are_top_100_rankings_of_known_documents(
    tables: dict[str, dict[str, pd.DataFrame]], name: str
) -> None:
    t = tables[name]
    qids = t["queries"]["query_id"]
    for model, run in _runs(t).items():
        assert list(run.columns) == ["query_id", "doc_id", "score", "rank"], model
        assert run["score"].dtype == np.float64
        assert run["rank"].dtype == np.int64
        assert np.isfinite(run["score"]).all()
        assert set(run["doc_id"]) <= set(t["entities"]["doc_id"])
        assert set(run["query_id"]) <= set(qids)
        assert len(set(run["query_id"])) >= 0.95 * len(qids)  # lexical runs may skip a query
        # grouped by query in the queries' order, ranks 1..n, scores non-increasing
        order = run["query_id"].map(dict(zip(qids, range(len(qids)), strict=True)))
        assert order.is_monotonic_increasing
        size = run.groupby("query_id", sort=False).size()
        assert size.max() == 100
        assert (run["rank"].to_numpy() == run.groupby("query_id", sort=False).cumcount() + 1).all()
        step = run.groupby("query_id", sort=False)["score"].diff().dropna()
        assert (step <= 0).all()
        assert not run.duplicated(["query_id", "doc_id"]).any()


@pytest.mark.parametrize("name", DATASETS)
def test_every_dataset_has_genuine_score_ties(
    tables: dict[str, dict[str, pd.DataFrame]], name: str
) -> None:
    """Some query has a gold document tied with a non-gold one, so tie order matters."""
    gold = tables[name]["qrels"].assign(gold=True).drop_duplicates(["query_id", "doc_id"])
    sensitive = 0
    for run in _runs(tables[name]).values():
        m = run.merge(gold[["query_id", "doc_id", "gold"]], how="left", on=["query_id", "doc_id"])
        m["gold"] = m["gold"].fillna(False).astype(bool)
        g = m.groupby(["query_id", "score"])["gold"].agg(["sum", "size"])
        sensitive += int(((g["sum"] > 0) & (g["sum"] < g["size"])).sum())
    assert sensitive >= 5


# ---------------------------------------------------------------------------------------------
# dataset shapes
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", DATASETS)
def test_every_dataset_has_at_least_300_queries(
    tables: dict[str, dict[str, pd.DataFrame]], name: str
) -> None:
    assert len(tables[name]["queries"]) >= 300


@pytest.mark.parametrize("name", STARK)
def test_stark_query_types_and_metapaths(
    tables: dict[str, dict[str, pd.DataFrame]], name: str
) -> None:
    q = tables[name]["queries"]
    counts = q["query_type"].value_counts()
    assert set(counts.index) == {"synthesized", "human"}
    assert 50 <= counts["human"] < counts["synthesized"]
    assert q["metapath"].notna().all()
    assert q["metapath"].nunique() >= 5
    assert q["pattern"].nunique() == 3
    assert set(q["split"]) >= {"val", "test"}
    assert tables[name]["edges"]["relation"].nunique() >= 4


def _bucket(n: pd.Series) -> pd.Series:
    return pd.cut(n, [0, 1, 5, 20, np.inf], labels=["1", "2–5", "6–20", ">20"])


def test_stark_amazon_answer_set_sizes_fill_every_bucket(
    tables: dict[str, dict[str, pd.DataFrame]],
) -> None:
    sizes = tables["stark-amazon"]["qrels"].groupby("query_id").size()
    buckets = _bucket(sizes).value_counts()
    assert (buckets >= 20).all(), buckets.to_dict()
    assert 50 <= sizes.max() <= 100


@pytest.mark.parametrize("name", ["stark-mag", "stark-prime"])
def test_other_stark_answer_sets_range_from_one_to_many(
    tables: dict[str, dict[str, pd.DataFrame]], name: str
) -> None:
    sizes = tables[name]["qrels"].groupby("query_id").size()
    assert sizes.min() == 1
    assert sizes.max() > 20


@pytest.mark.parametrize("name", ["beijing", "shanghai"])
def test_list_cities_click_log_gold_and_duplicated_rows(
    tables: dict[str, dict[str, pd.DataFrame]], name: str
) -> None:
    t = tables[name]
    qrels = t["qrels"]
    dup_queries = qrels[qrels.duplicated(["query_id", "doc_id"])]["query_id"].nunique()
    assert 0.01 <= dup_queries / len(t["queries"]) <= 0.02  # as in LIST's test qrels
    n_gold = qrels.drop_duplicates(["query_id", "doc_id"]).groupby("query_id").size()
    assert n_gold.min() == 1
    assert n_gold.max() == 5
    assert 1.2 <= n_gold.mean() <= 1.6
    lat0, lon0 = CENTRES[name]
    for frame in (t["entities"], t["queries"]):
        d = haversine_m(lat0, lon0, frame["lat"].to_numpy(), frame["lon"].to_numpy())
        assert np.median(d) < 12_000
        assert d.max() < 50_000
    # Chinese text, and POI ids that are not numbers
    assert t["entities"]["text"].str.contains(r"[\u4e00-\u9fff]").all()
    assert not t["entities"]["doc_id"].str.fullmatch(r"\d+").any()
    assert t["queries"]["query_id"].str.startswith("0").any()  # leading zeros kept
    assert {"name", "address", "category"} <= set(t["queries"]["query_type"])


def test_geo_glue_stacks_twins_and_single_gold(
    tables: dict[str, dict[str, pd.DataFrame]],
) -> None:
    t = tables["geo-glue"]
    pois = t["entities"]
    stack = pois.groupby(["lat", "lon"])["doc_id"].transform("size")
    share = (stack > 1).mean()
    assert 0.15 <= share <= 0.30, share
    assert stack.max() >= 10
    twins = pois.groupby(["text", "lat", "lon"])["doc_id"].nunique()
    assert (twins > 1).sum() >= 5
    # exactly one gold per query, and some gold POIs have a twin
    assert t["qrels"].groupby("query_id").size().eq(1).all()
    gold = pois[pois["doc_id"].isin(t["qrels"]["doc_id"])]
    gold_twin = gold.merge(pois, on=["text", "lat", "lon"]).query("doc_id_x != doc_id_y")
    assert len(gold_twin) >= 3
    # Hangzhou, and the query is ~1 km from its shifted gold (with a far tail)
    assert pois["lat"].between(29.3, 30.8).all()
    assert pois["lon"].between(118.5, 120.8).all()
    g = t["qrels"].merge(pois, on="doc_id").merge(t["queries"], on="query_id")
    d = haversine_m(g["lat_x"], g["lon_x"], g["lat_y"], g["lon_y"])
    assert 600 < np.median(d) < 1500
    assert 0.1 < (d > 5000).mean() < 0.3


# ---------------------------------------------------------------------------------------------
# the models really differ
# ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def per_query(
    manifest: dict, tables: dict[str, dict[str, pd.DataFrame]]
) -> dict[str, pd.DataFrame]:
    """Per-query metrics of every model (team's metric core), with the queries' slice columns."""
    out = {}
    for name, t in tables.items():
        metrics = [*manifest["datasets"][name]["metrics"], "mrr"]
        metrics = list(dict.fromkeys(metrics))
        frames = []
        for model, run in _runs(t).items():
            ev = evaluate(run, t["qrels"], metrics)
            frames.append(ev.assign(model=model))
        out[name] = pd.concat(frames, ignore_index=True).merge(t["queries"], on="query_id")
    return out


@pytest.mark.parametrize("name", DATASETS)
def test_model_means_differ_and_every_model_wins_some_queries(
    manifest: dict, per_query: dict[str, pd.DataFrame], name: str
) -> None:
    pq = per_query[name]
    headline = manifest["datasets"][name]["metrics"]
    means = pq.groupby("model")[headline].mean()
    assert len(means) >= 3
    mrr = pq.pivot_table(index="query_id", columns="model", values="mrr")
    for a, b in itertools.combinations(means.index, 2):
        assert (means.loc[a] - means.loc[b]).abs().max() >= 0.01, (a, b, means)
        assert (mrr[a] > mrr[b]).sum() >= 5, (a, "never beats", b)
        assert (mrr[b] > mrr[a]).sum() >= 5, (b, "never beats", a)


@pytest.mark.parametrize("name", DATASETS)
def test_the_best_model_loses_on_some_slice(per_query: dict[str, pd.DataFrame], name: str) -> None:
    """The overall winner is beaten by BM25 on at least one slice of >= 20 queries."""
    pq = per_query[name]
    overall = pq.groupby("model")["mrr"].mean()
    best = overall.idxmax()
    assert best != "bm25"
    flips = []
    for col in ("query_type", "pattern", "metapath", "category", "district"):
        if col not in pq:
            continue
        by = pq.pivot_table(index=col, columns="model", values="mrr", aggfunc="mean")
        n = pq[pq["model"] == best].groupby(col).size()
        big = by[n.reindex(by.index) >= 20]
        flips += [(col, v) for v in big.index if big.loc[v, "bm25"] > big.loc[v, best]]
    assert flips, f"{best} wins every slice of {name}"


def test_an_unwritable_out_folder_is_refused_before_the_demo_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The folder beside ``--out`` cannot be made: the error comes before any dataset is
    generated (a minute of work for nothing otherwise), and nothing is written."""
    import tempfile

    import demo.generate as generate

    def refuse(*args: object, **kwargs: object) -> str:
        raise PermissionError(13, "Permission denied")

    def never(seed: int) -> None:
        raise AssertionError("the datasets were built before the folder was checked")

    monkeypatch.setattr(tempfile, "mkdtemp", refuse)
    monkeypatch.setattr(generate, "build_datasets", never)
    with pytest.raises(InputError, match="demo"):
        generate_bundle(tmp_path / "demo", seed=0)
    assert list(tmp_path.iterdir()) == []
