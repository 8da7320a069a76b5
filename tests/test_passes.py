"""Tests for analysis.core.passes: every file in exactly one group of passes, files that share
a query together, budgets kept where a component allows, memory settings read as DuckDB writes
them."""

from __future__ import annotations

import pytest

from analysis.core.passes import Pass, components, memory_bytes, plan


def test_files_sharing_a_query_form_one_component() -> None:
    # files 0-2 share q1/q2 through a chain; files 3 and 4 stand alone until 1 also has q9
    files = [0, 1, 1, 2, 3, 4]
    queries = ["q1", "q1", "q2", "q2", "q5", "q9"]
    assert components(5, files, queries) == [0, 0, 0, 3, 4]
    assert components(5, [*files, 1], [*queries, "q9"]) == [0, 0, 0, 3, 0]


def test_plan_packs_components_and_splits_large_ones_by_hash() -> None:
    rows = [10, 10, 10, 50, 5]
    component = [0, 0, 2, 3, 4]
    got = plan(rows, component, budget=25)
    # the large component's buckets go out at once; the small ones keep filling a pass
    assert got == [Pass((0, 1)), Pass((3,), 2, 0), Pass((3,), 2, 1), Pass((2, 4))]
    covered = sorted(i for p in got for i in p.files if p.bucket == 0)
    assert covered == [0, 1, 2, 3, 4]
    assert plan(rows, component, budget=85) == [Pass()]


def test_plan_aims_at_small_passes_and_splits_only_beyond_memory() -> None:
    rows = [10, 10, 10, 50, 5]
    component = [0, 1, 2, 3, 4]
    got = plan(rows, component, budget=60, target=20)
    # files packed up to the target; the 50-row file fits in memory: one pass, no buckets
    assert got == [Pass((0, 1)), Pass((3,)), Pass((2, 4))]
    assert plan(rows, component, budget=40, target=20)[1:3] == [Pass((3,), 2, 0), Pass((3,), 2, 1)]
    assert plan(rows, component, budget=200, target=1000) == [Pass()]


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
