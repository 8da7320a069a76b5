"""Loading tags, notes and judgements from a CSV file into a bundle's annotation store
(``python -m analysis notes import``).

The CSV is the one the notes export writes (:meth:`AnnotationStore.export_csv`), so an export
loads back as it was; a reviewer's own list of judgements needs only some of its columns::

    kind,dataset,query_id,doc_id,value,author,updated
    tag,stark-mag,q7,,label error,ana,2026-12-01T10:00:00Z
    note,stark-mag,q7,,"gold misses the 2019 paper",ana,2026-12-01T10:00:00Z
    judgement,stark-mag,q7,p123,1,ana,2026-12-01T10:00:00Z

Columns: ``kind`` (``tag``, ``note`` or ``judgement``), ``query_id`` and ``value`` are
required; ``doc_id`` is required for judgements and must be empty otherwise; ``dataset`` may be
absent or empty (the dataset imported into), and rows naming another dataset are skipped and
counted (an export of a whole bundle loads one dataset at a time); ``author`` and ``updated``
are ignored: every row is written as the author given to the import, now. A column named
twice is refused (which one is meant is unknown); other columns are ignored.

Each row is checked before anything is written: a known kind, a query of the dataset, a tag of
1-100 characters, a non-empty note of at most 20,000 characters, a relevance that is a
non-negative ASCII integer (``atol``'s syntax, as in qrels) of at most 2**63 - 1 (a 64-bit
integer, as qrels and SQLite hold), no row contradicting another (two notes, or two
relevances, for the same query or pair). Every bad row is reported with its line;
when there is one, nothing is written. A value the export protected against spreadsheet formulas
(a leading ``'``, after any other leading ``'``, before ``=``, ``+``, ``-``, ``@``, a tab or a
carriage return) is read without that one quote, so ``''=x`` is the text ``'=x`` as stored.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path

from analysis.core.errors import InputError
from analysis.io._text import read_text
from analysis.io.annotations import MAX_NOTE, MAX_TAG, AnnotationStore
from analysis.io.csvsafe import unneutralize
from analysis.io.trec import INT64_MAX, c_int

__all__ = ["AnnotationRow", "ImportProblems", "import_annotations_csv", "read_annotations_csv"]

KINDS = ("tag", "note", "judgement")
REQUIRED = ("kind", "query_id", "value")
MAX_SHOWN = 50  # bad rows listed one per line; more are counted


@dataclass(frozen=True)
class AnnotationRow:
    """One checked row: ``line`` is the CSV line where the row starts."""

    line: int
    kind: str
    query_id: str
    doc_id: str
    value: str


class ImportProblems(InputError):
    """Bad rows of an annotations CSV: ``problems`` holds one line per bad row."""

    def __init__(self, path: str | Path, problems: list[str]) -> None:
        self.problems = list(problems)
        super().__init__(path, None, f"{len(problems)} bad row(s): nothing was imported")

    def lines(self) -> list[str]:
        """The problems, at most :data:`MAX_SHOWN` of them, then a count of the rest."""
        shown = self.problems[:MAX_SHOWN]
        rest = len(self.problems) - len(shown)
        return [*shown, *([f"{self.source}: ... and {rest} more bad row(s)"] if rest else [])]


def _records(text: str, path: str | Path) -> Iterator[tuple[int, list[str]]]:
    """(starting line, fields) of every CSV record (a quoted note may span lines).

    Raises:
        InputError: a quote never closed (it would take every later row into one field), or
            text after a closing quote (``"a" b``), with the line."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    start = 1
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            if "unexpected end of data" in str(exc):
                raise InputError(path, start, "a quoted field starts on this line and is not "
                                 "closed by the end of the file") from None  # fmt: skip
            raise InputError(path, reader.line_num, f"bad CSV: {exc}") from None
        yield start, fields
        start = reader.line_num + 1


def _plain(value: str) -> str:
    """A value without the quote a formula-safe export put before it
    (:func:`analysis.io.csvsafe.unneutralize`: ``'=x`` -> ``=x``, ``''=x`` -> ``'=x``)."""
    return str(unneutralize(value))


def _check(row: dict[str, str], queries: Collection[str] | None) -> str | None:
    """Why the row is bad, or None."""
    kind, qid, doc, value = (row.get(c, "") for c in ("kind", "query_id", "doc_id", "value"))
    if kind not in KINDS:
        return f"kind {kind!r} is not one of {', '.join(KINDS)}"
    if not qid:
        return "empty query_id"
    if queries is not None and qid not in queries:
        return f"query_id {qid!r} is not a query of the dataset"
    if kind == "judgement":
        if not doc:
            return "a judgement needs a doc_id"
        number = c_int(value.strip())
        if number is None or number < 0:
            return f"relevance {value!r} is not a non-negative integer"
        if number > INT64_MAX:
            return f"relevance {value!r} is outside the 64-bit integer range"
        return None
    if doc:
        return f"a {kind} has no doc_id (got {doc!r})"
    if kind == "tag":
        tag = " ".join(value.split())
        if not tag or len(tag) > MAX_TAG:
            return f"a tag has 1 to {MAX_TAG} characters (got {len(tag)})"
    elif not value.strip() or len(value) > MAX_NOTE:
        return f"a note has 1 to {MAX_NOTE} characters (got {len(value.strip())})"
    return None


def _conflict(row: AnnotationRow, seen: dict[tuple, AnnotationRow]) -> str | None:
    """A second note of one query, or a second relevance of one pair, that differs."""
    if row.kind == "tag":
        return None
    key = (row.kind, row.query_id, row.doc_id)
    first = seen.setdefault(key, row)
    if first is row or first.value.strip() == row.value.strip():
        return None
    what = "note of this query" if row.kind == "note" else "judgement of this pair"
    return f"another {what} is on line {first.line}"


def read_annotations_csv(
    path: str | Path, dataset: str, queries: Collection[str] | None = None
) -> tuple[list[AnnotationRow], int]:
    """The checked rows of ``dataset`` in the CSV, and how many rows name another dataset.

    ``queries``: the dataset's query ids (``None``: any id).

    Raises:
        InputError: the file cannot be read, lacks a required column (line 1) or has a broken
            quote (:func:`_records`).
        ImportProblems: some rows are bad (one line each).
    """
    records = _records(read_text(path), path)
    first = next(records, None)
    if first is None:
        raise InputError(path, None, "the file holds no data")
    header = [h.strip() for h in first[1]]
    twice = [h for i, h in enumerate(header) if h and h in header[:i]]  # "" is no column
    if twice:
        raise InputError(path, first[0], f"the column {twice[0]!r} is named twice")
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise InputError(path, first[0], f"missing column(s) {', '.join(missing)} (kind, "
                         "query_id, doc_id, value: the notes export's columns)")  # fmt: skip
    rows, problems, skipped = [], [], 0
    seen: dict[tuple, AnnotationRow] = {}
    for line, fields in records:
        if not any(f.strip() for f in fields):
            continue  # a blank line
        if len(fields) != len(header):
            problems.append(f"{path}:{line}: {len(fields)} fields, the header has {len(header)}")
            continue
        raw = {h: _plain(v) for h, v in zip(header, fields, strict=True)}
        raw = {**raw, **{c: raw.get(c, "").strip() for c in ("kind", "dataset", "query_id")}}
        if raw.get("dataset", "") not in ("", dataset):
            skipped += 1
            continue
        why = _check(raw, queries)
        row = AnnotationRow(line, raw["kind"], raw["query_id"], raw.get("doc_id", ""), raw["value"])
        why = why or _conflict(row, seen)
        if why:
            problems.append(f"{path}:{line}: {why}")
        else:
            rows.append(row)
    if problems:
        raise ImportProblems(path, problems)
    return rows, skipped


def import_annotations_csv(
    store: AnnotationStore,
    path: str | Path,
    dataset: str,
    *,
    author: str,
    queries: Collection[str] | None = None,
) -> dict[str, int]:
    """Check every row of the CSV (:func:`read_annotations_csv`), then write them all as
    ``author`` in one transaction (:meth:`AnnotationStore.write_all`): a full disk or a stop
    midway writes none of them.

    Returns the counts ``{"tag": n, "note": n, "judgement": n, "skipped": n}`` (``skipped``:
    rows of other datasets). Nothing is written when a row is bad or the write fails.

    Raises:
        InputError, ImportProblems: as :func:`read_annotations_csv`; an author name too long;
            a database that cannot be written (naming the database, not the CSV).
    """
    from analysis.io.annotations import clean_author

    try:
        who = clean_author(author)
    except ValueError as exc:
        raise InputError("--author", None, str(exc)) from None
    rows, skipped = read_annotations_csv(path, dataset, queries)
    changes = [
        (r.kind, r.query_id, r.doc_id, c_int(r.value.strip()) if r.kind == "judgement" else r.value)
        for r in rows
    ]
    try:
        store.write_all(dataset, changes, author=who)
    except InputError:  # the database cannot be written: its error names it, not the CSV
        raise
    except ValueError as exc:  # a value the row checks let through: still one line, no write
        raise InputError(path, None, str(exc)) from None
    counts = {kind: sum(r.kind == kind for r in rows) for kind in KINDS}
    return {**counts, "skipped": skipped}
