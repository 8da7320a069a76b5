"""STaRK files: QA tables, split indexes, evaluation output, query groups and metapaths.

* ``stark_qa.csv`` / ``stark_qa_human_generated_eval.csv``: ``id,query,answer_ids[,...]`` where
  ``answer_ids`` is a list literal such as ``"[601168, 947318]"``. One file serves as both the
  queries (``query_id, text``) and the qrels (one row per answer, relevance 1).
* ``split/{train,val,test}.index``: one query id per line.
* ``eval_results_<split>.csv``: ``idx,query_id,pred_rank,<metric columns>``; ``pred_rank`` is the
  ranked list of node ids, without scores. As a run, rank ``i`` (1-based) of a list of ``n`` ids
  gets the score ``n - i + 1``, so every tie policy keeps the saved order.
* ``query_groups/*.json`` (AvaTaR): ``{group: {"pattern": text, "query_idx": [ids]}}``.
* ``metapaths/test.json`` (MoR): a list of ``{"q_id": id, "rg": {"Metapath": "a -> b"}}``.

List literals are parsed with ``json`` (then ``ast.literal_eval`` for single quotes), never
``eval``. Errors name the file and the line where the offending record starts.
"""

from __future__ import annotations

import ast
import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from analysis.core.errors import InputError
from analysis.io._text import (
    ASCII_SPACE,
    check_file,
    check_json_depth,
    head_text,
    iter_lines,
    parse_json,
    read_text,
)

if TYPE_CHECKING:  # pandas is imported by the readers that build tables, not by read_split_ids
    import pandas as pd

csv.field_size_limit(1 << 30)

QA_COLUMNS = ("id", "query", "answer_ids")
EVAL_COLUMNS = ("query_id", "pred_rank")


def _records(path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    """(line where the record starts, record) for every CSV record after the header."""
    text = read_text(path)
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise InputError(path, 1, "the file is empty") from None
    header = [h.strip() for h in header]
    start = reader.line_num + 1
    try:
        for row in reader:
            if not row:
                start = reader.line_num + 1
                continue
            if len(row) != len(header):
                raise InputError(
                    path, start, f"expected {len(header)} fields as in the header, found {len(row)}"
                )
            yield start, dict(zip(header, row, strict=True))
            start = reader.line_num + 1
    except csv.Error as exc:
        raise InputError(path, reader.line_num, f"malformed CSV: {exc}") from None


def _header(path: Path) -> list[str]:
    """The header fields, from the head of the file (the records are read once, by
    :func:`_records`, which also reports any undecodable byte with its line)."""
    text = head_text(path)
    first = next(iter_lines(text), (1, ""))[1]
    return [h.strip() for h in next(csv.reader([first]), [])]


def parse_id_list(text: str, path: str | Path, line: int, column: str) -> list[str]:
    """Parse a list literal of ids (``[1, 2]``, ``['a', 'b']``) into strings."""
    check_json_depth(text, path, line)  # one line instead of a RecursionError
    try:
        value = json.loads(text)
    except ValueError:
        try:
            value = ast.literal_eval(text.strip())
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            raise InputError(path, line, f"{column} is not a list literal: {text[:60]!r}") from None
    if not isinstance(value, list):
        raise InputError(path, line, f"{column} is not a list: {text[:60]!r}")
    out = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int | str):
            raise InputError(path, line, f"{column} holds {item!r}, which is not an id")
        out.append(str(item))
    return out


def _require(path: Path, header: list[str], needed: tuple[str, ...]) -> None:
    missing = [c for c in needed if c not in header]
    if missing:
        raise InputError(path, 1, f"missing column(s) {', '.join(missing)} in the header")


def read_stark_qa(path: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read a STaRK QA CSV into ``(queries, qrels)``.

    Returns:
        queries ``query_id, text`` and qrels ``query_id, doc_id, relevance`` (1 for every
        answer; an answer listed twice stays twice, and the metric core collapses it with a
        warning). A query with ``answer_ids = []`` is a judged query with no relevant doc: it
        gets one qrels row with an empty ``doc_id`` and relevance 0 (an id no run can hold), so
        it is scored 0 and flagged ``no_relevant`` rather than dropped as "not in the qrels".

    Raises:
        InputError: missing columns, an ``answer_ids`` cell that is not a list of ids, an empty id,
            a query id on two records (naming both lines: two answer lists for one query would
            be merged), a header without any record (a writer that stopped after the header,
            not a query set of no query).
    """
    import pandas as pd

    p = check_file(path)
    _require(p, _header(p), QA_COLUMNS)
    qids: list[str] = []
    texts: list[str] = []
    rel_q: list[str] = []
    rel_d: list[str] = []
    rel: list[int] = []
    first: dict[str, int] = {}
    for line, rec in _records(p):
        qid = rec["id"].strip()
        if not qid:
            raise InputError(p, line, "empty query id")
        if qid in first:
            raise InputError(p, line, f"duplicate query id {qid!r} (first on line {first[qid]})")
        first[qid] = line
        answers = parse_id_list(rec["answer_ids"], p, line, "answer_ids")
        qids.append(qid)
        texts.append(rec["query"])
        if not answers:  # judged, with nothing relevant: one non-relevant placeholder row
            rel_q.append(qid)
            rel_d.append("")
            rel.append(0)
            continue
        rel_q.extend([qid] * len(answers))
        rel_d.extend(answers)
        rel.extend([1] * len(answers))
    if not qids:
        raise InputError(p, None, "the file holds no query (only its header)")
    queries = pd.DataFrame(
        {"query_id": pd.array(qids, dtype="str"), "text": pd.array(texts, dtype="str")}
    )
    qrels = pd.DataFrame(
        {
            "query_id": pd.array(rel_q, dtype="str"),
            "doc_id": pd.array(rel_d, dtype="str"),
            "relevance": np.asarray(rel, dtype=np.int64),
        }
    )
    return queries, qrels


def read_stark_eval(path: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read a STaRK ``eval_results_*.csv`` into ``(run, file_metrics)``.

    Returns:
        run ``query_id, doc_id, score, rank`` (score ``n - rank + 1``) and the file's own per-query
        metric columns ``query_id, <metric>...`` (e.g. ``hit@1`` as STaRK's evaluator computed it).

    Raises:
        InputError: missing columns, a ``pred_rank`` cell that is not a list of ids, an empty
            ``query_id``, a header without any record (a writer that stopped after the header,
            as an empty run table is).
    """
    import pandas as pd

    p = check_file(path)
    header = _header(p)
    _require(p, header, EVAL_COLUMNS)
    metric_cols = [c for c in header if c not in ("idx", "query_id", "pred_rank") and c]
    qids: list[str] = []
    docs: list[str] = []
    ranks: list[np.ndarray] = []
    per_query: dict[str, list[object]] = {"query_id": [], **{c: [] for c in metric_cols}}
    for line, rec in _records(p):
        qid = rec["query_id"].strip()
        if not qid:
            raise InputError(p, line, "empty query_id")
        pred = parse_id_list(rec["pred_rank"], p, line, "pred_rank")
        qids.extend([qid] * len(pred))
        docs.extend(pred)
        ranks.append(np.arange(1, len(pred) + 1))
        per_query["query_id"].append(qid)
        for c in metric_cols:
            per_query[c].append(_float_or_nan(rec[c]))
    if not ranks:
        raise InputError(p, None, "the file holds no rows (only its header)")
    rank = np.concatenate(ranks) if ranks else np.zeros(0, dtype=np.int64)
    sizes = np.array([len(r) for r in ranks], dtype=np.int64)
    run = pd.DataFrame(
        {
            "query_id": pd.array(qids, dtype="str"),
            "doc_id": pd.array(docs, dtype="str"),
            "score": (np.repeat(sizes, sizes) - rank + 1).astype(np.float64),
            "rank": rank.astype(np.int64),
        }
    )
    metrics = pd.DataFrame(per_query)
    metrics["query_id"] = metrics["query_id"].astype("str")
    return run, metrics


def _float_or_nan(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return float("nan")


def read_split_ids(path: str | Path) -> list[str]:
    """The query ids of a ``split/<name>.index`` file (one id per line; blank and ``#`` lines
    skipped; an id listed twice counts once), in file order.

    Raises:
        InputError: a line holding more than one field, naming the line; a file holding no id
            (empty, or only blank and ``#`` lines: a split of no query would score nothing).
    """
    p = check_file(path)
    ids = []
    for number, line in iter_lines(read_text(p)):
        value = line.strip(ASCII_SPACE)  # a no-break space belongs to the id
        if not value or value.startswith("#"):
            continue
        if any(c in value for c in ASCII_SPACE):
            raise InputError(p, number, "expected one query id per line")
        ids.append(value)
    if not ids:
        raise InputError(p, None, "the file holds no query id (one id per line)")
    return list(dict.fromkeys(ids))


def read_split_index(path: str | Path, split: str | None = None) -> pd.DataFrame:
    """Read a ``split/<name>.index`` file into ``query_id, split`` (split = file stem)."""
    import pandas as pd

    p = check_file(path)
    name = split or p.name.split(".")[0]
    ids = read_split_ids(p)
    return pd.DataFrame({"query_id": pd.array(ids, dtype="str"), "split": name})


def _load_json(path: Path) -> object:
    return parse_json(read_text(path), path)


def read_query_groups(path: str | Path) -> pd.DataFrame:
    """Read AvaTaR query groups into ``query_id, pattern_group, pattern``."""
    import pandas as pd

    p = check_file(path)
    data = _load_json(p)
    if not isinstance(data, dict):
        raise InputError(p, 1, "expected an object {group: {pattern, query_idx}}")
    rows: list[tuple[str, str, str]] = []
    for group, body in data.items():
        if not isinstance(body, dict) or not isinstance(body.get("query_idx"), list):
            raise InputError(p, None, f"group {group!r} has no query_idx list")
        pattern = str(body.get("pattern", ""))
        rows.extend((str(q), str(group), pattern) for q in body["query_idx"])
    return pd.DataFrame(rows, columns=["query_id", "pattern_group", "pattern"]).astype("str")


def read_metapaths(path: str | Path) -> pd.DataFrame:
    """Read MoR metapaths (``[{"q_id", "rg": {"Metapath"}}]``) into ``query_id, metapath``."""
    import pandas as pd

    p = check_file(path)
    data = _load_json(p)
    if not isinstance(data, list):
        raise InputError(p, 1, "expected a list of {q_id, rg} records")
    rows = []
    for item in data:
        if not isinstance(item, dict) or "q_id" not in item:
            raise InputError(p, None, "a record has no q_id")
        rg = item.get("rg") or {}
        rows.append(
            (str(item["q_id"]), str(rg.get("Metapath", "")) if isinstance(rg, dict) else "")
        )
    return pd.DataFrame(rows, columns=["query_id", "metapath"]).astype("str")
