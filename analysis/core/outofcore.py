"""Out-of-core evaluation of run files larger than memory, on DuckDB.

The plan is the in-memory core's, written as SQL that DuckDB runs multi-threaded and spills to
disk under a memory limit:

1. **Deduplicate**: one row per ``(query_id, doc_id)``, keeping the best score (the best-ranked
   occurrence, as the core does); the dropped rows are counted for the warning.
2. **Rank the judged documents** without sorting the run: with scores as 32-bit floats
   (trec_eval stores scores as ``float``) and ties broken by doc id descending comparing bytes
   (trec_eval's ``strcmp``; DuckDB compares ``VARCHAR`` values byte by byte), the rank of a
   judged document ``g`` of query ``q`` is ``1 + #{docs of q with a higher score, or the same
   score and a larger id}``: a join of the judged documents (a few per query) with their
   query's rows and a count, instead of a sort of every row (a window function) of which only
   the judged documents' ranks are read. At 10M lines in one pass, 3.1-3.5 s
   against 3.7-4.4 s for a window function (3 alternating runs), with the same output.
3. **Per query**: the number of documents returned, the duplicate rows dropped, whether any
   two documents tie on their score (fewer distinct scores than documents), and the ranks and
   gains of the judged documents with a positive gain, by rank.

That output is small (one row per run query), and the metric formulas are then the
core's own numpy kernels on the same arrays, so the per-query values are the core's bit for
bit: queries of the qrels missing from the run score 0 (trec_eval ``-c``), run queries outside
the qrels are left out, queries without a relevant document score 0, and the warnings are the
core's.

Inputs: Parquet (a file, or a folder of Parquet files read as one table) with the columns
``query_id, doc_id`` and ``score`` (or ``rank``, read as ``score = -rank``); TREC run text
(``qid Q0 docno rank score tag``, one consistent delimiter, a space or a tab; ``.gz`` too); or
a CSV table with a header naming those columns. Only the ``trec_eval`` tie policy is
implemented here (file order is not a stable notion for a parallel scan), and the tie
diagnostics (``<metric>_min/_max``) stay with the in-memory core.

Memory: DuckDB's ``memory_limit`` (default :data:`DEFAULT_MEMORY_LIMIT`, or the environment
variable ``RETRIEVAL_DASHBOARD_DUCKDB_MEMORY``) bounds its buffers; past it, sorts and
aggregates spill to ``temp_directory`` (a fresh temporary folder by default, or
``RETRIEVAL_DASHBOARD_DUCKDB_TEMP``), which is removed afterwards. The plan's first step (one row
per distinct (query, doc) pair, a ``GROUP BY`` on two strings) does not spill in DuckDB 2.0, and
DuckDB's hash tables cost more per row as they grow, so a Parquet run of more than 2M rows is
evaluated in passes of whole queries (:mod:`analysis.core.passes`): files packed into passes of
about 2M rows, a file beyond ``memory_limit / 40`` rows (about 48M at the default 2GB) split into
hash buckets of its queries; the per-query values are the single pass's. Text runs are read in
one pass (a larger limit is needed past about 100M lines; convert them to Parquet).
"""

from __future__ import annotations

import gzip
import math
import os
import shutil
import tempfile
import zlib
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from analysis.core import checks, depth, inputs, kernels, passes, paths
from analysis.core import metrics as mx
from analysis.core import ranking as rk
from analysis.core.errors import DataWarning, InputError
from analysis.core.passes import Pass

if TYPE_CHECKING:
    import duckdb

DEFAULT_MEMORY_LIMIT = "2GB"
MEMORY_ENV = "RETRIEVAL_DASHBOARD_DUCKDB_MEMORY"
TEMP_ENV = "RETRIEVAL_DASHBOARD_DUCKDB_TEMP"

#: ``evaluate`` switches to this engine by itself above these sizes: Parquet runs with more
#: rows than this (from the file's metadata), text runs larger than :data:`AUTO_TEXT_BYTES`.
#: The in-memory core needs about 130 bytes per run line, so 20M lines is ~2.6 GB.
AUTO_ROWS = 20_000_000
AUTO_TEXT_BYTES = 1 << 30

_FLT_MAX = 3.4028234663852886e38
_FLT_OVERFLOW = 3.4028235677973366e38  # doubles from here on round to inf as float32
_TREC_COLUMNS = ("query_id", "q0", "doc_id", "file_rank", "score", "tag")
_FILE_COLUMN = "__retrieval_dashboard_file"  # DuckDB's file name column in the pass planning


@dataclass(frozen=True)
class RunSource:
    """Where a run lives and how to read it: ``kind`` is ``parquet``, ``trec`` or ``csv``;
    ``path`` a file (or, for Parquet, a folder of ``*.parquet`` files); ``delimiter`` the field
    separator of text files; ``score`` the expression giving the score (``score`` or
    ``-rank``)."""

    kind: str
    path: Path
    delimiter: str = " "
    score: str = "score"


def _head(path: Path, n: int = 1 << 16) -> str:
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    try:
        with opener(path, "rb") as f:
            data = f.read(n)
    except (OSError, EOFError, zlib.error) as exc:  # unreadable, bad or truncated gzip
        raise InputError(path, None, f"cannot read: {exc}") from None
    return data.decode("utf-8", errors="replace").lstrip("\ufeff")


def _parquet_files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.rglob("*.parquet") if p.is_file())
    return [path]


def run_source(path: str | Path) -> RunSource:
    """Detect how to read a run file: Parquet by its magic bytes (or a folder of Parquet
    files), a CSV table by a header naming ``query_id`` and ``doc_id``, else TREC run text.

    Raises:
        InputError: a missing file, an empty folder, a Parquet file without the columns, or a
            text file whose first line is neither a TREC run line nor a table header.
    """
    p = Path(path)
    if not p.exists():
        raise InputError(p, None, "no such file")
    if p.is_dir() or _magic(p) == b"PAR1":
        files = _parquet_files(p)
        if not files:
            raise InputError(p, None, "the folder holds no .parquet file")
        import pyarrow.parquet as pq

        try:
            names = set(pq.read_schema(files[0]).names)
        except (pa.ArrowException, OSError) as exc:
            raise InputError(files[0], None, f"cannot read Parquet: {exc}") from None
        _require(names, files[0])
        return RunSource("parquet", p, score="score" if "score" in names else "-rank")
    lines = [ln for ln in _head(p).splitlines() if ln.strip() and not ln.startswith("#")]
    if not lines:
        raise InputError(p, None, "the run is empty")
    first = lines[0]
    for delim in (",", "\t"):
        names = {c.strip() for c in first.split(delim)}
        if {"query_id", "doc_id"} <= names:
            _require(names, p)
            return RunSource("csv", p, delim, "score" if "score" in names else "-rank")
    for delim in (" ", "\t"):
        if len(first.split(delim)) == 6 and first.split(delim) == first.split():
            return RunSource("trec", p, delim)
    raise InputError(p, 1, "not a TREC run line (qid Q0 docno rank score tag) nor a table header")


def _magic(path: Path) -> bytes:
    with paths.reading(path, "cannot open"), path.open("rb") as f:
        return f.read(4)


def _require(names: set[str], path: Path) -> None:
    missing = [c for c in ("query_id", "doc_id") if c not in names]
    if not missing and not ({"score", "rank"} & names):
        missing = ["score (or rank)"]
    if missing:
        raise InputError(path, None, f"missing column(s) {', '.join(missing)}")


def run_rows(source: RunSource) -> int | None:
    """Rows of a Parquet run from its metadata (no data read); ``None`` for text files."""
    if source.kind != "parquet":
        return None
    import pyarrow.parquet as pq

    return sum(pq.ParquetFile(f).metadata.num_rows for f in _parquet_files(source.path))


def prefers_out_of_core(path: str | Path) -> bool:
    """True when the run is large enough that ``evaluate`` should use this engine:
    more than :data:`AUTO_ROWS` rows of Parquet, or a text file over :data:`AUTO_TEXT_BYTES`."""
    p = Path(path)
    try:
        if not (p.is_dir() or p.is_file()):
            return False  # a pipe or a device: read once, by the in-memory loaders
        source = run_source(p)
    except (InputError, OSError):
        return False  # let the in-memory loaders report the problem
    if source.kind == "parquet":
        return (run_rows(source) or 0) > AUTO_ROWS
    return p.stat().st_size > AUTO_TEXT_BYTES


def _sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _scan(
    source: RunSource,
    *,
    row_number: bool = False,
    part: Pass | None = None,
    files: Sequence[Path] = (),
) -> str:
    """A ``SELECT q, d, s`` (and ``row``) over the run file, or over one pass of it (``files``:
    the run's Parquet files, which the pass's file indices point into)."""
    path = source.path
    if source.kind == "parquet":
        if part is not None and part.files is not None:
            target = "[" + ", ".join(_sql_string(str(files[i])) for i in part.files) + "]"
        else:
            target = _sql_string(str(path / "**" / "*.parquet") if path.is_dir() else str(path))
        extra = ", file_row_number=true" if row_number else ""
        rel = f"read_parquet({target}{extra})"
        score = "CAST(score AS DOUBLE)" if source.score == "score" else "-CAST(rank AS DOUBLE)"
        row = ", file_row_number + 1 AS row" if row_number else ""
        where = ""
        if part is not None and part.buckets > 1:
            where = f" WHERE hash(CAST(query_id AS VARCHAR)) % {part.buckets} = {part.bucket}"
        return (
            f"SELECT CAST(query_id AS VARCHAR) AS q, CAST(doc_id AS VARCHAR) AS d, "
            f"{score} AS s{row} FROM {rel}{where}"
        )
    common = (
        f"delim={_sql_string(source.delimiter)}, quote='', escape='', comment='#', "
        "auto_detect=false, strict_mode=true"
    )
    if source.kind == "trec":
        columns = ", ".join(
            f"'{c}': '{'DOUBLE' if c == 'score' else 'VARCHAR'}'" for c in _TREC_COLUMNS
        )
        rel = f"read_csv({_sql_string(str(path))}, header=false, columns={{{columns}}}, {common})"
        return f"SELECT query_id AS q, doc_id AS d, score AS s FROM {rel}"
    head = [c.strip() for c in _head(path).splitlines()[0].split(source.delimiter)]
    types = {c: ("DOUBLE" if c in ("score", "rank") else "VARCHAR") for c in head}
    columns = ", ".join(f"{_sql_string(c)}: '{t}'" for c, t in types.items())
    rel = f"read_csv({_sql_string(str(path))}, header=true, columns={{{columns}}}, {common})"
    score = "score" if source.score == "score" else "-rank"
    return f"SELECT query_id AS q, doc_id AS d, {score} AS s FROM {rel}"


#: The plan. ``judged`` is materialized so that the run's judged pairs are found before any row
#: is compared with the other rows of its query: DuckDB estimates a CSV scan without statistics
#: at a few dozen rows and then joined the run with itself on the query first (100 rows per
#: query: 100x the run's rows; 1M text lines took 14 s instead of 0.75 s).
_PLAN = """
WITH src AS ({scan}),
run AS MATERIALIZED (
    SELECT q, d,
           max(CASE WHEN s >= {overflow} THEN CAST('inf' AS FLOAT)
                    WHEN s <= -{overflow} THEN CAST('-inf' AS FLOAT)
                    WHEN s > {flt_max} THEN CAST({flt_max} AS FLOAT)
                    WHEN s < -{flt_max} THEN CAST(-{flt_max} AS FLOAT)
                    ELSE CAST(s AS FLOAT) END) AS s,
           count(*) - 1 AS extra,
           count(*) FILTER (WHERE s IS NULL OR NOT isfinite(s)) AS bad
    FROM src GROUP BY q, d
),
per_q AS (
    SELECT q, count(*) AS n_ret, CAST(sum(extra) AS BIGINT) AS extra,
           CAST(sum(bad) + count(*) FILTER (WHERE q IS NULL OR d IS NULL) AS BIGINT) AS bad,
           count(*) > count(DISTINCT s) AS tied
    FROM run GROUP BY q
),
judged AS MATERIALIZED (
    SELECT run.q AS q, run.d AS d, run.s AS s, g.rel AS rel
    FROM run JOIN gold AS g ON run.q = g.q AND run.d = g.d
),
ranked AS (
    SELECT j.q AS q, j.rel AS rel,
           1 + count(*) FILTER (WHERE r.s > j.s OR (r.s = j.s AND r.d > j.d)) AS r
    FROM judged AS j JOIN run AS r ON r.q = j.q
    GROUP BY j.q, j.d, j.rel
)
SELECT per_q.q AS q, any_value(n_ret) AS n_ret, any_value(extra) AS extra, any_value(bad) AS bad,
       any_value(tied) AS tied,
       list(ranked.r ORDER BY ranked.r) FILTER (WHERE ranked.r IS NOT NULL) AS ranks,
       list(ranked.rel ORDER BY ranked.r) FILTER (WHERE ranked.r IS NOT NULL) AS rels
FROM per_q LEFT JOIN ranked ON per_q.q = ranked.q
GROUP BY per_q.q
"""


@dataclass(frozen=True)
class _RunSummary:
    """What :func:`analysis.core.checks.data_warnings` reads of a ranked run."""

    dictionary: pa.Array
    n_duplicate_rows: int
    n_duplicate_queries: int


def _connect(
    memory_limit: str | None, temp_directory: Path, threads: int | None
) -> duckdb.DuckDBPyConnection:
    import duckdb

    try:
        return duckdb.connect(
            config={
                "memory_limit": memory_limit or os.environ.get(MEMORY_ENV) or DEFAULT_MEMORY_LIMIT,
                "temp_directory": str(temp_directory),
                "threads": int(threads or os.cpu_count() or 1),
                "preserve_insertion_order": False,
            }
        )
    except duckdb.Error as exc:
        raise InputError(
            "duckdb", None, f"cannot start the engine: {_duckdb_message(exc)}"
        ) from None


def _fetch(con: duckdb.DuckDBPyConnection, sql: str) -> pa.Table:
    """The result of ``sql`` as an Arrow table, computed on a worker thread while this thread
    waits. Ctrl-C or a signal handler's exception then reaches this thread at once: a wait on a
    lock is interrupted by signals, a thread inside DuckDB's query only when DuckDB checks for
    them (under load it did not, for a minute and more). The query is then interrupted and the
    exception goes on."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        result = pool.submit(lambda: con.sql(sql).to_arrow_table())
        try:
            return result.result()
        except BaseException:
            con.interrupt()  # made to be called from another thread; the worker's query stops
            raise


def evaluate_file(
    run: str | Path | RunSource,
    qrels: mx.QrelsArrays,
    metrics: str | Iterable[str] = mx.DEFAULT_METRICS,
    *,
    relevance_threshold: int = 1,
    memory_limit: str | None = None,
    temp_directory: str | Path | None = None,
    threads: int | None = None,
) -> tuple[pa.Array, dict[str, np.ndarray], list[DataWarning], list[mx.Metric]]:
    """Per-query metrics of a run file too large for memory, with the in-memory core's
    semantics and output (see :func:`analysis.core.metrics.evaluate_arrays`, whose return value
    this matches: ``(qrels query ids, metric columns, warnings, metrics)``).

    Args:
        run: the run file (Parquet, a folder of Parquet files, TREC run text or a CSV table).
        qrels: ``(query ids, doc ids, relevance)`` as given by
            :func:`analysis.core.metrics.qrels_arrays` (qrels are small and read in memory).
        metrics: metric names (``hit@k``, ``recall@k``, ``precision@k``, ``ndcg@k``, ``mrr``).
        relevance_threshold: relevant means ``relevance >= relevance_threshold``.
        memory_limit: DuckDB's memory limit, e.g. ``"2GB"``.
        temp_directory: where DuckDB spills; a temporary folder (removed afterwards) by default.
        threads: DuckDB worker threads (default: every core).

    Raises:
        InputError: an unreadable file, a missing column, a missing id, or a score that is not
            a finite number (naming its row for Parquet and its line for text).
    """
    import duckdb

    source = run if isinstance(run, RunSource) else run_source(run)
    q, wanted, gold = prepare_gold(qrels, metrics, relevance_threshold)
    own_temp = temp_directory is None and not os.environ.get(TEMP_ENV)
    temp = Path(tempfile.mkdtemp(prefix="duckdb-")) if own_temp else None
    spill = temp or Path(temp_directory or os.environ[TEMP_ENV])
    try:
        con = _connect(memory_limit, spill, threads)
        try:
            con.register("gold", gold)
            results = []
            files, parts = _passes(con, source)
            for part in parts:
                scan = _scan(source, part=part, files=files)
                sql = _PLAN.format(scan=scan, overflow=_FLT_OVERFLOW, flt_max=_FLT_MAX)
                results.append(_fetch(con, sql))
            result = pa.concat_tables(results)
            if int(pc.sum(result["bad"]).as_py() or 0):
                _raise_bad_row(con, source)
        except duckdb.Error as exc:
            raise InputError(
                source.path, None, f"cannot read the run: {_duckdb_message(exc)}{_hint(source)}"
            ) from None
        finally:
            con.close()
    finally:
        if temp is not None:
            shutil.rmtree(temp, ignore_errors=True)
    return finish(result, q, wanted, relevance_threshold)


def _passes(con: duckdb.DuckDBPyConnection, source: RunSource) -> tuple[list[Path], list[Pass]]:
    """The run's Parquet files (listed once) and the passes of :mod:`analysis.core.passes` over
    them: files packed into passes of about ``MAX_ROWS`` rows, a file (or files sharing
    queries) beyond ``memory_limit / BYTES_PER_ROW`` rows split into hash buckets; one pass for
    a run of at most ``MAX_ROWS`` rows or a single file within the memory budget. Text runs are
    read in one pass (and have no file list)."""
    if source.kind != "parquet":
        return [], [Pass()]
    import pyarrow.parquet as pq

    files = _parquet_files(source.path)
    rows = []
    for f in files:
        try:
            rows.append(pq.ParquetFile(f).metadata.num_rows)
        except (pa.ArrowException, OSError) as exc:
            raise InputError(f, None, f"cannot read Parquet: {exc}") from None
    setting = con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
    budget = max(1, passes.memory_bytes(setting) // passes.BYTES_PER_ROW)
    if sum(rows) <= passes.MAX_ROWS or (len(files) == 1 and rows[0] <= budget):
        return files, [Pass()]
    component = list(range(len(files)))
    if len(files) > 1:  # which files share a query: one scan of the query_id column
        listed = "[" + ", ".join(_sql_string(str(f)) for f in files) + "]"
        pairs = _fetch(  # the file column gets a name no run column has
            con,
            f"SELECT DISTINCT {_FILE_COLUMN} AS f, CAST(query_id AS VARCHAR) AS q "
            f"FROM read_parquet({listed}, filename='{_FILE_COLUMN}')",
        )
        index = {str(f): i for i, f in enumerate(files)}
        component = passes.components(
            len(files), [index[f] for f in pairs["f"].to_pylist()], pairs["q"].to_pylist()
        )
    return files, passes.plan(rows, component, budget, passes.MAX_ROWS)


def prepare_gold(
    qrels: mx.QrelsArrays, metrics: str | Iterable[str], relevance_threshold: int
) -> tuple[inputs.Qrels, list[mx.Metric], pa.Table]:
    """The qrels numbered and collapsed as the core does, the parsed metrics, and the judged
    pairs with a positive gain as an Arrow table ``q, d, rel`` (what an engine joins the
    ranked run with)."""
    wanted = mx.parse_metrics(metrics)
    if int(relevance_threshold) < 1:
        raise ValueError("relevance_threshold must be at least 1")
    q = inputs.prepare_qrels(*qrels)
    positive = np.flatnonzero(q.relevance > 0)
    gold = pa.table(
        {
            "q": rk.take(q.queries, q.query_index[positive]).cast(pa.string()),
            "d": rk.take(q.docs, positive).cast(pa.string()),
            "rel": rk.from_numpy(q.relevance[positive].astype(np.int64)),
        }
    )
    return q, wanted, gold


def _hint(source: RunSource) -> str:
    if source.kind == "parquet":
        return ""
    return " (this engine reads text runs with one delimiter throughout; --engine memory reads any)"


def _duckdb_message(exc: Exception) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return "; ".join(lines[:3]) if lines else type(exc).__name__


def _raise_bad_row(con: duckdb.DuckDBPyConnection, source: RunSource) -> None:
    """Raise the InputError naming the first row (Parquet) or line (text) with a missing id or
    a score that is not a finite number."""
    if source.kind == "parquet":
        scan = _scan(source, row_number=True)
        sql = (
            f"SELECT row, q, d, s FROM ({scan}) WHERE q IS NULL OR d IS NULL OR s IS NULL "
            "OR NOT isfinite(s) ORDER BY row LIMIT 1"
        )
        row, qid, doc, score = _fetch(con, sql).to_pylist()[0].values()
        what = "query_id" if qid is None else "doc_id" if doc is None else None
        where = f"row {row}" if not source.path.is_dir() else f"a row ({qid!r}, {doc!r})"
        message = f"{what} is missing" if what else f"score {score!r} is not a finite number"
        raise InputError(source.path, None, f"{where}: {message}")
    opener = gzip.open if source.path.name.lower().endswith(".gz") else open
    field = _TREC_COLUMNS.index("score") if source.kind == "trec" else None
    with opener(source.path, "rt", encoding="utf-8-sig", errors="replace") as f:
        for number, line in enumerate(f, start=1):  # error path only: find the line
            text = line.rstrip("\r\n")
            if not text or text.startswith("#"):
                continue
            parts = text.split(source.delimiter)
            if field is None:  # the header of a CSV table
                field = [p.strip() for p in parts].index(
                    "score" if source.score == "score" else "rank"
                )
                continue
            value = parts[field] if field < len(parts) else ""
            try:
                ok = math.isfinite(float(value))
            except ValueError:
                ok = False
            if not ok:
                raise InputError(source.path, number, f"score {value!r} is not a finite number")
    raise InputError(source.path, None, "a row has a missing id or a score that is not finite")


def finish(
    result: pa.Table, q: inputs.Qrels, wanted: list[mx.Metric], threshold: int
) -> tuple[pa.Array, dict[str, np.ndarray], list[DataWarning], list[mx.Metric]]:
    """The core's metric kernels and warnings on the reduced run: one row per run query with
    ``q`` (id), ``n_ret`` (documents after deduplication), ``extra`` (duplicate rows dropped),
    ``tied`` (two documents share a score), ``ranks`` and ``rels`` (rank and relevance of the
    judged documents with a positive gain, by rank). Any engine producing these rows gets the
    core's per-query values and warnings."""
    nq = len(q.queries)
    run_ids = result["q"].combine_chunks().cast(pa.string())
    run_to_qrels = rk.index_of(run_ids, q.queries)
    sizes = rk.to_numpy(result["n_ret"]).astype(np.int64)
    extra = rk.to_numpy(result["extra"]).astype(np.int64)
    tied = rk.to_numpy(result["tied"], fill=0).astype(bool)
    ranks_list = result["ranks"].combine_chunks()
    parent = rk.to_numpy(pc.list_parent_indices(ranks_list)).astype(np.int64)
    rank = rk.to_numpy(pc.list_flatten(ranks_list)).astype(np.int64)
    rel = rk.to_numpy(pc.list_flatten(result["rels"].combine_chunks())).astype(np.int64)
    qi = run_to_qrels[parent]
    gain = rel.astype(np.float64)
    relevant = rel >= threshold
    in_qrels = run_to_qrels >= 0
    n_ret = np.zeros(nq, dtype=np.int64)
    n_ret[run_to_qrels[in_qrels]] = sizes[in_qrels]
    n_rel = np.bincount(q.query_index[q.relevance >= threshold], minlength=nq).astype(np.float64)
    cutoffs = {m.k for m in wanted if m.measure == "ndcg"}
    idcg = kernels.ideal_dcg(q.query_index, q.relevance, nq, cutoffs)
    values = kernels.scores(wanted, qi, rank, gain, relevant, n_rel, n_ret, idcg)
    columns = {m.label: values[m.label] for m in wanted}
    tied_queries = run_to_qrels[tied][run_to_qrels[tied] >= 0]
    summary = _RunSummary(run_ids, int(extra.sum()), int((extra > 0).sum()))
    warnings = checks.data_warnings(
        q,
        summary,  # type: ignore[arg-type]
        run_to_qrels,
        n_ret,
        n_rel,
        wanted,
        tied_queries if tied.any() else None,
        None,
    )
    n_found = np.bincount(qi[relevant], minlength=nq)
    warnings += depth.depth_warnings(q.queries, n_ret, n_rel, n_found, wanted)
    return q.queries, columns, warnings, wanted
