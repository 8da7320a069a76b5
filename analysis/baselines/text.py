"""Lexical baselines: Okapi BM25 and character n-gram TF-IDF, vectorized with scipy.sparse.

The query-term matrix times the document-term matrix gives a block of scores for a chunk of
queries at once (:mod:`analysis.baselines.ranking` turns blocks into runs).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np
import scipy.sparse as sp

from analysis.baselines.ranking import (
    FloatArray,
    TextRetriever,
    check_texts,
    fitted_doc_ids,
)
from analysis.baselines.tokens import (
    ENGLISH_STOPWORDS,
    Vocabulary,
    char_ngrams,
    tokenize,
    words,
)

__all__ = ["BM25", "CharNgramTfidf"]


class BM25(TextRetriever):
    """Okapi BM25 with Lucene's idf, vectorized with scipy.sparse.

    For query ``q`` and document ``d``::

        score(q, d) = sum_t  qtf(t) * idf(t) * tf(t,d) * (k1 + 1)
                                      / (tf(t,d) + k1 * (1 - b + b * |d| / avgdl))
        idf(t)      = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))

    ``tf`` is the term count in the document, ``qtf`` the count in the query, ``|d|`` the document
    length in terms, ``avgdl`` the mean length, ``N`` the number of documents and ``df`` the number
    of documents containing ``t``. Defaults ``k1 = 0.9, b = 0.4`` are Anserini's. Terms come from
    :func:`tokenize` with :data:`ENGLISH_STOPWORDS` removed. Query terms absent from the corpus
    contribute nothing.
    """

    name = "bm25"

    def __init__(
        self, k1: float = 0.9, b: float = 0.4, stopwords: frozenset[str] = ENGLISH_STOPWORDS
    ) -> None:
        if not (math.isfinite(k1) and k1 >= 0) or not 0 <= b <= 1:
            raise ValueError(f"BM25 needs a finite k1 >= 0 and 0 <= b <= 1, got k1={k1}, b={b}")
        self.k1, self.b, self.stopwords = k1, b, stopwords
        self.doc_ids: list[str] = []

    def _tokens(self, texts: Iterable[str]) -> list[list[str]]:
        return [tokenize(t, self.stopwords) for t in texts]

    def fit(self, doc_ids: Sequence[str], texts: Sequence[str]) -> BM25:
        """Index documents ``texts`` (one per id in ``doc_ids``, ids unique); returns ``self``."""
        self.doc_ids = fitted_doc_ids(doc_ids, texts)
        check_texts(texts, self.doc_ids, "document")
        toks = self._tokens(texts)
        self.vocab = Vocabulary(t for ts in toks for t in ts)
        tf = self.vocab.counts(toks)
        n = tf.shape[0]
        dl = np.asarray(tf.sum(axis=1)).ravel()
        avgdl = dl.mean() if n and dl.mean() > 0 else 1.0
        df = np.bincount(tf.indices, minlength=len(self.vocab))
        self.idf = np.log1p((n - df + 0.5) / (df + 0.5))
        norm = self.k1 * (1 - self.b + self.b * dl / avgdl)
        row_norm = np.repeat(norm, np.diff(tf.indptr))
        w = tf.copy()
        w.data = self.idf[w.indices] * w.data * (self.k1 + 1) / (w.data + row_norm)
        self._weights_t = w.T.tocsr()  # terms x docs
        return self

    def query_matrix(self, query_texts: Sequence[str]) -> sp.csr_matrix:
        """Query-term count matrix ``Q[i, t] = qtf(t)`` over the fitted vocabulary."""
        return self.vocab.counts(self._tokens(query_texts))

    def score_block(self, query_texts: Sequence[str]) -> FloatArray:
        """Dense BM25 scores ``(n_queries, n_docs)``."""
        return (self.query_matrix(query_texts) @ self._weights_t).toarray()


# ----------------------------------------------------------------------------------------------
# Character n-gram TF-IDF
# ----------------------------------------------------------------------------------------------
class CharNgramTfidf(TextRetriever):
    """Cosine similarity of sublinear TF-IDF vectors over character n-grams.

    Features are the :func:`char_ngrams` of every word (n = 3..5 for padded Latin words, 1..3 for
    CJK runs), so "backpacks" still matches "backpack" and "caribiner" matches "carabiner"::

        w(g, x) = (1 + ln count(g, x)) * idf(g)          for count(g, x) > 0
        idf(g)  = ln((1 + N) / (1 + df(g))) + 1          (scikit-learn's smoothed idf)
        score(q, d) = w(., q) . w(., d) / (||w(., q)|| * ||w(., d)||)     in [0, 1]

    Stop words are kept (n-grams of function words get a low idf anyway). Counts are built as
    ``X = C @ G`` with ``C`` the item-word count matrix and ``G`` the word-n-gram matrix, so each
    distinct word is cut into n-grams once.
    """

    name = "char-ngram-tfidf"

    def __init__(
        self, ngram_range: tuple[int, int] = (3, 5), cjk_ngram_range: tuple[int, int] = (1, 3)
    ) -> None:
        for name, (lo, hi) in (("ngram_range", ngram_range), ("cjk_ngram_range", cjk_ngram_range)):
            ints = all(
                isinstance(n, int | np.integer) and not isinstance(n, bool) for n in (lo, hi)
            )
            if not ints or not 1 <= lo <= hi:
                # n = 0 makes an empty n-gram every text shares; lo > hi makes none
                raise ValueError(f"{name} must be integers 1 <= lo <= hi, got {(lo, hi)}")
        self.ngram_range, self.cjk_ngram_range = ngram_range, cjk_ngram_range
        self.doc_ids: list[str] = []

    def _ngram_counts(self, texts: Sequence[str], fit: bool) -> sp.csr_matrix:
        word_lists = [words(t) for t in texts]
        word_vocab = Vocabulary(w for ws in word_lists for w in ws)
        grams = [char_ngrams(w, self.ngram_range, self.cjk_ngram_range) for w in word_vocab.terms]
        if fit:
            self.vocab = Vocabulary(g for gs in grams for g in gs)
        word_grams = self.vocab.counts(grams)
        return (word_vocab.counts(word_lists) @ word_grams).tocsr()

    def _weigh(self, counts: sp.csr_matrix) -> sp.csr_matrix:
        w = counts.copy()
        w.data = (1.0 + np.log(w.data)) * self.idf[w.indices]
        norms = np.sqrt(np.asarray(w.multiply(w).sum(axis=1)).ravel())
        w.data /= np.repeat(np.where(norms > 0, norms, 1.0), np.diff(w.indptr))
        return w

    def fit(self, doc_ids: Sequence[str], texts: Sequence[str]) -> CharNgramTfidf:
        """Index documents (one text per id in ``doc_ids``, ids unique); returns ``self``."""
        self.doc_ids = fitted_doc_ids(doc_ids, texts)
        check_texts(texts, self.doc_ids, "document")
        counts = self._ngram_counts(texts, fit=True)
        n = counts.shape[0]
        df = np.bincount(counts.indices, minlength=len(self.vocab))
        self.idf = np.log((1 + n) / (1 + df)) + 1.0
        self._docs_t = self._weigh(counts).T.tocsr()
        return self

    def score_block(self, query_texts: Sequence[str]) -> FloatArray:
        """Dense cosine scores ``(n_queries, n_docs)``."""
        q = self._weigh(self._ngram_counts(query_texts, fit=False))
        return (q @ self._docs_t).toarray()
