"""The audits ``evaluate --run`` and ``validate --run`` add to the core's data checks: the qrels
version a run was made on (a STaRK QA file as qrels,
:func:`analysis.io.importers.stark_checks.qrels_version`) and, for ``validate``, the published
summaries beside the run file (:mod:`analysis.io.summary_audit`): with ``--split FILE``, a
summary naming that split (``eval_metrics_<split>.json``, ``<split>`` the file's name without
its extension) or no split at all is compared on the split's queries. Both need pandas, so they
run only when there is something to check: TREC qrels and a run without a summary beside it
stay on the command line's pandas-free path."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from analysis.core.errors import DataWarning
from analysis.io import detect_format


def run_file_audits(
    args: argparse.Namespace, run_ids: pa.Array | None, *, summaries: bool
) -> list[DataWarning]:
    """The audit warnings of ``--run`` against ``--qrels`` (module docstring); ``run_ids``: the
    run's query id column (None: not read, no qrels-version check)."""
    from analysis.io.summaries import summaries_beside

    stark = detect_format(args.qrels) == "stark_qa"
    found = summaries_beside(args.run) if summaries else []
    if not found and not (stark and run_ids is not None):
        return []
    from analysis.io import load_qrels
    from analysis.io.importers.stark_checks import qrels_version
    from analysis.io.stark import read_stark_qa

    queries, qrels = read_stark_qa(args.qrels) if stark else (None, load_qrels(args.qrels))
    out: list[DataWarning] = []
    version = None
    if stark and run_ids is not None:
        ids = pc.unique(run_ids).to_pylist()
        version = qrels_version(ids, queries, qrels, name=str(args.qrels))
        out += [version] if version is not None else []
    if found:
        out += _summaries(args, found, qrels, version)
    return out


def _summaries(args, found, qrels, version) -> list[DataWarning]:
    from analysis.io import load_run
    from analysis.io.stark import read_split_ids, read_stark_eval
    from analysis.io.summaries import nearby_summaries
    from analysis.io.summary_audit import AuditContext, audit_summary

    split = getattr(args, "split", None)
    name = Path(split).stem if split else None  # split/test.index, dev.txt: test, dev
    splits = {name: read_split_ids(split)} if split else {}
    fmt = detect_format(args.run)
    file_metrics = read_stark_eval(args.run)[1] if fmt == "stark_eval" else None
    run = load_run(args.run, fmt)
    out = []
    for summary in found:
        if name is not None and summary.split is None:  # on the --split queries, as the run
            summary = replace(summary, split=name)
        context = AuditContext(
            qrels=qrels,
            splits=splits,
            ties=args.ties,
            relevance_threshold=args.relevance_threshold,
            run_file_metrics=file_metrics,
            nearby=nearby_summaries(args.run, exclude=summary.path),
            version=version,
        )
        out += audit_summary(summary, run, context)
    return out
