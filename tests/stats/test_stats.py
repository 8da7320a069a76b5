"""Tests for analysis.stats: bootstrap CIs, paired tests, Holm, slices and buckets."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from analysis.stats import (
    NGOLD_BUCKETS,
    PairedComparison,
    bootstrap_ci,
    bucket_numeric,
    compare_slices,
    holm,
    mean_ci,
    n_gold_bucket,
    paired_comparison,
    slice_finder,
    win_tie_loss,
)


def _mean_diff(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x - y, axis=axis)


def _scipy_randomization(a: np.ndarray, b: np.ndarray, n_resamples: float, seed: int = 0) -> float:
    res = sps.permutation_test(
        (a, b),
        _mean_diff,
        permutation_type="samples",
        vectorized=True,
        alternative="two-sided",
        n_resamples=n_resamples,
        rng=np.random.default_rng(seed),
    )
    return float(res.pvalue)


# --------------------------------------------------------------------------- bootstrap_ci


@pytest.mark.parametrize(
    "values",
    [
        np.random.default_rng(1).random(300),  # continuous: index-matrix kernel
        (np.random.default_rng(2).random(3000) < 0.3).astype(float),  # binary: multinomial kernel
        1.0 / np.random.default_rng(3).integers(1, 101, 5000),  # MRR-like: multinomial kernel
        # 70% zeros + continuous rest: multinomial for the zeros, index draws for the rest
        np.random.default_rng(4).random(3000) * (np.random.default_rng(5).random(3000) < 0.3),
    ],
    ids=["continuous", "binary", "mrr", "zero-inflated"],
)
def test_bootstrap_ci_covers_mean_and_agrees_with_scipy(values: np.ndarray) -> None:
    low, high = bootstrap_ci(values, n_resamples=20_000, seed=0)
    assert low < values.mean() < high
    ref = sps.bootstrap(
        (values,), np.mean, method="percentile", n_resamples=20_000, rng=np.random.default_rng(9)
    ).confidence_interval
    se = values.std(ddof=1) / np.sqrt(values.size)
    # Monte-Carlo error of a 2.5% quantile with B = 20,000 is ~0.02 standard errors.
    assert abs(low - ref.low) < 0.15 * se
    assert abs(high - ref.high) < 0.15 * se


def test_bootstrap_kernel_follows_ties(monkeypatch: pytest.MonkeyPatch) -> None:
    from analysis.stats import bootstrap as kernels  # where the kernels live

    calls: list[tuple[str, int]] = []
    split, index = kernels._split_means, kernels._index_means

    def spy_split(
        frequent: np.ndarray, counts: np.ndarray, rest: np.ndarray, *args: object
    ) -> np.ndarray:
        calls.append(("split", rest.size))
        return split(frequent, counts, rest, *args)

    def spy_index(x: np.ndarray, *args: object) -> np.ndarray:
        calls.append(("index", x.shape[1]))
        return index(x, *args)

    monkeypatch.setattr(kernels, "_split_means", spy_split)
    monkeypatch.setattr(kernels, "_index_means", spy_index)
    rng = np.random.default_rng(10)
    bootstrap_ci(rng.random(500), n_resamples=100)
    bootstrap_ci(rng.random(500) * (rng.random(500) < 0.2), n_resamples=100)
    bootstrap_ci((rng.random(500) < 0.5).astype(float), n_resamples=100)
    assert calls[0] == ("index", 500)
    assert calls[1][0] == "split"
    assert 60 < calls[1][1] < 140  # only the ~100 non-zero values go through index draws
    assert calls[2] == ("split", 0)


def test_bootstrap_ci_width_shrinks_with_n() -> None:
    rng = np.random.default_rng(4)
    small = bootstrap_ci(rng.random(50), seed=1)
    large = bootstrap_ci(rng.random(5000), seed=1)
    # width ~ 1/sqrt(n): a 100x larger sample gives a ~10x narrower interval
    assert (large[1] - large[0]) < (small[1] - small[0]) / 5


def test_bootstrap_ci_seeded() -> None:
    values = np.random.default_rng(5).random(200)
    assert bootstrap_ci(values, seed=7) == bootstrap_ci(values, seed=7)
    assert bootstrap_ci(values, seed=7) != bootstrap_ci(values, seed=8)
    assert bootstrap_ci(pd.Series(values), seed=7) == bootstrap_ci(list(values), seed=7)


def test_bootstrap_ci_edge_cases() -> None:
    assert all(np.isnan(bootstrap_ci([])))
    assert bootstrap_ci([0.25]) == (0.25, 0.25)
    assert bootstrap_ci([0.5] * 40) == (0.5, 0.5)


def test_bootstrap_ci_coverage_is_near_nominal() -> None:
    # 400 independent samples of n = 100 from N(0, 1): ~95% of the intervals contain 0.
    rng = np.random.default_rng(6)
    df = pd.DataFrame({"g": np.repeat(np.arange(400), 100), "v": rng.normal(size=40_000)})
    out = mean_ci(df, "v", ["g"], n_resamples=2000, seed=3)
    coverage = ((out["ci_low"] <= 0) & (out["ci_high"] >= 0)).mean()
    assert 0.90 <= coverage <= 0.99


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"values": [0.1, np.nan]}, "NaN"),
        ({"values": [0.1, np.inf]}, "infinite"),
        ({"values": [[0.1, 0.2]]}, "1-D"),
        ({"values": [0.1], "confidence": 1.0}, "confidence"),
        ({"values": [0.1], "n_resamples": 0}, "n_resamples"),
        ({"values": [0.1], "seed": -1}, "seed"),
    ],
)
def test_bootstrap_ci_validation(kwargs: dict, message: str) -> None:
    values = kwargs.pop("values")
    with pytest.raises(ValueError, match=message):
        bootstrap_ci(values, **kwargs)


# --------------------------------------------------------------------------- mean_ci


def _grouped_table() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    sizes = {"a": 40, "b": 40, "c": 7, "d": 1, "e": 400, "f": 400}  # equal sizes share indices
    groups = np.concatenate([[g] * n for g, n in sizes.items()])
    rng.shuffle(groups)
    n = groups.size
    return pd.DataFrame(
        {
            "g": groups,
            "cat": pd.Categorical(rng.choice(["z", "y"], n), categories=["z", "y"]),
            "cont": rng.random(n),
            "hit": (rng.random(n) < 0.4).astype(float),
            "zinf": rng.random(n) * (rng.random(n) < 0.3),  # mostly zeros
        }
    )


@pytest.mark.parametrize("metric", ["cont", "hit", "zinf"])
def test_mean_ci_equals_bootstrap_ci_per_group(metric: str) -> None:
    df = _grouped_table()
    out = mean_ci(df, metric, ["g"], n_resamples=3000, seed=11)
    assert out["g"].tolist() == ["a", "b", "c", "d", "e", "f"]
    for row in out.itertuples():
        values = df.loc[df["g"] == row.g, metric].to_numpy()
        assert row.n == values.size
        assert row.mean == values.mean()
        assert (row.ci_low, row.ci_high) == bootstrap_ci(values, n_resamples=3000, seed=11)


def test_mean_ci_two_keys_several_metrics_and_missing_key() -> None:
    df = _grouped_table()
    df.loc[df.index[:5], "g"] = None
    out = mean_ci(df, ["cont", "hit"], ["cat", "g"], n_resamples=500, seed=2)
    assert list(out.columns) == ["cat", "g", "metric", "n", "mean", "ci_low", "ci_high"]
    assert out["cat"].iloc[0] == "z"  # categorical order kept
    assert out["g"].isna().any()  # missing key is its own group
    single = mean_ci(df, "hit", ["cat", "g"], n_resamples=500, seed=2)
    both_hit = out[out["metric"] == "hit"].drop(columns="metric").reset_index(drop=True)
    pd.testing.assert_frame_equal(both_hit, single)
    assert out.groupby("metric")["n"].sum().tolist() == [len(df), len(df)]


def test_mean_ci_without_groups_and_nan_policy() -> None:
    df = pd.DataFrame({"v": [0.0, 1.0, 1.0, np.nan]})
    with pytest.raises(ValueError, match="NaN"):
        mean_ci(df, "v")
    out = mean_ci(df, "v", nan_policy="omit")
    assert len(out) == 1
    assert out.loc[0, "n"] == 3
    assert out.loc[0, "mean"] == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="not found"):
        mean_ci(df, "nope")


def test_mean_ci_on_many_continuous_groups_equals_bootstrap_ci_per_group() -> None:
    # the vectorized worst case (continuous values, groups of ~500); speed lives in bench/
    rng = np.random.default_rng(8)
    n = 10_000
    df = pd.DataFrame({"g": rng.integers(0, 20, n), "v": rng.random(n)})
    out = mean_ci(df, "v", ["g"], n_resamples=2_000)
    assert len(out) == 20
    for g in (0, 7, 19):
        expected = bootstrap_ci(df.loc[df["g"] == g, "v"], n_resamples=2_000, seed=0)
        row = out.set_index("g").loc[g]
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(expected, rel=1e-12)


# --------------------------------------------------------------------------- paired_comparison


def _paired_data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = np.round(rng.random(n), 1)  # rounded: ties between queries and some zero differences
    b = np.round(np.clip(a - 0.1 + rng.normal(0, 0.2, n), 0, 1), 1)
    return a, b


def test_paired_tests_equal_scipy() -> None:
    a, b = _paired_data(60, 1)
    assert (a == b).any()  # zero differences are present
    res = paired_comparison(a, b)
    assert res.p_t == pytest.approx(sps.ttest_rel(a, b).pvalue, rel=1e-12)
    assert res.p_wilcoxon == pytest.approx(sps.wilcoxon(a, b).pvalue, rel=1e-12)
    assert res.p_wilcoxon == pytest.approx(
        sps.wilcoxon(a - b, zero_method="wilcox").pvalue, rel=1e-12
    )
    d = a - b
    assert res.effect_size == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-12)
    assert res.delta == pytest.approx(d.mean())
    assert (res.mean_a, res.mean_b) == (pytest.approx(a.mean()), pytest.approx(b.mean()))
    assert (res.ci_low, res.ci_high) == bootstrap_ci(d, seed=0)
    assert res.ci_low < res.delta < res.ci_high


def test_slice_t_pvalues_equal_scipy_ttest() -> None:
    """The slice finder's vectorized t-test p-values (``scipy.special.stdtr``, so that
    ``scipy.stats`` is not imported) are ``2 * scipy.stats.t.sf(|t|, n - 1)`` bit for bit, and
    ``scipy.stats.ttest_1samp``'s p-value up to the rounding of t."""
    from analysis.stats.paired import _t_pvalues

    rng = np.random.default_rng(4)
    rows = [rng.normal(rng.normal(), 1.0, int(n)) for n in rng.integers(2, 300, 60)]
    rows += [np.round(rng.random(int(n)) - 0.4, 1) for n in rng.integers(2, 40, 40)]
    got = _t_pvalues(rows)
    for i, d in enumerate(rows):
        if not d.any() or np.ptp(d) == 0:
            continue
        t = d.mean() / (d.std(ddof=1) / np.sqrt(d.size))
        assert got[i] == 2.0 * sps.t.sf(abs(t), d.size - 1), i
        assert got[i] == pytest.approx(sps.ttest_1samp(d, 0.0).pvalue, rel=1e-9, abs=1e-300)


@pytest.mark.parametrize("n", [2, 3, 5, 8, 10])  # scipy needs n >= 2
def test_randomization_exact_matches_scipy_permutation_test(n: int) -> None:
    a, b = _paired_data(n, 100 + n)
    b[0] = a[0]  # at least one zero difference
    res = paired_comparison(a, b, n_resamples=10_000)
    assert res.randomization_exact
    assert res.p_randomization == pytest.approx(_scipy_randomization(a, b, np.inf), rel=1e-12)


def test_randomization_exact_on_continuous_data() -> None:
    rng = np.random.default_rng(12)
    a, b = rng.random(10), rng.random(10) - 0.3
    res = paired_comparison(a, b)
    assert res.randomization_exact
    assert res.p_randomization == pytest.approx(_scipy_randomization(a, b, np.inf), rel=1e-12)
    assert res.p_randomization < 0.2


def test_randomization_monte_carlo() -> None:
    rng = np.random.default_rng(13)
    a = rng.random(40)
    b = a - 0.05 + rng.normal(0, 0.2, 40)
    res = paired_comparison(a, b, n_resamples=20_000, seed=3)
    assert not res.randomization_exact
    assert (
        res.p_randomization == paired_comparison(a, b, n_resamples=20_000, seed=3).p_randomization
    )
    assert res.p_randomization == pytest.approx(_scipy_randomization(a, b, 20_000), abs=0.02)
    # exact enumeration is used once 2**m <= n_resamples
    small = paired_comparison(a[:14], b[:14], n_resamples=2**14)
    assert small.randomization_exact
    assert small.p_randomization == pytest.approx(
        _scipy_randomization(a[:14], b[:14], np.inf), rel=1e-12
    )


def test_randomization_plus_one_convention() -> None:
    a = np.linspace(0.5, 1.0, 40)
    b = a - 0.1 - np.linspace(0, 0.05, 40)  # every difference positive
    res = paired_comparison(a, b, n_resamples=10_000)
    assert not res.randomization_exact
    # no random sign pattern reaches |T_obs|, so p = (1 + 0) / (1 + B), never 0
    assert res.p_randomization == 1 / 10_001


def test_randomization_discrete_kernel_matches_sign_test() -> None:
    # hit@1-like: differences in {-1, 0, 1}; sign flips of the +-1 differences = sign test
    rng = np.random.default_rng(14)
    a = (rng.random(2000) < 0.45).astype(float)
    b = (rng.random(2000) < 0.40).astype(float)
    res = paired_comparison(a, b, n_resamples=20_000)
    wins, losses = int((a > b).sum()), int((a < b).sum())
    ref = sps.binomtest(wins, wins + losses, 0.5).pvalue
    assert 0.0005 < ref < 0.5
    assert res.p_randomization == pytest.approx(ref, abs=0.01)
    assert (res.wins, res.losses, res.ties) == (wins, losses, 2000 - wins - losses)


def test_all_equal_inputs_give_p_one_without_warnings() -> None:
    a = np.array([0.0, 0.5, 1.0, 1.0, 0.2])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = paired_comparison(a, a.copy())
        constant = paired_comparison(a + 0.1, a)  # constant non-zero differences
        single = paired_comparison([1.0], [0.0])
    assert (res.p_t, res.p_wilcoxon, res.p_randomization) == (1.0, 1.0, 1.0)
    assert res.effect_size == 0.0
    assert (res.wins, res.ties, res.losses) == (0, 5, 0)
    assert (res.delta, res.ci_low, res.ci_high) == (0.0, 0.0, 0.0)
    assert constant.p_t == 0.0
    assert constant.effect_size == np.inf
    assert np.isnan(single.p_t)
    assert single.p_randomization == 1.0


def test_paired_comparison_empty_and_frozen() -> None:
    res = paired_comparison([], [])
    assert res.n == 0
    assert np.isnan(res.delta)
    assert np.isnan(res.p_randomization)
    assert isinstance(res, PairedComparison)
    with pytest.raises(AttributeError):
        res.n = 3  # type: ignore[misc]


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [([0.1, 0.2], [0.1], "lengths 2 and 1"), ([0.1, np.nan], [0.1, 0.2], "NaN")],
)
def test_paired_comparison_validation(a: list, b: list, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        paired_comparison(a, b)


def test_win_tie_loss() -> None:
    a = [1.0, 0.5, 0.5, 0.0, 0.30]
    b = [0.0, 0.5, 0.7, 1.0, 0.25]
    assert win_tie_loss(a, b) == (2, 1, 2)
    assert win_tie_loss(a, b, eps=0.1) == (1, 2, 2)
    assert paired_comparison(a, b, eps=0.1).wins == 1
    with pytest.raises(ValueError, match="eps"):
        win_tie_loss(a, b, eps=-1)


# --------------------------------------------------------------------------- holm


def test_holm_matches_statsmodels_with_nans() -> None:
    rng = np.random.default_rng(15)
    p = rng.random(50) ** 3
    p[[3, 17, 40]] = np.nan
    p[5] = p[6]  # a tie
    ours = holm(p)
    present = ~np.isnan(p)
    ref = multipletests(p[present], method="holm")[1]
    np.testing.assert_allclose(ours[present], ref, rtol=1e-12)
    assert np.isnan(ours[~present]).all()
    assert (ours[present] >= p[present]).all()
    assert ours[present].max() <= 1.0
    order = np.argsort(p[present])
    assert (np.diff(ours[present][order]) >= 0).all()  # monotone in the raw p-values


def test_holm_small_cases() -> None:
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03]), [0.03, 0.06, 0.06])
    assert holm([]).shape == (0,)
    assert holm(pd.Series([0.5, np.nan, 0.9])).tolist()[::2] == [1.0, 1.0]
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        holm([0.2, 1.5])


# --------------------------------------------------------------------------- slices


def _per_query() -> pd.DataFrame:
    """Two models on 12 queries of dataset "d" plus 2 of dataset "e" (query ids clash)."""
    qids = [f"{i:03d}" for i in range(12)]
    qtype = ["easy"] * 6 + ["hard"] * 6
    hit_a = [1, 1, 1, 1, 1, 1, 0, 1, 0, 0, 1, 0]
    hit_b = [1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1]
    rows = []
    for model, hits in (("A", hit_a), ("B", hit_b)):
        for qid, qt, h in zip(qids, qtype, hits, strict=True):
            rows.append(("d", qid, model, qt, float(h), 0.5 * h))
    rows += [
        ("e", "000", "A", "easy", 0.0, 0.0),
        ("e", "001", "A", "hard", 1.0, 0.5),
        ("e", "000", "B", "easy", 1.0, 0.5),
        ("e", "001", "B", "hard", 1.0, 0.5),
        ("e", "999", "B", "hard", 1.0, 0.5),  # only scored by B: unpaired
    ]
    df = pd.DataFrame(rows, columns=["dataset", "query_id", "model", "query_type", "hit@1", "mrr"])
    return df.sample(frac=1.0, random_state=0).reset_index(drop=True)  # order must not matter


def test_compare_slices_counts_and_pairing() -> None:
    df = _per_query()
    out = compare_slices(df, ["hit@1", "mrr"], "A", "B", ["query_type", "dataset"], seed=5)
    assert list(out.columns) == [
        "slice", "value", "metric", "n", "mean_a", "mean_b", "delta", "ci_low", "ci_high",
        "wins", "ties", "losses", "effect_size", "p_t", "p_randomization", "p_holm", "p_floor",
        "p_holm_bound",
    ]  # fmt: skip
    assert out.attrs["n_unpaired"] == 1
    hit = out[out["metric"] == "hit@1"].set_index(["slice", "value"])
    assert hit.index.tolist() == [
        ("all", "all"), ("query_type", "easy"), ("query_type", "hard"),
        ("dataset", "d"), ("dataset", "e"),
    ]  # fmt: skip
    assert hit["n"].tolist() == [14, 7, 7, 12, 2]
    # easy: A wins on d/005, loses on e/000; hard: A wins on d/007, loses on d/008, d/009, d/011
    assert hit.loc[("query_type", "easy"), ["wins", "ties", "losses"]].tolist() == [1, 5, 1]
    assert hit.loc[("query_type", "hard"), ["wins", "ties", "losses"]].tolist() == [1, 3, 3]
    assert hit.loc[("query_type", "hard"), "mean_a"] == pytest.approx(3 / 7)
    assert hit.loc[("query_type", "hard"), "mean_b"] == pytest.approx(5 / 7)
    assert hit.loc[("query_type", "hard"), "delta"] == pytest.approx(-2 / 7)
    assert hit.loc[("dataset", "d"), "delta"] == pytest.approx(-1 / 12)
    assert hit.loc[("dataset", "e"), "delta"] == pytest.approx(-0.5)
    assert hit.loc[("all", "all"), "delta"] == pytest.approx(-2 / 14)
    mrr = out[out["metric"] == "mrr"]
    np.testing.assert_allclose(mrr["delta"], 0.5 * hit["delta"].to_numpy())
    np.testing.assert_allclose(out["p_holm"], holm(out["p_randomization"]))
    assert (out["p_holm"] >= out["p_randomization"]).all()


def test_compare_slices_rows_equal_paired_comparison() -> None:
    rng = np.random.default_rng(16)
    n = 300
    base = pd.DataFrame(
        {
            "dataset": "d",
            "query_id": [str(i) for i in range(n)],
            "split": rng.choice(["train", "test"], n),
        }
    )
    a = base.assign(model="A", score=rng.random(n))
    b = base.assign(model="B", score=np.clip(a["score"] - 0.05 + rng.normal(0, 0.2, n), 0, 1))
    df = pd.concat([a, b], ignore_index=True)
    out = compare_slices(df, ["score"], "A", "B", ["split"], seed=4, n_resamples=5000)
    for row in out.itertuples():
        mask = base["split"] == row.value if row.slice == "split" else np.ones(n, bool)
        ref = paired_comparison(
            a.loc[mask, "score"], b.loc[mask, "score"], seed=4, n_resamples=5000
        )
        assert row.n == ref.n
        assert (row.ci_low, row.ci_high) == (ref.ci_low, ref.ci_high)
        assert row.p_randomization == ref.p_randomization
        assert row.p_t == pytest.approx(ref.p_t, rel=1e-9)
        assert row.effect_size == pytest.approx(ref.effect_size, rel=1e-12)


def test_compare_slices_ci_top_leaves_everything_else_unchanged() -> None:
    """``ci_top``: the ``all`` rows and the top-|delta| rows keep their CIs, the others get
    NaN, and every other column is the same."""
    df = _per_query()
    full = compare_slices(df, ["hit@1", "mrr"], "A", "B", ["query_type", "dataset"], seed=5)
    top = compare_slices(df, ["hit@1", "mrr"], "A", "B", ["query_type", "dataset"], seed=5,
                         ci_top=2)  # fmt: skip
    others = full.loc[full["slice"] != "all", "delta"].abs()
    keep = set(others.sort_values(ascending=False, kind="stable").index[:2])
    keep |= set(full.index[full["slice"] == "all"])
    cis = ["ci_low", "ci_high"]
    pd.testing.assert_frame_equal(top.drop(columns=cis), full.drop(columns=cis))
    pd.testing.assert_frame_equal(top.loc[sorted(keep), cis], full.loc[sorted(keep), cis])
    assert top.drop(index=sorted(keep))[cis].isna().all().all()
    assert len(full) - len(keep) > 0


def test_compare_slices_min_size_missing_values_and_test_choice() -> None:
    df = _per_query()
    df["source"] = np.where(df["query_id"] == "003", None, "log")
    out = compare_slices(df, ["hit@1"], "A", "B", ["source"], min_size=2, test="t")
    assert out["value"].tolist() == ["all", "log"]  # "(missing)" has one pair < min_size
    np.testing.assert_allclose(out["p_holm"], holm(out["p_t"]))
    out = compare_slices(df, ["hit@1"], "A", "B", ["source"])
    assert out["value"].tolist() == ["all", "log", "(missing)"]


def test_compare_slices_validation() -> None:
    df = _per_query()
    with pytest.raises(ValueError, match="'C' not in"):
        compare_slices(df, ["hit@1"], "A", "C")
    with pytest.raises(ValueError, match="same model"):
        compare_slices(df, ["hit@1"], "A", "A")
    with pytest.raises(ValueError, match="not found"):
        compare_slices(df, ["hit@1"], "A", "B", ["nope"])
    dup = pd.concat([df, df[df["model"] == "A"].head(1)])
    with pytest.raises(ValueError, match="duplicated"):
        compare_slices(dup, ["hit@1"], "A", "B")
    nan = df.copy()
    nan.loc[nan.index[nan["model"] == "A"][0], "hit@1"] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        compare_slices(nan, ["hit@1"], "A", "B")


def test_slice_finder_single_model() -> None:
    df = _per_query()
    out = slice_finder(df, "hit@1", "A", ["query_type", "dataset"], min_size=5)
    # dataset e (2 queries) is below min_size; hard (3/7) < d (8/12) < easy (6/7)
    assert list(zip(out["slice"], out["value"], strict=True)) == [
        ("query_type", "hard"), ("dataset", "d"), ("query_type", "easy"),
    ]  # fmt: skip
    assert out["n"].tolist() == [7, 12, 7]
    overall = 9 / 14
    assert out["overall"].tolist() == pytest.approx([overall] * 3)
    assert out["gap"].tolist() == pytest.approx(
        [3 / 7 - overall, 8 / 12 - overall, 6 / 7 - overall]
    )
    assert ((out["ci_low"] <= out["mean"]) & (out["mean"] <= out["ci_high"])).all()
    assert out["below"].dtype == bool


def test_slice_finder_with_two_models() -> None:
    df = _per_query()
    out = slice_finder(df, "hit@1", "A", ["query_type", "dataset"], min_size=2, model_b="B")
    # deltas (A - B): e -0.5, hard -2/7, d -1/12, easy 0
    assert out["value"].tolist() == ["e", "hard", "d", "easy"]
    assert out["n"].tolist() == [2, 7, 12, 7]
    assert out["delta"].tolist() == pytest.approx([-0.5, -2 / 7, -1 / 12, 0.0])
    assert out["overall_delta"].iloc[0] == pytest.approx(-2 / 14)
    np.testing.assert_allclose(out["p_holm"], holm(out["p_randomization"]))
    assert "all" not in out["slice"].tolist()


# --------------------------------------------------------------------------- buckets


def test_n_gold_bucket() -> None:
    labels = [n_gold_bucket(n) for n in (0, 1, 2, 5, 6, 20, 21, 500)]
    assert labels == ["0", "1", "2–5", "2–5", "6–20", "6–20", ">20", ">20"]
    series = n_gold_bucket(pd.Series([3, None, 1], index=["x", "y", "z"], name="n_gold"))
    assert isinstance(series, pd.Series)
    assert series.index.tolist() == ["x", "y", "z"]
    assert series.cat.categories.tolist() == list(NGOLD_BUCKETS)
    assert series.cat.ordered
    assert series["x"] == "2–5"
    assert pd.isna(series["y"])
    with pytest.raises(ValueError, match="non-negative integers"):
        n_gold_bucket([1, -2])
    with pytest.raises(ValueError, match="non-negative integers"):
        n_gold_bucket(1.5)


def test_bucket_numeric_with_fewer_values_than_buckets() -> None:
    out = bucket_numeric(pd.Series([7.0, 9.0], name="length"))
    assert out.astype(str).tolist() == ["7–8", "9"]
    assert bucket_numeric(pd.Series([3.0], name="length")).astype(str).tolist() == ["3"]


def test_bucket_numeric_integers() -> None:
    out = bucket_numeric(pd.Series(range(1, 101), name="length"))
    assert out.name == "length"
    assert out.cat.ordered
    assert out.cat.categories.tolist() == ["1–25", "26–50", "51–75", "76–100"]
    assert out.value_counts(sort=False).tolist() == [25, 25, 25, 25]
    # n = 10 in 4 buckets: lower edges at sorted positions ceil(j * 10 / 4) = 0, 3, 5, 8
    ten = bucket_numeric(pd.Series(range(10)))
    assert ten.cat.categories.tolist() == ["0–2", "3–4", "5–7", "8–9"]
    tied = bucket_numeric(pd.Series([0] * 70 + [1, 2, 3, 4, 5] * 6))
    assert tied.cat.categories.tolist() == ["0", "1–5"]
    assert tied.value_counts(sort=False).tolist() == [70, 30]


def test_bucket_numeric_floats_keep_values_inside_labels() -> None:
    values = pd.Series(np.r_[np.random.default_rng(17).exponential(2.0, 200), np.nan])
    out = bucket_numeric(values, 5)
    assert out.isna().tolist() == values.isna().tolist()
    assert len(out.cat.categories) == 5
    counts = out.value_counts(sort=False).tolist()
    assert counts == [40] * 5
    labels = out.cat.categories.tolist()
    bucket_min = [values[out == label].min() for label in labels]
    for j, label in enumerate(labels):
        # lower edge = smallest value of the bucket, upper edge = next bucket's smallest value
        upper = bucket_min[j + 1] if j + 1 < len(labels) else values.max()
        closing = "]" if j + 1 == len(labels) else ")"
        assert label == f"[{bucket_min[j]:.3g}, {upper:.3g}{closing}"
        assert values[out == label].max() < upper or closing == "]"
    with pytest.raises(ValueError, match="numeric"):
        bucket_numeric(pd.Series(["a", "b"]))


def test_small_samples_get_bca_intervals_that_cover_better() -> None:
    from scipy import stats as sps

    from analysis.stats import bootstrap as kernels

    rng = np.random.default_rng(12)
    x = np.where(rng.random(40) < 0.3, 1.0 / rng.integers(1, 20, 40), 0.0)
    gen = np.random.default_rng(np.random.SeedSequence(3, spawn_key=(0,)))
    expected = sps.bootstrap((x,), np.mean, n_resamples=2000, method="BCa", random_state=gen)
    assert bootstrap_ci(x, n_resamples=2000, seed=3) == pytest.approx(
        tuple(expected.confidence_interval), rel=1e-12
    )
    assert kernels.BCA_BELOW == 100
    # seeded coverage of the true mean of an MRR-like metric at n = 30
    big = np.where(rng.random(1_000_000) < 0.3, 1.0 / rng.integers(1, 20, 1_000_000), 0.0)
    mu = big.mean()
    covered = {"bca": 0, "percentile": 0}
    for trial in range(150):
        sample = np.where(rng.random(30) < 0.3, 1.0 / rng.integers(1, 20, 30), 0.0)
        lo, hi = kernels._bootstrap_ci_rows([sample], 0.95, 1000, trial)
        covered["bca"] += lo[0] <= mu <= hi[0]
        means = kernels._index_means(sample[None, :], 1000, np.random.default_rng(trial))[0]
        plo, phi = np.quantile(means, [0.025, 0.975])
        covered["percentile"] += plo <= mu <= phi
    assert covered["bca"] > covered["percentile"]
