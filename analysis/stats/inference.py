"""Statistics for per-query tables: bootstrap CIs, paired tests, Holm correction, slices.

Every function consumes plain arrays or a *per-query table* (DESIGN §3): one row per
``(dataset, query_id, model)`` with one float column per metric (``hit@1``, ``mrr``, ...) and slice
columns (``query_type``, ``n_gold_bucket``, ``split``, any categorical metadata).

Conventions (they hold in every function of this module):

* **Delta is "A minus B"**: ``delta = mean(a - b)``; a positive delta means model A scores higher.
  A *win* is a query with ``a - b > eps``, a *loss* one with ``a - b < -eps``, a *tie* the rest.
* **Bootstrap** intervals are percentile intervals of the mean: with ``alpha = 1 - confidence``
  they are the ``alpha/2`` and ``1 - alpha/2`` quantiles (numpy's default linear interpolation)
  of ``n_resamples`` means of resamples of size n drawn with replacement. The mean of a
  resample depends only on how often each value is drawn, so the kernel draws either an index
  matrix of shape ``(B, n)`` (chunked; shared by all samples of the same size) or, when a few
  values are frequent (each occurring >= 32 times: zeros, hit@k, MRR, most metric deltas),
  multinomial counts of those k values plus "the rest", shape ``(B, k + 1)``, and index draws
  for the rest only. Both give the same bootstrap distribution; the second is much cheaper on
  tied data.
* **Seeds**: ``seed`` is an int (or ``None`` for fresh entropy). Each sample is resampled from
  its own generator ``default_rng(SeedSequence(seed, spawn_key=(stream,)))`` (stream 0 for the
  bootstrap, 1 for the randomization test), so a sample's interval or p-value depends only on its
  values, ``n_resamples`` and ``seed``, not on the other groups computed in the same call: a row
  of :func:`mean_ci` equals :func:`bootstrap_ci` on that group's values (in table order), and a
  row of :func:`compare_slices` equals :func:`paired_comparison` on that slice, for the same seed.
  Groups of equal size share one index matrix, which is how the grouped versions stay vectorized.
* **Randomization test** (paired, sign-flip, two-sided): statistic ``T = sum(s_i * d_i)`` with
  ``d = a - b`` and random signs ``s_i``; zero differences are dropped (flipping them changes
  nothing). With m non-zero differences, if ``2**m <= n_resamples`` all sign patterns are enumerated
  and ``p = #{|T| >= |T_obs|} / 2**m`` (the identity pattern is among them; this equals
  ``scipy.stats.permutation_test(..., permutation_type="samples")`` with its exact enumeration).
  Otherwise ``p = (1 + #{|T_b| >= |T_obs|}) / (1 + B)`` over B random sign patterns: the "+1"
  counts the observed labelling, so p is never 0 and the test stays valid (Phipson & Smyth 2010).
  Equality is judged with a relative tolerance of 1e-10 of ``sum(|d|)`` so that float rounding does
  not split values that are equal in exact arithmetic.
* **Missing values**: NaN or infinite metric values are errors (they usually mean a metric was not
  computed for some dataset); filter them out first.

The module never imports streamlit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats as sps

__all__ = [
    "NGOLD_BUCKETS",
    "PairedComparison",
    "bootstrap_ci",
    "bucket_numeric",
    "compare_slices",
    "holm",
    "mean_ci",
    "n_gold_bucket",
    "paired_comparison",
    "slice_finder",
    "win_tie_loss",
]

#: Labels of the answer-set size buckets, in display order (DESIGN §5).
NGOLD_BUCKETS: tuple[str, ...] = ("0", "1", "2–5", "6–20", ">20")

#: Label used for a missing slice value and for the whole-table row of :func:`compare_slices`.
MISSING_LABEL = "(missing)"
ALL_LABEL = "all"

_STREAM_BOOTSTRAP = 0
_STREAM_FLIP = 1
_CHUNK = 1 << 20  # random draws per chunk (elements)
_DISCRETE_RATIO = 32  # sign flips by value counts when 32 * (distinct values) <= n
_FREQUENT = 32  # bootstrap: a value occurring >= 32 times is drawn as one multinomial category
_CATEGORY_COST = 20  # cost of a multinomial category relative to one index draw
_REL_TOL = 1e-10
_QUERY_KEYS = ("dataset", "query_id")
_COMPARE_COLUMNS = (
    "slice", "value", "metric", "n", "mean_a", "mean_b", "delta", "ci_low", "ci_high",
    "wins", "ties", "losses", "effect_size", "p_t", "p_randomization", "p_holm",
)  # fmt: skip


# --------------------------------------------------------------------------- validation helpers


def _as_1d(values: object, name: str) -> np.ndarray:
    """Float 1-D copy of ``values``; ValueError on another shape, NaN or infinity."""
    if isinstance(values, pd.Series | pd.Index):
        arr = values.to_numpy(dtype=float, na_value=np.nan)
    else:
        try:
            arr = np.asarray(values, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} must contain numbers: {exc}") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        n_nan = int(np.isnan(arr).sum())
        raise ValueError(
            f"{name} contains {n_nan} NaN and {int(bad.sum()) - n_nan} infinite value(s); "
            "drop or fill them first"
        )
    return arr


def _check_resampling(confidence: float, n_resamples: int) -> None:
    if not 0.0 < float(confidence) < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int | np.integer):
        raise ValueError(f"n_resamples must be an integer, got {n_resamples!r}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")


def _resolve_seed(seed: int | None) -> int:
    if seed is None:
        return int(np.random.SeedSequence().entropy)
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer or None, got {seed!r}")
    return int(seed)


def _generator(seed: int, stream: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(stream,)))


def _require_columns(df: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(
            f"{what}: column(s) {missing} not found; available: {list(map(str, df.columns))}"
        )


def _metric_values(df: pd.DataFrame, column: str) -> np.ndarray:
    series = df[column]
    if not (pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series)):
        raise ValueError(f"metric column {column!r} is not numeric (dtype {series.dtype})")
    return series.to_numpy(dtype=float, na_value=np.nan)


def _finite_or_raise(values: np.ndarray, column: str, where: str) -> None:
    bad = ~np.isfinite(values)
    if bad.any():
        raise ValueError(
            f"metric column {column!r} has {int(bad.sum())} NaN/infinite value(s) {where}; "
            "filter those rows (or choose metrics computed for every query) first"
        )


def _group_positions(df: pd.DataFrame, by: Sequence[str]) -> tuple[pd.DataFrame, list[np.ndarray]]:
    """Group keys (sorted, categorical order kept, NaN last) and row positions per group.

    Positions inside a group keep table order.
    """
    if not by:
        return pd.DataFrame(index=range(1)), [np.arange(len(df))]
    gb = df.groupby(list(by), sort=True, dropna=False, observed=True)
    codes = gb.ngroup().to_numpy()
    keys = gb.size().index.to_frame(index=False)
    if keys.empty:
        return keys, []
    order = np.argsort(codes, kind="stable")
    bounds = np.cumsum(np.bincount(codes, minlength=len(keys)))[:-1]
    return keys, np.split(order, bounds)


# --------------------------------------------------------------------------- vectorized kernels


def _quantile_probs(confidence: float) -> list[float]:
    alpha = 1.0 - float(confidence)
    return [alpha / 2.0, 1.0 - alpha / 2.0]


def _split_means(
    frequent: np.ndarray,
    counts: np.ndarray,
    rest: np.ndarray,
    n_resamples: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Bootstrap means of a sample split into frequent values and the rest, shape ``(B,)``.

    A resample of n draws takes ``C ~ Multinomial(n, (c_1, ..., c_k, n_rest) / n)`` draws of the
    k frequent values and of "the rest"; the ``C_rest`` draws from the rest are then uniform with
    replacement over its positions. This is the ordinary bootstrap distribution, drawn at a cost of
    ``k + n_rest`` instead of n per resample.
    """
    k, n_rest = frequent.size, rest.size
    n = int(counts.sum()) + n_rest
    pvals = np.append(counts, n_rest) / n
    padded_rest = np.append(rest, 0.0)  # position n_rest: a zero for unused index slots
    out = np.empty(n_resamples)
    step = max(1, _CHUNK // max(k + 1, n_rest))
    for start in range(0, n_resamples, step):
        stop = min(n_resamples, start + step)
        draws = rng.multinomial(n, pvals, size=stop - start)
        total = draws[:, :k] @ frequent
        n_from_rest = draws[:, k]
        width = int(n_from_rest.max())
        if width:
            idx = rng.integers(0, n_rest, size=(stop - start, width))
            idx[np.arange(width) >= n_from_rest[:, None]] = n_rest
            total += padded_rest.take(idx).sum(axis=1)
        out[start:stop] = total
    return out / n


def _index_means(x: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Bootstrap means of each row of ``x`` (shape ``(q, n)``), one shared index matrix per chunk.

    Returns shape ``(q, B)``. Chunk sizes depend on n only, so a row's result does not depend on
    the other rows. Rows are gathered one at a time (contiguous, cache-sized blocks).
    """
    q, n = x.shape
    out = np.empty((q, n_resamples))
    step = max(1, _CHUNK // n)
    for start in range(0, n_resamples, step):
        stop = min(n_resamples, start + step)
        idx = rng.integers(0, n, size=(stop - start, n))
        for i in range(q):
            out[i, start:stop] = x[i].take(idx).sum(axis=-1)
    return out / n


def _bootstrap_ci_rows(
    rows: Sequence[np.ndarray], confidence: float, n_resamples: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap CI of the mean of every sample in ``rows`` (finite 1-D arrays)."""
    probs = _quantile_probs(confidence)
    low = np.full(len(rows), np.nan)
    high = np.full(len(rows), np.nan)
    by_size: dict[int, list[int]] = {}
    for i, row in enumerate(rows):
        n = row.size
        if n == 0:
            continue
        uniq, inverse, counts = np.unique(row, return_inverse=True, return_counts=True)
        is_frequent = counts >= _FREQUENT
        n_frequent = int(is_frequent.sum())
        n_rest = n - int(counts[is_frequent].sum())
        if uniq.size == 1:  # n == 1 or a constant sample: every resample has this mean
            low[i] = high[i] = row.mean()
        elif n_frequent and _CATEGORY_COST * n_frequent + n_rest <= n // 2:
            means = _split_means(
                uniq[is_frequent],
                counts[is_frequent],
                row[~is_frequent[inverse]],
                n_resamples,
                _generator(seed, _STREAM_BOOTSTRAP),
            )
            low[i], high[i] = np.quantile(means, probs)
        else:
            by_size.setdefault(n, []).append(i)
    for members in by_size.values():
        x = np.stack([rows[i] for i in members])
        means = _index_means(x, n_resamples, _generator(seed, _STREAM_BOOTSTRAP))
        quant = np.quantile(means, probs, axis=1)
        low[members] = quant[0]
        high[members] = quant[1]
    return low, high


def _flip_threshold(observed: np.ndarray, abs_sum: np.ndarray) -> np.ndarray:
    return np.abs(observed) - _REL_TOL * abs_sum


def _exact_flip_counts(d: np.ndarray) -> np.ndarray:
    """#{patterns with |T| >= |T_obs|} over all 2**m sign patterns, for each row of ``d``."""
    q, m = d.shape
    total = d.sum(axis=1)
    threshold = _flip_threshold(total, np.abs(d).sum(axis=1))
    shifts = np.arange(m, dtype=np.int64)
    count = np.zeros(q, dtype=np.int64)
    n_patterns = 1 << m
    step = max(1, _CHUNK // m)
    for start in range(0, n_patterns, step):
        codes = np.arange(start, min(n_patterns, start + step), dtype=np.int64)
        flipped = ((codes[:, None] >> shifts) & 1).astype(float)  # 1 = sign flipped
        t = total - 2.0 * (flipped @ d.T)  # (patterns, q)
        count += (np.abs(t) >= threshold).sum(axis=0)
    return count


def _random_flip_counts(d: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """#{random sign patterns with |T| >= |T_obs|} for each row of ``d`` (shared patterns)."""
    q, m = d.shape
    total = d.sum(axis=1)
    threshold = _flip_threshold(total, np.abs(d).sum(axis=1))
    count = np.zeros(q, dtype=np.int64)
    n_bytes = (m + 7) // 8
    step = max(1, _CHUNK // m)
    for start in range(0, n_resamples, step):
        size = min(n_resamples, start + step) - start
        raw = rng.integers(0, 256, size=(size, n_bytes), dtype=np.uint8)
        flipped = np.unpackbits(raw, axis=1, count=m).astype(float)
        t = total - 2.0 * (flipped @ d.T)
        count += (np.abs(t) >= threshold).sum(axis=0)
    return count


def _binomial_flip_count(
    uniq: np.ndarray, counts: np.ndarray, n_resamples: int, rng: np.random.Generator
) -> int:
    """Random sign flips of a sample with few distinct values: flip counts are binomial."""
    total = counts.astype(float) @ uniq
    threshold = _flip_threshold(np.asarray(total), np.asarray(counts @ np.abs(uniq)))
    count = 0
    step = max(1, _CHUNK // uniq.size)
    for start in range(0, n_resamples, step):
        size = min(n_resamples, start + step) - start
        flips = rng.binomial(counts, 0.5, size=(size, uniq.size)).astype(float)
        t = total - 2.0 * (flips @ uniq)
        count += int((np.abs(t) >= threshold).sum())
    return count


def _signflip_rows(
    rows: Sequence[np.ndarray], n_resamples: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided paired sign-flip p-value of every difference sample; also whether it is exact."""
    p = np.full(len(rows), np.nan)
    exact = np.zeros(len(rows), dtype=bool)
    exact_by_size: dict[int, list[tuple[int, np.ndarray]]] = {}
    random_by_size: dict[int, list[tuple[int, np.ndarray]]] = {}
    for i, row in enumerate(rows):
        if row.size == 0:
            continue
        nonzero = row[row != 0]
        m = nonzero.size
        if m == 0:
            p[i], exact[i] = 1.0, True
        elif m < 63 and (1 << m) <= n_resamples:
            exact_by_size.setdefault(m, []).append((i, nonzero))
        else:
            uniq, counts = np.unique(nonzero, return_counts=True)
            if _DISCRETE_RATIO * uniq.size <= m:
                rng = _generator(seed, _STREAM_FLIP)
                count = _binomial_flip_count(uniq, counts, n_resamples, rng)
                p[i] = (1 + count) / (1 + n_resamples)
            else:
                random_by_size.setdefault(m, []).append((i, nonzero))
    for m, items in exact_by_size.items():
        members = [i for i, _ in items]
        counts = _exact_flip_counts(np.stack([row for _, row in items]))
        p[members] = counts / float(1 << m)
        exact[members] = True
    for items in random_by_size.values():
        members = [i for i, _ in items]
        rng = _generator(seed, _STREAM_FLIP)
        counts = _random_flip_counts(np.stack([row for _, row in items]), n_resamples, rng)
        p[members] = (1 + counts) / (1 + n_resamples)
    return p, exact


def _is_constant(d: np.ndarray) -> bool:
    """All values equal up to float rounding: ``max(d) - min(d) <= 1e-10 * max(|d|)``."""
    return bool(np.ptp(d) <= _REL_TOL * np.abs(d).max())


def _t_pvalues(rows: Sequence[np.ndarray]) -> np.ndarray:
    """Two-sided one-sample t-test of mean 0 for each difference sample (= paired t-test).

    All differences zero -> 1.0; constant non-zero differences (up to rounding, see
    :func:`_is_constant`) -> 0.0 (t is infinite); fewer than two pairs otherwise -> NaN.
    """
    out = np.full(len(rows), np.nan)
    idx, t, df = [], [], []
    for i, d in enumerate(rows):
        if d.size and not d.any():
            out[i] = 1.0
        elif d.size >= 2 and _is_constant(d):
            out[i] = 0.0
        elif d.size >= 2:
            sd = d.std(ddof=1)
            idx.append(i)
            t.append(d.mean() / (sd / math.sqrt(d.size)))
            df.append(d.size - 1)
    if idx:
        out[idx] = 2.0 * sps.t.sf(np.abs(t), np.asarray(df, dtype=float))
    return out


def _effect_size(d: np.ndarray) -> float:
    """Cohen's d_z = mean(d) / sd(d, ddof=1); 0 when all d are 0; +-inf when d is constant."""
    if d.size and not d.any():
        return 0.0
    if d.size < 2:
        return math.nan
    mean = float(d.mean())
    if _is_constant(d):
        return math.copysign(math.inf, mean)
    return mean / float(d.std(ddof=1))


# --------------------------------------------------------------------------- public: bootstrap


def bootstrap_ci(
    values: Sequence[float] | np.ndarray | pd.Series,
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int | None = 0,
) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the mean.

    With ``alpha = 1 - confidence``, returns the ``alpha/2`` and ``1 - alpha/2`` quantiles
    (linear interpolation) of the means of ``n_resamples`` resamples of size n drawn with
    replacement from ``values``. Vectorized: no Python loop per resample (see module docstring).

    Edge cases: n = 0 -> ``(nan, nan)``; n = 1 or all values equal -> ``(mean, mean)``.

    Args:
        values: 1-D finite numbers (one per query).
        confidence: coverage in (0, 1).
        n_resamples: number of bootstrap resamples B.
        seed: seed of the numpy Generator; the same seed gives the same interval.

    Raises:
        ValueError: values not 1-D, NaN or infinite; bad confidence, n_resamples or seed.
    """
    arr = _as_1d(values, "values")
    _check_resampling(confidence, n_resamples)
    low, high = _bootstrap_ci_rows([arr], confidence, n_resamples, _resolve_seed(seed))
    return float(low[0]), float(high[0])


def mean_ci(
    df: pd.DataFrame,
    metric: str | Sequence[str],
    by: Sequence[str] = (),
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int | None = 0,
    nan_policy: Literal["raise", "omit"] = "raise",
) -> pd.DataFrame:
    """Mean and percentile bootstrap CI of one or more metrics for every group of ``by``.

    Each group's interval is exactly ``bootstrap_ci(group values in table order, seed=seed)``;
    groups are computed together (groups of equal size share one index matrix; frequent values
    are drawn as multinomial counts), so 10k queries in 20 groups take ~0.4 s with B = 10,000 for
    continuous values and a few milliseconds for hit@k.

    Groups follow ``DataFrame.groupby(by, sort=True, dropna=False, observed=True)``: sorted keys,
    categorical order kept, missing keys as their own group; empty ``by`` gives one overall row.

    Args:
        df: any table holding the metric and ``by`` columns (e.g. a per-query table).
        metric: a metric column, or several (then the output gains a ``metric`` column).
        by: grouping columns, e.g. ``["dataset", "model"]``.
        confidence, n_resamples, seed: as in :func:`bootstrap_ci`.
        nan_policy: ``"raise"`` (default) on NaN/infinite metric values, or ``"omit"`` them per
            group and metric (``n`` then counts the values used).

    Returns:
        Columns ``*by, [metric,] n, mean, ci_low, ci_high``; one row per group (and metric).
    """
    metrics = [metric] if isinstance(metric, str) else list(metric)
    by = list(by)
    if not metrics:
        raise ValueError("mean_ci: give at least one metric column")
    _require_columns(df, [*metrics, *by], "mean_ci")
    _check_resampling(confidence, n_resamples)
    if nan_policy not in ("raise", "omit"):
        raise ValueError(f"nan_policy must be 'raise' or 'omit', got {nan_policy!r}")
    seed = _resolve_seed(seed)

    keys, positions = _group_positions(df, by)
    rows: list[np.ndarray] = []
    for m in metrics:
        values = _metric_values(df, m)
        if nan_policy == "raise":
            _finite_or_raise(values, m, "in mean_ci")
            rows.extend(values[pos] for pos in positions)
        else:
            rows.extend(v[np.isfinite(v)] for v in (values[pos] for pos in positions))
    low, high = _bootstrap_ci_rows(rows, confidence, n_resamples, seed)

    out = pd.concat([keys] * len(metrics), ignore_index=True)
    if not isinstance(metric, str):
        out["metric"] = np.repeat(metrics, len(positions))
    out["n"] = np.array([r.size for r in rows], dtype=np.int64)
    out["mean"] = np.array([r.mean() if r.size else np.nan for r in rows])
    out["ci_low"] = low
    out["ci_high"] = high
    return out


# --------------------------------------------------------------------------- public: paired tests


def win_tie_loss(
    a: Sequence[float] | np.ndarray | pd.Series,
    b: Sequence[float] | np.ndarray | pd.Series,
    eps: float = 0.0,
) -> tuple[int, int, int]:
    """Count wins, ties and losses of A against B, query by query.

    win: ``a - b > eps``; loss: ``a - b < -eps``; tie: ``|a - b| <= eps``.

    Raises:
        ValueError: length mismatch, NaN/infinite values, or negative ``eps``.
    """
    arr_a, arr_b = _paired_arrays(a, b)
    return _win_tie_loss(arr_a - arr_b, eps)


def _win_tie_loss(d: np.ndarray, eps: float) -> tuple[int, int, int]:
    if not eps >= 0:
        raise ValueError(f"eps must be >= 0, got {eps!r}")
    wins = int((d > eps).sum())
    losses = int((d < -eps).sum())
    return wins, d.size - wins - losses, losses


def _paired_arrays(a: object, b: object) -> tuple[np.ndarray, np.ndarray]:
    arr_a = _as_1d(a, "a")
    arr_b = _as_1d(b, "b")
    if arr_a.size != arr_b.size:
        raise ValueError(
            f"a and b must be aligned (one value per query, same order): "
            f"got lengths {arr_a.size} and {arr_b.size}"
        )
    return arr_a, arr_b


@dataclass(frozen=True)
class PairedComparison:
    """Result of :func:`paired_comparison` (A against B over the same queries).

    Attributes:
        n: number of pairs.
        mean_a, mean_b: mean metric of A and of B.
        delta: ``mean(a - b)`` ("A minus B"; positive = A better).
        ci_low, ci_high: percentile bootstrap CI of ``delta``.
        wins, ties, losses: queries with ``a - b`` > eps, within eps, < -eps.
        p_t: paired t-test p-value (two-sided).
        p_wilcoxon: Wilcoxon signed-rank p-value (two-sided, zero differences dropped).
        p_randomization: paired sign-flip randomization p-value (two-sided).
        randomization_exact: True when all sign patterns were enumerated.
        effect_size: Cohen's d_z = mean(a - b) / sd(a - b, ddof=1).
        confidence, n_resamples, seed: the settings used.
    """

    n: int
    mean_a: float
    mean_b: float
    delta: float
    ci_low: float
    ci_high: float
    wins: int
    ties: int
    losses: int
    p_t: float
    p_wilcoxon: float
    p_randomization: float
    randomization_exact: bool
    effect_size: float
    confidence: float
    n_resamples: int
    seed: int


def paired_comparison(
    a: Sequence[float] | np.ndarray | pd.Series,
    b: Sequence[float] | np.ndarray | pd.Series,
    *,
    n_resamples: int = 10_000,
    seed: int | None = 0,
    confidence: float = 0.95,
    eps: float = 0.0,
) -> PairedComparison:
    """Compare two models on the same queries (``a[i]`` and ``b[i]`` belong to query i).

    With ``d = a - b`` (A minus B):

    * ``delta = mean(d)``; CI: ``bootstrap_ci(d, confidence, n_resamples, seed)``.
    * wins / ties / losses: ``d > eps`` / ``|d| <= eps`` / ``d < -eps``.
    * ``p_t``: ``scipy.stats.ttest_rel(a, b)``. All d zero -> 1.0; constant non-zero d (equal up
      to rounding: ``max(d) - min(d) <= 1e-10 * max|d|``) -> 0.0 (infinite t); n < 2 otherwise
      -> NaN.
    * ``p_wilcoxon``: ``scipy.stats.wilcoxon(d, zero_method="wilcox")`` (zero differences are
      dropped, the classic test; scipy chooses exact or normal approximation). All d zero -> 1.0.
    * ``p_randomization``: sign-flip test of ``T = sum(d)`` (module docstring): exact enumeration
      when ``2**m <= n_resamples`` (m = number of non-zero d), otherwise
      ``(1 + #{|T_b| >= |T_obs|}) / (1 + B)``. All d zero -> 1.0.
    * ``effect_size``: Cohen's d_z ``= mean(d) / sd(d, ddof=1)``; 0.0 when all d are zero,
      ``+-inf`` when d is a non-zero constant, NaN when n < 2 otherwise.

    n = 0 gives NaN statistics and zero counts. Degenerate cases are decided before calling scipy,
    so they emit no warnings.

    Raises:
        ValueError: a and b not 1-D, of different lengths, or holding NaN/infinite values; bad
            confidence, n_resamples, seed or eps.
    """
    arr_a, arr_b = _paired_arrays(a, b)
    d = arr_a - arr_b
    _check_resampling(confidence, n_resamples)
    seed = _resolve_seed(seed)
    wins, ties, losses = _win_tie_loss(d, eps)
    n = d.size
    if n == 0:
        nan = math.nan
        return PairedComparison(
            0, nan, nan, nan, nan, nan, 0, 0, 0, nan, nan, nan, False, nan,
            float(confidence), int(n_resamples), seed,
        )  # fmt: skip
    low, high = _bootstrap_ci_rows([d], confidence, n_resamples, seed)
    p_rand, exact = _signflip_rows([d], n_resamples, seed)

    if not d.any():
        p_t = p_w = 1.0
    else:
        if n < 2:
            p_t = math.nan
        elif _is_constant(d):
            p_t = 0.0
        else:
            p_t = float(sps.ttest_rel(arr_a, arr_b).pvalue)
        p_w = float(sps.wilcoxon(d, zero_method="wilcox").pvalue)

    return PairedComparison(
        n=n,
        mean_a=float(arr_a.mean()),
        mean_b=float(arr_b.mean()),
        delta=float(d.mean()),
        ci_low=float(low[0]),
        ci_high=float(high[0]),
        wins=wins,
        ties=ties,
        losses=losses,
        p_t=p_t,
        p_wilcoxon=p_w,
        p_randomization=float(p_rand[0]),
        randomization_exact=bool(exact[0]),
        effect_size=_effect_size(d),
        confidence=float(confidence),
        n_resamples=int(n_resamples),
        seed=seed,
    )


def holm(pvalues: Sequence[float] | np.ndarray | pd.Series) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values (step-down, controls the family-wise error rate).

    With the m non-NaN p-values sorted ascending, ``p_(1) <= ... <= p_(m)``:
    ``adj_(i) = min(1, max_{j <= i} (m - j + 1) * p_(j))``, returned in the input order and shape.
    NaNs stay NaN and are not counted in m; an empty input gives an empty array. Matches
    ``statsmodels.stats.multitest.multipletests(method="holm")`` on the non-NaN values.

    Raises:
        ValueError: a p-value outside [0, 1].
    """
    if isinstance(pvalues, pd.Series | pd.Index):
        p = pvalues.to_numpy(dtype=float, na_value=np.nan)
    else:
        p = np.asarray(pvalues, dtype=float)
    mask = ~np.isnan(p)
    vals = p[mask]
    if np.any((vals < 0) | (vals > 1)):
        raise ValueError("p-values must lie in [0, 1] (NaN allowed)")
    m = vals.size
    order = np.argsort(vals, kind="stable")
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * vals[order]))
    result = np.empty(m)
    result[order] = adjusted
    out = np.full(p.shape, np.nan)
    out[mask] = result
    return out


# --------------------------------------------------------------------------- public: slices


def n_gold_bucket(n_gold: int | Sequence[int] | np.ndarray | pd.Series) -> str | pd.Series:
    """Answer-set size bucket: ``"0"``, ``"1"``, ``"2–5"``, ``"6–20"``, ``">20"`` (en dash).

    A scalar gives a label; an array or Series gives an ordered categorical Series with the
    categories :data:`NGOLD_BUCKETS` (index kept for a Series). Missing counts stay missing.

    Raises:
        ValueError: a negative or non-integer count.
    """
    scalar = np.ndim(n_gold) == 0 and not isinstance(n_gold, pd.Series)
    if isinstance(n_gold, pd.Series):
        values = n_gold.to_numpy(dtype=float, na_value=np.nan)
        index, name = n_gold.index, n_gold.name
    else:
        values = np.atleast_1d(np.asarray(n_gold, dtype=float))
        index, name = None, "n_gold_bucket"
    present = ~np.isnan(values)
    v = values[present]
    if np.any((v < 0) | (v != np.floor(v))):
        raise ValueError("n_gold must hold non-negative integers")
    codes = np.full(values.shape, -1, dtype=np.int64)
    codes[present] = np.searchsorted(np.array([0.5, 1.5, 5.5, 20.5]), v)
    if scalar:
        return NGOLD_BUCKETS[codes[0]] if present[0] else math.nan  # type: ignore[return-value]
    cat = pd.Categorical.from_codes(codes, categories=list(NGOLD_BUCKETS), ordered=True)
    return pd.Series(cat, index=index, name=name)


def _format_edge(x: float, digits: int) -> str:
    return f"{x:.{digits}g}"


def bucket_numeric(series: pd.Series, n_buckets: int = 4, *, digits: int = 3) -> pd.Series:
    """Quantile buckets of a numeric column, as an ordered categorical with readable labels.

    With the n present values sorted, the lower edge of bucket j (j = 0..k-1) is the value at
    0-based position ``ceil(j * n / k)``: k buckets of (nearly) equal counts when values are
    distinct; edges are de-duplicated, so heavily tied data gives fewer buckets, none empty.
    Bucket j holds ``edge_j <= x < edge_{j+1}``; the last holds ``edge_last <= x <= max``.
    Labels: integer data ``"1–3"`` (inclusive, en dash) or ``"7"``; other data ``"[0.1, 0.5)"``,
    last ``"[0.5, 2.3]"``, with at least ``digits`` significant digits (more when needed to keep
    labels distinct). Missing values stay missing; index and name are kept.

    Raises:
        ValueError: non-numeric or infinite values, ``n_buckets < 1``.
    """
    if n_buckets < 1:
        raise ValueError(f"n_buckets must be >= 1, got {n_buckets}")
    if not pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
        raise ValueError(f"bucket_numeric needs a numeric column, got dtype {series.dtype}")
    values = series.to_numpy(dtype=float, na_value=np.nan)
    present = ~np.isnan(values)
    x = values[present]
    if np.isinf(x).any():
        raise ValueError(f"column {series.name!r} has infinite values")
    codes = np.full(values.shape, -1, dtype=np.int64)
    if x.size == 0:
        return pd.Series(pd.Categorical.from_codes(codes, categories=[], ordered=True),
                         index=series.index, name=series.name)  # fmt: skip
    ordered = np.sort(x)
    positions = -((-np.arange(n_buckets) * x.size) // n_buckets)  # ceil(j * n / k)
    lows = np.unique(ordered[positions])
    codes[present] = np.searchsorted(lows, x, side="right") - 1
    highs = np.append(lows[1:], x.max())
    integer = bool(np.all(x == np.round(x)))
    labels: list[str] = []
    if integer:
        for j, (lo, hi) in enumerate(zip(lows, highs, strict=True)):
            top = hi if j == len(lows) - 1 else hi - 1
            labels.append(f"{lo:.0f}" if top == lo else f"{lo:.0f}–{top:.0f}")
    else:
        edge_values = [*lows.tolist(), float(x.max())]
        n_distinct = len(set(edge_values))
        for d in range(digits, 18):
            edges = [_format_edge(e, d) for e in edge_values]
            if len(set(edges)) == n_distinct:
                break
        for j in range(len(lows)):
            last = j == len(lows) - 1
            if last and lows[j] == x.max():
                labels.append(edges[j])
            else:
                labels.append(f"[{edges[j]}, {edges[j + 1]}{']' if last else ')'}")
    cat = pd.Categorical.from_codes(codes, categories=labels, ordered=True)
    return pd.Series(cat, index=series.index, name=series.name)


def _value_label(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return MISSING_LABEL
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _model_rows(per_query: pd.DataFrame, model: str, columns: Sequence[str]) -> pd.DataFrame:
    """The rows of one model (given columns, each once); one row per (dataset, query_id)."""
    rows = per_query.loc[per_query["model"] == model, list(dict.fromkeys(columns))]
    if rows.empty:
        models = sorted(map(str, per_query["model"].dropna().unique()))
        raise ValueError(f"model {model!r} not in the per-query table; models: {models}")
    dup = rows.duplicated(list(_QUERY_KEYS))
    if dup.any():
        first = rows.loc[dup, list(_QUERY_KEYS)].iloc[0].tolist()
        raise ValueError(
            f"model {model!r} has {int(dup.sum())} duplicated (dataset, query_id) row(s), "
            f"e.g. {first}; the per-query table needs one row per query and model"
        )
    return rows


def _slice_groups(
    table: pd.DataFrame, slice_cols: Sequence[str], min_size: int, *, include_all: bool
) -> list[tuple[str, str, np.ndarray]]:
    groups: list[tuple[str, str, np.ndarray]] = []
    if include_all and len(table) >= min_size:
        groups.append((ALL_LABEL, ALL_LABEL, np.arange(len(table))))
    for col in slice_cols:
        keys, positions = _group_positions(table, [col])
        for value, pos in zip(keys[col].tolist(), positions, strict=True):
            if pos.size >= min_size:
                groups.append((col, _value_label(value), pos))
    return groups


def _check_slice_args(
    per_query: pd.DataFrame, metrics: Sequence[str], slice_cols: Sequence[str], min_size: int
) -> None:
    if not metrics:
        raise ValueError("give at least one metric column")
    _require_columns(per_query, [*_QUERY_KEYS, "model", *metrics, *slice_cols], "per-query table")
    if min_size < 1:
        raise ValueError(f"min_size must be >= 1, got {min_size}")


def compare_slices(
    per_query: pd.DataFrame,
    metric_cols: Sequence[str],
    model_a: str,
    model_b: str,
    slice_cols: Sequence[str] = (),
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int | None = 0,
    min_size: int = 1,
    test: Literal["randomization", "t"] = "randomization",
) -> pd.DataFrame:
    """Per-slice paired comparison of model A against model B, with Holm correction.

    Queries are paired by ``(dataset, query_id)``; queries scored by only one of the two models
    are left out (their number is in ``result.attrs["n_unpaired"]``). Slice values are read from
    model A's rows (query attributes are the same for both models). Rows: an ``all`` row, then
    each value of each slice column (groupby order; missing values as ``"(missing)"``), each
    crossed with every metric; slices with fewer than ``min_size`` pairs are left out.

    Each row is what :func:`paired_comparison` gives on that slice with the same seed: n, means,
    ``delta = mean(a - b)``, its bootstrap CI, wins/ties/losses, paired t-test ``p_t``,
    sign-flip ``p_randomization`` and Cohen's d_z ``effect_size``. ``p_holm`` is the Holm
    adjustment of ``p_randomization`` (or ``p_t`` with ``test="t"``) across *all* rows returned
    (slices x metrics, ``all`` rows included).

    Returns:
        Columns ``slice, value, metric, n, mean_a, mean_b, delta, ci_low, ci_high, wins, ties,
        losses, effect_size, p_t, p_randomization, p_holm``.

    Raises:
        ValueError: missing columns, unknown model, A == B, duplicated queries, NaN metric values
            on paired queries, no query scored by both models, bad settings.
    """
    metrics = list(metric_cols)
    slice_cols = list(slice_cols)
    _check_slice_args(per_query, metrics, slice_cols, min_size)
    _check_resampling(confidence, n_resamples)
    if test not in ("randomization", "t"):
        raise ValueError(f"test must be 'randomization' or 't', got {test!r}")
    if model_a == model_b:
        raise ValueError(f"model_a and model_b are the same model ({model_a!r})")
    seed = _resolve_seed(seed)

    keys = list(_QUERY_KEYS)
    rows_a = _model_rows(per_query, model_a, [*keys, *slice_cols, *metrics])
    rows_b = _model_rows(per_query, model_b, [*keys, *metrics])
    b_names = {m: f"\x00b:{m}" for m in metrics}  # cannot collide with a real column name
    rows_b = rows_b.rename(columns=b_names)[[*keys, *b_names.values()]]
    paired = rows_a.merge(rows_b, on=keys, how="inner")
    if paired.empty:
        raise ValueError(f"no (dataset, query_id) is scored by both {model_a!r} and {model_b!r}")
    n_unpaired = len(rows_a) + len(rows_b) - 2 * len(paired)

    a_cols, b_cols = [], []
    for m in metrics:
        a_vals = _metric_values(paired, m)
        b_vals = _metric_values(paired, b_names[m])
        _finite_or_raise(a_vals, m, f"for {model_a!r} on paired queries")
        _finite_or_raise(b_vals, m, f"for {model_b!r} on paired queries")
        a_cols.append(a_vals)
        b_cols.append(b_vals)

    groups = _slice_groups(paired, slice_cols, min_size, include_all=True)
    records: list[dict[str, object]] = []
    diffs: list[np.ndarray] = []
    for col, label, pos in groups:
        for m, av, bv in zip(metrics, a_cols, b_cols, strict=True):
            a_g, b_g = av[pos], bv[pos]
            d = a_g - b_g
            diffs.append(d)
            records.append(
                {
                    "slice": col,
                    "value": label,
                    "metric": m,
                    "n": int(pos.size),
                    "mean_a": float(a_g.mean()),
                    "mean_b": float(b_g.mean()),
                    "delta": float(d.mean()),
                    "wins": int((d > 0).sum()),
                    "ties": int((d == 0).sum()),
                    "losses": int((d < 0).sum()),
                    "effect_size": _effect_size(d),
                }
            )
    if not records:  # no slice reaches min_size (a dataset of a few queries): no rows
        empty = pd.DataFrame({c: pd.Series(dtype=object) for c in _COMPARE_COLUMNS})
        empty.attrs["n_unpaired"] = int(n_unpaired)
        return empty
    out = pd.DataFrame.from_records(records)
    low, high = _bootstrap_ci_rows(diffs, confidence, n_resamples, seed)
    out["ci_low"] = low
    out["ci_high"] = high
    out["p_t"] = _t_pvalues(diffs)
    out["p_randomization"] = _signflip_rows(diffs, n_resamples, seed)[0]
    out["p_holm"] = holm(out["p_randomization" if test == "randomization" else "p_t"])
    out = out[list(_COMPARE_COLUMNS)]
    out.attrs["n_unpaired"] = int(n_unpaired)
    return out


def slice_finder(
    per_query: pd.DataFrame,
    metric: str,
    model: str,
    slice_cols: Sequence[str],
    *,
    min_size: int = 10,
    model_b: str | None = None,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int | None = 0,
) -> pd.DataFrame:
    """Rank slices (one value of one slice column) where a model does worst.

    One model: for each slice with at least ``min_size`` queries, ``gap = slice mean - overall
    mean`` of ``model`` over all its queries, with n and the slice mean's bootstrap CI; sorted by
    gap ascending (the slice furthest below the overall mean first; ties: larger n first).
    ``below`` is True when the whole CI lies below the overall mean (a screening flag: the slice is
    part of the overall mean, so this is not a formal test). Columns: ``slice, value, n, mean,
    ci_low, ci_high, overall, gap, below``.

    With ``model_b``: the rows of :func:`compare_slices` (A = ``model``) for ``metric`` without the
    ``all`` row, ``p_holm`` recomputed across the returned slices, plus ``overall_delta``; sorted
    by ``delta`` ascending (where A trails B the most first; reverse the order, or swap the
    models, for A's largest gains).

    Numeric columns should be bucketed first (:func:`bucket_numeric`, :func:`n_gold_bucket`).
    """
    slice_cols = list(slice_cols)
    _check_slice_args(per_query, [metric], slice_cols, min_size)
    _check_resampling(confidence, n_resamples)
    seed = _resolve_seed(seed)

    if model_b is not None:
        comp = compare_slices(
            per_query, [metric], model, model_b, slice_cols,
            confidence=confidence, n_resamples=n_resamples, seed=seed,
        )  # fmt: skip
        overall = float(comp.loc[comp["slice"] == ALL_LABEL, "delta"].iloc[0])
        ranked = comp.loc[(comp["slice"] != ALL_LABEL) & (comp["n"] >= min_size)].copy()
        ranked["p_holm"] = holm(ranked["p_randomization"])
        ranked["overall_delta"] = overall
        ranked = ranked.drop(columns="metric")
        ranked = ranked.sort_values(["delta", "n"], ascending=[True, False], kind="stable")
        ranked.attrs["n_unpaired"] = comp.attrs["n_unpaired"]
        return ranked.reset_index(drop=True)

    rows = _model_rows(per_query, model, [*_QUERY_KEYS, *slice_cols, metric])
    values = _metric_values(rows, metric)
    _finite_or_raise(values, metric, f"for {model!r}")
    overall = float(values.mean())
    groups = _slice_groups(rows, slice_cols, min_size, include_all=False)
    samples = [values[pos] for _, _, pos in groups]
    low, high = _bootstrap_ci_rows(samples, confidence, n_resamples, seed)
    out = pd.DataFrame(
        {
            "slice": [g[0] for g in groups],
            "value": [g[1] for g in groups],
            "n": np.array([s.size for s in samples], dtype=np.int64),
            "mean": np.array([s.mean() for s in samples]),
            "ci_low": low,
            "ci_high": high,
        }
    )
    out["overall"] = overall
    out["gap"] = out["mean"] - overall
    out["below"] = out["ci_high"] < overall
    out = out.sort_values(["gap", "n"], ascending=[True, False], kind="stable")
    return out.reset_index(drop=True)
