"""What the three STaRK-like datasets share: query records and the dataset built from a domain.

A domain (:mod:`demo.amazon`, :mod:`demo.mag`, :mod:`demo.prime`) builds its
:class:`~demo.kb.KnowledgeBase` and its query :class:`Templates` (worded by its
:class:`Phrasebook`); :func:`stark_dataset` draws the queries (330 synthesized, 90 human), the
val/test split and the tables the same way for every domain, with the domain's settings
(:class:`StarkDomain`). Wording and settings are the domain's vocabulary, ``demo/vocab/*.toml``.
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

__all__ = [
    "N_HUMAN",
    "N_SYNTHESIZED",
    "PATTERNS",
    "Phrasebook",
    "StarkDomain",
    "Template",
    "Templates",
    "stark_dataset",
]

N_SYNTHESIZED = 330
N_HUMAN = 90

Template = Callable[[Rng], Query]


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


class Templates:
    """A domain's query templates, by kind, each with its weight, in the order they are defined.

    Register one with ``@templates.synthesized(weight)`` or ``@templates.human(weight)``; a
    template draws an anchor and returns a :class:`Query` (or raises :class:`~demo.common.NoQuery`).
    """

    def __init__(self) -> None:
        self.by_kind: dict[str, list[tuple[Template, float]]] = {"synthesized": [], "human": []}

    @classmethod
    def of(
        cls,
        synthesized: Sequence[tuple[float, Template]],
        human: Sequence[tuple[float, Template]],
    ) -> Templates:
        """The templates given as ``(weight, template)`` pairs, by kind, in drawing order."""
        templates = cls()
        for weight, template in synthesized:
            templates.synthesized(weight)(template)
        for weight, template in human:
            templates.human(weight)(template)
        return templates

    def synthesized(self, weight: float) -> Callable[[Template], Template]:
        return self._register("synthesized", weight)

    def human(self, weight: float) -> Callable[[Template], Template]:
        return self._register("human", weight)

    def _register(self, kind: str, weight: float) -> Callable[[Template], Template]:
        def register(template: Template) -> Template:
            self.by_kind[kind].append((template, weight))
            return template

        return register

    def draw(self, rng: Rng, kind: str, n: int, max_gold: int) -> list[Query]:
        """``n`` queries of ``kind`` (see :func:`demo.common.collect`)."""
        templates = self.by_kind[kind]
        queries = collect(rng, n, [t for t, _ in templates], [w for _, w in templates], max_gold)
        wrong = [q.text for q in queries if q.query_type != kind]
        if wrong:
            raise ValueError(f"{kind} templates made other queries: {wrong[:3]}")
        return queries


@dataclass(frozen=True)
class StarkDomain:
    """A STaRK-like domain's dataset settings: the ``[domain]`` table of its vocabulary.

    A query is kept when it has 1..``max_answers`` gold entities and a text not seen before.
    Candidates are the entities of ``candidate_types`` (every entity when None); ``triggers`` map
    query words to the relations they activate (:class:`analysis.baselines.RelationAwareRetriever`).
    """

    name: str
    description: str
    max_answers: int
    candidate_types: tuple[str, ...] | None
    triggers: dict[str, tuple[str, ...]]

    @classmethod
    def from_table(cls, table: Mapping[str, Any]) -> StarkDomain:
        types = table.get("candidate_types")
        return cls(
            table["name"],
            table["description"],
            table["max_answers"],
            None if types is None else tuple(types),
            {word: tuple(rels) for word, rels in table["triggers"].items()},
        )


def stark_dataset(
    rng: Rng, domain: StarkDomain, kb: KnowledgeBase, ids: Sequence[str], templates: Templates
) -> Dataset:
    """The dataset of ``domain``: synthesized then human queries (ids ``"0"``, ``"1"``, ...) from
    ``templates``, a split per query (synthesized: val 35 % / test 65 %; human: test), and the
    entities and edges of ``kb`` with ``ids``."""
    synth = templates.draw(rng, "synthesized", N_SYNTHESIZED, domain.max_answers)
    hum = templates.draw(rng, "human", N_HUMAN, domain.max_answers)
    queries = synth + hum
    splits = [str(pick(rng, ["val", "test"], [0.35, 0.65])) for _ in synth] + ["test"] * len(hum)
    qids = [str(i) for i in range(len(queries))]
    qdf, qrels = query_tables(queries, ids, qids, {"split": splits})
    entities, edges = kb.tables(ids)
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
