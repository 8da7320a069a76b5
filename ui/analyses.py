"""Streamlit glue of the Analyses page: cached computations, links to the Queries page and the
clicks on the taxonomy's counts.

Results are cached by ``key`` (file stamps and the ids of the cached ranked runs; an entry that
needs the ids keeps a reference to the runs, so an id cannot be reused): hashing the tables
would cost more than the rerun. Arguments starting with "_" are not hashed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

import pandas as pd
import streamlit as st

from analysis.io.amended import amended_qrels
from analysis.present.analyses_report import taxonomy_table
from analysis.stats.complementarity import intersections, oracle, solved_matrix
from analysis.stats.coverage import (
    coverage_summary,
    strict_and_amended,
    suspected_missing_answers,
)
from analysis.stats.disagree import disagreement, most_different
from analysis.stats.significance import pairs
from analysis.stats.taxonomy import CATEGORIES, classify_dataset, taxonomy_counts
from ui.state import Selection

NO_SLICE = "(none)"
SEEN = "_analyses_seen_cells"
SLICE = "_analyses_slice"  # (slice column, value) of the last click on the by-slice counts


@st.cache_resource(show_spinner=False, max_entries=16)
def taxonomy(key: tuple, _rows: pd.DataFrame, _ranked: dict, _ds: object, k: int) -> tuple:
    out = classify_dataset(_rows, _ranked, _ds.qrels, _ds.entities, _ds.edges, k=k)
    return out, taxonomy_table(out, list(_ranked)), _ranked


@st.cache_resource(show_spinner=False, max_entries=64)
def counts_by_slice(key: tuple, k: int, by: str, _classified: pd.DataFrame) -> pd.DataFrame:
    """The taxonomy counts per model and value of slice column ``by``: one row per (model,
    value), one column per category (:data:`CATEGORIES` order); ``key`` and ``k`` name the
    classification."""
    counts = taxonomy_counts(_classified, by=[by]).pivot_table(
        index=["model", by], columns="category", values="n", sort=False, observed=True
    )
    return counts.reindex(columns=list(CATEGORIES)).reset_index()


@st.cache_resource(show_spinner=False, max_entries=16)
def solved(key: tuple, _rows: pd.DataFrame, metric: str, thr: float, models: tuple) -> tuple:
    table = solved_matrix(_rows, metric, threshold=thr, models=list(models))
    return intersections(table), len(table)


@st.cache_resource(show_spinner=False, max_entries=16)
def best_of(key: tuple, _rows: pd.DataFrame, metric: str, models: tuple, by: str) -> pd.DataFrame:
    return oracle(_rows, metric, models=list(models), by=[] if by == NO_SLICE else [by])


@st.cache_resource(show_spinner=False, max_entries=16)
def model_pairs(key: tuple, _rows: pd.DataFrame, metric: str, models: tuple) -> pd.DataFrame:
    return pairs(_rows, metric, models=list(models), n_resamples=10_000)


@st.cache_resource(show_spinner=False, max_entries=16)
def disagree(key: tuple, _a: pd.DataFrame, _b: pd.DataFrame, k: int) -> tuple:
    return most_different(disagreement(_a, _b, k=k)), (_a, _b)


@st.cache_resource(show_spinner=False, max_entries=16)
def amended(
    key: tuple, marks: tuple, _ranked: dict, _ds: object, _j: object, heads: tuple, ties: str
) -> pd.DataFrame:
    """Strict and amended metrics; also keyed by the judgements themselves (``marks``)."""
    th = _ds.spec.relevance_threshold
    return strict_and_amended(
        _ranked, _ds.qrels, _j, list(heads), ties=ties, relevance_threshold=th
    )


@st.cache_resource(show_spinner=False, max_entries=16)
def coverage(key: tuple, marks: tuple, _ranked: dict, _ds: object, _j: object, k: int) -> tuple:
    """judged@k per query and model (:func:`coverage_summary`), keyed by the judgements too."""
    return (*coverage_summary(_ranked, _ds.qrels, k, _j), _ranked)


@st.cache_resource(show_spinner=False, max_entries=16)
def suspects(
    key: tuple, marks: tuple, model: str, _ranked: dict, _ds: object, _j: object, k: int
) -> tuple:
    """Suspected missing answers of ``model``'s top k against the qrels with the reviewers'
    judgements applied: a judged document (relevant or not) is no suspect any more."""
    qrels = _ds.qrels if _j is None or _j.empty else amended_qrels(_ds.qrels, _j)
    found = suspected_missing_answers(
        _ranked[model], qrels, _ds.entities, _ds.edges, k=k,
        relevance_threshold=_ds.spec.relevance_threshold,
    )  # fmt: skip
    return found, _ranked


def marks_of(judged: pd.DataFrame) -> tuple:
    """The judgements as a hashable cache key."""
    if judged.empty:
        return ()
    return tuple(judged[["query_id", "doc_id", "relevance"]].itertuples(index=False))


def query_links(sel: Selection, dataset: str, model: str, query_ids: Iterable[str]) -> list[str]:
    """Links that open each query on the Queries page with ``model`` as model A."""
    from urllib.parse import urlencode

    base = {**sel.url_params(), "a": model, "qd": dataset}
    return [f"Queries?{urlencode({**base, 'q': str(q)})}" for q in query_ids]


def link_column() -> object:
    return st.column_config.LinkColumn("open", display_text="Queries page")


def take_count_click(
    key: str, counts: pd.DataFrame, model_key: str, category_key: str, by: str | None = None
) -> None:
    """A click on a cell of a taxonomy count table (``model``, optionally the slice column
    ``by``, then one column per category) chooses that model and category below, and the
    slice value (:data:`SLICE`: ``(by, value)``, ``None`` for the table without slices), so
    the count's queries are listed. Only a new click counts: a selection the table still holds
    on later reruns does not undo a choice made in the boxes since."""
    state = st.session_state.get(key)
    cells = []
    if hasattr(state, "get"):
        cells = list((state.get("selection") or {}).get("cells") or [])
    signature = json.dumps(cells, default=str)
    seen = st.session_state.setdefault(SEEN, {})
    if seen.get(key) == signature:
        return
    seen[key] = signature
    if not cells:
        return
    row, column = cells[0][0], str(cells[0][1])
    if column not in CATEGORIES or not 0 <= int(row) < len(counts):
        return
    st.session_state[model_key] = str(counts["model"].iloc[int(row)])
    st.session_state[category_key] = column
    st.session_state[SLICE] = None if by is None else (by, counts[by].iloc[int(row)])


def slice_filter(rows: pd.DataFrame, by: str) -> tuple[pd.DataFrame, str | None]:
    """``rows`` cut to the slice value of the last click on the by-slice counts (when it was
    a click on column ``by``), and a label of that slice (``None``: no cut)."""
    chosen = st.session_state.get(SLICE)
    if not chosen or chosen[0] != by or by not in rows:
        return rows, None
    value = chosen[1]
    keep = rows[by].astype("str") == str(value)
    return rows[keep].reset_index(drop=True), f"{by} = {value}"


def clear_slice() -> None:
    st.session_state[SLICE] = None
