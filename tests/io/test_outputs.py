"""Every command's output goes through one writer (:mod:`analysis.io.atomic`): a full device, a
read-only folder and a full disk are each one line (exit code 2), never a success, and leave
no file behind (an earlier output stays as it was).

The full disk is a file size limit on the command's process (every write past 16 bytes fails,
as on a full file system) and the read-only folder a command without the permission overrides
of root: both run ``python -m analysis`` as a separate process, as does standard output on a
full device (what the interpreter does at exit counts too); the full device as ``--out`` and
the regular target run :func:`analysis.cli.main` in the test process
(:func:`tests.helpers.run_main`). The full device is a ``/dev/full`` node made in
``tmp_path`` when the test may make one (so a failing writer could never replace the real
device), else ``/dev/full`` itself.
"""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from analysis.core.errors import InputError
from analysis.io.atomic import atomic_folder, atomic_write, atomic_write_text, check_target
from tests.bad_input.corpus import GOOD, OUTPUT_COMMANDS
from tests.bad_input.made import ROOT, full_device, make, output_args, run_analysis
from tests.helpers import run_main

#: commands whose output is a folder (a bundle)
FOLDER_COMMANDS = ("import", "bundle", "demo")
#: commands cheap enough to run to the end (the demo generator runs its retrievers)
WRITING = tuple(c for c in OUTPUT_COMMANDS if c != "demo")


def _name(command: str) -> str:
    if command in FOLDER_COMMANDS:
        return "bundle-out"
    return {"geo": "out.json", "report": "out.html", "deck": "out.html"}.get(command, "out.csv")


def _in_process(command: str, target: Path, tmp: Path) -> subprocess.CompletedProcess[str]:
    """``command`` writing to ``target`` through :func:`analysis.cli.main` in this process, its
    notes folder in ``tmp``."""
    notes = {"RETRIEVAL_DASHBOARD_NOTES_DIR": str(tmp / "notes")}
    return run_main(*output_args(command, target, tmp), env=notes, cwd=ROOT)


def _one_line(proc: subprocess.CompletedProcess, target: Path, message: str) -> None:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"error: {target}: "), lines[0]
    assert message in lines[0], lines[0]


@pytest.mark.parametrize("command", OUTPUT_COMMANDS)
def test_a_full_device_as_target_is_refused_and_left_alone(command: str, tmp_path: Path) -> None:
    device = full_device(tmp_path)
    proc = _in_process(command, device, tmp_path)
    why = "exists and is not a folder" if command in FOLDER_COMMANDS else "is a device"
    _one_line(proc, device, why)
    assert stat.S_ISCHR(device.stat().st_mode)  # still the device, not a file renamed over it
    assert not [p for p in device.parent.iterdir() if p.name.startswith(f".{device.name}")]


@pytest.mark.parametrize("command", OUTPUT_COMMANDS)
def test_a_read_only_folder_is_one_line_and_stays_empty(command: str, tmp_path: Path) -> None:
    target = make("readonly_folder", tmp_path / "made", name=_name(command))
    proc = run_analysis(output_args(command, target, tmp_path), tmp_path, "readonly_folder")
    _one_line(proc, target, "cannot write: permission denied")
    assert list(target.parent.iterdir()) == []


@pytest.mark.parametrize("command", WRITING)
def test_a_full_disk_is_an_error_and_keeps_the_previous_output(
    command: str, tmp_path: Path
) -> None:
    target = make("file_size_limit", tmp_path / "made", name=_name(command))
    if command in FOLDER_COMMANDS:  # an earlier bundle there
        (target / "sub").mkdir(parents=True)
        (target / "bundle.toml").write_text("old\n")
    else:
        target.write_text("old\n")
    before = sorted(p.name for p in target.parent.iterdir())
    proc = run_analysis(output_args(command, target, tmp_path), tmp_path, "file_size_limit")
    _one_line(proc, target, "cannot write: the file is too large")
    assert sorted(p.name for p in target.parent.iterdir()) == before  # no temporary left
    kept = target / "bundle.toml" if command in FOLDER_COMMANDS else target
    assert kept.read_text() == "old\n"


@pytest.mark.parametrize("command", WRITING)
def test_the_same_commands_write_to_a_regular_target(command: str, tmp_path: Path) -> None:
    target = make("regular", tmp_path / "made", name=_name(command))
    proc = _in_process(command, target, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert (target / "bundle.toml").is_file() if command in FOLDER_COMMANDS else target.is_file()
    assert sorted(p.name for p in target.parent.iterdir()) == [target.name]


@pytest.mark.parametrize(
    "args",
    [
        ["geo", "--pois", str(ROOT / "tests/bad_input/pois/bom_crlf_ok.csv")],
        ["evaluate", "--run", str(GOOD["run"]), "--qrels", str(GOOD["qrels"])],
    ],
    ids=["geo", "evaluate"],
)
def test_standard_output_on_a_full_device_is_an_error(args: list[str], tmp_path: Path) -> None:
    with full_device(tmp_path).open("w") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "analysis", *args],
            cwd=ROOT,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=300,
            check=False,
        )
    assert proc.returncode == 2
    assert proc.stderr == "error: stdout: cannot write: no space left on the device\n"


@pytest.mark.parametrize("args", [["--help"], ["evaluate", "--help"]], ids=["main", "command"])
def test_help_on_a_full_device_is_an_error(args: list[str], tmp_path: Path) -> None:
    with full_device(tmp_path).open("w") as full:
        proc = subprocess.run([sys.executable, "-m", "analysis", *args], cwd=ROOT, stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=300,
                              check=False)  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr == "error: stdout: cannot write: no space left on the device\n"


# ------------------------------------------------------------------------ the writer itself


@pytest.mark.parametrize("recipe", ["device", "fifo", "folder", "missing_folder", "symlink_loop"])
def test_check_target_refuses_what_is_not_a_new_or_regular_file(
    recipe: str, tmp_path: Path
) -> None:
    target = make(recipe, tmp_path)
    with pytest.raises(InputError) as info:
        check_target(target)
    assert str(info.value).startswith(f"{target}: ")


def test_a_failed_write_leaves_the_previous_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "table.csv"
    target.write_text("old\n")

    def full(tmp: Path) -> None:
        with tmp.open("w") as f:
            f.write("partial")
            raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(InputError, match="cannot write: no space left on the device"):
        atomic_write(target, full)
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["table.csv"]


def test_an_i_o_error_when_syncing_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "fsync", broken)
    with pytest.raises(InputError, match="cannot write: input/output error"):
        atomic_write_text(tmp_path / "report.html", "<html></html>")
    assert list(tmp_path.iterdir()) == []


def test_a_folder_is_swapped_in_whole_or_not_at_all(tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    out.mkdir()
    (out / "bundle.toml").write_text("old\n")

    def half(folder: Path) -> None:
        (folder / "bundle.toml").write_text("new\n")
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(InputError, match="no space left"):
        atomic_folder(out, half)
    assert (out / "bundle.toml").read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle"]
    atomic_folder(out, lambda folder: (folder / "bundle.toml").write_text("new\n"))
    assert (out / "bundle.toml").read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle"]


@pytest.mark.parametrize("name", ["a" * 246 + ".csv", "表" * 80 + ".csv"], ids=["ascii", "cjk"])
def test_a_long_name_the_file_system_takes_is_written(tmp_path: Path, name: str) -> None:
    """A target name near the file system's 255-byte limit is written: the temporary file or
    folder beside it may not be named after the whole of it (``.<name>.<random>.tmp``)."""
    assert len(os.fsencode(name)) <= 250
    atomic_write_text(tmp_path / name, "new\n")
    atomic_write_text(tmp_path / name, "newer\n")
    assert (tmp_path / name).read_text() == "newer\n"
    folder = tmp_path / "bundles" / name.removesuffix(".csv")
    folder.parent.mkdir()
    for text in ("old\n", "new\n"):  # made, then swapped for a new one
        atomic_folder(folder, lambda f, text=text: (f / "bundle.toml").write_text(text))
    assert (folder / "bundle.toml").read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["bundles", name])
    assert [p.name for p in folder.parent.iterdir()] == [folder.name]


def test_a_failed_swap_puts_the_previous_folder_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The new folder fails to take the old one's place once the old one is moved aside (an
    I/O error, another process creating the target in between): the old one is put back."""
    out = tmp_path / "bundle"
    out.mkdir()
    (out / "bundle.toml").write_text("old\n")
    real = Path.rename

    def rename(self: Path, target: Path) -> Path:
        if Path(target) == out and not self.name.startswith(".bundle.old."):  # the new one
            raise OSError(errno.EIO, "Input/output error")
        return real(self, target)

    monkeypatch.setattr(Path, "rename", rename)
    with pytest.raises(InputError, match="input/output error"):
        atomic_folder(out, lambda folder: (folder / "bundle.toml").write_text("new\n"))
    monkeypatch.setattr(Path, "rename", real)
    assert (out / "bundle.toml").read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle"]
