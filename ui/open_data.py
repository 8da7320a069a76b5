"""Glue for the Open data page: folders under the data roots, a cached scan of a folder, where
bundles are written, and opening a written bundle.

Bundles made on the page are written to ``<first writable data root>/_opened/<name>/`` (never
beside or into the input files' folder unless that folder is the root itself, and never over an
input file); ``_opened`` folders are skipped when folders are listed and scanned.

Every folder listed, file scanned, layout imported and file copied is confined to the data
roots (:mod:`analysis.io.confine`): a symlinked folder leading out is not offered, a symlinked
file leading out is listed as refused and never read, and a folder holding such a link cannot
be imported by a layout importer.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import streamlit as st

from analysis.io import importers
from analysis.io.confine import (
    OUTSIDE,
    is_confined,
    list_files,
    list_folders,
    outside_links,
    require_confined,
)
from analysis.io.importers import ImportResult
from analysis.io.importers.scan import MAX_DEPTH as SCAN_DEPTH
from analysis.io.importers.scan import MAX_FILES, SKIP_DIRS, SKIP_NAMES, Scan, survey
from ui import data

OPENED = "_opened"
MAX_DEPTH = 3
WRITTEN = "_open_data_written"
STAMPED = 2000  # files whose stamps key the cached scan


def _walk(root: Path) -> list[Path]:
    """Folders under ``root`` up to three levels deep, confined to the data roots (hidden,
    ``_``-prefixed and ``__pycache__`` folders pruned, so a large tree is not walked to the
    bottom; a symlinked folder leading out of the roots is left out)."""
    return list_folders(root, data.data_roots(), max_depth=MAX_DEPTH, skip_dirs=("_*",))


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
    """The first data root this process may write to whose ``_opened`` folder (when it exists)
    stays inside it (a ``_opened`` link leading out is never written through), or None."""
    return next(
        (
            r
            for r in data.data_roots()
            if os.access(r, os.W_OK | os.X_OK) and is_confined(r / OPENED, [r])
        ),
        None,
    )


def safe_name(text: str) -> str:
    """A folder and dataset name: letters, digits, ``.``, ``_``, ``-`` (``bundle`` when empty)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.") or "bundle"


def output_folder(name: str) -> Path | None:
    """Where a bundle called ``name`` is written (None without a writable data root)."""
    root = writable_root()
    return None if root is None else root / OPENED / safe_name(name)


@st.cache_data(ttl=3600, max_entries=64, show_spinner="Reading the files…")
def _scan(folder: str, key: tuple) -> tuple[pd.DataFrame, int, bool]:
    del key
    found: Scan = survey(folder, data.data_roots())
    rows = [
        {
            "file": r.rel,
            "format": r.format or "unknown",
            "roles": ", ".join(r.roles),
            "rows": r.rows,
            "problem": r.problem or "",
        }
        for r in found.reports
    ]
    table = pd.DataFrame(rows, columns=["file", "format", "roles", "rows", "problem"])
    return table, found.total, found.more


def scan(folder: Path) -> tuple[pd.DataFrame, int, bool]:
    """``file, format, roles, rows, problem`` of the data files in ``folder`` that are shown
    (the first :data:`analysis.io.importers.scan.MAX_FILES`, and refused links), how many data
    files it holds, and whether that count is a lower bound. Cached; the key is the stamps of
    the first files, so an edited file is read again."""
    listing = list_files(
        folder, data.data_roots(), max_depth=SCAN_DEPTH, max_files=STAMPED,
        skip_dirs=SKIP_DIRS, skip_names=SKIP_NAMES,
    )  # fmt: skip
    return _scan(str(folder), (data.stamp(*listing.files), listing.total, tuple(listing.refused)))


def shown_note(files: pd.DataFrame, total: int, more: bool) -> str | None:
    """ "300 of 10,001 data files shown (...)" when the scan left files out, else None."""
    shown = int((files["problem"] != OUTSIDE).sum()) if len(files) else 0
    if not more and total <= shown:
        return None
    count = f"more than {total:,}" if more else f"{total:,}"
    return (
        f"{shown:,} of {count} data files shown (the first {MAX_FILES:,} by path; a scan reads "
        "at most that many): choose a subfolder to see the others."
    )


def build_bundle(out: Path, name: str, **chosen: Sequence[Path] | Path | None) -> ImportResult:
    """:func:`analysis.io.importers.build_bundle` of the files chosen on the page (keyword
    arguments as there), after checking that every one is confined to the data roots.

    Raises:
        InputError: a chosen file leads out of the data roots (nothing is read), or the
            library's errors.
    """
    files = [p for v in chosen.values() for p in (v if isinstance(v, Sequence) else [v])]
    require_confined(files, data.data_roots())
    return importers.build_bundle(out, name, **chosen)  # type: ignore[arg-type]


def refused_links(folder: Path) -> list[Path]:
    """Symlinks under ``folder`` leading out of the data roots (an importer would follow them)."""
    return outside_links(folder, data.data_roots())


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
