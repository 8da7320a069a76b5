"""``disagree``: per-query rank overlap of two runs, without qrels (Jaccard@k, RBO, τ_AP)."""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from analysis.core.errors import InputError
from analysis.core.metrics import TIE_POLICIES

if TYPE_CHECKING:
    import pandas as pd

NAMES = ("disagree",)


def add_parsers(sub: argparse._SubParsersAction) -> None:
    cmd = sub.add_parser(
        "disagree",
        help="per-query disagreement of two runs without qrels (jaccard@k, rbo, tau_ap)",
    )
    cmd.add_argument("--run", action="append", required=True, help="a run file; give it twice")
    cmd.add_argument("--k", type=int, default=10, help="compare the top k of each run (10)")
    cmd.add_argument("--p", type=float, default=0.9, help="RBO persistence, 0 < p < 1 (0.9)")
    cmd.add_argument("--ties", choices=TIE_POLICIES, default="trec_eval", help="tie policy")
    cmd.add_argument(
        "--out", required=True, help="output table (.csv or .parquet), most different first"
    )


def run(args: argparse.Namespace) -> int:
    from analysis.io import load_run
    from analysis.stats.disagree import disagreement, most_different

    if len(args.run) != 2:
        raise InputError("--run", None, f"give exactly two runs, got {len(args.run)}")
    if args.k < 1:
        raise InputError("--k", None, f"must be at least 1, got {args.k}")
    if not 0.0 < args.p < 1.0:
        raise InputError("--p", None, f"must be strictly between 0 and 1, got {args.p}")
    out = Path(args.out)
    for given in args.run:
        if out.exists() and Path(given).exists() and out.samefile(given):
            raise InputError(out, None, "is an input file: refusing to overwrite it")
    run_a, run_b = (load_run(path) for path in args.run)
    table = most_different(disagreement(run_a, run_b, k=args.k, p=args.p, ties=args.ties))
    _write_atomic(table, out)
    n = len(table)
    jac = f"jaccard@{args.k}"
    print(f"{n} queries; mean {jac} {table[jac].mean():.4f}, mean rbo {table['rbo'].mean():.4f}")
    return 0


def _write_atomic(table: pd.DataFrame, out: Path) -> None:
    """Write to a temporary file beside ``out``, then rename it over ``out`` (never partial)."""
    folder = out.parent if str(out.parent) else Path()
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise InputError(out, None, f"cannot write: {exc.strerror or exc}") from None
    os.close(fd)
    try:
        if out.suffix.lower() == ".parquet":
            table.to_parquet(tmp, index=False)
        else:
            table.to_csv(tmp, index=False)
        Path(tmp).replace(out)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise InputError(out, None, f"cannot write: {exc.strerror or exc}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
