"""What is in a folder, for the app's Open data page: each file's detected format, the roles it
can play in a bundle, its row count and its first problem in words; and a bundle built from a
chosen set of files.

Roles: ``queries``, ``qrels``, ``entities``, ``run``, ``split``. A file's problem is the one-line
:class:`~analysis.core.errors.InputError` its loader raises in its first role (file, line, what
is wrong), or why it was not read (too large, a layout that needs an importer, not a data file,
a symlink leading out of the data roots).

Confinement (:mod:`analysis.io.confine`): every file listed, read, suggested to an importer or
copied into a bundle must lie inside the roots given (by default the scanned folder itself)
after its symlinks are resolved; a link leading out is listed with :data:`OUTSIDE` as its
problem and never opened. A scan keeps the first :data:`MAX_FILES` files (sorted by path) and
counts the rest (:class:`Scan`), so a page can say "300 of 10,001 files shown".
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Required, TypedDict, Unpack

import pandas as pd

from analysis.core import paths
from analysis.core.errors import InputError
from analysis.core.options import check_options
from analysis.core.paths import readable_name
from analysis.io import detect_format, load_entities, load_qrels, load_queries, load_run
from analysis.io._text import check_json_depth, read_text
from analysis.io.bundle import DEFAULT_METRICS
from analysis.io.confine import OUTSIDE, list_files, outside_links
from analysis.io.importers import registry
from analysis.io.importers._write import (
    ImportedDataset,
    ImportResult,
    check_out,
    run_frame,
    write_bundle,
)
from analysis.io.stark import read_split_index

MAX_BYTES = 512 * 2**20
MAX_FILES = 300
MAX_DEPTH = 4
SKIP_DIRS = {"__pycache__", ".git", "_opened"}
SKIP_NAMES = {"bundle.toml", "README.md", "LICENSE"}
ROLES = ("queries", "qrels", "entities", "run", "split", "query_groups", "metapaths")
ROLES_BY_FORMAT = {
    "trec_run": ("run",),
    "trec_qrels": ("qrels",),
    "stark_qa": ("queries", "qrels"),
    "stark_eval": ("run",),
    "split_index": ("split",),
    "geobloom": ("qrels",),
}
GOLD_COLUMNS = ("gold_poi_ids", "gold_doc_ids", "gold_ids", "gold", "answer_ids")


@dataclass(frozen=True)
class FileReport:
    """One file of a scanned folder (``rel`` is its path relative to the folder)."""

    path: Path
    rel: str
    format: str | None
    roles: tuple[str, ...]
    rows: int | None
    problem: str | None


@dataclass(frozen=True)
class Scan:
    """A scanned folder: the reports of the files kept (at most :data:`MAX_FILES`, refused links
    included) and how many data files the folder holds (``more``: at least ``total``)."""

    reports: list[FileReport] = field(default_factory=list)
    total: int = 0
    more: bool = False

    @property
    def capped(self) -> bool:
        """True when data files were left out of :attr:`reports`."""
        return self.more or self.total > sum(r.problem != OUTSIDE for r in self.reports)


def _table_roles(path: Path) -> tuple[str, ...]:
    from analysis.io import tables

    columns = set(tables.read_table(path).columns)
    if {"query_id", "doc_id"} <= columns:
        return (
            ("run",) if {"score", "rank"} & columns and "relevance" not in columns else ("qrels",)
        )
    if "query_id" in columns:
        gold = set(GOLD_COLUMNS) & columns
        return ("queries", "qrels") if gold else ("queries",)
    if "doc_id" in columns:
        return ("entities",)
    return ()


def _json_kind(path: Path) -> str | None:
    """``query_groups`` (AvaTaR), ``metapaths`` (MoR) or ``metrics`` (a summary) for a ``.json``
    file of that shape, else None.

    Raises:
        InputError: JSON nested deeper than the depth limit (with its line), not UTF-8.
    """
    import json

    text = read_text(path)
    check_json_depth(text, path)  # json.loads would raise RecursionError
    try:
        data = json.loads(text)
    except ValueError:
        return None  # not JSON: the table reader names the problem
    if isinstance(data, dict) and data and all(isinstance(v, dict) for v in data.values()):
        return "query_groups" if all("query_idx" in v for v in data.values()) else None
    if isinstance(data, dict) and all(isinstance(v, int | float) for v in data.values()):
        return "metrics"
    if isinstance(data, list) and data and isinstance(data[0], dict) and "q_id" in data[0]:
        return "metapaths"
    return None


def _load(path: Path, role: str) -> pd.DataFrame:
    if role in ("query_groups", "metapaths"):
        from analysis.io.importers import stark

        return stark._groups(path) if role == "query_groups" else stark._metapaths(path)
    if role == "run":
        return load_run(path)
    if role == "qrels":
        return load_qrels(path)
    if role == "queries":
        return load_queries(path)
    if role == "entities":
        try:
            return load_entities(path)
        except InputError:  # a POI file without doc_id (lat/lon CSV, GeoGLUE JSON)
            from analysis.io.spatial import load_pois

            return load_pois(path)
    return read_split_index(path)


def _spatial_hint(path: Path) -> str | None:
    from analysis.io.spatial import detect_spatial_format

    try:
        return detect_spatial_format(path)
    except InputError:
        return None


def inspect_file(path: Path, rel: str) -> FileReport:
    """Detect, then read ``path`` in its first role (see the module docstring); an error of
    either step is the report's problem (one line, never an exception)."""
    try:
        return _inspect(path, rel)
    except InputError as exc:
        return FileReport(path, rel, None, (), None, str(exc))
    except OSError as exc:
        return FileReport(path, rel, None, (), None, f"{path}: cannot read: {exc.strerror}")


def _inspect(path: Path, rel: str) -> FileReport:
    if path.stat().st_size > MAX_BYTES:
        return FileReport(path, rel, None, (), None, f"larger than {MAX_BYTES >> 20} MB: not read")
    if path.name.lower().endswith(".json"):
        kind = _json_kind(path)
        if kind == "metrics":
            return FileReport(path, rel, kind, (), None, "a metrics summary: not needed")
        if kind is not None:
            return _read(path, rel, kind, (kind,))
    try:
        fmt = detect_format(path)
    except InputError as exc:
        fmt, error = None, str(exc)
    else:
        error = None
    if fmt in (None, "table", "geobloom"):
        hint = _spatial_hint(path)
        if hint in ("latlon", "geoglue") and not (fmt == "table" and _table_roles(path)):
            return _read(path, rel, hint, ("entities",))
        if hint in ("list", "geobloom"):
            problem = f"projected coordinates: use Import as {hint} with the dataset's CRS"
            return FileReport(path, rel, hint, (), None, problem)
    if fmt is None:
        return FileReport(path, rel, None, (), None, error)
    return _read(path, rel, fmt, None)


def _ranx_roles(path: Path) -> tuple[str, ...]:
    """A ranx file holding integers only is qrels first (ranx's Qrels), else a run."""
    values = load_run(path)["score"].to_numpy()
    return ("qrels", "run") if len(values) and (values == values.round()).all() else ("run",)


def _read(path: Path, rel: str, fmt: str, roles: tuple[str, ...] | None) -> FileReport:
    try:
        if roles is None and fmt.startswith("ranx_"):
            roles = _ranx_roles(path)
        if roles is None:
            roles = ROLES_BY_FORMAT.get(fmt) or (_table_roles(path) if fmt == "table" else ())
        if not roles:
            return FileReport(path, rel, fmt, (), None, "no query_id or doc_id column")
        rows = len(_load(path, roles[0]))
    except InputError as exc:
        return FileReport(path, rel, fmt, (), None, str(exc))
    return FileReport(path, rel, fmt, roles, rows, None)


def survey(folder: str | Path, roots: Iterable[str | Path] | None = None) -> Scan:
    """:func:`inspect_file` for the first :data:`MAX_FILES` data files under ``folder`` (up to 4
    levels, sorted by path; hidden files, ``bundle.toml``, README/LICENSE and ``_opened``
    folders skipped), the files past them counted. Symlinks leading out of ``roots`` (default:
    ``folder`` itself) are reported with the problem :data:`OUTSIDE`, never read."""
    root = Path(folder)
    allowed = [root] if roots is None else list(roots)
    listing = list_files(
        root, allowed, max_depth=MAX_DEPTH, skip_dirs=SKIP_DIRS, skip_names=SKIP_NAMES
    )
    files = [p for p in listing.files if not p.name.startswith("LICENSE")]
    reports = [inspect_file(p, p.relative_to(root).as_posix()) for p in files[:MAX_FILES]]
    refused = [FileReport(p, _rel(p, root), None, (), None, OUTSIDE) for p in listing.refused]
    dropped = len(listing.files) - len(files)  # LICENSE* files
    return Scan(
        reports=sorted(reports + refused, key=lambda r: r.rel),
        total=listing.total - dropped,
        more=listing.more,
    )


def _rel(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix() if path != root else "."


def scan_folder(folder: str | Path, roots: Iterable[str | Path] | None = None) -> list[FileReport]:
    """The reports of :func:`survey` (at most :data:`MAX_FILES` files, refused links too)."""
    return survey(folder, roots).reports


def suggest_importer(folder: str | Path, roots: Iterable[str | Path] | None = None) -> str | None:
    """The name of the importer whose layout ``folder`` matches best, or None
    (:func:`analysis.io.importers.registry.suggest`: every registered importer's ``detect``).

    With ``roots``, a folder holding a symlink that leads out of them gets no suggestion (the
    detectors and the importer read the folder's files; a link out is never read).
    """
    if roots is not None and outside_links(folder, roots):
        return None
    found = registry.suggest(folder)
    return found.name if found is not None else None


def _model_names(runs: Sequence[Path]) -> dict[str, Path]:
    """model -> run file: the file stem, with the folder when two stems repeat, the whole file
    name when that repeats too, then the path below the runs' common folder (the position in
    ``runs`` for a file chosen twice): no run replaces another."""
    stems = [readable_name(p.name).split(".")[0] for p in runs]
    names = [
        stem if stems.count(stem) == 1 else f"{readable_name(path.parent.name)}/{stem}"
        for path, stem in zip(runs, stems, strict=True)
    ]
    names = [
        name if names.count(name) == 1 else f"{name.rpartition('/')[0]}/{readable_name(p.name)}"
        for p, name in zip(runs, names, strict=True)
    ]
    if len(set(names)) < len(names):
        common = Path(os.path.commonpath([p.parent for p in runs]))
        names = [
            name if names.count(name) == 1 else readable_name(p.relative_to(common).as_posix())
            for p, name in zip(runs, names, strict=True)
        ]
    out: dict[str, Path] = {}
    for i, (path, name) in enumerate(zip(runs, names, strict=True)):
        out[name if name not in out else f"{name} ({i + 1})"] = path
    return out


def _query_table(qrels_table: pd.DataFrame, files: BundleFiles) -> pd.DataFrame:
    """The queries of the chosen files (else the qrels' query ids without text), one row per
    query id, without split or gold columns, with the query groups' and metapaths' slices."""
    from analysis.io.importers.stark import _groups, _metapaths, _slices

    queries = files.get("queries", ())
    if queries:
        query_table = _concat([load_queries(p) for p in queries])
    else:
        ids = qrels_table["query_id"].drop_duplicates()
        query_table = pd.DataFrame({"query_id": ids, "text": ""})
    drop = [c for c in query_table.columns if c == "split" or c in GOLD_COLUMNS]
    query_table = query_table.drop(columns=drop).drop_duplicates("query_id").reset_index(drop=True)
    query_table["query_id"] = query_table["query_id"].astype("str")
    query_table = _slices(query_table, [_groups(p) for p in files.get("query_groups", ())])
    return _slices(query_table, [_metapaths(p) for p in files.get("metapaths", ())])


def _family(
    query_table: pd.DataFrame, entity_table: pd.DataFrame | None, read: Sequence[Path]
) -> str:
    """``stark`` when a qrels or queries file is a STaRK QA file (the queries then get their
    ``query_type``: human when every such file is a human-generated one), ``spatial`` when
    the entities have ``lat, lon``, else ``generic``."""
    stark_files = [p.name for p in read if p.name.startswith("stark_qa")]
    if "query_type" not in query_table.columns and stark_files:
        human = all("human" in n for n in stark_files)
        query_table["query_type"] = "human" if human else "synthesized"
    if stark_files:
        return "stark"
    if entity_table is not None and {"lat", "lon"} <= set(entity_table.columns):
        return "spatial"
    return "generic"


def _concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


class BundleFiles(TypedDict, total=False):
    """The files :func:`build_bundle` reads, by role: ``qrels`` (required, one or more),
    ``queries``, ``entities`` (one file or ``None``), ``runs``, ``splits`` (``*.index``),
    ``query_groups`` (AvaTaR's ``query_groups/*.json``) and ``metapaths``."""

    qrels: Required[Sequence[Path]]
    queries: Sequence[Path]
    entities: Path | None
    runs: Sequence[Path]
    splits: Sequence[Path]
    query_groups: Sequence[Path]
    metapaths: Sequence[Path]


def build_bundle(out: Path, name: str, **files: Unpack[BundleFiles]) -> ImportResult:
    """Write a one-dataset bundle named ``name`` at ``out`` from the chosen files (converted to
    Parquet; inputs are only read). Several queries or qrels files are concatenated (the first
    row of a repeated query id wins). Models are named by file stem (with the folder when two
    stems repeat, the whole file name, then the path, when those repeat too; bytes of a name
    that are not UTF-8 read as U+FFFD); splits by file stem,
    ``test`` the default split when present; query groups and metapaths become the
    ``pattern_group``/``pattern`` and ``metapath`` slice columns. The family is ``stark`` for a
    STaRK QA file, ``spatial`` when the entities have ``lat, lon``, else ``generic``, with that
    family's default metrics. The app checks the chosen files with
    :func:`analysis.io.confine.require_confined` first.

    Raises:
        InputError: no qrels file, a chosen file that cannot be read in its role, an input
            inside ``out``, an ``out`` that is a file or a non-empty folder without
            ``bundle.toml`` (only a bundle is replaced, as by the importers).
    """
    check_options("build_bundle", files, BundleFiles)
    qrels, queries = files.get("qrels", ()), files.get("queries", ())
    entities, runs, splits = files.get("entities"), files.get("runs", ()), files.get("splits", ())
    chosen = [*qrels, *queries, entities, *runs, *splits]
    chosen += [*files.get("query_groups", ()), *files.get("metapaths", ())]
    if not qrels:
        raise InputError(out, None, "choose at least one qrels file")
    target = paths.resolve(out)
    for path in chosen:
        if path is not None and paths.resolve(path).is_relative_to(target):
            raise InputError(out, None, "the bundle folder may not hold an input file")
    check_out(target, [])
    qrels_table = _concat([load_qrels(p) for p in qrels])
    query_table = _query_table(qrels_table, files)
    entity_table = _load(entities, "entities") if entities is not None else None
    family = _family(query_table, entity_table, [*qrels, *queries])
    split_ids = {
        p.name.removesuffix(".index"): read_split_index(p)["query_id"].tolist() for p in splits
    }
    source = qrels[0].parent.name
    dataset = ImportedDataset(
        name=name,
        family=family,
        queries=query_table,
        qrels=qrels_table,
        metrics=DEFAULT_METRICS[family],
        entities=entity_table,
        runs={model: run_frame(load_run(p)) for model, p in _model_names(runs).items()},
        splits=split_ids,
        default_split="test" if "test" in split_ids else None,
        crs="EPSG:4326" if family == "spatial" else None,
        description=f"opened from {source}",
    )
    write_bundle(target, name, [dataset], description=f"opened from {source}")
    return ImportResult(out=target, datasets=[dataset])
