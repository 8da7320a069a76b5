"""Bootstrap confidence intervals of the mean (percentile; BCa for small samples), vectorized
over groups (conventions: :mod:`analysis.stats.inference`)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd

from analysis.stats._common import (
    _CATEGORY_COST,
    _CHUNK,
    _FREQUENT,
    _STREAM_BOOTSTRAP,
    _as_1d,
    _check_resampling,
    _finite_or_raise,
    _generator,
    _group_positions,
    _metric_values,
    _require_columns,
    _resolve_seed,
)  # fmt: skip

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


class _Memo:
    """Bounded memo of resampling results: exact key (the sample's bytes and the settings, see
    :meth:`key`), at most ``max_bytes`` of keys, least recently used dropped first; thread-safe.
    A result depends only on the sample's values, B, the seed (and the confidence), so a memo hit
    returns the number the computation would give."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes, self.size = max_bytes, 0
        self.items: OrderedDict[bytes, tuple] = OrderedDict()
        self.lock = threading.Lock()

    @staticmethod
    def key(row: np.ndarray, *settings: float) -> bytes:
        head = repr(settings).encode() + b"\x00"  # exact for ints of any size and floats
        return head + np.ascontiguousarray(row, dtype=float).tobytes()

    def get(self, key: bytes) -> tuple | None:
        with self.lock:
            found = self.items.get(key)
            if found is not None:
                self.items.move_to_end(key)
            return found

    def put(self, key: bytes, value: tuple) -> None:
        if len(key) > self.max_bytes:
            return
        with self.lock:
            if key not in self.items:
                self.size += len(key)
            self.items[key] = value
            while self.size > self.max_bytes:
                old, _ = self.items.popitem(last=False)
                self.size -= len(old)


_CIS = _Memo(64 << 20)


def _bootstrap_ci_rows(
    rows: Sequence[np.ndarray], confidence: float, n_resamples: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Bootstrap CI of the mean of every sample in ``rows`` (finite 1-D arrays): BCa below
    :data:`BCA_BELOW` values, percentile otherwise (module docstring of
    :mod:`analysis.stats.inference`). Intervals already computed for the same values and
    settings come from a memo (:class:`_Memo`), the others are computed together."""
    low = np.full(len(rows), np.nan)
    high = np.full(len(rows), np.nan)
    keys = [_Memo.key(row, confidence, n_resamples, seed) for row in rows]
    todo = []
    for i, key in enumerate(keys):
        found = _CIS.get(key)
        if found is None:
            todo.append(i)
        else:
            low[i], high[i] = found
    if todo:
        lo, hi = _compute_ci_rows([rows[i] for i in todo], confidence, n_resamples, seed)
        low[todo], high[todo] = lo, hi
        for i, a, b in zip(todo, lo.tolist(), hi.tolist(), strict=True):
            _CIS.put(keys[i], (a, b))
    return low, high


def _compute_ci_rows(
    rows: Sequence[np.ndarray], confidence: float, n_resamples: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_bootstrap_ci_rows` without the memo."""
    probs = _quantile_probs(confidence)
    low = np.full(len(rows), np.nan)
    high = np.full(len(rows), np.nan)
    by_size: dict[int, list[int]] = {}
    bca_by_size: dict[int, list[int]] = {}
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
        elif n < BCA_BELOW:
            bca_by_size.setdefault(n, []).append(i)
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
    for n, members in bca_by_size.items():
        per_call = max(1, _BCA_BUDGET // (n_resamples * n))
        for start in range(0, len(members), per_call):
            part = members[start : start + per_call]
            lo, hi = _bca(np.stack([rows[i] for i in part]), confidence, n_resamples, seed)
            low[part], high[part] = lo, hi
    for members in by_size.values():
        x = np.stack([rows[i] for i in members])
        means = _index_means(x, n_resamples, _generator(seed, _STREAM_BOOTSTRAP))
        quant = np.quantile(means, probs, axis=1)
        low[members] = quant[0]
        high[members] = quant[1]
    return low, high


def _bca(
    rows: np.ndarray, confidence: float, n_resamples: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """BCa interval of the mean of each row of ``rows`` (shape ``(q, n)``), equal to
    ``scipy.stats.bootstrap((row,), np.mean, method="BCa", random_state=rng)`` of each row by
    itself, seeded like the percentile kernel.

    scipy draws one index matrix ``(B, n)`` from the generator; a call on any row alone draws the
    same matrix, so it is drawn once (and kept for the next call with the same n, B and seed,
    :func:`_bca_indices`) and the bootstrap means are computed for all rows: small integer
    values (hit@k, their deltas) are gathered as int8 and summed exactly (so ``sum / n`` is the
    float scipy's mean gives), the others gathered as floats. The BCa interval is then scipy's
    own computation from that distribution (:func:`_bca_interval`). A degenerate BCa (e.g. the
    acceleration is undefined) falls back to the percentile interval of the same resamples."""
    q, n = rows.shape
    idx = _bca_indices(seed, n, n_resamples)
    means = np.empty((q, n_resamples))
    small = np.all(rows == np.round(rows), axis=1) & (np.abs(rows).max(axis=1) <= 127)
    for r in range(q):
        if small[r]:  # exact integer sums, so sum / n is the float scipy's mean gives
            sums = rows[r].astype(np.int8).take(idx).sum(axis=1, dtype=np.int64)
            means[r] = sums.astype(float) / n
        else:
            means[r] = np.mean(rows[r].take(idx), axis=-1)
    with np.errstate(all="ignore"):  # a degenerate sample: NaN levels, handled below
        lo, hi = _bca_interval(rows, means, confidence)
    bad = ~(np.isfinite(lo) & np.isfinite(hi))
    if bad.any():
        quant = np.quantile(means[bad], _quantile_probs(confidence), axis=1)
        lo[bad], hi[bad] = quant[0], quant[1]
    return lo, hi


def _bca_interval(
    rows: np.ndarray, means: np.ndarray, confidence: float
) -> tuple[np.ndarray, np.ndarray]:
    """``scipy.stats.bootstrap((rows,), _row_means, method="BCa", vectorized=True, axis=-1,
    confidence_level=confidence, n_resamples=0, bootstrap_result=<means>)``'s interval, the
    same operations in the same order (scipy 1.17's ``_bca_interval`` and ``stats.quantile``
    with the ``linear`` method) without importing ``scipy.stats`` (about 1 s): with
    ``theta`` the row means, ``z0 = ndtri((#(means < theta) + #(means <= theta)) / 2B)``, the
    acceleration ``a = sum(U^3) / n^3 / 6 / (sum(U^2) / n^2)^1.5`` from the jackknife means
    (``U = (n - 1)(mean of them - each)``), the levels
    ``ndtr(z0 + (z0 + z) / (1 - a (z0 + z)))`` for ``z = ±ndtri((1 - confidence) / 2)``, and the
    linear-interpolation quantiles of the sorted means at those levels (NaN outside [0, 1]).
    ``tests/stats/test_shared_resampling.py`` checks it against scipy bit for bit."""
    from scipy.special import ndtr, ndtri

    n = rows.shape[-1]
    n_resamples = means.shape[-1]
    theta_hat = np.expand_dims(_row_means(rows, axis=-1), axis=-1)
    below = np.count_nonzero(means < theta_hat, axis=-1)
    below += np.count_nonzero(means <= theta_hat, axis=-1)
    z0_hat = ndtri(below.astype(theta_hat.dtype) / (2 * n_resamples))
    keep = np.ones((n, n), dtype=bool)  # jackknife: row i of the index leaves out value i
    np.fill_diagonal(keep, False)
    leave_one_out = np.broadcast_to(np.arange(n), (n, n))[keep].reshape((n, n - 1))
    theta_hat_i = _row_means(rows[..., leave_one_out], axis=-1)  # one sample: scipy's list of 1
    n_j = float(n)
    u = (n_j - 1) * (np.mean(theta_hat_i, axis=-1, keepdims=True) - theta_hat_i)
    num = np.sum(u**3, axis=-1) / n_j**3
    den = np.sum(u**2, axis=-1) / n_j**2
    a_hat = 1 / 6 * num / den ** (3 / 2)
    z_alpha = float(ndtri((1 - confidence) / 2))
    levels = []
    for z in (z_alpha, -z_alpha):
        shifted = z0_hat + z
        levels.append(ndtr(z0_hat + shifted / (1 - a_hat * shifted)))
    p = np.stack(levels, axis=-1)
    y = np.sort(means, axis=-1)
    count = np.asarray(means.shape[-1], dtype=np.float64)
    outside = (p > 1) | (p < 0) | np.isnan(p)
    p = np.where(outside, 0.5, p)
    jg = p * count + (1 - p)
    jp1 = jg // 1
    j = jp1 - 1
    g = jg % 1
    g[j < 0] = 0
    j = np.clip(j, 0.0, count - 1)
    jp1 = np.clip(jp1, 0.0, count - 1)
    ci = (1 - g) * np.take_along_axis(y, j.astype(np.int64), axis=-1) + g * np.take_along_axis(
        y, jp1.astype(np.int64), axis=-1
    )
    ci[outside] = np.nan
    return ci[..., 0].astype(float), ci[..., 1].astype(float)


_INDICES: OrderedDict[tuple[int, int, int], np.ndarray] = OrderedDict()
_INDICES_BYTES = 48 << 20
_INDICES_LOCK = threading.Lock()


def _bca_indices(seed: int, n: int, n_resamples: int) -> np.ndarray:
    """The index matrix ``(B, n)`` scipy's bootstrap draws first from
    ``_generator(seed, _STREAM_BOOTSTRAP)``; the last ones drawn are kept (at most
    :data:`_INDICES_BYTES`), read-only."""
    key = (seed, n, n_resamples)
    with _INDICES_LOCK:
        found = _INDICES.get(key)
        if found is not None:
            _INDICES.move_to_end(key)
            return found
    idx = _generator(seed, _STREAM_BOOTSTRAP).integers(0, n, (n_resamples, n))
    idx = idx.astype(np.int32) if n < 2**31 else idx
    idx.flags.writeable = False
    with _INDICES_LOCK:
        _INDICES[key] = idx
        while sum(a.nbytes for a in _INDICES.values()) > _INDICES_BYTES and len(_INDICES) > 1:
            _INDICES.popitem(last=False)
    return idx


def _row_means(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Means over the last axis, one sample (leading index) at a time: numpy's reduction of a
    3-D array rounds differently from that of each 2-D slice, and a row's interval must not
    depend on the rows computed with it."""
    x = np.asarray(x)
    if x.ndim < 2:
        return np.mean(x, axis=axis)
    return np.stack([np.mean(r, axis=-1) for r in x])


#: Elements (rows x resamples x n) of one vectorized BCa call (~128 MB of float64).
_BCA_BUDGET = 1 << 24


#: Samples smaller than this get BCa intervals (percentile intervals under-cover there: 77 %
#: instead of 95 % for a binary metric with a 5 % rate at n = 30).
BCA_BELOW = 100


# --------------------------------------------------------------------------- public: bootstrap


def bootstrap_ci(
    values: Sequence[float] | np.ndarray | pd.Series,
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int | None = 0,
) -> tuple[float, float]:
    """Bootstrap confidence interval of the mean.

    From :data:`BCA_BELOW` (100) values on: with ``alpha = 1 - confidence``, the ``alpha/2`` and
    ``1 - alpha/2`` quantiles (linear interpolation) of the means of ``n_resamples`` resamples of
    size n drawn with replacement from ``values`` (percentile interval; vectorized, no Python
    loop per resample). Below 100 values: the BCa interval of the same resampling
    (``scipy.stats.bootstrap(method="BCa")``), which covers better on small skewed samples.

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
