"""Benchmark: server time of a page rerun after a widget change, for every page (AppTest).

Generates a bundle of 10k queries x 2 models x 100 docs (one dataset, TREC files, unique and
tied scores), points the app at it through ``RETRIEVAL_DASHBOARD_DATA_ROOTS``, opens each page,
runs it once (so the per-query table is cached), then times ``AppTest.run()`` after switching
the shared metric back and forth. Reports the median and max over ``--repeat`` reruns.

Usage::

    python bench/pages.py [--queries 10000] [--repeat 10]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def make_bundle(folder: Path, n_queries: int, seed: int = 0) -> None:
    """A one-dataset bundle: queries, qrels (1-30 gold per query), two TREC runs."""
    rng = np.random.default_rng(seed)
    ds = folder / "big"
    (ds / "runs").mkdir(parents=True)
    n_docs = 100
    words = np.array(["red", "blue", "shoe", "lamp", "river", "paper", "gene", "drug", "cafe"])
    with (ds / "queries.csv").open("w") as f:
        f.write("query_id,text,query_type,split\n")
        for q in range(n_queries):
            text = " ".join(rng.choice(words, rng.integers(3, 12)))
            qtype = "human" if q % 10 == 0 else "synthesized"
            f.write(f"q{q},{text},{qtype},{['train', 'val', 'test'][q % 3]}\n")
    gold = {}
    with (ds / "qrels.txt").open("w") as f:
        for q in range(n_queries):
            g = rng.choice(5000, rng.integers(1, 30), replace=False)
            gold[q] = g
            f.writelines(f"q{q} 0 d{d} 1\n" for d in g)
    for model, ties in (("model-a", False), ("model-b", True)):
        with (ds / "runs" / f"{model}.run").open("w") as f:
            for q in range(n_queries):
                docs = np.unique(
                    np.r_[rng.choice(gold[q], min(3, len(gold[q]))), rng.choice(5000, n_docs)]
                )[:n_docs]
                rng.shuffle(docs)
                scores = np.sort(rng.integers(0, 20, len(docs)) if ties else rng.random(len(docs)))
                for rank, (d, s) in enumerate(zip(docs, scores[::-1], strict=True), start=1):
                    f.write(f"q{q} Q0 d{d} {rank} {float(s):.6f} {model}\n")
    (folder / "bundle.toml").write_text(
        'name = "bench"\n[datasets.big]\nfamily = "stark"\n'
        'queries = "big/queries.csv"\nqrels = "big/qrels.txt"\nruns = "big/runs"\n'
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "roots"
        make_bundle(root / "bench", args.queries)
        os.environ["RETRIEVAL_DASHBOARD_DATA_ROOTS"] = str(root)
        from streamlit.testing.v1 import AppTest

        pages = [None, *sorted(p.name for p in (ROOT / "pages").glob("*.py"))]
        for page in pages:
            at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
            t0 = time.perf_counter()
            at.run()
            if page is not None:
                at.switch_page(f"pages/{page}")
                at.run()
            first = time.perf_counter() - t0
            if at.exception:
                print(f"{page or 'app.py'}: exception {at.exception[0].value}")
                continue
            times = []
            for i in range(args.repeat):
                at.selectbox(key="w_measure").select("recall" if i % 2 == 0 else "ndcg")
                t = time.perf_counter()
                at.run()
                times.append(time.perf_counter() - t)
            print(
                f"{page or 'app.py':<18} first run {first:6.2f} s   rerun median "
                f"{statistics.median(times):.3f} s  max {max(times):.3f} s",
                flush=True,
            )


if __name__ == "__main__":
    main()
