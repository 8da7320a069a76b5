"""One place turns the errors of ``Path.resolve``, ``stat`` and ``open`` into one line naming
the path (:mod:`analysis.core.paths`), and every reader goes through it: a symlink loop, a name
too long, a file used as a folder or a folder used as a file is an InputError, never a
``RuntimeError`` or ``OSError`` traceback."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from analysis.core import paths
from analysis.core.errors import InputError
from analysis.core.plugins import load_plugin
from analysis.io import load_qrels, load_run
from analysis.io.annotations import database_path
from analysis.io.bundle import is_confined, read_manifest
from analysis.io.spatial import load_pois
from analysis.io.summaries import nearby_summaries
from tests.bad_input.corpus import GOOD, HERE
from tests.bad_input.made import make
from tests.helpers import run_main

BAD = ("symlink_loop", "long_name", "file_as_folder")
WORDS = {
    "symlink_loop": "a symlink loop (or too many levels of symlinks)",
    "long_name": "the name is too long for the file system",
    "file_as_folder": "a part of the path is a file, not a folder",
}


@pytest.mark.parametrize("recipe", BAD)
def test_resolve_and_stat_name_the_path_in_one_line(recipe: str, tmp_path: Path) -> None:
    path = make(recipe, tmp_path)
    for call in (paths.stat, paths.resolve):
        if call is paths.resolve and recipe != "symlink_loop":
            continue  # resolve keeps missing parts as given: only a loop stops it
        with pytest.raises(InputError) as info:
            call(path)
        assert str(info.value) == f"{path}: {WORDS[recipe]}"


def test_stat_of_a_missing_path_is_none_when_allowed(tmp_path: Path) -> None:
    assert paths.stat(tmp_path / "nothing", missing_ok=True) is None
    with pytest.raises(InputError, match="no such file or folder"):
        paths.stat(tmp_path / "nothing")


def test_reading_turns_an_open_error_into_one_line(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info, paths.reading(tmp_path, "cannot open"):
        tmp_path.open("rb")  # a folder where a file is expected
    assert str(info.value) == f"{tmp_path}: cannot open: is a folder, not a file"


def test_other_runtime_errors_are_not_taken_for_a_loop(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="not a path problem"), paths.reading(tmp_path):
        raise RuntimeError("not a path problem")


@pytest.mark.parametrize("recipe", BAD)
@pytest.mark.parametrize("reader", [load_run, load_qrels, load_pois])
def test_every_reader_names_the_path(reader, recipe: str, tmp_path: Path) -> None:
    path = make(recipe, tmp_path)
    with pytest.raises(InputError) as info:
        reader(path)
    assert str(info.value) == f"{path}: {WORDS[recipe]}"


def test_a_manifest_entry_that_loops_names_the_manifest_and_the_key(tmp_path: Path) -> None:
    (tmp_path / "web" / "runs").mkdir(parents=True)
    (tmp_path / "web" / "runs" / "bm25.run").write_bytes(GOOD["run"].read_bytes())
    (tmp_path / "web" / "loop").symlink_to(tmp_path / "web" / "loop")
    (tmp_path / "bundle.toml").write_text('[datasets.web]\nqrels = "web/loop"\n')
    with pytest.raises(InputError) as info:
        read_manifest(tmp_path)
    assert str(info.value) == (
        f"{tmp_path / 'bundle.toml'}: dataset 'web': qrels 'web/loop': a symlink loop "
        "(or too many levels of symlinks)"
    )
    broken = read_manifest(tmp_path, skip_broken=True).broken  # the app keeps the others
    assert list(broken) == ["web"]


def test_a_run_file_in_the_runs_folder_that_loops_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "web" / "runs").mkdir(parents=True)
    (tmp_path / "web" / "qrels.txt").write_bytes(GOOD["qrels"].read_bytes())
    (tmp_path / "web" / "runs" / "bm25.run").symlink_to(tmp_path / "web" / "runs" / "bm25.run")
    (tmp_path / "web" / "runs" / "dense.run").write_bytes(GOOD["run"].read_bytes())
    (tmp_path / "bundle.toml").write_text("[datasets.web]\n")
    bundle = read_manifest(tmp_path)  # a link that is no file is no run (as before)
    assert list(bundle.datasets["web"].runs) == ["dense"]


def test_confinement_of_a_loop_is_false_not_an_error(tmp_path: Path) -> None:
    loop = make("symlink_loop", tmp_path)
    assert is_confined(loop, [tmp_path]) is False


def test_a_notes_folder_that_loops_is_one_line(tmp_path: Path) -> None:
    loop = make("symlink_loop", tmp_path)
    with pytest.raises(InputError, match="a symlink loop"):
        database_path(HERE / "bundle" / "ok", loop)


def test_a_notes_dir_inside_the_bundle_says_to_choose_another_folder() -> None:
    bundle = HERE / "bundle" / "ok"
    with pytest.raises(InputError) as given:
        database_path(bundle, bundle / "notes")
    assert "choose a notes folder outside it" in str(given.value)
    assert "RETRIEVAL_DASHBOARD_NOTES_DIR" not in str(given.value)


@pytest.mark.parametrize("recipe", BAD)
def test_a_plugin_path_names_the_path(recipe: str, tmp_path: Path) -> None:
    path = make(recipe, tmp_path)
    with pytest.raises(InputError) as info:
        load_plugin(str(path))
    assert str(info.value) == f"{path}: {WORDS[recipe]}"


def test_a_stray_link_loop_beside_the_runs_is_no_summary(tmp_path: Path) -> None:
    """Other summaries of a collection are looked for in its folder tree: a symlink loop there
    is skipped, never the error of the run read."""
    shutil.copytree(HERE / "bundle" / "ok", tmp_path / "ok")
    runs = tmp_path / "ok" / "web" / "runs"
    (runs / "bm25.metrics.json").write_text('{"mrr": 1.0}\n')
    loop = tmp_path / "ok" / "web" / "x.metrics.json"
    loop.symlink_to(loop)
    assert nearby_summaries(runs / "bm25.run", exclude=runs / "bm25.metrics.json") == []
    proc = run_main("validate", "--bundle", tmp_path / "ok")
    assert proc.returncode == 0, proc.stderr
    assert "symlink loop" not in proc.stderr
