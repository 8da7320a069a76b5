"""``report``: one self-contained offline HTML report of a bundle, or (``--deck``) its slide
deck as one offline HTML file with keyboard navigation."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from analysis.core.metrics import TIE_POLICIES

if TYPE_CHECKING:
    from analysis.io.bundle import Bundle

NAMES = ("report",)


def add_parsers(sub: argparse._SubParsersAction) -> None:
    rep = sub.add_parser("report", help="one self-contained offline HTML report of a bundle")
    rep.add_argument("--bundle", required=True, help="bundle folder (with bundle.toml)")
    rep.add_argument("--datasets", default=None, help="comma-separated datasets (default: all)")
    rep.add_argument("--a", default=None, help="model A")
    rep.add_argument("--b", default=None, help="model B")
    rep.add_argument("--ties", choices=TIE_POLICIES, default="trec_eval", help="tie policy")
    rep.add_argument("--metric", default=None, help="report metric (default: each dataset's first)")
    rep.add_argument(
        "--split",
        default=None,
        help="split of every selected dataset: a split name from bundle.toml or 'all' "
        "(default: each dataset's default split; every query when it names none)",
    )
    rep.add_argument(
        "--deck", action="store_true", help="write the slide deck (at most 12 slides) instead"
    )
    rep.add_argument("--out", required=True, help="output HTML file")


def run(args: argparse.Namespace) -> int:
    from analysis.core.progress import Progress, reporting
    from analysis.io.atomic import refuse_overwrite
    from analysis.io.bundle import read_manifest, refuse_overwriting

    # never over bundle.toml, any file the bundle reads or the notes database the report reads
    bundle = read_manifest(args.bundle)
    refuse_overwriting(bundle, args.out)
    refuse_overwrite(args.out, _notes_database(args.bundle), what="the bundle's notes database")
    datasets = [d for d in args.datasets.split(",") if d] if args.datasets else None
    with reporting(Progress("report")):
        _write(args, datasets)
    print(f"{'slides' if args.deck else 'report'} written to {args.out}")
    _font_check(read_manifest(args.bundle), datasets)
    return 0


def _notes_database(bundle_dir: str) -> list[Path]:
    """The notes database whose annotations the report shows (the configured notes folder's,
    :func:`analysis.io.annotations.database_path`), whether or not it exists; none when the
    notes folder is refused (the report then reads none)."""
    from analysis.core.errors import InputError
    from analysis.io.annotations import database_path

    try:
        return [database_path(bundle_dir)]
    except InputError:
        return []


def _write(args: argparse.Namespace, datasets: list[str] | None) -> None:
    from analysis.present.report import write_report

    write_report(
        Path(args.bundle),
        Path(args.out),
        datasets=datasets,
        model_a=args.a,
        model_b=args.b,
        ties=args.ties,
        metric=args.metric,
        deck=args.deck,
        split=args.split,
    )


def _font_check(bundle: Bundle, datasets: list[str] | None) -> None:
    """Warn on stderr when the report's names or query text hold Chinese/Japanese/Korean text
    and this machine has no CJK font (opened here, the text would show as boxes). Nothing is
    read when a CJK font is installed."""
    import sys

    from analysis.io import load_queries
    from analysis.present.fonts import cjk_font_available, texts_have_cjk
    from analysis.present.notices import cjk_font_message

    if cjk_font_available():
        return
    specs = [s for n, s in bundle.datasets.items() if datasets is None or n in datasets]
    texts: list[object] = [*(s.name for s in specs), *bundle.models]
    for spec in specs:
        if spec.queries is not None:
            texts += load_queries(spec.queries)["text"].tolist()
    if texts_have_cjk(texts):
        print(f"warning: {cjk_font_message()}", file=sys.stderr)
