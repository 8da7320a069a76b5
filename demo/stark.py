"""What the three STaRK-like datasets share: query records and the dataset built from a domain.

A domain (:mod:`demo.amazon`, :mod:`demo.mag`, :mod:`demo.prime`) builds its
:class:`~demo.kb.KnowledgeBase` and its query templates, and hands them over as a
:class:`StarkDomain`; :func:`stark_dataset` draws the queries (330 synthesized, 90 human), the
val/test split and the tables, the same way for every domain.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from demo.common import Dataset, Query, Rng, collect, pick, query_tables, typo
from demo.kb import KnowledgeBase

__all__ = ["N_HUMAN", "N_SYNTHESIZED", "StarkDomain", "human", "stark_dataset", "synthesized"]

N_SYNTHESIZED = 330
N_HUMAN = 90

Template = Callable[[Rng], Query | None]


def synthesized(text: str, gold: Iterable[int], metapath: str, pattern: str) -> Query:
    """A synthesized query (STaRK's template-rendered kind) with its MoR-style ``metapath`` and
    textual/relational ``pattern`` slices; ``gold`` are node indices of the knowledge base."""
    return Query(
        text, [int(g) for g in gold], "synthesized", {"metapath": metapath, "pattern": pattern}
    )


def human(
    rng: Rng,
    text: str,
    gold: Iterable[int],
    metapath: str,
    pattern: str,
    typos: tuple[int, int] | None,
) -> Query:
    """A human-style query: ``text`` with ``rng.integers(*typos)`` typos (see :func:`typo`);
    ``typos=None`` keeps the text as it is (and draws nothing)."""
    if typos is not None:
        n = int(rng.integers(*typos))
        text = typo(rng, text, n)
    return Query(text, [int(g) for g in gold], "human", {"metapath": metapath, "pattern": pattern})


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
