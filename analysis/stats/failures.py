"""The failing-query browser: filter one model's per-query table, map a table selection back to
a query, and shape one query's details. Pure pandas (no Streamlit).

Filtering (:func:`failing_queries`), on the rows of one model of the per-query table
(:func:`analysis.stats.perquery.per_query_table`):

* **threshold** ``max_value``: keep rows whose metric value ``v`` satisfies ``v <= max_value``;
  ``max_value >= 1`` (the default, :data:`FAILURES`) means *failures*: ``v < 1``. No metric exceeds
  1, so "at most 1" would list every query; a query at 1 (a perfect score) is never a failure.
  Comparisons allow :data:`EPS` so that a recall of 0.3 stays ``<= 0.3`` despite float rounding.
  MRR below 1 means the first gold is not at rank 1. Precision@k rarely reaches 1 (it needs k
  gold documents in the top k), so nearly every query is below 1.
* **slice**: keep rows whose ``slice_column`` label is one of ``slice_values`` (no values: no
  filter). Labels are the column's values as text, missing values as
  :data:`analysis.stats.MISSING_LABEL`.
* **tie-sensitive** (``tie_only``): keep rows whose value of *this* metric depends on the order of
  tied scores, i.e. ``<metric>_min != <metric>_max`` (falls back to the table's any-metric
  ``tie_sensitive`` flag when the bounds are absent).
* **missing from run** (``missing_only``): keep queries of the qrels the run has no line for
  (they score 0 on every metric, trec_eval ``-c``).

Rows are sorted worst first: metric value ascending, then its best value under ties ascending,
then first-gold rank descending with "no gold retrieved" first, then in table order (datasets
in selection order, queries in qrels order).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from analysis.stats import MISSING_LABEL, flag_values

EPS = 1e-9
FAILURES = 1.0
THRESHOLDS: tuple[float, ...] = tuple(round(i * 0.05, 2) for i in range(21))
TEXT_CHARS = 80
DEFAULT_TOP = 20
MAX_TOP = 1000
TABLE_COLUMNS = ("dataset", "query_id", "text")
DIAGNOSTICS = ("n_gold", "first_gold_rank", "flags")
_FLAG_NAMES = (
    ("missing_from_run", "missing from run"),
    ("no_relevant", "no relevant doc"),
    ("tie_sensitive_metric", "tie-sensitive"),
    ("tied_at_cutoff", "tied at a cutoff"),
    ("gold_exceeds_k", "more gold than k"),
)


# ------------------------------------------------------------------------------ URL values


def threshold_label(value: float) -> str:
    """Label of a threshold option: ``"< 1 (failures)"`` for 1, else ``"≤ 0.50"``."""
    return "< 1 (failures)" if value >= FAILURES else f"≤ {value:.2f}"


def parse_threshold(raw: str | None) -> float | None:
    """A threshold from the URL, snapped to the nearest of :data:`THRESHOLDS`; ``None`` when
    absent, not a number, or outside ``[0, 1]``."""
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        return None
    if not np.isfinite(value) or value < 0 or value > 1:
        return None
    return min(THRESHOLDS, key=lambda t: abs(t - value))


def format_threshold(value: float) -> str:
    """A threshold as a URL value (``"0.5"``, ``"0"``, ``"1"``)."""
    return f"{value:g}"


def parse_top(raw: str | None) -> int | None:
    """The ranked-list length from the URL: an integer in ``1..MAX_TOP``, else ``None``."""
    if raw is None:
        return None
    try:
        value = int(raw)
    except ValueError:
        return None
    return value if 1 <= value <= MAX_TOP else None


def parse_flag(raw: str | None) -> bool:
    """A checkbox from the URL: ``"1"``/``"true"`` is on, anything else off."""
    return raw is not None and raw.strip().lower() in ("1", "true", "yes", "on")


def format_values(values: Sequence[str]) -> str:
    """Slice values as one URL value, joined by commas (see :func:`parse_values`)."""
    return ",".join(values)


def parse_values(raw: str | None, options: Sequence[str]) -> list[str]:
    """Slice values from a comma-joined URL value, keeping only known ``options``.

    Values may contain commas themselves (bucket labels such as ``"[0.1, 0.5)"``): consecutive
    comma-separated pieces are re-joined until they form a known option (shortest match first);
    a piece that starts no known option is dropped. The result keeps URL order, without
    duplicates.

    Linear in the length of ``raw``: the options are held in a trie of their comma-separated
    pieces, so from each piece the walk goes only as far as some option continues (at most the
    number of pieces of the longest option), and every step is one dictionary lookup.
    """
    if not raw:
        return []
    trie: dict = {}
    for option in options:
        node = trie
        for part in option.split(","):
            node = node.setdefault(part, {})
        node[None] = option  # the end of an option (pieces are strings, never None)
    pieces = raw.split(",")
    out: dict[str, None] = {}
    i = 0
    while i < len(pieces):
        node, j, found = trie, i, None
        while j < len(pieces) and pieces[j] in node:
            node, j = node[pieces[j]], j + 1
            if None in node:
                found = node[None]
                break
        if found is None:
            i += 1
        else:
            out.setdefault(found)
            i = j
    return list(out)


# ------------------------------------------------------------------------------ filtering


def model_rows(table: pd.DataFrame, model: str | None) -> pd.DataFrame:
    """The rows of ``model`` in the long per-query table (index reset); empty when absent."""
    if table.empty or model is None or "model" not in table.columns:
        return table.iloc[0:0]
    return table[table["model"] == model].reset_index(drop=True)


def slice_labels(series: pd.Series) -> pd.Series:
    """The values of a slice column as text labels; missing values are
    :data:`analysis.stats.MISSING_LABEL`, integral floats lose their ``.0``."""
    values = series.astype("object")
    missing = values.isna()
    labels = values.map(_label)
    return labels.where(~missing, MISSING_LABEL).astype("str")


def _label(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def slice_options(table: pd.DataFrame, column: str | None) -> list[str]:
    """The sorted distinct labels of ``column`` (empty when the column is absent)."""
    if column is None or column not in table.columns or table.empty:
        return []
    return sorted(slice_labels(table[column]).unique().tolist())


def tie_sensitive_for(table: pd.DataFrame, metric: str) -> pd.Series:
    """Per row: does the value of ``metric`` depend on the order of tied scores
    (``<metric>_min != <metric>_max``)? Falls back to ``tie_sensitive`` (any metric), else False.
    A missing flag (a dataset without the column, in a table of several) is False."""
    lo, hi = f"{metric}_min", f"{metric}_max"
    if lo in table.columns and hi in table.columns:
        return (table[hi] - table[lo]).abs() > EPS
    if "tie_sensitive" in table.columns:
        return pd.Series(flag_values(table["tie_sensitive"]), index=table.index)
    return pd.Series(False, index=table.index)


def threshold_mask(values: pd.Series, max_value: float) -> pd.Series:
    """``values < 1`` when ``max_value >= 1`` (failures), else ``values <= max_value`` (with a
    tolerance of :data:`EPS`). Missing values never match."""
    if max_value >= FAILURES:
        return values < FAILURES - EPS
    return values <= max_value + EPS


def _cutoff(metric: str) -> int | None:
    _, _, k = metric.partition("@")
    return int(k) if k.isdigit() else None


def _flag_bits(rows: pd.DataFrame, metric: str) -> np.ndarray:
    """Bit i set when the i-th flag of :data:`_FLAG_NAMES` holds (int64 per row)."""
    n = len(rows)
    bits = np.zeros(n, dtype=np.int64)
    k = _cutoff(metric)
    for i, (column, _) in enumerate(_FLAG_NAMES):
        if column == "tie_sensitive_metric":
            on = tie_sensitive_for(rows, metric).to_numpy(dtype=bool)
        elif column == "gold_exceeds_k":
            if not (metric.startswith("recall@") and k is not None and "n_gold" in rows.columns):
                continue
            on = rows["n_gold"].to_numpy(dtype=np.float64) > k
        elif column in rows.columns:
            on = flag_values(rows[column])
        else:
            continue
        bits |= on.astype(np.int64) << i
    return bits


_FLAG_TEXT = np.array(
    [
        ", ".join(name for i, (_, name) in enumerate(_FLAG_NAMES) if code >> i & 1)
        for code in range(1 << len(_FLAG_NAMES))
    ],
    dtype=object,
)


def query_flags(rows: pd.DataFrame, metric: str) -> pd.Series:
    """A comma-separated text of the diagnostics that hold for each row: ``missing from run``,
    ``no relevant doc``, ``tie-sensitive`` (for ``metric``), ``tied at a cutoff`` (a tie straddles
    one of the evaluated cutoffs), ``more gold than k`` (recall@k cannot reach 1). Empty text when
    none holds."""
    return pd.Series(_FLAG_TEXT[_flag_bits(rows, metric)], index=rows.index, dtype="str")


def shorten(text: pd.Series, limit: int = TEXT_CHARS) -> pd.Series:
    """Text cut to ``limit`` characters (the last one an ellipsis when cut); missing -> ``""``."""
    text = text.fillna("").astype("str")
    return text.where(text.str.len() <= limit, text.str.slice(0, limit - 1) + "…")


@dataclass(frozen=True)
class FailureFilter:
    """The filters of :func:`failing_queries` (module docstring); the default lists every
    failure. ``search``: keep the queries whose id or text contains it (case-insensitive,
    literal, NFKC; blank = no filter)."""

    max_value: float = FAILURES
    slice_column: str | None = None
    slice_values: tuple[str, ...] = ()
    tie_only: bool = False
    missing_only: bool = False
    search: str = ""


def failing_queries(
    rows: pd.DataFrame,
    metric: str,
    filters: FailureFilter = FailureFilter(),
    *,
    text_chars: int = TEXT_CHARS,
) -> pd.DataFrame:
    """The queries of one model's per-query rows that pass the ``filters``, worst first, as the
    table the page shows.

    Columns: ``dataset, query_id, text`` (cut to ``text_chars``), ``metric``, ``<metric>_min``,
    ``<metric>_max`` (when present), ``n_gold``, ``first_gold_rank`` (nullable integer, missing
    when no gold was retrieved), ``flags`` (:func:`query_flags`), then ``slice_column`` when it
    is not one of these. The index is ``0..n-1``: a table selection's row positions refer to it.

    Raises:
        KeyError: ``metric`` is not a column of ``rows``.
    """
    if metric not in rows.columns:
        raise KeyError(f"metric column {metric!r} is not in the per-query table")
    column = filters.slice_column
    use_slice = column is not None and column in rows.columns
    kept = _worst_first(_kept_rows(rows, metric, filters, use_slice), metric)
    columns = [
        c
        for c in (*TABLE_COLUMNS, metric, f"{metric}_min", f"{metric}_max", "n_gold")
        if c in kept.columns
    ]
    out = kept[columns].reset_index(drop=True)
    if "text" in out.columns:
        out["text"] = shorten(out["text"], text_chars)
    if "first_gold_rank" in kept.columns:
        out["first_gold_rank"] = kept["first_gold_rank"].astype("Int64").array
    out["flags"] = pd.array(_FLAG_TEXT[_flag_bits(kept, metric)], dtype="str")
    if use_slice and column not in out.columns:
        out[column] = slice_labels(kept[column]).array
    return out


def _kept_rows(
    rows: pd.DataFrame, metric: str, filters: FailureFilter, use_slice: bool
) -> pd.DataFrame:
    """The rows that pass the filters, with only the columns the table and its flags need."""
    mask = np.array(threshold_mask(rows[metric], filters.max_value), dtype=bool)
    if use_slice and len(filters.slice_values) > 0:
        labels = slice_labels(rows[filters.slice_column])
        mask &= labels.isin(list(filters.slice_values)).to_numpy(dtype=bool)
    if filters.tie_only:
        mask &= tie_sensitive_for(rows, metric).to_numpy(dtype=bool)
    if filters.search.strip():
        mask &= search_mask(rows, filters.search)
    if filters.missing_only:
        if "missing_from_run" in rows.columns:
            mask &= flag_values(rows["missing_from_run"])
        else:
            mask[:] = False
    # take only the columns needed (the per-query table is wide)
    wanted = [*TABLE_COLUMNS, metric, f"{metric}_min", f"{metric}_max", "n_gold",
              "first_gold_rank", "missing_from_run", "no_relevant", "tied_at_cutoff",
              "tie_sensitive", *([filters.slice_column] if use_slice else [])]  # fmt: skip
    present = list(dict.fromkeys(c for c in wanted if c in rows.columns))
    return rows[present].iloc[np.flatnonzero(mask)]


def _worst_first(kept: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Rows by metric value, then best value under ties, then first-gold rank descending ("no
    gold retrieved" first), then table order."""
    value = kept[metric].to_numpy(dtype=np.float64)
    best_col = f"{metric}_max" if f"{metric}_max" in kept.columns else metric
    best = kept[best_col].to_numpy(dtype=np.float64)
    if "first_gold_rank" in kept.columns:
        rank = -kept["first_gold_rank"].to_numpy(dtype=np.float64, na_value=np.inf)
    else:
        rank = np.zeros(len(kept))
    return kept.iloc[np.lexsort((np.arange(len(kept)), rank, best, value))]


def search_mask(rows: pd.DataFrame, search: str) -> np.ndarray:
    """Rows whose ``query_id`` or ``text`` contains ``search`` (stripped, NFKC, case-folded,
    literal: no regular expression)."""
    needle = unicodedata.normalize("NFKC", search.strip()).casefold()
    hit = np.zeros(len(rows), dtype=bool)
    for column in ("query_id", "text"):
        if column in rows.columns:
            values = rows[column].astype("str").str.normalize("NFKC").str.casefold()
            hit |= values.str.contains(needle, regex=False).to_numpy(dtype=bool)
    return hit


def neighbours(
    view: pd.DataFrame, dataset: str, query_id: str
) -> tuple[tuple[str, str] | None, tuple[str, str] | None]:
    """The (dataset, query id) before and after a query in a :func:`failing_queries` table
    (``None`` at either end, or both when the query is not in it)."""
    position = row_of(view, dataset, query_id)
    if position is None:
        return None, None

    def at(i: int) -> tuple[str, str] | None:
        if 0 <= i < len(view):
            return str(view["dataset"].iloc[i]), str(view["query_id"].iloc[i])
        return None

    return at(position - 1), at(position + 1)


# ------------------------------------------------------------------------------ selection


def selection_rows(state: object) -> list[int] | None:
    """The selected row positions of a dataframe selection state
    (``{"selection": {"rows": [...]}}``, as ``st.dataframe(on_select=...)`` returns and keeps in
    session state); ``None`` when ``state`` is not such a mapping."""
    if not isinstance(state, Mapping):
        return None
    selection = state.get("selection")
    if not isinstance(selection, Mapping):
        return None
    rows = selection.get("rows", [])
    return [int(r) for r in rows]


def selected_query(table: pd.DataFrame, rows: Sequence[int] | None) -> tuple[str, str] | None:
    """``(dataset, query_id)`` of the first selected row position of ``table`` (the table the
    selection was made on, as returned by :func:`failing_queries`); ``None`` when nothing is
    selected or the position is outside the table (a stale selection)."""
    if not rows:
        return None
    pos = int(rows[0])
    if not 0 <= pos < len(table):
        return None
    row = table.iloc[pos]
    return str(row["dataset"]), str(row["query_id"])


def row_of(table: pd.DataFrame, dataset: str, query_id: str) -> int | None:
    """The row position of ``(dataset, query_id)`` in ``table``, or ``None``."""
    if table.empty:
        return None
    hit = np.flatnonzero(
        (table["dataset"].to_numpy() == dataset) & (table["query_id"].to_numpy() == query_id)
    )
    return int(hit[0]) if len(hit) else None


def resolve_query(
    rows: pd.DataFrame, query_id: str | None, dataset: str | None
) -> tuple[str, str] | None:
    """The ``(dataset, query_id)`` a link names, looked up in one model's per-query rows: the
    given dataset when it holds the id, else the first dataset (table order) that does (ids can
    repeat across datasets, hence ``qd``). ``None`` when the id is absent or not found."""
    if not query_id or rows.empty:
        return None
    match = rows[rows["query_id"] == query_id]
    if match.empty:
        return None
    datasets = match["dataset"].astype("str")
    if dataset is not None and (datasets == dataset).any():
        return dataset, query_id
    return str(datasets.iloc[0]), query_id


# ------------------------------------------------------------------------------ details


def query_row(rows: pd.DataFrame, dataset: str, query_id: str) -> pd.Series | None:
    """The per-query row of ``(dataset, query_id)``, or ``None``."""
    pos = row_of(rows, dataset, query_id)
    return None if pos is None else rows.iloc[pos]


def query_metadata(row: pd.Series, metric: str, slices: Sequence[str] = ()) -> pd.DataFrame:
    """One query's facts as a two-column text table ``field, value``: dataset, query id, query
    type, split, the other ``slices`` (left out when missing for this query), ``n_gold``,
    ``n_retrieved``, ``first_gold_rank`` ("none" when no gold was retrieved), the metric with its
    range over tie orders, and the flags."""
    fields: list[tuple[str, str]] = [
        ("dataset", _text(row.get("dataset"))),
        ("query_id", _text(row.get("query_id"))),
    ]
    seen = {"dataset", "query_id"}
    for column in ("query_type", "split", *slices):
        if column not in row.index or column in seen:
            continue
        seen.add(column)
        value = row.get(column)
        if column in ("query_type", "split") or not _missing(value):
            fields.append((column, _text(value)))
    for column in ("n_gold", "n_retrieved"):
        if column in row.index:
            fields.append((column, _text(row[column])))
    rank = row.get("first_gold_rank")
    fields.append(("first_gold_rank", "none" if rank is None or pd.isna(rank) else _text(rank)))
    if metric in row.index:
        value = f"{float(row[metric]):.4f}"
        lo, hi = row.get(f"{metric}_min"), row.get(f"{metric}_max")
        if lo is not None and hi is not None and abs(float(hi) - float(lo)) > EPS:
            value += f" (ties: {float(lo):.4f} to {float(hi):.4f})"
        fields.append((metric, value))
    for column in ("missing_from_run", "no_relevant", "tied_at_cutoff", "tie_sensitive"):
        if column in row.index:
            on = not _missing(row[column]) and bool(row[column])  # missing: no flag
            fields.append((column, "yes" if on else "no"))
    flags = query_flags(row.to_frame().T, metric).iloc[0]
    fields.append(("flags", flags or "none"))
    return pd.DataFrame(fields, columns=["field", "value"])


def _missing(value: object) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value))


def _text(value: object) -> str:
    if _missing(value):
        return MISSING_LABEL
    return _label(value)


def query_ranking(ranked: pd.DataFrame, query_id: str) -> pd.DataFrame:
    """The rows of one query in a ranked run (``query_id, doc_id, score, rank``), by rank."""
    rows = ranked[ranked["query_id"] == query_id]
    return rows.sort_values("rank", ignore_index=True)


def query_qrels(qrels: pd.DataFrame, query_id: str) -> pd.DataFrame:
    """The qrels rows of one query (all relevance levels)."""
    return qrels[qrels["query_id"] == query_id]


def entity_index(entities: pd.DataFrame) -> pd.Series:
    """``doc_id`` -> position of its first row in ``entities`` (build once per entity table, so
    that :func:`entities_for` does not scan a large knowledge base on every query)."""
    ids = entities["doc_id"].astype("str")
    first = ~ids.duplicated(keep="first").to_numpy()
    return pd.Series(np.flatnonzero(first), index=pd.Index(ids[first].to_numpy(), name="doc_id"))


def entities_for(
    entities: pd.DataFrame | None, index: pd.Series | None, doc_ids: Sequence[str] | pd.Series
) -> pd.DataFrame | None:
    """The entity rows of ``doc_ids`` (ids absent from the table are left out), via an
    :func:`entity_index`; ``None`` when there is no entity table."""
    if entities is None:
        return None
    if index is None:
        index = entity_index(entities)
    positions = index.reindex(pd.Index(pd.unique(np.asarray(doc_ids, dtype=object)))).dropna()
    return entities.iloc[positions.to_numpy(dtype=np.int64)]


def gold_with_ranks(gold: pd.DataFrame, ranking: pd.DataFrame) -> pd.DataFrame:
    """The gold table of one query (:func:`analysis.present.rankings.gold_table`) with ``rank``:
    each gold document's rank in the model's list (nullable integer, missing when not retrieved), as
    the second column; ordered by rank, unretrieved last, then as given."""
    ranks = ranking.drop_duplicates("doc_id").set_index("doc_id")["rank"]
    out = gold.copy()
    out.insert(1, "rank", out["doc_id"].map(ranks).astype("Int64"))
    order = out["rank"].astype("float64").fillna(np.inf).to_numpy()
    return out.iloc[np.argsort(order, kind="stable")].reset_index(drop=True)
