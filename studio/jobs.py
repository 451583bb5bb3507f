"""Solve jobs: each runs in its own worker process; the server keeps a registry of
them so a solve survives page changes and several users share a cap on
concurrent solves.

The registry never touches Streamlit.  A monitor thread per running job reads the
worker's messages (see :mod:`studio.worker`) into the job's state; pages read
immutable :class:`JobSnapshot` copies and poll.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Literal

from studio.worker import SolveSpec, worker_main

JobState = Literal["queued", "starting", "running", "finished", "failed", "cancelled"]
Phase = Literal["main", "baseline"]

#: Seconds a worker gets to honour Stop before its process is ended.
STOP_GRACE = 15.0
#: Seconds past the time limits after which a silent worker counts as hung.
HANG_GRACE = 90.0
#: Finished jobs kept in memory (older ones are forgotten; their runs stay in the store).
KEEP_FINISHED = 50

MSG_CRASHED = "The solver process ended unexpectedly (exit code {code}) before reporting a result."
MSG_STOP_TIMEOUT = "The solver did not stop within {seconds:.0f} s of the Stop request, so its process was ended."
MSG_HUNG = "The solver ran {seconds:.0f} s past its time limit without answering, so its process was ended."
MSG_CANCELLED = "Cancelled before it started."


def default_max_running() -> int:
    """Concurrent solves allowed: ``STRONGTREE_MAX_SOLVES`` or one core in two (at least 1)."""
    configured = os.environ.get("STRONGTREE_MAX_SOLVES", "").strip()
    if configured.isdigit() and int(configured) > 0:
        return int(configured)
    return max(1, (os.cpu_count() or 2) // 2)


@dataclass
class PhaseState:
    """What one phase of a job has reported so far (mutable, guarded by the registry lock)."""

    history: list[dict[str, Any]] = field(default_factory=list)
    tree: str | None = None
    result: str | None = None
    error: str | None = None
    user_error: bool = False
    received: float | None = None  # monotonic time of the last progress message


@dataclass(frozen=True)
class PhaseSnapshot:
    """An immutable copy of a :class:`PhaseState`; ``now`` is the solver's clock at
    the time of the copy (the last reported elapsed time plus the silence since)."""

    history: tuple[dict[str, Any], ...]
    tree: str | None
    result: str | None
    error: str | None
    user_error: bool
    now: float | None = None

    @property
    def latest(self) -> dict[str, Any] | None:
        return self.history[-1] if self.history else None

    @property
    def best_tree(self) -> str | None:
        """The final tree if there is one, else the latest incumbent."""
        return self.result or self.tree


@dataclass(frozen=True)
class JobSnapshot:
    """An immutable view of a job for rendering."""

    id: str
    state: JobState
    phase: Phase
    main: PhaseSnapshot
    baseline: PhaseSnapshot | None
    message: str
    queue_position: int
    elapsed: float
    stop_requested: bool
    run_id: int | None
    outcome: Any
    running: int = 0  # solves running on the server when the copy was made

    @property
    def active(self) -> bool:
        return self.state in ("queued", "starting", "running")


class _Worker:
    """A spawned worker process with its inbox, outbox and stop flag."""

    def __init__(self, ctx: Any) -> None:
        self.inbox = ctx.Queue()
        self.outbox = ctx.Queue()
        self.stop_flag = ctx.Event()
        self.process = ctx.Process(
            target=worker_main, args=(self.inbox, self.outbox, self.stop_flag), daemon=True, name="strongtree-solve"
        )
        self.process.start()

    def end(self) -> None:
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(2.0)
            if self.process.is_alive():
                self.process.kill()
                self.process.join(2.0)


class Job:
    """One solve request; its fields are guarded by the registry's lock."""

    def __init__(self, spec: SolveSpec, context: Any, time_budget: float) -> None:
        self.id = uuid.uuid4().hex[:12]
        self.spec: SolveSpec | None = spec  # both dropped once the job has ended
        self.context: Any = context
        self.time_budget = time_budget
        self.state: JobState = "queued"
        self.phase: Phase = "main"
        self.phases: dict[str, PhaseState] = {"main": PhaseState()}
        if spec.baseline_params is not None:
            self.phases["baseline"] = PhaseState()
        self.message = ""
        self.created = time.monotonic()
        self.started: float | None = None
        self.finished: float | None = None
        self.stop_requested: float | None = None
        self.run_id: int | None = None
        self.outcome: Any = None  # set by the registry's on_finished hook
        self.failure = ""  # why the worker was lost or ended, when it was (set before on_finished)
        self.worker: _Worker | None = None

    def snapshot(self, queue_position: int, running: int = 0) -> JobSnapshot:
        def copy(state: PhaseState | None) -> PhaseSnapshot | None:
            if state is None:
                return None
            now = None
            if state.history and state.received is not None:
                live = state.result is None and state.error is None
                now = state.history[-1]["elapsed"] + (time.monotonic() - state.received if live else 0.0)
            return PhaseSnapshot(tuple(state.history), state.tree, state.result, state.error, state.user_error, now)

        end = self.finished or time.monotonic()
        return JobSnapshot(
            id=self.id,
            state=self.state,
            phase=self.phase,
            main=copy(self.phases["main"]),
            baseline=copy(self.phases.get("baseline")),
            message=self.message,
            queue_position=queue_position,
            elapsed=(end - self.started) if self.started else 0.0,
            stop_requested=self.stop_requested is not None,
            run_id=self.run_id,
            outcome=self.outcome,
            running=running,
        )


class JobRegistry:
    """Process-wide registry of solve jobs with a cap on concurrent solves.

    Parameters
    ----------
    max_running : int
        Solves allowed at once; later requests wait in a queue.
    on_finished : callable or None
        Called with the :class:`Job` (from a monitor thread) when its worker has
        sent its last message or died, if its main phase reported a result or
        at least one tree, before the job counts as ended and the next queued
        job starts (``job.failure`` says why a lost worker was lost); it may set
        ``job.run_id`` and ``job.outcome``.
    prewarm : bool
        Keep one idle worker with the engine already imported, so a solve starts
        without the import delay.
    """

    def __init__(
        self,
        max_running: int | None = None,
        on_finished: Callable[[Job], None] | None = None,
        prewarm: bool = True,
    ) -> None:
        self.max_running = max_running or default_max_running()
        self._on_finished = on_finished
        self._prewarm = prewarm
        self._ctx = multiprocessing.get_context("spawn")
        self._lock = threading.RLock()
        self._jobs: dict[str, Job] = {}
        self._waiting: deque[Job] = deque()
        self._running: set[str] = set()
        self._idle: _Worker | None = None
        if prewarm:
            self._idle = _Worker(self._ctx)

    # -- requests from pages -------------------------------------------------

    def submit(self, spec: SolveSpec, context: Any = None) -> str:
        """Queue a solve; it starts at once when a slot is free.  Returns the job id."""
        budget = float(spec.params.get("time_limit", 60.0))
        if spec.baseline_params is not None:
            budget += float(spec.baseline_params.get("time_limit", 60.0))
        job = Job(spec, context, budget)
        with self._lock:
            self._jobs[job.id] = job
            self._waiting.append(job)
            self._forget_old()
            self._start_waiting()
        return job.id

    def snapshot(self, job_id: str | None) -> JobSnapshot | None:
        """An immutable view of the job, or None for an unknown id."""
        with self._lock:
            job = self._jobs.get(job_id) if job_id else None
            if job is None:
                return None
            position = next((i + 1 for i, j in enumerate(self._waiting) if j.id == job_id), 0)
            return job.snapshot(position, len(self._running))

    def job(self, job_id: str | None) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id) if job_id else None

    def stop(self, job_id: str) -> None:
        """Ask a running job to stop (its best tree is kept) or cancel a queued one."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None or job.state in ("finished", "failed", "cancelled"):
                return
            if job.state == "queued":
                self._waiting.remove(job)
                job.state = "cancelled"
                job.message = MSG_CANCELLED
                job.finished = time.monotonic()
                return
            job.stop_requested = time.monotonic()
            if job.worker is not None:
                job.worker.stop_flag.set()

    def shutdown(self) -> None:
        """End every worker (when the server stops)."""
        with self._lock:
            for job in self._jobs.values():
                if job.state in ("starting", "running") and job.worker is not None:
                    job.worker.end()
            if self._idle is not None:
                self._idle.end()
                self._idle = None

    # -- scheduling ----------------------------------------------------------

    def _start_waiting(self) -> None:
        while self._waiting and len(self._running) < self.max_running:
            job = self._waiting.popleft()
            worker, self._idle = self._idle, None
            if worker is None or not worker.process.is_alive():
                worker = _Worker(self._ctx)
            job.worker = worker
            job.state = "starting"
            job.started = time.monotonic()
            self._running.add(job.id)
            worker.inbox.put(job.spec)
            threading.Thread(target=self._monitor, args=(job,), daemon=True, name=f"job-{job.id}").start()
        if self._prewarm and self._idle is None:
            self._idle = _Worker(self._ctx)

    def _forget_old(self) -> None:
        done = [j for j in self._jobs.values() if j.state in ("finished", "failed", "cancelled")]
        for job in sorted(done, key=lambda j: j.created)[: max(0, len(done) - KEEP_FINISHED)]:
            del self._jobs[job.id]

    # -- the monitor thread --------------------------------------------------

    def _monitor(self, job: Job) -> None:
        worker = job.worker
        assert worker is not None
        failure = ""
        while True:
            try:
                message = worker.outbox.get(timeout=0.25)
            except queue.Empty:
                if not worker.process.is_alive():
                    self._drain(job, worker)
                    failure = "" if job.phases["main"].result else MSG_CRASHED.format(code=worker.process.exitcode)
                    break
                failure = self._overdue(job, worker)
                if failure:
                    break
                continue
            if self._apply(job, message):
                break
        main = job.phases["main"]
        job.failure = failure
        try:
            if self._on_finished is not None and (main.result is not None or main.tree is not None):
                self._on_finished(job)
        finally:
            with self._lock:
                job.state = "finished" if main.result is not None else "failed"
                job.message = failure or ("" if main.result is not None else main.error or "")
                job.finished = time.monotonic()
                job.spec = job.context = None  # the rows are no longer needed: free them
                self._running.discard(job.id)
                self._start_waiting()
        worker.process.join(5.0)  # it has said all it will say; let it wind down, then make sure
        worker.end()

    def _drain(self, job: Job, worker: _Worker) -> None:
        """Fold in messages a worker sent just before it ended."""
        while True:
            try:
                self._apply(job, worker.outbox.get_nowait())
            except queue.Empty:
                return

    def _apply(self, job: Job, message: dict[str, Any]) -> bool:
        """Fold one worker message into the job; True when the worker is done."""
        kind = message["kind"]
        if kind == "done":
            return True
        with self._lock:
            if kind == "ready":
                job.state = "running"
                return False
            phase = job.phases[message["phase"]]
            if message["phase"] != job.phase:  # a Stop of the previous phase does not carry over
                job.phase = message["phase"]
                job.stop_requested = None
            job.state = "running"
            if kind == "progress":
                point = {k: message[k] for k in ("elapsed", "objective", "bound", "gap", "nodes", "message")}
                phase.history.append(point)
                phase.received = time.monotonic()
                if message["tree"] is not None:
                    phase.tree = message["tree"]
            elif kind == "result":
                phase.result = message["tree"]
            elif kind == "error":
                phase.error = message["message"]
                phase.user_error = bool(message["user_error"])
            return False

    def _overdue(self, job: Job, worker: _Worker) -> str:
        """End a worker that ignores Stop or runs far past its time limits; the reason, or ""."""
        now = time.monotonic()
        if job.stop_requested is not None and now - job.stop_requested > STOP_GRACE:
            reason = MSG_STOP_TIMEOUT.format(seconds=STOP_GRACE)
        elif job.started is not None and now - job.started > job.time_budget + HANG_GRACE:
            reason = MSG_HUNG.format(seconds=now - job.started - job.time_budget)
        else:
            return ""
        worker.end()
        return reason
