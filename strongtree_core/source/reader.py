"""Passes over a table where it lies, on this machine: batches of rows read by pyarrow's datasets.

A pass applies a function to every batch of rows (a pandas DataFrame) and merges the
summaries (:mod:`~strongtree_core.source.scan`, :mod:`~strongtree_core.source.bins`,
:mod:`~strongtree_core.source.codes`).  Only the columns a pass needs are read; pyarrow
decodes the next batch on its own threads while this one is summed.  Between two batches
the pass looks at the :class:`Watch`: a Stop or the time limit ends it
(:class:`ReadStopped`), a pattern table past its cap ends it (:class:`TooManyPatterns`)
before it is held, and the progress callback hears rows read, patterns so far and the
memory this process holds.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable

from strongtree_core.progress import Progress, Reading
from strongtree_core.source.paths import NO_PYARROW, TableError, TableFiles

#: Rows per batch: a batch of 22 columns is about 100 MB as pandas columns.
BATCH_ROWS = 500_000
#: Seconds between two progress events of a pass.
REPORT_EVERY = 1.0

READ_FAILED = "Could not read {path}: {reason}"
COLUMNS_DIFFER = ("The files of one table must have the same columns: {path} lacks {missing} and has {extra} "
                  "beside {first}. Name the files of one table (a folder or glob of those only).")


class ReadStopped(Exception):
    """A pass ended by a Stop or by the time limit."""


class TooManyPatterns(Exception):
    """A pattern pass stopped when its patterns passed the cap (``Watch.max_patterns``)."""

    def __init__(self, patterns: int) -> None:
        super().__init__(patterns)
        self.patterns = patterns


def memory_in_use() -> int:
    """Bytes this process holds in memory (resident), 0 when it cannot be read."""
    try:
        import psutil

        return int(psutil.Process().memory_info().rss)
    except (ImportError, OSError):  # pragma: no cover - psutil is a default dependency
        return 0


@dataclass
class Watch:
    """What a pass looks at between two batches: the Stop, the deadline, the cap on patterns, the
    progress callback (``progress`` hears :class:`~strongtree_core.progress.Progress` with ``reading`` set)."""

    t0: float = field(default_factory=time.perf_counter)
    deadline: float = float("inf")  # on time.perf_counter
    stop: threading.Event | None = None
    progress: Callable[[Progress], None] | None = None
    max_patterns: int | None = None
    _last: float = -float("inf")

    def check(self) -> None:
        if (self.stop is not None and self.stop.is_set()) or time.perf_counter() >= self.deadline:
            raise ReadStopped()

    def report(self, reading: Reading, *, force: bool = False) -> None:
        now = time.perf_counter()
        if self.progress is None or (not force and now - self._last < REPORT_EVERY):
            return
        self._last = now
        self.progress(Progress(now - self.t0, None, None, None, 0, None, f"reading: {reading.stage}", reading=reading))

    def cap(self, patterns: int) -> None:
        if self.max_patterns is not None and patterns > self.max_patterns:
            raise TooManyPatterns(patterns)


def same_columns(table: TableFiles, dataset) -> tuple[str, ...]:
    """The table's columns, once every file is known to have the same ones (pyarrow would read a column a
    file lacks as missing values: a silent hole in the table).  Parquet files' columns are read from their
    footers, not their rows."""
    columns = tuple(dataset.schema.names)
    if table.format != "parquet" or len(table.files) < 2:
        return columns
    import pyarrow.parquet as pq

    for path in table.files:
        names = tuple(pq.read_schema(path).names)
        if set(names) != set(columns):
            raise TableError(COLUMNS_DIFFER.format(
                path=path, first=table.files[0], missing=", ".join(repr(c) for c in columns if c not in names) or "none",
                extra=", ".join(repr(c) for c in names if c not in columns) or "none"))
    return columns


def _arrow():
    try:
        import pyarrow.dataset as ds
    except ImportError:
        return None
    return ds


class LocalReader:
    """The passes of one table on this machine (pyarrow datasets: Parquet files or CSV)."""

    def __init__(self, table: TableFiles, threads: int = 2) -> None:
        ds = _arrow()
        self.threads = max(1, int(threads))
        if ds is None:
            raise TableError(NO_PYARROW.format(path=table.name))
        self.table = table
        self.rows_seen = 0
        try:
            self.dataset = ds.dataset(list(table.files), format=table.format)
            self.columns = same_columns(table, self.dataset)
            self.rows_total = int(self.dataset.count_rows()) if table.format == "parquet" else 0
        except TableError:
            raise
        except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
            raise TableError(READ_FAILED.format(path=table.name, reason=exc)) from None

    def batches(self, columns: tuple[str, ...]):
        scanner = self.dataset.scanner(columns=list(columns), batch_size=BATCH_ROWS, batch_readahead=1,
                                       fragment_readahead=1, use_threads=True)
        try:
            for batch in scanner.to_batches():
                yield batch.to_pandas(strings_to_categorical=True)  # texts hashed once per batch, as codes
        except (OSError, ValueError) as exc:
            raise TableError(READ_FAILED.format(path=self.table.name, reason=exc)) from None

    def run(self, stage: str, columns: tuple[str, ...], summarize: Callable, merge: Callable, watch: Watch,
            size: Callable | None = None):
        """``merge`` of ``summarize(batch)`` over every batch.  ``size(summary)``: its patterns, for the cap
        and the progress (a pattern pass); summaries are then merged in growing groups, so that a long table
        costs a few merges of the whole table, not one per batch.  Batches are summarized on
        :attr:`threads` threads (numpy's sorts let go of the interpreter's lock), at most that many at once."""
        total, rows, pending, pending_size = None, 0, [], 0
        self.rows_seen = 0
        with ThreadPoolExecutor(max_workers=self.threads, thread_name_prefix="strongtree-read") as pool:
            for part, n in _in_order(pool, summarize, self.batches(columns), self.threads, watch):
                rows += n
                self.rows_seen = rows
                if size is None:
                    total = part if total is None else merge(total, part)
                    patterns = 0
                else:
                    pending.append(part)
                    pending_size += size(part)
                    held = 0 if total is None else size(total)
                    if pending_size >= max(held, MERGE_PATTERNS):
                        total = merge(*([] if total is None else [total]), *pending)
                        pending, pending_size = [], 0
                        watch.cap(size(total))
                    patterns = (0 if total is None else size(total)) + pending_size
                watch.report(Reading(stage, rows, self.rows_total, patterns, memory_in_use()))
        if size is not None and (pending or total is None):
            total = merge(*([] if total is None else [total]), *pending)
        if size is not None:
            watch.cap(size(total))
        watch.report(Reading(stage, rows, self.rows_total, 0 if size is None else size(total), memory_in_use()),
                     force=True)
        return total


#: Patterns held unmerged before they are merged with the table's (a merge sorts them all).
MERGE_PATTERNS = 1_000_000


def _in_order(pool, summarize, batches, ahead: int, watch: Watch):
    """``(summarize(batch), rows)`` for every batch, in order, with up to ``ahead`` batches at work;
    the watch is looked at before each batch is begun."""
    queue: deque = deque()
    for df in batches:
        watch.check()
        queue.append((pool.submit(summarize, df), len(df)))
        if len(queue) >= ahead:
            future, n = queue.popleft()
            yield future.result(), n
    while queue:
        watch.check()
        future, n = queue.popleft()
        yield future.result(), n
