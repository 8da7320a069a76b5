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


def mag(rng: Rng) -> Dataset:
    """STaRK-MAG-like: 2,800 papers by 1,100 authors of 26 institutions, 8 fields with 40
    topics, citations mostly to older papers of the same topic; queries by institution, author,
    citation, co-authorship, topic and method."""
    fields = list(V.fields)
    topics = [(f, t) for f in fields for t in V.fields[f]]
    n_topics = len(topics)
    insts = [pick(rng, V.institution_forms).format(p=p) for p in sample(rng, V.places, 26)]
    n_auth = 1100
    names: dict[str, None] = {}
    while len(names) < n_auth:
        f, l_ = pick(rng, V.first_names), pick(rng, V.last_names)
        style = int(rng.integers(3))
        nm = f"{f} {l_}" if style else f"{f} {chr(65 + int(rng.integers(26)))}. {l_}"
        names[nm] = None
    authors = list(names)
    auth_inst = rng.choice(len(insts), n_auth, p=zipf(len(insts), 0.6))
    inst_auth = [np.flatnonzero(auth_inst == i) for i in range(len(insts))]

    n_pap = 2800
    topic_w = zipf(n_topics, 0.5)[rng.permutation(n_topics)]
    p_topic = rng.choice(n_topics, n_pap, p=topic_w)
    p_topic2 = np.array(
        [
            pick(rng, [j for j in range(n_topics) if topics[j][0] == topics[t][0] and j != t])
            if rng.random() < 0.6
            else int(rng.integers(n_topics))
            for t in p_topic
        ]
    )
    p_topic2[p_topic2 == p_topic] = (p_topic2[p_topic2 == p_topic] + 1) % n_topics
    p_year = rng.integers(2005, 2021, n_pap)
    p_method = rng.integers(len(V.methods), size=n_pap)
    p_auth: list[list[int]] = []
    for _ in range(n_pap):
        i = int(rng.choice(len(insts), p=zipf(len(insts), 0.6)))
        pool = inst_auth[i]
        k = min(int(rng.integers(1, 5)), len(pool))
        team = [int(a) for a in rng.choice(pool, k, replace=False, p=zipf(len(pool), 0.9))]
        if rng.random() < 0.3:
            team.append(int(rng.integers(n_auth)))
        p_auth.append(list(dict.fromkeys(team)))
    titles, texts = [], []
    for i in range(n_pap):
        t, t2 = topics[p_topic[i]][1], topics[p_topic2[i]][1]
        m, asp, ctx = V.methods[p_method[i]], pick(rng, V.aspects), pick(rng, V.contexts)
        title = pick(
            rng,
            [
                f"{t[0].upper() + t[1:]} in {ctx}: {m}",
                f"On the {asp} of {t}",
                f"{m[0].upper() + m[1:]} of {t} with {t2}",
                f"{asp.capitalize()} of {t} in {ctx}",
            ],
        )
        titles.append(title)
        abstract = (
            f"We study the {asp} of {t} using {m}. Our results show {pick(rng, V.findings)} "
            f"for {t2} in {ctx}."
        )
        texts.append(
            f"- paper: {title}\n- abstract: {abstract}\n- authors: "
            f"{', '.join(authors[a] for a in p_auth[i])}\n- fields of study: "
            f"{topics[p_topic[i]][0]}; {t.capitalize()}; {t2.capitalize()}\n"
            f"- year: {p_year[i]}\n- venue: {pick(rng, V.venues)}"
        )
    cites: list[list[int]] = [[] for _ in range(n_pap)]
    by_topic = [np.flatnonzero(p_topic == j) for j in range(n_topics)]
    for i in range(n_pap):
        older_same = [int(j) for j in by_topic[p_topic[i]] if p_year[j] < p_year[i]]
        for _ in range(int(rng.integers(0, 9))):
            j = (
                pick(rng, older_same)
                if older_same and rng.random() < 0.7
                else int(rng.integers(n_pap))
            )
            if j != i and j not in cites[i]:
                cites[i].append(j)
    auth_papers = [[] for _ in range(n_auth)]
    for i, team in enumerate(p_auth):
        for a in team:
            auth_papers[a].append(i)
    paper_has_inst = np.zeros((n_pap, len(insts)), bool)
    for i, team in enumerate(p_auth):
        paper_has_inst[i, auth_inst[team]] = True

    field_names = fields + [t[1].capitalize() for t in topics]
    kb = KnowledgeBase()
    kb.add(
        "paper",
        titles,
        texts,
        year=[int(y) for y in p_year],
        field=[topics[t][0] for t in p_topic],
    )
    auth_ix = kb.add(
        "author",
        authors,
        [f"- author: {a}\n- papers: {len(auth_papers[i])}" for i, a in enumerate(authors)],
    )
    inst_ix = kb.add("institution", insts, [f"- institution: {x}" for x in insts])
    field_ix = kb.add(
        "field_of_study", field_names, [f"- field of study: {f}" for f in field_names]
    )
    for i in range(n_pap):
        for a in p_auth[i]:
            kb.link(i, "written_by", auth_ix[a])
        kb.link(i, "has_field", field_ix[fields.index(topics[p_topic[i]][0])])
        for t in (p_topic[i], p_topic2[i]):
            kb.link(i, "has_field", field_ix[len(fields) + t])
        for j in cites[i]:
            kb.link(i, "cites", j)
    for a in range(n_auth):
        kb.link(auth_ix[a], "affiliated_with", inst_ix[auth_inst[a]])
    ids_other = digit_ids(rng, len(kb) - n_pap, 0, 1_200_000)  # authors, institutions, fields
    ids = digit_ids(rng, n_pap, 1_200_000, 1_870_000) + ids_other

    def paper(rng: Rng) -> int:
        return int(rng.integers(n_pap))

    templates = Templates()

    @templates.synthesized(0.2)
    def q_inst(rng: Rng) -> Query:
        a = paper(rng)
        inst = int(auth_inst[pick(rng, p_auth[a])])
        t = p_topic[a]
        mask = paper_has_inst[:, inst] & ((p_topic == t) | (p_topic2 == t))
        f, tn = topics[t]
        if rng.random() < 0.5:
            mask &= p_year == p_year[a]
            name = "q_inst_year"
        else:
            name = "q_inst"
        gold = np.flatnonzero(mask)
        return ask(rng, name, gold, year=p_year[a], field=f, institution=insts[inst], topic=tn)

    @templates.synthesized(0.16)
    def q_author(rng: Rng) -> Query:
        a = paper(rng)
        au = pick(rng, p_auth[a])
        t = p_topic[a]
        gold = [i for i in auth_papers[au] if t in (p_topic[i], p_topic2[i])]
        return ask(rng, "q_author", gold, author=authors[au], topic=topics[t][1])

    def coauthored(rng: Rng) -> tuple[int, Sequence[int]]:
        """A paper and the other papers of its authors (:class:`NoQuery` when there are none)."""
        x = paper(rng)
        return x, some(sorted({j for a in p_auth[x] for j in auth_papers[a]} - {x}))

    def on_a_topic(rng: Rng, related: Sequence[int]) -> tuple[int, list[int]]:
        """The topic of one of the ``related`` papers, and the related papers about it."""
        t = p_topic[pick(rng, related)]
        return t, [j for j in related if t in (p_topic[j], p_topic2[j])]

    @templates.synthesized(0.16)
    def q_cites(rng: Rng) -> Query:
        x = paper(rng)
        t, gold = on_a_topic(rng, some(cites[x]))
        return ask(rng, "q_cites", gold, topic=topics[t][1], title=titles[x])

    @templates.synthesized(0.16)
    def q_coauthor(rng: Rng) -> Query:
        x, co = coauthored(rng)
        t, gold = on_a_topic(rng, co)
        return ask(rng, "q_coauthor", gold, title=titles[x], topic=topics[t][1])

    @templates.synthesized(0.16)
    def q_topic(rng: Rng) -> Query:
        a = paper(rng)
        t, t2 = p_topic[a], p_topic2[a]
        gold = np.flatnonzero((p_topic == t) & (p_topic2 == t2))
        return ask(rng, "q_topic", gold, topic=topics[t][1], topic2=topics[t2][1])

    @templates.synthesized(0.16)
    def q_field_year(rng: Rng) -> Query:
        a = paper(rng)
        t, m = p_topic[a], p_method[a]
        gold = np.flatnonzero((p_topic == t) & (p_method == m))
        return ask(rng, "q_field_year", gold, topic=topics[t][1], method=V.methods[m])

    @templates.human(0.25)
    def h_author_year(rng: Rng) -> Query:
        a = paper(rng)
        au = pick(rng, p_auth[a])
        gold = [i for i in auth_papers[au] if p_year[i] == p_year[a]]
        return ask(rng, "h_author_year", gold, author=authors[au], year=p_year[a])

    @templates.human(0.35)
    def h_interest(rng: Rng) -> Query:
        a = paper(rng)
        t, t2 = p_topic[a], p_topic2[a]
        gold = np.flatnonzero((p_topic == t) & (p_topic2 == t2))
        topic, topic2 = topics[t][1].lower(), topics[t2][1].lower()
        return ask(rng, "h_interest", gold, topic=topic, topic2=topic2)

    @templates.human(0.2)
    def h_cited_inst(rng: Rng) -> Query:
        x = paper(rng)
        j0 = pick(rng, some(cites[x]))
        inst = int(auth_inst[pick(rng, p_auth[j0])])
        gold = [j for j in cites[x] if paper_has_inst[j, inst]]
        return ask(rng, "h_cited_inst", gold, institution=insts[inst], title=titles[x])

    @templates.human(0.2)
    def h_shares(rng: Rng) -> Query:
        x, co = coauthored(rng)
        return ask(rng, "h_shares", co, title=titles[x].lower())

    return stark_dataset(rng, StarkDomain.from_table(V.domain), kb, ids, templates)
