"""Analyses of one dataset: failure taxonomy per model (click a count to list its queries),
judgement coverage (judged@k and the queries with the most unjudged documents), complementarity
(UpSet intersections, oracle best-of-N), disagreement of A and B without qrels, the N-model
significance matrix, and metrics with the reviewers' judgements beside the strict ones (with
exports).

Page-local URL parameters (bound widgets): ``tab`` (the open tab; only it is computed and
drawn), ``cat`` (taxonomy category), ``solved`` (complementarity threshold), ``by`` (oracle
slice column).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from analysis.core.errors import InputError
from analysis.io.amended import amended_qrels, qrels_trec_text
from analysis.present import paper_figures
from analysis.present.analyses_report import depth_of, solved_figure
from analysis.stats.coverage import has_explicit_negatives, most_unjudged
from analysis.stats.perquery import slice_columns
from analysis.stats.significance import model_letters, significance_letters, significance_matrix
from analysis.stats.taxonomy import applicable_categories, category_queries
from ui import analyses as an
from ui import data, jobs, paper, widgets
from ui.annotations import store_for, with_authors
from ui.annotations import who as who_
from ui.state import sidebar

st.set_page_config(page_title="Analyses", layout="wide")
sel = sidebar()
NO_SLICE = an.NO_SLICE


st.title("Analyses")
widgets.require_datasets(sel)
widgets.require_runs(sel, "pages/6_Analyses.py")
dataset = sel.dataset  # every analysis reads the sidebar's one dataset (and split)
st.caption(f"Dataset: {widgets.escape_markdown(dataset)}")
table, _warnings, errors = jobs.need(
    "Computing the per-query table", data.per_query, sel.bundle, [dataset], sel.ties, sel.split
)
widgets.show_errors(errors)
if table.empty or sel.model_a is None:
    st.info("This dataset has no per-query results (no run, or it could not be loaded).")
    st.stop()
try:
    ds = data.dataset(sel.bundle, dataset, sel.split or data.ALL)
    models = list(dict.fromkeys(table["model"]))
    ranked = {m: data.ranked_run(sel.bundle, dataset, m, sel.ties) for m in models}
except (InputError, OSError) as exc:
    st.error(widgets.escape_markdown(f"Dataset {dataset} could not be loaded: {exc}"))
    st.stop()
metric = sel.metric
k = depth_of(metric)[0]
# the per-query table's key (every file it reads, uploads, tie policy, split)
key = (sel.bundle_id, dataset, data.fingerprint(sel.bundle, [dataset], sel.ties, sel.split))
key += (tuple((m, id(r)) for m, r in ranked.items()),)
store = store_for(sel)
try:
    judged = store.judgements(dataset) if store is not None else pd.DataFrame()
except InputError as exc:  # the database turned unusable since the store was opened
    st.warning(widgets.escape_markdown(f"Notes are not available: {exc}"))
    store, judged = None, pd.DataFrame()
marks = an.marks_of(judged)
tabs = ["Failure taxonomy", "Coverage", "Complementarity", "Disagreement A vs B", "Significance"]
# lazy tabs: only the open one is computed and sent (its name in the URL: ``tab``)
tab_tax, tab_cov, tab_comp, tab_dis, tab_sig, tab_amend = st.tabs(
    [*tabs, "Amended"], key="tab", on_change="rerun", bind="query-params"
)


def query_list(rows: pd.DataFrame, model: str, columns: list[str], key: str) -> None:
    """Rows of queries (with their text), each a link to the Queries page."""
    text = ds.queries[["query_id", "text"]].drop_duplicates("query_id")
    shown = rows.merge(text, on="query_id", how="left") if "text" not in rows else rows
    shown = shown[[c for c in ["query_id", "text", *columns] if c in shown]]
    shown = shown.assign(open=an.query_links(sel, dataset, model, shown["query_id"]))
    text_col = st.column_config.TextColumn("text", width="large")
    st.dataframe(shown, hide_index=True, width="stretch", key=key,
                 column_config={"open": an.link_column(), "text": text_col})  # fmt: skip


with tab_tax, jobs.section():
    jobs.only_when(tab_tax.open is not False)
    classified, tax_table, _ = jobs.need(
        "Classifying the failures", an.taxonomy, key, _rows=table, _ranked=ranked, _ds=ds, k=k
    )
    causes = applicable_categories(classified)
    st.caption(
        f"Why each query is missed {depth_of(metric)[1]}: the first cause that "
        "applies, in this order: " + ", ".join(causes[1:]) + ". Suspected missing answers "
        "are retrieved, unjudged entities sharing type and relations with a gold: review them. "
        "Click a count to list its queries below."
    )
    an.take_count_click("taxonomy_counts", tax_table, "tax_model", "cat")
    st.dataframe(tax_table, hide_index=True, key="taxonomy_counts", on_select="rerun",
                 selection_mode="single-cell")  # fmt: skip
    tax_by = st.selectbox("Counts by slice", [NO_SLICE, *slice_columns(table)], key="tax_by")
    for other in slice_columns(table):  # the next choice of column is ready
        jobs.prefetch(an.counts_by_slice, key, k, other, _classified=classified)
    if tax_by != NO_SLICE:
        by_slice = jobs.need("Counting failure causes per slice", an.counts_by_slice, key, k,
                             tax_by, _classified=classified)  # fmt: skip
        an.take_count_click("taxonomy_by_slice", by_slice, "tax_model", "cat", tax_by)
        st.dataframe(by_slice, hide_index=True, key="taxonomy_by_slice", on_select="rerun",
                     selection_mode="single-cell")  # fmt: skip
    c_model, c_cat = st.columns(2)
    model = c_model.selectbox("Model", models, key="tax_model")
    category = c_cat.selectbox(
        "Category", [*causes[1:], causes[0]], key="cat", bind="query-params",
        help="Its queries are listed below.",
    )  # fmt: skip
    picked, in_slice = an.slice_filter(category_queries(classified, model, category), tax_by)
    where = f" in {in_slice}" if in_slice else ""
    told = f"{len(picked)} queries of {model}{where} are '{category}'."
    st.caption(widgets.escape_markdown(told))
    if in_slice:
        st.button("All slices", on_click=an.clear_slice, key="tax_all_slices")
    if not picked.empty:
        query_list(picked, model, ["first_gold_rank", "n_gold"], "taxonomy_queries")

with tab_cov, jobs.section():
    jobs.only_when(tab_cov.open is not False)
    per_cov, cov_summary, _ = jobs.need(
        "Measuring judgement coverage", an.coverage, key, marks, _ranked=ranked, _ds=ds,
        _j=judged, k=k,
    )  # fmt: skip
    positives_only = not has_explicit_negatives(ds.qrels, ds.spec.relevance_threshold)
    st.caption(
        f"judged@{k}: the share of each query's top {k} that has a relevance judgement (a qrels "
        f"row of any relevance, or a reviewer's judgement from the Queries page); unjudged@{k}: "
        "how many documents of the top k nobody judged (the metrics count them as not "
        "relevant). Means over the queries the run returned documents for."
        + (
            f" These qrels list positives only: without reviewers' judgements judged@{k} "
            f"equals precision@{k}."
            if positives_only
            else ""
        )
    )
    st.dataframe(cov_summary, hide_index=True, width="stretch", key="coverage_summary")
    first = models.index(sel.model_a) if sel.model_a in models else 0
    cov_model = st.selectbox("Model", models, index=first, key="cov_model")
    worst = most_unjudged(per_cov, cov_model, 50)
    st.caption(widgets.escape_markdown(
        f"Queries of {cov_model} with the most unjudged documents in the top {k} "
        f"({len(worst)} shown): judge them on the Queries page."
    ))  # fmt: skip
    if not worst.empty:
        query_list(worst, cov_model, [f"unjudged@{k}", f"judged@{k}", "n_top"], "most_unjudged")
    if positives_only and ds.entities is not None:
        sus = jobs.need(
            "Finding suspected missing answers", an.suspects, key, marks, cov_model,
            _ranked=ranked, _ds=ds, _j=judged, k=k,
        )[0]  # fmt: skip
        st.subheader("Suspected missing answers")
        st.caption(widgets.escape_markdown(
            f"{len(sus)} retrieved, unjudged documents in the top {k} of {cov_model} "
            f"({sus['query_id'].nunique()} queries) share type and relations with a gold "
            "(gold_id): candidates for review on the Queries page. They change no metric; "
            "a judged document leaves the list."
        ))  # fmt: skip
        if not sus.empty:
            cols = ["doc_id", "rank", "type", "gold_id", "shared_relations"]
            query_list(sus, cov_model, cols, "suspects")

with tab_comp, jobs.section():
    jobs.only_when(tab_comp.open is not False)
    threshold = st.select_slider(
        f"Solved: {metric} at least",
        options=[0.1, 0.25, 0.5, 0.75, 1.0],
        value=1.0,
        key="solved",
        bind="query-params",
        help="A model solves a query when its metric reaches this value.",
    )
    inter, n_solved = an.solved(key, table, metric, threshold, tuple(models))
    st.caption(f"Queries solved by exactly these models ({n_solved} queries); '(none)' = no model.")
    st.plotly_chart(solved_figure(inter), key="upset_bars", config={"displayModeBar": False})
    paper.export_control(
        "solved", (key, metric, threshold, tuple(models)),
        paper.file_stem(sel.bundle_id, dataset, metric, "solved-by"),
        lambda: paper_figures.solved_paper(inter, metric, threshold, dataset=dataset),
    )  # fmt: skip
    st.dataframe(inter, hide_index=True, width="stretch", key="intersections")
    by = st.selectbox(
        "Oracle by slice", [NO_SLICE, *slice_columns(table)], key="by", bind="query-params"
    )
    best = an.best_of(key, table, metric, tuple(models), by)
    st.caption(
        f"Oracle best-of-{len(models)}: the mean over queries of the best model's {metric} per "
        "query, chosen with hindsight (an upper bound, not an achievable score)."
    )
    st.dataframe(best, hide_index=True, width="stretch", key="oracle")

with tab_dis, jobs.section():
    jobs.only_when(tab_dis.open is not False)
    if sel.model_b is None:
        widgets.explain_one_model(sel, "pages/6_Analyses.py")
    elif sel.model_b not in ranked:
        st.info("Choose a model B in the sidebar.")
    else:
        st.caption(
            widgets.escape_markdown(
                f"How differently {sel.model_a} and {sel.model_b} rank each query's top {k}, "
                "without qrels: Jaccard overlap, RBO (p = 0.9, extrapolated) and τ_AP (order "
                "of the shared documents). Most different first."
            )
        )
        diff = jobs.need(
            "Comparing the rankings of A and B", an.disagree, key, _a=ranked[sel.model_a],
            _b=ranked[sel.model_b], k=k,
        )[0]  # fmt: skip
        text = ds.queries[["query_id", "text"]].drop_duplicates("query_id")
        diff = diff.merge(text, on="query_id", how="left")
        st.dataframe(diff.head(50), hide_index=True, width="stretch", key="most_different")

with tab_sig, jobs.section():
    jobs.only_when(tab_sig.open is not False)
    pair_table = jobs.need(
        "Testing every pair of models (randomization)", an.model_pairs, key, _rows=table,
        metric=metric, models=tuple(models),
    )  # fmt: skip
    letters = significance_letters(pair_table, models)
    means = table.groupby("model")[metric].mean()
    board = pd.DataFrame(
        {
            "letter": list(model_letters(models).values()),
            "model": models,
            metric: [means.get(m) for m in models],
            "beats": [letters[m] for m in models],
        }
    )
    st.caption(
        f"Every pair of models on {metric}: paired randomization test (10,000 sign flips), "
        "Holm-corrected over the pairs of this dataset; 'beats' lists the letters of the "
        "models a model is significantly better than (p < 0.05), as ranx prints them."
    )
    st.dataframe(board, hide_index=True, width="stretch", key="letters")
    c_delta, c_p = st.columns(2)
    c_delta.caption(f"Mean difference of {metric}, row − column:")
    c_delta.dataframe(significance_matrix(pair_table, models, "delta"), key="delta_matrix")
    c_p.caption("Holm-corrected p-value of each pair:")
    c_p.dataframe(significance_matrix(pair_table, models, "p_holm"), key="p_matrix")
    st.dataframe(pair_table, hide_index=True, width="stretch", key="pairs")

with tab_amend, jobs.section():
    jobs.only_when(tab_amend.open is not False)
    st.caption(
        f"{len(judged)} judgement(s) on this dataset (made on the Queries page). Metrics with "
        "amendments (qrels plus judgements) beside the strict ones; the strict ones stay the "
        "reference."
    )
    if not judged.empty:
        heads = list(dict.fromkeys([metric, *[m for m in ds.spec.metrics if m in table]]))
        side = an.amended(key, marks, ranked, ds, judged, tuple(heads), sel.ties)
        st.dataframe(side, hide_index=True, width="stretch", key="amended")
        who = judged[["query_id", "doc_id", "relevance", "author", "updated"]]
        st.dataframe(with_authors(who, "updated"), hide_index=True, key="judgements")
        try:
            trec = qrels_trec_text(amended_qrels(ds.qrels, judged))
            st.download_button("Amended qrels (TREC)", trec, key="download_qrels",
                               file_name=f"{dataset}-amended.qrels")  # fmt: skip
        except ValueError as exc:  # an id TREC qrels cannot carry
            st.warning(widgets.escape_markdown(f"No TREC export of these qrels: {exc}."))
    if store is not None:
        people = store.authors(dataset)
        if not people.empty:
            st.caption("Who annotated this dataset (current rows they wrote last; all changes):")
            st.dataframe(people.assign(author=[who_(a) for a in people["author"]]),
                         hide_index=True, key="authors")  # fmt: skip
        st.download_button(
            "Annotations (CSV)",
            store.export_csv(dataset),
            file_name=f"{dataset}-annotations.csv",
            key="download_annotations",
        )
