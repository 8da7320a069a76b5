"""Slices of a per-query table: answer-set size and numeric buckets, per-slice paired comparison
with Holm correction, and the slice finder (conventions: :mod:`analysis.stats.inference`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, TypedDict, Unpack

import numpy as np
import pandas as pd

from analysis.core.options import check_options
from analysis.stats._common import (
    _COMPARE_COLUMNS,
    _QUERY_KEYS,
    ALL_LABEL,
    MISSING_LABEL,
    NGOLD_BUCKETS,
    _check_resampling,
    _finite_or_raise,
    _group_positions,
    _metric_values,
    _require_columns,
    _resolve_seed,
)  # fmt: skip
from analysis.stats.bootstrap import _bootstrap_ci_rows
from analysis.stats.paired import (
    _effect_size,
    _signflip_rows,
    _t_pvalues,
    at_floor,
    holm,
    holm_bounds,
)

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
    0-based position ``min(ceil(j * n / k), n - 1)``: k buckets of (nearly) equal counts when
    values are distinct; edges are de-duplicated, so heavily tied data (or fewer than k values)
    gives fewer buckets, none empty. Bucket j holds ``edge_j <= x < edge_{j+1}``; the last
    holds ``edge_last <= x <= max``.
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
    # ceil(j * n / k), at most n - 1: with fewer values than buckets (n = 2, k = 4) the last
    # positions would run past the end; the repeated edges are de-duplicated below
    positions = np.minimum(-((-np.arange(n_buckets) * x.size) // n_buckets), x.size - 1)
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


def _largest_deltas(rows: pd.DataFrame, top: int) -> np.ndarray:
    """Positions of the ``all`` rows and of the ``top`` other rows with the largest |delta|
    (stable: the first in table order on equal |delta|), ascending."""
    is_all = (rows["slice"] == ALL_LABEL).to_numpy()
    others = np.flatnonzero(~is_all)
    by_size = np.argsort(-np.abs(rows["delta"].to_numpy(dtype=float)[others]), kind="stable")
    return np.sort(np.r_[np.flatnonzero(is_all), others[by_size[: max(int(top), 0)]]])


class FinderOptions(TypedDict, total=False):
    """The keyword options of :func:`slice_finder`: the bootstrap ``confidence``,
    ``n_resamples`` and ``seed`` of the resampling and the smallest slice (``min_size``)."""

    confidence: float
    n_resamples: int
    seed: int | None
    min_size: int


class SliceOptions(FinderOptions, total=False):
    """The keyword options of :func:`compare_slices`: those of :class:`FinderOptions`, the test
    Holm adjusts (``test``) and how many slices get a CI (``ci_top``)."""

    test: Literal["randomization", "t"]
    ci_top: int | None


def compare_slices(
    per_query: pd.DataFrame,
    metric_cols: Sequence[str],
    model_a: str,
    model_b: str,
    slice_cols: Sequence[str] = (),
    **options: Unpack[SliceOptions],
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
    adjustment of ``p_randomization`` (or ``p_t`` with ``test="t"``) across *all* rows returned.
    ``p_floor`` says that ``p_randomization`` is the Monte-Carlo floor ``1/(B+1)`` (the true p
    is below it) and ``p_holm_bound`` that ``p_holm`` is only an upper bound for that reason
    (:func:`analysis.stats.paired.holm_bounds`); show them with ``format_p(p, bound=...)``
    (slices x metrics, ``all`` rows included).

    Options (keywords, :class:`SliceOptions`): ``confidence`` (0.95), ``n_resamples`` (10,000),
    ``seed`` (0), ``min_size`` (1), ``test`` (``"randomization"`` or ``"t"``) and ``ci_top``
    (``None``). ``ci_top``: for callers that show only the slices with the largest |delta|, only the
    ``all`` rows and the ``ci_top`` other rows with the largest |delta| (in table order on equal
    |delta|, i.e. a stable sort) get a bootstrap CI; the others get NaN. Every other column,
    p-values and Holm included, is unchanged, and the CIs computed are the same numbers.

    Returns:
        Columns ``slice, value, metric, n, mean_a, mean_b, delta, ci_low, ci_high, wins, ties,
        losses, effect_size, p_t, p_randomization, p_holm, p_floor, p_holm_bound``.

    Raises:
        ValueError: missing columns, unknown model, A == B, duplicated queries, NaN metric values
            on paired queries, no query scored by both models, bad settings.
    """
    check_options("compare_slices", options, SliceOptions)
    confidence = options.get("confidence", 0.95)
    n_resamples = options.get("n_resamples", 10_000)
    min_size, test = options.get("min_size", 1), options.get("test", "randomization")
    metrics = list(metric_cols)
    slice_cols = list(slice_cols)
    _check_slice_args(per_query, metrics, slice_cols, min_size)
    _check_resampling(confidence, n_resamples)
    if test not in ("randomization", "t"):
        raise ValueError(f"test must be 'randomization' or 't', got {test!r}")
    if model_a == model_b:
        raise ValueError(f"model_a and model_b are the same model ({model_a!r})")
    seed = _resolve_seed(options.get("seed", 0))
    paired, a_cols, b_cols, n_unpaired = _paired(per_query, metrics, (model_a, model_b), slice_cols)
    groups = _slice_groups(paired, slice_cols, min_size, include_all=True)
    records, diffs = _slice_records(groups, metrics, a_cols, b_cols)
    if not records:  # no slice reaches min_size (a dataset of a few queries): no rows
        empty = pd.DataFrame({c: pd.Series(dtype=object) for c in _COMPARE_COLUMNS})
        empty.attrs["n_unpaired"] = int(n_unpaired)
        return empty
    out = _with_tests(pd.DataFrame.from_records(records), diffs, options, seed)
    out = out[list(_COMPARE_COLUMNS)]
    out.attrs["n_unpaired"] = int(n_unpaired)
    return out


def _with_tests(
    out: pd.DataFrame, diffs: list[np.ndarray], options: SliceOptions, seed: int
) -> pd.DataFrame:
    """The rows with their bootstrap CIs (NaN for the rows ``ci_top`` leaves out), t-test and
    sign-flip p-values, Holm's adjustment of the chosen test and the Monte-Carlo floor flags."""
    confidence = options.get("confidence", 0.95)
    n_resamples = options.get("n_resamples", 10_000)
    test = options.get("test", "randomization")
    wanted = np.arange(len(diffs))
    ci_top = options.get("ci_top")
    if ci_top is not None:
        wanted = _largest_deltas(out, ci_top)
    low, high = np.full(len(diffs), np.nan), np.full(len(diffs), np.nan)
    low[wanted], high[wanted] = _bootstrap_ci_rows(
        [diffs[i] for i in wanted], confidence, n_resamples, seed
    )
    out["ci_low"] = low
    out["ci_high"] = high
    out["p_t"] = _t_pvalues(diffs)
    p_rand, exact = _signflip_rows(diffs, n_resamples, seed)
    out["p_randomization"] = p_rand
    out["p_holm"] = holm(out["p_randomization" if test == "randomization" else "p_t"])
    out["p_floor"] = at_floor(p_rand, exact, n_resamples)
    out["p_holm_bound"] = holm_bounds(p_rand, out["p_floor"]) if test == "randomization" else False
    return out


def _slices_against(comp: pd.DataFrame, min_size: int) -> pd.DataFrame:
    """:func:`slice_finder` against a model B: the slices of ``comp`` (one metric) with at least
    ``min_size`` pairs, Holm over them, the overall delta beside, A's worst trail first."""
    overall = float(comp.loc[comp["slice"] == ALL_LABEL, "delta"].iloc[0])
    ranked = comp.loc[(comp["slice"] != ALL_LABEL) & (comp["n"] >= min_size)].copy()
    ranked["p_holm"] = holm(ranked["p_randomization"])
    ranked["p_holm_bound"] = holm_bounds(ranked["p_randomization"], ranked["p_floor"])
    ranked["overall_delta"] = overall
    ranked = ranked.drop(columns="metric")
    ranked = ranked.sort_values(["delta", "n"], ascending=[True, False], kind="stable")
    ranked.attrs["n_unpaired"] = comp.attrs["n_unpaired"]
    return ranked.reset_index(drop=True)


def _paired(
    per_query: pd.DataFrame,
    metrics: Sequence[str],
    models: tuple[str, str],
    slice_cols: Sequence[str],
) -> tuple[pd.DataFrame, list[np.ndarray], list[np.ndarray], int]:
    """A's rows (query keys, slice columns, metrics) joined with B's metrics on the query keys,
    each metric's values of A and of B on those pairs (finite, else ``ValueError``), and the
    number of queries scored by only one of the two."""
    model_a, model_b = models
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
    return paired, a_cols, b_cols, n_unpaired


def _slice_records(
    groups: Sequence[tuple[str, str, np.ndarray]],
    metrics: Sequence[str],
    a_cols: Sequence[np.ndarray],
    b_cols: Sequence[np.ndarray],
) -> tuple[list[dict[str, object]], list[np.ndarray]]:
    """Per slice and metric: n, means, delta, wins/ties/losses and effect size, and the
    differences ``a - b`` the CIs and tests are computed from."""
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
    return records, diffs


def slice_finder(
    per_query: pd.DataFrame,
    metric: str,
    model: str,
    slice_cols: Sequence[str],
    *,
    model_b: str | None = None,
    **options: Unpack[FinderOptions],
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

    Options (keywords, :class:`FinderOptions`): ``min_size`` (10), ``confidence`` (0.95),
    ``n_resamples`` (10,000), ``seed`` (0).

    Numeric columns should be bucketed first (:func:`bucket_numeric`, :func:`n_gold_bucket`).
    """
    check_options("slice_finder", options, FinderOptions)
    confidence = options.get("confidence", 0.95)
    n_resamples = options.get("n_resamples", 10_000)
    min_size = options.get("min_size", 10)
    slice_cols = list(slice_cols)
    _check_slice_args(per_query, [metric], slice_cols, min_size)
    _check_resampling(confidence, n_resamples)
    seed = _resolve_seed(options.get("seed", 0))

    if model_b is not None:
        comp = compare_slices(
            per_query, [metric], model, model_b, slice_cols,
            confidence=confidence, n_resamples=n_resamples, seed=seed,
        )  # fmt: skip
        return _slices_against(comp, min_size)

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
