"""Relation-aware retrieval over a knowledge base (STaRK): BM25 fused with a walk along edges."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp

from analysis.baselines.ranking import FloatArray, TextRetriever, max_normalize
from analysis.baselines.text import BM25
from analysis.baselines.tokens import normalize, words

__all__ = ["RelationAwareRetriever"]


class RelationAwareRetriever(TextRetriever):
    """BM25 on candidate texts fused with a walk along knowledge-base edges from linked entities.

    1. **Entity linking.** Every KB entity's name is a bag of terms. The *coverage* of entity
       ``e`` by query ``q`` is the idf mass of the name's terms that occur in the query::

           cov(q, e) = sum_{t in name(e), t in q} idf(t) / sum_{t in name(e)} idf(t)

       (idf as in :class:`BM25`, over names). Entities with ``cov >= min_coverage`` whose name
       carries at least ``min_name_idf`` are seeds; the ``max_seeds`` best (coverage, then idf
       mass) are kept, weighted ``s(e) = cov * idf mass``, normalized to sum 1.
    2. **Relations.** A query activates the relations its terms trigger (``relation_triggers``:
       term -> relations, e.g. ``"referenced" -> ["cites"]``); a query that triggers none uses
       every relation. Edges are walked in both directions.
    3. **Walk.** With ``P`` the row-normalized adjacency of the active relations (a random-walk
       step), ``h1 = s P`` and ``h2 = h1 P``; the graph score is ``g = h1 + gamma * h2``.
    4. **Fusion** over candidate documents (entities of ``candidate_types``), seeds excluded (an
       entity the query names is context, not the answer)::

           score(q, d) = (1 - lam) * bm25(q, d) / max_d' bm25(q, d') + lam * g(d) / max_d' g(d')

    A query without seeds is ranked by BM25 alone (same order as :class:`BM25`). Documents with a
    score of 0 are not returned. Documents reached by the walk but without text overlap share the
    graph score of their neighbours, so this retriever produces genuine ties.
    """

    name = "bm25-kb-propagation"

    def __init__(
        self,
        lam: float = 0.5,
        gamma: float = 0.5,
        min_coverage: float = 0.8,
        min_name_idf: float = 4.0,
        max_seeds: int = 5,
        relation_triggers: Mapping[str, Sequence[str]] | None = None,
        k1: float = 0.9,
        b: float = 0.4,
    ) -> None:
        if not 0 <= lam <= 1:
            raise ValueError(f"lam must be in [0, 1], got {lam}")
        if not (math.isfinite(gamma) and gamma >= 0):
            raise ValueError(f"gamma must be a finite number >= 0, got {gamma}")
        if (
            isinstance(max_seeds, bool)
            or not isinstance(max_seeds, int | np.integer)
            or max_seeds < 0
        ):
            # a negative count would cut seeds from the end of the best ones (a slice)
            raise ValueError(f"max_seeds must be an integer >= 0, got {max_seeds!r}")
        self.lam, self.gamma = lam, gamma
        self.min_coverage, self.min_name_idf, self.max_seeds = min_coverage, min_name_idf, max_seeds
        self.relation_triggers = {
            normalize(t): tuple(rs) for t, rs in (relation_triggers or {}).items()
        }
        self.k1, self.b = k1, b

    def fit(
        self,
        entities: pd.DataFrame,
        edges: pd.DataFrame,
        candidate_types: Sequence[str] | None = None,
    ) -> RelationAwareRetriever:
        """Index ``entities`` (``doc_id, name, text, type``) and ``edges`` (``src_id, relation,
        dst_id``). Candidates are the entities whose ``type`` is in ``candidate_types`` (all when
        None). Edges naming unknown entities are an error."""
        ids = entities["doc_id"].astype(str).tolist()
        pos = pd.Series(np.arange(len(ids)), index=pd.Index(ids, dtype="str"))
        if not pos.index.is_unique:
            raise ValueError("entity doc_id values must be unique")
        types = entities["type"].astype(str).to_numpy()
        cand = (
            np.ones(len(ids), bool) if candidate_types is None else np.isin(types, candidate_types)
        )
        self.cand_idx = np.flatnonzero(cand)
        self.doc_ids = [ids[i] for i in self.cand_idx]
        self.text = BM25(self.k1, self.b).fit(
            self.doc_ids, entities["text"].to_numpy()[cand].tolist()
        )

        # entity linker over names: binary query terms against idf-weighted name terms
        names = BM25(self.k1, self.b).fit(ids, entities["name"].astype(str).tolist())
        self.names = names
        name_terms = names.vocab.counts(names._tokens(entities["name"].astype(str).tolist()))
        name_terms.data[:] = 1.0
        self._name_idf_t = name_terms.multiply(names.idf[None, :]).T.tocsr()  # terms x entities
        self._name_mass = np.asarray(name_terms @ names.idf).ravel()

        src = pos.reindex(edges["src_id"].astype(str)).to_numpy()
        dst = pos.reindex(edges["dst_id"].astype(str)).to_numpy()
        if np.isnan(src.astype(float)).any() or np.isnan(dst.astype(float)).any():
            raise ValueError("edges refer to doc_id values that are not in the entities table")
        rel = edges["relation"].astype(str).to_numpy()
        self.relations = sorted(set(rel.tolist()))
        n = len(ids)
        self._adjacency: dict[str, sp.csr_matrix] = {}
        for r in self.relations:
            m = rel == r
            a = sp.csr_matrix(
                (np.ones(int(m.sum())), (src[m].astype(np.int64), dst[m].astype(np.int64))),
                shape=(n, n),
            )
            self._adjacency[r] = ((a + a.T) > 0).astype(np.float64).tocsr()
        self._walk_cache: dict[tuple[str, ...], sp.csr_matrix] = {}
        self._is_cand = cand
        return self

    def _walk_matrix(self, relations: tuple[str, ...]) -> sp.csr_matrix:
        if relations not in self._walk_cache:
            a = sum((self._adjacency[r] for r in relations), sp.csr_matrix(self._shape()))
            deg = np.asarray(a.sum(axis=1)).ravel()
            inv = np.divide(1.0, deg, out=np.zeros_like(deg), where=deg > 0)
            self._walk_cache[relations] = sp.diags(inv) @ a
        return self._walk_cache[relations]

    def block_width(self) -> int:
        """The number of entities: ``score_block`` walks the whole graph, not only candidates."""
        return len(self._is_cand)

    def _shape(self) -> tuple[int, int]:
        n = len(self._is_cand)
        return (n, n)

    def active_relations(self, query_text: str) -> tuple[str, ...]:
        """Relations a query activates through its trigger terms (all relations if none)."""
        found = {r for t in words(query_text) for r in self.relation_triggers.get(t, ())}
        found &= set(self.relations)
        return tuple(sorted(found)) if found else tuple(self.relations)

    def seeds(self, query_texts: Sequence[str]) -> sp.csr_matrix:
        """Seed weights ``S`` (queries x entities), rows summing to 1 (or empty)."""
        qbin = self.names.query_matrix(query_texts)
        qbin.data[:] = 1.0
        covered = (qbin @ self._name_idf_t).toarray()
        mass = self._name_mass[None, :]
        cov = np.divide(covered, mass, out=np.zeros_like(covered), where=mass > 0)
        ok = (cov >= self.min_coverage) & (mass >= self.min_name_idf)
        rows, cols, vals = [], [], []
        for i in range(len(query_texts)):
            c = np.flatnonzero(ok[i])
            if not len(c):
                continue
            c = c[np.lexsort((c, -self._name_mass[c], -cov[i, c]))][: self.max_seeds]
            w = cov[i, c] * self._name_mass[c]
            rows.extend([i] * len(c))
            cols.extend(c.tolist())
            vals.extend((w / w.sum()).tolist())
        return sp.csr_matrix((vals, (rows, cols)), shape=(len(query_texts), len(self._is_cand)))

    def score_block(self, query_texts: Sequence[str]) -> FloatArray:
        """Dense fused scores over candidates ``(n_queries, n_candidates)``."""
        text = max_normalize(self.text.score_block(query_texts))
        s = self.seeds(query_texts)
        graph = np.zeros((len(query_texts), len(self._is_cand)))
        groups: dict[tuple[str, ...], list[int]] = {}
        for i, t in enumerate(query_texts):
            if s.indptr[i + 1] > s.indptr[i]:
                groups.setdefault(self.active_relations(t), []).append(i)
        for rels, rows in groups.items():
            p = self._walk_matrix(rels)
            h1 = s[rows] @ p
            graph[rows] = (h1 + self.gamma * (h1 @ p)).toarray()
        graph[s.nonzero()] = 0.0  # seeds are context, not answers
        graph = max_normalize(graph[:, self.cand_idx])
        fused = (1 - self.lam) * text + self.lam * graph
        has_seed = np.diff(s.indptr) > 0
        fused[~has_seed] = text[~has_seed]
        seed_cand = s[:, self.cand_idx]
        fused[seed_cand.nonzero()] = 0.0
        return fused
