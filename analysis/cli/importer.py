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
    """The ``import`` command. Its sub-commands (one per importer) are added when ``import``
    is parsed: reading the registry imports the importers (and pandas), which the other
    commands do without."""
    cmd = sub.add_parser(
        "import",
        help="a benchmark folder in a known layout -> a bundle (import --help lists the layouts)",
    )
    kinds = cmd.add_subparsers(dest="kind", required=True, parser_class=type(cmd))
    parse = cmd.parse_known_args

    def parse_with_importers(args=None, namespace=None):
        if not kinds.choices:
            _add_importers(kinds)
        return parse(args, namespace)

    cmd.parse_known_args = parse_with_importers  # type: ignore[method-assign]


def _add_importers(kinds: argparse._SubParsersAction) -> None:
    """One sub-command per importer of the registry, with its options."""
    from analysis.cli._common import add_plugin_args
    from analysis.io.importers.registry import importers

    for importer in importers().values():
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
        add_plugin_args(parser)


def run(args: argparse.Namespace) -> int:
    from analysis.io.importers.registry import get, run_importer

    started = time.perf_counter()
    importer = get(args.kind)
    result = run_importer(importer, args.root, args.out, vars(args))
    for line in result.summary():
        print(line)
    for note in result.notes:
        print(f"note: {note}")
    print(f"wrote {result.out} in {time.perf_counter() - started:.1f} s")
    return 0
