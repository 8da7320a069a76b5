"""An importer of your own: a folder holding ``qrels.txt`` and ``runs/*.trec`` becomes a bundle.

Load it with ``--plugin`` and it is one more ``import`` command, offered by the Open data page
(``RETRIEVAL_DASHBOARD_PLUGINS=examples.trecdir_importer``) for folders it detects::

    python -m analysis import trecdir --plugin examples/trecdir_importer.py --root DIR --out BUNDLE
"""

from __future__ import annotations

from pathlib import Path

from analysis.io.adhoc import AdhocInputs, write_adhoc_bundle
from analysis.io.importers import Importer, ImportResult, register_importer


def detect(folder: Path) -> float:
    """1 when the folder holds the layout's defining files, else 0."""
    return float((folder / "qrels.txt").is_file() and any((folder / "runs").glob("*.trec")))


def run(root: str | Path, out: str | Path, *, name: str | None = None) -> ImportResult:
    """One dataset: every ``runs/<model>.trec`` evaluated against ``qrels.txt``."""
    root = Path(root)
    runs = {path.stem: path for path in sorted((root / "runs").glob("*.trec"))}
    inputs = AdhocInputs(runs=runs, qrels=root / "qrels.txt", name=name or root.name)
    return write_adhoc_bundle(inputs, out)


register_importer(Importer("trecdir", "a folder with qrels.txt and runs/*.trec", run, detect))
