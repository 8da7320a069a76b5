"""``python -m demo [--out data/demo] [--seed 0]``: regenerate the demo bundle."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from demo.generate import generate_bundle


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m demo", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="data/demo", help="output folder")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    generate_bundle(Path(args.out), seed=args.seed)
    print(f"demo bundle written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
