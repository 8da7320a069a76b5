"""AppTest: the Report page follows the sidebar's split, also when the same selection was
reported for another split before (the cached content is keyed by the split)."""

from __future__ import annotations

from analysis.io.bundle import load_dataset, load_model_run, read_manifest
from analysis.stats.perquery import per_query_table
from tests.app.conftest import no_exception, open_page
from tests.app.test_splits import split_root  # noqa: F401  (fixture)


def _cells(at) -> dict[str, str]:
    """model -> the leaderboard's mrr cell (mean ± half-width)."""
    for table in at.table:
        frame = table.value
        if {"model", "mrr"} <= set(frame.columns):
            return {
                str(m): str(v).replace("*", "")
                for m, v in zip(frame["model"], frame["mrr"], strict=True)
            }
    return {}


def _means(root, split: str) -> dict[str, float]:
    spec = read_manifest(root / "wide").datasets["mag"]
    ds = load_dataset(spec, split)
    runs = {m: load_model_run(spec, m) for m in spec.runs}
    table, _ = per_query_table(ds.queries, ds.qrels, runs, dataset="mag", metrics=["mrr"])
    return table.groupby("model")["mrr"].mean().to_dict()


def test_report_numbers_follow_the_split(split_root):  # noqa: F811
    shown = {}
    for split in ("test", "train"):
        at = open_page("5_Report.py", split=split, section="leaderboard")
        no_exception(at)
        shown[split] = _cells(at)
        expected = _means(split_root, split)
        assert set(shown[split]) == set(expected)
        for model, mean in expected.items():
            assert shown[split][model].strip("*").startswith(f"{mean:.3f}"), (split, model)
    assert shown["test"] != shown["train"]
