"""STaRK-MAG-like dataset: papers with authors, institutions, fields of study and citations."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np

from demo.common import (
    Dataset,
    Query,
    Rng,
    digit_ids,
    pick,
    sample,
    some,
    vocabulary,
    zipf,
)
from demo.kb import KnowledgeBase
from demo.stark import Phrasebook, StarkDomain, Templates, stark_dataset

V: Final = vocabulary("mag")
ask: Final = Phrasebook(V.queries).ask


FIELDS: Final = list(V.fields)
TOPICS: Final = [(f, t) for f in FIELDS for t in V.fields[f]]
N_AUTHORS: Final = 1100
N_PAPERS: Final = 2800


def mag(rng: Rng) -> Dataset:
    """STaRK-MAG-like: 2,800 papers by 1,100 authors of 26 institutions, 8 fields with 40
    topics, citations mostly to older papers of the same topic; queries by institution, author,
    citation, co-authorship, topic and method."""
    lib = _Library(rng)
    kb = lib.knowledge_base()
    ids_other = digit_ids(rng, len(kb) - N_PAPERS, 0, 1_200_000)  # authors, institutions, fields
    ids = digit_ids(rng, N_PAPERS, 1_200_000, 1_870_000) + ids_other
    return stark_dataset(rng, StarkDomain.from_table(V.domain), kb, ids, lib.templates())


def _people(rng: Rng) -> tuple[list[str], list[str], np.ndarray]:
    """26 institutions, 1,100 distinct author names and each author's institution."""
    insts = [pick(rng, V.institution_forms).format(p=p) for p in sample(rng, V.places, 26)]
    names: dict[str, None] = {}
    while len(names) < N_AUTHORS:
        f, l_ = pick(rng, V.first_names), pick(rng, V.last_names)
        style = int(rng.integers(3))
        nm = f"{f} {l_}" if style else f"{f} {chr(65 + int(rng.integers(26)))}. {l_}"
        names[nm] = None
    auth_inst = rng.choice(len(insts), N_AUTHORS, p=zipf(len(insts), 0.6))
    return insts, list(names), auth_inst


def _topics(rng: Rng) -> tuple[np.ndarray, np.ndarray]:
    """Per paper its topic and a second topic (mostly of the same field, never the first)."""
    n_topics = len(TOPICS)
    topic_w = zipf(n_topics, 0.5)[rng.permutation(n_topics)]
    p_topic = rng.choice(n_topics, N_PAPERS, p=topic_w)
    p_topic2 = np.array(
        [
            pick(rng, [j for j in range(n_topics) if TOPICS[j][0] == TOPICS[t][0] and j != t])
            if rng.random() < 0.6
            else int(rng.integers(n_topics))
            for t in p_topic
        ]
    )
    p_topic2[p_topic2 == p_topic] = (p_topic2[p_topic2 == p_topic] + 1) % n_topics
    return p_topic, p_topic2


def _teams(rng: Rng, inst_auth: list[np.ndarray]) -> list[list[int]]:
    """Per paper its authors: 1-4 of one institution, sometimes one more from anywhere."""
    p_auth: list[list[int]] = []
    n_insts = len(inst_auth)
    for _ in range(N_PAPERS):
        i = int(rng.choice(n_insts, p=zipf(n_insts, 0.6)))
        pool = inst_auth[i]
        k = min(int(rng.integers(1, 5)), len(pool))
        team = [int(a) for a in rng.choice(pool, k, replace=False, p=zipf(len(pool), 0.9))]
        if rng.random() < 0.3:
            team.append(int(rng.integers(N_AUTHORS)))
        p_auth.append(list(dict.fromkeys(team)))
    return p_auth


class _Library:
    """The papers of one demo dataset (drawn in ``__init__``), their knowledge base and the
    query templates over them."""

    def __init__(self, rng: Rng) -> None:
        self.rng = rng
        self.insts, self.authors, self.auth_inst = _people(rng)
        inst_auth = [np.flatnonzero(self.auth_inst == i) for i in range(len(self.insts))]
        self.p_topic, self.p_topic2 = _topics(rng)
        self.p_year = rng.integers(2005, 2021, N_PAPERS)
        self.p_method = rng.integers(len(V.methods), size=N_PAPERS)
        self.p_auth = _teams(rng, inst_auth)
        self.titles: list[str] = []
        self.texts = [self._text(i) for i in range(N_PAPERS)]
        self.cites = self._cites()
        self.auth_papers: list[list[int]] = [[] for _ in range(N_AUTHORS)]
        for i, team in enumerate(self.p_auth):
            for a in team:
                self.auth_papers[a].append(i)
        self.paper_has_inst = np.zeros((N_PAPERS, len(self.insts)), bool)
        for i, team in enumerate(self.p_auth):
            self.paper_has_inst[i, self.auth_inst[team]] = True

    def _text(self, i: int) -> str:
        """Paper ``i``'s document (title, abstract, authors, fields, year, venue); records its
        title."""
        rng = self.rng
        t, t2 = TOPICS[self.p_topic[i]][1], TOPICS[self.p_topic2[i]][1]
        m, asp, ctx = V.methods[self.p_method[i]], pick(rng, V.aspects), pick(rng, V.contexts)
        title = pick(
            rng,
            [
                f"{t[0].upper() + t[1:]} in {ctx}: {m}",
                f"On the {asp} of {t}",
                f"{m[0].upper() + m[1:]} of {t} with {t2}",
                f"{asp.capitalize()} of {t} in {ctx}",
            ],
        )
        self.titles.append(title)
        abstract = (
            f"We study the {asp} of {t} using {m}. Our results show {pick(rng, V.findings)} "
            f"for {t2} in {ctx}."
        )
        return (
            f"- paper: {title}\n- abstract: {abstract}\n- authors: "
            f"{', '.join(self.authors[a] for a in self.p_auth[i])}\n- fields of study: "
            f"{TOPICS[self.p_topic[i]][0]}; {t.capitalize()}; {t2.capitalize()}\n"
            f"- year: {self.p_year[i]}\n- venue: {pick(rng, V.venues)}"
        )

    def _cites(self) -> list[list[int]]:
        """Per paper up to 8 cited papers, mostly older ones of the same topic."""
        rng, p_topic, p_year = self.rng, self.p_topic, self.p_year
        cites: list[list[int]] = [[] for _ in range(N_PAPERS)]
        by_topic = [np.flatnonzero(p_topic == j) for j in range(len(TOPICS))]
        for i in range(N_PAPERS):
            older_same = [int(j) for j in by_topic[p_topic[i]] if p_year[j] < p_year[i]]
            for _ in range(int(rng.integers(0, 9))):
                j = (
                    pick(rng, older_same)
                    if older_same and rng.random() < 0.7
                    else int(rng.integers(N_PAPERS))
                )
                if j != i and j not in cites[i]:
                    cites[i].append(j)
        return cites

    def knowledge_base(self) -> KnowledgeBase:
        """Papers, authors, institutions and fields of study with their edges."""
        field_names = FIELDS + [t[1].capitalize() for t in TOPICS]
        kb = KnowledgeBase()
        kb.add(
            "paper",
            self.titles,
            self.texts,
            year=[int(y) for y in self.p_year],
            field=[TOPICS[t][0] for t in self.p_topic],
        )
        auth_ix = kb.add(
            "author",
            self.authors,
            [
                f"- author: {a}\n- papers: {len(self.auth_papers[i])}"
                for i, a in enumerate(self.authors)
            ],
        )
        inst_ix = kb.add("institution", self.insts, [f"- institution: {x}" for x in self.insts])
        field_ix = kb.add(
            "field_of_study", field_names, [f"- field of study: {f}" for f in field_names]
        )
        for i in range(N_PAPERS):
            for a in self.p_auth[i]:
                kb.link(i, "written_by", auth_ix[a])
            kb.link(i, "has_field", field_ix[FIELDS.index(TOPICS[self.p_topic[i]][0])])
            for t in (self.p_topic[i], self.p_topic2[i]):
                kb.link(i, "has_field", field_ix[len(FIELDS) + t])
            for j in self.cites[i]:
                kb.link(i, "cites", j)
        for a in range(N_AUTHORS):
            kb.link(auth_ix[a], "affiliated_with", inst_ix[self.auth_inst[a]])
        return kb

    def templates(self) -> Templates:
        """The synthesized and human templates, with their weights, in drawing order."""
        return Templates.of(
            synthesized=(
                (0.2, self.q_inst), (0.16, self.q_author), (0.16, self.q_cites),
                (0.16, self.q_coauthor), (0.16, self.q_topic), (0.16, self.q_field_year),
            ),
            human=(
                (0.25, self.h_author_year), (0.35, self.h_interest), (0.2, self.h_cited_inst),
                (0.2, self.h_shares),
            ),
        )  # fmt: skip

    def paper(self, rng: Rng) -> int:
        return int(rng.integers(N_PAPERS))

    def q_inst(self, rng: Rng) -> Query:
        a = self.paper(rng)
        inst = int(self.auth_inst[pick(rng, self.p_auth[a])])
        t = self.p_topic[a]
        mask = self.paper_has_inst[:, inst] & ((self.p_topic == t) | (self.p_topic2 == t))
        f, tn = TOPICS[t]
        if rng.random() < 0.5:
            mask &= self.p_year == self.p_year[a]
            name = "q_inst_year"
        else:
            name = "q_inst"
        gold = np.flatnonzero(mask)
        institution = self.insts[inst]
        return ask(rng, name, gold, year=self.p_year[a], field=f, institution=institution, topic=tn)

    def q_author(self, rng: Rng) -> Query:
        a = self.paper(rng)
        au = pick(rng, self.p_auth[a])
        t = self.p_topic[a]
        gold = [i for i in self.auth_papers[au] if t in (self.p_topic[i], self.p_topic2[i])]
        return ask(rng, "q_author", gold, author=self.authors[au], topic=TOPICS[t][1])

    def coauthored(self, rng: Rng) -> tuple[int, Sequence[int]]:
        """A paper and the other papers of its authors (:class:`NoQuery` when there are none)."""
        x = self.paper(rng)
        return x, some(sorted({j for a in self.p_auth[x] for j in self.auth_papers[a]} - {x}))

    def on_a_topic(self, rng: Rng, related: Sequence[int]) -> tuple[int, list[int]]:
        """The topic of one of the ``related`` papers, and the related papers about it."""
        t = self.p_topic[pick(rng, related)]
        return t, [j for j in related if t in (self.p_topic[j], self.p_topic2[j])]

    def q_cites(self, rng: Rng) -> Query:
        x = self.paper(rng)
        t, gold = self.on_a_topic(rng, some(self.cites[x]))
        return ask(rng, "q_cites", gold, topic=TOPICS[t][1], title=self.titles[x])

    def q_coauthor(self, rng: Rng) -> Query:
        x, co = self.coauthored(rng)
        t, gold = self.on_a_topic(rng, co)
        return ask(rng, "q_coauthor", gold, title=self.titles[x], topic=TOPICS[t][1])

    def q_topic(self, rng: Rng) -> Query:
        a = self.paper(rng)
        t, t2 = self.p_topic[a], self.p_topic2[a]
        gold = np.flatnonzero((self.p_topic == t) & (self.p_topic2 == t2))
        return ask(rng, "q_topic", gold, topic=TOPICS[t][1], topic2=TOPICS[t2][1])

    def q_field_year(self, rng: Rng) -> Query:
        a = self.paper(rng)
        t, m = self.p_topic[a], self.p_method[a]
        gold = np.flatnonzero((self.p_topic == t) & (self.p_method == m))
        return ask(rng, "q_field_year", gold, topic=TOPICS[t][1], method=V.methods[m])

    def h_author_year(self, rng: Rng) -> Query:
        a = self.paper(rng)
        au = pick(rng, self.p_auth[a])
        gold = [i for i in self.auth_papers[au] if self.p_year[i] == self.p_year[a]]
        return ask(rng, "h_author_year", gold, author=self.authors[au], year=self.p_year[a])

    def h_interest(self, rng: Rng) -> Query:
        a = self.paper(rng)
        t, t2 = self.p_topic[a], self.p_topic2[a]
        gold = np.flatnonzero((self.p_topic == t) & (self.p_topic2 == t2))
        topic, topic2 = TOPICS[t][1].lower(), TOPICS[t2][1].lower()
        return ask(rng, "h_interest", gold, topic=topic, topic2=topic2)

    def h_cited_inst(self, rng: Rng) -> Query:
        x = self.paper(rng)
        j0 = pick(rng, some(self.cites[x]))
        inst = int(self.auth_inst[pick(rng, self.p_auth[j0])])
        gold = [j for j in self.cites[x] if self.paper_has_inst[j, inst]]
        return ask(rng, "h_cited_inst", gold, institution=self.insts[inst], title=self.titles[x])

    def h_shares(self, rng: Rng) -> Query:
        x, co = self.coauthored(rng)
        return ask(rng, "h_shares", co, title=self.titles[x].lower())
