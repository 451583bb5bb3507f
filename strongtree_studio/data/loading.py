"""Read an uploaded table (CSV, Excel, Parquet) into a DataFrame, with readable errors.

CSV text is decoded here, not by the parser: a byte-order mark decides (UTF-8,
UTF-16, UTF-32); UTF-16 without one is recognised by its zero bytes; other text
is UTF-8 when it decodes as such, else Windows-1252 (Latin-1's superset), and
the note says so.  Binary content named .csv is refused.
"""

from __future__ import annotations

import csv
import hashlib
import importlib.util
import io
import re
import zipfile
from dataclasses import dataclass
from pathlib import PurePath

import pandas as pd

from strongtree_core.csv_format import read_decimal_commas, sniff_separator, text_lines
from strongtree_core.words import LABEL_LIMIT, cut_text

#: File types the uploader accepts.
UPLOAD_TYPES = ("csv", "txt", "xlsx", "xls", "parquet")

#: The uploader's help: a larger file is refused by the browser before the page sees it, with a
#: message shown only on hover, so the limit is said here beforehand ({larger}: one of the two below).
UPLOAD_HELP = (
    "The first row must hold the column names. Files up to {limit} MB: save a larger table as Parquet "
    "(usually several times smaller than its CSV), or {larger}. "
    "Nothing is sent anywhere: the file stays on this server."
)
UPLOAD_LARGER_SERVER = "open it from the tab On this server"
UPLOAD_LARGER = "ask whoever runs this server to offer its folder (STRONGTREE_DATA_DIR)"
ERR_EMPTY = "The file {name!r} is empty. Upload a table with a header row and at least {min_rows} data rows."
ERR_HEADER_ONLY = (
    "The file {name!r} has a header row but no data rows. Upload a table with at least {min_rows} rows "
    "below the header."
)
ERR_TYPE = "Files ending in {suffix!r} are not supported. Upload a CSV, Excel (.xlsx) or Parquet file."
ERR_PARSE = "Could not read {name!r} as {kind}: {reason}. Check that the file is a valid {kind} file."
ERR_EXCEL_DAMAGED = (
    "Could not read {name!r} as Excel: the file is damaged or incomplete (an .xlsx file is a zip archive and "
    "this one does not open). Save it again from the spreadsheet program, or export it as CSV."
)
ERR_OLD_EXCEL = (
    "{name!r} is an old-style Excel file (.xls), which this server cannot read. Save it as .xlsx or CSV "
    "and upload it again."
)
ERR_BINARY = (
    "The file {name!r} does not look like a CSV file: it holds binary data, not text. Upload the table as "
    "CSV text, or as Excel (.xlsx) or Parquet with that file ending."
)
ERR_BAD_BOM = (
    "The file {name!r} starts with a {encoding} byte-order mark but is not valid {encoding} text ({reason}). "
    "Save it again as UTF-8 CSV and upload it."
)
NOTE_ENCODING = (
    "{name!r} is not UTF-8 text; it was read as {encoding}. If some letters look wrong, save the file as "
    "UTF-8 CSV and upload it again."
)
ERR_TOO_FEW_ROWS = (
    "The table {name!r} has {n_rows} data rows; at least {min_rows} are needed to learn and test a tree."
)
ERR_TOO_FEW_COLUMNS = (
    "The table {name!r} has {n_cols} column(s); at least two are needed (one target and one feature). "
    "If it is a CSV with another separator, save it with commas or semicolons."
)
ERR_DUPLICATE_COLUMNS = "The table {name!r} has repeated column names: {names}. Rename them so each is unique."
ERR_NO_HEADER = (
    "The first row of {name!r} names {named} of its {n_cols} columns, so it is not a row of column names. Put the "
    "column names in the first row (delete any title or empty rows above them) and upload the file again."
)

#: Smallest table the app accepts.
MIN_ROWS = 10

#: Byte-order marks, longest first: (mark, codec that drops it, name shown to the user).
BYTE_ORDER_MARKS = (
    (b"\xff\xfe\x00\x00", "utf-32", "UTF-32"),
    (b"\x00\x00\xfe\xff", "utf-32", "UTF-32"),
    (b"\xef\xbb\xbf", "utf-8-sig", "UTF-8"),
    (b"\xff\xfe", "utf-16", "UTF-16"),
    (b"\xfe\xff", "utf-16", "UTF-16"),
)
#: The 8-bit encoding assumed for text that is not UTF-8, and its fallback.
LEGACY_ENCODINGS = (("cp1252", "Windows-1252 (Western European)"), ("latin-1", "Latin-1 (ISO-8859-1)"))
#: First bytes of an old-style (.xls) Excel file.
OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
#: Share of control characters above which decoded "text" counts as binary.
MAX_CONTROL_SHARE = 0.01
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")


class LoadError(ValueError):
    """A table could not be read; the message says why and what to do."""


@dataclass(frozen=True)
class TableFile:
    """A table read from a file, with what reading it assumed (``notes``)."""

    frame: pd.DataFrame
    notes: tuple[str, ...] = ()


def table_name(file_name: str) -> str:
    """An uploaded file's name as the table's name: cut to :data:`~strongtree_core.words.LABEL_LIMIT`
    characters with its extension kept (a name of 20,000 characters was shown whole on every page)."""
    if len(file_name) <= LABEL_LIMIT:
        return file_name
    suffix = PurePath(file_name).suffix if len(PurePath(file_name).suffix) <= 10 else ""
    return cut_text(file_name[: len(file_name) - len(suffix)], LABEL_LIMIT - len(suffix)) + suffix


def read_table(name: str, data: bytes) -> pd.DataFrame:
    """The table in the file ``name`` (see :func:`load_file`)."""
    return load_file(name, data).frame


def load_file(name: str, data: bytes) -> TableFile:
    """Parse ``data`` as the table file ``name`` (type from its extension).

    Parameters
    ----------
    name : str
        File name as uploaded; its suffix picks the reader.
    data : bytes

    Returns
    -------
    TableFile
        The table and, for CSV text that is not UTF-8, a note naming the
        encoding assumed.

    Raises
    ------
    LoadError
        Empty file, unsupported type, binary or undecodable CSV, unreadable
        content, fewer than :data:`MIN_ROWS` rows or fewer than two columns.
    """
    suffix = PurePath(name).suffix.lower().lstrip(".")
    if not data.strip():
        raise LoadError(ERR_EMPTY.format(name=name, min_rows=MIN_ROWS))
    if suffix not in UPLOAD_TYPES:
        raise LoadError(ERR_TYPE.format(suffix="." + suffix if suffix else name))
    kind = {"csv": "CSV", "txt": "CSV", "xlsx": "Excel", "xls": "Excel", "parquet": "Parquet"}[suffix]
    notes: tuple[str, ...] = ()
    if kind == "CSV":
        text, notes = decode_text(name, data)
        frame, read_notes = _parse_csv(name, text)
        notes += read_notes
    else:
        frame = _parse_binary(name, data, kind)
    return TableFile(check_table(name, frame), notes)


def decode_text(name: str, data: bytes) -> tuple[str, tuple[str, ...]]:
    """The text of a CSV file and notes on the encoding assumed (none for UTF-8 or a byte-order mark)."""
    for mark, codec, label in BYTE_ORDER_MARKS:
        if data.startswith(mark):
            try:
                return data.decode(codec), ()
            except UnicodeDecodeError as err:
                raise LoadError(ERR_BAD_BOM.format(name=name, encoding=label, reason=err.reason)) from None
    utf16 = _utf16_without_mark(data)
    if utf16 is not None:
        codec, label = utf16
        try:
            text = data.decode(codec)
        except UnicodeDecodeError:
            raise LoadError(ERR_BINARY.format(name=name)) from None
        return _text_only(name, text), (NOTE_ENCODING.format(name=name, encoding=label),)
    if b"\x00" in data:
        raise LoadError(ERR_BINARY.format(name=name))
    try:
        return _text_only(name, data.decode("utf-8")), ()
    except UnicodeDecodeError:
        pass
    for codec, label in LEGACY_ENCODINGS:
        try:
            text = data.decode(codec)
        except UnicodeDecodeError:
            continue
        return _text_only(name, text), (NOTE_ENCODING.format(name=name, encoding=label),)
    raise AssertionError("latin-1 decodes any bytes")  # pragma: no cover


def _utf16_without_mark(data: bytes) -> tuple[str, str] | None:
    """UTF-16 without a byte-order mark: text in Latin script has a zero in every other byte."""
    sample = data[:4096]
    pairs = len(sample) // 2
    if pairs < 2:
        return None
    even, odd = sample[0 : 2 * pairs : 2].count(0), sample[1 : 2 * pairs : 2].count(0)
    if odd > 0.4 * pairs and even < 0.05 * pairs:
        return "utf-16-le", "UTF-16 (little-endian, without a byte-order mark)"
    if even > 0.4 * pairs and odd < 0.05 * pairs:
        return "utf-16-be", "UTF-16 (big-endian, without a byte-order mark)"
    return None


def _text_only(name: str, text: str) -> str:
    """``text``, unless control characters show it is binary data."""
    if len(_CONTROL.findall(text[:65536])) > MAX_CONTROL_SHARE * min(len(text), 65536):
        raise LoadError(ERR_BINARY.format(name=name))
    return text


def _parse_csv(name: str, text: str) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """The table in CSV ``text``, and notes on what reading it assumed (numbers with a decimal comma)."""
    text = text_lines(text)
    sample = text[:65536]
    if not sample.strip():
        raise LoadError(ERR_EMPTY.format(name=name, min_rows=MIN_ROWS))
    try:
        sep = sniff_separator(sample)
        _check_header(name, next(csv.reader(io.StringIO(sample), delimiter=sep), []), first_row=True)
        frame = pd.read_csv(io.StringIO(text), sep=sep)
    except LoadError:
        raise
    except pd.errors.EmptyDataError:
        raise LoadError(ERR_EMPTY.format(name=name, min_rows=MIN_ROWS)) from None
    except (ValueError, csv.Error, pd.errors.ParserError) as err:
        raise LoadError(ERR_PARSE.format(name=name, kind="CSV", reason=_reason(err))) from None
    if frame.empty and frame.shape[1]:
        raise LoadError(ERR_HEADER_ONLY.format(name=name, min_rows=MIN_ROWS))
    return read_decimal_commas(frame, sep)


def _parse_binary(name: str, data: bytes, kind: str) -> pd.DataFrame:
    if kind == "Excel" and not zipfile.is_zipfile(io.BytesIO(data)):
        old = data.startswith(OLE2_MAGIC) and importlib.util.find_spec("xlrd") is None
        raise LoadError((ERR_OLD_EXCEL if old else ERR_EXCEL_DAMAGED).format(name=name))
    try:
        if kind == "Excel":
            # The first row as written: pandas renames a repeated name ('a' again becomes 'a.1') and an
            # empty one ('Unnamed: 1'), which hid a title or empty row above the names.
            first_row = pd.read_excel(io.BytesIO(data), header=None, nrows=1)
            _check_header(name, first_row.iloc[0].tolist() if len(first_row) else [], first_row=True)
            return pd.read_excel(io.BytesIO(data))
        frame = pd.read_parquet(io.BytesIO(data))
        # A named index (written by DataFrame.set_index(...).to_parquet()) is a column of the table: pandas
        # made it the index again, and the column was gone from the page.
        return frame.reset_index() if any(n is not None for n in frame.index.names) else frame
    except zipfile.BadZipFile:
        raise LoadError(ERR_EXCEL_DAMAGED.format(name=name)) from None
    except LoadError:
        raise
    except Exception as err:  # a third-party parser on arbitrary bytes: any failure is a message
        raise LoadError(ERR_PARSE.format(name=name, kind=kind, reason=_reason(err))) from None


def _reason(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0].rstrip(".") if text else type(err).__name__


def _check_header(name: str, columns: list, *, first_row: bool = False) -> None:
    """Refuse repeated column names; and a ``first_row`` of the file (as written, before the parser names
    its empty cells apart) that leaves more than half of the columns without a name."""
    names = ["" if c is None or (isinstance(c, float) and c != c) else str(c).strip() for c in columns]
    repeated = sorted({c for c in names if (c or not first_row) and names.count(c) > 1})
    if repeated:
        raise LoadError(ERR_DUPLICATE_COLUMNS.format(name=name, names=", ".join(map(repr, repeated))))
    named = sum(map(bool, names))
    if first_row and named * 2 < len(names):
        raise LoadError(ERR_NO_HEADER.format(name=name, named=named, n_cols=len(names)))


def check_table(name: str, frame: pd.DataFrame) -> pd.DataFrame:
    """Refuse tables the app cannot learn from; strip spaces around column names."""
    frame = frame.rename(columns=lambda c: str(c).strip())
    _check_header(name, list(frame.columns))
    if frame.shape[1] < 2:
        raise LoadError(ERR_TOO_FEW_COLUMNS.format(name=name, n_cols=frame.shape[1]))
    if frame.shape[0] < MIN_ROWS:
        raise LoadError(ERR_TOO_FEW_ROWS.format(name=name, n_rows=frame.shape[0], min_rows=MIN_ROWS))
    return frame


def fingerprint(frame: pd.DataFrame) -> str:
    """A short content hash, to tell whether a stored run was learned on this table."""
    digest = hashlib.sha256()
    digest.update("\x1f".join(map(str, frame.columns)).encode())
    digest.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    return digest.hexdigest()[:16]


def type_words(values: pd.Series) -> str:
    """What a column holds, in words (pandas' own names, such as ``object`` or ``int64``, mean nothing to a reader)."""
    dtype = values.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return "true / false"
    if isinstance(dtype, pd.CategoricalDtype):
        return "categories"
    if pd.api.types.is_integer_dtype(dtype):
        return "whole numbers"
    if pd.api.types.is_numeric_dtype(dtype):
        return "numbers"
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "dates"
    return "text"


def column_overview(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per column: type, missing count, number of distinct values, examples."""
    return pd.DataFrame(
        {
            "column": frame.columns,
            "type": [type_words(frame[c]) for c in frame.columns],
            "missing": frame.isna().sum().to_numpy(),
            "distinct": frame.nunique().to_numpy(),
            "examples": [", ".join(map(str, frame[c].dropna().unique()[:4])) for c in frame.columns],
        }
    )
