"""Private vectorized kernels: order a run, number its docs exactly, find duplicates, join the
qrels.

Everything here works on whole columns at once (numpy arrays and Arrow string arrays); nothing
loops over queries. The public entry points are in :mod:`analysis.core.metrics`.

Ids are compared exactly, by Arrow's hash kernels. The ranked run is cut into chunks of about
:data:`CHUNK` rows that never split a query; each chunk's doc ids are dictionary-encoded
(``pyarrow.compute.dictionary_encode``), so within a chunk equal strings get equal codes, and the
qrels docs of the chunk's queries are looked up in that same dictionary (``pc.index_in``). Every
comparison of two docs of one query (duplicates, qrels matches) happens inside one chunk, so it
compares strings, never a hash of them. Chunks are encoded on two threads (Arrow releases the
GIL).
"""

from __future__ import annotations

import itertools
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from analysis.core.arrow import (  # noqa: F401 (re-exported: the core's helpers live there)
    Ids,
    as_string_array,
    encode,
    from_numpy,
    index_of,
    string_array,
    take,
    to_numpy,
)

CHUNK = 1 << 20  # rows per chunk for the temporary arrays of large runs (bounds peak memory)
THREADS = 2  # doc chunks dictionary-encoded in parallel
DOC_CHUNK = 1 << 14  # rows per doc dictionary: small hash tables stay in cache (2-3x faster)


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


def tie_scores(scores: np.ndarray, ties: str) -> np.ndarray:
    """The scores as the tie policy compares them: ``trec_eval`` rounds them to 32-bit floats
    (round to nearest, as trec_eval stores them: scores equal in float32 tie), ``stable`` keeps
    float64; already rounded scores are returned as they are.
    Rounding is monotone, so the order of unequal float32 values is the float64 order."""
    if ties != "trec_eval" or scores.dtype == np.float32:
        return scores
    with np.errstate(over="ignore"):  # beyond float32's range: +-inf, as trec_eval reads it
        return scores.astype(np.float32)


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
    its query. ``scores`` as the tie policy compares them (:func:`tie_scores`)."""
    return _blocks(_scan(query_codes, scores)[2])


def _blocks(pairs: np.ndarray) -> Ties | None:
    """The ties given the rows ``i`` that tie with row ``i + 1`` (ascending)."""
    if len(pairs) == 0:
        return None
    ties_next = np.zeros(int(pairs[-1]) + 2, dtype=bool)  # row i ties with row i + 1
    ties_next[pairs] = True
    ties_prev = np.r_[False, ties_next[:-1]]  # row i ties with row i - 1
    rows = np.flatnonzero(ties_next | ties_prev)
    first = ~ties_prev[rows]  # the row before does not tie with this one
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
    #: the ties of the ordered rows (:func:`tie_blocks`) when :func:`order_run` found them on
    #: the way (trec_eval policy); ``found_ties`` is False when they were not looked for
    ties: Ties | None = None
    found_ties: bool = False

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
    policy. ``trec_eval``: scores are compared as 32-bit floats and equal ones are ordered by doc
    id descending, comparing bytes (strcmp), as trec_eval does. ``stable``: equal (float64) scores
    keep their file order. ``query_codes`` number queries in order of first appearance (Arrow
    dictionary encoding), so a file already grouped by query and sorted by score needs no sort.
    """
    scores = tie_scores(scores, ties)
    perm: np.ndarray | None = None
    policy = ties
    grouped, sorted_scores, pairs = _scan(query_codes, scores, find_ties=policy == "trec_eval")
    if not (grouped and sorted_scores):
        perm = _score_order(query_codes, scores)
    if policy != "trec_eval":
        return Order(perm)
    # a file already in order: the neighbour pairs of the scan are the ties (one pass less)
    tied = _blocks(pairs) if perm is None else tie_blocks(query_codes[perm], scores[perm])
    if tied is None:
        return Order(perm, found_ties=True)
    src = tied.rows if perm is None else perm[tied.rows]
    codes, dictionary = encode(take(doc_ids, src))
    rank = np.empty(len(dictionary), dtype=np.int64)  # of each distinct doc, bytes descending
    rank[to_numpy(pc.array_sort_indices(dictionary, order="descending"))] = np.arange(len(rank))
    # sort by (tie, doc rank): one stable sort of a combined key (block * #docs + rank < 2^63)
    src = src[np.argsort(tied.block * len(rank) + rank[codes], kind="stable")]
    if perm is None:
        return Order(None, tied.rows, src, tied, True)
    perm[tied.rows] = src
    return Order(perm, ties=tied, found_ties=True)


def _score_order(query_codes: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """``np.lexsort((-scores, query_codes))``: rows by query code, then score descending,
    equal scores in file order. For float32 scores (the trec_eval policy) and query codes below
    2^32 this is one stable sort of a 64-bit key, query code in the high 32 bits and the
    score's bits, mapped to an order-preserving unsigned integer and inverted, in the low 32
    (-0.0 is first made 0.0, which compares equal to it; a NaN keeps the lexsort); the same
    permutation, about 3x faster."""
    n = len(scores)
    if (
        scores.dtype != np.float32
        or n == 0
        or int(query_codes.min()) < 0
        or int(query_codes.max()) >= 1 << 32
        or bool(np.isnan(scores).any())
    ):
        return np.lexsort((-scores, query_codes))
    bits = (scores + np.float32(0)).view(np.uint32)
    negative = (bits >> np.uint32(31)).astype(bool)
    ascending = np.where(negative, ~bits, bits | np.uint32(1 << 31))  # order of the floats
    key = query_codes.astype(np.uint64) << np.uint64(32)
    key |= (~ascending).astype(np.uint64)  # higher score first
    return np.argsort(key, kind="stable")


def _chunk_bounds(starts: np.ndarray, n: int, size: int | None = None) -> list[tuple[int, int]]:
    """Row ranges of about ``size`` (default :data:`CHUNK`) rows that never split a group."""
    size = size or CHUNK
    idx = np.searchsorted(starts, np.arange(size, n, size))
    cuts = starts[idx[idx < len(starts)]]
    edges = [0, *sorted({int(c) for c in cuts if 0 < c < n}), n]
    return list(itertools.pairwise(edges))


@dataclass(frozen=True)
class DocCodes:
    """Exact doc codes of a ranked run (and of the qrels docs), chunk by chunk.

    Chunk ``c`` holds the queries with codes ``query_edges[c] <= q < query_edges[c + 1]`` (whole
    queries); ``codes[i]`` is the position of ranked row ``i``'s doc in the dictionary of that
    chunk (its distinct doc strings; only its size ``sizes[c]`` is kept, the codes say all that
    is needed). ``qrels_codes[j]`` is the code of qrels row ``j``'s doc
    in the dictionary of the chunk holding its query (-1: query not in the run). The run's and
    the qrels' docs of one chunk are encoded together, so two docs of one chunk have the same
    code exactly when they are equal strings.
    """

    codes: np.ndarray  # int32
    query_edges: np.ndarray
    sizes: tuple[int, ...]
    qrels_codes: np.ndarray | None = None

    def keep(self, rows: np.ndarray) -> DocCodes:
        """The codes of the given ranked rows (e.g. after dropping duplicates)."""
        return DocCodes(self.codes[rows], self.query_edges, self.sizes, self.qrels_codes)


def doc_codes(
    groups: np.ndarray,
    doc_ids: Ids,
    order: Order,
    qrels_query: np.ndarray | None = None,
    qrels_docs: Ids | None = None,
) -> DocCodes:
    """Dictionary-encode the docs of a ranked run (``groups``: its query codes, contiguous and
    ascending; ranked row ``i`` holds ``doc_ids[order.source(i)]``), one chunk of whole queries
    at a time, on :data:`THREADS` threads, together with the qrels docs (``qrels_query``: the
    run query code of each qrels row, -1 when unknown) of the chunk's queries."""
    n = len(groups)
    starts, _ = group_starts(groups)
    bounds = _chunk_bounds(starts, n, min(CHUNK, DOC_CHUNK)) if n else []
    edges = np.asarray([int(groups[lo]) for lo, _ in bounds] + [int(groups[-1]) + 1 if n else 0],
                       dtype=np.int64)  # fmt: skip
    qrels_rows: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * len(bounds)
    if qrels_query is not None and len(bounds):
        known = np.flatnonzero(qrels_query >= 0)
        known = known[np.argsort(qrels_query[known], kind="stable")]
        cut = np.searchsorted(qrels_query[known], edges)
        qrels_rows = [known[a:b] for a, b in itertools.pairwise(cut.tolist())]

    def encode_chunk(c: int) -> tuple[np.ndarray, int]:
        lo, hi = bounds[c]
        if order.perm is None:  # rows of a query stay inside its range: slice the file
            part = doc_ids.slice(lo, hi - lo)
        else:
            part = take(doc_ids, order.perm[lo:hi])
        if len(qrels_rows[c]):
            chunks = part.chunks if isinstance(part, pa.ChunkedArray) else [part]
            extra = take(qrels_docs, qrels_rows[c])
            extra = extra.cast(chunks[0].type) if chunks else extra
            part = pa.chunked_array([*chunks, extra], type=extra.type)
        codes, dictionary = encode(part)
        return codes, len(dictionary)  # the dictionary itself is not needed any more

    if len(bounds) > 1 and THREADS > 1:
        with ThreadPoolExecutor(max_workers=THREADS) as pool:
            parts = list(pool.map(encode_chunk, range(len(bounds))))
    else:
        parts = [encode_chunk(c) for c in range(len(bounds))]
    codes = np.empty(n, dtype=np.int32)
    qrels_codes = None if qrels_query is None else np.full(len(qrels_query), -1, dtype=np.int64)
    for c, (lo, hi) in enumerate(bounds):
        part = parts[c][0]
        codes[lo:hi] = part[: hi - lo]
        if qrels_codes is not None:
            qrels_codes[qrels_rows[c]] = part[hi - lo :]
    if order.perm is None and order.moved is not None:  # docs moved inside ties (same chunk)
        codes[order.moved] = codes[order.moved_src]
    return DocCodes(codes, edges, tuple(p[1] for p in parts), qrels_codes)


def _chunk_rows(groups: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Row offsets where each chunk of queries starts (and the end), in a grouped array. The
    edges take the groups' dtype: numpy would otherwise copy every group code to a common one."""
    return np.searchsorted(groups, np.asarray(edges).astype(groups.dtype), side="left")


def duplicate_rows(groups: np.ndarray, docs: DocCodes) -> np.ndarray:
    """Rows (ascending) whose doc already occurred earlier in the same (contiguous) group.

    Exact: rows are compared on their chunk's dictionary codes. Groups are checked by sorting
    each group's codes (a padded 2-D sort, or a reshape when every group has the same size);
    the few groups with a repeated code are then resolved row by row.
    """
    n = len(groups)
    if n < 2:
        return np.zeros(0, dtype=np.int64)
    starts, sizes = group_starts(groups)
    if int(sizes.min()) == int(sizes.max()) and len(sizes) * int(sizes[0]) == n:
        # every query has the same number of rows (top-k runs): a reshape and row sort, a block
        # of about CHUNK rows at a time (small reused buffers); codes of one row all come from
        # one chunk's dictionary
        grid = docs.codes.reshape(len(sizes), int(sizes[0]))
        step = max(1, CHUNK // int(sizes[0]))
        suspect = np.concatenate(
            [_repeats(grid[lo : lo + step]) + lo for lo in range(0, len(sizes), step)]
        )
        return _resolve_duplicates(groups, docs.codes, starts, sizes, suspect)
    out: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
    row_edges = _chunk_rows(groups, docs.query_edges)
    for lo, hi in itertools.pairwise(row_edges.tolist()):
        if hi - lo < 2:
            continue
        g_lo, g_hi = np.searchsorted(starts, [lo, hi])
        s, z = starts[g_lo:g_hi] - lo, sizes[g_lo:g_hi]
        codes = docs.codes[lo:hi].astype(np.int64)
        width = int(z.max())
        group = np.repeat(np.arange(len(z)), z)
        if len(z) * width > 4 * (hi - lo) + 1024:  # very uneven sizes: one sort of pair keys
            suspect = np.ones(len(z), dtype=bool)
        else:
            if int(z.min()) == width:  # every group the same size (e.g. top-100 runs): a reshape
                grid = codes.reshape(len(z), width).copy()
            else:
                grid = np.full((len(z), width), np.iinfo(np.int64).max, dtype=np.int64)
                grid[group, np.arange(hi - lo) - s[group]] = codes
            grid.sort(axis=1)
            suspect = (grid[:, 1:] == grid[:, :-1]).any(axis=1) & (z > 1)
        if not suspect.any():
            continue
        rows = np.flatnonzero(suspect[group])
        key = group[rows] * (int(codes.max()) + 1) + codes[rows]
        _, first = np.unique(key, return_index=True)
        later = np.ones(len(rows), dtype=bool)
        later[first] = False  # np.unique's index is the first (lowest-row) occurrence
        out.append(rows[later] + lo)
    return np.sort(np.concatenate(out))


def _repeats(grid: np.ndarray) -> np.ndarray:
    """Rows of a 2-D block of codes in which some code occurs twice."""
    block = np.sort(grid, axis=1)
    return np.flatnonzero((block[:, 1:] == block[:, :-1]).any(axis=1))


def _resolve_duplicates(
    groups: np.ndarray,
    codes: np.ndarray,
    starts: np.ndarray,
    sizes: np.ndarray,
    suspect: np.ndarray,
) -> np.ndarray:
    """The later occurrences of a repeated code inside the ``suspect`` groups (ascending rows)."""
    if len(suspect) == 0:
        return np.zeros(0, dtype=np.int64)
    z = sizes[suspect]
    offset = np.arange(int(z.sum())) - np.repeat(np.cumsum(z) - z, z)
    rows = np.repeat(starts[suspect], z) + offset
    key = groups[rows].astype(np.int64) * (int(codes.max()) + 1) + codes[rows]
    _, first = np.unique(key, return_index=True)
    later = np.ones(len(rows), dtype=bool)
    later[first] = False  # np.unique's index is the first (lowest-row) occurrence
    return np.sort(rows[later])


def lookup_pairs(
    run_query: np.ndarray, run_docs: DocCodes, qrels_query: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The run rows whose (query, doc) is in the qrels, and the matching qrels rows.

    ``run_query`` (ranked, contiguous ascending) and ``qrels_query`` number queries the same way
    (-1: unknown on the other side, never matched); (query, doc) pairs are unique on both sides;
    ``run_docs`` holds the codes of both sides' docs (:func:`doc_codes` with the qrels). Pairs
    are matched on integer keys (query, doc code) inside each chunk.

    Returns:
        ``(run_rows, qrels_rows)``, run rows ascending.
    """
    local_all = run_docs.qrels_codes
    if local_all is None:
        raise ValueError("lookup_pairs needs doc codes computed with the qrels docs")
    known = np.flatnonzero((qrels_query >= 0) & (local_all >= 0))
    if len(known) == 0 or len(run_query) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    known = known[np.argsort(qrels_query[known], kind="stable")]
    qq = qrels_query[known].astype(np.int64)
    row_edges = _chunk_rows(run_query, run_docs.query_edges)
    qrels_edges = np.searchsorted(qq, run_docs.query_edges, side="left")
    hit_rows: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
    hit_qrels: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
    for c, width in enumerate(run_docs.sizes):
        a, b = int(qrels_edges[c]), int(qrels_edges[c + 1])
        if a == b:
            continue
        lo, hi = int(row_edges[c]), int(row_edges[c + 1])
        qrows, local = known[a:b], local_all[known[a:b]]
        qkey = qq[a:b] * width + local
        by_key = np.argsort(qkey)
        sorted_key = qkey[by_key]
        codes = run_docs.codes[lo:hi].astype(np.int64)
        judged = np.zeros(width, dtype=bool)
        judged[local] = True
        cand = np.flatnonzero(judged[codes])  # rows whose doc is judged for some query here
        rkey = run_query[lo:hi][cand].astype(np.int64) * width + codes[cand]
        pos = np.minimum(np.searchsorted(sorted_key, rkey), len(sorted_key) - 1)
        ok = sorted_key[pos] == rkey
        hit_rows.append(cand[ok] + lo)
        hit_qrels.append(qrows[by_key[pos[ok]]])
    return np.concatenate(hit_rows), np.concatenate(hit_qrels)
