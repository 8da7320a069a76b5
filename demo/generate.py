"""The demo bundle: six small datasets shaped like STaRK and LIST/GeoGLUE, with real runs.

``generate_bundle(out_dir)`` writes a bundle (``bundle.toml`` + Parquet tables, format in
``data/README.md``) in a few seconds. Everything is derived from one seed with numpy's PCG64
generator, no set or hash order is ever iterated, scores are rounded before ranking and Parquet is
written with fixed options, so the same seed gives the same bytes on every run and machine.

Datasets (each with >= 300 evaluation queries, ids are strings):

* ``stark-amazon``, ``stark-mag``, ``stark-prime``: a small typed knowledge base per domain
  (products with brand/category/color, features and reviews; papers with authors, institutions,
  fields and citations; diseases, drugs, genes/proteins, pathways, anatomy, GO terms and
  phenotypes) with relation edges. *Synthesized* queries are rendered from relational templates
  (STaRK's construction: pick an anchor entity, combine relational and textual constraints, the
  answers are every entity that satisfies them), so answer-set sizes range from 1 to 100.
  *Human* queries are fewer, shorter and casual, with paraphrases and typos. Columns ``metapath``
  (MoR-style path such as ``"institution -> author -> paper"``) and ``pattern`` (textual, one or
  two relations) are slices.
* ``beijing``, ``shanghai``: POIs scattered around the real districts' centres with Chinese names,
  addresses and categories; a query is a user location plus keywords (a name, a chain brand, a
  category or an address) with 1-5 clicked gold POIs (mean ~1.3; LIST's click logs: 1.4). About
  1.5 % of queries repeat a gold row in qrels, as LIST's test qrels do.
* ``geo-glue``: Hangzhou POIs in GeoGLUE's ``name,大类,中类,小类,address,district`` text style.
  POIs sit in *sites*; every site is shifted by ~1 km in a random direction (GeoGLUE's privacy
  shift) and snapped to a 1e-4 degree grid, so the POIs of one site share an exact coordinate:
  ~20 % of POIs are in such stacks, the largest holds 16. Many stacked POIs are *twins* (the same
  record under another id). Exactly one gold per query; query locations are near the true site
  (so ~1 km from the shifted gold) except for a far tail, as in the real data.

Text is Chinese for the three spatial sets (the real ones are Chinese), English for STaRK. Names
of brands, people, institutions, drugs and genes are invented.

Runs (top 100, every query): ``bm25`` and ``char-ngram-tfidf`` on every dataset;
``bm25-kb-propagation`` (:class:`analysis.baselines.RelationAwareRetriever`) on STaRK and
``bm25-distance-fusion`` (:class:`analysis.baselines.SpatialFusion`) on the spatial sets.
``stark-prime`` also has a seeded model group, ``dense`` = ``dense-s1``, ``dense-s2``,
``dense-s3`` (:mod:`demo.dense`: one random-projection retriever with three seeds). Every run
has ``run_metadata``: ``latency_ms`` (illustrative constants, :data:`demo.dense.LATENCY_MS`)
and, where the index is a matrix, ``index_mb`` (its size in MiB, computed from the fitted
model).

This module orchestrates; the datasets come from :mod:`demo.amazon`, :mod:`demo.mag` and
:mod:`demo.prime` (one knowledge-base builder, :mod:`demo.kb`, and one STaRK dataset builder,
:mod:`demo.stark`) and :mod:`demo.spatial`; files are written by :mod:`demo.write`. Word lists,
query wording and per-domain settings are data: ``demo/vocab/*.toml``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np

from analysis.baselines import BM25, CharNgramTfidf, RelationAwareRetriever, SpatialFusion
from analysis.io.atomic import atomic_folder
from analysis.io.importers._write import check_out
from demo import dense
from demo.amazon import amazon
from demo.common import DATASETS, SPATIAL_METRICS, STARK_METRICS, TOP_K, Dataset, Rng
from demo.mag import mag
from demo.prime import prime
from demo.spatial import geoglue, list_city
from demo.write import manifest, write_parquet

__all__ = ["DATASETS", "SPATIAL_METRICS", "STARK_METRICS", "build_datasets", "generate_bundle"]


# ----------------------------------------------------------------------------------------------
# Runs, writing
# ----------------------------------------------------------------------------------------------
def _run_models(ds: Dataset) -> None:
    """Fit the dataset's retrievers and store their top-100 runs in ``ds.runs``."""
    q = ds.queries
    qids, texts = q["query_id"].tolist(), q["text"].tolist()
    ents = ds.entities
    if ds.candidate_types is not None:
        ents = ents[ents["type"].isin(list(ds.candidate_types))]
    doc_ids, doc_texts = ents["doc_id"].tolist(), ents["text"].tolist()
    bm25 = BM25().fit(doc_ids, doc_texts)
    ds.runs["bm25"] = bm25.search(texts, TOP_K, qids)
    tfidf = CharNgramTfidf().fit(doc_ids, doc_texts)
    ds.runs["char-ngram-tfidf"] = tfidf.search(texts, TOP_K, qids)
    sizes = {"bm25": _sparse_mb(bm25._weights_t), "char-ngram-tfidf": _sparse_mb(tfidf._docs_t)}
    if ds.family == "stark":
        assert ds.edges is not None
        rel = RelationAwareRetriever(relation_triggers=ds.relation_triggers)
        rel.fit(ds.entities, ds.edges, ds.candidate_types)
        ds.runs[rel.name] = rel.search(texts, TOP_K, qids)
    else:
        fus = SpatialFusion(**ds.fusion).fit(
            doc_ids, doc_texts, ents["lat"].to_numpy(), ents["lon"].to_numpy()
        )
        ds.runs[fus.name] = fus.search(texts, q["lat"].to_numpy(), q["lon"].to_numpy(), TOP_K, qids)
    if ds.name == dense.DATASET:
        for seed in dense.SEEDS:
            model = dense.SeededDense(seed).fit(doc_ids, doc_texts)
            ds.runs[dense.member(seed)] = model.search(texts, TOP_K, qids)
            sizes[dense.member(seed)] = model.index_mb
        ds.seed_groups[dense.GROUP] = [dense.member(s) for s in dense.SEEDS]
    for run in ds.runs:
        ds.run_metadata[run] = {"latency_ms": dense.LATENCY_MS[run]}
        if run in sizes:
            ds.run_metadata[run]["index_mb"] = sizes[run]


def _sparse_mb(matrix: object) -> float:
    """Size of a sparse index in MiB: 8 bytes per weight and 4 per column index."""
    return round(int(matrix.nnz) * 12 / 2**20, 4)  # type: ignore[attr-defined]


def build_datasets(seed: int = 0) -> list[Dataset]:
    """Generate the six datasets (tables only, no runs) from ``seed``."""
    makers: list[Callable[[Rng], Dataset]] = [
        amazon,
        mag,
        prime,
        partial(list_city, name="beijing"),
        partial(list_city, name="shanghai"),
        geoglue,
    ]
    return [make(np.random.default_rng([seed, i])) for i, make in enumerate(makers)]


def generate_bundle(out_dir: Path, seed: int = 0) -> None:
    """Generate the demo bundle into ``out_dir`` (replacing a bundle there).

    Writes ``bundle.toml`` and, per dataset, ``queries.parquet``, ``qrels.parquet``,
    ``entities.parquet``, ``edges.parquet`` (STaRK only) and ``runs/<model>.parquet``. The output
    depends on ``seed`` only: the same seed gives byte-identical files. The bundle is built in a
    folder beside ``out_dir`` and swapped in when complete
    (:func:`analysis.io.atomic.atomic_folder`); a non-empty folder without ``bundle.toml`` is
    refused, never replaced.

    Raises:
        InputError: ``out_dir`` is a file, device or non-bundle folder, or cannot be written.
    """
    out_dir = Path(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    check_out(out_dir, [])

    def build(folder: Path) -> None:  # called once the folder beside out_dir is made
        datasets = build_datasets(seed)
        for ds in datasets:
            _run_models(ds)
            _write_dataset(ds, folder / ds.name)
        (folder / "bundle.toml").write_text(
            manifest(datasets, seed), encoding="utf-8", newline="\n"
        )

    atomic_folder(out_dir, build)


def _write_dataset(ds: Dataset, folder: Path) -> None:
    write_parquet(ds.queries, folder / "queries.parquet")
    write_parquet(ds.qrels, folder / "qrels.parquet")
    write_parquet(ds.entities, folder / "entities.parquet")
    if ds.edges is not None:
        write_parquet(ds.edges, folder / "edges.parquet")
    for model, run in ds.runs.items():
        write_parquet(run, folder / "runs" / f"{model}.parquet")
