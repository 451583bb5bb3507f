"""Tables that lie on the server, in folders its owner allows: too large to upload through a browser.

The server's owner names the folders in ``STRONGTREE_DATA_DIR`` (several separated by ``os.pathsep``);
without it the page offers none.  A visitor picks from a list of what those folders hold (Parquet
files, folders of Parquet files, CSV files) and never types a path: a name is looked up again in
the listing and its real path must lie inside an allowed folder (a link that leads out is refused).

A table of at most :data:`LOAD_ROWS` rows is loaded whole; a larger one is loaded as an even sample
of that many rows (every k-th row, read batch by batch: never the whole table in memory), and the
note says so and names the command that fits the whole table where it lies.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

#: The environment variable naming the folders a visitor may read tables from.
DATA_DIR_ENV = "STRONGTREE_DATA_DIR"
#: Rows loaded into the dashboard at most; a larger table is sampled evenly.
LOAD_ROWS = 1_000_000
#: Entries listed per folder at most.
MAX_ENTRIES = 500
LOG = logging.getLogger(__name__)

ERR_NOT_ALLOWED = "{name!r} is not among the tables this server offers. Pick one from the list."
ERR_READ = "Could not read {name!r}: {reason}"
NOTE_SAMPLE = (
    "{name} has {total:,} rows: the dashboard holds an even sample of {kept:,} of them (one row in every {step:,}). "
    "The trees here learn from the sample. To fit the whole table, read it where it lies on the server: "
    "`strongtree fit <folder>/{name} --target ...` (or `StrongTreeClassifier.fit_table`)."
)


@dataclass(frozen=True)
class ServerTable:
    """A table a visitor may pick: how it is shown, and where it lies."""

    label: str
    path: Path


def allowed_folders(environ=None) -> tuple[Path, ...]:
    """The folders the server's owner allows (existing ones, resolved)."""
    text = (os.environ if environ is None else environ).get(DATA_DIR_ENV, "")
    folders = []
    for part in text.split(os.pathsep):
        if part.strip() and Path(part).expanduser().is_dir():
            folders.append(Path(part).expanduser().resolve())
    return tuple(folders)


def _is_table(path: Path) -> bool:
    if path.is_file():
        return path.suffix.lower() in (".parquet", ".pq", ".csv")
    return path.is_dir() and any(p.suffix.lower() in (".parquet", ".pq") for p in path.iterdir() if p.is_file())


def list_tables(folders: tuple[Path, ...]) -> list[ServerTable]:
    """The tables of the allowed folders: their Parquet and CSV files and their folders of Parquet files."""
    out = []
    for folder in folders:
        entries = sorted(p for p in folder.iterdir() if not p.name.startswith("."))[:MAX_ENTRIES]
        for path in entries:
            if _is_table(path) and _inside(path, folders):
                shown = f"{folder.name}/{path.name}" + ("/" if path.is_dir() else "")
                out.append(ServerTable(shown, path))
    return out


def _inside(path: Path, folders: tuple[Path, ...]) -> bool:
    real = path.resolve()
    return any(real == f or f in real.parents for f in folders)


def pick(label: str, folders: tuple[Path, ...]) -> ServerTable:
    """The table listed as ``label`` (looked up in the listing again, never read from the label)."""
    for entry in list_tables(folders):
        if entry.label == label:
            return entry
    raise ValueError(ERR_NOT_ALLOWED.format(name=label))


def load(entry: ServerTable, rows: int = LOAD_ROWS) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """The table (or an even sample of ``rows`` rows of it) and the notes that say which."""
    from strongtree_core.source.paths import resolve
    from strongtree_core.source.reader import LocalReader

    try:
        files = resolve(entry.path)
        reader = LocalReader(files, 1)
        total = reader.rows_total
        if files.format == "csv" or total <= rows:
            frames = list(reader.batches(reader.columns))
            frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(reader.columns))
            total = len(frame)
            if total <= rows:
                return _texts(frame), ()
            step = -(-total // rows)
            return _texts(frame.iloc[::step].reset_index(drop=True)), (_note(entry, total, step),)
        step = -(-total // rows)
        parts, seen = [], 0
        for batch in reader.batches(reader.columns):
            first = (-seen) % step  # every step-th row of the whole table
            parts.append(batch.iloc[first::step])
            seen += len(batch)
        frame = pd.concat(parts, ignore_index=True)
        return _texts(frame), (_note(entry, total, step, len(frame)),)
    except (OSError, ValueError) as exc:
        # A visitor is told no path of the server (its log has them): the reader's words name the table's
        # files under the allowed folder's name, as the list shows them.
        LOG.warning("could not read the server's table %s: %s", entry.path, exc)
        reason = str(exc).replace(str(entry.path.parent), entry.path.parent.name)
        raise ValueError(ERR_READ.format(name=entry.label, reason=reason)) from None


def _texts(frame: pd.DataFrame) -> pd.DataFrame:
    """Texts the reader gave as categories back as texts (as an upload reads them)."""
    for name in frame.columns:
        if isinstance(frame[name].dtype, pd.CategoricalDtype):
            frame[name] = frame[name].astype(frame[name].cat.categories.dtype)
    return frame


def _note(entry: ServerTable, total: int, step: int, kept: int | None = None) -> str:
    return NOTE_SAMPLE.format(name=entry.label, total=total, kept=kept if kept is not None else -(-total // step),
                              step=step)
