"""A disk cache of per-query tables, so that a bundle's tables are computed once, not at every
start of the app.

An entry is one Parquet file holding the table and, in its schema metadata, the data-check
warnings. Its name is a SHA-256 over

* the stamp ``(path, size, mtime_ns, ctime_ns)`` of every input file (a folder counts as the
  files directly inside it; :func:`settled_stat`), so editing, replacing or touching an input
  makes a new key, also when its size and mtime are put back (``os.utime``, ``cp -p``,
  ``rsync``: the ctime cannot be set back) or when it is written again right after it was
  stamped;
* the parameters (dataset, metrics, tie policy, relevance threshold, ...), as JSON;
* extra bytes (e.g. the content of an uploaded run);
* :data:`CODE_VERSION`, a hash of the library's own source, so a changed formula never reads
  an old table.

Files are written to a temporary name in the cache folder and renamed into place (atomic on
POSIX), so a reader never sees half a file; a file that cannot be read is recomputed and
replaced. When the folder cannot be written, tables are computed without caching. The folder
is ``$RETRIEVAL_DASHBOARD_CACHE_DIR``, else ``$XDG_CACHE_HOME/retrieval-dashboard``, else
``~/.cache/retrieval-dashboard``; :func:`prune` keeps it under a size budget (least recently
used first out).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable, Mapping
from functools import cache
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from analysis.core.errors import DataWarning, InputError
from analysis.io.atomic import atomic_write

CACHE_ENV = "RETRIEVAL_DASHBOARD_CACHE_DIR"
MAX_BYTES = 2 << 30  # prune() budget: 2 GiB
_PACKAGE = Path(__file__).resolve().parents[1]
_WARNINGS_KEY = b"retrieval_dashboard.warnings"

Warnings = dict[str, list[DataWarning]]

#: The timestamp tick allowed for (50 ms, in ns; Linux file systems stamp from a clock of 1 to
#: 10 ms ticks): a file changed less than this before it is stamped is stamped again once that
#: time has passed, so that any later write gets another ctime. File systems with a coarser
#: clock (FAT: 2 s, HFS+: 1 s) are not covered.
SETTLE_NS = 50_000_000

Stamp = tuple[str, int, int, int]


def cache_dir() -> Path:
    """The cache folder (not created here)."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "retrieval-dashboard"


@cache
def code_version() -> str:
    """SHA-256 (first 16 hex digits) of every ``.py`` file of the library, in path order."""
    digest = hashlib.sha256()
    for path in sorted(_PACKAGE.rglob("*.py")):
        digest.update(path.relative_to(_PACKAGE).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def settled_stat(path: Path) -> os.stat_result:
    """``path.stat()`` once :data:`SETTLE_NS` has passed since the file's last change (waiting
    for the rest of it, at most three times for a file being written), so that a write after
    this call gives another mtime and ctime: a stamp of size, mtime and ctime (which no
    program can set back, unlike the mtime) then changes with the file. A timestamp further in
    the future than that (another machine's clock) is taken as it is. Raises OSError."""
    info = path.stat()
    for _ in range(3):
        wait = max(info.st_mtime_ns, info.st_ctime_ns) + SETTLE_NS - time.time_ns()
        if wait <= 0 or wait > SETTLE_NS:
            break
        time.sleep(wait / 1e9)
        info = path.stat()
    return info


def file_stamps(paths: Iterable[Path | str | None]) -> list[Stamp]:
    """``(resolved path, size, mtime_ns, ctime_ns)`` of each file (:func:`settled_stat`), and of
    each file directly inside a folder (sorted); a missing path gets ``(path, -1, -1, -1)``."""
    out: list[Stamp] = []
    for item in paths:
        if item is None:
            continue
        path = Path(item)
        files = sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]
        for f in files:
            try:
                info = settled_stat(f)
                out.append((str(f.resolve()), info.st_size, info.st_mtime_ns, info.st_ctime_ns))
            except OSError:
                out.append((str(f), -1, -1, -1))
    return out


def cache_key(
    inputs: Iterable[Path | str | None], params: Mapping[str, object], extra: bytes = b""
) -> str:
    """The entry name for these inputs, parameters and extra bytes (see the module docstring)."""
    digest = hashlib.sha256()
    payload = {"inputs": file_stamps(inputs), "params": params, "code": code_version()}
    digest.update(json.dumps(payload, sort_keys=True, default=str).encode())
    digest.update(hashlib.sha256(extra).digest())
    return digest.hexdigest()[:32]


def _encode_warnings(warnings: Warnings) -> bytes:
    return json.dumps(
        {
            model: [[w.code, w.count, w.message, list(w.examples)] for w in items]
            for model, items in warnings.items()
        }
    ).encode()


def _decode_warnings(raw: bytes) -> Warnings:
    data = json.loads(raw)
    return {
        model: [DataWarning(c, int(n), m, tuple(e)) for c, n, m, e in items]
        for model, items in data.items()
    }


def read_entry(path: Path) -> tuple[pd.DataFrame, Warnings] | None:
    """The table and warnings stored at ``path``, or ``None`` when it is missing or unreadable.
    Reading marks the entry recently used (its mtime), unless the folder is read-only."""
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException):
        return None
    meta = table.schema.metadata or {}
    try:
        warnings = _decode_warnings(meta[_WARNINGS_KEY])
    except (KeyError, ValueError, TypeError, AttributeError):  # another shape: not ours
        return None
    with contextlib.suppress(OSError):  # a read-only folder: the entry is still good
        os.utime(path)  # recently used: pruned last
    return table.to_pandas(), warnings


def write_entry(path: Path, table: pd.DataFrame, warnings: Warnings) -> bool:
    """Write through the project's one writer (:func:`analysis.io.atomic.atomic_write`: a
    temporary file in the same folder, checked, synced, renamed); False when the folder cannot
    be written or the disk is full (nothing is left behind)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        arrow = pa.Table.from_pandas(table, preserve_index=False)
        meta = {**(arrow.schema.metadata or {}), _WARNINGS_KEY: _encode_warnings(warnings)}
        atomic_write(path, lambda tmp: pq.write_table(arrow.replace_schema_metadata(meta), tmp))
    except (OSError, InputError, pa.ArrowException):
        return False
    return True


def cached_table(
    inputs: Iterable[Path | str | None],
    params: Mapping[str, object],
    compute: Callable[[], tuple[pd.DataFrame, Warnings]],
    *,
    extra: bytes = b"",
    folder: Path | None = None,
) -> tuple[pd.DataFrame, Warnings]:
    """``compute()`` (a per-query table and its warnings per model), read from the disk cache
    when an entry for the same inputs, parameters, extra bytes and code exists, else computed
    and stored. Errors raised by ``compute`` are not cached."""
    inputs = list(inputs)
    path = (folder or cache_dir()) / f"perquery-{cache_key(inputs, params, extra)}.parquet"
    found = read_entry(path) if path.exists() else None
    if found is not None:
        return found
    table, warnings = compute()
    if write_entry(path, table, warnings):
        prune(path.parent)
    return table, warnings


#: a temporary entry file (``.perquery-*.tmp``) older than this (seconds) is one a killed
#: writer left, and :func:`prune` deletes it
STALE_TMP_S = 3600


def prune(folder: Path | None = None, max_bytes: int = MAX_BYTES) -> int:
    """Delete the least recently used entries until the folder holds at most ``max_bytes``,
    and the temporary entry files a killed writer left (older than :data:`STALE_TMP_S`);
    returns how many entries were deleted. An entry that cannot be deleted (another user's, in
    a shared folder) is left and the next one tried."""
    root = folder or cache_dir()
    _remove_stale_temporaries(root)
    try:
        entries = sorted(
            (p.stat().st_mtime_ns, p.stat().st_size, p) for p in root.glob("perquery-*.parquet")
        )
    except OSError:
        return 0
    total = sum(size for _, size, _ in entries)
    removed = 0
    for _, size, path in entries:
        if total <= max_bytes:
            break
        try:
            path.unlink(missing_ok=True)
        except OSError:
            continue
        total -= size
        removed += 1
    return removed


def _remove_stale_temporaries(root: Path) -> None:
    """Delete ``.perquery-*.tmp`` files not written to for :data:`STALE_TMP_S` seconds (a
    writer still at work keeps its file fresh; one killed mid-write never removes it)."""
    cutoff = time.time() - STALE_TMP_S
    for path in root.glob(".perquery-*.tmp"):
        with contextlib.suppress(OSError):
            if path.stat().st_mtime < cutoff:
                path.unlink()
