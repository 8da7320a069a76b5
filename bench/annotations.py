"""Benchmark: concurrent writers on one annotation database (threads and processes).

Each writer performs ``--writes`` rounds of four writes (a tag, a note, a judgement and a tag on
one query every writer shares), each its own short transaction, on one SQLite file in WAL mode.
Every write names its author and adds a history row in the same transaction (schema 2).
Reports the wall time, the writes per second and how many rows were lost (expected: 0; the
current rows and the history rows are both counted).
Processes are started with ``spawn``; their start-up (imports, opening the store) is timed
separately, and all writers start together at a barrier.

Usage::

    python bench/annotations.py [--workers 8] [--writes 100]
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from analysis.io.annotations import AnnotationStore  # noqa: E402


def writer(path: str, worker: int, writes: int, start: object = None) -> None:
    store = AnnotationStore(path)
    if start is not None:
        start.wait()
    who = f"worker {worker}"
    for i in range(writes):
        q = f"w{worker}-q{i}"
        store.add_tag("d", q, "label error", author=who)
        store.set_note("d", q, f"note {worker} {i}", author=who)
        store.set_judgement("d", q, f"doc{i}", i % 3, author=who)
        store.add_tag("d", "shared", f"tag-{worker}-{i}", author=who)


def lost(path: str, workers: int, writes: int) -> int:
    store = AnnotationStore(path)
    expected = workers * writes
    found = len(store.tags("d")) + len(store.notes("d")) + len(store.judgements("d"))
    return (4 * expected - found) + (4 * expected - len(store.history("d")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--writes", type=int, default=100)
    args = parser.parse_args()
    n_writes = 4 * args.workers * args.writes
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "threads.sqlite3")
        AnnotationStore(path)
        barrier = threading.Barrier(args.workers)
        threads = [
            threading.Thread(target=writer, args=(path, w, args.writes, barrier))
            for w in range(args.workers)
        ]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        dt = time.perf_counter() - t0
        print(
            f"threads   {args.workers} x {4 * args.writes} writes: {dt:.2f} s, "
            f"{n_writes / dt:.0f} writes/s, lost {lost(path, args.workers, args.writes)}"
        )

        path = str(Path(tmp) / "processes.sqlite3")
        AnnotationStore(path)
        ctx = multiprocessing.get_context("spawn")
        barrier = ctx.Barrier(args.workers + 1)
        procs = [
            ctx.Process(target=writer, args=(path, w, args.writes, barrier))
            for w in range(args.workers)
        ]
        t0 = time.perf_counter()
        for p in procs:
            p.start()
        barrier.wait()  # every child has imported the library and opened the store
        ready = time.perf_counter() - t0
        t1 = time.perf_counter()
        for p in procs:
            p.join()
        dt = time.perf_counter() - t1
        codes = [p.exitcode for p in procs]
        print(
            f"processes {args.workers} x {4 * args.writes} writes: {dt:.2f} s after start "
            f"(+{ready:.2f} s spawn), {n_writes / dt:.0f} writes/s, exit codes {set(codes)}, "
            f"lost {lost(path, args.workers, args.writes)}"
        )


if __name__ == "__main__":
    main()
