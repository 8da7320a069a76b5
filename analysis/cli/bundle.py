"""``bundle``: runs and qrels -> a bundle folder to keep or share (no manifest to write).

    python -m analysis bundle --run bm25=bm25.trec --run dense=dense.parquet --qrels qrels.txt \\
        [--queries q.tsv] [--entities docs.parquet] [--split test.index] [--name NAME] \\
        [--metrics hit@1,mrr] --out DIR

Every file is read in any supported format (detected from the content) and written as the
bundle format (``bundle.toml`` + Parquet, :mod:`analysis.io.adhoc`). The bundle is built beside
``--out`` and renamed into place at the end; ``--out`` inside an input folder, or a non-empty
folder that is not a bundle, is refused. stdout gets one line for the dataset.
"""

from __future__ import annotations

import argparse
import time

from analysis.cli._common import add_adhoc_args, adhoc_inputs

NAMES = ("bundle",)


def add_parsers(sub: argparse._SubParsersAction) -> None:
    cmd = sub.add_parser("bundle", help="runs + qrels -> a bundle folder the app opens")
    add_adhoc_args(cmd)
    cmd.add_argument("--out", required=True, help="bundle folder to write")


def run(args: argparse.Namespace) -> int:
    from analysis.io.adhoc import write_adhoc_bundle

    started = time.perf_counter()
    result = write_adhoc_bundle(adhoc_inputs(args), args.out)
    for line in result.summary():
        print(line)
    print(f"wrote {result.out} in {time.perf_counter() - started:.1f} s")
    return 0
