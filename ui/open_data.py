"""Glue for the Open data page: folders under the data roots, a cached scan of a folder, where
bundles are written, and opening a written bundle.

Bundles made on the page are written to ``<first writable data root>/_opened/<name>/`` (never
beside or into the input files' folder unless that folder is the root itself, and never over an
input file); ``_opened`` folders are skipped when folders are listed and scanned.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pandas as pd
import streamlit as st

from analysis.io.importers.scan import scan_folder
from ui import data

OPENED = "_opened"
MAX_DEPTH = 3
WRITTEN = "_open_data_written"


def _walk(root: Path) -> list[Path]:
    """Folders under ``root`` up to three levels deep (hidden, ``_``-prefixed and
    ``__pycache__`` folders pruned, so a large tree is not walked to the bottom)."""
    found = [root]
    for current, dirs, _ in os.walk(root):
        depth = len(Path(current).relative_to(root).parts)
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
        if depth >= MAX_DEPTH:
            dirs[:] = []
        found += [Path(current) / d for d in dirs]
    return sorted(found)


def folders() -> dict[str, Path]:
    """Folder id -> folder for every folder up to three levels under each data root (hidden,
    ``__pycache__`` and ``_opened`` folders left out); ids as for bundles in :mod:`ui.data`."""
    roots = data.data_roots()
    out: dict[str, Path] = {}
    for root in roots:
        for folder in _walk(root):
            rel = folder.relative_to(root)
            name = rel.as_posix() if rel.parts else root.name
            out[name if len(roots) == 1 else f"{root.name}/{name}"] = folder
    return out


def writable_root() -> Path | None:
    """The first data root this process may write to, or None."""
    return next((r for r in data.data_roots() if os.access(r, os.W_OK | os.X_OK)), None)


def safe_name(text: str) -> str:
    """A folder and dataset name: letters, digits, ``.``, ``_``, ``-`` (``bundle`` when empty)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.") or "bundle"


def output_folder(name: str) -> Path | None:
    """Where a bundle called ``name`` is written (None without a writable data root)."""
    root = writable_root()
    return None if root is None else root / OPENED / safe_name(name)


@st.cache_data(ttl=3600, max_entries=64, show_spinner="Reading the files…")
def _scan(folder: str, key: tuple) -> pd.DataFrame:
    del key
    rows = [
        {
            "file": r.rel,
            "format": r.format or "unknown",
            "roles": ", ".join(r.roles),
            "rows": r.rows,
            "problem": r.problem or "",
        }
        for r in scan_folder(folder)
    ]
    return pd.DataFrame(rows, columns=["file", "format", "roles", "rows", "problem"])


def scan(folder: Path) -> pd.DataFrame:
    """``file, format, roles, rows, problem`` of each data file in ``folder`` (cached; the key is
    the files' stamps, so an edited file is read again)."""
    files = sorted(p for p in folder.rglob("*") if p.is_file() and OPENED not in p.parts)
    return _scan(str(folder), data.stamp(*files[:2000]))


#: folders whose scan :func:`prefetch_scans` queues (the first ones of the list)
PREFETCH_FOLDERS = 24


def prefetch_scans(choices: dict[str, Path]) -> None:
    """Queue the scans of the first :data:`PREFETCH_FOLDERS` folders behind every visitor's
    job (:func:`ui.jobs.prefetch`), so that choosing one lists its files at once."""
    from ui import jobs

    for folder in list(choices.values())[:PREFETCH_FOLDERS]:
        jobs.prefetch(scan, folder)


def remember(folder: Path) -> None:
    """Remember the bundle just written (for the Open button)."""
    st.session_state[WRITTEN] = str(folder)


def written() -> Path | None:
    value = st.session_state.get(WRITTEN)
    return Path(value) if value else None


def open_bundle(folder: Path) -> None:
    """Make the bundle in ``folder`` the shared selection (all its datasets) and go Home."""
    data.reload()
    bundles = data.available_bundles()
    match = next((b for b, f in bundles.items() if f == folder.resolve()), None)
    if match is None:
        st.error("The bundle is not under the data roots; it cannot be opened here.")
        return
    st.session_state["_sel_bundle"] = match
    st.session_state["_sel_datasets"] = list(data.load_bundle(bundles[match]).datasets)
    st.switch_page("app.py")
