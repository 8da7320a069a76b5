"""Run groups: the manifest's groups and run_metadata, group rows of the per-query table (seed
means, spread, folds), the two-level bootstrap's coverage on simulated seeds, paired tests on
seed means against scipy, seed sensitivity, and the leaderboard's group rows."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from scipy.special import expit

import analysis
from analysis.core.errors import InputError
from analysis.io.bundle import load_dataset, load_model_run, read_manifest
from analysis.present.leaderboard import leaderboard, leaderboard_html
from analysis.stats import bootstrap_ci
from analysis.stats.groups import (
    group_members,
    model_matrix,
    seed_sensitivity,
    two_level_ci,
    with_two_level_cis,
)
from analysis.stats.perquery import per_query_table, slice_columns
from tests.helpers import run_main

N_QUERIES = 40


def _run_lines(rng: np.random.Generator, model: str, queries: range, hit: float) -> str:
    lines = []
    for q in queries:
        docs = [f"d{(q * 7 + j) % 97}" for j in range(10)]
        if rng.random() < hit:
            docs[int(rng.integers(0, 10))] = f"g{q}"
        lines += [f"q{q} Q0 {d} {r + 1} {10 - r} {model}" for r, d in enumerate(docs)]
    return "\n".join(lines) + "\n"


def make_group_bundle(root: Path, groups: str, extra: str = "") -> Path:
    """A one-dataset bundle: qrels (gold ``g<q>``), runs ``bm25``, ``s1..s3`` (seeds) and
    ``f1``/``f2`` (fold runs over the even / odd queries), and the given manifest tables."""
    rng = np.random.default_rng(5)
    ds = root / "web"
    (ds / "runs").mkdir(parents=True)
    (ds / "qrels.txt").write_text("".join(f"q{q} 0 g{q} 1\n" for q in range(N_QUERIES)))
    for model, hit in (("bm25", 0.4), ("s1", 0.6), ("s2", 0.5), ("s3", 0.7)):
        (ds / "runs" / f"{model}.run").write_text(_run_lines(rng, model, range(N_QUERIES), hit))
    (ds / "runs" / "f1.run").write_text(_run_lines(rng, "f1", range(0, N_QUERIES, 2), 0.9))
    (ds / "runs" / "f2.run").write_text(_run_lines(rng, "f2", range(1, N_QUERIES, 2), 0.1))
    (root / "bundle.toml").write_text(
        'name = "groups"\n[datasets.web]\nqrels = "web/qrels.txt"\nruns = "web/runs"\n'
        'metrics = ["hit@1", "mrr"]\n' + groups + extra
    )
    return root


SEEDS = '[datasets.web.groups.dense]\nseeds = ["s1", "s2", "s3"]\n'
FOLDS = '[datasets.web.groups.cv]\nfolds = { even = "f1", odd = "f2" }\n'


def _table(root: Path) -> tuple[pd.DataFrame, object]:
    spec = read_manifest(root).datasets["web"]
    ds = load_dataset(spec)
    runs = {m: load_model_run(spec, m) for m in spec.runs}
    table, _ = per_query_table(ds.queries, ds.qrels, runs, dataset="web",
                               headline=spec.metrics, groups=spec.groups)  # fmt: skip
    return table, spec


# --------------------------------------------------------------------------- manifest


def test_manifest_groups_and_metadata_are_read(tmp_path: Path) -> None:
    meta = "[datasets.web.run_metadata]\nbm25 = { latency_ms = 2, index_mb = 1.5 }\n"
    spec = read_manifest(make_group_bundle(tmp_path, SEEDS + FOLDS, meta)).datasets["web"]
    assert spec.groups["dense"].kind == "seeds"
    assert spec.groups["dense"].members == ("s1", "s2", "s3")
    assert spec.groups["cv"].folds == ("even", "odd")
    assert spec.groups["cv"].members == ("f1", "f2")
    assert spec.run_metadata == {"bm25": {"latency_ms": 2.0, "index_mb": 1.5}}
    # each group just before its first run
    assert spec.models == ["bm25", "cv", "f1", "f2", "dense", "s1", "s2", "s3"]


@pytest.mark.parametrize(
    ("groups", "message"),
    [
        ('[datasets.web.groups.dense]\nseeds = ["s1"]\n', "at least two run names"),
        ('[datasets.web.groups.dense]\nseeds = ["s1", "nope"]\n', "'nope' not a run"),
        ('[datasets.web.groups.bm25]\nseeds = ["s1", "s2"]\n', "is a run of the dataset"),
        ('[datasets.web.groups.dense]\nseeds = ["s1", "s2"]\nfolds = {a = "f1"}\n',
         "exactly one of"),
        ('[datasets.web.groups.dense]\nseeds = ["s1", "s2"]\nweight = 1\n', "unknown key"),
        ('[datasets.web.groups.a]\nseeds = ["s1", "s2"]\n[datasets.web.groups.b]\n'
         'seeds = ["s2", "s3"]\n', "already in group 'a'"),
        ('[datasets.web.groups.cv]\nfolds = { a = "f1", b = "f2" }\nfold_queries = { a = '
         '"web/qrels.txt" }\n', "one file per fold"),
        ('[datasets.web.run_metadata]\nbm25 = { latency_ms = "fast" }\n', "is not a number"),
        ('[datasets.web.run_metadata]\nnobody = { latency_ms = 1 }\n', "not a run or group"),
    ],
)  # fmt: skip
def test_bad_groups_are_one_line_errors(tmp_path: Path, groups: str, message: str) -> None:
    with pytest.raises(InputError) as err:
        read_manifest(make_group_bundle(tmp_path, groups))
    assert message in str(err.value)
    assert "\n" not in str(err.value)
    assert "bundle.toml" in str(err.value)


# --------------------------------------------------------------------------- group rows


def test_seed_group_rows_are_seed_means_with_spread(tmp_path: Path) -> None:
    table, _ = _table(make_group_bundle(tmp_path, SEEDS))
    seeds = table.loc[table["model"].isin(["s1", "s2", "s3"])]
    wide = seeds.pivot_table(index="query_id", columns="model", values="mrr")
    group = table.loc[table["model"] == "dense"].set_index("query_id")
    np.testing.assert_allclose(group.loc[wide.index, "mrr"], wide.mean(axis=1), rtol=0, atol=1e-15)
    np.testing.assert_allclose(group.loc[wide.index, "mrr_seed_sd"], wide.std(axis=1, ddof=1))
    low = seeds.pivot_table(index="query_id", columns="model", values="mrr_min").mean(axis=1)
    np.testing.assert_allclose(group.loc[wide.index, "mrr_min"], low)
    # the representative seed's ranking diagnostics
    first = seeds.loc[seeds["model"] == "s1"].set_index("query_id")["first_gold_rank"]
    pd.testing.assert_series_equal(group.loc[first.index, "first_gold_rank"], first)
    assert (group["seeds"] == 3).all()
    assert (table.loc[table["model"] == "bm25", "seeds"] == 1).all()
    assert group_members(table) == {"dense": ("seeds", ["s1", "s2", "s3"])}


def test_fold_group_takes_each_query_from_its_folds_run(tmp_path: Path) -> None:
    table, _ = _table(make_group_bundle(tmp_path, FOLDS))
    cv = table.loc[table["model"] == "cv"].set_index("query_id")
    for fold, run in (("even", "f1"), ("odd", "f2")):
        mine = cv.index[cv["fold"] == fold]
        own = table.loc[table["model"] == run].set_index("query_id").loc[mine, "hit@1"]
        pd.testing.assert_series_equal(cv.loc[mine, "hit@1"], own)
    assert set(cv["fold"]) == {"even", "odd"}
    assert (cv.loc[[f"q{i}" for i in range(0, N_QUERIES, 2)], "fold"] == "even").all()
    # the fold is a slice of every model's rows
    assert set(table.loc[table["model"] == "bm25", "fold"]) == {"even", "odd"}
    assert "fold" in slice_columns(table)
    assert group_members(table)["cv"] == ("folds", ["f1", "f2"])


def test_fold_queries_files_and_queries_in_no_fold(tmp_path: Path) -> None:
    root = make_group_bundle(
        tmp_path, FOLDS.replace("}\n", '}\nfold_queries = { even = "web/even.index", odd = '
                                '"web/odd.index" }\n'),
    )  # fmt: skip
    (root / "web" / "even.index").write_text("".join(f"q{i}\n" for i in range(0, 10, 2)))
    (root / "web" / "odd.index").write_text("".join(f"q{i}\n" for i in range(1, 10, 2)))
    table, _ = _table(root)
    cv = table.loc[table["model"] == "cv"].set_index("query_id")
    outside = [f"q{i}" for i in range(10, N_QUERIES)]
    assert (cv.loc[outside, "fold"] == "(none)").all()
    assert (cv.loc[outside, "hit@1"] == 0).all()
    assert cv.loc[outside, "missing_from_run"].all()


def test_overlapping_fold_runs_are_an_error(tmp_path: Path) -> None:
    root = make_group_bundle(tmp_path, '[datasets.web.groups.cv]\nfolds = {a = "s1", b = "s2"}\n')
    with pytest.raises(InputError, match="answered by the runs of folds 'a' and 'b'"):
        _table(root)


def test_evaluate_bundle_writes_the_group_rows(tmp_path: Path) -> None:
    """evaluate --bundle: the groups' rows (seed means, each query's fold run) beside the runs',
    the fold column and the seed spread, as in the app's table."""
    root = make_group_bundle(tmp_path / "b", SEEDS + FOLDS)
    out = tmp_path / "pq.csv"
    done = run_main("evaluate", "--bundle", root, "--dataset", "web", "--out", out)
    assert done.returncode == 0, done.stderr
    written = pd.read_csv(out, dtype={"query_id": str, "fold": str})
    assert list(written.columns) == ["model", "query_id", "hit@1", "mrr", "fold", "hit@1_seed_sd",
                                     "mrr_seed_sd"]  # fmt: skip
    table, _ = _table(root)
    for model in ("dense", "cv", "bm25"):
        mine = written.loc[written["model"] == model].set_index("query_id")
        theirs = table.loc[table["model"] == model].set_index("query_id")
        np.testing.assert_allclose(mine["mrr"], theirs.loc[mine.index, "mrr"], rtol=0, atol=1e-15)
        assert (mine["fold"] == theirs.loc[mine.index, "fold"]).all()
    seeds = written.loc[written["model"].isin(["s1", "s2", "s3"])]
    sd = seeds.pivot_table(index="query_id", columns="model", values="mrr").std(axis=1, ddof=1)
    dense = written.loc[written["model"] == "dense"].set_index("query_id")["mrr_seed_sd"]
    np.testing.assert_allclose(dense.loc[sd.index], sd)
    mean = written.loc[written["model"] == "dense", "mrr"].mean()
    assert re.search(rf"^dense\s+\S+\s+{mean:.4f}$", done.stdout, flags=re.M)


# --------------------------------------------------------------------------- two-level bootstrap


def _simulated(rng: np.random.Generator, n: int, s: int, seed_sd: float) -> np.ndarray:
    """Binary hits: query difficulty on the logit scale, a seed's shift, Bernoulli draws."""
    difficulty = rng.normal(0.0, 1.5, n)
    shift = rng.normal(0.0, seed_sd, s)
    return (rng.random((n, s)) < expit(difficulty[:, None] + shift[None, :])).astype(float)


def _truth(seed_sd: float) -> float:
    rng = np.random.default_rng(99)
    return float(expit(rng.normal(0, 1.5, 2_000_000) + rng.normal(0, seed_sd, 2_000_000)).mean())


def _coverage(seed_sd: float, reps: int) -> tuple[float, float]:
    """Coverage of the 95% two-level interval and of the queries-only interval of the seed
    means, over ``reps`` simulated experiments of 200 queries and 5 seeds."""
    rng = np.random.default_rng(2024)
    truth = _truth(seed_sd)
    two_level = one_level = 0
    for rep in range(reps):
        x = _simulated(rng, 200, 5, seed_sd)
        low, high = two_level_ci(x, n_resamples=1000, seed=rep)
        two_level += low <= truth <= high
        low, high = bootstrap_ci(x.mean(axis=1), n_resamples=1000, seed=rep)
        one_level += low <= truth <= high
    return two_level / reps, one_level / reps


def test_two_level_bootstrap_covers_95_percent_on_simulated_seeds() -> None:
    """1,000 simulated experiments (200 queries, 5 seeds, binary hits; a seed shifts the
    logit by N(0, 0.1), the mean by about 0.02, as seeds of a retriever do): the 95% interval
    holds the population mean (over queries and seeds) within Monte-Carlo error."""
    reps = 1000
    two_level, _ = _coverage(0.1, reps)
    error = 3 * np.sqrt(0.95 * 0.05 / reps)  # three Monte-Carlo standard errors
    assert abs(two_level - 0.95) <= error, two_level


def test_resampling_seeds_matters_when_seeds_differ_much() -> None:
    """With a large seed effect (logit N(0, 0.3): means about 6 points apart) resampling the
    queries alone misses the seed variance (81 % here); the two-level interval stays close to
    95 % (92 %: five seeds estimate their variance from 4 degrees of freedom)."""
    two_level, one_level = _coverage(0.3, 400)
    assert one_level < 0.85
    assert two_level > 0.9
    assert two_level - one_level > 0.08


def test_two_level_ci_edge_cases() -> None:
    x = np.random.default_rng(0).random((150, 1))
    assert two_level_ci(x, seed=3) == bootstrap_ci(x[:, 0], seed=3)
    y = np.random.default_rng(1).random((150, 4))
    assert two_level_ci(y, seed=3) == two_level_ci(y, seed=3)
    low, high = two_level_ci(y, seed=3)
    assert low < y.mean() < high
    assert np.isnan(two_level_ci(np.zeros((0, 3)))[0])
    with pytest.raises(ValueError, match="NaN"):
        two_level_ci(np.array([[0.1, np.nan]]))


# --------------------------------------------------------------------------- paired tests


def test_compare_tests_seed_means_against_scipy(tmp_path: Path) -> None:
    root = make_group_bundle(tmp_path, SEEDS)
    runs = root / "web" / "runs"
    out = tmp_path / "cmp.json"
    done = run_main(
        "compare", "--qrels", root / "web" / "qrels.txt", "--run", f"base={runs / 'bm25.run'}",
        *[x for s in ("s1", "s2", "s3") for x in ("--run", f"{s}={runs / (s + '.run')}")],
        "--group", "dense=s1,s2,s3", "--metrics", "mrr,hit@1", "--out", out,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = {r["metric"]: r for r in json.loads(out.read_text())}
    table, _ = _table(root)
    for metric in ("mrr", "hit@1"):
        wide = table.pivot_table(index="query_id", columns="model", values=metric)
        a = wide["bm25"].to_numpy()
        b = wide[["s1", "s2", "s3"]].mean(axis=1).to_numpy()
        row = rows[metric]
        assert (row["a"], row["b"], row["seeds_a"], row["seeds_b"]) == ("base", "dense", 1, 3)
        assert row["mean_b"] == pytest.approx(b.mean(), rel=1e-12)
        assert row["p_t"] == pytest.approx(sps.ttest_rel(a, b).pvalue, rel=1e-12)
        wilcoxon = sps.wilcoxon(a - b, zero_method="wilcox").pvalue
        assert row["p_wilcoxon"] == pytest.approx(wilcoxon, rel=1e-12)
    assert len(rows) == 2  # the seeds are compared as one model, not one by one
    spec = read_manifest(root).datasets["web"]
    seeds = [load_model_run(spec, m) for m in ("s1", "s2", "s3")]
    library = analysis.compare(
        {"bm25": load_model_run(spec, "bm25"), "dense": seeds}, load_dataset(spec).qrels, ["mrr"]
    )
    assert library["p_t"].iloc[0] == pytest.approx(rows["mrr"]["p_t"], rel=1e-12)
    assert list(library[["seeds_a", "seeds_b"]].iloc[0]) == [1, 3]


def test_compare_group_errors_are_one_line(tmp_path: Path) -> None:
    root = make_group_bundle(tmp_path, "")
    runs = root / "web" / "runs"
    base = ["compare", "--qrels", root / "web" / "qrels.txt", "--run", f"a={runs / 's1.run'}",
            "--run", f"b={runs / 's2.run'}"]  # fmt: skip
    for group, message in (("x=a", "2+ runs"), ("x=a,zz", "no run named 'zz'"),
                           ("a=a,b", "already taken")):  # fmt: skip
        done = run_main(*base, "--group", group)
        assert done.returncode == 2
        assert message in done.stderr
        assert done.stderr.count("\n") == 1


def test_compare_rows_count_the_seed_pairs_that_flip_the_sign() -> None:
    from analysis.stats.runs import compare_per_query

    a = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 0.0], [1.0, 1.0]])  # seed means 0.75, 0.25
    b = np.full(4, 0.4)
    table = compare_per_query({"A": {"m": a.mean(axis=1)}, "B": {"m": b}}, ["m"],
                              seeds={"A": 2}, per_seed={"A": {"m": a}})  # fmt: skip
    assert table[["seeds_a", "seed_pairs", "seed_flips"]].iloc[0].tolist() == [2, 2, 1]
    single = compare_per_query({"A": {"m": a[:, 0]}, "B": {"m": b}}, ["m"])
    assert single[["seed_pairs", "seed_flips"]].iloc[0].tolist() == [1, 0]


def test_seed_sensitivity_counts_sign_flips() -> None:
    a = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 0.0], [1.0, 1.0]])  # seed means 0.75, 0.25
    b = np.array([[0.4], [0.4], [0.4], [0.4]])
    result = seed_sensitivity(a, b)
    np.testing.assert_allclose(result.deltas, [[0.35], [-0.15]])
    assert result.delta == pytest.approx(0.1)
    assert (result.n_pairs, result.n_flips) == (2, 1)  # seed 2 of A loses to B
    assert result.query_unstable.tolist() == [True, True, False, False]
    assert result.n_unstable == 2
    with pytest.raises(ValueError, match="equal n"):
        seed_sensitivity(a, b[:2])


def test_seed_sensitivity_sees_no_flip_in_rounding_noise() -> None:
    """Two seeds equal to B: every difference is 0, but the mean over a (n, 2) array and over a
    (n, 1) array round differently (delta 1.1e-16 here): no seed pair flips a zero."""
    x = np.random.default_rng(0).random(300)
    a, b = np.c_[x, x], x[:, None]
    assert a.mean() != b.mean()  # the rounding this test is about
    result = seed_sensitivity(a, b)
    assert result.n_flips == 0
    # a real difference still flips: seed 2 of A below B, seed 1 above
    assert seed_sensitivity(np.c_[x + 0.01, x - 0.001], b).n_flips == 1


def test_two_level_cis_of_several_datasets_are_each_datasets_own() -> None:
    """A ``[dataset,] model`` table of two datasets with the same query ids and a seed group in
    each: every row's interval is that of its dataset alone (no pooling, no duplicate ids)."""
    from analysis.stats import mean_ci

    rng = np.random.default_rng(0)
    parts = []
    for dataset, shift in (("d1", 0.0), ("d2", 0.5)):
        values = np.minimum(1.0, rng.random((40, 3)) * 0.5 + shift)
        for j in range(3):
            parts.append(pd.DataFrame({"dataset": dataset, "model": f"g#{j + 1}", "run_group": "g",
                                       "seeds": 1, "query_id": [str(q) for q in range(40)],
                                       "mrr": values[:, j]}))  # fmt: skip
        parts.append(pd.DataFrame({"dataset": dataset, "model": "g", "run_group": "", "seeds": 3,
                                   "query_id": [str(q) for q in range(40)],
                                   "mrr": values.mean(axis=1)}))  # fmt: skip
    table = pd.concat(parts, ignore_index=True)
    ci = mean_ci(table, ["mrr"], by=["dataset", "model"], n_resamples=500)
    both = with_two_level_cis(ci, table, n_resamples=500).set_index(["dataset", "model"])
    for dataset in ("d1", "d2"):
        sub = table[table["dataset"] == dataset]
        alone = mean_ci(sub, ["mrr"], by=["dataset", "model"], n_resamples=500)
        one = with_two_level_cis(alone, sub, n_resamples=500).set_index(["dataset", "model"])
        got = both.loc[(dataset, "g"), ["ci_low", "ci_high"]].tolist()
        assert got == one.loc[(dataset, "g"), ["ci_low", "ci_high"]].tolist()
    assert both.loc[("d2", "g"), "ci_low"] > both.loc[("d1", "g"), "ci_high"]


# --------------------------------------------------------------------------- leaderboard


def test_leaderboard_group_row_has_the_two_level_ci_and_no_test_against_its_seeds(
    tmp_path: Path,
) -> None:
    table, spec = _table(make_group_bundle(tmp_path, SEEDS))
    board = leaderboard(table, ["mrr"], models=spec.models, n_resamples=2000)
    row = board.set_index("model").loc["dense"]
    assert (row["kind"], row["runs"]) == ("seeds", 3)
    _, values = model_matrix(table, "dense", "mrr")
    assert values.shape == (N_QUERIES, 3)
    assert (row["mrr ci_low"], row["mrr ci_high"]) == two_level_ci(values, n_resamples=2000)
    assert row["mrr"] == pytest.approx(values.mean())
    letters = dict(zip(board["model"], board["letter"], strict=True))
    for seed in ("s1", "s2", "s3"):
        assert letters[seed] not in row["mrr sig"]
        assert letters["dense"] not in board.set_index("model").loc[seed, "mrr sig"]
    html = leaderboard_html(board, ["mrr"])
    assert '<small class="group" data-kind="seeds">3 seeds, mean</small>' in html


# --------------------------------------------------------------------------- ad-hoc bundles


def test_adhoc_bundles_carry_groups_and_metadata(tmp_path: Path) -> None:
    from analysis.io.adhoc import save_bundle

    root = make_group_bundle(tmp_path / "src", "")
    runs = {m: root / "web" / "runs" / f"{m}.run" for m in ("bm25", "s1", "s2", "f1", "f2")}
    out = save_bundle(
        runs, root / "web" / "qrels.txt", tmp_path / "adhoc",
        groups={"dense": ["s1", "s2"], "cv": {"even": "f1", "odd": "f2"}},
        metadata={"bm25": {"latency_ms": 2}, "dense": {"cost": 0.5}},
    )  # fmt: skip
    spec = read_manifest(out).datasets["adhoc"]
    assert spec.groups["dense"].members == ("s1", "s2")
    assert (spec.groups["cv"].folds, spec.groups["cv"].members) == (("even", "odd"), ("f1", "f2"))
    assert spec.run_metadata == {"bm25": {"latency_ms": 2.0}, "dense": {"cost": 0.5}}
    done = run_main(
        "bundle", "--run", f"a={runs['s1']}", "--run", f"b={runs['s2']}", "--run",
        f"f1={runs['f1']}", "--run", f"f2={runs['f2']}", "--qrels", root / "web" / "qrels.txt",
        "--group", "ab=a,b", "--folds", "cv=f1,f2", "--out", tmp_path / "cli",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    written = read_manifest(tmp_path / "cli").datasets["adhoc"]
    assert written.groups["ab"].members == ("a", "b")
    assert (written.groups["cv"].kind, written.groups["cv"].folds) == ("folds", ("f1", "f2"))
    bad = run_main("bundle", "--run", f"a={runs['s1']}", "--qrels", root / "web" / "qrels.txt",
                  "--group", "ab=a,zz", "--out", tmp_path / "bad")  # fmt: skip
    assert bad.returncode == 2
    assert "'zz' not a run of the dataset" in bad.stderr
    assert not (tmp_path / "bad").exists()


# --------------------------------------------------------------------------- against pytrec_eval

PYTREC_KEYS = {"mrr": "recip_rank", "ndcg@10": "ndcg_cut_10", "hit@1": "success_1"}


def _pytrec_values(run: pd.DataFrame, qrels: pd.DataFrame, queries: list[str]) -> dict:
    """pytrec_eval's per-query values of :data:`PYTREC_KEYS` in ``queries`` order (a query
    the run does not answer scores 0)."""
    import pytrec_eval

    from tests.helpers import pytrec_dicts

    run_d, qrels_d = pytrec_dicts(run, qrels)
    got = pytrec_eval.RelevanceEvaluator(qrels_d, {"recip_rank", "ndcg_cut.10", "success.1"})
    values = got.evaluate(run_d)
    return {m: np.array([values.get(q, {}).get(k, 0.0) for q in queries])
            for m, k in PYTREC_KEYS.items()}  # fmt: skip


def _noisy(run: pd.DataFrame, seed: int) -> pd.DataFrame:
    """Another model over the same candidates: the run's scores plus noise."""
    noise = np.random.default_rng(seed).normal(0.0, 4.0, len(run))
    return run.assign(score=run["score"].to_numpy() + noise)


def _write_trec(run: pd.DataFrame, path: Path) -> Path:
    rows = zip(run["query_id"], run["doc_id"], run["score"], strict=True)
    path.write_text("".join(f"{q} Q0 {d} 0 {s!r} x\n" for q, d, s in rows))
    return path


def test_seed_means_and_per_query_rows_equal_pytrec_eval(tmp_path: Path) -> None:
    """compare --group: every query's value of the group (``--per-query``) is the mean of
    pytrec_eval's values of its seeds; the means and the paired tests are scipy's on them."""
    from tests.helpers import random_collection

    base, qrels = random_collection(41, "graded", n_queries=80)
    seeds = [_noisy(base, 42 + i) for i in range(3)]
    qrels_path = tmp_path / "qrels.txt"
    qrels_path.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in qrels.itertuples(index=False)))
    runs = ["--run", f"base={_write_trec(base, tmp_path / 'base.run')}"]
    for i, run in enumerate(seeds):
        runs += ["--run", f"s{i}={_write_trec(run, tmp_path / f's{i}.run')}"]
    out, per = tmp_path / "cmp.json", tmp_path / "per.csv"
    done = run_main(
        "compare", "--qrels", qrels_path, *runs, "--group", "dense=s0,s1,s2",
        "--metrics", ",".join(PYTREC_KEYS), "--out", out, "--per-query", per,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    queries = list(dict.fromkeys(qrels["query_id"].astype(str)))
    a = _pytrec_values(base, qrels, queries)
    per_seed = [_pytrec_values(run, qrels, queries) for run in seeds]
    rows = {r["metric"]: r for r in json.loads(out.read_text())}
    written = pd.read_csv(per, dtype={"query_id": str}).set_index(["metric", "query_id"])
    for metric in PYTREC_KEYS:
        b = np.mean([v[metric] for v in per_seed], axis=0)
        mine = written.loc[metric].loc[queries]
        np.testing.assert_allclose(mine["value_a"], a[metric], rtol=0, atol=1e-12)
        np.testing.assert_allclose(mine["value_b"], b, rtol=0, atol=1e-12)
        row = rows[metric]
        assert (row["n"], row["seeds_a"], row["seeds_b"]) == (len(queries), 1, 3)
        assert row["mean_b"] == pytest.approx(b.mean(), rel=1e-12)
        assert row["p_t"] == pytest.approx(sps.ttest_rel(a[metric], b).pvalue, rel=1e-12)
        wilcoxon = sps.wilcoxon(a[metric] - b, zero_method="wilcox").pvalue
        assert row["p_wilcoxon"] == pytest.approx(wilcoxon, rel=1e-12)
        # seed pairs: bm25 against each seed; a flip is a seed whose sign differs
        pairs = [np.mean(a[metric] - v[metric]) for v in per_seed]
        flips = sum(np.sign(d) != np.sign(row["delta"]) for d in pairs)
        assert (row["seed_pairs"], row["seed_flips"]) == (3, flips)
        said = f"{flips} of 3" if flips else "none of the"
        assert f"{metric}, base - dense: {said} seed pairs give the difference" in done.stdout


def test_fold_and_seed_rows_equal_pytrec_eval() -> None:
    """The per-query table's group rows: a fold group's value of a query is pytrec_eval's
    value of the run of the query's fold (0 outside every fold), a seed group's the mean of
    its seeds' values."""
    from analysis.io.groups import RunGroup
    from tests.helpers import random_collection

    run_a, qrels = random_collection(51, "unique", n_queries=60)
    run_b = _noisy(run_a, 52)
    queries = list(dict.fromkeys(qrels["query_id"].astype(str)))
    even = {f"q{i}" for i in range(0, 60, 2)}
    odd = {f"q{i}" for i in range(1, 60, 2)}
    fold_a = run_a.loc[run_a["query_id"].astype(str).isin(even)]
    fold_b = run_b.loc[run_b["query_id"].astype(str).isin(odd)]
    runs = {"a": run_a, "b": run_b, "fa": fold_a, "fb": fold_b}
    groups = {
        "cv": RunGroup("cv", "folds", ("fa", "fb"), ("even", "odd")),
        "dense": RunGroup("dense", "seeds", ("a", "b")),
    }
    frame = pd.DataFrame({"query_id": queries, "text": "t"})
    table, _ = per_query_table(frame, qrels, runs, dataset="d", metrics=list(PYTREC_KEYS),
                               groups=groups)  # fmt: skip
    by_model = {m: rows.set_index("query_id").loc[queries] for m, rows in table.groupby("model")}
    ref = {name: _pytrec_values(run, qrels, queries) for name, run in runs.items()}
    for metric in PYTREC_KEYS:
        expected = [ref["fa"][metric][i] if q in even else ref["fb"][metric][i] if q in odd
                    else 0.0 for i, q in enumerate(queries)]  # fmt: skip
        np.testing.assert_allclose(by_model["cv"][metric], expected, rtol=0, atol=1e-12)
        seeds = (ref["a"][metric] + ref["b"][metric]) / 2
        np.testing.assert_allclose(by_model["dense"][metric], seeds, rtol=0, atol=1e-12)
    folds = by_model["cv"]["fold"]
    assert set(folds[[q for q in queries if q.startswith("m")]]) == {"(none)"}
    assert (folds[sorted(even & set(queries))] == "even").all()
    assert (folds[sorted(odd & set(queries))] == "odd").all()


def test_compare_pools_a_fold_group_and_tests_it_on_every_query(tmp_path: Path) -> None:
    """compare --folds: the fold runs are one model, each query scored by its fold's run
    (pytrec_eval's value of that run), tested against the other run on every query (scipy);
    the library call gives the same rows; runs of two folds answering a query are refused."""
    from tests.helpers import random_collection

    base, qrels = random_collection(61, "graded", n_queries=70)
    model = _noisy(base, 62)
    ids = model["query_id"].astype(str)
    even = ids.isin({f"q{i}" for i in range(0, 70, 2)})
    parts = {"f1": model.loc[even], "f2": model.loc[~even]}  # f2 also answers the x* queries
    qrels_path = tmp_path / "qrels.txt"
    qrels_path.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in qrels.itertuples(index=False)))
    runs = ["--run", f"bm25={_write_trec(base, tmp_path / 'bm25.run')}"]
    for fold, run in parts.items():
        runs += ["--run", f"{fold}={_write_trec(run, tmp_path / f'{fold}.run')}"]
    out, per = tmp_path / "cmp.json", tmp_path / "per.csv"
    done = run_main(
        "compare", "--qrels", qrels_path, *runs, "--folds", "ltr=f1,f2",
        "--metrics", ",".join(PYTREC_KEYS), "--out", out, "--per-query", per,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    queries = list(dict.fromkeys(qrels["query_id"].astype(str)))
    a, b = _pytrec_values(base, qrels, queries), _pytrec_values(model, qrels, queries)
    rows = json.loads(out.read_text())
    assert [(r["a"], r["b"], r["seeds_b"]) for r in rows] == [("bm25", "ltr", 1)] * 3
    written = pd.read_csv(per, dtype={"query_id": str}).set_index(["metric", "query_id"])
    for row in rows:
        metric = row["metric"]
        np.testing.assert_allclose(written.loc[metric].loc[queries, "value_b"], b[metric],
                                   rtol=0, atol=1e-12)  # fmt: skip
        assert row["n"] == len(queries)
        assert row["mean_b"] == pytest.approx(b[metric].mean(), rel=1e-12)
        assert row["p_t"] == pytest.approx(sps.ttest_rel(a[metric], b[metric]).pvalue, rel=1e-12)
    library = analysis.compare({"bm25": base, "ltr": parts}, qrels, list(PYTREC_KEYS))
    np.testing.assert_allclose(library["p_t"], [r["p_t"] for r in rows], rtol=1e-12)
    # a query answered by two folds' runs, a run in two groups
    _write_trec(model, tmp_path / "f2.run")
    bad = run_main("compare", "--qrels", qrels_path, *runs, "--folds", "ltr=f1,f2")
    assert bad.returncode == 2
    assert re.search(r"f2\.run: fold group 'ltr': query 'q\d+' is also answered by .*f1\.run",
                     bad.stderr)  # fmt: skip
    assert bad.stderr.count("\n") == 1
    with pytest.raises(ValueError, match="answered by the runs of folds 'f1' and 'f2'"):
        analysis.compare({"bm25": base, "ltr": {"f1": parts["f1"], "f2": model}}, qrels)
    both = run_main("compare", "--qrels", qrels_path, *runs, "--group", "g=bm25,f1",
                   "--folds", "ltr=f1,f2")  # fmt: skip
    assert both.returncode == 2
    assert "run 'f1' is already in group 'g'" in both.stderr


# --------------------------------------------------------------------------- folds in the report


def test_metrics_per_fold_equal_the_means_of_each_folds_queries(tmp_path: Path) -> None:
    """fold_summary and the report's "Metrics per fold": each model's mean on each fold's
    queries and pooled, computed here from the per-query table by hand."""
    from analysis.present.report.build import bundle_content
    from analysis.present.report.document import render_html
    from analysis.stats.groups import fold_summary

    root = make_group_bundle(tmp_path, FOLDS)
    table, spec = _table(root)
    summary = fold_summary(table, "fold", ["hit@1", "mrr"], spec.models, n_resamples=500)
    got = summary.set_index(["model", "fold", "metric"])
    for model in spec.models:
        rows = table.loc[table["model"] == model]
        for metric in ("hit@1", "mrr"):
            for fold in ("even", "odd"):
                mine = rows.loc[rows["fold"] == fold, metric]
                assert got.loc[(model, fold, metric), "mean"] == pytest.approx(mine.mean())
                assert got.loc[(model, fold, metric), "n"] == len(mine) == N_QUERIES // 2
            pooled = got.loc[(model, "pooled", metric)]
            assert (pooled["mean"], pooled["n"]) == (pytest.approx(rows[metric].mean()), N_QUERIES)
            assert pooled["ci_low"] <= pooled["mean"] <= pooled["ci_high"]
    # the fold group scores each fold with its own run: f1 is strong, f2 weak
    assert got.loc[("cv", "even", "hit@1"), "mean"] > got.loc[("cv", "odd", "hit@1"), "mean"]
    content = bundle_content(root)
    (section,) = [s for s in content.sections if s.key == "folds"]
    (block,) = section.blocks
    shown = block.table.set_index(["model", "fold"])
    assert list(shown.columns) == ["n", "hit@1", "mrr"]
    assert shown.loc[("cv", "pooled"), "n"] == N_QUERIES
    cell = shown.loc[("cv", "even"), "hit@1"]
    assert cell.startswith(f"{got.loc[('cv', 'even', 'hit@1'), 'mean']:.3f} [")
    assert "Metrics per fold on web (fold)" in render_html(content)
    without = bundle_content(make_group_bundle(tmp_path / "seeds", SEEDS))
    assert "folds" not in [s.key for s in without.sections]


def test_compare_refuses_runs_that_are_no_dataframes_in_one_line() -> None:
    """A dict run ``{query_id: {doc_id: score}}`` was taken for a fold group and failed with
    KeyError 'query_id' deep in pandas; a list of runs failed with AttributeError."""
    run = pd.DataFrame({"query_id": ["1", "2"], "doc_id": ["a", "b"], "score": [1.0, 1.0]})
    qrels = pd.DataFrame({"query_id": ["1", "2"], "doc_id": ["a", "b"], "relevance": [1, 1]})
    as_dict = {"1": {"a": 1.0}, "2": {"b": 1.0}}
    with pytest.raises(InputError) as err:
        analysis.compare({"bm25": run, "dense": as_dict}, qrels, ["mrr"], n_resamples=10)
    assert str(err.value) == (
        "run 'dense': '1': a dict is not a DataFrame (a mapping is a fold group {fold: "
        "DataFrame}); read a run with analysis.as_run()"
    )
    with pytest.raises(InputError, match=r"^run 'dense': 'dense#2': a dict is not a DataFrame"):
        analysis.compare({"bm25": run, "dense": [run, as_dict]}, qrels, ["mrr"], n_resamples=10)
    with pytest.raises(InputError, match=r"^runs: list: give the runs as a mapping"):
        analysis.compare([run, run], qrels, ["mrr"], n_resamples=10)
    dense = analysis.as_run(as_dict)
    got = analysis.compare({"bm25": run, "dense": dense}, qrels, ["mrr"], n_resamples=10)
    assert got[["a", "b", "delta"]].to_numpy().tolist() == [["bm25", "dense", 0.0]]
