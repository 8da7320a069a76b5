"""Tests for ui.report_view: the cache key of the Report page's numbers."""

from __future__ import annotations

from pathlib import Path

from analysis.io.bundle import read_manifest
from tests.stats.test_groups import make_group_bundle
from ui import report_view

FOLDS = (
    '[datasets.web.groups.cv]\nfolds = { even = "f1", odd = "f2" }\n'
    'fold_queries = { even = "web/even.index", odd = "web/odd.index" }\n'
)


def test_an_edited_fold_file_changes_the_report_key(tmp_path: Path) -> None:
    """A fold group's rows of the per-query table follow its fold files: the report's numbers
    (cached by this key) must be computed again when one changes."""
    root = make_group_bundle(tmp_path, FOLDS)
    (root / "web" / "even.index").write_text("".join(f"q{q}\n" for q in range(0, 40, 2)))
    (root / "web" / "odd.index").write_text("".join(f"q{q}\n" for q in range(1, 40, 2)))
    bundle = read_manifest(root)
    before = report_view.fingerprint(bundle, ("web",))
    (root / "web" / "odd.index").write_text("".join(f"q{q}\n" for q in range(1, 30, 2)))
    assert report_view.fingerprint(bundle, ("web",)) != before


def test_an_edited_manifest_entry_changes_the_report_key(tmp_path: Path) -> None:
    """The per-query table follows the manifest entry (here a seed group given another
    member): the report's numbers, cached by this key, must follow too."""
    root = make_group_bundle(tmp_path, '[datasets.web.groups.dense]\nseeds = ["s1", "s2"]\n')
    before = report_view.fingerprint(read_manifest(root), ("web",))
    manifest = root / "bundle.toml"
    manifest.write_text(manifest.read_text().replace('["s1", "s2"]', '["s1", "s3"]'))
    assert report_view.fingerprint(read_manifest(root), ("web",)) != before
