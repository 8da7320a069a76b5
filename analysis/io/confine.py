"""Confinement: the one rule for every path the command line and the app read or list.

A path is *confined* to a set of roots when, with every symlink resolved, it is one of the
roots or lies inside one (:func:`is_confined`). Files a bundle manifest names, bundle folders
the app offers, folders and files the Open data page lists, scans, imports or copies all go
through it: a symlinked file or folder that leads out of the roots is refused -- never opened,
so no message can quote a line of it.

The walkers list a folder tree without following symlinked folders (a link inside the roots is
listed as a folder or file of its own; a link leading out is reported as refused) and stop at a
depth and a count, saying how many entries they saw:

* :func:`list_folders`: the folders under a root up to ``max_depth`` levels;
* :func:`list_files`: the files under a folder up to ``max_depth`` levels, the first
  ``max_files`` of them (sorted) kept, the rest counted up to :data:`COUNT_LIMIT` (beyond it the
  count is a lower bound: ``Listing.more``).

Hidden entries (a leading ``.``), ``__pycache__`` and the names in ``skip_dirs`` are pruned
(``"_*"`` in ``skip_dirs``: every name starting with ``_``).
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from analysis.core.errors import InputError

__all__ = [
    "COUNT_LIMIT",
    "OUTSIDE",
    "Listing",
    "is_confined",
    "list_files",
    "list_folders",
    "outside_links",
    "require_confined",
]

#: Entries counted at most by one listing (a folder of millions of files is not walked whole).
COUNT_LIMIT = 100_000
#: The problem reported for a refused path (never anything read from it).
OUTSIDE = "a link leading outside the data roots: not read"


def is_confined(path: str | Path, roots: Iterable[str | Path]) -> bool:
    """True when ``path``, with every symlink resolved, is one of ``roots`` or lies inside one
    (the roots are resolved too). A path that cannot be resolved (a symlink loop) is not."""
    try:
        real = Path(path).resolve()
        return any(real.is_relative_to(Path(r).resolve()) for r in roots)
    except (OSError, RuntimeError):
        return False


def require_confined(paths: Iterable[str | Path | None], roots: Iterable[str | Path]) -> None:
    """Check files before anything reads them.

    Raises:
        InputError: the first path (``None`` entries skipped) not confined to ``roots``, with
            :data:`OUTSIDE` as its message.
    """
    allowed = list(roots)
    for path in paths:
        if path is not None and not is_confined(path, allowed):
            raise InputError(path, None, OUTSIDE)


@dataclass
class Listing:
    """What a walk found: the files kept (sorted), the symlinks refused because they lead out
    of the roots, and how many files it counted (``more``: it stopped counting at
    :data:`COUNT_LIMIT`, so ``total`` is a lower bound)."""

    files: list[Path] = field(default_factory=list)
    refused: list[Path] = field(default_factory=list)
    total: int = 0
    more: bool = False

    @property
    def capped(self) -> bool:
        """True when files were left out of :attr:`files`."""
        return self.total > len(self.files) or self.more


def _pruned(name: str, skip_dirs: Collection[str]) -> bool:
    """Hidden, ``__pycache__``, a name in ``skip_dirs`` or starting with one ending in ``*``
    (``"_*"``: every ``_``-prefixed name)."""
    if name.startswith(".") or name == "__pycache__" or name in skip_dirs:
        return True
    return any(s.endswith("*") and name.startswith(s[:-1]) for s in skip_dirs)


def _entries(folder: Path) -> list[os.DirEntry]:
    try:
        with os.scandir(folder) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError:  # unreadable or vanished: nothing to list
        return []


def _walk(
    top: Path, roots: list[Path], max_depth: int, skip_dirs: Collection[str]
) -> Iterator[tuple[str, Path, int]]:
    """("dir" | "file" | "refused", path, depth) in sorted depth-first order; symlinked
    folders inside the roots are listed but not descended into (no loops)."""
    stack: list[tuple[Path, int]] = [(top, 0)]
    while stack:
        folder, depth = stack.pop()
        children = []
        for entry in _entries(folder):
            if _pruned(entry.name, skip_dirs):
                continue
            path = Path(entry.path)
            link = entry.is_symlink()
            if link and not is_confined(path, roots):
                yield "refused", path, depth + 1
                continue
            try:
                is_dir = entry.is_dir()  # follows a (confined) link
            except OSError:
                continue
            if is_dir:
                yield "dir", path, depth + 1
                if depth + 1 < max_depth and not link:
                    children.append((path, depth + 1))
            elif entry.is_file():
                yield "file", path, depth + 1
        stack.extend(reversed(children))


def list_folders(
    root: str | Path,
    roots: Iterable[str | Path],
    *,
    max_depth: int = 3,
    skip_dirs: Collection[str] = (),
) -> list[Path]:
    """``root`` and the folders under it up to ``max_depth`` levels (sorted), every one
    confined to ``roots``: a symlinked folder leading out is left out (one inside is listed).
    Nothing is listed when ``root`` itself is not confined."""
    top, allowed = Path(root), [Path(r) for r in roots]
    if not is_confined(top, allowed):
        return []
    found = [top]
    for kind, path, _ in _walk(top, allowed, max_depth, skip_dirs):
        if kind == "dir":
            found.append(path)
    return sorted(found)


def list_files(
    folder: str | Path,
    roots: Iterable[str | Path],
    *,
    max_depth: int = 4,
    max_files: int | None = None,
    skip_dirs: Collection[str] = (),
    skip_names: Collection[str] = (),
) -> Listing:
    """The files under ``folder`` (up to ``max_depth`` levels; hidden entries and ``skip_dirs``
    pruned, ``skip_names`` left out), sorted by path, confined to ``roots``: a symlinked file or
    folder leading out of them is in ``Listing.refused``, never in ``Listing.files``. Keeps the
    first ``max_files`` (all when None) and counts the rest up to :data:`COUNT_LIMIT`. A
    ``folder`` that is not itself confined lists nothing but itself, refused."""
    top, allowed = Path(folder), [Path(r) for r in roots]
    out = Listing()
    if not is_confined(top, allowed):
        out.refused.append(top)
        return out
    for kind, path, _ in _walk(top, allowed, max_depth, skip_dirs):
        if kind == "refused":
            out.refused.append(path)
        elif kind == "file" and path.name not in skip_names:
            out.total += 1
            if max_files is None or len(out.files) < max_files:
                out.files.append(path)
            if out.total >= COUNT_LIMIT:
                out.more = True
                break
    out.files.sort()
    return out


def outside_links(
    folder: str | Path, roots: Iterable[str | Path], max_depth: int = 6
) -> list[Path]:
    """The symlinks under ``folder`` (up to ``max_depth`` levels) that lead out of ``roots``,
    ``folder`` itself when it does (sorted): what an importer reading the folder's layout would
    follow."""
    return sorted(list_files(folder, roots, max_depth=max_depth).refused)
