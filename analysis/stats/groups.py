"""Run groups (seeds or folds of one model, :mod:`analysis.io.groups`) in the per-query table,
and their statistics.

**Group rows.** :func:`add_group_rows` adds one row per (group, query) to a per-query table,
``model`` = the group's name:

* a *seed group*'s metric columns (every metric and its tie bounds ``<metric>_min/_max``) are
  the mean over its seeds (the tie bounds of the mean are the means of the bounds: each seed's
  tie order is chosen apart); ``tie_sensitive`` and ``tied_at_cutoff`` hold when they hold for
  some seed; ``<metric>_seed_sd`` (for the metrics named in ``spread``) is the standard
  deviation over the seeds (``ddof=1``), the per-query seed spread. Every other column --
  ranking diagnostics such as ``first_gold_rank``, ``n_retrieved``, the geo columns -- is that
  of the first seed, the *representative seed* whose ranking the pages show;
* a *fold group*'s row of a query is the row of the run whose fold holds the query (the
  ``fold_queries`` files, or the queries each fold's run answers); a query in no fold scores 0,
  as a query missing from a run, with the fold ``(none)``.

Every row gains ``seeds`` (the number of seeds: 1 for a run or a fold group) and
``run_group`` (the group a run belongs to, ``""`` for other rows), so the table alone says
which runs a group holds (:func:`group_members`). With one fold
group the dataset gets a ``fold`` slice column on every row (the fold is a property of the
query, so every model can be sliced by it); with several, ``fold (<group>)`` columns.

**Statistics.** A seed group's per-query value is its seed mean, so paired tests against
another model (t, Wilcoxon, randomization) are the usual tests on the seed means;
:func:`two_level_ci` gives the CI of the group's mean that also resamples seeds;
:func:`seed_sensitivity` says how often A against B changes sign between seed pairs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.core.errors import InputError
from analysis.core.metrics import parse_metrics
from analysis.io.groups import RunGroup, fold_query_ids
from analysis.stats._common import (
    _CATEGORY_COST,
    _FREQUENT,
    _REL_TOL,
    _check_resampling,
    _generator,
    _resolve_seed,
    flag_values,
)
from analysis.stats.bootstrap import _index_means, _quantile_probs, _split_means, bootstrap_ci

__all__ = [
    "NO_FOLD",
    "SeedSensitivity",
    "add_group_rows",
    "fold_column",
    "fold_summary",
    "group_members",
    "model_matrix",
    "seed_sensitivity",
    "two_level_ci",
    "with_two_level_cis",
]

NO_FOLD = "(none)"
_STREAM_TWO_LEVEL = 2
_ANY_OF = ("tie_sensitive", "tied_at_cutoff")
_MISSING = {"missing_from_run": True, "n_retrieved": 0}


def _is_metric(name: str) -> bool:
    """A metric column or its tie bound (``hit@1``, ``mrr_min``, ``twin_recall@10``)."""
    base = name.removesuffix("_min").removesuffix("_max")
    if "@" in base:
        return True
    try:
        parse_metrics([base])
    except ValueError:
        return False
    return True


def _metric_columns(frame: pd.DataFrame) -> list[str]:
    return [
        c for c in frame.columns if _is_metric(str(c)) and pd.api.types.is_float_dtype(frame[c])
    ]


def _member_frames(table: pd.DataFrame, group: RunGroup) -> list[pd.DataFrame]:
    """Each member's rows, indexed by query id in the first member's order."""
    frames = []
    for member in group.members:
        rows = table.loc[table["model"] == member]
        if rows.empty:
            raise InputError(group.name, None, f"group member {member!r} has no evaluated run")
        frames.append(rows.set_index(rows["query_id"].astype("str"), drop=False))
    order = frames[0].index
    return [frames[0], *(f.reindex(order) for f in frames[1:])]


def _seed_rows(table: pd.DataFrame, group: RunGroup, spread: Sequence[str]) -> pd.DataFrame:
    frames = _member_frames(table, group)
    out = frames[0].copy()
    columns = _metric_columns(out)
    stack = np.stack([f[columns].to_numpy(dtype=np.float64, na_value=np.nan) for f in frames])
    out[columns] = np.nanmean(stack, axis=0)
    for column in _ANY_OF:
        if column in out.columns:
            flags = [flag_values(f[column]) for f in frames]
            out[column] = np.logical_or.reduce(flags)
    for metric in spread:
        if metric in columns:
            out[f"{metric}_seed_sd"] = np.std(stack[:, :, columns.index(metric)], axis=0, ddof=1)
    out["model"] = group.name
    out["seeds"] = len(group.members)
    out["run_group"] = ""
    return out.reset_index(drop=True)


def _inferred_folds(frames: list[pd.DataFrame], group: RunGroup) -> pd.Series:
    """Query id -> fold: the fold whose run answers the query (not ``missing_from_run``)."""
    fold = pd.Series(NO_FOLD, index=frames[0].index, dtype=object)
    for name, frame in zip(group.folds, frames, strict=True):
        answered = ~frame["missing_from_run"].fillna(True).astype(bool)
        clash = answered & (fold != NO_FOLD)
        if clash.any():
            qid = str(clash[clash].index[0])
            raise InputError(
                group.name,
                None,
                f"query {qid!r} is answered by the runs of folds {fold[qid]!r} and {name!r}; "
                "name each fold's queries with fold_queries",
            )
        fold[answered] = name
    return fold


def _fold_rows(table: pd.DataFrame, group: RunGroup) -> tuple[pd.DataFrame, pd.Series]:
    frames = _member_frames(table, group)
    given = fold_query_ids(group)
    if given is None:
        fold = _inferred_folds(frames, group)
    else:
        owner = {q: f for f, ids in given.items() for q in ids}
        fold = pd.Series([owner.get(q, NO_FOLD) for q in frames[0].index], frames[0].index)
    parts = [f.loc[(fold == name).to_numpy()] for name, f in zip(group.folds, frames, strict=True)]
    lost = frames[0].loc[(fold == NO_FOLD).to_numpy()].copy()
    if len(lost):
        lost[_metric_columns(lost)] = 0.0
        for column, value in _MISSING.items():
            if column in lost.columns:
                lost[column] = value
        if "first_gold_rank" in lost.columns:
            lost["first_gold_rank"] = np.nan
    out = pd.concat([*parts, lost]).reindex(frames[0].index)
    out["model"] = group.name
    out["seeds"] = 1
    out["run_group"] = ""
    return out.reset_index(drop=True), fold


def fold_column(group: str, n_fold_groups: int) -> str:
    """The slice column of a fold group: ``fold``, or ``fold (<group>)`` when the dataset has
    several fold groups."""
    return "fold" if n_fold_groups == 1 else f"fold ({group})"


def add_group_rows(
    table: pd.DataFrame, groups: Mapping[str, RunGroup], *, spread: Sequence[str] = ()
) -> pd.DataFrame:
    """``table`` (one dataset's per-query table) with the rows of every group, a ``seeds``
    column and the fold slice columns (module docstring). Without groups, ``table`` itself.

    Raises:
        InputError: a member without rows, fold runs that answer the same query, an unreadable
            fold file.
    """
    if not groups or table.empty:
        return table
    owner = {m: name for name, g in groups.items() for m in g.members}
    base = table.assign(seeds=1, run_group=table["model"].map(owner).fillna("").astype("str"))
    parts, folds = [base], {}
    n_folds = sum(g.kind == "folds" for g in groups.values())
    for name, group in groups.items():
        if group.kind == "seeds":
            parts.append(_seed_rows(base, group, spread))
        else:
            rows, fold = _fold_rows(base, group)
            parts.append(rows)
            folds[fold_column(name, n_folds)] = fold
    out = pd.concat(parts, ignore_index=True)
    ids = out["query_id"].astype("str")
    for column, fold in folds.items():
        out[column] = ids.map(fold).fillna(NO_FOLD).astype("str")
    out["seeds"] = out["seeds"].astype(np.int64)
    return out


def group_members(table: pd.DataFrame) -> dict[str, tuple[str, list[str]]]:
    """The run groups of a per-query table (its ``run_group`` and ``seeds`` columns): group
    name -> (``"seeds"`` or ``"folds"``, its runs in table order). Empty without groups."""
    if "run_group" not in table.columns:
        return {}
    named = table.loc[table["run_group"].astype("str") != "", ["model", "run_group"]]
    pairs = named.drop_duplicates()
    out: dict[str, tuple[str, list[str]]] = {}
    for name, rows in pairs.groupby("run_group", sort=False):
        seeds = table.loc[table["model"] == name, "seeds"]
        kind = "seeds" if len(seeds) and int(seeds.iloc[0]) > 1 else "folds"
        out[str(name)] = (kind, rows["model"].astype(str).tolist())
    return out


def model_matrix(table: pd.DataFrame, model: str, metric: str) -> tuple[pd.Index, np.ndarray]:
    """A model's values of ``metric`` per query and seed: query ids and an ``(n, s)`` array
    (one column per seed of a seed group, else one column, the model's own values). ``table``
    is one dataset's per-query table."""
    kind, members = group_members(table).get(model, ("run", [model]))
    frames = []
    for member in members if kind == "seeds" else [model]:
        rows = table.loc[table["model"] == member]
        frames.append(pd.Series(rows[metric].to_numpy(float), index=rows["query_id"].astype(str)))
    wide = pd.concat(frames, axis=1, join="inner") if len(frames) > 1 else frames[0].to_frame()
    return wide.index, wide.to_numpy(dtype=np.float64)


def with_two_level_cis(
    ci: pd.DataFrame, table: pd.DataFrame, *, n_resamples: int = 10_000, seed: int = 0
) -> pd.DataFrame:
    """``ci`` (rows ``[dataset,] model, metric, ..., ci_low, ci_high`` of
    :func:`analysis.stats.mean_ci`) with the intervals of every seed group replaced by
    :func:`two_level_ci` (queries and seeds resampled), each row's from its own dataset's
    queries; other rows unchanged."""
    seeded = [g for g, (kind, _) in group_members(table).items() if kind == "seeds"]
    if not seeded or ci.empty:
        return ci
    out = ci.copy()
    keys = ["dataset", "model", "metric"] if "dataset" in out else ["model", "metric"]
    for key, at in out.groupby(keys, sort=False).groups.items():
        *dataset, name, metric = key
        if name not in seeded:
            continue
        rows = table.loc[table["dataset"] == dataset[0]] if dataset else table
        _, values = model_matrix(rows, str(name), str(metric))
        finite = values[np.isfinite(values).all(axis=1)]
        low, high = two_level_ci(finite, n_resamples=n_resamples, seed=seed)
        out.loc[at, ["ci_low", "ci_high"]] = low, high
    return out


# --------------------------------------------------------------------------- two-level bootstrap


def _query_means(m: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Bootstrap means of ``m`` (queries resampled with replacement), shape ``(B,)``; few
    distinct values (seed means of hit@k) are drawn as multinomial counts."""
    uniq, inverse, counts = np.unique(m, return_inverse=True, return_counts=True)
    frequent = counts >= _FREQUENT
    n_rest = m.size - int(counts[frequent].sum())
    if frequent.any() and _CATEGORY_COST * int(frequent.sum()) + n_rest <= m.size // 2:
        rest = m[~frequent[inverse]]
        return _split_means(uniq[frequent], counts[frequent], rest, n_resamples, rng)
    return _index_means(m[None, :], n_resamples, rng)[0]


def _seed_effects(x: np.ndarray) -> np.ndarray:
    """The seeds' effects ``c_j - g`` (column mean minus grand mean), shrunk to the estimated
    between-seed variance and scaled so that resampling s of them has that variance over s:
    ``sqrt(lambda^2 s / (s - 1)) (c_j - g)`` with ``lambda^2 = max(0, 1 - MSE / MS_seed)``,
    MS_seed and MSE the two-way ANOVA mean squares of seeds and of the residual."""
    n, s = x.shape
    rows, cols, grand = x.mean(axis=1), x.mean(axis=0), x.mean()
    effects = cols - grand
    ms_seed = n * float((effects**2).sum()) / (s - 1)
    if n < 2 or ms_seed <= 0:
        return np.zeros(s)
    residual = x - rows[:, None] - cols[None, :] + grand
    mse = float((residual**2).sum()) / ((n - 1) * (s - 1))
    shrink = max(0.0, 1.0 - mse / ms_seed)
    return effects * math.sqrt(shrink * s / (s - 1))


def two_level_ci(
    values: np.ndarray,
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int | None = 0,
) -> tuple[float, float]:
    """Confidence interval of a seed group's mean that resamples queries and seeds.

    ``values`` is ``(n queries, s seeds)``. Each resample b draws n queries and s seeds with
    replacement, independently, and takes ``mean(m[I_b]) + mean(e[J_b])``: ``m`` the per-query
    seed means, ``e`` the seeds' effects shrunk to the between-seed variance component
    (:func:`_seed_effects`; the residual query x seed noise is already in ``m``, and counting
    it twice would widen the interval). This is the random-effects bootstrap of a crossed
    design (Davison & Hinkley 1997, section 3.8, residuals adjusted to their variance
    components); the interval is the percentile interval of the B means. Seeded and vectorized
    (multinomial counts for few distinct seed means). ``tests/stats/test_groups.py`` checks its
    coverage on simulated seeds.

    One seed (s = 1) gives :func:`analysis.stats.bootstrap_ci` of the values; n = 0 gives
    ``(nan, nan)``. With few seeds the seed part is itself uncertain (3 seeds estimate a
    variance from 2 degrees of freedom): read the interval with its number of seeds.

    Raises:
        ValueError: not 2-D, NaN or infinite values; bad confidence, n_resamples or seed.
    """
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"values must be (queries, seeds), got shape {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError("values contain NaN or infinite numbers")
    _check_resampling(confidence, n_resamples)
    seed = _resolve_seed(seed)
    n, s = x.shape
    if n == 0 or s == 0:
        return math.nan, math.nan
    if s == 1:
        return bootstrap_ci(x[:, 0], confidence=confidence, n_resamples=n_resamples, seed=seed)
    rng = _generator(seed, _STREAM_TWO_LEVEL)
    means = _query_means(x.mean(axis=1), n_resamples, rng)
    effects = _seed_effects(x)
    means += effects[rng.integers(0, s, size=(n_resamples, s))].mean(axis=1)
    low, high = np.quantile(means, _quantile_probs(confidence))
    return float(low), float(high)


# --------------------------------------------------------------------------- seed sensitivity


@dataclass(frozen=True)
class SeedSensitivity:
    """How A against B depends on the seeds (:func:`seed_sensitivity`).

    Attributes:
        deltas: ``(s_a, s_b)`` mean of ``a_i - b_j`` over the queries, for seed i of A and
            seed j of B.
        delta: the mean difference of the seed means (``mean(deltas)``).
        n_pairs: ``s_a * s_b``.
        n_flips: seed pairs whose delta has another sign than ``delta`` (a zero delta against
            a non-zero one counts; a mean within ``1e-10 * max|value|`` of 0 is zero, so float
            rounding flips nothing).
        query_unstable: per query, whether the seed pairs disagree on its winner (A, B or a
            tie).
    """

    deltas: np.ndarray
    delta: float
    n_pairs: int
    n_flips: int
    query_unstable: np.ndarray

    @property
    def n_unstable(self) -> int:
        """Queries whose winner depends on the seed pair."""
        return int(self.query_unstable.sum())


def seed_sensitivity(a: np.ndarray, b: np.ndarray) -> SeedSensitivity:
    """Sign of A − B for every pair of seeds: ``a`` is ``(n, s_a)``, ``b`` ``(n, s_b)``, the
    same queries in the same order (a single run is one column).

    Raises:
        ValueError: shapes that do not pair up, NaN or infinite values.
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.ndim != 2 or b.ndim != 2 or a.shape[0] != b.shape[0]:
        raise ValueError(f"a and b must be (queries, seeds) with equal n: {a.shape}, {b.shape}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("values contain NaN or infinite numbers")
    diff = a[:, :, None] - b[:, None, :]  # (n, s_a, s_b)
    deltas = diff.mean(axis=0) if len(a) else np.full((a.shape[1], b.shape[1]), np.nan)
    delta = float(a.mean() - b.mean()) if len(a) else math.nan
    signs = np.sign(diff).reshape(len(a), -1)
    unstable = (signs != signs[:, :1]).any(axis=1) if len(a) else np.zeros(0, bool)
    # means within rounding of 0 are 0: a (n, 2) array's mean rounds apart from a (n, 1) one's
    tol = _REL_TOL * max(float(np.abs(a).max(initial=0)), float(np.abs(b).max(initial=0)))

    def sign(v: np.ndarray | float) -> np.ndarray:
        return np.where(np.abs(v) <= tol, 0.0, np.sign(v))

    flips = int((sign(deltas) != sign(delta)).sum()) if len(a) else 0
    return SeedSensitivity(deltas, delta, int(deltas.size), flips, unstable)


# --------------------------------------------------------------------------- folds


def fold_summary(
    table: pd.DataFrame,
    column: str,
    metrics: Sequence[str],
    models: Sequence[str],
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> pd.DataFrame:
    """Metrics per fold and pooled: one row per model and fold of ``column`` (a fold slice
    column), then a ``pooled`` row per model (every query), each ``model, fold, n`` and per
    metric the mean and its bootstrap CI (:func:`analysis.stats.mean_ci`)."""
    from analysis.stats.bootstrap import mean_ci

    rows = table.loc[table["model"].isin(list(models))]
    per = mean_ci(rows, list(metrics), by=["model", column], n_resamples=n_resamples, seed=seed)
    pooled = mean_ci(rows, list(metrics), by=["model"], n_resamples=n_resamples, seed=seed)
    per = per.rename(columns={column: "fold"})
    pooled["fold"] = "pooled"
    out = pd.concat([per, pooled], ignore_index=True)
    if "metric" not in out.columns:
        out["metric"] = metrics[0]
    rank = {m: i for i, m in enumerate(models)}
    out = out.assign(_m=out["model"].map(rank), _p=out["fold"] == "pooled")
    out = out.sort_values(["_m", "metric", "_p", "fold"], kind="stable")
    return out[["model", "fold", "metric", "n", "mean", "ci_low", "ci_high"]].reset_index(drop=True)
