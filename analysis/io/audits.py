"""The data checks of a bundle dataset's runs that the metric core cannot make from a run and
its qrels alone: the published summary beside each run file (:mod:`analysis.io.summary_audit`)
and, for STaRK datasets, the qrels version each run was made on
(:func:`analysis.io.importers.stark_checks.qrels_version`). The app's data checks, the report,
``validate --bundle`` and ``evaluate --bundle`` add them to each model's warnings."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from analysis.core.errors import DataWarning
from analysis.io.bundle import Dataset, DatasetSpec, load_dataset
from analysis.io.importers.stark_checks import qrels_version
from analysis.io.stark import read_split_ids
from analysis.io.summaries import Summary, nearby_summaries, summaries_beside, summary_paths
from analysis.io.summary_audit import AuditContext, audit_summary


def summary_files(spec: DatasetSpec) -> list[Path]:
    """The files that may hold a summary of the dataset's runs (what their audit reads besides
    the dataset's own files: part of a cache key), without reading them."""
    return sorted({f for path in spec.runs.values() for f in summary_paths(path)})


def run_audits(
    spec: DatasetSpec,
    runs: Mapping[str, pd.DataFrame],
    *,
    ties: str = "trec_eval",
    dataset: Dataset | None = None,
) -> dict[str, list[DataWarning]]:
    """model -> the audit warnings of its run (module docstring).

    Args:
        spec: the dataset.
        runs: the runs as loaded (model -> table), each evaluated on its own file's summary.
        ties: the tie policy of the evaluation.
        dataset: the dataset when already loaded; both checks read every query of the dataset,
            so one restricted to a split is loaded again whole.
    """
    found: dict[str, list[Summary]] = {
        model: summaries_beside(path, model) for model, path in spec.runs.items() if model in runs
    }
    stark = spec.family == "stark"
    if not stark and not any(found.values()):
        return {}
    ds = dataset if dataset is not None and dataset.split is None else load_dataset(spec, "all")
    splits = {name: read_split_ids(path) for name, path in spec.splits.items()}
    out: dict[str, list[DataWarning]] = {}
    for model, run in runs.items():
        version = None
        if stark:
            ids = run["query_id"].astype("str").unique()
            version = qrels_version(ids, ds.queries, ds.qrels, name=spec.name)
        items = [version] if version is not None else []
        for summary in found.get(model, []):
            context = AuditContext(
                qrels=ds.qrels,
                splits=splits,
                ties=ties,
                relevance_threshold=spec.relevance_threshold,
                nearby=nearby_summaries(spec.runs[model], exclude=summary.path),
                version=version,
            )
            items += audit_summary(summary, run, context)
        if items:
            out[model] = items
    return out
