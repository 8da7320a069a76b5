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

Runs and qrels are read by :mod:`analysis.io.objects` (paths, DataFrames, dicts, ranx,
PyTerrier and ir_datasets objects) and written as they were given: duplicates and queries
missing from a run stay, so the app's data checks report them as they would for the files.
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
import re
import shutil
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from analysis.core.errors import InputError
from analysis.core.names import parse_metrics
from analysis.io.bundle import DEFAULT_METRICS
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
    """

    runs: Mapping[str, object]
    qrels: object
    queries: object | None = None
    entities: object | None = None
    name: str | None = None
    metrics: Sequence[str] | str | None = None
    split: str | Path | Iterable[object] | None = None

    def paths(self) -> list[Path]:
        """The input files among the inputs (an output must lie outside them)."""
        given = [*self.runs.values(), self.qrels, self.queries, self.entities, self.split]
        return [Path(x) for x in given if isinstance(x, str | Path)]


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
            f"{name!r}: use 1-64 letters, digits, '.', '_' or '-' (a letter or digit first)",
        )
    return name


def _runs(inputs: AdhocInputs) -> dict[str, pd.DataFrame]:
    if not isinstance(inputs.runs, Mapping) or not inputs.runs:
        raise InputError("runs", None, "give at least one run: {model name: run}")
    files: dict[str, str] = {}
    out = {}
    for model, run in inputs.runs.items():
        if not isinstance(model, str) or not model.strip():
            raise InputError("runs", None, f"model name {model!r} is not a non-empty string")
        stem = model_file(model)
        if stem in files:
            raise InputError(
                "runs",
                None,
                f"models {files[stem]!r} and {model!r} share the file name {stem!r}; rename one",
            )
        files[stem] = model
        out[model] = as_run(run, f"run {model!r}")
    return out


def _split(split: object) -> tuple[str, list[str]] | None:
    if split is None:
        return None
    if isinstance(split, str | Path):
        return Path(split).name.split(".")[0] or "split", read_split_ids(split)
    if not isinstance(split, Iterable):
        raise InputError(
            "split", None, f"a {type(split).__name__} is not a split file or a list of query ids"
        )
    ids = list(dict.fromkeys(str(x) for x in split))
    if not ids:
        raise InputError("split", None, "the split holds no query id")
    return "split", ids


def _family(queries: pd.DataFrame, entities: pd.DataFrame | None) -> str:
    both = {"lat", "lon"}
    spatial = (
        entities is not None and both <= set(entities.columns) and both <= set(queries.columns)
    )
    return "spatial" if spatial else "generic"


def adhoc_dataset(inputs: AdhocInputs) -> ImportedDataset:
    """Read every input and check it (see :mod:`analysis.io.objects`); the dataset to write.

    Raises:
        InputError: a bad name, model name, metric or input (one line naming it).
    """
    import pandas as pd

    name = _name(inputs)
    runs = _runs(inputs)
    qrels = as_qrels(inputs.qrels, "qrels")
    if inputs.queries is not None:
        queries = as_queries(inputs.queries, "queries").drop_duplicates("query_id")
    else:
        queries = pd.DataFrame({"query_id": qrels["query_id"].drop_duplicates(), "text": ""})
    entities = None if inputs.entities is None else as_entities(inputs.entities, "entities")
    family = _family(queries, entities)
    try:
        metrics = [m.label for m in parse_metrics(inputs.metrics or DEFAULT_METRICS[family])]
    except ValueError as exc:
        raise InputError("--metrics", None, str(exc)) from None
    split = _split(inputs.split)
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
    runs: Mapping[str, object],
    qrels: object,
    out: str | Path,
    queries: object | None = None,
    entities: object | None = None,
    name: str | None = None,
    metrics: Sequence[str] | str | None = None,
    split: str | Path | Iterable[object] | None = None,
) -> Path:
    """Write runs and qrels (and optional queries, entities, split) as a bundle folder ``out``
    that the app opens and others can be given; the arguments are those of
    :class:`AdhocInputs`. Returns ``out``.

    Raises:
        InputError: see :func:`write_adhoc_bundle`.
    """
    inputs = AdhocInputs(runs=runs, qrels=qrels, queries=queries, entities=entities,
                         name=name, metrics=metrics, split=split)  # fmt: skip
    return write_adhoc_bundle(inputs, out).out


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
    temporary folder and the first rename wins; the others remove theirs.
    """
    dataset = adhoc_dataset(inputs)
    home = Path(folder).expanduser()
    home.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=home))
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
        if final.exists():  # damaged (a file edited or removed): replaced by the fresh copy
            shutil.rmtree(final, ignore_errors=True)
        try:
            built.rename(final)
        except OSError:  # another process has just put the same bundle there
            if not (final.is_dir() and bundle_digest(final) == digest):
                raise
        return final
    finally:
        with contextlib.suppress(OSError):
            shutil.rmtree(staging)
