"""A codebook: what the codes of every coded column mean, read from one file.

Surveys and public data sets write categories as numbers and ship a codebook
beside them (German credit: 21 coded columns; COMPAS: 7).  Naming values one
column at a time on the Data page would take an afternoon; a codebook names
them all at once.  It is CSV with the columns ``column``, ``code`` and
``label`` (one row per code; comma, semicolon, tab or pipe), or JSON: either
a list of ``{"column", "code", "label"}`` records or ``{column: {code: label}}``.

:func:`read_codebook` parses and checks it (every problem is one of the
messages below, naming the line and the fix); :func:`codebook_edits` turns it
into :class:`~strongtree_studio.data.column_types.ColumnEdit` values for the columns of
the table, keeping each column's chosen kind and any label the codebook does
not mention, and says what it did (columns named, codes absent from the data,
columns absent from the table).
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from typing import Mapping

import pandas as pd

from strongtree_core.csv_format import read_spreadsheet_cell, sniff_separator, spreadsheet_cell
from strongtree_core.encoding.features import level_key
from strongtree_core.words import count_of
from strongtree_studio.data.column_types import MAX_LABELLED, ColumnEdit

#: The header a CSV codebook needs (any order, any case).
FIELDS = ("column", "code", "label")
#: Longest codebook read (bytes).
MAX_BYTES = 2_000_000
#: Longest label kept (the Data page's label boxes take as many).
MAX_LABEL = 60

ERR_EMPTY = "The codebook is empty. Paste or upload CSV with the columns column, code, label (one row per code), or JSON."
ERR_NO_LABELS = "The codebook names no code: every label is empty. Fill in the label column."
ERR_NOT_TEXT = "The codebook is not text (UTF-8). Save it as CSV or JSON in UTF-8 and try again."
ERR_TOO_BIG = "The codebook is {size} long; at most {limit} is read. A codebook names codes, not rows of data."
ERR_HEADER = (
    "The codebook's first line must name the columns column, code and label; it has {found}. "
    "Example:\ncolumn,code,label\nrace,1,African-American"
)
ERR_ROW = "Line {line} of the codebook has no {what}: every line needs a column and a code (and a label, or it is skipped)."
ERR_LABEL_LONG = "Line {line} of the codebook has a label of {n} characters; labels may have at most {limit}."
ERR_CONFLICT = (
    "The codebook gives code {code!r} of {column!r} two labels ({first!r} on line {first_line}, {second!r} on "
    "line {second_line}); keep one."
)
ERR_JSON = (
    "The codebook is JSON but not a codebook ({reason}). Give a list of {{\"column\": ..., \"code\": ..., "
    "\"label\": ...}} records, or {{\"column\": {{\"code\": \"label\"}}}}."
)
#: Reason of ERR_JSON for lists or objects nested deeper than the parser reads.
JSON_TOO_DEEP = "it nests lists or objects deeper than can be read; a codebook needs two levels"
ERR_NO_MATCH = (
    "None of the codebook's columns ({columns}) is a column of this table. Check the spelling: column names must "
    "match exactly."
)


class CodebookError(ValueError):
    """A codebook that cannot be used; the message says why and how to fix it."""


@dataclass(frozen=True)
class Codebook:
    """Labels of codes, by column: ``((column, code, label), ...)`` in the order read."""

    entries: tuple[tuple[str, str, str], ...]

    def by_column(self) -> dict[str, dict[str, str]]:
        out: dict[str, dict[str, str]] = {}
        for column, code, label in self.entries:
            out.setdefault(column, {})[code] = label
        return out


@dataclass(frozen=True)
class CodebookResult:
    """What applying a codebook did: the new edits and sentences for the user."""

    edits: dict[str, ColumnEdit]
    named: tuple[str, ...]  # columns whose codes were named
    missing_columns: tuple[str, ...]  # codebook columns not in the table
    unused_codes: dict[str, tuple[str, ...]]  # column -> codes the data does not hold
    unnamed_values: dict[str, tuple[str, ...]]  # column -> values the codebook does not name

    def sentences(self) -> list[str]:
        out = [f"Named the codes of {count_of(len(self.named), 'column')}: {', '.join(self.named)}."]
        if self.missing_columns:
            out.append(f"Not in this table, so left aside: {', '.join(self.missing_columns)}.")
        for column, codes in self.unnamed_values.items():
            out.append(f"{column}: {count_of(len(codes), 'value')} without a label in the codebook kept as "
                       f"they are ({', '.join(codes[:5])}{', ...' if len(codes) > 5 else ''}).")
        for column, codes in self.unused_codes.items():
            out.append(f"{column}: {count_of(len(codes), 'code')} of the codebook not in the data "
                       f"({', '.join(codes[:5])}{', ...' if len(codes) > 5 else ''}).")
        return out


def read_codebook(data: bytes | str) -> Codebook:
    """The codebook in ``data`` (CSV or JSON, see the module), or :class:`CodebookError`."""
    if isinstance(data, bytes):
        if len(data) > MAX_BYTES:
            raise CodebookError(ERR_TOO_BIG.format(size=f"{len(data):,} bytes", limit=f"{MAX_BYTES:,} bytes"))
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise CodebookError(ERR_NOT_TEXT) from None
    text = data.strip().lstrip("\ufeff")
    if not text:
        raise CodebookError(ERR_EMPTY)
    if len(text) > MAX_BYTES:
        raise CodebookError(ERR_TOO_BIG.format(size=f"{len(text):,} characters", limit=f"{MAX_BYTES:,} bytes"))
    rows = _json_rows(text) if text[0] in "[{" else _csv_rows(text)
    seen: dict[tuple[str, str], tuple[str, int]] = {}
    entries: list[tuple[str, str, str]] = []
    for line, column, code, label in rows:
        for what, value in (("column", column), ("code", code)):
            if not value:
                raise CodebookError(ERR_ROW.format(line=line, what=what))
        if not label:  # left empty (a template partly filled in): the code keeps its own name
            continue
        if len(label) > MAX_LABEL:
            raise CodebookError(ERR_LABEL_LONG.format(line=line, n=len(label), limit=MAX_LABEL))
        key = (column, code)
        if key in seen:
            first, first_line = seen[key]
            if first != label:
                raise CodebookError(ERR_CONFLICT.format(code=code, column=column, first=first, first_line=first_line,
                                                        second=label, second_line=line))
            continue
        seen[key] = (label, line)
        entries.append((column, code, label))
    if not entries:
        raise CodebookError(ERR_NO_LABELS if rows else ERR_EMPTY)
    return Codebook(tuple(entries))


def _clean(value) -> str:
    return "" if value is None else " ".join(level_key(value).split())


def _csv_rows(text: str) -> list[tuple[int, str, str, str]]:
    reader = csv.reader(io.StringIO(text), delimiter=sniff_separator(text))
    header = [h.strip().lower() for h in next(reader, [])]
    if any(f not in header for f in FIELDS):
        raise CodebookError(ERR_HEADER.format(found=", ".join(header) if header else "nothing"))
    at = {f: header.index(f) for f in FIELDS}
    rows = []
    for line, fields in enumerate(reader, start=2):
        if not any(f.strip() for f in fields):
            continue
        get = [read_spreadsheet_cell(fields[at[f]]) if at[f] < len(fields) else "" for f in FIELDS]
        # The column name is kept as written (names match exactly); codes and labels lose outer spaces.
        rows.append((line, get[0].strip(), _clean(get[1]), _clean(get[2])))
    return rows


def _json_rows(text: str) -> list[tuple[int, str, str, str]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise CodebookError(ERR_JSON.format(reason=f"it does not parse: {err.msg} at line {err.lineno}")) from None
    except RecursionError:  # a 100 KB "[[[[..." is under the size limit and deeper than the parser goes
        raise CodebookError(ERR_JSON.format(reason=JSON_TOO_DEEP)) from None
    rows = []
    if isinstance(data, dict):
        for column, codes in data.items():
            if not isinstance(codes, dict):
                raise CodebookError(ERR_JSON.format(reason=f"the entry of {column!r} is not an object of code: label"))
            rows += [(len(rows) + 1, str(column).strip(), _clean(code), _clean(label)) for code, label in codes.items()]
    elif isinstance(data, list):
        for i, record in enumerate(data, start=1):
            if not isinstance(record, dict) or any(f not in record for f in FIELDS):
                raise CodebookError(ERR_JSON.format(reason=f"record {i} lacks one of column, code, label"))
            rows.append((i, str(record["column"]).strip(), _clean(record["code"]), _clean(record["label"])))
    else:
        raise CodebookError(ERR_JSON.format(reason="it is neither a list nor an object"))
    return rows


def codebook_edits(codebook: Codebook, frame: pd.DataFrame, edits: Mapping[str, ColumnEdit]) -> CodebookResult:
    """``edits`` with the codebook's labels added for every column of ``frame`` it names.

    ``frame`` is the table as loaded (codes, not labels).  A column keeps its
    chosen kind and the labels it already had for codes the codebook does not
    mention; the codebook's label wins for a code it names.
    """
    columns = {str(c): c for c in frame.columns}
    book = codebook.by_column()
    missing = tuple(c for c in book if c not in columns)
    if len(missing) == len(book):
        raise CodebookError(ERR_NO_MATCH.format(columns=", ".join(missing[:8]) + (", ..." if len(missing) > 8 else "")))
    out = dict(edits)
    named: list[str] = []
    unused: dict[str, tuple[str, ...]] = {}
    unnamed: dict[str, tuple[str, ...]] = {}
    for column, labels in book.items():
        if column not in columns:
            continue
        values = frame[columns[column]].dropna()
        present = list(dict.fromkeys(level_key(v.item() if hasattr(v, "item") else v) for v in pd.unique(values)))
        old = edits.get(column, ColumnEdit())
        merged = dict(old.label_map)
        merged.update({code: label for code, label in labels.items() if code in present})
        if len(present) > MAX_LABELLED and not merged:
            continue
        out[column] = ColumnEdit(old.kind if old.kind != "number" else "auto", tuple(sorted(merged.items())))
        named.append(column)
        absent = tuple(code for code in labels if code not in present)
        if absent:
            unused[column] = absent
        left = tuple(v for v in present if v not in merged)
        if left and len(present) <= MAX_LABELLED:
            unnamed[column] = tuple(sorted(left, key=_natural))
    return CodebookResult({c: e for c, e in out.items() if not e.empty}, tuple(named), missing, unused, unnamed)


def _natural(text: str):
    try:
        return (0, float(text), text)
    except ValueError:
        return (1, 0.0, text)


def codebook_template(frame: pd.DataFrame, limit: int = MAX_LABELLED) -> str:
    """A CSV codebook to fill in: one row per value of every column with few values (labels empty)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(FIELDS)
    for column in frame.columns:
        values = frame[column].dropna()
        unique = pd.unique(values)
        if len(unique) > min(limit, 20) or len(unique) == 0:
            continue
        keys = sorted({level_key(v.item() if hasattr(v, "item") else v) for v in unique}, key=_natural)
        for key in keys:
            writer.writerow((spreadsheet_cell(column), spreadsheet_cell(key), ""))  # opened in a spreadsheet
    return out.getvalue()
