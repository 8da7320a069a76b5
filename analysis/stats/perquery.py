"""The per-query table the dashboard slices: one row per (dataset, model, query).

Columns: ``dataset, model, query_id``, one column per metric (``hit@1`` ... ``ndcg@100``,
``mrr``), the diagnostics of :func:`analysis.core.metrics.evaluate_run` (``n_gold``,
``first_gold_rank``, ``tie_sensitive``, ``<metric>_min/_max``, ...), and slice columns: the
query's ``query_type`` and metadata columns from the queries table, ``n_gold_bucket`` (``1``,
``2–5``, ``6–20``, ``>20``) and ``query_length`` (quartile buckets of the length in words, or
in characters for Chinese/Japanese/Korean text or when an importer gives ``query_chars``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypedDict, Unpack

import numpy as np
import pandas as pd

from analysis.core.errors import DataWarning
from analysis.core.measures import REGISTRY, dashboard_measures
from analysis.core.metrics import TiePolicy, evaluate_run, parse_metrics
from analysis.core.options import check_options
from analysis.core.ranked import RankedRun, evaluate_run_ranked
from analysis.geo import GeoIndex, geo_index, model_geo_columns, ranked_geo_columns
from analysis.io.groups import RunGroup
from analysis.stats import bucket_numeric, flag_values, n_gold_bucket

#: The cutoffs at which the per-query table holds every dashboard measure that takes one.
CUTOFFS: tuple[int, ...] = (1, 5, 10, 20, 50, 100)
_NOT_SLICES = {"query_id", "text", "lat", "lon", "model", "gold_poi_ids", "seeds", "run_group"}
MAX_CATEGORIES = 200


def metric_column(measure: str, k: int) -> str:
    """Column name of a measure at cutoff ``k`` as the dashboard holds it (the bare name for
    ``mrr`` and the measures the registry puts there without a cutoff)."""
    m = REGISTRY[measure]
    return m.name if m.dashboard == "bare" or m.cutoff == "never" else f"{m.name}@{k}"


def dashboard_metrics(extra: Iterable[str] = ()) -> list[str]:
    """The per-query table's metrics: every dashboard measure of the registry
    (:func:`analysis.core.measures.dashboard_measures`, user measures included) at every
    cutoff of :data:`CUTOFFS` (``mrr`` and measures without a cutoff once, bare), then the
    ``extra`` names."""
    names: list[str] = []
    for m in dashboard_measures():
        for k in CUTOFFS:
            column = metric_column(m.name, k)
            if column not in names:
                names.append(column)
    for name in extra:
        canonical = parse_metrics([name])[0].name
        if canonical not in names:
            names.append(canonical)
    return names


class TableOptions(TypedDict, total=False):
    """The keyword options of :func:`per_query_table`."""

    metrics: Sequence[str] | None
    ties: TiePolicy
    relevance_threshold: int
    headline: Sequence[str]
    entities: pd.DataFrame | None
    groups: Mapping[str, RunGroup] | None


def per_query_table(
    queries: pd.DataFrame,
    qrels: pd.DataFrame,
    runs: Mapping[str, pd.DataFrame],
    *,
    dataset: str,
    **options: Unpack[TableOptions],
) -> tuple[pd.DataFrame, dict[str, list[DataWarning]]]:
    """Evaluate every run of one dataset and join the query slices.

    Options (keywords, :class:`TableOptions`): ``metrics`` (default: the dashboard's),
    ``ties`` (``"trec_eval"``), ``relevance_threshold`` (1), ``headline``, ``entities`` and
    ``groups``, as below.

    ``groups`` (run groups of the dataset: seeds or folds of one model) add one row per group
    and query, a ``seeds`` column and fold slice columns
    (:func:`analysis.stats.groups.add_group_rows`; the per-query seed spread
    ``<metric>_seed_sd`` for the ``headline`` metrics).

    ``headline`` names the dataset's own metrics: the "more gold than k" warning is kept only
    for the recall cutoffs among them and the saved-depth warnings only for them (the table has
    every measure at every cutoff).

    When the queries and the ``entities`` (POIs) have ``lat``/``lon``, the geo columns of
    :func:`analysis.geo.geo_diagnostics` are added (``dist_query_gold_m``,
    ``dist_query_top1_m``, ``gold_stack_size``, ``indistinguishable``, ...), with the slices
    ``dist_gold_bucket``, ``gold_stacked`` and ``location_tie`` (``indistinguishable``: a
    non-gold POI ranked above the first gold sits on its coordinate), and twin-aware
    ``twin_recall@10`` and ``twin_ndcg@10`` (a twin of a gold, same text and coordinate under
    another id, counts as the gold). Stacks, twins and gold pairs are computed once for the
    dataset (:func:`analysis.geo.geo_index`), then each model's columns in vectorized passes
    over the ranking its metrics were computed on, ranked once
    (:func:`analysis.core.ranked.evaluate_run_ranked`, :func:`analysis.geo.ranked_geo_columns`).

    Returns:
        ``(table, warnings)``: the long per-query table (one row per qrels query and model)
        and the data-check warnings of each model.
    """
    check_options("per_query_table", options, TableOptions)
    metrics, headline = options.get("metrics"), options.get("headline", ())
    entities, groups = options.get("entities"), options.get("groups")
    wanted = list(metrics) if metrics is not None else dashboard_metrics()
    evaluation = {
        "ties": options.get("ties", "trec_eval"),
        "relevance_threshold": options.get("relevance_threshold", 1),
        "diagnostics": True,
    }
    shown = parse_metrics(headline or wanted)
    recall_k = {m.k for m in shown if m.k and m.measure == "recall"}
    names = {m.name for m in shown}
    geo = None
    if _located(queries) and _located(entities):
        geo = (qrels, queries, entities.dropna(subset=["lat", "lon"]))
    frames, warnings = _model_frames(runs, qrels, wanted, evaluation, geo, (recall_k, names))
    if not frames:  # typed columns, so that concatenating with other datasets keeps floats
        empty = {c: pd.Series(dtype="str") for c in ("dataset", "model", "query_id")}
        empty |= {m: pd.Series(dtype="float64") for m in wanted}
        return pd.DataFrame(empty), warnings
    table = _with_query_slices(pd.concat(frames, ignore_index=True), dataset, queries)
    if groups:
        from analysis.stats.groups import add_group_rows

        spread = [m.name for m in parse_metrics(list(headline))] if headline else []
        table = add_group_rows(table, groups, spread=spread)
    return table, warnings


def _with_query_slices(table: pd.DataFrame, dataset: str, queries: pd.DataFrame) -> pd.DataFrame:
    """The models' rows with the dataset's name, the queries' columns (text, type, metadata)
    and the derived slices ``query_length`` and ``n_gold_bucket``."""
    table.insert(0, "dataset", dataset)
    # a queries column named like a metric or diagnostic (a user measure "difficulty" beside
    # a "difficulty" slice) leaves the computed column in place
    clash = [c for c in queries.columns if c == "dataset" or (c != "query_id" and c in table)]
    meta = queries.drop(columns=clash).drop_duplicates("query_id")
    table = table.merge(meta, on="query_id", how="left")
    if "text" in table.columns:
        table["text"] = table["text"].fillna("").astype("str")
        table["query_length"] = _length_bucket(*query_lengths(table))
    if "query_type" in table.columns:
        table["query_type"] = table["query_type"].fillna("unknown").astype("str")
    table["n_gold_bucket"] = n_gold_bucket(table["n_gold"]).astype("str")
    return table


def _headline_warnings(
    warnings: Iterable[DataWarning], recall_k: set[int], headline: set[str]
) -> list[DataWarning]:
    """The warnings, but "more gold than k" only for the cutoffs ``recall_k`` and the saved-depth
    warnings (``saved_depth:<metric>``) only for the ``headline`` metrics (canonical names): the
    table holds every measure at every cutoff, the user reads the dataset's own metrics."""
    keep = {f"gold_exceeds_{k}" for k in recall_k}

    def shown(w: DataWarning) -> bool:
        if w.code.startswith("gold_exceeds_"):
            return w.code in keep
        if w.code.startswith("saved_depth:"):
            return parse_metrics([w.code.split(":", 1)[1]])[0].name in headline
        return True

    return [w for w in warnings if shown(w)]


def _with_model(frame: pd.DataFrame, model: str) -> pd.DataFrame:
    frame.insert(0, "model", model)
    return frame


def _model_frames(
    runs: Mapping[str, pd.DataFrame],
    qrels: pd.DataFrame,
    wanted: list[str],
    options: dict,
    geo: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame] | None,
    shown: tuple[set[int], set[str]],
) -> tuple[list[pd.DataFrame], dict[str, list[DataWarning]]]:
    """Each model's per-query frame (with a ``model`` column) and its warnings. With ``geo``
    (``qrels, queries, located POIs``), the dataset's geo index and then each model's geo
    columns are computed on a worker thread while the metric core evaluates the next model:
    the same numbers, with the second core used."""
    frames: list[pd.DataFrame | Future[pd.DataFrame]] = []
    warnings: dict[str, list[DataWarning]] = {}
    with ThreadPoolExecutor(max_workers=1) as worker:
        try:
            index = worker.submit(geo_index, *geo) if geo is not None and runs else None
            for model, run in runs.items():
                if index is None:
                    result = evaluate_run(run, qrels, wanted, **options)
                    frames.append(_with_model(result.per_query, model))
                else:  # the geo columns read the ranking the metrics were computed on
                    result, ranking = evaluate_run_ranked(run, qrels, wanted, **options)
                    frames.append(
                        worker.submit(_geo_frame, result.per_query, index, options, ranking, model)
                    )
                warnings[model] = _headline_warnings(result.warnings, *shown)
            return [f.result() if isinstance(f, Future) else f for f in frames], warnings
        except BaseException:
            worker.shutdown(cancel_futures=True)  # no more geo work for a table that fails
            raise


def _geo_frame(
    frame: pd.DataFrame, index: Future[GeoIndex], options: dict, ranking: RankedRun, model: str
) -> pd.DataFrame:
    """One model's table with its geo columns (on the geo worker thread)."""
    ties, threshold = options["ties"], options["relevance_threshold"]
    geo = _add_geo(frame, None, index.result(), ties, None, threshold, ranking=ranking)
    return _with_model(geo, model)


def _located(table: pd.DataFrame | None) -> bool:
    return table is not None and {"lat", "lon"} <= set(table.columns) and table["lat"].notna().any()


DIST_BINS = (-1.0, 500.0, 2_000.0, 5_000.0, float("inf"))
DIST_LABELS = ("<0.5 km", "0.5–2 km", "2–5 km", ">5 km")


def _add_geo(
    frame: pd.DataFrame,
    run: pd.DataFrame,
    index: GeoIndex,
    ties: TiePolicy,
    strict: pd.DataFrame | None = None,
    relevance_threshold: int = 1,
    *,
    ranking: RankedRun | None = None,
) -> pd.DataFrame:
    """Geo diagnostics, distance/stack slices and twin-aware metrics for one model
    (``strict``: the model's own table, when its relevance threshold is 1; twin-aware metrics
    use the dataset's relevance threshold, like the others). ``ranking``: the model's ranking
    from the metric core (:func:`analysis.core.ranked.evaluate_run_ranked`), read instead of
    ranking the run again (:func:`analysis.geo.ranked_geo_columns`; the same numbers); ``frame``
    (the core's values of that ranking, at ``relevance_threshold``) then gives the twin-aware
    metrics of the queries no twin changes."""
    if strict is not None and not {"recall@10", "ndcg@10"} <= set(strict.columns):
        strict = None
    if ranking is not None:
        first = None  # the core's first relevant rank is the first gold's at threshold 1
        if relevance_threshold == 1 and "first_gold_rank" in frame.columns:
            first = np.full(len(index.queries), np.inf)
            at = index.queries.get_indexer(frame["query_id"].astype("str"))
            ranks = frame["first_gold_rank"].to_numpy(dtype=np.float64, na_value=np.nan)
            first[at[at >= 0]] = np.nan_to_num(ranks[at >= 0], nan=0.0)  # NaN: none retrieved
        threshold = relevance_threshold
        geo = ranked_geo_columns(ranking, index, ties, 10, threshold, first_gold_rank=first,
                                 strict=frame)  # fmt: skip
    else:
        geo = model_geo_columns(
            run, index, ties, k=10, strict=strict, relevance_threshold=relevance_threshold
        )
    geo = geo.drop(columns=[c for c in geo.columns if c in frame.columns and c != "query_id"])
    if frame["query_id"].astype("str").equals(geo["query_id"].astype("str")):  # the same rows
        extra = geo.drop(columns="query_id").set_axis(frame.index)
        return geo_slices(pd.concat([frame, extra], axis=1))
    return geo_slices(frame.merge(geo, on="query_id", how="left"))


def geo_slices(out: pd.DataFrame) -> pd.DataFrame:
    """Add the slice columns derived from the geo columns, in place (and return the table):
    ``dist_gold_bucket`` (:data:`DIST_LABELS` of ``dist_query_gold_m``, ``unknown`` when NaN),
    ``gold_stacked`` (``stacked`` when ``gold_stack_size > 1``, else ``alone``) and
    ``location_tie`` (from ``indistinguishable``, a missing value counting as False)."""
    dist = out["dist_query_gold_m"].to_numpy(dtype=np.float64, na_value=np.nan)
    bucket = np.searchsorted(DIST_BINS, dist, side="left") - 1  # bins (a, b], as pd.cut
    labels = np.array([*DIST_LABELS, "unknown"], dtype=object)
    inside = (bucket >= 0) & (bucket < len(DIST_LABELS))  # NaN sorts past the last bin
    out["dist_gold_bucket"] = pd.array(labels[np.where(inside, bucket, len(DIST_LABELS))],
                                       dtype="str")  # fmt: skip
    size = out["gold_stack_size"].to_numpy(dtype=np.float64, na_value=1.0)
    out["gold_stacked"] = np.where(size > 1, "stacked", "alone")
    out["indistinguishable"] = flag_values(out["indistinguishable"])
    out["location_tie"] = np.where(out["indistinguishable"], "indistinguishable", "distinguishable")
    return out


_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def is_cjk(texts: pd.Series) -> bool:
    """Whether a text column is Chinese/Japanese/Korean: at least a third of the non-space
    characters of a sample of up to 200 non-empty texts are CJK ideographs, kana or hangul."""
    sample = texts[texts.str.len() > 0].head(200)
    joined = "".join(sample.str.replace(r"\s+", "", regex=True))
    return bool(joined) and len(_CJK.findall(joined)) * 3 >= len(joined)


def query_lengths(table: pd.DataFrame) -> tuple[pd.Series, str]:
    """The length of each query and its unit: an importer's ``query_chars`` column when
    present (characters); else characters without spaces for CJK text (:func:`is_cjk`), whose
    words are not separated by spaces; else words (whitespace-separated tokens)."""
    if "query_chars" in table.columns:
        chars = pd.to_numeric(table["query_chars"], errors="coerce").fillna(0)
        return chars.astype(np.int64), "characters"
    text = table["text"]
    if is_cjk(text):
        chars = text.str.replace(r"\s+", "", regex=True).str.len().fillna(0)
        return chars.astype(np.int64), "characters"
    return text.str.split().str.len().fillna(0).astype(np.int64), "words"


def _length_bucket(lengths: pd.Series, unit: str = "words") -> pd.Series:
    """Quartile buckets of the query length, labelled with the unit (``"3–5 words"``)."""
    if lengths.nunique() < 2:
        return pd.Series(
            np.where(lengths > 0, lengths.astype(str) + f" {unit}", "empty"), index=lengths.index
        )
    return bucket_numeric(lengths, 4).astype("str") + f" {unit}"


def slice_columns(table: pd.DataFrame) -> list[str]:
    """Columns a researcher can slice by: categorical-looking columns with at most
    :data:`MAX_CATEGORIES` values (the dataset, query type, answer-set size bucket, split,
    pattern, metapath and other metadata). Metric and diagnostic columns are excluded."""
    metric_like = set(dashboard_metrics())
    out = []
    for column in table.columns:
        if column in _NOT_SLICES or column in metric_like or "@" in column:
            continue
        if column in ("mrr", "n_gold", "n_retrieved", "first_gold_rank") or column.endswith(
            ("_min", "_max")
        ):
            continue
        series = table[column]
        if series.dtype == bool or pd.api.types.is_numeric_dtype(series):
            continue
        if series.nunique(dropna=False) <= MAX_CATEGORIES:
            out.append(column)
    first = ["dataset", "query_type", "n_gold_bucket"]
    return [c for c in first if c in out] + [c for c in out if c not in first]
