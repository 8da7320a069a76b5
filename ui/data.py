"""Cached loading for the pages: bundles under the data roots, datasets, per-query tables and
ranked runs. Every cache key includes the (path, mtime, size) of the files read, so an edited
file is read again; tables are shared read-only between sessions (``st.cache_resource``).

Data roots: the folders listed in the environment variable ``RETRIEVAL_DASHBOARD_DATA_ROOTS``
(separated by ``os.pathsep``), else the project's ``data/`` folder. Only bundles found under
these roots can be selected (also from a URL).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pandas as pd
import streamlit as st

from analysis.core.errors import DataWarning, InputError
from analysis.core.metrics import rank_run
from analysis.io import load_run
from analysis.io.bundle import Bundle, Dataset, DatasetSpec, load_dataset, read_manifest
from analysis.stats import mean_ci
from analysis.stats.cache import cached_table
from analysis.stats.perquery import dashboard_metrics, per_query_table

ROOT = Path(__file__).resolve().parents[1]
ROOTS_ENV = "RETRIEVAL_DASHBOARD_DATA_ROOTS"
UPLOADS = "_uploads"
MAX_DEPTH = 3


def data_roots() -> list[Path]:
    """The configured data roots (resolved, existing folders only)."""
    raw = os.environ.get(ROOTS_ENV, "")
    roots = [Path(p).expanduser() for p in raw.split(os.pathsep) if p] or [ROOT / "data"]
    return [r.resolve() for r in roots if r.is_dir()]


@st.cache_data(ttl=30, max_entries=4, show_spinner=False)
def available_bundles() -> dict[str, Path]:
    """Bundle id -> folder, for every ``bundle.toml`` up to three levels under a data root.
    Ids are the folder paths relative to their root (prefixed by the root's name when there are
    several roots); symlinks leaving the root (a linked folder or a linked ``bundle.toml``) are
    ignored. These ids are the only bundles a URL can select."""
    roots = data_roots()
    found: dict[str, Path] = {}
    for root in roots:
        for manifest in sorted(root.glob("**/bundle.toml")):
            folder = manifest.parent.resolve()
            if not manifest.resolve().is_relative_to(folder):
                continue  # bundle.toml is a link to a file elsewhere
            rel = folder.relative_to(root) if folder.is_relative_to(root) else None
            if rel is None or len(rel.parts) > MAX_DEPTH:
                continue
            name = rel.as_posix() if rel.parts else root.name
            bundle_id = name if len(roots) == 1 else f"{root.name}/{name}"
            found.setdefault(bundle_id, folder)
    return dict(sorted(found.items(), key=lambda kv: (kv[0] != "demo", kv[0])))


def stamp(*paths: Path | None) -> tuple[tuple[str, int, int], ...]:
    """(path, mtime_ns, size) of each file (and of each file directly inside a folder)."""
    out = []
    for path in paths:
        if path is None:
            continue
        files = sorted(path.iterdir()) if path.is_dir() else [path]
        for f in files:
            try:
                info = f.stat()
            except OSError:
                out.append((str(f), -1, -1))
                continue
            out.append((str(f), info.st_mtime_ns, info.st_size))
    return tuple(out)


@st.cache_resource(max_entries=16, show_spinner=False)
def _bundle(folder: str, key: tuple) -> Bundle:
    del key
    return read_manifest(folder, skip_broken=True)


def load_bundle(folder: Path) -> Bundle:
    """The parsed manifest of the bundle in ``folder``; datasets whose manifest entry is wrong
    are left out and listed in ``Bundle.broken`` (the others stay usable)."""
    return _bundle(str(folder), stamp(folder / "bundle.toml"))


def reload() -> None:
    """Forget the bundle list and the parsed manifests (cheap), so run files added, removed or
    renamed since they were read are seen; data tables are keyed by file stamps and need no
    clearing."""
    available_bundles.clear()
    _bundle.clear()


def _spec_files(spec: DatasetSpec) -> tuple[Path | None, ...]:
    return (
        spec.queries,
        spec.qrels,
        spec.entities,
        spec.edges,
        spec.query_groups,
        spec.metapaths,
        *spec.splits.values(),
        *spec.runs.values(),
    )


@st.cache_resource(max_entries=32, show_spinner=False)
def _dataset(spec: DatasetSpec, key: tuple) -> Dataset:
    del key
    return load_dataset(spec)


def dataset(bundle: Bundle, name: str) -> Dataset:
    """A loaded dataset of the bundle (tables only; runs are read by :func:`per_query`)."""
    spec = bundle.datasets[name]
    return _dataset(spec, stamp(*_spec_files(spec)))


def uploads(name: str) -> dict[str, tuple[str, bytes]]:
    """Runs uploaded in this session for dataset ``name``: model -> (file name, bytes)."""
    return st.session_state.get(UPLOADS, {}).get(name, {})


def add_upload(dataset_name: str, file_name: str, content: bytes) -> str:
    """Parse an uploaded run (any run format) and keep it for this session; returns the model
    name. Raises InputError (naming the uploaded file) when it cannot be read."""
    model = "upload:" + Path(file_name).name.split(".")[0]
    _read_upload(file_name, content)  # validate now: errors name the file and line
    store = st.session_state.setdefault(UPLOADS, {})
    store.setdefault(dataset_name, {})[model] = (file_name, content)
    return model


def _read_upload(file_name: str, content: bytes) -> pd.DataFrame:
    suffix = "".join(Path(file_name).suffixes[-2:]) or ".txt"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"upload{suffix}"
        path.write_bytes(content)
        try:
            return load_run(path)
        except InputError as exc:
            raise InputError(file_name, exc.line, exc.message) from None


def models_of(bundle: Bundle, datasets: list[str]) -> list[str]:
    """Model names over the datasets (manifest order, then uploads)."""
    out: list[str] = []
    for name in datasets:
        spec = bundle.datasets.get(name)
        if spec is None:
            continue
        for model in [*spec.runs, *uploads(name)]:
            if model not in out:
                out.append(model)
    return out


@st.cache_resource(max_entries=48, show_spinner=False)
def _per_query(
    spec: DatasetSpec, ties: str, key: tuple, upload_key: tuple
) -> tuple[pd.DataFrame, dict[str, list[DataWarning]]]:
    del key
    metrics = dashboard_metrics(spec.metrics)

    def compute() -> tuple[pd.DataFrame, dict[str, list[DataWarning]]]:
        ds = load_dataset(spec)
        runs = {model: load_run(path) for model, path in spec.runs.items()}
        for model, file_name, content in upload_key:
            runs[model] = _read_upload(file_name, content)
        return per_query_table(
            ds.queries,
            ds.qrels,
            runs,
            dataset=spec.name,
            metrics=metrics,
            ties=ties,  # type: ignore[arg-type]
            relevance_threshold=spec.relevance_threshold,
            headline=spec.metrics,
            entities=ds.entities,
        )

    params = {"dataset": spec.name, "ties": ties, "metrics": metrics, "spec": repr(spec),
              "uploads": [(m, f) for m, f, _ in upload_key]}  # fmt: skip
    uploaded = b"".join(c for _, _, c in upload_key)
    return cached_table(_spec_files(spec), params, compute, extra=uploaded)


def per_query(
    bundle: Bundle, datasets: list[str], ties: str
) -> tuple[pd.DataFrame, dict[tuple[str, str], list[DataWarning]], dict[str, str]]:
    """The per-query table of the selected datasets (all models), the warnings per
    (dataset, model), and a one-line error per dataset that could not be loaded (the other
    datasets are still shown)."""
    frames: list[pd.DataFrame] = []
    warnings: dict[tuple[str, str], list[DataWarning]] = {}
    errors: dict[str, str] = {}
    for name in datasets:
        spec = bundle.datasets[name]
        upload_key = tuple((m, f, c) for m, (f, c) in uploads(name).items())
        try:
            table, found = _per_query(spec, ties, stamp(*_spec_files(spec)), upload_key)
        except (InputError, OSError) as exc:
            errors[name] = str(exc)
            continue
        frames.append(table)
        for model, items in found.items():
            warnings[(name, model)] = items
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return table, warnings, errors


@st.cache_data(max_entries=64, show_spinner=False)
def _summary(
    specs: tuple[DatasetSpec, ...],
    ties: str,
    key: tuple,
    metrics: tuple[str, ...],
    by: tuple[str, ...],
) -> pd.DataFrame:
    del key
    frames = []
    for spec in specs:
        upload_key = tuple((m, f, c) for m, (f, c) in uploads(spec.name).items())
        frames.append(_per_query(spec, ties, stamp(*_spec_files(spec)), upload_key)[0])
    table = pd.concat(frames, ignore_index=True)
    return mean_ci(table, [m for m in metrics if m in table.columns], by=list(by))


def summary(
    bundle: Bundle, datasets: list[str], ties: str, metrics: list[str], by: list[str]
) -> pd.DataFrame:
    """Cached :func:`analysis.stats.mean_ci` of the per-query table of the datasets that load
    (mean, n and 95% bootstrap CI of each metric per group of ``by``)."""
    _, _, errors = per_query(bundle, datasets, ties)
    specs = tuple(bundle.datasets[n] for n in datasets if n not in errors)
    key = tuple(
        (stamp(*_spec_files(s)), tuple((m, f) for m, (f, _) in uploads(s.name).items()))
        for s in specs
    )
    return _summary(specs, ties, key, tuple(metrics), tuple(by))


@st.cache_resource(max_entries=64, show_spinner=False)
def _ranked(spec: DatasetSpec, model: str, ties: str, key: tuple, upload: tuple) -> pd.DataFrame:
    del key
    run = _read_upload(upload[0], upload[1]) if upload else load_run(spec.runs[model])
    return rank_run(run, ties)  # type: ignore[arg-type]


def ranked_run(bundle: Bundle, name: str, model: str, ties: str) -> pd.DataFrame:
    """The run of ``model`` on dataset ``name`` as evaluated: ``query_id, doc_id, score, rank``."""
    spec = bundle.datasets[name]
    upload = uploads(name).get(model, ())
    path = spec.runs.get(model)
    return _ranked(spec, model, ties, stamp(path), upload)
