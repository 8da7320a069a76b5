"""What the three STaRK-like datasets share."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from demo.common import Dataset, Query, Rng, pick, query_tables


def stark_dataset(
    name: str,
    description: str,
    rng: Rng,
    synth: list[Query],
    human: list[Query],
    cand_ids: Sequence[str],
    entities: pd.DataFrame,
    edges: pd.DataFrame,
    candidate_types: tuple[str, ...] | None,
    triggers: dict[str, tuple[str, ...]],
) -> Dataset:
    queries = synth + human
    splits = [str(pick(rng, ["val", "test"], [0.35, 0.65])) for _ in synth] + ["test"] * len(human)
    qids = [str(i) for i in range(len(queries))]
    qdf, qrels = query_tables(queries, cand_ids, qids, {"split": splits})
    return Dataset(
        name, "stark", description, qdf, qrels, entities, edges, candidate_types, triggers
    )
