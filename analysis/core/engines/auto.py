"""How ``--engine auto`` picks an engine: by the run's size and shape, from measured costs.

The in-memory core's cost grows with the ties it orders (doc ids compared inside every block of
equal scores) and its memory with every line (about 170 bytes at 50,000 candidates per query);
DuckDB counts, for each judged document, the documents of its query ranked above it, whatever
the ties, at a fixed cost of starting the engine and planning passes. Hence:

* options only the core implements (``--ties stable``, ``--diagnostics``, ``--split``,
  ``--compat``), or DuckDB not installed (the ``[scale]`` extra): ``memory``;
* Parquet runs of more than :data:`AUTO_ROWS` rows (from the footers): ``duckdb`` (memory);
* Parquet runs of at least :data:`FULL_CANDIDATE_ROWS` rows whose first rows hold at least
  :data:`FULL_CANDIDATES` documents per query or at least :data:`TIED` of their rows in ties
  (full-candidate score files, e.g. STaRK's): ``duckdb``;
* text runs larger than :data:`AUTO_TEXT_BYTES`: ``duckdb``; smaller ones the core reads faster
  than DuckDB's CSV reader;
* anything else (including pipes and files the loaders must name as bad): ``memory``.

The shape is measured on the first :data:`SAMPLE_ROWS` rows of the first file: documents per
query (rows over distinct queries, at least the sample size when it holds one query) and the
share of rows whose score (as a 32-bit float) another row of their query shares.
``bench/scale.py --scenario auto`` measures both engines on such shapes.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from analysis.core.engines import source as src
from analysis.core.errors import InputError

if TYPE_CHECKING:
    from analysis.core.engines import Options

#: Parquet rows above which the in-memory core would need several GB.
AUTO_ROWS = 20_000_000
#: Text bytes above which DuckDB reads the run (10M TREC lines are about 400 MB).
AUTO_TEXT_BYTES = 1 << 30
#: Full-candidate runs of at least this many rows go to DuckDB.
FULL_CANDIDATE_ROWS = 2_000_000
#: Documents per query from which a run is full-candidate.
FULL_CANDIDATES = 5_000
#: Share of tied rows from which a run is tie-heavy.
TIED = 0.5
#: Rows read to measure the shape.
SAMPLE_ROWS = 1 << 16


@dataclass(frozen=True)
class Shape:
    """A Parquet run's rows (all files) and, on its first rows, the documents per query and
    the share of rows in ties."""

    rows: int
    per_query: float
    tied: float


def shape(files: tuple[Path, ...]) -> Shape:
    """The :class:`Shape` of a Parquet run (footers and the first rows of the first file)."""
    import pyarrow.parquet as pq

    score = src.columns(src.schema(files[0]), files[0]).score  # the columns checked first
    rows = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
    first = pq.ParquetFile(files[0])
    batch = next(first.iter_batches(batch_size=SAMPLE_ROWS, columns=["query_id", score]), None)
    if batch is None or batch.num_rows == 0:
        return Shape(rows, 0.0, 0.0)
    table = pa.Table.from_batches([batch])
    q = src.as_ids(table["query_id"], files[0], "query_id")
    codes = pc.dictionary_encode(q.combine_chunks()).indices
    s = src.scores_of(table, score).astype(np.float32)
    n_queries = len(pc.unique(codes))
    key = pa.table({"q": codes, "s": pa.array(s)})
    distinct = key.group_by(["q", "s"]).aggregate([([], "count_all")])
    counts = distinct["count_all"].to_numpy()
    tied = float(counts[counts > 1].sum()) / batch.num_rows
    return Shape(rows, batch.num_rows / n_queries, tied)


def prefers_duckdb(found: Shape) -> bool:
    """The rule of the module docstring for a Parquet run of this shape."""
    if found.rows > AUTO_ROWS:
        return True
    heavy = found.per_query >= FULL_CANDIDATES or found.tied >= TIED
    return found.rows >= FULL_CANDIDATE_ROWS and heavy


def choose(run: str | Path, options: Options) -> str:
    """``memory`` or ``duckdb`` for ``run`` (see the module docstring)."""
    from analysis.core.engines import out_of_core_limits

    if out_of_core_limits(options) or importlib.util.find_spec("duckdb") is None:
        return "memory"  # options of the core only, or DuckDB (the [scale] extra) not installed
    p = Path(run)
    if not (src.is_glob(run) or p.is_dir() or p.is_file()):
        return "memory"  # a pipe or a device: read once, by the loaders; or a missing file
    try:
        source = src.run_source(run)
        if source.kind == "parquet":
            return "duckdb" if prefers_duckdb(shape(source.files)) else "memory"
    except (InputError, OSError, pa.ArrowException):
        return "memory"  # the loaders name the problem
    return "duckdb" if p.stat().st_size > AUTO_TEXT_BYTES else "memory"
