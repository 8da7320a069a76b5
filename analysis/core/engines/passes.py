"""Passes of whole queries: which rows of a Parquet run each pass (or each Dask task) reads.

A pass holds **every row of its queries and no row of another pass's queries**, so that its
deduplication, ranking and qrels join are those of the whole run: the per-query results of the
passes are concatenated, nothing is merged across passes.

The run is cut into *units*, the row groups of its files (a Parquet file is written as row
groups of whole rows; a reader can read any of them alone). Units sharing a query are kept
together: they form a *component*, found

* from the row groups' ``query_id`` statistics when they show that no two row groups can share
  a query (every row group's ``[min, max]`` range is disjoint from the others'; ids sorted
  across the file, as many writers leave them), with nothing read; else
* by one scan of the ``query_id`` column (its Parquet dictionaries where it has them): the
  distinct query ids of each row group, then the units linked by a shared query.

Components are packed, in file order, into passes of about :data:`MAX_ROWS` rows and never more
than the memory allows (``budget`` rows). A file of whole-query row groups is thus read like a
folder of whole-query files: in passes of about 2M rows, each reading its row groups only. A
component larger than ``budget`` (queries spread across the row groups of a large file) is read
in ``ceil(rows / budget)`` passes, each keeping the queries whose ``hash(query_id)`` falls in its
bucket: every query lands in exactly one bucket, whatever the row order, and each bucket reads
the component's rows again.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from analysis.core import ranking as rk
from analysis.core.errors import InputError

#: Bytes of DuckDB memory per run row that one pass may hold. At a 2 GB limit (1.8 GiB),
#: 100M rows of 50,000 candidates per query just fitted in one pass (2.16 GB peak resident) and
#: 200M did not; 40 bytes per row gives passes of about 48M rows there.
BYTES_PER_ROW = 40

#: Rows a pass aims at, whatever the memory limit: DuckDB's aggregates and joins cost more per
#: row as their hash tables grow (100M lines of 50,000 candidates per query, 2 threads: 57 s in
#: passes of 48M rows, 47 s of 10M, 34 s of 5M, 31 s of 2M), so units are packed into small
#: passes. A component larger than this is still one pass when memory allows.
MAX_ROWS = 1 << 21

_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
          "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}  # fmt: skip


@dataclass(frozen=True)
class Piece:
    """Rows ``start`` to ``stop - 1`` of one file (``stop`` 0: the whole file)."""

    file: int
    start: int = 0
    stop: int = 0


@dataclass(frozen=True)
class Pass:
    """One pass: its pieces (``None``: the whole run) and, when ``buckets > 1``, the hash
    bucket of query ids it keeps (``hash(query_id) % buckets == bucket``)."""

    pieces: tuple[Piece, ...] | None = None
    buckets: int = 1
    bucket: int = 0


@dataclass(frozen=True)
class Layout:
    """The files of a Parquet run and the rows of each file's row groups."""

    files: tuple[Path, ...]
    groups: tuple[tuple[int, ...], ...]

    def total(self) -> int:
        return sum(sum(g) for g in self.groups)

    def rows(self, piece: Piece) -> tuple[int, int]:
        """The file rows ``[start, stop)`` of a piece."""
        return piece.start, piece.stop or sum(self.groups[piece.file])

    def whole(self, piece: Piece) -> bool:
        return self.rows(piece) == (0, sum(self.groups[piece.file]))


@dataclass(frozen=True)
class Units:
    """Row ranges of the files that passes are made of: ``file[i]``, rows ``start[i]`` to
    ``stop[i] - 1``, in file order."""

    file: np.ndarray
    start: np.ndarray
    stop: np.ndarray

    def rows(self) -> np.ndarray:
        return self.stop - self.start


def group_units(layout: Layout) -> Units:
    """One unit per row group."""
    file, start, stop = [], [], []
    for f, sizes in enumerate(layout.groups):
        edges = np.cumsum([0, *sizes])
        file += [f] * len(sizes)
        start += edges[:-1].tolist()
        stop += edges[1:].tolist()
    return Units(*(np.asarray(a, dtype=np.int64) for a in (file, start, stop)))


def read_layout(files: Sequence[Path]) -> Layout:
    """The row groups of each file, from the Parquet footers (no data read).

    Raises:
        InputError: a file that is not Parquet (naming it).
    """
    import pyarrow.parquet as pq

    groups = []
    for f in files:
        try:
            meta = pq.ParquetFile(f).metadata
        except (pa.ArrowException, OSError) as exc:
            raise InputError(f, None, f"cannot read Parquet: {exc}") from None
        groups.append(tuple(meta.row_group(i).num_rows for i in range(meta.num_row_groups)))
    return Layout(tuple(files), tuple(groups))


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


def components(n_units: int, unit_of_pair: Sequence[int], query_of_pair: Sequence) -> list[int]:
    """The component of each unit: units sharing a query get the same label (the smallest unit
    index of the component). ``unit_of_pair[i]`` and ``query_of_pair[i]`` list the distinct
    ``(unit, query)`` pairs of the run (queries as ids or integer codes)."""
    units = np.asarray(unit_of_pair, dtype=np.int64)
    codes = np.unique(np.asarray(query_of_pair), return_inverse=True)[1].ravel()
    order = np.lexsort((units, codes))
    c, u = codes[order], units[order]
    linked = (c[1:] == c[:-1]) & (u[1:] != u[:-1])
    edges = np.unique(np.stack([u[:-1][linked], u[1:][linked]], axis=1), axis=0)
    parent = list(range(n_units))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a, b in edges.tolist():  # distinct pairs of linked units: few unless queries spread
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return [root(i) for i in range(n_units)]


def disjoint_statistics(layout: Layout) -> bool:
    """Whether the row groups' ``query_id`` statistics prove that no two row groups share a
    query: every row group has a minimum and a maximum, and the ``[min, max]`` ranges, in order
    of their minimum, never touch (bounds that a writer truncated still bound the values)."""
    import pyarrow.parquet as pq

    ranges = []
    for path in layout.files:
        meta = pq.ParquetFile(path).metadata
        paths = [meta.schema.column(i).path for i in range(meta.num_columns)]
        if "query_id" not in paths:
            return False
        column = paths.index("query_id")  # the leaf column (other columns may be nested)
        for g in range(meta.num_row_groups):
            stats = meta.row_group(g).column(column).statistics
            if meta.row_group(g).num_rows == 0:
                continue
            if stats is None or not stats.has_min_max:
                return False
            ranges.append((stats.min, stats.max))
    try:
        ranges.sort()
        return all(a[1] < b[0] for a, b in itertools.pairwise(ranges))
    except TypeError:  # ids of different types in different files
        return False


@dataclass(frozen=True)
class GroupQueries:
    """What one scan of a row group's ``query_id`` column tells the planner: its distinct ids
    (as text), its first and last id, the rows of the trailing run of the last id, and whether
    it is *contiguous* (every id in one run of rows)."""

    ids: pa.Array
    first: str | None
    last: str | None
    tail: int
    contiguous: bool


def summarize(column: pa.ChunkedArray, where: Path) -> GroupQueries:
    """The :class:`GroupQueries` of one row group's ``query_id`` column (read as dictionaries
    where the file has them: the ids are compared as codes within a chunk, as text between
    chunks)."""
    from analysis.core.engines.source import as_ids

    present, runs, tail = [], 0, 0
    first = last = None
    nulls = column.null_count  # missing ids: an error of the plan; here never contiguous
    for chunk in (c.drop_null() for c in column.chunks if len(c) - c.null_count):
        encoded = chunk if pa.types.is_dictionary(chunk.type) else pc.dictionary_encode(chunk)
        codes = rk.to_numpy(encoded.indices, fill=-1)
        values = as_ids(encoded.dictionary, where, "query_id").cast(pa.string())
        used = np.bincount(codes[codes >= 0], minlength=len(values)) > 0
        present.append(values.filter(rk.from_numpy(used)))
        change = np.flatnonzero(codes[1:] != codes[:-1])
        head, end = values[int(codes[0])].as_py(), values[int(codes[-1])].as_py()
        runs += len(change) + 1 - (head == last)  # a run may go on from the previous chunk
        run = len(codes) - (int(change[-1]) + 1 if len(change) else 0)
        tail = tail + run if (not len(change) and head == last) else run
        first = head if first is None else first
        last = end
    ids = pc.unique(pa.chunked_array(present, type=pa.string()))
    return GroupQueries(ids, first, last, tail, runs == len(ids) and not nulls)


def distinct_queries(path: Path, row_groups: Sequence[int]) -> list[GroupQueries]:
    """:func:`summarize` of each of the given row groups of a file."""
    import pyarrow.parquet as pq

    try:
        reader = pq.ParquetFile(path, read_dictionary=["query_id"])
        return [
            summarize(reader.read_row_group(g, columns=["query_id"])["query_id"], path)
            for g in row_groups
        ]
    except (pa.ArrowException, OSError) as exc:
        raise InputError(path, None, f"cannot read Parquet: {exc}") from None


Scan = Callable[[Layout], list[list[GroupQueries]]]


def scan_locally(layout: Layout, threads: int = 2) -> list[list[GroupQueries]]:
    """:func:`distinct_queries` of every row group of every file, on ``threads`` threads."""
    from concurrent.futures import ThreadPoolExecutor

    jobs = [(f, range(len(g))) for f, g in zip(layout.files, layout.groups, strict=True)]
    with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
        return list(pool.map(lambda job: distinct_queries(*job), jobs))


def query_units(layout: Layout, scanned: list[list[GroupQueries]]) -> tuple[Units, list[pa.Array]]:
    """Units and their distinct query ids from a scan: one unit per row group, except that
    where a query's run of rows crosses the boundary of two contiguous row groups, the boundary
    moves to the start of that run (the query goes whole to the second unit), so that a file
    written query by query in row groups of any size needs no hash buckets."""
    file, start, stop, ids = [], [], [], []
    for f, (sizes, groups) in enumerate(zip(layout.groups, scanned, strict=True)):
        edges = np.cumsum([0, *sizes]).tolist()
        bounds = list(edges)
        own = [g.ids for g in groups]
        for g in range(1, len(groups)):
            a, b = groups[g - 1], groups[g]
            if a.contiguous and b.contiguous and a.last is not None and a.last == b.first:
                bounds[g] = bounds[g - 1] if a.tail == sizes[g - 1] else edges[g] - a.tail
                own[g - 1] = own[g - 1].filter(pc.not_equal(own[g - 1], a.last))
        for g in range(len(groups)):
            if bounds[g + 1] > bounds[g]:
                file.append(f)
                start.append(bounds[g])
                stop.append(bounds[g + 1])
                ids.append(own[g])
    units = Units(*(np.asarray(a, dtype=np.int64) for a in (file, start, stop)))
    return units, ids


def unit_components(ids: list[pa.Array]) -> list[int]:
    """:func:`components` of units given each unit's distinct query ids."""
    unit = np.repeat(np.arange(len(ids)), [len(a) for a in ids])
    if not len(unit):
        return list(range(len(ids)))
    codes, _ = rk.encode(pa.chunked_array([a.cast(pa.large_string()) for a in ids]))
    return components(len(ids), unit, codes)


def plan_run(
    layout: Layout, budget: int, target: int | None = None, scan: Scan | None = None
) -> list[Pass]:
    """The passes over a Parquet run (see the module docstring): one pass when it holds at most
    ``target`` rows; otherwise row groups as units when the statistics show that none shares a
    query with another, else the units and components of ``scan`` (default
    :func:`scan_locally`)."""
    target = min(budget, target or budget)
    if layout.total() <= target:
        return [Pass()]
    if disjoint_statistics(layout):
        units = group_units(layout)
        labels = list(range(len(units.file)))
    else:
        units, ids = query_units(layout, (scan or scan_locally)(layout))
        labels = unit_components(ids)
    return plan(layout, labels, budget, target, units)


def plan(
    layout: Layout,
    component: Sequence[int],
    budget: int,
    target: int | None = None,
    units: Units | None = None,
) -> list[Pass]:
    """The passes over ``units`` (default: the row groups of ``layout``) grouped by
    ``component``. ``budget``: the rows one pass may hold (memory); ``target``: the rows a pass
    aims at (speed; at most ``budget``, default ``budget``). Components are packed into passes
    of at most ``target`` rows; a larger component is a pass of its own, split into
    ``ceil(rows / budget)`` hash buckets when it exceeds ``budget``. One pass over everything
    when the whole run fits in ``target``."""
    target = min(budget, target or budget)
    if target < 1:
        raise ValueError("budget must be at least one row")
    if layout.total() <= target:
        return [Pass()]
    units = units or group_units(layout)
    rows = units.rows()
    groups: dict[int, list[int]] = {}
    for i, c in enumerate(component):
        groups.setdefault(c, []).append(i)
    passes: list[Pass] = []
    current: list[int] = []
    size = 0
    for members in groups.values():  # in the order of each component's first unit
        n = int(rows[members].sum())
        if n > target:
            buckets = math.ceil(n / budget)
            pieces = _pieces(layout, units, members)
            passes += [Pass(pieces, buckets, b) for b in range(buckets)]
            continue
        if current and size + n > target:
            passes.append(Pass(_pieces(layout, units, current)))
            current, size = [], 0
        current += members
        size += n
    if current:
        passes.append(Pass(_pieces(layout, units, current)))
    return passes


def _pieces(layout: Layout, units: Units, members: list[int]) -> tuple[Piece, ...]:
    """Units as pieces: adjacent row ranges of a file merged, a whole file as ``stop`` 0."""
    pieces: list[Piece] = []
    for i in sorted(members, key=lambda i: (units.file[i], units.start[i])):
        f, lo, hi = int(units.file[i]), int(units.start[i]), int(units.stop[i])
        last = pieces[-1] if pieces else None
        if last is not None and last.file == f and last.stop == lo:
            pieces[-1] = Piece(f, last.start, hi)
        else:
            pieces.append(Piece(f, lo, hi))
    return tuple(Piece(p.file) if layout.whole(p) else p for p in pieces)
