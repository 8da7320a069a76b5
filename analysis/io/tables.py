"""Long tables in CSV/TSV, Parquet or JSON Lines with the project's column names.

Id columns (``query_id``, ``doc_id``, and any column ending in ``_id``) are read as strings, so
``"007"`` stays ``"007"``. Other columns keep their types. A CSV error names its line.

Other tools' names for the ids are read as the project's: PyTerrier's ``qid`` and ``docno``
and ranx's ``q_id`` become ``query_id`` and ``doc_id`` (when the table has no column of that
name already; PyTerrier's integer ``docid`` is left as it is). They are ids too: strings.

Typed checks (Parquet by the schema, JSON per record with its line): ``query_id``/``doc_id``
must be strings or integers (a ``list<string>`` id would otherwise be stringified and match
nothing); ``score``, ``rank`` and ``relevance`` must be numbers (a JSON string in C number syntax
is accepted, like a CSV cell); a JSON relevance must fit in int64. A column named twice (Parquet
schema, CSV header) is an error.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from analysis.core import paths
from analysis.core.engines.source import is_parquet
from analysis.core.errors import InputError
from analysis.io._text import (
    ASCII_SPACE,
    check_file,
    check_json_depth,
    head_text,
    parse_json,
    read_text,
    source_path,
)
from analysis.io.trec import INT64_MAX, INT64_MIN, c_float

VOCABULARY_IDS = ("query_id", "doc_id")
#: other tools' names of the id columns: PyTerrier (``qid``, ``docno``), ranx (``q_id``)
ID_ALIASES = {"qid": "query_id", "q_id": "query_id", "docno": "doc_id"}
NUMERIC_COLUMNS = ("score", "rank", "relevance")
_LINE_RE = re.compile(r"line (\d+)")
_QUOTE_RE = re.compile(r"EOF inside string starting at row (\d+)")


def _is_id(column: str) -> bool:
    return column in ("query_id", "doc_id", "id", *ID_ALIASES) or column.endswith("_id")


def id_strings(column: pd.Series) -> pd.Series:
    """An id column as strings, a missing value kept missing (pandas before 3.0 turns it into
    the text ``"nan"`` or ``"None"``, which would pass for an id)."""
    return column.astype("str").mask(column.isna())


def _vocabulary_name(column: str) -> str:
    return ID_ALIASES.get(column, column)


def with_vocabulary(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with PyTerrier's and ranx's id columns renamed to ``query_id``/``doc_id`` (see
    the module docstring). A table that already has the project's name keeps both columns; of
    two aliases of one id (``qid`` and ``q_id``) the first column is renamed."""
    rename: dict[str, str] = {}
    for column in frame.columns:
        target = ID_ALIASES.get(str(column))
        if target is not None and target not in frame.columns and target not in rename.values():
            rename[column] = target
    return frame.rename(columns=rename) if rename else frame


def read_table(path: str | Path) -> pd.DataFrame:
    """Read a CSV/TSV (``.csv``, ``.tsv``, ``.gz`` too), Parquet or JSONL table.

    Raises:
        InputError: unreadable file, malformed CSV/JSON (with the line), or an empty table header.
    """
    p = check_file(path)
    name = p.name.lower().removesuffix(".gz")
    if name.endswith(".parquet") or is_parquet(source_path(p)):
        return with_vocabulary(_read_parquet(p))
    if name.endswith((".jsonl", ".ndjson", ".json")):
        return with_vocabulary(_read_jsonl(p))
    return with_vocabulary(_read_csv(p, sep="\t" if name.endswith(".tsv") else None))


def _duplicates(names: list[str], path: Path, line: int | None) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise InputError(path, line, f"column {name!r} appears more than once")
        seen.add(name)


def _check_parquet_types(schema: pa.Schema, path: Path) -> None:
    """Ids are strings or integers; score and rank are numbers; relevance is a number (its
    integer value and int64 range are checked by the qrels loader)."""
    _duplicates(list(schema.names), path, None)
    for field in schema:
        kind = field.type
        if pa.types.is_dictionary(kind):
            kind = kind.value_type
        if _vocabulary_name(field.name) in VOCABULARY_IDS:
            ok = pa.types.is_string(kind) or pa.types.is_large_string(kind)
            ok = ok or pa.types.is_integer(kind)
            if not ok:
                raise InputError(
                    path,
                    None,
                    f"column {field.name} has type {field.type}; ids must be strings or integers",
                )
        elif field.name in NUMERIC_COLUMNS and not (
            pa.types.is_integer(kind) or pa.types.is_floating(kind)
        ):
            raise InputError(
                path, None, f"column {field.name} has type {field.type}; expected numbers"
            )


def _read_parquet(path: Path) -> pd.DataFrame:
    paths.check_name(path)  # Arrow opens files by UTF-8 name only
    try:
        source = source_path(path)
        _check_parquet_types(pq.read_schema(source), path)
        table = pq.read_table(source)
    except (pa.ArrowException, OSError) as exc:
        reason = re.sub(r"Could not open Parquet input source '[^']*': ", "", str(exc))
        reason = reason.splitlines()[0] if reason else type(exc).__name__
        raise InputError(path, None, f"cannot read Parquet: {reason}") from None
    frame = table.to_pandas()
    for column in frame.columns:
        if _is_id(str(column)):
            frame[column] = id_strings(frame[column])
    return frame


def _describe(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _empty(value: object) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def _check_record(record: dict, path: Path, number: int | None) -> None:
    """Typed checks of one JSON record: ids are strings or integers, score/rank/relevance
    numbers (or a string in C number syntax, as in a CSV cell), relevance within int64. Empty
    values (null) are left to the loaders, which name them as empty."""
    for key in (*VOCABULARY_IDS, *ID_ALIASES):
        value = record.get(key)
        if not _empty(value) and (isinstance(value, bool) or not isinstance(value, str | int)):
            raise InputError(
                path, number, f"{key} {_describe(value)} is not an id (a string or an integer)"
            )
    for key in NUMERIC_COLUMNS:
        value = record.get(key)
        if _empty(value) or (isinstance(value, str) and not value.strip(ASCII_SPACE)):
            continue
        number_value = c_float(value.strip(ASCII_SPACE)) if isinstance(value, str) else value
        if isinstance(number_value, bool) or not isinstance(number_value, int | float):
            raise InputError(path, number, f"{key} {_describe(value)} is not a number")
        if (
            key == "relevance"
            and isinstance(number_value, int)
            and not INT64_MIN <= number_value <= INT64_MAX
        ):
            raise InputError(
                path, number, f"relevance {value!r} is outside the 64-bit integer range"
            )


def _read_jsonl(path: Path) -> pd.DataFrame:
    rows = []
    text = read_text(path)
    stripped = text.lstrip()
    if stripped.startswith("["):  # a JSON array of records
        data = parse_json(text, path)
        rows = data if isinstance(data, list) else []
        for index, record in enumerate(rows):
            if not isinstance(record, dict):
                raise InputError(path, None, f"record {index} is not a JSON object")
            _check_record(record, path, None)
    else:
        check_json_depth(text, path)  # once for the file: one line instead of a RecursionError
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(path, number, f"invalid JSON: {exc.msg}") from None
            if not isinstance(record, dict):
                raise InputError(path, number, "expected one JSON object per line")
            _check_record(record, path, number)
            rows.append(record)
    frame = pd.DataFrame(rows)
    for column in frame.columns:
        if _is_id(str(column)):
            frame[column] = id_strings(frame[column])
    return frame


def _read_csv(path: Path, sep: str | None) -> pd.DataFrame:
    text = read_text(path)
    first = text.split("\n", 1)[0]
    if sep is None:
        sep = "\t" if first.count("\t") > first.count(",") else ","
    header = [h.strip().strip('"') for h in first.rstrip("\r").split(sep)]
    _duplicates(header, path, 1)  # pandas would rename the second one silently
    try:
        frame = pd.read_csv(
            io.StringIO(text),
            sep=sep,
            dtype=_id_dtypes(text, sep),
            keep_default_na=False,
            na_values=[""],
        )
    except pd.errors.EmptyDataError:
        raise InputError(path, 1, "the file is empty") from None
    except (pd.errors.ParserError, ValueError) as exc:
        match = _LINE_RE.search(str(exc))
        line = _record_line(text, sep, len(header)) or (int(match.group(1)) if match else None)
        reason = str(exc).split("C error: ")[-1].strip()
        quote = _QUOTE_RE.search(str(exc))
        if quote:  # an unbalanced quote: pandas names the record where the quoted field starts
            line = _record_start(text, sep, int(quote.group(1)))
            reason = 'a quoted field is never closed (unbalanced ")'
        raise InputError(path, line, f"malformed table: {reason}") from None
    frame.columns = [str(c).strip() for c in frame.columns]
    for column in frame.columns:
        if _is_id(column):
            frame[column] = id_strings(frame[column])
    return frame


def _id_dtypes(text: str, sep: str) -> dict[str, str]:
    """``{column: "str"}`` for the id columns of a CSV, keyed by the names pandas gives them: a
    header written ``query_id, doc_id`` names its second column `` doc_id`` (stripped only
    after reading), and that column must be read as text too (``007`` stays ``007``)."""
    try:
        names = pd.read_csv(io.StringIO(text), sep=sep, nrows=0).columns
    except (pd.errors.ParserError, ValueError):  # the full read names the problem
        return {}
    return {str(n): "str" for n in names if _is_id(str(n).strip())}


def _record_line(text: str, sep: str, n_fields: int) -> int | None:
    """File line where the first record with more fields than the header starts (pandas counts
    a quoted multi-line field as one line, so its own line number can be too small)."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep)
    start = 1
    try:
        for row in reader:
            if len(row) > n_fields:
                return start
            start = reader.line_num + 1
    except csv.Error:
        return None
    return None


def _record_start(text: str, sep: str, record: int) -> int | None:
    """File line where CSV record ``record`` (0-based, the header is record 0) starts."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep)
    start = 1
    try:
        for index, _ in enumerate(reader):
            if index == record:
                return start
            start = reader.line_num + 1
    except csv.Error:
        return None
    return start if record >= 0 else None


def table_columns(path: str | Path) -> list[str]:
    """Column names of a table file without reading it all (for format detection)."""
    p = check_file(path)
    name = p.name.lower().removesuffix(".gz")
    if name.endswith(".parquet") or is_parquet(source_path(p)):
        paths.check_name(p)
        try:
            return list(pq.read_schema(source_path(p)).names)
        except (pa.ArrowException, OSError) as exc:
            raise InputError(p, None, f"cannot read Parquet: {exc}") from None
    if name.endswith((".jsonl", ".ndjson", ".json")):
        frame = _read_jsonl(p)
        return list(frame.columns)
    first = head_text(p).split("\n", 1)[0].rstrip("\r")
    sep = "\t" if first.count("\t") > first.count(",") else ","
    return [h.strip().strip('"') for h in first.split(sep)]
