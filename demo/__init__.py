"""The demo bundle generator (``python -m demo --out data/demo``): six STaRK- and LIST-shaped
datasets with runs of the library's baseline retrievers. Not part of the :mod:`analysis` library.

=================  ===========================================================================
``generate``       :func:`~demo.generate.generate_bundle`: build, run the baselines, write
``common``         the dataset record, seeded sampling and text helpers, queries/qrels tables
``kb``             :class:`~demo.kb.KnowledgeBase`: entities and edges of a STaRK-like domain
``stark``          query templates and wording, the STaRK dataset builder shared by the domains
``amazon``         products, brands, categories, colors (STaRK-Amazon-like)
``mag``            papers, authors, institutions, fields, citations (STaRK-MAG-like)
``prime``          genes, drugs, diseases, phenotypes, GO terms, pathways (STaRK-Prime-like)
``spatial``        Beijing and Shanghai (LIST-like), Hangzhou (GeoGLUE-like)
``write``          deterministic Parquet and the ``bundle.toml`` manifest
``vocab/*.toml``   word lists, query wording and slices, per-domain settings
=================  ===========================================================================
"""
