"""``notes``: export a bundle's annotations (tags, notes, judgements with their authors) as CSV
and a dataset's amended qrels (its qrels with the reviewers' judgements applied) as TREC qrels.

Reads the bundle's notes database (``RETRIEVAL_DASHBOARD_NOTES_DIR`` or ``--notes-dir``); a
bundle nobody annotated yet exports a header-only CSV and the strict qrels. Outputs are written
atomically and never over an input file.
"""

from __future__ import annotations

import argparse

from analysis.core.errors import InputError

NAMES = ("notes",)


def add_parsers(sub: argparse._SubParsersAction) -> None:
    cmd = sub.add_parser(
        "notes",
        help="export annotations (CSV) and amended qrels (TREC) of a bundle",
    )
    cmd.add_argument("--bundle", required=True, help="the bundle folder (or its bundle.toml)")
    cmd.add_argument("--dataset", help="one dataset of the bundle (required with --qrels)")
    cmd.add_argument("--notes-dir", help="the notes folder (default: the configured one)")
    cmd.add_argument("--csv", help="write the annotations here (kind, ..., author, updated)")
    cmd.add_argument("--qrels", help="write the dataset's amended qrels here (TREC qrels)")


def run(args: argparse.Namespace) -> int:
    from analysis.io.amended import amended_qrels, qrels_trec_text
    from analysis.io.annotations import AnnotationStore
    from analysis.io.atomic import atomic_write_text, refuse_overwrite
    from analysis.io.bundle import bundle_files, load_dataset, read_manifest

    if not args.csv and not args.qrels:
        raise InputError("notes", None, "give --csv and/or --qrels")
    if args.qrels and not args.dataset:
        raise InputError("--qrels", None, "needs --dataset (amended qrels are per dataset)")
    bundle = read_manifest(args.bundle)
    if args.dataset is not None and args.dataset not in bundle.datasets:
        known = ", ".join(bundle.datasets)
        raise InputError("--dataset", None, f"no dataset {args.dataset!r} (known: {known})")
    inputs = bundle_files(bundle)
    store = AnnotationStore.for_bundle(bundle.root, args.notes_dir)
    for out in (args.csv, args.qrels):
        if out:
            refuse_overwrite(out, [*inputs, store.path], what="an input file")
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
    for out, text, message in texts:
        atomic_write_text(out, text)
        print(f"{message} -> {out}")
    return 0
