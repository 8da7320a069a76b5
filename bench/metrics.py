"""Benchmark: ``python -m analysis evaluate`` against a pytrec_eval script doing the same job.

The runs exercise exact id matching (doc ids of 2-40 bytes) and float32 ties (scores with 10
significant digits); both tools' per-query values must agree exactly.

Both are timed as whole processes (interpreter start, imports, reading the files, per-query
Hit@1, Hit@5, Recall@20, MRR, nDCG@10, writing a CSV), on generated TREC runs of
10k queries x 100 docs (1M lines) and 100k x 100 (10M lines). Peak memory is the child's
maximum resident set size. Each tool runs ``--repeat`` times per size, alternating, and the
median is reported; the two outputs must agree exactly (the maximum difference is printed).

Usage::

    python bench/metrics.py [--sizes 10000,100000] [--repeat 3] [--workdir bench/out]

Needs pytrec-eval-terrier (a dev dependency).
Children run with compiled bytecode, as an installed copy does (:mod:`_bytecode`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pcsv
from _bytecode import user_bytecode

ROOT = Path(__file__).resolve().parents[1]
BASELINE = Path(__file__).with_name("pytrec_eval_baseline.py")
METRICS = "hit@1,hit@5,recall@20,mrr,ndcg@10"
DOCS_PER_QUERY = 100
POOL = 1_000_000

_MEASURE = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
    "wall = time.perf_counter() - t\n"
    "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "print(r.returncode, wall, peak)\n"
)


def doc_names(ids: np.ndarray) -> np.ndarray:
    """Doc ids of varying length: ``d<id>`` (2-7 bytes), and one id in 50 a 40-byte URN, so
    that the longest id differs between the run, the qrels and the chunks of the run."""
    short = np.char.add("d", ids.astype(str))
    long = np.char.add(np.char.add("urn:doc:", np.char.zfill(ids.astype(str), 7)),
                       "-long-identifier-pad")  # fmt: skip
    return np.where(ids % 50 == 7, long, short)


def generate(n_queries: int, folder: Path, seed: int = 0) -> tuple[Path, Path]:
    """Write ``run_v2_<n>.txt`` (n x 100 lines, sorted by query then score) and its qrels
    (about 5 relevant docs per query, a few queries without any) unless they already exist.
    Scores have 10 significant digits in a narrow band (``10 + 0.01 * u``), as dense retrievers'
    scores do: about a third of the queries hold scores equal in float32 but not in float64,
    which trec_eval (and this project) rank as ties broken by doc id."""
    run_path = folder / f"run_v2_{n_queries}.txt"
    qrels_path = folder / f"qrels_v2_{n_queries}.txt"
    if run_path.exists() and qrels_path.exists():
        return run_path, qrels_path
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    n = n_queries * DOCS_PER_QUERY
    q = np.repeat(np.arange(n_queries), DOCS_PER_QUERY)
    # distinct docs within a query: a random start plus a fixed stride, modulo the pool
    start = rng.integers(0, POOL, n_queries)[:, None]
    docs = ((start + np.arange(DOCS_PER_QUERY) * 9973) % POOL).ravel()
    raw = 10.0 + 0.01 * rng.random((n_queries, DOCS_PER_QUERY))
    scores = -np.sort(-np.round(raw, 8), axis=1).ravel()  # 10 significant digits
    ranks = np.tile(np.arange(1, DOCS_PER_QUERY + 1), n_queries)
    qid = pa.array(np.char.add("q", q.astype(str)))
    table = pa.table(
        {
            "q": qid,
            "q0": pa.array(np.full(n, "Q0")),
            "d": pa.array(doc_names(docs)),
            "rank": ranks,
            "score": scores,
            "tag": pa.array(np.full(n, "bench")),
        }
    )
    opts = pcsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    pcsv.write_csv(table, run_path, write_options=opts)
    rel = rng.random(n) < 0.05
    qrels = pa.table(
        {
            "q": qid.filter(pa.array(rel)),
            "iter": pa.array(np.zeros(int(rel.sum()), dtype=np.int64)),
            "d": pa.array(doc_names(docs[rel])),
            "rel": pa.array(np.ones(int(rel.sum()), dtype=np.int64)),
        }
    )
    pcsv.write_csv(qrels, qrels_path, write_options=opts)
    return run_path, qrels_path


def measure(cmd: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one run of ``cmd`` as a child process."""
    out = subprocess.run(
        [sys.executable, "-c", _MEASURE, *cmd],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout.split()
    code, wall, peak = int(out[0]), float(out[1]), float(out[2]) / 1024
    if code != 0:
        raise SystemExit(f"benchmark command failed: {' '.join(cmd)}")
    return wall, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="queries per run, comma list")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workdir", default=str(ROOT / "bench" / "out"))
    args = parser.parse_args()
    work = Path(args.workdir)
    user_bytecode(work)
    results = []
    for n_queries in (int(s) for s in args.sizes.split(",")):
        run, qrels = generate(n_queries, work)
        ours_out, base_out = work / f"ours_{n_queries}.csv", work / f"pytrec_{n_queries}.csv"
        ours = [
            sys.executable,
            "-m",
            "analysis",
            "evaluate",
            "--run",
            str(run),
            "--qrels",
            str(qrels),
            "--metrics",
            METRICS,
            "--out",
            str(ours_out),
        ]
        base = [sys.executable, str(BASELINE), str(run), str(qrels), str(base_out)]
        timings: dict[str, list[tuple[float, float]]] = {"ours": [], "pytrec_eval": []}
        for _ in range(args.repeat):
            timings["ours"].append(measure(ours))
            timings["pytrec_eval"].append(measure(base))
        a = pd.read_csv(ours_out, dtype={"query_id": str}).set_index("query_id")
        b = pd.read_csv(base_out, dtype={"query_id": str}).set_index("query_id")
        diff = float((a - b.loc[a.index, a.columns]).abs().to_numpy().max())
        row = {"lines": n_queries * DOCS_PER_QUERY, "max_abs_diff": diff}
        for tool, values in timings.items():
            row[f"{tool}_s"] = statistics.median(v[0] for v in values)
            row[f"{tool}_mib"] = statistics.median(v[1] for v in values)
        row["time_ratio"] = row["ours_s"] / row["pytrec_eval_s"]
        row["memory_ratio"] = row["ours_mib"] / row["pytrec_eval_mib"]
        results.append(row)
        print(
            f"{row['lines']:>10,} lines  ours {row['ours_s']:6.2f} s {row['ours_mib']:7.0f} MiB"
            f"  pytrec_eval {row['pytrec_eval_s']:6.2f} s {row['pytrec_eval_mib']:7.0f} MiB"
            f"  time x{row['time_ratio']:.2f}  memory x{row['memory_ratio']:.2f}"
            f"  max|diff| {diff:.1e}",
            flush=True,
        )
    (work / "results.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
