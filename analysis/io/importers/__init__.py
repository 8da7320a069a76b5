"""Importers: the layouts researchers have on disk -> a ready bundle (``bundle.toml`` +
Parquet), written atomically.

* :func:`import_stark`: a STaRK domain folder (QA CSVs, splits, query groups, metapaths, runs;
  optionally the SKB for entity names and text).
* :func:`import_geobloom`, :func:`import_geoglue`, :func:`import_list`: spatio-textual POI
  benchmarks (GeoBloom text files, GeoGLUE JSON or WGS84 CSVs, LIST CSVs), optional baseline
  runs.

The same importers back ``python -m analysis import ...``.
"""

from __future__ import annotations

from analysis.io.importers._write import ImportedDataset, ImportResult, write_bundle
from analysis.io.importers.scan import build_bundle, scan_folder, suggest_importer
from analysis.io.importers.spatial import import_geobloom, import_geoglue, import_list
from analysis.io.importers.stark import import_stark

__all__ = [
    "ImportResult",
    "ImportedDataset",
    "build_bundle",
    "import_geobloom",
    "import_geoglue",
    "import_list",
    "import_stark",
    "scan_folder",
    "suggest_importer",
    "write_bundle",
]
