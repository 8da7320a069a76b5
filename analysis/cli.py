"""Command line: ``python -m analysis <command> ...``.

Commands:
    evaluate   per-query metrics of a run to CSV/Parquet, means and data checks to stdout
    validate   data checks of a run against qrels, or of a whole bundle (--bundle)
    geo        duplicate-coordinate and twin report of a POI file, as JSON
    report     one self-contained offline HTML report of a bundle
    demo       regenerate the demo bundle

Bad input exits with code 2 and one line ``error: <file>:<line>: <what is wrong>`` on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv

from analysis._ranking import as_string_array, from_numpy, to_numpy
from analysis.errors import DataWarning, InputError
from analysis.loaders import detect_format, load_qrels, load_run
from analysis.loaders.trec import read_trec_qrels_table, read_trec_run_table
from analysis.metrics import (
    DEFAULT_METRICS,
    TIE_POLICIES,
    QrelsArrays,
    evaluate_arrays,
    parse_metrics,
    qrels_arrays,
    run_arrays,
)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (exit code 2), like every other bad input."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"error: {self.prog}: {message}\n")
        raise SystemExit(2)


def _add_eval_args(cmd: argparse.ArgumentParser, *, required: bool = True) -> None:
    cmd.add_argument(
        "--run", required=required, help="run file (TREC run, STaRK eval_results, table)"
    )
    cmd.add_argument("--qrels", required=required, help="qrels (TREC qrels, STaRK QA CSV, table)")
    cmd.add_argument(
        "--metrics",
        default=",".join(DEFAULT_METRICS),
        help="comma-separated metrics, e.g. hit@1,hit@5,recall@20,mrr,ndcg@10",
    )
    cmd.add_argument("--ties", choices=TIE_POLICIES, default="trec_eval", help="tie policy")
    cmd.add_argument(
        "--relevance-threshold", type=int, default=1, help="relevant means relevance >= this"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m analysis", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    ev = sub.add_parser("evaluate", help="per-query metrics of a run")
    _add_eval_args(ev)
    ev.add_argument("--out", help="write per-query metrics here (.csv or .parquet)")
    ev.add_argument(
        "--diagnostics",
        action="store_true",
        help="add n_gold, first_gold_rank, tie flags and <metric>_min/_max columns to --out",
    )

    va = sub.add_parser("validate", help="data checks of a run against qrels, or of a bundle")
    _add_eval_args(va, required=False)
    va.add_argument(
        "--bundle",
        help="check a whole bundle instead (bundle.toml, every dataset and run); "
        "stops at the first bad file",
    )

    geo = sub.add_parser("geo", help="duplicate-coordinate report of a POI file (JSON)")
    geo.add_argument("--pois", required=True, help="POI file (CSV with lat/lon, LIST, GeoGLUE…)")
    geo.add_argument("--tolerance-m", type=float, default=0.0, help="stack tolerance in metres")
    geo.add_argument("--crs", default=None, help="CRS of projected coordinates, e.g. EPSG:2385")

    rep = sub.add_parser("report", help="one self-contained offline HTML report of a bundle")
    rep.add_argument("--bundle", required=True, help="bundle folder (with bundle.toml)")
    rep.add_argument("--datasets", default=None, help="comma-separated datasets (default: all)")
    rep.add_argument("--a", default=None, help="model A")
    rep.add_argument("--b", default=None, help="model B")
    rep.add_argument("--ties", choices=TIE_POLICIES, default="trec_eval", help="tie policy")
    rep.add_argument("--out", required=True, help="output HTML file")

    demo = sub.add_parser("demo", help="regenerate the demo bundle")
    demo.add_argument("--out", default="data/demo", help="output folder")
    demo.add_argument("--seed", type=int, default=0)
    return parser


def _print_warnings(warnings: Sequence[DataWarning]) -> None:
    for w in warnings:
        print(str(w))


def _cmd_evaluate(args: argparse.Namespace, *, write: bool) -> int:
    try:
        metrics = parse_metrics(args.metrics)
    except ValueError as exc:
        raise InputError("--metrics", None, str(exc)) from None
    if args.relevance_threshold < 1:
        raise InputError("--relevance-threshold", None, "must be at least 1")
    out = Path(args.out) if write and args.out else None
    if out is not None and out.exists():
        for given in (args.run, args.qrels):
            if Path(given).exists() and out.samefile(given):
                raise InputError(out, None, "is an input file: refusing to overwrite it")
    queries, docs, scores = _load_run_columns(args.run)
    qrels = _load_qrels_columns(args.qrels)
    query_ids, columns, warnings, _ = evaluate_arrays(
        queries,
        docs,
        scores,
        qrels,
        metrics,
        ties=args.ties,
        relevance_threshold=args.relevance_threshold,
        diagnostics=not write or bool(getattr(args, "diagnostics", False)),
    )
    n = len(query_ids)
    if write:
        width = max(len(m.label) for m in metrics)
        print(f"{'metric':<{width}}  {'mean':>8}  n")
        for m in metrics:
            mean = float(columns[m.label].mean()) if n else float("nan")
            print(f"{m.label:<{width}}  {mean:8.4f}  {n}")
        if out is not None:
            keep = list(columns) if args.diagnostics else [m.label for m in metrics]
            _write_table(query_ids, {c: columns[c] for c in keep}, out)
    else:
        print(f"{n} queries in the qrels, {len(scores)} run lines")
    _print_warnings(warnings)
    if not write and not warnings:
        print("no problems found")
    return 0


def _cmd_validate_bundle(args: argparse.Namespace) -> int:
    """Read a bundle's manifest, every dataset and every run, and print the data checks of each
    (dataset, model). The first file that cannot be read stops it (exit code 2)."""
    from analysis.bundle import load_dataset, load_model_run, read_manifest
    from analysis.metrics import evaluate_run

    bundle = read_manifest(args.bundle)
    found = 0
    for name, spec in bundle.datasets.items():
        ds = load_dataset(spec)
        for model in spec.runs:
            run = load_model_run(spec, model)
            result = evaluate_run(
                run,
                ds.qrels,
                spec.metrics,
                ties=args.ties,
                relevance_threshold=spec.relevance_threshold,
                diagnostics=True,
            )
            print(f"{name} / {model}: {len(result.per_query)} queries, {len(run)} run lines")
            _print_warnings(result.warnings)
            found += len(result.warnings)
    if not found:
        print("no problems found")
    return 0


def _load_run_columns(path: str) -> tuple[pa.Array, pa.Array, np.ndarray]:
    """A run as columns; TREC runs go straight from Arrow's CSV reader (no pandas copy)."""
    if detect_format(path) == "trec_run":
        table = read_trec_run_table(path)
        return (
            as_string_array(table["query_id"]),
            as_string_array(table["doc_id"]),
            to_numpy(table["score"]),
        )
    return run_arrays(load_run(path))


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


def _write_table(query_ids: pa.Array, columns: dict[str, np.ndarray], out: Path) -> None:
    """Write ``query_id`` + columns as CSV (Arrow's writer: shortest round-trip floats) or
    Parquet, by the file extension."""
    table = pa.table({"query_id": query_ids, **{k: from_numpy(v) for k, v in columns.items()}})
    try:
        if out.suffix.lower() == ".parquet":
            import pyarrow.parquet as pq

            pq.write_table(table, out)
        else:
            pcsv.write_csv(table, out, write_options=pcsv.WriteOptions(quoting_style="needed"))
    except (OSError, pa.ArrowException) as exc:
        raise InputError(out, None, f"cannot write: {exc}") from None


def _cmd_geo(args: argparse.Namespace) -> int:
    from analysis.geo import stack_report
    from analysis.loaders.spatial import load_pois

    pois = load_pois(args.pois, crs=args.crs)
    print(json.dumps(stack_report(pois, tolerance_m=args.tolerance_m), ensure_ascii=False))
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from analysis.report import write_report

    datasets = [d for d in args.datasets.split(",") if d] if args.datasets else None
    write_report(
        Path(args.bundle),
        Path(args.out),
        datasets=datasets,
        model_a=args.a,
        model_b=args.b,
        ties=args.ties,
    )
    print(f"report written to {args.out}")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from analysis.demo import generate_bundle

    generate_bundle(Path(args.out), seed=args.seed)
    print(f"demo bundle written to {args.out}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0 ok, 2 bad input)."""
    args = build_parser().parse_args(argv)
    try:
        if args.command == "evaluate":
            return _cmd_evaluate(args, write=True)
        if args.command == "validate":
            if args.bundle is not None:
                return _cmd_validate_bundle(args)
            if args.run is None or args.qrels is None:
                sys.stderr.write("error: validate needs --run and --qrels, or --bundle\n")
                return 2
            return _cmd_evaluate(args, write=False)
        if args.command == "geo":
            return _cmd_geo(args)
        if args.command == "report":
            return _cmd_report(args)
        if args.command == "demo":
            return _cmd_demo(args)
    except InputError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    except OSError as exc:  # a file that vanished or cannot be opened between checks and reads
        where = f"{exc.filename}: " if exc.filename else ""
        sys.stderr.write(f"error: {where}{exc.strerror or exc}\n")
        return 2
    return 2
