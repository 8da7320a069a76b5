"""The knowledge-base builder the three STaRK-like domains share: typed entities and edges.

A domain adds its entities kind by kind (:meth:`KnowledgeBase.add`, which returns their node
indices), links them (:meth:`KnowledgeBase.link`) and finally turns the graph into the bundle's
``entities`` and ``edges`` tables with the ids it drew (:meth:`KnowledgeBase.tables`). Nodes are
numbered in the order they are added, and that is the row order of ``entities``; edges keep the
order they were linked in. The builder draws no random numbers itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from demo.common import str_col

__all__ = ["KnowledgeBase"]


class KnowledgeBase:
    """Entities (kind, name, text, optional attribute columns) and relation edges between them."""

    def __init__(self) -> None:
        self.kinds: list[str] = []
        self.names: list[str] = []
        self.texts: list[str] = []
        self.columns: dict[str, dict[int, Any]] = {}
        self.edges: list[tuple[int, str, int]] = []
        self._neighbours: dict[str, dict[int, list[int]]] = {}

    def __len__(self) -> int:
        return len(self.names)

    def add(
        self,
        kind: str,
        names: Sequence[str],
        texts: Sequence[str] | None = None,
        **columns: Sequence[Any],
    ) -> list[int]:
        """Add entities of one ``kind``; returns their node indices.

        ``texts`` defaults to empty strings (set ``self.texts[i]`` later); each keyword is an
        attribute column with one value per entity (other entities get ``None`` there).
        """
        start = len(self.names)
        self.names.extend(names)
        self.kinds.extend([kind] * len(names))
        self.texts.extend([""] * len(names) if texts is None else texts)
        for col, values in columns.items():
            self.columns.setdefault(col, {}).update(
                zip(range(start, len(self)), values, strict=True)
            )
        return list(range(start, len(self)))

    def link(self, a: int, relation: str, b: int) -> None:
        """Add the edge ``a -relation-> b``; both ends become ``relation`` neighbours of each
        other (once, however often the edge is linked)."""
        self.edges.append((a, relation, b))
        nbr = self._neighbours.setdefault(relation, {})
        if b not in nbr.setdefault(a, []):
            nbr[a].append(b)
            nbr.setdefault(b, []).append(a)

    def neighbours(self, relation: str, i: int) -> list[int]:
        """Nodes joined to ``i`` by ``relation`` in either direction, in the order first linked."""
        return self._neighbours.get(relation, {}).get(i, [])

    def tables(self, ids: Sequence[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
        """``entities`` (``doc_id, name, text, type`` and the attribute columns) and ``edges``
        (``src_id, relation, dst_id``), with ``ids[i]`` the id of node ``i``.

        An attribute column whose values are all integers is ``Int64``, any other a string column.
        """
        n = len(self)
        entities = pd.DataFrame(
            {
                "doc_id": str_col(ids),
                "name": str_col(self.names),
                "text": str_col(self.texts),
                "type": str_col(self.kinds),
            }
        )
        for col, values in self.columns.items():
            full = [values.get(i) for i in range(n)]
            if all(isinstance(v, int) for v in values.values()):
                entities[col] = pd.array(full, dtype="Int64")
            else:
                entities[col] = str_col(full)
        edges = pd.DataFrame(
            {
                "src_id": str_col([ids[a] for a, _, _ in self.edges]),
                "relation": str_col([r for _, r, _ in self.edges]),
                "dst_id": str_col([ids[b] for _, _, b in self.edges]),
            }
        )
        return entities, edges
