"""``evaluate`` (per-query metrics of a run) and ``validate`` (data checks of a run or a bundle)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from analysis.cli._audits import run_file_audits
from analysis.cli._common import add_eval_args, print_warnings, write_table
from analysis.cli._output import write_frame
from analysis.core.engines import CHOICES, Options, choose
from analysis.core.engines import evaluate as evaluate_run_file
from analysis.core.engines.memory import evaluate_columns
from analysis.core.engines.memory import read as read_run
from analysis.core.engines.source import is_glob, parquet_files
from analysis.core.errors import InputError
from analysis.core.metrics import (
    COMPAT,
    DEFAULT_METRICS,
    QrelsArrays,
    parse_metrics,
    qrels_arrays,
    run_arrays,
)
from analysis.core.progress import Progress, reporting
from analysis.core.ranking import as_string_array, to_numpy
from analysis.io import detect_format, load_qrels, load_run
from analysis.io.atomic import refuse_overwrite
from analysis.io.stark import read_split_ids
from analysis.io.trec import read_trec_qrels_table, read_trec_run_table

NAMES = ("evaluate", "validate")


def add_parsers(sub: argparse._SubParsersAction) -> None:
    ev = sub.add_parser("evaluate", help="per-query metrics of a run, or of a bundle dataset")
    add_eval_args(ev, required=False)
    ev.add_argument("--out", help="write per-query metrics here (.csv or .parquet)")
    ev.add_argument(
        "--diagnostics",
        action="store_true",
        help="add n_gold, first_gold_rank, tie flags and <metric>_min/_max columns to --out",
    )
    ev.add_argument(
        "--split",
        help="evaluate only these queries: a split file (one query id per line, STaRK "
        "split/*.index); with --bundle, the name of one of the dataset's splits (or 'all')",
    )
    ev.add_argument("--bundle", help="evaluate every model of a bundle dataset (with --dataset)")
    ev.add_argument("--dataset", help="the dataset of --bundle")
    ev.add_argument(
        "--compat",
        choices=COMPAT,
        default="trec_eval",
        help="compatibility variant: trec_eval (default), stark (gold ids that are not "
        "candidates dropped; needs --candidates), list (LIST's recall and nDCG denominators)",
    )
    ev.add_argument("--candidates", help="the candidate doc ids, one per line (for --compat stark)")
    ev.add_argument(
        "--engine",
        choices=CHOICES,
        default="auto",
        help="memory: the in-memory core (every option); duckdb: embedded, out of core "
        "(Parquet, TREC text or CSV larger than memory); dask: Parquet passes as tasks of a Dask "
        "cluster (--scheduler) or of local threads; auto: duckdb for full-candidate Parquet runs "
        "of 2M rows and more, runs over 20M Parquet rows or 1 GiB of text, else memory",
    )
    ev.add_argument(
        "--scheduler",
        help="the Dask scheduler of --engine dask, e.g. tcp://host:8786 (default: "
        "$DASK_SCHEDULER_ADDRESS, else this machine's threads)",
    )

    va = sub.add_parser("validate", help="data checks of a run against qrels, or of a bundle")
    add_eval_args(va, required=False)
    va.add_argument(
        "--split",
        help="check only these queries: a split file (one query id per line); a published "
        "summary beside the run (eval_metrics_<split>.json) is compared on them",
    )
    va.add_argument(
        "--bundle",
        help="check a whole bundle instead (bundle.toml, every dataset and run); "
        "stops at the first bad file",
    )


def run(args: argparse.Namespace) -> int:
    command = args.command  # evaluate or validate
    if args.bundle is not None:
        if command == "evaluate":
            return _cmd_evaluate_bundle(args)
        return _cmd_validate_bundle(args)
    if args.run is None or args.qrels is None:
        other = "--bundle and --dataset" if command == "evaluate" else "--bundle"
        sys.stderr.write(f"error: {command} needs --run and --qrels, or {other}\n")
        return 2
    return _cmd_evaluate(args, write=command == "evaluate")


def _cmd_evaluate(args: argparse.Namespace, *, write: bool) -> int:
    try:
        metrics = parse_metrics(args.metrics)
    except ValueError as exc:
        raise InputError("--metrics", None, str(exc)) from None
    out = Path(args.out) if write and args.out else None
    if out is not None:
        given = [*_run_files(args.run), args.qrels]
        given += [f for f in (getattr(args, "split", None), getattr(args, "candidates", None)) if f]
        refuse_overwrite(out, given)
        _refuse_in_run_folder(out, args.run)
    options = _options(args, write)
    engine = getattr(args, "engine", "memory") if write else "memory"
    qrels = _load_qrels_columns(args.qrels)
    scores = None
    with reporting(Progress(args.command)):
        if engine == "auto":
            engine = choose(args.run, options)
        if engine == "memory":  # the run's columns are read here: the audits read its ids too
            queries, docs, scores = read_run(args.run, options)
            found = evaluate_columns(queries, docs, scores, qrels, metrics, options)
            audits = run_file_audits(args, queries, summaries=not write)
        else:
            found = evaluate_run_file(args.run, qrels, metrics, engine, options)
            audits = []
    query_ids, columns, warnings, _ = found
    warnings = [*warnings, *audits]
    n = len(query_ids)
    if write:
        width = max(len(m.label) for m in metrics)
        print(f"{'metric':<{width}}  {'mean':>8}  n")
        for m in metrics:
            mean = float(columns[m.label].mean()) if n else float("nan")
            print(f"{m.label:<{width}}  {mean:8.4f}  {n}")
        if out is not None:
            keep = list(columns) if args.diagnostics else [m.label for m in metrics]
            write_table(query_ids, {c: columns[c] for c in keep}, out)
    else:
        lines = len(scores)
        print(
            f"{n} {'query' if n == 1 else 'queries'} in the qrels, "
            f"{lines} run {'line' if lines == 1 else 'lines'}"
        )
    print_warnings(warnings)
    if not write and not warnings:
        print("no problems found")
    return 0


def _run_files(run: str) -> list[str | Path]:
    """The files ``--run`` reads: a folder's or a glob's Parquet files, else the path itself."""
    if is_glob(run) or Path(run).is_dir():
        return [run, *parquet_files(run)]
    return [run]


def _refuse_in_run_folder(out: Path, run: str) -> None:
    """InputError when ``run`` is a folder and ``out`` a Parquet file anywhere under it: it
    would be read as part of the run next time."""
    if out.suffix.lower() != ".parquet" or not Path(run).is_dir():
        return
    top = Path(run).stat()
    for parent in out.absolute().parents:
        try:
            inside = os.path.samestat(parent.stat(), top)
        except OSError:
            continue
        if inside:
            what = "whose .parquet files are read as the run: refusing to write there"
            raise InputError(out, None, f"lies in the run folder {run}, {what}")


def _options(args: argparse.Namespace, write: bool) -> Options:
    """The engine options of ``evaluate`` / ``validate`` (split and candidate files read)."""
    if args.relevance_threshold < 1:
        raise InputError("--relevance-threshold", None, "must be at least 1")
    split = read_split_ids(args.split) if getattr(args, "split", None) else None
    compat = getattr(args, "compat", "trec_eval")
    candidates = None
    if compat == "stark":
        if not getattr(args, "candidates", None):
            raise InputError("--compat stark", None, "needs --candidates FILE (one id per line)")
        candidates = read_split_ids(args.candidates)
    return Options(
        relevance_threshold=args.relevance_threshold,
        ties=args.ties,
        diagnostics=not write or bool(getattr(args, "diagnostics", False)),
        split=split,
        compat=compat,
        candidates=candidates,
        scheduler=getattr(args, "scheduler", None),
        read_run=lambda path: _load_run_columns(path, args.ties),
    )


def _cmd_evaluate_bundle(args: argparse.Namespace) -> int:
    """``evaluate --bundle DIR --dataset NAME [--split NAME]``: every model of one dataset, one
    row per (model, query): ``model, query_id, <metrics>`` (+ diagnostics and, for datasets with
    coordinates, the geo columns with ``--diagnostics``). The same per-query table as the app's
    (:func:`analysis.stats.perquery.per_query_table`), so the means agree: a run group of the
    manifest has rows of its own (a seed group's values are its per-query seed means, with
    ``<metric>_seed_sd``, the seeds' standard deviation; a fold group's the run of each query's
    fold), and a fold group adds the ``fold`` column."""
    from analysis.io.audits import run_audits
    from analysis.io.bundle import load_dataset, load_model_run, read_manifest, refuse_overwriting
    from analysis.stats.perquery import per_query_table

    if args.out is None:
        raise InputError("--out", None, "evaluate --bundle needs --out FILE (.csv or .parquet)")
    bundle = read_manifest(args.bundle)
    if args.dataset is None or args.dataset not in bundle.datasets:
        known = ", ".join(bundle.datasets)
        raise InputError(args.bundle, None, f"--dataset must be one of: {known}")
    spec = bundle.datasets[args.dataset]
    names = args.metrics if args.metrics != ",".join(DEFAULT_METRICS) else ",".join(spec.metrics)
    try:
        metrics = parse_metrics(names)
    except ValueError as exc:
        raise InputError("--metrics", None, str(exc)) from None
    out = Path(args.out)
    refuse_overwriting(bundle, out)
    ds = load_dataset(spec, args.split)
    runs = {model: load_model_run(spec, model) for model in spec.runs}
    table, warnings = per_query_table(
        ds.queries,
        ds.qrels,
        runs,
        dataset=spec.name,
        metrics=[m.label for m in metrics],
        ties=args.ties,
        relevance_threshold=spec.relevance_threshold,
        headline=spec.metrics,
        entities=ds.entities if spec.family == "spatial" else None,
        groups=spec.groups,
    )
    labels = [m.label for m in metrics]
    keep = ["model", "query_id", *labels]
    keep += [c for c in table.columns if c == "fold" or str(c).startswith("fold (")]
    keep += [f"{m}_seed_sd" for m in labels if f"{m}_seed_sd" in table.columns]
    if args.diagnostics:
        skip = set(ds.queries.columns) | {"dataset", "n_gold_bucket", "query_length"}
        keep += [c for c in table.columns if c not in keep and c not in skip]
    split = ds.split or "all"
    print(f"dataset {spec.name}, split {split}: {table['query_id'].nunique()} queries")
    width = max(len(x) for x in ["model", *runs, *spec.groups])
    print(f"{'model':<{width}}  " + "  ".join(f"{m:>10}" for m in labels))
    for model, group in table.groupby("model", sort=False):
        print(f"{model:<{width}}  " + "  ".join(f"{group[m].mean():10.4f}" for m in labels))
    for model, items in run_audits(spec, runs, ties=args.ties, dataset=ds).items():
        warnings[model] = [*warnings.get(model, []), *items]
    for model, found in warnings.items():
        for w in found:
            print(f"{model}: {w}")
    write_frame(table[keep], out)
    return 0


def _cmd_validate_bundle(args: argparse.Namespace) -> int:
    """Read a bundle's manifest, every dataset and every run, and print the data checks of each
    (dataset, model). The first file that cannot be read stops it (exit code 2)."""
    from analysis.core.metrics import evaluate_run
    from analysis.io.audits import run_audits
    from analysis.io.bundle import load_dataset, load_model_run, read_manifest

    bundle = read_manifest(args.bundle)
    found = 0
    for name, spec in bundle.datasets.items():
        ds = load_dataset(spec)
        runs = {model: load_model_run(spec, model) for model in spec.runs}
        audits = run_audits(spec, runs, ties=args.ties, dataset=ds)
        for model, run in runs.items():
            result = evaluate_run(
                run,
                ds.qrels,
                spec.metrics,
                ties=args.ties,
                relevance_threshold=spec.relevance_threshold,
                diagnostics=True,
            )
            print(f"{name} / {model}: {len(result.per_query)} queries, {len(run)} run lines")
            items = [*result.warnings, *audits.get(model, [])]
            print_warnings(items)
            found += sum(w.level != "info" for w in items)
    if not found:
        print("no problems found")
    return 0


def _load_run_columns(path: str, ties: str = "stable") -> tuple[pa.Array, pa.Array, np.ndarray]:
    """A run as columns; TREC runs go straight from Arrow's CSV reader (no pandas copy). Under
    the ``trec_eval`` tie policy the scores come as the float32 values it compares (rounded
    chunk by chunk: no float64 copy of the column) when every score is within float32's
    range; otherwise as float64 (a larger score becomes +-inf only after the finiteness check)."""
    if detect_format(path) == "trec_run":
        table = read_trec_run_table(path)
        return (
            as_string_array(table["query_id"]),
            as_string_array(table["doc_id"]),
            _scores(table["score"], ties),
        )
    return run_arrays(load_run(path))


def _scores(column: pa.ChunkedArray, ties: str) -> np.ndarray:
    if ties != "trec_eval" or len(column) == 0:
        return to_numpy(column)
    low, high = pc.min_max(column).values()  # the reader has checked that they are finite
    if max(-low.as_py(), high.as_py()) > float(np.finfo(np.float32).max):
        return to_numpy(column)
    out = np.empty(len(column), dtype=np.float32)
    lo = 0
    for chunk in column.chunks:
        out[lo : lo + len(chunk)] = to_numpy(chunk)  # round to nearest, as numpy's astype
        lo += len(chunk)
    return out


def _load_qrels_columns(path: str) -> QrelsArrays:
    """Qrels as columns; TREC qrels go straight from Arrow's CSV reader. TREC files never load
    pandas on this path, which saves a third of the command's start-up on small runs."""
    if detect_format(path) == "trec_qrels":
        table = read_trec_qrels_table(path)
        return (
            as_string_array(table["query_id"]),
            as_string_array(table["doc_id"]),
            to_numpy(table["relevance"]),
        )
    return qrels_arrays(load_qrels(path))
