"""Layer 2 — baseline retrievers (BM25, character n-gram TF-IDF, KB propagation, BM25 + distance
fusion) that give an imported dataset runs to compare from the first minute, and make the demo's
runs. May import :mod:`analysis.core` and :mod:`analysis.geo`.
"""
