"""One example query per failure cause of model A, for the deck.

For each cause (a column of the causes table: queries at 0, tie-dependent, a non-gold POI on
the gold's coordinate above the gold, missing from the run, more gold than k) with at least one
query of model A, the dataset with the largest count is chosen (the first of equal counts in
dataset order) and in it one query with that cause: a worst query already shown with its
rankings when one has the cause (the worst one for "at 0"), else the first such query in table
order (:func:`~analysis.present.report.numbers.cause_examples`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from analysis.io.bundle import Dataset
from analysis.present.report.model import QueryView
from analysis.present.report.numbers import DatasetNumbers
from analysis.present.report.queries import query_views

__all__ = ["CAUSE_COLUMNS", "Example", "pick_examples"]

#: Causes in deck order (columns of the causes table).
CAUSE_COLUMNS = (
    "at 0",
    "tie-dependent",
    "non-gold on gold coordinate above gold",
    "missing from run",
    "more gold than k",
)
#: The worst-queries column that flags a cause.
_FLAGS = {
    "tie-dependent": "tie-dependent",
    "non-gold on gold coordinate above gold": "non-gold on gold coordinate",
}


@dataclass(frozen=True)
class Example:
    """An example query of a cause: ``count`` of ``n`` queries of model A on ``dataset`` have
    the cause; ``row`` is the query's worst-queries row; ``view`` its gold and rankings when
    the loaders were given."""

    cause: str
    dataset: str
    metric: str
    query_id: str
    count: int
    n: int
    text: str
    row: pd.DataFrame
    view: QueryView | None


def _query_id(num: DatasetNumbers, cause: str, shown: set[str]) -> str | None:
    rows = num.worst_queries
    if not rows.empty and shown:
        head = rows.loc[rows["query_id"].astype(str).isin(shown)]
        flag = _FLAGS.get(cause)
        value = f"{num.metric} A"
        if cause == "at 0" and not head.empty and float(head[value].iloc[0]) == 0:
            return str(head["query_id"].iloc[0])
        if flag is not None and flag in head.columns and head[flag].any():
            return str(head.loc[head[flag].astype(bool), "query_id"].iloc[0])
    return num.examples.get(cause)


def pick_examples(
    per: Mapping[str, DatasetNumbers],
    datasets: Sequence[str],
    model_a: str | None,
    model_b: str | None,
    views: Mapping[tuple[str, str], QueryView],
    dataset: Callable[[str], Dataset] | None = None,
    ranked: Callable[[str, str], pd.DataFrame] | None = None,
) -> tuple[Example, ...]:
    """The examples (see the module docstring); ``views`` are the rankings already computed
    (dataset, query id) -> view; others are computed with the loaders when given."""
    if model_a is None:
        return ()
    frames = [per[d].causes for d in datasets if not per[d].causes.empty]
    if not frames:
        return ()
    causes = pd.concat(frames, ignore_index=True)
    mine = causes.loc[causes["model"] == model_a].reset_index(drop=True)
    out = []
    for cause in CAUSE_COLUMNS:
        if mine.empty or cause not in mine.columns or not (mine[cause] > 0).any():
            continue
        best = mine.loc[mine[cause].idxmax()]
        name = str(best["dataset"])
        num = per[name]
        shown = {q for (d, q) in views if d == name}
        qid = _query_id(num, cause, shown)
        if qid is None or num.worst_queries.empty:
            continue
        row = num.worst_queries.loc[num.worst_queries["query_id"].astype(str) == qid]
        if row.empty:
            continue
        view = views.get((name, qid))
        if view is None and dataset is not None and ranked is not None:
            b = model_b if f"{num.metric} B" in row.columns else None
            view = query_views(name, row, dataset(name), ranked, model_a, b)[0]
        text = str(row["text"].iloc[0]) if "text" in row.columns else ""
        out.append(
            Example(
                cause,
                name,
                num.metric,
                qid,
                int(best[cause]),
                int(best["n"]),
                text,
                row.reset_index(drop=True),
                view,
            )
        )
    return tuple(out)
