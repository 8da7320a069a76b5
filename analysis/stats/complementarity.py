"""Complementarity of N models: which queries each solves, how they overlap, the oracle.

A model **solves** a query when its metric value is at least a threshold (default 1.0, i.e. a
hit for ``hit@k``; for graded metrics such as ``recall@20`` choose e.g. 0.5). Over the queries
that every given model was evaluated on (rows of one dataset; queries some model lacks are
left out, and counted):

* :func:`solved_matrix`: a boolean query × model table;
* :func:`intersections`: the UpSet-style table of *exclusive* intersections: for every set of
  models, the queries solved by exactly those models (and by no other), with its size, sorted
  by size; the empty set is the queries no model solves;
* :func:`oracle`: per dataset (and slice), the mean of each model and the oracle best-of-N
  mean ``mean_q max_m metric(q, m)``, with the gain of the oracle over the best single model.
  The oracle picks per query with hindsight: an upper bound for any selector or fusion that
  chooses one model's list per query, not an achievable score.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["intersections", "oracle", "solved_matrix"]


def _wide(per_query: pd.DataFrame, metric: str, models: Sequence[str] | None) -> pd.DataFrame:
    if metric not in per_query.columns:
        raise ValueError(f"metric {metric!r} is not a column of the per-query table")
    keys = [c for c in ("dataset", "query_id") if c in per_query.columns]
    wide = per_query.pivot_table(index=keys, columns="model", values=metric, aggfunc="first")
    if models is not None:
        unknown = [m for m in models if m not in wide.columns]
        if unknown:
            raise ValueError(f"unknown model(s) {unknown}; known: {list(wide.columns)}")
        wide = wide[list(models)]
    wide.columns = [str(c) for c in wide.columns]
    return wide.dropna()


def solved_matrix(
    per_query: pd.DataFrame,
    metric: str,
    *,
    threshold: float = 1.0,
    models: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Boolean table: index ``(dataset,) query_id``, one column per model, True when the
    model's ``metric`` is ``>= threshold``. Queries not evaluated for every model are dropped."""
    wide = _wide(per_query, metric, models)
    return wide >= threshold


def intersections(solved: pd.DataFrame) -> pd.DataFrame:
    """Exclusive intersections of a :func:`solved_matrix`: ``models`` (a `` & ``-joined label,
    ``(none)`` for the empty set), ``n_models``, ``n`` (queries), ``share`` and one boolean
    column ``in:<model>`` per model (the set's membership, for drawing the UpSet dots; the
    prefix keeps a model named ``n`` or ``models`` apart from the table's own columns). Sorted
    by ``n`` descending, then fewer models first; combinations without queries are not
    listed."""
    models = [str(m) for m in solved.columns]
    member = [f"in:{m}" for m in models]
    if solved.empty:
        return pd.DataFrame(columns=["models", "n_models", "n", "share", *member])
    counts = solved.set_axis(member, axis=1).value_counts(sort=False)
    sets = counts.index.to_frame(index=False).astype(bool)
    flags = sets.to_numpy()
    out = pd.DataFrame({
        "models": [" & ".join(m for m, f in zip(models, row, strict=True) if f) or "(none)"
                   for row in flags],
        "n_models": flags.sum(axis=1).astype(np.int64),
        "n": counts.to_numpy(dtype=np.int64),
        "share": counts.to_numpy(dtype=np.int64) / len(solved),
    })  # fmt: skip
    out = pd.concat([out, sets], axis=1)
    return out.sort_values(["n", "n_models", "models"], ascending=[False, True, True]).reset_index(
        drop=True
    )


def oracle(
    per_query: pd.DataFrame,
    metric: str,
    *,
    by: Sequence[str] = (),
    models: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Per dataset (and ``by`` slice): ``n`` queries, the mean ``metric`` of each model
    (``mean:<model>``), ``best_model``, ``best_single``, ``oracle`` (mean of the per-query
    maximum over the models) and ``oracle_gain = oracle - best_single``.

    Only queries evaluated for every model count (so the means are over the same queries).
    Model names only ever appear after ``mean:``, so any name (``dataset``, ``n``) is a model.
    """
    wide = _wide(per_query, metric, models)
    names = list(wide.columns)
    means = [f"mean:{m}" for m in names]
    frame = _group_keys(wide.index.to_frame(index=False), per_query, by)
    groups = ["dataset", *by] if "dataset" in frame.columns else list(by)
    values = pd.DataFrame(wide.to_numpy(dtype=float), columns=means)
    values["_oracle"] = values.max(axis=1) if names else np.nan
    frame = pd.concat([frame[groups] if groups else frame.iloc[:, :0], values], axis=1)
    grouped = (
        frame.groupby(groups, sort=True, dropna=False)
        if groups
        else frame.assign(_all=0).groupby("_all")
    )
    agg = {c: (c, "mean") for c in means}
    out = grouped.agg(n=("_oracle", "size"), **agg, oracle=("_oracle", "mean")).reset_index()
    out = out.drop(columns=[c for c in ("_all",) if c in out.columns])
    table = out[means].to_numpy(dtype=float)
    best = table.argmax(axis=1) if len(names) else np.zeros(len(out), dtype=int)
    out["best_model"] = [names[i] for i in best] if names else None
    out["best_single"] = table.max(axis=1) if len(names) else np.nan
    out["oracle_gain"] = out["oracle"] - out["best_single"]
    return out


def _group_keys(keys: pd.DataFrame, per_query: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """``keys`` (the ``(dataset,) query_id`` of each row of the wide table) with the ``by``
    slice columns of each query from ``per_query``, in the same row order."""
    if not by:
        return keys
    cols = list(keys.columns)
    slices = per_query.drop_duplicates(cols)[[*cols, *by]]
    return keys.merge(slices, on=cols, how="left", validate="one_to_one")
