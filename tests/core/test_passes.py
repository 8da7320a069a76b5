"""Tests for analysis.core.engines.passes: every row group in exactly one group of passes, row
groups that share a query together, budgets kept where a component allows, whole-query row
groups of one file planned like a folder of whole-query files, memory settings read as DuckDB
writes them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from analysis.core.engines import passes
from analysis.core.engines.passes import Layout, Pass, Piece, components, memory_bytes, plan


def _layout(*groups: tuple[int, ...]) -> Layout:
    return Layout(tuple(Path(f"f{i}.parquet") for i in range(len(groups))), groups)


def test_units_sharing_a_query_form_one_component() -> None:
    # units 0-2 share q1/q2 through a chain; units 3 and 4 stand alone until 1 also has q9
    units = [0, 1, 1, 2, 3, 4]
    queries = ["q1", "q1", "q2", "q2", "q5", "q9"]
    assert components(5, units, queries) == [0, 0, 0, 3, 4]
    assert components(5, [*units, 1], [*queries, "q9"]) == [0, 0, 0, 3, 0]


def test_plan_packs_components_and_splits_large_ones_by_hash() -> None:
    layout = _layout((10,), (10,), (10,), (50,), (5,))  # one row group per file
    got = plan(layout, [0, 0, 2, 3, 4], budget=25)
    # the large component's buckets go out at once; the small ones keep filling a pass
    one, three = (Piece(0), Piece(1)), (Piece(3),)
    assert got == [Pass(one), Pass(three, 2, 0), Pass(three, 2, 1), Pass((Piece(2), Piece(4)))]
    assert plan(layout, [0, 0, 2, 3, 4], budget=85) == [Pass()]


def test_plan_aims_at_small_passes_and_splits_only_beyond_memory() -> None:
    layout = _layout((10,), (10,), (10,), (50,), (5,))
    got = plan(layout, [0, 1, 2, 3, 4], budget=60, target=20)
    # files packed up to the target; the 50-row file fits in memory: one pass, no buckets
    assert got == [Pass((Piece(0), Piece(1))), Pass((Piece(3),)), Pass((Piece(2), Piece(4)))]
    split = plan(layout, [0, 1, 2, 3, 4], budget=40, target=20)[1:3]
    assert split == [Pass((Piece(3),), 2, 0), Pass((Piece(3),), 2, 1)]
    assert plan(layout, [0, 1, 2, 3, 4], budget=200, target=1000) == [Pass()]


def test_row_groups_of_one_file_are_passes_of_their_own() -> None:
    """A file of 6 row groups of whole queries, each of 10 rows: passes of 2 row groups (the
    target), read as row-group ranges; two row groups sharing a query stay in one pass."""
    layout = _layout((10, 10, 10, 10, 10, 10))
    got = plan(layout, [0, 1, 2, 3, 4, 5], budget=100, target=20)
    assert got == [Pass((Piece(0, 0, 20),)), Pass((Piece(0, 20, 40),)), Pass((Piece(0, 40, 60),))]
    assert layout.rows(Piece(0, 20, 40)) == (20, 40)
    assert layout.rows(Piece(0)) == (0, 60)
    shared = plan(layout, [0, 1, 1, 3, 4, 5], budget=100, target=20)  # a query in groups 1 and 2
    assert shared == [Pass((Piece(0, 0, 10),)), Pass((Piece(0, 10, 30),)),
                      Pass((Piece(0, 30, 50),)), Pass((Piece(0, 50, 60),))]  # fmt: skip


def _write(path: Path, queries: list[str], rows_per_group: int, stats: bool = True) -> None:
    table = pa.table({"query_id": queries, "doc_id": [f"d{i}" for i in range(len(queries))],
                      "score": np.zeros(len(queries))})  # fmt: skip
    pq.write_table(table, path, row_group_size=rows_per_group, write_statistics=stats)


def test_query_major_row_groups_are_found_from_the_statistics_or_one_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sorted query ids: the row groups' min/max ranges are disjoint and nothing is scanned.
    Ids in numeric order (q9 before q10: the ranges overlap as text) are scanned; a query cut
    between two row groups links them. Without statistics, the scan decides alone."""
    scanned: list[int] = []
    real_scan = passes.scan_locally
    monkeypatch.setattr(passes, "scan_locally", lambda layout, *a: scanned.append(1)
                        or real_scan(layout, *a))  # fmt: skip
    sorted_ids = [f"q{i:02d}" for i in range(12) for _ in range(5)]
    _write(tmp_path / "sorted.parquet", sorted_ids, 10)
    layout = passes.read_layout([tmp_path / "sorted.parquet"])
    assert passes.disjoint_statistics(layout)
    got = passes.plan_run(layout, budget=1000, target=20)
    assert [p.pieces for p in got] == [(Piece(0, 0, 20),), (Piece(0, 20, 40),), (Piece(0, 40, 60),)]
    assert not scanned
    _write(tmp_path / "bare.parquet", sorted_ids, 10, stats=False)
    bare = passes.read_layout([tmp_path / "bare.parquet"])
    assert not passes.disjoint_statistics(bare)
    assert passes.plan_run(bare, budget=1000, target=20) == got
    assert scanned
    numeric = [f"q{i}" for i in range(12) for _ in range(5)]  # q0..q11: "q10" < "q2" as text
    numeric[19] = "q1"  # the last row of group 1 (q3's) is q1's: groups 0 and 1 linked
    _write(tmp_path / "numeric.parquet", numeric, 10)
    layout = passes.read_layout([tmp_path / "numeric.parquet"])
    assert not passes.disjoint_statistics(layout)
    got = passes.plan_run(layout, budget=1000, target=20)
    assert scanned
    assert [p.pieces for p in got] == [(Piece(0, 0, 20),), (Piece(0, 20, 40),), (Piece(0, 40, 60),)]
    numeric[29] = "q1"  # now groups 0, 1 and 2 (30 rows, above the target): a pass of 3 groups
    _write(tmp_path / "numeric.parquet", numeric, 10)
    got = passes.plan_run(passes.read_layout([tmp_path / "numeric.parquet"]), 1000, 20)
    assert [p.pieces for p in got] == [(Piece(0, 0, 30),), (Piece(0, 30, 50),), (Piece(0, 50, 60),)]
    assert all(p.buckets == 1 for p in got)


@pytest.mark.parametrize(("per_query", "group"), [(5, 7), (20, 7), (5, 1)])
def test_row_groups_that_cut_queries_move_their_boundaries(
    tmp_path: Path, per_query: int, group: int
) -> None:
    """A file written query by query in row groups that cut queries (of 7 rows for queries of
    5 rows; queries of 20 rows over 3-4 row groups; a row per group): each cut query goes whole
    to one unit, so the passes are row ranges of whole queries, with no hash buckets."""
    queries = [f"q{i}" for i in range(60 // per_query) for _ in range(per_query)]
    _write(tmp_path / "run.parquet", queries, group, stats=False)
    layout = passes.read_layout([tmp_path / "run.parquet"])
    target = 10 if per_query == 5 else 20
    got = passes.plan_run(layout, budget=30, target=target)
    assert all(p.buckets == 1 for p in got)
    rows = [layout.rows(piece) for p in got for piece in p.pieces]
    assert [r for pair in rows for r in pair] == sorted(r for pair in rows for r in pair)
    assert rows[0][0] == 0
    assert rows[-1][1] == 60
    assert all(r % per_query == 0 for pair in rows for r in pair)
    assert all(sum(hi - lo for lo, hi in map(layout.rows, p.pieces)) <= target for p in got)


def test_queries_spread_over_every_row_group_are_read_in_hash_buckets(tmp_path: Path) -> None:
    spread = [f"q{i % 7}" for i in range(70)]
    _write(tmp_path / "spread.parquet", spread, 10)
    layout = passes.read_layout([tmp_path / "spread.parquet"])
    assert passes.plan_run(layout, budget=100, target=20) == [Pass((Piece(0),))]
    got = passes.plan_run(layout, budget=30, target=20)
    assert got == [Pass((Piece(0),), 3, b) for b in range(3)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [("1.8 GiB", int(1.8 * 2**30)), ("2GB", 2 * 10**9), ("512.0 MiB", 512 * 2**20), ("100", 100)],
)
def test_memory_settings(text: str, expected: int) -> None:
    assert memory_bytes(text) == expected


@pytest.mark.parametrize("text", ["", "lots", "2 parsecs", "-1GB"])
def test_a_bad_memory_setting_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="not a memory size"):
        memory_bytes(text)


def test_statistics_are_those_of_query_id_behind_a_nested_column(tmp_path: Path) -> None:
    """A struct column before ``query_id`` has two leaf columns: the statistics read must be
    ``query_id``'s leaf, not the leaf at ``query_id``'s top-level index (here ``meta.b``, whose
    ranges are disjoint while the queries spread over every row group)."""
    spread = [f"q{i % 7}" for i in range(70)]
    meta = pa.array([{"a": 0, "b": i} for i in range(70)])
    table = pa.table({"meta": meta, "query_id": spread,
                      "doc_id": [f"d{i}" for i in range(70)], "score": np.zeros(70)})  # fmt: skip
    pq.write_table(table, tmp_path / "nested.parquet", row_group_size=10)
    layout = passes.read_layout([tmp_path / "nested.parquet"])
    assert not passes.disjoint_statistics(layout)
    assert passes.plan_run(layout, budget=30, target=20) == [
        Pass((Piece(0),), 3, b) for b in range(3)
    ]
    ordered = table.sort_by("query_id").set_column(0, "meta", pa.array([{"a": 0, "b": 0}] * 70))
    pq.write_table(ordered, tmp_path / "sorted.parquet", row_group_size=10)
    assert passes.disjoint_statistics(passes.read_layout([tmp_path / "sorted.parquet"]))
