"""Ad-hoc bundles: runs and qrels (files or in-memory objects) -> a bundle the app opens, with no
manifest to write.

A bundle here is the documented bundle format (``bundle.toml`` + Parquet, see
``data/README.md``) holding one dataset::

    bundle.toml                  name, one [datasets.<name>] entry, its metrics (and split)
    <name>/queries.parquet       the queries given, else the qrels' query ids without text
    <name>/qrels.parquet         query_id, doc_id, relevance
    <name>/entities.parquet      when entities are given
    <name>/split/<split>.index   when a split is given (the dataset's default split)
    <name>/runs/<model>.parquet  query_id, doc_id, score (+ rank for runs that have only ranks)

Run groups (``groups``: ``{"dense": ["dense-s1", "dense-s2"]}`` for seeds, ``{"ltr": {"f1":
"ltr-f1", "f2": "ltr-f2"}}`` for folds, whose queries are those each fold's run answers) and
numbers per run or group (``metadata``: ``{"bm25": {"latency_ms": 4.2}}``) go into the
manifest as ``groups`` and ``run_metadata`` (:mod:`analysis.io.groups`).

Runs and qrels are read by :mod:`analysis.io.objects` (paths, DataFrames, dicts, ranx,
PyTerrier and ir_datasets objects) and written with every row they were given: duplicates and
queries missing from a run stay, so the app's data checks report them as they would for the
files. Rows are written in one canonical order, so that the order in which a dict or a table
happened to list them (a dict built from a set differs between Python processes) does not make
another bundle: runs by query id, then by score from the highest, rows of equal score in their
given order (a file's, a table's or a mapping's order of tied documents is what the ``stable``
tie policy reads, as it does for the same run written as a TREC file); qrels by query and
document id, queries and entities by id, split ids sorted.

Model names are the app's labels: 1-200 printable characters (no line break, tab or other
control character); two names that differ only in case or Unicode form (``BM25`` and ``bm25``,
``é`` written as one or two code points) are refused, as their files would collide on macOS
and Windows and they read alike. At most :data:`MAX_MODELS` runs make one bundle.
The dataset's family is ``spatial`` when both entities and queries have ``lat, lon`` columns
(WGS84), else ``generic``; metrics default to the family's (``hit@1, hit@5, recall@20, mrr,
ndcg@10`` for ``generic``).

Two ways to write one:

* :func:`write_adhoc_bundle` to a folder of your choice (``python -m analysis bundle --out
  DIR``), built beside it and renamed into place (an existing bundle there is replaced only
  once the new one is whole);
* :func:`keyed_adhoc_bundle` into a folder of bundles, named ``<name>-<content hash>``: the
  same content (every file's bytes, manifest included) gives the same folder, left untouched
  (so the app's disk cache of per-query tables, keyed by file stamps, is reused); new content
  gives a new folder. Parquet is written with fixed options, so equal tables give equal bytes
  within one installation (another pyarrow version may write other bytes: a new folder).
"""

from __future__ import annotations

import contextlib
import hashlib
import numbers
import os
import re
import shutil
import tempfile
import time
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, Unpack

from analysis.core import paths
from analysis.core.errors import InputError
from analysis.core.names import parse_metrics
from analysis.io.bundle import DEFAULT_METRICS
from analysis.io.dicts import shown
from analysis.io.groups import RunGroup, fold_clash, parse_groups, parse_run_metadata
from analysis.io.importers._write import (
    ImportedDataset,
    ImportResult,
    check_out,
    model_file,
    write_bundle,
)
from analysis.io.objects import as_entities, as_qrels, as_queries, as_run
from analysis.io.stark import read_split_ids

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_NAME = "adhoc"
DESCRIPTION = "runs and qrels given on the command line or in Python"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_HASH_CHARS = 16
#: The most runs one ad-hoc bundle takes (the app compares a few dozen models at a time).
MAX_MODELS = 1000
MAX_MODEL_NAME = 200
#: A staging folder of a process that no longer runs is removed once it is this old (seconds).
STALE_STAGING = 3600


@dataclass(frozen=True)
class AdhocInputs:
    """What an ad-hoc bundle is made of.

    Attributes:
        runs: model name -> run (any object :func:`analysis.io.objects.as_run` reads).
        qrels: the qrels (any object :func:`analysis.io.objects.as_qrels` reads).
        queries: optional queries (text and slice columns).
        entities: optional documents (``doc_id, name, text`` ...).
        name: the bundle's and the dataset's name (letters, digits, ``.``, ``_``, ``-``;
            default ``adhoc``).
        metrics: the dataset's headline metrics (names or one comma-separated string);
            default: the family's.
        split: the query ids to evaluate: a split file (one id per line, e.g. STaRK's
            ``split/test.index``; the split is named after the file) or an iterable of ids
            (named ``split``).
        groups: run groups of one model, ``{name: [run, ...]}`` (seeds) or ``{name: {fold:
            run}}`` (folds); runs named as in ``runs``.
        metadata: numbers per run or group, ``{model: {"latency_ms": 4.2, ...}}``.
    """

    runs: Mapping[str, object]
    qrels: object
    queries: object | None = None
    entities: object | None = None
    name: str | None = None
    metrics: Sequence[str] | str | None = None
    split: str | Path | Iterable[object] | None = None
    groups: Mapping[str, object] | None = None
    metadata: Mapping[str, Mapping[str, float]] | None = None

    def paths(self) -> list[Path]:
        """The input files among the inputs (an output must lie outside them)."""
        runs = list(self.runs.values()) if isinstance(self.runs, Mapping) else []
        given = [*runs, self.qrels, self.queries, self.entities, self.split]
        return [Path(x) for x in given if isinstance(x, str | Path)]


class AdhocOptions(TypedDict, total=False):
    """The optional fields of :class:`AdhocInputs`, as keyword arguments of
    :func:`save_bundle` and :func:`analysis.dashboard` (each documented there)."""

    queries: object | None
    entities: object | None
    name: str | None
    metrics: Sequence[str] | str | None
    split: str | Path | Iterable[object] | None
    groups: Mapping[str, object] | None
    metadata: Mapping[str, Mapping[str, float]] | None


def run_argument(text: str) -> tuple[str, str]:
    """``NAME=PATH`` -> ``(NAME, PATH)``; a bare ``PATH`` (or an existing file whose name holds
    ``=``) is named after its file (``runs/bm25.trec.gz`` -> ``bm25``).

    Raises:
        InputError: an empty name or path.
    """
    name, sep, path = text.partition("=")
    if not sep or Path(text).is_file():
        name, path = Path(text).name.split(".")[0], text
    if not name.strip() or not path.strip():
        raise InputError("--run", None, f"{text!r}: expected NAME=PATH")
    return name, path


def _name(inputs: AdhocInputs) -> str:
    name = DEFAULT_NAME if inputs.name is None else str(inputs.name)
    if not _NAME.fullmatch(name):
        raise InputError(
            "--name",
            None,
            f"{shown(name)}: use 1-64 letters, digits, '.', '_' or '-' (a letter or digit first)",
        )
    return name


def _model_name(model: object) -> str:
    """``model`` when it can be a model's label (module docstring)."""
    if not isinstance(model, str) or not model.strip():
        raise InputError("runs", None, f"model name {shown(model)} is not a non-empty string")
    if not model.isprintable() or len(model) > MAX_MODEL_NAME:
        raise InputError(
            "runs",
            None,
            f"model name {shown(model)}: use 1-{MAX_MODEL_NAME} printable characters (no line "
            "break, tab or other control character)",
        )
    return model


def _runs(inputs: AdhocInputs) -> dict[str, pd.DataFrame]:
    if not isinstance(inputs.runs, Mapping) or not inputs.runs:
        raise InputError("runs", None, "give at least one run: {model name: run}")
    if len(inputs.runs) > MAX_MODELS:
        raise InputError(
            "runs",
            None,
            f"{len(inputs.runs):,} runs: an ad-hoc bundle takes at most {MAX_MODELS:,}",
        )
    names: dict[str, str] = {}
    files: dict[str, str] = {}
    out = {}
    for model, run in inputs.runs.items():
        _model_name(model)
        name = unicodedata.normalize("NFKC", model).casefold()
        if name in names:
            raise InputError(
                "runs",
                None,
                f"models {names[name]!r} and {model!r} differ only in case or Unicode form; "
                "rename one",
            )
        stem = model_file(model)
        if stem.casefold() in files:
            raise InputError(
                "runs",
                None,
                f"models {files[stem.casefold()]!r} and {model!r} share the file name {stem!r}; "
                "rename one",
            )
        names[name], files[stem.casefold()] = model, model
        out[model] = _canonical_run(as_run(run, f"run {model!r}"))
    return out


def _canonical_run(run: pd.DataFrame) -> pd.DataFrame:
    """The run by query id, then by score from the highest, ties in their given order (module
    docstring)."""
    columns = ["query_id", "score"]
    return run.sort_values(columns, ascending=[True, False], kind="stable", ignore_index=True)


def _sorted(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    return frame.sort_values(columns, kind="stable", ignore_index=True)


def _split_id(value: object) -> str:
    """A split's query id as text: a string or an integer (numpy's too), not a boolean."""
    if isinstance(value, bool) or not isinstance(value, str | numbers.Integral):
        raise InputError("split", None, f"query id {shown(value)} is not a string or an integer")
    text = str(value)
    if not text.strip() or any(c in text for c in "\r\n"):
        raise InputError("split", None, f"query id {text!r} is empty or holds a line break")
    return text


def _split(split: object) -> tuple[str, list[str]] | None:
    if split is None:
        return None
    if isinstance(split, str | Path):
        return Path(split).name.split(".")[0] or "split", read_split_ids(split)
    if not isinstance(split, Iterable) or isinstance(split, bytes | bytearray):
        raise InputError(
            "split", None, f"a {type(split).__name__} is not a split file or a list of query ids"
        )
    ids = sorted(dict.fromkeys(_split_id(x) for x in split))
    if not ids:
        raise InputError("split", None, "the split holds no query id")
    return "split", ids


def _groups(inputs: AdhocInputs, models: list[str]) -> tuple[dict, dict]:
    """The run groups and run metadata of the inputs, checked as a manifest's are."""

    def fail(message: str) -> InputError:
        return InputError("groups", None, message)

    def no_files(what: str, path: str) -> Path:
        raise fail(f"{what}: fold query files are for manifests")

    raw: dict[str, dict] = {}
    for name, value in _mapping(inputs.groups, "groups", "{name: [run, ...]}").items():
        if isinstance(value, Mapping):
            raw[str(name)] = {"folds": {str(k): str(v) for k, v in value.items()}}
        elif isinstance(value, Iterable) and not isinstance(value, str):
            raw[str(name)] = {"seeds": [str(m) for m in value]}
        else:
            raise fail(f"group {name!r}: give a list of runs (seeds) or {{fold: run}} (folds)")
    groups = parse_groups(raw, models, fail, no_files)
    given = _mapping(inputs.metadata, "metadata", "{model: {name: number}}")
    meta = {
        str(m): dict(_mapping(v, f"metadata of {m!r}", "{name: number}")) for m, v in given.items()
    }
    metadata_fail = lambda message: InputError("metadata", None, message)  # noqa: E731
    return groups, parse_run_metadata(meta, [*models, *groups], metadata_fail)


def _check_folds(groups: Mapping[str, RunGroup], runs: Mapping[str, pd.DataFrame]) -> None:
    """Each fold's run answers queries of its own (an ad-hoc fold group has no fold query
    files, so its folds are the queries each run answers).

    Raises:
        InputError: a query answered by the runs of two folds of one group.
    """
    for group in groups.values():
        if group.kind != "folds":
            continue
        members = zip(group.folds, group.members, strict=True)
        clash = fold_clash({fold: runs[m]["query_id"].unique() for fold, m in members})
        if clash is not None:
            query, first, fold = clash
            raise InputError(
                "groups",
                None,
                f"group {group.name!r}: query {query!r} is answered by the runs of folds "
                f"{first!r} and {fold!r}; each fold's run answers its own queries",
            )


def _mapping(value: object, source: str, shape: str) -> Mapping:
    """``value`` when it is a mapping (None: an empty one).

    Raises:
        InputError: naming ``source`` and the ``shape`` expected.
    """
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InputError(source, None, f"{shown(value)} is not a mapping: give {shape}")
    return value


def _family(queries: pd.DataFrame, entities: pd.DataFrame | None) -> str:
    """``spatial`` when entities and queries have ``lat, lon`` (checked: WGS84 degrees or
    missing), else ``generic``."""
    both = {"lat", "lon"}
    spatial = (
        entities is not None and both <= set(entities.columns) and both <= set(queries.columns)
    )
    if spatial:
        _check_coordinates(queries, "queries", "query_id")
        _check_coordinates(entities, "entities", "doc_id")  # type: ignore[arg-type]
    return "spatial" if spatial else "generic"


def _check_coordinates(frame: pd.DataFrame, source: str, key: str) -> None:
    """``lat``/``lon`` are numbers in [-90, 90] / [-180, 180] or missing.

    Raises:
        InputError: naming the row's id (column ``key``) and the value.
    """
    import numpy as np
    import pandas as pd

    for column, limit in (("lat", 90.0), ("lon", 180.0)):
        raw = frame[column]
        values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        bad = (raw.notna().to_numpy() & np.isnan(values)) | (np.abs(values) > limit)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(
                source,
                None,
                f"{key} {frame[key].iloc[i]!r}: {column} {shown(raw.iloc[i])} is not a number in "
                f"[-{limit:g}, {limit:g}] (WGS84 degrees)",
            )


def _metrics_given(metrics: object) -> Sequence[str] | str | None:
    """The ``metrics`` argument when it is a string or a list of strings (or empty)."""
    if metrics is None or isinstance(metrics, str):
        return metrics
    if isinstance(metrics, Sequence) and all(isinstance(m, str) for m in metrics):
        return metrics
    raise InputError(
        "--metrics", None, f"{shown(metrics)}: give metric names (a list or 'hit@1,mrr')"
    )


def adhoc_dataset(inputs: AdhocInputs) -> ImportedDataset:
    """Read every input and check it (see :mod:`analysis.io.objects`); the dataset to write.

    Raises:
        InputError: a bad name, model name, metric or input (one line naming it).
    """
    import pandas as pd

    name = _name(inputs)
    metrics_given = _metrics_given(inputs.metrics)
    runs = _runs(inputs)
    qrels = _sorted(as_qrels(inputs.qrels, "qrels"), ["query_id", "doc_id"])
    if inputs.queries is not None:
        queries = as_queries(inputs.queries, "queries").drop_duplicates("query_id")
        queries = _sorted(queries, ["query_id"])
    else:
        queries = pd.DataFrame({"query_id": qrels["query_id"].drop_duplicates(), "text": ""})
    entities = None
    if inputs.entities is not None:
        entities = _sorted(as_entities(inputs.entities, "entities"), ["doc_id"])
    family = _family(queries, entities)
    try:
        metrics = [m.label for m in parse_metrics(metrics_given or DEFAULT_METRICS[family])]
    except ValueError as exc:
        raise InputError("--metrics", None, str(exc)) from None
    split = _split(inputs.split)
    if split and not set(split[1]) & set(qrels["query_id"]):
        raise InputError(
            "split", None, f"none of the split's {len(split[1]):,} query ids is in the qrels"
        )
    groups, run_metadata = _groups(inputs, list(runs))
    _check_folds(groups, runs)
    return ImportedDataset(
        name=name,
        family=family,
        queries=queries.reset_index(drop=True),
        qrels=qrels,
        metrics=metrics,
        entities=entities,
        runs=runs,
        splits=dict([split]) if split else {},
        default_split=split[0] if split else None,
        crs="EPSG:4326" if family == "spatial" else None,
        groups=groups,
        run_metadata=run_metadata,
    )


def write_adhoc_bundle(inputs: AdhocInputs, out: str | Path) -> ImportResult:
    """Write the ad-hoc bundle to ``out`` (built beside it and renamed into place).

    Raises:
        InputError: a bad input, or ``out`` is an input, lies inside an input folder or is a
            non-empty folder that is not a bundle.
    """
    target = check_out(out, inputs.paths())
    dataset = adhoc_dataset(inputs)
    write_bundle(
        target,
        dataset.name,
        [dataset],
        description=DESCRIPTION,
    )
    return ImportResult(out=target, datasets=[dataset])


def save_bundle(
    runs: Mapping[str, object], qrels: object, out: str | Path, **options: Unpack[AdhocOptions]
) -> Path:
    """Write runs and qrels (and, as keywords, ``queries``, ``entities``, ``name``,
    ``metrics``, ``split``, run ``groups`` and run ``metadata``: the fields of
    :class:`AdhocInputs`) as a bundle folder ``out`` that the app opens and others can be
    given. Returns ``out``.

    Raises:
        InputError: see :func:`write_adhoc_bundle`.
        TypeError: a keyword that is not a field of :class:`AdhocInputs`.
    """
    return write_adhoc_bundle(AdhocInputs(runs=runs, qrels=qrels, **options), out).out


def bundle_digest(folder: Path) -> str:
    """SHA-256 over every file under ``folder`` (relative path and bytes, in path order)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
        with path.open("rb") as f:
            while chunk := f.read(1 << 20):
                digest.update(chunk)
        digest.update(b"\0")
    return digest.hexdigest()


def keyed_adhoc_bundle(inputs: AdhocInputs, folder: str | Path) -> Path:
    """The ad-hoc bundle in ``folder/<name>-<content hash>`` (see the module docstring): written
    when no bundle of that content is there yet, else left as it is. Returns its path.

    Safe when several processes make the same bundle at once: each builds its own copy in a
    temporary folder (``.staging-<pid>-*``) and the first rename wins; the others remove
    theirs. The staging folder of a process that was killed while writing is removed by a
    later call once it is an hour old (:func:`remove_stale_staging`).

    Raises:
        InputError: a bad input (:func:`adhoc_dataset`), or ``folder`` cannot be made or written
            (it is a file, or lies below one).
    """
    dataset = adhoc_dataset(inputs)
    home = Path(folder).expanduser()
    try:
        home.mkdir(parents=True, exist_ok=True)
        remove_stale_staging(home)
        staging = Path(tempfile.mkdtemp(prefix=f".staging-{os.getpid()}-", dir=home))
    except FileExistsError:  # ``home`` is a file
        raise InputError(home, None, "cannot write: is a file, not a folder") from None
    except OSError as exc:  # a part of its path is a file, or it may not be written
        raise paths.path_error(home, exc, "cannot write") from None
    try:
        built = write_bundle(
            staging / "bundle",
            dataset.name,
            [dataset],
            description=DESCRIPTION,
        )
        digest = bundle_digest(built)
        final = home / f"{dataset.name}-{digest[:_HASH_CHARS]}"
        if final.is_dir() and bundle_digest(final) == digest:
            return final
        if final.is_dir() and not final.is_symlink():  # damaged (a file edited or removed)
            shutil.rmtree(final, ignore_errors=True)  # replaced by the fresh copy
        elif final.exists() or final.is_symlink():  # a file (or link) in the folder's place
            with contextlib.suppress(OSError):
                final.unlink()
        try:
            built.rename(final)
        except OSError:  # another process has just put the same bundle there
            if not (final.is_dir() and bundle_digest(final) == digest):
                raise
        return final
    finally:
        with contextlib.suppress(OSError):
            shutil.rmtree(staging)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    return True


def remove_stale_staging(home: Path, age: float = STALE_STAGING) -> list[Path]:
    """Remove the staging folders under ``home`` whose process no longer runs and that are
    older than ``age`` seconds (left by a process killed while writing); returns them."""
    removed = []
    now = time.time()
    for path in home.glob(".staging-*"):
        pid = path.name.split("-")[1]
        try:
            old = now - path.stat().st_mtime > age
        except OSError:
            continue
        if old and not (pid.isdigit() and _alive(int(pid))):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed
