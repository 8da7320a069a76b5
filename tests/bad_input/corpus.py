"""The bad-input corpus: ``cases.toml`` read into :class:`Case` objects (see that file for the
fields). Shared by ``tests/io/test_bad_input.py``, ``tests/app/test_safety.py`` and
``tests/cli/test_no_writes.py``.

Cases of the kinds in :data:`MADE_KINDS` are paths git cannot hold (symlink loops, FIFOs,
devices, read-only folders, names too long): their ``make`` recipe builds them in a temporary
folder at test time (:func:`make`)."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: kinds read by the loaders (one file or bundle folder each)
FILE_KINDS = ("run", "qrels", "stark_qa", "stark_eval", "bundle", "pois")
#: kinds run through one command: a bundle reported (``report``), a run compared with itself
#: (``disagree``), a CSV loaded into the notes (``notes_import``)
COMMAND_KINDS = ("report", "disagree", "notes_import")
#: kinds made at test time: an output target (``output``), an input path (``path``)
MADE_KINDS = ("output", "path")
KINDS = (*FILE_KINDS, *COMMAND_KINDS, *MADE_KINDS)
OUTCOMES = ("error", "warning", "ok")
#: recipes of made paths (see :func:`make`)
RECIPES = (
    "regular", "device", "fifo", "folder", "missing_folder", "file_as_folder", "symlink_loop",
    "long_name", "readonly_folder", "file_size_limit", "unreadable", "symlink_ok",
)  # fmt: skip
#: commands an ``output`` case writes with, and inputs a ``path`` case replaces
OUTPUT_COMMANDS = ("evaluate", "evaluate_bundle", "compare", "disagree", "report", "deck",
                   "notes_csv", "notes_qrels", "coverage", "geo", "import", "bundle",
                   "demo")  # fmt: skip
PATH_INPUTS = ("run", "qrels", "bundle", "pois", "csv", "manifest_qrels", "plugin")
GOOD = {
    "run": HERE / "good" / "run.txt",
    "qrels": HERE / "good" / "qrels.txt",
    "stark_qa": HERE / "good" / "stark_qa.csv",
    "stark_eval": HERE / "good" / "eval_results.csv",
}
# a fragment of the message each data-check code prints (``warning: <message>``)
WARNING_TEXT = {
    "duplicate_docs": "duplicate document",
    "duplicate_qrels": "duplicate qrels row",
    "not_in_qrels": "not in the qrels",
    "missing_from_run": "missing from the run",
    "no_relevant": "no relevant document in the qrels",
}


@dataclass(frozen=True)
class Case:
    """One corpus entry and its expected outcome."""

    file: str
    kind: str
    outcome: str
    description: str
    line: int | None = None
    message: str = ""
    warnings: tuple[str, ...] = ()
    qrels: str | None = None
    run: str | None = None
    crs: str | None = None
    error_file: str | None = None
    make: str | None = None
    command: str | None = None
    k: int | None = None
    source: str | None = None

    @property
    def id(self) -> str:
        return self.file.replace("/", "-")

    @property
    def path(self) -> Path:
        return HERE / self.file

    def companion(self) -> Path:
        """The other file the CLI needs: qrels for runs, a run for qrels (STaRK: its pair)."""
        if self.kind in ("run", "stark_eval"):
            return (
                HERE / self.qrels
                if self.qrels
                else GOOD["stark_qa" if self.kind == "stark_eval" else "qrels"]
            )
        if self.kind in ("qrels", "stark_qa"):
            return (
                HERE / self.run
                if self.run
                else GOOD["stark_eval" if self.kind == "stark_qa" else "run"]
            )
        raise ValueError(f"a {self.kind} case has no companion")

    def error_path(self) -> Path:
        """The file the error message names."""
        if self.kind in ("bundle", "report"):
            return (self.path / (self.error_file or "bundle.toml")).resolve()
        return self.path

    def expected_prefix(self, path: Path | str | None = None) -> str:
        """``<file>:<line>: `` (or ``<file>: ``) that the error message starts with: ``path``,
        else the command-line flag the error names (``source``), else :meth:`error_path`."""
        where = str(path if path is not None else self.source or self.error_path())
        return f"{where}:{self.line}: " if self.line is not None else f"{where}: "


def load_cases() -> list[Case]:
    data = tomllib.loads((HERE / "cases.toml").read_text(encoding="utf-8"))
    cases = []
    for raw in data["case"]:
        raw = dict(raw)
        raw["warnings"] = tuple(raw.get("warnings", ()))
        cases.append(Case(**raw))
    return cases


CASES = load_cases()


def cases(*kinds: str, outcome: str | None = None) -> list[Case]:
    """The cases of the given kinds (all when none), optionally of one outcome."""
    return [
        c
        for c in CASES
        if (not kinds or c.kind in kinds) and (outcome is None or c.outcome == outcome)
    ]
