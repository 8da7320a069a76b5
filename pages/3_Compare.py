"""Compare: model A against model B, query by query.

Summary (means with CIs, win/tie/loss, three paired tests, effect size), the per-query scatter
(A on x, B on y) and the delta histogram, the biggest wins and losses, the selected query with
both rankings side by side, and per-slice deltas with Holm-corrected p-values.

Page-local URL parameters: ``q`` and ``qd`` (the selected query id and its dataset), ``bin`` (the
selected bar of the delta histogram), ``slice`` (the slice column of the per-slice table, or
``all``). A click on a scatter point, a histogram bar or a table row sets them; a link with them
reopens the same view.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from analysis.core.errors import InputError
from analysis.present import compare
from analysis.present.rankings import gold_table, ranking_table, side_by_side
from analysis.stats import compare_slices
from analysis.stats.perquery import slice_columns
from ui import data, widgets
from ui.state import local_param, set_local_param, sidebar

st.set_page_config(page_title="Compare", layout="wide")
sel = sidebar()

TOP = 20
N_CHANGES = 10
ALL_SLICES = "all"
SEEN = "_compare_seen"
SLICE_KEY = "cmp_slice"

HELP = {
    "n": "Queries scored by both models in the selected datasets (paired by dataset and "
    "query id). Queries scored by only one model are left out.",
    "mean": "Mean of the metric over the paired queries, with a seeded 95% percentile bootstrap "
    "CI (10,000 resamples).",
    "delta": "Mean of the per-query difference d = A − B (positive: A better), with a seeded "
    "95% percentile bootstrap CI of that mean (10,000 resamples).",
    "wtl": "Queries where A scores higher than B / the same / lower, on the selected metric.",
    "p_t": "Paired t-test (two-sided) of mean(A − B) = 0. Assumes the mean difference is roughly "
    "normal, which holds for many queries even when single differences are not.",
    "p_wilcoxon": "Wilcoxon signed-rank test (two-sided): are the differences A − B symmetric "
    "around 0? Uses ranks of |d|, so it is robust to a few large differences; queries with "
    "d = 0 are dropped.",
    "p_randomization": "Paired randomization test (two-sided sign-flip): how often randomly "
    "swapping A and B within queries gives |sum of d| at least the observed one. 10,000 seeded "
    "random flips (exact enumeration when few queries differ); assumption-free.",
    "d_z": "Effect size, Cohen's d_z = mean(d) / sd(d): the mean difference in units of its "
    "per-query spread (about 0.2 small, 0.5 medium, 0.8 large).",
}

# --------------------------------------------------------------------------- cached computations


def _fingerprint(datasets: tuple[str, ...]) -> tuple:
    """(path, mtime, size) of every file behind the per-query tables, and the uploads: part of
    every cache key below, so an edited file is evaluated again."""
    assert sel.bundle is not None
    out = []
    for name in datasets:
        spec = sel.bundle.datasets[name]
        files = (spec.queries, spec.qrels, spec.query_groups, spec.metapaths,
                 *spec.splits.values(), *spec.runs.values())  # fmt: skip
        ups = tuple((m, f, len(c), hash(c)) for m, (f, c) in data.uploads(name).items())
        out.append((name, data.stamp(*files), ups))
    return tuple(out)


@st.cache_data(max_entries=32, show_spinner=False)
def _paired(
    bundle_id: str,
    datasets: tuple[str, ...],
    models: tuple[str, str],
    metric: str,
    ties: str,
    fingerprint: tuple,
    _table: pd.DataFrame,
) -> dict:
    """Paired table (with the histogram bar of each query), bars, biggest changes, slices."""
    del bundle_id, datasets, ties, fingerprint  # cache key only
    paired = compare.pair_models(_table, models[0], models[1], metric)
    info = dict(paired.attrs)
    bins, ids = compare.histogram_bins(paired["delta"])
    paired["bin"] = ids
    wins, losses = compare.biggest_changes(paired, N_CHANGES)
    return {
        "paired": paired,
        "info": info,
        "bins": bins,
        "wins": wins,
        "losses": losses,
        "slices": [c for c in slice_columns(_table) if c in _table.columns],
    }


@st.cache_data(max_entries=32, show_spinner="Computing the paired tests…")
def _summary(
    bundle_id: str,
    datasets: tuple[str, ...],
    models: tuple[str, str],
    metric: str,
    ties: str,
    fingerprint: tuple,
    _paired: pd.DataFrame,
) -> compare.Summary:
    del bundle_id, datasets, models, metric, ties, fingerprint
    return compare.summarize(_paired)


@st.cache_data(max_entries=32, show_spinner="Comparing slices (bootstrap and randomization)…")
def _slices(
    bundle_id: str,
    datasets: tuple[str, ...],
    models: tuple[str, str],
    metric: str,
    ties: str,
    slice_cols: tuple[str, ...],
    fingerprint: tuple,
    _table: pd.DataFrame,
) -> pd.DataFrame:
    del bundle_id, datasets, ties, fingerprint
    comp = compare_slices(_table, [metric], models[0], models[1], list(slice_cols))
    return compare.slice_view(comp)


@st.cache_resource(max_entries=16, show_spinner=False)
def _scatter(
    bundle_id: str,
    datasets: tuple[str, ...],
    models: tuple[str, str],
    metric: str,
    ties: str,
    fingerprint: tuple,
    _paired: pd.DataFrame,
) -> dict:
    """The scatter as a (read-only, shared) figure dict; the selected query is added per run."""
    del bundle_id, datasets, ties, fingerprint
    return compare.lists_for_json(compare.scatter_figure(_paired, models, metric).to_dict())


@st.cache_data(max_entries=64, show_spinner=False)
def _query_tables(
    bundle_id: str,
    dataset: str,
    models: tuple[str, str],
    ties: str,
    query_id: str,
    fingerprint: tuple,
) -> dict[str, pd.DataFrame]:
    """One query's gold table (with each model's rank of every gold document), both top-k
    rankings and the side-by-side table. Raises InputError/OSError when loading fails."""
    del bundle_id, fingerprint
    assert sel.bundle is not None
    ds = data.dataset(sel.bundle, dataset)
    threshold = sel.bundle.datasets[dataset].relevance_threshold
    runs = []
    for model in models:
        ranked = data.ranked_run(sel.bundle, dataset, model, ties)
        runs.append(ranked[ranked["query_id"] == query_id])
    gold = gold_table(ds.qrels, ds.entities, query_id, threshold=threshold)
    rankings = [
        ranking_table(run, ds.qrels, ds.entities, query_id, top=TOP, threshold=threshold)
        for run in runs
    ]
    return {
        "gold": compare.gold_with_ranks(gold, runs[0], runs[1], query_id),
        "a": rankings[0],
        "b": rankings[1],
        "both": side_by_side(rankings[0], rankings[1], models),
    }


# --------------------------------------------------------------------------- selection events


def _new_event(key: str) -> tuple[bool, object]:
    """Whether the selection held by widget ``key`` changed since it was last seen (a click), and
    the selection. A selection a widget keeps over later reruns is not new."""
    state = st.session_state.get(key)
    signature = compare.selection_signature(state)
    seen = st.session_state.setdefault(SEEN, {})
    if signature == seen.get(key, ""):
        return False, state
    seen[key] = signature
    return True, state


def _open_query(found: tuple[str, str] | None) -> None:
    if found is not None:
        set_local_param("qd", found[0])
        set_local_param("q", found[1])


def _close_query() -> None:
    set_local_param("q", None)
    set_local_param("qd", None)


def _clear_bin() -> None:
    set_local_param("bin", None)


def _on_slice() -> None:
    set_local_param("slice", st.session_state[SLICE_KEY])


# --------------------------------------------------------------------------- page

st.title("Compare two models")
widgets.require_datasets(sel)
if sel.model_a is None:
    st.info("The selected datasets have no run: add a run to compare models.")
    st.stop()
if sel.model_b is None:
    st.info(
        "Compare needs two models, and the selected datasets have a single one. Select "
        "datasets with at least two runs, or add a run (upload on the Home page)."
    )
    st.stop()

table, _warnings, errors = data.per_query(sel.bundle, sel.datasets, sel.ties, sel.split)
widgets.show_errors(errors)
if table.empty or sel.metric not in table.columns:
    st.info("No per-query results to compare for this selection.")
    st.stop()

models = (sel.model_a, sel.model_b)
datasets = tuple(sel.datasets)
fp = _fingerprint(datasets)
key = (sel.bundle_id, datasets, models, sel.metric, sel.ties)
try:
    base = _paired(*key, fp, table)
except ValueError as exc:
    st.error("The per-query rows of the two models cannot be paired:")
    st.text(str(exc))
    st.stop()
paired: pd.DataFrame = base["paired"]
info: dict = base["info"]
bins: pd.DataFrame = base["bins"]

st.text(f"A: {sel.model_a}    B: {sel.model_b}    metric: {sel.metric}    ties: {sel.ties}")
st.caption(widgets.metric_help(sel.measure) + " Delta is A − B: positive means A is better.")
if info.get("unpaired_datasets"):
    st.text("Left out (no run of A or of B): " + ", ".join(info["unpaired_datasets"]))
if paired.empty:
    st.info(
        "No query is scored by both models in the selected datasets: choose two models that "
        "share a dataset."
    )
    st.stop()
skipped = info.get("n_only_a", 0) + info.get("n_only_b", 0) + info.get("n_missing", 0)
if skipped:
    st.caption(
        f"{skipped} queries are left out: scored by only one of the models, or without a value "
        "of the metric."
    )

# Clicks of the previous run, handled before drawing so every view shows the new selection.
new, event = _new_event("scatter")
if new:
    _open_query(compare.point_query(event))
for table_key, shown in (("wins", base["wins"]), ("losses", base["losses"])):
    new, event = _new_event(table_key)
    if new:
        _open_query(compare.row_query(event, shown))
new, event = _new_event("delta_hist")
if new:
    chosen = compare.point_bin(event)
    set_local_param("bin", None if chosen is None else str(chosen))

bin_param = local_param("bin")
selected_bin = int(bin_param) if bin_param and bin_param.isdigit() else None
if selected_bin is not None and selected_bin not in set(bins["bin"]):
    selected_bin = None
    _clear_bin()
bin_rows = pd.DataFrame()
if selected_bin is not None:
    rows = paired[paired["bin"] == selected_bin].sort_values("delta", ascending=False)
    bin_rows = compare.query_list(rows)
    new, event = _new_event("bin_queries")
    if new:
        _open_query(compare.row_query(event, bin_rows))

q_param, qd_param = local_param("q"), local_param("qd")
selected = compare.resolve_query(paired, q_param, qd_param)
if q_param and selected is None:
    st.warning(
        "The query in the link is not among the queries both models scored in the selected "
        "datasets; it was cleared."
    )
    _close_query()
elif selected is not None and qd_param != selected[0]:
    set_local_param("qd", selected[0])

# ---- summary
summary = _summary(*key, fp, paired)
comp = summary.comparison
st.subheader("Summary")
cols = st.columns(5)
cols[0].metric("Paired queries", f"{comp.n:,}", help=HELP["n"])
cols[1].metric("Mean A", compare.format_value(comp.mean_a), help=HELP["mean"])
cols[1].caption("95% CI " + compare.format_ci(*summary.ci_a))
cols[2].metric("Mean B", compare.format_value(comp.mean_b), help=HELP["mean"])
cols[2].caption("95% CI " + compare.format_ci(*summary.ci_b))
cols[3].metric("Delta (A − B)", compare.format_value(comp.delta, "+.3f"), help=HELP["delta"])
cols[3].caption("95% CI " + compare.format_ci(comp.ci_low, comp.ci_high))
cols[4].metric("Effect size d_z", compare.format_value(comp.effect_size, "+.2f"), help=HELP["d_z"])
cols = st.columns([2, 1, 1, 1])
cols[0].metric("Win / tie / loss (A)", f"{comp.wins} / {comp.ties} / {comp.losses}",
               help=HELP["wtl"])  # fmt: skip
cols[1].metric("p (paired t-test)", compare.format_p(comp.p_t), help=HELP["p_t"])
cols[2].metric("p (Wilcoxon)", compare.format_p(comp.p_wilcoxon), help=HELP["p_wilcoxon"])
cols[3].metric(
    "p (randomization)", compare.format_p(comp.p_randomization), help=HELP["p_randomization"]
)
cols[3].caption("exact enumeration" if comp.randomization_exact else "10,000 random sign flips")

# ---- charts
left, right = st.columns([3, 2])
with left:
    st.subheader("Per query: A against B")
    discrete = compare.is_discrete(pd.concat([paired["a"], paired["b"]]))
    st.caption(
        "One point per query; below the dashed diagonal A is better. Click a point to open the "
        "query below."
        + (" Points are jittered slightly (display only): the metric takes few values." if discrete
           else "")
    )  # fmt: skip
    figure = compare.highlight_query(_scatter(*key, fp, paired), selected)
    st.plotly_chart(figure, on_select="rerun", selection_mode="points", key="scatter")
with right:
    st.subheader("Delta histogram")
    st.caption("Green: A better, red: B better, grey: ties. Click a bar to list its queries.")
    hist = compare.delta_histogram(bins, models, sel.metric, selected_bin=selected_bin)
    st.plotly_chart(hist, on_select="rerun", selection_mode="points", key="delta_hist")

column_config = {
    "a": st.column_config.NumberColumn("A", format="%.3f", help="Model A's value"),
    "b": st.column_config.NumberColumn("B", format="%.3f", help="Model B's value"),
    "delta": st.column_config.NumberColumn("delta", format="%+.3f", help="A − B"),
    "rank_a": st.column_config.NumberColumn("first gold A", format="%d",
                                            help="Rank of the first gold document in A's list"),
    "rank_b": st.column_config.NumberColumn("first gold B", format="%d",
                                            help="Rank of the first gold document in B's list"),
}  # fmt: skip

if selected_bin is not None:
    label = str(bins.loc[bins["bin"] == selected_bin, "label"].iloc[0])
    st.subheader("Queries in the selected bar")
    st.text(f"delta {label}: {len(bin_rows)} queries (select a row to open the query)")
    st.dataframe(
        bin_rows, hide_index=True, width="stretch", height=260, column_config=column_config,
        on_select="rerun", selection_mode="single-row", key="bin_queries",
    )  # fmt: skip
    st.button("Clear bar selection", on_click=_clear_bin, key="clear_bin")

# ---- biggest wins and losses
st.subheader("Biggest wins and losses")
st.caption(
    f"Top {N_CHANGES} queries by delta each way (ties in delta ordered by dataset and query id). "
    "Select a row to open the query."
)
left, right = st.columns(2)
with left:
    st.markdown("**A better (largest delta)**")
    if base["wins"].empty:
        st.info("A wins no query.")
    st.dataframe(
        base["wins"], hide_index=True, width="stretch", column_config=column_config,
        on_select="rerun", selection_mode="single-row", key="wins",
    )  # fmt: skip
with right:
    st.markdown("**B better (most negative delta)**")
    if base["losses"].empty:
        st.info("A loses no query.")
    st.dataframe(
        base["losses"], hide_index=True, width="stretch", column_config=column_config,
        on_select="rerun", selection_mode="single-row", key="losses",
    )  # fmt: skip

# ---- the selected query
st.subheader("Query")
if selected is None:
    st.caption("Click a point in the scatter or select a row of a table to show a query here.")
else:
    ds_name, qid = selected
    row = paired[(paired["dataset"] == ds_name) & (paired["query_id"] == qid)].iloc[0]
    st.text(f"dataset: {ds_name}    query id: {qid}")
    if "text" in paired.columns:
        st.text(str(row["text"]))
    cols = st.columns(5)
    cols[0].metric(f"A ({sel.metric})", f"{row['a']:.3f}", help=widgets.metric_help(sel.measure))
    cols[1].metric(f"B ({sel.metric})", f"{row['b']:.3f}", help=widgets.metric_help(sel.measure))
    cols[2].metric("Delta (A − B)", f"{row['delta']:+.3f}", help=HELP["delta"])
    for col, name, label in ((cols[3], "rank_a", "A"), (cols[4], "rank_b", "B")):
        if name in paired.columns:
            value = row[name]
            col.metric(
                f"First gold rank, {label}",
                "none" if pd.isna(value) else f"{value:.0f}",
                help="Rank of the first relevant document in the model's whole list.",
            )
    st.button("Close query", on_click=_close_query, key="close_query")
    try:
        tables = _query_tables(sel.bundle_id, ds_name, models, sel.ties, qid, fp)
    except (InputError, OSError) as exc:
        st.error("The dataset of this query could not be loaded:")
        st.text(str(exc))
    else:
        st.markdown("**Gold documents**")
        st.dataframe(
            tables["gold"], hide_index=True, width="stretch", key="gold",
            column_config={
                "rank_a": st.column_config.NumberColumn("rank in A", help="Rank in A's list"),
                "rank_b": st.column_config.NumberColumn("rank in B", help="Rank in B's list"),
            },
        )  # fmt: skip
        st.markdown(f"**Top {TOP} of both models** (gold documents highlighted)")
        tabs = st.tabs(["Side by side", "Model A with text", "Model B with text"])
        with tabs[0]:
            narrow = {
                f"{name}: {col}": st.column_config.Column(width="small")
                for name in models
                for col in ("doc_id", "gold")
            }
            st.dataframe(
                tables["both"].style.apply(compare.gold_highlight, axis=None),
                hide_index=True, width="stretch", key="side_by_side", column_config=narrow,
            )  # fmt: skip
        for tab, side in ((tabs[1], "a"), (tabs[2], "b")):
            with tab:
                if tables[side].empty:
                    st.info("The model returned no document for this query.")
                st.dataframe(
                    tables[side], hide_index=True, width="stretch", key=f"ranking_{side}",
                    column_config={"gold": st.column_config.CheckboxColumn("gold", pinned=True)},
                )  # fmt: skip

# ---- per-slice deltas
st.subheader("Per-slice deltas")
options = [*base["slices"], ALL_SLICES]
default = next(
    (c for c in (("dataset",) if len(set(paired["dataset"])) > 1 else ()) + ("query_type",)
     if c in options),
    options[0],
)  # fmt: skip
wanted = local_param("slice")
st.session_state[SLICE_KEY] = wanted if wanted in options else default
choice = st.selectbox(
    "Slice by",
    options,
    key=SLICE_KEY,
    on_change=_on_slice,
    format_func=lambda c: "all slice columns" if c == ALL_SLICES else c,
    help="Each value of the column is one slice. The Holm correction runs over every row of "
    "the table (the 'all' row and each slice).",
)
slice_cols = tuple(base["slices"]) if choice == ALL_SLICES else (choice,)
st.caption(
    "Delta = mean(A − B) on the slice with a seeded 95% bootstrap CI; p_randomization is the "
    "paired sign-flip test; p_holm is Holm-corrected over all rows shown; significant: "
    "p_holm < 0.05."
)
try:
    view = _slices(*key[:4], sel.ties, slice_cols, fp, table)
except ValueError as exc:
    st.warning("Per-slice comparison not available:")
    st.text(str(exc))
else:
    st.dataframe(
        view, hide_index=True, width="stretch", key="slice_table",
        column_config={
            "mean_a": st.column_config.NumberColumn("mean A", format="%.3f"),
            "mean_b": st.column_config.NumberColumn("mean B", format="%.3f"),
            "delta": st.column_config.NumberColumn("delta", format="%+.3f", help="A − B"),
            "ci": st.column_config.TextColumn("95% CI", help="Bootstrap CI of the delta"),
            "d_z": st.column_config.NumberColumn("d_z", format="%+.2f", help=HELP["d_z"]),
            "p_randomization": st.column_config.NumberColumn(
                "p (randomization)", format="%.4f", help=HELP["p_randomization"]
            ),
            "p_holm": st.column_config.NumberColumn(
                "p (Holm)", format="%.4f", help="Holm-adjusted randomization p-value"
            ),
        },
    )  # fmt: skip
