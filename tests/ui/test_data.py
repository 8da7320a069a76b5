"""Tests for ui.data: the file stamps that key every cached table of the pages."""

from __future__ import annotations

import os
from pathlib import Path

from ui import data


def test_a_run_rewritten_with_its_size_and_mtime_put_back_gets_a_new_stamp(
    tmp_path: Path,
) -> None:
    """Rewritten in place, then ``os.utime`` back to the old mtime: the pages' caches must not
    serve the old file's numbers."""
    run = tmp_path / "bm25.run"
    run.write_text("q Q0 d 1 1.0 t\n")
    info = run.stat()
    before = data.stamp(run, tmp_path)
    run.write_text("q Q0 d 1 2.0 t\n")  # same size
    os.utime(run, ns=(info.st_atime_ns, info.st_mtime_ns))
    after = data.stamp(run, tmp_path)
    assert after != before
    assert [s[:3] for s in after] == [s[:3] for s in before]  # path, mtime and size: as before
    assert data.stamp(run, tmp_path) == after  # unchanged file: the same stamp, a cache hit
