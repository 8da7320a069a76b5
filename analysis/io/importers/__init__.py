"""Importers: the layouts researchers have on disk -> a ready bundle (``bundle.toml`` +
Parquet), written atomically.

* :func:`import_stark`: a STaRK domain folder (QA CSVs, splits, query groups, metapaths, runs;
  optionally the SKB for entity names and text).
* :func:`import_geobloom`, :func:`import_geoglue`, :func:`import_list`: spatio-textual POI
  benchmarks (GeoBloom text files, GeoGLUE JSON or WGS84 CSVs, LIST CSVs), optional baseline
  runs.

Each importer is declared once (:class:`Importer`: name, detection, run, CRS needs and
defaults, options, help) in its module's ``IMPORTERS``; the registry
(:mod:`analysis.io.importers.registry`) gives them to ``python -m analysis import ...``, the
folder scan's suggestion and the app's Open data page. :func:`register_importer` adds one.
"""

from __future__ import annotations

from analysis.io.importers._write import ImportedDataset, ImportResult, write_bundle
from analysis.io.importers.registry import Argument, Importer, importers, register_importer
from analysis.io.importers.scan import build_bundle, scan_folder, suggest_importer
from analysis.io.importers.spatial import import_geobloom, import_geoglue, import_list
from analysis.io.importers.stark import import_stark

__all__ = [
    "Argument",
    "ImportResult",
    "ImportedDataset",
    "Importer",
    "build_bundle",
    "import_geobloom",
    "import_geoglue",
    "import_list",
    "import_stark",
    "importers",
    "register_importer",
    "scan_folder",
    "suggest_importer",
    "write_bundle",
]
