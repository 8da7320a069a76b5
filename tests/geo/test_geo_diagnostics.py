"""The vectorized geo diagnostics (computed once per dataset, ranked on a prefix per model)
give the same per-query values as the reference implementation (pandas merges per model), on
the demo's spatial datasets and on synthetic LIST-like data with ties, duplicates, docs that
are not POIs, gold that is not a POI and queries without a point."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.core.errors import InputError
from analysis.core.metrics import evaluate_run, rank_run
from analysis.core.ranked import evaluate_run_ranked
from analysis.geo import geo_diagnostics, geo_index, model_geo_columns, ranked_geo_columns
from analysis.io import load_run
from analysis.io.bundle import load_dataset, read_manifest
from analysis.stats.perquery import _add_geo, dashboard_metrics
from bench.spatial import spatial_dataset
from tests.geo_reference import reference_add_geo, reference_geo_diagnostics

ROOT = Path(__file__).resolve().parents[2]
SPATIAL = ("beijing", "shanghai", "geo-glue")


@cache
def _demo(name: str) -> tuple:
    spec = read_manifest(ROOT / "data" / "demo").datasets[name]
    ds = load_dataset(spec)
    runs = {model: load_run(path) for model, path in spec.runs.items()}
    return ds.queries, ds.qrels, runs, ds.entities


def _synthetic(seed: int) -> tuple:
    queries, qrels, runs, pois = spatial_dataset(3000, 400, n_models=2, depth=40, seed=seed)
    rng = np.random.default_rng(seed)
    run = runs["model-0"].copy()
    run.loc[rng.random(len(run)) < 0.03, "doc_id"] = "not-a-poi"  # also creates duplicates
    run["score"] = np.round(run["score"], 1)  # heavy ties
    runs["model-0"] = run
    runs["model-1"] = runs["model-1"].sample(frac=1.0, random_state=seed)  # unsorted file
    qrels = pd.concat(
        [
            qrels,
            pd.DataFrame(
                {"query_id": ["q1", "q2"], "doc_id": ["ghost", "ghost"], "relevance": [1, 0]}
            ),
        ],
        ignore_index=True,
    )
    queries.loc[queries.index[:20], ["lat", "lon"]] = np.nan
    return queries, qrels, runs, pois


def _assert_same(queries, qrels, runs, pois, ties: str) -> None:
    located = pois.dropna(subset=["lat", "lon"])
    index = geo_index(qrels, queries, located)
    for model, run in runs.items():
        frame = evaluate_run(run, qrels, dashboard_metrics(), ties=ties, diagnostics=True)
        frame = frame.per_query
        expected = reference_add_geo(frame, run, qrels, queries, pois, ties)
        for strict in (None, frame):  # twin metrics evaluated for every query / only where twins
            got = _add_geo(frame, run, index, ties, strict)
            pd.testing.assert_frame_equal(got, expected, check_exact=True, obj=model)
        _, ranking = evaluate_run_ranked(run, qrels, dashboard_metrics(), ties=ties)
        got = _add_geo(frame, run, index, ties, ranking=ranking)  # the core's ranking, shared
        pd.testing.assert_frame_equal(got, expected, check_exact=True, obj=model)


@pytest.mark.parametrize("name", SPATIAL)
def test_demo_spatial_datasets_give_the_reference_numbers(name: str) -> None:
    _assert_same(*_demo(name), ties="trec_eval")


@pytest.mark.parametrize("ties", ["trec_eval", "stable"])
@pytest.mark.parametrize("seed", [1, 2])
def test_synthetic_runs_with_ties_and_duplicates_give_the_reference_numbers(
    seed: int, ties: str
) -> None:
    _assert_same(*_synthetic(seed), ties=ties)


def _tied_twins(seed: int) -> tuple:
    """A random spatial run where ties straddle rank 10 and twins sit inside the ties: scores
    on a coarse grid (most rows tie), many stacked twins (renamed ids change the tie order),
    golds that are not first in their twin group, and a query only in the run."""
    queries, qrels, runs, pois = _synthetic(seed)
    rng = np.random.default_rng(seed + 100)
    twin_text = pois["text"].where(rng.random(len(pois)) > 0.5, "same")
    pois = pois.assign(text=twin_text, name=twin_text)
    run = runs["model-1"].copy()
    run["score"] = rng.integers(0, 4, len(run)) / 3.0  # 4 distinct scores per query
    extra = pd.DataFrame({"query_id": ["unjudged"] * 3, "doc_id": ["1", "2", "3"],
                          "score": [1.0, 1.0, 0.5]})  # fmt: skip
    runs["model-1"] = pd.concat([run, extra], ignore_index=True)
    return queries, qrels, runs, pois


@pytest.mark.parametrize("ties", ["trec_eval", "stable"])
@pytest.mark.parametrize("seed", [5, 6, 7])
@pytest.mark.parametrize("threshold", [1, 2])
def test_the_core_ranking_gives_the_columns_of_ranking_again(
    seed: int, ties: str, threshold: int
) -> None:
    """The shared-ranking path (the metric core's ranking, read once) gives the same geo and
    twin-aware columns, bit for bit, as ranking each model's prefix again."""
    queries, qrels, runs, pois = _tied_twins(seed)
    if threshold == 2:
        qrels = qrels.assign(relevance=np.where(np.arange(len(qrels)) % 2, 2, 1))
    index = geo_index(qrels, queries, pois.dropna(subset=["lat", "lon"]))
    assert index.has_twins
    assert index.renamed_gold.any()
    metrics = dashboard_metrics()
    differ = False
    for model, run in runs.items():
        options = {"ties": ties, "relevance_threshold": threshold, "diagnostics": True}
        result, ranking = evaluate_run_ranked(run, qrels, metrics, **options)
        plain = evaluate_run(run, qrels, metrics, **options)
        pd.testing.assert_frame_equal(result.per_query, plain.per_query, check_exact=True)
        assert result.warnings == plain.warnings
        old = model_geo_columns(run, index, ties, k=10, relevance_threshold=threshold)
        new = ranked_geo_columns(ranking, index, ties, k=10, relevance_threshold=threshold)
        pd.testing.assert_frame_equal(new, old, check_exact=True, obj=model)
        differ |= bool((new["twin_recall@10"] != result.per_query["recall@10"]).any())
        frame = result.per_query
        pd.testing.assert_frame_equal(
            _add_geo(frame, run, index, ties, None, threshold, ranking=ranking),
            _add_geo(frame, run, index, ties, None, threshold),
            check_exact=True,
        )
    assert differ  # twins change some queries' values, so the twin path is exercised


def test_geo_diagnostics_on_a_whole_ranked_run_equals_the_reference() -> None:
    queries, qrels, runs, pois = _synthetic(3)
    for run in runs.values():
        ranked = rank_run(run)
        expected = reference_geo_diagnostics(ranked, qrels, queries, pois, k=5)
        got = geo_diagnostics(ranked, qrels, queries, pois, k=5)
        pd.testing.assert_frame_equal(got, expected, check_exact=True)
        assert got["indistinguishable"].any()
        assert (got["stackmates_in_top_k"] > 0).any()


def test_the_index_finds_twins_and_stacks_once() -> None:
    queries, qrels, _, pois = _synthetic(4)
    index = geo_index(qrels, queries, pois)
    assert index.has_twins
    assert (index.stack >= 0).sum() == len(pois)
    assert index.static["gold_stack_size"].max() > 1
    assert "ghost" in set(index.docs)  # a gold id that is not a POI


def test_rows_above_the_first_gold_are_read_only_where_its_coordinate_is_shared() -> None:
    """The look-up bound of each query: the cutoff where the first gold sits alone, its rank
    where other POIs share its coordinate (both cases occur deep in these rankings), and the
    columns stay those of the reference."""
    from analysis.geo.ranked import _gold_bound

    queries, qrels, runs, pois = _synthetic(4)
    index = geo_index(qrels, queries, pois.dropna(subset=["lat", "lon"]))
    run = runs["model-1"]
    result, ranking = evaluate_run_ranked(run, qrels, dashboard_metrics(), diagnostics=True)
    frame = result.per_query
    first = np.full(len(index.queries), np.inf)
    at = index.queries.get_indexer(frame["query_id"])
    first[at] = np.nan_to_num(frame["first_gold_rank"].to_numpy(np.float64), nan=0.0)
    q = index.queries.get_indexer(ranking.query_ids.to_pylist())[ranking.codes]
    bound, gold_rows = _gold_bound(ranking, index, q, ranking.rows, first, 10)
    deep = first > 20
    assert ((bound == 10) & deep).any()
    assert ((bound == first) & deep).any()
    assert len(gold_rows) == int(((first >= 1) & np.isfinite(first)).sum())
    expected = reference_add_geo(frame, run, qrels, queries, pois, "trec_eval")
    got = _add_geo(frame, run, index, "trec_eval", ranking=ranking)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_distance_buckets_are_pandas_cut_on_the_bin_edges() -> None:
    """``dist_gold_bucket`` puts each distance in its (a, b] bin, as ``pd.cut`` does, edges
    and infinity included; a missing distance is ``unknown``."""
    from analysis.stats.perquery import DIST_BINS, DIST_LABELS, geo_slices

    dist = np.r_[np.nan, 0.0, 500.0, np.nextafter(500.0, 1e9), 2000.0, 5000.0, 5000.5, np.inf]
    dist = np.r_[dist, np.random.default_rng(0).uniform(0, 10_000, 200)]
    out = geo_slices(pd.DataFrame({"dist_query_gold_m": dist,
                                   "gold_stack_size": pd.array([pd.NA] * len(dist), "Int64"),
                                   "indistinguishable": False}))  # fmt: skip
    expected = pd.cut(pd.Series(dist), DIST_BINS, labels=DIST_LABELS).astype("str")
    expected[np.isnan(dist)] = "unknown"
    assert out["dist_gold_bucket"].tolist() == expected.tolist()
    assert out["gold_stacked"].eq("alone").all()


def test_a_bad_table_fails_the_spatial_per_query_table_with_its_own_line() -> None:
    """Errors raised on the geo worker (duplicate POI ids) and on the main thread (a score that
    is not a number) reach the caller as the same one-line input errors."""
    from analysis.core.errors import InputError
    from analysis.stats.perquery import per_query_table

    queries, qrels, runs, pois = spatial_dataset(500, 40, n_models=2, depth=10, seed=3)
    twice = pd.concat([pois, pois.head(1)], ignore_index=True)
    with pytest.raises(InputError, match="duplicate doc_id"):
        per_query_table(queries, qrels, runs, dataset="d", entities=twice)
    bad = runs["model-1"].copy()
    bad.loc[3, "score"] = np.nan
    with pytest.raises(InputError, match="row 4 is not a finite number"):
        per_query_table(queries, qrels, {**runs, "model-1": bad}, dataset="d", entities=pois)
    table, _ = per_query_table(queries, qrels, runs, dataset="d", entities=pois)
    assert table.groupby("model").size().to_dict() == {"model-0": 40, "model-1": 40}
    assert {"dist_query_gold_m", "twin_recall@10", "location_tie"} <= set(table.columns)


@pytest.mark.parametrize(
    ("lat", "lon", "message"),
    [
        (np.inf, 120.0, r"^queries: row 2 \(query_id 'q2'\): latitude inf out of range"),
        (120.0, 30.0, r"latitude 120.0 out of range \[-90, 90\] \(are lat and lon swapped\?\)"),
        (30.0, -181.0, r"^queries: row 2 \(query_id 'q2'\): longitude -181.0 out of range"),
    ],
)
def test_a_query_point_off_the_globe_is_an_input_error(
    lat: float, lon: float, message: str
) -> None:
    pois = pd.DataFrame({"doc_id": ["a", "b"], "text": ["x", "y"], "lat": [30.0, 30.0],
                         "lon": [120.0, 120.001]})  # fmt: skip
    queries = pd.DataFrame({"query_id": ["q1", "q2"], "lat": [30.0, lat], "lon": [120.0, lon]})
    qrels = pd.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "b"], "relevance": [1, 1]})
    run = pd.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "b"], "rank": [1, 1]})
    with pytest.raises(InputError, match=message):
        geo_diagnostics(run, qrels, queries, pois)


@pytest.mark.parametrize("k", [2**63 - 1, 10**20])
def test_model_geo_columns_with_a_huge_k_reads_every_row(k: int) -> None:
    pois = pd.DataFrame({"doc_id": ["a", "b", "c"], "text": ["x", "x", "y"],
                         "lat": [30.0, 30.0, 30.1], "lon": [120.0, 120.0, 120.0]})  # fmt: skip
    queries = pd.DataFrame({"query_id": ["q1"], "lat": [30.0], "lon": [120.0]})
    qrels = pd.DataFrame({"query_id": ["q1"], "doc_id": ["b"], "relevance": [1]})
    run = pd.DataFrame({"query_id": ["q1"] * 3, "doc_id": ["a", "b", "c"], "score": [3.0, 2, 1]})
    got = model_geo_columns(run, geo_index(qrels, queries, pois), k=k)
    expected = geo_diagnostics(rank_run(run), qrels, queries, pois, k=k)
    pd.testing.assert_frame_equal(got[expected.columns], expected)
    assert got["stackmates_in_top_k"].tolist() == [1]


@pytest.mark.parametrize("run_queries", [["q1", "q1"], ["q2", "q2"], ["other", "other"]])
def test_model_geo_columns_of_a_run_missing_qrels_queries(run_queries: list[str]) -> None:
    pois = pd.DataFrame({"doc_id": ["a", "b"], "text": ["x", "y"], "lat": [30.0, 30.0],
                         "lon": [120.0, 120.001]})  # fmt: skip
    queries = pd.DataFrame({"query_id": ["q1", "q2"], "lat": [30.0, 30.0], "lon": [120.0] * 2})
    qrels = pd.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "b"], "relevance": [1, 1]})
    run = pd.DataFrame({"query_id": run_queries, "doc_id": ["b", "a"], "score": [2.0, 1.0]})
    got = model_geo_columns(run, geo_index(qrels, queries, pois))
    expected = geo_diagnostics(rank_run(run), qrels, queries, pois)
    pd.testing.assert_frame_equal(got[expected.columns], expected)
    twin = evaluate_run(run, qrels, ["recall@10", "ndcg@10"]).per_query
    assert got["twin_recall@10"].tolist() == twin["recall@10"].tolist()
    assert got["twin_ndcg@10"].tolist() == twin["ndcg@10"].tolist()
