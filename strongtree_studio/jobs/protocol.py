"""What a solve worker and the jobs it runs share: the job protocol and the crash message.

:func:`strongtree_studio.jobs.worker.worker_main` receives one job and calls its
``run``; the jobs live beside what they run (a solve and a sweep in
:mod:`strongtree_studio.jobs.worker`, a comparison of formulations in
:mod:`strongtree_studio.jobs.comparison_job`), and every one of them imports only
this module of the worker's, so no module imports another that imports it back.
"""

from __future__ import annotations

import math
import threading
from typing import Any, Protocol

MSG_CRASH = "The solver stopped with an internal error ({kind}: {detail}). The server log has the details."


class Outbox(Protocol):
    """The writing end of the worker's pipe."""

    def send(self, message: dict[str, Any]) -> None: ...


class Phases(Protocol):
    """The stop flag as the running job sees it: one event per phase."""

    event: threading.Event

    def next_phase(self) -> threading.Event:
        """A fresh event for the next phase (a Stop ends the running phase only)."""
        ...


class WorkerJob(Protocol):
    """A job a worker runs (picklable: it crosses the process boundary)."""

    baseline_params: dict[str, Any] | None

    def time_budget(self) -> float:
        """Seconds the job may take by its time limits."""
        ...

    def run(self, outbox: Outbox, phases: Phases) -> None:
        """Run in the worker, sending the messages of :mod:`strongtree_studio.jobs.worker` (all but ``done``)."""
        ...


def crash_message(err: BaseException) -> str:
    """:data:`MSG_CRASH` for ``err`` (its detail cut at 300 characters)."""
    return MSG_CRASH.format(kind=type(err).__name__, detail=str(err)[:300])


def finite_number(value: Any) -> float | None:
    """``value`` as a float, or None when it is missing, infinite or NaN (JSON has neither)."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None
