"""CSV text: its lines and separator, guessed from a sample the way the dashboard reads uploads, its
numbers written with a decimal comma, and cells made safe to open in a spreadsheet (no formula runs
from a cell a user typed)."""

from __future__ import annotations

import csv
import re

import pandas as pd

from strongtree_core.numbers import read_decimal_comma, read_integer

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


def text_lines(text: str) -> str:
    """``text`` with its lines ended by a line feed when it has none: a file whose lines end in a
    carriage return alone (old Macintosh text) was one line with carriage returns in its fields
    ("new-line character seen in unquoted field")."""
    return text.replace("\r", "\n") if "\n" not in text else text


#: What a CSV file's separator is called in a note.
SEPARATOR_WORDS = {";": "semicolons", "\t": "tabs", "|": "pipes", ",": "commas"}
#: Said for each column of CSV text read as numbers with a decimal comma.
NOTE_DECIMAL_COMMA = (
    "Column {column!r} was read as numbers written with a decimal comma ({example!r} as {value}), as in "
    "files whose fields are separated by {separator}."
)


def read_decimal_commas(frame: pd.DataFrame, sep: str) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """``frame``, read from CSV text separated by ``sep``, with each text column whose every value is a
    number written with a decimal comma (``51,26``, ``1.234,5``) or a whole number, one at least with a
    comma, read as those numbers; and a note for each such column.  A file separated by commas is
    returned as read (a comma there is no decimal mark).

    Spreadsheets where the comma is the decimal mark write CSV files separated by semicolons; such a
    column was read as text, and the encoding then refused it (or took each value as a category).

    Examples
    --------
    >>> import io
    >>> frame = pd.read_csv(io.StringIO("score;n\\n51,26;1\\n7;2\\n"), sep=";")
    >>> read_decimal_commas(frame, ";")[0]["score"].tolist()
    [51.26, 7.0]
    """
    if sep == ",":
        return frame, ()
    out, notes = frame, []
    for column in frame.columns:
        values = frame[column]
        if not (values.dtype == object or pd.api.types.is_string_dtype(values.dtype)):
            continue
        distinct = pd.Series(pd.unique(values.dropna()), dtype=object)
        if distinct.empty or not all(isinstance(v, str) for v in distinct):
            continue
        read = {v: read_decimal_comma(v) for v in distinct}
        example = next((v for v in distinct if read[v] is not None), None)
        read.update({v: float(read_integer(v)) for v in distinct if read[v] is None and read_integer(v) is not None})
        if example is None or any(number is None for number in read.values()):
            continue
        if out is frame:
            out = frame.copy()
        out[column] = values.map(read).astype(float)
        notes.append(NOTE_DECIMAL_COMMA.format(column=str(column), example=example, value=f"{read[example]:g}",
                                               separator=SEPARATOR_WORDS.get(sep, repr(sep))))
    return out, tuple(notes)


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
