"""The Dask engine: the DuckDB engine's passes as tasks, on a Dask cluster or on local threads.

One plan (:mod:`analysis.core.engines.duckdb`, :mod:`analysis.core.engines.passes`), distributed:

1. the client reads the Parquet footers (files and row groups) and plans the passes of whole
   queries, as the DuckDB engine does; when the row groups' statistics cannot show which row
   groups hold which queries, the ``query_id`` column is scanned by the workers, one task per
   file;
2. each pass is one task: the worker runs the DuckDB plan (one thread per task) on the pass's
   files and row groups only and returns the reduced rows of its queries (one row per query,
   :mod:`analysis.core.engines.reduce`); the judged pairs are sent to every worker once;
3. the client concatenates the reduced rows and applies the core's kernels and data checks
   (:func:`~analysis.core.engines.reduce.finish`): the in-memory core's values, byte for byte.

Nothing is shuffled: a pass holds whole queries by construction (whole-query files and row
groups packed together, hash buckets of query ids where queries spread over more rows than a
pass may hold). Each task holds one pass (about 2M rows, 0.3-0.5 GB in DuckDB).

Scheduler: the cluster at ``scheduler`` (or ``$DASK_SCHEDULER_ADDRESS``), which needs
``dask.distributed``; else Dask's threaded scheduler on this machine (``threads`` tasks at once,
default every core). The scheduler and every worker unpickle the tasks, so they need this
library and the same versions of it, DuckDB, pyarrow, numpy and dask: the client checks that
first and names what differs in one line. Workers read the run's files at the paths the client
sees (a shared file system on a cluster of several machines).
"""

from __future__ import annotations

import hashlib
import os
import sys
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from analysis.core import progress
from analysis.core.engines import duckdb as db
from analysis.core.engines import passes
from analysis.core.engines import source as src
from analysis.core.engines.passes import Layout, Pass
from analysis.core.engines.reduce import Result, concat, finish, prepare_gold
from analysis.core.errors import InputError
from analysis.core.inputs import QrelsArrays

if TYPE_CHECKING:
    from analysis.core.engines import Options

SCHEDULER_ENV = "DASK_SCHEDULER_ADDRESS"
_WHERE = "--scheduler"
_PROBE = "__import__('analysis.core.engines.dask', fromlist=['versions']).versions()"
_INSTALL = "pip install -r requirements.txt '.[scale]' where the scheduler and the workers run"


def unsupported(run: str | Path, options: Options) -> str | None:
    from analysis.core.engines import out_of_core_limits

    limits = out_of_core_limits(options)
    if limits:
        return limits
    try:
        kind = src.run_source(run).kind
    except InputError:
        return None  # the evaluation names the problem
    if kind != "parquet":
        return "reads Parquet runs (a file, a folder or a glob of them); --engine duckdb reads text"
    return None


def versions() -> dict[str, str]:
    """This process's versions of what runs a task: this library (a hash of its core's code),
    DuckDB, pyarrow, numpy, dask and Python."""
    import dask
    import duckdb
    import numpy

    core = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(core.rglob("*.py")):
        digest.update(path.relative_to(core).as_posix().encode() + b"\0" + path.read_bytes())
    return {
        "this library": digest.hexdigest()[:12],
        "duckdb": duckdb.__version__,
        "pyarrow": pa.__version__,
        "numpy": numpy.__version__,
        "dask": dask.__version__,
        "python": ".".join(map(str, sys.version_info[:2])),
    }


def check_cluster(client: Any) -> int:
    """The number of workers, after checking that the scheduler and every worker import this
    library with the versions of this process.

    Raises:
        InputError: one line naming the machine, what it lacks or runs, and the fix.
    """
    try:
        found = dict(client.run(eval, _PROBE))
        found["the scheduler"] = client.run_on_scheduler(eval, _PROBE)
    except Exception as exc:  # an import error raised there, of any kind
        reason = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise InputError(
            _WHERE, None, f"the Dask cluster cannot import this library ({reason}): {_INSTALL}"
        ) from None
    mine = versions()
    for where, theirs in found.items():
        diff = [f"{k} {theirs.get(k)} (here {v})" for k, v in mine.items() if theirs.get(k) != v]
        if diff:
            raise InputError(_WHERE, None, f"{where} runs {', '.join(diff)}: {_INSTALL}")
    if len(found) < 2:
        raise InputError(_WHERE, None, "the Dask cluster has no worker")
    return len(found) - 1


def _client(address: str) -> Any:
    try:
        from dask.distributed import Client
        from distributed.versions import VersionMismatchWarning
    except ImportError:
        raise InputError(
            _WHERE, None, "a Dask cluster needs dask.distributed (pip install distributed)"
        ) from None
    try:
        with warnings.catch_warnings():  # check_cluster names what differs, in one line
            warnings.simplefilter("ignore", VersionMismatchWarning)
            return Client(address, timeout="20s")
    except (OSError, TimeoutError, ValueError) as exc:
        reason = (str(exc).splitlines() or [type(exc).__name__])[0]
        reason = f"cannot reach the Dask scheduler {address}: {reason}"
        raise InputError(_WHERE, None, reason) from None


def _scan_file(path: Path, groups: int) -> list[pa.Array]:
    return passes.distinct_queries(path, range(groups))


class _Cluster:
    """Tasks on a ``dask.distributed`` cluster."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.workers = check_cluster(client)

    def scan(self, layout: Layout) -> list[list[pa.Array]]:
        shown = progress.current()
        shown.plan(len(layout.files), f"files scanned on {self.workers} workers")
        sizes = [len(g) for g in layout.groups]
        futures = self.client.map(_scan_file, layout.files, sizes, pure=False)
        return self._gather(futures, [1] * len(futures), [0] * len(futures))

    def run(self, job: db.Job, parts: list[Pass], gold: pa.Table) -> list[pa.Table]:
        shown = progress.current()
        total = job.layout.total()
        shown.plan(len(parts), f"tasks on {self.workers} workers", total)
        [job_f, gold_f] = self.client.scatter([job, gold], broadcast=True, hash=False)
        futures = self.client.map(db.run_pass, [job_f] * len(parts), parts,
                                  [gold_f] * len(parts), pure=False)  # fmt: skip
        return self._gather(futures, [1] * len(parts), [db.pass_rows(job, p) for p in parts])

    def _gather(self, futures: list, steps: list[int], rows: list[int]) -> list:
        from dask.distributed import as_completed

        shown = progress.current()
        index = {f.key: i for i, f in enumerate(futures)}
        out: list = [None] * len(futures)
        try:
            for future in as_completed(futures):
                i = index[future.key]
                out[i] = future.result()  # a task's error is raised here, as raised there
                shown.advance(steps[i], rows[i])
        finally:
            self.client.cancel([f for f in futures if not f.done()])
        return out


class _Threads:
    """Tasks on Dask's threaded scheduler, on this machine."""

    def __init__(self, threads: int) -> None:
        self.threads = threads

    def scan(self, layout: Layout) -> list[list[pa.Array]]:
        files = zip(layout.files, layout.groups, strict=True)
        return self._compute([(_scan_file, f, len(g)) for f, g in files], "files scanned")

    def run(self, job: db.Job, parts: list[Pass], gold: pa.Table) -> list[pa.Table]:
        total = job.layout.total()
        rows = [db.pass_rows(job, p) for p in parts]
        return self._compute([(db.run_pass, job, p, gold) for p in parts], "passes", total, rows)

    def _compute(
        self, tasks: list[tuple], unit: str, total: int | None = None, rows: list | None = None
    ) -> list:
        import dask
        from dask.callbacks import Callback

        shown = progress.current()
        shown.plan(len(tasks), f"{unit} on {self.threads} threads", total)
        per_key = {}
        delayed = []
        for i, (func, *args) in enumerate(tasks):
            task = dask.delayed(func, pure=False)(*args)
            per_key[task.key] = rows[i] if rows else 0
            delayed.append(task)

        def done(key: Any, *_: Any) -> None:
            if key in per_key:
                shown.advance(1, per_key[key])

        with Callback(posttask=done):
            return list(dask.compute(*delayed, scheduler="threads", num_workers=self.threads))


def evaluate(
    run: str | Path, qrels: QrelsArrays, metrics: str | Iterable[str], options: Options
) -> Result:
    """Per-query metrics of a Parquet run on Dask (see the module docstring).

    Raises:
        InputError: a missing file or column, a missing id, a score that is not finite, or a
            cluster that cannot run the plan (one line naming the fix).
    """
    job = db.make_job(run, options, threads=1)
    if job.layout is None:
        raise InputError("--engine dask", None, unsupported(run, options) or "reads Parquet runs")
    q, wanted, gold = prepare_gold(qrels, metrics, options.relevance_threshold)
    address = options.scheduler or os.environ.get(SCHEDULER_ENV)
    client = _client(address) if address else None
    try:
        executor = _Cluster(client) if client else _Threads(options.threads or os.cpu_count() or 1)
        budget = db.budget_rows(job.memory_limit)
        parts = passes.plan_run(job.layout, budget, min(passes.MAX_ROWS, budget), executor.scan)
        result = concat(executor.run(job, parts, gold))
    finally:
        if client is not None:
            client.close()
    if int(pc.sum(result["bad"]).as_py() or 0):
        with db.spill_folder() as spill:
            con = db.connect(job.memory_limit, spill, 1)
            try:
                db.raise_bad_row(con, job)
            finally:
                con.close()
    return finish(result, q, wanted, options.relevance_threshold)
