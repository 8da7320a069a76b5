"""Qrels with the reviewers' judgements applied, and TREC qrels text/files of them.

The strict qrels are never modified: :func:`amended_qrels` returns a new table, so metrics
*with amendments* are computed beside the strict ones.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from analysis.core.errors import InputError
from analysis.io.atomic import atomic_write_text
from analysis.io.trec import trec_unsafe

__all__ = ["amended_qrels", "qrels_trec_text", "write_trec_qrels"]


def amended_qrels(qrels: pd.DataFrame, judgements: pd.DataFrame) -> pd.DataFrame:
    """The qrels with the judgements applied: a judged (query, doc) pair takes the judged
    relevance (also when it lowers it), a new pair is added; the input is not modified.

    Returns ``query_id, doc_id, relevance`` (duplicate qrels rows collapsed to their maximum
    first, as the metric core does).
    """
    base = qrels[["query_id", "doc_id", "relevance"]].astype({"query_id": "str", "doc_id": "str"})
    base = base.groupby(["query_id", "doc_id"], sort=False, as_index=False)["relevance"].max()
    if judgements is None or judgements.empty:
        return base.reset_index(drop=True)
    j = judgements[["query_id", "doc_id", "relevance"]].astype({"query_id": "str", "doc_id": "str"})
    j = j.drop_duplicates(["query_id", "doc_id"], keep="last")
    keys = pd.MultiIndex.from_frame(j[["query_id", "doc_id"]])
    kept = base[~pd.MultiIndex.from_frame(base[["query_id", "doc_id"]]).isin(keys)]
    out = pd.concat([kept, j], ignore_index=True)
    out["relevance"] = out["relevance"].astype("int64")
    return out


_EMPTY_OR_SPACE = "is empty or holds ASCII whitespace or a NUL character"


def qrels_trec_text(qrels: pd.DataFrame) -> str:
    """Qrels as TREC qrels text: ``query_id 0 doc_id relevance`` per line.

    Ids follow the readers' one rule (:func:`analysis.io.trec.trec_safe`): a no-break space or
    any other character but ASCII whitespace is written as it is and read back unchanged.

    Raises:
        ValueError: an id is empty, holds ASCII whitespace or a NUL character, or (a query id)
            starts with ``#``: TREC qrels cannot carry it.
    """
    for column in ("query_id", "doc_id"):
        ids = qrels[column].astype("str")
        bad = trec_unsafe(ids, column)
        if bad.any():
            first = ids[bad].iloc[0]
            why = "starts with '#'" if first.startswith("#") else _EMPTY_OR_SPACE
            raise ValueError(f"{column} {first!r} {why}")
    lines = [
        f"{q} 0 {d} {int(r)}\n"
        for q, d, r in qrels[["query_id", "doc_id", "relevance"]].itertuples(index=False)
    ]
    return "".join(lines)


def write_trec_qrels(qrels: pd.DataFrame, out: str | Path) -> None:
    """Write qrels as TREC qrels, atomically (:func:`analysis.io.atomic.atomic_write_text`).

    Raises:
        InputError: an id is not TREC-safe (:func:`qrels_trec_text`; nothing is written) or the
            file cannot be written.
    """
    try:
        text = qrels_trec_text(qrels)
    except ValueError as exc:
        raise InputError(out, None, f"{exc}: not TREC-safe") from None
    atomic_write_text(out, text)
