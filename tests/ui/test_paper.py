"""File names of the exports (``ui.paper.file_stem``)."""

from __future__ import annotations

from ui.paper import file_stem


def test_names_in_another_script_keep_their_files_apart() -> None:
    """Two datasets named in Chinese both became ``x``: their exports took one file name."""
    beijing, shanghai = file_stem("b", "北京", "ndcg@10"), file_stem("b", "上海", "ndcg@10")
    assert beijing != shanghai
    assert beijing.startswith("b_")
    assert beijing.endswith("_ndcg-10")
    assert all(c.isascii() and (c.isalnum() or c in "._-") for c in beijing + shanghai)
    assert file_stem("demo", "stark-mag", None, "", "hit@1") == "demo_stark-mag_hit-1"
    assert file_stem("gpt 3.5/α") == file_stem("gpt 3.5/α") != file_stem("gpt 3.5/β")
