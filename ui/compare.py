"""Streamlit glue of the Compare page: cached computations keyed by the per-query table's
fingerprint, click events of charts and tables, and the help texts."""

from __future__ import annotations

import html

import numpy as np
import pandas as pd
import streamlit as st

from analysis.present import compare, overlap, paper_figures
from analysis.present import groups as groups_view
from analysis.present.diffsummary import Outcome, diff_sentences
from analysis.present.notices import no_text_note
from analysis.present.rankings import gold_table, ranking_table, side_by_side
from analysis.present.slicing import default_slice_column, slice_labels
from analysis.stats import compare_slices, disagree
from analysis.stats.coverage import suspected_missing_answers
from analysis.stats.groups import group_members, model_matrix, seed_sensitivity
from analysis.stats.perquery import slice_columns
from analysis.stats.rankdiff import poi_places, rank_diff
from ui import data, paper, widgets
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


@st.cache_resource(max_entries=16, show_spinner=False)
def default_slice(key: tuple, _table: pd.DataFrame, columns: tuple[str, ...]) -> str | None:
    """The per-slice table's default column: the first of ``columns`` with more than one
    value on this dataset (:func:`analysis.present.slicing.default_slice_column`), ``None``
    when no column varies (then the table shows every column)."""
    column = default_slice_column(_table, list(columns))
    if column is None:
        return None
    labels = slice_labels(_table[column])
    return column if len(labels) and (labels != labels.iloc[0]).any() else None


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


@st.cache_resource(max_entries=32, show_spinner=False)
def highlighted(
    key: tuple, models: tuple[str, str], metric: str, selected: tuple[str, str] | None,
    _paired: pd.DataFrame,
) -> dict:  # fmt: skip
    """The scatter's figure dict with the ring around ``selected`` (:func:`scatter` itself
    when ``selected`` is None or not among its points), once per selected query."""
    base = scatter(key, models, metric, _paired)
    if selected is None:
        return base
    return compare.with_highlight(base, selected)


@st.cache_resource(max_entries=32, show_spinner=False)
def histogram(
    key: tuple, models: tuple[str, str], metric: str, selected_bin: int | None,
    _bins: pd.DataFrame,
) -> dict:  # fmt: skip
    """The delta histogram (:func:`compare.delta_histogram`) as a (read-only, shared) figure
    dict, once per selected bar."""
    figure = compare.delta_histogram(_bins, models, metric, selected_bin=selected_bin)
    return compare.lists_for_json(figure.to_dict())


@st.cache_resource(max_entries=16, show_spinner=False)
def transition(key: tuple, models: tuple[str, str], k: int, _matrix: pd.DataFrame) -> dict:
    """The gold-rank transition heatmap of :func:`rankings`' matrix (same key) as a
    (read-only, shared) figure dict."""
    return compare.lists_for_json(overlap.transition_figure(_matrix, models).to_dict())


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
    scored = set(runs[0]["query_id"].unique()) | set(runs[1]["query_id"].unique())
    judged = set(ds.qrels["query_id"].unique())
    keep = judged if spec.splits else scored
    runs = [r.loc[r["query_id"].isin(keep)] for r in runs]
    lap = overlap.topk_overlap(runs[0], runs[1], k)
    lap = _with_rbo(lap, runs, k, sel.ties)
    changes = overlap.gold_rank_changes(
        runs[0], runs[1], ds.qrels, threshold=spec.relevance_threshold,
        queries=sorted(keep & judged),
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
        _with_text_note(
            ranking_table(run, ds.qrels, ds.entities, query_id, top=TOP, threshold=threshold),
            ds.spec.family,
        )
        for run in runs
    ]
    return {
        "gold": compare.gold_with_ranks(gold, runs[0], runs[1], query_id),
        "a": tops[0],
        "b": tops[1],
        "both": side_by_side(tops[0], tops[1], models),
    }


def _export_query_rank(sel: Selection, shown: tuple, changes: pd.DataFrame, depth: int) -> None:
    """The export for a paper of one query's Δrank chart (``shown``: key, models, dataset,
    query id)."""
    _, models, dataset, qid = shown
    paper.export_control(
        "cmp_query_rank", shown, paper.file_stem(sel.bundle_id, dataset, qid, "gold-ranks"),
        lambda: paper_figures.query_rank_paper(changes, models, depth, dataset=dataset, query=qid),
    )  # fmt: skip


def _with_text_note(table: pd.DataFrame, family: str) -> pd.DataFrame:
    """A ranking without entity names or text gets a ``text`` column saying why (no SKB, no
    entities file) instead of nothing."""
    if table.empty or {"name", "text"} & set(table.columns):
        return table
    return table.assign(text=no_text_note(family))


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
    table: pd.DataFrame,
) -> None:
    """The selected query: text, both values, first-gold ranks, the written diff of the two
    rankings, its Δrank chart, the gold documents with both ranks and the two top-20 lists
    (gold rows highlighted)."""
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
        sentences = written_diff(sel, key, selected, models, table)
    except (InputError, OSError) as exc:
        st.error("The dataset of this query could not be loaded:")
        st.text(str(exc))
        return
    draw_written_diff(sentences, models, group_members(table))
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
            _export_query_rank(sel, (key, models, ds_name, qid), mine, depth)
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


#: Style of the written diff (:func:`draw_written_diff`).
DIFF_CSS = """<style>
ul.written-diff {margin: 0.2rem 0 0.8rem 1.1rem; padding: 0; line-height: 1.5}
ul.written-diff li {margin-bottom: 0.2rem; overflow-wrap: anywhere}
</style>"""


def draw_written_diff(
    sentences: list[tuple[str, str]], models: tuple[str, str], groups: dict
) -> None:
    """The written diff as an HTML list (every sentence HTML-escaped), with a note when a
    model is a seed group (its rankings are its first seed's)."""
    st.markdown("**What changed from A to B** (written from the numbers)")
    items = "".join(
        f'<li data-kind="{html.escape(kind)}">{html.escape(text)}</li>' for kind, text in sentences
    )
    st.html(f'{DIFF_CSS}<ul class="written-diff">{items}</ul>')
    for label, model in zip(("A", "B"), models, strict=True):
        kind, members = groups.get(model, ("run", []))
        if kind == "seeds":
            st.caption(widgets.escape_markdown(
                f"{label} = {model} is a seed group: its value is the mean of its "
                f"{len(members)} seeds; the rankings shown are its first seed's ({members[0]})."
            ))  # fmt: skip


@st.cache_resource(max_entries=16, show_spinner="Comparing every pair of seeds…")
def sensitivity(key: tuple, models: tuple[str, str], metric: str, _table: pd.DataFrame) -> dict:
    """The seed sensitivity of A against B (when one of them is a seed group): the figure's
    dict and the sentences; ``{}`` when neither is a seed group."""
    groups = group_members(_table)
    if not any(groups.get(m, ("run",))[0] == "seeds" for m in models):
        return {}
    ids_a, a = model_matrix(_table, models[0], metric)
    ids_b, b = model_matrix(_table, models[1], metric)
    common = ids_a.intersection(ids_b)
    a, b = a[ids_a.get_indexer(common)], b[ids_b.get_indexer(common)]
    keep = np.isfinite(a).all(axis=1) & np.isfinite(b).all(axis=1)
    result = seed_sensitivity(a[keep], b[keep])
    figure = groups_view.sensitivity_figure(result, models, groups, metric)
    return {"figure": compare.lists_for_json(figure.to_dict()),
            "text": groups_view.sensitivity_sentences(result, metric)}  # fmt: skip


@st.cache_resource(max_entries=4, show_spinner=False)
def _places(key: tuple, _entities: pd.DataFrame) -> dict:
    """POI stacks and twins of a spatial dataset (:func:`analysis.stats.rankdiff.poi_places`)."""
    return poi_places(_entities)


def written_diff(
    sel: Selection, key: tuple, selected: tuple[str, str], models: tuple[str, str],
    table: pd.DataFrame,
) -> list[tuple[str, str]]:  # fmt: skip
    """The written diff of the selected query (:mod:`analysis.present.diffsummary`): A's and
    B's rankings, the qrels, the suspected missing answers of both top k, the POI stacks and
    twins of a spatial dataset, and the metric's tie bounds from the per-query table."""
    assert sel.bundle is not None
    name, qid = selected
    ds = data.dataset(sel.bundle, name)
    spec = sel.bundle.datasets[name]
    runs = []
    for model in models:
        ranked = data.ranked_run(sel.bundle, name, model, sel.ties)
        runs.append(ranked.loc[ranked["query_id"] == qid])
    qrels = ds.qrels.loc[ds.qrels["query_id"].astype(str) == qid]
    suspects = suspected_missing_answers(
        pd.concat(runs), qrels, ds.entities, ds.edges, k=sel.k,
        relevance_threshold=spec.relevance_threshold,
    )  # fmt: skip
    located = ds.entities is not None and {"lat", "lon"} <= set(ds.entities.columns)
    places = _places(key, ds.entities) if located else None
    diff = rank_diff(*runs, qrels, k=sel.k, threshold=spec.relevance_threshold, ties=sel.ties,
                     suspects=set(suspects["doc_id"].astype(str)), places=places)  # fmt: skip
    rows = table.loc[(table["dataset"] == name) & (table["query_id"].astype(str) == qid)]
    (value_a, bounds_a), (value_b, bounds_b) = (
        _value_and_bounds(rows, m, sel.metric) for m in models
    )
    return diff_sentences(diff, Outcome(sel.metric, value_a, value_b, bounds_a, bounds_b))


def _value_and_bounds(
    rows: pd.DataFrame, model: str, metric: str
) -> tuple[float, tuple[float, float] | None]:
    row = rows.loc[rows["model"] == model].iloc[0]
    bounds = None
    if f"{metric}_min" in rows.columns and pd.notna(row[f"{metric}_min"]):
        bounds = (float(row[f"{metric}_min"]), float(row[f"{metric}_max"]))
    return float(row[metric]), bounds
