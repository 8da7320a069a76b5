"""The peer for bench/metrics.py: read a TREC run and qrels, compute per-query Hit@1, Hit@5,
Recall@20, MRR and nDCG@10 with pytrec_eval, write a CSV (one row per qrels query, queries
missing from the run as 0, the same job as ``python -m analysis evaluate``).

Usage: python bench/pytrec_eval_baseline.py RUN QRELS OUT.csv
"""

import csv
import sys
from pathlib import Path

import pytrec_eval

MEASURES = {"success.1,5", "recall.20", "recip_rank", "ndcg_cut.10"}
COLUMNS = [
    ("hit@1", "success_1"),
    ("hit@5", "success_5"),
    ("recall@20", "recall_20"),
    ("mrr", "recip_rank"),
    ("ndcg@10", "ndcg_cut_10"),
]


def main(run_path: str, qrels_path: str, out_path: str) -> None:
    run: dict[str, dict[str, float]] = {}
    with Path(run_path).open() as f:
        for line in f:
            q, _, d, _, s, *_ = line.split()
            run.setdefault(q, {})[d] = float(s)
    qrels: dict[str, dict[str, int]] = {}
    with Path(qrels_path).open() as f:
        for line in f:
            q, _, d, r = line.split()
            qrels.setdefault(q, {})[d] = int(r)
    results = pytrec_eval.RelevanceEvaluator(qrels, MEASURES).evaluate(run)
    with Path(out_path).open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["query_id"] + [name for name, _ in COLUMNS])
        for q in qrels:
            values = results.get(q, {})
            writer.writerow([q] + [values.get(key, 0.0) for _, key in COLUMNS])


if __name__ == "__main__":
    main(*sys.argv[1:4])
