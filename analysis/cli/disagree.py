"""``disagree``: per-query rank overlap of two runs, without qrels (Jaccard@k, RBO, τ_AP)."""

from __future__ import annotations

import argparse
from pathlib import Path

from analysis.core.errors import InputError
from analysis.core.metrics import TIE_POLICIES

NAMES = ("disagree",)


def add_parsers(sub: argparse._SubParsersAction) -> None:
    cmd = sub.add_parser(
        "disagree",
        help="per-query disagreement of two runs without qrels (jaccard@k, rbo, tau_ap)",
    )
    cmd.add_argument("--run", action="append", required=True, help="a run file; give it twice")
    cmd.add_argument(
        "--k",
        type=int,
        default=10,
        help="compare the top k of each run (10; at most 10000; beyond the longest list the "
        "values are those of the whole lists)",
    )
    cmd.add_argument("--p", type=float, default=0.9, help="RBO persistence, 0 < p < 1 (0.9)")
    cmd.add_argument("--ties", choices=TIE_POLICIES, default="trec_eval", help="tie policy")
    cmd.add_argument(
        "--out", required=True, help="output table (.csv or .parquet), most different first"
    )


def run(args: argparse.Namespace) -> int:
    from analysis.cli._output import write_frame
    from analysis.io import load_run
    from analysis.io.atomic import refuse_overwrite
    from analysis.stats.disagree import MAX_K, disagreement, most_different

    if len(args.run) != 2:
        raise InputError("--run", None, f"give exactly two runs, got {len(args.run)}")
    if not 1 <= args.k <= MAX_K:
        raise InputError("--k", None, f"must be from 1 to {MAX_K}, got {args.k}")
    if not 0.0 < args.p < 1.0:
        raise InputError("--p", None, f"must be strictly between 0 and 1, got {args.p}")
    out = Path(args.out)
    refuse_overwrite(out, args.run)
    run_a, run_b = (load_run(path) for path in args.run)
    try:
        table = disagreement(run_a, run_b, k=args.k, p=args.p, ties=args.ties)
    except ValueError as exc:  # a (queries, k) matrix over the memory bound
        raise InputError("--k", None, str(exc)) from None
    table = most_different(table)
    write_frame(table, out)
    n = len(table)
    jac = f"jaccard@{args.k}"
    print(f"{n} queries; mean {jac} {table[jac].mean():.4f}, mean rbo {table['rbo'].mean():.4f}")
    return 0
