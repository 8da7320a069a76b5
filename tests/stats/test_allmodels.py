"""Every model per query: outcomes, the order by disagreement, the bound on drawn queries and
the chart's cells."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from analysis.present.groups import grid_figure
from analysis.present.palette import sequential_colours
from analysis.stats.allmodels import (
    OUTCOMES,
    bounded,
    model_column,
    model_grid,
    outcome_counts,
    query_limit,
)


def _table(values: dict[str, list[float]]) -> pd.DataFrame:
    rows = []
    for model, column in values.items():
        rows += [{"dataset": "d", "model": model, "query_id": f"q{i}", "hit@1": v}
                 for i, v in enumerate(column)]  # fmt: skip
    return pd.DataFrame(rows)


VALUES = {
    "a": [0.0, 1.0, 1.0, 1.0, 0.0],
    "b": [0.0, 0.0, 1.0, 1.0, 0.0],
    "c": [0.0, 0.0, 0.0, 1.0, 1.0],
}


def test_outcomes_and_order() -> None:
    grid = model_grid(_table(VALUES), "hit@1", ["a", "b", "c"]).set_index("query_id")
    assert grid.loc["q0", "outcome"] == "all fail"
    assert grid.loc["q1", "outcome"] == "one solves"
    assert grid.loc["q1", "solver"] == "a"
    assert grid.loc["q4", "solver"] == "c"
    assert grid.loc["q2", "outcome"] == "split"
    assert grid.loc["q3", "outcome"] == "all solve"
    assert pd.isna(grid.loc["q2", "solver"])
    assert list(grid["solved_by"].loc[["q0", "q1", "q2", "q3"]]) == [0, 1, 2, 3]
    assert grid.loc["q2", "disagreement"] == pytest.approx(np.std([1, 1, 0]))
    order = model_grid(_table(VALUES), "hit@1", ["a", "b", "c"])["query_id"].tolist()
    # most disagreement first (q1, q2, q4 tie at sd 0.47: lower mean first, then id)
    assert order == ["q1", "q4", "q2", "q0", "q3"]
    assert outcome_counts(grid.reset_index()) == dict(zip(OUTCOMES, [1, 2, 1, 1], strict=True))


def test_threshold_and_left_out_queries() -> None:
    table = _table({"a": [0.6, 0.4], "b": [0.6, 0.6]})
    table = pd.concat([table, pd.DataFrame([{"dataset": "d", "model": "a", "query_id": "q9",
                                             "hit@1": 1.0}])])  # fmt: skip
    grid = model_grid(table, "hit@1", ["a", "b"], threshold=0.5).set_index("query_id")
    assert grid.loc["q0", "outcome"] == "all solve"
    assert grid.loc["q1", "outcome"] == "one solves"
    assert grid.attrs["n_left_out"] == 1  # q9: b has no value
    assert "q9" not in grid.index


def test_bounded_keeps_the_most_disagreeing_queries() -> None:
    grid = model_grid(_table(VALUES), "hit@1", ["a", "b", "c"])
    drawn, cut = bounded(grid, 2)
    assert cut
    assert drawn["query_id"].tolist() == ["q1", "q4"]
    assert bounded(grid, 10)[1] is False
    assert query_limit(3) == 2_000
    assert query_limit(12) == 1_000


def test_errors() -> None:
    table = _table(VALUES)
    with pytest.raises(ValueError, match="unknown model"):
        model_grid(table, "hit@1", ["a", "zz"])
    with pytest.raises(ValueError, match="metric"):
        model_grid(table, "mrr", ["a"])
    two = pd.concat([table, table.assign(dataset="e")])
    with pytest.raises(ValueError, match="one dataset"):
        model_grid(two, "hit@1", ["a"])


def test_grid_figure_cells_carry_query_and_model() -> None:
    grid = model_grid(_table(VALUES), "hit@1", ["a", "b", "c"])
    figure = grid_figure(grid, ["a", "b", "c"], "hit@1")
    bars = [t for t in figure.data if t.type == "bar"]
    assert len(bars) == 3  # one trace (column) per model
    cells = {}
    for trace in bars:
        assert list(trace.y) == list(range(5))  # one row per query, in the grid's order
        cells |= {tuple(c): v for c, v in zip(trace.customdata, trace.marker.color, strict=True)}
    assert len(cells) == 15  # 5 queries x 3 models
    one, zero = sequential_colours([1.0, 0.0])
    assert cells[("q1", "a")] == one
    assert cells[("q1", "b")] == zero
    assert list(figure.data[1].base) == [1.0] * 5  # column b spans [1, 2]
    (bar,) = [t for t in figure.data if t.type != "bar"]  # the colour bar's, without points
    assert bar.marker.coloraxis == "coloraxis"
    assert list(bar.x) == [None]
    assert (figure.layout.coloraxis.cmin, figure.layout.coloraxis.cmax) == (0.0, 1.0)
    escaped = grid_figure(model_grid(_table({"<b>a</b>": VALUES["a"], "b": VALUES["b"]}), "hit@1",
                                     ["<b>a</b>", "b"]), ["<b>a</b>", "b"], "hit@1")  # fmt: skip
    assert "<b>" not in json.dumps(escaped.to_dict()["layout"]["xaxis"]["ticktext"])


def test_models_named_like_the_grids_own_columns_keep_their_values() -> None:
    """A model named ``outcome``, ``mean``, ``query_id`` (...) has its own column
    (:func:`model_column`), so neither its values nor the grid's columns are overwritten."""
    names = ["outcome", "mean", "solver", "disagreement", "solved_by", "query_id"]
    values = {name: VALUES[key] for name, key in zip(names, "abcacb", strict=True)}
    grid = model_grid(_table(values), "hit@1", names).set_index("query_id")
    assert grid.loc["q0", "outcome"] == "all fail"
    assert grid.loc["q3", "outcome"] == "all solve"
    assert grid.loc["q3", "mean"] == 1.0
    assert grid.loc["q2", "solved_by"] == 4
    for name, expected in values.items():
        got = grid[model_column("hit@1", name)].loc[[f"q{i}" for i in range(5)]].tolist()
        assert got == expected, name
    ordered = grid.reset_index()
    figure = grid_figure(ordered, names, "hit@1")
    drawn = [list(t.marker.color) for t in figure.data if t.type == "bar"]
    assert drawn == [sequential_colours(ordered[model_column("hit@1", n)]) for n in names]
