"""Where a table lies: a Parquet file, a folder or glob of Parquet files, or a CSV file.

:func:`resolve` turns what the user named into a :class:`TableFiles` (the files, one
format), or raises :class:`~strongtree_core.errors.StrongTreeError` with a message that
says what is wrong and how to fix it.  Nothing is read here but the folder listing.
"""

from __future__ import annotations

import glob as globbing
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Sequence

from strongtree_core.errors import StrongTreeError

Format = Literal["parquet", "csv"]
#: File endings of each format.
SUFFIXES: dict[str, Format] = {".parquet": "parquet", ".pq": "parquet", ".parq": "parquet",
                               ".csv": "csv", ".txt": "csv", ".tsv": "csv"}

NO_SUCH_TABLE = ("No table at {path}: there is no such file or folder. Give a Parquet file, a folder of Parquet "
                 "files, a glob such as 'claims/*.parquet', or a CSV file.")
NO_MATCH = "{pattern!r} matches no file. Check the folder and the pattern (e.g. 'claims/part-*.parquet')."
EMPTY_FOLDER = ("The folder {path} holds no Parquet or CSV file (files ending in .parquet, .pq or .csv, in it or in "
                "its sub-folders).")
UNKNOWN_FORMAT = ("{path} is neither Parquet (.parquet, .pq) nor CSV (.csv, .txt, .tsv): rename it with the ending "
                  "of its format.")
MIXED_FORMATS = ("{path} holds both Parquet and CSV files (e.g. {parquet} and {csv}): a table is one format. Name "
                 "the files of one kind with a glob, e.g. '{glob}'.")
NO_PYARROW = ("Reading {path} where it lies needs pyarrow, which is not installed: pip install 'strongtree[outofcore]' "
              "(or pip install pyarrow).")


class TableError(StrongTreeError):
    """The table named cannot be read as asked: no such file, no such column, an unreadable file."""


@dataclass(frozen=True)
class TableFiles:
    """The files of one table and their format.

    Attributes
    ----------
    files : tuple of str
        Every file of the table, sorted (the parts of a table are read in this order).
    format : {"parquet", "csv"}
    name : str
        How the table is named in messages and in the fitted tree (what the user gave).
    """

    files: tuple[str, ...]
    format: Format
    name: str


def resolve(source: str | os.PathLike | Sequence[str | os.PathLike]) -> TableFiles:
    """The files of the table ``source`` names: a file, a folder (every Parquet or CSV file in it and its
    sub-folders), a glob pattern, or a list of files.

    Raises
    ------
    StrongTreeError
        Nothing there, a folder or pattern without a table file, an unknown ending, or both formats at once.
    """
    if isinstance(source, (list, tuple)):
        files = [str(Path(p)) for p in source]
        name = f"{len(files)} files" if len(files) != 1 else files[0]
        for f in files:
            if not Path(f).is_file():
                raise TableError(NO_SUCH_TABLE.format(path=f))
        return _one_format(sorted(files), name)
    text = str(source)
    path = Path(text)
    if path.is_file():
        if path.suffix.lower() not in SUFFIXES:
            raise TableError(UNKNOWN_FORMAT.format(path=text))
        return TableFiles((str(path),), SUFFIXES[path.suffix.lower()], text)
    if path.is_dir():
        found = sorted(str(p) for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES
                       and not any(part.startswith((".", "_")) for part in p.relative_to(path).parts))
        if not found:
            raise TableError(EMPTY_FOLDER.format(path=text))
        return _one_format(found, text)
    if globbing.has_magic(text):
        found = sorted(p for p in globbing.glob(text, recursive=True) if Path(p).is_file())
        if not found:
            raise TableError(NO_MATCH.format(pattern=text))
        unknown = [p for p in found if Path(p).suffix.lower() not in SUFFIXES]
        if unknown:
            raise TableError(UNKNOWN_FORMAT.format(path=unknown[0]))
        return _one_format(found, text)
    raise TableError(NO_SUCH_TABLE.format(path=text))


def _one_format(files: list[str], name: str) -> TableFiles:
    formats = {SUFFIXES[Path(f).suffix.lower()] for f in files}
    if len(formats) > 1:
        parquet = next(f for f in files if SUFFIXES[Path(f).suffix.lower()] == "parquet")
        csv = next(f for f in files if SUFFIXES[Path(f).suffix.lower()] == "csv")
        raise TableError(MIXED_FORMATS.format(path=name, parquet=parquet, csv=csv,
                                                   glob=str(Path(name) / "**" / "*.parquet")))
    return TableFiles(tuple(files), formats.pop(), name)


def is_table_path(text: str) -> bool:
    """Whether ``text`` names a table that is read where it lies rather than loaded whole: a Parquet
    file, a folder or a glob (a single CSV file is loaded as before)."""
    path = Path(text)
    if path.is_dir() or globbing.has_magic(text):
        return True
    return path.suffix.lower() in (".parquet", ".pq", ".parq")
