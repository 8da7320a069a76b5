"""The geo diagnostics as first written (pandas merges, recomputed per model): the reference
the vectorized :mod:`analysis.geo.diagnostics` is checked against, value for value."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.core.errors import InputError
from analysis.core.metrics import TiePolicy, evaluate, rank_run
from analysis.geo.geometry import (
    _require_unique_ids,
    canonicalize_twins,
    coordinate_stacks,
    haversine_m,
)
from analysis.stats.perquery import geo_slices


def _relevant(qrels: pd.DataFrame) -> pd.DataFrame:
    missing = [c for c in ("query_id", "doc_id", "relevance") if c not in qrels.columns]
    if missing:
        raise InputError("qrels", None, f"missing column(s) {', '.join(missing)}")
    rel = pd.DataFrame(
        {
            "query_id": qrels["query_id"].astype("str"),
            "doc_id": qrels["doc_id"].astype("str"),
            "relevance": pd.to_numeric(qrels["relevance"], errors="coerce"),
        }
    )
    rel = rel[rel["relevance"] >= 1]
    return rel.drop_duplicates(["query_id", "doc_id"])[["query_id", "doc_id"]]


def reference_geo_diagnostics(
    ranked_run: pd.DataFrame,
    qrels: pd.DataFrame,
    queries: pd.DataFrame,
    pois: pd.DataFrame,
    k: int = 10,
) -> pd.DataFrame:
    """The columns and contract of :func:`analysis.geo.diagnostics.geo_diagnostics` (see its
    docstring), computed the way they were first written: pandas merges per query."""
    for col in ("query_id", "doc_id", "rank"):
        if col not in ranked_run.columns:
            raise InputError(
                "run",
                None,
                f"missing column {col} (rank the run first, e.g. analysis.core.metrics.rank_run)",
            )
    _require_unique_ids(pois, "doc_id", "pois")
    _require_unique_ids(queries, "query_id", "queries")
    rel = _relevant(qrels)
    qids = pd.Series(pd.unique(qrels["query_id"].astype("str")), name="query_id", dtype="str")
    base = pd.DataFrame({"query_id": qids})

    st = coordinate_stacks(pois)
    sid = st["stack_id"].to_numpy()
    poi = pd.DataFrame(
        {
            "doc_id": st["doc_id"].astype("str"),
            "plat": pd.to_numeric(st["lat"]).astype("float64"),
            "plon": pd.to_numeric(st["lon"]).astype("float64"),
            # unlocated POIs (stack -1) get NaN: never "on" any coordinate
            "stack_id": np.where(sid >= 0, sid, np.nan),
            "stack_size": st["stack_size"].to_numpy(),
        }
    )
    q = pd.DataFrame({"query_id": queries["query_id"].astype("str")})
    if {"lat", "lon"} <= set(queries.columns):
        q["qlat"] = pd.to_numeric(queries["lat"], errors="coerce").astype("float64").to_numpy()
        q["qlon"] = pd.to_numeric(queries["lon"], errors="coerce").astype("float64").to_numpy()
    else:
        q["qlat"] = np.nan
        q["qlon"] = np.nan

    # gold: nearest distance and largest stack
    gold = rel.merge(poi, on="doc_id", how="inner").merge(q, on="query_id", how="left")
    gold["dist"] = haversine_m(gold["qlat"], gold["qlon"], gold["plat"], gold["plon"])
    located_gold = gold[gold["stack_id"].notna()]
    g_agg = located_gold.groupby("query_id", sort=False).agg(
        dist_query_gold_m=("dist", "min"), gold_stack_size=("stack_size", "max")
    )

    # run with gold flag and coordinates
    run = pd.DataFrame(
        {
            "query_id": ranked_run["query_id"].astype("str"),
            "doc_id": ranked_run["doc_id"].astype("str"),
            "rank": pd.to_numeric(ranked_run["rank"], errors="raise").astype("int64"),
        }
    )
    run = run[run["query_id"].isin(qids)]
    run = run.merge(rel, on=["query_id", "doc_id"], how="left", indicator="_m")
    run["is_gold"] = (run["_m"] == "both").to_numpy()
    run = run.drop(columns="_m")
    run = run.merge(poi, on="doc_id", how="left")

    top1 = run.sort_values(["query_id", "rank"]).drop_duplicates("query_id")
    top1 = top1.merge(q, on="query_id", how="left")
    top1["dist_query_top1_m"] = haversine_m(top1["qlat"], top1["qlon"], top1["plat"], top1["plon"])

    gold_rows = run[run["is_gold"]].sort_values(["query_id", "rank"])
    first_gold = gold_rows.drop_duplicates("query_id")[["query_id", "rank", "stack_id"]]
    first_gold = first_gold.rename(columns={"rank": "first_gold_rank", "stack_id": "fg_stack"})

    above = run[~run["is_gold"]].merge(first_gold, on="query_id", how="inner")
    hit = (
        (above["rank"] < above["first_gold_rank"])
        & above["fg_stack"].notna()
        & (above["stack_id"] == above["fg_stack"])
    )
    n_above = above[hit].groupby("query_id", sort=False).size().rename("n_above_gold_on_gold_coord")

    gold_stacks = located_gold[["query_id", "stack_id"]].drop_duplicates()
    topk = run[(run["rank"] <= k) & ~run["is_gold"] & run["stack_id"].notna()]
    mates = topk.merge(gold_stacks, on=["query_id", "stack_id"], how="inner")
    n_mates = mates.groupby("query_id", sort=False).size().rename("stackmates_in_top_k")

    out = base.merge(g_agg.reset_index(), on="query_id", how="left")
    out = out.merge(top1[["query_id", "dist_query_top1_m"]], on="query_id", how="left")
    out = out.merge(first_gold[["query_id", "first_gold_rank"]], on="query_id", how="left")
    out = out.merge(n_above.reset_index(), on="query_id", how="left")
    out = out.merge(n_mates.reset_index(), on="query_id", how="left")
    out["dist_query_gold_m"] = out["dist_query_gold_m"].astype("float64")
    out["dist_query_top1_m"] = out["dist_query_top1_m"].astype("float64")
    out["gold_stack_size"] = out["gold_stack_size"].astype("Int64")
    out["first_gold_rank"] = out["first_gold_rank"].astype("Int64")
    for col in ("n_above_gold_on_gold_coord", "stackmates_in_top_k"):
        out[col] = out[col].fillna(0).astype("int64")
    out["indistinguishable"] = out["n_above_gold_on_gold_coord"] > 0
    cols = [
        "query_id",
        "dist_query_gold_m",
        "dist_query_top1_m",
        "gold_stack_size",
        "first_gold_rank",
        "indistinguishable",
        "n_above_gold_on_gold_coord",
        "stackmates_in_top_k",
    ]
    return out[cols]


def reference_add_geo(
    frame: pd.DataFrame,
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    queries: pd.DataFrame,
    pois: pd.DataFrame,
    ties: TiePolicy,
) -> pd.DataFrame:
    """Geo diagnostics, distance/stack slices and twin-aware metrics for one model."""
    ranked = rank_run(run, ties)
    located = pois.dropna(subset=["lat", "lon"])
    geo = reference_geo_diagnostics(ranked, qrels, queries, located, k=10)
    geo = geo.drop(columns=[c for c in geo.columns if c in frame.columns and c != "query_id"])
    twin_run, twin_qrels = canonicalize_twins(ranked, qrels, located)
    twin = evaluate(twin_run, twin_qrels, ["recall@10", "ndcg@10"], ties=ties)
    twin.columns = ["query_id", "twin_recall@10", "twin_ndcg@10"]
    out = frame.merge(geo, on="query_id", how="left").merge(twin, on="query_id", how="left")
    return geo_slices(out)  # the slice labels are not what this reference checks
