"""Tests for analysis.stats.cache: keys follow file stamps, parameters, extra bytes and the
code; entries round-trip the table and its warnings exactly; writes are atomic and a broken
entry is recomputed."""

from __future__ import annotations

import os
import time
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from analysis.core.errors import DataWarning
from analysis.stats import cache
from analysis.stats.perquery import per_query_table
from bench.spatial import spatial_dataset


def _table() -> tuple[pd.DataFrame, dict[str, list[DataWarning]]]:
    queries, qrels, runs, pois = spatial_dataset(500, 60, n_models=2, depth=20, seed=3)
    return per_query_table(queries, qrels, runs, dataset="d", entities=pois)


@pytest.fixture
def inputs(tmp_path: Path) -> list[Path]:
    files = [tmp_path / "qrels.txt", tmp_path / "runs"]
    files[0].write_text("q 0 d 1\n")
    files[1].mkdir()
    (files[1] / "a.run").write_text("q Q0 d 1 1.0 t\n")
    return files


def test_a_cached_table_round_trips_exactly(tmp_path: Path, inputs: list[Path]) -> None:
    calls = []

    def compute():
        calls.append(1)
        return _table()

    first = cache.cached_table(inputs, {"ties": "trec_eval"}, compute, folder=tmp_path / "c")
    again = cache.cached_table(inputs, {"ties": "trec_eval"}, compute, folder=tmp_path / "c")
    assert len(calls) == 1
    pd.testing.assert_frame_equal(again[0], first[0], check_exact=True)
    assert again[1] == first[1]
    assert first[0]["query_id"].dtype == again[0]["query_id"].dtype == "str"
    assert str(again[0]["gold_stack_size"].dtype) == "Int64"


def test_the_key_follows_stamps_params_extra_and_code(
    inputs: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    base = cache.cache_key(inputs, {"ties": "trec_eval"})
    assert cache.cache_key(inputs, {"ties": "trec_eval"}) == base
    assert cache.cache_key(inputs, {"ties": "stable"}) != base
    assert cache.cache_key(inputs, {"ties": "trec_eval"}, extra=b"upload") != base
    run = inputs[1] / "a.run"
    info = run.stat()
    os.utime(run, ns=(info.st_atime_ns, info.st_mtime_ns + 1))  # touched: same bytes
    touched = cache.cache_key(inputs, {"ties": "trec_eval"})
    assert touched != base
    (inputs[1] / "b.run").write_text("x")  # a run added to the folder
    assert cache.cache_key(inputs, {"ties": "trec_eval"}) != touched
    monkeypatch.setattr(cache, "code_version", lambda: "other")
    assert cache.cache_key(inputs, {"ties": "trec_eval"}) != base


def test_a_file_rewritten_with_its_size_and_mtime_put_back_is_a_new_key(
    tmp_path: Path, inputs: list[Path]
) -> None:
    """Rewritten in place, then ``os.utime`` back to the old mtime (as ``cp -p`` or ``rsync``
    do): same path, size and mtime, other numbers; the cached table must not be served."""
    run = inputs[1] / "a.run"
    info = run.stat()
    folder = tmp_path / "c"
    table = pd.DataFrame({"query_id": pd.array(["q"], dtype="str"), "mrr": [0.5]})
    cache.cached_table(inputs, {}, lambda: (table, {}), folder=folder)
    run.write_text("q Q0 d 1 2.0 t\n")  # same size
    os.utime(run, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert run.stat().st_size == info.st_size
    assert run.stat().st_mtime_ns == info.st_mtime_ns
    got, _ = cache.cached_table(inputs, {}, lambda: (table.assign(mrr=1.0), {}), folder=folder)
    assert got["mrr"].tolist() == [1.0]


def test_a_file_written_right_after_it_was_stamped_gets_another_stamp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file system stamps writes from a clock of coarse ticks (here 40 ms): two writes in one
    tick share their mtime and ctime. A stamp is taken once the tick of the last change has
    passed, so the next write differs."""
    tick = 40_000_000
    real = Path.stat

    def coarse(self: Path, **kwargs: object) -> SimpleNamespace:
        info = real(self, **kwargs)
        return SimpleNamespace(
            st_mode=info.st_mode,
            st_size=info.st_size,
            st_mtime_ns=info.st_mtime_ns // tick * tick,
            st_ctime_ns=info.st_ctime_ns // tick * tick,
        )

    path = tmp_path / "qrels.txt"
    path.write_text("q 0 d 1\n")
    monkeypatch.setattr(Path, "stat", coarse)
    (first,) = cache.file_stamps([path])
    path.write_text("q 0 d 0\n")  # same size, at once
    assert cache.file_stamps([path]) != [first]


def test_a_broken_entry_is_recomputed_and_replaced(tmp_path: Path, inputs: list[Path]) -> None:
    folder = tmp_path / "c"
    table = pd.DataFrame({"query_id": pd.array(["q"], dtype="str"), "mrr": [0.5]})
    cache.cached_table(inputs, {}, lambda: (table, {}), folder=folder)
    (entry,) = folder.glob("perquery-*.parquet")
    entry.write_bytes(b"not parquet")
    got, _ = cache.cached_table(inputs, {}, lambda: (table.assign(mrr=1.0), {}), folder=folder)
    assert got["mrr"].tolist() == [1.0]
    assert cache.read_entry(entry) is not None
    assert not list(folder.glob(".tmp-*"))  # no temporary file left behind


@pytest.mark.parametrize("meta", [b"[]", b"5", b'"text"', b'{"m": 5}'])
def test_a_foreign_entry_with_other_warnings_is_recomputed(
    tmp_path: Path, inputs: list[Path], meta: bytes
) -> None:
    """A Parquet file at an entry's name whose warnings are JSON of another shape (another
    program's, another version's): recomputed, not a traceback."""
    folder = tmp_path / "c"
    table = pd.DataFrame({"query_id": pd.array(["q"], dtype="str"), "mrr": [0.5]})
    cache.cached_table(inputs, {}, lambda: (table, {}), folder=folder)
    (entry,) = folder.glob("perquery-*.parquet")
    arrow = pa.Table.from_pandas(table.assign(mrr=0.0), preserve_index=False)
    pq.write_table(arrow.replace_schema_metadata({b"retrieval_dashboard.warnings": meta}), entry)
    got, warnings = cache.cached_table(inputs, {}, lambda: (table, {}), folder=folder)
    assert got["mrr"].tolist() == [0.5]
    assert warnings == {}


def test_an_unwritable_folder_computes_without_caching(tmp_path: Path, inputs: list[Path]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    table = pd.DataFrame({"query_id": pd.array(["q"], dtype="str"), "mrr": [0.5]})
    got, warnings = cache.cached_table(inputs, {}, lambda: (table, {}), folder=blocker / "sub")
    pd.testing.assert_frame_equal(got, table)
    assert warnings == {}


def test_an_entry_on_a_read_only_file_system_is_read(
    tmp_path: Path, inputs: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cache folder that can be read but not written (a read-only mount of a warmed cache):
    the entry is read; marking it recently used is skipped."""
    table = pd.DataFrame({"query_id": pd.array(["q"], dtype="str"), "mrr": [0.5]})
    cache.cached_table(inputs, {}, lambda: (table, {}), folder=tmp_path / "c")

    def read_only(*args: object, **kwargs: object) -> None:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(os, "utime", read_only)
    got, _ = cache.cached_table(inputs, {}, lambda: (table.assign(mrr=1.0), {}),
                                folder=tmp_path / "c")  # fmt: skip
    assert got["mrr"].tolist() == [0.5]


def test_prune_removes_the_least_recently_used(tmp_path: Path) -> None:
    for i in range(4):
        path = tmp_path / f"perquery-{i}.parquet"
        path.write_bytes(b"x" * 100)
        os.utime(path, ns=(i * 10**9, i * 10**9))
    assert cache.prune(tmp_path, max_bytes=250) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "perquery-2.parquet",
        "perquery-3.parquet",
    ]


def test_prune_removes_the_temporaries_a_killed_writer_left(tmp_path: Path) -> None:
    """A server killed while writing an entry left its ``.tmp`` file, which nothing removed."""
    old = tmp_path / ".perquery-a.parquet.x1.tmp"
    fresh = tmp_path / ".perquery-b.parquet.x2.tmp"  # a writer still at work
    for path in (old, fresh):
        path.write_bytes(b"x" * 100)
    stale = time.time() - cache.STALE_TMP_S - 60
    os.utime(old, (stale, stale))
    assert cache.prune(tmp_path) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [fresh.name]


def test_prune_skips_an_entry_it_may_not_delete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder shared by two servers run by two users (sticky bit: each may delete only its
    own files): the other's entries are left, the table is still returned, the rest pruned."""
    for i in range(4):
        path = tmp_path / f"perquery-{i}.parquet"
        path.write_bytes(b"x" * 100)
        os.utime(path, ns=(i * 10**9, i * 10**9))
    real = Path.unlink

    def unlink(self: Path, missing_ok: bool = False) -> None:
        if self.name == "perquery-0.parquet":
            raise PermissionError(1, "Operation not permitted", str(self))
        real(self, missing_ok=missing_ok)

    monkeypatch.setattr(Path, "unlink", unlink)
    assert cache.prune(tmp_path, max_bytes=250) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "perquery-0.parquet",
        "perquery-3.parquet",
    ]


def test_the_folder_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cache.CACHE_ENV, "/some/where")
    assert cache.cache_dir() == Path("/some/where")
    monkeypatch.delenv(cache.CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", "/xdg")
    assert cache.cache_dir() == Path("/xdg/retrieval-dashboard")
    assert len(cache.code_version()) == 16


def test_every_demo_table_round_trips(tmp_path: Path) -> None:
    from analysis.io import load_run
    from analysis.io.bundle import load_dataset, read_manifest
    from analysis.stats.perquery import dashboard_metrics

    bundle = read_manifest(Path(__file__).resolve().parents[2] / "data" / "demo")
    for name, spec in bundle.datasets.items():
        ds = load_dataset(spec)
        runs = {model: load_run(path) for model, path in spec.runs.items()}
        table, warnings = per_query_table(ds.queries, ds.qrels, runs, dataset=name,
                                          metrics=dashboard_metrics(spec.metrics),
                                          entities=ds.entities)  # fmt: skip
        path = tmp_path / f"{name}.parquet"
        assert cache.write_entry(path, table, warnings)
        got, got_warnings = cache.read_entry(path)
        pd.testing.assert_frame_equal(got, table, check_exact=True, obj=name)
        assert got_warnings == warnings
