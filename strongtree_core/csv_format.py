"""CSV text: its separator, guessed from a sample the way the dashboard reads uploads, and cells made
safe to open in a spreadsheet (no formula runs from a cell a user typed)."""

from __future__ import annotations

import csv
import re

import pandas as pd

#: Separators recognised in CSV text: comma, semicolon, tab and pipe.
CSV_SEPARATORS = ",;\t|"
#: Characters of a file read to guess its separator.
SNIFF_CHARS = 65536


def sniff_separator(sample: str) -> str:
    """The separator among :data:`CSV_SEPARATORS` that splits every line of ``sample``
    into the same number of fields (``csv.Sniffer``); a comma when none does."""
    try:
        return csv.Sniffer().sniff(sample[:SNIFF_CHARS], delimiters=CSV_SEPARATORS).delimiter
    except csv.Error:
        return ","


# ----------------------------------------------------------- cells a spreadsheet would run
#: First characters that make a spreadsheet read a cell as a formula (OWASP, "CSV Injection"):
#: equals, plus, minus, at, tab and carriage return.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def runs_as_formula(text: str) -> bool:
    """Whether a spreadsheet opening ``text`` as a cell would run it as a formula (a plain number such as
    ``-5`` or ``+1.5e3`` is read as that number, and is left alone)."""
    return text.startswith(FORMULA_STARTS) and _PLAIN_NUMBER.fullmatch(text) is None


def spreadsheet_cell(value):
    """``value`` as a CSV cell that a spreadsheet shows and never runs: text that would be read as a
    formula gets a leading single quote (OWASP's advice); anything else is returned unchanged."""
    if isinstance(value, str) and runs_as_formula(value.lstrip("'")):
        return "'" + value  # also a cell already quoted ('=x): it keeps its own quote when read back
    return value


def read_spreadsheet_cell(text: str) -> str:
    """The value of a cell :func:`spreadsheet_cell` wrote (the quote before a formula taken off again), so that
    a file written for a spreadsheet and read back gives the values it was written from."""
    if text.startswith("'") and runs_as_formula(text[1:].lstrip("'")):
        return text[1:]
    return text


def spreadsheet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text cells and column names :func:`spreadsheet_cell` made safe to open
    in a spreadsheet (numbers, dates and missing values untouched).

    Examples
    --------
    >>> import pandas as pd
    >>> spreadsheet_safe(pd.DataFrame({"name": ["=cmd|' /C calc'!A0", "-5", "ann"], "n": [1, -2, 3]}))
                      name  n
    0  '=cmd|' /C calc'!A0  1
    1                   -5 -2
    2                  ann  3
    """
    out = frame.copy()
    for column in out.columns:
        values = out[column]
        if values.dtype == object or pd.api.types.is_string_dtype(values) or isinstance(values.dtype, pd.CategoricalDtype):
            out[column] = values.astype(object).map(spreadsheet_cell)
    out.columns = [spreadsheet_cell(c) for c in out.columns]
    return out
