"""What ``import stark`` checks of each run once it is read: the qrels version it was made on
(:func:`analysis.io.importers.stark_checks.qrels_version`), its saved depth against the
dataset's metrics (:mod:`analysis.core.depth`) and the published summary beside it
(:mod:`analysis.io.summary_audit`), which the bundle keeps for the app."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from analysis.core.metrics import evaluate_run
from analysis.io.importers import stark_checks as checks
from analysis.io.stark import read_stark_eval
from analysis.io.summaries import (
    RUN_NAME,
    canonical_metric,
    nearby_summaries,
    summaries_beside,
    wrapped,
)
from analysis.io.summary_audit import AuditContext, audit_summary


@dataclass(frozen=True)
class RunSource:
    """One run file of the import and the dataset it goes to."""

    path: Path
    fmt: str
    model: str
    queries: pd.DataFrame
    qrels: pd.DataFrame
    name: str  # the collection's name (``--name`` or the folder's)
    root: Path  # the imported folder
    splits: Mapping[str, Sequence[str]] = field(default_factory=dict)
    metrics: Sequence[str] = ()


def _split_of(source: RunSource) -> Sequence[str] | None:
    """The split a run is read on: the one its file names (``eval_results_<split>.csv``), else
    ``test``, else every query."""
    match = RUN_NAME.match(source.path.name)
    if match and match.group("split") in source.splits:
        return source.splits[match.group("split")]
    return source.splits.get("test")


def _file_means(table: pd.DataFrame | None) -> dict[str, float]:
    """Means of the run file's own per-query columns, each query counted once (first row)."""
    out: dict[str, float] = {}
    if table is not None:
        table = table[~table["query_id"].astype("str").duplicated()]
    for column in [] if table is None else table.columns:
        name = canonical_metric(column) if column != "query_id" else None
        if name is not None and len(table):
            out[name] = float(table[column].mean())
    return out


def audit_run(source: RunSource, run: pd.DataFrame) -> tuple[list[str], dict | None]:
    """The notes of one run (each starting with the file) and the summary to keep beside it in
    the bundle (the first found, :func:`analysis.io.summaries.wrapped`), or None."""
    path = source.path
    notes = []
    version = checks.qrels_version(
        run["query_id"].astype("str").unique(), source.queries, source.qrels, name=source.name
    )
    if version is not None:
        notes.append(f"{path}: {version.message}")
    split = _split_of(source)
    result = evaluate_run(run, source.qrels, list(source.metrics), split=split)
    notes += [f"{path}: {w.message}" for w in result.warnings if w.code.startswith("saved_depth:")]
    file_metrics = read_stark_eval(path)[1] if source.fmt == "stark_eval" else None
    kept = None
    for summary in summaries_beside(path, source.model):
        nearby = nearby_summaries(path, exclude=summary.path)
        context = AuditContext(
            qrels=source.qrels,
            splits=source.splits,
            run_file_metrics=file_metrics,
            nearby=nearby,
            version=version,
        )
        notes += [w.message for w in audit_summary(summary, run, context)]
        if kept is None and summary.row is None:
            same = tuple(_shown(o.path, source.root) for o in nearby if o.digest == summary.digest)
            kept = wrapped(summary, _shown(summary.path, source.root), same,
                           _file_means(file_metrics))  # fmt: skip
    return notes, kept


def _shown(path: Path, root: Path) -> str:
    """``path`` relative to the imported folder's parent (``prime/runs/ada-002/x.json``), as the
    bundle names it without an absolute path."""
    try:
        return path.resolve().relative_to(root.resolve().parent).as_posix()
    except ValueError:
        return path.name
