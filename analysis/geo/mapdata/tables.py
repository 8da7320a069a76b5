"""Selection events and the per-query tables of the Map page."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from analysis.core.metrics import evaluate
from analysis.geo import canonicalize_twins

# --------------------------------------------------------------------------------------------
# selection and per-query tables
# --------------------------------------------------------------------------------------------


def selected_doc(selection: Mapping[str, Any] | None) -> str | None:
    """The ``doc_id`` of the object a pydeck selection event holds (``{"indices": {layer:
    [i]}, "objects": {layer: [row]}}``, Streamlit's ``event.selection``); ``None`` when nothing
    with a doc id (e.g. the query point) is selected."""
    if not selection:
        return None
    objects = selection.get("objects") or {}
    for rows in objects.values():
        for row in rows or []:
            if isinstance(row, Mapping):
                doc = row.get("doc_id")
                if doc not in (None, ""):
                    return str(doc)
    return None


DIAGNOSTIC_LABELS = {
    "dist_query_gold_m": "query → nearest gold (m)",
    "dist_query_top1_m": "query → top-1 (m)",
    "gold_stack_size": "gold stack size",
    "first_gold_rank": "first gold rank",
    "indistinguishable": "indistinguishable",
    "n_above_gold_on_gold_coord": "non-gold above gold on its coordinate",
    "stackmates_in_top_k": "gold stack-mates in top k",
}


def query_diagnostics_table(
    diagnostics: Mapping[str, pd.DataFrame], query_id: str, model_names: Mapping[str, str]
) -> pd.DataFrame:
    """One row per model label with the :func:`analysis.geo.geo_diagnostics` columns of
    ``query_id`` (renamed as in :data:`DIAGNOSTIC_LABELS`; distances rounded to 0.1 m).
    Models whose table lacks the query get an empty row."""
    rows = []
    for label, diag in diagnostics.items():
        row: dict[str, Any] = {"model": f"{label}: {model_names.get(label, label)}"}
        hit = diag[diag["query_id"] == query_id]
        for col, name in DIAGNOSTIC_LABELS.items():
            value = hit[col].iloc[0] if len(hit) and col in hit.columns else None
            if value is not None and col.endswith("_m") and pd.notna(value):
                value = round(float(value), 1)
            row[name] = None if value is None or value is pd.NA else value
        rows.append(row)
    out = pd.DataFrame(rows, columns=["model", *DIAGNOSTIC_LABELS.values()])
    for col in ("gold stack size", "first gold rank"):
        out[col] = pd.array(out[col].tolist(), dtype="Int64")
    return out


def strict_vs_twin_aware(
    ranked: pd.DataFrame,
    qrels: pd.DataFrame,
    pois: pd.DataFrame,
    metrics: Sequence[str],
    *,
    tolerance_m: float = 0.0,
    relevance_threshold: int = 1,
) -> pd.DataFrame:
    """Per-query strict and twin-aware values of ``metrics`` (e.g. ``recall@10, ndcg@10``).

    Strict: :func:`analysis.core.metrics.evaluate` of the ranked run (``query_id, doc_id, rank``,
    evaluated in rank order, so the tie policy already applied stays). Twin-aware: the same
    on :func:`analysis.geo.canonicalize_twins` of run and qrels (twins at ``tolerance_m``): a
    retrieved twin of a gold counts as the gold, a gold twin group counts once.

    Returns one row per qrels query: ``query_id``, then ``<metric>`` and
    ``<metric> twin-aware`` for each metric.
    """
    run = ranked[["query_id", "doc_id", "rank"]]
    strict = evaluate(run, qrels, list(metrics), relevance_threshold=relevance_threshold)
    run_c, qrels_c = canonicalize_twins(run, qrels, pois, tolerance_m)
    aware = evaluate(run_c, qrels_c, list(metrics), relevance_threshold=relevance_threshold)
    aware = aware.rename(columns={m: f"{m} twin-aware" for m in metrics})
    return strict.merge(aware, on="query_id", how="left")


def twin_aware_table(
    evaluations: Mapping[str, pd.DataFrame],
    query_id: str,
    metrics: Sequence[str],
    model_names: Mapping[str, str],
) -> pd.DataFrame:
    """Strict vs twin-aware values per model label and metric: ``model, metric, strict,
    twin-aware`` for ``query_id`` and ``mean strict, mean twin-aware`` over every query of
    the dataset (NaN when the query is absent)."""
    rows = []
    for label, ev in evaluations.items():
        hit = ev[ev["query_id"] == query_id]
        for m in metrics:
            aware = f"{m} twin-aware"
            rows.append(
                {
                    "model": f"{label}: {model_names.get(label, label)}",
                    "metric": m,
                    "strict": float(hit[m].iloc[0]) if len(hit) else np.nan,
                    "twin-aware": float(hit[aware].iloc[0]) if len(hit) else np.nan,
                    "mean strict": float(ev[m].mean()) if len(ev) else np.nan,
                    "mean twin-aware": float(ev[aware].mean()) if len(ev) else np.nan,
                }
            )
    cols = ["model", "metric", "strict", "twin-aware", "mean strict", "mean twin-aware"]
    return pd.DataFrame(rows, columns=cols)
