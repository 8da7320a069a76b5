"""``demo``: regenerate the demo bundle (the generator lives in the top-level ``demo`` package)."""

from __future__ import annotations

import argparse
from pathlib import Path

NAMES = ("demo",)


def add_parsers(sub: argparse._SubParsersAction) -> None:
    demo = sub.add_parser("demo", help="regenerate the demo bundle")
    demo.add_argument("--out", default="data/demo", help="output folder")
    demo.add_argument("--seed", type=int, default=0)


def run(args: argparse.Namespace) -> int:
    from demo.generate import generate_bundle

    generate_bundle(Path(args.out), seed=args.seed)
    print(f"demo bundle written to {args.out}")
    return 0
