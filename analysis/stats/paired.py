"""Paired tests of two models on the same queries: sign-flip randomization, t-test, Wilcoxon,
effect size, win/tie/loss and Holm correction (conventions: :mod:`analysis.stats.inference`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.stats._common import (
    _CHUNK,
    _DISCRETE_RATIO,
    _REL_TOL,
    _STREAM_FLIP,
    _as_1d,
    _check_resampling,
    _generator,
    _resolve_seed,
)  # fmt: skip
from analysis.stats.bootstrap import _bootstrap_ci_rows, _Memo


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
    """Two-sided paired sign-flip p-value of every difference sample; also whether it is exact.

    Exact enumeration over the m non-zero differences when ``2**m <= n_resamples``; few distinct
    values: binomial flip counts; otherwise B random sign patterns over all n positions of the
    sample (a sign on a zero difference changes nothing, so this is the same test), drawn from
    the seed and n only: every sample of length n -- every model pair, metric or slice of that
    size -- is tested against the same patterns, in one matrix product per n. Results are kept
    in a small memo keyed by the exact values, ``n_resamples`` and ``seed``
    (:func:`signflip_pvalues`), so a test asked for twice is computed once."""
    p = np.full(len(rows), np.nan)
    exact = np.zeros(len(rows), dtype=bool)
    exact_by_size: dict[int, list[tuple[int, np.ndarray]]] = {}
    random_by_size: dict[int, list[tuple[int, np.ndarray]]] = {}
    keys: dict[int, bytes] = {}
    for i, row in enumerate(rows):
        if row.size == 0:
            continue
        key = _Memo.key(row, n_resamples, seed)
        known = _FLIPS.get(key)
        if known is not None:
            p[i], exact[i] = known
            continue
        keys[i] = key
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
                random_by_size.setdefault(row.size, []).append((i, row))
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
    for i, key in keys.items():
        _FLIPS.put(key, (float(p[i]), bool(exact[i])))
    return p, exact


_FLIPS = _Memo(64 << 20)


def signflip_pvalues(
    diffs: Sequence[np.ndarray], *, n_resamples: int = 10_000, seed: int | None = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Paired sign-flip p-values of many difference samples at once (``p_randomization`` of
    :func:`paired_comparison` for each ``diffs[i] = a - b``, without the CI and the other
    tests): ``(p, exact, floor)``, where ``exact`` says all patterns were enumerated and
    ``floor`` that p is the Monte-Carlo floor ``1/(B+1)`` (:func:`at_floor`). Samples of the
    same length share one set of random sign patterns (one matrix product); an empty sample
    gives NaN.

    Raises:
        ValueError: a sample that is not 1-D or holds NaN/infinite values; bad settings.
    """
    rows = [_as_1d(d, "diffs") for d in diffs]
    _check_resampling(0.95, n_resamples)
    seed = _resolve_seed(seed)
    p, exact = _signflip_rows(rows, n_resamples, seed)
    return p, exact, at_floor(p, exact, n_resamples)


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
        from scipy.special import stdtr  # scipy.stats.t.sf(x, df) is stdtr(df, -x)

        out[idx] = 2.0 * stdtr(np.asarray(df, dtype=float), -np.abs(t))
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
        randomization_floor: True when ``p_randomization`` is the floor ``1 / (B + 1)`` of a
            Monte-Carlo test: no resample reached the observed statistic, so the true p is below
            it (shown as ``p < 1/(B+1)``, see :func:`format_p`).
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
    randomization_floor: bool = False


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
    p_t, p_w = _t_and_wilcoxon(arr_a, arr_b, d)
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
        randomization_floor=bool(at_floor(p_rand, exact, n_resamples)[0]),
    )


def _t_and_wilcoxon(a: np.ndarray, b: np.ndarray, d: np.ndarray) -> tuple[float, float]:
    """The paired t-test's and Wilcoxon's p-values of ``d = a - b`` (n >= 1), with the
    degenerate cases of :func:`paired_comparison` decided before scipy is called."""
    if not d.any():
        return 1.0, 1.0
    from scipy import stats as sps  # lazy: ~1 s to import, only needed here

    if d.size < 2:
        p_t = math.nan
    elif _is_constant(d):
        p_t = 0.0
    else:
        p_t = float(sps.ttest_rel(a, b).pvalue)
    return p_t, float(sps.wilcoxon(d, zero_method="wilcox").pvalue)


def at_floor(p: np.ndarray, exact: np.ndarray, n_resamples: int) -> np.ndarray:
    """Whether each randomization p is the Monte-Carlo floor ``1 / (B + 1)`` (not exact)."""
    p, exact = np.asarray(p, dtype=float), np.asarray(exact, dtype=bool)
    return ~exact & (p <= (1.0 + 1e-9) / (n_resamples + 1))


def holm_bounds(
    pvalues: Sequence[float] | np.ndarray | pd.Series, floor: Sequence[bool] | np.ndarray
) -> np.ndarray:
    """Which Holm-adjusted p-values (:func:`holm`) are only upper bounds: those whose value comes
    from a raw p at its randomization floor (``floor``), i.e. ``adj_(i) = (m - j + 1) * p_(j)``
    for the j that attains the maximum (the last such j), with ``p_(j)`` floored (a floored p is
    an upper bound of the true p, so the adjusted value bounds the true adjusted p from above)."""
    p = np.asarray(pvalues, dtype=float)
    f = np.asarray(floor, dtype=bool)
    out = np.zeros(p.shape, dtype=bool)
    mask = ~np.isnan(p)
    vals, flo = p[mask], f[mask]
    m = vals.size
    if m == 0:
        return out
    order = np.argsort(vals, kind="stable")
    scaled = (m - np.arange(m)) * vals[order]
    best = np.maximum.accumulate(scaled)
    # index of the running maximum (the last j attaining it)
    arg = np.maximum.accumulate(np.where(scaled >= best, np.arange(m), 0))
    bound = flo[order][arg] & (best < 1.0)
    result = np.empty(m, dtype=bool)
    result[order] = bound
    out[mask] = result
    return out


def format_p(p: float, *, bound: bool = False, digits: int = 2) -> str:
    """A p-value as text: ``"< 0.0001"`` when it is a bound (a randomization p at its floor
    ``1/(B+1)``, or its Holm adjustment: the true p is below the value), else ``digits``
    significant digits (``"0.032"``); below 1e-4 ``"< 0.0001"``; NaN ``"n/a"``."""
    if p is None or not np.isfinite(p):
        return "n/a"
    if bound:
        return f"< {_round_up(p)}"
    if p < 1e-4:
        return "< 0.0001"
    return f"{p:.{digits}g}"


def p_phrase(p: float, *, bound: bool = False) -> str:
    """``"p = 0.032"`` or ``"p < 0.0001"`` (:func:`format_p`) for a sentence."""
    text = format_p(p, bound=bound)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def _round_up(p: float) -> str:
    """The shortest decimal (2 significant digits) not below ``p``: ``1/10001`` -> ``0.0001``."""
    if p <= 0:
        return "0"
    exponent = math.floor(math.log10(p)) - 1
    step = 10.0**exponent
    value = math.ceil(p / step - 1e-9) * step
    return f"{value:.{max(0, -exponent)}f}".rstrip("0").rstrip(".") if value < 1 else "1"


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
