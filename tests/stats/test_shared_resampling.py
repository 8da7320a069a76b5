"""Shared resampling: sign-flip patterns shared by every sample of one length, BCa intervals of
equal-size samples in one call, and the memos of both. Sharing must not change what a number
means: p-values stay within Monte-Carlo error of exact enumeration, a sample's result does not
depend on the samples computed with it, and a memo hit returns the computed value."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.present.report import N_RESAMPLES, SEED, dataset_numbers
from analysis.stats import bootstrap as boot
from analysis.stats import bootstrap_ci, paired, paired_comparison
from analysis.stats.paired import _exact_flip_counts, signflip_pvalues


def _exact_p(d: np.ndarray) -> float:
    nonzero = d[d != 0]
    return float(_exact_flip_counts(nonzero[None, :])[0]) / float(1 << nonzero.size)


def _clear_memos() -> None:
    paired._FLIPS.items.clear()
    paired._FLIPS.size = 0
    boot._CIS.items.clear()
    boot._CIS.size = 0


@pytest.mark.parametrize("zeros", [0, 9, 30])
def test_shared_patterns_are_within_monte_carlo_error_of_exact_enumeration(zeros: int) -> None:
    # 16 non-zero continuous differences (2**16 > B, so random patterns), padded with zeros:
    # a sign on a zero changes nothing, so the test over all n positions is the same test
    rng = np.random.default_rng(5)
    n_resamples = 4000
    for trial in range(6):
        d = np.concatenate([rng.normal(0.15, 1.0, 16), np.zeros(zeros)])
        rng.shuffle(d)
        p, exact, _ = signflip_pvalues([d], n_resamples=n_resamples, seed=trial)
        assert not exact[0]
        ref = _exact_p(d)
        error = 4 * np.sqrt(ref * (1 - ref) / n_resamples) + 1 / (n_resamples + 1)
        assert abs(p[0] - ref) <= error, (trial, p[0], ref)


def test_a_sample_does_not_depend_on_the_samples_tested_with_it() -> None:
    rng = np.random.default_rng(6)
    rows = [rng.normal(0.1, 1, 300) * (rng.random(300) < 0.6) for _ in range(5)]
    _clear_memos()
    together, _, _ = signflip_pvalues(rows, n_resamples=3000, seed=2)
    for i, row in enumerate(rows):
        _clear_memos()
        alone, _, _ = signflip_pvalues([row], n_resamples=3000, seed=2)
        assert alone[0] == together[i]
        # and it is the p of paired_comparison on the same differences
        assert (
            paired_comparison(row, np.zeros(300), n_resamples=3000, seed=2).p_randomization
            == (together[i])
        )


def test_memo_hits_return_the_computed_values() -> None:
    rng = np.random.default_rng(7)
    row = rng.normal(0.05, 1, 200)
    _clear_memos()
    first = signflip_pvalues([row], n_resamples=2000, seed=4)[0][0]
    assert paired._FLIPS.items  # kept
    again = signflip_pvalues([row], n_resamples=2000, seed=4)[0][0]
    other_seed = signflip_pvalues([row], n_resamples=2000, seed=5)[0][0]
    _clear_memos()
    fresh = signflip_pvalues([row], n_resamples=2000, seed=4)[0][0]
    assert first == again == fresh
    assert other_seed != first  # the seed is part of the key
    values = rng.random(60)
    ci = bootstrap_ci(values, n_resamples=2000, seed=1)
    assert bootstrap_ci(values, n_resamples=2000, seed=1) == ci
    _clear_memos()
    assert bootstrap_ci(values, n_resamples=2000, seed=1) == ci
    assert bootstrap_ci(values, n_resamples=2000, seed=1, confidence=0.9) != ci


def test_batched_bca_equals_one_sample_at_a_time() -> None:
    rng = np.random.default_rng(8)
    rows = []
    for n in (3, 17, 40, 99):
        rows += [rng.random(n), (rng.random(n) < 0.1) * 1.0, 1 / rng.integers(1, 20, n)]
        rows += [np.r_[np.zeros(n - 1), 1.0], np.zeros(n)]
    _clear_memos()
    low, high = boot._compute_ci_rows(rows, 0.95, 3000, 0)
    for i, row in enumerate(rows):
        lo, hi = boot._compute_ci_rows([row], 0.95, 3000, 0)
        assert (lo[0], hi[0]) == (low[i], high[i]) or (np.isnan(lo[0]) and np.isnan(low[i]))


def test_report_best_vs_rest_p_is_the_paired_comparison_p() -> None:
    rng = np.random.default_rng(9)
    n = 150
    frames = []
    for model, shift in (("a", 0.0), ("b", -0.08), ("c", -0.2)):
        frames.append(
            pd.DataFrame(
                {
                    "dataset": "d",
                    "query_id": [f"q{i}" for i in range(n)],
                    "model": model,
                    "mrr": np.clip(rng.random(n) + shift, 0, 1),
                    "query_type": rng.choice(["x", "y"], n),
                }
            )
        )
    sub = pd.concat(frames, ignore_index=True)
    _clear_memos()
    nums = dataset_numbers(
        sub, metric="mrr", shown=["mrr"], model_a="b", model_b="c", n_resamples=N_RESAMPLES,
        seed=SEED,
    )  # fmt: skip
    best = nums.board.loc[nums.board["mean"].idxmax(), "model"]
    for rec in nums.best_vs_rest.to_dict("records"):
        x = sub.loc[sub["model"] == best, "mrr"].to_numpy()
        y = sub.loc[sub["model"] == rec["model"], "mrr"].to_numpy()
        ref = paired_comparison(x, y, n_resamples=N_RESAMPLES, seed=SEED)
        assert rec["p"] == ref.p_randomization
        assert rec["p_floor"] == ref.randomization_floor
    row = nums.compare.iloc[0]
    ref = paired_comparison(
        sub.loc[sub["model"] == "b", "mrr"], sub.loc[sub["model"] == "c", "mrr"],
        n_resamples=N_RESAMPLES, seed=SEED,
    )  # fmt: skip
    assert row["p_randomization"] == ref.p_randomization
    assert (row["ci_low"], row["ci_high"]) == (ref.ci_low, ref.ci_high)


def test_bca_equals_scipy_bootstrap_of_each_row_alone() -> None:
    # integer rows go through position counts, the others through gathering: both must give
    # scipy's own interval of the row by itself, bit for bit
    from scipy import stats as sps

    rng = np.random.default_rng(10)
    rows = [
        (rng.random(45) < 0.3) * 1.0,
        (rng.random(45) < 0.5) * 1.0 - (rng.random(45) < 0.5),
        1 / rng.integers(1, 30, 45),
        rng.random(45),
    ]
    _clear_memos()
    low, high = boot._compute_ci_rows(rows, 0.95, 4000, 3)
    for i, row in enumerate(rows):
        ref = sps.bootstrap(
            (row,), np.mean, n_resamples=4000, method="BCa", vectorized=True,
            random_state=boot._generator(3, boot._STREAM_BOOTSTRAP),
        )  # fmt: skip
        assert (low[i], high[i]) == (ref.confidence_interval.low, ref.confidence_interval.high)


def test_bca_interval_equals_scipys_on_any_distribution() -> None:
    """The BCa formulas written without ``scipy.stats`` give scipy's interval bit for bit
    (NaN where scipy's is NaN): binary, ternary, continuous and constant rows, any n and B."""
    import warnings
    from types import SimpleNamespace

    from scipy import stats as sps

    rng = np.random.default_rng(5)
    for trial in range(200):
        n, q, b = int(rng.integers(2, 99)), int(rng.integers(1, 6)), int(rng.integers(50, 3000))
        rows = [
            rng.integers(0, 2, (q, n)).astype(float),
            rng.random((q, n)),
            rng.integers(-1, 2, (q, n)).astype(float),
            np.round(rng.random((q, n)), 2),
        ][trial % 4]
        rows[0] = rows[0, 0] if trial % 8 == 3 else rows[0]  # a constant row: degenerate
        means = np.stack([r.take(rng.integers(0, n, (b, n))).mean(axis=-1) for r in rows])
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            ref = sps.bootstrap(
                (rows,), boot._row_means, n_resamples=0, method="BCa", vectorized=True,
                axis=-1, bootstrap_result=SimpleNamespace(bootstrap_distribution=means),
            ).confidence_interval  # fmt: skip
            low, high = boot._bca_interval(rows, means, 0.95)
        assert np.array_equal(np.array(ref.low, ndmin=1), low, equal_nan=True), trial
        assert np.array_equal(np.array(ref.high, ndmin=1), high, equal_nan=True), trial


def test_bca_does_not_import_scipy_stats() -> None:
    import subprocess
    import sys

    code = (
        "import sys, numpy as np\n"
        "from analysis.stats.bootstrap import bootstrap_ci\n"
        "bootstrap_ci(np.arange(30) % 3 / 2.0, n_resamples=500)\n"
        "print('scipy.stats' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
