"""STaRK-Amazon-like dataset: sports & outdoors products with brands, categories, colors."""

from __future__ import annotations

from typing import Final

import numpy as np

from demo.common import (
    Dataset,
    NoQuery,
    Query,
    Rng,
    article,
    digit_ids,
    pick,
    plural,
    sample,
    some,
    vocabulary,
    zipf,
)
from demo.kb import KnowledgeBase
from demo.stark import Phrasebook, StarkDomain, Templates, stark_dataset

V: Final = vocabulary("amazon")
_AMAZON_TYPES: Final = [(t["name"], t["category"], t["use"], t["features"]) for t in V.types]
_N_SPECIFIC: Final = 8
ask: Final = Phrasebook(V.queries).ask


def amazon(rng: Rng) -> Dataset:
    """STaRK-Amazon-like: ~2,200 products of 33 types (one type has exactly 100 products, the
    largest answer set) with 110 brands, categories and colors, also-bought/also-viewed edges,
    and queries over features, reviews, colors, brands and co-purchases."""
    types = _AMAZON_TYPES
    n_types = len(types)
    brands = sorted({a + b for a in V.brand_starts for b in V.brand_ends if a.lower()[-1] != b[0]})
    brands = [brands[i] for i in np.sort(rng.choice(len(brands), 110, replace=False))]
    # each brand covers 2-4 product types; each type gets the brands that cover it
    type_brands: list[list[int]] = [[] for _ in range(n_types)]
    for bi in range(len(brands)):
        for t in rng.choice(n_types, int(rng.integers(2, 5)), replace=False):
            type_brands[int(t)].append(bi)
    sizes = rng.integers(22, 112, n_types)
    sizes[int(rng.integers(n_types))] = 100  # a type with exactly 100 products (the max answer set)

    p_type, p_brand, p_color, p_feats, p_title, p_model = [], [], [], [], [], []
    for ti, (_, _, _, feats) in enumerate(types):
        fw = zipf(len(feats), 0.7)
        bw = zipf(len(type_brands[ti]), 0.8)
        for _ in range(int(sizes[ti])):
            bi = type_brands[ti][int(rng.choice(len(type_brands[ti]), p=bw))]
            nf = int(rng.integers(1, 3))
            fs = [int(f) for f in rng.choice(len(feats), nf, replace=False, p=fw)]
            ng = int(rng.integers(1, 3))
            gw = zipf(len(V.generic_features), 0.5)
            fs += [_N_SPECIFIC + int(f) for f in rng.choice(len(gw), ng, replace=False, p=gw)]
            p_type.append(ti)
            p_brand.append(bi)
            p_color.append(int(rng.choice(len(V.colors), p=zipf(len(V.colors), 0.6))))
            p_feats.append(fs)
            p_model.append(f"{pick(rng, V.models)} {int(rng.integers(1, 9)) * 10}")
    n = len(p_type)
    order = rng.permutation(n)  # interleave product types in id order
    p_type = [p_type[i] for i in order]
    p_brand = [p_brand[i] for i in order]
    p_color = [p_color[i] for i in order]
    p_feats = [p_feats[i] for i in order]
    p_model = [p_model[i] for i in order]

    def feat(ti: int, fi: int, para: bool = False) -> str:
        """Feature ``fi`` of product type ``ti`` (``fi >= 8``: a generic feature), or its
        paraphrase."""
        spec = types[ti][3][fi] if fi < _N_SPECIFIC else V.generic_features[fi - _N_SPECIFIC]
        phrase, _, alt = spec.partition("|")
        return alt if para and alt else phrase

    texts = []
    p_revs: list[list[int]] = []
    for i in range(n):
        ti = p_type[i]
        ptype, cat, use, _ = types[ti]
        f = [feat(ti, fi) for fi in p_feats[i]]
        title = f"{brands[p_brand[i]]} {p_model[i]} {ptype.title()} with {f[0].capitalize()}"
        p_title.append(title)
        p_revs.append(sorted(sample(rng, range(len(V.reviews)), int(rng.integers(1, 4)))))
        revs = [V.reviews[r].capitalize() for r in p_revs[-1]]
        missing = [
            fi for fi in range(_N_SPECIFIC + len(V.generic_features)) if fi not in p_feats[i]
        ]
        if rng.random() < 0.4:  # reviews mention what a product lacks: lexical false positives
            revs.append(f"Wish it had {feat(ti, pick(rng, missing))}")
        if rng.random() < 0.25:
            revs.append(f"Pairs well with my {pick(rng, types)[0]}")
        texts.append(
            f"- product: {title}\n- brand: {brands[p_brand[i]]}\n- category: Sports & Outdoors > "
            f"{cat} > {ptype.title()}\n- color: {V.colors[p_color[i]]}\n"
            f"- features: {'; '.join(f)}\n"
            f"- description: a {ptype} built for {use}, with {' and '.join(f)}.\n"
            f"- reviews: " + " ".join(f'"{r}."' for r in revs)
        )
    p_type_a, p_brand_a, p_color_a = np.array(p_type), np.array(p_brand), np.array(p_color)
    feat_sets = np.zeros((n, _N_SPECIFIC + len(V.generic_features)), bool)
    for i, fs in enumerate(p_feats):
        feat_sets[i, fs] = True

    # edges: brand, category, color; also_bought (complementary types), also_viewed (same type)
    cats = list(dict.fromkeys(t[1] for t in types))
    complement = [
        [int(c) for c in rng.choice([j for j in range(n_types) if j != ti], 3, replace=False)]
        for ti in range(n_types)
    ]
    by_type = [np.flatnonzero(p_type_a == ti) for ti in range(n_types)]
    bought: list[list[int]] = [[] for _ in range(n)]
    viewed: list[list[int]] = [[] for _ in range(n)]
    for i in range(n):
        for _ in range(int(rng.integers(0, 6))):
            pool = by_type[pick(rng, complement[p_type[i]])]
            j = int(pool[rng.integers(len(pool))])
            if j not in bought[i]:
                bought[i].append(j)
        for j in rng.choice(by_type[p_type[i]], int(rng.integers(0, 3)), replace=False):
            if int(j) != i:
                viewed[i].append(int(j))

    kb = KnowledgeBase()
    kb.add(
        "product",
        p_title,
        texts,
        brand=[brands[b] for b in p_brand],
        category=[types[t][1] for t in p_type],
        color=[V.colors[c] for c in p_color],
    )
    bcount = np.bincount(p_brand_a, minlength=len(brands))
    brand_ix = kb.add(
        "brand", brands, [f"- brand: {b}\n- products: {bcount[i]}" for i, b in enumerate(brands)]
    )
    cat_ix = kb.add("category", cats, [f"- category: Sports & Outdoors > {c}" for c in cats])
    color_ix = kb.add("color", V.colors, [f"- color: {c}" for c in V.colors])
    for i in range(n):
        kb.link(i, "has_brand", brand_ix[p_brand[i]])
        kb.link(i, "has_category", cat_ix[cats.index(types[p_type[i]][1])])
        kb.link(i, "has_color", color_ix[p_color[i]])
        for j in bought[i]:
            kb.link(i, "also_bought", j)
        for j in viewed[i]:
            kb.link(i, "also_viewed", j)
    ids = digit_ids(rng, len(kb), 0, 960_000)

    # ---- query templates: each returns a Query (gold = product indices) or raises NoQuery
    def anchor(rng: Rng) -> int:
        return int(rng.integers(n))

    def ptype_name(ti: int, synonym: float = 0.0) -> str:
        """The product type, or with probability ``synonym`` a synonym of it."""
        pt = types[ti][0]
        return V.type_synonyms[pt] if synonym and rng.random() < synonym else pt

    def with_feature(rng: Rng) -> tuple[int, int, int, np.ndarray]:
        """A product, its type, one of its features, and which products are of that type with
        that feature (a mask)."""
        a = anchor(rng)
        ti = p_type[a]
        f1 = pick(rng, p_feats[a])
        return a, ti, f1, (p_type_a == ti) & feat_sets[:, f1]

    templates = Templates()

    @templates.synthesized(0.1)
    def q_text2(rng: Rng) -> Query:
        a = anchor(rng)
        ti = p_type[a]
        if len(p_feats[a]) < 2:
            raise NoQuery
        f1, f2 = sample(rng, p_feats[a], 2)
        gold = np.flatnonzero((p_type_a == ti) & feat_sets[:, f1] & feat_sets[:, f2])
        a1, a2 = feat(ti, f1, rng.random() < 0.5), feat(ti, f2, rng.random() < 0.5)
        pt = ptype_name(ti, 0.4)
        return ask(rng, "q_text2", gold, a=article(pt), ptype=pt, feature=a1, feature2=a2)

    @templates.synthesized(0.12)
    def q_review(rng: Rng) -> Query:
        a, ti, f1, same = with_feature(rng)
        r = pick(rng, p_revs[a])
        gold = [i for i in np.flatnonzero(same) if r in p_revs[i]]
        pt = ptype_name(ti, 0.3)
        f, f2 = feat(ti, f1, rng.random() < 0.5), feat(ti, f1, rng.random() < 0.5)
        art, review = article(pt), V.reviews[r]
        return ask(rng, "q_review", gold, a=art, ptype=pt, feature=f, feature2=f2, review=review)

    @templates.synthesized(0.1)
    def q_text1(rng: Rng) -> Query:
        _, ti, f1, same = with_feature(rng)
        gold = np.flatnonzero(same)
        pt, use = plural(ptype_name(ti, 0.3)), types[ti][2]
        said, listed = feat(ti, f1, rng.random() < 0.5), feat(ti, f1)
        return ask(rng, "q_text1", gold, ptypes=pt, use=use, feature=said, listed_feature=listed)

    @templates.synthesized(0.07)
    def q_broad(rng: Rng) -> Query:
        ti = int(rng.integers(n_types))
        gold = np.flatnonzero(p_type_a == ti)
        return ask(rng, "q_broad", gold, ptypes=plural(ptype_name(ti, 0.3)), use=types[ti][2])

    @templates.synthesized(0.12)
    def q_color(rng: Rng) -> Query:
        a, ti, f1, same = with_feature(rng)
        c = p_color[a]
        gold = np.flatnonzero(same & (p_color_a == c))
        pt, col = ptype_name(ti), V.colors[c].lower()
        return ask(rng, "q_color", gold, a=article(col), color=col, ptype=pt, feature=feat(ti, f1))

    @templates.synthesized(0.12)
    def q_brand(rng: Rng) -> Query:
        a = anchor(rng)
        ti, bi = p_type[a], p_brand[a]
        pt, b = ptype_name(ti), brands[bi]
        if rng.random() < 0.5:
            f1 = pick(rng, p_feats[a])
            gold = np.flatnonzero((p_type_a == ti) & (p_brand_a == bi) & feat_sets[:, f1])
            f = feat(ti, f1)
            return ask(rng, "q_brand_feature", gold, a=article(b), brand=b, ptype=pt, feature=f)
        gold = np.flatnonzero((p_type_a == ti) & (p_brand_a == bi))
        return ask(rng, "q_brand", gold, ptypes=plural(pt), brand=b)

    def same_brand(rng: Rng) -> tuple[int, int, np.ndarray]:
        """A product, another product type its brand makes, and its brand's products of that
        type (:class:`NoQuery` when the brand makes one type)."""
        x = anchor(rng)
        bi = p_brand[x]
        others = {p_type[j] for j in np.flatnonzero(p_brand_a == bi)} - {p_type[x]}
        t2 = pick(rng, some(sorted(others)))
        return x, t2, np.flatnonzero((p_brand_a == bi) & (p_type_a == t2))

    @templates.synthesized(0.13)
    def q_same_brand(rng: Rng) -> Query:
        x, t2, gold = same_brand(rng)
        pt = ptype_name(t2)
        return ask(rng, "q_same_brand", gold, title=p_title[x], a=article(pt), ptype=pt)

    def bought_with(rng: Rng) -> tuple[int, int, list[int]]:
        """A product, the type of something bought with it, and what was bought of that type
        (:class:`NoQuery` when nothing was)."""
        x = anchor(rng)
        t2 = p_type[pick(rng, some(bought[x]))]
        return x, t2, [j for j in bought[x] if p_type[j] == t2]

    @templates.synthesized(0.15)
    def q_bought(rng: Rng) -> Query:
        x, t2, gold = bought_with(rng)
        return ask(rng, "q_bought", gold, ptype=ptype_name(t2), title=p_title[x])

    @templates.synthesized(0.07)
    def q_compatible(rng: Rng) -> Query:
        x, ti, f1, same = with_feature(rng)
        gold = np.flatnonzero(same & (p_brand_a == p_brand[x]))
        pt = ptype_name(ti)
        return ask(rng, "q_compatible", gold, ptype=pt, feature=feat(ti, f1), title=p_title[x])

    @templates.human(0.3)
    def h_need(rng: Rng) -> Query:
        a, ti, f1, same = with_feature(rng)
        c = p_color[a]
        gold = np.flatnonzero(same & (p_color_a == c))
        relative, use = pick(rng, V.relatives), types[ti][2]
        pt, col = ptype_name(ti, 0.5), V.colors[c].lower()
        f = feat(ti, f1, True)
        return ask(rng, "h_need", gold, relative=relative, use=use, ptype=pt, feature=f, color=col)

    @templates.human(0.3)
    def h_short(rng: Rng) -> Query:
        _, ti, f1, same = with_feature(rng)
        gold = np.flatnonzero(same)
        pt, f, review = ptype_name(ti, 0.5), feat(ti, f1, True), pick(rng, V.reviews)
        pts = plural(ptype_name(ti, 0.5))
        return ask(rng, "h_short", gold, ptype=pt, feature=f, review=review, ptypes=pts)

    @templates.human(0.2)
    def h_brand(rng: Rng) -> Query:
        x, t2, gold = same_brand(rng)
        pt, pt2 = ptype_name(p_type[x]), ptype_name(t2)
        return ask(rng, "h_brand", gold, ptype=pt, brand=brands[p_brand[x]], ptype2=pt2)

    @templates.human(0.2)
    def h_bought(rng: Rng) -> Query:
        x, t2, gold = bought_with(rng)
        b, pt, pt2 = brands[p_brand[x]], ptype_name(p_type[x]), ptype_name(t2)
        return ask(rng, "h_bought", gold, brand=b, model=p_model[x], ptype=pt, ptype2=pt2)

    return stark_dataset(rng, StarkDomain.from_table(V.domain), kb, ids, templates)
