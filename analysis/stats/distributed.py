"""Evaluation past one machine: the out-of-core plan on Dask, over partitioned Parquet.

The plan is :mod:`analysis.core.outofcore`'s, written for ``dask.dataframe``:

1. read the run (a Parquet file, a folder of them, or a glob; columns ``query_id, doc_id`` and
   ``score`` or ``rank``) as partitions;
2. **shuffle by query**, so that every query's rows sit in one partition (hash partitioning),
   unless they already do: the query ids of each input partition are read first (one column)
   and when no query occurs in two partitions (a folder of Parquet files each holding whole
   queries, as written query by query) the partitions are reduced as they are, with no shuffle;
3. in each partition (pandas, in parallel, on as many workers as the scheduler has):
   deduplicate to one row per ``(query, doc)`` with the best score, rank per query by score as
   a 32-bit float descending then doc id descending by bytes (Python compares ``str`` by code
   point, which is UTF-8 byte order), mark ties, join the judged pairs with a positive gain
   and reduce to one row per query: documents returned, duplicate rows, tie flag, and the
   ranks and relevances of the judged documents;
4. collect the reduced rows (small: one per query) and apply the core's metric kernels
   (:func:`analysis.core.outofcore.finish`), so the per-query values and the warnings are the
   in-memory core's.

Scheduler: Dask's default local scheduler (threads of this machine), or a cluster when
``scheduler`` (or the environment variable ``DASK_SCHEDULER_ADDRESS``) names one and
``dask.distributed`` is installed. The cluster's scheduler and workers unpickle the plan, so
they need this library installed (``pip install .``) next to the same versions of dask,
pandas and pyarrow. Only the trec_eval tie policy is implemented.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from analysis.core import metrics as mx
from analysis.core.errors import DataWarning, InputError
from analysis.core.outofcore import finish, prepare_gold

SCHEDULER_ENV = "DASK_SCHEDULER_ADDRESS"
_REDUCED = {
    "q": "str",
    "n_ret": np.int64,
    "extra": np.int64,
    "bad": np.int64,
    "tied": bool,
    "ranks": object,
    "rels": object,
}


def _reduce(part: pd.DataFrame, gold: pd.DataFrame) -> pd.DataFrame:
    """One partition (whole queries) -> one reduced row per query (see the module docstring)."""
    if len(part) == 0:
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in _REDUCED.items()})
    score = pd.to_numeric(part["score"], errors="coerce").to_numpy(dtype=np.float64)
    bad = (
        ~np.isfinite(score) | part["query_id"].isna().to_numpy() | part["doc_id"].isna().to_numpy()
    )
    with np.errstate(over="ignore"):
        s32 = score.astype(np.float32)  # trec_eval stores scores as float
    frame = pd.DataFrame(
        {
            "q": part["query_id"].astype("str").to_numpy(dtype=object),
            "d": part["doc_id"].astype("str").to_numpy(dtype=object),
            "s": s32,
            "bad": bad.astype(np.int64),
        }
    )
    run = frame.groupby(["q", "d"], sort=False).agg(
        s=("s", "max"), n=("s", "size"), bad=("bad", "sum")
    )
    run = run.reset_index().sort_values(["q", "s", "d"], ascending=[True, False, False])
    run["r"] = run.groupby("q", sort=False).cumcount().astype(np.int64) + 1
    same_q = run["q"].to_numpy()[1:] == run["q"].to_numpy()[:-1]
    tie = np.r_[False, same_q & (run["s"].to_numpy()[1:] == run["s"].to_numpy()[:-1])]
    run["tie"] = tie
    run["extra"] = run["n"] - 1
    judged = run.merge(gold, on=["q", "d"], how="inner").sort_values(["q", "r"])
    per_q = run.groupby("q", sort=False).agg(
        n_ret=("r", "size"), extra=("extra", "sum"), bad=("bad", "sum"), tied=("tie", "any")
    )
    ranks = judged.groupby("q", sort=False)["r"].agg(lambda x: x.to_numpy(dtype=np.int64))
    rels = judged.groupby("q", sort=False)["rel"].agg(lambda x: x.to_numpy(dtype=np.int64))
    empty = np.zeros(0, dtype=np.int64)
    out = per_q.reset_index()
    out["ranks"] = [ranks.get(q, empty) for q in out["q"]]  # one entry per query (reduced)
    out["rels"] = [rels.get(q, empty) for q in out["q"]]
    out["q"] = out["q"].astype("str")
    return out[list(_REDUCED)]


def _distinct_queries(part: pd.Series) -> pd.Series:
    return pd.Series(pd.unique(part.astype("str").to_numpy(dtype=object)), dtype=object)


def whole_queries(ddf) -> bool:  # a dask DataFrame with a query_id column
    """Whether every query's rows sit in one partition (then no shuffle is needed): the distinct
    query ids of each partition, computed from the ``query_id`` column alone, never repeat
    across partitions. One partition always holds whole queries."""
    if ddf.npartitions == 1:
        return True
    ids = ddf["query_id"].map_partitions(_distinct_queries, meta=pd.Series(dtype=object))
    return not bool(ids.compute().duplicated().any())


def _client(scheduler: str | None):  # an optional dask.distributed.Client
    address = scheduler or os.environ.get(SCHEDULER_ENV)
    if not address:
        return None
    try:
        from dask.distributed import Client
    except ImportError:
        raise InputError(
            "--scheduler", None, "a Dask cluster needs dask.distributed (pip install distributed)"
        ) from None
    return Client(address)


def evaluate_dask(
    run: str | Path,
    qrels: mx.QrelsArrays,
    metrics: str | Iterable[str] = mx.DEFAULT_METRICS,
    *,
    relevance_threshold: int = 1,
    npartitions: int | None = None,
    scheduler: str | None = None,
) -> tuple[pa.Array, dict[str, np.ndarray], list[DataWarning], list[mx.Metric]]:
    """Per-query metrics of a partitioned Parquet run on Dask; the return value is that of
    :func:`analysis.core.metrics.evaluate_arrays` (qrels query ids, metric columns, warnings,
    metrics), with the in-memory core's values.

    Args:
        run: a Parquet file, a folder of Parquet files (read as one table) or a glob.
        qrels: ``(query ids, doc ids, relevance)`` (see :func:`analysis.core.metrics.qrels_arrays`).
        npartitions: partitions after the shuffle by query (default: those of the input).
        scheduler: a Dask scheduler address (default: ``$DASK_SCHEDULER_ADDRESS``, else local).

    Raises:
        InputError: a missing file or column, a missing id, or a score that is not finite.
    """
    import dask.dataframe as dd

    path = Path(run)
    target = str(path / "**" / "*.parquet") if path.is_dir() else str(run)
    if "*" not in target and not path.exists():
        raise InputError(run, None, "no such file")
    q, wanted, gold_arrow = prepare_gold(qrels, metrics, relevance_threshold)
    gold = gold_arrow.to_pandas()
    gold["q"] = gold["q"].astype(object)
    gold["d"] = gold["d"].astype(object)
    try:
        ddf = dd.read_parquet(target)
    except (OSError, ValueError, pa.ArrowException) as exc:
        raise InputError(run, None, f"cannot read Parquet: {exc}") from None
    columns = set(ddf.columns)
    missing = [c for c in ("query_id", "doc_id") if c not in columns]
    if missing or not ({"score", "rank"} & columns):
        need = missing or ["score (or rank)"]
        raise InputError(run, None, f"missing column(s) {', '.join(need)}")
    if "score" not in columns:
        ddf = ddf.assign(score=-ddf["rank"].astype("float64"))
    ddf = ddf[["query_id", "doc_id", "score"]]
    meta = pd.DataFrame({c: pd.Series(dtype=t) for c, t in _REDUCED.items()})
    client = _client(scheduler)
    try:
        if not whole_queries(ddf):
            ddf = ddf.shuffle("query_id", npartitions=npartitions or ddf.npartitions)
        reduced = ddf.map_partitions(_reduce, gold, meta=meta).compute()
    except (ImportError, RuntimeError) as exc:
        if client is None:
            raise
        raise InputError(
            "--scheduler",
            None,
            "the Dask scheduler or a worker cannot run the plan (install this library where "
            f"they run, e.g. pip install .): {str(exc).splitlines()[0]}",
        ) from None
    finally:
        if client is not None:
            client.close()
    if int(reduced["bad"].sum()):
        raise InputError(run, None, "a row has a missing id or a score that is not a finite number")
    table = pa.table(
        {
            "q": pa.array(reduced["q"].to_numpy(dtype=object), type=pa.string()),
            "n_ret": pa.array(reduced["n_ret"].to_numpy(dtype=np.int64)),
            "extra": pa.array(reduced["extra"].to_numpy(dtype=np.int64)),
            "tied": pa.array(reduced["tied"].to_numpy(dtype=bool)),
            "ranks": pa.array(list(reduced["ranks"]), type=pa.list_(pa.int64())),
            "rels": pa.array(list(reduced["rels"]), type=pa.list_(pa.int64())),
        }
    )
    return finish(table, q, wanted, relevance_threshold)
