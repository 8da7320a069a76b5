"""Drawing the report's blocks on the Report page, with their exports.

Export file names carry the bundle, the dataset (``all`` for blocks about every dataset), the
report metric and the block: ``<bundle>_<dataset>_<metric>_<block>.<ext>`` (each part reduced
to ``[A-Za-z0-9._-]``). Tables export as CSV, Markdown and LaTeX (booktabs, with a caption and a
``tab:<block>`` label); charts as interactive HTML and, for a paper (:mod:`ui.paper`), PNG at
2x (>= 1600 px wide), SVG and a LaTeX caption, in the app's palette and font stack. Names from
files are shown through ``st.text``, ``st.dataframe`` or as Markdown escaped with
:func:`analysis.present.export.escape_markdown`.

The report's numbers are cached per dataset (:func:`dataset_numbers`, keyed by the dataset's
file fingerprint, metric, models and tie policy), their model-independent part apart
(:func:`model_numbers`), so another selection recomputes only what it changes.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from analysis.core.errors import InputError
from analysis.io.bundle import Bundle
from analysis.present import export, paper_figures, report
from ui import data, paper


def _md(text: str) -> str:
    return export.escape_markdown(text)


def file_stem(bundle: str, block: report.Block, metric: str) -> str:
    """``<bundle>_<dataset|all>_<metric>_<block key>``, safe for every file system
    (:func:`ui.paper.file_stem`)."""
    return paper.file_stem(bundle, block.dataset or "all", metric, block.key)


def _title(block: report.Block) -> None:
    st.subheader(_md(block.title), anchor=False)
    if block.caption:
        st.caption(_md(block.caption))


def _table_exports(key: str, table, stem: str, block: report.Block) -> None:
    caption = f"{block.title}. {block.caption}".strip()
    with st.popover("Export table", help="CSV, Markdown or LaTeX (booktabs) of this table."):
        for label, ext, mime in (
            ("CSV", "csv", "text/csv"),
            ("Markdown", "md", "text/markdown"),
            ("LaTeX", "tex", "application/x-tex"),
        ):
            if ext == "tex":
                text = export.to_latex(
                    table, caption=caption, label=f"tab:{paper.file_stem(key)}", group=block.group
                )
            else:
                text = export.to_csv(table) if ext == "csv" else export.to_markdown(table)
            st.download_button(
                label,
                data=text,
                file_name=f"{stem}.{ext}",
                mime=mime,
                key=f"dl_{key}_{ext}",
                on_click="ignore",
            )


def _figure_exports(block: report.Block, cache_key: tuple, stem: str) -> None:
    """The chart as interactive HTML, and the export for a paper (PNG 2x, SVG, LaTeX caption)."""
    fig = block.figure
    assert fig is not None
    st.download_button(
        "HTML",
        data=lambda: export.figure_html(fig, title=block.title),
        file_name=f"{stem}.html",
        mime="text/html",
        key=f"dl_{block.key}_html",
        on_click="ignore",
        help="Interactive chart as one HTML file (plotly.js included, works offline).",
    )
    paper.export_control(
        f"report_{block.key}",
        cache_key,
        stem,
        lambda: paper_figures.block_paper(fig, block.title, block.caption),
    )


def _draw_table(table, key: str) -> None:
    if isinstance(table, export.StyledTable):
        if table.cells.empty:
            st.info("Nothing to show.")
            return
        st.table(export.markdown_frame(table))
        for note in table.notes:
            st.caption(_md(note))
    elif table is None or table.empty:
        st.info("Nothing to show.")
    else:
        st.dataframe(table, hide_index=True, width="stretch", key=f"df_{key}")


def draw_block(
    block: report.Block, *, cache_key: tuple, bundle: str, metric: str, section_title: str = ""
) -> None:
    """One block of the report with its export buttons."""
    stem = file_stem(bundle, block, metric)
    if block.kind == "text":
        if block.title != section_title:
            _title(block)
        if block.text:
            st.markdown("\n".join(f"- {_md(t)}" for t in block.text))
        else:
            st.info("Nothing to report for this selection.")
        return
    _title(block)
    if block.kind == "figure" and block.figure is not None:
        st.plotly_chart(
            block.figure, key=f"fig_{block.key}", width="stretch", config=export.PLOTLY_CONFIG
        )
        _figure_exports(block, cache_key, stem)
    elif block.kind == "table":
        _draw_table(block.table, block.key)
        if block.table is not None:
            _table_exports(block.key, block.table, stem, block)
    elif block.kind == "query" and block.query is not None:
        view = block.query
        st.text(view.text or "(no query text)")
        st.dataframe(view.facts, hide_index=True, width="stretch", key=f"df_{block.key}_facts")
        if view.diff:
            st.caption("What changed from A to B (written from the numbers)")
            st.markdown("\n".join(f"- {_md(t)}" for t in view.diff))
        left, right = st.columns([2, 3])
        with left:
            st.caption("Gold documents")
            st.dataframe(view.gold, hide_index=True, width="stretch", key=f"df_{block.key}_gold")
        with right:
            st.caption("Rankings (top 10)")
            st.dataframe(
                view.rankings, hide_index=True, width="stretch", key=f"df_{block.key}_rank"
            )
        _table_exports(f"{block.key}_rank", view.rankings, f"{stem}-rankings", block)


# --------------------------------------------------------------------------- cached numbers


def costs(bundle: Bundle, datasets: tuple[str, ...]) -> dict[str, dict[str, dict[str, float]]]:
    """Each dataset's run metadata (:func:`ui.data.run_metadata`); a dataset whose ir_metadata
    cannot be read has none (the home page says why)."""
    out = {}
    for name in datasets:
        try:
            out[name] = data.run_metadata(bundle, name)
        except InputError:
            out[name] = {}
    return out


def fingerprint(bundle: Bundle, datasets: tuple[str, ...]) -> tuple:
    """The manifest entry (its ``repr``), the stamps (:func:`ui.data.stamp`) of every file
    behind the report (those of the per-query table: edges and fold files of run groups too),
    and the uploads: part of the cache key, so an edited entry or file is evaluated again."""
    out = []
    for name in datasets:
        spec = bundle.datasets[name]
        files = data._spec_files(spec)
        ups = tuple((m, f, len(c), hash(c)) for m, (f, c) in data.uploads(name).items())
        out.append((name, repr(spec), data.stamp(*files), ups))
    return tuple(out)


@st.cache_resource(max_entries=64, show_spinner=False)
def model_numbers(
    bundle_id: str,
    name: str,
    fingerprint: tuple,
    metric: str,
    shown: tuple[str, ...],
    ties: str,
    _rows: pd.DataFrame,
) -> report.ModelNumbers:
    """The model-independent numbers of one dataset (leaderboard, best-vs-rest tests, slice
    means, causes): computed once per dataset and metric, whatever A and B are."""
    del bundle_id, name, fingerprint, ties  # cache key only
    return report.model_numbers(
        _rows, metric=metric, shown=shown, n_resamples=report.N_RESAMPLES, seed=report.SEED
    )


@st.cache_resource(max_entries=64, show_spinner=False)
def dataset_numbers(
    bundle_id: str,
    name: str,
    fingerprint: tuple,
    metric: str,
    shown: tuple[str, ...],
    model_a: str | None,
    model_b: str | None,
    ties: str,
    _rows: pd.DataFrame,
) -> report.DatasetNumbers:
    """One dataset's numbers, cached per dataset: another selection of datasets recomputes
    only the datasets it adds."""
    base = model_numbers(bundle_id, name, fingerprint, metric, shown, ties, _rows)
    return report.dataset_numbers(
        _rows,
        base=base,
        metric=metric,
        shown=shown,
        model_a=model_a,
        model_b=model_b,
        n_resamples=report.N_RESAMPLES,
        seed=report.SEED,
    )
