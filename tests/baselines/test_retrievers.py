"""Tests for analysis.baselines.retrievers: formulas against brute-force references, output format,
ties."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from analysis.baselines.retrievers import (
    BM25,
    ENGLISH_STOPWORDS,
    CharNgramTfidf,
    RelationAwareRetriever,
    SpatialFusion,
    char_ngrams,
    haversine_m,
    tokenize,
    words,
)

RUN_COLUMNS = ["query_id", "doc_id", "score", "rank"]


def _check_run(run: pd.DataFrame, k: int) -> None:
    """Every search result obeys the run format: types, 1-based ranks, sorted scores."""
    assert list(run.columns) == RUN_COLUMNS
    assert pd.api.types.is_string_dtype(run["query_id"].dtype)
    assert pd.api.types.is_string_dtype(run["doc_id"].dtype)
    assert run["score"].dtype == np.float64
    assert run["rank"].dtype == np.int64
    for _, g in run.groupby("query_id", sort=False):
        assert g["rank"].tolist() == list(range(1, len(g) + 1))
        assert len(g) <= k
        assert (np.diff(g["score"].to_numpy()) <= 0).all()
        assert g["doc_id"].is_unique


# ---------------------------------------------------------------------------------------------
# tokenization
# ---------------------------------------------------------------------------------------------
def test_words_split_cjk_runs_and_latin_words() -> None:
    assert words("中国银行ATM (24h) Café") == ["中国银行", "atm", "24h", "café"]
    assert words("ＡＴＭ　杭州") == ["atm", "杭州"]  # NFKC: full-width letters and space


def test_tokenize_cjk_gives_unigrams_and_bigrams() -> None:
    assert tokenize("杭州西湖 Hotel") == ["杭", "州", "西", "湖", "杭州", "州西", "西湖", "hotel"]
    assert tokenize("杭") == ["杭"]


def test_tokenize_drops_only_given_stopwords() -> None:
    assert tokenize("The tent of the year") == ["the", "tent", "of", "the", "year"]
    assert tokenize("The tent of the year", ENGLISH_STOPWORDS) == ["tent", "year"]


def test_char_ngrams_pad_latin_words_not_cjk() -> None:
    assert char_ngrams("tent", (3, 3)) == [" te", "ten", "ent", "nt "]
    assert char_ngrams("ab", (4, 5)) == [" ab "]
    assert char_ngrams("西湖区", cjk_ngram_range=(1, 2)) == ["西", "湖", "区", "西湖", "湖区"]


# ---------------------------------------------------------------------------------------------
# BM25
# ---------------------------------------------------------------------------------------------
def _bm25_reference(docs: list[str], query: str, k1: float, b: float) -> list[float]:
    """BM25 computed term by term with plain Python (Lucene idf)."""
    toks = [tokenize(d, ENGLISH_STOPWORDS) for d in docs]
    n = len(docs)
    avgdl = sum(len(t) for t in toks) / n
    df = Counter(t for ts in toks for t in set(ts))
    out = []
    for ts in toks:
        tf = Counter(ts)
        s = 0.0
        for term, qtf in Counter(tokenize(query, ENGLISH_STOPWORDS)).items():
            if term not in tf:
                continue
            idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
            norm = tf[term] + k1 * (1 - b + b * len(ts) / avgdl)
            s += qtf * idf * tf[term] * (k1 + 1) / norm
        out.append(s)
    return out


@pytest.fixture(scope="module")
def random_corpus() -> tuple[list[str], list[str]]:
    rng = np.random.default_rng(7)
    vocab = [f"w{i}" for i in range(40)] + ["the", "of", "杭州", "西湖"]
    docs = [" ".join(rng.choice(vocab, int(rng.integers(3, 30)))) for _ in range(60)]
    queries = [" ".join(rng.choice(vocab, int(rng.integers(1, 6)))) for _ in range(25)]
    return docs, queries


@pytest.mark.parametrize(("k1", "b"), [(0.9, 0.4), (1.2, 0.75), (2.0, 0.0), (0.0, 1.0)])
def test_bm25_scores_match_reference(
    random_corpus: tuple[list[str], list[str]], k1: float, b: float
) -> None:
    docs, queries = random_corpus
    bm25 = BM25(k1=k1, b=b).fit([f"d{i}" for i in range(len(docs))], docs)
    got = bm25.score_block(queries)
    want = np.array([_bm25_reference(docs, q, k1, b) for q in queries])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_bm25_search_format_ranking_and_ids(random_corpus: tuple[list[str], list[str]]) -> None:
    docs, queries = random_corpus
    ids = [f"{i:03d}" for i in range(len(docs))]  # "007" must stay "007"
    bm25 = BM25().fit(ids, docs)
    qids = [f"q{i:02d}" for i in range(len(queries))]
    run = bm25.search(queries, k=10, query_ids=qids)
    _check_run(run, 10)
    assert run["query_id"].unique().tolist() == [q for q in qids if q in set(run["query_id"])]
    assert set(run["doc_id"]) <= set(ids)
    assert (run["score"] > 0).all()
    # the top document of each query is the reference arg-max (rounded to 6 decimals)
    want = np.round([_bm25_reference(docs, q, 0.9, 0.4) for q in queries], 6)
    top = run[run["rank"] == 1].set_index("query_id")["score"]
    for qi, q in enumerate(qids):
        if want[qi].max() > 0:
            assert top[q] == pytest.approx(want[qi].max(), abs=1e-9)
            assert (run["query_id"] == q).sum() == min(10, (want[qi] > 0).sum())
        else:  # only stop words: nothing matches, nothing is returned
            assert q not in set(run["query_id"])
    assert (want.max(axis=1) == 0).any()  # the corpus does exercise that case


def test_bm25_series_index_gives_query_ids() -> None:
    bm25 = BM25().fit(["a", "b"], ["red tent", "blue tent"])
    run = bm25.search(pd.Series(["red", "tent"], index=["007", "8"]))
    assert run["query_id"].tolist() == ["007", "8", "8"]
    assert run["doc_id"].tolist()[0] == "a"


def test_bm25_query_without_matches_returns_nothing() -> None:
    bm25 = BM25().fit(["a", "b"], ["red tent", "blue tent"])
    run = bm25.search(["kayak"], query_ids=["q"])
    assert run.empty
    assert list(run.columns) == RUN_COLUMNS


def test_ties_are_kept_and_broken_by_corpus_order_at_the_cut() -> None:
    # ten identical documents: ten-way tie; k=3 must take the first three fitted, every time
    ids = [f"p{i}" for i in range(10)][::-1]
    bm25 = BM25().fit(ids, ["coffee shop"] * 10)
    run = bm25.search(["coffee"], k=3, query_ids=["q"])
    assert run["doc_id"].tolist() == ids[:3]
    assert (run["score"] == run["score"].iloc[0]).all()  # a genuine tie, visible downstream


def test_bm25_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="k1"):
        BM25(k1=-1)
    for k1 in (float("nan"), float("inf")):  # every score would be NaN: an empty run
        with pytest.raises(ValueError, match="finite k1"):
            BM25(k1=k1)
    with pytest.raises(ValueError, match="3 document ids for 2 texts"):
        BM25().fit(["a", "b", "c"], ["x", "y"])
    with pytest.raises(ValueError, match="query ids"):
        BM25().fit(["a"], ["x"]).search(["x", "y"], query_ids=["1"])


# ---------------------------------------------------------------------------------------------
# character n-gram TF-IDF
# ---------------------------------------------------------------------------------------------
def _tfidf_reference(docs: list[str], query: str) -> list[float]:
    def grams(text: str) -> Counter[str]:
        return Counter(g for w in words(text) for g in char_ngrams(w))

    dgrams = [grams(d) for d in docs]
    n = len(docs)
    df = Counter(g for c in dgrams for g in c)
    idf = {g: math.log((1 + n) / (1 + df[g])) + 1 for g in df}

    def vec(c: Counter[str]) -> dict[str, float]:
        v = {g: (1 + math.log(x)) * idf[g] for g, x in c.items() if g in idf}
        norm = math.sqrt(sum(x * x for x in v.values())) or 1.0
        return {g: x / norm for g, x in v.items()}

    q = vec(grams(query))
    return [sum(q.get(g, 0.0) * x for g, x in vec(c).items()) for c in dgrams]


def test_tfidf_scores_match_reference() -> None:
    docs = [
        "Trailcrest hiking backpack with padded hip belt",
        "Summitline carabiner, locking gate",
        "杭州西湖区文三路 咖啡",
        "hiking boots",
        "",
    ]
    queries = ["hiking backpacks", "caribiner lock", "西湖 咖啡馆", "zzz"]
    model = CharNgramTfidf().fit([str(i) for i in range(len(docs))], docs)
    got = model.score_block(queries)
    want = np.array([_tfidf_reference(docs, q) for q in queries])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert (got >= 0).all()
    assert (got <= 1 + 1e-12).all()


def test_tfidf_survives_typos_where_bm25_finds_nothing() -> None:
    ids = ["1", "2", "3"]
    docs = ["aluminum carabiner with locking gate", "trekking poles", "sleeping bag"]
    q = ["caribiner"]
    assert BM25().fit(ids, docs).search(q, query_ids=["q"]).empty
    run = CharNgramTfidf().fit(ids, docs).search(q, query_ids=["q"])
    _check_run(run, 100)
    assert run["doc_id"].iloc[0] == "1"


def test_tfidf_identical_text_scores_one() -> None:
    model = CharNgramTfidf().fit(["a", "b"], ["blue tent", "red kayak paddle"])
    run = model.search(["red kayak paddle"], query_ids=["q"])
    assert run["doc_id"].iloc[0] == "b"
    assert run["score"].iloc[0] == pytest.approx(1.0)


# ---------------------------------------------------------------------------------------------
# relation-aware retrieval
# ---------------------------------------------------------------------------------------------
@pytest.fixture
def tiny_kb() -> tuple[pd.DataFrame, pd.DataFrame]:
    ents = pd.DataFrame(
        {
            "doc_id": ["p1", "p2", "p3", "p4", "p5", "b1", "b2"],
            "name": [
                "Trailcrest Summit Tent",
                "Trailcrest Ridge Headlamp",
                "Stormline Nomad Headlamp",
                "Stormline Apex Tent",
                "Stormline Echo Headlamp",
                "Trailcrest",
                "Stormline",
            ],
            "text": [
                "tent with rainfly",
                "headlamp with red light mode",
                "headlamp with red light mode",
                "tent with two doors",
                "headlamp, rechargeable",
                "brand Trailcrest",
                "brand Stormline",
            ],
            "type": ["product"] * 5 + ["brand"] * 2,
        }
    )
    edges = pd.DataFrame(
        {
            "src_id": ["p1", "p2", "p3", "p4", "p5", "p1"],
            "relation": ["has_brand"] * 5 + ["also_bought"],
            "dst_id": ["b1", "b1", "b2", "b2", "b2", "p5"],
        }
    )
    return ents, edges


def test_relation_aware_follows_brand_edges(tiny_kb: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    ents, edges = tiny_kb
    model = RelationAwareRetriever(min_name_idf=0.5).fit(ents, edges, ["product"])
    # the headlamp texts do not name the brand: only the KB edge tells p2 from p3
    run = model.search(["a headlamp from Trailcrest"], query_ids=["q"])
    _check_run(run, 100)
    assert run["doc_id"].iloc[0] == "p2"
    assert not set(run["doc_id"]) & {"b1", "b2"}  # only candidate types are returned
    bm25 = BM25().fit(ents["doc_id"][:5].tolist(), ents["text"][:5].tolist())
    plain = bm25.search(["a headlamp from Trailcrest"], query_ids=["q"])
    by_doc = plain.set_index("doc_id")["score"]
    assert by_doc["p2"] == by_doc["p3"]  # BM25 cannot separate p2 from p3
    assert plain["doc_id"].iloc[0] != "p2"


def test_relation_aware_triggers_restrict_relations_and_seeds_are_excluded(
    tiny_kb: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    ents, edges = tiny_kb
    triggers = {"bought": ["also_bought"]}
    model = RelationAwareRetriever(min_name_idf=0.5, relation_triggers=triggers)
    model.fit(ents, edges, ["product"])
    assert model.active_relations("what is bought with it") == ("also_bought",)
    assert model.active_relations("anything") == ("also_bought", "has_brand")
    run = model.search(["what headlamp is bought with the Trailcrest Summit Tent"], query_ids=["q"])
    assert run["doc_id"].iloc[0] == "p5"  # the also_bought neighbour
    assert "p1" not in set(run["doc_id"])  # the named product is context, not an answer


def test_relation_aware_without_seeds_ranks_like_bm25(
    tiny_kb: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    ents, edges = tiny_kb
    model = RelationAwareRetriever(min_name_idf=0.5).fit(ents, edges, ["product"])
    q = ["rechargeable headlamp with red light"]
    run = model.search(q, query_ids=["q"])
    bm25 = BM25().fit(ents["doc_id"][:5].tolist(), ents["text"][:5].tolist())
    plain = bm25.search(q, query_ids=["q"])
    assert run["doc_id"].tolist() == plain["doc_id"].tolist()
    np.testing.assert_allclose(
        run["score"], np.round(plain["score"] / plain["score"].max(), 6), atol=1e-6
    )


def test_relation_aware_rejects_unknown_edge_ids(
    tiny_kb: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    ents, edges = tiny_kb
    bad = pd.concat([edges, pd.DataFrame({"src_id": ["p1"], "relation": ["x"], "dst_id": ["zz"]})])
    with pytest.raises(ValueError, match="not in the entities"):
        RelationAwareRetriever().fit(ents, bad)


# ---------------------------------------------------------------------------------------------
# spatial fusion
# ---------------------------------------------------------------------------------------------
def test_haversine_known_distances() -> None:
    # one degree of latitude on the mean sphere; Beijing - Shanghai ~1,067 km
    assert haversine_m(0, 0, 1, 0) == pytest.approx(2 * math.pi * 6_371_008.8 / 360)
    assert haversine_m(39.9042, 116.4074, 31.2304, 121.4737) == pytest.approx(1.067e6, rel=2e-3)
    m = haversine_m(np.array([[30.0], [31.0]]), np.array([[120.0], [120.0]]), [30.0, 31.0], 120.0)
    assert m.shape == (2, 2)
    assert m[0, 0] == 0
    assert m[0, 1] == pytest.approx(m[1, 0])


def test_spatial_fusion_formula() -> None:
    ids = ["a", "b", "c"]
    texts = ["咖啡", "咖啡", "西湖 饭店"]
    lat = np.array([30.25, 30.26, 30.25])
    lon = np.array([120.15, 120.15, 120.16])
    model = SpatialFusion(alpha=0.3, d_max_m=5000).fit(ids, texts, lat, lon)
    q_lat, q_lon = np.array([30.2505]), np.array([120.15])
    got = model.score_block(["咖啡"], q_lat, q_lon)[0]
    s = BM25().fit(ids, texts).score_block(["咖啡"])[0]
    d = haversine_m(q_lat[0], q_lon[0], lat, lon)
    want = 0.7 * (1 - np.minimum(d, 5000) / 5000) + 0.3 * (s - s.min()) / (s.max() - s.min())
    np.testing.assert_allclose(got, want, rtol=1e-12)
    run = model.search(["咖啡"], q_lat, q_lon, query_ids=["q"])
    _check_run(run, 100)
    assert run["doc_id"].tolist() == ["a", "b", "c"]  # same text: the nearer one first
    assert len(run) == 3  # every POI gets a score


def test_spatial_fusion_extremes_and_per_query_dmax() -> None:
    ids = ["near", "far"]
    texts = ["饭店", "咖啡"]
    lat, lon = np.array([30.0, 30.5]), np.array([120.0, 120.0])
    q = (["咖啡"], np.array([30.0]), np.array([120.0]))
    text_only = SpatialFusion(alpha=1.0).fit(ids, texts, lat, lon).search(*q, query_ids=["q"])
    assert text_only["doc_id"].tolist() == ["far", "near"]
    dist_only = SpatialFusion(alpha=0.0).fit(ids, texts, lat, lon).search(*q, query_ids=["q"])
    assert dist_only["doc_id"].tolist() == ["near", "far"]
    # d_max = the query's largest distance: the farthest POI gets 0 from the distance part
    assert dist_only["score"].tolist() == [1.0, 0.0]


def test_spatial_fusion_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="alpha"):
        SpatialFusion(alpha=1.5)
    with pytest.raises(ValueError, match="d_max_m"):
        SpatialFusion(d_max_m=0)
    model = SpatialFusion()
    with pytest.raises(ValueError, match="one latitude"):
        model.fit(["a", "b"], ["x", "y"], [30.0], [120.0, 121.0])
    model.fit(["a"], ["x"], [30.0], [120.0])
    with pytest.raises(ValueError, match="finite"):
        model.search(["x"], [float("nan")], [120.0])


def test_k_must_be_a_positive_integer() -> None:
    bm25 = BM25().fit(["a"], ["x"])
    with pytest.raises(ValueError, match="k must be a positive integer"):
        bm25.search(["x"], 0)
    with pytest.raises(ValueError, match="k must be a positive integer"):
        bm25.search(["x"], ["q"])  # type: ignore[arg-type]


@pytest.mark.parametrize("model", [BM25, CharNgramTfidf])
def test_duplicated_document_ids_are_refused(model: type) -> None:
    # a repeated id would rank the same document twice for one query
    with pytest.raises(ValueError, match="document id 'a' is given twice"):
        model().fit(["a", "b", "a"], ["red tent", "blue tent", "red kayak"])
    with pytest.raises(ValueError, match="given twice"):
        SpatialFusion().fit(["a", "a"], ["x", "y"], [30.0, 30.1], [120.0, 120.1])


@pytest.mark.parametrize("model", [BM25, CharNgramTfidf])
def test_missing_text_is_named_not_a_type_error(model: type) -> None:
    # pandas reads an empty CSV cell as NaN: one message naming the document or query
    with pytest.raises(ValueError, match="the text of document 'b' is nan, not a string"):
        model().fit(["a", "b"], ["red tent", float("nan")])
    fitted = model().fit(["a", "b"], ["red tent", "blue tent"])
    with pytest.raises(ValueError, match="the text of query 'q2' is None, not a string"):
        fitted.search(["tent", None], query_ids=["q1", "q2"])
    fusion = SpatialFusion().fit(["a"], ["x"], [30.0], [120.0])
    with pytest.raises(ValueError, match="the text of query '0' is 7"):
        fusion.search([7], [30.0], [120.0])


def test_one_string_is_not_read_as_a_text_per_character() -> None:
    bm25 = BM25().fit(["a", "b"], ["red tent", "blue tent"])
    with pytest.raises(ValueError, match="the query texts are one string 'red tent'"):
        bm25.search("red tent")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="the query ids are one string"):
        bm25.search(["x"], query_ids="q")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="the document ids are one string"):
        CharNgramTfidf().fit("ab", ["x", "y"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="the document texts are one string"):
        BM25().fit(["a", "b", "c"], "xyz")  # type: ignore[arg-type]
    fusion = SpatialFusion().fit(["a"], ["x"], [30.0], [120.0])
    with pytest.raises(ValueError, match="the query texts are one string"):
        fusion.search("x", [30.0], [120.0])  # type: ignore[arg-type]


def test_spatial_fusion_on_no_poi_gives_an_empty_run() -> None:
    # as BM25 and the n-gram model on an empty corpus: no POI, nothing to rank
    model = SpatialFusion().fit([], [], [], [])
    run = model.search(["咖啡"], [30.0], [120.0], query_ids=["q"])
    assert run.empty
    assert list(run.columns) == RUN_COLUMNS


def test_spatial_fusion_refuses_coordinates_out_of_range() -> None:
    # swapped columns (lon given as lat) or projected metres: the distances would be wrong
    with pytest.raises(ValueError, match=r"POI latitude 120.0 \(position 1\) is out of range"):
        SpatialFusion().fit(["a", "b"], ["x", "y"], [30.0, 120.0], [120.0, 30.0])
    model = SpatialFusion().fit(["a"], ["x"], [30.0], [120.0])
    with pytest.raises(ValueError, match=r"query longitude 519099.5 \(position 0\) is out"):
        model.search(["x"], [30.0], [519099.5])
    with pytest.raises(ValueError, match="finite"):
        model.search(["x"], [30.0], [float("inf")])


def test_every_cjk_ideograph_block_is_cut_into_unigrams_and_bigrams() -> None:
    # Extension C (U+2B740) and the ideographic zero stay inside their CJK run
    assert tokenize("中\U0002b740国") == ["中", "\U0002b740", "国", "中\U0002b740", "\U0002b740国"]
    assert words("二〇二三年") == ["二〇二三年"]
    assert "〇二" in tokenize("二〇二三年")
    assert tokenize("\U00030000\U00030001") == ["\U00030000", "\U00030001", "\U00030000\U00030001"]


def test_relation_aware_chunks_queries_by_the_entity_count(
    tiny_kb: tuple[pd.DataFrame, pd.DataFrame], monkeypatch: pytest.MonkeyPatch
) -> None:
    # score_block makes queries x entities arrays: chunks sized by the few candidates would
    # hold far more cells than intended (memory grows with entities / candidates)
    import analysis.baselines.ranking as ranking

    widths: list[int] = []
    chunks = ranking._chunks

    def spy(n: int, n_cols: int, cells: int = 4_000_000) -> object:
        widths.append(n_cols)
        return chunks(n, n_cols, cells)

    monkeypatch.setattr(ranking, "_chunks", spy)
    ents, edges = tiny_kb
    model = RelationAwareRetriever(min_name_idf=0.5).fit(ents, edges, ["brand"])
    model.search(["Trailcrest"], query_ids=["q"])
    assert widths == [len(ents)]


def test_duplicated_query_ids_are_refused() -> None:
    # two rankings under one id would read as one query ranking every document twice
    bm25 = BM25().fit(["a", "b"], ["red tent", "blue tent"])
    with pytest.raises(ValueError, match="query id 'q' is given twice"):
        bm25.search(pd.Series(["tent", "red"], index=["q", "q"]))
    with pytest.raises(ValueError, match="query id '1' is given twice"):
        bm25.search(["tent", "red"], query_ids=[1, "1"])
    fusion = SpatialFusion().fit(["a"], ["x"], [30.0], [120.0])
    with pytest.raises(ValueError, match="query id 'q' is given twice"):
        fusion.search(["x", "y"], [30.0, 30.0], [120.0, 120.0], query_ids=["q", "q"])


@pytest.mark.parametrize(
    "ranges", [{"ngram_range": (0, 3)}, {"ngram_range": (5, 3)}, {"cjk_ngram_range": (-1, 2)}]
)
def test_tfidf_refuses_ngram_ranges_below_one_or_reversed(ranges: dict) -> None:
    # n = 0 gave every text an empty n-gram in common: unrelated texts scored above 0
    with pytest.raises(ValueError, match="must be integers 1 <= lo <= hi"):
        CharNgramTfidf(**ranges)


def test_relation_aware_refuses_negative_max_seeds_and_nan_gamma() -> None:
    # max_seeds=-1 silently dropped the last of the best seeds; gamma=NaN made graph scores NaN
    with pytest.raises(ValueError, match="max_seeds must be an integer >= 0"):
        RelationAwareRetriever(max_seeds=-1)
    with pytest.raises(ValueError, match="gamma must be a finite number >= 0"):
        RelationAwareRetriever(gamma=float("nan"))


def test_combining_marks_stay_in_their_word() -> None:
    # Devanagari vowel signs and the virama are marks, not letters: the word was cut into its
    # consonants, so any text holding those letters matched
    assert words("हिन्दी भाषा") == ["हिन्दी", "भाषा"]
    assert words("İstanbul") == ["i\u0307stanbul"]  # lower-cased İ keeps its dot as a mark
    assert words("x\u0301y") == ["x\u0301y"]
    bm25 = BM25().fit(["a", "b"], ["हिन्दी भाषा", "हनद"])
    assert bm25.search(["हिन्दी"], query_ids=["q"])["doc_id"].tolist() == ["a"]
