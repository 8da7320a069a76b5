"""STaRK semi-structured knowledge bases (SKB): entities and relation edges from the
``processed/`` folder that ``stark_qa.load_skb`` downloads.

Layout read (as ``stark_qa.tools.io.save_files`` writes it)::

    processed/node_info.pkl        {node id: {attribute: value}}   (a pickled dict)
    processed/node_types.pt        node type id per node            (a torch tensor)
    processed/edge_index.pt        2 x E source/target node ids     (a torch tensor)
    processed/edge_types.pt        relation id per edge             (a torch tensor)
    processed/node_type_dict.pkl   {type id: type name}             (Amazon, Prime)
    processed/edge_type_dict.pkl   {relation id: relation name}     (Amazon, Prime)
    processed/cache/<links>/...    Amazon with brand/category/color nodes (preferred when present)

MAG's type dictionaries are constants of ``stark_qa.skb.MagSKB``; they are repeated here.

**Pickles run code when they are loaded.** Only open SKB folders you downloaded yourself. The
``.pkl`` files are read with a restricted unpickler that accepts plain data only (dicts, lists,
strings, numbers, numpy arrays); anything else stops the import with a message. ``.pt`` files
are read with ``torch.load(..., weights_only=True)`` when torch is importable. Without torch the
entities still get their names, text and type (the type is read from ``node_info``: MAG and
Prime nodes carry ``type``; an Amazon node is a brand, category or colour when it has
``brand_name``/``category_name``/``color_name``, else a product), and the edges are left out with
a note.

Entity text is laid out as ``SKB.get_doc_info(idx)`` (``add_rel=False, compact=False``) of
stark-qa 1.1 lays it out per domain, so a retriever sees the documents STaRK's baselines embed.
Candidate types (``candidate`` column): Amazon products, MAG papers, Prime every node type.
"""

from __future__ import annotations

import math
import pickle
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis.core import paths
from analysis.core.errors import InputError

DOMAINS = ("amazon", "mag", "prime")
CANDIDATE_TYPES = {"amazon": ("product",), "mag": ("paper",), "prime": None}  # None: all
MAG_NODE_TYPES = {0: "author", 1: "institution", 2: "field_of_study", 3: "paper"}
MAG_EDGE_TYPES = {
    0: "author___affiliated_with___institution",
    1: "paper___cites___paper",
    2: "paper___has_topic___field_of_study",
    3: "author___writes___paper",
}
AMAZON_MAX_ENTRIES = 25  # AmazonSKB(max_entries=25): reviews and Q&A shown per product
_AMAZON_META = ("brand", "category", "color")

_ALLOWED = {
    ("builtins", "set"),
    ("builtins", "frozenset"),
    ("builtins", "slice"),
    ("builtins", "complex"),
    ("collections", "OrderedDict"),
    ("collections", "defaultdict"),
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "scalar"),
    ("numpy", "float64"),
    ("numpy", "int64"),
}


class _PlainUnpickler(pickle.Unpickler):
    """Unpickle plain data only: any other global is refused (pickles can run code)."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"refusing to load {module}.{name}")


def read_pickle(path: Path) -> Any:
    """Load a pickle of plain data (see :class:`_PlainUnpickler`).

    Raises:
        InputError: unreadable, truncated, or needing a class other than plain data.
    """
    try:
        with paths.reading(path, "cannot open"), path.open("rb") as fh:
            return _PlainUnpickler(fh).load()
    except pickle.UnpicklingError as exc:
        raise InputError(path, None, f"not a plain-data pickle ({exc})") from None
    except (EOFError, ValueError, TypeError, AttributeError, IndexError) as exc:
        raise InputError(path, None, f"cannot unpickle ({type(exc).__name__}: {exc})") from None


def _read_tensor(path: Path) -> np.ndarray | None:
    """A ``.pt`` tensor as numpy, or None when torch is not importable."""
    try:
        import torch
    except ImportError:
        return None
    try:
        value = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many types for a bad file
        raise InputError(path, None, f"cannot read the tensor ({exc})") from None
    return value.cpu().numpy()


@dataclass
class SKB:
    """Entities ``doc_id, name, text, type, candidate`` and edges ``src_id, relation, dst_id``
    (None without torch) of one domain, plus notes on what could not be read."""

    domain: str
    entities: pd.DataFrame
    edges: pd.DataFrame | None
    notes: list[str] = field(default_factory=list)


def processed_folder(folder: str | Path) -> Path:
    """The folder holding ``node_info.pkl``: ``folder`` itself, ``folder/processed``, or (Amazon)
    the ``cache/<links>`` folder with the most meta-link types.

    Raises:
        InputError: no ``node_info.pkl`` found.
    """
    base = Path(folder).expanduser()
    if not base.is_dir():
        raise InputError(base, None, "the SKB folder does not exist")
    for top in (base, base / "processed"):
        caches = sorted(
            (p for p in (top / "cache").glob("*") if (p / "node_info.pkl").is_file()),
            key=lambda p: (len(p.name.split("-")), p.name),
        )
        if caches:
            return caches[-1]
        if (top / "node_info.pkl").is_file():
            return top
    raise InputError(base, None, "no node_info.pkl here or in processed/ (STaRK's SKB layout)")


def _detect_domain(info: dict[Any, dict], path: Path) -> str:
    for value in list(info.values())[:1000]:
        if not isinstance(value, dict):
            continue
        kind = value.get("type")
        if kind in ("paper", "author", "institution", "field_of_study"):
            return "mag"
        if isinstance(kind, str):
            return "prime"
        if "title" in value or any(f"{m}_name" in value for m in _AMAZON_META):
            return "amazon"
    raise InputError(path, None, "cannot tell the SKB domain; pass amazon, mag or prime")


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _vote(review: dict) -> int:
    vote = review.get("vote")
    if _missing(vote):
        return 0
    try:
        return int(str(vote).replace(",", ""))
    except ValueError:
        return 0


def amazon_doc(node: dict, max_entries: int = AMAZON_MAX_ENTRIES) -> tuple[str, str, str]:
    """(name, text, type) of an Amazon node, as ``AmazonSKB.get_doc_info``."""
    for meta in _AMAZON_META:
        if f"{meta}_name" in node:
            name = str(node[f"{meta}_name"])
            return name, f"{meta} name: {name}", meta
    title = str(node.get("title", ""))
    doc = f"- product: {title}\n"
    if "brand" in node:
        doc += f"- brand: {node['brand']}\n"
    details = node.get("details")
    dims = details.get("product_dimensions") if isinstance(details, dict) else None
    if isinstance(dims, str) and len(dims.split(" ; ")) == 2:
        dimensions, weight = dims.split(" ; ")
        doc += f"- dimensions: {dimensions}\n- weight: {weight}\n"
    description = node.get("description")
    if description:
        text = " ".join(map(str, description)).strip(" ")
        if text:
            doc += f"- description: {text}\n"
    extras = (
        _amazon_features(node) + _amazon_reviews(node, max_entries) + _amazon_qa(node, max_entries)
    )
    return title, doc + extras, "product"


def _amazon_features(node: dict) -> str:
    """The ``- features:`` part: every feature that is not an ASIN note, numbered from 1."""
    features = node.get("feature")
    if not features:
        return ""
    feature_text = "- features: \n"
    for i, feature in enumerate(features):
        if feature and "asin" not in str(feature).lower():
            feature_text += f"#{i + 1}: {feature}\n"
    return feature_text


def _amazon_reviews(node: dict, max_entries: int) -> str:
    """The ``- reviews:`` part: the reviews by votes (most first), numbered as stored; at most
    ``max_entries + 2`` of them (STaRK's loop stops after the index passes ``max_entries``)."""
    reviews = node.get("review")
    if not reviews:
        return ""
    review_text = "- reviews: \n"
    order = np.argsort(-np.array([_vote(r) for r in reviews]), kind="quicksort")
    for i, j in enumerate(order):
        review = reviews[j]
        review_text += (
            f'#{j + 1}:\nsummary: {review.get("summary")}\ntext: "{review.get("reviewText")}"\n'
        )
        if i > max_entries:
            break
    return review_text


def _amazon_qa(node: dict, max_entries: int) -> str:
    """The ``- Q&A:`` part: the questions and answers in order, at most ``max_entries + 2``
    (as the reviews)."""
    qas = node.get("qa")
    if not qas:
        return ""
    qa_text = "- Q&A: \n"
    for i, qa in enumerate(qas):
        question, answer = qa.get("question"), qa.get("answer")
        qa_text += f'#{i + 1}:\nquestion: "{question}"\nanswer: "{answer}"\n'
        if i > max_entries:
            break
    return qa_text


def _mag_counts(doc: str, node: dict, label: str) -> str:
    if node.get("PaperCount", -1) != -1:
        doc += f"- {label} paper count: {node.get('PaperCount')}\n"
    if node.get("CitationCount", -1) != -1:
        doc += f"- {label} citation count: {node.get('CitationCount')}\n"
    return doc.replace("-1", "Unknown")


def mag_doc(node: dict) -> tuple[str, str, str]:
    """(name, text, type) of a MAG node, as ``MagSKB.get_doc_info``."""
    kind = str(node.get("type", ""))
    if kind == "author":
        name = str(node.get("DisplayName", ""))
        return name, _mag_counts(f"- author name: {name}\n", node, "author"), kind
    if kind == "paper":
        title = str(node.get("title", ""))
        doc = f" - paper title: {title}\n"
        doc += " - abstract: " + str(node.get("abstract", "")).replace("\r", "").rstrip("\n")
        doc += "\n"
        if str(node.get("Date", -1)) != "-1":
            doc += f" - publication date: {node.get('Date')}\n"
        for key, label in (
            ("OriginalVenue", "venue"),
            ("JournalDisplayName", "journal"),
            ("ConferenceSeriesDisplayName", "conference"),
            ("ConferenceInstancesDisplayName", "conference"),
        ):
            if str(node.get(key, -1)) != "-1":
                doc += f" - {label}: {node.get(key)}\n"
                break
        return title, doc, kind
    name = str(node.get("DisplayName", ""))
    if kind == "field_of_study":
        return name, _mag_counts(f" - field of study: {name}\n", node, "field"), kind
    return name, _mag_counts(f" - institution: {name}\n", node, "institution"), kind


_GENE_EXPLAIN = {
    "name": "gene name",
    "type_of_gene": "gene types",
    "alias": "other gene names",
    "other_names": "extended other gene names",
    "genomic_pos": "genomic position",
    "generif": "PubMed text",
    "interpro": "protein family and classification information",
    "summary": "protein summary text",
}


def _clean(value: Any) -> Any:
    """``stark_qa.tools.process_text.clean_dict``: drop '' and 'nan' values, recursively."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items() if str(v) not in ("", "nan")}
    return value


def prime_doc(node: dict) -> tuple[str, str, str]:
    """(name, text, type) of a Prime node, as ``PrimeSKB.get_doc_info``."""
    node = _clean(node)
    kind = str(node.get("type", ""))
    name = str(node.get("name", ""))
    doc = f"- name: {name}\n- type: {kind}\n- source: {node.get('source')}\n"
    feature_text, count = "- details:\n", 0
    details = node.get("details")
    if isinstance(details, dict):
        for key, value in details.items():
            if str(value) in ("", "nan") or key.startswith("_") or "_id" in key:
                continue
            if kind == "gene/protein" and key in _GENE_EXPLAIN:
                if "interpro" in key:
                    items = [value] if isinstance(value, dict) else value
                    value = [v.get("desc") for v in items if isinstance(v, dict)]
                if "generif" in key and isinstance(value, list):
                    value = "; ".join(str(v.get("text", "")) for v in value if isinstance(v, dict))
                    value = " ".join(value.split(" ")[:50000])
                if "genomic_pos" in key and isinstance(value, list) and value:
                    value = value[0]
                feature_text += f"  - {key} ({_GENE_EXPLAIN[key]}): {value}\n"
            else:
                feature_text += f"  - {key}: {value}\n"
            count += 1
    return name, doc + (feature_text if count else ""), kind


_DOCS = {"amazon": amazon_doc, "mag": mag_doc, "prime": prime_doc}


def _dict_file(folder: Path, stem: str, default: dict[int, str] | None) -> dict[int, str] | None:
    path = folder / f"{stem}.pkl"
    if path.is_file():
        value = read_pickle(path)
        if not isinstance(value, dict):
            raise InputError(path, None, "expected a dict {id: name}")
        try:
            return {int(k): str(v) for k, v in value.items()}
        except (TypeError, ValueError, OverflowError):
            bad = next(k for k in value if not _integer(k))
            raise InputError(
                path,
                None,
                f"expected a dict {{id: name}} with integer ids, found the id {bad!r:.60}",
            ) from None
    return default


def _integer(value: Any) -> bool:
    try:
        int(value)
    except (TypeError, ValueError, OverflowError):
        return False
    return True


def _entity_rows(
    info: dict, domain: str, path: Path
) -> tuple[list[str], list[str], list[str], list[str]]:
    doc = _DOCS[domain]
    ids, names, texts, kinds = [], [], [], []
    for key, node in info.items():
        if not isinstance(node, dict):
            raise InputError(path, None, f"node {key!r:.60} is not a dict of attributes")
        name, text, kind = doc(node)
        ids.append(str(key))
        names.append(name)
        texts.append(text)
        kinds.append(kind)
    return ids, names, texts, kinds


def read_skb(folder: str | Path, domain: str | None = None) -> SKB:
    """Read a STaRK SKB ``processed/`` folder into entities and edges (see the module docstring).

    Args:
        folder: the ``processed`` folder or the folder holding it.
        domain: ``amazon``, ``mag`` or ``prime``; detected from the nodes when None.

    Returns:
        :class:`SKB` with entities ``doc_id, name, text, type, candidate`` (``doc_id`` = the
        node id as a string; ``candidate`` = whether the domain's retrieval targets include the
        node's type) and edges ``src_id, relation, dst_id`` (None without torch: see ``notes``).

    Raises:
        InputError: no ``node_info.pkl``, a pickle that is not plain data, tensors whose shapes
            do not fit the nodes.
    """
    src = processed_folder(folder)
    info = read_pickle(src / "node_info.pkl")
    if not isinstance(info, dict) or not info:
        raise InputError(src / "node_info.pkl", None, "expected a non-empty dict {node id: {...}}")
    if domain is not None and domain not in DOMAINS:
        raise InputError(folder, None, f"unknown SKB domain {domain!r} (amazon, mag or prime)")
    domain = domain or _detect_domain(info, src / "node_info.pkl")
    notes: list[str] = []
    ids, names, texts, kinds = _entity_rows(info, domain, src / "node_info.pkl")
    node_dict = _dict_file(src, "node_type_dict", MAG_NODE_TYPES if domain == "mag" else None)
    edge_dict = _dict_file(src, "edge_type_dict", MAG_EDGE_TYPES if domain == "mag" else None)
    tensors = {stem: src / f"{stem}.pt" for stem in ("node_types", "edge_index", "edge_types")}
    present = {stem: path for stem, path in tensors.items() if path.is_file()}
    loaded = {stem: _read_tensor(path) for stem, path in present.items()}
    if present and any(v is None for v in loaded.values()):
        notes.append(
            f"{src}: the .pt tensors (edges, node types) need torch, which is not installed: "
            "imported names, text and types from node_info.pkl, without edges"
        )
        loaded = {}
    node_types = loaded.get("node_types")
    if node_types is not None and node_dict is not None:
        if len(node_types) != len(ids):
            raise InputError(
                tensors["node_types"], None, f"{len(node_types)} types for {len(ids)} nodes"
            )
        try:
            order = np.asarray([int(i) for i in info], dtype=np.int64)
        except (TypeError, ValueError):
            raise InputError(
                src / "node_info.pkl", None, "node ids must be integers (rows of node_types.pt)"
            ) from None
        if order.min() < 0 or order.max() >= len(node_types):
            raise InputError(src / "node_info.pkl", None, "node ids outside node_types.pt")
        kinds = [node_dict.get(int(t), str(int(t))) for t in node_types.astype(np.int64)[order]]
    entities = pd.DataFrame(
        {
            "doc_id": pd.array(ids, dtype="str"),
            "name": pd.array(names, dtype="str"),
            "text": pd.array(texts, dtype="str"),
            "type": pd.array(kinds, dtype="str"),
        }
    )
    wanted = CANDIDATE_TYPES[domain]
    entities["candidate"] = True if wanted is None else entities["type"].isin(wanted).to_numpy()
    edges = _edges(loaded, edge_dict, tensors)
    return SKB(domain=domain, entities=entities, edges=edges, notes=notes)


def _edges(
    loaded: dict[str, np.ndarray | None], edge_dict: dict[int, str] | None, paths: dict[str, Path]
) -> pd.DataFrame | None:
    index, types = loaded.get("edge_index"), loaded.get("edge_types")
    if index is None:
        return None
    if index.ndim != 2 or index.shape[0] != 2:
        raise InputError(paths["edge_index"], None, f"expected a 2 x E tensor, got {index.shape}")
    if types is None or len(types) != index.shape[1]:
        relation: Iterable[str] = ["related"] * index.shape[1]
    else:
        names = edge_dict or {}
        relation = [names.get(int(t), str(int(t))) for t in types.astype(np.int64)]
    return pd.DataFrame(
        {
            "src_id": pd.array(index[0].astype(np.int64).astype(str), dtype="str"),
            "relation": pd.array(list(relation), dtype="str"),
            "dst_id": pd.array(index[1].astype(np.int64).astype(str), dtype="str"),
        }
    )
