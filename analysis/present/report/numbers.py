"""The numbers of one dataset, computed once: leaderboard rows, best-against-the-rest tests, A
against B (per dataset and per slice), slice means, worst slices, failure causes and the worst
queries (:func:`dataset_numbers`).

Everything of one dataset depends only on that dataset's rows of the per-query table, the report
metric, the models A and B and the resampling settings, so the Report page caches it per dataset
and a change of the selection recomputes only the datasets it touches. Holm corrections that
span datasets are applied afterwards by :mod:`analysis.present.report.content`.

The part that does not depend on models A and B (:func:`model_numbers`: leaderboard, the
best-against-the-rest randomization tests, the slice chart's means, the failure causes) can be
computed once and passed in, so choosing other models recomputes only the A-vs-B part.
Randomization tests are computed once: the p-values of every paired test over all queries of a
dataset (A against B on each leaderboard metric, the best model against each other one) come
from one :func:`analysis.stats.paired.signflip_pvalues` call, i.e. one matrix of random sign
patterns per sample size and one matrix product; the A-vs-B rows and the per-slice deltas
(whose ``all`` row is the same test) find them in the sign-flip memo, and the
best-against-the-rest marks are p-value-only tests (no CI is shown for them). A test's p-value
depends only on the two models' values, B and the seed (the patterns are drawn from the seed
and the sample size), so sharing changes no number.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.core.metrics import parse_metric
from analysis.present.report.model import (
    MAX_SLICE_COLUMNS,
    MAX_SLICE_VALUES,
    MIN_SLICE,
    TOP_SLICE_DELTAS,
    TOP_WORST_SLICES,
    varied_slices,
)
from analysis.present.report.queries import worst_queries
from analysis.present.slicing import order_slice_values, slice_labels
from analysis.stats import compare_slices, flag_values, holm, mean_ci, slice_finder
from analysis.stats.groups import with_two_level_cis
from analysis.stats.paired import holm_bounds, signflip_pvalues

__all__ = [
    "DatasetNumbers",
    "ModelNumbers",
    "cause_examples",
    "dataset_numbers",
    "model_numbers",
]

_COMPARE_KEYS = ("slice", "value", "metric")


@dataclass(frozen=True)
class DatasetNumbers:
    """The statistics of one dataset (frames may be empty).

    ``board``: :func:`analysis.stats.mean_ci` rows ``dataset, model, metric, n, mean, ci_low,
    ci_high`` of the leaderboard metrics; ``best_vs_rest``: ``dataset, model, metric,
    best_model, p`` (uncorrected); ``compare``: the ``all`` rows of A against B for every
    leaderboard metric (``p_holm`` still to be computed over the datasets); ``slice_deltas``:
    the :data:`TOP_SLICE_DELTAS` slices with the largest |delta| (Holm within the dataset);
    ``slice_summary``: the slice chart's means; ``worst_slices``: model A's
    :data:`TOP_WORST_SLICES` worst slices; ``causes``: one row per model; ``worst_queries``:
    model A's queries, worst first; ``examples``: one query of model A per failure cause
    (:func:`cause_examples`)."""

    name: str
    metric: str
    shown: tuple[str, ...]
    board: pd.DataFrame
    best_vs_rest: pd.DataFrame
    compare: pd.DataFrame
    slice_deltas: pd.DataFrame
    slice_summary: pd.DataFrame
    worst_slices: pd.DataFrame
    causes: pd.DataFrame
    worst_queries: pd.DataFrame
    examples: dict[str, str]


class _PairTests:
    """The paired tests of one dataset: :func:`analysis.stats.compare_slices` rows over all
    queries per (x, y, metric), and p-value-only tests (:func:`signflip_pvalues`, for the
    best-against-the-rest marks, where no CI is shown). :meth:`prefetch` computes the p-values
    of every pair and metric the report needs in one call (one matrix of sign patterns per
    sample size); :func:`compare_slices` then finds those p-values in the sign-flip memo."""

    def __init__(self, sub: pd.DataFrame, n_resamples: int, seed: int) -> None:
        self.sub, self.n_resamples, self.seed = sub, n_resamples, seed
        self.rows: dict[tuple[str, str, str], dict[str, object]] = {}
        self.p: dict[tuple[str, str, str], tuple[float, bool]] = {}
        self.ids: dict[str, np.ndarray] = {}
        self.index: dict[str, pd.Index] = {}

    def keep(self, x: str, y: str, comp: pd.DataFrame) -> None:
        for rec in comp.loc[comp["slice"] == "all"].to_dict("records"):
            self.rows[(x, y, str(rec["metric"]))] = rec
            self.p[(x, y, str(rec["metric"]))] = (rec["p_randomization"], bool(rec["p_floor"]))

    def _diff(self, x: str, y: str, metric: str) -> np.ndarray | None:
        """x - y on the queries both scored, in x's row order (as compare_slices pairs them);
        None when a value is missing."""
        ids_x, vals_x = self._model(x, metric)
        ids_y, vals_y = self._model(y, metric)
        if not len(ids_x) or not len(ids_y):
            return None
        index_y = pd.Index(ids_y)
        if not (index_y.is_unique and pd.Index(ids_x).is_unique):
            return None  # not one row per query: compare_slices says so where it is shown
        where = index_y.get_indexer(ids_x)
        found = where >= 0
        d = vals_x[found] - vals_y[where[found]]
        return d if d.size and np.isfinite(d).all() else None

    def _model(self, model: str, metric: str) -> tuple[np.ndarray, np.ndarray]:
        """Query ids and ``metric`` values of ``model``'s rows, in table order."""
        if model not in self.ids:
            rows = self.sub.loc[self.sub["model"] == model]
            self.ids[model] = rows["query_id"].astype(str).to_numpy()
            self.index[model] = rows.index
        rows = self.sub.loc[self.index[model], metric]
        return self.ids[model], rows.to_numpy(dtype=float, na_value=np.nan)

    def prefetch(self, wanted: Sequence[tuple[str, str, str]]) -> None:
        """p-values of every (x, y, metric) in ``wanted`` not known yet, in one call."""
        todo = [w for w in dict.fromkeys(wanted) if w not in self.p]
        diffs = {w: self._diff(*w) for w in todo}
        todo = [w for w in todo if diffs[w] is not None]
        if not todo:
            return
        p, _, floor = signflip_pvalues(
            [diffs[w] for w in todo], n_resamples=self.n_resamples, seed=self.seed
        )
        for w, value, low in zip(todo, p.tolist(), floor.tolist(), strict=True):
            self.p[w] = (value, bool(low))

    def pvalue(self, x: str, y: str, metric: str) -> tuple[float, bool] | None:
        """``(p, at the floor)`` of x against y on ``metric``; None when not comparable."""
        self.prefetch([(x, y, metric)])
        return self.p.get((x, y, metric))

    def get(self, x: str, y: str, metrics: Sequence[str]) -> pd.DataFrame:
        """The ``all`` rows of x against y for ``metrics`` (missing ones computed in one call);
        empty when they cannot be compared (e.g. a metric not computed for every query)."""
        todo = [m for m in metrics if (x, y, m) not in self.rows]
        if todo:
            try:
                comp = compare_slices(
                    self.sub, todo, x, y, n_resamples=self.n_resamples, seed=self.seed
                )
            except ValueError:
                return pd.DataFrame()
            self.keep(x, y, comp)
        return pd.DataFrame([self.rows[(x, y, m)] for m in metrics if (x, y, m) in self.rows])


@dataclass(frozen=True)
class ModelNumbers:
    """The part of :class:`DatasetNumbers` that does not depend on models A and B: the
    leaderboard rows, the best-against-the-rest tests, the slice chart's means and the failure
    causes of every model (cache it per dataset and report metric)."""

    board: pd.DataFrame
    best_vs_rest: pd.DataFrame
    slice_summary: pd.DataFrame
    causes: pd.DataFrame


def model_numbers(
    sub: pd.DataFrame,
    *,
    metric: str,
    shown: Sequence[str],
    n_resamples: int,
    seed: int,
    _tests: _PairTests | None = None,
    _board: pd.DataFrame | None = None,
) -> ModelNumbers:
    """:class:`ModelNumbers` of one dataset's rows ``sub`` (see :func:`dataset_numbers`)."""
    tests = _tests or _PairTests(sub, n_resamples, seed)
    name = str(sub["dataset"].iloc[0])
    board = _leaderboard(sub, shown, n_resamples, seed) if _board is None else _board
    return ModelNumbers(
        board=board,
        best_vs_rest=_best_vs_rest(name, board, tests),
        slice_summary=_slice_summary(sub, metric, n_resamples, seed),
        causes=_causes(sub, name, metric),
    )


def _leaderboard(sub: pd.DataFrame, shown: Sequence[str], n_resamples: int, seed: int):
    """:func:`analysis.stats.mean_ci` of every model and leaderboard metric, in ``shown`` order
    (a seed group's interval resamples queries and seeds:
    :func:`analysis.stats.groups.with_two_level_cis`)."""
    shown = list(shown)
    board = mean_ci(
        sub, shown, by=["dataset", "model"], n_resamples=n_resamples, seed=seed, nan_policy="omit"
    )
    board = with_two_level_cis(board, sub, n_resamples=n_resamples, seed=seed)
    order = {m: i for i, m in enumerate(shown)}
    board = board.sort_values("metric", key=lambda s: s.map(order), kind="stable")
    return board.reset_index(drop=True)


def dataset_numbers(
    sub: pd.DataFrame,
    *,
    metric: str,
    shown: Sequence[str],
    model_a: str | None,
    model_b: str | None,
    n_resamples: int,
    seed: int,
    base: ModelNumbers | None = None,
) -> DatasetNumbers:
    """Every statistic of one dataset's rows ``sub`` of the per-query table (see the class).

    ``metric`` is the report metric, ``shown`` the leaderboard metrics (``metric`` first). A
    model that is absent from ``sub`` skips what needs it (no comparison without both A and B,
    no worst slices or queries without A). ``base``: the :func:`model_numbers` of the same rows
    and settings when already computed (e.g. cached while only A or B changes)."""
    name = str(sub["dataset"].iloc[0])
    shown = list(shown)
    models = set(sub["model"].astype(str))
    tests = _PairTests(sub, n_resamples, seed)
    both = model_a is not None and model_b is not None and {model_a, model_b} <= models
    cols = varied_slices(sub)
    deltas = pd.DataFrame()
    comp = pd.DataFrame()
    board = _leaderboard(sub, shown, n_resamples, seed) if base is None else base.board
    # every paired test over all queries of this dataset in one call (one matrix of sign
    # patterns): A against B on each leaderboard metric and the best model against the rest
    wanted = [(model_a, model_b, m) for m in shown] if both else []
    tests.prefetch([*wanted, *(_best_pairs(board) if base is None else [])])  # type: ignore[list-item]
    if both:
        deltas = _slice_deltas(sub, cols, metric, model_a, model_b, tests)  # type: ignore[arg-type]
        comp = tests.get(model_a, model_b, shown)  # type: ignore[arg-type]
        if not comp.empty:
            comp = comp.assign(dataset=name)
    worst = pd.DataFrame()
    if model_a is not None and cols and model_a in models:
        found = slice_finder(
            sub, metric, model_a, cols, min_size=MIN_SLICE, n_resamples=n_resamples, seed=seed
        )
        worst = found.head(TOP_WORST_SLICES).assign(dataset=name, metric=metric)
    queries = pd.DataFrame()
    if model_a is not None and model_a in models:
        b = model_b if model_b in models else None
        queries = worst_queries(sub, name, metric, model_a, b)
    if base is None:
        res = {"n_resamples": n_resamples, "seed": seed}
        base = model_numbers(sub, metric=metric, shown=shown, _tests=tests, _board=board, **res)
    return DatasetNumbers(
        name=name,
        metric=metric,
        shown=tuple(shown),
        board=base.board,
        best_vs_rest=base.best_vs_rest,
        compare=comp,
        slice_deltas=deltas,
        slice_summary=base.slice_summary,
        worst_slices=worst,
        causes=base.causes,
        worst_queries=queries,
        examples=cause_examples(sub, metric, model_a) if model_a is not None else {},
    )


def _best_pairs(board: pd.DataFrame) -> list[tuple[str, str, str]]:
    """``(best model, other model, metric)`` for each metric of the board: each model against
    the best model of its metric (the first of equal means in board order)."""
    pairs: list[tuple[str, str, str]] = []
    for metric, grp in board.groupby("metric", sort=False):
        if len(grp) < 2:
            continue
        best = str(grp.loc[grp["mean"].idxmax(), "model"])
        pairs += [(best, other, str(metric)) for other in grp["model"].astype(str) if other != best]
    return pairs


def _best_vs_rest(name: str, board: pd.DataFrame, tests: _PairTests) -> pd.DataFrame:
    """``dataset, model, metric, best_model, p, p_floor``: the sign-flip p of each model against
    the best model of its metric (p-value only: the leaderboard shows no CI of the delta)."""
    pairs = _best_pairs(board)
    tests.prefetch(pairs)
    rows: list[dict[str, object]] = []
    for best, other, metric in pairs:
        found = tests.pvalue(best, other, metric)
        if found is None:
            continue
        rows.append(
            {
                "dataset": name,
                "model": other,
                "metric": metric,
                "best_model": best,
                "p": found[0],
                "p_floor": found[1],
            }
        )
    return pd.DataFrame(rows, columns=["dataset", "model", "metric", "best_model", "p", "p_floor"])


def _slice_deltas(
    sub: pd.DataFrame, cols: list[str], metric: str, model_a: str, model_b: str, tests: _PairTests
) -> pd.DataFrame:
    """Per-slice A - B of the report metric (slices of >= MIN_SLICE queries), Holm over the
    dataset's slices, the TOP_SLICE_DELTAS largest |delta| sorted by delta."""
    if not cols:
        return pd.DataFrame()
    try:
        comp = compare_slices(
            sub,
            [metric],
            model_a,
            model_b,
            cols,
            n_resamples=tests.n_resamples,
            seed=tests.seed,
            min_size=MIN_SLICE,
            ci_top=TOP_SLICE_DELTAS,  # only the slices shown get a CI
        )
    except ValueError:
        return pd.DataFrame()
    tests.keep(model_a, model_b, comp)
    comp = comp.loc[comp["slice"] != "all"].copy()
    if comp.empty:
        return pd.DataFrame()
    comp["p_holm"] = holm(comp["p_randomization"])
    comp["p_holm_bound"] = holm_bounds(comp["p_randomization"], comp["p_floor"].astype(bool))
    by_size = comp["delta"].abs().sort_values(ascending=False, kind="stable")  # as ci_top picks
    comp = comp.reindex(by_size.index)
    name = str(sub["dataset"].iloc[0])
    return comp.head(TOP_SLICE_DELTAS).sort_values("delta").assign(dataset=name)


def _slice_summary(sub: pd.DataFrame, metric: str, n_resamples: int, seed: int) -> pd.DataFrame:
    """``label, column, value, model, n, mean, ci_low, ci_high`` for the slice charts (one per
    column): the first MAX_SLICE_COLUMNS varied slice columns, their MAX_SLICE_VALUES values
    with the most queries among those of at least MIN_SLICE queries (a slice of 1 query would
    show a bar at 0 or 1 that means nothing); values as :func:`slice_labels` gives them
    (missing-like values are "(missing)"), rows in column order, then the values' natural order
    (:func:`order_slice_values`: 0, 1, 3, 10, 12), then model. One
    :func:`analysis.stats.mean_ci` call for all of them (each group's CI depends only on its
    values)."""
    frames = []
    for col in varied_slices(sub)[:MAX_SLICE_COLUMNS]:
        labels = slice_labels(sub[col])
        work = pd.DataFrame(
            {
                "column": col,
                "value": labels.to_numpy(),
                "model": sub["model"].astype(str).to_numpy(),
                metric: sub[metric].to_numpy(),
            }
        )
        queries = sub["query_id"].to_numpy() if "query_id" in sub else np.arange(len(sub))
        sizes = pd.Series(queries).groupby(work["value"].to_numpy()).nunique()
        sizes = sizes.loc[sizes >= MIN_SLICE].sort_values(ascending=False, kind="stable")
        frames.append(work.loc[work["value"].isin(sizes.index[:MAX_SLICE_VALUES])])
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame()
    work = pd.concat(frames, ignore_index=True)
    columns = list(dict.fromkeys(work["column"]))
    work["column"] = pd.Categorical(work["column"], categories=columns)
    out = mean_ci(work, metric, by=["column", "value", "model"], n_resamples=n_resamples, seed=seed)
    out["column"] = out["column"].astype(str)
    out = out.loc[out["n"] >= MIN_SLICE]
    rank = {v: i for i, v in enumerate(order_slice_values(out["value"]))}
    out = out.assign(_c=out["column"].map(columns.index), _v=out["value"].map(rank))
    out = out.sort_values(["_c", "_v"], kind="stable").drop(columns=["_c", "_v"])
    out.insert(0, "label", out["column"] + " = " + out["value"].astype(str))
    return out.reset_index(drop=True)


def _causes(sub: pd.DataFrame, name: str, metric: str) -> pd.DataFrame:
    """One row per model: counts of the failure causes of the report metric (queries at 0;
    tie-dependent queries, ``<metric>_min != <metric>_max``, and the mean over the worst and
    best tie orders; a non-gold POI on the gold's coordinate ranked above the gold; missing from
    the run; no relevant document; more gold than k for recall@k). A cause that cannot occur is
    NaN, not 0: the coordinate causes on a dataset without coordinates, "more gold than k" for
    any metric but recall@k (:func:`possible_causes` leaves such columns out of a table)."""
    k = parse_metric(metric).k
    rows = []
    for model, grp in sub.groupby("model", sort=False):
        values = grp[metric].to_numpy(dtype=float)
        failing = values == 0
        lo_col, hi_col = f"{metric}_min", f"{metric}_max"
        if lo_col in grp.columns and hi_col in grp.columns:
            lo = grp[lo_col].to_numpy(dtype=float)
            hi = grp[hi_col].to_numpy(dtype=float)
            tie_dep = int((~np.isclose(lo, hi)).sum())
            mean_lo, mean_hi = float(lo.mean()), float(hi.mean())
        else:
            tie_dep, mean_lo, mean_hi = 0, math.nan, math.nan
        dup: float | int = math.nan  # a spatial cause: not applicable without coordinates
        dup_failing: float | int = math.nan
        if "indistinguishable" in grp.columns and grp["indistinguishable"].notna().any():
            indist = flag_values(grp["indistinguishable"])
            dup = int(indist.sum())
            dup_failing = int((indist & failing).sum())
        gold_over_k = (
            int((grp["n_gold"].to_numpy() > k).sum())
            if k is not None and metric.startswith("recall") and "n_gold" in grp.columns
            else math.nan  # only recall@k is capped by the answer-set size
        )
        rows.append(
            {
                "dataset": name,
                "model": str(model),
                "metric": metric,
                "n": len(grp),
                "mean": float(values.mean()) if len(values) else math.nan,
                "at 0": int(failing.sum()),
                "tie-dependent": tie_dep,
                "mean, worst tie order": mean_lo,
                "mean, best tie order": mean_hi,
                "non-gold on gold coordinate above gold": dup,
                "of which at 0": dup_failing,
                "missing from run": _count(grp, "missing_from_run"),
                "no relevant doc": _count(grp, "no_relevant"),
                "more gold than k": gold_over_k,
            }
        )
    return pd.DataFrame(rows)


#: Cause columns of :func:`_causes` that are NaN where the cause cannot occur.
CONDITIONAL_CAUSES: tuple[str, ...] = (
    "non-gold on gold coordinate above gold", "of which at 0", "more gold than k",
)  # fmt: skip


def possible_causes(causes: pd.DataFrame) -> list[str]:
    """The cause columns of a :func:`_causes` table that can occur on at least one of its rows:
    every column from ``at 0`` on, without the columns of :data:`CONDITIONAL_CAUSES` that are
    NaN on every row (no spatial dataset, no recall@k)."""
    cols = list(causes.columns)
    start = cols.index("at 0") if "at 0" in cols else 0
    skip = {"mean, worst tie order", "mean, best tie order"}
    return [
        c
        for c in cols[start:]
        if c not in skip and not (c in CONDITIONAL_CAUSES and causes[c].isna().all())
    ]


def _count(frame: pd.DataFrame, column: str) -> int:
    if column not in frame.columns:
        return 0
    return int(flag_values(frame[column]).sum())


def cause_examples(sub: pd.DataFrame, metric: str, model: str) -> dict[str, str]:
    """One example query id of ``model`` per failure cause (the first in table order): ``at 0``,
    ``tie-dependent``, ``non-gold on gold coordinate above gold``, ``missing from run``,
    ``more gold than k``. Causes without a query are absent."""
    rows = sub.loc[sub["model"].astype(str) == model]
    if rows.empty:
        return {}
    ids = rows["query_id"].astype(str).to_numpy()
    masks: dict[str, np.ndarray] = {"at 0": rows[metric].to_numpy(dtype=float) == 0}
    if f"{metric}_min" in rows.columns and f"{metric}_max" in rows.columns:
        lo = rows[f"{metric}_min"].to_numpy(dtype=float)
        masks["tie-dependent"] = ~np.isclose(lo, rows[f"{metric}_max"].to_numpy(dtype=float))
    if "indistinguishable" in rows.columns:
        masks["non-gold on gold coordinate above gold"] = flag_values(rows["indistinguishable"])
    if "missing_from_run" in rows.columns:
        masks["missing from run"] = flag_values(rows["missing_from_run"])
    k = parse_metric(metric).k
    if k is not None and metric.startswith("recall") and "n_gold" in rows.columns:
        masks["more gold than k"] = rows["n_gold"].to_numpy() > k
    return {cause: str(ids[np.argmax(mask)]) for cause, mask in masks.items() if mask.any()}
