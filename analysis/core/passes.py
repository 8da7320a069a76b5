"""Passes of whole queries for the out-of-core engine: which rows each pass reads.

DuckDB 2.0 does not spill the plan's first step (one row per distinct ``(query, doc)`` pair, a
``GROUP BY`` on two strings) to disk, so a run whose pairs do not fit in the memory limit stops
with an out-of-memory error. A run too large for one pass is therefore evaluated in passes, each
holding **every row of its queries and no row of another pass's queries**, so that each pass's
deduplication, ranking and qrels join are exactly the single pass's (the per-query results are
concatenated; nothing is merged across passes).

A pass is a group of files plus a hash bucket of query ids:

* Files that share a query (found by one scan of the ``query_id`` column) are kept in the same
  pass: they form a *component* (connected files).
* Components are packed, in file order, into passes of at most :data:`MAX_ROWS` rows (faster:
  see there) and never more than the memory allows (``budget`` rows).
* A component larger than ``budget`` rows (e.g. one big file) is read in
  ``ceil(rows / budget)`` passes, each keeping the queries whose ``hash(query_id)`` falls in its
  bucket: every query lands in exactly one bucket, whatever the row order.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

#: Bytes of DuckDB memory per run row that one pass may hold. At a 2 GB limit (1.8 GiB),
#: 100M rows of 50,000 candidates per query just fitted in one pass (2.16 GB peak resident) and
#: 200M did not; 40 bytes per row gives passes of about 48M rows there.
BYTES_PER_ROW = 40

#: Rows a pass of whole files aims at, whatever the memory limit: DuckDB's aggregates and joins
#: cost more per row as their hash tables grow (100M lines of 50,000 candidates per query in
#: files of 2M rows, 2 threads: 57 s in passes of 48M rows, 47 s of 10M, 34 s of 5M, 31 s of
#: 2M), so files are packed into small passes. A file larger than this is still one pass when
#: memory allows (hash buckets would read it again for each bucket).
MAX_ROWS = 1 << 21

_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
          "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}  # fmt: skip


@dataclass(frozen=True)
class Pass:
    """One pass: the indices of its files (``None``: every file) and, when ``buckets > 1``,
    the hash bucket of query ids it keeps (``hash(query_id) % buckets == bucket``)."""

    files: tuple[int, ...] | None = None
    buckets: int = 1
    bucket: int = 0


def memory_bytes(setting: str) -> int:
    """Bytes of a DuckDB memory setting as DuckDB prints it (``"1.8 GiB"``, ``"512.0 MiB"``)
    or as a user writes it (``"2GB"``: decimal units; ``KiB``…``TiB``: binary units).

    Raises:
        ValueError: the text is not a number followed by one of those units.
    """
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([A-Za-z]*)\s*", setting)
    unit = match.group(2).upper() if match else None
    if unit not in _UNITS:
        raise ValueError(f"not a memory size: {setting!r}")
    return int(float(match.group(1)) * _UNITS[unit])  # type: ignore[union-attr]


def components(
    n_files: int, file_of_pair: Sequence[int], query_of_pair: Sequence[str]
) -> list[int]:
    """The component of each file: files sharing a query get the same label (the smallest file
    index of the component). ``file_of_pair[i]`` and ``query_of_pair[i]`` list the distinct
    ``(file, query)`` pairs of the run."""
    parent = list(range(n_files))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[str, int] = {}
    for f, q in zip(file_of_pair, query_of_pair, strict=True):
        other = first.setdefault(q, f)
        a, b = root(f), root(other)
        if a != b:
            parent[max(a, b)] = min(a, b)
    return [root(i) for i in range(n_files)]


def plan(
    rows: Sequence[int], component: Sequence[int], budget: int, target: int | None = None
) -> list[Pass]:
    """The passes over files with ``rows[i]`` rows each, grouped by ``component`` (see
    :func:`components`). ``budget``: the rows one pass may hold (memory); ``target``: the rows
    a pass aims at (speed; at most ``budget``, default ``budget``). Components are packed into
    passes of at most ``target`` rows; a larger component is a pass of its own, split into
    ``ceil(rows / budget)`` hash buckets when it exceeds ``budget`` (each bucket reads the
    component's files again, so buckets are as few as memory allows). One pass over
    everything when the whole run fits in ``target``."""
    target = min(budget, target or budget)
    if target < 1:
        raise ValueError("budget must be at least one row")
    if sum(rows) <= target:
        return [Pass()]
    groups: dict[int, list[int]] = {}
    for i, c in enumerate(component):
        groups.setdefault(c, []).append(i)
    passes: list[Pass] = []
    current: list[int] = []
    size = 0
    for files in groups.values():  # in the order of each component's first file
        n = sum(rows[i] for i in files)
        if n > target:
            buckets = math.ceil(n / budget)
            passes += [Pass(tuple(files), buckets, b) for b in range(buckets)]
            continue
        if current and size + n > target:
            passes.append(Pass(tuple(current)))
            current, size = [], 0
        current += files
        size += n
    if current:
        passes.append(Pass(tuple(current)))
    return passes
