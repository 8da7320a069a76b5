"""What users write about queries, kept in SQLite: tags, notes and per-document judgements.

One database per bundle, in a writable folder the user configures and never inside the input
data: ``RETRIEVAL_DASHBOARD_NOTES_DIR`` when set, else ``$XDG_DATA_HOME/retrieval-dashboard``,
else ``~/.local/share/retrieval-dashboard``. The file name is derived from the bundle folder's
resolved path: ``<folder name>-<first 16 hex digits of sha256(path)>.sqlite3`` (the folder name
cut to 222 characters, so the name and SQLite's ``-journal`` file fit the 255-byte limit), so two
bundles with the same folder name get different databases and the same bundle always finds its
own.
A notes folder inside the bundle is refused.

Tables (every row keyed by ``dataset`` and ``query_id``; ids are text; the schema and its
migrations are in :mod:`analysis.io.annotations_schema`):

* ``tags (dataset, query_id, tag, author, created)``: free tags or the suggested ones
  (:data:`SUGGESTED_TAGS`); a tag is set once per query (by its first author).
* ``notes (dataset, query_id, note, author, updated)``: one note per query (empty = deleted);
  ``author`` is who saved it last. Its *version* is the id of its latest ``history`` row (0:
  never written): :meth:`AnnotationStore.set_note` with ``expected_version`` saves only over
  the version its writer was shown, else raises :class:`NoteConflict` (optimistic
  concurrency: a note nobody saw is never replaced silently; every version stays in the
  history).
* ``judgements (dataset, query_id, doc_id, relevance, author, updated)``: a reviewer's relevance
  of one document for one query (0 = not relevant, 1 = relevant, 2 = highly relevant, ...);
  the latest judgement of a pair holds, ``author`` is who made it.
* ``history``: every change that took effect (added, changed, removed), with its author and
  time, oldest first (:meth:`AnnotationStore.history`).

Every write names its author: free text of at most 100 characters, whitespace folded;
empty means :data:`ANONYMOUS`. Tags, notes and authors never hold a NUL character (refused with
a ValueError): what is stored is text every export can write. Rows written before authors were
recorded have an empty author (shown as unknown). :func:`default_author` is the name a session
starts with.

Several users of one server (threads) and several processes may write at once: the database is
in WAL mode (readers never block the writer), every connection waits up to ``busy_timeout``
(10 s) for a lock, every write is one short ``BEGIN IMMEDIATE`` transaction on its own
connection (many rows at once, :meth:`AnnotationStore.write_all`, are one transaction: all or
none), and a write still refused as busy is retried a few times. Nothing is cached in
memory: every read sees every committed write.

CSV export (:meth:`AnnotationStore.export_csv`): cells a spreadsheet would run as a formula
get a leading ``'`` (:mod:`analysis.io.csvsafe`); :func:`read_export_csv` (or
:func:`unneutralize` per cell) reads the export back with every text as it was stored.

Amendments never replace the strict qrels: :func:`analysis.io.amended.amended_qrels` returns a
new table (judged pairs override the qrels' relevance, new pairs are added) for computing
metrics *with amendments* beside the strict ones.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import os
import re
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pandas as pd

from analysis.core import paths
from analysis.core.errors import InputError
from analysis.io.annotations_schema import SCHEMA_VERSION, TooNew, migrate
from analysis.io.csvsafe import neutralize_row, unneutralize

__all__ = [
    "ANONYMOUS",
    "AUTHOR_ENV",
    "NOTES_ENV",
    "SCHEMA_VERSION",
    "SUGGESTED_TAGS",
    "AnnotationStore",
    "NoteConflict",
    "NoteState",
    "clean_author",
    "database_path",
    "default_author",
    "notes_dir",
    "read_export_csv",
    "unneutralize",
    "utc_text",
]

_T = TypeVar("_T")
NOTES_ENV = "RETRIEVAL_DASHBOARD_NOTES_DIR"
AUTHOR_ENV = "RETRIEVAL_DASHBOARD_AUTHOR"
ANONYMOUS = "anonymous"
MAX_AUTHOR = 100
SUGGESTED_TAGS: tuple[str, ...] = ("label error", "ambiguous query", "needs relations")
MAX_TAG = 100
MAX_NOTE = 20_000
#: The largest relevance (a 64-bit integer, as qrels and SQLite hold).
MAX_RELEVANCE = (1 << 63) - 1
BUSY_TIMEOUT_MS = 10_000
_RETRIES = 8


def default_author() -> str:
    """The author name a session starts with: ``RETRIEVAL_DASHBOARD_AUTHOR`` when set, else
    the operating-system user running the server, else :data:`ANONYMOUS` (also when the OS
    user's name is no author name: over 100 characters). (On a server shared by several
    people the OS user is the server's: set the variable, or each user types a name.)

    Raises:
        InputError: the variable holds no author name (over 100 characters, or a NUL),
            naming the variable."""
    raw = os.environ.get(AUTHOR_ENV, "").strip()
    if raw:
        try:
            return clean_author(raw)
        except ValueError as exc:
            raise InputError(AUTHOR_ENV, None, str(exc)) from None
    try:
        import getpass

        return clean_author(getpass.getuser())
    except (OSError, KeyError, ImportError, ValueError):  # no user name (an unnamed uid)
        return ANONYMOUS


def utc_text(seconds: float) -> str:
    """A time stamp (seconds since the epoch) as ISO 8601 UTC text, e.g.
    ``2026-12-01T11:02:03Z``."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(float(seconds)))


def _no_nul(text: str, what: str) -> str:
    if "\0" in text:
        raise ValueError(f"{what} cannot hold a NUL character")
    return text


def clean_author(author: object) -> str:
    """An author name as stored: whitespace folded, empty -> :data:`ANONYMOUS`.

    Raises:
        ValueError: longer than 100 characters, or holding a NUL character.
    """
    text = " ".join(_no_nul(str(author if author is not None else ""), "an author").split())
    if len(text) > MAX_AUTHOR:
        raise ValueError(f"an author name has at most {MAX_AUTHOR} characters, got {len(text)}")
    return text or ANONYMOUS


def notes_dir() -> Path:
    """The configured notes folder (not created here)."""
    raw = os.environ.get(NOTES_ENV, "").strip()
    if raw:
        return Path(raw).expanduser()
    base = os.environ.get("XDG_DATA_HOME", "").strip()
    root = Path(base).expanduser() if base else Path.home() / ".local" / "share"
    return root / "retrieval-dashboard"


def database_path(bundle_root: str | Path, folder: str | Path | None = None) -> Path:
    """The annotation database of the bundle in ``bundle_root`` (module docstring).

    Raises:
        InputError: the notes folder lies inside the bundle (the input data); the message says
            to set :data:`NOTES_ENV` only when ``folder`` is not given (it came from there).
    """
    root = paths.resolve(bundle_root)
    target = paths.resolve(folder if folder is not None else notes_dir())
    if target == root or target.is_relative_to(root):
        fix = "choose a notes folder outside it" if folder is not None else f"set {NOTES_ENV}"
        raise InputError(
            target, None, f"the notes folder is inside the bundle {root} (input data); {fix}"
        )
    digest = hashlib.sha256(str(root).encode("utf-8")).hexdigest()[:16]
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", root.name).strip("._") or "bundle"
    return target / f"{name[:_MAX_NAME]}-{digest}.sqlite3"


#: The longest folder-name part of a database's file name: with ``-``, 16 hex digits,
#: ``.sqlite3`` and SQLite's ``-journal`` suffix it stays within 255 bytes, the file-name limit.
_MAX_NAME = 255 - len("-0123456789abcdef.sqlite3-journal")


def _clean_id(value: object, what: str) -> str:
    text = str(value)
    if not text or len(text) > 10_000:
        raise ValueError(f"{what} must be a non-empty string of at most 10000 characters")
    return text


def _clean_tag(tag: str) -> str:
    text = " ".join(_no_nul(str(tag), "a tag").split())
    if not text:
        raise ValueError("a tag cannot be empty")
    if len(text) > MAX_TAG:
        raise ValueError(f"a tag has at most {MAX_TAG} characters, got {len(text)}")
    return text


#: One change of the store: (sql, params, history row), see :meth:`AnnotationStore._change`.
_Change = tuple[str, tuple, tuple]
_NOTE_UPSERT = (
    "INSERT INTO notes (dataset, query_id, note, author, updated) VALUES (?, ?, ?, ?, ?) "
    "ON CONFLICT (dataset, query_id) DO UPDATE SET "
    "note = excluded.note, author = excluded.author, updated = excluded.updated"
)
_JUDGEMENT_UPSERT = (
    "INSERT INTO judgements (dataset, query_id, doc_id, relevance, author, updated) "
    "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (dataset, query_id, doc_id) DO UPDATE SET "
    "relevance = excluded.relevance, author = excluded.author, updated = excluded.updated"
)


def _tag_change(dataset: object, query_id: object, tag: str, who: str, now: float) -> _Change:
    """Tag a query (again: no change, the first author stays)."""
    ds, qid, text = _clean_id(dataset, "dataset"), _clean_id(query_id, "query_id"), _clean_tag(tag)
    return (
        "INSERT OR IGNORE INTO tags (dataset, query_id, tag, author, created) "
        "VALUES (?, ?, ?, ?, ?)",
        (ds, qid, text, who, now),
        ("tag", ds, qid, "", text, who, now),
    )


def _note_change(dataset: object, query_id: object, note: object, who: str, now: float) -> _Change:
    """Set the note of a query; a blank note deletes it."""
    text = _no_nul(str(note), "a note")
    if len(text) > MAX_NOTE:
        raise ValueError(f"a note has at most {MAX_NOTE} characters, got {len(text)}")
    ds, qid = _clean_id(dataset, "dataset"), _clean_id(query_id, "query_id")
    if not text.strip():
        delete = "DELETE FROM notes WHERE dataset = ? AND query_id = ?"
        return delete, (ds, qid), ("note", ds, qid, "", None, who, now)
    return _NOTE_UPSERT, (ds, qid, text, who, now), ("note", ds, qid, "", text, who, now)


def _judgement_change(
    key: tuple[object, object, object], relevance: int | None, who: str, now: float
) -> _Change:
    """Judge ``(dataset, query_id, doc_id)``; ``None`` removes the judgement."""
    ds, qid = _clean_id(key[0], "dataset"), _clean_id(key[1], "query_id")
    doc = _clean_id(key[2], "doc_id")
    log_key = ("judgement", ds, qid, doc)
    if relevance is None:
        delete = "DELETE FROM judgements WHERE dataset = ? AND query_id = ? AND doc_id = ?"
        return delete, (ds, qid, doc), (*log_key, None, who, now)
    if isinstance(relevance, bool) or int(relevance) != relevance or relevance < 0:
        raise ValueError(f"relevance must be a non-negative integer, got {relevance!r}")
    rel = int(relevance)
    if rel > MAX_RELEVANCE:
        raise ValueError(f"relevance {rel} is outside the 64-bit integer range")
    return _JUDGEMENT_UPSERT, (ds, qid, doc, rel, who, now), (*log_key, str(rel), who, now)


def _row_change(dataset: str, row: tuple[str, str, str, object], who: str, now: float) -> _Change:
    """The change of one ``(kind, query_id, doc_id, value)`` row of
    :meth:`AnnotationStore.write_all`."""
    kind, query_id, doc_id, value = row
    if kind == "tag":
        return _tag_change(dataset, query_id, str(value), who, now)
    if kind == "note":
        return _note_change(dataset, query_id, value, who, now)
    if kind == "judgement":
        return _judgement_change((dataset, query_id, doc_id), value, who, now)  # type: ignore[arg-type]
    raise ValueError(f"kind must be tag, note or judgement, not {kind!r}")


@dataclass(frozen=True)
class NoteState:
    """The note of one query as stored: its text (``""``: none), who saved it last and when
    (``None`` without a note) and its version (the id of its latest history row, 0 = never
    written)."""

    note: str
    author: str | None
    updated: float | None
    version: int


class NoteConflict(Exception):
    """A note save whose ``expected_version`` is not the stored one: someone saved (or
    deleted) the note after the writer was shown it. ``current`` is the stored note."""

    def __init__(self, current: NoteState) -> None:
        who = current.author or "someone"
        super().__init__(f"{who} saved a newer version of this note (version {current.version})")
        self.current = current


def _busy(exc: sqlite3.OperationalError) -> bool:
    message = str(exc).lower()
    return "locked" in message or "busy" in message


class AnnotationStore:
    """Tags, notes and judgements of one bundle, in one SQLite file (module docstring).

    Reading a store whose file does not exist yet gives empty tables and creates nothing; the
    file (and its folder) is created by the first write. An existing file is checked at once.

    Args:
        path: the database file (see :func:`database_path`).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._ready = False
        if self.path.exists():  # check an existing file now; a new one is made on first write
            self._ensure()

    def _ensure(self) -> None:
        if self._ready and self.path.exists():
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(self.path.parent, None, f"cannot create: {exc.strerror}") from None
        self._retry(self._init)
        self._ready = True

    @classmethod
    def for_bundle(
        cls, bundle_root: str | Path, folder: str | Path | None = None
    ) -> AnnotationStore:
        """The store of the bundle in ``bundle_root`` under the configured notes folder."""
        return cls(database_path(bundle_root, folder))

    # ------------------------------------------------------------------ connections

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        try:
            con = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        except sqlite3.Error as exc:
            raise InputError(self.path, None, f"cannot open the notes database: {exc}") from None
        try:
            con.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            con.execute("PRAGMA synchronous = NORMAL")
            yield con
        finally:
            con.close()

    def _retry(self, action: Callable[..., _T], *args: object) -> _T:
        for attempt in range(_RETRIES):
            try:
                return action(*args)
            except sqlite3.OperationalError as exc:
                if not _busy(exc) or attempt == _RETRIES - 1:
                    raise InputError(self.path, None, f"notes database: {exc}") from None
                time.sleep(0.05 * (attempt + 1))
            except TooNew as exc:
                raise InputError(self.path, None, f"notes database {exc}") from None
            except sqlite3.DatabaseError as exc:
                raise InputError(self.path, None, f"not a notes database: {exc}") from None
        raise AssertionError("unreachable")  # pragma: no cover

    def _init(self) -> None:
        with self._connect() as con:
            mode = con.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise sqlite3.OperationalError(f"database is locked (journal mode {mode})")
            con.execute("BEGIN IMMEDIATE")
            try:
                migrate(con)
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise

    def _transaction(self, body: Callable[[sqlite3.Connection], _T]) -> _T:
        """``body(con)`` inside one ``BEGIN IMMEDIATE`` transaction (committed when it returns,
        rolled back when it raises), retried while the database is busy."""
        self._ensure()

        def run() -> _T:
            with self._connect() as con:
                con.execute("BEGIN IMMEDIATE")
                try:
                    result = body(con)
                    con.execute("COMMIT")
                except BaseException:
                    con.execute("ROLLBACK")
                    raise
                return result

        return self._retry(run)

    @staticmethod
    def _change(con: sqlite3.Connection, sql: str, params: tuple, log: tuple) -> int | None:
        """Run one change and, when it took effect, its ``history`` row (``kind, dataset,
        query_id, doc_id, value, author, at``); returns that row's id (None: no change)."""
        if con.execute(sql, params).rowcount <= 0:
            return None
        return con.execute(
            "INSERT INTO history (kind, dataset, query_id, doc_id, value, author, at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            log,
        ).lastrowid

    def _write(self, sql: str, params: tuple, log: tuple) -> None:
        """Run one change and its history row (see :meth:`_change`) in one transaction."""
        self._transaction(lambda con: self._change(con, sql, params, log))

    def _read(self, sql: str, params: tuple, columns: list[str]) -> pd.DataFrame:
        def run() -> list[tuple]:
            with self._connect() as con:
                try:
                    return con.execute(sql, params).fetchall()
                except sqlite3.OperationalError as exc:
                    if "no such table" in str(exc):  # created by a writer a moment ago
                        return []
                    raise

        rows = self._retry(run) if self.path.exists() else []
        frame = pd.DataFrame(rows, columns=columns)
        for c in ("dataset", "query_id", "doc_id", "tag", "note", "author"):
            if c in frame.columns:
                frame[c] = frame[c].astype("str")
        return frame

    @staticmethod
    def _where(dataset: str | None, query_id: str | None) -> tuple[str, tuple]:
        clauses, params = [], []
        if dataset is not None:
            clauses.append("dataset = ?")
            params.append(str(dataset))
        if query_id is not None:
            clauses.append("query_id = ?")
            params.append(str(query_id))
        return (" WHERE " + " AND ".join(clauses) if clauses else ""), tuple(params)

    # ------------------------------------------------------------------ tags

    def add_tag(self, dataset: str, query_id: str, tag: str, author: str = ANONYMOUS) -> None:
        """Tag a query (again: no change, the first author stays). Raises ValueError on an
        empty or overlong tag or author."""
        self._write(*_tag_change(dataset, query_id, tag, clean_author(author), time.time()))

    def remove_tag(self, dataset: str, query_id: str, tag: str, author: str = ANONYMOUS) -> None:
        """Remove a tag of a query (absent: no change)."""
        ds, qid, text = str(dataset), str(query_id), _clean_tag(tag)
        self._write(
            "DELETE FROM tags WHERE dataset = ? AND query_id = ? AND tag = ?",
            (ds, qid, text),
            ("tag", ds, qid, "", None, clean_author(author), time.time()),
        )

    def tags(self, dataset: str | None = None, query_id: str | None = None) -> pd.DataFrame:
        """``dataset, query_id, tag, author, created`` rows, oldest first."""
        where, params = self._where(dataset, query_id)
        return self._read(
            f"SELECT dataset, query_id, tag, author, created FROM tags{where} "
            "ORDER BY created, tag",
            params,
            ["dataset", "query_id", "tag", "author", "created"],
        )

    # ------------------------------------------------------------------ notes

    def set_note(
        self,
        dataset: str,
        query_id: str,
        note: str,
        author: str = ANONYMOUS,
        *,
        expected_version: int | None = None,
    ) -> int:
        """Set the note of a query; an empty (blank) note deletes it. Returns the note's version
        after the save.

        ``expected_version``: the version the writer was shown (:meth:`note_state`; 0 = no
        note ever). When given and the stored version differs, nothing is written and
        :class:`NoteConflict` is raised with the stored note; ``None`` saves unconditionally.

        Raises:
            ValueError: a note longer than 20,000 characters or holding a NUL character.
            NoteConflict: see ``expected_version``.
        """
        sql, params, log = _note_change(dataset, query_id, note, clean_author(author), time.time())
        ds, qid = params[0], params[1]

        def body(con: sqlite3.Connection) -> int:
            current = self._note_state(con, ds, qid)
            if expected_version is not None and current.version != int(expected_version):
                raise NoteConflict(current)
            changed = self._change(con, sql, params, log)
            return current.version if changed is None else int(changed)

        return self._transaction(body)

    @staticmethod
    def _note_state(con: sqlite3.Connection, dataset: str, query_id: str) -> NoteState:
        row = con.execute(
            "SELECT (SELECT COALESCE(MAX(id), 0) FROM history WHERE kind = 'note' AND "
            "dataset = ?1 AND query_id = ?2), n.note, n.author, n.updated "
            "FROM (SELECT 1) LEFT JOIN notes AS n ON n.dataset = ?1 AND n.query_id = ?2",
            (dataset, query_id),
        ).fetchone()
        version, note, who, updated = row
        return NoteState(
            note=str(note) if note is not None else "",
            author=None if note is None else str(who),
            updated=None if updated is None else float(updated),
            version=int(version),
        )

    def note_state(self, dataset: str, query_id: str) -> NoteState:
        """The stored note of a query with its author, time and version (one consistent read;
        an empty state, version 0, before the database exists)."""
        if not self.path.exists():
            return NoteState("", None, None, 0)

        def run() -> NoteState:
            with self._connect() as con:
                try:
                    return self._note_state(con, str(dataset), str(query_id))
                except sqlite3.OperationalError as exc:
                    if "no such table" in str(exc):  # created by a writer a moment ago
                        return NoteState("", None, None, 0)
                    raise

        return self._retry(run)

    def note(self, dataset: str, query_id: str) -> str:
        """The note of a query ("" when there is none)."""
        found = self.notes(dataset, query_id)
        return str(found["note"].iloc[0]) if len(found) else ""

    def notes(self, dataset: str | None = None, query_id: str | None = None) -> pd.DataFrame:
        """``dataset, query_id, note, author, updated`` rows."""
        where, params = self._where(dataset, query_id)
        return self._read(
            f"SELECT dataset, query_id, note, author, updated FROM notes{where} "
            "ORDER BY dataset, query_id",
            params,
            ["dataset", "query_id", "note", "author", "updated"],
        )

    # ------------------------------------------------------------------ judgements

    def set_judgement(
        self,
        dataset: str,
        query_id: str,
        doc_id: str,
        relevance: int | None,
        author: str = ANONYMOUS,
    ) -> None:
        """Judge a document for a query (``None`` removes the judgement).

        Raises:
            ValueError: relevance not an integer (or a negative one, or one past 2**63 - 1: a
                64-bit integer), author too long.
        """
        key = (dataset, query_id, doc_id)
        self._write(*_judgement_change(key, relevance, clean_author(author), time.time()))

    def write_all(
        self,
        dataset: str,
        changes: Iterable[tuple[str, str, str, object]],
        author: str = ANONYMOUS,
    ) -> int:
        """Write many annotations of one dataset in one transaction: all of them or none (a bad
        value, a full disk, an I/O error or a stop midway leaves the store as it was).

        ``changes``: ``(kind, query_id, doc_id, value)`` rows -- ``("tag", q, "", tag)``,
        ``("note", q, "", text)`` (a blank note deletes), ``("judgement", q, doc, relevance)``
        (``None`` removes), applied in order as :meth:`add_tag`, :meth:`set_note` and
        :meth:`set_judgement` would. Every value is checked before anything is written.
        Returns how many changes took effect (a tag a query already has is none).

        Raises:
            ValueError: an unknown kind, a bad id, tag, note, relevance or author.
            InputError: the database cannot be written (full disk, I/O error, too new).
        """
        who, now = clean_author(author), time.time()
        built = [_row_change(dataset, row, who, now) for row in changes]
        if not built:  # nothing to write: no database is created for it
            return 0
        return self._transaction(
            lambda con: sum(self._change(con, *change) is not None for change in built)
        )

    def judgements(self, dataset: str | None = None, query_id: str | None = None) -> pd.DataFrame:
        """``dataset, query_id, doc_id, relevance, author, updated`` rows."""
        where, params = self._where(dataset, query_id)
        frame = self._read(
            "SELECT dataset, query_id, doc_id, relevance, author, updated FROM judgements"
            f"{where} ORDER BY dataset, query_id, doc_id",
            params,
            ["dataset", "query_id", "doc_id", "relevance", "author", "updated"],
        )
        frame["relevance"] = frame["relevance"].astype("int64")
        return frame

    def history(self, dataset: str | None = None, query_id: str | None = None) -> pd.DataFrame:
        """Every change that took effect, oldest first: ``kind, dataset, query_id, doc_id,
        value, author, at`` (``value`` None = removed)."""
        where, params = self._where(dataset, query_id)
        frame = self._read(
            f"SELECT kind, dataset, query_id, doc_id, value, author, at FROM history{where} "
            "ORDER BY id",
            params,
            ["kind", "dataset", "query_id", "doc_id", "value", "author", "at"],
        )
        value = frame["value"].astype(object)
        frame["value"] = value.where(value.notna(), None)
        return frame

    def authors(self, dataset: str | None = None) -> pd.DataFrame:
        """Who annotated, one row per author (``""`` = unknown, rows older than authors):
        ``author, tags, notes, judgements`` (current rows they wrote last), ``changes``
        (history rows) and ``last`` (ISO 8601 UTC time of their last change); most changes
        first."""
        counts = {
            "tags": self.tags(dataset)["author"].value_counts(),
            "notes": self.notes(dataset)["author"].value_counts(),
            "judgements": self.judgements(dataset)["author"].value_counts(),
        }
        history = self.history(dataset)
        counts["changes"] = history["author"].value_counts()
        frame = pd.DataFrame(counts).fillna(0).astype("int64")
        last = history.groupby("author")["at"].max()
        frame["last"] = [utc_text(last[a]) if a in last.index else "" for a in frame.index]
        frame = frame.rename_axis("author").reset_index()
        frame["author"] = frame["author"].astype("str")
        return frame.sort_values(["changes", "author"], ascending=[False, True]).reset_index(
            drop=True
        )

    # ------------------------------------------------------------------ exports

    def export_csv(self, dataset: str | None = None) -> str:
        """Every annotation as CSV text: ``kind, dataset, query_id, doc_id, value, author,
        updated`` (kind = tag / note / judgement; value = the tag, the note or the relevance;
        ``updated`` in ISO 8601 UTC). Cells a spreadsheet would run as a formula get a leading
        ``'`` and NUL characters are dropped (:mod:`analysis.io.csvsafe`); read it back with
        :func:`read_export_csv`."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(EXPORT_COLUMNS)

        def row(*cells: object) -> None:
            writer.writerow(neutralize_row(cells))

        when = utc_text
        for r in self.tags(dataset).itertuples(index=False):
            row("tag", r.dataset, r.query_id, "", r.tag, r.author, when(r.created))
        for r in self.notes(dataset).itertuples(index=False):
            row("note", r.dataset, r.query_id, "", r.note, r.author, when(r.updated))
        for r in self.judgements(dataset).itertuples(index=False):
            row("judgement", r.dataset, r.query_id, r.doc_id, r.relevance, r.author,
                when(r.updated))  # fmt: skip
        return out.getvalue()


#: The columns of :meth:`AnnotationStore.export_csv`.
EXPORT_COLUMNS = ("kind", "dataset", "query_id", "doc_id", "value", "author", "updated")


def read_export_csv(source: str | Path | io.StringIO) -> pd.DataFrame:
    """An annotations CSV written by :meth:`AnnotationStore.export_csv` (its text, a path, or a
    text buffer) as a table of text columns (:data:`EXPORT_COLUMNS`; empty cells are ``""``),
    every cell through :func:`unneutralize`: tags, notes, ids and authors exactly as stored.

    Raises:
        InputError: not such a CSV (its columns differ).
    """
    from analysis.io.csvsafe import read_csv

    name = "annotations CSV"
    if isinstance(source, str) and "\n" in source:
        buffer: io.StringIO | Path = io.StringIO(source)
    elif isinstance(source, io.StringIO):
        buffer = source
    else:
        buffer = Path(source)
        name = str(buffer)
    frame = read_csv(buffer)
    if tuple(frame.columns) != EXPORT_COLUMNS:
        raise InputError(name, 1, f"expected the columns {', '.join(EXPORT_COLUMNS)}")
    return frame
