"""The measure registry: one declaration per measure, from which everything else is made.

A :class:`Measure` holds a measure's name and aliases, whether it takes a cutoff, its formula,
its references (trec_eval, ir_measures, STaRK's evaluator, LIST), what the tool does in its
edge cases, and its kernel. Metric-name parsing (:mod:`analysis.core.names`), the kernels'
dispatch (:func:`analysis.core.kernels.scores`), the list of known metrics in error messages,
the dashboard's metric help, the metric cards (:func:`card`, ``python -m analysis
--help-metrics``, the app, the report) all read :data:`REGISTRY`. Adding a built-in measure is
one :class:`Measure` in :data:`BUILTIN`.

A user adds a per-query measure with :func:`register_measure`::

    import numpy as np
    import analysis

    def top_heavy(ranked_rel, n_rel, k):
        # ranked_rel: queries × depth relevances (0 where unjudged), n_rel: relevant per query
        return (ranked_rel > 0).sum(axis=1) / np.maximum(n_rel, 1)

    analysis.register_measure("top_heavy", top_heavy, cutoff=True, help="relevant in top k / |R|")

``top_heavy@10`` then works wherever a metric name does (``evaluate``, ``--metrics``, the app
and the report; a module of such calls is loaded with ``--plugin MODULE`` on the command line and
``RETRIEVAL_DASHBOARD_PLUGINS`` for the app, see :mod:`analysis.core.plugins`).

Kernels take a :class:`Judged` (the few rows of a ranked run that hold a positive gain, and the
per-query counts) and the cutoff ``k`` (``None``: the whole returned list), and return one float
per query of the qrels.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import re
import sys
import threading
import traceback
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from analysis.core import ranking as rk
from analysis.core.errors import InputError

Cutoff = Literal["optional", "never"]

#: Cells (queries × depth) of the dense relevance array a user measure may be given at once:
#: 2**27 float64 cells are 1 GiB.
MAX_CELLS = 1 << 27

#: A user measure's name: ASCII letters and underscores, a letter first and last, at most 40
#: characters (a cutoff is written ``@k`` or ``_k`` after it).
NAME_RE = re.compile(r"^[a-z](?:[a-z_]{0,38}[a-z])?$", re.ASCII)

#: Names a user measure may not take: the per-query table's other columns (ids, slices,
#: diagnostics, geo columns, the failure category) would be overwritten by its values or would
#: overwrite them; ``<name>_min``/``<name>_max`` are the tie bounds of another measure.
RESERVED = frozenset(
    {
        "dataset", "model", "query_id", "text", "lat", "lon", "split", "category", "author",
        "query_type", "query_length", "query_chars", "n_gold", "n_gold_bucket", "n_retrieved",
        "first_gold_rank", "missing_from_run", "no_relevant", "saved_depth",
        "gold_beyond_depth", "tie_sensitive", "tied_at_cutoff", "gold_poi_ids",
        "dist_gold_bucket", "dist_query_gold_m", "dist_query_top1_m", "gold_stack_size",
        "gold_stacked", "indistinguishable", "location_tie", "n_above_gold_on_gold_coord",
        "stackmates_in_top_k", "twin_recall", "twin_ndcg", "rbo", "tau_ap",
    }
)  # fmt: skip


@dataclass
class Judged:
    """The rows of a ranked run whose document has a positive gain, and per-query counts.

    ``qi``: the qrels query index of each row; ``rank``: its 1-based rank after the tie policy;
    ``gain``: its relevance (LIST's variant: 1); ``relevant``: relevance >= the threshold.
    ``n_rel``: relevant documents per query; ``n_ret``: documents returned per query; ``idcg``:
    the ideal DCG per nDCG cutoff; ``recall_denominator``: LIST's recall divisor per cutoff
    (``None``: ``n_rel``).
    """

    qi: np.ndarray
    rank: np.ndarray
    gain: np.ndarray
    relevant: np.ndarray
    n_rel: np.ndarray
    n_ret: np.ndarray
    idcg: dict[int | None, np.ndarray]
    recall_denominator: dict[int | None, np.ndarray] | None = None

    @property
    def nq(self) -> int:
        return len(self.n_rel)

    @functools.cached_property
    def rq(self) -> np.ndarray:
        """Query of each relevant row."""
        return self.qi[self.relevant]

    @functools.cached_property
    def rr(self) -> np.ndarray:
        """Rank of each relevant row."""
        return self.rank[self.relevant]

    @functools.cached_property
    def by_rank(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Relevant rows ordered by (query, rank): their query, rank, and the precision at
        that rank."""
        order = np.lexsort((self.rr, self.rq))
        rq_s, rr_s = self.rq[order], self.rr[order]
        return rq_s, rr_s, rk.positions(rq_s) / rr_s

    @functools.cached_property
    def first(self) -> np.ndarray:
        """Rank of the first relevant document per query (``inf``: none retrieved)."""
        first = np.full(self.nq, np.inf)
        if len(self.rq):
            np.minimum.at(first, self.rq, self.rr)  # rows are few: relevant retrieved docs
        return first

    def hits(self, k: int | None) -> np.ndarray:
        """Relevant documents in ranks 1..k per query (the whole list when ``k`` is None)."""
        within = self.rr <= _limit(k)
        return np.bincount(self.rq[within], minlength=self.nq).astype(np.float64)


Kernel = Callable[[Judged, "int | None"], np.ndarray]


def _limit(k: int | None) -> float:
    return float("inf") if k is None else k


@dataclass(frozen=True)
class Measure:
    """One measure, declared once.

    Attributes:
        name: canonical name (lower case), e.g. ``"recall"``; metric names are ``name@k``.
        title: display name with the cutoff written ``k``, e.g. ``"Recall@k"``.
        formula: the value for a query, with the cutoff written ``k``.
        kernel: per-query values (see the module docstring).
        cutoff: ``"optional"`` (``ndcg`` and ``ndcg@10``) or ``"never"`` (``rprec``).
        aliases: other accepted names (lower case), e.g. ``("r", "recall")``.
        whole_list: what the measure reads without a cutoff.
        trec_eval: trec_eval's name (``k`` for the cutoff), or ``""`` when it has none.
        ir_measures: ir_measures' name.
        stark: the name in STaRK's evaluator (``stark_qa.Evaluator``) and how it compares.
        list_ref: LIST's (``brute_search.py``) name and how it compares.
        notes: what else a reader needs (caps, what ties change).
        depth: what it reads without a cutoff (for the saved-depth check and the card):
            ``"ranking"`` (the whole ranking), ``"saved"`` (exactly the saved list) or
            ``"relevant"`` (ranks 1..R, R = the number of relevant documents).
        first_only: only the first relevant document counts (a query whose saved list holds
            one is not affected by a deeper one missing).
        dashboard: in the dashboard's per-query table: ``"cutoffs"`` (at every dashboard
            cutoff), ``"bare"`` (once, without a cutoff) or ``""`` (only when named).
        listed: how the known-metrics list writes it (default :meth:`forms`).
        module: where a user measure was declared (``""`` for a built-in).
    """

    name: str
    title: str
    formula: str
    kernel: Kernel
    cutoff: Cutoff = "optional"
    aliases: tuple[str, ...] = ()
    whole_list: str = "the whole returned list"
    trec_eval: str = ""
    ir_measures: str = ""
    stark: str = ""
    list_ref: str = ""
    notes: str = ""
    depth: Literal["ranking", "saved", "relevant"] = "ranking"
    first_only: bool = False
    dashboard: Literal["", "cutoffs", "bare"] = ""
    listed: str = ""
    module: str = field(default="", compare=False)

    @property
    def user(self) -> bool:
        """Registered by :func:`register_measure` (not built in)."""
        return bool(self.module)

    @property
    def example(self) -> str:
        """How it is written with a cutoff (``recall@k``) or without (``rprec``)."""
        return self.name if self.cutoff == "never" else f"{self.name}@k"

    def forms(self) -> str:
        """The names it is written as: ``ndcg, ndcg@k`` (``rprec`` without a cutoff)."""
        return self.name if self.cutoff == "never" else f"{self.name}, {self.name}@k"

    def help(self) -> str:
        """One sentence: title and formula."""
        return f"{fill(self.title, None)}: {fill(self.formula, None)}."


# --------------------------------------------------------------------------- built-in kernels


def _hit(j: Judged, k: int | None) -> np.ndarray:
    return (j.hits(k) > 0).astype(np.float64)


def _recall(j: Judged, k: int | None) -> np.ndarray:
    denom = j.n_rel if j.recall_denominator is None else j.recall_denominator[k]
    return np.where(denom > 0, j.hits(k) / np.maximum(denom, 1), 0.0)


def _precision(j: Judged, k: int | None) -> np.ndarray:
    denom = np.full(j.nq, float(k)) if k is not None else j.n_ret.astype(np.float64)
    return np.where(denom > 0, j.hits(k) / np.maximum(denom, 1), 0.0)


def _mrr(j: Judged, k: int | None) -> np.ndarray:
    return np.where(j.first <= _limit(k), 1.0 / j.first, 0.0)


def _map(j: Judged, k: int | None) -> np.ndarray:  # divided by every relevant doc
    rq_s, rr_s, precision_at = j.by_rank
    w = np.where(rr_s <= _limit(k), precision_at, 0.0)
    total = np.bincount(rq_s, weights=w, minlength=j.nq)
    return np.where(j.n_rel > 0, total / np.maximum(j.n_rel, 1), 0.0)


def _rprec(j: Judged, k: int | None) -> np.ndarray:  # precision at rank R
    top_r = np.bincount(j.rq[j.rr <= j.n_rel[j.rq]], minlength=j.nq).astype(np.float64)
    return np.where(j.n_rel > 0, top_r / np.maximum(j.n_rel, 1), 0.0)


def _ndcg(j: Judged, k: int | None) -> np.ndarray:
    w = np.where(j.rank <= _limit(k), j.gain / np.log2(j.rank + 1.0), 0.0)
    dcg = np.bincount(j.qi, weights=w, minlength=j.nq)
    ideal = j.idcg[k]
    return np.where(ideal > 0, dcg / np.where(ideal > 0, ideal, 1.0), 0.0)


_STARK_SAVED = "computed by STaRK over every candidate, not only the saved list"

#: The built-in measures, in the order of the known-metrics list.
BUILTIN: tuple[Measure, ...] = (
    Measure(
        "hit",
        "Hit@{k}",
        "1 if any relevant document is in the top {k}, else 0",
        _hit,
        aliases=("success", "hits"),
        trec_eval="success_{k}",
        ir_measures="Success@{k}",
        stark=f"hit@{{k}} ({_STARK_SAVED})",
        notes="ranx calls it hit_rate@{k}.",
        first_only=True,
        dashboard="cutoffs",
        listed="hit@k",
    ),
    Measure(
        "recall",
        "Recall@{k}",
        "relevant documents in the top {k} / all relevant documents |R|",
        _recall,
        aliases=("r",),
        trec_eval="recall_{k} (without a cutoff: set_recall)",
        ir_measures="R@{k}",
        stark=f"recall@{{k}} (same denominator |R|; {_STARK_SAVED})",
        list_ref="Recall@{k} divides by min(#gold rows, {k}) and counts repeated gold rows: "
        "--compat list",
        notes="A query with more than {k} relevant documents cannot reach 1 (a data check "
        "counts them).",
        dashboard="cutoffs",
        listed="recall@k",
    ),
    Measure(
        "precision",
        "Precision@{k}",
        "relevant documents in the top {k} / {k} (even when fewer were returned)",
        _precision,
        aliases=("p",),
        whole_list="the whole returned list, divided by the number returned",
        depth="saved",
        trec_eval="P_{k} (without a cutoff: set_P)",
        ir_measures="P@{k}",
        stark=f"precision@{{k}} ({_STARK_SAVED})",
        dashboard="cutoffs",
        listed="precision@k (P@k)",
    ),
    Measure(
        "ndcg",
        "nDCG@{k}",
        "DCG@{k} / IDCG@{k}, DCG@{k} = Σ over ranks i ≤ {k} of gain_i / log2(i+1), gain = the "
        "judged relevance when positive; IDCG@{k} = the DCG of the ideal ordering of every "
        "judged gain, cut at {k}",
        _ndcg,
        aliases=("ndcg_cut",),
        trec_eval="ndcg_cut_{k} (without a cutoff: ndcg)",
        ir_measures="nDCG@{k}",
        stark=f"ndcg@{{k}} (binary gains; {_STARK_SAVED})",
        list_ref="NDCG@{k} with binary gains and IDCG over min(#gold rows, {k}) positions: "
        "--compat list",
        dashboard="cutoffs",
    ),
    Measure(
        "mrr",
        "MRR",
        "1 / rank of the first relevant document (with a cutoff: 0 when that rank is beyond {k}), "
        "0 if none",
        _mrr,
        aliases=("rr", "recip_rank"),
        trec_eval="recip_rank (no cutoff in trec_eval)",
        ir_measures="RR@{k} (without a cutoff: RR)",
        stark=f"mrr ({_STARK_SAVED}: a gold beyond the saved list can still add to STaRK's MRR)",
        notes="torchmetrics >= 1.7.4 (used by STaRK) ignores answers scored <= 0; this tool "
        "reads ranks only.",
        first_only=True,
        dashboard="bare",
    ),
    Measure(
        "map",
        "MAP",
        "Σ over relevant documents in the top {k} of the precision at their rank, / |R| "
        "(every relevant document, retrieved or not)",
        _map,
        aliases=("ap", "map_cut"),
        trec_eval="map_cut_{k} (without a cutoff: map)",
        ir_measures="AP@{k} (without a cutoff: AP)",
        stark="map@{k} (torchmetrics' average precision: a different normalization)",
    ),
    Measure(
        "rprec",
        "R-precision",
        "relevant documents in the top |R| / |R| (precision at rank |R|)",
        _rprec,
        cutoff="never",
        aliases=("r_prec",),
        whole_list="ranks 1..|R|",
        depth="relevant",
        trec_eval="Rprec",
        ir_measures="Rprec",
        stark=f"rprecision ({_STARK_SAVED})",
    ),
)

#: Every measure by canonical name: the built-ins, then the user's (:func:`register_measure`).
REGISTRY: dict[str, Measure] = {m.name: m for m in BUILTIN}


def lookup(name: str) -> Measure | None:
    """The measure a name or alias (any case) stands for, or None."""
    key = name.lower()
    found = REGISTRY.get(key)
    if found is not None:
        return found
    return next((m for m in REGISTRY.values() if key in m.aliases), None)


#: A metric name: a measure name or alias, then optionally ``@k`` or ``_k`` (ASCII digits).
METRIC_RE = re.compile(r"^\s*([A-Za-z_]+?)(?:[@_](\d+))?\s*$", re.ASCII)


def parse_name(text: str) -> tuple[Measure, int | None]:
    """The measure and cutoff of a metric name (``hit@1``, ``P@5``, ``ndcg_cut_10``, ``mrr``).

    Raises:
        ValueError: one line naming the unknown measure and the known ones, or saying that the
            cutoff is not a positive integer (``hit@0``) or not allowed (``rprec@5``).
    """
    match = METRIC_RE.match(str(text))
    found = lookup(match.group(1)) if match else None
    if match is None or found is None:
        raise ValueError(f"unknown metric {str(text)!r} (known: {known()})")
    k = int(match.group(2)) if match.group(2) is not None else None
    if k is not None and k < 1:
        raise ValueError(f"metric {text!r}: the cutoff must be at least 1 (known: {known()})")
    if k is not None and found.cutoff == "never":
        raise ValueError(f"metric {text!r}: {found.name} takes no cutoff (known: {known()})")
    return found, k


def known() -> str:
    """The known metric names, for error messages: ``hit@k, recall@k, ...``."""
    return ", ".join(m.listed or m.forms() for m in REGISTRY.values())


def dashboard_measures() -> list[Measure]:
    """The measures the dashboard's per-query table holds (``dashboard`` set; every user
    measure)."""
    return [m for m in REGISTRY.values() if m.dashboard]


# --------------------------------------------------------------------------- user measures

UserFn = Callable[[np.ndarray, np.ndarray, "int | None"], object]


def register_measure(name: str, fn: UserFn, *, cutoff: bool = True, help: str = "") -> Measure:
    """Register a per-query measure under ``name`` (ASCII letters and underscores, a letter
    first and last, at most 40 characters; case-insensitive).

    ``fn(ranked_rel, n_rel, k)`` gets, for the evaluated queries (the qrels' queries, in their
    order):

    * ``ranked_rel``: a float array, queries × depth, the relevance of the document at each rank
      (0 where unjudged or not positive; LIST's variant: 1 for relevant), ranks ordered by the
      tie policy. The depth is ``k`` with a cutoff, else the deepest rank of a judged
      document with a positive relevance; ranks a query did not return are 0;
    * ``n_rel``: the number of relevant documents per query (relevance >= the threshold);
    * ``k``: the cutoff, or ``None`` when the metric is written without one;

    and returns one real, finite number per query (a list, a numpy or pandas array of integers,
    booleans or floats; text, complex numbers, missing values or masked entries are refused).
    Both arrays are fresh copies: ``fn`` may change them. What it prints goes to stderr, so that
    a command's output stays clean. ``cutoff=False`` refuses ``name@k``. Queries missing from
    the run score 0 whatever ``fn`` returns for their row of zeros (trec_eval ``-c``, as every
    measure); the tie bounds ``<name>_min/_max`` call ``fn`` on the worst and best orders of the
    tied documents' gains. Registering a name again replaces a user measure; a built-in name or
    alias, a column of the per-query table (:data:`RESERVED`) and names ending in ``_min`` or
    ``_max`` are refused.

    Raises:
        ValueError: a name that is not a string of that form, a name that is taken, or ``fn``
            not callable.
    """
    key = _user_name(name)
    if not callable(fn):
        raise ValueError(f"measure {name!r}: fn must be callable")
    module = _module_of(fn) or "user"
    if key in REGISTRY and REGISTRY[key].user:
        del REGISTRY[key]
    text = " ".join(str(help or "").split()) or f"user measure {key}"
    measure = Measure(
        key,
        f"{key}@{{k}}" if cutoff else key,
        text,
        _user_kernel(key, fn, module),
        cutoff="optional" if cutoff else "never",
        whole_list="ranks down to the deepest judged relevant document",
        dashboard="cutoffs" if cutoff else "bare",
        notes=f"A user measure, declared in {module}; its tie bounds are its values under the "
        "worst and best order of the tied documents' gains.",
        module=module,
    )
    REGISTRY[key] = measure
    return measure


def _user_name(name: object) -> str:
    """The registry key of a user measure's name (see :func:`register_measure`)."""
    if not isinstance(name, str):
        raise ValueError(f"measure name {name!r}: a name is a string")
    key = name.strip().lower()
    if not NAME_RE.match(key):
        shown = repr(name) if len(name) <= 60 else repr(name[:60]) + "…"
        raise ValueError(
            f"measure name {shown}: use ASCII letters and underscores, a letter first and last, "
            "at most 40 characters"
        )
    taken = lookup(key)
    if taken is not None and not taken.user:
        raise ValueError(f"measure name {name!r} is taken by the built-in {taken.name}")
    if key in RESERVED or key.endswith(("_min", "_max")):
        raise ValueError(
            f"measure name {name!r} is a column of the per-query table (ids, slices, "
            "diagnostics, tie bounds); choose another"
        )
    return key


def unregister_measure(name: str) -> None:
    """Remove a user measure (built-in ones stay)."""
    found = REGISTRY.get(str(name).lower())
    if found is not None and found.user:
        del REGISTRY[found.name]


def user_fingerprint() -> list[tuple[str, str, str]]:
    """``(name, module, digest)`` of every user measure, for cache keys: a changed definition
    gives a different key. The digest covers the function's bytecode, constants and the names
    it uses (``np.sum`` and ``np.mean`` differ only there), its default arguments, the values
    its closure holds, and the plain values (numbers, text, arrays) and functions it reads from
    its module's globals, followed into the functions it calls; an object that is not a Python
    function counts by its ``repr``, a function of another module by its name, an array of
    more than :data:`_DIGESTED` bytes or a container of more than :data:`_DIGESTED` items by
    its identity (hashing it at every page run would cost more than the measure)."""
    out = []
    for m in REGISTRY.values():
        if m.user:
            fn = m.kernel.__wrapped__  # type: ignore[attr-defined]
            raw = repr(_describe(fn, set(), getattr(fn, "__module__", None)))
            out.append((m.name, m.module, hashlib.sha256(raw.encode()).hexdigest()[:16]))
    return out


_PLAIN = (bool, int, float, complex, str, bytes, type(None))
#: the largest array (bytes) or container (items) a measure's fingerprint reads in full
_DIGESTED = 1 << 20


def _describe(obj: object, seen: set[int], home: str | None) -> object:
    """What a user function's result depends on, as nested tuples of plain values (see
    :func:`user_fingerprint`); a function met again (recursion) or defined outside the module
    ``home`` is named, not followed."""
    if isinstance(obj, _PLAIN):
        return obj
    if isinstance(obj, (tuple, list, frozenset, set, dict)) and len(obj) > _DIGESTED:
        return (type(obj).__name__, len(obj), id(obj))
    if isinstance(obj, (tuple, list, frozenset, set)):
        items = [_describe(x, seen, home) for x in obj]
        return (type(obj).__name__, sorted(items, key=repr) if isinstance(obj, (set, frozenset))
                else items)  # fmt: skip
    if isinstance(obj, dict):
        return ("dict", sorted((repr(k), _describe(v, seen, home)) for k, v in obj.items()))
    if isinstance(obj, np.ndarray):
        if obj.nbytes > _DIGESTED:
            return ("array", str(obj.dtype), obj.shape, id(obj))
        data = obj.tobytes() if obj.dtype != object else repr(obj.tolist()).encode()
        return ("array", str(obj.dtype), obj.shape, hashlib.sha256(data).hexdigest())
    if isinstance(obj, functools.partial):
        return ("partial", _describe(obj.func, seen, home), _describe(obj.args, seen, home),
                _describe(obj.keywords, seen, home))  # fmt: skip
    if isinstance(obj, types.ModuleType):
        return ("module", obj.__name__)
    code = getattr(obj, "__code__", None)
    if not isinstance(code, types.CodeType):
        return repr(obj)
    name = (getattr(obj, "__module__", None), getattr(obj, "__qualname__", None))
    if id(obj) in seen or name[0] != home:
        return ("function", *name)
    seen.add(id(obj))
    cells = []
    for cell in getattr(obj, "__closure__", None) or ():
        try:
            cells.append(_describe(cell.cell_contents, seen, home))
        except ValueError:  # an empty cell
            cells.append(None)
    names = _code_names(code)
    found = getattr(obj, "__globals__", {})
    used = [(n, _describe(found[n], seen, home)) for n in sorted(names) if n in found]
    return (
        _describe_code(code),
        _describe(getattr(obj, "__defaults__", None), seen, home),
        _describe(getattr(obj, "__kwdefaults__", None), seen, home),
        cells,
        used,
    )


def _describe_code(code: types.CodeType) -> tuple:
    consts = tuple(
        _describe_code(c) if isinstance(c, types.CodeType) else _describe(c, set(), None)
        for c in code.co_consts
    )
    return (code.co_code, consts, code.co_names)


def _code_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


def dense_relevance(j: Judged, k: int | None) -> np.ndarray:
    """The queries × depth relevance array a user measure gets (see :func:`register_measure`).

    Raises:
        ValueError: the array would hold more than :data:`MAX_CELLS` cells.
    """
    depth = int(k) if k is not None else int(j.rank.max()) if len(j.rank) else 0
    if j.nq * depth > MAX_CELLS:
        raise ValueError(
            f"{j.nq} queries × depth {depth} is too large a relevance array; use a cutoff"
        )
    dense = np.zeros((j.nq, depth), dtype=np.float64)
    keep = j.rank <= depth
    dense[j.qi[keep], j.rank[keep] - 1] = j.gain[keep]
    return dense


def failure_site(exc: BaseException, prefer: str | None = None) -> tuple[str | None, int | None]:
    """File and line of the innermost frame of ``exc``'s traceback in the file ``prefer`` (the
    user's code, rather than the library it called), else of the innermost frame (a
    SyntaxError: its own)."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return exc.filename, exc.lineno
    frames = traceback.extract_tb(exc.__traceback__)
    own = [f for f in frames if prefer is not None and f.filename == prefer]
    frame = (own or frames or [None])[-1]
    return (frame.filename, frame.lineno) if frame is not None else (None, None)


def one_line(exc: BaseException) -> str:
    """``Type: first line of the message`` (the type alone when the message is empty or cannot
    be made)."""
    try:
        text = str(exc).strip().splitlines()
    except Exception:  # a user exception whose __str__ fails
        text = []
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


#: What user code (a plugin's top level, a user measure) may raise besides ``Exception`` and
#: still be reported as one line: ``sys.exit()`` and a stray ``GeneratorExit`` are never a
#: measure's answer. ``KeyboardInterrupt`` is left to stop the program.
USER_FAILURES = (Exception, SystemExit, GeneratorExit)

_STDOUT_LOCK = threading.Lock()
_STDOUT_DEPTH = [0]
_STDOUT_SAVED: list[object] = []


@contextlib.contextmanager
def user_output() -> Iterator[None]:
    """Send what user code prints to stderr while it runs (nested and concurrent uses share one
    redirection, undone when the last one ends), so that a command's output on stdout (a
    table, a report) is never mixed with a plugin's prints."""
    with _STDOUT_LOCK:
        if _STDOUT_DEPTH[0] == 0:
            _STDOUT_SAVED[:] = [sys.stdout]
            sys.stdout = sys.stderr
        _STDOUT_DEPTH[0] += 1
    try:
        yield
    finally:
        with _STDOUT_LOCK:
            _STDOUT_DEPTH[0] -= 1
            if _STDOUT_DEPTH[0] == 0:
                sys.stdout = _STDOUT_SAVED.pop()  # type: ignore[assignment]


def _call_site(fn: UserFn, exc: BaseException) -> str:
    """``file:line: `` of the failure in the user's code, else of ``fn``'s definition (a call
    with the wrong arguments fails before entering it)."""
    code = getattr(fn, "__code__", None)
    own = getattr(code, "co_filename", None)
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == own]
    if frames:
        return f"{own}:{frames[-1].lineno}: "
    if code is not None:
        return f"{own}:{code.co_firstlineno}: "
    file, line = failure_site(exc)
    return f"{file}:{line}: " if file else ""


def _values(out: object, nq: int, where: str) -> np.ndarray:
    """What a user measure returned as float64, one finite real number per query."""
    if isinstance(out, np.ma.MaskedArray):
        if np.ma.getmaskarray(out).any():
            raise InputError(where, None, "returned masked values, not one number per query")
        out = out.data
    try:
        array = np.asarray(out)
    except Exception:  # an object numpy cannot read
        array = np.asarray(None)
    if array.dtype.kind not in "biuf":
        what = type(out).__name__ + (f" of {array.dtype}" if array.ndim else "")
        raise InputError(where, None, f"returned {what}, not one number per query")
    if array.shape != (nq,):
        raise InputError(
            where,
            None,
            f"returned shape {array.shape}; it must return one value per query, shape ({nq},)",
        )
    values = array.astype(np.float64)
    bad = int((~np.isfinite(values)).sum())
    if bad:
        raise InputError(where, None, f"returned {bad} values that are not finite numbers")
    return values


def _user_kernel(name: str, fn: UserFn, module: str) -> Kernel:
    """The kernel of a user measure: the dense array, ``fn``, and a check of what it returned
    (every failure is an :class:`InputError` naming the measure, and the file and line when
    ``fn`` raised)."""

    @functools.wraps(fn)
    def kernel(j: Judged, k: int | None) -> np.ndarray:
        where = f"measure {name!r} ({module})"
        try:
            dense = dense_relevance(j, k)
        except ValueError as exc:
            raise InputError(where, None, str(exc)) from None
        try:
            with user_output():
                out = fn(dense, j.n_rel.copy(), k)
        except USER_FAILURES as exc:  # the user's code: any failure is one line
            raise InputError(where, None, f"{_call_site(fn, exc)}raised {one_line(exc)}") from None
        values = _values(out, j.nq, where)
        return np.where(j.n_ret > 0, values, 0.0)  # missing from the run: 0 (trec_eval -c)

    return kernel


# --------------------------------------------------------------------------- cards


@dataclass(frozen=True)
class MetricCard:
    """What a metric means, for a reader: its formula, cutoff, references and the tool's
    semantics in its edge cases. ``text()`` is the plain-text form (the CLI); ``lines()``
    the labelled lines the app and the report show."""

    name: str
    title: str
    formula: str
    cutoff: str
    reference: tuple[tuple[str, str], ...]
    semantics: tuple[tuple[str, str], ...]

    def lines(self) -> list[tuple[str, str]]:
        """``(label, text)`` pairs: formula, cutoff, each reference, each semantic."""
        return [("Formula", self.formula), ("Cutoff", self.cutoff), *self.reference,
                *self.semantics]  # fmt: skip

    def text(self, width: int = 100) -> str:
        """The card as plain text: the name and title, then one labelled paragraph each
        (wrapped at ``width``)."""
        import textwrap

        head = f"{self.name} — {self.title}" if self.title != self.name else self.name
        body = [
            textwrap.fill(f"{label}: {text}", width, initial_indent="  ", subsequent_indent="    ")
            for label, text in self.lines()
        ]
        return "\n".join([head, *body])

    def markdown(self) -> str:
        """The card as Markdown (for the app's help and popovers)."""
        body = "\n".join(f"- **{label}**: {escape_md(text)}" for label, text in self.lines())
        return f"**{escape_md(self.name)}** — {escape_md(self.title)}\n\n{body}"


def escape_md(text: str) -> str:
    """Text with Markdown's special characters escaped (formulas hold ``*``, ``_``, ``|``)."""
    return re.sub(r"([\\`*_{}\[\]<>()#+\-.!|~$])", r"\\\1", str(text))


def fill(text: str, k: int | None) -> str:
    """A declaration's text with the cutoff written in (``{k}``: ``k`` when there is none)."""
    return text.replace("{k}", "k" if k is None else str(k))


def _cutoff_text(m: Measure, k: int | None, general: bool) -> str:
    if m.cutoff == "never":
        return f"none ({m.name} reads {m.whole_list}; {m.name}@k is refused)"
    if k is None and not general:
        return f"none: k = {m.whole_list} (write {m.name}@k for ranks 1..k)"
    where = "k" if k is None else k
    return f"ranks 1..{where} ({m.name} without a cutoff reads {m.whole_list})"


def _saved_depth(m: Measure, k: int | None, general: bool) -> str:
    """What a ranking saved to a limited depth does to the measure (the saved-depth check of
    :mod:`analysis.core.depth` warns with counts)."""
    lost = (
        "a query whose saved list holds no relevant document scores 0 here"
        if m.first_only
        else "a query with relevant documents beyond its saved list gets a lower bound"
    )
    credit = "an evaluator that scores every candidate (STaRK's) may credit them"
    if m.cutoff != "never" and (k is not None or general):
        where = "k" if k is None else k
        return f"reads ranks 1..{where}; when the run saved fewer than {where}, {lost}; {credit}"
    if m.depth == "saved":
        return "reads exactly the saved list: a limited depth changes nothing"
    if m.depth == "relevant":
        return f"reads ranks 1..|R|; when the run saved fewer than |R|, {lost}; {credit}"
    return f"reads {m.whole_list}, as saved: {lost}; {credit}"


def _references(m: Measure, k: int | None) -> tuple[tuple[str, str], ...]:
    refs = [
        ("trec_eval", fill(m.trec_eval, k)),
        ("ir_measures", fill(m.ir_measures, k)),
        ("STaRK evaluator", fill(m.stark, k)),
        ("LIST", fill(m.list_ref, k)),
    ]
    return tuple((label, text) for label, text in refs if text)


def _no_relevant(m: Measure) -> str:
    """What a measure gives a query without a relevant document (relevance >= the threshold)."""
    if m.user:
        return "are flagged no_relevant; n_rel is 0 and the value is what the measure returns"
    if m.name == "ndcg":  # gains are every positive relevance, whatever the threshold
        return (
            "are flagged no_relevant; they score 0 unless a judged document below the relevance "
            "threshold (relevance 1 at --relevance-threshold 2) is retrieved: its gain counts, "
            "as in trec_eval's ndcg"
        )
    return "score 0 and are flagged no_relevant"


def _semantics(name: str, m: Measure) -> tuple[tuple[str, str], ...]:
    """What the tool does in the edge cases every measure shares."""
    return (
        (
            "Ties",
            "equal scores are ordered by the tie policy (trec_eval: scores as 32-bit floats, "
            f"then doc id descending; stable: file order); {name}_min and {name}_max (with "
            "--diagnostics) give the values under the worst and best order of the tied "
            "documents",
        ),
        (
            "Queries missing from the run",
            "a query of the qrels that the run does not answer scores 0 and counts in the mean "
            "(trec_eval -c); a warning counts them",
        ),
        ("Queries without relevant documents", _no_relevant(m)),
    )


def card(metric: str) -> MetricCard:
    """The card of a metric name (``recall@20``, ``mrr``, ``P@5``; ``recall@k`` for the
    measure in general), with the cutoff written in.

    Raises:
        ValueError: an unknown metric name.
    """
    text = str(metric).strip()
    general = text.lower().endswith("@k")
    m, k = parse_name(text[:-2] if general else text)
    name = m.example if general else m.name if k is None else f"{m.name}@{k}"
    title = m.title if k is not None or general else m.title.replace("@{k}", "")
    notes = (("Notes", fill(m.notes, k)),) if m.notes else ()
    return MetricCard(
        name=name,
        title=fill(title, k),
        formula=fill(m.formula, k),
        cutoff=_cutoff_text(m, k, general),
        reference=_references(m, k) or (("Reference", "none (a user measure)"),),
        semantics=(
            *_semantics(name, m),
            ("Saved depth", _saved_depth(m, k, general)),
            *notes,
        ),
    )


def cards_text() -> str:
    """Every measure's card (``name@k`` form), for ``--help-metrics``."""
    blocks = [card(m.example).text() for m in REGISTRY.values()]
    return "\n\n".join(blocks) + "\n"


def measures_table() -> str:
    """A Markdown table of every measure: name, formula, trec_eval and ir_measures names."""
    rows = ["| name | formula | trec_eval | ir_measures |", "|---|---|---|---|"]
    for m in REGISTRY.values():
        texts = (m.formula, m.trec_eval, m.ir_measures)
        cells = [m.example, *(fill(t, None) or "—" for t in texts)]
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(rows)


def _module_of(fn: object) -> str:
    name = getattr(fn, "__module__", "") or ""
    module = sys.modules.get(name)
    return getattr(module, "__file__", None) or name
