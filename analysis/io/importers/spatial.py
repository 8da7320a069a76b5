"""``import geobloom | geoglue | list``: spatio-textual POI benchmarks -> a one-dataset bundle.

* **GeoBloom** (``--crs`` required, e.g. EPSG:2385 for GeoGLUE-clean): ``poi.txt``
  (``text<TAB>X<TAB>Y``, POI id = 0-based row) and ``train.txt``/``dev.txt``/``test.txt``
  (``text<TAB>X<TAB>Y<TAB>gold_row``; query ids ``<split>-<row>``). X, Y are read in the CRS's
  own axis order (EPSG:2385: northing, easting, as GeoBloom writes them); ``easting_first``
  reads X as the easting. Swapped axes are refused with a message.
* **GeoGLUE**: JSON/JSONL records with ``gis`` (last element ``"lon,lat"``), or WGS84 CSVs (POIs
  ``poi_id,text,name,...,lat,lon``; queries ``query_id,text,lat,lon,gold_poi_ids``). The POI file
  is the one whose name mentions ``poi``; every other file is a query file whose split is the
  ``train``/``dev``/``val``/``test`` word in its name.
* **LIST** (``--crs`` required, one projected CRS for the dataset, e.g. EPSG:32650 for Beijing):
  ``poi.csv`` (``id,coor,text``), query files ``*quer*.csv`` with ``qrels*.csv`` beside them
  (in the folder or in ``train/``, ``dev/``, ``test/`` sub-folders). Coordinates projected with a
  UTM zone per point are detected and converted zone by zone (see
  :mod:`analysis.io.importers.spatial_checks`).

Every import writes one dataset (``family = "spatial"``, ``crs = "EPSG:4326"`` since the tables
hold WGS84 ``lat, lon``) with the split files as ``splits`` and ``split = "test"`` when there is
a test split. Queries get ``query_chars`` (length in characters) and, when the data has no
``query_type``, the rule-based type of :mod:`analysis.io.importers.querytype`. Query ids that
repeat across splits are prefixed with the split (``test-17``). ``baselines`` adds three runs
over every query: ``bm25``, ``char-ngram-tfidf`` and ``bm25-distance-fusion`` (LIST's fusion
``(1-α)(1 - min(d, d_max)/d_max) + α·minmax(BM25)``; GeoGLUE/GeoBloom ``α = 0.5,
d_max = 30 km``, LIST ``α = 0.4, d_max = 20 km``, as in the demo bundle).

A query file that holds no query (a header only, an empty file) is an error naming it: its
split would be written as a split file of no query id, which no bundle reader accepts. So is a
POI file that holds no POI: no query could find its gold. An import whose files name no gold
POI at all (no gold column, an empty ``qrels.csv``) is an error naming the folder: a bundle of
no qrels row cannot be opened.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.core import paths
from analysis.core.errors import InputError
from analysis.io import spatial
from analysis.io.importers import spatial_checks
from analysis.io.importers._write import ImportedDataset, ImportResult, check_out, write_bundle
from analysis.io.importers.querytype import query_chars, query_types
from analysis.io.importers.registry import Argument, Importer, file_names

GEOGLUE_METRICS = ("recall@1", "recall@10", "ndcg@10", "mrr")
LIST_METRICS = ("recall@10", "ndcg@10", "recall@20", "ndcg@20")
SPLIT_WORDS = ("train", "dev", "val", "valid", "test")
FUSION = {"geoglue": (0.5, 30_000.0), "geobloom": (0.5, 30_000.0), "list": (0.4, 20_000.0)}
_SPLIT_RE = re.compile(r"(?<![a-z])(train|dev|valid|val|test)(?![a-z])")


def split_of(path: Path, root: Path) -> str:
    """The split word in ``path`` relative to ``root`` (``train``/``dev``/``val``/``test``), else
    ``all``."""
    found = _SPLIT_RE.findall(path.relative_to(root).as_posix().lower())
    return found[-1] if found else "all"


def _root(root: str | Path) -> Path:
    src = paths.resolve(root)
    if not src.is_dir():
        raise InputError(root, None, "the folder does not exist")
    return src


def _poi_file(src: Path, file: str, layout: str) -> Path:
    """``src / file``; its absence is an error naming the expected ``layout``."""
    path = src / file
    if not path.is_file():
        raise InputError(src, None, f"no {file} here ({layout})")
    return path


def _some_queries(path: Path, queries: pd.DataFrame) -> pd.DataFrame:
    """``queries`` when the file ``path`` holds one (module docstring)."""
    if queries.empty:
        raise InputError(path, None, "the file holds no query (a header only, or empty)")
    return queries


def _some_pois(path: Path, pois: pd.DataFrame) -> pd.DataFrame:
    """``pois`` when the file ``path`` holds one (module docstring)."""
    if pois.empty:
        raise InputError(path, None, "the file holds no POI (a header only, or empty)")
    return pois


def _queries(
    parts: list[tuple[str, pd.DataFrame, pd.DataFrame]], notes: list[str], src: Path
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, list[str]]]:
    """Concatenate per-split (queries, qrels); prefix ids with the split when they repeat.

    Raises:
        InputError: a query id in two query files of one split (the prefix cannot tell them
            apart: their gold would be merged into one query's).
    """
    for split in dict.fromkeys(s for s, _, _ in parts):
        same = pd.concat([q["query_id"] for s, q, _ in parts if s == split], ignore_index=True)
        repeated = same[same.duplicated()]
        if len(repeated):
            raise InputError(
                src,
                None,
                f"query id {repeated.iloc[0]!r:.60} is in two query files of split {split!r}: "
                "the query ids of one split must be unique",
            )
    ids = pd.concat([q["query_id"] for _, q, _ in parts], ignore_index=True)
    prefix = ids.duplicated().any()
    if prefix:
        notes.append("query ids repeat across splits: prefixed with the split (test-17)")
    queries, qrels, splits = [], [], {}
    for split, q, r in parts:
        q, r = q.copy(), r.copy()
        if prefix:
            q["query_id"] = split + "-" + q["query_id"].astype("str")
            r["query_id"] = split + "-" + r["query_id"].astype("str")
        queries.append(q)
        qrels.append(r)
        splits.setdefault(split, []).extend(q["query_id"].astype("str").tolist())
    return pd.concat(queries, ignore_index=True), pd.concat(qrels, ignore_index=True), splits


def _slices(queries: pd.DataFrame) -> pd.DataFrame:
    # the split comes from the manifest's split files; projected x, y stay with the source
    out = queries.drop(columns=[c for c in ("split", "x", "y") if c in queries.columns])
    if "query_type" not in out.columns:
        out["query_type"] = query_types(out["text"]).to_numpy()
    out["query_chars"] = query_chars(out["text"])
    return out


def _baselines(kind: str, pois: pd.DataFrame, queries: pd.DataFrame) -> dict[str, pd.DataFrame]:
    from analysis.baselines.retrievers import BM25, CharNgramTfidf, SpatialFusion

    ids, texts = pois["doc_id"].tolist(), pois["text"].tolist()
    q, qid = queries["text"].tolist(), queries["query_id"].tolist()
    alpha, d_max = FUSION[kind]
    fusion = SpatialFusion(alpha=alpha, d_max_m=d_max).fit(ids, texts, pois["lat"], pois["lon"])
    return {
        "bm25": BM25().fit(ids, texts).search(q, query_ids=qid),
        "char-ngram-tfidf": CharNgramTfidf().fit(ids, texts).search(q, query_ids=qid),
        "bm25-distance-fusion": fusion.search(q, queries["lat"], queries["lon"], query_ids=qid),
    }


@dataclass(frozen=True)
class _Import:
    """One import: its ``kind`` (``list``, ``geoglue``, ``geobloom``), the input folder
    ``src``, the bundle folder ``out`` and the dataset's ``name`` (``None``: the folder's)."""

    kind: str
    src: Path
    out: Path
    name: str | None


def _finish(
    job: _Import,
    pois: pd.DataFrame,
    parts: list[tuple[str, pd.DataFrame, pd.DataFrame]],
    *,
    baselines: bool,
    source_crs: str | None = None,
    notes: list[str] | None = None,
) -> ImportResult:
    """Write the bundle of one imported dataset (named ``name``, else the folder's name)."""
    kind, src, out = job.kind, job.src, job.out
    name = job.name or src.name
    notes = [] if notes is None else notes
    if not parts:
        raise InputError(src, None, "no query files found")
    queries, qrels, splits = _queries(parts, notes, src)
    if qrels.empty:
        raise InputError(
            src, None, "no gold POI in the query or qrels files: there is nothing to evaluate"
        )
    queries = _slices(queries)
    unknown = ~qrels["doc_id"].isin(set(pois["doc_id"]))
    if unknown.any():
        notes.append(
            f"{int(unknown.sum())} gold rows name POIs that are not in the POI file "
            f"(e.g. {qrels.loc[unknown, 'doc_id'].iloc[0]!r})"
        )
    runs = _baselines(kind, pois, queries) if baselines else {}
    if set(splits) == {"all"}:
        splits = {}
    crs_note = f", converted from {source_crs}" if source_crs else ""
    dataset = ImportedDataset(
        name=name,
        family="spatial",
        queries=queries,
        qrels=qrels,
        metrics=LIST_METRICS if kind == "list" else GEOGLUE_METRICS,
        entities=pois,
        runs=runs,
        splits=splits,
        default_split="test" if "test" in splits else None,
        crs="EPSG:4326",
        description=f"{kind} import of {src.name} (WGS84 lat/lon{crs_note})",
    )
    write_bundle(out, name, [dataset], description=f"{kind} {name}")
    return ImportResult(out=out, datasets=[dataset], notes=notes)


def import_geobloom(
    root: str | Path,
    out: str | Path,
    *,
    crs: str,
    name: str | None = None,
    baselines: bool = False,
    easting_first: bool = False,
) -> ImportResult:
    """Import GeoBloom text files (see the module docstring).

    Raises:
        InputError: no ``poi.txt``, no query file, a bad line (file and line named), swapped
            axes, ``out`` inside the input.
    """
    src = _root(root)
    target = check_out(out, [src])
    poi_file = _poi_file(src, "poi.txt", "GeoBloom layout: poi.txt, train/dev/test.txt")
    pois = _some_pois(poi_file, spatial.load_geobloom_pois(poi_file, crs, always_xy=easting_first))
    parts = []
    for split in ("train", "dev", "val", "test"):
        path = src / f"{split}.txt"
        if path.is_file():
            q, r = spatial.load_geobloom_queries(path, crs, always_xy=easting_first)
            parts.append((split, _some_queries(path, q), r))
    job = _Import("geobloom", src, target, name)
    return _finish(job, pois, parts, baselines=baselines, source_crs=crs)


def _geoglue_files(src: Path) -> tuple[Path, list[Path], str]:
    json_files = sorted(
        p for p in src.iterdir() if p.is_file() and p.name.lower().endswith((".json", ".jsonl"))
    )
    csv_files = sorted(p for p in src.iterdir() if p.is_file() and p.name.lower().endswith(".csv"))
    for files, kind in ((json_files, "json"), (csv_files, "csv")):
        poi = [p for p in files if "poi" in p.name.lower()]
        queries = [p for p in files if "poi" not in p.name.lower()]
        if poi and queries:
            return poi[0], queries, kind
    raise InputError(
        src, None, "no GeoGLUE POI file (*poi*.json/.jsonl/.csv) with query files beside it"
    )


def import_geoglue(
    root: str | Path, out: str | Path, *, name: str | None = None, baselines: bool = False
) -> ImportResult:
    """Import GeoGLUE JSON records or WGS84 CSVs (see the module docstring).

    Raises:
        InputError: no POI or query file, a bad record (file and line named), ``out`` inside
            the input.
    """
    src = _root(root)
    target = check_out(out, [src])
    poi_file, query_files, kind = _geoglue_files(src)
    if kind == "json":
        pois = spatial.load_geoglue_pois(poi_file)
    else:
        pois = spatial.load_latlon_pois(poi_file)
    pois = _some_pois(poi_file, pois)
    parts = []
    for path in query_files:
        loader = spatial.load_geoglue_queries if kind == "json" else spatial.load_latlon_queries
        q, r = loader(path)
        parts.append((split_of(path, src), _some_queries(path, q), r))
    return _finish(_Import("geoglue", src, target, name), pois, parts, baselines=baselines)


def _list_files(src: Path) -> list[tuple[str, Path, Path | None]]:
    found = []
    for path in sorted(src.rglob("*.csv")):
        low = path.name.lower()
        if "quer" not in low or len(path.relative_to(src).parts) > 2:
            continue
        split = split_of(path, src)
        candidates = [
            p
            for p in sorted(path.parent.glob("*.csv"))
            if "qrel" in p.name.lower() and split_of(p, src) == split
        ]
        found.append((split, path, candidates[0] if candidates else None))
    return found


def _reproject(table: pd.DataFrame, split: spatial_checks.ZoneSplit) -> pd.DataFrame:
    lat, lon = spatial_checks.convert_split(
        table["x"].to_numpy(np.float64), table["y"].to_numpy(np.float64), split
    )
    return table.assign(lat=lat, lon=lon)


def import_list(
    root: str | Path,
    out: str | Path,
    *,
    crs: str,
    name: str | None = None,
    baselines: bool = False,
) -> ImportResult:
    """Import LIST CSVs (see the module docstring).

    Raises:
        InputError: no ``poi.csv``, a query file without qrels, a bad row (file and line named),
            ``out`` inside the input.
    """
    src = _root(root)
    target = check_out(out, [src])
    poi_file = _poi_file(src, "poi.csv", "LIST layout: poi.csv, query.csv, qrels.csv")
    pois = _some_pois(poi_file, spatial.load_list_pois(poi_file, crs))
    parts = []
    for split, qfile, rfile in _list_files(src):
        if rfile is None:
            raise InputError(qfile, None, "no qrels*.csv beside this query file")
        queries = _some_queries(qfile, spatial.load_list_queries(qfile, crs))
        parts.append((split, queries, spatial.load_list_qrels(rfile)))
    notes: list[str] = []
    x = np.concatenate(
        [pois["x"].to_numpy(np.float64)] + [q["x"].to_numpy(np.float64) for _, q, _ in parts]
    )
    y = np.concatenate(
        [pois["y"].to_numpy(np.float64)] + [q["y"].to_numpy(np.float64) for _, q, _ in parts]
    )
    zones = spatial_checks.utm_zone_split(x, y, crs)
    if zones is not None:
        n_low = int((x < spatial_checks.LOW_EDGE_M).sum())
        notes.append(
            f"{poi_file}: the coordinates were projected with a UTM zone per point (LIST's "
            f"preprocessing): {n_low} of {len(x)} points have eastings of {zones.low_crs}, the "
            f"others of {zones.high_crs}; read with {crs} alone the two groups lie "
            f"{zones.apart_km:,.0f} km apart. Converted each group with its own zone"
        )
        pois = _reproject(pois, zones)
        parts = [(s, _reproject(q, zones), r) for s, q, r in parts]
    job = _Import("list", src, target, name)
    return _finish(job, pois, parts, baselines=baselines, source_crs=crs, notes=notes)


def _detect_geobloom(folder: Path) -> float:
    """0.9 for ``poi.txt`` beside a ``train``/``dev``/``test.txt`` query file."""
    names = file_names(folder)
    return 0.9 if "poi.txt" in names and names & {"train.txt", "dev.txt", "test.txt"} else 0.0


def _detect_list(folder: Path) -> float:
    """0.9 for a ``poi.csv`` whose coordinates are LIST's projected ``coor`` column."""
    if "poi.csv" not in file_names(folder):
        return 0.0
    try:
        return 0.9 if spatial.detect_spatial_format(folder / "poi.csv") == "list" else 0.0
    except InputError:
        return 0.0


def _detect_geoglue(folder: Path) -> float:
    """0.5 (a guess from names) for a ``*poi*`` JSON/JSONL/CSV file beside query files."""
    names = file_names(folder)
    pois = [n for n in names if "poi" in n.lower() and n.lower().endswith((".json", ".jsonl",
                                                                           ".csv"))]  # fmt: skip
    return 0.5 if pois and len(names) > 1 else 0.0


_CRS_HELP = "the dataset's one projected CRS: EPSG:2385 (GeoGLUE-clean), EPSG:32650 …"

IMPORTERS = (
    Importer(
        "geobloom",
        "GeoBloom text files poi.txt, train/dev/test.txt (projected X, Y)",
        import_geobloom,
        _detect_geobloom,
        crs="required",
        crs_default="EPSG:2385",
        crs_help=_CRS_HELP,
        baselines=True,
        arguments=(
            Argument(
                "--easting-first",
                "X is the easting (default: the CRS's own axis order; EPSG:2385: northing)",
                kind="flag",
            ),
        ),
    ),
    Importer(
        "geoglue",
        "GeoGLUE JSON with gis, or WGS84 CSVs with gold_poi_ids",
        import_geoglue,
        _detect_geoglue,
        baselines=True,
    ),
    Importer(
        "list",
        "LIST poi.csv, query.csv, qrels.csv (projected coor)",
        import_list,
        _detect_list,
        crs="required",
        crs_default="EPSG:32650",
        crs_help=_CRS_HELP,
        baselines=True,
    ),
)
