"""Private vectorized kernels: order a run, fingerprint ids, find duplicates, join the qrels.

Everything here works on whole columns at once (numpy arrays and Arrow string arrays); nothing
loops over queries. The public entry points are in :mod:`analysis.core.metrics`.

Ids are compared exactly. For speed, ids are first reduced to 64-bit fingerprints (an exact
big-endian packing of the first bytes, folded with a 64-bit mixer for longer ids); every match
or duplicate found through a fingerprint is then confirmed on the strings themselves, so a
fingerprint collision can cost time but never change a result.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


CHUNK = 1 << 20  # rows per chunk for the temporary arrays of large runs (bounds peak memory)


Ids = pa.Array | pa.ChunkedArray

# numpy <-> Arrow without pyarrow's pandas shim (pa.array and np.asarray on Arrow arrays import
# pandas, ~0.3 s of the command line's start-up): buffers are read and written directly.
_NUMPY_TYPES = {
    "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
    "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
    "float": np.float32, "double": np.float64,
}  # fmt: skip
_ARROW_TYPES = {
    np.dtype(np.int32): pa.int32(), np.dtype(np.int64): pa.int64(),
    np.dtype(np.uint64): pa.uint64(), np.dtype(np.float64): pa.float64(),
}  # fmt: skip


def _bits(buffer: pa.Buffer, offset: int, n: int) -> np.ndarray:
    bits = np.unpackbits(np.frombuffer(buffer, dtype=np.uint8), bitorder="little")
    return bits[offset : offset + n].astype(bool)


def to_numpy(arr: pa.Array | pa.ChunkedArray, fill: int | None = None) -> np.ndarray:
    """A numeric or boolean Arrow array as a numpy array (a copy for chunks); nulls become
    ``fill`` (an array with nulls and no ``fill`` is an error)."""
    if isinstance(arr, pa.ChunkedArray):
        if arr.num_chunks == 1:
            return to_numpy(arr.chunk(0), fill)
        if arr.num_chunks == 0:
            return np.zeros(0, dtype=bool if pa.types.is_boolean(arr.type) else np.float64)
        return np.concatenate([to_numpy(c, fill) for c in arr.chunks])
    n, offset = len(arr), arr.offset
    if arr.null_count:
        if fill is None:
            raise ValueError("to_numpy: the array holds nulls")
        values = to_numpy(pa.Array.from_buffers(arr.type, n, [None, arr.buffers()[1]], 0, offset))
        return np.where(_bits(arr.buffers()[0], offset, n), values, fill)
    if pa.types.is_boolean(arr.type):
        return _bits(arr.buffers()[1], offset, n)
    dtype = np.dtype(_NUMPY_TYPES[str(arr.type)])
    buf = arr.buffers()[1]
    if n == 0 or buf is None:
        return np.zeros(0, dtype=dtype)
    return np.frombuffer(buf, dtype=dtype, count=n, offset=offset * dtype.itemsize)


def from_numpy(values: np.ndarray) -> pa.Array:
    """A 1-D numpy array (int32/int64/uint64/float64/bool) as an Arrow array (no copy for
    numbers)."""
    values = np.ascontiguousarray(values)
    if values.dtype == bool:
        packed = np.packbits(values, bitorder="little")
        return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(packed)])
    arrow_type = _ARROW_TYPES[values.dtype]
    return pa.Array.from_buffers(arrow_type, len(values), [None, pa.py_buffer(values)])


def as_string_array(values: object) -> Ids:
    """A column of ids as an Arrow string array, chunked or not (zero-copy for pandas' ``str``
    and for Arrow's CSV reader; chunks are not combined, which would copy every id)."""
    if hasattr(values, "array") and not isinstance(values, pa.Array | pa.ChunkedArray):
        values = values.array  # a pandas Series
    arr = pa.array(values) if not isinstance(values, pa.Array | pa.ChunkedArray) else values
    if pa.types.is_dictionary(arr.type) and pa.types.is_string(arr.type.value_type):
        return arr  # dictionary-encoded strings (see encode)
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        arr = pc.cast(arr, pa.string())
    return arr


def encode(ids: Ids) -> tuple[np.ndarray, pa.Array]:
    """``(codes, dictionary)``: ids numbered 0, 1, ... in order of first appearance. Ids that are
    already dictionary-encoded are re-encoded only when their dictionary is not in order of
    first appearance (or not shared by every chunk)."""
    encoded = _appearance_dictionary(ids) if pa.types.is_dictionary(ids.type) else None
    if encoded is None:
        encoded = pc.dictionary_encode(
            ids.cast(ids.type.value_type) if pa.types.is_dictionary(ids.type) else ids
        )
    if isinstance(encoded, pa.ChunkedArray):  # every chunk shares the final dictionary
        if encoded.num_chunks == 0:
            return np.zeros(0, dtype=np.int32), pa.nulls(0, pa.string())
        codes = np.concatenate([to_numpy(c.indices) for c in encoded.chunks])
        return codes.astype(np.int32, copy=False), encoded.chunks[-1].dictionary
    return to_numpy(encoded.indices).astype(np.int32, copy=False), encoded.dictionary


def _appearance_dictionary(ids: Ids) -> Ids | None:
    """``ids`` when its chunks share one dictionary whose entries appear in order (code ``c``
    first occurs after every code below ``c``), else ``None``."""
    chunks = ids.chunks if isinstance(ids, pa.ChunkedArray) else [ids]
    if not chunks or any(not c.dictionary.equals(chunks[0].dictionary) for c in chunks[1:]):
        return None
    seen = -1
    for chunk in chunks:  # a few chunks; the check inside is vectorized
        codes = to_numpy(chunk.indices)
        if len(codes) == 0:
            continue
        running = np.maximum.accumulate(np.r_[seen, codes])[:-1]
        if np.any(codes > running + 1):
            return None
        seen = int(max(seen, codes.max()))
    return ids if seen == len(chunks[0].dictionary) - 1 else None


def index_of(values: pa.Array, value_set: pa.Array) -> np.ndarray:
    """For each of ``values``, its position in ``value_set`` (unique strings), or -1."""
    found = pc.index_in(values, value_set=pc.cast(value_set, values.type))
    return to_numpy(found, fill=-1).astype(np.int64)


def take(ids: Ids, rows: np.ndarray) -> pa.Array:
    """``ids[rows]`` as one array. For a chunked array, each chunk is taken from separately:
    Arrow's own take on a chunked array first concatenates every chunk (a copy of all ids)."""
    rows = np.asarray(rows, dtype=np.int64)
    if isinstance(ids, pa.Array):
        return ids.take(from_numpy(rows))
    if len(rows) == 0 or ids.num_chunks == 0:
        return pa.nulls(0, ids.type)
    ends = np.cumsum([len(c) for c in ids.chunks])
    chunk = np.searchsorted(ends, rows, side="right")
    order = np.argsort(chunk, kind="stable")
    by_chunk = chunk[order]
    present = np.unique(by_chunk)
    bounds = np.searchsorted(by_chunk, np.r_[present, present[-1] + 1])
    parts = []
    for c, lo, hi in zip(present, bounds[:-1], bounds[1:], strict=True):  # one take per chunk
        picked = rows[order[lo:hi]] - (ends[c - 1] if c else 0)
        parts.append(ids.chunk(int(c)).take(from_numpy(picked)))
    grouped = pa.concat_arrays(parts)
    back = np.empty_like(order)
    back[order] = np.arange(len(order))
    return grouped.take(from_numpy(back))


def _splitmix(x: np.ndarray) -> np.ndarray:
    """SplitMix64 finalizer, elementwise on uint64 (wrapping arithmetic)."""
    x = x ^ (x >> np.uint64(30))
    x *= _MIX1
    x ^= x >> np.uint64(27)
    x *= _MIX2
    x ^= x >> np.uint64(31)
    return x


def fingerprint(ids: Ids) -> np.ndarray:
    """64-bit fingerprint of each id string.

    Ids of at most 8 bytes map to their big-endian NUL-padded bytes (exact); longer ids are folded
    8 bytes at a time through SplitMix64. Equal strings always get equal fingerprints. Works in
    chunks of :data:`CHUNK` rows so that the padded copies stay small.
    """
    n = len(ids)
    out = np.empty(n, dtype=np.uint64)
    for start in range(0, n, CHUNK):  # a few chunks of a million rows, not a loop over rows
        part = ids.slice(start, min(CHUNK, n - start))
        width = int(pc.max(pc.binary_length(part)).as_py() or 0)
        width = max(8, -(-width // 8) * 8)
        padded = pc.ascii_rpad(part, width=width, padding="\x00")  # pads bytes, as wanted here
        fixed = pc.cast(pc.cast(padded, pa.large_binary()), pa.binary(width))
        if isinstance(fixed, pa.ChunkedArray):
            fixed = fixed.combine_chunks()
        m = len(part)
        words = np.frombuffer(fixed.buffers()[1], dtype=">u8", count=m * (width // 8))
        words = words.reshape(m, width // 8)
        if width == 8:
            out[start : start + m] = words[:, 0]
            continue
        h = np.zeros(m, dtype=np.uint64)
        for j in range(width // 8):  # a handful of 8-byte words
            salt = np.uint64(j * int(_GOLDEN) % 2**64)  # wraps without numpy's warning
            h = _splitmix(h ^ words[:, j].astype(np.uint64) ^ salt)
        out[start : start + m] = h
    return out


def pair_key(query_code: np.ndarray, doc_fp: np.ndarray) -> np.ndarray:
    """Fingerprint of a (query, doc) pair from a query code and a doc fingerprint."""
    return _splitmix(doc_fp ^ ((query_code.astype(np.uint64) + np.uint64(1)) * _GOLDEN))


def group_starts(groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start offsets and sizes of the runs of equal values in a grouped (contiguous) array."""
    n = len(groups)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
    sizes = np.diff(np.r_[starts, n])
    return starts, sizes


def positions(groups: np.ndarray) -> np.ndarray:
    """1-based position of each row within its (contiguous) group."""
    starts, sizes = group_starts(groups)
    return np.arange(len(groups), dtype=np.int64) - np.repeat(starts, sizes) + 1


@dataclass(frozen=True)
class Ties:
    """Rows (in rank order) whose score is shared with another row of the same query: ``rows``
    ascending, and ``block``, the id of each row's tie (0, 1, ... in order)."""

    rows: np.ndarray
    block: np.ndarray


def _scan(
    query_codes: np.ndarray, scores: np.ndarray, *, find_ties: bool = True
) -> tuple[bool, bool, np.ndarray]:
    """One pass over neighbouring rows, chunk by chunk: ``(grouped, sorted, tie_pairs)`` where
    ``grouped`` means query codes never decrease, ``sorted`` that scores never increase within
    a query, and ``tie_pairs`` lists the rows ``i`` whose next row has the same query and score.
    """
    n = len(scores)
    grouped = sorted_ok = True
    pairs: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
    for lo in range(0, max(n - 1, 0), CHUNK):
        hi = min(n - 1, lo + CHUNK)
        c0, c1 = query_codes[lo:hi], query_codes[lo + 1 : hi + 1]
        s0, s1 = scores[lo:hi], scores[lo + 1 : hi + 1]
        same_query = c0 == c1
        grouped = grouped and bool(np.all(c1 >= c0))
        sorted_ok = sorted_ok and bool(np.all(~same_query | (s1 <= s0)))
        if find_ties:
            pairs.append(np.flatnonzero(same_query & (s0 == s1)) + lo)
    return grouped, sorted_ok, np.concatenate(pairs)


def tie_blocks(query_codes: np.ndarray, scores: np.ndarray) -> Ties | None:
    """The ties of a run in (query, rank) order, or ``None`` when every score is unique within
    its query."""
    pairs = _scan(query_codes, scores)[2]  # row i ties with row i + 1
    if len(pairs) == 0:
        return None
    rows = np.union1d(pairs, pairs + 1)
    first = ~np.isin(rows - 1, pairs)  # the row before does not tie with this one
    return Ties(rows=rows, block=np.cumsum(first) - 1)


@dataclass(frozen=True)
class Order:
    """Where each row of the ranked run comes from in the file.

    ``perm`` is the whole permutation when the file had to be sorted. A file already grouped by
    query and sorted by score needs none (``perm is None``); then only rows inside ties may move
    (trec_eval policy): row ``moved[i]`` takes file row ``moved_src[i]``. Rows of one tie share
    their query and score, so only the doc columns move.
    """

    perm: np.ndarray | None = None
    moved: np.ndarray | None = None
    moved_src: np.ndarray | None = None

    def source(self, rows: np.ndarray) -> np.ndarray:
        """File row of each given ranked row."""
        if self.perm is not None:
            return self.perm[rows]
        out = np.array(rows, dtype=np.int64)
        if self.moved is not None and len(out):
            pos = np.minimum(np.searchsorted(self.moved, out), len(self.moved) - 1)
            hit = self.moved[pos] == out
            out[hit] = self.moved_src[pos[hit]]
        return out


def order_run(query_codes: np.ndarray, scores: np.ndarray, doc_ids: Ids, ties: str) -> Order:
    """How to put rows in (query, rank) order.

    Queries keep their order of first appearance; within a query, score descending, then the tie
    policy. ``trec_eval``: equal scores are ordered by doc id descending, comparing bytes (strcmp),
    as trec_eval does. ``stable``: equal scores keep their file order. ``query_codes`` number
    queries in order of first appearance (Arrow dictionary encoding), so a file already grouped by
    query and sorted by score needs no sort at all.
    """
    perm: np.ndarray | None = None
    grouped, sorted_scores, _ = _scan(query_codes, scores, find_ties=False)
    if not (grouped and sorted_scores):
        perm = np.lexsort((-scores, query_codes))
    if ties != "trec_eval":
        return Order(perm)
    q = query_codes if perm is None else query_codes[perm]
    s = scores if perm is None else scores[perm]
    tied = tie_blocks(q, s)
    if tied is None:
        return Order(perm)
    src = tied.rows if perm is None else perm[tied.rows]
    doc_rank = to_numpy(pc.rank(take(doc_ids, src), sort_keys="descending", tiebreaker="dense"))
    src = src[np.lexsort((doc_rank, tied.block))]
    if perm is None:
        return Order(None, tied.rows, src)
    perm[tied.rows] = src
    return Order(perm)


def _chunk_bounds(starts: np.ndarray, n: int) -> list[tuple[int, int]]:
    """Row ranges of about :data:`CHUNK` rows that never split a group."""
    idx = np.searchsorted(starts, np.arange(CHUNK, n, CHUNK))
    cuts = starts[idx[idx < len(starts)]]
    edges = [0, *sorted({int(c) for c in cuts if 0 < c < n}), n]
    return list(itertools.pairwise(edges))


def duplicate_rows(
    groups: np.ndarray, doc_fp: np.ndarray, doc_ids: Ids, order: Order
) -> np.ndarray:
    """Rows (ascending) whose doc already occurred earlier in the same (contiguous) group.

    Row ``i`` (in group order) holds the doc ``doc_ids[order.source(i)]``. Candidates are found
    on fingerprints, by sorting each group's fingerprints (a padded 2-D sort, chunk by chunk),
    then confirmed on the id strings.
    """
    n = len(groups)
    if n < 2:
        return np.zeros(0, dtype=np.int64)
    starts, sizes = group_starts(groups)
    suspects: list[np.ndarray] = []
    for lo, hi in _chunk_bounds(starts, n):
        g_lo, g_hi = np.searchsorted(starts, [lo, hi])
        s, z = starts[g_lo:g_hi] - lo, sizes[g_lo:g_hi]
        width = int(z.max())
        if len(z) * width > 4 * (hi - lo) + 1024:  # very uneven sizes: one sort of pair keys
            row = np.repeat(np.arange(g_lo, g_hi), z)
            key = pair_key(row, doc_fp[lo:hi])
            skey = np.sort(key)
            clash = skey[1:][skey[1:] == skey[:-1]]
            suspects.append(np.unique(row[np.isin(key, clash)]))
            continue
        if int(z.min()) == width:  # every group the same size (e.g. top-100 runs): a reshape
            grid = doc_fp[lo:hi].reshape(len(z), width).copy()
        else:
            grid = np.full((len(z), width), np.iinfo(np.uint64).max, dtype=np.uint64)
            row = np.repeat(np.arange(len(z)), z)
            grid[row, np.arange(hi - lo) - s[row]] = doc_fp[lo:hi]
        grid.sort(axis=1)
        hit = (grid[:, 1:] == grid[:, :-1]).any(axis=1) & (z > 1)
        suspects.append(np.flatnonzero(hit) + g_lo)
    suspect_groups = np.concatenate(suspects)
    if len(suspect_groups) == 0:
        return np.zeros(0, dtype=np.int64)
    rows = np.concatenate([np.arange(starts[g], starts[g] + sizes[g]) for g in suspect_groups])
    src = order.source(rows)
    import pandas as pd  # only here, for the rare exact check

    frame = pd.DataFrame({"g": groups[rows], "d": take(doc_ids, src).to_pandas()})
    return rows[frame.duplicated(subset=["g", "d"], keep="first").to_numpy()]


def lookup_pairs(
    run_query: np.ndarray,
    run_doc_fp: np.ndarray,
    run_docs: Ids,
    run_order: Order,
    qrels_query: np.ndarray,
    qrels_doc_fp: np.ndarray,
    qrels_docs: pa.Array,
) -> tuple[np.ndarray, np.ndarray]:
    """The run rows whose (query, doc) is in the qrels, and the matching qrels rows.

    ``run_query`` and ``qrels_query`` number queries the same way (-1: unknown on the other
    side, never matched); qrels pairs must be unique. Run row ``i`` holds the doc
    ``run_docs[run_order.source(i)]``. Works in chunks.

    Returns:
        ``(run_rows, qrels_rows)``, run rows ascending.
    """
    known = np.flatnonzero(qrels_query >= 0)
    if len(known) == 0 or len(run_query) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    qq = qrels_query[known]
    n_codes = int(max(qq.max(), run_query.max())) + 1
    width = int(np.bincount(qq, minlength=n_codes).max())
    # Each query has few judged docs: compare every run row with the (padded) row of its query's
    # qrels fingerprints. A query with very many judgments makes the table wide: then one sorted
    # array of pair keys and a binary search per run row.
    if width <= MAX_QRELS_WIDTH:
        hit_rows, hit_qrels = _lookup_by_table(run_query, run_doc_fp, known, qq, qrels_doc_fp,
                                               n_codes, width)  # fmt: skip
    else:
        hit_rows, hit_qrels = _lookup_by_key(run_query, run_doc_fp, known, qq, qrels_doc_fp)
    if hit_rows is None:  # two distinct docs of one query share a fingerprint: exact path
        return _lookup_exact(run_query, run_docs, run_order, qrels_query, qrels_docs)
    rows = np.concatenate(hit_rows) if hit_rows else np.zeros(0, dtype=np.int64)
    qrows = np.concatenate(hit_qrels) if hit_qrels else np.zeros(0, dtype=np.int64)
    if len(rows):
        src = run_order.source(rows)
        left = take(run_docs, src)
        right = pc.cast(take(qrels_docs, qrows), left.type)
        ok = to_numpy(pc.equal(left, right)) & (qrels_query[qrows] == run_query[rows])
        rows, qrows = rows[ok], qrows[ok]
    return rows, qrows


MAX_QRELS_WIDTH = 8  # judged docs per query up to which lookups use the padded table


def _lookup_by_table(
    run_query: np.ndarray,
    run_doc_fp: np.ndarray,
    known: np.ndarray,
    qq: np.ndarray,
    qrels_doc_fp: np.ndarray,
    n_codes: int,
    width: int,
) -> tuple[list[np.ndarray] | None, list[np.ndarray]]:
    order = np.argsort(qq, kind="stable")
    qq_sorted = qq[order]
    pos = positions(qq_sorted) - 1
    table_fp = np.zeros((n_codes + 1, width), dtype=np.uint64)  # last row: unknown queries
    table_row = np.full((n_codes + 1, width), -1, dtype=np.int64)
    table_fp[qq_sorted, pos] = qrels_doc_fp[known][order]
    table_row[qq_sorted, pos] = known[order]
    # a run row matching two qrels rows (two docs of one query share a fingerprint) -> None
    hit_rows: list[np.ndarray] = []
    hit_qrels: list[np.ndarray] = []
    step = max(1, (2 << 20) // width)  # about 2M compared cells per chunk
    n = len(run_query)
    for lo in range(0, n, step):
        hi = min(n, lo + step)
        q = np.where(run_query[lo:hi] >= 0, run_query[lo:hi], n_codes)
        same = (table_fp[q] == run_doc_fp[lo:hi, None]) & (table_row[q] >= 0)
        count = same.sum(axis=1)
        if np.any(count > 1):
            return None, []
        rows = np.flatnonzero(count)
        hit_rows.append(rows + lo)
        hit_qrels.append(table_row[q[rows], same[rows].argmax(axis=1)])
    return hit_rows, hit_qrels


_LOW40 = np.uint64((1 << 40) - 1)


def _query_major_key(query_code: np.ndarray, doc_fp: np.ndarray) -> np.ndarray:
    """A (query, doc) key whose high 24 bits are the query code and low 40 bits a hash of the
    doc: the keys of one query are contiguous once sorted, so the binary searches of a run
    grouped by query stay in cache (a fully hashed key makes each search a cache miss). For
    more than 2^24 queries, the fully hashed :func:`pair_key`."""
    if len(query_code) and int(query_code.max()) >= 1 << 24:
        return pair_key(query_code, doc_fp)
    return (query_code.astype(np.uint64) << np.uint64(40)) | (_splitmix(doc_fp) & _LOW40)


def _lookup_by_key(
    run_query: np.ndarray,
    run_doc_fp: np.ndarray,
    known: np.ndarray,
    qq: np.ndarray,
    qrels_doc_fp: np.ndarray,
) -> tuple[list[np.ndarray] | None, list[np.ndarray]]:
    qrels_key = _query_major_key(qq, qrels_doc_fp[known])
    by_key = np.argsort(qrels_key, kind="stable")
    sorted_key = qrels_key[by_key]
    if np.any(sorted_key[1:] == sorted_key[:-1]):
        return None, []
    hit_rows: list[np.ndarray] = []
    hit_qrels: list[np.ndarray] = []
    n = len(run_query)
    for lo in range(0, n, CHUNK):
        hi = min(n, lo + CHUNK)
        key = _query_major_key(run_query[lo:hi], run_doc_fp[lo:hi])
        pos = np.minimum(np.searchsorted(sorted_key, key), len(sorted_key) - 1)
        found = np.where((sorted_key[pos] == key) & (run_query[lo:hi] >= 0), by_key[pos], -1)
        rows = np.flatnonzero(found >= 0)
        hit_rows.append(rows + lo)
        hit_qrels.append(known[found[rows]])
    return hit_rows, hit_qrels


def _lookup_exact(
    run_query: np.ndarray,
    run_docs: Ids,
    run_order: Order,
    qrels_query: np.ndarray,
    qrels_docs: pa.Array,
) -> tuple[np.ndarray, np.ndarray]:
    import pandas as pd  # only here: the rare exact path

    docs = take(run_docs, run_order.source(np.arange(len(run_query))))
    left = pd.DataFrame({"q": run_query, "d": docs.to_pandas(), "r": np.arange(len(run_query))})
    right = pd.DataFrame(
        {"q": qrels_query, "d": qrels_docs.to_pandas(), "i": np.arange(len(qrels_query))}
    )
    merged = left[left["q"] >= 0].merge(right, on=["q", "d"], how="inner").sort_values("r")
    return merged["r"].to_numpy(dtype=np.int64), merged["i"].to_numpy(dtype=np.int64)
