"""AppTest: the audits in the app's data checks (a run saved at a shallow depth, a copied
published summary, the real Prime ada-002 summary) and the Open data page importing AvaTaR's
Flickr30k-Entities layout with ``import stark``."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.io.importers import import_stark
from tests.app.conftest import no_exception, open_page
from tests.io.importers.test_import_stark import audit_collection


def _checks(at):
    (table,) = [d.value for d in at.dataframe if "severity" in d.value.columns]
    return table.set_index("check")


def test_home_data_checks_show_the_saved_depth_and_a_copied_summary(tmp_path, roots) -> None:
    collection = audit_collection(tmp_path / "collection")
    import_stark(collection / "toy", roots / "audits", name="toy")
    at = open_page(bundle="audits", dataset="toy-synthesized")
    no_exception(at)
    checks = _checks(at)
    summary = checks.loc["summary_mismatch"]
    assert summary["severity"] == "problem"
    assert summary["models"] == "all"  # the one model of the dataset
    assert summary["message"].startswith(
        "toy/runs/m/eval_metrics_test.json: the published summary differs from the means "
        "computed on the 2 queries of split test: hit@1 0.9000 (computed 0.5000)"
    )
    assert (
        "its bytes are identical to those of other/runs/m/eval_metrics_test.json"
        in (summary["message"])
    )
    depth = checks.loc["saved_depth:mrr"]
    assert depth["severity"] == "note"
    assert depth["message"] == (
        "mrr reads the whole ranking: 1 of 2 queries has no relevant document within the saved "
        "depth 2: its mrr is 0 here; an evaluator that scores every candidate (STaRK's) may "
        "credit it"
    )
    assert "saved_depth:recall@20" in checks.index
    assert "saved_depth:recall@50" not in checks.index  # not a metric of the dataset


def test_open_data_suggests_and_imports_avatars_flickr_layout(tmp_path, roots) -> None:
    audit_collection(roots / "collection")
    at = open_page("7_Open_data.py")
    at.selectbox(key="od_folder").set_value("collection/flickr30k_entities").run()
    no_exception(at)
    assert "Import as stark" in [h.value for h in at.subheader]
    at.button(key="od_import:collection/flickr30k_entities").click().run()
    no_exception(at)
    notes = [w.value for w in at.warning]
    assert any("the published summary matches the means computed on the 3 queries of split "
               "test" in n for n in notes)  # fmt: skip
    assert not any("Amazon" in n for n in notes)
    assert (roots / "_opened" / "flickr30k_entities" / "bundle.toml").is_file()


@pytest.mark.real
def test_real_prime_copied_summary_in_the_home_data_checks(real_dir: Path, roots) -> None:
    import_stark(real_dir / "stark" / "prime", roots / "prime")
    at = open_page(bundle="prime", dataset="prime-human")
    no_exception(at)
    checks = _checks(at)
    summary = checks.loc["summary_mismatch", "message"]
    assert "hit@1 0.2857 (computed 0.2110)" in summary
    assert summary.endswith(
        "its bytes are identical to those of "
        "mag/runs/ada-002/eval_metrics_human_generated_eval.json"
    )
    assert checks.loc["saved_depth:mrr", "message"].startswith(
        "mrr reads the whole ranking: 20 of 109 queries have no relevant document within the "
        "saved depth 1000"
    )


def test_the_report_lists_the_audits_among_its_data_checks(tmp_path) -> None:
    from analysis.present.report.build import bundle_content

    collection = audit_collection(tmp_path / "collection")
    import_stark(collection / "toy", tmp_path / "bundle", name="toy")
    content = bundle_content(tmp_path / "bundle", datasets=["toy-synthesized"])
    (block,) = [b for s in content.sections for b in s.blocks if b.key == "data-checks"]
    checks = block.table.set_index("check")
    assert (
        "its bytes are identical to those of other/runs/m/eval_metrics_test.json"
        in (checks.loc["summary_mismatch", "message"])
    )
    assert checks.loc["saved_depth:mrr", "count"] == 1
