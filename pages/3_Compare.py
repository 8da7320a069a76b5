"""Compare: model A against model B on one dataset, query by query.

Summary (means with CIs, win/tie/loss, three paired tests, effect size), the seed sensitivity
when A or B is a seed group (its values are per-query seed means), the per-query scatter
and the delta histogram, how every gold document's rank moved from A to B, the queries where the
two rankings differ most (Jaccard@k, no qrels needed), the biggest wins and losses, the selected
query with the written diff and both rankings, and per-slice deltas with Holm-corrected
p-values. One dataset at a time: no test pools queries of different datasets. The gold-rank
transition and the most different rankings sit in expanders drawn only when opened (the page's
first paint holds the summary, the two charts and the tables of wins and losses).

Page-local URL parameters: ``q``/``qd`` (the selected query and its dataset), ``bin`` (a bar of
the delta histogram), ``slice`` (slice column of the per-slice table, or ``all``).
"""

from __future__ import annotations

import html

import pandas as pd
import streamlit as st

from analysis.present import compare, paper_figures
from analysis.present.groups import group_label
from analysis.stats.groups import group_members
from ui import cards, data, jobs, paper, widgets
from ui import compare as cmp
from ui.lazy import lazy_expander
from ui.state import sidebar
from ui.urlstate import local_param, url_widget, write_param

ALL_SLICES = "all"
st.set_page_config(page_title="Compare", layout="wide")
sel = sidebar()
st.title("Compare two models")
widgets.require_datasets(sel)
widgets.require_runs(sel, "pages/3_Compare.py")
if sel.model_b is None:
    widgets.explain_one_model(sel, "pages/3_Compare.py")
    st.stop()
table, _warnings, errors = jobs.need(
    "Computing the per-query table", data.per_query, sel.bundle, sel.datasets, sel.ties,
    sel.split,
)  # fmt: skip
widgets.show_errors(errors)
if table.empty or sel.metric not in table.columns:
    st.info("No per-query results to compare for this selection.")
    st.stop()

models = (sel.model_a, sel.model_b)
fp = data.fingerprint(sel.bundle, sel.datasets, sel.ties, sel.split)
dataset = str(sel.dataset)


def stem(figure: str) -> str:
    return paper.file_stem(sel.bundle_id, dataset, sel.metric, figure)


try:
    base = jobs.need("Pairing the two models' queries", cmp.paired, fp, models, sel.metric,
                     _table=table)  # fmt: skip
except ValueError as exc:
    st.error("The per-query rows of the two models cannot be paired:")
    st.text(str(exc))
    st.stop()
paired: pd.DataFrame = base["paired"]
bins: pd.DataFrame = base["bins"]
split = f", split {sel.split}" if sel.split else ""
groups = group_members(table)
label_a, label_b = (group_label(m, groups) for m in models)
st.text(f"A: {label_a}    B: {label_b}    metric: {sel.metric}    dataset: "
        f"{sel.dataset}{split}    ties: {sel.ties}")  # fmt: skip
st.caption(cards.sentence(sel.metric) + " Delta is A − B: positive means A is better. "
           "Every statistic is over this dataset's queries only.")  # fmt: skip
cards.about(sel.metric, key="compare_about_metric")
if paired.empty:
    st.info("No query is scored by both models on this dataset.")
    st.stop()
info = base["info"]
skipped = info.get("n_only_a", 0) + info.get("n_only_b", 0) + info.get("n_missing", 0)
if skipped:
    st.caption(f"{skipped} queries are left out: scored by only one model, or without a value.")

# clicks of the previous run, handled before drawing so every view shows the new selection
for key, rows in (("scatter", None), ("wins", base["wins"]), ("losses", base["losses"])):
    new, event = cmp.new_event(key)
    if new:
        cmp.open_query(compare.point_query(event) if rows is None else
                       compare.row_query(event, rows))  # fmt: skip
new, event = cmp.new_event("delta_hist")
if new:
    chosen_bin = compare.point_bin(event)
    write_param("bin", None if chosen_bin is None else str(chosen_bin))
raw_bin = local_param("bin")
# ASCII digits only ("²" is a digit to isdigit, not to int), and short: int() refuses 4,300+
plain = raw_bin is not None and raw_bin.isascii() and raw_bin.isdigit() and len(raw_bin) <= 9
selected_bin = int(raw_bin) if plain else None
if selected_bin is not None and selected_bin not in set(bins["bin"]):
    selected_bin = None
    write_param("bin", None)
bin_rows = pd.DataFrame()
if selected_bin is not None:
    bin_rows = compare.query_list(
        paired[paired["bin"] == selected_bin].sort_values("delta", ascending=False)
    )
    new, event = cmp.new_event("bin_queries")
    if new:
        cmp.open_query(compare.row_query(event, bin_rows))
url_widget("cmp_overlap_k", "overlap_k", lambda r: int(r) if r in ("5", "10", "20", "50", "100")
           else None, 10)  # fmt: skip
k = int(st.session_state["cmp_overlap_k"])
ranks = jobs.need("Comparing the two rankings (overlap, gold ranks)", cmp.rankings, _sel=sel,
                  key=fp, models=models, k=k)  # fmt: skip
about = paired[[c for c in ("query_id", "dataset", "text") if c in paired.columns]]
lap = ranks["overlap"].merge(about, on="query_id", how="left")
new, event = cmp.new_event("different")
if new:
    cmp.open_query(compare.row_query(event, lap.head(50)))

q_param, qd_param = local_param("q"), local_param("qd")
selected = compare.resolve_query(paired, q_param, qd_param)
if q_param and selected is None:
    st.warning("The query in the link is not among the queries both models scored; it was "
               "cleared.")  # fmt: skip
    cmp.close_query()
elif selected is not None and qd_param != selected[0]:
    write_param("qd", selected[0])

# ---- summary
summary = jobs.need("Computing the paired tests", cmp.summary, fp, models, sel.metric,
                    _paired=paired)  # fmt: skip
comp = summary.comparison
st.subheader("Summary")
cols = st.columns(5)
cols[0].metric("Paired queries", f"{comp.n:,}", help=cmp.HELP["n"])
cols[1].metric("Mean A", compare.format_value(comp.mean_a), help=cmp.HELP["mean"])
cols[1].caption("95% CI " + compare.format_ci(*summary.ci_a))
cols[2].metric("Mean B", compare.format_value(comp.mean_b), help=cmp.HELP["mean"])
cols[2].caption("95% CI " + compare.format_ci(*summary.ci_b))
cols[3].metric("Delta (A − B)", compare.format_value(comp.delta, "+.3f"), help=cmp.HELP["delta"])
cols[3].caption("95% CI " + compare.format_ci(comp.ci_low, comp.ci_high))
cols[4].metric("Effect size d_z", compare.format_value(comp.effect_size, "+.2f"),
               help=cmp.HELP["d_z"])  # fmt: skip
cols = st.columns([2, 1, 1, 1])
cols[0].metric("Win / tie / loss (A)", f"{comp.wins} / {comp.ties} / {comp.losses}",
               help=cmp.HELP["wtl"])  # fmt: skip
cols[1].metric("p (paired t-test)", compare.format_p(comp.p_t), help=cmp.HELP["p_t"])
cols[2].metric("p (Wilcoxon)", compare.format_p(comp.p_wilcoxon), help=cmp.HELP["p_wilcoxon"])
cols[3].metric("p (randomization)", compare.format_p(comp.p_randomization),
               help=cmp.HELP["p_randomization"])  # fmt: skip

# ---- seed sensitivity (when A or B is a seed group)
seeded = cmp.sensitivity(fp, models, sel.metric, table)
if seeded:
    st.subheader("Seed sensitivity")
    st.caption("A seed group's values above are its per-query seed means (the tests pair them "
               "query by query). Here every seed of A meets every seed of B: the mean "
               "difference of each pair.")  # fmt: skip
    left, right = st.columns([3, 2])
    left.plotly_chart(widgets.plotly_figure(seeded["figure"]), key="seed_pairs")
    right.html("<ul>" + "".join(f"<li>{html.escape(t)}</li>" for t in seeded["text"]) + "</ul>")

# ---- charts
left, right = st.columns([3, 2])
with left:
    st.subheader("Per query: A against B")
    st.caption("One point per query; below the dashed diagonal A is better. Click a point to "
               "open the query below.")  # fmt: skip
    figure = cmp.highlighted(fp, models, sel.metric, selected, paired)
    st.plotly_chart(widgets.plotly_figure(figure), on_select="rerun", selection_mode="points",
                    key="scatter")  # fmt: skip
    paper.export_control(
        "cmp_scatter", (fp, models, sel.metric), stem("scatter"),
        lambda: paper_figures.scatter_paper(paired, models, sel.metric, dataset=dataset),
    )  # fmt: skip
with right:
    st.subheader("Delta histogram")
    st.caption("Blue: A better, orange: B better, grey: ties. Click a bar to list its queries.")
    hist = cmp.histogram(fp, models, sel.metric, selected_bin, bins)
    st.plotly_chart(widgets.plotly_figure(hist), on_select="rerun", selection_mode="points",
                    key="delta_hist")  # fmt: skip
    paper.export_control(
        "cmp_hist", (fp, models, sel.metric), stem("delta-histogram"),
        lambda: paper_figures.delta_histogram_paper(bins, models, sel.metric, dataset=dataset),
    )  # fmt: skip
if selected_bin is not None:
    st.subheader("Queries in the selected bar")
    st.dataframe(bin_rows, hide_index=True, width="stretch", height=260, on_select="rerun",
                 selection_mode="single-row", key="bin_queries")  # fmt: skip
    st.button("Clear bar selection", on_click=write_param, args=("bin", None), key="clear_bin")

# two diagnostics drawn only when opened (a heatmap and a 50-row table)
moved = ranks["changes"]
left, right = st.columns([1, 1])
with left:
    box = lazy_expander("Gold documents: rank in A → rank in B", "cmp_transition_open")
    if box is not None:
        up, down = int((moved["change"] > 0).sum()), int((moved["change"] < 0).sum())
        box.caption(f"{len(moved):,} gold documents: B ranks {up:,} higher and {down:,} lower "
                    "than A; below the diagonal B ranks them worse.")  # fmt: skip
        heat = cmp.transition(fp, models, k, ranks["matrix"])
        box.plotly_chart(widgets.plotly_figure(heat), key="transition")
        paper.export_control(  # beside the expander: expanders do not nest
            "cmp_transition", (fp, models), stem("gold-rank-transition"),
            lambda: paper_figures.transition_paper(ranks["matrix"], models, dataset=dataset),
        )  # fmt: skip
with right:
    # a fixed label: the expander keeps its state when k changes
    box = lazy_expander("Most different rankings (Jaccard@k)", "cmp_different_open")
    if box is not None:
        k = box.selectbox("k of the overlap", [5, 10, 20, 50, 100], key="cmp_overlap_k")
        write_param("overlap_k", None if k == 10 else str(k))
        box.caption(f"The 50 queries of lowest Jaccard@{k}, lowest first. " + cmp.HELP["jaccard"]
                    + " Select a row to open the query.")  # fmt: skip
        box.dataframe(lap.head(50), hide_index=True, width="stretch", height=380,
                      on_select="rerun", selection_mode="single-row", key="different",
                      column_config={"jaccard": st.column_config.NumberColumn(format="%.2f"),
                                     "dataset": None})  # fmt: skip

st.subheader("Biggest wins and losses")
left, right = st.columns(2)
for col, name, label in ((left, "wins", "A better"), (right, "losses", "B better")):
    col.markdown(f"**{label}**")
    col.dataframe(base[name], hide_index=True, width="stretch", on_select="rerun",
                  selection_mode="single-row", key=name)  # fmt: skip

st.subheader("Query")
if selected is None:
    st.caption("Click a point in the scatter or select a row of a table to show a query here.")
else:
    cmp.draw_query(sel, fp, paired, selected, models, ranks["changes"], table)

st.subheader("Per-slice deltas")
options = [*base["slices"], ALL_SLICES]
default = cmp.default_slice(fp, table, tuple(base["slices"])) or ALL_SLICES
wanted = local_param("slice")
st.session_state["cmp_slice"] = wanted if wanted in options else default
choice = st.selectbox(
    "Slice by", options, key="cmp_slice",
    on_change=lambda: write_param("slice", st.session_state["cmp_slice"]),
    format_func=lambda c: "all slice columns" if c == ALL_SLICES else c,
)  # fmt: skip
slice_cols = tuple(base["slices"]) if choice == ALL_SLICES else (choice,)
st.caption("Delta = mean(A − B) on the slice with a seeded 95% bootstrap CI; p_holm: "
           "randomization p-value Holm-corrected over all rows shown.")  # fmt: skip
with jobs.section():
    for other in base["slices"]:  # the next choice of column is ready
        if (other,) != slice_cols:
            jobs.prefetch(cmp.slices, fp, models, sel.metric, (other,), _table=table)
    try:
        view = jobs.need("Comparing slices (bootstrap, randomization)", cmp.slices, fp, models,
                         sel.metric, slice_cols, _table=table)  # fmt: skip
    except ValueError as exc:
        st.warning("Per-slice comparison not available:")
        st.text(str(exc))
    else:
        st.dataframe(view, hide_index=True, width="stretch", key="slice_table")
