"""Arrow <-> numpy helpers of the metric core: buffer conversions without pyarrow's pandas shim,
id columns as Arrow strings, exact dictionary encoding, lookups and chunk-aware takes.

Every id comparison of the core goes through Arrow's hash kernels (``dictionary_encode``,
``index_in``), which compare the strings themselves: equal strings get equal codes, whatever
array or chunk they come from.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

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


def string_array(values: list[str]) -> pa.Array:
    """A list of Python strings as an Arrow string array, built from its buffers (``pa.array``
    would import pandas, a third of the command line's start-up)."""
    encoded = [v.encode("utf-8") for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    data = pa.py_buffer(b"".join(encoded))
    buffers = [None, pa.py_buffer(offsets), data]
    return pa.Array.from_buffers(pa.large_string(), len(encoded), buffers)
