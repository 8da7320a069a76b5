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
    bio = _Biology(rng)
    ids = digit_ids(rng, len(bio.kb), 0, 129_375)
    return stark_dataset(rng, StarkDomain.from_table(V.domain), bio.kb, ids, bio.templates())


def _genes(rng: Rng) -> tuple[list[str], list[int]]:
    """640 gene symbols (family prefix, number, sometimes a letter) and each one's family."""
    genes: dict[str, int] = {}
    while len(genes) < 640:
        fi = int(rng.integers(len(_GENE_FAMILIES)))
        num = int(rng.integers(1, 40))
        letter = "" if rng.random() < 0.7 else "ABC"[int(rng.integers(3))]
        sym = f"{_GENE_FAMILIES[fi][0]}{num}{letter}"
        genes.setdefault(sym, fi)
    gene_syms = list(genes)
    return gene_syms, [genes[s] for s in gene_syms]


def _drugs(rng: Rng) -> tuple[list[str], list[tuple[str, str, str]]]:
    """280 drug names (a prefix and a class suffix) and each one's class."""
    drug_names = sorted({p + c[0] for p in V.drug_prefixes for c in _DRUG_CLASSES})
    drug_names = [
        drug_names[int(i)] for i in np.sort(rng.choice(len(drug_names), 280, replace=False))
    ]
    drug_cls = [next(c for c in _DRUG_CLASSES if d.endswith(c[0])) for d in drug_names]
    return [d.capitalize() for d in drug_names], drug_cls


def _diseases(rng: Rng) -> tuple[list[str], list[str]]:
    """380 disease names (eponymous syndromes, adjective + noun, numbered types) and each
    one's category."""
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
    return dis_names, [diseases[d] for d in dis_names]


class _Biology:
    """The knowledge base of one demo dataset (drawn in ``__init__``: nodes, edges, texts) and
    the query templates over it."""

    def __init__(self, rng: Rng) -> None:
        self.rng = rng
        gene_syms, self.gene_fam = _genes(rng)
        drug_names, self.drug_cls = _drugs(rng)
        dis_names, self.dis_cat = _diseases(rng)
        self.kb = kb = KnowledgeBase()
        self.g_ix = kb.add("gene/protein", gene_syms)
        self.d_ix = kb.add("drug", drug_names)
        self.s_ix = kb.add("disease", dis_names)
        self.ph_ix = kb.add("effect/phenotype", V.phenotypes)
        self.an_ix = kb.add("anatomy", V.anatomy)
        self.cc_ix = kb.add("cellular_component", V.cellular_components)
        self.mf_ix = kb.add("molecular_function", V.molecular_functions)
        self.bp_ix = kb.add("biological_process", _BP)
        self.pw_ix = kb.add("pathway", V.pathways)
        self.names, self.types_, self.texts = kb.names, kb.kinds, kb.texts
        self.link, self.nb = kb.link, kb.neighbours
        self.fam_genes = [
            [g for g, f in zip(self.g_ix, self.gene_fam, strict=True) if f == fi]
            for fi in range(len(_GENE_FAMILIES))
        ]
        self.gene_mf: dict[int, list[int]] = {}
        self.gene_bp: dict[int, list[int]] = {}
        self.dis_ph: dict[int, list[int]] = {}
        self.drug_ind: dict[int, list[int]] = {}
        self.drug_route: dict[int, str] = {}
        self._link_genes()
        self._link_diseases_and_drugs()
        self._gene_texts()
        self._drug_texts()
        self._disease_texts()

    def link_some(
        self, a: int, relation: str, pool: Sequence[int], low: int, high: int
    ) -> list[int]:
        """Link ``a`` to ``rng.integers(low, high)`` distinct nodes of ``pool``; returns them."""
        chosen = sample(self.rng, pool, int(self.rng.integers(low, high)))
        for b in chosen:
            self.link(a, relation, b)
        return chosen

    def _link_genes(self) -> None:
        """Each gene's GO terms (mostly its family's), cellular components, the anatomy that
        expresses it, sometimes a pathway, and protein interactions within its family."""
        rng, link = self.rng, self.link
        mf_ix, bp_ix = self.mf_ix, self.bp_ix
        fam_mf = [sample(rng, mf_ix, 3) for _ in _GENE_FAMILIES]
        fam_bp = [sample(rng, bp_ix, 4) for _ in _GENE_FAMILIES]
        for g, fi in zip(self.g_ix, self.gene_fam, strict=True):
            self.gene_mf[g] = list(
                dict.fromkeys(sample(rng, fam_mf[fi], 2) + sample(rng, mf_ix, 1))
            )
            self.gene_bp[g] = list(
                dict.fromkeys(sample(rng, fam_bp[fi], 2) + sample(rng, bp_ix, 1))
            )
            for term in self.gene_mf[g] + self.gene_bp[g]:
                link(g, "interacts with", term)
            self.link_some(g, "interacts with", self.cc_ix, 1, 3)
            for a in sample(rng, self.an_ix, int(rng.integers(2, 6))):
                link(a, "expression present", g)
            if rng.random() < 0.6:
                link(g, "interacts with", pick(rng, self.pw_ix))
            for h in sample(rng, self.fam_genes[fi], int(rng.integers(0, 3))):
                if h != g:
                    link(g, "ppi", h)

    def _link_diseases_and_drugs(self) -> None:
        """Each disease's phenotypes and associated genes; each drug's indications, targets (in
        one gene family) and sometimes a contraindication."""
        rng = self.rng
        for s in self.s_ix:
            self.dis_ph[s] = self.link_some(s, "phenotype present", self.ph_ix, 3, 6)
            for g in sample(rng, self.g_ix, int(rng.integers(1, 5))):
                self.link(g, "associated with", s)
        for d in self.d_ix:
            self.drug_ind[d] = self.link_some(d, "indication", self.s_ix, 1, 4)
            self.link_some(
                d, "target", self.fam_genes[int(rng.integers(len(_GENE_FAMILIES)))], 2, 9
            )
            if rng.random() < 0.4:
                self.link(d, "contraindication", pick(rng, self.s_ix))

    def _gene_texts(self) -> None:
        names = self.names
        for g, fi in zip(self.g_ix, self.gene_fam, strict=True):
            sym = names[g]
            num = "".join(ch for ch in sym[len(_GENE_FAMILIES[fi][0]) :] if ch.isdigit())
            self.texts[g] = (
                f"- gene/protein: {sym}\n- full name: {_GENE_FAMILIES[fi][1]} {num}\n"
                f"- molecular function: {'; '.join(names[m] for m in self.gene_mf[g])}\n"
                f"- biological process: {'; '.join(names[b] for b in self.gene_bp[g])}"
            )

    def _drug_texts(self) -> None:
        rng, names = self.rng, self.names
        for d, cls in zip(self.d_ix, self.drug_cls, strict=True):
            route = cls[2] if rng.random() < 0.8 else pick(rng, ["tablet", "capsule", "injection"])
            self.drug_route[d] = route
            self.texts[d] = (
                f"- drug: {names[d]}\n- class: {cls[1]}\n- route: {route}\n"
                f"- half-life: about {int(rng.integers(2, 40))} hours\n"
                f"- indication: {'; '.join(names[s] for s in self.drug_ind[d])}"
            )

    def _disease_texts(self) -> None:
        """The diseases' texts (phenotypes and two phenotypes they lack), then every other
        node's one-line text."""
        rng, names = self.rng, self.names
        for s, cat in zip(self.s_ix, self.dis_cat, strict=True):
            ph = [names[p] for p in self.dis_ph[s]]
            lacks = [p for p in self.ph_ix if p not in self.dis_ph[s]]
            other = [names[p] for p in sample(rng, lacks, 2)]
            self.texts[s] = (
                f"- disease: {names[s]}\n- category: {cat} disorder\n- description: a {cat} "
                f"disorder characterized by {', '.join(ph[:-1])} and {ph[-1]}. It is "
                f"distinguished from disorders with {other[0]} or {other[1]}."
            )
        for ix, kind in (
            (self.ph_ix, "effect/phenotype"),
            (self.an_ix, "anatomy"),
            (self.cc_ix, "cellular component"),
            (self.mf_ix, "molecular function"),
            (self.bp_ix, "biological process"),
            (self.pw_ix, "pathway"),
        ):
            for i in ix:
                self.texts[i] = f"- {kind}: {names[i]}"

    # ---- query templates: each returns a Query (gold = node indices) or raises NoQuery
    def templates(self) -> Templates:
        """The synthesized and human templates, with their weights, in drawing order."""
        anat_gene = self.expressed(
            "q_anat_gene", self.gene_bp, "process", lambda bp: self.say(bp, 0.5)
        )
        h_gene = self.expressed("h_gene", self.gene_mf, "does", lambda mf: self.does(mf, 0.6))
        return Templates.of(
            synthesized=(
                (0.12, self.q_drug_gene), (0.1, self.q_drug_cc), (0.12, self.q_dis_drug),
                (0.12, anat_gene), (0.11, self.q_gene_dis), (0.12, self.q_dis_text),
                (0.1, self.q_gene_text), (0.11, self.q_ppi), (0.1, self.q_family),
            ),
            human=(
                (0.3, self.h_symptoms), (0.25, self.h_prescribed), (0.25, h_gene),
                (0.2, self.h_target_sounds),
            ),
        )  # fmt: skip

    def say(self, i: int, p: float) -> str:
        """The name of entity ``i``, or with probability ``p`` its lay paraphrase."""
        lay = V.lay_terms.get(self.names[i])
        return lay if lay and self.rng.random() < p else self.names[i]

    def does(self, mf: int, p: float) -> str:
        """``"that <lay words>"`` for molecular function ``mf`` with probability ``p`` (when it has
        lay words), else ``"with <its name>"``."""
        lay = V.lay_terms.get(self.names[mf])
        return f"that {lay}" if lay and self.rng.random() < p else f"with {self.names[mf]}"

    def expressed(
        self, name: str, terms: dict[int, list[int]], slot: str, said: Callable[[int], str]
    ) -> Template:
        """The template ``name``: an anatomy where a gene is expressed and one of that gene's GO
        ``terms`` (said as ``said(term)`` in the phrasing's ``slot``); the answers are the genes
        expressed there with that term."""
        nb, names = self.nb, self.names

        def template(rng: Rng) -> Query:
            g0 = pick(rng, self.g_ix)
            an = pick(rng, nb("expression present", g0))
            term = pick(rng, terms[g0])
            gold = [g for g in nb("expression present", an) if term in terms[g]]
            return ask(rng, name, gold, anatomy=names[an], **{slot: said(term)})

        return template

    def q_drug_gene(self, rng: Rng) -> Query:
        d = pick(rng, self.d_ix)
        tg = self.nb("target", d)
        mf = pick(rng, self.gene_mf[pick(rng, tg)])
        gold = [g for g in tg if mf in self.gene_mf[g]]
        drug = self.names[d]
        return ask(
            rng, "q_drug_gene", gold, does=self.does(mf, 0.5), drug=drug, does2=self.does(mf, 0.5)
        )

    def q_drug_cc(self, rng: Rng) -> Query:
        d = pick(rng, self.d_ix)
        reached = {c for g in self.nb("target", d) for c in self.nb("interacts with", g)}
        gold = sorted(c for c in reached if self.types_[c] == "cellular_component")
        return ask(rng, "q_drug_cc", gold, drug=self.names[d])

    def q_dis_drug(self, rng: Rng) -> Query:
        s = pick(rng, self.s_ix)
        cands = some([d for d in self.nb("indication", s) if self.types_[d] == "drug"])
        route = self.drug_route[pick(rng, cands)]
        gold = [d for d in cands if self.drug_route[d] == route]
        return ask(rng, "q_dis_drug", gold, route=route, disease=self.names[s])

    def q_gene_dis(self, rng: Rng) -> Query:
        nb, types_ = self.nb, self.types_
        s0 = pick(rng, self.s_ix)
        g = pick(rng, [x for x in nb("associated with", s0) if types_[x] == "gene/protein"])
        p = pick(rng, self.dis_ph[s0])
        gold = [
            s for s in nb("associated with", g) if types_[s] == "disease" and p in self.dis_ph[s]
        ]
        return ask(rng, "q_gene_dis", gold, gene=self.names[g], phenotype=self.say(p, 0.4))

    def q_dis_text(self, rng: Rng) -> Query:
        s0 = pick(rng, self.s_ix)
        ps = sample(rng, self.dis_ph[s0], 3)
        gold = [s for s in self.s_ix if all(p in self.dis_ph[s] for p in ps)]
        p1, p2, p3 = (self.say(p, 0.4) for p in ps)
        cat = self.dis_cat[s0 - self.s_ix[0]]
        return ask(rng, "q_dis_text", gold, p1=p1, p2=p2, p3=p3, category=cat)

    def q_gene_text(self, rng: Rng) -> Query:
        g0 = pick(rng, self.g_ix)
        mf, bp = pick(rng, self.gene_mf[g0]), pick(rng, self.gene_bp[g0])
        gold = [g for g in self.g_ix if mf in self.gene_mf[g] and bp in self.gene_bp[g]]
        return ask(rng, "q_gene_text", gold, does=self.does(mf, 0.4), process=self.say(bp, 0.4))

    def q_ppi(self, rng: Rng) -> Query:
        g0 = pick(rng, self.g_ix)
        ppi = some(self.nb("ppi", g0))
        bp = pick(rng, self.gene_bp[pick(rng, ppi)])
        gold = [g for g in ppi if bp in self.gene_bp[g]]
        return ask(rng, "q_ppi", gold, gene=self.names[g0], process=self.say(bp, 0.4))

    def q_family(self, rng: Rng) -> Query:
        g0 = pick(rng, self.g_ix)
        fi = self.gene_fam[g0 - self.g_ix[0]]
        bp = pick(rng, self.gene_bp[g0])
        gold = [g for g in self.fam_genes[fi] if bp in self.gene_bp[g]]
        family, gene = _GENE_FAMILIES[fi][1], self.names[g0]
        return ask(rng, "q_family", gold, family=family, gene=gene, process=self.say(bp, 0.3))

    def h_symptoms(self, rng: Rng) -> Query:
        s_ix, dis_cat = self.s_ix, self.dis_cat
        s0 = pick(rng, s_ix)
        ps = sample(rng, self.dis_ph[s0], 2)
        cat = dis_cat[s0 - s_ix[0]]
        gold = [
            s for s in s_ix if all(p in self.dis_ph[s] for p in ps) and dis_cat[s - s_ix[0]] == cat
        ]
        p1, p2 = self.say(ps[0], 0.6), self.say(ps[1], 0.6)
        return ask(rng, "h_symptoms", gold, p1=p1, p2=p2, category=cat)

    def h_prescribed(self, rng: Rng) -> Query:
        d = pick(rng, self.d_ix)
        return ask(rng, "h_prescribed", self.drug_ind[d], drug=self.names[d])

    def h_target_sounds(self, rng: Rng) -> Query:
        d_ix, drug_cls, drug_ind = self.d_ix, self.drug_cls, self.drug_ind
        d = pick(rng, d_ix)
        cls = drug_cls[d - d_ix[0]]
        indicated = set(drug_ind[d])
        gold = [x for x in d_ix if drug_cls[x - d_ix[0]] == cls and set(drug_ind[x]) & indicated]
        s = pick(rng, drug_ind[d])
        disease = self.names[s].lower()
        return ask(rng, "h_target_sounds", gold, drug_class=cls[1], disease=disease)
