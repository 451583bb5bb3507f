"""Reading tables and trees, and writing results, for the command line.

``-`` names standard input (a table, a tree) or standard output (``--output``).
Text is UTF-8 (a byte-order mark decides UTF-8 / UTF-16 / UTF-32) unless
``--file-encoding`` names another; the separator is sniffed among comma, semicolon,
tab and pipe, as the dashboard does, and a file not separated by commas may
write its numbers with a decimal comma (each such column is said on standard
error).  Every function returns the message to show instead of raising, so that
the caller decides the exit code.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import sys
import tempfile
from pathlib import Path

import pandas as pd

from strongtree_core.cli.messages import (
    DUPLICATE_COLUMNS,
    NO_ROWS,
    NOT_TEXT,
    OUTPUT_FALLBACK,
    READ_FAILED,
    STDIO,
    TREE_UNREADABLE,
    WRITE_FAILED,
)
from strongtree_core.csv_format import read_decimal_commas, sniff_separator, text_lines
from strongtree_core.encoding import EncodingError
from strongtree_core.tree import FittedTree, StoredTreeError

#: Byte-order marks and the codec that reads (and drops) them, longest first.
BYTE_ORDER_MARKS = (
    (b"\xff\xfe\x00\x00", "utf-32"),
    (b"\x00\x00\xfe\xff", "utf-32"),
    (b"\xef\xbb\xbf", "utf-8-sig"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
)


def shown(path: Path) -> str:
    """How a path reads in messages (standard input / output by name)."""
    return "standard input" if str(path) == STDIO else str(path)


def read_bytes(path: Path) -> bytes:
    """The bytes of a file, or of standard input for ``-``."""
    if str(path) == STDIO:
        return sys.stdin.buffer.read()
    return path.read_bytes()


def decode(data: bytes, encoding: str | None) -> str:
    """Text of ``data``: the encoding named, else its byte-order mark's, else UTF-8."""
    if encoding:
        return data.decode(encoding)
    for mark, codec in BYTE_ORDER_MARKS:
        if data.startswith(mark):
            return data.decode(codec)
    return data.decode("utf-8")


def read_table(path: Path, encoding: str | None) -> pd.DataFrame | str:
    """The CSV table at ``path`` (``-``: standard input), or the message saying why it cannot be used.

    Examples
    --------
    >>> from pathlib import Path
    >>> from strongtree_core.cli import read_table
    >>> _ = Path("semicolons.csv").write_text("a;b\\n1;2\\n3;4\\n", encoding="utf-8")
    >>> read_table(Path("semicolons.csv"), None).shape  # the separator is sniffed
    (2, 2)
    >>> read_table(Path("absent.csv"), None)[:27]
    'Could not read absent.csv: '
    """
    where = shown(path)
    try:
        text = text_lines(decode(read_bytes(path), encoding))
        sep = sniff_separator(text)
        names = next(csv.reader(io.StringIO(text), delimiter=sep), [])
        df = pd.read_csv(io.StringIO(text), sep=sep)
    except UnicodeError as exc:
        return NOT_TEXT.format(path=where, encoding=encoding or "UTF-8", reason=exc)
    except LookupError as exc:  # an unknown --encoding
        return READ_FAILED.format(path=where, reason=exc)
    except (OSError, ValueError, csv.Error, pd.errors.ParserError) as exc:
        return READ_FAILED.format(path=where, reason=exc)
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        renamed = ", ".join(repr(str(c)) for c in df.columns if str(c) not in names)
        return DUPLICATE_COLUMNS.format(path=where, names=", ".join(map(repr, repeated)), renamed=renamed)
    if len(df) == 0:
        return NO_ROWS.format(path=where)
    df, notes = read_decimal_commas(df, sep)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    return df


def read_tree(path: Path) -> FittedTree | str:
    """The tree stored at ``path`` (``-``: standard input), or the message saying why it cannot be read."""
    try:
        return FittedTree.from_json(decode(read_bytes(path), None))
    except OSError as exc:
        return TREE_UNREADABLE.format(path=shown(path), reason=exc.strerror or exc)
    except StoredTreeError as exc:
        return TREE_UNREADABLE.format(path=shown(path), reason=exc.reason)
    except (ValueError, EncodingError, TypeError) as exc:  # not JSON, not a tree (json's error is a ValueError)
        return TREE_UNREADABLE.format(path=shown(path), reason=str(exc).rstrip("."))


def output_problem(path: Path, data: Path | None = None) -> str | None:
    """Why a file could not be written at ``path`` (None when it can): tried, not guessed."""
    if str(path) == STDIO:
        return None
    if data is not None and str(data) != STDIO and path.resolve() == data.resolve():
        return "it is the data file"
    existed = path.exists()
    try:
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError as exc:
        return exc.strerror or str(exc)
    finally:
        if not existed and path.is_file():
            path.unlink()
    return None


def write_text(path: Path, text: str) -> str | None:
    """Write ``text`` to ``path`` (``-``: standard output); the message when that fails."""
    if str(path) == STDIO:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()
        return None
    try:
        replace_file(path, text)
    except OSError as exc:
        return WRITE_FAILED.format(path=path, reason=exc.strerror or exc)
    return None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def replace_file(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all: into a new file beside it, then renamed over it (a
    Ctrl-C or a full disk mid-way leaves the old file, never half a new one).  A path that is not a
    regular file (a device, a pipe) is written directly."""
    path = Path(path)
    if path.exists() and not path.is_file():
        path.write_text(text, encoding="utf-8")
        return
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent if str(path.parent) else ".")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(temporary, path.stat().st_mode & 0o7777 if path.exists() else 0o666 & ~_umask())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def write_tree(path: Path, text: str) -> tuple[str, str]:
    """Write the tree; when that fails, keep it in a temporary file.  The file written and what to say."""
    try:
        replace_file(path, text)
        return str(path), f"tree written to {path}"
    except OSError as exc:
        handle, fallback = tempfile.mkstemp(prefix="strongtree-tree-", suffix=".json")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        return fallback, OUTPUT_FALLBACK.format(path=path, reason=exc.strerror or exc, fallback=fallback)
