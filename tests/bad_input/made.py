"""Paths git cannot hold, made at test time (symlink loops, FIFOs, a full device, read-only
folders, names too long), and the command line of the corpus cases that run one command
(``output``, ``path``, ``report``, ``disagree``, ``notes_import``).

A read-only folder or an unreadable file stops nobody who runs as root: the command then runs
without the capabilities that override file permissions (``CAP_DAC_OVERRIDE``,
``CAP_DAC_READ_SEARCH``), as an ordinary user would. A full disk is a file size limit
(``RLIMIT_FSIZE``): every write past a few bytes fails, as on a full file system.
"""

from __future__ import annotations

import ctypes
import os
import resource
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.bad_input.corpus import GOOD, HERE, Case
from tests.helpers import run_main

ROOT = HERE.parents[1]
OK_BUNDLE = HERE / "bundle" / "ok"
OK_POIS = HERE / "pois" / "bom_crlf_ok.csv"
FSIZE_LIMIT = 16  # bytes: a "full disk" for every output
_PR_CAPBSET_DROP = 24
_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH = 1, 2
#: recipes whose command runs in its own process: without the permission overrides
#: (``readonly_folder``, ``unreadable``), under a file size limit (``file_size_limit``), or
#: next to a FIFO (a command that opened it would wait for a reader: a separate process
#: has a timeout)
OWN_PROCESS = ("readonly_folder", "unreadable", "file_size_limit", "fifo")


def full_device(tmp: Path) -> Path:
    """A full device (``/dev/full``'s numbers) in ``tmp`` when this process may make one, so a
    failing test can never replace the real one; else ``/dev/full`` itself."""
    node = tmp / "full"
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    except (OSError, AttributeError):
        return Path("/dev/full")
    return node


def make(recipe: str, tmp: Path, *, name: str = "out.csv", source: Path | None = None) -> Path:
    """The path of ``recipe`` (see ``RECIPES`` in the corpus) made inside ``tmp``; ``source``
    is the good file an ``unreadable`` copy or a ``symlink_ok`` link stands for."""
    tmp.mkdir(parents=True, exist_ok=True)
    if recipe in ("regular", "file_size_limit"):
        return tmp / name
    if recipe == "device":
        return full_device(tmp)
    if recipe == "fifo":
        os.mkfifo(tmp / "out.fifo")
        return tmp / "out.fifo"
    if recipe == "folder":
        (tmp / "a-folder").mkdir()
        return tmp / "a-folder"
    if recipe == "missing_folder":
        return tmp / "missing" / name
    if recipe == "file_as_folder":
        (tmp / "file.txt").write_text("a file\n")
        return tmp / "file.txt" / name
    if recipe == "symlink_loop":
        (tmp / "loop").symlink_to(tmp / "loop")
        return tmp / "loop"
    if recipe == "long_name":
        return tmp / ("x" * 300 + Path(name).suffix)
    if recipe == "readonly_folder":
        folder = tmp / "read-only"
        folder.mkdir()
        folder.chmod(0o555)
        return folder / name
    if recipe == "unreadable":
        copy = tmp / f"unreadable{''.join((source or GOOD['run']).suffixes)}"
        copy.write_bytes((source or GOOD["run"]).read_bytes())
        copy.chmod(0)
        return copy
    if recipe == "symlink_ok":
        link = tmp / f"link{''.join((source or GOOD['run']).suffixes)}"
        link.symlink_to(source or GOOD["run"])
        return link
    raise ValueError(f"unknown recipe {recipe!r}")


def _drop_overrides() -> None:  # runs in the child before exec
    if os.geteuid() == 0:
        libc = ctypes.CDLL(None, use_errno=True)
        for cap in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
            libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)


def _limit_size() -> None:  # runs in the child before exec
    resource.setrlimit(resource.RLIMIT_FSIZE, (FSIZE_LIMIT, FSIZE_LIMIT))


def limits(recipe: str | None) -> Callable[[], None] | None:
    """What the command runs under for ``recipe``: no permission override for a read-only
    folder or unreadable file, a file size limit for a full disk."""
    if recipe in ("readonly_folder", "unreadable"):
        return _drop_overrides
    if recipe == "file_size_limit":
        return _limit_size
    return None


def output_args(command: str, target: Path, tmp: Path) -> list[str]:
    """The command line of ``command`` writing to ``target`` (inputs: the corpus' good files,
    the ``ok`` bundle, an import folder made in ``tmp``)."""
    run, qrels, notes = str(GOOD["run"]), str(GOOD["qrels"]), str(tmp / "notes")
    out = ["--out", str(target)]
    return {
        "evaluate": ["evaluate", "--run", run, "--qrels", qrels, *out],
        "evaluate_bundle": ["evaluate", "--bundle", str(OK_BUNDLE), "--dataset", "web", *out],
        "compare": ["compare", "--qrels", qrels, "--run", run, "--run", run, *out],
        "disagree": ["disagree", "--run", run, "--run", run, *out],
        "report": ["report", "--bundle", str(OK_BUNDLE), *out],
        "deck": ["report", "--bundle", str(OK_BUNDLE), "--deck", *out],
        "notes_csv": ["notes", "--bundle", str(OK_BUNDLE), "--notes-dir", notes,
                      "--csv", str(target)],
        "notes_qrels": ["notes", "--bundle", str(OK_BUNDLE), "--dataset", "web",
                        "--notes-dir", notes, "--qrels", str(target)],
        "coverage": ["coverage", "--bundle", str(OK_BUNDLE), "--dataset", "web",
                     "--notes-dir", notes, *out],
        "geo": ["geo", "--pois", str(OK_POIS), *out],
        "import": ["import", "geoglue", "--root", str(import_folder(tmp)), *out],
        "bundle": ["bundle", "--run", f"bm25={run}", "--qrels", qrels, *out],
        "demo": ["demo", *out],
    }[command]  # fmt: skip


def import_folder(tmp: Path) -> Path:
    """A two-POI, one-query GeoGLUE folder (WGS84 CSVs) to import."""
    folder = tmp / "geoglue-source"
    if not folder.is_dir():
        folder.mkdir(parents=True)
        (folder / "poi.csv").write_text(
            "id,name,lat,lon\np1,cafe,30.25,120.16\np2,tea,30.26,120.17\n"
        )
        (folder / "test.csv").write_text(
            "query_id,text,lat,lon,gold_poi_ids\nq1,cafe,30.25,120.16,p1\n"
        )
    return folder


def path_args(which: str, path: Path, tmp: Path) -> list[str]:
    """The command line reading ``path`` as input ``which`` (the other inputs good)."""
    if which == "run":
        return ["evaluate", "--run", str(path), "--qrels", str(GOOD["qrels"])]
    if which == "qrels":
        return ["evaluate", "--run", str(GOOD["run"]), "--qrels", str(path)]
    if which == "bundle":
        return ["validate", "--bundle", str(path)]
    if which == "pois":
        return ["geo", "--pois", str(path)]
    if which == "csv":
        notes = str(tmp / "notes")
        return ["notes", "import", "--bundle", str(OK_BUNDLE), "--dataset", "web",
                "--csv", str(path), "--author", "test", "--notes-dir", notes]  # fmt: skip
    if which == "plugin":
        return ["evaluate", "--run", str(GOOD["run"]), "--qrels", str(GOOD["qrels"]),
                "--plugin", str(path)]  # fmt: skip
    if which == "manifest_qrels":  # a bundle whose manifest names the path as its qrels
        bundle = tmp / "bundle"
        (bundle / "web" / "runs").mkdir(parents=True)
        (bundle / "web" / "runs" / "bm25.run").write_bytes(GOOD["run"].read_bytes())
        (bundle / "bundle.toml").write_text(f'[datasets.web]\nqrels = "{path}"\n')
        return ["validate", "--bundle", str(bundle)]
    raise ValueError(f"unknown input {which!r}")


def case_args(case: Case, tmp: Path) -> tuple[list[str], Path | None]:
    """The command line of a case of a command kind, and the path its error names."""
    if case.kind == "output":
        suffix = ".json" if case.command == "geo" else ".html" if case.command in (
            "report", "deck") else ".csv"  # fmt: skip
        name = "bundle-out" if case.command in ("import", "bundle", "demo") else f"out{suffix}"
        target = make(case.make or "regular", tmp / "made", name=name)
        return output_args(case.command or "evaluate", target, tmp), target
    if case.kind == "path":
        which = case.command or "run"
        good = {"qrels": GOOD["qrels"], "pois": OK_POIS, "bundle": OK_BUNDLE / "bundle.toml",
                "csv": HERE / "notes" / "export_ok.csv"}.get(which, GOOD["run"])  # fmt: skip
        path = make(case.make or "regular", tmp / "made", name="input.txt", source=good)
        args = path_args(which, path, tmp)
        return args, tmp / "bundle" / "bundle.toml" if which == "manifest_qrels" else path
    if case.kind == "report":
        return ["report", "--bundle", str(case.path), "--out", str(tmp / "report.html")], None
    if case.kind == "disagree":
        k = str(case.k or 10)
        out = str(tmp / "disagree.csv")
        return ["disagree", "--run", str(case.path), "--run", str(case.path), "--k", k,
                "--out", out], None  # fmt: skip
    if case.kind == "notes_import":
        return path_args("csv", case.path, tmp), None
    raise ValueError(f"a {case.kind} case runs no single command")


def run_analysis(
    args: list[str], tmp: Path, recipe: str | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``python -m analysis ARGS`` as a separate process, under the limits of ``recipe``, with
    its notes folder in ``tmp``."""
    return subprocess.run(
        [sys.executable, "-m", "analysis", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        preexec_fn=limits(recipe),
        env={
            **os.environ,
            "RETRIEVAL_DASHBOARD_NOTES_DIR": str(tmp / "notes"),
            # under a file size limit a bytecode file would be cut short, and every later
            # process importing that module would fail on it
            "PYTHONDONTWRITEBYTECODE": "1",
        },
    )


def run_case(
    case: Case, tmp: Path, *, process: bool = True, timeout: float = 300
) -> tuple[subprocess.CompletedProcess[str], Path | None]:
    """Run the case's command as a separate process (under the limits of its recipe), or with
    ``process=False`` in this one (:func:`tests.helpers.run_main`) unless its recipe or a
    plugin needs a process of its own (:data:`OWN_PROCESS`)."""
    args, named = case_args(case, tmp)
    if process or case.make in OWN_PROCESS or "--plugin" in args:
        return run_analysis(args, tmp, case.make, timeout), named
    notes = {"RETRIEVAL_DASHBOARD_NOTES_DIR": str(tmp / "notes")}
    return run_main(*args, env=notes, cwd=ROOT), named
