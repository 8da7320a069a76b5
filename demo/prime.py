"""STaRK-Prime-like dataset: diseases, drugs, genes/proteins, pathways, anatomy, GO terms."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

import numpy as np

from demo.common import Dataset, Query, Rng, digit_ids, pick, sample, some, vocabulary
from demo.kb import KnowledgeBase
from demo.stark import Phrasebook, StarkDomain, Template, Templates, stark_dataset

V: Final = vocabulary("prime")
_GENE_FAMILIES: Final = list(V.gene_families.items())
_BP: Final = [g["form"].format(x) for g in V.biological_processes for x in g["items"]]
_DRUG_CLASSES: Final = [(k, c, r) for k, (c, r) in V.drug_classes.items()]
_DISEASE_NOUN: Final = list(V.disease_nouns.items())
ask: Final = Phrasebook(V.queries).ask


def prime(rng: Rng) -> Dataset:
    """STaRK-Prime-like: genes/proteins in families, drugs in classes, diseases with phenotypes,
    anatomy, GO terms and pathways linked by PrimeKG's relation names; every entity is a
    candidate; queries over targets, indications, expression, associations and lay symptoms."""
    # nodes
    genes: dict[str, int] = {}
    while len(genes) < 640:
        fi = int(rng.integers(len(_GENE_FAMILIES)))
        num = int(rng.integers(1, 40))
        letter = "" if rng.random() < 0.7 else "ABC"[int(rng.integers(3))]
        sym = f"{_GENE_FAMILIES[fi][0]}{num}{letter}"
        genes.setdefault(sym, fi)
    gene_syms = list(genes)
    gene_fam = [genes[s] for s in gene_syms]
    drug_names = sorted({p + c[0] for p in V.drug_prefixes for c in _DRUG_CLASSES})
    drug_names = [
        drug_names[int(i)] for i in np.sort(rng.choice(len(drug_names), 280, replace=False))
    ]
    drug_cls = [next(c for c in _DRUG_CLASSES if d.endswith(c[0])) for d in drug_names]
    drug_names = [d.capitalize() for d in drug_names]
    diseases: dict[str, str] = {}
    while len(diseases) < 380:
        noun, cat = _DISEASE_NOUN[int(rng.integers(len(_DISEASE_NOUN)))]
        r = rng.random()
        if r < 0.3:
            nm = f"{pick(rng, V.eponyms)} syndrome"
            cat = pick(rng, ["neurological", "skin", "metabolic", "musculoskeletal"])
        elif r < 0.8:
            nm = f"{pick(rng, V.disease_adjectives)} {noun}"
        else:
            nm = f"{noun} type {int(rng.integers(1, 12))}"
        diseases.setdefault(nm, cat)
    dis_names = list(diseases)
    dis_cat = [diseases[d] for d in dis_names]

    kb = KnowledgeBase()
    g_ix = kb.add("gene/protein", gene_syms)
    d_ix = kb.add("drug", drug_names)
    s_ix = kb.add("disease", dis_names)
    ph_ix = kb.add("effect/phenotype", V.phenotypes)
    an_ix = kb.add("anatomy", V.anatomy)
    cc_ix = kb.add("cellular_component", V.cellular_components)
    mf_ix = kb.add("molecular_function", V.molecular_functions)
    bp_ix = kb.add("biological_process", _BP)
    pw_ix = kb.add("pathway", V.pathways)
    n = len(kb)
    names, types_, texts = kb.names, kb.kinds, kb.texts
    link, nb = kb.link, kb.neighbours

    def link_some(a: int, relation: str, pool: Sequence[int], low: int, high: int) -> list[int]:
        """Link ``a`` to ``rng.integers(low, high)`` distinct nodes of ``pool``; returns them."""
        chosen = sample(rng, pool, int(rng.integers(low, high)))
        for b in chosen:
            link(a, relation, b)
        return chosen

    fam_genes = [
        [g for g, f in zip(g_ix, gene_fam, strict=True) if f == fi]
        for fi in range(len(_GENE_FAMILIES))
    ]
    gene_mf: dict[int, list[int]] = {}
    gene_bp: dict[int, list[int]] = {}
    fam_mf = [sample(rng, mf_ix, 3) for _ in _GENE_FAMILIES]
    fam_bp = [sample(rng, bp_ix, 4) for _ in _GENE_FAMILIES]
    for g, fi in zip(g_ix, gene_fam, strict=True):
        gene_mf[g] = list(dict.fromkeys(sample(rng, fam_mf[fi], 2) + sample(rng, mf_ix, 1)))
        gene_bp[g] = list(dict.fromkeys(sample(rng, fam_bp[fi], 2) + sample(rng, bp_ix, 1)))
        for term in gene_mf[g] + gene_bp[g]:
            link(g, "interacts with", term)
        link_some(g, "interacts with", cc_ix, 1, 3)
        for a in sample(rng, an_ix, int(rng.integers(2, 6))):
            link(a, "expression present", g)
        if rng.random() < 0.6:
            link(g, "interacts with", pick(rng, pw_ix))
        for h in sample(rng, fam_genes[fi], int(rng.integers(0, 3))):
            if h != g:
                link(g, "ppi", h)
    dis_ph: dict[int, list[int]] = {}
    for s in s_ix:
        dis_ph[s] = link_some(s, "phenotype present", ph_ix, 3, 6)
        for g in sample(rng, g_ix, int(rng.integers(1, 5))):
            link(g, "associated with", s)
    drug_ind: dict[int, list[int]] = {}
    for d in d_ix:
        drug_ind[d] = link_some(d, "indication", s_ix, 1, 4)
        link_some(d, "target", fam_genes[int(rng.integers(len(_GENE_FAMILIES)))], 2, 9)
        if rng.random() < 0.4:
            link(d, "contraindication", pick(rng, s_ix))

    for g, fi in zip(g_ix, gene_fam, strict=True):
        sym = names[g]
        num = "".join(ch for ch in sym[len(_GENE_FAMILIES[fi][0]) :] if ch.isdigit())
        texts[g] = (
            f"- gene/protein: {sym}\n- full name: {_GENE_FAMILIES[fi][1]} {num}\n"
            f"- molecular function: {'; '.join(names[m] for m in gene_mf[g])}\n"
            f"- biological process: {'; '.join(names[b] for b in gene_bp[g])}"
        )
    drug_route = {}
    for d, cls in zip(d_ix, drug_cls, strict=True):
        route = cls[2] if rng.random() < 0.8 else pick(rng, ["tablet", "capsule", "injection"])
        drug_route[d] = route
        texts[d] = (
            f"- drug: {names[d]}\n- class: {cls[1]}\n- route: {route}\n"
            f"- half-life: about {int(rng.integers(2, 40))} hours\n"
            f"- indication: {'; '.join(names[s] for s in drug_ind[d])}"
        )
    for s, cat in zip(s_ix, dis_cat, strict=True):
        ph = [names[p] for p in dis_ph[s]]
        other = [names[p] for p in sample(rng, [p for p in ph_ix if p not in dis_ph[s]], 2)]
        texts[s] = (
            f"- disease: {names[s]}\n- category: {cat} disorder\n- description: a {cat} disorder "
            f"characterized by {', '.join(ph[:-1])} and {ph[-1]}. It is distinguished from "
            f"disorders with {other[0]} or {other[1]}."
        )
    for ix, kind in (
        (ph_ix, "effect/phenotype"),
        (an_ix, "anatomy"),
        (cc_ix, "cellular component"),
        (mf_ix, "molecular function"),
        (bp_ix, "biological process"),
        (pw_ix, "pathway"),
    ):
        for i in ix:
            texts[i] = f"- {kind}: {names[i]}"

    ids = digit_ids(rng, n, 0, 129_375)

    def say(i: int, p: float) -> str:
        """The name of entity ``i``, or with probability ``p`` its lay paraphrase."""
        lay = V.lay_terms.get(names[i])
        return lay if lay and rng.random() < p else names[i]

    def does(mf: int, p: float) -> str:
        """``"that <lay words>"`` for molecular function ``mf`` with probability ``p`` (when it has
        lay words), else ``"with <its name>"``."""
        lay = V.lay_terms.get(names[mf])
        return f"that {lay}" if lay and rng.random() < p else f"with {names[mf]}"

    def expressed(
        name: str, terms: dict[int, list[int]], slot: str, said: Callable[[int], str]
    ) -> Template:
        """The template ``name``: an anatomy where a gene is expressed and one of that gene's GO
        ``terms`` (said as ``said(term)`` in the phrasing's ``slot``); the answers are the genes
        expressed there with that term."""

        def template(rng: Rng) -> Query:
            g0 = pick(rng, g_ix)
            an = pick(rng, nb("expression present", g0))
            term = pick(rng, terms[g0])
            gold = [g for g in nb("expression present", an) if term in terms[g]]
            return ask(rng, name, gold, anatomy=names[an], **{slot: said(term)})

        return template

    templates = Templates()

    @templates.synthesized(0.12)
    def q_drug_gene(rng: Rng) -> Query:
        d = pick(rng, d_ix)
        tg = nb("target", d)
        mf = pick(rng, gene_mf[pick(rng, tg)])
        gold = [g for g in tg if mf in gene_mf[g]]
        return ask(rng, "q_drug_gene", gold, does=does(mf, 0.5), drug=names[d], does2=does(mf, 0.5))

    @templates.synthesized(0.1)
    def q_drug_cc(rng: Rng) -> Query:
        d = pick(rng, d_ix)
        reached = {c for g in nb("target", d) for c in nb("interacts with", g)}
        gold = sorted(c for c in reached if types_[c] == "cellular_component")
        return ask(rng, "q_drug_cc", gold, drug=names[d])

    @templates.synthesized(0.12)
    def q_dis_drug(rng: Rng) -> Query:
        s = pick(rng, s_ix)
        cands = some([d for d in nb("indication", s) if types_[d] == "drug"])
        route = drug_route[pick(rng, cands)]
        gold = [d for d in cands if drug_route[d] == route]
        return ask(rng, "q_dis_drug", gold, route=route, disease=names[s])

    templates.synthesized(0.12)(
        expressed("q_anat_gene", gene_bp, "process", lambda bp: say(bp, 0.5))
    )

    @templates.synthesized(0.11)
    def q_gene_dis(rng: Rng) -> Query:
        s0 = pick(rng, s_ix)
        g = pick(rng, [x for x in nb("associated with", s0) if types_[x] == "gene/protein"])
        p = pick(rng, dis_ph[s0])
        gold = [s for s in nb("associated with", g) if types_[s] == "disease" and p in dis_ph[s]]
        return ask(rng, "q_gene_dis", gold, gene=names[g], phenotype=say(p, 0.4))

    @templates.synthesized(0.12)
    def q_dis_text(rng: Rng) -> Query:
        s0 = pick(rng, s_ix)
        ps = sample(rng, dis_ph[s0], 3)
        gold = [s for s in s_ix if all(p in dis_ph[s] for p in ps)]
        p1, p2, p3 = (say(p, 0.4) for p in ps)
        cat = dis_cat[s0 - s_ix[0]]
        return ask(rng, "q_dis_text", gold, p1=p1, p2=p2, p3=p3, category=cat)

    @templates.synthesized(0.1)
    def q_gene_text(rng: Rng) -> Query:
        g0 = pick(rng, g_ix)
        mf, bp = pick(rng, gene_mf[g0]), pick(rng, gene_bp[g0])
        gold = [g for g in g_ix if mf in gene_mf[g] and bp in gene_bp[g]]
        return ask(rng, "q_gene_text", gold, does=does(mf, 0.4), process=say(bp, 0.4))

    @templates.synthesized(0.11)
    def q_ppi(rng: Rng) -> Query:
        g0 = pick(rng, g_ix)
        ppi = some(nb("ppi", g0))
        bp = pick(rng, gene_bp[pick(rng, ppi)])
        gold = [g for g in ppi if bp in gene_bp[g]]
        return ask(rng, "q_ppi", gold, gene=names[g0], process=say(bp, 0.4))

    @templates.synthesized(0.1)
    def q_family(rng: Rng) -> Query:
        g0 = pick(rng, g_ix)
        fi = gene_fam[g0 - g_ix[0]]
        bp = pick(rng, gene_bp[g0])
        gold = [g for g in fam_genes[fi] if bp in gene_bp[g]]
        family = _GENE_FAMILIES[fi][1]
        return ask(rng, "q_family", gold, family=family, gene=names[g0], process=say(bp, 0.3))

    @templates.human(0.3)
    def h_symptoms(rng: Rng) -> Query:
        s0 = pick(rng, s_ix)
        ps = sample(rng, dis_ph[s0], 2)
        cat = dis_cat[s0 - s_ix[0]]
        gold = [s for s in s_ix if all(p in dis_ph[s] for p in ps) and dis_cat[s - s_ix[0]] == cat]
        p1, p2 = say(ps[0], 0.6), say(ps[1], 0.6)
        return ask(rng, "h_symptoms", gold, p1=p1, p2=p2, category=cat)

    @templates.human(0.25)
    def h_prescribed(rng: Rng) -> Query:
        d = pick(rng, d_ix)
        return ask(rng, "h_prescribed", drug_ind[d], drug=names[d])

    templates.human(0.25)(expressed("h_gene", gene_mf, "does", lambda mf: does(mf, 0.6)))

    @templates.human(0.2)
    def h_target_sounds(rng: Rng) -> Query:
        d = pick(rng, d_ix)
        cls = drug_cls[d - d_ix[0]]
        indicated = set(drug_ind[d])
        gold = [x for x in d_ix if drug_cls[x - d_ix[0]] == cls and set(drug_ind[x]) & indicated]
        s = pick(rng, drug_ind[d])
        return ask(rng, "h_target_sounds", gold, drug_class=cls[1], disease=names[s].lower())

    return stark_dataset(rng, StarkDomain.from_table(V.domain), kb, ids, templates)
