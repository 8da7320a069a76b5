"""Benchmark: the app's first load of a 10k-query x 3-model bundle, cold and with a warm disk
cache (analysis.stats.cache).

A STaRK-shaped bundle (``--queries`` queries, ``--models`` runs of ``--depth`` docs, one
dataset, Parquet files) is generated into ``--workdir``. Each measurement is a fresh Python
process (empty Streamlit caches) that runs the home page with Streamlit's AppTest, server side,
and reports the wall time of that first run: *cold* with an empty disk cache folder, *warm*
with the folder the cold run filled. Optionally ``--spatial`` uses a LIST-shaped dataset with
coordinates (bench/spatial.py) instead.

Usage::

    python bench/firstload.py [--queries 10000] [--models 3] [--depth 100] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]

_CHILD = """
import json, os, sys, time
sys.path.insert(0, {root!r})
from streamlit.testing.v1 import AppTest
t = time.perf_counter()
at = AppTest.from_file({app!r}, default_timeout=600)
at.query_params["bundle"] = "bench"
at.run()
wall = time.perf_counter() - t
assert not at.exception, [e.value for e in at.exception]
rows = len(at.dataframe[0].value) if len(at.dataframe) else 0  # the leaderboard comes first
print(json.dumps({{"wall_s": wall, "leaderboard_rows": rows}}))
"""


def make_bundle(folder: Path, n_queries: int, n_models: int, depth: int, spatial: bool) -> Path:
    """Write ``folder/bench`` (bundle.toml, one dataset) unless it exists; returns it."""
    bundle = folder / "bench"
    if (bundle / "bundle.toml").exists():
        return bundle
    ds = bundle / "set"
    (ds / "runs").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    if spatial:
        sys.path.insert(0, str(Path(__file__).parent))
        from spatial import spatial_dataset

        queries, qrels, runs, pois = spatial_dataset(120_000, n_queries, n_models, depth)
        pois.to_parquet(ds / "entities.parquet", index=False)
        entities = 'entities = "set/entities.parquet"\ncrs = "EPSG:4326"\n'
        family, metrics = "spatial", '["recall@10", "ndcg@10"]'
    else:
        qid = np.char.add("q", np.arange(n_queries).astype(str))
        queries = pd.DataFrame(
            {
                "query_id": qid,
                "text": "find a product",
                "query_type": rng.choice(["synthesized", "human"], n_queries),
            }
        )
        n_gold = rng.integers(1, 8, n_queries)
        gold_q = np.repeat(qid, n_gold)
        qrels = pd.DataFrame(
            {
                "query_id": gold_q,
                "doc_id": rng.integers(0, 1_000_000, len(gold_q)).astype(str),
                "relevance": 1,
            }
        )
        runs = {}
        for m in range(n_models):
            docs = rng.integers(0, 1_000_000, (n_queries, depth)).astype(str)
            runs[f"model-{m}"] = pd.DataFrame(
                {
                    "query_id": np.repeat(qid, depth),
                    "doc_id": docs.ravel(),
                    "score": -np.sort(-rng.random(n_queries * depth).reshape(-1, depth)).ravel(),
                }
            )
        entities, family, metrics = "", "stark", '["hit@1", "hit@5", "recall@20", "mrr"]'
    queries.to_parquet(ds / "queries.parquet", index=False)
    qrels.to_parquet(ds / "qrels.parquet", index=False)
    for model, run in runs.items():
        run.to_parquet(ds / "runs" / f"{model}.parquet", index=False)
    (bundle / "bundle.toml").write_text(
        'name = "bench"\ndescription = "first-load benchmark"\n\n[datasets.set]\n'
        f'family = "{family}"\nqueries = "set/queries.parquet"\nqrels = "set/qrels.parquet"\n'
        f'{entities}runs = "set/runs"\nmetrics = {metrics}\n'
    )
    return bundle


def first_load(root: Path, cache: Path) -> dict:
    env = {"RETRIEVAL_DASHBOARD_DATA_ROOTS": str(root), "RETRIEVAL_DASHBOARD_CACHE_DIR": str(cache)}
    code = _CHILD.format(root=str(ROOT), app=str(ROOT / "app.py"))
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **env},
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--models", type=int, default=3)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--spatial", action="store_true")
    parser.add_argument("--workdir", default=str(ROOT / "bench" / "out" / "firstload"))
    args = parser.parse_args()
    root = Path(args.workdir) / ("spatial" if args.spatial else "stark")
    make_bundle(root, args.queries, args.models, args.depth, args.spatial)
    cold, warm = [], []
    for i in range(args.repeat):
        cache = Path(args.workdir) / f"cache-{i}"
        shutil.rmtree(cache, ignore_errors=True)
        cold.append(first_load(root, cache))
        warm.append(first_load(root, cache))
        shutil.rmtree(cache, ignore_errors=True)
    for name, rows in (("cold", cold), ("warm", warm)):
        walls = [r["wall_s"] for r in rows]
        print(f"{name}: median {statistics.median(walls):.2f} s  (runs: "
              f"{', '.join(f'{w:.2f}' for w in walls)}; leaderboard rows "
              f"{rows[0]['leaderboard_rows']})")  # fmt: skip


if __name__ == "__main__":
    main()
