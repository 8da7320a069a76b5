"""Benchmark: the per-query table of a LIST-sized spatial dataset, with and without coordinates.

A synthetic dataset shaped like LIST's Beijing/Shanghai: ``--pois`` POIs around one city (a
third of them snapped onto shared points, so stacks form; some stacked POIs copy a neighbour's
text, so twins form), ``--queries`` queries with 1-3 gold POIs (mean ~1.4) and a point near
their gold, and ``--models`` runs of ``--depth`` POIs per query. Each measurement runs in a
fresh child process that builds the data and then
:func:`analysis.stats.perquery.per_query_table`, with coordinates (geo diagnostics, twin-aware
metrics) or with ``lat``/``lon`` dropped; wall time is the table build, memory the child's
peak RSS and the RSS added by the build. ``--repeat`` runs each measurement that many times,
interleaved (with, without, with, ...), and keeps the fastest of each. ``--baseline DIR``
measures the library in ``DIR`` (another checkout) too, interleaved with this one, on the same
data (this checkout's generator), and prints both side by side.

Usage::

    python bench/spatial.py [--pois 120000,20000] [--queries 10000] [--models 3] [--depth 100]
                            [--repeat 3] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]


def spatial_dataset(
    n_pois: int, n_queries: int, n_models: int = 3, depth: int = 100, seed: int = 0
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, pd.DataFrame], pd.DataFrame]:
    """``(queries, qrels, runs, pois)`` of a synthetic LIST-like dataset (see the docstring)."""
    rng = np.random.default_rng(seed)
    lat = 39.9 + rng.normal(0, 0.08, n_pois)
    lon = 116.4 + rng.normal(0, 0.1, n_pois)
    snapped = rng.random(n_pois) < 0.33  # onto a few thousand shared points: stacks
    anchors = rng.integers(0, max(1, n_pois // 40), n_pois)
    lat = np.where(snapped, np.round(39.9 + (anchors % 97) * 0.002, 6), lat)
    lon = np.where(snapped, np.round(116.4 + (anchors // 97) * 0.002, 6), lon)
    words = np.array(["餐厅", "酒店", "银行", "超市", "药房", "停车场", "学校", "公园", "书店"])
    text = np.char.add(
        words[rng.integers(0, len(words), n_pois)], rng.integers(0, 300, n_pois).astype(str)
    )
    twin = snapped & (rng.random(n_pois) < 0.1)
    text = np.where(twin, np.char.add(words[anchors % len(words)], (anchors % 7).astype(str)), text)
    pois = pd.DataFrame(
        {
            "doc_id": pd.array(np.arange(n_pois).astype(str), dtype="str"),
            "name": pd.array(text, dtype="str"),
            "text": pd.array(text, dtype="str"),
            "type": "poi",
            "lat": lat,
            "lon": lon,
        }
    )
    n_gold = rng.choice([1, 2, 3], size=n_queries, p=[0.7, 0.2, 0.1])
    gold_q = np.repeat(np.arange(n_queries), n_gold)
    gold_d = rng.integers(0, n_pois, len(gold_q))
    first = np.r_[0, np.cumsum(n_gold)[:-1]]
    qid = np.char.add("q", np.arange(n_queries).astype(str))
    queries = pd.DataFrame(
        {
            "query_id": pd.array(qid, dtype="str"),
            "text": pd.array(text[gold_d[first]], dtype="str"),
            "query_type": pd.array(np.where(n_gold > 1, "multi", "single"), dtype="str"),
            "lat": lat[gold_d[first]] + rng.normal(0, 0.01, n_queries),
            "lon": lon[gold_d[first]] + rng.normal(0, 0.01, n_queries),
        }
    )
    qrels = pd.DataFrame(
        {
            "query_id": pd.array(qid[gold_q], dtype="str"),
            "doc_id": pd.array(gold_d.astype(str), dtype="str"),
            "relevance": np.ones(len(gold_q), dtype=np.int64),
        }
    )
    runs = {}
    for m in range(n_models):
        docs = rng.integers(0, n_pois, (n_queries, depth))
        hit = rng.random(n_queries) < 0.6  # the first gold somewhere in the list
        docs[hit, rng.integers(0, depth, int(hit.sum()))] = gold_d[first][hit]
        near = rng.random((n_queries, depth)) < 0.2  # stack-mates of the gold
        mates = np.flatnonzero(snapped)
        docs = np.where(near, mates[rng.integers(0, len(mates), docs.shape)], docs)
        scores = np.round(-np.sort(-rng.random((n_queries, depth)), axis=1), 3)  # some ties
        runs[f"model-{m}"] = pd.DataFrame(
            {
                "query_id": pd.array(np.repeat(qid, depth), dtype="str"),
                "doc_id": pd.array(docs.ravel().astype(str), dtype="str"),
                "score": scores.ravel(),
            }
        )
    return queries, qrels, runs, pois


_CHILD = """
import json, resource, sys, time
sys.path.insert(0, {bench!r})
from spatial import spatial_dataset
sys.path.insert(0, {root!r})
from analysis.stats.perquery import per_query_table
queries, qrels, runs, pois = spatial_dataset({pois}, {queries}, {models}, {depth})
if not {coords}:
    queries, pois = queries.drop(columns=["lat", "lon"]), pois.drop(columns=["lat", "lon"])
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1])
before = rss()
t = time.perf_counter()
table, _ = per_query_table(queries, qrels, runs, dataset="bench", entities=pois)
wall = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({{"wall_s": wall, "peak_mib": peak / 1024, "added_mib": (peak - before) / 1024,
                  "rows": len(table), "columns": table.shape[1]}}))
"""


def measure(
    n_pois: int, n_queries: int, n_models: int, depth: int, coords: bool, root: Path = ROOT
) -> dict:
    sizes = {"pois": n_pois, "queries": n_queries, "models": n_models, "depth": depth}
    code = _CHILD.format(root=str(root), bench=str(Path(__file__).parent), coords=coords, **sizes)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=root)  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pois", default="120000,20000")
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--models", type=int, default=3)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--baseline", type=Path, help="another checkout, measured side by side")
    args = parser.parse_args()
    roots = {"this": ROOT} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
    print("| POIs | code | coordinates | wall (s) | peak RSS (MiB) | added by the build (MiB) |")
    print("|---|---|---|---|---|---|")
    ratios = []
    for n_pois in (int(x) for x in args.pois.split(",")):
        runs: dict[tuple[str, bool], list[dict]] = {}
        for _ in range(args.repeat):  # interleaved, so that a change of load hits every case
            for name, root in roots.items():
                for coords in (False, True):
                    got = measure(n_pois, args.queries, args.models, args.depth, coords, root)
                    runs.setdefault((name, coords), []).append(got)
        for name in roots:
            row = {}
            for coords in (False, True):
                best = min(runs[name, coords], key=lambda r: r["wall_s"])
                row[coords] = best
                print(f"| {n_pois:,} | {name} | {'yes' if coords else 'no'} | "
                      f"{best['wall_s']:.2f} | {best['peak_mib']:.0f} | "
                      f"{best['added_mib']:.0f} |", flush=True)  # fmt: skip
            time_x = row[True]["wall_s"] / row[False]["wall_s"]
            peak_x = row[True]["peak_mib"] / row[False]["peak_mib"]
            added_x = row[True]["added_mib"] / max(row[False]["added_mib"], 1)
            ratios.append(f"{name} at {n_pois:,} POIs: time {time_x:.2f}x, peak RSS "
                          f"{peak_x:.2f}x, added {added_x:.2f}x")  # fmt: skip
    print("\n".join(ratios))


if __name__ == "__main__":
    main()
