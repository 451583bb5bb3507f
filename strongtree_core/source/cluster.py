"""Passes over a table on a Dask cluster: the same summaries, computed on the workers.

The table is a Dask DataFrame over its files (``dask.dataframe.read_parquet`` / ``read_csv``,
one partition per file or row group); each partition is summarized on a worker by the same
function the local reader applies to a batch, and the summaries are merged on the workers in
a tree (at most :data:`FAN_IN` at a time), so only the merged summary travels to this
process: a pattern pass sends back the patterns, never the rows.  The merges are associative
and commutative sums (:mod:`~strongtree_core.source.codes`), so the result is the one the
local reader finds on the same rows, whatever the partitions.

While a pass runs this process looks at the :class:`~strongtree_core.source.reader.Watch`
every :data:`POLL` seconds: a Stop or the time limit cancels the pass's tasks; the progress
hears the partitions done (as rows) and the largest worker's memory.  A pattern pass whose
merged patterns pass the cap is dropped on the cluster, never fetched.
"""

from __future__ import annotations

import time
from functools import reduce

from strongtree_core.errors import StrongTreeError
from strongtree_core.progress import Reading
from strongtree_core.source.paths import NO_PYARROW, TableError, TableFiles
from strongtree_core.source.reader import READ_FAILED, Watch, same_columns

#: Summaries merged by one task.
FAN_IN = 8
#: Seconds between two looks at the pass (Stop, time limit, progress).
POLL = 0.2
#: Seconds between two readings of the workers' memory.
MEMORY_EVERY = 2.0

NO_DASK_DATAFRAME = ("Reading {path} on a Dask cluster needs dask.dataframe and distributed, which are not installed: "
                     "pip install 'strongtree[dask]'.")


def merge_all(merge, *parts):
    """``merge`` of every part (a merge of two)."""
    return reduce(merge, parts)


def _rss() -> int:
    import psutil

    return int(psutil.Process().memory_info().rss)


class ClusterReader:
    """The passes of one table on the workers of a Dask cluster (``scheduler``: an address or a Client)."""

    def __init__(self, table: TableFiles, scheduler) -> None:
        try:
            import dask
            import dask.dataframe as dd
            from dask import distributed
        except ImportError:
            raise StrongTreeError(NO_DASK_DATAFRAME.format(path=table.name)) from None
        try:
            import pyarrow.dataset as ds
        except ImportError:
            raise TableError(NO_PYARROW.format(path=table.name)) from None
        from strongtree_core.source.dask_connect import BAD_SCHEDULER, CONNECT_TIMEOUT, connect_client

        self.dask, self.dd, self.table = dask, dd, table
        self.rows_seen = 0
        if isinstance(scheduler, distributed.Client):
            self.client, self.owned = scheduler, False
        elif isinstance(scheduler, str) and "://" in scheduler:
            self.client, self.owned = connect_client(scheduler, CONNECT_TIMEOUT), True
        else:
            raise StrongTreeError(BAD_SCHEDULER.format(value=scheduler))
        try:
            dataset = ds.dataset(list(table.files), format=table.format)
            self.columns = same_columns(table, dataset)
            self.rows_total = int(dataset.count_rows()) if table.format == "parquet" else 0
        except (OSError, ValueError) as exc:
            self.close()
            if isinstance(exc, TableError):
                raise
            raise TableError(READ_FAILED.format(path=table.name, reason=exc)) from None

    def close(self) -> None:
        if self.owned:
            self.client.close()
            self.owned = False

    def frame(self, columns: tuple[str, ...]):
        if self.table.format == "parquet":
            return self.dd.read_parquet(list(self.table.files), columns=list(columns))
        return self.dd.read_csv(list(self.table.files), usecols=list(columns))

    def run(self, stage: str, columns: tuple[str, ...], summarize, merge, watch: Watch, size=None):
        """``merge`` of ``summarize(partition)`` over every partition, computed on the workers."""
        delayed = self.dask.delayed
        partitions = self.frame(columns).to_delayed()
        leaves = self.client.compute([delayed(summarize)(p) for p in partitions])
        level = list(leaves)
        merges = []
        while len(level) > 1:
            level = [self.client.submit(merge_all, merge, *level[i:i + FAN_IN], pure=False)
                     for i in range(0, len(level), FAN_IN)]
            merges += level
        final = level[0]
        every = [*leaves, *merges]
        memory, last_memory = 0, -float("inf")
        try:
            while not final.done():
                watch.check()
                done = sum(f.done() for f in leaves)
                self.rows_seen = int(self.rows_total * done / max(1, len(leaves)))
                if time.perf_counter() - last_memory >= MEMORY_EVERY:
                    memory = max(self.client.run(_rss).values(), default=0)
                    last_memory = time.perf_counter()
                watch.report(Reading(stage, self.rows_seen, self.rows_total, 0, memory))
                time.sleep(POLL)
            if size is not None:
                watch.cap(self.client.submit(size, final, pure=False).result())
            result = final.result()
        except BaseException:
            self.client.cancel(every)
            raise
        finally:
            for f in every:
                f.release()
        self.rows_seen = self.rows_total
        watch.report(Reading(stage, self.rows_total, self.rows_total, 0 if size is None else size(result), memory),
                     force=True)
        return result

