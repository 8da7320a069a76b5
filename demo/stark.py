"""What the three STaRK-like datasets share: query records and the dataset built from a domain.

A domain (:mod:`demo.amazon`, :mod:`demo.mag`, :mod:`demo.prime`) builds its
:class:`~demo.kb.KnowledgeBase` and its query templates, and hands them over as a
:class:`StarkDomain`; :func:`stark_dataset` draws the queries (330 synthesized, 90 human), the
val/test split and the tables, the same way for every domain.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from demo.common import (
    ONE_HOP,
    TEXTUAL,
    TWO_HOPS,
    Dataset,
    Query,
    Rng,
    collect,
    pick,
    query_tables,
    typo,
)
from demo.kb import KnowledgeBase

__all__ = ["N_HUMAN", "N_SYNTHESIZED", "PATTERNS", "Phrasebook", "StarkDomain", "stark_dataset"]

N_SYNTHESIZED = 330
N_HUMAN = 90

Template = Callable[[Rng], Query | None]


PATTERNS = (TEXTUAL, ONE_HOP, TWO_HOPS)


@dataclass(frozen=True)
class Phrasebook:
    """How a domain's queries are worded and sliced: the ``[queries.<name>]`` tables of its
    vocabulary (``demo/vocab/<domain>.toml``).

    A table has ``kind`` (``"synthesized"`` or ``"human"``), ``metapath`` (MoR-style path),
    ``pattern`` (one of :data:`PATTERNS`), ``text`` (one or more phrasings, :meth:`str.format`
    templates over the values a query template computed) and, for human queries, optionally
    ``typos = [low, high]``.
    """

    tables: Mapping[str, Mapping[str, Any]]

    def __post_init__(self) -> None:
        for name, t in self.tables.items():
            if t["kind"] not in ("synthesized", "human") or t["pattern"] not in PATTERNS:
                raise ValueError(f"query table {name!r}: bad kind or pattern")

    def ask(self, rng: Rng, name: str, gold: Iterable[int], **values: Any) -> Query:
        """The query ``name`` answered by ``gold`` (node indices of the knowledge base).

        With several phrasings one is picked (``rng``); a single one draws nothing. Then the
        phrasing is filled with ``values`` and, with ``typos``, gets ``rng.integers(*typos)``
        typos (:func:`demo.common.typo`).
        """
        t = self.tables[name]
        texts = t["text"]
        text = (texts[0] if len(texts) == 1 else pick(rng, texts)).format(**values)
        if "typos" in t:
            n = int(rng.integers(*t["typos"]))
            text = typo(rng, text, n)
        meta = {"metapath": t["metapath"], "pattern": t["pattern"]}
        return Query(text, [int(g) for g in gold], t["kind"], meta)


@dataclass
class StarkDomain:
    """One STaRK-like domain, ready to draw queries from.

    ``synthesized`` and ``human`` are query templates with their weights; a query is kept when it
    has 1..``max_answers`` gold entities and a text not seen before. Candidates are the entities
    of ``candidate_types`` (every entity when None); ``triggers`` map query words to the relations
    they activate (:class:`analysis.baselines.RelationAwareRetriever`).
    """

    name: str
    description: str
    kb: KnowledgeBase
    ids: Sequence[str]
    synthesized: Sequence[tuple[Template, float]]
    human: Sequence[tuple[Template, float]]
    max_answers: int
    candidate_types: tuple[str, ...] | None
    triggers: dict[str, tuple[str, ...]]


def _draw(rng: Rng, n: int, templates: Sequence[tuple[Template, float]], max_gold: int) -> list:
    return collect(rng, n, [t for t, _ in templates], [w for _, w in templates], max_gold)


def stark_dataset(rng: Rng, domain: StarkDomain) -> Dataset:
    """The dataset of ``domain``: synthesized then human queries (ids ``"0"``, ``"1"``, ...), a
    split per query (synthesized: val 35 % / test 65 %; human: test), entities and edges."""
    synth = _draw(rng, N_SYNTHESIZED, domain.synthesized, domain.max_answers)
    hum = _draw(rng, N_HUMAN, domain.human, domain.max_answers)
    queries = synth + hum
    splits = [str(pick(rng, ["val", "test"], [0.35, 0.65])) for _ in synth] + ["test"] * len(hum)
    qids = [str(i) for i in range(len(queries))]
    qdf, qrels = query_tables(queries, domain.ids, qids, {"split": splits})
    entities, edges = domain.kb.tables(domain.ids)
    return Dataset(
        domain.name,
        "stark",
        domain.description,
        qdf,
        qrels,
        entities,
        edges,
        domain.candidate_types,
        domain.triggers,
    )
