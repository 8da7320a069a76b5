"""Shared pieces of the statistics modules: constants, argument checks, seeded generators and
grouping (see :mod:`analysis.stats.inference` for the conventions)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

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
    "wins", "ties", "losses", "effect_size", "p_t", "p_randomization", "p_holm", "p_floor",
    "p_holm_bound",
)  # fmt: skip


# --------------------------------------------------------------------------- validation helpers


def flag_values(column: pd.Series) -> np.ndarray:
    """A per-query flag column (``indistinguishable``, ``judged``, ...) as a bool array, a
    missing value counting as ``False`` (a table of several datasets where only some carry the
    flag). Any dtype: bool, object with ``None``/NaN, nullable boolean, float 0/1 with NaN;
    a non-zero number is ``True``."""
    values = column.to_numpy()
    present = ~pd.isna(values)
    out = np.zeros(len(values), dtype=bool)
    out[present] = values[present].astype(bool)
    return out


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
