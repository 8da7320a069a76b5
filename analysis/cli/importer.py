"""``import``: real benchmark layouts -> a ready bundle (bundle.toml + Parquet).

    python -m analysis import stark --root DIR [--skb DIR] [--name NAME] --out BUNDLE
    python -m analysis import geobloom --root DIR --crs EPSG:2385 [--baselines] --out BUNDLE
    python -m analysis import geoglue --root DIR [--baselines] --out BUNDLE
    python -m analysis import list --root DIR --crs EPSG:32650 [--baselines] --out BUNDLE

The bundle is built beside ``--out`` and renamed into place at the end; ``--out`` inside an
input folder is refused. stdout gets one line per dataset and the data-check notes.
"""

from __future__ import annotations

import argparse
import time

NAMES = ("import",)


def add_parsers(sub: argparse._SubParsersAction) -> None:
    cmd = sub.add_parser("import", help="import a STaRK / GeoBloom / GeoGLUE / LIST folder")
    kinds = cmd.add_subparsers(dest="kind", required=True, parser_class=type(cmd))
    stark = kinds.add_parser("stark", help="a STaRK domain folder (QA CSVs, splits, runs)")
    stark.add_argument("--skb", default=None, help="STaRK SKB folder (processed/node_info.pkl)")
    for name, helptext in (
        ("geobloom", "GeoBloom text files poi.txt, train/dev/test.txt (projected X, Y)"),
        ("geoglue", "GeoGLUE JSON with gis, or WGS84 CSVs with gold_poi_ids"),
        ("list", "LIST poi.csv, query.csv, qrels.csv (projected coor)"),
    ):
        geo = kinds.add_parser(name, help=helptext)
        if name != "geoglue":  # GeoGLUE's coordinates are WGS84 already
            geo.add_argument(
                "--crs",
                required=True,
                help="the dataset's one projected CRS: EPSG:2385 (GeoGLUE-clean), EPSG:32650 …",
            )
        geo.add_argument(
            "--baselines", action="store_true", help="add BM25, char n-gram and fusion runs"
        )
        if name == "geobloom":
            geo.add_argument(
                "--easting-first",
                action="store_true",
                help="X is the easting (default: the CRS's own axis order; EPSG:2385: northing)",
            )
    for parser in (stark, *(kinds.choices[n] for n in ("geobloom", "geoglue", "list"))):
        parser.add_argument("--root", required=True, help="the folder to import (only read)")
        parser.add_argument("--name", default=None, help="bundle/dataset name (default: folder)")
        parser.add_argument("--out", required=True, help="bundle folder to write")


def run(args: argparse.Namespace) -> int:
    from analysis.core.progress import Progress, reporting

    started = time.perf_counter()
    with reporting(Progress("import")):
        result = _import(args)
    for line in result.summary():
        print(line)
    for note in result.notes:
        print(f"note: {note}")
    print(f"wrote {result.out} in {time.perf_counter() - started:.1f} s")
    return 0


def _import(args: argparse.Namespace):  # an importers.ImportResult
    from analysis.io import importers

    if args.kind == "stark":
        result = importers.import_stark(args.root, args.out, skb=args.skb, name=args.name)
    else:
        func = getattr(importers, f"import_{args.kind}")
        kwargs = {"name": args.name, "baselines": args.baselines}
        if getattr(args, "easting_first", False):
            kwargs["easting_first"] = True
        if getattr(args, "crs", None) is not None:
            kwargs["crs"] = args.crs
        result = func(args.root, args.out, **kwargs)
    return result
