"""Spatial datasets: Beijing and Shanghai (LIST-like) and Geo-Glue (Hangzhou, GeoGLUE-like)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import pandas as pd

from demo.common import (
    GEOGLUE_METRICS,
    SPATIAL_METRICS,
    Dataset,
    Query,
    Rng,
    pick,
    query_tables,
    sample,
    str_col,
    vocabulary,
)

V: Final = vocabulary("spatial")
_POI_CATS: Final = [
    (c["name"], c["major"], c["minor"], c["chains"], c["name_suffixes"], c["share"])
    for c in V.list_categories
]
_GEO_CATS: Final = [
    (c["name"], c["major"], c["middle"], c["minors"], c["name_suffixes"])
    for c in V.geoglue_categories
]


@dataclass
class _City:
    name: str
    districts: list[tuple[str, str, float, float, float]]  # en, zh, lat, lon, weight
    sd_km: float
    description: str


def _city(name: str) -> _City:
    c = V.cities[name]
    return _City(name, [tuple(d) for d in c["districts"]], c["sd_km"], c.get("description", ""))


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
                sample(rng, V.road_words, 8),
                [pick(rng, V.road_suffixes) for _ in range(8)],
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
        road = pick(rng, roads[dist[i]])
        if chain_list and (not suffixes or rng.random() < 0.6):
            ch = pick(rng, chain_list)
            nm = f"{ch}({road}店)"
        elif _POI_CATS[cats[i]][0] == "subway":
            ch, nm = None, f"{road}站"
        else:
            ch, nm = None, f"{pick(rng, V.name_prefixes)}{pick(rng, suffixes)}"
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


def list_city(rng: Rng, name: str) -> Dataset:
    """A LIST-like dataset of the city ``name`` (``beijing`` or ``shanghai``): 5,000 POIs, 400
    click-log style queries from user locations with 1-5 gold POIs each."""
    city = _city(name)
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
            "doc_id": str_col(ids),
            "name": str_col(p.name),
            "text": str_col(texts),
            "type": str_col(["poi"] * n_poi),
            "lat": np.round(p.lat, 7),
            "lon": np.round(p.lon, 7),
            "category": str_col([_POI_CATS[c][0] for c in p.cat]),
            "district": str_col([city.districts[d][0] for d in p.district]),
            "address": str_col(addr),
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

    queries: list[Query] = []
    locs: list[tuple[float, float]] = []
    seen: dict[str, None] = {}
    while len(queries) < n_q:
        kind = pick(rng, ["name", "brand", "category", "address"], [0.35, 0.2, 0.25, 0.2])
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
            ch = pick(rng, chains)
            br = np.array(chain_idx[ch])
            g0 = int(pick(rng, br))
            loc = user_near(g0, rng)
            near = br[np.argsort(dist_to(*loc, br), kind="stable")]
            gold = [int(x) for x in near[: 1 + int(rng.random() < 0.3)]]
            text = ch if rng.random() < 0.7 else f"{ch} {_POI_CATS[p.cat[g0]][2]}"
        else:
            c = int(pick(rng, [i for i, x in enumerate(_POI_CATS) if x[0] not in ("subway",)]))
            pool = cat_idx[c]
            g0 = int(pick(rng, pool))
            loc = user_near(g0, rng)
            near = pool[np.argsort(dist_to(*loc, pool), kind="stable")][:8]
            k = int(rng.choice([1, 2, 3, 4, 5], p=[0.55, 0.2, 0.12, 0.08, 0.05]))
            gold = sorted(int(x) for x in rng.choice(near, min(k, len(near)), replace=False))
            text = pick(rng, [_POI_CATS[c][2], _POI_CATS[c][2][:2], f"附近的{_POI_CATS[c][2]}"])
        key = f"{text}|{gold}"
        if key in seen:
            continue
        seen[key] = None
        g = gold[0]
        queries.append(
            Query(
                text,
                gold,
                kind,
                {"district": city.districts[p.district[g]][0], "category": _POI_CATS[p.cat[g]][0]},
            )
        )
        locs.append(loc)
    q_lat, q_lon = np.array([x[0] for x in locs]), np.array([x[1] for x in locs])
    qids = [f"{i:05d}" for i in range(n_q)]
    qdf, qrels = query_tables(
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
        city.description,
        qdf,
        qrels,
        entities,
        fusion={"alpha": 0.4, "d_max_m": 20_000.0},
        metrics=SPATIAL_METRICS,
    )


def _geo_poi(rng: Rng, district: str, road: str, num: int, cat: int | None) -> tuple[str, str, int]:
    """A new GeoGLUE-like POI on ``road`` number ``num`` of ``district``: its name, its text
    (name, category levels, address, district) and its category (``cat``, else drawn)."""
    c = int(rng.integers(len(_GEO_CATS))) if cat is None else cat
    en, big, mid, smalls, sufs = _GEO_CATS[c]
    k = int(rng.integers(len(smalls)))
    small = smalls[k]
    if en == "school":  # 小学 / 中学 / 幼儿园: the name says which
        sufs = [sufs[k]]
    if en == "road":
        nm = road
    elif en == "bank":
        bank = pick(rng, ["华信银行", "长城商业银行", "民泰银行", "江南农商银行"])
        nm = f"{bank}{pick(rng, sufs)}({road}支行)"
    elif en == "gas station":
        nm = f"{pick(rng, ['鑫源', '顺通', '恒泰'])}加油站({road})"
    else:
        nm = f"{pick(rng, V.name_prefixes)}{pick(rng, sufs)}"
        if rng.random() < 0.3:
            nm += (
                f"({road}店)"
                if en in ("restaurant", "shop", "training")
                else f"{int(rng.integers(1, 9))}号楼"
            )
    text = f"{nm},{big},{mid},{small},{road}{num}号,{district}"
    return nm, text, c


def geoglue(rng: Rng) -> Dataset:
    """GeoGLUE-like (Hangzhou): ~4,000 POIs in sites shifted ~1 km and snapped to a 1e-4 degree
    grid (coordinate stacks of up to 16, twin records), 400 queries with one gold each, located
    near the true site (a ~20 % far tail searches from elsewhere in the city)."""
    city = _city("hangzhou")
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
                sample(rng, V.road_words, 10),
                [pick(rng, ["路", "街", "巷", "中路", "西路"]) for _ in range(10)],
                strict=True,
            )
        ]
        for _ in city.districts
    ]

    p_name, p_text, p_cat, p_site, p_road, p_num, twin_of = [], [], [], [], [], [], []
    for s in range(n_sites):
        d = int(s_dist[s])
        road, num = pick(rng, roads[d]), int(rng.integers(1, 600))
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
                nm, text, c = _geo_poi(rng, city.districts[d][1], road, num, cat)
                p_name.append(nm), p_text.append(text), p_cat.append(c)
                twin_of.append(-1)
            p_site.append(s), p_road.append(road), p_num.append(num)
    n_poi = len(p_name)
    site = np.array(p_site)
    lat, lon = s_lat[site], s_lon[site]
    entities = pd.DataFrame(
        {
            "doc_id": str_col([str(i) for i in range(n_poi)]),
            "name": str_col(p_name),
            "text": str_col(p_text),
            "type": str_col(["poi"] * n_poi),
            "lat": lat,
            "lon": lon,
            "category": str_col([_GEO_CATS[c][0] for c in p_cat]),
            "district": str_col([city.districts[int(s_dist[s])][0] for s in p_site]),
        }
    )
    # queries: one gold each, located near the *true* site (so ~1 km from the shifted gold)
    n_q = 400
    queries: list[Query] = []
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
        kind = pick(rng, ["name", "landmark", "address", "route"], [0.3, 0.3, 0.25, 0.15])
        if kind == "name":
            text = nm if rng.random() < 0.6 else nm[: max(3, len(nm) - int(rng.integers(1, 4)))]
        elif kind == "landmark":
            lm = p_name[pick(rng, same_road)] if same_road else p_road[g]
            text = f"{lm}{pick(rng, landmarks)}{nm}"
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
            Query(
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
    entities["doc_id"] = str_col([str(i) for i in range(n_poi)])
    qids = [f"test-{i}" for i in range(n_q)]
    qdf, qrels = query_tables(
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
