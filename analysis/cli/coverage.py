"""``coverage``: judgement coverage of every model of a bundle dataset, the Analyses page's
"Coverage" tab on the command line.

``python -m analysis coverage --bundle B --dataset D [--k 10] [--split NAME|all] [--ties ...]
[--notes-dir DIR] --out FILE``: one row per (model, query of the qrels): ``model, query_id,
n_top, judged@k, unjudged@k`` (:func:`analysis.stats.coverage.coverage_summary`), written as CSV
or Parquet (by the extension, atomically). A document counts as judged when the qrels have a
row for it, whatever its relevance, or a reviewer judged it in the bundle's notes (the amended
qrels). stdout gets the summary per model, and a note when the qrels hold no judged
non-relevant row: judged@k is then the share of relevant documents, not a pool's coverage.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from analysis.core.errors import InputError
from analysis.core.names import TIE_POLICIES

NAMES = ("coverage",)


def add_parsers(sub: argparse._SubParsersAction) -> None:
    cmd = sub.add_parser("coverage", help="judged@k of every model of a bundle dataset")
    cmd.add_argument("--bundle", required=True, help="the bundle folder (or its bundle.toml)")
    cmd.add_argument("--dataset", required=True, help="one dataset of the bundle")
    cmd.add_argument("--k", type=int, default=10, help="the top k of each run (10)")
    cmd.add_argument("--split", help="a split of the dataset or 'all' (default: the manifest's)")
    cmd.add_argument("--ties", choices=TIE_POLICIES, default="trec_eval", help="tie policy")
    cmd.add_argument("--notes-dir", help="the notes folder (default: the configured one)")
    cmd.add_argument("--out", required=True, help="per-query table (.csv or .parquet)")


def run(args: argparse.Namespace) -> int:
    from analysis.cli._common import bundle_dataset, notes_store
    from analysis.cli._output import write_frame
    from analysis.core.metrics import rank_run
    from analysis.io.bundle import load_dataset, load_model_run, read_manifest, refuse_overwriting
    from analysis.stats.coverage import coverage_summary, has_explicit_negatives

    if args.k < 1:
        raise InputError("--k", None, f"must be at least 1, got {args.k}")
    bundle = read_manifest(args.bundle)
    spec = bundle_dataset(bundle, args.dataset)
    store = notes_store(bundle.root, args.notes_dir)
    out = Path(args.out)
    refuse_overwriting(bundle, out, store.path, what="an input file")
    ds = load_dataset(spec, args.split)
    ranked = {m: rank_run(load_model_run(spec, m), args.ties) for m in spec.runs}
    judged = store.judgements(args.dataset)
    per_query, summary = coverage_summary(ranked, ds.qrels, args.k, judged)
    print(f"dataset {spec.name}, split {ds.split or 'all'}, k = {args.k}, "
          f"{len(judged)} reviewer judgement(s)")  # fmt: skip
    print(summary.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    if not has_explicit_negatives(ds.qrels, spec.relevance_threshold):
        print("note: the qrels hold no judged non-relevant row: judged@k is the share of "
              "relevant documents in the top k, not the coverage of a pool")  # fmt: skip
    write_frame(per_query, out)
    return 0
