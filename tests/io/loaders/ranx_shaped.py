"""ranx-shaped objects for the tests: ranx itself (numba, ir_datasets, seaborn, ...) is not a
dependency. ``Run`` and ``Qrels`` keep what this project reads of ranx 0.3.21's classes: the
mapping in ``.run`` / ``.qrels`` (sorted by value, descending, as ranx sorts it), ``.name``,
``to_dict()`` (a ``defaultdict`` of plain dicts), ``to_dataframe()`` (``q_id, doc_id, score``)
and ``save(path)``, whose file formats are copied from ranx's ``save``: JSON through
``orjson.dumps(..., option=OPT_INDENT_2)``, LZ4 through ``lz4.frame.open(path, "wb")`` writing
``lz4.frame.compress(cbor2.dumps(d), compression_level=16)``, TREC as
``f"{q} Q0 {d} {rank} {score} {name}"`` lines joined by newlines (no final newline), Parquet
through ``to_dataframe().to_parquet(path, index=False)``."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pandas as pd


def _sorted(d: dict) -> dict:
    return {q: dict(sorted(docs.items(), key=lambda kv: -kv[1])) for q, docs in d.items()}


class _Mapping:
    _attr = "run"

    def __init__(self, d: dict, name: str | None = None) -> None:
        setattr(self, self._attr, _sorted(d))
        self.name = name

    @property
    def _data(self) -> dict:
        return getattr(self, self._attr)

    def to_dict(self) -> defaultdict:
        out: defaultdict = defaultdict(dict)
        for q in self._data:
            out[q] = dict(self._data[q])
        return out

    def to_dataframe(self) -> pd.DataFrame:
        rows = [(q, d, s) for q, docs in self._data.items() for d, s in docs.items()]
        return pd.DataFrame(rows, columns=["q_id", "doc_id", "score"])

    def save(self, path: Path) -> None:
        kind = path.suffix[1:]
        if kind == "json":
            import orjson

            path.write_bytes(orjson.dumps(self.to_dict(), option=orjson.OPT_INDENT_2))
        elif kind == "lz4":
            import cbor2
            import lz4.frame

            with lz4.frame.open(path, mode="wb") as f:
                f.write(lz4.frame.compress(cbor2.dumps(self.to_dict()), compression_level=16))
        elif kind == "parquet":
            self.to_dataframe().to_parquet(path, index=False)
        else:
            path.write_text("\n".join(self._trec_lines()))

    def _trec_lines(self) -> list[str]:
        return [
            f"{q} Q0 {d} {rank + 1} {s} {self.name}"
            for q, docs in self._data.items()
            for rank, (d, s) in enumerate(docs.items())
        ]


class Run(_Mapping):
    """A ranx ``Run``'s shape (see the module docstring)."""

    _attr = "run"


class Qrels(_Mapping):
    """A ranx ``Qrels``'s shape; its TREC lines are ``q 0 doc rel``."""

    _attr = "qrels"

    def _trec_lines(self) -> list[str]:
        return [f"{q} 0 {d} {s}" for q, docs in self._data.items() for d, s in docs.items()]


Run.__module__ = "ranx.data_structures.run"
Qrels.__module__ = "ranx.data_structures.qrels"
