"""Benchmark: evaluation at scale, in-memory core vs the out-of-core engines (DuckDB, Dask).

Runs shaped like STaRK's full-candidate score files: every query scores the same
``--candidates`` documents (STaRK's evaluator scores every node), scores rounded to 4 decimals
so that many tie, doc ids of variable length; about 3 gold documents per query. Runs are
generated with pyarrow a chunk of queries at a time (never in memory whole) as **partitioned
Parquet**: a folder ``run_<size>/`` of files that each hold whole queries (about 2M rows per
file), plus TREC qrels; at the sizes where an engine reads a single file (``memory``,
``pytrec_eval``, or an engine named ``<engine>:file``) the same rows are also written as one
``run_<size>.parquet``.

Each engine runs as a whole process (``python -m analysis evaluate --engine ...``), timed
for wall time, CPU time (user + system; what a loaded machine stretches least) and peak
resident memory (the child's ``ru_maxrss``); pytrec_eval runs at the
sizes listed in ``--pytrec`` (a script reading the same Parquet file into its dicts). The
per-query CSVs are compared byte for byte between the engines, and to 1e-9 with pytrec_eval.
Children run under ``nice -n --nice``. ``--cleanup`` deletes each size's generated runs once
its engines have run (the results and CSVs stay).

Usage::

    python bench/scale.py [--lines 10M,100M] [--engines memory,duckdb] [--pytrec 10M]
                          [--candidates 50000] [--workdir bench/out/scale] [--nice 10]
                          [--cleanup]

Sizes take a suffix ``M`` or ``B``. Results are printed as a Markdown table and written to
``<workdir>/results.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
METRICS = "hit@1,hit@5,recall@20,mrr,ndcg@10"
GOLD_PER_QUERY = 3

_MEASURE = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
    "wall = time.perf_counter() - t\n"
    "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(r.returncode, wall, u.ru_maxrss, u.ru_utime + u.ru_stime)\n"
)

_PYTREC = """
import csv, sys
import pyarrow.parquet as pq
import pytrec_eval
run_path, qrels_path, out_path = sys.argv[1:4]
run = {}
for batch in pq.ParquetFile(run_path).iter_batches(batch_size=1 << 20):
    for q, d, s in zip(*(batch.column(i).to_pylist() for i in range(3))):
        run.setdefault(q, {})[d] = s
qrels = {}
for line in open(qrels_path):
    q, _, d, r = line.split()
    qrels.setdefault(q, {})[d] = int(r)
keys = [("hit@1", "success_1"), ("hit@5", "success_5"), ("recall@20", "recall_20"),
        ("mrr", "recip_rank"), ("ndcg@10", "ndcg_cut_10")]
res = pytrec_eval.RelevanceEvaluator(
    qrels, {"success.1,5", "recall.20", "recip_rank", "ndcg_cut.10"}).evaluate(run)
with open(out_path, "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["query_id"] + [k for k, _ in keys])
    for q in qrels:
        v = res.get(q, {})
        w.writerow([q] + [repr(float(v.get(key, 0.0))) for _, key in keys])
"""


def parse_size(text: str) -> int:
    """``10M`` -> 10_000_000, ``1B`` -> 1_000_000_000, plain integers as they are."""
    text = text.strip().upper()
    scale = {"K": 10**3, "M": 10**6, "B": 10**9}.get(text[-1:], 1)
    return int(float(text.rstrip("KMB")) * scale)


def label(n: int) -> str:
    return f"{n // 10**9}B" if n % 10**9 == 0 else f"{n // 10**6}M"


def generate(
    lines: int, candidates: int, folder: Path, single_file: bool = False, seed: int = 0
) -> tuple[Path, Path, Path | None]:
    """``(run folder, qrels, run file)``: ``run_<lines>/part-<i>.parquet`` (query_id, doc_id,
    score; queries in order, whole queries per file, candidates in a random order per query),
    ``qrels_<lines>.txt`` and, when ``single_file``, the same rows as ``run_<lines>.parquet``
    (else ``None``); kept when they exist."""
    run_dir = folder / f"run_{label(lines)}"
    run_path = folder / f"run_{label(lines)}.parquet"
    qrels_path = folder / f"qrels_{label(lines)}.txt"
    done = run_dir.is_dir() and qrels_path.exists() and (run_path.exists() or not single_file)
    if done:
        return run_dir, qrels_path, run_path if single_file else None
    tmp_dir = folder / f"run_{label(lines)}.partial"
    for stale in (run_dir, tmp_dir):
        shutil.rmtree(stale, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)
    n_queries = lines // candidates
    rng = np.random.default_rng(seed)
    names = pa.array(rng.permutation(10_000_000)[:candidates].astype(str))  # 1-7 digits
    schema = pa.schema(
        [("query_id", pa.string()), ("doc_id", pa.string()), ("score", pa.float64())]
    )
    per_chunk = max(1, 2_000_000 // candidates)
    tmp_dir.mkdir()
    tmp = run_path.with_suffix(".tmp")
    gold_q: list[str] = []
    gold_d: list[str] = []
    writer = pq.ParquetWriter(tmp, schema, compression="snappy") if single_file else None
    for part, lo in enumerate(range(0, n_queries, per_chunk)):  # a chunk of queries at a time
        hi = min(n_queries, lo + per_chunk)
        m = hi - lo
        order = np.argsort(rng.random((m, candidates)), axis=1).ravel()
        scores = np.round(rng.random(m * candidates), 4) * 10
        qids = pa.array([f"q{i}" for i in range(lo, hi)])
        table = pa.table(
            {
                "query_id": qids.take(pa.array(np.repeat(np.arange(m), candidates))),
                "doc_id": names.take(pa.array(order)),
                "score": pa.array(scores),
            },
            schema=schema,
        )
        pq.write_table(table, tmp_dir / f"part-{part:05d}.parquet", row_group_size=1 << 20)
        if writer is not None:
            writer.write_table(table, row_group_size=1 << 20)
        for i in range(lo, hi):
            for d in rng.choice(candidates, size=GOLD_PER_QUERY, replace=False):
                gold_q.append(f"q{i}")
                gold_d.append(names[int(d)].as_py())
    if writer is not None:
        writer.close()
    for i in range(max(1, n_queries // 100)):  # queries only in the qrels: they score 0
        gold_q.append(f"missing{i}")
        gold_d.append(names[0].as_py())
    qrels = pa.table(
        {
            "q": gold_q,
            "i": pa.array(np.zeros(len(gold_q), dtype=np.int64)),
            "d": gold_d,
            "r": pa.array(np.ones(len(gold_q), dtype=np.int64)),
        }
    )
    opts = pcsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    pcsv.write_csv(qrels, qrels_path, write_options=opts)
    tmp_dir.rename(run_dir)
    if writer is not None:
        tmp.rename(run_path)
    return run_dir, qrels_path, run_path if single_file else None


def disk_bytes(path: Path) -> int:
    """Bytes of a file or of every file under a folder."""
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size if path.exists() else 0


def measure(cmd: list[str], nice: int = 0) -> tuple[int, float, int, float, str]:
    """(exit code, wall seconds, peak RSS in KiB, CPU seconds, last line of its stderr) of
    ``cmd`` as a child process."""
    prefix = ["nice", "-n", str(nice)] if nice else []
    done = subprocess.run(
        [*prefix, sys.executable, "-c", _MEASURE, *cmd], capture_output=True, text=True, check=True
    )
    out = done.stdout.split()
    last = (done.stderr.strip().splitlines() or [""])[-1]
    return int(out[0]), float(out[1]), int(out[2]), float(out[3]), last


def engine_cmd(engine: str, run: Path, qrels: Path, out: Path) -> list[str]:
    engine = engine.split(":")[0]
    if engine == "pytrec_eval":
        return [sys.executable, "-c", _PYTREC, str(run), str(qrels), str(out)]
    return [sys.executable, "-m", "analysis", "evaluate", "--run", str(run), "--qrels",
            str(qrels), "--metrics", METRICS, "--engine", engine, "--out", str(out)]  # fmt: skip


def agree(a: Path, b: Path) -> str:
    """``identical`` (same bytes), ``max diff x`` or ``missing``."""
    if not (a.exists() and b.exists()):
        return "missing"
    if a.read_bytes() == b.read_bytes():
        return "identical"
    ta, tb = pcsv.read_csv(a), pcsv.read_csv(b)
    cols = [c for c in ta.column_names if c != "query_id"]
    diff = max(
        float(np.max(np.abs(ta[c].to_numpy() - tb[c].to_numpy()), initial=0.0)) for c in cols
    )
    return f"max diff {diff:.1e}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", default="10M,100M")
    parser.add_argument("--engines", default="memory,duckdb")
    parser.add_argument("--pytrec", default="10M", help="sizes at which pytrec_eval runs too")
    parser.add_argument("--candidates", type=int, default=50_000)
    parser.add_argument("--workdir", default=str(ROOT / "bench" / "out" / "scale"))
    parser.add_argument("--nice", type=int, default=0, help="niceness of the engines' processes")
    parser.add_argument("--cleanup", action="store_true", help="delete the runs after each size")
    args = parser.parse_args()
    folder = Path(args.workdir)
    results_path = folder / "results.json"
    folder.mkdir(parents=True, exist_ok=True)
    results = json.loads(results_path.read_text()) if results_path.exists() else {}
    pytrec_sizes = {parse_size(s) for s in args.pytrec.split(",") if s}
    for lines in [parse_size(s) for s in args.lines.split(",")]:
        engines = args.engines.split(",") + (["pytrec_eval"] if lines in pytrec_sizes else [])
        file_engines = [e for e in engines if e in ("memory", "pytrec_eval") or e.endswith(":file")]
        t = time.perf_counter()
        run_dir, qrels, run_file = generate(lines, args.candidates, folder, bool(file_engines))
        results[f"{label(lines)} data"] = {
            "generated_s": round(time.perf_counter() - t, 1),
            "folder_mib": round(disk_bytes(run_dir) / 2**20),
            "files": len(list(run_dir.glob("*.parquet"))),
        }
        for engine in engines:
            out = folder / f"out_{label(lines)}_{engine.replace(':', '_')}.csv"
            run = run_file if engine in file_engines else run_dir
            code, wall, peak, cpu, err = measure(engine_cmd(engine, run, qrels, out), args.nice)
            row = {"exit": code, "wall_s": round(wall, 2), "peak_mib": round(peak / 1024),
                   "cpu_s": round(cpu, 1), "load": round(os.getloadavg()[0], 1)}  # fmt: skip
            if code:
                row["error"] = err
            results[f"{label(lines)} {engine}"] = row
            print(label(lines), engine, row, flush=True)
            results_path.write_text(json.dumps(results, indent=1))
        base = folder / f"out_{label(lines)}_duckdb.csv"
        for other in ("memory", "dask", "dask_file", "duckdb_file", "pytrec_eval"):
            if (folder / f"out_{label(lines)}_{other}.csv").exists():
                results[f"{label(lines)} duckdb vs {other}"] = agree(
                    base, folder / f"out_{label(lines)}_{other}.csv"
                )
        results_path.write_text(json.dumps(results, indent=1))
        failed = any(results[f"{label(lines)} {e}"]["exit"] for e in engines)
        if args.cleanup and not failed:  # a failed engine's data stays, to look into
            shutil.rmtree(run_dir, ignore_errors=True)
            if run_file is not None:
                run_file.unlink(missing_ok=True)
    print("| lines | engine | wall (s) | CPU (s) | peak RSS (MiB) | load after |")
    print("|---|---|---|---|---|---|")
    for key, row in results.items():
        if isinstance(row, dict) and "wall_s" in row:
            size, engine = key.split(" ", 1)
            print(f"| {size} | {engine} | {row['wall_s']} | {row.get('cpu_s', '')} | "
                  f"{row['peak_mib']} | {row.get('load', '')} |")  # fmt: skip
    for key, row in results.items():
        if isinstance(row, str) or "generated_s" in row:
            print(f"{key}: {row}")


if __name__ == "__main__":
    main()
