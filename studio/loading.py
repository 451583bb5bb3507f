"""Read an uploaded table (CSV, Excel, Parquet) into a DataFrame, with readable errors."""

from __future__ import annotations

import csv
import hashlib
import io
from pathlib import PurePath

import pandas as pd

#: File types the uploader accepts.
UPLOAD_TYPES = ("csv", "txt", "xlsx", "xls", "parquet")

ERR_EMPTY = "The file {name!r} is empty. Upload a table with a header row and at least {min_rows} data rows."
ERR_TYPE = "Files ending in {suffix!r} are not supported. Upload a CSV, Excel (.xlsx) or Parquet file."
ERR_PARSE = "Could not read {name!r} as {kind}: {reason}. Check that the file is a valid {kind} file."
ERR_TOO_FEW_ROWS = (
    "The table {name!r} has {n_rows} data rows; at least {min_rows} are needed to learn and test a tree."
)
ERR_TOO_FEW_COLUMNS = (
    "The table {name!r} has {n_cols} column(s); at least two are needed (one target and one feature). "
    "If it is a CSV with another separator, save it with commas or semicolons."
)
ERR_DUPLICATE_COLUMNS = "The table {name!r} has repeated column names: {names}. Rename them so each is unique."

#: Separators recognised in CSV files.
CSV_SEPARATORS = ",;\t|"
#: Smallest table the app accepts.
MIN_ROWS = 10


class LoadError(ValueError):
    """A table could not be read; the message says why and what to do."""


def read_table(name: str, data: bytes) -> pd.DataFrame:
    """Parse ``data`` as the table file ``name`` (type from its extension).

    Parameters
    ----------
    name : str
        File name as uploaded; its suffix picks the reader.
    data : bytes

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    LoadError
        Empty file, unsupported type, unreadable content, fewer than
        :data:`MIN_ROWS` rows or fewer than two columns.
    """
    suffix = PurePath(name).suffix.lower().lstrip(".")
    if not data:
        raise LoadError(ERR_EMPTY.format(name=name, min_rows=MIN_ROWS))
    if suffix not in UPLOAD_TYPES:
        raise LoadError(ERR_TYPE.format(suffix="." + suffix if suffix else name))
    kind = {"csv": "CSV", "txt": "CSV", "xlsx": "Excel", "xls": "Excel", "parquet": "Parquet"}[suffix]
    try:
        if kind == "CSV":
            sep = _separator(data)
            _check_header(name, next(csv.reader(io.StringIO(_sample(data)), delimiter=sep), []))
            frame = pd.read_csv(io.BytesIO(data), sep=sep, encoding_errors="replace")
        elif kind == "Excel":
            frame = pd.read_excel(io.BytesIO(data))
        else:
            frame = pd.read_parquet(io.BytesIO(data))
    except LoadError:
        raise
    except pd.errors.EmptyDataError:
        raise LoadError(ERR_EMPTY.format(name=name, min_rows=MIN_ROWS)) from None
    except (ValueError, OSError, ImportError, pd.errors.ParserError, UnicodeDecodeError) as err:
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise LoadError(ERR_PARSE.format(name=name, kind=kind, reason=reason)) from None
    return check_table(name, frame)


def _sample(data: bytes) -> str:
    return data[:65536].decode("utf-8", errors="replace").lstrip("\ufeff")


def _separator(data: bytes) -> str:
    """The CSV separator among comma, semicolon, tab and pipe (comma when unsure)."""
    try:
        return csv.Sniffer().sniff(_sample(data), delimiters=CSV_SEPARATORS).delimiter
    except csv.Error:
        return ","


def _check_header(name: str, columns: list) -> None:
    names = [str(c).strip() for c in columns]
    repeated = sorted({c for c in names if names.count(c) > 1})
    if repeated:
        raise LoadError(ERR_DUPLICATE_COLUMNS.format(name=name, names=", ".join(map(repr, repeated))))


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


def column_overview(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per column: type, missing count, number of distinct values, examples."""
    return pd.DataFrame(
        {
            "column": frame.columns,
            "type": [str(t) for t in frame.dtypes],
            "missing": frame.isna().sum().to_numpy(),
            "distinct": frame.nunique().to_numpy(),
            "examples": [", ".join(map(str, frame[c].dropna().unique()[:4])) for c in frame.columns],
        }
    )
