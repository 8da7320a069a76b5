"""CSV cells a spreadsheet will not run: formula neutralization for every CSV this project writes.

A spreadsheet (Excel, LibreOffice, Google Sheets) opening a CSV evaluates a cell that starts
with ``=``, ``+``, ``-`` or ``@`` as a formula (``=HYPERLINK(...)``, ``@SUM(...)``,
``-2+3``), and some also after a leading tab or carriage return. Text from data files and from
users (query ids, slice values, model names, tags, notes, authors) reaches our CSV exports, so
every text cell goes through :func:`neutralize` (OWASP's advice on CSV injection):

* a cell that starts with ``=``, ``+``, ``-``, ``@``, TAB or CR gets a ``'`` in front (the
  spreadsheet shows the text, with no formula), except a plain number (``-1``, ``+2.5``,
  ``-3e-4``): a query id ``-1`` stays ``-1`` (a spreadsheet shows the number -1, nothing runs);
* a cell that already starts with ``'`` followed (after more ``'``) by one of those characters
  gets one more ``'``, so the rule can be undone exactly;
* NUL characters are dropped (no tool reads them as text; the notes database refuses them);
* numbers (int, float, bool columns) are written as they are.

Readers of our CSV files undo it with :func:`unneutralize` (one leading ``'`` removed from a
cell whose text after its leading ``'`` starts with ``= + - @``, TAB or CR), or
:func:`read_csv` for a whole file: ``unneutralize(neutralize(s)) == s`` for every text without
NUL. In a spreadsheet, the ``'`` of a neutralized cell is the usual "text" mark.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas and pyarrow are imported where used: the command line's fast path
    import pandas as pd  # writes CSV without pandas
    import pyarrow as pa

__all__ = [
    "FORMULA_START",
    "neutralize",
    "neutralize_arrow",
    "neutralize_frame",
    "neutralize_row",
    "read_csv",
    "unneutralize",
]

#: Characters that start a formula in a spreadsheet cell.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_NEEDS_MARK = re.compile(r"'*[=+\-@\t\r]")
_MARKED = re.compile(r"''*[=+\-@\t\r]")


def neutralize(value: object) -> object:
    """``value`` as a safe CSV cell (see the module docstring); non-text values unchanged."""
    if not isinstance(value, str):
        return value
    text = value.replace("\0", "") if "\0" in value else value
    if _NEEDS_MARK.match(text) and not _PLAIN_NUMBER.fullmatch(text):
        return "'" + text
    return text


def unneutralize(value: object) -> object:
    """Undo :func:`neutralize` on a cell read from one of our CSV files: one leading ``'`` is
    removed when the text after the leading ``'`` characters starts with a formula character;
    anything else is returned as it is."""
    if isinstance(value, str) and _MARKED.match(value):
        return value[1:]
    return value


def neutralize_row(row: Iterable[object]) -> list[object]:
    """Every cell of a ``csv.writer`` row through :func:`neutralize`."""
    return [neutralize(v) for v in row]


def neutralize_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text cells (object, string and categorical text columns) and
    text column names went through :func:`neutralize`; numeric columns are left as they are
    (vectorized: only the cells that start with a formula character or hold a NUL are
    rewritten; a categorical column with such a cell becomes an object column)."""
    import numpy as np
    import pandas as pd

    out = frame.copy(deep=False)
    for i in range(frame.shape[1]):
        series = frame.iloc[:, i]
        if not (pd.api.types.is_object_dtype(series) or pd.api.types.is_string_dtype(series)):
            continue
        try:
            risky = series.str.match(_NEEDS_MARK.pattern, na=False) | series.str.contains(
                "\0", regex=False, na=False
            )
        except AttributeError:  # an object column without text (numbers, lists)
            continue
        hits = np.flatnonzero(risky.to_numpy(dtype=bool))
        if len(hits):
            values = series.to_numpy(dtype=object, copy=True)
            values[hits] = [neutralize(v) for v in values[hits]]
            # a string column stays one; others (object, categorical: a new text is no
            # category of it) become object columns
            dtype = series.dtype if pd.api.types.is_string_dtype(series.dtype) else object
            out.isetitem(i, pd.Series(values, index=series.index, dtype=dtype))
    out.columns = [neutralize(c) for c in frame.columns]
    return out


def neutralize_arrow(array: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """:func:`neutralize` on every value of an Arrow string array (dictionary arrays: on their
    dictionary); other types are returned as they are. Vectorized (Arrow compute)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = array.type
    if pa.types.is_dictionary(kind):
        if isinstance(array, pa.ChunkedArray):
            return pa.chunked_array([neutralize_arrow(c) for c in array.chunks], type=kind)
        return pa.DictionaryArray.from_arrays(array.indices, neutralize_arrow(array.dictionary))
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        return array
    text = pc.replace_substring(array, "\0", "")
    risky = pc.and_(
        pc.match_substring_regex(text, "^" + _NEEDS_MARK.pattern),
        pc.invert(pc.match_substring_regex(text, "^(" + _PLAIN_NUMBER.pattern + ")$")),
    )
    quote, empty = pa.scalar("'", type=kind), pa.scalar("", type=kind)
    return pc.if_else(risky, pc.binary_join_element_wise(quote, text, empty), text)


def read_csv(path_or_buffer: object, **kwargs: object) -> pd.DataFrame:
    """``pandas.read_csv`` of one of our CSV exports, every column read as text and every cell
    through :func:`unneutralize` (empty cells stay empty strings)."""
    import pandas as pd

    kwargs = {"dtype": "str", "keep_default_na": False, **kwargs}
    frame = pd.read_csv(path_or_buffer, **kwargs)  # type: ignore[arg-type]
    for column in frame.columns:
        frame[column] = frame[column].map(unneutralize)
    frame.columns = [unneutralize(c) for c in frame.columns]
    return frame
