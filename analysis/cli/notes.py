"""``notes``: export a bundle's annotations (tags, notes, judgements with their authors) as CSV
and a dataset's amended qrels (its qrels with the reviewers' judgements applied) as TREC qrels;
``notes import`` loads tags, notes and judgements from a CSV (the export's, or a reviewer's own).

Reads the bundle's notes database (``RETRIEVAL_DASHBOARD_NOTES_DIR`` or ``--notes-dir``); a
bundle nobody annotated yet exports a header-only CSV and the strict qrels. Outputs are written
atomically, both or neither (:func:`analysis.io.atomic.atomic_write_all`), and never over an
input file. An import checks every row first
(:mod:`analysis.io.annotations_csv`): each bad row is one line ``error: <csv>:<line>: <what>``
on stderr (exit code 2), and then nothing is written.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from analysis.cli._common import bundle_dataset, notes_store
from analysis.core.errors import InputError

NAMES = ("notes",)


def add_parsers(sub: argparse._SubParsersAction) -> None:
    cmd = sub.add_parser(
        "notes",
        help="export annotations (CSV) and amended qrels (TREC) of a bundle",
    )
    cmd.add_argument("--bundle", help="the bundle folder (or its bundle.toml)")
    cmd.add_argument("--dataset", help="one dataset of the bundle (required with --qrels)")
    cmd.add_argument("--notes-dir", help="the notes folder (default: the configured one)")
    cmd.add_argument("--csv", help="write the annotations here (kind, ..., author, updated)")
    cmd.add_argument("--qrels", help="write the dataset's amended qrels here (TREC qrels)")
    actions = cmd.add_subparsers(dest="action", parser_class=type(cmd))
    imp = actions.add_parser("import", help="load tags, notes and judgements from a CSV file")
    imp.add_argument("--bundle", required=True, help="the bundle folder (or its bundle.toml)")
    imp.add_argument("--dataset", required=True, help="the dataset the rows annotate")
    imp.add_argument("--csv", required=True, help="kind,query_id,doc_id,value[,dataset,...] rows")
    imp.add_argument("--author", required=True, help="written as the author of every row")
    imp.add_argument("--notes-dir", help="the notes folder (default: the configured one)")


def run(args: argparse.Namespace) -> int:
    if args.action == "import":
        return _import(args)
    return _export(args)


def _import(args: argparse.Namespace) -> int:
    """``notes import``: check every row, then write them (see the module docstring)."""
    import sys

    from analysis.io.annotations_csv import ImportProblems, import_annotations_csv
    from analysis.io.bundle import load_dataset, read_manifest

    bundle = read_manifest(args.bundle)
    ds = load_dataset(bundle_dataset(bundle, args.dataset), "all")
    queries = set(ds.queries["query_id"].astype(str)) | set(ds.qrels["query_id"].astype(str))
    store = notes_store(bundle.root, args.notes_dir)
    try:
        counts = import_annotations_csv(
            store, args.csv, args.dataset, author=args.author, queries=queries
        )
    except ImportProblems as exc:
        sys.stderr.write("".join(f"error: {line}\n" for line in exc.lines()))
        return 2
    done = ", ".join(f"{counts[k]} {k}(s)" for k in ("tag", "note", "judgement"))
    print(f"{done} imported into {args.dataset} -> {store.path}")
    if counts["skipped"]:
        print(f"{counts['skipped']} row(s) of other datasets skipped")
    return 0


def _export(args: argparse.Namespace) -> int:
    from analysis.io.amended import amended_qrels, qrels_trec_text
    from analysis.io.atomic import atomic_write_all
    from analysis.io.bundle import load_dataset, read_manifest, refuse_overwriting

    if not args.bundle:
        raise InputError("notes", None, "needs --bundle (or: notes import --bundle ...)")
    if not args.csv and not args.qrels:
        raise InputError("notes", None, "give --csv and/or --qrels")
    if args.qrels and not args.dataset:
        raise InputError("--qrels", None, "needs --dataset (amended qrels are per dataset)")
    bundle = read_manifest(args.bundle)
    if args.dataset is not None:
        bundle_dataset(bundle, args.dataset)
    store = notes_store(bundle.root, args.notes_dir)
    for out in (args.csv, args.qrels):
        if out:
            refuse_overwriting(bundle, out, store.path, what="an input file")
    if args.csv and args.qrels and Path(args.csv).resolve() == Path(args.qrels).resolve():
        raise InputError(args.qrels, None, "--qrels and --csv name the same file")
    texts: list[tuple[str, str, str]] = []  # (file, text, message): built first, then written
    if args.csv:
        n = sum(len(f(args.dataset)) for f in (store.tags, store.notes, store.judgements))
        texts.append((args.csv, store.export_csv(args.dataset), f"{n} annotations"))
    if args.qrels:
        ds = load_dataset(bundle.datasets[args.dataset], "all")
        judged = store.judgements(args.dataset)
        amended = amended_qrels(ds.qrels, judged)
        try:
            text = qrels_trec_text(amended)
        except ValueError as exc:
            raise InputError(args.qrels, None, f"{exc}: not TREC-safe") from None
        texts.append((args.qrels, text, f"{len(amended)} qrels rows ({len(judged)} judgements)"))
    atomic_write_all([(out, _text_writer(text)) for out, text, _ in texts])  # both or neither
    for out, _, message in texts:
        print(f"{message} -> {out}")
    return 0


def _text_writer(text: str) -> Callable[[Path], None]:
    return lambda tmp: tmp.write_text(text, encoding="utf-8")
