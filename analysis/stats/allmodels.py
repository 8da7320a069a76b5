"""Every model, per query: one dataset's queries x models table of a metric, ordered by how
much the models disagree, with each query's outcome.

A model *solves* a query when its value of the metric is at least ``threshold`` (as in
:mod:`analysis.stats.complementarity`). Over the queries every given model has a value for
(the others are left out and counted), each query gets:

* ``outcome``: ``all fail`` (no model solves it), ``one solves`` (exactly one does), ``split``
  (two or more do, and at least one fails) or ``all solve``;
* ``solved_by``: how many models solve it; ``solver``: the model when exactly one does;
* ``disagreement``: the standard deviation of the models' values (``ddof=0``: 0 when they
  agree, 0.5 at most for values in [0, 1]).

Each model's values are in the column :func:`model_column` names (``<metric>:<model>``), so a
model may have any name, ``outcome`` or ``query_id`` too.

Queries are ordered by disagreement (largest first), then by mean value (lowest first), then
by query id. :func:`bounded` keeps a chart's payload bounded: beyond ``limit`` queries only the
``limit`` the models disagree on most are drawn (the counts of :func:`outcome_counts` still
cover every query); :func:`query_limit` is 2,000 queries, fewer when the cells would pass
12,000 (1,000 queries for 12 models).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = [
    "MAX_CELLS",
    "MAX_MODELS",
    "MAX_QUERIES",
    "OUTCOMES",
    "bounded",
    "model_column",
    "model_grid",
    "outcome_counts",
    "query_limit",
]

OUTCOMES = ("all fail", "one solves", "split", "all solve")
#: Queries drawn at most (the most disagreeing ones beyond it); see :func:`query_limit`.
MAX_QUERIES = 2_000
#: Cells (queries x models) drawn at most.
MAX_CELLS = 12_000
#: Models shown at most (columns of the chart).
MAX_MODELS = 12


def model_column(metric: str, model: str) -> str:
    """The :func:`model_grid` column of ``model``'s values of ``metric``: ``<metric>:<model>``
    (no column of the grid's own holds a ``:``)."""
    return f"{metric}:{model}"


def model_grid(
    per_query: pd.DataFrame, metric: str, models: Sequence[str], *, threshold: float = 1.0
) -> pd.DataFrame:
    """The queries x models table (module docstring) of ONE dataset's per-query table:
    ``query_id``, one column per model (its value of ``metric``, named by
    :func:`model_column`), ``outcome``, ``solved_by``, ``solver``, ``disagreement``, ``mean``;
    ``attrs["n_left_out"]``: queries some model lacks.

    Raises:
        ValueError: no model, a model or the metric not in the table, several datasets.
    """
    if not models:
        raise ValueError("give at least one model")
    if metric not in per_query.columns:
        raise ValueError(f"metric {metric!r} is not a column of the per-query table")
    names = per_query["dataset"].to_numpy() if "dataset" in per_query.columns else []
    if len(names) and (names != names[0]).any():
        raise ValueError("one dataset at a time: the table holds several datasets")
    known = set(per_query["model"].unique())
    missing = [m for m in models if m not in known]
    if missing:
        raise ValueError(f"unknown model(s) {missing}")
    rows = per_query.loc[per_query["model"].isin(list(models)), ["query_id", "model", metric]]
    wide = rows.pivot_table(index="query_id", columns="model", values=metric, aggfunc="first")
    wide = wide.reindex(columns=list(models))
    complete = wide.dropna()
    values = complete.to_numpy(dtype=np.float64)
    solved = values >= threshold
    count = solved.sum(axis=1)
    out = complete.set_axis([model_column(metric, m) for m in models], axis=1).reset_index()
    out["query_id"] = out["query_id"].astype("str")
    out["outcome"] = np.select([count == 0, count == 1, count == len(models)],
                               [OUTCOMES[0], OUTCOMES[1], OUTCOMES[3]], OUTCOMES[2])  # fmt: skip
    out["solved_by"] = count.astype(np.int64)
    first = np.argmax(solved, axis=1) if len(models) else np.zeros(len(out), int)
    out["solver"] = np.where(count == 1, np.asarray(models, dtype=object)[first], None)
    out["disagreement"] = values.std(axis=1) if len(out) else np.zeros(0)
    out["mean"] = values.mean(axis=1) if len(out) else np.zeros(0)
    out = out.sort_values(["disagreement", "mean", "query_id"], ascending=[False, True, True],
                          kind="stable").reset_index(drop=True)  # fmt: skip
    out.attrs["n_left_out"] = int(len(wide) - len(complete))
    return out


def outcome_counts(grid: pd.DataFrame) -> dict[str, int]:
    """Queries per outcome, every outcome of :data:`OUTCOMES` listed (0 when none)."""
    found = grid["outcome"].value_counts()
    return {o: int(found.get(o, 0)) for o in OUTCOMES}


def query_limit(n_models: int) -> int:
    """Queries drawn for ``n_models`` columns: :data:`MAX_QUERIES`, fewer when that many rows
    would pass :data:`MAX_CELLS` cells (1,000 queries for 12 models)."""
    return max(1, min(MAX_QUERIES, MAX_CELLS // max(n_models, 1)))


def bounded(grid: pd.DataFrame, limit: int = MAX_QUERIES) -> tuple[pd.DataFrame, bool]:
    """The first ``limit`` rows of a :func:`model_grid` (the most disagreeing queries) and
    whether rows were left out."""
    return grid.head(limit), len(grid) > limit
