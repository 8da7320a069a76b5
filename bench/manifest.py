"""Benchmark: manifests with many datasets -- ``validate --bundle``, the app's bundle load
(``read_manifest(..., skip_broken=True)``) and ``report`` -- cost per dataset at each size.

Each bundle has N datasets, each its own two-query qrels and one two-query run (the smallest
real dataset): the cost is then the per-dataset overhead of the tools, which must stay the same
per dataset as N grows (linear), and the manifest beyond the limit (``MAX_DATASETS``) must be
refused at once. Every measurement is a whole process (``python -m analysis ...`` or a child
reading the manifest), wall time, one run per size, in one run of this script so that the
ratios between sizes share the machine's load. ``--baseline DIR`` times another checkout (e.g.
the previous version) on the same bundles, side by side.

Usage::

    python bench/manifest.py [--sizes 100,300,1000] [--report-sizes 10,30,100]
                             [--refuse 10000] [--baseline DIR] [--workdir bench/out/manifest]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOAD = "from analysis.io.bundle import read_manifest; import sys; read_manifest(sys.argv[1], skip_broken=True)"  # noqa: E501


def make_bundle(folder: Path, n: int) -> Path:
    """N datasets, each ``d<i>/qrels.txt`` and ``d<i>/runs/bm25.run`` (two queries)."""
    if (folder / "bundle.toml").is_file():
        return folder
    lines = ['name = "many"\n']
    for i in range(n):
        runs = folder / f"d{i:05d}" / "runs"
        runs.mkdir(parents=True, exist_ok=True)
        (runs.parent / "qrels.txt").write_text("q1 0 a 1\nq2 0 b 1\n")
        (runs / "bm25.run").write_text("q1 Q0 a 1 2.0 m\nq1 Q0 c 2 1.0 m\nq2 Q0 c 1 1.0 m\n")
        lines.append(f'\n[datasets.d{i:05d}]\nfamily = "generic"\n')
    (folder / "bundle.toml").write_text("".join(lines))
    return folder


def timed(args: list[str], cwd: Path) -> tuple[float, int]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    start = time.perf_counter()
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, env=env, check=False)
    return time.perf_counter() - start, proc.returncode


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "analysis", *args]


def measure(checkout: Path, bundle: Path, n: int, out: Path, report: bool) -> list[tuple]:
    rows = []
    t, code = timed(_cli("validate", "--bundle", str(bundle)), checkout)
    rows.append(("validate --bundle", n, t, code))
    t, code = timed([sys.executable, "-c", LOAD, str(bundle)], checkout)
    rows.append(("app bundle load", n, t, code))
    if report:
        t, code = timed(_cli("report", "--bundle", str(bundle), "--out", str(out)), checkout)
        rows.append(("report", n, t, code))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,300,1000")
    parser.add_argument("--report-sizes", default="10,30,100")
    parser.add_argument("--refuse", type=int, default=10_000)
    parser.add_argument("--baseline", default=None, help="another checkout to time as well")
    parser.add_argument("--workdir", default=str(ROOT / "bench" / "out" / "manifest"))
    args = parser.parse_args()
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    checkouts = [("this", ROOT)] + ([("baseline", Path(args.baseline))] if args.baseline else [])
    sizes = sorted({int(s) for s in args.sizes.split(",")} | {int(s) for s in
                   args.report_sizes.split(",")})  # fmt: skip
    reports = {int(s) for s in args.report_sizes.split(",")}
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    print("| checkout | step | datasets | s | ms per dataset | exit |")
    print("|---|---|---|---|---|---|")
    for n in sizes:
        bundle = make_bundle(work / f"b{n}", n)
        for name, checkout in checkouts:
            for step, size, t, code in measure(checkout, bundle, n, work / "r.html", n in reports):
                print(f"| {name} | {step} | {size} | {t:.2f} | {1000 * t / size:.1f} | {code} |")
    big = make_bundle(work / f"b{args.refuse}", args.refuse)
    t, code = timed(_cli("validate", "--bundle", str(big)), ROOT)
    print(f"| this | validate --bundle (refused) | {args.refuse} | {t:.2f} | - | {code} |")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    if os.environ.get("BENCH_KEEP") != "1":
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
