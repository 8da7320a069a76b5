"""Benchmark: ``python -m analysis import …`` on the shared real files, as whole processes.

Each import (interpreter start, imports, reading the files, checks, writing Parquet and the
manifest) runs ``--repeat`` times; the median wall time and the peak resident memory of the
child are reported. The GeoGLUE-clean imports are also timed against the Python recipe the
importers replace (the data/README of before: load the GeoBloom files, write Parquet, fit and
run the three baselines), in the same run, alternating.

Usage::

    python bench/importers.py [--repeat 3] [--workdir bench/out/importers]

Needs ``../shared/real`` beside the project.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT.parent / "shared" / "real"
GEO = REAL / "geo" / "geoglue_clean_subset"
RECIPE = """
import sys
from pathlib import Path
from analysis.io.spatial import load_geobloom_pois, load_geobloom_queries
from analysis.baselines.retrievers import BM25, CharNgramTfidf, SpatialFusion
import pandas as pd
src, out = Path(sys.argv[1]), Path(sys.argv[2])
(out / "runs").mkdir(parents=True, exist_ok=True)
pois = load_geobloom_pois(src / "poi.txt", crs="EPSG:2385")
parts = [load_geobloom_queries(src / f"{s}.txt", crs="EPSG:2385") for s in ("train", "dev", "test")]
queries = pd.concat([p[0] for p in parts]); qrels = pd.concat([p[1] for p in parts])
for name, table in [("entities", pois), ("queries", queries), ("qrels", qrels)]:
    table.to_parquet(out / f"{name}.parquet", index=False)
ids, texts = pois["doc_id"].tolist(), pois["text"].tolist()
q, qid = queries["text"].tolist(), queries["query_id"].tolist()
BM25().fit(ids, texts).search(q, query_ids=qid).to_parquet(out / "runs/bm25.parquet")
CharNgramTfidf().fit(ids, texts).search(q, query_ids=qid).to_parquet(out / "runs/c.parquet")
SpatialFusion(alpha=0.5, d_max_m=30_000).fit(ids, texts, pois["lat"], pois["lon"]).search(
    q, queries["lat"], queries["lon"], query_ids=qid).to_parquet(out / "runs/f.parquet")
"""


def _jobs(work: Path) -> dict[str, list[str]]:
    py = [sys.executable, "-m", "analysis", "import"]
    jobs = {
        f"stark {d}": [*py, "stark", "--root", str(REAL / "stark" / d), "--out", str(work / d)]
        for d in ("amazon", "mag", "prime")
    }
    jobs["geobloom (EPSG:2385)"] = [
        *py,
        "geobloom",
        "--root",
        str(GEO),
        "--crs",
        "EPSG:2385",
        "--out",
        str(work / "gb"),
    ]
    jobs["geoglue (CSV)"] = [*py, "geoglue", "--root", str(GEO), "--out", str(work / "gg")]
    jobs["geobloom --baselines"] = [*jobs["geobloom (EPSG:2385)"], "--baselines"]
    jobs["recipe: geobloom + baselines"] = [
        sys.executable,
        "-c",
        RECIPE,
        str(GEO),
        str(work / "recipe"),
    ]
    return jobs


def _run(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, peak RSS MiB of this child) of one run."""
    start = time.perf_counter()
    child = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{child.stderr.read().decode()}")
    return wall, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workdir", default=str(ROOT / "bench" / "out" / "importers"))
    args = parser.parse_args()
    work = Path(args.workdir)
    shutil.rmtree(work, ignore_errors=True)
    jobs = _jobs(work)
    times: dict[str, list[float]] = {name: [] for name in jobs}
    peaks: dict[str, float] = {}
    for _ in range(args.repeat):
        for name, cmd in jobs.items():
            wall, peak = _run(cmd)
            times[name].append(wall)
            peaks[name] = peak
    print(f"| import | median of {args.repeat} | peak RSS |")
    print("|---|---|---|")
    for name in jobs:
        print(f"| {name} | {statistics.median(times[name]):.2f} s | {peaks[name]:.0f} MiB |")
    ratio = statistics.median(times["geobloom --baselines"]) / statistics.median(
        times["recipe: geobloom + baselines"]
    )
    print(f"\nimport geobloom --baselines / recipe: {ratio:.2f}")


if __name__ == "__main__":
    main()
