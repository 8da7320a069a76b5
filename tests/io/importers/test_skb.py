"""STaRK SKB folders (``processed/node_info.pkl`` + ``.pt`` tensors) -> entities and edges, and
the imported bundle's entity names and text on the Queries page (AppTest)."""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path

import pytest

from analysis.core.errors import InputError
from analysis.io.bundle import load_dataset, read_manifest
from analysis.io.importers import import_stark
from analysis.io.skb import amazon_doc, mag_doc, prime_doc, read_skb

try:
    import torch
except ImportError:  # the SKB reader works without torch (no edges then)
    torch = None

PRODUCT = {
    "title": "Trail Shooting Stick",
    "brand": "Acme",
    "details": {"product_dimensions": "10 x 2 x 2 inches ; 1 pounds"},
    "description": ["Light and", "strong. "],
    "feature": ["Aluminum tip", "", "ASIN: B000"],
    "review": [
        {"summary": "ok", "reviewText": "fine", "vote": None},
        {"summary": "great", "reviewText": "steady on rocks", "vote": "1,204"},
    ],
    "qa": [{"question": "Weight?", "answer": "1 lb"}],
}
PRODUCT_TEXT = (
    "- product: Trail Shooting Stick\n- brand: Acme\n- dimensions: 10 x 2 x 2 inches\n"
    "- weight: 1 pounds\n- description: Light and strong.\n- features: \n#1: Aluminum tip\n"
    '- reviews: \n#2:\nsummary: great\ntext: "steady on rocks"\n#1:\nsummary: ok\ntext: "fine"\n'
    '- Q&A: \n#1:\nquestion: "Weight?"\nanswer: "1 lb"\n'
)


def _skb(folder: Path, nodes: dict, **dicts: dict) -> Path:
    processed = folder / "processed"
    processed.mkdir(parents=True)
    with (processed / "node_info.pkl").open("wb") as fh:
        pickle.dump(nodes, fh)
    for stem, value in dicts.items():
        with (processed / f"{stem}.pkl").open("wb") as fh:
            pickle.dump(value, fh)
    return folder


def _amazon_skb(folder: Path) -> Path:
    nodes = {
        5: PRODUCT,
        6: {**PRODUCT, "title": "Camp Stool", "review": [], "qa": []},
        7: {"brand_name": "Acme"},
    }
    folder = _skb(
        folder,
        nodes,
        node_type_dict={0: "product", 1: "brand"},
        edge_type_dict={0: "also_buy", 1: "has_brand"},
    )
    processed = folder / "processed"
    if torch is not None:
        torch.save(torch.tensor([0, 0, 1]), processed / "node_types.pt")
        torch.save(torch.tensor([[5, 6], [7, 7]]), processed / "edge_index.pt")
        torch.save(torch.tensor([1, 1]), processed / "edge_types.pt")
    else:  # the files exist, but cannot be read without torch
        for stem in ("node_types", "edge_index", "edge_types"):
            (processed / f"{stem}.pt").write_bytes(b"PK\x03\x04")
    return folder


def test_amazon_text_is_laid_out_as_get_doc_info() -> None:
    assert amazon_doc(PRODUCT) == ("Trail Shooting Stick", PRODUCT_TEXT, "product")
    assert amazon_doc({"color_name": "red"}) == ("red", "color name: red", "color")


def test_mag_and_prime_text() -> None:
    paper = {
        "type": "paper",
        "title": "Solitons",
        "abstract": "We study.\r\n",
        "Date": "2018",
        "OriginalVenue": -1,
        "JournalDisplayName": "Optics",
    }
    assert mag_doc(paper) == (
        "Solitons",
        " - paper title: Solitons\n - abstract: We study.\n - publication date: 2018\n"
        " - journal: Optics\n",
        "paper",
    )
    author = {"type": "author", "DisplayName": "A. Li", "PaperCount": 3, "CitationCount": -1}
    assert mag_doc(author)[1] == "- author name: A. Li\n- author paper count: 3\n"
    gene = {
        "type": "gene/protein",
        "name": "UROD",
        "source": "NCBI",
        "details": {"summary": "decarboxylase", "query_id": "x", "alias": "", "_x": 1},
    }
    assert prime_doc(gene) == (
        "UROD",
        "- name: UROD\n- type: gene/protein\n- source: NCBI\n- details:\n"
        "  - summary (protein summary text): decarboxylase\n",
        "gene/protein",
    )


def test_read_skb_entities_types_and_edges(tmp_path) -> None:
    kb = read_skb(_amazon_skb(tmp_path / "skb"), "amazon")
    ent = kb.entities.set_index("doc_id")
    assert ent.loc["5", "name"] == "Trail Shooting Stick"
    assert ent.loc["5", "text"] == PRODUCT_TEXT
    assert ent["type"].tolist() == ["product", "product", "brand"]
    assert ent["candidate"].tolist() == [True, True, False]
    if torch is None:
        assert kb.edges is None
        assert len(kb.notes) == 1
        assert "need torch" in kb.notes[0]
    else:
        assert kb.edges.to_dict("list") == {
            "src_id": ["5", "6"],
            "relation": ["has_brand", "has_brand"],
            "dst_id": ["7", "7"],
        }


def test_domain_detected_and_prime_all_candidates(tmp_path) -> None:
    nodes = {
        0: {"type": "disease", "name": "porphyria", "source": "MONDO"},
        1: {"type": "drug", "name": "hemin", "source": "DrugBank"},
    }
    kb = read_skb(_skb(tmp_path / "p", nodes) / "processed")
    assert kb.domain == "prime"
    assert kb.entities["candidate"].all()
    assert kb.entities["name"].tolist() == ["porphyria", "hemin"]


class _Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned > pwned.txt",))


def test_pickle_that_runs_code_is_refused(tmp_path) -> None:
    _skb(tmp_path / "evil", {0: {"title": "x"}})
    with (tmp_path / "evil" / "processed" / "node_info.pkl").open("wb") as fh:
        pickle.dump({0: {"title": _Evil()}}, fh)
    with pytest.raises(InputError, match="not a plain-data pickle"):
        read_skb(tmp_path / "evil")
    assert not Path("pwned.txt").exists()


def test_no_node_info_is_one_line(tmp_path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"no node_info\.pkl"):
        read_skb(tmp_path / "empty")


def _toy_stark(root: Path) -> Path:
    # a dozen queries of varied length (the length slice needs a few distinct values)
    extra = "".join(f"{i},{' '.join(['stool'] * i)},[6]\n" for i in range(2, 12))
    qa = "id,query,answer_ids\n0,a stick for rough ground,[5]\n1,a stool,[6]\n" + extra
    (root / "runs" / "bm25").mkdir(parents=True)
    (root / "stark_qa_human_generated_eval.csv").write_text(qa)
    (root / "runs" / "bm25" / "eval_results_human_generated_eval.csv").write_text(
        "idx,query_id,pred_rank\n"
        + "".join(f'{i},{i},"{json.dumps(p)}"\n' for i, p in enumerate([[6, 5]] * 12))
    )
    return root


def test_import_with_skb_gives_entities(tmp_path) -> None:
    result = import_stark(
        _toy_stark(tmp_path / "amazon"), tmp_path / "out", skb=_amazon_skb(tmp_path / "skb")
    )
    spec = read_manifest(tmp_path / "out").datasets["amazon-human"]
    ds = load_dataset(spec)
    ent = ds.entities.set_index("doc_id")
    assert ent.loc["5", "name"] == "Trail Shooting Stick"
    assert ent.loc["6", "text"].startswith("- product: Camp Stool\n")
    assert (spec.edges is None) == (torch is None)
    assert any("need torch" in n for n in result.notes) == (torch is None)


@pytest.mark.parametrize("name", ["images", "amazon_kb"])
def test_the_skb_domain_is_a_word_of_the_name(tmp_path, name) -> None:
    # "images" holds "mag": the Amazon nodes were laid out as MAG documents
    import_stark(_toy_stark(tmp_path / name), tmp_path / "out", skb=_amazon_skb(tmp_path / "skb"))
    ds = load_dataset(read_manifest(tmp_path / "out").datasets[f"{name}-human"])
    ent = ds.entities.set_index("doc_id")
    assert ent.loc["5", "text"] == PRODUCT_TEXT
    assert ent.loc["7", "type"] == "brand"


def test_skb_entities_are_written_once_for_both_query_sets(tmp_path) -> None:
    root = _toy_stark(tmp_path / "amazon")
    (root / "stark_qa.csv").write_text("id,query,answer_ids\n5,a stick,[5]\n")
    import_stark(root, tmp_path / "out", skb=_amazon_skb(tmp_path / "skb"))
    bundle = read_manifest(tmp_path / "out")
    syn, human = bundle.datasets["amazon-synthesized"], bundle.datasets["amazon-human"]
    assert (
        syn.entities
        == human.entities
        == tmp_path / "out" / "amazon-synthesized" / ("entities.parquet")
    )
    assert not (tmp_path / "out" / "amazon-human" / "entities.parquet").exists()


@pytest.mark.parametrize("key", ["paper", None, 1.5e300 * 1e10])
def test_a_type_dict_with_an_id_that_is_no_integer_is_one_line(tmp_path: Path, key) -> None:
    nodes = {0: {"type": "paper", "title": "t"}}
    folder = _skb(tmp_path / "mag", nodes, node_type_dict={0: "author", key: "paper"})
    path = folder / "processed" / "node_type_dict.pkl"
    with pytest.raises(InputError) as info:
        read_skb(folder, "mag")
    assert str(info.value) == (
        f"{path}: expected a dict {{id: name}} with integer ids, found the id {key!r}"
    )


def test_node_info_errors_name_the_file_with_its_folder(tmp_path: Path) -> None:
    path = _skb(tmp_path / "kb", {0: {"x": 1}}) / "processed" / "node_info.pkl"
    with pytest.raises(InputError) as info:
        read_skb(tmp_path / "kb")
    assert str(info.value) == f"{path}: cannot tell the SKB domain; pass amazon, mag or prime"
    path = _skb(tmp_path / "kb2", {0: 5}) / "processed" / "node_info.pkl"
    with pytest.raises(InputError) as info:
        read_skb(tmp_path / "kb2", "prime")
    assert str(info.value) == f"{path}: node 0 is not a dict of attributes"
