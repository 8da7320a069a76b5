"""The confinement rule and the confined walkers: symlinked files and folders leading out of the
roots are refused (never listed as data, never followed), links inside are fine, loops end,
caps are counted."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.core.errors import InputError
from analysis.io.confine import (
    is_confined,
    list_files,
    list_folders,
    outside_links,
    require_confined,
)
from analysis.io.importers import scan_folder, suggest_importer
from analysis.io.importers.scan import MAX_FILES, OUTSIDE, survey


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    """``root`` with ordinary files, a link inside, links out (file and folder, at the top and
    nested) and a link loop; ``outside`` beside it."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "a" / "b").mkdir(parents=True)
    (outside / "deep").mkdir(parents=True)
    (outside / "secret.txt").write_text("q1 0 SECRET 1\n")
    (outside / "deep" / "x.txt").write_text("x\n")
    (root / "a" / "qrels.txt").write_text("q1 0 d1 1\n")
    (root / "a" / "b" / "run.txt").write_text("q1 Q0 d1 1 1.0 t\n")
    (root / "a" / "link_in.txt").symlink_to(root / "a" / "qrels.txt")
    (root / "a" / "link_out.txt").symlink_to(outside / "secret.txt")
    (root / "a" / "b" / "dir_out").symlink_to(outside, target_is_directory=True)
    (root / "dir_out").symlink_to(outside, target_is_directory=True)
    (root / "dir_in").symlink_to(root / "a", target_is_directory=True)
    (root / "loop").symlink_to(root / "loop2")
    (root / "loop2").symlink_to(root / "loop")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "h.txt").write_text("h\n")
    return root, outside


def test_is_confined(tree: tuple[Path, Path]) -> None:
    root, outside = tree
    assert is_confined(root / "a" / "qrels.txt", [root])
    assert is_confined(root / "a" / "link_in.txt", [root])
    assert not is_confined(root / "a" / "link_out.txt", [root])
    assert not is_confined(root / "dir_out" / "secret.txt", [root])
    assert not is_confined(root / "a" / ".." / ".." / "outside", [root])
    assert not is_confined(root / "loop", [root])
    assert is_confined(root / "dir_out", [root, outside])  # a second root allows it


def test_list_folders_leaves_out_folders_that_lead_out(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    found = [p.relative_to(root).as_posix() for p in list_folders(root, [root])]
    assert found == [".", "a", "a/b", "dir_in"]  # a link inside is a folder of its own
    assert list_folders(root / "dir_out", [root]) == []


def test_list_files_refuses_links_out_and_never_follows_folder_links(
    tree: tuple[Path, Path],
) -> None:
    root, _ = tree
    listing = list_files(root, [root])
    rel = [p.relative_to(root).as_posix() for p in listing.files]
    assert rel == ["a/b/run.txt", "a/link_in.txt", "a/qrels.txt"]  # dir_in not followed
    refused = sorted(p.relative_to(root).as_posix() for p in listing.refused)
    assert refused == ["a/b/dir_out", "a/link_out.txt", "dir_out", "loop", "loop2"]
    assert listing.total == 3
    assert not listing.capped
    assert outside_links(root / "a", [root]) == [root / "a" / "b" / "dir_out",
                                                  root / "a" / "link_out.txt"]  # fmt: skip
    assert list_files(root / "dir_out", [root]).refused == [root / "dir_out"]


def test_list_files_keeps_the_first_and_counts_the_rest(tmp_path: Path) -> None:
    for i in range(25):
        (tmp_path / f"f{i:02d}.txt").write_text("x")
    listing = list_files(tmp_path, [tmp_path], max_files=10)
    assert [p.name for p in listing.files] == [f"f{i:02d}.txt" for i in range(10)]
    assert listing.total == 25
    assert listing.capped
    assert not listing.more


def test_scan_reports_links_out_and_reads_none(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    reports = {r.rel: r for r in scan_folder(root / "a")}
    assert reports["link_out.txt"].problem == OUTSIDE
    assert reports["b/dir_out"].problem == OUTSIDE
    assert reports["link_in.txt"].roles == ("qrels",)
    assert all("SECRET" not in (r.problem or "") for r in reports.values())
    # with the outside folder as a second root, the link is read like any file
    widened = {r.rel: r for r in scan_folder(root / "a", [root, tree[1]])}
    assert widened["link_out.txt"].roles == ("qrels",)


def test_survey_counts_files_past_the_cap(tmp_path: Path) -> None:
    for i in range(MAX_FILES + 7):
        (tmp_path / f"s{i:04d}.index").write_text(f"q{i}\n")
    found = survey(tmp_path)
    assert len(found.reports) == MAX_FILES
    assert found.total == MAX_FILES + 7
    assert found.capped


def test_suggest_importer_ignores_links_out(tree: tuple[Path, Path]) -> None:
    root, outside = tree
    (outside / "stark_qa.csv").write_text('id,query,answer_ids\n1,a,"[1]"\n')
    folder = root / "stark"
    folder.mkdir()
    (folder / "stark_qa.csv").symlink_to(outside / "stark_qa.csv")
    (folder / "stark_qa").symlink_to(outside, target_is_directory=True)
    assert suggest_importer(folder, [root]) is None
    assert suggest_importer(folder, [root, outside]) == "stark"


def test_require_confined_names_the_first_file_out(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    inside = [root / "a" / "qrels.txt", None, root / "a" / "link_in.txt"]
    require_confined(inside, [root])
    with pytest.raises(InputError, match="a link leading outside the data roots: not read") as e:
        require_confined([*inside, root / "a" / "link_out.txt"], [root])
    assert str(e.value) == f"{root / 'a' / 'link_out.txt'}: {OUTSIDE}"
