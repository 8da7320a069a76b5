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
    shop = _Shop(rng)
    kb = shop.knowledge_base()
    ids = digit_ids(rng, len(kb), 0, 960_000)
    return stark_dataset(rng, StarkDomain.from_table(V.domain), kb, ids, shop.templates())


def _brands(rng: Rng, n_types: int) -> tuple[list[str], list[list[int]], np.ndarray]:
    """110 brand names, the brands of each product type (each brand covers 2-4 types) and the
    number of products per type (one type has exactly 100, the largest answer set)."""
    brands = sorted({a + b for a in V.brand_starts for b in V.brand_ends if a.lower()[-1] != b[0]})
    brands = [brands[i] for i in np.sort(rng.choice(len(brands), 110, replace=False))]
    type_brands: list[list[int]] = [[] for _ in range(n_types)]
    for bi in range(len(brands)):
        for t in rng.choice(n_types, int(rng.integers(2, 5)), replace=False):
            type_brands[int(t)].append(bi)
    sizes = rng.integers(22, 112, n_types)
    sizes[int(rng.integers(n_types))] = 100  # a type with exactly 100 products (the max answer set)
    return brands, type_brands, sizes


def _products(
    rng: Rng, type_brands: list[list[int]], sizes: np.ndarray
) -> tuple[list[int], list[int], list[int], list[list[int]], list[str]]:
    """Per product, in id order (product types interleaved): its type, brand, color, features
    (1-2 of its type's, 1-2 generic ones) and model name."""
    p_type, p_brand, p_color, p_feats, p_model = [], [], [], [], []
    for ti, (_, _, _, feats) in enumerate(_AMAZON_TYPES):
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
    order = rng.permutation(len(p_type))  # interleave product types in id order
    columns = (p_type, p_brand, p_color, p_feats, p_model)
    return tuple([column[i] for i in order] for column in columns)  # type: ignore[return-value]


def feat(ti: int, fi: int, para: bool = False) -> str:
    """Feature ``fi`` of product type ``ti`` (``fi >= 8``: a generic feature), or its
    paraphrase."""
    types = _AMAZON_TYPES
    spec = types[ti][3][fi] if fi < _N_SPECIFIC else V.generic_features[fi - _N_SPECIFIC]
    phrase, _, alt = spec.partition("|")
    return alt if para and alt else phrase


class _Shop:
    """The products of one demo dataset (drawn in ``__init__``), their knowledge base and the
    query templates over them."""

    def __init__(self, rng: Rng) -> None:
        self.rng = rng
        n_types = len(_AMAZON_TYPES)
        self.brands, type_brands, sizes = _brands(rng, n_types)
        products = _products(rng, type_brands, sizes)
        self.p_type, self.p_brand, self.p_color, self.p_feats, self.p_model = products
        self.n = n = len(self.p_type)
        self.p_title: list[str] = []
        self.p_revs: list[list[int]] = []
        self.texts = [self._text(i) for i in range(n)]
        self.p_type_a, self.p_brand_a = np.array(self.p_type), np.array(self.p_brand)
        self.p_color_a = np.array(self.p_color)
        self.feat_sets = np.zeros((n, _N_SPECIFIC + len(V.generic_features)), bool)
        for i, fs in enumerate(self.p_feats):
            self.feat_sets[i, fs] = True
        self.bought, self.viewed = self._edges(n_types)

    def _text(self, i: int) -> str:
        """Product ``i``'s document (title, brand, category, color, features, description,
        reviews); records its title and reviews."""
        rng, ti = self.rng, self.p_type[i]
        ptype, cat, use, _ = _AMAZON_TYPES[ti]
        f = [feat(ti, fi) for fi in self.p_feats[i]]
        brand = self.brands[self.p_brand[i]]
        title = f"{brand} {self.p_model[i]} {ptype.title()} with {f[0].capitalize()}"
        self.p_title.append(title)
        self.p_revs.append(sorted(sample(rng, range(len(V.reviews)), int(rng.integers(1, 4)))))
        revs = [V.reviews[r].capitalize() for r in self.p_revs[-1]]
        missing = [
            fi for fi in range(_N_SPECIFIC + len(V.generic_features)) if fi not in self.p_feats[i]
        ]
        if rng.random() < 0.4:  # reviews mention what a product lacks: lexical false positives
            revs.append(f"Wish it had {feat(ti, pick(rng, missing))}")
        if rng.random() < 0.25:
            revs.append(f"Pairs well with my {pick(rng, _AMAZON_TYPES)[0]}")
        return (
            f"- product: {title}\n- brand: {brand}\n- category: Sports & Outdoors > "
            f"{cat} > {ptype.title()}\n- color: {V.colors[self.p_color[i]]}\n"
            f"- features: {'; '.join(f)}\n"
            f"- description: a {ptype} built for {use}, with {' and '.join(f)}.\n"
            f"- reviews: " + " ".join(f'"{r}."' for r in revs)
        )

    def _edges(self, n_types: int) -> tuple[list[list[int]], list[list[int]]]:
        """also_bought (products of 3 complementary types) and also_viewed (the same type)."""
        rng, p_type = self.rng, self.p_type
        complement = [
            [int(c) for c in rng.choice([j for j in range(n_types) if j != ti], 3, replace=False)]
            for ti in range(n_types)
        ]
        by_type = [np.flatnonzero(self.p_type_a == ti) for ti in range(n_types)]
        bought: list[list[int]] = [[] for _ in range(self.n)]
        viewed: list[list[int]] = [[] for _ in range(self.n)]
        for i in range(self.n):
            for _ in range(int(rng.integers(0, 6))):
                pool = by_type[pick(rng, complement[p_type[i]])]
                j = int(pool[rng.integers(len(pool))])
                if j not in bought[i]:
                    bought[i].append(j)
            for j in rng.choice(by_type[p_type[i]], int(rng.integers(0, 3)), replace=False):
                if int(j) != i:
                    viewed[i].append(int(j))
        return bought, viewed

    def knowledge_base(self) -> KnowledgeBase:
        """Products, brands, categories and colors with their edges."""
        types, brands = _AMAZON_TYPES, self.brands
        cats = list(dict.fromkeys(t[1] for t in types))
        kb = KnowledgeBase()
        kb.add(
            "product",
            self.p_title,
            self.texts,
            brand=[brands[b] for b in self.p_brand],
            category=[types[t][1] for t in self.p_type],
            color=[V.colors[c] for c in self.p_color],
        )
        bcount = np.bincount(self.p_brand_a, minlength=len(brands))
        brand_ix = kb.add(
            "brand",
            brands,
            [f"- brand: {b}\n- products: {bcount[i]}" for i, b in enumerate(brands)],
        )
        cat_ix = kb.add("category", cats, [f"- category: Sports & Outdoors > {c}" for c in cats])
        color_ix = kb.add("color", V.colors, [f"- color: {c}" for c in V.colors])
        for i in range(self.n):
            kb.link(i, "has_brand", brand_ix[self.p_brand[i]])
            kb.link(i, "has_category", cat_ix[cats.index(types[self.p_type[i]][1])])
            kb.link(i, "has_color", color_ix[self.p_color[i]])
            for j in self.bought[i]:
                kb.link(i, "also_bought", j)
            for j in self.viewed[i]:
                kb.link(i, "also_viewed", j)
        return kb

    # ---- query templates: each returns a Query (gold = product indices) or raises NoQuery
    def templates(self) -> Templates:
        """The synthesized and human templates, with their weights, in drawing order."""
        return Templates.of(
            synthesized=(
                (0.1, self.q_text2), (0.12, self.q_review), (0.1, self.q_text1),
                (0.07, self.q_broad), (0.12, self.q_color), (0.12, self.q_brand),
                (0.13, self.q_same_brand), (0.15, self.q_bought), (0.07, self.q_compatible),
            ),
            human=(
                (0.3, self.h_need), (0.3, self.h_short), (0.2, self.h_brand), (0.2, self.h_bought),
            ),
        )  # fmt: skip

    def anchor(self, rng: Rng) -> int:
        return int(rng.integers(self.n))

    def ptype_name(self, ti: int, synonym: float = 0.0) -> str:
        """The product type, or with probability ``synonym`` a synonym of it."""
        pt = _AMAZON_TYPES[ti][0]
        return V.type_synonyms[pt] if synonym and self.rng.random() < synonym else pt

    def with_feature(self, rng: Rng) -> tuple[int, int, int, np.ndarray]:
        """A product, its type, one of its features, and which products are of that type with
        that feature (a mask)."""
        a = self.anchor(rng)
        ti = self.p_type[a]
        f1 = pick(rng, self.p_feats[a])
        return a, ti, f1, (self.p_type_a == ti) & self.feat_sets[:, f1]

    def q_text2(self, rng: Rng) -> Query:
        a = self.anchor(rng)
        ti = self.p_type[a]
        if len(self.p_feats[a]) < 2:
            raise NoQuery
        f1, f2 = sample(rng, self.p_feats[a], 2)
        gold = np.flatnonzero((self.p_type_a == ti) & self.feat_sets[:, f1] & self.feat_sets[:, f2])
        a1, a2 = feat(ti, f1, rng.random() < 0.5), feat(ti, f2, rng.random() < 0.5)
        pt = self.ptype_name(ti, 0.4)
        return ask(rng, "q_text2", gold, a=article(pt), ptype=pt, feature=a1, feature2=a2)

    def q_review(self, rng: Rng) -> Query:
        a, ti, f1, same = self.with_feature(rng)
        r = pick(rng, self.p_revs[a])
        gold = [i for i in np.flatnonzero(same) if r in self.p_revs[i]]
        pt = self.ptype_name(ti, 0.3)
        f, f2 = feat(ti, f1, rng.random() < 0.5), feat(ti, f1, rng.random() < 0.5)
        art, review = article(pt), V.reviews[r]
        return ask(rng, "q_review", gold, a=art, ptype=pt, feature=f, feature2=f2, review=review)

    def q_text1(self, rng: Rng) -> Query:
        _, ti, f1, same = self.with_feature(rng)
        gold = np.flatnonzero(same)
        pt, use = plural(self.ptype_name(ti, 0.3)), _AMAZON_TYPES[ti][2]
        said, listed = feat(ti, f1, rng.random() < 0.5), feat(ti, f1)
        return ask(rng, "q_text1", gold, ptypes=pt, use=use, feature=said, listed_feature=listed)

    def q_broad(self, rng: Rng) -> Query:
        ti = int(rng.integers(len(_AMAZON_TYPES)))
        gold = np.flatnonzero(self.p_type_a == ti)
        pts = plural(self.ptype_name(ti, 0.3))
        return ask(rng, "q_broad", gold, ptypes=pts, use=_AMAZON_TYPES[ti][2])

    def q_color(self, rng: Rng) -> Query:
        a, ti, f1, same = self.with_feature(rng)
        c = self.p_color[a]
        gold = np.flatnonzero(same & (self.p_color_a == c))
        pt, col = self.ptype_name(ti), V.colors[c].lower()
        return ask(rng, "q_color", gold, a=article(col), color=col, ptype=pt, feature=feat(ti, f1))

    def q_brand(self, rng: Rng) -> Query:
        a = self.anchor(rng)
        ti, bi = self.p_type[a], self.p_brand[a]
        pt, b = self.ptype_name(ti), self.brands[bi]
        same = (self.p_type_a == ti) & (self.p_brand_a == bi)
        if rng.random() < 0.5:
            f1 = pick(rng, self.p_feats[a])
            gold = np.flatnonzero(same & self.feat_sets[:, f1])
            f = feat(ti, f1)
            return ask(rng, "q_brand_feature", gold, a=article(b), brand=b, ptype=pt, feature=f)
        gold = np.flatnonzero(same)
        return ask(rng, "q_brand", gold, ptypes=plural(pt), brand=b)

    def same_brand(self, rng: Rng) -> tuple[int, int, np.ndarray]:
        """A product, another product type its brand makes, and its brand's products of that
        type (:class:`NoQuery` when the brand makes one type)."""
        x = self.anchor(rng)
        bi = self.p_brand[x]
        others = {self.p_type[j] for j in np.flatnonzero(self.p_brand_a == bi)} - {self.p_type[x]}
        t2 = pick(rng, some(sorted(others)))
        return x, t2, np.flatnonzero((self.p_brand_a == bi) & (self.p_type_a == t2))

    def q_same_brand(self, rng: Rng) -> Query:
        x, t2, gold = self.same_brand(rng)
        pt = self.ptype_name(t2)
        return ask(rng, "q_same_brand", gold, title=self.p_title[x], a=article(pt), ptype=pt)

    def bought_with(self, rng: Rng) -> tuple[int, int, list[int]]:
        """A product, the type of something bought with it, and what was bought of that type
        (:class:`NoQuery` when nothing was)."""
        x = self.anchor(rng)
        t2 = self.p_type[pick(rng, some(self.bought[x]))]
        return x, t2, [j for j in self.bought[x] if self.p_type[j] == t2]

    def q_bought(self, rng: Rng) -> Query:
        x, t2, gold = self.bought_with(rng)
        return ask(rng, "q_bought", gold, ptype=self.ptype_name(t2), title=self.p_title[x])

    def q_compatible(self, rng: Rng) -> Query:
        x, ti, f1, same = self.with_feature(rng)
        gold = np.flatnonzero(same & (self.p_brand_a == self.p_brand[x]))
        pt, title = self.ptype_name(ti), self.p_title[x]
        return ask(rng, "q_compatible", gold, ptype=pt, feature=feat(ti, f1), title=title)

    def h_need(self, rng: Rng) -> Query:
        a, ti, f1, same = self.with_feature(rng)
        c = self.p_color[a]
        gold = np.flatnonzero(same & (self.p_color_a == c))
        relative, use = pick(rng, V.relatives), _AMAZON_TYPES[ti][2]
        pt, col = self.ptype_name(ti, 0.5), V.colors[c].lower()
        f = feat(ti, f1, True)
        return ask(rng, "h_need", gold, relative=relative, use=use, ptype=pt, feature=f, color=col)

    def h_short(self, rng: Rng) -> Query:
        _, ti, f1, same = self.with_feature(rng)
        gold = np.flatnonzero(same)
        pt, f, review = self.ptype_name(ti, 0.5), feat(ti, f1, True), pick(rng, V.reviews)
        pts = plural(self.ptype_name(ti, 0.5))
        return ask(rng, "h_short", gold, ptype=pt, feature=f, review=review, ptypes=pts)

    def h_brand(self, rng: Rng) -> Query:
        x, t2, gold = self.same_brand(rng)
        pt, pt2 = self.ptype_name(self.p_type[x]), self.ptype_name(t2)
        return ask(rng, "h_brand", gold, ptype=pt, brand=self.brands[self.p_brand[x]], ptype2=pt2)

    def h_bought(self, rng: Rng) -> Query:
        x, t2, gold = self.bought_with(rng)
        b, pt = self.brands[self.p_brand[x]], self.ptype_name(self.p_type[x])
        pt2 = self.ptype_name(t2)
        return ask(rng, "h_bought", gold, brand=b, model=self.p_model[x], ptype=pt, ptype2=pt2)
