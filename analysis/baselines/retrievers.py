"""Small, real retrievers: BM25, character n-gram TF-IDF, KB propagation and BM25-distance fusion.

They produce the demo bundle's runs (:mod:`demo.generate`) and can rank any corpus of entity texts.
Every retriever is vectorized over all queries with :mod:`scipy.sparse`: the query-term matrix
times the document-term matrix gives a block of scores for a chunk of queries at once; only the
top-k extraction walks the rows of a chunk (``np.argpartition`` first, then an exact sort of the
few candidates).

Output of every ``search``: a DataFrame ``query_id, doc_id, score, rank`` (strings, strings,
float64, int64), the top ``k`` documents per query sorted by score descending, ``rank`` 1-based,
queries in input order. Reproducibility rules (the demo bundle must be byte-identical on every
machine):

* scores are rounded to ``decimals`` places (default 6) *before* ranking, so a last-bit
  difference in ``log``/``sin`` between CPUs cannot reorder documents;
* equal rounded scores are ordered by document position in the fitted corpus (first fitted
  first). These are genuine ties: the evaluation's tie policy decides their order later;
* lexical retrievers return only documents with a score above 0 (a query that matches nothing
  has an empty ranking), like Lucene/Pyserini.

Text is tokenized by :func:`tokenize`: NFKC-normalized, lower-cased; Latin/Cyrillic/... words are
runs of letters and digits; a run of CJK ideographs yields its characters and its character
bigrams (the usual choice for Chinese without a segmenter, e.g. Lucene's CJK analyzer produces the
bigrams). English stop words are dropped by BM25 and the entity linker.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final

import numpy as np
import numpy.typing as npt
import pandas as pd
import scipy.sparse as sp

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

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

EARTH_RADIUS_M: Final = 6_371_008.8
"""Mean Earth radius (IUGG R1) in metres, the sphere used by :func:`haversine_m`."""

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002a6df"
_WORD_RE: Final = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+")
_CJK_RE: Final = re.compile(rf"[{_CJK}]")

ENGLISH_STOPWORDS: Final = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "been",
        "being",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "no",
        "nor",
        "not",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "out",
        "over",
        "own",
        "please",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
    ]
)
"""A short English stop-word list (function words only; domain words such as "paper" stay)."""


# ----------------------------------------------------------------------------------------------
# Text processing
# ----------------------------------------------------------------------------------------------
def _normalize(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def words(text: str) -> list[str]:
    """Split text into words: runs of letters/digits, with each run of CJK ideographs one word.

    ``"中国银行ATM (24h)"`` gives ``["中国银行", "atm", "24h"]``. Input is NFKC-normalized and
    lower-cased first (full-width ``ＡＴＭ`` becomes ``atm``).
    """
    return _WORD_RE.findall(_normalize(text))


def tokenize(text: str, stopwords: frozenset[str] = frozenset()) -> list[str]:
    """Index terms of a text: :func:`words`, with CJK runs expanded to unigrams + bigrams.

    A CJK run ``c1 c2 ... cn`` yields ``c1, ..., cn, c1c2, c2c3, ..., c(n-1)cn``; other words are
    kept whole unless they are in ``stopwords``. ``tokenize("杭州西湖 Hotel")`` is
    ``["杭", "州", "西", "湖", "杭州", "州西", "西湖", "hotel"]``.
    """
    out: list[str] = []
    for w in words(text):
        if _CJK_RE.match(w):
            out.extend(w)
            out.extend(w[i : i + 2] for i in range(len(w) - 1))
        elif w not in stopwords:
            out.append(w)
    return out


def char_ngrams(
    word: str, ngram_range: tuple[int, int] = (3, 5), cjk_ngram_range: tuple[int, int] = (1, 3)
) -> list[str]:
    """Character n-grams of one word (as produced by :func:`words`).

    A Latin word is padded with one space on each side (``" hiking "``) and cut into n-grams for
    ``n`` in ``ngram_range`` (scikit-learn's ``char_wb`` analyzer); a word shorter than the
    smallest ``n`` after padding yields itself padded. A CJK run is not padded and uses
    ``cjk_ngram_range`` (a Chinese character carries about as much as a Latin trigram).
    """
    if _CJK_RE.match(word):
        s, (lo, hi) = word, cjk_ngram_range
    else:
        s, (lo, hi) = f" {word} ", ngram_range
    if len(s) < lo:
        return [s]
    return [s[i : i + n] for n in range(lo, hi + 1) for i in range(len(s) - n + 1)]


class _Vocabulary:
    """Sorted term vocabulary and the count matrix ``X[i, t] = count of term t in item i``."""

    def __init__(self, terms: Iterable[str]) -> None:
        self.terms: list[str] = sorted(set(terms))
        self.index: dict[str, int] = {t: i for i, t in enumerate(self.terms)}

    def __len__(self) -> int:
        return len(self.terms)

    def counts(self, term_lists: Sequence[Sequence[str]]) -> sp.csr_matrix:
        """Count matrix (rows = items, columns = vocabulary); unknown terms are dropped."""
        index = self.index
        indptr = np.zeros(len(term_lists) + 1, dtype=np.int64)
        indices: list[int] = []
        for i, terms in enumerate(term_lists):
            indices.extend(index[t] for t in terms if t in index)
            indptr[i + 1] = len(indices)
        m = sp.csr_matrix(
            (np.ones(len(indices)), np.asarray(indices, dtype=np.int64), indptr),
            shape=(len(term_lists), len(self)),
        )
        m.sum_duplicates()  # merges repeated terms and sorts the indices (deterministic sums)
        return m


# ----------------------------------------------------------------------------------------------
# Top-k kernel and run frames
# ----------------------------------------------------------------------------------------------
def _top_k(scores: FloatArray, k: int, positive_only: bool) -> list[tuple[IntArray, FloatArray]]:
    """Per row, the ``k`` best columns by score descending, then by column ascending.

    ``argpartition`` finds the k-th largest value of each row; every column scoring at least that
    value is a candidate, and the candidates are sorted exactly, so ties at the cut are resolved by
    column order rather than by ``argpartition``'s arbitrary choice.
    """
    n_rows, n_cols = scores.shape
    kk = min(k, n_cols)
    out: list[tuple[IntArray, FloatArray]] = []
    if kk == 0:
        return [(np.empty(0, np.int64), np.empty(0)) for _ in range(n_rows)]
    part = np.argpartition(-scores, kk - 1, axis=1)[:, kk - 1 : kk]
    kth = np.take_along_axis(scores, part, axis=1)[:, 0]
    for i in range(n_rows):
        row = scores[i]
        cand = np.flatnonzero(row >= kth[i])
        if positive_only:
            cand = cand[row[cand] > 0]
        order = np.lexsort((cand, -row[cand]))[:kk]
        sel = cand[order]
        out.append((sel.astype(np.int64), row[sel]))
    return out


def _run_frame(
    query_ids: Sequence[str], doc_ids: Sequence[str], hits: list[tuple[IntArray, FloatArray]]
) -> pd.DataFrame:
    """Assemble ``query_id, doc_id, score, rank`` from per-query (doc index, score) arrays."""
    sizes = np.fromiter((len(ix) for ix, _ in hits), dtype=np.int64, count=len(hits))
    doc_arr = np.asarray(doc_ids, dtype=object)
    if sizes.sum() == 0:
        idx, scores = np.empty(0, np.int64), np.empty(0)
    else:
        idx = np.concatenate([ix for ix, _ in hits])
        scores = np.concatenate([sc for _, sc in hits])
    starts = np.repeat(np.cumsum(sizes) - sizes, sizes)
    return pd.DataFrame(
        {
            "query_id": pd.array(np.repeat(np.asarray(query_ids, dtype=object), sizes), "str"),
            "doc_id": pd.array(doc_arr[idx], dtype="str"),
            "score": scores.astype(np.float64),
            "rank": np.arange(len(idx), dtype=np.int64) - starts + 1,
        }
    )


def _query_ids(
    query_texts: Sequence[str] | pd.Series, query_ids: Sequence[str] | None
) -> list[str]:
    if query_ids is not None:
        ids = [str(q) for q in query_ids]
        if len(ids) != len(query_texts):
            raise ValueError(f"{len(ids)} query ids for {len(query_texts)} query texts")
        return ids
    if isinstance(query_texts, pd.Series):
        return [str(q) for q in query_texts.index]
    return [str(i) for i in range(len(query_texts))]


def _chunks(n: int, n_cols: int, cells: int = 4_000_000) -> Iterable[slice]:
    step = max(1, cells // max(n_cols, 1))
    for start in range(0, n, step):
        yield slice(start, min(n, start + step))


def _rank_blocks(
    n_queries: int,
    n_docs: int,
    block: Callable[[slice], FloatArray],
    k: int,
    decimals: int | None,
    positive_only: bool,
) -> list[tuple[IntArray, FloatArray]]:
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    hits: list[tuple[IntArray, FloatArray]] = []
    for sl in _chunks(n_queries, n_docs):
        scores = block(sl)
        if decimals is not None:
            scores = np.round(scores, decimals) + 0.0  # + 0.0 turns -0.0 into 0.0
        hits.extend(_top_k(scores, k, positive_only))
    return hits


def _max_normalize(m: FloatArray) -> FloatArray:
    """Divide each row by its maximum (rows whose maximum is <= 0 become 0)."""
    mx = m.max(axis=1, keepdims=True) if m.shape[1] else np.zeros((m.shape[0], 1))
    return np.divide(m, mx, out=np.zeros_like(m), where=mx > 0)


def _minmax(m: FloatArray) -> FloatArray:
    """Per-row min-max normalization ``(x - min) / (max - min)``; constant rows become 0."""
    lo = m.min(axis=1, keepdims=True)
    span = m.max(axis=1, keepdims=True) - lo
    return np.divide(m - lo, span, out=np.zeros_like(m), where=span > 0)


# ----------------------------------------------------------------------------------------------
# BM25
# ----------------------------------------------------------------------------------------------
class _TextRetriever:
    """Shared ``search`` of the text retrievers: top-``k`` per query from ``score_block``."""

    doc_ids: list[str]

    def score_block(self, query_texts: Sequence[str]) -> FloatArray:
        raise NotImplementedError

    def search(
        self,
        query_texts: Sequence[str] | pd.Series,
        k: int = 100,
        query_ids: Sequence[str] | None = None,
        decimals: int | None = 6,
    ) -> pd.DataFrame:
        """Top-``k`` documents per query: ``query_id, doc_id, score, rank``.

        ``query_ids`` defaults to the Series index, else to positions ``"0", "1", ...``. Only
        documents with a positive score are returned.
        """
        qids = _query_ids(query_texts, query_ids)
        texts = list(query_texts)
        hits = _rank_blocks(
            len(texts), len(self.doc_ids), lambda sl: self.score_block(texts[sl]), k, decimals, True
        )
        return _run_frame(qids, self.doc_ids, hits)


class BM25(_TextRetriever):
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
        if k1 < 0 or not 0 <= b <= 1:
            raise ValueError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={k1}, b={b}")
        self.k1, self.b, self.stopwords = k1, b, stopwords
        self.doc_ids: list[str] = []

    def _tokens(self, texts: Iterable[str]) -> list[list[str]]:
        return [tokenize(t, self.stopwords) for t in texts]

    def fit(self, doc_ids: Sequence[str], texts: Sequence[str]) -> BM25:
        """Index documents ``texts`` (one per id in ``doc_ids``); returns ``self``."""
        if len(doc_ids) != len(texts):
            raise ValueError(f"{len(doc_ids)} document ids for {len(texts)} texts")
        self.doc_ids = [str(d) for d in doc_ids]
        toks = self._tokens(texts)
        self.vocab = _Vocabulary(t for ts in toks for t in ts)
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
class CharNgramTfidf(_TextRetriever):
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
        self.ngram_range, self.cjk_ngram_range = ngram_range, cjk_ngram_range
        self.doc_ids: list[str] = []

    def _ngram_counts(self, texts: Sequence[str], fit: bool) -> sp.csr_matrix:
        word_lists = [words(t) for t in texts]
        word_vocab = _Vocabulary(w for ws in word_lists for w in ws)
        grams = [char_ngrams(w, self.ngram_range, self.cjk_ngram_range) for w in word_vocab.terms]
        if fit:
            self.vocab = _Vocabulary(g for gs in grams for g in gs)
        word_grams = self.vocab.counts(grams)
        return (word_vocab.counts(word_lists) @ word_grams).tocsr()

    def _weigh(self, counts: sp.csr_matrix) -> sp.csr_matrix:
        w = counts.copy()
        w.data = (1.0 + np.log(w.data)) * self.idf[w.indices]
        norms = np.sqrt(np.asarray(w.multiply(w).sum(axis=1)).ravel())
        w.data /= np.repeat(np.where(norms > 0, norms, 1.0), np.diff(w.indptr))
        return w

    def fit(self, doc_ids: Sequence[str], texts: Sequence[str]) -> CharNgramTfidf:
        """Index documents; returns ``self``."""
        if len(doc_ids) != len(texts):
            raise ValueError(f"{len(doc_ids)} document ids for {len(texts)} texts")
        self.doc_ids = [str(d) for d in doc_ids]
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


# ----------------------------------------------------------------------------------------------
# Relation-aware retrieval over a knowledge base (STaRK)
# ----------------------------------------------------------------------------------------------
class RelationAwareRetriever(_TextRetriever):
    """BM25 on candidate texts fused with a walk along knowledge-base edges from linked entities.

    1. **Entity linking.** Every KB entity's name is a bag of terms. The *coverage* of entity
       ``e`` by query ``q`` is the idf mass of the name's terms that occur in the query::

           cov(q, e) = sum_{t in name(e), t in q} idf(t) / sum_{t in name(e)} idf(t)

       (idf as in :class:`BM25`, over names). Entities with ``cov >= min_coverage`` whose name
       carries at least ``min_name_idf`` are seeds; the ``max_seeds`` best (coverage, then idf
       mass) are kept, weighted ``s(e) = cov * idf mass``, normalized to sum 1.
    2. **Relations.** A query activates the relations its terms trigger (``relation_triggers``:
       term -> relations, e.g. ``"referenced" -> ["cites"]``); a query that triggers none uses
       every relation. Edges are walked in both directions.
    3. **Walk.** With ``P`` the row-normalized adjacency of the active relations (a random-walk
       step), ``h1 = s P`` and ``h2 = h1 P``; the graph score is ``g = h1 + gamma * h2``.
    4. **Fusion** over candidate documents (entities of ``candidate_types``), seeds excluded (an
       entity the query names is context, not the answer)::

           score(q, d) = (1 - lam) * bm25(q, d) / max_d' bm25(q, d') + lam * g(d) / max_d' g(d')

    A query without seeds is ranked by BM25 alone (same order as :class:`BM25`). Documents with a
    score of 0 are not returned. Documents reached by the walk but without text overlap share the
    graph score of their neighbours, so this retriever produces genuine ties.
    """

    name = "bm25-kb-propagation"

    def __init__(
        self,
        lam: float = 0.5,
        gamma: float = 0.5,
        min_coverage: float = 0.8,
        min_name_idf: float = 4.0,
        max_seeds: int = 5,
        relation_triggers: Mapping[str, Sequence[str]] | None = None,
        k1: float = 0.9,
        b: float = 0.4,
    ) -> None:
        if not 0 <= lam <= 1:
            raise ValueError(f"lam must be in [0, 1], got {lam}")
        self.lam, self.gamma = lam, gamma
        self.min_coverage, self.min_name_idf, self.max_seeds = min_coverage, min_name_idf, max_seeds
        self.relation_triggers = {
            _normalize(t): tuple(rs) for t, rs in (relation_triggers or {}).items()
        }
        self.k1, self.b = k1, b

    def fit(
        self,
        entities: pd.DataFrame,
        edges: pd.DataFrame,
        candidate_types: Sequence[str] | None = None,
    ) -> RelationAwareRetriever:
        """Index ``entities`` (``doc_id, name, text, type``) and ``edges`` (``src_id, relation,
        dst_id``). Candidates are the entities whose ``type`` is in ``candidate_types`` (all when
        None). Edges naming unknown entities are an error."""
        ids = entities["doc_id"].astype(str).tolist()
        pos = pd.Series(np.arange(len(ids)), index=pd.Index(ids, dtype="str"))
        if not pos.index.is_unique:
            raise ValueError("entity doc_id values must be unique")
        types = entities["type"].astype(str).to_numpy()
        cand = (
            np.ones(len(ids), bool) if candidate_types is None else np.isin(types, candidate_types)
        )
        self.cand_idx = np.flatnonzero(cand)
        self.doc_ids = [ids[i] for i in self.cand_idx]
        self.text = BM25(self.k1, self.b).fit(
            self.doc_ids, entities["text"].to_numpy()[cand].tolist()
        )

        # entity linker over names: binary query terms against idf-weighted name terms
        names = BM25(self.k1, self.b).fit(ids, entities["name"].astype(str).tolist())
        self.names = names
        name_terms = names.vocab.counts(names._tokens(entities["name"].astype(str).tolist()))
        name_terms.data[:] = 1.0
        self._name_idf_t = name_terms.multiply(names.idf[None, :]).T.tocsr()  # terms x entities
        self._name_mass = np.asarray(name_terms @ names.idf).ravel()

        src = pos.reindex(edges["src_id"].astype(str)).to_numpy()
        dst = pos.reindex(edges["dst_id"].astype(str)).to_numpy()
        if np.isnan(src.astype(float)).any() or np.isnan(dst.astype(float)).any():
            raise ValueError("edges refer to doc_id values that are not in the entities table")
        rel = edges["relation"].astype(str).to_numpy()
        self.relations = sorted(set(rel.tolist()))
        n = len(ids)
        self._adjacency: dict[str, sp.csr_matrix] = {}
        for r in self.relations:
            m = rel == r
            a = sp.csr_matrix(
                (np.ones(int(m.sum())), (src[m].astype(np.int64), dst[m].astype(np.int64))),
                shape=(n, n),
            )
            self._adjacency[r] = ((a + a.T) > 0).astype(np.float64).tocsr()
        self._walk_cache: dict[tuple[str, ...], sp.csr_matrix] = {}
        self._is_cand = cand
        return self

    def _walk_matrix(self, relations: tuple[str, ...]) -> sp.csr_matrix:
        if relations not in self._walk_cache:
            a = sum((self._adjacency[r] for r in relations), sp.csr_matrix(self._shape()))
            deg = np.asarray(a.sum(axis=1)).ravel()
            inv = np.divide(1.0, deg, out=np.zeros_like(deg), where=deg > 0)
            self._walk_cache[relations] = sp.diags(inv) @ a
        return self._walk_cache[relations]

    def _shape(self) -> tuple[int, int]:
        n = len(self._is_cand)
        return (n, n)

    def active_relations(self, query_text: str) -> tuple[str, ...]:
        """Relations a query activates through its trigger terms (all relations if none)."""
        found = {r for t in words(query_text) for r in self.relation_triggers.get(t, ())}
        found &= set(self.relations)
        return tuple(sorted(found)) if found else tuple(self.relations)

    def seeds(self, query_texts: Sequence[str]) -> sp.csr_matrix:
        """Seed weights ``S`` (queries x entities), rows summing to 1 (or empty)."""
        qbin = self.names.query_matrix(query_texts)
        qbin.data[:] = 1.0
        covered = (qbin @ self._name_idf_t).toarray()
        mass = self._name_mass[None, :]
        cov = np.divide(covered, mass, out=np.zeros_like(covered), where=mass > 0)
        ok = (cov >= self.min_coverage) & (mass >= self.min_name_idf)
        rows, cols, vals = [], [], []
        for i in range(len(query_texts)):
            c = np.flatnonzero(ok[i])
            if not len(c):
                continue
            c = c[np.lexsort((c, -self._name_mass[c], -cov[i, c]))][: self.max_seeds]
            w = cov[i, c] * self._name_mass[c]
            rows.extend([i] * len(c))
            cols.extend(c.tolist())
            vals.extend((w / w.sum()).tolist())
        return sp.csr_matrix((vals, (rows, cols)), shape=(len(query_texts), len(self._is_cand)))

    def score_block(self, query_texts: Sequence[str]) -> FloatArray:
        """Dense fused scores over candidates ``(n_queries, n_candidates)``."""
        text = _max_normalize(self.text.score_block(query_texts))
        s = self.seeds(query_texts)
        graph = np.zeros((len(query_texts), len(self._is_cand)))
        groups: dict[tuple[str, ...], list[int]] = {}
        for i, t in enumerate(query_texts):
            if s.indptr[i + 1] > s.indptr[i]:
                groups.setdefault(self.active_relations(t), []).append(i)
        for rels, rows in groups.items():
            p = self._walk_matrix(rels)
            h1 = s[rows] @ p
            graph[rows] = (h1 + self.gamma * (h1 @ p)).toarray()
        graph[s.nonzero()] = 0.0  # seeds are context, not answers
        graph = _max_normalize(graph[:, self.cand_idx])
        fused = (1 - self.lam) * text + self.lam * graph
        has_seed = np.diff(s.indptr) > 0
        fused[~has_seed] = text[~has_seed]
        seed_cand = s[:, self.cand_idx]
        fused[seed_cand.nonzero()] = 0.0
        return fused


# ----------------------------------------------------------------------------------------------
# Spatial: BM25 + distance fusion (LIST's baseline)
# ----------------------------------------------------------------------------------------------
def haversine_m(
    lat1: npt.ArrayLike, lon1: npt.ArrayLike, lat2: npt.ArrayLike, lon2: npt.ArrayLike
) -> FloatArray:
    """Great-circle distance in metres between WGS84 points (degrees), broadcasting numpy-style::

        d = 2 R asin( sqrt( sin^2((phi2 - phi1) / 2)
                            + cos phi1 cos phi2 sin^2((lambda2 - lambda1) / 2) ) )

    with ``R`` = :data:`EARTH_RADIUS_M`. Pass column vectors and row vectors to get a matrix.
    """
    p1, p2 = np.radians(np.asarray(lat1, float)), np.radians(np.asarray(lat2, float))
    dp = p2 - p1
    dl = np.radians(np.asarray(lon2, float)) - np.radians(np.asarray(lon1, float))
    h = np.sin(dp / 2) ** 2 + np.cos(p1) * np.cos(p2) * np.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_M * np.arcsin(np.sqrt(np.clip(h, 0.0, 1.0)))


class SpatialFusion:
    """LIST's spatio-textual baseline: linear fusion of distance and min-max-normalized BM25::

        score(q, p) = (1 - alpha) * (1 - min(d(q, p), d_max) / d_max)
                      + alpha * (bm25(q, p) - min_p' bm25(q, p')) / (max_p' bm25 - min_p' bm25)

    ``d`` is the haversine distance (:func:`haversine_m`) between the query's and the POI's
    coordinates. ``d_max`` is ``d_max_m`` when given (distances beyond it count as ``d_max``),
    else the largest query-POI distance of that query. A query without any matching term gets
    ``0`` for the text part and is ranked by distance alone. Every POI has a score, so each query
    gets exactly ``k`` results; POIs at the same coordinate with the same text tie exactly.
    """

    name = "bm25-distance-fusion"

    def __init__(
        self, alpha: float = 0.5, d_max_m: float | None = None, k1: float = 0.9, b: float = 0.4
    ) -> None:
        if not 0 <= alpha <= 1:
            raise ValueError(f"alpha must be in [0, 1], got {alpha}")
        if d_max_m is not None and not (math.isfinite(d_max_m) and d_max_m > 0):
            raise ValueError(f"d_max_m must be a positive number of metres, got {d_max_m}")
        self.alpha, self.d_max_m = alpha, d_max_m
        self.bm25 = BM25(k1, b)

    def fit(
        self,
        doc_ids: Sequence[str],
        texts: Sequence[str],
        lat: npt.ArrayLike,
        lon: npt.ArrayLike,
    ) -> SpatialFusion:
        """Index POIs: ids, texts and WGS84 coordinates (degrees)."""
        self.bm25.fit(doc_ids, texts)
        self.doc_ids = self.bm25.doc_ids
        self.lat, self.lon = np.asarray(lat, float), np.asarray(lon, float)
        if self.lat.shape != (len(self.doc_ids),) or self.lon.shape != self.lat.shape:
            raise ValueError("one latitude and one longitude per POI are needed")
        if not (np.isfinite(self.lat).all() and np.isfinite(self.lon).all()):
            raise ValueError("POI coordinates must be finite numbers")
        return self

    def score_block(
        self, query_texts: Sequence[str], lat: FloatArray, lon: FloatArray
    ) -> FloatArray:
        """Dense fused scores ``(n_queries, n_pois)``."""
        text = _minmax(self.bm25.score_block(query_texts))
        d = haversine_m(lat[:, None], lon[:, None], self.lat[None, :], self.lon[None, :])
        d_max = (
            np.full((len(lat), 1), self.d_max_m)
            if self.d_max_m is not None
            else d.max(axis=1, keepdims=True)
        )
        near = 1.0 - np.divide(np.minimum(d, d_max), d_max, out=np.zeros_like(d), where=d_max > 0)
        return (1 - self.alpha) * near + self.alpha * text

    def search(
        self,
        query_texts: Sequence[str] | pd.Series,
        lat: npt.ArrayLike,
        lon: npt.ArrayLike,
        k: int = 100,
        query_ids: Sequence[str] | None = None,
        decimals: int | None = 6,
    ) -> pd.DataFrame:
        """Top-``k`` POIs per query located at ``lat, lon``: ``query_id, doc_id, score, rank``."""
        qids = _query_ids(query_texts, query_ids)
        texts = list(query_texts)
        qlat, qlon = np.asarray(lat, float), np.asarray(lon, float)
        if qlat.shape != (len(texts),) or qlon.shape != qlat.shape:
            raise ValueError("one latitude and one longitude per query are needed")
        if not (np.isfinite(qlat).all() and np.isfinite(qlon).all()):
            raise ValueError("query coordinates must be finite numbers")
        hits = _rank_blocks(
            len(texts),
            len(self.doc_ids),
            lambda sl: self.score_block(texts[sl], qlat[sl], qlon[sl]),
            k,
            decimals,
            False,
        )
        return _run_frame(qids, self.doc_ids, hits)
