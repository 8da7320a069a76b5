"""Shared pieces of the CLI commands: the one-line-error parser, evaluation arguments, output."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv

from analysis.core.errors import DataWarning, InputError
from analysis.core.measures import known
from analysis.core.metrics import DEFAULT_METRICS, TIE_POLICIES
from analysis.core.ranking import from_numpy
from analysis.io.atomic import atomic_write
from analysis.io.csvsafe import neutralize_arrow

if TYPE_CHECKING:
    from analysis.io.annotations import AnnotationStore
    from analysis.io.bundle import Bundle, DatasetSpec

if TYPE_CHECKING:
    from analysis.io.adhoc import AdhocInputs


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (exit code 2), like every other bad input."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"error: {self.prog}: {message}\n")
        raise SystemExit(2)

    def _print_message(self, message: str, file: IO[str] | None = None) -> None:
        """Print ``--help`` or usage text; a failed write raises (argparse ignores it, and the
        help sent to a full disk or a closed pipe would end in success)."""
        if message:
            (file or sys.stderr).write(message)


def add_plugin_args(parser: argparse.ArgumentParser) -> None:
    """``--plugin`` and ``--help-metrics`` (every command has them)."""
    parser.add_argument(
        "--plugin",
        action="append",
        default=argparse.SUPPRESS,
        metavar="MODULE",
        help="load a plugin (a module name or a .py file) whose top level registers "
        "measures or importers (repeatable)",
    )
    parser.add_argument(
        "--help-metrics",
        action="store_true",
        default=argparse.SUPPRESS,
        help="print every metric's card (formula, cutoff, references, semantics) and exit",
    )


def add_eval_args(cmd: argparse.ArgumentParser, *, required: bool = True) -> None:
    cmd.add_argument(
        "--run", required=required, help="run file (TREC run, STaRK eval_results, table)"
    )
    cmd.add_argument("--qrels", required=required, help="qrels (TREC qrels, STaRK QA CSV, table)")
    cmd.add_argument(
        "--metrics",
        default=",".join(DEFAULT_METRICS),
        help=f"comma-separated metrics, e.g. hit@1,recall@20,mrr (known: {known()}; "
        "--help-metrics describes each)",
    )
    cmd.add_argument("--ties", choices=TIE_POLICIES, default="trec_eval", help="tie policy")
    cmd.add_argument(
        "--relevance-threshold", type=int, default=1, help="relevant means relevance >= this"
    )


def print_warnings(warnings: Sequence[DataWarning]) -> None:
    for w in warnings:
        print(str(w))


def write_table(query_ids: pa.Array, columns: dict[str, np.ndarray], out: Path) -> None:
    """Write ``query_id`` + columns as CSV (Arrow's writer: shortest round-trip floats) or
    Parquet, by the file extension, atomically (a temporary file beside ``out``, renamed at the
    end: a killed run never leaves a partial table, concurrent runs leave one whole table).
    CSV ids that a spreadsheet would run as a formula get a ``'`` in front
    (:mod:`analysis.io.csvsafe`); Parquet keeps them as they are."""
    parquet = out.suffix.lower() == ".parquet"
    ids = query_ids if parquet else neutralize_arrow(query_ids)
    table = pa.table({"query_id": ids, **{k: from_numpy(v) for k, v in columns.items()}})

    def write(tmp: Path) -> None:
        if parquet:
            import pyarrow.parquet as pq

            pq.write_table(table, tmp)
        else:
            pcsv.write_csv(table, tmp, write_options=pcsv.WriteOptions(quoting_style="needed"))

    try:
        atomic_write(out, write)
    except pa.ArrowException as exc:
        raise InputError(out, None, f"cannot write: {exc}") from None


def add_adhoc_args(cmd: argparse.ArgumentParser) -> None:
    """The options of an ad-hoc bundle (``bundle``, and the app launcher's ``--run``)."""
    cmd.add_argument(
        "--run",
        action="append",
        required=True,
        metavar="NAME=PATH",
        help="a model's run (any run format; NAME defaults to the file name); repeat it",
    )
    cmd.add_argument("--qrels", required=True, help="qrels (any qrels format)")
    cmd.add_argument("--queries", help="queries (a table query_id, text, ...; STaRK QA CSV)")
    cmd.add_argument("--entities", help="documents (a table doc_id, name, text, ...)")
    cmd.add_argument("--split", help="evaluate only these query ids (one per line)")
    cmd.add_argument("--name", help="the bundle's and the dataset's name (default: adhoc)")
    cmd.add_argument("--metrics", help="the dataset's headline metrics, comma-separated")
    cmd.add_argument(
        "--group",
        action="append",
        default=[],
        metavar="NAME=RUN,RUN,...",
        help="runs of one model trained with several seeds (model names of --run); repeat it",
    )
    cmd.add_argument(
        "--folds",
        action="append",
        default=[],
        metavar="NAME=RUN,RUN,...",
        help="runs of one cross-validated model, one per fold over the fold's queries (model "
        "names of --run, which name the folds); repeat it",
    )


def adhoc_inputs(args: argparse.Namespace) -> AdhocInputs:
    """The :class:`~analysis.io.adhoc.AdhocInputs` of :func:`add_adhoc_args`' options.

    Raises:
        InputError: a ``--run`` without a path, or one model name given twice.
    """
    from analysis.io.adhoc import AdhocInputs, run_argument

    runs: dict[str, str] = {}
    for text in args.run:
        model, path = run_argument(text)
        if model in runs:
            raise InputError("--run", None, f"model {model!r} is given twice")
        runs[model] = path
    groups: dict[str, object] = {}
    given = [("--group", t) for t in getattr(args, "group", None) or []]
    given += [("--folds", t) for t in getattr(args, "folds", None) or []]
    for option, text in given:
        name, sep, rest = text.partition("=")
        if not sep or not name.strip():
            raise InputError(option, None, f"{text!r}: expected NAME=RUN,RUN,...")
        if name in groups:
            raise InputError(option, None, f"group {name!r} is given twice")
        members = [m.strip() for m in rest.split(",") if m.strip()]
        groups[name] = members if option == "--group" else {m: m for m in members}
    return AdhocInputs(
        runs=runs,
        qrels=args.qrels,
        queries=args.queries,
        entities=args.entities,
        name=args.name,
        metrics=args.metrics,
        split=args.split,
        groups=groups,
    )


def notes_store(bundle_root: Path, notes_dir: str | None) -> AnnotationStore:
    """The bundle's annotation store; a ``--notes-dir`` inside the bundle is named as such (an
    error of the database itself names the database)."""
    from analysis.io.annotations import AnnotationStore, database_path

    try:
        path = database_path(bundle_root, notes_dir)
    except InputError as exc:
        if notes_dir is None:
            raise
        raise InputError("--notes-dir", None, str(exc)) from None
    return AnnotationStore(path)


def bundle_dataset(bundle: Bundle, name: str) -> DatasetSpec:
    """The dataset ``name`` of the bundle; an unknown name is one line naming the known ones."""
    if name not in bundle.datasets:
        known = ", ".join(list(bundle.datasets)[:20])
        raise InputError("--dataset", None, f"no dataset {name!r} (known: {known})")
    return bundle.datasets[name]
