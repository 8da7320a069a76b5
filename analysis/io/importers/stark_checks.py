"""Data checks for STaRK folders: the traps that otherwise pass silently.

* **Stale eval.py output.** STaRK's ``eval.py`` resumes from an ``eval_results_*.csv`` already
  in its output folder: a file evaluated twice (another model, another top-k) then holds
  duplicate ``idx``/``query_id`` rows or ``pred_rank`` lists of mixed lengths. Duplicate rows
  with different rankings are an error (which ranking is the model's is unknowable); identical
  duplicates are dropped with a note; mixed lengths are a note.
* **idx is not query_id.** ``idx`` is the position in STaRK's query list and ``query_id`` the
  query's id; runs are keyed by ``query_id``. A file whose ``query_id`` values miss the QA file
  while its ``idx`` values (as positions) hit it is reported.
* **Amazon query ids.** Before June 2024 an Amazon query's id was the node id of the product the
  query was generated from, so every query lists its own id among its answers (upstream issue
  #2); the current release numbers queries by the rank of that old id (``new = rank(old)``
  among all old ids, ascending). :func:`amazon_convention` tells which convention a QA table
  uses and :func:`amazon_id_map` maps one to the other, so split, group, metapath and run files
  of the other convention are re-keyed (with a note) instead of scoring zero.
* **Prime's human-generated set** exists with 109 rows (older) and 98 rows (current); the import
  says which one it read.
* **Qrels versions** (:func:`qrels_version`): one check for a run made on another version of the
  qrels it is evaluated against: Amazon's old or current query ids, Prime's 98- or 109-row
  human set. It names the version the run matches and what to do; the importer, ``evaluate`` /
  ``validate`` on a STaRK QA file, and the app's data checks all use it.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from analysis.core.errors import DataWarning, InputError
from analysis.io._text import read_text

OWN_ID_SHARE = 0.5  # share of queries listing their own id as an answer -> old Amazon ids
PRIME_HUMAN_ROWS = {109: "the older 109-row release", 98: "the current 98-row release"}


def check_stark_eval(path: Path) -> tuple[set[int], list[str]]:
    """Check an ``eval_results_*.csv`` / submission CSV for a stale resume.

    Returns:
        (0-based record numbers to drop: identical duplicates, notes).

    Raises:
        InputError: a query listed twice with different ``pred_rank`` lists (the line of the
            second row and of the first).
    """
    text = read_text(path)
    reader = csv.reader(io.StringIO(text, newline=""))
    header = [h.strip() for h in next(reader, [])]
    if "query_id" not in header or "pred_rank" not in header:
        return set(), []
    q_col, p_col = header.index("query_id"), header.index("pred_rank")
    i_col = header.index("idx") if "idx" in header else None
    seen: dict[str, tuple[int, str]] = {}
    drop: set[int] = set()
    lengths: dict[int, int] = {}
    idx_differs = 0
    record, start = 0, reader.line_num + 1
    for row in reader:
        if not row or len(row) != len(header):
            start = reader.line_num + 1
            continue
        qid, pred = row[q_col].strip(), row[p_col].strip()
        if i_col is not None and row[i_col].strip() != qid:
            idx_differs += 1
        if qid in seen:
            first_line, first_pred = seen[qid]
            if first_pred != pred:
                raise InputError(
                    path,
                    start,
                    f"query_id {qid} appears again (first on line {first_line}) with another "
                    "pred_rank: the file mixes two evaluations (STaRK's eval.py resumes from an "
                    "eval_results CSV left in its output folder); delete it and evaluate again",
                )
            drop.add(record)
        else:
            seen[qid] = (start, pred)
            n = 0 if pred in ("", "[]") else pred.count(",") + 1
            lengths[n] = lengths.get(n, 0) + 1
        record += 1
        start = reader.line_num + 1
    notes = []
    if drop:
        notes.append(
            f"{path}: {len(drop)} duplicate rows (same query_id and ranking) dropped: the file "
            "was written twice (STaRK's eval.py resumes from an existing CSV)"
        )
    if len(lengths) > 1:
        parts = ", ".join(f"{n} ids for {c} queries" for n, c in sorted(lengths.items()))
        notes.append(
            f"{path}: pred_rank lengths differ ({parts}): part of the file may come from an "
            "earlier evaluation with another top-k (eval.py resumes from a stale CSV)"
        )
    if idx_differs:
        notes.append(
            f"{path}: idx differs from query_id on {idx_differs} rows; idx is the position in "
            "STaRK's query list, the run is keyed by query_id"
        )
    return drop, notes


def idx_instead_of_query_id(path: Path, run_ids: set[str], qa_ids: list[str]) -> str | None:
    """A message when a run's ``query_id`` values miss the QA file but its ``idx`` values,
    read as positions in the QA file, would hit it; else None."""
    if not run_ids or len(run_ids & set(qa_ids)) >= 0.5 * len(run_ids):
        return None
    text = read_text(path)
    reader = csv.DictReader(io.StringIO(text, newline=""))
    if not reader.fieldnames or "idx" not in reader.fieldnames:
        return None
    idx = [r.get("idx", "").strip() for r in reader]
    ok = [int(i) for i in idx if i.isdigit() and int(i) < len(qa_ids)]
    if len(ok) < 0.9 * len(idx):
        return None
    return (
        f"{path}: only {len(run_ids & set(qa_ids))} of {len(run_ids)} query_id values are "
        "queries of the QA file, while every idx is a position in it: was query_id written "
        "from idx? Runs are keyed by query_id"
    )


def amazon_convention(queries: pd.DataFrame, qrels: pd.DataFrame) -> str | None:
    """``"old"`` when most queries list their own id among their answers (Amazon before June
    2024), ``"current"`` when a QA table carries an ``old_id`` column or none does; None for an
    empty table."""
    if queries.empty:
        return None
    if "old_id" in queries.columns:
        return "current"
    own = qrels["query_id"].to_numpy() == qrels["doc_id"].to_numpy()
    n_own = qrels.loc[own, "query_id"].nunique()
    return "old" if n_own >= OWN_ID_SHARE * len(queries) else "current"


def amazon_id_map(queries: pd.DataFrame, convention: str) -> dict[str, str]:
    """Map ids of the *other* convention to the QA table's: ``new = rank(old)`` (0-based rank of
    the old id among all old ids, ascending as integers).

    For an old-convention table: current id -> old id. For a current table: old id -> current
    id, from its ``old_id`` column (empty without one).
    """
    if convention == "old":
        old = queries["query_id"].astype("str").tolist()
        if not all(q.isascii() and q.isdigit() for q in old):
            return {}  # the rank mapping is defined on integer ids only
        # ascending as integers of any size (leading zeros aside), ties in table order
        order = sorted(range(len(old)), key=lambda i: (len(old[i].lstrip("0")), old[i].lstrip("0")))
        return {str(rank): old[i] for rank, i in enumerate(order)}
    if "old_id" not in queries.columns:
        return {}
    return dict(
        zip(queries["old_id"].astype("str"), queries["query_id"].astype("str"), strict=True)
    )


def rekey(ids: pd.Series, known: set[str], mapping: dict[str, str]) -> tuple[pd.Series, bool]:
    """Re-key ``ids`` through ``mapping`` when that makes clearly more of them known queries
    (at least twice as many, and a majority); returns (ids, whether they were re-keyed)."""
    if not mapping or ids.empty:
        return ids, False
    uniq = pd.unique(ids.astype("str"))
    hit = sum(1 for q in uniq if q in known)
    mapped = sum(1 for q in uniq if mapping.get(q) in known)
    if mapped > 0.5 * len(uniq) and mapped >= 2 * max(hit, 1):
        return ids.astype("str").map(lambda q: mapping.get(q, q)), True
    return ids, False


def prime_human_note(path: Path, n_rows: int) -> str | None:
    """Which release of Prime's human-generated set a file is (98 or 109 rows)."""
    if n_rows not in PRIME_HUMAN_ROWS:
        return None
    other = 98 if n_rows == 109 else 109
    return (
        f"{path}: Prime's human-generated set, {PRIME_HUMAN_ROWS[n_rows]} ({n_rows} queries); "
        f"results on the {other}-row release are not comparable"
    )


def _amazon_version(
    run_ids: list[str], queries: pd.DataFrame, qrels: pd.DataFrame
) -> DataWarning | None:
    """The run is keyed by Amazon's other id convention (:func:`rekey` would re-key it)."""
    convention = amazon_convention(queries, qrels)
    if convention is None:
        return None
    mapping = amazon_id_map(queries, convention)
    known = set(queries["query_id"].astype("str"))
    ids = pd.Series(run_ids, dtype="str")
    if not rekey(ids, known, mapping)[1]:
        return None
    hit = sum(1 for q in run_ids if q in known)
    mapped = sum(1 for q in run_ids if mapping.get(q) in known)
    other = "current" if convention == "old" else "old"
    return DataWarning(
        "qrels_version",
        len(run_ids) - hit,
        f"qrels version: the run is keyed by Amazon's {other} query ids (June 2024: new id = "
        f"rank of the old id), the qrels by the {convention} ones: {mapped} of the run's "
        f"{len(run_ids)} queries are qrels queries once re-keyed, {hit} as they are. Evaluate "
        "the run against the QA file of its own release, or import the folder with "
        "`import stark`, which re-keys it",
        tuple(q for q in run_ids if q not in known)[:5],
    )


def _prime_version(run_ids: list[str], queries: pd.DataFrame) -> DataWarning | None:
    """The run answers as many queries as the other release of Prime's human set has."""
    n_qa = len(queries)
    if n_qa not in PRIME_HUMAN_ROWS:
        return None
    other = 98 if n_qa == 109 else 109
    known = set(queries["query_id"].astype("str"))
    shared = sum(1 for q in run_ids if q in known)
    if len(run_ids) != other:
        return None
    extra = len(run_ids) - shared
    among = f"all among the {n_qa} of these qrels" if not extra else (
        f"{shared} of them among the {n_qa} of these qrels, {extra} not"
    )  # fmt: skip
    return DataWarning(
        "qrels_version",
        abs(n_qa - other),
        f"qrels version: the run answers {other} queries ({among}): it was made on "
        f"{PRIME_HUMAN_ROWS[other]} of Prime's human-generated set, these qrels are "
        f"{PRIME_HUMAN_ROWS[n_qa]}. Evaluate it against the {other}-row "
        "stark_qa_human_generated_eval.csv; numbers on the two releases are not comparable",
        tuple(q for q in run_ids if q not in known)[:5],
    )


def qrels_version(
    run_ids: Iterable[str], queries: pd.DataFrame, qrels: pd.DataFrame, *, name: str = ""
) -> DataWarning | None:
    """A run made on another version of the qrels than the one given, when its queries match
    a known other version; None otherwise (also when the run matches the qrels).

    Known versions: STaRK-Amazon's old and current query ids (told from the data, see
    :func:`amazon_convention`; the run's ids must match clearly better once re-keyed, as
    :func:`rekey` decides), and Prime's 98- and 109-row human-generated sets (``name``, the
    dataset's or the file's name, must mention ``prime``; the run must answer exactly as many
    queries as the other release has).

    Args:
        run_ids: the run's query ids.
        queries: the QA table's queries (``query_id``, and ``old_id`` for a re-keyed Amazon
            file).
        qrels: its qrels (``query_id, doc_id, relevance``).
        name: the dataset's or the QA file's name.
    """
    ids = list(dict.fromkeys(str(q) for q in run_ids))
    if not ids or queries.empty:
        return None
    found = _amazon_version(ids, queries, qrels)
    if found is None and "prime" in name.lower():
        found = _prime_version(ids, queries)
    return found
