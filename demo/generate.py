"""The demo bundle: six small datasets shaped like STaRK and LIST/GeoGLUE, with real runs.

``generate_bundle(out_dir)`` writes a bundle (``bundle.toml`` + Parquet tables, format in
``data/README.md``) in a few seconds. Everything is derived from one seed with numpy's PCG64
generator, no set or hash order is ever iterated, scores are rounded before ranking and Parquet is
written with fixed options, so the same seed gives the same bytes on every run and machine.

Datasets (each with >= 300 evaluation queries, ids are strings):

* ``stark-amazon``, ``stark-mag``, ``stark-prime``: a small typed knowledge base per domain
  (products with brand/category/color, features and reviews; papers with authors, institutions,
  fields and citations; diseases, drugs, genes/proteins, pathways, anatomy, GO terms and
  phenotypes) with relation edges. *Synthesized* queries are rendered from relational templates
  (STaRK's construction: pick an anchor entity, combine relational and textual constraints, the
  answers are every entity that satisfies them), so answer-set sizes range from 1 to 100.
  *Human* queries are fewer, shorter and casual, with paraphrases and typos. Columns ``metapath``
  (MoR-style path such as ``"institution -> author -> paper"``) and ``pattern`` (textual, one or
  two relations) are slices.
* ``beijing``, ``shanghai``: POIs scattered around the real districts' centres with Chinese names,
  addresses and categories; a query is a user location plus keywords (a name, a chain brand, a
  category or an address) with 1-5 clicked gold POIs (mean ~1.3; LIST's click logs: 1.4). About
  1.5 % of queries repeat a gold row in qrels, as LIST's test qrels do.
* ``geo-glue``: Hangzhou POIs in GeoGLUE's ``name,大类,中类,小类,address,district`` text style.
  POIs sit in *sites*; every site is shifted by ~1 km in a random direction (GeoGLUE's privacy
  shift) and snapped to a 1e-4 degree grid, so the POIs of one site share an exact coordinate:
  ~20 % of POIs are in such stacks, the largest holds 16. Many stacked POIs are *twins* (the same
  record under another id). Exactly one gold per query; query locations are near the true site
  (so ~1 km from the shifted gold) except for a far tail, as in the real data.

Text is Chinese for the three spatial sets (the real ones are Chinese), English for STaRK. Names
of brands, people, institutions, drugs and genes are invented.

Runs (top 100, every query): ``bm25`` and ``char-ngram-tfidf`` on every dataset;
``bm25-kb-propagation`` (:class:`analysis.baselines.retrievers.RelationAwareRetriever`) on STaRK and
``bm25-distance-fusion`` (:class:`analysis.baselines.retrievers.SpatialFusion`) on the spatial sets.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from analysis.baselines.retrievers import (
    BM25,
    CharNgramTfidf,
    RelationAwareRetriever,
    SpatialFusion,
)

__all__ = ["DATASETS", "SPATIAL_METRICS", "STARK_METRICS", "build_datasets", "generate_bundle"]

Rng = np.random.Generator

STARK_METRICS: Final = ("hit@1", "hit@5", "recall@20", "mrr")
SPATIAL_METRICS: Final = ("recall@10", "ndcg@10", "recall@20", "ndcg@20")
GEOGLUE_METRICS: Final = ("recall@1", "recall@10", "ndcg@10", "mrr")
DATASETS: Final = ("stark-amazon", "stark-mag", "stark-prime", "beijing", "shanghai", "geo-glue")
TOP_K: Final = 100

TEXTUAL, ONE_HOP, TWO_HOPS = "textual", "relational (1 hop)", "relational (2 hops)"


@dataclass
class Dataset:
    """One generated dataset: its tables and how to run retrievers on it."""

    name: str
    family: str  # "stark" or "spatial"
    description: str
    queries: pd.DataFrame
    qrels: pd.DataFrame
    entities: pd.DataFrame
    edges: pd.DataFrame | None = None
    candidate_types: tuple[str, ...] | None = None
    relation_triggers: dict[str, tuple[str, ...]] = field(default_factory=dict)
    fusion: dict[str, float] = field(default_factory=dict)
    metrics: tuple[str, ...] = STARK_METRICS
    runs: dict[str, pd.DataFrame] = field(default_factory=dict)


# ----------------------------------------------------------------------------------------------
# Small helpers
# ----------------------------------------------------------------------------------------------
def _pick(rng: Rng, seq: Sequence[Any], p: Sequence[float] | None = None) -> Any:
    if p is None:
        return seq[int(rng.integers(len(seq)))]
    w = np.asarray(p, float)
    return seq[int(rng.choice(len(seq), p=w / w.sum()))]


def _sample(rng: Rng, seq: Sequence[Any], n: int) -> list[Any]:
    idx = rng.choice(len(seq), size=min(n, len(seq)), replace=False)
    return [seq[int(i)] for i in idx]


def _zipf(n: int, s: float = 1.0) -> np.ndarray:
    w = 1.0 / np.arange(1, n + 1) ** s
    return w / w.sum()


def _ids(rng: Rng, n: int, low: int, high: int) -> list[str]:
    """``n`` distinct integer ids in ``[low, high)`` as sorted strings of digits (STaRK style)."""
    return [str(int(v)) for v in np.sort(rng.choice(np.arange(low, high), n, replace=False))]


def _typo(rng: Rng, text: str, n: int = 1) -> str:
    """Introduce ``n`` typos into words of five letters or more (swap, drop, double, vowel)."""
    toks = text.split(" ")
    cands = [i for i, t in enumerate(toks) if len(t) >= 5 and t.isalpha() and t.islower()]
    for i in _sample(rng, cands, n):
        w = toks[i]
        j = int(rng.integers(1, len(w) - 2))
        kind = int(rng.integers(4))
        if kind == 0:
            w = w[:j] + w[j + 1] + w[j] + w[j + 2 :]
        elif kind == 1:
            w = w[:j] + w[j + 1 :]
        elif kind == 2:
            w = w[:j] + w[j] + w[j:]
        else:
            vowels = "aeiou"
            k = next((m for m in range(j, len(w)) if w[m] in vowels), j)
            w = w[:k] + vowels[(vowels.find(w[k]) + 1) % 5] + w[k + 1 :]
        toks[i] = w
    return " ".join(toks)


def _plural(noun: str) -> str:
    if noun.endswith("s"):
        return noun
    if noun.endswith(("x", "sh", "ch")):
        return noun + "es"
    return noun + "s"


def _an(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def _words(text: str) -> list[str]:
    """Whitespace-separated items of a string (compact vocabulary tables)."""
    return text.split()


def _str_col(values: Sequence[Any]) -> pd.Series:
    return pd.Series(pd.array([None if v is None else str(v) for v in values], dtype="str"))


@dataclass
class _Query:
    text: str
    gold: list[int]
    query_type: str
    meta: dict[str, str]


def _collect(
    rng: Rng,
    n: int,
    makers: Sequence[Callable[[Rng], _Query | None]],
    weights: Sequence[float],
    max_gold: int,
) -> list[_Query]:
    """Draw queries from template ``makers`` until ``n`` valid ones (1..max_gold answers, unique
    text) exist."""
    out: list[_Query] = []
    seen: dict[str, None] = {}
    for _ in range(200 * n):
        if len(out) == n:
            break
        q = _pick(rng, makers, weights)(rng)
        if q is None or not 1 <= len(q.gold) <= max_gold or q.text in seen:
            continue
        seen[q.text] = None
        out.append(q)
    if len(out) < n:
        raise RuntimeError(f"could only make {len(out)} of {n} queries")
    return out


def _tables(
    queries: list[_Query], doc_ids: Sequence[str], qids: Sequence[str], extra: dict[str, list[Any]]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Queries and qrels tables from generated queries (gold = indices into ``doc_ids``)."""
    meta_cols = list(dict.fromkeys(k for q in queries for k in q.meta))
    qdf = pd.DataFrame(
        {
            "query_id": _str_col(qids),
            "text": _str_col([q.text for q in queries]),
            "query_type": _str_col([q.query_type for q in queries]),
        }
    )
    for col, vals in extra.items():
        qdf[col] = vals if not isinstance(vals[0], str) else _str_col(vals)
    for col in meta_cols:
        qdf[col] = _str_col([q.meta.get(col) for q in queries])
    rows_q = [qid for qid, q in zip(qids, queries, strict=True) for _ in q.gold]
    rows_d = [doc_ids[g] for q in queries for g in q.gold]
    qrels = pd.DataFrame(
        {
            "query_id": _str_col(rows_q),
            "doc_id": _str_col(rows_d),
            "relevance": np.ones(len(rows_q), dtype=np.int64),
        }
    )
    return qdf, qrels


# ----------------------------------------------------------------------------------------------
# STaRK-Amazon
# ----------------------------------------------------------------------------------------------
# (product type, category, use, features "phrase|paraphrase")
# fmt: off
_AMAZON_TYPES: Final = [
    ("hiking backpack", "Camping & Hiking", "multi-day treks",
        [
            "padded hip belt|cushioned waist strap", "hydration sleeve|space for a water bladder",
            "integrated rain cover", "internal frame", "ventilated back panel|back that breathes",
            "multiple external pockets", "adjustable torso length", "ice axe loop",
        ],
    ),
    ("tent", "Camping & Hiking", "family camping trips",
        [
            "full rainfly", "two doors", "freestanding design",
            "aluminum poles|light metal poles", "footprint included",
            "mesh ceiling for stargazing", "quick setup|sets up in minutes", "large vestibule",
        ],
    ),
    ("sleeping bag", "Camping & Hiking", "cold nights outdoors",
        [
            "down insulation", "mummy hood", "compression sack",
            "zero degree rating|rated for freezing", "two-way zipper", "water-resistant shell",
            "draft collar", "synthetic fill",
        ],
    ),
    ("camping stove", "Camping & Hiking", "cooking at camp",
        [
            "piezo igniter|push-button ignition", "wind screen", "simmer control",
            "fold-out legs", "fuel canister stand", "titanium burner", "carrying case",
            "dual burners",
        ],
    ),
    ("hammock", "Camping & Hiking", "relaxing between two trees",
        [
            "tree straps included", "bug net", "parachute nylon", "double width", "rain tarp",
            "steel carabiners", "stuff sack", "400 lb capacity",
        ],
    ),
    ("headlamp", "Camping & Hiking", "night hikes",
        [
            "red light mode", "rechargeable battery|charges over usb", "motion sensor",
            "300 lumens", "waterproof housing", "adjustable beam angle", "lock mode",
            "reflective strap",
        ],
    ),
    ("trekking poles", "Camping & Hiking", "steep trails",
        [
            "cork grips", "flick lock adjustment", "carbon fiber shafts|carbon shafts",
            "anti-shock springs", "rubber tips", "collapsible design", "wrist straps",
            "snow baskets",
        ],
    ),
    ("carabiner", "Climbing", "clipping keys and gear",
        [
            "locking gate", "aluminum alloy body", "keylock nose", "wire gate", "bottle opener",
            "7 inch length", "anodized finish", "screw lock",
        ],
    ),
    ("climbing harness", "Climbing", "indoor climbing gyms",
        [
            "adjustable leg loops", "four gear loops", "belay loop", "padded waist belt",
            "haul loop", "speed buckles", "lightweight webbing", "chalk bag loop",
        ],
    ),
    ("yoga pants", "Yoga", "hot yoga classes",
        [
            "high waist", "side pockets", "four-way stretch",
            "screen print on the left leg|printed design on one leg",
            "moisture-wicking fabric|fabric that pulls sweat away", "squat-proof fabric",
            "flared leg", "drawstring waist",
        ],
    ),
    ("yoga mat", "Yoga", "daily stretching",
        [
            "non-slip surface|grippy surface", "extra thick cushioning", "alignment lines",
            "carrying strap", "natural rubber", "eco-friendly materials", "sweat-resistant top",
            "foldable design",
        ],
    ),
    ("resistance bands", "Strength Training", "home workouts",
        [
            "door anchor", "five resistance levels", "foam handles", "ankle straps", "latex-free",
            "carry bag", "exercise guide", "stackable tubes",
        ],
    ),
    ("dumbbell set", "Strength Training", "building strength at home",
        [
            "adjustable weight", "rubber coating", "storage rack", "knurled handles",
            "hexagonal heads", "chrome finish", "quick-change dial", "non-roll design",
        ],
    ),
    ("jump rope", "Strength Training", "cardio sessions",
        [
            "ball bearings", "adjustable cable", "weighted handles", "digital counter",
            "tangle-free", "steel wire", "foam grips", "speed design",
        ],
    ),
    ("cycling bib shorts", "Cycling Clothing", "long rides",
        [
            "superior chamois|better padding than other brands",
            "textured woven fabric for a cooling effect", "silicone leg grippers",
            "reflective details", "flatlock seams", "mesh straps", "UPF 50 protection",
            "compression fit",
        ],
    ),
    ("cycling jersey", "Cycling Clothing", "road cycling",
        [
            "full-length zipper", "three rear pockets", "breathable mesh panels", "race fit",
            "reflective trim", "silicone hem gripper", "moisture-wicking fabric",
            "UPF 50 protection",
        ],
    ),
    ("bike helmet", "Cycling Accessories", "commuting by bike",
        [
            "MIPS liner", "integrated LED light", "removable visor", "adjustable fit dial",
            "ventilation channels", "magnetic buckle", "reflective stickers",
            "in-mold construction",
        ],
    ),
    ("derailleur hanger", "Cycling Accessories", "repairing a bent hanger",
        [
            "CNC machined aluminum", "replaceable design", "mounting bolts included",
            "precise alignment", "fits most frames", "anodized finish", "lightweight alloy",
            "direct mount",
        ],
    ),
    ("fishing reel", "Fishing", "bass fishing",
        [
            "carbon drag system", "ball bearings", "aluminum spool",
            "left and right hand retrieve", "saltwater resistant", "instant anti-reverse",
            "line capacity rings", "gear ratio 6.2:1",
        ],
    ),
    ("fishing rod", "Fishing", "trout streams",
        [
            "graphite blank", "cork handle", "two-piece design", "stainless steel guides",
            "medium action", "travel tube", "fast tip", "telescopic design",
        ],
    ),
    ("hunting blind", "Hunting", "deer season",
        [
            "easy to assemble|quick to put together", "shooting windows", "camouflage pattern",
            "shelf included", "blackout interior", "portable frame", "ground stakes",
            "compact footprint",
        ],
    ),
    ("tactical holster", "Hunting", "everyday carry",
        [
            "safety strap", "muzzle stud", "thumb break", "belt clip", "adjustable retention",
            "ambidextrous design", "molle attachment", "speed draw",
        ],
    ),
    ("shooting sticks", "Hunting", "uneven terrain",
        [
            "aluminum alloy tipped foot", "adjustable height", "v-yoke rest",
            "quick-release legs", "rubber grip", "camouflage finish", "carry strap",
            "bipod design",
        ],
    ),
    ("ski goggles", "Winter Sports", "ski trips",
        [
            "anti-fog lens", "OTG design|fits over glasses", "magnetic lens swap",
            "UV400 protection", "wide field of view", "helmet compatible strap", "spherical lens",
            "mirrored lens",
        ],
    ),
    ("golf glove", "Golf", "summer rounds",
        [
            "cabretta leather", "ball marker", "perforated palm", "stretch fit", "rain grip",
            "left hand", "velcro closure", "sweat absorbing",
        ],
    ),
    ("tennis racket", "Racquet Sports", "club matches",
        [
            "graphite frame", "oversize head", "pre-strung", "vibration dampener",
            "head light balance", "cover included", "open string pattern", "cushioned grip",
        ],
    ),
    ("soccer ball", "Team Sports", "weekend matches",
        [
            "thermal bonded panels", "size 5", "butyl bladder", "high visibility print",
            "machine stitched", "training ball", "match ball", "textured surface",
        ],
    ),
    ("baseball glove", "Team Sports", "little league",
        [
            "full grain leather", "adjustable wrist strap", "padded palm", "game ready",
            "basket web", "youth size", "deep pocket", "right hand throw",
        ],
    ),
    ("lacrosse shaft", "Team Sports", "attack players",
        [
            "friction grip", "scandium alloy", "octagonal shape", "lightweight design",
            "end cap included", "tapered throat", "composite build", "defense length",
        ],
    ),
    ("hockey t-shirt", "Fan Shop", "game nights",
        [
            "officially licensed", "screen printed logo", "youth sizing", "soft cotton blend",
            "tagless collar", "distressed print", "shipping weight around 6.4 ounces",
            "team colors",
        ],
    ),
    ("water bottle", "Accessories", "the gym",
        [
            "vacuum insulated", "leak-proof lid", "BPA free", "wide mouth", "straw lid",
            "powder coated", "32 ounce", "carry loop",
        ],
    ),
    ("binoculars", "Optics", "bird watching",
        [
            "10x42 magnification", "waterproof body", "fog proof", "tripod adaptable",
            "phone adapter", "roof prism", "neck strap", "low light vision",
        ],
    ),
    ("card game storage box", "Games", "card game nights",
        [
            "holds 1000 cards", "magnetic lid", "dividers included", "wooden build",
            "foam insert", "deck slots", "dice tray", "carry handle",
        ],
    ),
]
_GENERIC_FEATURES: Final = [
    "waterproof|keeps the water out", "lightweight design|weighs almost nothing",
    "lifetime warranty|guaranteed for life", "machine washable|can go in the washer",
    "recycled materials|made from recycled plastic", "reflective accents|visible at night",
    "compact storage|packs down small", "quick-dry fabric|dries really fast",
    "ergonomic grip|comfortable to hold", "UV resistant|holds up in strong sun",
    "odor resistant|does not get smelly", "gift box packaging|comes gift-wrapped",
]
# fmt: on
_N_SPECIFIC: Final = 8
# fmt: off
_AMAZON_COLORS: Final = [
    "Black", "White", "Navy Blue", "Olive Green", "Red", "Royal Blue", "Charcoal Gray", "Orange",
    "Yellow", "Purple", "Pink", "Forest Green", "Khaki", "Camo", "Maroon", "Teal", "Silver",
    "Brown", "Burgundy", "Sky Blue",
]
_BRAND_A: Final = [
    "Trail", "Summit", "Peak", "River", "Iron", "North", "Wild", "Storm", "Alpine", "Cedar",
    "Granite", "Falcon", "Bear", "Wolf", "Eagle", "Ridge", "Canyon", "Pine", "Blaze", "Frost",
    "Tide", "Stone", "Swift", "Grip", "Outmate", "Forest", "Vortex", "Nova", "Apex", "Terra",
]
_BRAND_B: Final = [
    "crest", "line", "gear", "works", "craft", "pro", "sport", "field", "forge", "wave", "point",
    "hawk", "edge", "trek", "core", "fit", "mark", "ware", "rx", "byke",
]
_MODELS: Final = [
    "Pro", "Elite", "Trail", "Classic", "Summit", "Apex", "Venture", "Scout", "Ranger", "Vista",
    "Pulse", "Nomad", "Echo", "Titan", "Breeze", "Orbit",
]
_REVIEWS: Final = [
    "easy to assemble", "runs a little small", "great gift for my son", "sturdy and well made",
    "lightweight enough for backpacking", "held up after a full season",
    "zipper broke after a month", "fits true to size", "worth every penny",
    "my daughter loves it", "color is slightly darker than pictured", "perfect for beginners",
    "stylish and comfortable", "arrived quickly and well packed", "instructions were confusing",
    "visually pleasing", "feels cheap for the price", "my husband uses it every day",
]
_PTYPE_SYNONYMS: Final = {
    "hiking backpack": "trekking pack", "tent": "shelter", "sleeping bag": "sleep sack",
    "camping stove": "backpacking burner", "hammock": "hanging bed", "headlamp": "head torch",
    "trekking poles": "hiking sticks", "carabiner": "clip", "climbing harness": "harness",
    "yoga pants": "yoga leggings", "yoga mat": "exercise mat",
    "resistance bands": "workout bands", "dumbbell set": "hand weights",
    "jump rope": "skipping rope", "cycling bib shorts": "padded bike shorts",
    "cycling jersey": "bike shirt", "bike helmet": "cycling helmet",
    "derailleur hanger": "dropout hanger", "fishing reel": "spinning reel",
    "fishing rod": "fishing pole", "hunting blind": "ground blind",
    "tactical holster": "gun holster", "shooting sticks": "shooting rest",
    "ski goggles": "snow goggles", "golf glove": "golfing glove",
    "tennis racket": "tennis racquet", "soccer ball": "football",
    "baseball glove": "baseball mitt", "lacrosse shaft": "lacrosse handle",
    "hockey t-shirt": "hockey tee", "water bottle": "drink flask", "binoculars": "field glasses",
    "card game storage box": "card box",
}
_RELATIVES: Final = ["son", "daughter", "wife", "husband", "cousin", "nephew", "dad", "friend"]
# fmt: on


def _amazon(rng: Rng) -> Dataset:
    types = _AMAZON_TYPES
    n_types = len(types)
    brands = sorted({a + b for a in _BRAND_A for b in _BRAND_B if a.lower()[-1] != b[0]})
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
        fw = _zipf(len(feats), 0.7)
        bw = _zipf(len(type_brands[ti]), 0.8)
        for _ in range(int(sizes[ti])):
            bi = type_brands[ti][int(rng.choice(len(type_brands[ti]), p=bw))]
            nf = int(rng.integers(1, 3))
            fs = [int(f) for f in rng.choice(len(feats), nf, replace=False, p=fw)]
            ng = int(rng.integers(1, 3))
            gw = _zipf(len(_GENERIC_FEATURES), 0.5)
            fs += [_N_SPECIFIC + int(f) for f in rng.choice(len(gw), ng, replace=False, p=gw)]
            p_type.append(ti)
            p_brand.append(bi)
            p_color.append(int(rng.choice(len(_AMAZON_COLORS), p=_zipf(len(_AMAZON_COLORS), 0.6))))
            p_feats.append(fs)
            p_model.append(f"{_pick(rng, _MODELS)} {int(rng.integers(1, 9)) * 10}")
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
        spec = types[ti][3][fi] if fi < _N_SPECIFIC else _GENERIC_FEATURES[fi - _N_SPECIFIC]
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
        p_revs.append(sorted(_sample(rng, range(len(_REVIEWS)), int(rng.integers(1, 4)))))
        revs = [_REVIEWS[r].capitalize() for r in p_revs[-1]]
        missing = [fi for fi in range(_N_SPECIFIC + len(_GENERIC_FEATURES)) if fi not in p_feats[i]]
        if rng.random() < 0.4:  # reviews mention what a product lacks: lexical false positives
            revs.append(f"Wish it had {feat(ti, _pick(rng, missing))}")
        if rng.random() < 0.25:
            revs.append(f"Pairs well with my {_pick(rng, types)[0]}")
        texts.append(
            f"- product: {title}\n- brand: {brands[p_brand[i]]}\n- category: Sports & Outdoors > "
            f"{cat} > {ptype.title()}\n- color: {_AMAZON_COLORS[p_color[i]]}\n"
            f"- features: {'; '.join(f)}\n"
            f"- description: a {ptype} built for {use}, with {' and '.join(f)}.\n"
            f"- reviews: " + " ".join(f'"{r}."' for r in revs)
        )
    p_type_a, p_brand_a, p_color_a = np.array(p_type), np.array(p_brand), np.array(p_color)
    feat_sets = np.zeros((n, _N_SPECIFIC + len(_GENERIC_FEATURES)), bool)
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
            pool = by_type[_pick(rng, complement[p_type[i]])]
            j = int(pool[rng.integers(len(pool))])
            if j not in bought[i]:
                bought[i].append(j)
        for j in rng.choice(by_type[p_type[i]], int(rng.integers(0, 3)), replace=False):
            if int(j) != i:
                viewed[i].append(int(j))

    n_other = len(brands) + len(cats) + len(_AMAZON_COLORS)
    all_ids = _ids(rng, n + n_other, 0, 960_000)
    prod_ids = all_ids[:n]
    brand_ids = all_ids[n : n + len(brands)]
    cat_ids = all_ids[n + len(brands) : n + len(brands) + len(cats)]
    color_ids = all_ids[n + len(brands) + len(cats) :]
    src, rel, dst = [], [], []
    for i in range(n):
        src += [prod_ids[i]] * 3
        rel += ["has_brand", "has_category", "has_color"]
        dst += [
            brand_ids[p_brand[i]],
            cat_ids[cats.index(types[p_type[i]][1])],
            color_ids[p_color[i]],
        ]
        for j in bought[i]:
            src.append(prod_ids[i]), rel.append("also_bought"), dst.append(prod_ids[j])
        for j in viewed[i]:
            src.append(prod_ids[i]), rel.append("also_viewed"), dst.append(prod_ids[j])
    edges = pd.DataFrame(
        {"src_id": _str_col(src), "relation": _str_col(rel), "dst_id": _str_col(dst)}
    )

    bcount = np.bincount(p_brand_a, minlength=len(brands))
    entities = pd.DataFrame(
        {
            "doc_id": _str_col(prod_ids + brand_ids + cat_ids + color_ids),
            "name": _str_col(p_title + brands + cats + _AMAZON_COLORS),
            "text": _str_col(
                texts
                + [f"- brand: {b}\n- products: {bcount[i]}" for i, b in enumerate(brands)]
                + [f"- category: Sports & Outdoors > {c}" for c in cats]
                + [f"- color: {c}" for c in _AMAZON_COLORS]
            ),
            "type": _str_col(
                ["product"] * n
                + ["brand"] * len(brands)
                + ["category"] * len(cats)
                + ["color"] * len(_AMAZON_COLORS)
            ),
            "brand": _str_col([brands[b] for b in p_brand] + [None] * n_other),
            "category": _str_col([types[t][1] for t in p_type] + [None] * n_other),
            "color": _str_col([_AMAZON_COLORS[c] for c in p_color] + [None] * n_other),
        }
    )

    # ---- query templates: each returns a _Query (text, gold product indices, slices) or None
    def anchor(rng: Rng) -> int:
        return int(rng.integers(n))

    def ptype_name(ti: int, synonym: float = 0.0) -> str:
        """The product type, or with probability ``synonym`` a synonym of it."""
        pt = types[ti][0]
        return _PTYPE_SYNONYMS[pt] if synonym and rng.random() < synonym else pt

    def q_text2(rng: Rng) -> _Query | None:
        a = anchor(rng)
        ti = p_type[a]
        if len(p_feats[a]) < 2:
            return None
        f1, f2 = _sample(rng, p_feats[a], 2)
        gold = np.flatnonzero((p_type_a == ti) & feat_sets[:, f1] & feat_sets[:, f2])
        a1, a2 = feat(ti, f1, rng.random() < 0.5), feat(ti, f2, rng.random() < 0.5)
        pt = ptype_name(ti, 0.4)
        text = _pick(
            rng,
            [
                f"Can you suggest {_an(pt)} {pt} that has {a1} and {a2}?",
                f"I'm looking for {_an(pt)} {pt} with {a1}, ideally with {a2}. Any suggestions?",
                f"What {pt} would you recommend that offers {a1} along with {a2}?",
            ],
        )
        return _Query(
            text, gold.tolist(), "synthesized", {"metapath": "product", "pattern": TEXTUAL}
        )

    def q_review(rng: Rng) -> _Query | None:
        a = anchor(rng)
        ti = p_type[a]
        f1, r = _pick(rng, p_feats[a]), _pick(rng, p_revs[a])
        gold = [i for i in np.flatnonzero((p_type_a == ti) & feat_sets[:, f1]) if r in p_revs[i]]
        pt = ptype_name(ti, 0.3)
        text = _pick(
            rng,
            [
                f"What {pt} with {feat(ti, f1, rng.random() < 0.5)} do reviewers describe as "
                f"{_REVIEWS[r]}?",
                f"I'd like {_an(pt)} {pt} that has {feat(ti, f1, rng.random() < 0.5)} and that "
                f"buyers say is {_REVIEWS[r]}.",
            ],
        )
        return _Query(text, gold, "synthesized", {"metapath": "product", "pattern": TEXTUAL})

    def q_text1(rng: Rng) -> _Query | None:
        a = anchor(rng)
        ti = p_type[a]
        f1 = _pick(rng, p_feats[a])
        gold = np.flatnonzero((p_type_a == ti) & feat_sets[:, f1])
        pt, use = _plural(ptype_name(ti, 0.3)), types[ti][2]
        f1_text = feat(ti, f1, rng.random() < 0.5)
        text = _pick(
            rng,
            [
                f"Could you help me find {pt} that have {f1_text} for {use}?",
                f"Which {pt} come with {feat(ti, f1)}?",
            ],
        )
        return _Query(
            text, gold.tolist(), "synthesized", {"metapath": "product", "pattern": TEXTUAL}
        )

    def q_broad(rng: Rng) -> _Query | None:
        ti = int(rng.integers(n_types))
        gold = np.flatnonzero(p_type_a == ti)
        pt, use = _plural(ptype_name(ti, 0.3)), types[ti][2]
        text = _pick(
            rng,
            [
                f"What are some good {pt} for {use}?",
                f"I need recommendations for {pt} suitable for {use}.",
            ],
        )
        return _Query(
            text, gold.tolist(), "synthesized", {"metapath": "product", "pattern": TEXTUAL}
        )

    def q_color(rng: Rng) -> _Query | None:
        a = anchor(rng)
        ti, c = p_type[a], p_color[a]
        f1 = _pick(rng, p_feats[a])
        gold = np.flatnonzero((p_type_a == ti) & (p_color_a == c) & feat_sets[:, f1])
        pt, col = ptype_name(ti), _AMAZON_COLORS[c].lower()
        text = _pick(
            rng,
            [
                f"Do you have {_an(col)} {col} {pt} with {feat(ti, f1)}?",
                f"I want a {pt} in {col} that has {feat(ti, f1)}.",
            ],
        )
        return _Query(
            text, gold.tolist(), "synthesized", {"metapath": "color -> product", "pattern": ONE_HOP}
        )

    def q_brand(rng: Rng) -> _Query | None:
        a = anchor(rng)
        ti, bi = p_type[a], p_brand[a]
        pt, b = ptype_name(ti), brands[bi]
        if rng.random() < 0.5:
            f1 = _pick(rng, p_feats[a])
            gold = np.flatnonzero((p_type_a == ti) & (p_brand_a == bi) & feat_sets[:, f1])
            text = f"Looking for {_an(b)} {b} brand {pt} with {feat(ti, f1)}."
        else:
            gold = np.flatnonzero((p_type_a == ti) & (p_brand_a == bi))
            text = f"Show me {_plural(pt)} made by {b}."
        return _Query(
            text, gold.tolist(), "synthesized", {"metapath": "brand -> product", "pattern": ONE_HOP}
        )

    def q_same_brand(rng: Rng) -> _Query | None:
        x = anchor(rng)
        bi = p_brand[x]
        others = sorted({p_type[j] for j in np.flatnonzero(p_brand_a == bi)} - {p_type[x]})
        if not others:
            return None
        t2 = _pick(rng, others)
        gold = np.flatnonzero((p_brand_a == bi) & (p_type_a == t2))
        pt = ptype_name(t2)
        text = _pick(
            rng,
            [
                f"I have the {p_title[x]}. Can you recommend {_an(pt)} {pt} from the same brand?",
                f"What {pt} does the brand of the {p_title[x]} also make?",
            ],
        )
        return _Query(
            text,
            gold.tolist(),
            "synthesized",
            {"metapath": "product -> brand -> product", "pattern": TWO_HOPS},
        )

    def q_bought(rng: Rng) -> _Query | None:
        x = anchor(rng)
        if not bought[x]:
            return None
        t2 = p_type[_pick(rng, bought[x])]
        gold = [j for j in bought[x] if p_type[j] == t2]
        pt = ptype_name(t2)
        text = _pick(
            rng,
            [
                f"What {pt} do customers often buy together with the {p_title[x]}?",
                f"People who bought the {p_title[x]} also bought which {pt}?",
            ],
        )
        return _Query(
            text,
            gold,
            "synthesized",
            {"metapath": "product -> also_bought -> product", "pattern": ONE_HOP},
        )

    def q_compatible(rng: Rng) -> _Query | None:
        # STaRK's generator sometimes names the seed product itself as context ("... that can
        # work well with my <title>"), and the seed is then among the answers
        x = anchor(rng)
        ti, bi = p_type[x], p_brand[x]
        f1 = _pick(rng, p_feats[x])
        gold = np.flatnonzero((p_type_a == ti) & (p_brand_a == bi) & feat_sets[:, f1])
        pt = ptype_name(ti)
        text = (
            f"What {pt} with {feat(ti, f1)} would you suggest that can work well with my "
            f"{p_title[x]}?"
        )
        return _Query(
            text, gold.tolist(), "synthesized", {"metapath": "brand -> product", "pattern": ONE_HOP}
        )

    def h_need(rng: Rng) -> _Query | None:
        a = anchor(rng)
        ti = p_type[a]
        f1 = _pick(rng, p_feats[a])
        c = p_color[a]
        gold = np.flatnonzero((p_type_a == ti) & feat_sets[:, f1] & (p_color_a == c))
        text = (
            f"My {_pick(rng, _RELATIVES)} is into {types[ti][2]}. need a {ptype_name(ti, 0.5)} "
            f"with "
            f"{feat(ti, f1, True)}, {_AMAZON_COLORS[c].lower()} would be perfect"
        )
        return _Query(
            _typo(rng, text, int(rng.integers(0, 3))),
            gold.tolist(),
            "human",
            {"metapath": "color -> product", "pattern": ONE_HOP},
        )

    def h_short(rng: Rng) -> _Query | None:
        a = anchor(rng)
        ti = p_type[a]
        f1 = _pick(rng, p_feats[a])
        gold = np.flatnonzero((p_type_a == ti) & feat_sets[:, f1])
        text = _pick(
            rng,
            [
                f"{ptype_name(ti, 0.5)} with {feat(ti, f1, True)}? {_pick(rng, _REVIEWS)} "
                "would be nice",
                f"any {_plural(ptype_name(ti, 0.5))} that have {feat(ti, f1, True)}",
            ],
        )
        return _Query(
            _typo(rng, text, int(rng.integers(1, 3))),
            gold.tolist(),
            "human",
            {"metapath": "product", "pattern": TEXTUAL},
        )

    def h_brand(rng: Rng) -> _Query | None:
        x = anchor(rng)
        bi = p_brand[x]
        others = sorted({p_type[j] for j in np.flatnonzero(p_brand_a == bi)} - {p_type[x]})
        if not others:
            return None
        t2 = _pick(rng, others)
        gold = np.flatnonzero((p_brand_a == bi) & (p_type_a == t2))
        text = (
            f"I bought a {ptype_name(p_type[x])} from {brands[bi]} and use it every day, "
            f"please recommend something from the same brand, like a {ptype_name(t2)}"
        )
        return _Query(
            _typo(rng, text, int(rng.integers(0, 2))),
            gold.tolist(),
            "human",
            {"metapath": "brand -> product", "pattern": ONE_HOP},
        )

    def h_bought(rng: Rng) -> _Query | None:
        x = anchor(rng)
        if not bought[x]:
            return None
        t2 = p_type[_pick(rng, bought[x])]
        gold = [j for j in bought[x] if p_type[j] == t2]
        text = (
            f"I just bought a {brands[p_brand[x]]} {p_model[x]} {ptype_name(p_type[x])}, "
            f"what {ptype_name(t2)} do people get with it?"
        )
        return _Query(
            _typo(rng, text, int(rng.integers(0, 2))),
            gold,
            "human",
            {"metapath": "product -> also_bought -> product", "pattern": ONE_HOP},
        )

    synth = _collect(
        rng,
        330,
        [
            q_text2,
            q_review,
            q_text1,
            q_broad,
            q_color,
            q_brand,
            q_same_brand,
            q_bought,
            q_compatible,
        ],
        [0.1, 0.12, 0.1, 0.07, 0.12, 0.12, 0.13, 0.15, 0.07],
        100,
    )
    human = _collect(rng, 90, [h_need, h_short, h_brand, h_bought], [0.3, 0.3, 0.2, 0.2], 100)
    return _stark_dataset(
        "stark-amazon",
        "STaRK-Amazon-like: sports & outdoors products with brands, categories, colors, reviews",
        rng,
        synth,
        human,
        prod_ids,
        entities,
        edges,
        ("product",),
        {
            "brand": ("has_brand",),
            "made": ("has_brand",),
            "bought": ("also_bought",),
            "buy": ("also_bought",),
            "together": ("also_bought",),
            "get": ("also_bought",),
            "color": ("has_color",),
            "colour": ("has_color",),
        },
    )


def _stark_dataset(
    name: str,
    description: str,
    rng: Rng,
    synth: list[_Query],
    human: list[_Query],
    cand_ids: Sequence[str],
    entities: pd.DataFrame,
    edges: pd.DataFrame,
    candidate_types: tuple[str, ...] | None,
    triggers: dict[str, tuple[str, ...]],
) -> Dataset:
    queries = synth + human
    splits = [str(_pick(rng, ["val", "test"], [0.35, 0.65])) for _ in synth] + ["test"] * len(human)
    qids = [str(i) for i in range(len(queries))]
    qdf, qrels = _tables(queries, cand_ids, qids, {"split": splits})
    return Dataset(
        name, "stark", description, qdf, qrels, entities, edges, candidate_types, triggers
    )


# ----------------------------------------------------------------------------------------------
# STaRK-MAG
# ----------------------------------------------------------------------------------------------
# fmt: off
_MAG_FIELDS: Final = {
    "Physics": [
        "soliton propagation", "nonlinear Schrödinger equations", "quantum entanglement",
        "Bose–Einstein condensates", "plasma turbulence",
    ],
    "Optics": [
        "photonic crystal fibers", "parabolic refractive index profiles",
        "second-harmonic generation", "optical vortices", "gold nanorods",
    ],
    "Astrophysics": [
        "type Ia supernovae", "molecular cloud cores", "gamma-ray bursts",
        "compact astrophysical objects", "galaxy cluster mergers",
    ],
    "Materials science": [
        "graphene nanoribbons", "perovskite solar cells", "high-entropy alloys",
        "thin film deposition", "3D microstructures",
    ],
    "Computer science": [
        "convolutional codes", "graph neural networks", "user interaction behavior data",
        "federated learning", "boundary integral equation methods",
    ],
    "Mechanical engineering": [
        "condenser performance", "failure mechanisms of composites", "heat exchanger fouling",
        "turbulent boundary layers", "fatigue crack growth",
    ],
    "Chemistry": [
        "catalytic oxidation", "metal–organic frameworks", "ionic liquids",
        "electrochemical sensors", "polymer self-assembly",
    ],
    "Biology": [
        "gene regulatory networks", "protein folding kinetics", "microbial biofilms",
        "circadian rhythms", "neural stem cells",
    ],
}
_MAG_METHODS: Final = [
    "a fourth-order Runge–Kutta study", "numerical simulation", "an experimental investigation",
    "a variational approach", "Monte Carlo simulation", "a machine learning approach",
    "a perturbative analysis", "finite element modeling", "a statistical survey",
    "density functional theory",
]
_MAG_ASPECTS: Final = [
    "stability", "dynamics", "scaling behaviour", "statistics", "energy transfer", "efficiency",
    "robustness", "localization", "symmetry breaking", "long-time behaviour",
]
_MAG_CONTEXTS: Final = [
    "two-dimensional lattices", "periodic media", "disordered systems", "large-scale networks",
    "low-temperature regimes", "industrial settings", "high-pressure conditions",
    "resource-constrained devices", "strong magnetic fields", "finite domains",
]
_MAG_FINDINGS: Final = [
    "a significant improvement over earlier estimates", "an unexpected phase transition",
    "robust localization", "a universal scaling law", "close agreement with experiments",
    "a new family of exact solutions", "a marked loss of efficiency", "strong size effects",
]
_VENUES: Final = [
    "Physical Review E", "Optics Express", "The Astrophysical Journal",
    "Journal of Applied Physics", "IEEE Transactions on Information Theory",
    "International Journal of Modern Physics", "Applied Thermal Engineering",
    "Journal of Chemical Physics", "PLOS ONE", "Scientific Reports",
]
_FIRST: Final = [
    "Meike", "Stojan", "Brian", "Wei", "Li", "Anna", "Ravi", "Sofia", "Kenji", "Olga", "Pedro",
    "Amara", "Lukas", "Yuki", "Fatima", "Ivan", "Chen", "Marta", "Tomas", "Aisha", "Jonas",
    "Priya", "Diego", "Elena", "Hiro", "Nadia", "Omar", "Clara", "Mateo", "Ingrid", "Ahmed",
    "Lena", "Sergei", "Mei", "Paulo", "Zara", "Felix", "Hana", "Victor", "Irene",
]
_LAST: Final = [
    "Hauschildt", "Hrnjak", "Morsony", "Kirillov", "Mane", "Zhang", "Du", "Wang", "Liu", "Chen",
    "Novak", "Silva", "Tanaka", "Petrov", "Garcia", "Okafor", "Muller", "Rossi", "Kowalski",
    "Haddad", "Nguyen", "Larsen", "Ivanova", "Costa", "Yamamoto", "Fischer", "Moreau", "Singh",
    "Kumar", "Park", "Kim", "Lopez", "Bauer", "Sato", "Horvat", "Dubois", "Eriksen", "Varga",
    "Marino", "Kaya", "Rahman", "Osei", "Lindqvist", "Popescu", "Nowak", "Bianchi", "Tran",
    "Iqbal", "Schmidt", "Alvarez",
]
_PLACES: Final = [
    "Ashford", "Brightwater", "Eastvale", "Kingsport", "Northfield", "Westbrook", "Harrowgate",
    "Lakeside", "Riverton", "Stonebridge", "Fairhaven", "Glenmore", "Oakridge", "Millbrook",
    "Redcliff", "Silverton", "Thornbury", "Windmere", "Ravensworth", "Ellesmere", "Marlow",
    "Dunmore", "Coldwater", "Ironbridge", "Southgate", "Halden", "Brookfield", "Kestrel Bay",
]
_INST_FORMS: Final = [
    "University of {p}", "{p} Institute of Technology", "{p} State University",
    "{p} Academy of Sciences", "{p} University Health Center", "{p} College of Engineering",
]
# fmt: on


def _mag(rng: Rng) -> Dataset:
    fields = list(_MAG_FIELDS)
    topics = [(f, t) for f in fields for t in _MAG_FIELDS[f]]
    n_topics = len(topics)
    insts = [_pick(rng, _INST_FORMS).format(p=p) for p in _sample(rng, _PLACES, 26)]
    n_auth = 1100
    names: dict[str, None] = {}
    while len(names) < n_auth:
        f, l_ = _pick(rng, _FIRST), _pick(rng, _LAST)
        style = int(rng.integers(3))
        nm = f"{f} {l_}" if style else f"{f} {chr(65 + int(rng.integers(26)))}. {l_}"
        names[nm] = None
    authors = list(names)
    auth_inst = rng.choice(len(insts), n_auth, p=_zipf(len(insts), 0.6))
    inst_auth = [np.flatnonzero(auth_inst == i) for i in range(len(insts))]

    n_pap = 2800
    topic_w = _zipf(n_topics, 0.5)[rng.permutation(n_topics)]
    p_topic = rng.choice(n_topics, n_pap, p=topic_w)
    p_topic2 = np.array(
        [
            _pick(rng, [j for j in range(n_topics) if topics[j][0] == topics[t][0] and j != t])
            if rng.random() < 0.6
            else int(rng.integers(n_topics))
            for t in p_topic
        ]
    )
    p_topic2[p_topic2 == p_topic] = (p_topic2[p_topic2 == p_topic] + 1) % n_topics
    p_year = rng.integers(2005, 2021, n_pap)
    p_method = rng.integers(len(_MAG_METHODS), size=n_pap)
    p_auth: list[list[int]] = []
    for _ in range(n_pap):
        i = int(rng.choice(len(insts), p=_zipf(len(insts), 0.6)))
        pool = inst_auth[i]
        k = min(int(rng.integers(1, 5)), len(pool))
        team = [int(a) for a in rng.choice(pool, k, replace=False, p=_zipf(len(pool), 0.9))]
        if rng.random() < 0.3:
            team.append(int(rng.integers(n_auth)))
        p_auth.append(list(dict.fromkeys(team)))
    titles, texts = [], []
    for i in range(n_pap):
        t, t2 = topics[p_topic[i]][1], topics[p_topic2[i]][1]
        m, asp, ctx = _MAG_METHODS[p_method[i]], _pick(rng, _MAG_ASPECTS), _pick(rng, _MAG_CONTEXTS)
        title = _pick(
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
            f"We study the {asp} of {t} using {m}. Our results show {_pick(rng, _MAG_FINDINGS)} "
            f"for {t2} in {ctx}."
        )
        texts.append(
            f"- paper: {title}\n- abstract: {abstract}\n- authors: "
            f"{', '.join(authors[a] for a in p_auth[i])}\n- fields of study: "
            f"{topics[p_topic[i]][0]}; {t.capitalize()}; {t2.capitalize()}\n"
            f"- year: {p_year[i]}\n- venue: {_pick(rng, _VENUES)}"
        )
    cites: list[list[int]] = [[] for _ in range(n_pap)]
    by_topic = [np.flatnonzero(p_topic == j) for j in range(n_topics)]
    for i in range(n_pap):
        older_same = [int(j) for j in by_topic[p_topic[i]] if p_year[j] < p_year[i]]
        for _ in range(int(rng.integers(0, 9))):
            j = (
                _pick(rng, older_same)
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
    other = n_auth + len(insts) + len(field_names)
    ids_other = _ids(rng, other, 0, 1_200_000)
    auth_ids = ids_other[:n_auth]
    inst_ids = ids_other[n_auth : n_auth + len(insts)]
    field_ids = ids_other[n_auth + len(insts) :]
    pap_ids = _ids(rng, n_pap, 1_200_000, 1_870_000)
    src, rel, dst = [], [], []
    for i in range(n_pap):
        for a in p_auth[i]:
            src.append(pap_ids[i]), rel.append("written_by"), dst.append(auth_ids[a])
        (
            src.append(pap_ids[i]),
            rel.append("has_field"),
            dst.append(field_ids[fields.index(topics[p_topic[i]][0])]),
        )
        for t in (p_topic[i], p_topic2[i]):
            src.append(pap_ids[i]), rel.append("has_field"), dst.append(field_ids[len(fields) + t])
        for j in cites[i]:
            src.append(pap_ids[i]), rel.append("cites"), dst.append(pap_ids[j])
    for a in range(n_auth):
        src.append(auth_ids[a]), rel.append("affiliated_with"), dst.append(inst_ids[auth_inst[a]])
    edges = pd.DataFrame(
        {"src_id": _str_col(src), "relation": _str_col(rel), "dst_id": _str_col(dst)}
    )
    entities = pd.DataFrame(
        {
            "doc_id": _str_col(pap_ids + auth_ids + inst_ids + field_ids),
            "name": _str_col(titles + authors + insts + field_names),
            "text": _str_col(
                texts
                + [f"- author: {a}\n- papers: {len(auth_papers[i])}" for i, a in enumerate(authors)]
                + [f"- institution: {x}" for x in insts]
                + [f"- field of study: {f}" for f in field_names]
            ),
            "type": _str_col(
                ["paper"] * n_pap
                + ["author"] * n_auth
                + ["institution"] * len(insts)
                + ["field_of_study"] * len(field_names)
            ),
            "year": pd.array([int(y) for y in p_year] + [None] * other, dtype="Int64"),
            "field": _str_col([topics[t][0] for t in p_topic] + [None] * other),
        }
    )

    def paper(rng: Rng) -> int:
        return int(rng.integers(n_pap))

    def q_inst(rng: Rng) -> _Query | None:
        a = paper(rng)
        inst = int(auth_inst[_pick(rng, p_auth[a])])
        t = p_topic[a]
        mask = paper_has_inst[:, inst] & ((p_topic == t) | (p_topic2 == t))
        f, tn = topics[t]
        if rng.random() < 0.5:
            mask &= p_year == p_year[a]
            text = _pick(
                rng,
                [
                    f"Find {p_year[a]} {f} papers from {insts[inst]} discussing {tn}.",
                    f"{f} research papers from {insts[inst]}, published in {p_year[a]}, "
                    f"focusing on {tn}.",
                ],
            )
        else:
            text = f"Are there any studies from {insts[inst]} focusing on {tn}?"
        return _Query(
            text,
            np.flatnonzero(mask).tolist(),
            "synthesized",
            {"metapath": "institution -> author -> paper", "pattern": TWO_HOPS},
        )

    def q_author(rng: Rng) -> _Query | None:
        a = paper(rng)
        au = _pick(rng, p_auth[a])
        t = p_topic[a]
        gold = [i for i in auth_papers[au] if t in (p_topic[i], p_topic2[i])]
        text = _pick(
            rng,
            [
                f"Show me publications by {authors[au]} focusing on {topics[t][1]}.",
                f"What has {authors[au]} written about {topics[t][1]}?",
            ],
        )
        return _Query(
            text, gold, "synthesized", {"metapath": "author -> paper", "pattern": ONE_HOP}
        )

    def q_cites(rng: Rng) -> _Query | None:
        x = paper(rng)
        if not cites[x]:
            return None
        t = p_topic[_pick(rng, cites[x])]
        gold = [j for j in cites[x] if t in (p_topic[j], p_topic2[j])]
        text = (
            f"What are some other studies on {topics[t][1]} referenced in the paper titled "
            f'"{titles[x]}"?'
        )
        return _Query(
            text, gold, "synthesized", {"metapath": "paper -> cites -> paper", "pattern": ONE_HOP}
        )

    def q_coauthor(rng: Rng) -> _Query | None:
        x = paper(rng)
        co = sorted({j for a in p_auth[x] for j in auth_papers[a]} - {x})
        if not co:
            return None
        t = p_topic[_pick(rng, co)]
        gold = [j for j in co if t in (p_topic[j], p_topic2[j])]
        text = (
            f'Can you locate publications with a shared author from the paper titled "{titles[x]}" '
            f"that also focus on {topics[t][1]}?"
        )
        return _Query(
            text, gold, "synthesized", {"metapath": "paper -> author -> paper", "pattern": TWO_HOPS}
        )

    def q_topic(rng: Rng) -> _Query | None:
        a = paper(rng)
        t, t2 = p_topic[a], p_topic2[a]
        gold = np.flatnonzero((p_topic == t) & (p_topic2 == t2)).tolist()
        text = _pick(
            rng,
            [
                f"Find papers on {topics[t][1]} that also address {topics[t2][1]}.",
                f"Which publications discuss both {topics[t][1]} and {topics[t2][1]}?",
            ],
        )
        return _Query(text, gold, "synthesized", {"metapath": "paper", "pattern": TEXTUAL})

    def q_field_year(rng: Rng) -> _Query | None:
        a = paper(rng)
        t = p_topic[a]
        m = p_method[a]
        gold = np.flatnonzero((p_topic == t) & (p_method == m)).tolist()
        text = f"Papers about {topics[t][1]} based on {_MAG_METHODS[m]}."
        return _Query(text, gold, "synthesized", {"metapath": "field -> paper", "pattern": ONE_HOP})

    def h_author_year(rng: Rng) -> _Query | None:
        a = paper(rng)
        au = _pick(rng, p_auth[a])
        gold = [i for i in auth_papers[au] if p_year[i] == p_year[a]]
        text = _pick(
            rng,
            [
                f"Paper by {authors[au]} in {p_year[a]}",
                f"what did {authors[au]} publish in {p_year[a]}",
            ],
        )
        return _Query(text, gold, "human", {"metapath": "author -> paper", "pattern": ONE_HOP})

    def h_interest(rng: Rng) -> _Query | None:
        a = paper(rng)
        t, t2 = p_topic[a], p_topic2[a]
        gold = np.flatnonzero((p_topic == t) & (p_topic2 == t2)).tolist()
        text = (
            f"I am interested in {topics[t][1].lower()} and {topics[t2][1].lower()} -- what is a "
            f"paper I should read?"
        )
        return _Query(
            _typo(rng, text, int(rng.integers(1, 3))),
            gold,
            "human",
            {"metapath": "paper", "pattern": TEXTUAL},
        )

    def h_cited_inst(rng: Rng) -> _Query | None:
        x = paper(rng)
        if not cites[x]:
            return None
        j0 = _pick(rng, cites[x])
        inst = int(auth_inst[_pick(rng, p_auth[j0])])
        gold = [j for j in cites[x] if paper_has_inst[j, inst]]
        text = (
            f"Find me a paper written by a co-author from {insts[inst]} and is cited by a paper "
            f'called "{titles[x]}"'
        )
        return _Query(
            _typo(rng, text, int(rng.integers(0, 2))),
            gold,
            "human",
            {"metapath": "institution -> author -> paper <- cites <- paper", "pattern": TWO_HOPS},
        )

    def h_shares(rng: Rng) -> _Query | None:
        x = paper(rng)
        co = sorted({j for a in p_auth[x] for j in auth_papers[a]} - {x})
        if not co:
            return None
        text = f"other papers from the authors of {titles[x].lower()}"
        return _Query(
            _typo(rng, text, int(rng.integers(0, 2))),
            co,
            "human",
            {"metapath": "paper -> author -> paper", "pattern": TWO_HOPS},
        )

    synth = _collect(
        rng,
        330,
        [q_inst, q_author, q_cites, q_coauthor, q_topic, q_field_year],
        [0.2, 0.16, 0.16, 0.16, 0.16, 0.16],
        60,
    )
    human = _collect(
        rng, 90, [h_author_year, h_interest, h_cited_inst, h_shares], [0.25, 0.35, 0.2, 0.2], 60
    )
    uni = ("affiliated_with", "written_by")
    return _stark_dataset(
        "stark-mag",
        "STaRK-MAG-like: papers with authors, institutions, fields of study and citations",
        rng,
        synth,
        human,
        pap_ids,
        entities,
        edges,
        ("paper",),
        {
            "referenced": ("cites",),
            "cited": ("cites",),
            "cites": ("cites",),
            "references": ("cites",),
            "author": ("written_by",),
            "authors": ("written_by",),
            "by": ("written_by",),
            "written": ("written_by",),
            "university": uni,
            "institute": uni,
            "academy": uni,
            "college": uni,
            "center": uni,
        },
    )


# ----------------------------------------------------------------------------------------------
# STaRK-Prime
# ----------------------------------------------------------------------------------------------
# fmt: off
_GENE_FAMILIES: Final = [
    ("KRT", "keratin"), ("HDAC", "histone deacetylase"), ("SLC", "solute carrier family"),
    ("CYP", "cytochrome P450 family"), ("MMP", "matrix metallopeptidase"), ("IL", "interleukin"),
    ("ZNF", "zinc finger protein"), ("KCN", "potassium voltage-gated channel"),
    ("RAB", "RAS-related protein"), ("CDK", "cyclin dependent kinase"),
    ("FGF", "fibroblast growth factor"), ("WNT", "Wnt family member"),
    ("SOX", "SRY-box transcription factor"), ("ATP", "ATPase subunit"), ("COL", "collagen type"),
    ("NDUF", "NADH ubiquinone oxidoreductase subunit"), ("TNF", "tumor necrosis factor"),
    ("PTP", "protein tyrosine phosphatase"), ("ABC", "ATP binding cassette transporter"),
    ("GPR", "G protein-coupled receptor"),
]
_PHENOTYPES: Final = [
    "seizures", "hypotonia", "cataract", "developmental delay", "chemosis", "pharyngitis",
    "short stature", "hearing loss", "muscle weakness", "fatigue", "fever", "joint pain",
    "skin rash", "itching", "blistering", "scaly skin", "hair loss", "dry eyes", "blurred vision",
    "photophobia", "night blindness", "chest pain", "palpitations", "shortness of breath",
    "chronic cough", "wheezing", "abdominal pain", "diarrhea", "constipation", "jaundice",
    "hepatomegaly", "splenomegaly", "easy bruising", "nosebleeds", "recurrent infections",
    "weight loss", "obesity", "hyperglycemia", "hypoglycemia", "kidney stones", "proteinuria",
    "hematuria", "edema", "hypertension", "tremor", "spasticity", "intellectual disability",
    "microcephaly", "macrocephaly", "scoliosis", "brittle bones", "joint hypermobility",
    "cleft palate", "ptosis", "nystagmus", "strabismus", "photosensitivity", "cardiomegaly",
    "cyanosis", "dysphagia", "hoarse voice", "headache", "vertigo", "tinnitus", "numbness",
    "night sweats", "insomnia", "memory loss", "dark urine", "pale skin", "thickened skin",
    "skin ulcers", "nail dystrophy", "delayed puberty", "infertility", "goiter",
    "heat intolerance", "cold intolerance", "muscle cramps", "bone pain", "lymphadenopathy",
]
_LAY_TERMS: Final = {
    "hypotonia": "floppy muscles", "pharyngitis": "a sore throat", "chemosis": "swollen eyes",
    "photophobia": "sensitivity to light", "edema": "swelling", "jaundice": "yellow skin",
    "cyanosis": "bluish lips", "dysphagia": "trouble swallowing", "tinnitus": "ringing ears",
    "vertigo": "dizziness", "hepatomegaly": "an enlarged liver", "splenomegaly": "a big spleen",
    "cardiomegaly": "an enlarged heart", "microcephaly": "a small head",
    "macrocephaly": "a large head", "nystagmus": "jerky eye movements",
    "ptosis": "drooping eyelids", "hematuria": "blood in the urine", "proteinuria": "foamy urine",
    "lymphadenopathy": "swollen glands", "hair loss": "thinning hair",
    "short stature": "being unusually short", "hyperglycemia": "high blood sugar",
    "hypoglycemia": "low blood sugar", "hypertension": "high blood pressure",
    "night sweats": "sweating at night", "insomnia": "trouble sleeping", "seizures": "fits",
    "goiter": "a swollen neck", "scoliosis": "a curved spine", "itching": "itchy skin",
    "palpitations": "a racing heart", "metal ion binding": "binds metal ions",
    "ATP binding": "binds ATP", "kinase binding": "binds kinases", "DNA binding": "binds DNA",
    "RNA binding": "binds RNA", "zinc ion binding": "binds zinc",
    "calcium ion binding": "binds calcium", "protein kinase activity": "phosphorylates proteins",
    "carbohydrate binding": "binds sugars", "lipid binding": "binds lipids",
    "heme binding": "binds heme", "actin binding": "binds actin",
    "iron ion binding": "binds iron", "transporter activity": "moves molecules across membranes",
    "regulation of angiogenesis": "controlling blood vessel growth",
    "fibrinolysis": "breaking down blood clots", "blood coagulation": "blood clotting",
    "DNA repair": "fixing damaged DNA", "circadian rhythm": "the body clock",
    "regulation of insulin secretion": "controlling insulin release",
    "regulation of blood pressure": "blood pressure control",
    "cellular response to hypoxia": "coping with low oxygen",
    "glucose transport": "moving sugar into cells", "protein folding": "folding proteins",
    "immune response": "immune defense", "heart development": "forming the heart",
    "lung development": "forming the lungs",
    "regulation of apoptotic process": "controlling programmed cell death",
    "regulation of wound healing": "healing wounds",
}
_ANATOMY: Final = [
    "pericardium", "dorsal thalamus", "ventral thalamus", "endometrium", "adipose tissue",
    "colon", "liver", "kidney", "lung", "skeletal muscle", "heart left ventricle",
    "cerebral cortex", "cerebellum", "hippocampus", "retina", "lens", "cornea", "esophagus",
    "stomach", "small intestine", "pancreas", "spleen", "thymus", "bone marrow", "lymph node",
    "thyroid gland", "adrenal gland", "pituitary gland", "testis", "ovary", "uterus", "placenta",
    "prostate", "urinary bladder", "aorta", "coronary artery", "tibial nerve", "spinal cord",
    "olfactory bulb", "tongue", "salivary gland", "breast", "trachea", "gallbladder", "duodenum",
    "rectum", "cartilage", "tendon", "hair follicle", "hypothalamus", "amygdala",
    "substantia nigra",
]
_CC: Final = [
    "kinetochore", "mitochondrial inner membrane", "nucleolus", "centrosome",
    "endoplasmic reticulum membrane", "Golgi apparatus", "lysosome", "peroxisome",
    "plasma membrane", "focal adhesion", "synaptic vesicle", "cilium", "ribosome",
    "proteasome complex", "nuclear envelope", "chromatin", "spliceosomal complex",
    "actin filament", "microtubule", "extracellular matrix", "basement membrane",
    "collagen trimer", "endosome", "lipid droplet", "sarcomere", "postsynaptic density",
    "dendrite", "axon", "tight junction", "nuclear pore", "stress granule", "melanosome",
]
_MF: Final = [
    "metal ion binding", "ATP binding", "kinase binding", "DNA binding", "RNA binding",
    "zinc ion binding", "calcium ion binding", "protein kinase activity",
    "tyrosine phosphatase activity", "histone deacetylase activity",
    "transcription factor activity", "G protein-coupled receptor activity",
    "potassium channel activity", "transporter activity", "oxidoreductase activity",
    "heme binding", "carbohydrate binding", "lipid binding", "actin binding",
    "microtubule binding", "ubiquitin ligase activity", "GTPase activity", "cytokine activity",
    "growth factor activity", "chromatin binding", "iron ion binding",
    "metalloendopeptidase activity", "collagen binding", "heparin binding", "hormone activity",
]
# fmt: on
_BP: Final = (
    [
        f"{x} transport"
        for x in (
            "long-chain fatty acid",
            "glucose",
            "chloride",
            "potassium ion",
            "vesicle-mediated",
            "mitochondrial protein",
            "cholesterol",
        )
    ]
    + [
        f"regulation of {x}"
        for x in (
            "cell cycle",
            "apoptotic process",
            "angiogenesis",
            "inflammatory response",
            "insulin secretion",
            "blood pressure",
            "synaptic transmission",
            "autophagy",
            "cell migration",
            "wound healing",
        )
    ]
    + [
        f"cellular response to {x}"
        for x in (
            "manganese ion",
            "hypoxia",
            "oxidative stress",
            "DNA damage stimulus",
            "heat",
            "retinoic acid",
        )
    ]
    + [
        f"{x} development"
        for x in ("skeletal system", "heart", "lens", "kidney", "lung", "hair follicle")
    ]
    + [
        "antigen processing and presentation",
        "porphyrin metabolic process",
        "fibrinolysis",
        "blood coagulation",
        "lipid metabolic process",
        "DNA repair",
        "mRNA splicing",
        "protein folding",
        "circadian rhythm",
        "immune response",
    ]
)
# fmt: off
_PATHWAYS: Final = [
    "Activation of matrix metalloproteinases", "Degradation of the extracellular matrix",
    "Transport of small molecules", "Heme biosynthesis",
    "Mitochondrial fatty acid beta-oxidation", "Interleukin-1 signaling",
    "WNT ligand biogenesis and trafficking", "Apoptotic cleavage of cellular proteins",
    "Cholesterol biosynthesis", "Glycolysis", "Collagen formation", "Potassium channels",
    "Cell cycle checkpoints", "DNA double-strand break repair",
    "Insulin receptor signalling cascade", "Platelet activation",
    "Phase I functionalization of compounds", "Signaling by FGFR1", "Signaling by WNT",
    "Keratinization", "Complex I biogenesis", "Rab regulation of trafficking",
    "Chromatin organization", "Cytokine signaling in immune system",
]
_DRUG_PREFIX: Final = [
    "ala", "bri", "cara", "dexa", "eto", "fena", "glimo", "hexa", "ibra", "lato", "mira", "nora",
    "ola", "pira", "quina", "rosu", "sora", "tera", "vala", "zola", "ami", "cilo", "dora", "epa",
    "fosa", "gala", "halo", "iso", "keto", "levo", "meta", "oxa", "ralo", "seco", "tio", "uro",
    "veno", "trava", "luma", "bima",
]
_DRUG_CLASSES: Final = [
    ("mab", "monoclonal antibody", "injection"), ("nib", "kinase inhibitor", "tablet"),
    ("pril", "ACE inhibitor", "tablet"), ("statin", "HMG-CoA reductase inhibitor", "tablet"),
    ("olol", "beta blocker", "tablet"), ("cillin", "penicillin antibiotic", "capsule"),
    ("vir", "antiviral", "tablet"), ("azole", "antifungal", "topical cream"),
    ("prost", "prostaglandin analogue", "eye drops"), ("oxacin", "fluoroquinolone", "tablet"),
    ("sartan", "angiotensin receptor blocker", "tablet"), ("parin", "anticoagulant", "injection"),
    ("dronate", "bisphosphonate", "tablet"), ("lukast", "leukotriene antagonist", "tablet"),
]
_DISEASE_ADJ: Final = [
    "hereditary", "familial", "congenital", "juvenile", "adult-onset", "acute", "chronic",
    "autosomal recessive", "X-linked", "early-onset",
]
_DISEASE_NOUN: Final = [
    ("hypertrophic cardiomyopathy", "cardiovascular"), ("intermittent porphyria", "metabolic"),
    ("myeloid leukemia", "blood"), ("retinal dystrophy", "eye"),
    ("sensory neuropathy", "neurological"), ("interstitial lung disease", "respiratory"),
    ("spinal muscular atrophy", "neurological"), ("nephrotic syndrome", "kidney"),
    ("ichthyosis", "skin"), ("epilepsy", "neurological"), ("dermatitis", "skin"),
    ("hepatitis", "digestive"), ("colitis", "digestive"), ("glaucoma", "eye"),
    ("osteoporosis", "musculoskeletal"), ("hypothyroidism", "endocrine"),
    ("hemolytic anemia", "blood"), ("cerebellar ataxia", "neurological"),
    ("myopathy", "musculoskeletal"), ("thyroid carcinoma", "cancer"), ("keratoderma", "skin"),
    ("immunodeficiency", "immune"), ("arthritis", "immune"), ("pancreatitis", "digestive"),
]
_EPONYMS: Final = [
    "Harlow", "Benning", "Castel", "Dressler", "Ekwall", "Fornier", "Gallo", "Hirsch", "Ishida",
    "Jorgen", "Kessler", "Lindau", "Marchetti", "Nordin", "Ostrow", "Pellan", "Quist", "Rennick",
]
# fmt: on


def _prime(rng: Rng) -> Dataset:
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
    drug_names = sorted({p + c[0] for p in _DRUG_PREFIX for c in _DRUG_CLASSES})
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
            nm = f"{_pick(rng, _EPONYMS)} syndrome"
            cat = _pick(rng, ["neurological", "skin", "metabolic", "musculoskeletal"])
        elif r < 0.8:
            nm = f"{_pick(rng, _DISEASE_ADJ)} {noun}"
        else:
            nm = f"{noun} type {int(rng.integers(1, 12))}"
        diseases.setdefault(nm, cat)
    dis_names = list(diseases)
    dis_cat = [diseases[d] for d in dis_names]

    types_: list[str] = []
    names: list[str] = []

    def add(kind: str, items: Sequence[str]) -> list[int]:
        start = len(names)
        names.extend(items)
        types_.extend([kind] * len(items))
        return list(range(start, len(names)))

    g_ix = add("gene/protein", gene_syms)
    d_ix = add("drug", drug_names)
    s_ix = add("disease", dis_names)
    ph_ix = add("effect/phenotype", _PHENOTYPES)
    an_ix = add("anatomy", _ANATOMY)
    cc_ix = add("cellular_component", _CC)
    mf_ix = add("molecular_function", _MF)
    bp_ix = add("biological_process", _BP)
    pw_ix = add("pathway", _PATHWAYS)
    n = len(names)

    edges_l: list[tuple[int, str, int]] = []
    nbr: dict[str, list[list[int]]] = {}

    def link(a: int, r: str, b: int) -> None:
        edges_l.append((a, r, b))
        if r not in nbr:
            nbr[r] = [[] for _ in range(n)]
        if b not in nbr[r][a]:
            nbr[r][a].append(b)
            nbr[r][b].append(a)

    fam_genes = [
        [g for g, f in zip(g_ix, gene_fam, strict=True) if f == fi]
        for fi in range(len(_GENE_FAMILIES))
    ]
    gene_mf: dict[int, list[int]] = {}
    gene_bp: dict[int, list[int]] = {}
    fam_mf = [_sample(rng, mf_ix, 3) for _ in _GENE_FAMILIES]
    fam_bp = [_sample(rng, bp_ix, 4) for _ in _GENE_FAMILIES]
    for g, fi in zip(g_ix, gene_fam, strict=True):
        gene_mf[g] = list(dict.fromkeys(_sample(rng, fam_mf[fi], 2) + _sample(rng, mf_ix, 1)))
        gene_bp[g] = list(dict.fromkeys(_sample(rng, fam_bp[fi], 2) + _sample(rng, bp_ix, 1)))
        for m in gene_mf[g]:
            link(g, "interacts with", m)
        for b in gene_bp[g]:
            link(g, "interacts with", b)
        for c in _sample(rng, cc_ix, int(rng.integers(1, 3))):
            link(g, "interacts with", c)
        for a in _sample(rng, an_ix, int(rng.integers(2, 6))):
            link(a, "expression present", g)
        if rng.random() < 0.6:
            link(g, "interacts with", _pick(rng, pw_ix))
        for h in _sample(rng, fam_genes[fi], int(rng.integers(0, 3))):
            if h != g:
                link(g, "ppi", h)
    dis_ph: dict[int, list[int]] = {}
    for s in s_ix:
        dis_ph[s] = _sample(rng, ph_ix, int(rng.integers(3, 6)))
        for p in dis_ph[s]:
            link(s, "phenotype present", p)
        for g in _sample(rng, g_ix, int(rng.integers(1, 5))):
            link(g, "associated with", s)
    drug_ind: dict[int, list[int]] = {}
    for d in d_ix:
        drug_ind[d] = _sample(rng, s_ix, int(rng.integers(1, 4)))
        for s in drug_ind[d]:
            link(d, "indication", s)
        fam_pool = fam_genes[int(rng.integers(len(_GENE_FAMILIES)))]
        for g in _sample(rng, fam_pool, int(rng.integers(2, 9))):
            link(d, "target", g)
        if rng.random() < 0.4:
            link(d, "contraindication", _pick(rng, s_ix))

    texts: list[str] = [""] * n
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
        route = cls[2] if rng.random() < 0.8 else _pick(rng, ["tablet", "capsule", "injection"])
        drug_route[d] = route
        texts[d] = (
            f"- drug: {names[d]}\n- class: {cls[1]}\n- route: {route}\n"
            f"- half-life: about {int(rng.integers(2, 40))} hours\n"
            f"- indication: {'; '.join(names[s] for s in drug_ind[d])}"
        )
    for s, cat in zip(s_ix, dis_cat, strict=True):
        ph = [names[p] for p in dis_ph[s]]
        other = [names[p] for p in _sample(rng, [p for p in ph_ix if p not in dis_ph[s]], 2)]
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

    ids = _ids(rng, n, 0, 129_375)
    edges = pd.DataFrame(
        {
            "src_id": _str_col([ids[a] for a, _, _ in edges_l]),
            "relation": _str_col([r for _, r, _ in edges_l]),
            "dst_id": _str_col([ids[b] for _, _, b in edges_l]),
        }
    )
    entities = pd.DataFrame(
        {
            "doc_id": _str_col(ids),
            "name": _str_col(names),
            "text": _str_col(texts),
            "type": _str_col(types_),
        }
    )

    def nb(r: str, i: int) -> list[int]:
        return nbr.get(r, [[] for _ in range(n)])[i]

    def say(i: int, p: float) -> str:
        """The name of entity ``i``, or with probability ``p`` its lay paraphrase."""
        lay = _LAY_TERMS.get(names[i])
        return lay if lay and rng.random() < p else names[i]

    def does(mf: int, p: float) -> str:
        lay = _LAY_TERMS.get(names[mf])
        return f"that {lay}" if lay and rng.random() < p else f"with {names[mf]}"

    def q_drug_gene(rng: Rng) -> _Query | None:
        d = _pick(rng, d_ix)
        tg = nb("target", d)
        mf = _pick(rng, gene_mf[_pick(rng, tg)])
        gold = [g for g in tg if mf in gene_mf[g]]
        text = _pick(
            rng,
            [
                f"Which genes or proteins {does(mf, 0.5)} are targeted by {names[d]}?",
                f"What are the targets of {names[d]} {does(mf, 0.5)}?",
            ],
        )
        return _Query(
            text,
            gold,
            "synthesized",
            {"metapath": "drug -target-> gene/protein", "pattern": ONE_HOP},
        )

    def q_drug_cc(rng: Rng) -> _Query | None:
        d = _pick(rng, d_ix)
        gold = sorted(
            {
                c
                for g in nb("target", d)
                for c in nb("interacts with", g)
                if types_[c] == "cellular_component"
            }
        )
        text = (
            f"Which cellular structures are involved in interactions with genes or proteins that "
            f"are the targets of {names[d]}?"
        )
        return _Query(
            text,
            gold,
            "synthesized",
            {
                "metapath": "drug -target-> gene/protein -interacts with-> cellular_component",
                "pattern": TWO_HOPS,
            },
        )

    def q_dis_drug(rng: Rng) -> _Query | None:
        s = _pick(rng, s_ix)
        cands = [d for d in nb("indication", s) if types_[d] == "drug"]
        if not cands:
            return None
        route = drug_route[_pick(rng, cands)]
        gold = [d for d in cands if drug_route[d] == route]
        text = f"Which medications given as {route} are indicated for {names[s]}?"
        return _Query(
            text,
            gold,
            "synthesized",
            {"metapath": "disease -indication-> drug", "pattern": ONE_HOP},
        )

    def q_anat_gene(rng: Rng) -> _Query | None:
        g0 = _pick(rng, g_ix)
        an = _pick(rng, nb("expression present", g0))
        bp = _pick(rng, gene_bp[g0])
        gold = [g for g in nb("expression present", an) if bp in gene_bp[g]]
        text = (
            f"Which genes or proteins are expressed in the {names[an]} and take part in "
            f"{say(bp, 0.5)}?"
        )
        return _Query(
            text,
            gold,
            "synthesized",
            {"metapath": "anatomy -expression present-> gene/protein", "pattern": ONE_HOP},
        )

    def q_gene_dis(rng: Rng) -> _Query | None:
        s0 = _pick(rng, s_ix)
        g = _pick(rng, [x for x in nb("associated with", s0) if types_[x] == "gene/protein"])
        p = _pick(rng, dis_ph[s0])
        gold = [s for s in nb("associated with", g) if types_[s] == "disease" and p in dis_ph[s]]
        text = f"Which disease associated with the {names[g]} gene presents with {say(p, 0.4)}?"
        return _Query(
            text,
            gold,
            "synthesized",
            {"metapath": "gene/protein -associated with-> disease", "pattern": ONE_HOP},
        )

    def q_dis_text(rng: Rng) -> _Query | None:
        s0 = _pick(rng, s_ix)
        ps = _sample(rng, dis_ph[s0], 3)
        gold = [s for s in s_ix if all(p in dis_ph[s] for p in ps)]
        p1, p2, p3 = (say(p, 0.4) for p in ps)
        text = _pick(
            rng,
            [
                f"What disease is characterized by {p1}, {p2} and {p3}?",
                f"Which {dis_cat[s0 - s_ix[0]]} disorder shows {p1}, {p2} and {p3}?",
            ],
        )
        return _Query(text, gold, "synthesized", {"metapath": "disease", "pattern": TEXTUAL})

    def q_gene_text(rng: Rng) -> _Query | None:
        g0 = _pick(rng, g_ix)
        mf, bp = _pick(rng, gene_mf[g0]), _pick(rng, gene_bp[g0])
        gold = [g for g in g_ix if mf in gene_mf[g] and bp in gene_bp[g]]
        text = f"Identify genes or proteins {does(mf, 0.4)} that contribute to {say(bp, 0.4)}."
        return _Query(text, gold, "synthesized", {"metapath": "gene/protein", "pattern": TEXTUAL})

    def q_family(rng: Rng) -> _Query | None:
        # names one answer as an example: a retriever that drops named entities loses it
        g0 = _pick(rng, g_ix)
        fi = gene_fam[g0 - g_ix[0]]
        bp = _pick(rng, gene_bp[g0])
        gold = [g for g in fam_genes[fi] if bp in gene_bp[g]]
        text = (
            f"Which {_GENE_FAMILIES[fi][1]} genes, such as {names[g0]}, are involved in "
            f"{say(bp, 0.3)}?"
        )
        return _Query(text, gold, "synthesized", {"metapath": "gene/protein", "pattern": TEXTUAL})

    def q_ppi(rng: Rng) -> _Query | None:
        g0 = _pick(rng, g_ix)
        ppi = nb("ppi", g0)
        if not ppi:
            return None
        bp = _pick(rng, gene_bp[_pick(rng, ppi)])
        gold = [g for g in ppi if bp in gene_bp[g]]
        text = (
            f"Which genes or proteins interact with {names[g0]} and are involved in {say(bp, 0.4)}?"
        )
        return _Query(
            text,
            gold,
            "synthesized",
            {"metapath": "gene/protein -ppi-> gene/protein", "pattern": ONE_HOP},
        )

    def h_symptoms(rng: Rng) -> _Query | None:
        s0 = _pick(rng, s_ix)
        ps = _sample(rng, dis_ph[s0], 2)
        cat = dis_cat[s0 - s_ix[0]]
        gold = [s for s in s_ix if all(p in dis_ph[s] for p in ps) and dis_cat[s - s_ix[0]] == cat]
        text = f"I have {say(ps[0], 0.6)} and {say(ps[1], 0.6)}. What {cat} disease might I have?"
        return _Query(
            _typo(rng, text, int(rng.integers(0, 2))),
            gold,
            "human",
            {"metapath": "disease", "pattern": TEXTUAL},
        )

    def h_prescribed(rng: Rng) -> _Query | None:
        d = _pick(rng, d_ix)
        gold = list(drug_ind[d])
        text = f"My friend has been prescribed {names[d]}, what diseases might they have?"
        return _Query(
            _typo(rng, text, int(rng.integers(0, 2))),
            gold,
            "human",
            {"metapath": "drug -indication-> disease", "pattern": ONE_HOP},
        )

    def h_gene(rng: Rng) -> _Query | None:
        g0 = _pick(rng, g_ix)
        an = _pick(rng, nb("expression present", g0))
        mf = _pick(rng, gene_mf[g0])
        gold = [g for g in nb("expression present", an) if mf in gene_mf[g]]
        text = f"which gene is present in {names[an]} and {does(mf, 0.6)}"
        return _Query(
            _typo(rng, text, int(rng.integers(0, 2))),
            gold,
            "human",
            {"metapath": "anatomy -expression present-> gene/protein", "pattern": ONE_HOP},
        )

    def h_target_sounds(rng: Rng) -> _Query | None:
        d = _pick(rng, d_ix)
        cls = drug_cls[d - d_ix[0]]
        gold = [
            x for x in d_ix if drug_cls[x - d_ix[0]] == cls and set(drug_ind[x]) & set(drug_ind[d])
        ]
        s = _pick(rng, drug_ind[d])
        text = f"what {cls[1]} is used for {names[s].lower()}"
        return _Query(
            _typo(rng, text, int(rng.integers(0, 2))),
            gold,
            "human",
            {"metapath": "disease -indication-> drug", "pattern": ONE_HOP},
        )

    synth = _collect(
        rng,
        330,
        [
            q_drug_gene,
            q_drug_cc,
            q_dis_drug,
            q_anat_gene,
            q_gene_dis,
            q_dis_text,
            q_gene_text,
            q_ppi,
            q_family,
        ],
        [0.12, 0.1, 0.12, 0.12, 0.11, 0.12, 0.1, 0.11, 0.1],
        60,
    )
    human = _collect(
        rng, 90, [h_symptoms, h_prescribed, h_gene, h_target_sounds], [0.3, 0.25, 0.25, 0.2], 60
    )
    return _stark_dataset(
        "stark-prime",
        "STaRK-Prime-like: diseases, drugs, genes/proteins, pathways, anatomy and GO terms",
        rng,
        synth,
        human,
        ids,
        entities,
        edges,
        None,
        {
            "targeted": ("target",),
            "targets": ("target",),
            "target": ("target",),
            "interactions": ("interacts with", "target"),
            "structures": ("interacts with", "target"),
            "interact": ("ppi",),
            "expressed": ("expression present",),
            "present": ("expression present",),
            "indicated": ("indication",),
            "prescribed": ("indication",),
            "associated": ("associated with",),
        },
    )


# ----------------------------------------------------------------------------------------------
# Spatial: Beijing, Shanghai (LIST-like) and Geo-Glue (Hangzhou)
# ----------------------------------------------------------------------------------------------
# (english, 大类, 小类, chain brands, independent-name suffixes, weight)
# fmt: off
_POI_CATS: Final = [
    # english, 大类, 小类, chain brands, independent-name suffixes, share of POIs
    ("restaurant", "餐饮服务", "中餐厅", [], _words("饭店 酒家 餐厅 小馆 食府"), 0.16),
    ("hotpot", "餐饮服务", "火锅店", _words("蜀香火锅 川味坊火锅 老码头火锅"), ["火锅"], 0.06),
    ("coffee", "餐饮服务", "咖啡厅", _words("云朵咖啡 拾光咖啡 木棉咖啡"), ["咖啡馆"], 0.06),
    ("fast food", "餐饮服务", "快餐厅", _words("麦乐基 华堡快餐 老乡米饭"), ["快餐"], 0.05),
    ("hotel", "住宿服务", "宾馆酒店", _words("悦途快捷酒店 锦华酒店 如意连锁酒店"),
     _words("宾馆 大酒店"), 0.07),
    ("supermarket", "购物服务", "超市", _words("华联超市 家乐惠超市 邻家优选便利店"),
     _words("超市 便利店"), 0.07),
    ("pharmacy", "医疗保健服务", "药房", _words("康德大药房 益寿堂药店"), ["药店"], 0.05),
    ("bank", "金融保险服务", "银行", _words("华信银行 长城商业银行 民泰银行"), [], 0.05),
    ("hospital", "医疗保健服务", "综合医院", [], _words("医院 中医医院 社区卫生服务中心"), 0.04),
    ("school", "科教文化服务", "学校", [], _words("小学 中学 幼儿园"), 0.05),
    ("residential", "商务住宅", "住宅区", [], _words("小区 花园 家园 公寓"), 0.12),
    ("office", "商务住宅", "楼宇", [], _words("大厦 中心 商务楼"), 0.07),
    ("mall", "购物服务", "商场", [], _words("购物中心 广场 百货"), 0.03),
    ("subway", "交通设施服务", "地铁站", [], ["站"], 0.04),
    ("parking", "交通设施服务", "停车场", [], ["停车场"], 0.04),
    ("gas station", "汽车服务", "加油站", _words("鑫源加油站 顺通加油站"), [], 0.04),
]
# fmt: on
_PREFIX: Final = _words(
    "福满 金鼎 华府 锦绣 阳光 东方 和平 宏达 盛世 天和 瑞景 新华 长安 富贵 龙泉"
    " 翠苑 明珠 紫荆 银河 星光 海棠 春晖 文华 嘉禾 鸿运 百合 玉兰 清风 金色 滨江"
    " 绿洲 君悦 中兴 永安 德胜 安华 凯旋 万福 丰收"
)
_ROAD_WORDS: Final = _words(
    "建国 长安 复兴 解放 人民 中山 和平 光明 朝阳 学院 文化 工人 青年 前进 新华"
    " 胜利 友谊 团结 幸福 东风 北京 南京 天山 昆仑 黄河 长江 珠江 松花 西湖 文三"
    " 莫干 延安 淮海"
)
_ROAD_SUFFIX: Final = ["路", "街", "大街", "东路", "西路", "北路", "南路"]


@dataclass
class _City:
    name: str
    districts: list[tuple[str, str, float, float, float]]  # en, zh, lat, lon, weight
    sd_km: float


# fmt: off
_BEIJING: Final = _City("beijing", [
    ("Dongcheng", "东城区", 39.928, 116.416, 0.14), ("Xicheng", "西城区", 39.912, 116.366, 0.16),
    ("Chaoyang", "朝阳区", 39.921, 116.486, 0.25), ("Haidian", "海淀区", 39.959, 116.298, 0.22),
    ("Fengtai", "丰台区", 39.858, 116.287, 0.15),
    ("Shijingshan", "石景山区", 39.906, 116.222, 0.08),
], 2.2)
_SHANGHAI: Final = _City("shanghai", [
    ("Huangpu", "黄浦区", 31.2317, 121.4846, 0.14), ("Xuhui", "徐汇区", 31.1885, 121.4365, 0.14),
    ("Changning", "长宁区", 31.2204, 121.4247, 0.1), ("Jing'an", "静安区", 31.229, 121.448, 0.12),
    ("Putuo", "普陀区", 31.2497, 121.3956, 0.1), ("Hongkou", "虹口区", 31.2646, 121.5052, 0.1),
    ("Yangpu", "杨浦区", 31.2596, 121.526, 0.1), ("Pudong", "浦东新区", 31.2215, 121.5447, 0.2),
], 2.0)
_HANGZHOU: Final = _City("hangzhou", [
    ("Shangcheng", "上城区", 30.242, 120.17, 0.13), ("Xiacheng", "下城区", 30.281, 120.18, 0.12),
    ("Xihu", "西湖区", 30.259, 120.13, 0.17), ("Gongshu", "拱墅区", 30.319, 120.142, 0.12),
    ("Binjiang", "滨江区", 30.208, 120.211, 0.1), ("Xiaoshan", "萧山区", 30.185, 120.264, 0.11),
    ("Yuhang", "余杭区", 30.419, 120.301, 0.1), ("Jianggan", "江干区", 30.266, 120.205, 0.09),
    ("Lin'an", "临安区", 30.233, 119.715, 0.03), ("Chun'an", "淳安县", 29.604, 119.042, 0.03),
], 2.5)
# fmt: on

_KM_LAT: Final = 1 / 110.574


def _offset(
    lat: np.ndarray, lon: np.ndarray, dist_m: np.ndarray, bearing: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Move points ``dist_m`` metres along ``bearing`` (radians) on a local flat approximation."""
    dlat = dist_m / 1000 * np.cos(bearing) * _KM_LAT
    dlon = dist_m / 1000 * np.sin(bearing) * _KM_LAT / np.cos(np.radians(lat))
    return lat + dlat, lon + dlon


@dataclass
class _Pois:
    name: list[str]
    cat: list[int]
    district: list[int]
    road: list[str]
    number: list[int]
    chain: list[str | None]
    lat: np.ndarray
    lon: np.ndarray


def _make_pois(rng: Rng, city: _City, n: int) -> _Pois:
    """``n`` POIs around the city's district centres (Gaussian, ``sd_km``), each on a road of its
    district; chains have several branches, independent names repeat now and then."""
    dw = np.array([d[4] for d in city.districts])
    cw = np.array([c[5] for c in _POI_CATS])
    roads = [
        [
            f"{w}{s}"
            for w, s in zip(
                _sample(rng, _ROAD_WORDS, 8),
                [_pick(rng, _ROAD_SUFFIX) for _ in range(8)],
                strict=True,
            )
        ]
        for _ in city.districts
    ]
    dist = rng.choice(len(dw), n, p=dw / dw.sum())
    cats = rng.choice(len(cw), n, p=cw / cw.sum())
    lat0 = np.array([city.districts[d][2] for d in dist])
    lon0 = np.array([city.districts[d][3] for d in dist])
    r = np.abs(rng.normal(0, city.sd_km * 1000, n)) + rng.exponential(300, n)
    lat, lon = _offset(lat0, lon0, r, rng.uniform(0, 2 * np.pi, n))
    names, roads_, nums, chains = [], [], [], []
    for i in range(n):
        chain_list, suffixes = _POI_CATS[cats[i]][3:5]
        road = _pick(rng, roads[dist[i]])
        if chain_list and (not suffixes or rng.random() < 0.6):
            ch = _pick(rng, chain_list)
            nm = f"{ch}({road}店)"
        elif _POI_CATS[cats[i]][0] == "subway":
            ch, nm = None, f"{road}站"
        else:
            ch, nm = None, f"{_pick(rng, _PREFIX)}{_pick(rng, suffixes)}"
        names.append(nm)
        roads_.append(road)
        nums.append(int(rng.integers(1, 400)))
        chains.append(ch)
    return _Pois(names, cats.tolist(), dist.tolist(), roads_, nums, chains, lat, lon)


def _amap_ids(rng: Rng, n: int) -> list[str]:
    """AMap-style POI ids (``B0`` + 8 of ``0-9A-Z``): strings that are not numbers."""
    alphabet = np.array(list("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
    out: dict[str, None] = {}
    while len(out) < n:
        out["B0" + "".join(alphabet[rng.integers(36, size=8)])] = None
    return list(out)


def _list_city(rng: Rng, city: _City, title: str) -> Dataset:
    n_poi, n_q = 5000, 400
    p = _make_pois(rng, city, n_poi)
    ids = _amap_ids(rng, n_poi)
    addr = [
        f"{city.districts[d][1]}{r}{k}号"
        for d, r, k in zip(p.district, p.road, p.number, strict=True)
    ]
    texts = [f"{nm} {_POI_CATS[c][2]} {a}" for nm, c, a in zip(p.name, p.cat, addr, strict=True)]
    entities = pd.DataFrame(
        {
            "doc_id": _str_col(ids),
            "name": _str_col(p.name),
            "text": _str_col(texts),
            "type": _str_col(["poi"] * n_poi),
            "lat": np.round(p.lat, 7),
            "lon": np.round(p.lon, 7),
            "category": _str_col([_POI_CATS[c][0] for c in p.cat]),
            "district": _str_col([city.districts[d][0] for d in p.district]),
            "address": _str_col(addr),
        }
    )
    chain_idx: dict[str, list[int]] = {}
    for i, ch in enumerate(p.chain):
        if ch:
            chain_idx.setdefault(ch, []).append(i)
    chains = list(chain_idx)
    cat_idx = [np.flatnonzero(np.array(p.cat) == c) for c in range(len(_POI_CATS))]

    def user_near(i: int, rng: Rng) -> tuple[float, float]:
        far = rng.random() < 0.1
        d = rng.uniform(8000, 20000) if far else rng.lognormal(np.log(900), 0.8)
        la, lo = _offset(
            np.array([p.lat[i]]),
            np.array([p.lon[i]]),
            np.array([d]),
            np.array([rng.uniform(0, 2 * np.pi)]),
        )
        return float(la[0]), float(lo[0])

    def dist_to(la: float, lo: float, idx: np.ndarray) -> np.ndarray:
        return np.hypot(
            (p.lat[idx] - la) / _KM_LAT, (p.lon[idx] - lo) * np.cos(np.radians(la)) / _KM_LAT
        )

    queries: list[_Query] = []
    locs: list[tuple[float, float]] = []
    seen: dict[str, None] = {}
    while len(queries) < n_q:
        kind = _pick(rng, ["name", "brand", "category", "address"], [0.35, 0.2, 0.25, 0.2])
        if kind == "name":
            g = int(rng.integers(n_poi))
            if p.chain[g]:
                continue
            text = (
                p.name[g]
                if rng.random() < 0.6
                else f"{city.districts[p.district[g]][1][:2]}{p.name[g]}"
            )
            gold, loc = [g], user_near(g, rng)
        elif kind == "address":
            g = int(rng.integers(n_poi))
            text = f"{p.road[g]}{p.number[g]}号"
            gold, loc = [g], user_near(g, rng)
        elif kind == "brand":
            ch = _pick(rng, chains)
            br = np.array(chain_idx[ch])
            g0 = int(_pick(rng, br))
            loc = user_near(g0, rng)
            near = br[np.argsort(dist_to(*loc, br), kind="stable")]
            gold = [int(x) for x in near[: 1 + int(rng.random() < 0.3)]]
            text = ch if rng.random() < 0.7 else f"{ch} {_POI_CATS[p.cat[g0]][2]}"
        else:
            c = int(_pick(rng, [i for i, x in enumerate(_POI_CATS) if x[0] not in ("subway",)]))
            pool = cat_idx[c]
            g0 = int(_pick(rng, pool))
            loc = user_near(g0, rng)
            near = pool[np.argsort(dist_to(*loc, pool), kind="stable")][:8]
            k = int(rng.choice([1, 2, 3, 4, 5], p=[0.55, 0.2, 0.12, 0.08, 0.05]))
            gold = sorted(int(x) for x in rng.choice(near, min(k, len(near)), replace=False))
            text = _pick(rng, [_POI_CATS[c][2], _POI_CATS[c][2][:2], f"附近的{_POI_CATS[c][2]}"])
        key = f"{text}|{gold}"
        if key in seen:
            continue
        seen[key] = None
        g = gold[0]
        queries.append(
            _Query(
                text,
                gold,
                kind,
                {"district": city.districts[p.district[g]][0], "category": _POI_CATS[p.cat[g]][0]},
            )
        )
        locs.append(loc)
    q_lat, q_lon = np.array([x[0] for x in locs]), np.array([x[1] for x in locs])
    qids = [f"{i:05d}" for i in range(n_q)]
    qdf, qrels = _tables(
        queries,
        ids,
        qids,
        {"split": ["test"] * n_q, "lat": np.round(q_lat, 7), "lon": np.round(q_lon, 7)},
    )
    # LIST's test qrels repeat a gold row for 1-2 % of queries: do the same, on purpose
    dup_q = np.sort(rng.choice(n_q, 6, replace=False))
    first_rows = qrels.drop_duplicates("query_id").set_index("query_id")
    dups = first_rows.loc[[qids[i] for i in dup_q]].reset_index()
    qrels = pd.concat([qrels, dups], ignore_index=True)
    order = np.lexsort(
        (
            np.arange(len(qrels)),
            qrels["query_id"].map({q: i for i, q in enumerate(qids)}).to_numpy(),
        )
    )
    qrels = qrels.iloc[order].reset_index(drop=True)
    return Dataset(
        city.name,
        "spatial",
        title,
        qdf,
        qrels,
        entities,
        fusion={"alpha": 0.4, "d_max_m": 20_000.0},
        metrics=SPATIAL_METRICS,
    )


# fmt: off
_GEO_CATS: Final = [
    # english, 大类, 中类, 小类 choices, name suffixes
    ("bank", "金融保险服务", "银行", _words("自动提款机 银行"), _words("24小时自助银行 支行")),
    ("office", "商务住宅", "楼宇", ["商务写字楼"], _words("大厦 中心 商务楼")),
    ("residential", "商务住宅", "住宅区", ["住宅小区"], _words("小区 花园 苑 公寓")),
    ("restaurant", "餐饮服务", "中餐厅", _words("中餐厅 火锅店"), _words("饭店 酒家 面馆")),
    ("hospital", "医疗保健服务", "医疗保健服务场所", _words("诊所 综合医院"),
     _words("医院 诊所 社区卫生服务中心")),
    ("school", "科教文化服务", "学校", _words("小学 中学 幼儿园"), _words("小学 中学 幼儿园")),
    ("training", "科教文化服务", "培训机构", ["培训机构"], _words("培训中心 琴行 学堂")),
    ("shop", "购物服务", "专卖店", _words("专营店 便利店"), _words("商行 便利店 专卖店")),
    ("parking", "交通设施服务", "停车场", _words("停车场出入口 停车场"), ["停车场"]),
    ("road", "地名地址信息", "交通地名", ["道路名"], []),
    ("gas station", "汽车服务", "加油站", ["加油站"], ["加油站"]),
    ("pharmacy", "医疗保健服务", "医药保健销售店", ["药房"], _words("大药房 药店")),
]
# fmt: on


def _geoglue(rng: Rng) -> Dataset:
    city = _HANGZHOU
    # stack sizes like GeoGLUE-clean (983 of 5,000 POIs stacked, largest 16), scaled to ~4,000
    stack_sizes = [2] * 290 + [3] * 36 + [4] * 8 + [5] * 2 + [6] * 2 + [7] * 2 + [8, 9, 12, 16]
    n_single = 4000 - sum(stack_sizes)
    site_sizes = np.array([1] * n_single + stack_sizes)[
        rng.permutation(n_single + len(stack_sizes))
    ]
    n_sites = len(site_sizes)
    dw = np.array([d[4] for d in city.districts])
    s_dist = rng.choice(len(dw), n_sites, p=dw / dw.sum())
    s_lat0 = np.array([city.districts[d][2] for d in s_dist])
    s_lon0 = np.array([city.districts[d][3] for d in s_dist])
    r = np.abs(rng.normal(0, city.sd_km * 1000, n_sites)) + rng.exponential(400, n_sites)
    t_lat, t_lon = _offset(s_lat0, s_lon0, r, rng.uniform(0, 2 * np.pi, n_sites))  # true sites
    shift = rng.normal(1000, 250, n_sites)
    sh_lat, sh_lon = _offset(t_lat, t_lon, shift, rng.uniform(0, 2 * np.pi, n_sites))
    grid = 1e-4
    s_lat = np.round(np.round(sh_lat / grid) * grid, 7)
    s_lon = np.round(np.round(sh_lon / grid) * grid, 7)
    roads = [
        [
            f"{w}{s}"
            for w, s in zip(
                _sample(rng, _ROAD_WORDS, 10),
                [_pick(rng, ["路", "街", "巷", "中路", "西路"]) for _ in range(10)],
                strict=True,
            )
        ]
        for _ in city.districts
    ]

    def one_poi(
        rng: Rng, d: int, road: str, num: int, cat: int | None = None
    ) -> tuple[str, str, int]:
        c = int(rng.integers(len(_GEO_CATS))) if cat is None else cat
        en, big, mid, smalls, sufs = _GEO_CATS[c]
        k = int(rng.integers(len(smalls)))
        small = smalls[k]
        if en == "school":  # 小学 / 中学 / 幼儿园: the name says which
            sufs = [sufs[k]]
        if en == "road":
            nm = road
        elif en == "bank":
            bank = _pick(rng, _words("华信银行 长城商业银行 民泰银行 江南农商银行"))
            nm = f"{bank}{_pick(rng, sufs)}({road}支行)"
        elif en == "gas station":
            nm = f"{_pick(rng, ['鑫源', '顺通', '恒泰'])}加油站({road})"
        else:
            nm = f"{_pick(rng, _PREFIX)}{_pick(rng, sufs)}"
            if rng.random() < 0.3:
                nm += (
                    f"({road}店)"
                    if en in ("restaurant", "shop", "training")
                    else f"{int(rng.integers(1, 9))}号楼"
                )
        dz = city.districts[d][1]
        text = f"{nm},{big},{mid},{small},{road}{num}号,{dz}"
        return nm, text, c

    p_name, p_text, p_cat, p_site, p_road, p_num, twin_of = [], [], [], [], [], [], []
    for s in range(n_sites):
        d = int(s_dist[s])
        road, num = _pick(rng, roads[d]), int(rng.integers(1, 600))
        size = int(site_sizes[s])
        if size == 16:  # a hospital complex: departments at one address, some recorded twice
            kinds = ["twin" if i in (3, 7, 11) else "new" for i in range(size)]
        elif size == 12:  # a gas station recorded twelve times
            kinds = ["twin"] * size
        elif size > 1:
            kinds = ["twin" if rng.random() < 0.6 else "new" for _ in range(size)]
        else:
            kinds = ["new"]
        kinds[0] = "new"
        cat = 10 if size == 12 else (4 if size == 16 else None)
        for kind in kinds:
            if kind == "twin":
                j = len(p_name) - 1
                p_name.append(p_name[j]), p_text.append(p_text[j]), p_cat.append(p_cat[j])
                twin_of.append(j if twin_of[j] < 0 else twin_of[j])
            else:
                nm, text, c = one_poi(rng, d, road, num, cat)
                p_name.append(nm), p_text.append(text), p_cat.append(c)
                twin_of.append(-1)
            p_site.append(s), p_road.append(road), p_num.append(num)
    n_poi = len(p_name)
    site = np.array(p_site)
    lat, lon = s_lat[site], s_lon[site]
    entities = pd.DataFrame(
        {
            "doc_id": _str_col([str(i) for i in range(n_poi)]),
            "name": _str_col(p_name),
            "text": _str_col(p_text),
            "type": _str_col(["poi"] * n_poi),
            "lat": lat,
            "lon": lon,
            "category": _str_col([_GEO_CATS[c][0] for c in p_cat]),
            "district": _str_col([city.districts[int(s_dist[s])][0] for s in p_site]),
        }
    )
    # queries: one gold each, located near the *true* site (so ~1 km from the shifted gold)
    n_q = 400
    queries: list[_Query] = []
    locs: list[tuple[float, float]] = []
    seen: dict[str, None] = {}
    landmarks = ["附近", "旁边", "对面", "往东", "西侧"]
    while len(queries) < n_q:
        g = int(rng.integers(n_poi))
        s = p_site[g]
        nm = p_name[g]
        same_road = [
            i
            for i in range(max(0, g - 60), min(n_poi, g + 60))
            if p_road[i] == p_road[g] and p_site[i] != s
        ]
        kind = _pick(rng, ["name", "landmark", "address", "route"], [0.3, 0.3, 0.25, 0.15])
        if kind == "name":
            text = nm if rng.random() < 0.6 else nm[: max(3, len(nm) - int(rng.integers(1, 4)))]
        elif kind == "landmark":
            lm = p_name[_pick(rng, same_road)] if same_road else p_road[g]
            text = f"{lm}{_pick(rng, landmarks)}{nm}"
        elif kind == "address":
            text = (
                f"{p_road[g]}{p_num[g]}号{nm}" if rng.random() < 0.5 else f"{p_road[g]}{p_num[g]}号"
            )
        else:
            text = f"我想去{nm}怎么走"
        if text in seen:
            continue
        seen[text] = None
        # far tail (~20 %): the user searches from elsewhere in the city
        far = rng.random() < 0.2
        d = rng.uniform(5000, 40000) if far else rng.lognormal(np.log(120), 0.6)
        la, lo = _offset(
            t_lat[[s]], t_lon[[s]], np.array([d]), np.array([rng.uniform(0, 2 * np.pi)])
        )
        queries.append(
            _Query(
                text,
                [g],
                kind,
                {"district": city.districts[int(s_dist[s])][0], "category": _GEO_CATS[p_cat[g]][0]},
            )
        )
        locs.append((float(la[0]), float(lo[0])))
    # ids are row numbers of a shuffled POI file (as GeoGLUE's), so stack members are scattered
    perm = rng.permutation(n_poi)  # new row -> generated POI
    new_row = np.empty(n_poi, dtype=np.int64)
    new_row[perm] = np.arange(n_poi)
    entities = entities.iloc[perm].reset_index(drop=True)
    entities["doc_id"] = _str_col([str(i) for i in range(n_poi)])
    qids = [f"test-{i}" for i in range(n_q)]
    qdf, qrels = _tables(
        queries,
        [str(r) for r in new_row],
        qids,
        {
            "split": ["test"] * n_q,
            "lat": np.round([x[0] for x in locs], 7),
            "lon": np.round([x[1] for x in locs], 7),
        },
    )
    return Dataset(
        "geo-glue",
        "spatial",
        "GeoGLUE-like (Hangzhou): coordinates shifted ~1 km and snapped, stacks and twin POIs, "
        "one gold per query",
        qdf,
        qrels,
        entities,
        fusion={"alpha": 0.5, "d_max_m": 30_000.0},
        metrics=GEOGLUE_METRICS,
    )


# ----------------------------------------------------------------------------------------------
# Runs, writing
# ----------------------------------------------------------------------------------------------
def _run_models(ds: Dataset) -> None:
    """Fit the dataset's retrievers and store their top-100 runs in ``ds.runs``."""
    q = ds.queries
    qids, texts = q["query_id"].tolist(), q["text"].tolist()
    ents = ds.entities
    if ds.candidate_types is not None:
        ents = ents[ents["type"].isin(list(ds.candidate_types))]
    doc_ids, doc_texts = ents["doc_id"].tolist(), ents["text"].tolist()
    ds.runs["bm25"] = BM25().fit(doc_ids, doc_texts).search(texts, TOP_K, qids)
    ds.runs["char-ngram-tfidf"] = (
        CharNgramTfidf().fit(doc_ids, doc_texts).search(texts, TOP_K, qids)
    )
    if ds.family == "stark":
        assert ds.edges is not None
        rel = RelationAwareRetriever(relation_triggers=ds.relation_triggers)
        rel.fit(ds.entities, ds.edges, ds.candidate_types)
        ds.runs[rel.name] = rel.search(texts, TOP_K, qids)
    else:
        fus = SpatialFusion(**ds.fusion).fit(
            doc_ids, doc_texts, ents["lat"].to_numpy(), ents["lon"].to_numpy()
        )
        ds.runs[fus.name] = fus.search(texts, q["lat"].to_numpy(), q["lon"].to_numpy(), TOP_K, qids)


def build_datasets(seed: int = 0) -> list[Dataset]:
    """Generate the six datasets (tables only, no runs) from ``seed``."""
    makers: list[Callable[[Rng], Dataset]] = [
        _amazon,
        _mag,
        _prime,
        lambda r: _list_city(
            r,
            _BEIJING,
            "LIST-like Beijing: POIs around the real districts, "
            "click-log style queries with 1-5 gold",
        ),
        lambda r: _list_city(
            r,
            _SHANGHAI,
            "LIST-like Shanghai: POIs around the real districts, "
            "click-log style queries with 1-5 gold",
        ),
        _geoglue,
    ]
    return [make(np.random.default_rng([seed, i])) for i, make in enumerate(makers)]


def _arrow(df: pd.DataFrame) -> pa.Table:
    cols, fields_ = [], []
    for name in df.columns:
        s = df[name]
        if pd.api.types.is_string_dtype(s.dtype) or s.dtype == object:
            arr = pa.array(s.to_numpy(dtype=object, na_value=None), type=pa.string())
        elif pd.api.types.is_float_dtype(s.dtype):
            arr = pa.array(s.to_numpy(dtype=np.float64), type=pa.float64())
        elif pd.api.types.is_integer_dtype(s.dtype):
            arr = pa.array([None if pd.isna(v) else int(v) for v in s], type=pa.int64())
        else:  # pragma: no cover - the generator makes no other dtype
            raise TypeError(f"column {name!r} has unsupported dtype {s.dtype}")
        cols.append(arr)
        fields_.append(pa.field(name, arr.type))
    return pa.Table.from_arrays(cols, schema=pa.schema(fields_))


def _write(df: pd.DataFrame, path: Path) -> None:
    """Write Parquet deterministically: fixed options, no pandas metadata, no index."""
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(
        _arrow(df),
        path,
        compression="zstd",
        compression_level=9,
        use_dictionary=True,
        write_statistics=True,
        version="2.6",
        data_page_version="1.0",
        store_schema=False,
    )


def _toml_str(text: str) -> str:
    """A TOML basic string (JSON string escapes are valid TOML)."""
    return json.dumps(text, ensure_ascii=False)


def _manifest(datasets: Sequence[Dataset], seed: int) -> str:
    """The ``bundle.toml`` text (keys in a fixed order, paths relative to the bundle)."""
    seed_arg = "" if seed == 0 else f" --seed {seed}"
    lines = [
        "# Demo bundle generated by analysis/demo.py; regenerate with:",
        f"#   python -m analysis demo --out data/demo{seed_arg}",
        f"name = {_toml_str('demo')}",
        "description = "
        + _toml_str(
            "Six synthetic datasets shaped like STaRK (Amazon, MAG, Prime) and LIST/GeoGLUE "
            "(Beijing, Shanghai, Geo-Glue), with BM25, char n-gram TF-IDF, KB-propagation and "
            f"distance-fusion runs (seed {seed})"
        ),
    ]
    for ds in datasets:
        files = {
            "queries": f"{ds.name}/queries.parquet",
            "qrels": f"{ds.name}/qrels.parquet",
            "entities": f"{ds.name}/entities.parquet",
        }
        if ds.edges is not None:
            files["edges"] = f"{ds.name}/edges.parquet"
        files["runs"] = f"{ds.name}/runs"
        lines += ["", f"[datasets.{ds.name}]", f"description = {_toml_str(ds.description)}"]
        lines.append(f"family = {_toml_str(ds.family)}")
        if ds.family == "spatial":
            lines.append(f"crs = {_toml_str('EPSG:4326')}")
        lines += [f"{key} = {_toml_str(path)}" for key, path in files.items()]
        lines.append("metrics = [" + ", ".join(_toml_str(m) for m in ds.metrics) + "]")
    return "\n".join(lines) + "\n"


def generate_bundle(out_dir: Path, seed: int = 0) -> None:
    """Generate the demo bundle into ``out_dir`` (replacing the datasets' folders there).

    Writes ``bundle.toml`` and, per dataset, ``queries.parquet``, ``qrels.parquet``,
    ``entities.parquet``, ``edges.parquet`` (STaRK only) and ``runs/<model>.parquet``. The output
    depends on ``seed`` only: the same seed gives byte-identical files.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    datasets = build_datasets(seed)
    for ds in datasets:
        _run_models(ds)
        folder = out_dir / ds.name
        if folder.exists():
            shutil.rmtree(folder)
        _write(ds.queries, folder / "queries.parquet")
        _write(ds.qrels, folder / "qrels.parquet")
        _write(ds.entities, folder / "entities.parquet")
        if ds.edges is not None:
            _write(ds.edges, folder / "edges.parquet")
        for model, run in ds.runs.items():
            _write(run, folder / "runs" / f"{model}.parquet")
    (out_dir / "bundle.toml").write_text(_manifest(datasets, seed), encoding="utf-8", newline="\n")
