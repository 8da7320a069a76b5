"""``import``: a benchmark folder in a known layout -> a ready bundle (bundle.toml + Parquet).

    python -m analysis import <importer> --root DIR [options] [--name NAME] --out BUNDLE

One sub-command per importer of the registry (:mod:`analysis.io.importers.registry`), with its
own options (``--crs`` for projected coordinates, ``--baselines``, ...);
``python -m analysis import --help`` lists them. The bundle is built beside ``--out`` and
renamed into place at the end; ``--out`` inside an input folder is refused. stdout gets one
line per dataset and the data-check notes.
"""

from __future__ import annotations

import argparse
import time

NAMES = ("import",)


def add_parsers(sub: argparse._SubParsersAction) -> None:
    from analysis.io.importers.registry import importers

    found = importers()
    cmd = sub.add_parser("import", help=f"import a folder in a known layout: {', '.join(found)}")
    kinds = cmd.add_subparsers(dest="kind", required=True, parser_class=type(cmd))
    for importer in found.values():
        parser = kinds.add_parser(importer.name, help=importer.help)
        if importer.crs == "required":
            parser.add_argument("--crs", required=True, help=importer.crs_help)
        if importer.baselines:
            parser.add_argument(
                "--baselines", action="store_true", help="add BM25, char n-gram and fusion runs"
            )
        for arg in importer.arguments:
            if arg.kind == "flag":
                parser.add_argument(arg.flag, action="store_true", help=arg.help)
            else:
                parser.add_argument(arg.flag, default=None, metavar=arg.metavar, help=arg.help)
        parser.add_argument("--root", required=True, help="the folder to import (only read)")
        parser.add_argument("--name", default=None, help="bundle/dataset name (default: folder)")
        parser.add_argument("--out", required=True, help="bundle folder to write")


def run(args: argparse.Namespace) -> int:
    from analysis.io.importers.registry import get

    started = time.perf_counter()
    importer = get(args.kind)
    result = importer.run(args.root, args.out, **importer.options(vars(args)))
    for line in result.summary():
        print(line)
    for note in result.notes:
        print(f"note: {note}")
    print(f"wrote {result.out} in {time.perf_counter() - started:.1f} s")
    return 0
