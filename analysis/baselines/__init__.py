"""Layer 2 — baseline retrievers (BM25, character n-gram TF-IDF, KB propagation, BM25 + distance
fusion) that give an imported dataset runs to compare from the first minute, and make the demo's
runs. May import :mod:`analysis.core` and :mod:`analysis.geo`.

==============  ============================================================================
``tokens``      normalization, words, CJK unigrams + bigrams, character n-grams, vocabulary
``ranking``     top-k per query (exact ties by corpus order), run frames, query chunks
``text``        :class:`BM25`, :class:`CharNgramTfidf`
``kb``          :class:`RelationAwareRetriever` (BM25 + a walk along knowledge-base edges)
``spatial``     :class:`SpatialFusion` (BM25 + distance, LIST's baseline), :func:`haversine_m`
==============  ============================================================================

Every ``search`` returns a run ``query_id, doc_id, score, rank`` (top ``k`` per query, scores
rounded to 6 decimals before ranking, equal scores in corpus order)::

    from analysis.baselines import BM25
    run = BM25().fit(doc_ids, doc_texts).search(query_texts, k=100, query_ids=query_ids)
"""

from __future__ import annotations

from analysis.baselines.kb import RelationAwareRetriever
from analysis.baselines.spatial import EARTH_RADIUS_M, SpatialFusion, haversine_m
from analysis.baselines.text import BM25, CharNgramTfidf
from analysis.baselines.tokens import ENGLISH_STOPWORDS, char_ngrams, tokenize, words

__all__ = [
    "BM25",
    "EARTH_RADIUS_M",
    "ENGLISH_STOPWORDS",
    "CharNgramTfidf",
    "RelationAwareRetriever",
    "SpatialFusion",
    "char_ngrams",
    "haversine_m",
    "tokenize",
    "words",
]
