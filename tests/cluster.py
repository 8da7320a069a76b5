"""A local Dask cluster of separate processes, as a user starts one, for tests and benchmarks.

``dask scheduler`` and ``dask worker`` processes on 127.0.0.1 (ports chosen by the system,
the scheduler's address read from its scheduler file), with this project on ``PYTHONPATH`` so
that the scheduler and the workers import it as an installed library. The processes are stopped
(their own ids only) when the block ends.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _address(scheduler_file: Path, log: Path, deadline: float) -> str:
    """The scheduler's address once its file is written whole."""
    while time.monotonic() < deadline:
        try:
            return json.loads(scheduler_file.read_text())["address"]
        except (OSError, ValueError, KeyError):
            time.sleep(0.2)
    raise RuntimeError(f"the Dask scheduler did not start: {log.read_text()[-2000:]}")


@contextlib.contextmanager
def local_cluster(
    folder: Path, workers: int = 2, threads: int = 1, memory: str = "2GB", timeout: float = 180
) -> Iterator[str]:
    """Start a scheduler and ``workers`` workers of ``threads`` threads each (``memory`` per
    worker) in ``folder``; yield the scheduler's address; stop them, the workers first (a
    worker whose scheduler has gone keeps waiting for it until its nanny kills it, 8 s later)."""
    from distributed import Client

    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    log_path = folder / "cluster.log"
    scheduler_file = folder / "scheduler.json"
    procs: list[subprocess.Popen] = []
    with log_path.open("w") as log:

        def spawn(*args: str) -> None:
            procs.append(subprocess.Popen([sys.executable, "-m", "dask", *args], cwd=folder,
                                          env=env, stdout=log, stderr=log))  # fmt: skip

        try:
            spawn("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                  "--scheduler-file", str(scheduler_file))  # fmt: skip
            address = _address(scheduler_file, log_path, time.monotonic() + timeout)
            for i in range(workers):
                spawn("worker", address, "--host", "127.0.0.1", "--nthreads", str(threads),
                      "--no-dashboard", "--memory-limit", memory,
                      "--local-directory", str(folder / f"worker-{i}"))  # fmt: skip
            with Client(address, timeout=f"{timeout}s") as client:
                client.wait_for_workers(workers, timeout=timeout)
            yield address
        finally:
            for proc in reversed(procs):
                proc.terminate()
            for proc in procs:
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    proc.kill()
