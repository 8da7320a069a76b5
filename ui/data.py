"""Cached loading for the pages: bundles under the data roots, datasets, per-query tables and
ranked runs. Every cache key includes the (path, mtime, size, ctime) of the files read
(:func:`stamp`), so an edited file is read again; tables are shared read-only between sessions
(``st.cache_resource``).

Data roots: the folders listed in the environment variable ``RETRIEVAL_DASHBOARD_DATA_ROOTS``
(separated by ``os.pathsep``), else the project's ``data/`` folder. Only bundles found under
these roots can be selected (also from a URL).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path

import pandas as pd
import streamlit as st

from analysis.core import paths
from analysis.core.errors import DataWarning, InputError
from analysis.core.measures import user_fingerprint
from analysis.core.metrics import rank_run
from analysis.io import load_run
from analysis.io.audits import run_audits, summary_files
from analysis.io.bundle import (
    Bundle,
    Dataset,
    DatasetSpec,
    is_confined,
    load_dataset,
    load_model_run,
    read_manifest,
)
from analysis.io.groups import run_metadata as read_run_metadata
from analysis.stats import mean_ci
from analysis.stats.cache import cached_table, settled_stat
from analysis.stats.perquery import dashboard_metrics, per_query_table
from ui import _compat

ROOT = Path(__file__).resolve().parents[1]
ROOTS_ENV = "RETRIEVAL_DASHBOARD_DATA_ROOTS"
UPLOADS = "_uploads"
#: the SHA-256 of each upload's content, by (dataset, model), written with the upload
UPLOAD_DIGESTS = "_upload_digests"
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
            # the confinement rule of the library: no link leading out of the roots
            if not is_confined(manifest, [folder]) or not is_confined(folder, [root]):
                continue
            rel = folder.relative_to(root)
            if rel is None or len(rel.parts) > MAX_DEPTH:
                continue
            name = rel.as_posix() if rel.parts else root.name
            bundle_id = name if len(roots) == 1 else f"{root.name}/{name}"
            found.setdefault(bundle_id, folder)
    return dict(sorted(found.items(), key=lambda kv: (kv[0] != "demo", kv[0])))


def stamp(*paths: Path | None) -> tuple[tuple[str, int, int, int], ...]:
    """(path, mtime_ns, size, ctime_ns) of each file (and of each file directly inside a
    folder), read by :func:`analysis.stats.cache.settled_stat`: a file rewritten with its size
    and mtime put back, or rewritten right after it was stamped, gets a new stamp."""
    out = []
    for path in paths:
        if path is None:
            continue
        files = sorted(path.iterdir()) if path.is_dir() else [path]
        for f in files:
            try:
                info = settled_stat(f)
            except OSError:
                out.append((str(f), -1, -1, -1))
                continue
            out.append((str(f), info.st_mtime_ns, info.st_size, info.st_ctime_ns))
    return tuple(out)


@st.cache_resource(max_entries=16, show_spinner=False)
def _bundle(folder: str, key: tuple) -> Bundle:
    del key
    return read_manifest(folder, skip_broken=True, roots=data_roots())


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
        *(f for group in spec.groups.values() for f in group.fold_files),
        *summary_files(spec),  # published summaries beside the runs: audited with them
    )


def model_files(spec: DatasetSpec, model: str) -> tuple[Path, ...]:
    """The run files of ``model``: its run, or its members' runs for a group (and the fold
    query files of a fold group)."""
    group = spec.groups.get(model)
    if group is None:
        return (spec.runs[model],) if model in spec.runs else ()
    return (*(spec.runs[m] for m in group.members), *group.fold_files)


#: Cache keys hash a dataset's manifest entry by its ``repr`` (every field, written out; about
#: 0.15 ms) instead of Streamlit's generic walk of the object (about 4 ms per call, paid on every
#: rerun by every cached function taking one).
SPEC_HASH = {DatasetSpec: repr}


ALL = "all"


def load_split(spec: DatasetSpec, split: str | None) -> Dataset:
    """``load_dataset(spec, split)``: ``None`` = the manifest's default split (every query when
    there is none), ``"all"`` = every query, a name = that split's queries and their qrels."""
    return load_dataset(spec, split=split)


def dataset(bundle: Bundle, name: str, split: str | None = ALL) -> Dataset:
    """A loaded dataset of the bundle (tables only; runs are read by :func:`per_query`); by
    default every query of it (``split="all"``), so any query's qrels can be looked up. Cached in
    a store sized for the bundle (a page looping over 100 datasets keeps them all)."""
    spec = bundle.datasets[name]
    store = _lru("dataset")
    store.fit(len(bundle.datasets))
    key = (repr(spec), stamp(*_spec_files(spec)), split)
    return store.get(key, lambda: load_split(spec, split))  # type: ignore[return-value]


def uploads(name: str) -> dict[str, tuple[str, bytes]]:
    """Runs uploaded in this session for dataset ``name``: model -> (file name, bytes); none
    outside a session's run (a background job: :mod:`ui.jobs` runs a session's jobs in its own
    run when it holds uploads)."""
    if not _compat.in_script_run():
        return {}
    return st.session_state.get(UPLOADS, {}).get(name, {})


def add_upload(dataset_name: str, file_name: str, content: bytes) -> str:
    """Parse an uploaded run (any run format) and keep it for this browser session (in
    ``st.session_state``, never shared); returns the model name. Raises InputError (naming the
    uploaded file) when it cannot be read. Cached results are keyed by the content's SHA-256,
    not by the file name, so two sessions uploading different runs of one name never see each
    other's numbers."""
    model = "upload:" + Path(file_name).name.split(".")[0]
    _read_upload(file_name, content)  # validate now: errors name the file and line
    store = st.session_state.setdefault(UPLOADS, {})
    store.setdefault(dataset_name, {})[model] = (file_name, content)
    digests = st.session_state.setdefault(UPLOAD_DIGESTS, {})
    digests[(dataset_name, model)] = hashlib.sha256(content).hexdigest()  # once, not per key
    return model


def _read_upload(file_name: str, content: bytes) -> pd.DataFrame:
    """The uploaded run, read from a private temporary copy; a copy that cannot be written (a
    full temporary folder) is an InputError naming the upload, as a bad file is."""
    suffix = "".join(Path(file_name).suffixes[-2:]) or ".txt"
    try:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / f"upload{suffix}"
            with paths.reading(file_name, "cannot be stored for reading"):
                path.write_bytes(content)
            try:
                return load_run(path)
            except InputError as exc:
                raise InputError(file_name, exc.line, exc.message) from None
    except OSError as exc:  # the temporary folder itself
        raise paths.path_error(file_name, exc, "cannot be stored for reading") from None


def models_of(bundle: Bundle, datasets: list[str]) -> list[str]:
    """Model names over the datasets (manifest order, then uploads)."""
    out: list[str] = []
    for name in datasets:
        spec = bundle.datasets.get(name)
        if spec is None:
            continue
        for model in [*spec.models, *uploads(name)]:
            if model not in out:
                out.append(model)
    return out


def _upload_key(name: str) -> tuple[tuple[str, str, str], ...]:
    """(model, file name, SHA-256 of the content) of this session's uploads for ``name`` (the
    digest :func:`add_upload` stored with the upload: a 200 MB run is not hashed again for
    every key of every rerun)."""
    found = uploads(name)
    digests = st.session_state.get(UPLOAD_DIGESTS, {}) if found else {}
    return tuple(
        (m, f, digests.get((name, m)) or hashlib.sha256(c).hexdigest())
        for m, (f, c) in found.items()
    )


class _Abandoned(Exception):
    """The computation a caller waited for stopped without a result (its script run was
    interrupted): the caller computes the value itself."""


class _LRU:
    """A thread-safe least-recently-used map whose capacity follows the size of the bundle
    in use: ``capacity(n)`` keeps at least ``PER_DATASET`` entries per dataset of the largest
    bundle seen (never fewer than ``FLOOR``, never more than ``CEILING``), so a 100-dataset
    selection stays cached between reruns instead of evicting itself.

    A key is computed once even when several sessions ask for it at the same time (the
    server's warm-up run and the first visitor, two people opening one dataset): the later
    callers wait for the first one's value, or its error. Other keys compute meanwhile."""

    FLOOR, PER_DATASET, CEILING = 48, 3, 4096

    def __init__(self) -> None:
        self._items: OrderedDict[tuple, object] = OrderedDict()
        self._pending: dict[tuple, Future] = {}
        self._lock = threading.Lock()
        self.capacity = self.FLOOR

    def fit(self, n_datasets: int) -> None:
        wanted = min(self.CEILING, max(self.FLOOR, self.PER_DATASET * n_datasets))
        self.capacity = max(self.capacity, wanted)

    def get(self, key: tuple, make: Callable[[], object]) -> object:
        while True:
            with self._lock:
                if key in self._items:
                    self._items.move_to_end(key)
                    return self._items[key]
                pending = self._pending.get(key)
                if pending is None:  # this caller computes it
                    pending = self._pending[key] = Future()
                    break
            try:
                return pending.result()  # computed by another session meanwhile
            except _Abandoned:
                continue
        try:
            value = make()  # outside the lock: other datasets load meanwhile
        except Exception as exc:
            self._settle(key, pending, error=exc)
            raise
        except BaseException:  # the script run stopped (a rerun): a waiter computes it
            self._settle(key, pending, error=_Abandoned())
            raise
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)
            del self._pending[key]
        pending.set_result(value)
        return value

    def _settle(self, key: tuple, pending: Future, error: BaseException) -> None:
        with self._lock:
            del self._pending[key]
        pending.set_exception(error)

    def __len__(self) -> int:
        return len(self._items)


@st.cache_resource(max_entries=4, show_spinner=False)
def _lru(kind: str) -> _LRU:
    """One store per kind of table (``"per_query"``, ``"dataset"``), shared read-only between
    sessions."""
    del kind
    return _LRU()


def _measures() -> dict[str, object]:
    """The user measures' fingerprint for a cache key (nothing when there are none): a changed
    plugin definition computes its tables again."""
    found = user_fingerprint()
    return {"measures": found} if found else {}


@functools.cache
def app_code() -> str:
    """SHA-256 (first 16 hex digits) of this module's source, part of the disk cache keys of
    the tables computed here (the library's own code is in every key already): a changed
    computation of the app never reads a table the old one stored."""
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]


def _per_query_store() -> _LRU:
    """The per-dataset per-query tables."""
    return _lru("per_query")


def _per_query(
    spec: DatasetSpec, ties: str, key: tuple, upload_key: tuple, split: str | None = None
) -> tuple[pd.DataFrame, dict[str, list[DataWarning]]]:
    """The cached per-query table of one dataset (all models, this session's uploads)."""
    store = _per_query_store()
    return store.get(  # type: ignore[return-value]
        (repr(spec), ties, key, upload_key, split, repr(user_fingerprint())),
        lambda: _compute_per_query(spec, ties, upload_key, split),
    )


def _compute_per_query(
    spec: DatasetSpec, ties: str, upload_key: tuple, split: str | None = None
) -> tuple[pd.DataFrame, dict[str, list[DataWarning]]]:
    contents = uploads(spec.name)
    metrics = dashboard_metrics(spec.metrics)

    def compute() -> tuple[pd.DataFrame, dict[str, list[DataWarning]]]:
        ds = load_split(spec, split)
        runs = {model: load_run(path) for model, path in spec.runs.items()}
        for model, file_name, _ in upload_key:
            runs[model] = _read_upload(file_name, contents[model][1])
        if _restricted(spec, split):
            # queries of other splits are left out of the runs silently (not "not in qrels")
            wanted = set(ds.qrels["query_id"].astype(str))
            runs = {m: r.loc[r["query_id"].isin(wanted)] for m, r in runs.items()}
        table, found = per_query_table(
            ds.queries,
            ds.qrels,
            runs,
            dataset=spec.name,
            metrics=metrics,
            ties=ties,  # type: ignore[arg-type]
            relevance_threshold=spec.relevance_threshold,
            headline=spec.metrics,
            entities=ds.entities,
            groups=spec.groups,
        )
        for model, items in run_audits(spec, runs, ties=ties, dataset=ds).items():
            found[model] = [*found.get(model, []), *items]
        return table, found

    # on disk too (analysis.stats.cache), keyed by the files' stamps and the parameters, which
    # hold each uploaded run's model, file name and SHA-256 (stored with the upload: its bytes
    # are not hashed again here): a server restart does not recompute the table
    params = {"dataset": spec.name, "ties": ties, "metrics": metrics, "spec": repr(spec),
              "split": split, "uploads": [list(u) for u in upload_key],
              "app": app_code(), **_measures()}  # fmt: skip
    return cached_table(_spec_files(spec), params, compute)


def _restricted(spec: DatasetSpec, split: str | None) -> bool:
    chosen = split if split is not None else getattr(spec, "default_split", None)
    return bool(getattr(spec, "splits", None)) and chosen not in (None, ALL)


def per_query(
    bundle: Bundle, datasets: list[str], ties: str, split: str | None = None
) -> tuple[pd.DataFrame, dict[tuple[str, str], list[DataWarning]], dict[str, str]]:
    """The per-query table of the datasets (all models), the warnings per (dataset, model), and
    a one-line error per dataset that could not be loaded (the other datasets are still shown).
    ``split``: see :func:`load_split` (a dataset without splits ignores it). The table of each
    dataset is computed once per process and shared read-only between sessions."""
    frames: list[pd.DataFrame] = []
    warnings: dict[tuple[str, str], list[DataWarning]] = {}
    errors: dict[str, str] = {}
    _per_query_store().fit(len(bundle.datasets))
    for name in dict.fromkeys(datasets):  # a dataset named twice counts once
        spec = bundle.datasets[name]
        upload_key = _upload_key(name)
        try:
            table, found = _per_query(
                spec, ties, stamp(*_spec_files(spec)), upload_key, split if spec.splits else None
            )
        except (InputError, OSError) as exc:
            errors[name] = str(exc)
            continue
        frames.append(table)
        for model, items in found.items():
            warnings[(name, model)] = items
    if len(frames) == 1:
        return frames[0], warnings, errors  # the cached table itself: read it, never modify it
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return table, warnings, errors


@st.cache_resource(max_entries=64, show_spinner=False, hash_funcs=SPEC_HASH)
def _summary(
    spec: DatasetSpec,
    ties: str,
    key: tuple,
    upload_key: tuple,
    split: str | None,
    metrics: tuple[str, ...],
    by: tuple[str, ...],
) -> pd.DataFrame:
    table = _per_query(spec, ties, key, upload_key, split)[0]
    return mean_ci(table, [m for m in metrics if m in table.columns], by=list(by))


def summary(
    bundle: Bundle,
    datasets: list[str],
    ties: str,
    metrics: list[str],
    by: list[str],
    split: str | None = None,
) -> pd.DataFrame:
    """Cached :func:`analysis.stats.mean_ci` of the per-query table of each dataset that loads
    (mean, n and 95% bootstrap CI of each metric per group of ``by``), computed per dataset
    (never pooling datasets) and concatenated. Shared read-only."""
    _, _, errors = per_query(bundle, datasets, ties, split)
    frames = []
    for name in dict.fromkeys(datasets):
        if name in errors:
            continue
        spec = bundle.datasets[name]
        upload_key = _upload_key(name)
        key = stamp(*_spec_files(spec))
        part = split if spec.splits else None
        frames.append(_summary(spec, ties, key, upload_key, part, tuple(metrics), tuple(by)))
    if len(frames) == 1:
        return frames[0]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


@st.cache_resource(max_entries=64, show_spinner=False, hash_funcs=SPEC_HASH)
def _ranked(spec: DatasetSpec, model: str, ties: str, key: tuple, upload: tuple) -> pd.DataFrame:
    del key
    run = _read_upload(upload[0], upload[1]) if upload else load_model_run(spec, model)
    return rank_run(run, ties)  # type: ignore[arg-type]


def ranked_run(bundle: Bundle, name: str, model: str, ties: str) -> pd.DataFrame:
    """The run of ``model`` on dataset ``name`` as evaluated: ``query_id, doc_id, score, rank``
    (for a run group, the ranking shown for it: :func:`analysis.io.groups.group_run`)."""
    return _ranked(*_ranked_args(bundle, name, model, ties))


def _ranked_args(bundle: Bundle, name: str, model: str, ties: str) -> tuple:
    spec = bundle.datasets[name]
    return spec, model, ties, stamp(*model_files(spec, model)), uploads(name).get(model, ())


def prefetch_ranked(bundle: Bundle, name: str, model: str, ties: str) -> None:
    """Rank ``model``'s run of dataset ``name`` in a background thread, into the cache
    :func:`ranked_run` reads, so the first query opened on a page does not wait for the whole
    run to be read and ranked (~0.7 s for 1M lines). Streamlit computes a cached value once: a
    call that finds it being computed waits for it, one that finds it cached returns it."""
    if model not in bundle.datasets[name].models and model not in uploads(name):
        return
    args = _ranked_args(bundle, name, model, ties)

    def work() -> None:
        with contextlib.suppress(Exception):  # the page shows any error when it reads the run
            _ranked(*args)

    threading.Thread(target=work, name="prefetch-ranked", daemon=True).start()


@st.cache_resource(
    max_entries=64,
    show_spinner="Computing the leaderboard (bootstrap CIs, tests)…",
    hash_funcs=SPEC_HASH,
)
def _leaderboard(
    spec: DatasetSpec,
    ties: str,
    key: tuple,
    upload_key: tuple,
    split: str | None,
    metrics: tuple[str, ...],
    models: tuple[str, ...],
    baseline: str | None,
) -> pd.DataFrame:
    from analysis.present.leaderboard import leaderboard as board

    def compute() -> tuple[pd.DataFrame, dict[str, list[DataWarning]]]:
        table = _per_query(spec, ties, key, upload_key, split)[0]
        present = [m for m in metrics if m in table.columns]
        out = board(table, present, models=list(models), baseline=baseline)
        out.insert(0, "dataset", spec.name)
        return out, {}

    # on disk too (as the per-query tables): after a restart the home page reads the bootstrap
    # CIs and tests instead of computing them (and importing scipy.stats) again
    params = {"kind": "leaderboard", "dataset": spec.name, "ties": ties, "spec": repr(spec),
              "split": split, "metrics": list(metrics), "models": list(models),
              "baseline": baseline, "uploads": [list(u) for u in upload_key],
              "app": app_code(), **_measures()}  # fmt: skip
    return cached_table(_spec_files(spec), params, compute)[0]


def leaderboard(
    bundle: Bundle,
    name: str,
    ties: str,
    split: str | None,
    metrics: list[str],
    baseline: str | None = None,
) -> pd.DataFrame:
    """Cached :func:`analysis.present.leaderboard.leaderboard` of one dataset (every model with
    a run on it, manifest order). Raises InputError/OSError when the dataset cannot be loaded."""
    spec = bundle.datasets[name]
    upload_key = _upload_key(name)
    models = tuple(models_of(bundle, [name]))
    part = split if spec.splits else None
    base = baseline if baseline in models else None
    return _leaderboard(
        spec, ties, stamp(*_spec_files(spec)), upload_key, part, tuple(metrics), models, base
    )


def fingerprint(bundle: Bundle, datasets: list[str], ties: str, split: str | None) -> tuple:
    """A hashable key of the per-query table of ``datasets``: the manifest entry (its
    ``repr``, as :data:`SPEC_HASH`: a changed threshold or run group), the file stamps, the
    uploads, the tie policy and the split. Page caches use it with the (unhashed) table
    itself."""
    out = []
    for name in dict.fromkeys(datasets):
        spec = bundle.datasets[name]
        ups = _upload_key(name)
        part = split if spec.splits else None
        out.append((name, repr(spec), stamp(*_spec_files(spec)), ups, part))
    return (ties, tuple(out))


@st.cache_resource(max_entries=64, show_spinner=False, hash_funcs=SPEC_HASH)
def _run_metadata(spec: DatasetSpec, key: tuple) -> dict[str, dict[str, float]]:
    del key
    return read_run_metadata(spec.runs, spec.run_metadata, spec.groups)


def run_metadata(bundle: Bundle, name: str) -> dict[str, dict[str, float]]:
    """Every run's and group's numbers of dataset ``name`` (``latency_ms``, ``cost``, ...:
    :func:`analysis.io.groups.run_metadata`: the manifest's ``run_metadata`` over ir_metadata
    read beside the runs). Raises InputError for an ir_metadata block that is not YAML."""
    spec = bundle.datasets[name]
    beside = [p.parent / f"{p.name}{s}" for p in spec.runs.values() for s in (".yaml", ".yml")]
    beside += [p.parent / f"{m}{s}" for m, p in spec.runs.items() for s in (".yaml", ".yml")]
    return _run_metadata(spec, stamp(*spec.runs.values(), *beside))
