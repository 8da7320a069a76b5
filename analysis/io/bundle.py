"""Bundles: a folder with a ``bundle.toml`` manifest naming datasets, each with queries, qrels,
optional entities/edges and runs (one file per model; model name = file stem).

Manifest (paths relative to the bundle folder; every key but the dataset table is optional)::

    name = "demo"
    description = "one line"

    [datasets.stark-amazon]
    family = "stark"                         # "stark", "spatial" or "generic"
    queries = "stark-amazon/queries.parquet" # default: <dataset>/queries.* (any supported format)
    qrels = "stark-amazon/qrels.parquet"     # default: <dataset>/qrels.*; may be the queries file
    entities = "stark-amazon/entities.parquet"
    edges = "stark-amazon/edges.parquet"     # KB relations: src_id, relation, dst_id
    runs = "stark-amazon/runs"               # a folder, or a table {model = "file"}
    metrics = ["hit@1", "hit@5", "recall@20", "mrr"]
    query_type = "human"                     # when the queries file has no query_type column
    splits = { train = "split/train.index", test = "split/test.index" }  # STaRK split files
    split = "test"                           # the split evaluated by default ("all": every query)
    query_groups = "query_groups/group_query_test.json"   # AvaTaR patterns -> pattern column
    metapaths = "metapaths/test.json"        # MoR metapaths -> metapath column
    crs = "EPSG:4326"                        # spatial: CRS of projected coordinates
    relevance_threshold = 1

    [datasets.stark-amazon.groups.dense]     # runs of one model: seeds = [...] or folds = {...}
    seeds = ["dense-s1", "dense-s2", "dense-s3"]

    [datasets.stark-amazon.run_metadata]     # numbers per run or group (quality against cost)
    bm25 = { latency_ms = 4.2, index_mb = 310 }

Groups, run metadata and ir_metadata files beside runs: :mod:`analysis.io.groups`.

A STaRK QA CSV (``id,query,answer_ids``) can serve as both ``queries`` and ``qrels``. Errors
name the manifest and, for TOML syntax errors, the line.

Confinement (one rule for the command line and the app, :func:`analysis.io.confine.is_confined`,
re-exported here): every file the manifest names -- and every default ``<dataset>/qrels.*`` or
run file found in a folder -- must resolve, after symlinks, inside the bundle folder or inside
one of the data roots listed in ``RETRIEVAL_DASHBOARD_DATA_ROOTS`` (separated by
``os.pathsep``; the app passes its own roots, ``data/`` by default). ``..``, absolute paths
and symlinks that lead elsewhere are a one-line error naming the dataset, the key and the path
(the file is never opened). The app's bundle picker and its Open data page apply the same
function to every folder and file.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from analysis.core import paths
from analysis.core.errors import InputError
from analysis.core.names import parse_metrics
from analysis.io import load_entities, load_qrels, load_queries, load_run, stark, tables
from analysis.io._text import parse_toml, read_text
from analysis.io.atomic import refuse_overwrite
from analysis.io.confine import is_confined as is_confined  # re-exported
from analysis.io.groups import RunGroup, group_run, parse_groups, parse_run_metadata
from analysis.io.summaries import summary_paths_of

MANIFEST = "bundle.toml"
ROOTS_ENV = "RETRIEVAL_DASHBOARD_DATA_ROOTS"
MAX_MANIFEST_BYTES = 16 << 20  # thousands of datasets fit in well under 1 MiB
MAX_DATASETS = 1000
MAX_RUNS = 1000  # per dataset
ALL_SPLIT = "all"
FAMILIES = ("stark", "spatial", "generic")
RUN_SUFFIXES = (".run", ".txt", ".trec", ".tsv", ".csv", ".parquet", ".jsonl", ".res")
DEFAULT_METRICS = {
    "stark": ("hit@1", "hit@5", "recall@20", "mrr"),
    "spatial": ("recall@10", "ndcg@10", "recall@20", "ndcg@20"),
    "generic": ("hit@1", "hit@5", "recall@20", "mrr", "ndcg@10"),
}
_KEYS = {
    "family",
    "queries",
    "qrels",
    "entities",
    "edges",
    "runs",
    "metrics",
    "query_type",
    "splits",
    "split",
    "query_groups",
    "metapaths",
    "crs",
    "relevance_threshold",
    "description",
    "groups",
    "run_metadata",
}


@dataclass(frozen=True)
class DatasetSpec:
    """One dataset of a bundle, as the manifest declares it (paths resolved)."""

    name: str
    family: str
    queries: Path | None
    qrels: Path
    runs: dict[str, Path]
    entities: Path | None = None
    edges: Path | None = None
    metrics: tuple[str, ...] = ()
    query_type: str | None = None
    splits: dict[str, Path] = field(default_factory=dict)
    default_split: str | None = None
    query_groups: Path | None = None
    metapaths: Path | None = None
    crs: str | None = None
    relevance_threshold: int = 1
    description: str = ""
    groups: dict[str, RunGroup] = field(default_factory=dict)
    """Run groups (seeds or folds of one model): group name -> :class:`RunGroup`."""
    run_metadata: dict[str, dict[str, float]] = field(default_factory=dict)
    """The manifest's numbers per run or group (``latency_ms``, ``cost``, ...)."""

    @property
    def models(self) -> list[str]:
        """The runs in manifest order, each group just before its first member."""
        return ordered_models(list(self.runs), self.groups)


def ordered_models(runs: Sequence[str], groups: dict[str, RunGroup]) -> list[str]:
    """``runs`` with each group's name inserted just before its first member."""
    before: dict[str, list[str]] = {}
    for name, group in groups.items():
        first = min(group.members, key=lambda m: runs.index(m) if m in runs else len(runs))
        before.setdefault(first, []).append(name)
    out: list[str] = []
    for run in runs:
        out += [*before.get(run, []), run]
    return out + [g for g in groups if g not in out]


@dataclass(frozen=True)
class Bundle:
    """A parsed manifest: the bundle folder and its datasets (in manifest order)."""

    root: Path
    name: str
    description: str
    datasets: dict[str, DatasetSpec]
    broken: dict[str, str] = field(default_factory=dict)
    """Datasets left out by ``read_manifest(..., skip_broken=True)``: name -> one-line error."""

    @property
    def models(self) -> list[str]:
        """Every model name with a run on some dataset (first seen, manifest order): the set
        the model colours are assigned over, so a model has one colour on every dataset."""
        return list(dict.fromkeys(m for spec in self.datasets.values() for m in spec.runs))


@dataclass(frozen=True)
class Dataset:
    """A loaded dataset: tables in the project's vocabulary and the run files per model."""

    spec: DatasetSpec
    queries: pd.DataFrame
    qrels: pd.DataFrame
    entities: pd.DataFrame | None
    edges: pd.DataFrame | None
    split: str | None = None
    """The split the queries and qrels are restricted to (``None``: every query)."""

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def models(self) -> list[str]:
        """The runs and groups (:attr:`DatasetSpec.models`)."""
        return self.spec.models


def configured_roots() -> list[Path]:
    """The data roots of ``RETRIEVAL_DASHBOARD_DATA_ROOTS`` (resolved; empty when unset)."""
    raw = os.environ.get(ROOTS_ENV, "")
    return [paths.resolve(p) for p in raw.split(os.pathsep) if p]


def bundle_files(bundle: Bundle) -> list[Path]:
    """The manifest and every file (and runs folder) its datasets read, the published
    summaries beside the runs included (their audits read them): what an output must never
    overwrite."""
    out = [bundle.root / MANIFEST]
    for spec in bundle.datasets.values():
        named = (spec.queries, spec.qrels, spec.entities, spec.edges, spec.query_groups)
        out += [p for p in (*named, spec.metapaths, *spec.splits.values()) if p is not None]
        out += list(spec.runs.values())
        out += sorted({p.parent for p in spec.runs.values()})
        out += [p for g in spec.groups.values() for p in g.fold_files]
        out += summary_paths_of(spec.runs.values())
    return out


def refuse_overwriting(
    bundle: Bundle, out: str | Path, *more: Path, what: str = "a file of the bundle"
) -> None:
    """Refuse an output ``out`` that is one of the bundle's files (:func:`bundle_files`) or of
    ``more`` (a notes database it reads), or that lies directly in one of its runs folders
    (:func:`run_folders`): :func:`analysis.io.atomic.refuse_overwrite`, whose message names
    ``what``."""
    inputs = [*bundle_files(bundle), *more]
    refuse_overwrite(out, inputs, what=what, folders=run_folders(bundle))


def run_folders(bundle: Bundle) -> list[Path]:
    """The folders holding the runs of the bundle's datasets, the bundle's own folder aside:
    an output written there would be read as a run, or as the summary of one."""
    found = {p.parent for spec in bundle.datasets.values() for p in spec.runs.values()}
    root = paths.stat(bundle.root, missing_ok=True)
    out = []
    for folder in sorted(found):
        info = paths.stat(folder, missing_ok=True)
        if info is not None and (root is None or not os.path.samestat(info, root)):
            out.append(folder)
    return out


def _files_in(folder: Path) -> list[Path]:
    """The files directly in ``folder``, in name order (empty when it is not a folder or its
    name cannot be a folder's, e.g. it holds a NUL byte)."""
    try:
        return sorted(p for p in folder.iterdir() if p.is_file())
    except (OSError, ValueError):
        return []


def _find(files: list[Path], stem: str) -> Path | None:
    """The first of ``files`` named ``stem.*``, or None."""
    return next((p for p in files if p.name.split(".")[0] == stem), None)


def _model_name(path: Path) -> str:
    """The run file's name without its run suffix (and ``.gz``); bytes of the name that are not
    UTF-8 read as U+FFFD."""
    name = paths.readable_name(path.name)
    name = name.removesuffix(".gz")
    for suffix in RUN_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return Path(name).stem


def read_manifest(
    path: str | Path, *, skip_broken: bool = False, roots: Sequence[str | Path] | None = None
) -> Bundle:
    """Parse ``bundle.toml`` (``path`` may be the file or its folder).

    ``roots`` are the data roots files may also live in (default: :func:`configured_roots`);
    the bundle folder itself is always allowed (see the module notes on confinement).

    With ``skip_broken=True`` a dataset whose entry is wrong (unknown key, missing file, empty
    runs folder, ...) is left out and its error kept in ``Bundle.broken``, so the other datasets
    stay usable (the app); a manifest that cannot be read at all still raises.

    Raises:
        InputError: no manifest, TOML syntax error (with its line), unknown keys, a dataset
            without qrels or runs, a path that does not exist or resolves outside the bundle
            folder and the data roots.
    """
    p = Path(path)
    given = paths.stat(p, missing_ok=True)  # a loop, permission, a long name: one line
    manifest = p / MANIFEST if given is not None and stat.S_ISDIR(given.st_mode) else p
    info = paths.stat(manifest, missing_ok=True)
    if info is None or not stat.S_ISREG(info.st_mode):
        raise InputError(manifest, None, "no bundle manifest (bundle.toml) here")
    root = manifest.parent
    if info.st_size > MAX_MANIFEST_BYTES:
        raise InputError(
            manifest, None, f"larger than {MAX_MANIFEST_BYTES >> 20} MiB: not a manifest"
        )
    extra = configured_roots() if roots is None else [paths.resolve(r) for r in roots]
    allowed = [paths.resolve(root), *extra]
    text = read_text(manifest)  # InputError naming the line of a byte that is not UTF-8
    data = parse_toml(text, manifest)  # syntax errors and too-deep nesting name the line
    raw = data.get("datasets")
    if not isinstance(raw, dict) or not raw:
        raise InputError(manifest, None, "no [datasets.<name>] table")
    if len(raw) > MAX_DATASETS:
        raise InputError(
            manifest,
            None,
            f"{len(raw)} datasets: a bundle holds at most {MAX_DATASETS} (split it into several "
            "bundles)",
        )
    datasets: dict[str, DatasetSpec] = {}
    broken: dict[str, str] = {}
    for name, body in raw.items():
        try:
            datasets[str(name)] = _dataset(manifest, root, str(name), body, allowed)
        except InputError as exc:
            if not skip_broken:
                raise
            broken[str(name)] = str(exc)
    return Bundle(
        root=root,
        name=str(data.get("name", root.name)),
        description=str(data.get("description", "")),
        datasets=datasets,
        broken=broken,
    )


class _Entry:
    """One ``[datasets.<name>]`` table being checked: its paths, resolved once each, must stay
    inside the allowed (already resolved) folders."""

    def __init__(self, manifest: Path, root: Path, name: str, body: dict, allowed: list) -> None:
        self.manifest, self.root, self.name, self.body = manifest, root, name, body
        self.allowed = allowed
        self._defaults: list[Path] | None = None

    def fail(self, message: str) -> InputError:
        return InputError(self.manifest, None, f"dataset {self.name!r}: {message}")

    def real(self, what: str, path: Path) -> Path:
        """The resolved path (a symlink loop or permission problem names the entry)."""
        try:
            return paths.resolve(path)
        except InputError as exc:
            raise self.fail(f"{what}: {exc.message}") from None

    def confine(self, what: str, real: Path) -> Path:
        if not any(real.is_relative_to(r) for r in self.allowed):
            raise self.fail(
                f"{what} resolves to {real}, outside the bundle folder and the data "
                f"roots (add its folder to {ROOTS_ENV})"
            )
        return real

    def named(self, what: str, value: object) -> Path:
        """A path the manifest names (relative to the bundle): it must exist and be confined."""
        real = self.real(what, self.root / str(value))
        if not real.exists():
            raise self.fail(f"{what} does not exist")
        return self.confine(what, real)

    def path_of(self, key: str, default_stem: str | None = None) -> Path | None:
        value = self.body.get(key)
        if value is None:
            if default_stem is None:
                return None
            if self._defaults is None:  # one listing of <dataset>/ for every default
                self._defaults = _files_in(self.root / self.name)
            found = _find(self._defaults, default_stem)
            what = f"{key} {found.name!r}" if found is not None else ""
            return self.confine(what, self.real(what, found)) if found is not None else None
        if not isinstance(value, str):
            raise self.fail(f"{key} must be a path string")
        return self.named(f"{key} {value!r}", value)


def _dataset(
    manifest: Path, root: Path, name: str, body: object, allowed: list[Path]
) -> DatasetSpec:
    if not isinstance(body, dict):
        raise InputError(manifest, None, f"dataset {name!r}: expected a table of keys")
    entry = _Entry(manifest, root, name, body, allowed)
    unknown = sorted(set(body) - _KEYS)
    if unknown:
        raise entry.fail(f"unknown key(s) {', '.join(unknown)}")
    family = str(body.get("family", "generic"))
    if family not in FAMILIES:
        raise entry.fail(f"family must be one of {', '.join(FAMILIES)}")
    qrels = entry.path_of("qrels", "qrels")
    if qrels is None:
        raise entry.fail('no qrels (set qrels = "..." or add <dataset>/qrels.*)')
    runs = {m: entry.confine(f"run {m!r}", p) for m, p in _runs(entry).items()}
    metrics = _metrics(entry, family)
    splits, default_split = _splits(entry)
    threshold = body.get("relevance_threshold", 1)
    if not isinstance(threshold, int) or threshold < 1:
        raise entry.fail("relevance_threshold must be an integer >= 1")
    groups, run_metadata = _groups(entry, list(runs))
    return DatasetSpec(
        name=name,
        family=family,
        queries=entry.path_of("queries", "queries"),
        qrels=qrels,
        runs=runs,
        entities=entry.path_of("entities", "entities"),
        edges=entry.path_of("edges", "edges"),
        metrics=metrics,
        query_type=body.get("query_type"),
        splits=splits,
        default_split=default_split,
        query_groups=entry.path_of("query_groups"),
        metapaths=entry.path_of("metapaths"),
        crs=body.get("crs"),
        relevance_threshold=threshold,
        description=str(body.get("description", "")),
        groups=groups,
        run_metadata=run_metadata,
    )


def _groups(
    entry: _Entry, runs: list[str]
) -> tuple[dict[str, RunGroup], dict[str, dict[str, float]]]:
    """The dataset's ``groups`` and ``run_metadata`` (:mod:`analysis.io.groups`); fold query
    files must exist and be confined like every other file."""

    def fold_file(what: str, value: str) -> Path:
        if not entry.real(what, entry.root / value).is_file():
            raise entry.fail(f"{what}: {value!r} is not a file")
        return entry.named(what, value)

    groups = parse_groups(entry.body.get("groups"), runs, entry.fail, fold_file)
    metadata = parse_run_metadata(entry.body.get("run_metadata"), [*runs, *groups], entry.fail)
    return groups, metadata


def _metrics(entry: _Entry, family: str) -> tuple[str, ...]:
    metrics = entry.body.get("metrics", DEFAULT_METRICS[family])
    if not isinstance(metrics, list | tuple) or not all(isinstance(m, str) for m in metrics):
        raise entry.fail("metrics must be a list of names")
    if not metrics:
        raise entry.fail('metrics is empty: name at least one metric, e.g. metrics = ["mrr"]')
    try:
        parse_metrics(list(metrics))
    except ValueError as exc:
        raise entry.fail(f"metrics: {exc}") from None
    return tuple(metrics)


def _splits(entry: _Entry) -> tuple[dict[str, Path], str | None]:
    splits_raw = entry.body.get("splits", {})
    if not isinstance(splits_raw, dict):
        raise entry.fail('splits must be a table {split = "file"}')
    splits = {str(s): entry.named(f"split file {v!r}", v) for s, v in splits_raw.items()}
    default_split = entry.body.get("split")
    if default_split is None:
        return splits, None
    if not isinstance(default_split, str):
        raise entry.fail("split must be the name of one of the splits")
    if default_split != ALL_SPLIT and default_split not in splits:
        known = ", ".join([*splits, ALL_SPLIT])
        raise entry.fail(f"split {default_split!r} is not one of the splits (known: {known})")
    return splits, None if default_split == ALL_SPLIT else default_split


def _runs(entry: _Entry) -> dict[str, Path]:
    """Model -> resolved run file: a ``{model = "file"}`` table, or the run files of a folder
    (``<dataset>/runs`` by default); at most :data:`MAX_RUNS`."""
    value = entry.body.get("runs")
    if isinstance(value, dict):
        out = {}
        for model, rel in value.items():
            resolved = entry.real(f"run {model!r}", entry.root / str(rel))
            if not resolved.is_file():
                raise entry.fail(f"run {model!r}: {rel!r} is not a file")
            out[str(model)] = resolved
    else:
        where = value if isinstance(value, str) else f"{entry.name}/runs"
        folder = entry.real(f"runs folder {where!r}", entry.root / where)
        if not folder.is_dir():
            raise entry.fail(f"runs folder {folder.name!r} does not exist")
        files = [p for p in _files_in(folder) if p.name.removesuffix(".gz").endswith(RUN_SUFFIXES)]
        if not files:
            raise entry.fail("the runs folder holds no run file")
        out = {}
        for p in files:
            model = _model_name(p)
            if model in out:  # bm25.trec and bm25.tsv: one would silently replace the other
                raise entry.fail(
                    f"run files {out[model].name!r} and {p.name!r} are both model {model!r}: "
                    'keep one, or name each file in a runs table (runs = {name = "file"})'
                )
            out[model] = entry.real(f"run {p.name!r}", p)
    if len(out) > MAX_RUNS:
        raise entry.fail(f"{len(out)} runs: a dataset holds at most {MAX_RUNS}")
    return out


def resolve_split(spec: DatasetSpec, split: str | None = None) -> str | None:
    """The split to evaluate: ``None`` -> the manifest's default (``None``, every query, when
    there is none), ``"all"`` -> ``None``, a name -> that name.

    Raises:
        InputError: a name that is not one of the dataset's splits (naming the known ones).
    """
    if split is None:
        return spec.default_split
    if split == ALL_SPLIT:
        return None
    if split not in spec.splits:
        known = ", ".join([*spec.splits, ALL_SPLIT])
        raise InputError(spec.name, None, f"no split {split!r} (known: {known})")
    return split


def load_dataset(spec: DatasetSpec, split: str | None = None) -> Dataset:
    """Load the tables of one dataset (runs stay on disk; see :func:`load_run`).

    The queries table gets ``dataset`` and ``query_type`` columns (from the manifest when the
    file has none), and ``split``, ``pattern``, ``metapath`` columns when the manifest names
    STaRK split, query-group or metapath files (replacing a column of that name in the queries
    file).

    ``split``: ``None`` = the manifest's default split (every query when there is none),
    ``"all"`` = every query, a name = that split. With a split, queries and qrels are restricted
    to its query ids (``Dataset.split`` names it) and ``qrels.attrs["split_queries"]`` holds the
    ids, so :func:`analysis.core.metrics.evaluate_run` leaves run queries outside the split out
    silently (counted in an info note, not warned about as "not in the qrels");
    ``qrels.attrs["split_dropped"]`` counts the qrels queries the split dropped here, so that
    note gives the same counts as ``evaluate --split FILE`` on the whole qrels.
    """
    chosen = resolve_split(spec, split)
    qrels = load_qrels(spec.qrels)
    if spec.queries is not None:
        queries = load_queries(spec.queries)
    else:  # no queries file: the query ids of the qrels, without text
        queries = pd.DataFrame({"query_id": qrels["query_id"].drop_duplicates(), "text": ""})
    queries = queries.drop_duplicates("query_id").reset_index(drop=True)
    queries["query_id"] = queries["query_id"].astype("str")
    queries["dataset"] = spec.name
    if "query_type" not in queries.columns:
        queries["query_type"] = spec.query_type or "all"
    if spec.splits:
        split = pd.concat([stark.read_split_index(p, s) for s, p in spec.splits.items()])
        queries = _join(queries, split, "split")
    if spec.query_groups is not None:
        queries = _join(queries, stark.read_query_groups(spec.query_groups), "pattern")
    if spec.metapaths is not None:
        queries = _join(queries, stark.read_metapaths(spec.metapaths), "metapath")
    if chosen is not None:
        ids = stark.read_split_ids(spec.splits[chosen])
        keep = set(ids)
        queries = queries[queries["query_id"].isin(keep)].reset_index(drop=True)
        qids = qrels["query_id"].astype("str")
        dropped = int(qids[~qids.isin(keep)].nunique())
        qrels = qrels[qids.isin(keep)].reset_index(drop=True)
        qrels.attrs["split_queries"] = ids
        qrels.attrs["split_dropped"] = dropped
    entities = load_entities(spec.entities) if spec.entities is not None else None
    edges = tables.read_table(spec.edges) if spec.edges is not None else None
    return Dataset(
        spec=spec, queries=queries, qrels=qrels, entities=entities, edges=edges, split=chosen
    )


def _join(queries: pd.DataFrame, table: pd.DataFrame, column: str) -> pd.DataFrame:
    """``queries`` with ``table``'s ``column`` by query id (a query's first row; ``"none"`` for
    a query the table lacks). The manifest's file wins: a column of that name that the queries
    file has already is replaced."""
    found = table[["query_id", column]].drop_duplicates("query_id")
    out = queries.drop(columns=column, errors="ignore").merge(found, on="query_id", how="left")
    out[column] = out[column].fillna("none")
    return out


def load_model_run(spec: DatasetSpec, model: str) -> pd.DataFrame:
    """The run of ``model`` in ``spec`` (any supported run format); for a group, the ranking
    the pages show for it (:func:`analysis.io.groups.group_run`: a seed group's first seed, a
    fold group's fold runs together)."""
    if model in spec.groups:
        return group_run(spec.groups[model], lambda m: load_model_run(spec, m))
    if model not in spec.runs:
        raise InputError(spec.name, None, f"no run for model {model!r}")
    return load_run(spec.runs[model])
