"""The DuckDB engine: out-of-core evaluation of runs larger than memory, embedded.

The plan is the in-memory core's, written as SQL that DuckDB runs multi-threaded and spills to
disk under a memory limit:

1. **Deduplicate**: one row per ``(query_id, doc_id)``, keeping the best score (the best-ranked
   occurrence, as the core does); the dropped rows are counted for the warning.
2. **Rank the judged documents** without sorting the run: with scores as 32-bit floats
   (trec_eval stores scores as ``float``) and ties broken by doc id descending comparing bytes
   (trec_eval's ``strcmp``; DuckDB compares ``VARCHAR`` values byte by byte), the rank of a
   judged document ``g`` of query ``q`` is ``1 + #{docs of q with a higher score, or the same
   score and a larger id}``: a join of the judged documents (a few per query) with their
   query's rows and a count, instead of a sort of every row of which only the judged
   documents' ranks are read.
3. **Per query**: the reduced row of :mod:`analysis.core.engines.reduce` (documents returned,
   duplicate rows dropped, rows with a bad id or score, whether two documents tie, the ranks
   and gains of the judged documents with a positive gain, the count of its other judged
   documents), which
   :func:`~analysis.core.engines.reduce.finish` turns into the core's values and warnings.

Inputs (:mod:`analysis.core.engines.source`): Parquet (a file, a folder or a glob; ids read as
every engine reads them), TREC run text (one consistent delimiter, a space or a tab; ``.gz``
too) or a CSV table with a header naming ``query_id``, ``doc_id`` and ``score`` (or ``rank``).
Only the ``trec_eval`` tie policy is implemented (file order is not a stable notion for a
parallel scan), and the tie diagnostics stay with the in-memory core.

Memory: DuckDB's ``memory_limit`` (default :data:`DEFAULT_MEMORY_LIMIT`, or
``RETRIEVAL_DASHBOARD_DUCKDB_MEMORY``) bounds its buffers; past it, sorts and aggregates spill to
``RETRIEVAL_DASHBOARD_DUCKDB_TEMP`` (default: a fresh temporary folder, removed afterwards). The
plan's first step (a ``GROUP BY`` on two strings) does not spill in DuckDB 2.0 and its hash
tables cost more per row as they grow, so a Parquet run of more than 2M rows is evaluated in
passes of whole queries (:mod:`analysis.core.engines.passes`): whole-query files and row groups
packed into passes of about 2M rows, each pass reading its row groups only; hash buckets of
query ids where queries spread over more rows than the memory allows. Text runs are read in one
pass (a larger limit is needed past about 100M lines; convert them to Parquet).
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import math
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from analysis.core import progress
from analysis.core.engines import passes
from analysis.core.engines import source as src
from analysis.core.engines.passes import Layout, Pass
from analysis.core.engines.reduce import Result, concat, finish, prepare_gold
from analysis.core.errors import InputError
from analysis.core.inputs import C_INT, HEX_FLOAT, RANK_LIMIT, RANK_RULE, QrelsArrays

if TYPE_CHECKING:
    import duckdb

    from analysis.core.engines import Options

DEFAULT_MEMORY_LIMIT = "2GB"
MEMORY_ENV = "RETRIEVAL_DASHBOARD_DUCKDB_MEMORY"
TEMP_ENV = "RETRIEVAL_DASHBOARD_DUCKDB_TEMP"

_FLT_MAX = 3.4028234663852886e38
_FLT_OVERFLOW = 3.4028235677973366e38  # doubles from here on round to inf as float32
_TREC_COLUMNS = ("query_id", "q0", "doc_id", "file_rank", "score", "tag")
#: The ASCII whitespace trec_eval splits a run line on (C's ``isspace``), as an RE2 class
_TREC_SPACE = r"[\t\n\v\f\r ]"
#: a TREC line's fields as trec_eval (and the in-memory engine) split it
_WORDS = re.compile(f"[^{src.ASCII_SPACE}]+")
#: a hexadecimal float as C's ``strtod`` (trec_eval's ``atof``) reads it, and DuckDB does not
_HEX_FLOAT = re.compile(rf"[+-]?{HEX_FLOAT}", re.ASCII)
_FILE_COLUMN = "__retrieval_dashboard_file"  # DuckDB's file name column (no run column's name)


def unsupported(run: str | Path, options: Options) -> str | None:
    from analysis.core.engines import out_of_core_limits

    return out_of_core_limits(options)


@dataclass(frozen=True)
class Job:
    """What a pass needs besides its rows (picklable: a Dask worker runs passes from it):
    the run, its layout and columns (Parquet), DuckDB's memory limit and threads."""

    source: src.RunSource
    layout: Layout | None
    columns: src.Columns | None
    memory_limit: str
    threads: int


def _sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _file_list(files: Iterable[Path]) -> str:
    return "[" + ", ".join(_sql_string(str(f)) for f in files) + "]"


def scan_sql(job: Job, part: Pass = Pass(), row_number: bool = False) -> str:  # noqa: B008
    """A ``SELECT q, d, s`` over the run, or over one pass of a Parquet run (its whole files in
    one scan, its row-group ranges by ``file_row_number``, which DuckDB prunes row groups by);
    with ``row_number``, also the file and the 1-based row of each row (whole run only)."""
    source = job.source
    if source.kind != "parquet":
        return _text_scan(source)
    cols = job.columns
    select = (f"SELECT {cols.sql('query_id')} AS q, {cols.sql('doc_id')} AS d, "
              f"{cols.sql_score()} AS s")  # fmt: skip
    if row_number:
        raw = "rank" if cols.score == "rank" else "NULL"
        return (f"{select}, {_FILE_COLUMN} AS file, file_row_number + 1 AS row, {raw} AS raw FROM "
                f"read_parquet({_file_list(source.files)}, file_row_number=true, "
                f"filename='{_FILE_COLUMN}')")  # fmt: skip
    if part.pieces is None:
        scans = [f"{select} FROM read_parquet({_file_list(source.files)})"]
    else:
        whole = [source.files[p.file] for p in part.pieces if job.layout.whole(p)]
        scans = [f"{select} FROM read_parquet({_file_list(whole)})"] if whole else []
        for piece in part.pieces:
            if not job.layout.whole(piece):
                lo, hi = job.layout.rows(piece)
                scans.append(
                    f"{select} FROM read_parquet({_sql_string(str(source.files[piece.file]))}, "
                    f"file_row_number=true) WHERE file_row_number >= {lo} "
                    f"AND file_row_number < {hi}"
                )
    sql = " UNION ALL ".join(scans)
    if part.buckets > 1:
        sql = f"SELECT * FROM ({sql}) WHERE hash(q) % {part.buckets} = {part.bucket}"
    return sql


def _number(column: str) -> str:
    """A text column read as a double, NULL (a bad row, named by :func:`_raise_bad_line`) when
    it is not a number: DuckDB's parser also reads ``_`` digit separators (``1_000.5`` as
    1000.5), which trec_eval's ``atof`` and the in-memory engine do not."""
    return f"CASE WHEN contains({column}, '_') THEN NULL ELSE TRY_CAST({column} AS DOUBLE) END"


def _trec_score() -> str:
    """The score of a TREC line, NULL (a bad row, named by :func:`_raise_bad_line`) when
    trec_eval would split the line otherwise than at the delimiter: an empty field, or
    whitespace in a field before the score (``a b`` in a tab-separated file, a vertical tab),
    or when it is not a number (:func:`_number`)."""
    empty = " OR ".join(f"{c} IS NULL" for c in _TREC_COLUMNS if c != "score")
    spaced = f"regexp_matches(concat(query_id, q0, doc_id, file_rank), '{_TREC_SPACE}')"
    return f"CASE WHEN {empty} OR {spaced} THEN NULL ELSE {_number('score')} END"


def _text_scan(source: src.RunSource) -> str:
    """The scan of a text run: TREC lines split at their delimiter, no quoting, as trec_eval
    reads them (:func:`_trec_rows`); a CSV table as its loader (pandas) reads it: RFC 4180
    quoting (``"a,b"``, ``""`` inside quotes), no comment lines."""
    path = source.path
    common = f"delim={_sql_string(source.delimiter)}, auto_detect=false"
    if source.kind == "trec":
        common += ", quote='', escape='', comment='', null_padding=true, strict_mode=false"
        rel = f"read_csv({_sql_string(str(path))}, header=false, columns={{{_COLUMNS}}}, {common})"
        return f"SELECT query_id AS q, doc_id AS d, {_trec_score()} AS s FROM {rel} {_trec_rows()}"
    common += ", strict_mode=true, quote='\"', escape='\"', comment=''"
    head = src.header_names(src.text_lines(src.head(path))[0], source.delimiter)
    columns = ", ".join(f"{_sql_string(c)}: 'VARCHAR'" for c in head)
    rel = f"read_csv({_sql_string(str(path))}, header=true, columns={{{columns}}}, {common})"
    score = _number("score") if source.score == "score" else src.negated_rank(_number("rank"))
    return f"SELECT query_id AS q, doc_id AS d, {score} AS s FROM {rel}"


#: the six VARCHAR columns of a TREC line, as read_csv's ``columns``
_COLUMNS = ", ".join(f"'{c}': 'VARCHAR'" for c in _TREC_COLUMNS)


def _trec_rows() -> str:
    """The WHERE clause keeping a TREC scan's data lines, as trec_eval reads them: a line whose
    first field starts with ``#`` is a comment, whatever its number of fields, and a line of
    whitespace only is skipped. The scan pads a line of fewer fields with NULLs (a bad row,
    named by :func:`_raise_bad_line`) and reads the first six of a longer one (trec_eval
    ignores the rest). DuckDB's own ``comment`` option is not used: it would end a line's
    fields at a ``#`` anywhere in it (``doc#1``)."""
    fields = ", ".join(f"coalesce({c}, '')" for c in _TREC_COLUMNS)
    blank = f"regexp_full_match(concat({fields}), '{_TREC_SPACE}*')"
    return (
        "WHERE NOT starts_with(coalesce(query_id, ''), '#') "
        f"AND (CASE WHEN q0 IS NOT NULL THEN true ELSE NOT {blank} END)"
    )


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
    WHERE j.rel > 0
    GROUP BY j.q, j.d, j.rel
),
others AS (
    SELECT q, count(*) AS n FROM judged WHERE rel <= 0 GROUP BY q
)
SELECT per_q.q AS q, any_value(n_ret) AS n_ret, any_value(extra) AS extra, any_value(bad) AS bad,
       any_value(tied) AS tied,
       list(ranked.r ORDER BY ranked.r) FILTER (WHERE ranked.r IS NOT NULL) AS ranks,
       list(ranked.rel ORDER BY ranked.r) FILTER (WHERE ranked.r IS NOT NULL) AS rels,
       CAST(coalesce(any_value(others.n), 0) AS BIGINT) AS unrated
FROM per_q LEFT JOIN ranked ON per_q.q = ranked.q LEFT JOIN others ON per_q.q = others.q
GROUP BY per_q.q
"""


def plan_sql(job: Job, part: Pass = Pass()) -> str:  # noqa: B008 (frozen)
    """The whole plan over one pass: the reduced rows of its queries."""
    return _PLAN.format(scan=scan_sql(job, part), overflow=_FLT_OVERFLOW, flt_max=_FLT_MAX)


def connect(memory_limit: str, temp_directory: Path, threads: int) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection (one line naming the engine when it cannot start)."""
    import duckdb

    try:
        return duckdb.connect(
            config={
                "memory_limit": memory_limit,
                "temp_directory": str(temp_directory),
                "threads": int(threads),
                "preserve_insertion_order": False,
            }
        )
    except duckdb.Error as exc:
        raise InputError("duckdb", None, f"cannot start the engine: {message(exc)}") from None


def fetch(con: duckdb.DuckDBPyConnection, sql: str) -> pa.Table:
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


def memory_limit(options: Options) -> str:
    """DuckDB's memory limit: the option, else ``$RETRIEVAL_DASHBOARD_DUCKDB_MEMORY``, else
    :data:`DEFAULT_MEMORY_LIMIT`."""
    return options.memory_limit or os.environ.get(MEMORY_ENV) or DEFAULT_MEMORY_LIMIT


def budget_rows(limit: str) -> int:
    """Rows one pass may hold under a memory limit (:data:`passes.BYTES_PER_ROW` each)."""
    try:
        return max(1, passes.memory_bytes(limit) // passes.BYTES_PER_ROW)
    except ValueError:
        raise InputError(MEMORY_ENV, None, f"not a memory size: {limit!r}") from None


def make_job(run: str | Path, options: Options, threads: int) -> Job:
    """The job of a run: resolved, and for Parquet its columns and row groups."""
    source = src.run_source(run)
    if source.kind != "parquet":
        return Job(source, None, None, memory_limit(options), threads)
    columns = src.columns(src.schema(source.files[0]), source.files[0])
    layout = passes.read_layout(source.files)
    return Job(source, layout, columns, memory_limit(options), threads)


def pass_rows(job: Job, part: Pass) -> int:
    """Rows a pass reads (its share of a bucketed component), for the progress line."""
    if job.layout is None:
        return 0
    pieces = part.pieces
    if pieces is None:
        return job.layout.total()
    rows = sum(hi - lo for lo, hi in map(job.layout.rows, pieces))
    return math.ceil(rows / part.buckets)


def evaluate(
    run: str | Path, qrels: QrelsArrays, metrics: str | Iterable[str], options: Options
) -> Result:
    """Per-query metrics of ``run`` on embedded DuckDB (see the module docstring).

    Raises:
        InputError: an unreadable file, a missing column, a missing id, or a score that is not
            a finite number (naming its file and row for Parquet and its line for text).
    """
    import duckdb

    threads = int(options.threads or os.cpu_count() or 1)
    job = make_job(run, options, threads)
    q, wanted, gold = prepare_gold(qrels, metrics, options.relevance_threshold)
    with spill_folder() as spill:
        con = connect(job.memory_limit, spill, threads)
        try:
            con.register("gold", gold)
            parts = [Pass()]
            if job.layout is not None:
                target = min(passes.MAX_ROWS, budget_rows(job.memory_limit))
                scan = lambda layout: passes.scan_locally(layout, threads)  # noqa: E731
                parts = passes.plan_run(job.layout, budget_rows(job.memory_limit), target, scan)
            result = concat(run_passes(con, job, parts))
            if int(pc.sum(result["bad"]).as_py() or 0):
                raise_bad_row(con, job)
        except duckdb.Error as exc:
            reason = f"cannot read the run: {message(exc)}{_hint(job.source)}"
            raise InputError(job.source.path, None, reason) from None
        finally:
            con.close()
    return finish(result, q, wanted, options.relevance_threshold)


def run_passes(con: duckdb.DuckDBPyConnection, job: Job, parts: list[Pass]) -> list[pa.Table]:
    """The reduced rows of each pass, one pass after the other, with progress."""
    shown = progress.current()
    total = job.layout.total() if job.layout is not None else None
    shown.plan(len(parts), "passes", total)
    results = []
    for part in parts:
        results.append(fetch(con, plan_sql(job, part)))
        shown.advance(1, pass_rows(job, part))
    return results


def run_pass(job: Job, part: Pass, gold: pa.Table) -> pa.Table:
    """One pass on a connection of its own (what a Dask task runs): its reduced rows."""
    import duckdb

    with spill_folder() as spill:
        con = connect(job.memory_limit, spill, job.threads)
        try:
            con.register("gold", gold)
            return fetch(con, plan_sql(job, part))
        except duckdb.Error as exc:
            reason = f"cannot read the run: {message(exc)}"
            raise InputError(job.source.path, None, reason) from None
        finally:
            con.close()


@contextlib.contextmanager
def spill_folder() -> Iterator[Path]:
    """``$RETRIEVAL_DASHBOARD_DUCKDB_TEMP``, or a fresh temporary folder removed at the end."""
    given = os.environ.get(TEMP_ENV)
    own = None if given else Path(tempfile.mkdtemp(prefix="duckdb-"))
    try:
        yield own or Path(given)  # type: ignore[arg-type]
    finally:
        if own is not None:
            shutil.rmtree(own, ignore_errors=True)


def _hint(source: src.RunSource) -> str:
    """What follows DuckDB's own refusal of a text run: what this engine reads of its kind,
    and what the memory engine reads besides."""
    if source.kind == "parquet":
        return ""
    if source.kind == "csv":
        return (" (this engine reads tables whose rows have the header's number of fields; "
                "--engine memory also reads shorter rows)")  # fmt: skip
    return " (this engine reads text runs with one delimiter throughout; --engine memory reads any)"


def message(exc: Exception) -> str:
    """The first lines of a DuckDB error, on one line."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return "; ".join(lines[:3]) if lines else type(exc).__name__


def raise_bad_row(con: duckdb.DuckDBPyConnection, job: Job) -> None:
    """Raise the InputError naming the first row (Parquet: its file and row) or line (text)
    with a missing id or a score that is not a finite number."""
    source = job.source
    if source.kind == "parquet":
        sql = (
            f"SELECT file, row, q, d, s, raw FROM ({scan_sql(job, row_number=True)}) "
            "WHERE q IS NULL OR d IS NULL OR s IS NULL OR NOT isfinite(s) "
            "ORDER BY file, row LIMIT 1"
        )
        file, row, qid, doc, score, raw = fetch(con, sql).to_pylist()[0].values()
        what = "query_id" if qid is None else "doc_id" if doc is None else None
        if what:
            text = f"{what} is missing"
        elif job.columns is not None and job.columns.score == "rank":
            text = src.rank_problem(raw)
        else:
            text = f"score {score!r} is not a finite number"
        raise InputError(file, None, f"row {row}: {text}")
    _raise_bad_line(source)


def _split_otherwise(parts: list[str]) -> bool:
    """A TREC line's fields (split at the delimiter) hold an empty one or whitespace before
    the score (what :func:`_trec_score` marks)."""
    return any(not p for p in parts) or re.search(_TREC_SPACE, "".join(parts[:4])) is not None


def _fields(text: str, source: src.RunSource) -> list[str]:
    """The fields of a text run's line as :func:`_text_scan` reads them (CSV quoting for a
    table)."""
    if source.kind == "csv":
        return next(csv.reader([text], delimiter=source.delimiter), [])
    return text.split(source.delimiter)


def _trec_skips(text: str) -> bool:
    """:func:`_trec_rows` leaves this line out: a comment (it starts with ``#``) or blank."""
    return text.startswith("#") or _WORDS.search(text) is None


def _value_problem(value: str, column: str) -> str | None:
    """Why a text run's ``score`` (or ``rank``) field ``value`` makes its line a bad row, as the
    loaders say it; None for a value DuckDB reads."""
    if "_" in value:
        return (f"{column} {value!r} is not a number (digit separators '_' are not part of the "
                "number syntax)")  # fmt: skip
    if _HEX_FLOAT.fullmatch(value):
        return (f"{column} {value!r} is a hexadecimal float, which this engine does not read "
                "(--engine memory reads it as trec_eval does)")  # fmt: skip
    try:
        parsed = float(value)
    except ValueError:
        return f"{column} {value!r} is not a number"
    if not value.isascii() or not math.isfinite(parsed):  # (Python reads non-ASCII digits)
        return f"{column} {_shown(value, column)} is not a finite number"
    if column == "rank" and (parsed != math.floor(parsed) or abs(parsed) >= RANK_LIMIT):
        return f"rank {_shown(value, column)} {RANK_RULE}"
    return None


def _shown(value: str, column: str) -> str:
    """``value`` as the loaders show it: a score as the text it is, a rank as the number read
    from it (``1.5``, ``9007199254740993``)."""
    if column != "rank" or not value.isascii():
        return repr(value)
    return repr(int(value)) if C_INT.fullmatch(value) else repr(float(value))


def _raise_bad_line(source: src.RunSource) -> None:
    """Raise the InputError naming the first line of a text run whose score is not finite."""
    opener = gzip.open if source.path.name.lower().endswith(".gz") else open
    field = _TREC_COLUMNS.index("score") if source.kind == "trec" else None
    with opener(source.path, "rt", encoding="utf-8-sig", errors="replace") as f:
        for number, line in enumerate(f, start=1):  # error path only: find the line
            text = line.rstrip("\r\n")
            if not text or (source.kind == "trec" and _trec_skips(text)):
                continue
            parts = _fields(text, source)
            if field is None:  # the header of a CSV table
                field = [p.strip() for p in parts].index(
                    "score" if source.score == "score" else "rank"
                )
                continue
            found = len(_WORDS.findall(text)) if source.kind == "trec" else None
            if found is not None and found < len(_TREC_COLUMNS):
                raise InputError(source.path, number, f"expected {len(_TREC_COLUMNS)} fields "
                                 f"'{src.TREC_USAGE}', found {found}")  # fmt: skip
            if source.kind == "trec" and _split_otherwise(parts):
                raise InputError(source.path, number, "a field is empty or holds whitespace: "
                                 "trec_eval splits this line otherwise than at the delimiter "
                                 "(--engine memory reads it as trec_eval does)")  # fmt: skip
            column = "score" if source.kind == "trec" or source.score == "score" else "rank"
            problem = _value_problem(parts[field] if field < len(parts) else "", column)
            if problem:
                raise InputError(source.path, number, problem)
    raise InputError(source.path, None, "a row has a missing id or a score that is not finite")
