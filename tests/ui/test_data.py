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


def test_an_edited_manifest_entry_changes_the_table_fingerprint(tmp_path: Path) -> None:
    """The pages cache their statistics by this fingerprint; the per-query table follows the
    manifest entry too (here a seed group given another member): the statistics must follow."""
    from analysis.io.bundle import read_manifest
    from tests.stats.test_groups import make_group_bundle

    root = make_group_bundle(tmp_path, '[datasets.web.groups.dense]\nseeds = ["s1", "s2"]\n')
    before = data.fingerprint(read_manifest(root), ["web"], "trec_eval", None)
    manifest = root / "bundle.toml"
    manifest.write_text(manifest.read_text().replace('["s1", "s2"]', '["s1", "s3"]'))
    assert data.fingerprint(read_manifest(root), ["web"], "trec_eval", None) != before


def test_two_sessions_whose_uploads_split_the_same_bytes_differently_get_their_own_tables(
    tmp_path: Path, monkeypatch
) -> None:
    """The disk cache of per-query tables is keyed by the uploads: run A = lines 1, run B =
    lines 2-3 in one session, A = lines 1-2, B = line 3 in another are other tables (their
    bytes joined are the same)."""
    from analysis.io.bundle import read_manifest
    from tests.stats.test_groups import make_group_bundle

    monkeypatch.setenv("RETRIEVAL_DASHBOARD_CACHE_DIR", str(tmp_path / "cache"))
    spec = read_manifest(make_group_bundle(tmp_path / "b", "")).datasets["web"]
    lines = [f"q{q} Q0 g{q} 1 2.0 mine\n".encode() for q in range(3)]

    def hits(a: bytes, b: bytes) -> float:
        mine = {"upload:a": ("a.run", a), "upload:b": ("b.run", b)}
        monkeypatch.setattr(data, "uploads", lambda name: mine)
        table, _ = data._compute_per_query(spec, "trec_eval", data._upload_key("web"))
        return float(table.loc[table["model"] == "upload:a", "hit@1"].sum())

    assert hits(lines[0], lines[1] + lines[2]) == 1.0
    assert hits(lines[0] + lines[1], lines[2]) == 2.0


def test_the_disk_cache_follows_the_app_code(tmp_path: Path, monkeypatch) -> None:
    """The per-query table is computed partly here (runs restricted to the split, audits): a
    changed module must not read the table the old one stored on disk."""
    from analysis.io.bundle import read_manifest
    from tests.stats.test_groups import make_group_bundle

    folder = tmp_path / "cache"
    monkeypatch.setenv("RETRIEVAL_DASHBOARD_CACHE_DIR", str(folder))
    spec = read_manifest(make_group_bundle(tmp_path / "b", "")).datasets["web"]
    data._compute_per_query(spec, "trec_eval", ())
    data._compute_per_query(spec, "trec_eval", ())
    assert len(list(folder.glob("perquery-*"))) == 1  # read back
    monkeypatch.setattr(data, "app_code", lambda: "changed")
    data._compute_per_query(spec, "trec_eval", ())
    assert len(list(folder.glob("perquery-*"))) == 2


def test_an_uploads_digest_is_computed_once_with_the_upload(monkeypatch) -> None:
    """Every key of every rerun hashed each upload's whole content again (a 200 MB run: a
    fraction of a second a key); the digest stored with the upload is used instead."""
    import hashlib

    import streamlit as st

    content = b"q Q0 d 1 2.0 mine\n"
    monkeypatch.setattr(data._compat, "in_script_run", lambda: True)
    monkeypatch.setattr(data, "_read_upload", lambda name, content: None)
    monkeypatch.setattr(st, "session_state", {})
    model = data.add_upload("web", "mine.run", content)
    digest = hashlib.sha256(content).hexdigest()
    assert data._upload_key("web") == ((model, "mine.run", digest),)
    calls = []
    monkeypatch.setattr(data.hashlib, "sha256", lambda *a: calls.append(a))
    assert data._upload_key("web") == ((model, "mine.run", digest),)
    assert calls == []
