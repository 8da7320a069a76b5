"""Streamlit glue of the Compare page: cached computations keyed by the per-query table's
fingerprint, click events of charts and tables, and the help texts."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from analysis.present import compare, overlap
from analysis.present.rankings import gold_table, ranking_table, side_by_side
from analysis.stats import compare_slices, disagree
from analysis.stats.perquery import slice_columns
from ui import data, widgets
from ui.state import Selection
from ui.urlstate import write_param

TOP = 20
N_CHANGES = 10
SEEN = "_compare_seen"

HELP = {
    "n": "Queries of the dataset scored by both models (paired by query id). Queries scored by "
    "only one model are left out.",
    "mean": "Mean of the metric over the paired queries, with a seeded 95% percentile bootstrap "
    "CI (10,000 resamples).",
    "delta": "Mean of the per-query difference d = A − B (positive: A better), with a seeded "
    "95% percentile bootstrap CI of that mean (10,000 resamples).",
    "wtl": "Queries where A scores higher than B / the same / lower, on the selected metric.",
    "p_t": "Paired t-test (two-sided) of mean(A − B) = 0.",
    "p_wilcoxon": "Wilcoxon signed-rank test (two-sided) of the differences A − B; queries with "
    "d = 0 are dropped.",
    "p_randomization": "Paired randomization test (two-sided sign-flip), 10,000 seeded random "
    "flips (exact enumeration when few queries differ); assumption-free.",
    "d_z": "Effect size, Cohen's d_z = mean(d) / sd(d) (about 0.2 small, 0.5 medium, 0.8 large).",
    "jaccard": "Jaccard@k = |top-k(A) ∩ top-k(B)| / |top-k(A) ∪ top-k(B)|: 1 = same documents, "
    "0 = none shared. Needs no relevance judgements.",
}


@st.cache_resource(max_entries=32, show_spinner=False)
def paired(key: tuple, models: tuple[str, str], metric: str, _table: pd.DataFrame) -> dict:
    """Paired table (with the histogram bar of each query), bars, biggest changes, slices.
    Raises ValueError when the rows cannot be paired."""
    table = compare.pair_models(_table, models[0], models[1], metric)
    info = dict(table.attrs)
    bins, ids = compare.histogram_bins(table["delta"])
    table["bin"] = ids
    wins, losses = compare.biggest_changes(table, N_CHANGES)
    slices = [c for c in slice_columns(_table) if c != "dataset"]
    return {"paired": table, "info": info, "bins": bins, "wins": wins, "losses": losses,
            "slices": slices}  # fmt: skip


@st.cache_resource(max_entries=32, show_spinner="Computing the paired tests…")
def summary(key: tuple, models: tuple[str, str], metric: str, _paired: pd.DataFrame):
    return compare.summarize(_paired)


@st.cache_resource(max_entries=128, show_spinner="Comparing slices (bootstrap, randomization)…")
def slices(
    key: tuple, models: tuple[str, str], metric: str, cols: tuple[str, ...], _table: pd.DataFrame
) -> pd.DataFrame:
    comp = compare_slices(_table, [metric], models[0], models[1], list(cols))
    return compare.slice_view(comp)


@st.cache_resource(max_entries=16, show_spinner=False)
def scatter(key: tuple, models: tuple[str, str], metric: str, _paired: pd.DataFrame) -> dict:
    """The scatter as a (read-only, shared) figure dict; the selected query is added per run."""
    return compare.lists_for_json(compare.scatter_figure(_paired, models, metric).to_dict())


@st.cache_resource(max_entries=16, show_spinner="Comparing the two rankings…")
def rankings(_sel: Selection, key: tuple, models: tuple[str, str], k: int) -> dict:
    """Top-k overlap per query (most different first, with RBO when available) and every gold
    document's rank in A and B with the transition matrix. ``key`` (the table's fingerprint)
    names the dataset, split and tie policy of ``_sel``."""
    sel = _sel
    assert sel.bundle is not None
    assert sel.dataset is not None
    name = sel.dataset
    runs = [data.ranked_run(sel.bundle, name, m, sel.ties) for m in models]
    ds = data.dataset(sel.bundle, name, sel.split or data.ALL)
    spec = sel.bundle.datasets[name]
    scored = set(runs[0]["query_id"]) | set(runs[1]["query_id"])
    keep = set(ds.qrels["query_id"]) if spec.splits else scored
    runs = [r.loc[r["query_id"].isin(keep)] for r in runs]
    lap = overlap.topk_overlap(runs[0], runs[1], k)
    lap = _with_rbo(lap, runs, k, sel.ties)
    changes = overlap.gold_rank_changes(
        runs[0], runs[1], ds.qrels, threshold=spec.relevance_threshold,
        queries=sorted(keep & set(ds.qrels["query_id"])),
    )  # fmt: skip
    return {"overlap": lap, "changes": changes, "matrix": overlap.transition_matrix(changes)}


def _with_rbo(lap: pd.DataFrame, runs: list[pd.DataFrame], k: int, ties: str) -> pd.DataFrame:
    """Add ``rbo`` and ``tau_ap`` of the two top-k lists (:mod:`analysis.stats.disagree`)."""
    table = disagree.disagreement(runs[0], runs[1], k=k, ties=ties)  # type: ignore[arg-type]
    return lap.merge(table[["query_id", "rbo", "tau_ap"]], on="query_id", how="left")


@st.cache_data(max_entries=64, show_spinner=False)
def query_tables(
    _sel: Selection, key: tuple, dataset: str, models: tuple[str, str], query_id: str
) -> dict[str, pd.DataFrame]:
    """One query's gold table (with each model's rank of every gold document), both top-k
    rankings and the side-by-side table. Raises InputError/OSError when loading fails."""
    sel = _sel
    assert sel.bundle is not None
    ds = data.dataset(sel.bundle, dataset)
    threshold = sel.bundle.datasets[dataset].relevance_threshold
    runs = []
    for model in models:
        ranked = data.ranked_run(sel.bundle, dataset, model, sel.ties)
        runs.append(ranked[ranked["query_id"] == query_id])
    gold = gold_table(ds.qrels, ds.entities, query_id, threshold=threshold)
    tops = [
        ranking_table(run, ds.qrels, ds.entities, query_id, top=TOP, threshold=threshold)
        for run in runs
    ]
    return {
        "gold": compare.gold_with_ranks(gold, runs[0], runs[1], query_id),
        "a": tops[0],
        "b": tops[1],
        "both": side_by_side(tops[0], tops[1], models),
    }


def new_event(key: str) -> tuple[bool, object]:
    """Whether the selection held by widget ``key`` changed since it was last seen (a click), and
    the selection. A selection a widget keeps over later reruns is not new."""
    state = st.session_state.get(key)
    signature = compare.selection_signature(state)
    seen = st.session_state.setdefault(SEEN, {})
    if signature == seen.get(key, ""):
        return False, state
    seen[key] = signature
    return True, state


def open_query(found: tuple[str, str] | None) -> None:
    if found is not None:
        write_param("qd", found[0])
        write_param("q", found[1])


def close_query() -> None:
    write_param("q", None)
    write_param("qd", None)


def draw_query(
    sel: Selection,
    key: tuple,
    paired: pd.DataFrame,
    selected: tuple[str, str],
    models: tuple[str, str],
    changes: pd.DataFrame,
) -> None:
    """The selected query: text, both values, first-gold ranks, its Δrank chart, the gold
    documents with both ranks and the two top-20 lists (gold rows highlighted)."""
    from analysis.core.errors import InputError

    ds_name, qid = selected
    row = paired[(paired["dataset"] == ds_name) & (paired["query_id"] == qid)].iloc[0]
    st.text(f"query id: {qid}")
    if "text" in paired.columns:
        widgets.query_text(str(row["text"]))
    cols = st.columns(5)
    cols[0].metric(f"A ({sel.metric})", f"{row['a']:.3f}")
    cols[1].metric(f"B ({sel.metric})", f"{row['b']:.3f}")
    cols[2].metric("Delta (A − B)", f"{row['delta']:+.3f}", help=HELP["delta"])
    for col, name, label in ((cols[3], "rank_a", "A"), (cols[4], "rank_b", "B")):
        if name in paired.columns:
            value = row[name]
            col.metric(f"First gold rank, {label}", "none" if pd.isna(value) else f"{value:.0f}")
    st.button("Close query", on_click=close_query, key="close_query")
    try:
        tables = query_tables(sel, key, ds_name, models, qid)
    except (InputError, OSError) as exc:
        st.error("The dataset of this query could not be loaded:")
        st.text(str(exc))
        return
    left, right = st.columns([1, 2])
    with left:
        mine = changes.loc[changes["query_id"] == qid]
        ranks = changes[["rank_a", "rank_b"]].to_numpy(dtype=float, na_value=0.0)
        depth = int(max(float(ranks.max(initial=0.0)), TOP))
        st.markdown("**Δrank of each gold document**")
        if mine.empty:
            st.info("This query has no gold document.")
        else:
            st.plotly_chart(overlap.query_rank_figure(mine, models, depth), key="query_rank")
    with right:
        st.markdown("**Gold documents** (rank in A and in B)")
        st.dataframe(tables["gold"], hide_index=True, width="stretch", key="gold")
    st.markdown(f"**Top {TOP} of both models** (gold documents highlighted)")
    tabs = st.tabs(["Side by side", "Model A with text", "Model B with text"])
    with tabs[0]:
        st.dataframe(tables["both"].style.apply(compare.gold_highlight, axis=None),
                     hide_index=True, width="stretch", key="side_by_side")  # fmt: skip
    for tab, side in ((tabs[1], "a"), (tabs[2], "b")):
        with tab:
            if tables[side].empty:
                st.info("The model returned no document for this query.")
            st.dataframe(tables[side], hide_index=True, width="stretch", key=f"ranking_{side}")
