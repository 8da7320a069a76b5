"""``geo``: duplicate-coordinate and twin report of a POI file, as JSON (stdout, or ``--out``
written atomically)."""

from __future__ import annotations

import argparse
import json
import sys

NAMES = ("geo",)


def add_parsers(sub: argparse._SubParsersAction) -> None:
    geo = sub.add_parser("geo", help="duplicate-coordinate report of a POI file (JSON)")
    geo.add_argument("--pois", required=True, help="POI file (CSV with lat/lon, LIST, GeoGLUE…)")
    geo.add_argument("--tolerance-m", type=float, default=0.0, help="stack tolerance in metres")
    geo.add_argument(
        "--crs",
        default=None,
        help="CRS of projected coordinates (LIST, GeoBloom files), e.g. EPSG:2385; a file of "
        "lat/lon does not use it (a note says so)",
    )
    geo.add_argument("--out", default=None, help="write the JSON here (default: stdout)")


def _projected(path: str) -> bool:
    """Does the POI file hold projected x/y (LIST, GeoBloom), the only ones ``--crs`` reads?"""
    from analysis.io.spatial import detect_spatial_format, is_table

    return not is_table(path) and detect_spatial_format(path) in ("list", "geobloom")


def run(args: argparse.Namespace) -> int:
    import math

    from analysis.core.errors import InputError
    from analysis.geo import stack_report
    from analysis.io.spatial import load_pois

    if not math.isfinite(args.tolerance_m) or args.tolerance_m < 0:
        raise InputError(
            "--tolerance-m", None, f"must be a finite number of metres >= 0, not {args.tolerance_m}"
        )

    if args.out is not None:
        from analysis.io.atomic import refuse_overwrite

        refuse_overwrite(args.out, [args.pois])
    pois = load_pois(args.pois, crs=args.crs)
    if args.crs is not None and not _projected(args.pois):
        print(f"note: --crs {args.crs} is not used: {args.pois} holds WGS84 lat/lon, not "
              "projected x/y", file=sys.stderr)  # fmt: skip
    text = json.dumps(stack_report(pois, tolerance_m=args.tolerance_m), ensure_ascii=False)
    if args.out is None:
        print(text)
        return 0
    from analysis.io.atomic import atomic_write_text

    atomic_write_text(args.out, text + "\n")
    print(f"report written to {args.out}")
    return 0
