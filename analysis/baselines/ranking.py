"""The ranking kernel of the baseline retrievers: top-k per query, run frames, query chunks.

Every retriever scores a chunk of queries at once as a dense block (queries x documents); only the
top-k extraction walks the rows of a chunk (``np.argpartition`` first, then an exact sort of the
few candidates). Output of every ``search``: a DataFrame ``query_id, doc_id, score, rank``
(strings, strings, float64, int64), the top ``k`` documents per query sorted by score descending,
``rank`` 1-based, queries in input order. Reproducibility rules (the demo bundle must be
byte-identical on every machine):

* scores are rounded to ``decimals`` places (default 6) *before* ranking, so a last-bit
  difference in ``log``/``sin`` between CPUs cannot reorder documents;
* equal rounded scores are ordered by document position in the fitted corpus (first fitted
  first). These are genuine ties: the evaluation's tie policy decides their order later;
* lexical retrievers return only documents with a score above 0 (a query that matches nothing
  has an empty ranking), like Lucene/Pyserini.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd

__all__ = [
    "FloatArray",
    "IntArray",
    "TextRetriever",
    "check_texts",
    "fitted_doc_ids",
    "max_normalize",
    "minmax",
    "rank_blocks",
    "resolve_query_ids",
    "run_frame",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


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


def run_frame(
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


def check_texts(texts: Sequence[object], ids: Sequence[str], what: str) -> None:
    """``ValueError`` naming the first ``what`` (``"document"``, ``"query"``) whose text is not a
    string (a missing value such as ``None`` or NaN, a number): write missing text as ``""``."""
    for i, t in zip(ids, texts, strict=True):
        if not isinstance(t, str):
            raise ValueError(
                f"the text of {what} {i!r:.60} is {t!r:.40}, not a string "
                "(write a missing text as an empty string)"
            )


def _not_one_string(values: object, what: str) -> None:
    """``ValueError`` when ``values`` is one string (it would be read as one item a character)."""
    if isinstance(values, str):
        raise ValueError(f"the {what} are one string {values!r:.40}: pass a list, one item each")


def fitted_doc_ids(doc_ids: Sequence[str], texts: Sequence[str]) -> list[str]:
    """``doc_ids`` as strings, one per text and each once (``ValueError`` otherwise: a repeated
    id would put the same document twice in a query's ranking; so does a single string given
    for the ids or the texts, which would be read as one document a character)."""
    _not_one_string(doc_ids, "document ids")
    _not_one_string(texts, "document texts")
    n_texts = len(texts)
    if len(doc_ids) != n_texts:
        raise ValueError(f"{len(doc_ids)} document ids for {n_texts} texts")
    return _unique([str(d) for d in doc_ids], "document")


def _unique(ids: list[str], what: str) -> list[str]:
    """``ids`` when no id repeats, else ``ValueError`` naming the first repeated one."""
    seen: set[str] = set()
    for i in ids:
        if i in seen:
            raise ValueError(f"{what} id {i!r:.60} is given twice: {what} ids must be unique")
        seen.add(i)
    return ids


def resolve_query_ids(
    query_texts: Sequence[str] | pd.Series, query_ids: Sequence[str] | None
) -> list[str]:
    """The run's query ids: ``query_ids`` as strings (one per text, else ``ValueError``), else the
    index of a Series of texts, else the positions ``"0", "1", ...``. A single string given for
    the texts or the ids is a ``ValueError`` (it would be read as one query a character); so is
    an id given twice (its two rankings would be one query's run with every rank twice)."""
    _not_one_string(query_texts, "query texts")
    _not_one_string(query_ids, "query ids")
    if query_ids is not None:
        ids = [str(q) for q in query_ids]
        if len(ids) != len(query_texts):
            raise ValueError(f"{len(ids)} query ids for {len(query_texts)} query texts")
        return _unique(ids, "query")
    if isinstance(query_texts, pd.Series):
        return _unique([str(q) for q in query_texts.index], "query")
    return [str(i) for i in range(len(query_texts))]


def _chunks(n: int, n_cols: int, cells: int = 4_000_000) -> Iterable[slice]:
    """Row slices of ``n`` queries holding at most ~``cells`` scores each (>= 1 query a chunk)."""
    step = max(1, cells // max(n_cols, 1))
    for start in range(0, n, step):
        yield slice(start, min(n, start + step))


def rank_blocks(
    n_queries: int,
    n_docs: int,
    block: Callable[[slice], FloatArray],
    k: int,
    decimals: int | None,
    positive_only: bool,
) -> list[tuple[IntArray, FloatArray]]:
    """Per query, the top-``k`` (document index, score) pairs of the dense score blocks
    ``block(slice)`` (queries x documents), chunk by chunk.

    Scores are rounded to ``decimals`` places first (``None``: not rounded; ``-0.0`` becomes
    ``0.0``); equal scores keep corpus order; ``positive_only`` drops scores <= 0. ``k`` must be a
    positive integer (``ValueError`` otherwise, ``True`` included).
    """
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    hits: list[tuple[IntArray, FloatArray]] = []
    for sl in _chunks(n_queries, n_docs):
        scores = block(sl)
        if decimals is not None:
            scores = np.round(scores, decimals) + 0.0  # + 0.0 turns -0.0 into 0.0
        hits.extend(_top_k(scores, k, positive_only))
    return hits


def max_normalize(m: FloatArray) -> FloatArray:
    """Divide each row by its maximum (rows whose maximum is <= 0 become 0)."""
    mx = m.max(axis=1, keepdims=True) if m.shape[1] else np.zeros((m.shape[0], 1))
    return np.divide(m, mx, out=np.zeros_like(m), where=mx > 0)


def minmax(m: FloatArray) -> FloatArray:
    """Per-row min-max normalization ``(x - min) / (max - min)``; constant rows become 0 (and a
    matrix of no column stays empty)."""
    if not m.shape[1]:
        return np.zeros_like(m)
    lo = m.min(axis=1, keepdims=True)
    span = m.max(axis=1, keepdims=True) - lo
    return np.divide(m - lo, span, out=np.zeros_like(m), where=span > 0)


# ----------------------------------------------------------------------------------------------
# BM25
# ----------------------------------------------------------------------------------------------
class TextRetriever:
    """Shared ``search`` of the text retrievers: top-``k`` per query from ``score_block``."""

    doc_ids: list[str]

    def score_block(self, query_texts: Sequence[str]) -> FloatArray:
        raise NotImplementedError

    def block_width(self) -> int:
        """Columns of the widest dense array ``score_block`` makes per query (the chunk size
        follows it): the number of documents."""
        return len(self.doc_ids)

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
        qids = resolve_query_ids(query_texts, query_ids)
        texts = list(query_texts)
        check_texts(texts, qids, "query")
        hits = rank_blocks(
            len(texts),
            self.block_width(),
            lambda sl: self.score_block(texts[sl]),
            k,
            decimals,
            True,
        )
        return run_frame(qids, self.doc_ids, hits)
