"""Small drawing helpers shared by the pages. Text from data files is shown through
``st.dataframe``/``st.text``/``st.code`` (never interpreted as Markdown or HTML)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from analysis.present.export import escape_markdown
from analysis.stats.perquery import MEASURE_HELP, metric_column
from ui import data
from ui.state import Selection

MAX_UPLOAD_MB = 200
MAX_UPLOAD_BYTES = MAX_UPLOAD_MB * 1024 * 1024
RELOAD_HINT = (
    "The other datasets are shown. Fix or restore the file, then press Reload data (a file "
    "that changed on disk is also read again on the next rerun)."
)


def require_bundle(sel: Selection) -> None:
    """Stop the page with an error when no bundle was found under the data roots."""
    if sel.bundle is None:
        st.error("No bundle found under the data roots.")
        st.stop()


def require_datasets(sel: Selection) -> None:
    """Stop the page with a message when there is no bundle or no dataset is selected (every
    page starts with this after :func:`ui.state.sidebar`)."""
    require_bundle(sel)
    if not sel.datasets:
        st.info("Select at least one dataset in the sidebar.")
        st.stop()


def metric_help(measure: str) -> str:
    """One sentence defining the measure."""
    return MEASURE_HELP.get(measure, "")


def show_errors(errors: dict[str, str], key: str = "reload_data") -> None:
    """One ``st.error`` per dataset that could not be loaded (the message names file and line),
    then a Reload data button; names and messages come from files, so they are escaped."""
    for name, message in errors.items():
        st.error(escape_markdown(f"Dataset {name} could not be loaded: {message}"))
    if errors:
        st.caption(RELOAD_HINT)
        st.button("Reload data", key=key, on_click=data.reload, help="Read the bundle again.")


def headline_metrics(sel: Selection, table: pd.DataFrame) -> list[str]:
    """The selected metric first, then each selected dataset's own headline metrics."""
    out = [sel.metric]
    if sel.bundle is not None:
        for name in sel.datasets:
            spec = sel.bundle.datasets.get(name)
            for label in spec.metrics if spec else ():
                canonical = label.lower()
                if canonical in table.columns and canonical not in out:
                    out.append(canonical)
    return [m for m in out if m in table.columns]


def format_ci_table(board: pd.DataFrame, metrics: list[str]) -> pd.DataFrame:
    """A long ``mean_ci`` result (``dataset, model, metric, n, mean, ci_low, ci_high``) as one
    row per (dataset, model) and one text column per metric: ``0.412 [0.371, 0.455]``."""
    if "metric" not in board.columns:
        board = board.assign(metric=metrics[0])
    board = board.copy()
    board["cell"] = [
        f"{m:.3f} [{lo:.3f}, {hi:.3f}]"
        for m, lo, hi in zip(board["mean"], board["ci_low"], board["ci_high"], strict=True)
    ]
    wide = board.pivot_table(
        index=["dataset", "model", "n"], columns="metric", values="cell", aggfunc="first"
    ).reset_index()
    wide.columns.name = None
    return wide[["dataset", "model", "n", *[m for m in metrics if m in wide.columns]]]


def current_metric_label(sel: Selection) -> str:
    return metric_column(sel.measure, sel.k)
