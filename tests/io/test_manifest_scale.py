"""Manifests at scale: reading one costs a fixed number of path resolutions per dataset and run
(no step over all datasets per dataset), and a manifest beyond the documented limits (1,000
datasets, 1,000 runs per dataset; a report of at most 100 datasets) is one line. Speed itself
is measured in ``bench/manifest.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.core import paths
from analysis.core.errors import InputError
from analysis.io import bundle as bundle_module
from analysis.io.atomic import refuse_overwrite
from analysis.io.bundle import MAX_RUNS, bundle_files, read_manifest
from tests.bad_input.corpus import GOOD


def _many(folder: Path, n_datasets: int, n_runs: int = 1) -> Path:
    """``n_datasets`` datasets, each its own qrels and ``n_runs`` runs (a runs folder)."""
    lines = []
    for i in range(n_datasets):
        runs = folder / f"d{i}" / "runs"
        runs.mkdir(parents=True)
        (folder / f"d{i}" / "qrels.txt").write_bytes(GOOD["qrels"].read_bytes())
        for m in range(n_runs):
            (runs / f"m{m}.run").write_bytes(GOOD["run"].read_bytes())
        lines.append(f"[datasets.d{i}]\n")
    (folder / "bundle.toml").write_text("".join(lines))
    return folder


def _resolutions(monkeypatch: pytest.MonkeyPatch, folder: Path) -> int:
    calls = []
    real = paths.resolve

    def counting(path):
        calls.append(path)
        return real(path)

    monkeypatch.setattr(bundle_module.paths, "resolve", counting)
    read_manifest(folder)
    monkeypatch.setattr(bundle_module.paths, "resolve", real)
    return len(calls)


def test_reading_a_manifest_costs_the_same_per_dataset_at_any_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small = _resolutions(monkeypatch, _many(tmp_path / "small", 20, n_runs=2))
    large = _resolutions(monkeypatch, _many(tmp_path / "large", 200, n_runs=2))
    per_dataset = (large - small) / 180
    assert per_dataset <= 4  # qrels, runs folder, two run files
    assert large - 200 * per_dataset <= small  # a constant on top (the bundle folder, roots)


def test_refusing_an_output_over_an_input_resolves_no_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = read_manifest(_many(tmp_path / "b", 50))
    monkeypatch.setattr(paths, "resolve", lambda p: pytest.fail("resolved a path"))
    refuse_overwrite(tmp_path / "report.html", bundle_files(bundle))  # new file: fine
    with pytest.raises(InputError, match="refusing to overwrite"):
        refuse_overwrite(bundle.datasets["d49"].qrels, bundle_files(bundle))


def test_more_runs_than_a_dataset_holds_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "web").mkdir()
    (tmp_path / "web" / "qrels.txt").write_bytes(GOOD["qrels"].read_bytes())
    (tmp_path / "web" / "run.txt").write_bytes(GOOD["run"].read_bytes())
    runs = ", ".join(f'm{i} = "web/run.txt"' for i in range(MAX_RUNS + 1))
    (tmp_path / "bundle.toml").write_text(f"[datasets.web]\nruns = {{ {runs} }}\n")
    with pytest.raises(InputError) as info:
        read_manifest(tmp_path)
    assert str(info.value) == (
        f"{tmp_path / 'bundle.toml'}: dataset 'web': {MAX_RUNS + 1} runs: a dataset holds at "
        f"most {MAX_RUNS}"
    )
