"""The demo's seeded model group: a small "dense" retriever trained with several seeds.

:class:`SeededDense` embeds texts as their character n-gram TF-IDF vectors
(:class:`analysis.baselines.CharNgramTfidf`'s weights) projected to ``dim`` dimensions by a
Gaussian random matrix drawn from the seed (a random-projection embedding), quantized to
integers in [-127, 127] as int8 embeddings are, and scores documents by the cosine of the
quantized vectors. The seed changes the projection as a training seed changes a dense
retriever's weights: every seed is a real retrieval over the same documents, slightly better on
some queries and worse on others, with means a point or two apart.

Reproducibility: the quantized vectors hold small integers, so their dot products are exact in
float64 whatever order a BLAS library sums them in; scores are rounded before ranking as for
every baseline (:mod:`analysis.baselines.ranking`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from analysis.baselines import CharNgramTfidf
from analysis.baselines.ranking import rank_blocks, resolve_query_ids, run_frame

SEEDS = (1, 2, 3)
DIM = 128
GROUP = "dense"
DATASET = "stark-prime"
#: Illustrative query latencies of the demo's models in milliseconds (constants, not measured:
#: a measured time would change the demo's bytes at every regeneration).
LATENCY_MS = {
    "bm25": 1.8,
    "char-ngram-tfidf": 6.5,
    "bm25-kb-propagation": 14.0,
    "bm25-distance-fusion": 3.2,
    "dense-s1": 8.6,
    "dense-s2": 9.1,
    "dense-s3": 8.8,
}


def member(seed: int) -> str:
    """The model name of one seed's run."""
    return f"{GROUP}-s{seed}"


class SeededDense:
    """Random-projection embeddings of character n-gram TF-IDF vectors (module docstring)."""

    def __init__(self, seed: int, dim: int = DIM) -> None:
        self.seed, self.dim = seed, dim
        self.tfidf = CharNgramTfidf()
        self.doc_ids: list[str] = []

    def _embed(self, texts: Sequence[str], fit: bool) -> np.ndarray:
        weighted = self.tfidf._weigh(self.tfidf._ngram_counts(texts, fit=fit))
        projected = np.asarray(weighted @ self.projection)
        scale = np.abs(projected).max(axis=1, keepdims=True)
        return np.round(127.0 * np.divide(projected, scale, out=projected, where=scale > 0))

    def fit(self, doc_ids: Sequence[str], texts: Sequence[str]) -> SeededDense:
        """Index documents; returns ``self``."""
        self.tfidf.fit(doc_ids, texts)
        rng = np.random.default_rng([self.seed, 2024])
        self.projection = rng.standard_normal((len(self.tfidf.vocab), self.dim))
        self.doc_ids = [str(d) for d in doc_ids]
        docs = self._embed(texts, fit=False)
        norms = np.sqrt((docs * docs).sum(axis=1))
        self._docs = docs.T
        self._norms = np.where(norms > 0, norms, 1.0)
        return self

    @property
    def index_mb(self) -> float:
        """Size of the int8 document embeddings in MiB (one byte per dimension)."""
        return round(len(self.doc_ids) * self.dim / 2**20, 4)

    def search(self, texts: Sequence[str], k: int, query_ids: Sequence[str]) -> pd.DataFrame:
        """Top-``k`` documents per query by cosine: ``query_id, doc_id, score, rank``."""
        qids = resolve_query_ids(texts, query_ids)

        def block(rows: slice) -> np.ndarray:
            q = self._embed(list(texts[rows]), fit=False)
            q_norms = np.sqrt((q * q).sum(axis=1))
            q_norms = np.where(q_norms > 0, q_norms, 1.0)
            return (q @ self._docs) / q_norms[:, None] / self._norms[None, :]

        hits = rank_blocks(len(texts), len(self.doc_ids), block, k, 6, True)
        return run_frame(qids, self.doc_ids, hits)
