"""Text processing shared by the baseline retrievers: normalization, words, index terms.

Text is NFKC-normalized and lower-cased; Latin/Cyrillic/... words are runs of letters and digits
with their combining marks (Devanagari vowel signs stay in their word);
a run of CJK ideographs yields its characters and its character bigrams (the usual choice for
Chinese without a segmenter, e.g. Lucene's CJK analyzer produces the bigrams). English stop words
(:data:`ENGLISH_STOPWORDS`) are dropped by BM25 and the entity linker. :class:`Vocabulary` turns
term lists into sparse count matrices over a sorted vocabulary (deterministic column order).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Final

import numpy as np
import scipy.sparse as sp

__all__ = ["ENGLISH_STOPWORDS", "Vocabulary", "char_ngrams", "normalize", "tokenize", "words"]

# CJK ideographs: the ideographic zero (二〇二三), Extension A, the unified block, compatibility
# ideographs, Extensions B to F and I (rare characters of names and places), G and H
_CJK = (
    "\u3007\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    "\U00020000-\U0002a6df\U0002a700-\U0002ee5f\U00030000-\U000323af"
)


def _combining_marks() -> str:
    """Regex class body of the combining marks (categories Mn, Mc, Me) of the Basic Multilingual
    Plane: the vowel signs of Devanagari, Thai, Arabic, ..., and accents without a precomposed
    letter (the dot of Turkish ``İ`` lower-cased). Marks of the other planes (historic scripts)
    are left out: one character outside the plane makes the class a slow list of ranges."""
    ranges: list[tuple[int, int]] = []
    for cp in range(0x10000):
        if unicodedata.category(chr(cp))[0] == "M":
            if ranges and ranges[-1][1] == cp - 1:
                ranges[-1] = (ranges[-1][0], cp)
            else:
                ranges.append((cp, cp))
    return "".join(rf"\u{a:04x}-\u{b:04x}" for a, b in ranges)


_MARKS = _combining_marks()
_MARK_RE: Final = re.compile(rf"[{_MARKS}]")
_WORD_RE: Final = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+")
# with marks, a word is a letter or digit, then letters, digits and the marks that belong to them
_WORD_MARKS_RE: Final = re.compile(rf"[{_CJK}]+|(?:[^\W_{_CJK}]+[{_MARKS}]*)+")
_CJK_RE: Final = re.compile(rf"[{_CJK}]")

_STOPWORD_TEXT: Final = """
    a about above after again all also am an and any are as at be been being both but by can could
    did do does doing during each few for from further had has have having he her here hers him
    his how i if in into is it its itself just me more most my no nor not of off on once only or
    other our ours out over own please same she should so some such than that the their theirs
    them then there these they this those through to too under until up very was we were what
    when where which while who whom why will with would you your yours
"""
ENGLISH_STOPWORDS: Final = frozenset(_STOPWORD_TEXT.split())
"""A short English stop-word list (function words only; domain words such as "paper" stay)."""


def normalize(text: str) -> str:
    """NFKC normalization, then lower case (full-width ``ＡＴＭ`` becomes ``atm``)."""
    return unicodedata.normalize("NFKC", text).lower()


def words(text: str) -> list[str]:
    """Split text into words: runs of letters/digits, with each run of CJK ideographs one word.

    ``"中国银行ATM (24h)"`` gives ``["中国银行", "atm", "24h"]``; combining marks stay with the
    letter before them (``"हिन्दी"`` is one word, not its three consonants). Input is
    NFKC-normalized and lower-cased first (full-width ``ＡＴＭ`` becomes ``atm``).
    """
    text = normalize(text)
    return (_WORD_MARKS_RE if _MARK_RE.search(text) else _WORD_RE).findall(text)


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


class Vocabulary:
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
