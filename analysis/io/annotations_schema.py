"""The notes database's schema and its migrations (used by :mod:`analysis.io.annotations`).

Schema versions (``meta.schema``):

* **1**: ``tags (dataset, query_id, tag, author, created)``, ``notes (dataset, query_id, note,
  author, updated)``, ``judgements (dataset, query_id, doc_id, relevance, author, updated)``;
  the writers of version 1 left ``author`` empty.
* **2** (current): version 1 plus ``history``, one row per change that took effect:
  ``id, kind, dataset, query_id, doc_id, value, author, at`` (kind = ``tag`` / ``note`` /
  ``judgement``; ``value`` = the tag, the note or the relevance as text, NULL when the tag,
  note or judgement was removed; ``doc_id`` is ``''`` for tags and notes; ``at`` in seconds
  since the epoch). The current rows keep who wrote them last and when; the history keeps
  who changed what before.

Migrating 1 -> 2 keeps every row: it creates ``history`` and seeds it with one row per
existing tag, note and judgement (their author, empty when unknown, and time). A table of an
older draft without ``author`` gets the column (empty). The migration runs in the same
``BEGIN IMMEDIATE`` transaction that reads the version, so two processes opening an old
database at once migrate it once. A database of a newer version is refused (one line), never
rewritten.
"""

from __future__ import annotations

import sqlite3

__all__ = ["SCHEMA_VERSION", "TooNew", "migrate"]

SCHEMA_VERSION = 2

_TABLES = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tags (
    dataset TEXT NOT NULL, query_id TEXT NOT NULL, tag TEXT NOT NULL,
    author TEXT NOT NULL DEFAULT '', created REAL NOT NULL,
    PRIMARY KEY (dataset, query_id, tag));
CREATE TABLE IF NOT EXISTS notes (
    dataset TEXT NOT NULL, query_id TEXT NOT NULL, note TEXT NOT NULL,
    author TEXT NOT NULL DEFAULT '', updated REAL NOT NULL,
    PRIMARY KEY (dataset, query_id));
CREATE TABLE IF NOT EXISTS judgements (
    dataset TEXT NOT NULL, query_id TEXT NOT NULL, doc_id TEXT NOT NULL,
    relevance INTEGER NOT NULL, author TEXT NOT NULL DEFAULT '', updated REAL NOT NULL,
    PRIMARY KEY (dataset, query_id, doc_id));
CREATE TABLE IF NOT EXISTS history (
    id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL,
    dataset TEXT NOT NULL, query_id TEXT NOT NULL, doc_id TEXT NOT NULL DEFAULT '',
    value TEXT, author TEXT NOT NULL DEFAULT '', at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS history_query ON history (dataset, query_id);
"""

_SEED_HISTORY = """
INSERT INTO history (kind, dataset, query_id, doc_id, value, author, at)
SELECT 'tag', dataset, query_id, '', tag, author, created FROM tags
UNION ALL
SELECT 'note', dataset, query_id, '', note, author, updated FROM notes
UNION ALL
SELECT 'judgement', dataset, query_id, doc_id, CAST(relevance AS TEXT), author, updated
FROM judgements
ORDER BY 7
"""


class TooNew(sqlite3.DatabaseError):
    """The database was written by a newer schema than this version reads."""


def _version(con: sqlite3.Connection) -> int | None:
    """The stored schema version; ``None`` for a database without one (new or empty)."""
    has_meta = con.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
    ).fetchone()
    if not has_meta:
        return None
    row = con.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    if row is None:
        return None
    try:
        return int(row[0])
    except (TypeError, ValueError):
        raise sqlite3.DatabaseError(f"unreadable schema version {row[0]!r}") from None


def _columns(con: sqlite3.Connection, table: str) -> set[str]:
    return {str(r[1]) for r in con.execute(f"PRAGMA table_info({table})")}


def migrate(con: sqlite3.Connection) -> int:
    """Bring the database on ``con`` (autocommit mode, inside the caller's ``BEGIN
    IMMEDIATE``) to :data:`SCHEMA_VERSION`; returns the version found (0 = new).

    Raises:
        TooNew: the stored version is newer than :data:`SCHEMA_VERSION`.
    """
    found = _version(con)
    if found is not None and found > SCHEMA_VERSION:
        raise TooNew(
            f"written by a newer version (schema {found}; this version reads up to "
            f"{SCHEMA_VERSION})"
        )
    if found == SCHEMA_VERSION:
        return found
    had_tables = bool(
        con.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'tags'").fetchone()
    )
    for statement in _TABLES.split(";"):
        if statement.strip():
            con.execute(statement)
    for table in ("tags", "notes", "judgements"):  # drafts older than version 1
        if "author" not in _columns(con, table):
            con.execute(f"ALTER TABLE {table} ADD COLUMN author TEXT NOT NULL DEFAULT ''")
    if had_tables and not con.execute("SELECT 1 FROM history LIMIT 1").fetchone():
        con.execute(_SEED_HISTORY)
    con.execute(
        "INSERT INTO meta (key, value) VALUES ('schema', ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (str(SCHEMA_VERSION),),
    )
    return found or 0
