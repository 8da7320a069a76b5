"""Write an imported bundle: ``bundle.toml`` plus Parquet tables, atomically.

The bundle is built in a temporary folder beside ``out`` and renamed into place at the end, so
an import that fails leaves nothing behind (and an existing bundle at ``out`` is only replaced
once the new one is complete). ``out`` may not lie inside an input folder (importing would write
into the input) and may not be an input folder's parent's file: both are refused up front.

Layout written (one folder per dataset)::

    bundle.toml
    <dataset>/queries.parquet   query_id, text, dataset-independent slice columns ...
    <dataset>/qrels.parquet     query_id, doc_id, relevance
    <dataset>/entities.parquet  doc_id, name, text, type [+ lat, lon ...]   (optional)
    <dataset>/edges.parquet     src_id, relation, dst_id                     (optional)
    <dataset>/split/<name>.index                                           (optional)
    <dataset>/runs/<model>.parquet   query_id, doc_id, score, rank
    <dataset>/runs/<model>.metrics.json   the published summary found beside the run (optional;
                                     see :mod:`analysis.io.summaries`)

An entities or edges table shared by several datasets (a STaRK SKB serves both query sets) is
written once, in the first dataset's folder, and both manifest entries point at it. Models whose
names are not plain file stems (``ada-002/test``) are listed in the manifest as a
``runs = {model = "file"}`` table; a model whose file stem (:func:`model_file`) an earlier model
of the dataset already has, in any case (``a/b`` and ``a__b``, ``BM25`` and ``bm25``), gets
``-`` and 8 hex digits of its name's hash appended, so that no run file replaces another.
Parquet is written with fixed options (zstd, no pandas index) so equal data gives equal bytes.
A dataset's name is its folder in the bundle: a name that is not one plain folder name (empty,
``.``, ``..``, holding ``/``, ``\\``, a line break or another control character, a Windows
device name such as ``con``, longer than 100 characters) is refused before anything is
written, and so is a split whose query id a split file cannot hold (one id per line: an id
with whitespace, or starting with ``#``, which the reader skips as a comment).
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from analysis.core import paths, progress
from analysis.core.errors import InputError
from analysis.io._text import ASCII_SPACE
from analysis.io.atomic import atomic_folder
from analysis.io.groups import RunGroup

_SAFE = re.compile(r"[^\w.-]+")
#: The longest model file stem, in UTF-8 bytes (file systems allow 255 for a whole name).
MAX_STEM_BYTES = 100


@dataclass
class ImportedDataset:
    """One dataset of an import, in the project's vocabulary (ids are strings).

    ``splits`` maps a split name to its query ids (written as ``split/<name>.index``);
    ``default_split`` is the manifest's ``split`` key. ``runs`` maps a model name to a run
    ``query_id, doc_id, score, rank``; ``summaries`` a model name to the JSON object of its
    published summary (:func:`analysis.io.summaries.wrapped`).
    """

    name: str
    family: str
    queries: pd.DataFrame
    qrels: pd.DataFrame
    metrics: Sequence[str]
    entities: pd.DataFrame | None = None
    edges: pd.DataFrame | None = None
    runs: dict[str, pd.DataFrame] = field(default_factory=dict)
    splits: dict[str, list[str]] = field(default_factory=dict)
    default_split: str | None = None
    crs: str | None = None
    description: str = ""
    summaries: dict[str, dict] = field(default_factory=dict)
    groups: dict[str, RunGroup] = field(default_factory=dict)
    run_metadata: dict[str, dict[str, float]] = field(default_factory=dict)


@dataclass
class ImportResult:
    """What an import wrote: the bundle folder, its datasets and the data-check notes."""

    out: Path
    datasets: list[ImportedDataset]
    notes: list[str] = field(default_factory=list)

    def summary(self) -> list[str]:
        """One line per dataset: queries, qrels rows, entities, models."""
        lines = []
        for ds in self.datasets:
            n_ent = 0 if ds.entities is None else len(ds.entities)
            models = ", ".join(ds.runs) or "none"
            lines.append(
                f"{ds.name}: {len(ds.queries):,} queries, {len(ds.qrels):,} qrels rows, "
                f"{n_ent:,} entities, runs: {models}"
            )
        return lines


def check_out(out: str | Path, inputs: Iterable[str | Path]) -> Path:
    """Resolve ``out`` and refuse one inside (or equal to) an input folder or file.

    Raises:
        InputError: ``out`` is an input, lies inside one, or is an existing non-bundle file.
    """
    target = paths.resolve(out)
    for item in inputs:
        src = paths.resolve(item)
        if target == src or target.is_relative_to(src) or src.is_relative_to(target):
            raise InputError(
                out, None, f"--out must lie outside the input {src.name!r} (inputs are only read)"
            )
    if target.exists() and not target.is_dir():
        raise InputError(out, None, "exists and is not a folder")
    if target.is_dir() and any(target.iterdir()) and not (target / "bundle.toml").is_file():
        raise InputError(out, None, "is a non-empty folder without bundle.toml; not replacing it")
    return target


def _table(frame: pd.DataFrame) -> pa.Table:
    columns = {}
    for name in frame.columns:
        col = frame[name]
        numeric = pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col)
        if str(name).endswith("_id") or not numeric:
            values = col.astype(object).where(col.notna(), "").astype("str")
            columns[str(name)] = pa.array(values.tolist(), type=pa.string())
        else:
            columns[str(name)] = pa.array(col.to_numpy())
    return pa.table(columns)


def write_parquet(frame: pd.DataFrame, path: Path) -> None:
    """Write ``frame`` as Parquet with fixed options (strings for id and text columns)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(
        _table(frame),
        path,
        compression="zstd",
        compression_level=6,
        use_dictionary=True,
        store_schema=False,
    )


def model_file(model: str) -> str:
    """A file stem for ``model`` (``ada-002/test`` -> ``ada-002__test``): the name in Unicode
    NFC with letters and digits of any script, ``.``, ``_`` and ``-`` kept and other runs of
    characters written ``_``, without a leading dot; a name Windows reserves for a device
    (:func:`is_device_name`) gets ``_`` before its first dot; a stem longer than
    :data:`MAX_STEM_BYTES` is cut and ends with ``-`` and 8 hex digits of the name's hash."""
    text = unicodedata.normalize("NFC", model).replace("/", "__")
    stem = _SAFE.sub("_", text).strip("_").lstrip(".") or "model"
    if is_device_name(stem):  # con -> con_, nul.txt -> nul_.txt
        head, dot, tail = stem.partition(".")
        stem = f"{head}_{dot}{tail}"
    if len(stem.encode()) <= MAX_STEM_BYTES:
        return stem
    digest = hashlib.sha256(model.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    cut = stem.encode()[: MAX_STEM_BYTES - 9].decode("utf-8", "ignore")
    return f"{cut}-{digest}"


def run_stems(models: Iterable[str]) -> dict[str, str]:
    """model -> the stem of its files in a dataset's ``runs/`` folder: :func:`model_file`,
    made unique (module docstring)."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for model in models:
        stem = model_file(model)
        if stem.casefold() in taken:
            digest = hashlib.sha256(model.encode("utf-8", "surrogatepass")).hexdigest()[:8]
            cut = stem.encode()[: MAX_STEM_BYTES - 9].decode("utf-8", "ignore")
            stem = f"{cut}-{digest}"
        taken.add(stem.casefold())
        out[model] = stem
    return out


#: Names Windows reserves for devices: no file or folder there may have one, whatever follows
#: its first dot (``con``, ``NUL.txt``).
_DEVICES = frozenset(
    ["con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))]
)


def is_device_name(name: str) -> bool:
    """Whether Windows reads the file name ``name`` as a device (``con``, ``NUL.txt``,
    ``com1``, any case, trailing spaces ignored)."""
    return name.split(".", 1)[0].rstrip(" ").casefold() in _DEVICES


def check_dataset_name(name: str, option: str = "--name") -> str:
    """``name`` when it can be a dataset's folder in a bundle (module docstring).

    Raises:
        InputError: naming ``option``.
    """
    text = str(name)
    bad = (
        not text.strip()
        or text in (".", "..")
        or any(c in text for c in "/\\")
        or not text.isprintable()
        or len(text) > 100
        or is_device_name(text)
    )
    if bad:
        raise InputError(
            option,
            None,
            f"{text[:60]!r}: a dataset name is one folder name (no '/', '\\', '..' or control "
            "characters, not a name Windows keeps for a device such as 'con' or 'aux', at most "
            "100 characters)",
        )
    return text


def _check_split_ids(ds: ImportedDataset) -> None:
    """Refuse a split id that a ``split/<name>.index`` file cannot hold (module docstring).

    Raises:
        InputError: naming the dataset, the split and the id.
    """
    for split, ids in ds.splits.items():
        for q in ids:
            text = str(q)
            if not text or text.startswith("#") or any(c in text for c in ASCII_SPACE):
                raise InputError(
                    ds.name,
                    None,
                    f"query id {text!r:.60} of split {split!r}: a split file holds one id per "
                    "line, so an id of a split may hold no whitespace and not start with '#'",
                )


def _toml_str(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else _toml_str(key)


def _shared_paths(datasets: Sequence[ImportedDataset], table: str) -> dict[str, str | None]:
    """Dataset -> path of its ``entities``/``edges`` file: a table shared by several datasets
    (the same object, e.g. a STaRK SKB) is written once, in the first dataset's folder."""
    first: dict[int, str] = {}
    out: dict[str, str | None] = {}
    for ds in datasets:
        frame = getattr(ds, table)
        out[ds.name] = (
            None if frame is None else first.setdefault(id(frame), f"{ds.name}/{table}.parquet")
        )
    return out


def _manifest(name: str, description: str, datasets: Sequence[ImportedDataset]) -> str:
    shared = {t: _shared_paths(datasets, t) for t in ("entities", "edges")}
    lines = [f"name = {_toml_str(name)}"]
    if description:
        lines.append(f"description = {_toml_str(description)}")
    for ds in datasets:
        lines += ["", f"[datasets.{_toml_key(ds.name)}]"]
        if ds.description:
            lines.append(f"description = {_toml_str(ds.description)}")
        lines.append(f"family = {_toml_str(ds.family)}")
        if ds.crs:
            lines.append(f"crs = {_toml_str(ds.crs)}")
        lines.append(f"queries = {_toml_str(f'{ds.name}/queries.parquet')}")
        lines.append(f"qrels = {_toml_str(f'{ds.name}/qrels.parquet')}")
        for table in ("entities", "edges"):
            path = shared[table][ds.name]
            if path is not None:
                lines.append(f"{table} = {_toml_str(path)}")
        if ds.splits:
            items = ", ".join(
                f"{_toml_key(s)} = {_toml_str(f'{ds.name}/split/{s}.index')}" for s in ds.splits
            )
            lines.append(f"splits = {{ {items} }}")
            if ds.default_split:
                lines.append(f"split = {_toml_str(ds.default_split)}")
        if ds.runs:
            stems = run_stems(ds.runs)
            items = ", ".join(
                f"{_toml_key(m)} = {_toml_str(f'{ds.name}/runs/{stems[m]}.parquet')}"
                for m in ds.runs
            )
            lines.append(f"runs = {{ {items} }}")
        else:
            lines.append("runs = {}")
        lines.append("metrics = [" + ", ".join(_toml_str(m) for m in ds.metrics) + "]")
        lines += _group_lines(ds)
    return "\n".join(lines) + "\n"


def _group_lines(ds: ImportedDataset) -> list[str]:
    """The dataset's ``groups`` and ``run_metadata`` tables (:mod:`analysis.io.groups`)."""
    lines: list[str] = []
    for name, group in ds.groups.items():
        lines += ["", f"[datasets.{_toml_key(ds.name)}.groups.{_toml_key(name)}]"]
        if group.kind == "seeds":
            lines.append("seeds = [" + ", ".join(_toml_str(m) for m in group.members) + "]")
        else:
            pairs = zip(group.folds, group.members, strict=True)
            items = ", ".join(f"{_toml_key(f)} = {_toml_str(m)}" for f, m in pairs)
            lines.append(f"folds = {{ {items} }}")
    if ds.run_metadata:
        lines += ["", f"[datasets.{_toml_key(ds.name)}.run_metadata]"]
        for model, numbers in ds.run_metadata.items():
            items = ", ".join(f"{_toml_key(k)} = {float(v)!r}" for k, v in numbers.items())
            lines.append(f"{_toml_key(model)} = {{ {items} }}")
    return lines


def write_bundle(
    out: Path, name: str, datasets: Sequence[ImportedDataset], description: str = ""
) -> Path:
    """Write the datasets as a bundle at ``out`` (see the module docstring); returns ``out``.

    Built in a temporary folder beside ``out``, synced and renamed at the end
    (:func:`analysis.io.atomic.atomic_folder`); an existing bundle at ``out`` is replaced only
    then, and a failed write (a full disk) leaves it as it was.

    Raises:
        InputError: ``out``'s folder cannot be made (a part of its path is a file) or written.
    """
    for ds in datasets:
        check_dataset_name(ds.name)
        _check_split_ids(ds)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:  # the folder of ``out`` is a file
        raise InputError(out, None, f"cannot write: {out.parent} is a file, not a folder") from None
    except OSError as exc:  # a part of the path above is a file, or may not be written
        raise paths.path_error(out, exc, "cannot write") from None
    shared = {t: _shared_paths(datasets, t) for t in ("entities", "edges")}
    shown = progress.current()
    shown.plan(sum(len(ds.runs) for ds in datasets), "run files written")

    def build(tmp: Path) -> None:
        for ds in datasets:
            folder = tmp / ds.name
            write_parquet(ds.queries, folder / "queries.parquet")
            write_parquet(ds.qrels, folder / "qrels.parquet")
            for table in ("entities", "edges"):
                frame = getattr(ds, table)
                if frame is not None and shared[table][ds.name] == f"{ds.name}/{table}.parquet":
                    write_parquet(frame, folder / f"{table}.parquet")
            for split, ids in ds.splits.items():
                path = folder / "split" / f"{split}.index"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text("".join(f"{q}\n" for q in ids), encoding="utf-8")
            stems = run_stems([*ds.runs, *(m for m in ds.summaries if m not in ds.runs)])
            for model, run in ds.runs.items():
                write_parquet(run, folder / "runs" / f"{stems[model]}.parquet")
                shown.advance(1, len(run))
            for model, summary in ds.summaries.items():
                path = folder / "runs" / f"{stems[model]}.metrics.json"
                path.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
        (tmp / "bundle.toml").write_text(_manifest(name, description, datasets), encoding="utf-8")

    return atomic_folder(out, build)


def run_frame(run: pd.DataFrame) -> pd.DataFrame:
    """A run as ``query_id, doc_id, score, rank`` (rank 1-based in file order per query when the
    source has none; ids as strings)."""
    out = pd.DataFrame(
        {
            "query_id": run["query_id"].astype("str").to_numpy(),
            "doc_id": run["doc_id"].astype("str").to_numpy(),
            "score": run["score"].to_numpy(dtype=np.float64),
        }
    )
    if "rank" in run.columns:
        out["rank"] = run["rank"].to_numpy(dtype=np.int64)
    else:
        out["rank"] = out.groupby("query_id", sort=False).cumcount().to_numpy(np.int64) + 1
    return out
