"""A finished sweep kept in the run history (a stopped one keeps its finished points)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

from strongtree_studio.jobs import Job
from strongtree_studio.runs import RunStore, RunStoreError, SweepEntry
from strongtree_studio.sweep_job import SweepContext

ERR_SAVE_SWEEP = "This sweep could not be stored in the history. {reason}"

#: How a sweep ended, as stored.
SWEEP_STATUS = {"finished": "Finished", "stopped": "Stopped (finished points kept)", "failed": "Failed"}


@dataclass(frozen=True)
class SweepOutcome:
    """A finished sweep job's stored entry (``job.outcome``); ``error`` says why it could not be stored."""

    entry: SweepEntry | None
    error: str = ""


def finish_sweep(job: Job, open_store: Callable[[], RunStore]) -> None:
    """``on_finished`` hook for sweep jobs: store the finished points (a stopped sweep keeps them)."""
    context: SweepContext | None = job.context
    main = job.phases["main"]
    if context is None:
        return
    status = "stopped" if job.stop_requested is not None else "finished" if main.done else "failed"
    entry = SweepEntry(context.dataset, context.fingerprint, status, context.config(), list(main.rows),
                       owner=context.owner)
    try:
        entry = replace(entry, id=open_store().save_sweep(entry))
    except RunStoreError as err:
        job.outcome = SweepOutcome(entry, ERR_SAVE_SWEEP.format(reason=err))
        return
    job.run_id = entry.id
    job.outcome = SweepOutcome(entry)
