"""Benchmark: evaluation at scale, the engines side by side (memory, DuckDB, Dask, pytrec_eval).

Runs shaped like STaRK's full-candidate score files: every query scores the same
``--candidates`` documents (STaRK's evaluator scores every node), scores rounded to 4 decimals
so that many tie, doc ids of 1-7 digits; about 3 gold documents per query. Runs are generated
with pyarrow a chunk of queries at a time (never in memory whole) as a folder of files of whole
queries (about 2M rows each), and, where a scenario reads one file, as one Parquet file of
query-major row groups of about 2M rows.

Each engine runs as a whole process (``python -m analysis evaluate --engine ...``), timed for
wall time, CPU time (user + system) and peak resident memory (the child's ``ru_maxrss``; for a
Dask cluster also each worker's own peak, read on the worker). The per-query CSVs are compared
byte for byte. Figures are printed as a Markdown table with the one-minute load average after
each run (the machine may be shared) and written to ``<workdir>/results.json``.

Scenarios (``--scenario``; each is one command, its data kept in ``--workdir`` unless
``--cleanup``):

* ``dask10m``: 10M lines as a folder of whole-query parts: embedded DuckDB, then the Dask engine
  on a local cluster (``dask scheduler`` + 2 ``dask worker --nthreads 1``), alternately
  ``--repeat`` times; the ratio Dask / DuckDB and identical bytes.
* ``onefile``: one 100M-line Parquet file of query-major 2M-row row groups (2,000 queries x
  50,000 candidates, float32 scores with ties) and its own 10M file, through plain ``evaluate``
  (``--engine auto``), and the same 100M rows as a folder of parts: the ratio 100M / 10M,
  peak memory, identical bytes to the parts folder.
* ``dask1b``: 1B lines as a folder of parts on the local 2-worker cluster: wall time, each
  worker's peak memory, and the queries of two files checked against the in-memory core.
* ``auto``: the in-memory core against DuckDB on runs of 1M-4M lines with 100 to 50,000
  candidates per query, tied or not (what ``--engine auto`` decides by).
* ``engines``: ``--lines`` x ``--engines`` (``memory``, ``duckdb``, ``dask``, ``pytrec_eval``)
  on the folder (or the single file for ``memory``, ``pytrec_eval`` and ``<engine>:file``).

Usage::

    python bench/scale.py --scenario dask10m [--repeat 2]
    python bench/scale.py --scenario onefile [--lines 100M]
    python bench/scale.py --scenario dask1b --cleanup
    python bench/scale.py --scenario auto
    python bench/scale.py --scenario engines --lines 10M,100M --engines memory,duckdb
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
METRICS = "hit@1,hit@5,recall@20,mrr,ndcg@10"
GOLD_PER_QUERY = 3
FILE_ROWS = 2_000_000  # rows per part file and per row group of the single file
SCHEMA = pa.schema([("query_id", pa.string()), ("doc_id", pa.string()), ("score", pa.float32())])

_MEASURE = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
    "wall = time.perf_counter() - t\n"
    "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "sys.stderr.write(r.stderr.decode(errors='replace'))\n"
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
    if n % 10**9 == 0:
        return f"{n // 10**9}B"
    return f"{n // 10**6}M" if n % 10**6 == 0 else f"{n // 10**3}K"


def _chunk(rng: np.random.Generator, names: pa.Array, lo: int, hi: int, ties: int) -> pa.Table:
    """Queries ``lo..hi-1``: every candidate once, in a random order per query; scores in
    ``[0, 10)`` with ``ties`` distinct values per unit (many ties), as float32."""
    m, candidates = hi - lo, len(names)
    order = np.argsort(rng.random((m, candidates)), axis=1).ravel()
    scores = (np.round(rng.random(m * candidates) * ties) / ties * 10).astype(np.float32)
    qids = pa.array([f"q{i}" for i in range(lo, hi)])
    return pa.table(
        {
            "query_id": qids.take(pa.array(np.repeat(np.arange(m), candidates))),
            "doc_id": names.take(pa.array(order)),
            "score": pa.array(scores),
        }
    )


def generate(
    lines: int, candidates: int, folder: Path, layouts: tuple[str, ...] = ("parts",), seed: int = 0
) -> dict[str, Path]:
    """The run of ``lines`` lines (``lines // candidates`` queries ``q0, q1, ...`` in order) in
    the asked layouts: ``parts`` (``run_<n>/part-<i>.parquet``, whole queries, about 2M rows
    each) and ``file`` (``run_<n>.parquet``, query-major row groups of about 2M rows), plus
    ``qrels`` (``qrels_<n>.txt``); kept when they exist."""
    name = f"run_{label(lines)}_{candidates}"
    paths = {"parts": folder / name, "file": folder / f"{name}.parquet",
             "qrels": folder / f"qrels_{label(lines)}_{candidates}.txt"}  # fmt: skip
    if all(paths[k].exists() for k in (*layouts, "qrels")):
        return {k: paths[k] for k in (*layouts, "qrels")}
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    names = pa.array(rng.permutation(10_000_000)[:candidates].astype(str))
    per_chunk = max(1, FILE_ROWS // candidates)
    partial = folder / f"{name}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir()
    writer = None
    if "file" in layouts:
        writer = pq.ParquetWriter(partial / "one.parquet", SCHEMA, compression="snappy")
    gold: list[tuple[str, str]] = []
    n_queries = lines // candidates
    for part, lo in enumerate(range(0, n_queries, per_chunk)):  # a chunk of queries at a time
        hi = min(n_queries, lo + per_chunk)
        table = _chunk(rng, names, lo, hi, 10_000)
        if "parts" in layouts:
            pq.write_table(table, partial / f"part-{part:05d}.parquet", row_group_size=1 << 20)
        if writer is not None:
            writer.write_table(table, row_group_size=len(table))  # one row group per chunk
        for i in range(lo, hi):
            picks = rng.choice(candidates, size=GOLD_PER_QUERY, replace=False)
            gold += [(f"q{i}", names[int(d)].as_py()) for d in picks]
    if writer is not None:
        writer.close()
        (partial / "one.parquet").rename(paths["file"])
    gold += [(f"missing{i}", names[0].as_py()) for i in range(max(1, n_queries // 100))]
    _write_qrels(gold, paths["qrels"])
    if "parts" in layouts:
        shutil.rmtree(paths["parts"], ignore_errors=True)
        partial.rename(paths["parts"])
    shutil.rmtree(partial, ignore_errors=True)
    return {k: paths[k] for k in (*layouts, "qrels")}


def _write_qrels(gold: list[tuple[str, str]], path: Path) -> None:
    q, d = zip(*gold, strict=True)
    zeros = pa.array(np.zeros(len(q), dtype=np.int64))
    table = pa.table({"q": q, "i": zeros, "d": d, "r": pa.array(np.ones(len(q), np.int64))})
    opts = pcsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    pcsv.write_csv(table, path, write_options=opts)


def disk_bytes(path: Path) -> int:
    """Bytes of a file or of every file under a folder."""
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size if path.exists() else 0


def measure(cmd: list[str], nice: int = 0) -> dict:
    """Exit code, wall seconds, peak RSS (MiB), CPU seconds, load average after, and the last
    line of stderr of ``cmd`` run as a child process."""
    prefix = ["nice", "-n", str(nice)] if nice else []
    done = subprocess.run(
        [*prefix, sys.executable, "-c", _MEASURE, *cmd], capture_output=True, text=True, check=True
    )
    code, wall, peak, cpu = done.stdout.split()
    row = {"exit": int(code), "wall_s": round(float(wall), 2), "peak_mib": round(int(peak) / 1024),
           "cpu_s": round(float(cpu), 1), "load": round(os.getloadavg()[0], 1)}  # fmt: skip
    if row["exit"]:
        row["error"] = (done.stderr.strip().splitlines() or [""])[-1]
    return row


def evaluate_cmd(run: Path | str, qrels: Path, out: Path, engine: str, *extra: str) -> list[str]:
    if engine == "pytrec_eval":
        return [sys.executable, "-c", _PYTREC, str(run), str(qrels), str(out)]
    args = ["--run", str(run), "--qrels", str(qrels), "--metrics", METRICS, "--engine", engine]
    return [sys.executable, "-m", "analysis", "evaluate", *args, "--out", str(out), *extra]


def agree(a: Path, b: Path) -> str:
    """``identical`` (same bytes), ``max diff x`` or ``missing``."""
    if not (a.exists() and b.exists()):
        return "missing"
    if a.read_bytes() == b.read_bytes():
        return "identical"
    ta, tb = pcsv.read_csv(a), pcsv.read_csv(b)
    if ta.num_rows != tb.num_rows:
        return f"{ta.num_rows} rows against {tb.num_rows}"
    cols = [c for c in ta.column_names if c != "query_id"]
    diff = max(
        float(np.max(np.abs(ta[c].to_numpy() - tb[c].to_numpy()), initial=0.0)) for c in cols
    )
    return f"max diff {diff:.1e}"


class Results:
    """Rows of figures, printed as they come and saved to ``results.json``."""

    def __init__(self, folder: Path, scenario: str) -> None:
        self.path = folder / "results.json"
        self.all = json.loads(self.path.read_text()) if self.path.exists() else {}
        self.rows = self.all.setdefault(scenario, {})
        self.rows.clear()

    def add(self, key: str, row: dict | str) -> None:
        self.rows[key] = row
        print(f"{key}: {row}", flush=True)
        self.path.write_text(json.dumps(self.all, indent=1))

    def table(self) -> None:
        print("\n| run | wall (s) | CPU (s) | peak RSS (MiB) | workers' peak (MiB) | load after |")
        print("|---|---|---|---|---|---|")
        for key, row in self.rows.items():
            if isinstance(row, dict) and "wall_s" in row:
                workers = ", ".join(map(str, row.get("worker_peak_mib", [])))
                cells = [row["wall_s"], row.get("cpu_s", ""), row.get("peak_mib", ""), workers]
                print(f"| {key} | " + " | ".join(map(str, cells)) + f" | {row.get('load', '')} |")
        for key, row in self.rows.items():
            if not (isinstance(row, dict) and "wall_s" in row):
                print(f"{key}: {row}")


@contextlib.contextmanager
def cluster(folder: Path, workers: int = 2, memory: str = "4GB") -> Iterator[str]:
    """A local cluster of separate processes (``tests/cluster.py``), 1 thread per worker."""
    sys.path.insert(0, str(ROOT))
    from tests.cluster import local_cluster

    where = folder / "cluster"
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True)
    with local_cluster(where, workers=workers, threads=1, memory=memory) as address:
        yield address


def worker_usage(address: str) -> dict[str, dict[str, float]]:
    """Each worker process's peak resident memory (MiB) and CPU seconds so far."""
    from distributed import Client

    def usage() -> dict[str, float]:
        import resource

        own = resource.getrusage(resource.RUSAGE_SELF)
        return {"peak_mib": own.ru_maxrss // 1024, "cpu_s": own.ru_utime + own.ru_stime}

    with Client(address) as client:
        return dict(client.run(usage))


def run_on_cluster(address: str, cmd: list[str], nice: int) -> dict:
    """:func:`measure` of a command using the cluster, with the CPU seconds the workers spent
    meanwhile (added to the client's) and their peak memory."""
    before = worker_usage(address)
    row = measure(cmd, nice)
    after = worker_usage(address)
    spent = sum(after[w]["cpu_s"] - before[w]["cpu_s"] for w in after)
    row["client_cpu_s"] = row["cpu_s"]
    row["cpu_s"] = round(row["cpu_s"] + spent, 1)
    row["worker_peak_mib"] = [int(after[w]["peak_mib"]) for w in sorted(after)]
    return row


def scenario_dask10m(args: argparse.Namespace, results: Results) -> None:
    """DuckDB (embedded, every core) and Dask (2 workers x 1 thread) on the same folder."""
    lines = parse_size(args.lines or "10M")
    data = generate(lines, args.candidates, args.workdir)
    out = {e: args.workdir / f"out_dask10m_{e}.csv" for e in ("duckdb", "dask")}
    with cluster(args.workdir) as address:
        for r in range(args.repeat):
            for engine in ("duckdb", "dask"):
                extra = ["--scheduler", address] if engine == "dask" else []
                cmd = evaluate_cmd(data["parts"], data["qrels"], out[engine], engine, *extra)
                row = (run_on_cluster(address, cmd, args.nice) if engine == "dask"
                       else measure(cmd, args.nice))  # fmt: skip
                results.add(f"{label(lines)} {engine} #{r + 1}", row)
    for what in ("wall_s", "cpu_s"):
        best = {e: min(v[what] for k, v in results.rows.items() if f" {e} #" in k) for e in out}
        results.add(f"dask / duckdb (best {what})", f"{best['dask'] / best['duckdb']:.2f}x")
    results.add("dask vs duckdb", agree(out["duckdb"], out["dask"]))
    if args.cleanup:
        shutil.rmtree(data["parts"], ignore_errors=True)


def scenario_onefile(args: argparse.Namespace, results: Results) -> None:
    """Plain ``evaluate`` (auto) on a 10M and a 100M single file, and on the 100M parts."""
    big = parse_size(args.lines or "100M")
    small = big // 10
    data_small = generate(small, args.candidates, args.workdir, ("file",))
    data_big = generate(big, args.candidates, args.workdir, ("file", "parts"))
    out = {k: args.workdir / f"out_onefile_{k}.csv" for k in ("small", "big", "parts")}
    runs = (("small", data_small["file"], data_small["qrels"]),
            ("big", data_big["file"], data_big["qrels"]),
            ("parts", data_big["parts"], data_big["qrels"]))  # fmt: skip
    for key, run, qrels in runs:
        name = f"{label(small if key == 'small' else big)} {'parts' if key == 'parts' else 'file'}"
        results.add(f"{name} auto", measure(evaluate_cmd(run, qrels, out[key], "auto"), args.nice))
    for what in ("wall_s", "cpu_s"):  # CPU time: the ratio a loaded machine disturbs least
        ratio = results.rows[f"{label(big)} file auto"][what]
        ratio /= results.rows[f"{label(small)} file auto"][what]
        results.add(f"{label(big)} / {label(small)} (file, {what})", f"{ratio:.1f}x")
    results.add("file vs parts", agree(out["big"], out["parts"]))
    if args.cleanup:
        for path in (data_small["file"], data_big["file"], data_big["parts"]):
            shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink()


def scenario_dask1b(args: argparse.Namespace, results: Results) -> None:
    """1B lines on the local cluster; two files' queries checked against the in-memory core."""
    lines = parse_size(args.lines or "1B")
    data = generate(lines, args.candidates, args.workdir)
    results.add("data", {"files": len(list(data["parts"].glob("*.parquet"))),
                         "gib": round(disk_bytes(data["parts"]) / 2**30, 1)})  # fmt: skip
    out = args.workdir / "out_dask1b.csv"
    with cluster(args.workdir) as address:
        cmd = evaluate_cmd(data["parts"], data["qrels"], out, "dask", "--scheduler", address)
        results.add(f"{label(lines)} dask", run_on_cluster(address, cmd, args.nice))
    results.add("spot check against the core", spot_check(data, out, args.workdir))
    if args.cleanup:
        shutil.rmtree(data["parts"], ignore_errors=True)


def spot_check(data: dict[str, Path], out: Path, folder: Path) -> str:
    """The queries of the first and the last file, evaluated alone by the in-memory core, give
    the same rows as the full run's output."""
    files = sorted(data["parts"].glob("*.parquet"))
    checked = 0
    for path in (files[0], files[-1]):
        queries = set(pq.read_table(path, columns=["query_id"])["query_id"].unique().to_pylist())
        qrels = folder / "spot_qrels.txt"
        lines = [ln for ln in data["qrels"].read_text().splitlines()
                 if ln.split(" ", 1)[0] in queries]  # fmt: skip
        qrels.write_text("\n".join(lines) + "\n")
        alone = folder / "spot.csv"
        cmd = evaluate_cmd(path, qrels, alone, "memory")
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        mine = alone.read_text().splitlines()
        theirs = {ln.split(",", 1)[0]: ln for ln in out.read_text().splitlines()[1:]}
        if any(theirs.get(ln.split(",", 1)[0]) != ln for ln in mine[1:]):
            return f"DIFFERENT rows for the queries of {path.name}"
        checked += len(mine) - 1
    return f"{checked} queries identical"


def scenario_auto(args: argparse.Namespace, results: Results) -> None:
    """The core and DuckDB on Parquet runs of several shapes (one file each)."""
    for size in (args.lines or "1M,4M").split(","):
        lines = parse_size(size)
        for candidates in (100, 1000, 50_000):
            data = generate(lines, candidates, args.workdir, ("file",))
            outs = {}
            for engine in ("memory", "duckdb"):
                outs[engine] = args.workdir / f"out_auto_{engine}.csv"
                cmd = evaluate_cmd(data["file"], data["qrels"], outs[engine], engine)
                results.add(f"{label(lines)} x{candidates} {engine}", measure(cmd, args.nice))
            agreed = agree(outs["memory"], outs["duckdb"])
            results.add(f"{label(lines)} x{candidates} memory vs duckdb", agreed)
            if args.cleanup:
                data["file"].unlink()


def scenario_engines(args: argparse.Namespace, results: Results) -> None:
    """``--lines`` x ``--engines``, as in the README's first table."""
    for lines in [parse_size(s) for s in (args.lines or "10M").split(",")]:
        engines = args.engines.split(",")
        single = any(e in ("memory", "pytrec_eval") or e.endswith(":file") for e in engines)
        data = generate(lines, args.candidates, args.workdir, ("parts", "file") if single
                        else ("parts",))  # fmt: skip
        for engine in engines:
            name = engine.split(":")[0]
            run = (
                data["file"]
                if (name in ("memory", "pytrec_eval") or ":file" in engine)
                else data["parts"]
            )
            out = args.workdir / f"out_{label(lines)}_{engine.replace(':', '_')}.csv"
            cmd = evaluate_cmd(run, data["qrels"], out, name)
            results.add(f"{label(lines)} {engine}", measure(cmd, args.nice))
        base = args.workdir / f"out_{label(lines)}_{engines[0].replace(':', '_')}.csv"
        for engine in engines[1:]:
            other = args.workdir / f"out_{label(lines)}_{engine.replace(':', '_')}.csv"
            results.add(f"{label(lines)} {engines[0]} vs {engine}", agree(base, other))


SCENARIOS = {
    "dask10m": scenario_dask10m,
    "onefile": scenario_onefile,
    "dask1b": scenario_dask1b,
    "auto": scenario_auto,
    "engines": scenario_engines,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", choices=SCENARIOS, default="engines")
    parser.add_argument("--lines", default=None, help="sizes (10M, 1B; a list for engines/auto)")
    parser.add_argument("--engines", default="memory,duckdb")
    parser.add_argument("--candidates", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=2, help="alternating runs (dask10m)")
    parser.add_argument("--workdir", type=Path, default=ROOT / "bench" / "out" / "scale")
    parser.add_argument("--nice", type=int, default=0, help="niceness of the engines' processes")
    parser.add_argument("--cleanup", action="store_true", help="delete the runs when done")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("RETRIEVAL_DASHBOARD_CACHE_DIR", str(args.workdir / "cache"))
    os.environ.setdefault("RETRIEVAL_DASHBOARD_NOTES_DIR", str(args.workdir / "notes"))
    results = Results(args.workdir, args.scenario)
    started = time.perf_counter()
    SCENARIOS[args.scenario](args, results)
    results.add("scenario wall (s)", round(time.perf_counter() - started, 1))
    results.table()


if __name__ == "__main__":
    main()
