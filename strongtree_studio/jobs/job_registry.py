"""Solve jobs: each runs in its own worker process; the server keeps a registry of
them so a solve survives page changes and several users share a cap on
concurrent solves (``STRONGTREE_MAX_SOLVES``).

The registry never touches Streamlit.  One reader thread per server waits on
every running worker's pipe and process at once (``multiprocessing.connection.wait``)
and folds their messages (see :mod:`strongtree_studio.jobs.worker`) into the jobs' state; each
change bumps the job's ``version``.  Pages read immutable :class:`JobSnapshot`
copies, made once per version and shared by every session that polls, so many
viewers cost the server little.  Workers run at a lower scheduling priority than
the server, so pages stay quick while every core solves.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field, replace
from multiprocessing.connection import wait
from typing import Any, Callable, Literal

from strongtree_core.tree.record import SolveRecord
from strongtree_studio.jobs.worker import worker_main
from strongtree_studio.jobs.protocol import WorkerJob

JobState = Literal["queued", "starting", "running", "finished", "failed", "cancelled"]
Phase = Literal["main", "baseline"]

#: Seconds a worker gets to honour Stop before its process is ended.
STOP_GRACE = 15.0
#: Seconds past the time limits after which a silent worker counts as hung.
HANG_GRACE = 90.0
#: Finished jobs kept in memory (older ones are forgotten; their runs stay in the store).
KEEP_FINISHED = 50
#: Seconds the reader waits for a message before it checks for dead or overdue workers.
READ_TICK = 0.25
#: Progress points kept per phase; beyond it, points that changed nothing are merged.
MAX_POINTS = 2000
#: Seconds between two writes of a running solve into its run (its last tree and bound: what a server
#: killed mid-solve leaves behind).
JOURNAL_EVERY = 2.0

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
    tree_stage: str = ""  # the stage whose fit reported ``tree`` (a fit made of several fits; "" for a plain solve)
    result: str | None = None
    error: str | None = None
    user_error: bool = False
    record: SolveRecord | None = None  # a proof that no tree meets the constraints (an error with a record)
    received: float | None = None  # monotonic time of the last progress message
    rows: list[dict[str, Any]] = field(default_factory=list)  # a sweep's finished points, in the order they came
    total: int | None = None  # a sweep's number of points
    done: bool = False  # the worker reported its result (a sweep's: every point it was going to run)

    def add_point(self, point: dict[str, Any]) -> None:
        """Append a progress point; a point that changes neither the best tree nor the
        bound replaces the previous one when that one changed nothing either (a long
        quiet stretch stays two points: where it began and where it is now)."""
        history = self.history
        if len(history) >= 2 and _same(point, history[-1]) and _same(history[-1], history[-2]):
            history[-1] = point
        else:
            history.append(point)
        if len(history) > MAX_POINTS:  # a solve that changes for hours: keep its start and its recent past
            del history[1 : len(history) - MAX_POINTS // 2]


#: Stages of a fit made of several fits (a promise on new rows) drawn as lines: the fits on every training
#: row, whose values count the same rows; refits on parts of the rows (halves, resamples, folds, the
#: holdout's fitting part) count other rows and are drawn as labelled bands only.
ALL_ROWS_STAGES = ("fit at ", "constant tree")


def drawn_point(point: dict[str, Any]) -> bool:
    """Whether a progress point's values are drawn (and shown as the best tree and bound): a plain solve's
    always; of a fit made of several fits, those of the fits on every training row.  Only such a point's tree
    is the solve's tree so far (shown, and journaled as the run a killed server leaves behind): a refit on part
    of the rows is fitted, and bounded, on other rows."""
    if point.get("log_only"):
        return False
    stage = point.get("stage") or ""
    return not stage or stage.startswith(ALL_ROWS_STAGES)


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return (a["objective"] == b["objective"] and a["bound"] == b["bound"] and a["message"] == b["message"]
            and a.get("stage", "") == b.get("stage", ""))


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
    rows: tuple[dict[str, Any], ...] = ()
    total: int | None = None
    #: The record of a phase that ended in a proof that no tree meets the constraints (``error`` says it in full):
    #: its result, where there is no tree to carry one.
    record: SolveRecord | None = None

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
    version: int = 0  # bumped by every change of the job; equal versions show the same thing

    @property
    def active(self) -> bool:
        return self.state in ("queued", "starting", "running")


class _Worker:
    """A spawned worker process with its inbox, the reading end of its outbox pipe and its stop flag.

    Each worker has its own pipe: a worker killed while writing can only spoil its own.
    """

    def __init__(self, ctx: Any) -> None:
        self.inbox = ctx.Queue()
        self.outbox, writer = ctx.Pipe(duplex=False)
        self.stop_flag = ctx.Event()
        self.process = ctx.Process(
            target=worker_main, args=(self.inbox, writer, self.stop_flag), daemon=True, name="strongtree-solve"
        )
        self.process.start()
        writer.close()  # the worker holds the only writing end: its death reads as the end of the pipe
        self.closed = False

    def end(self) -> None:
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(2.0)
            if self.process.is_alive():
                self.process.kill()
                self.process.join(2.0)


class Job:
    """One solve request; its fields are guarded by the registry's lock."""

    def __init__(self, spec: WorkerJob, context: Any, time_budget: float) -> None:
        self.id = uuid.uuid4().hex[:12]
        self.spec: WorkerJob | None = spec  # both dropped once the job has ended
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
        self.ending = False  # its worker is done: it is being measured and stored
        self.version = 0
        self._copy: tuple[int, int, int, JobSnapshot] | None = None  # (version, position, running, snapshot)
        # Its run while it runs (written by the registry's on_progress hook, see JOURNAL_EVERY).
        self.journal_due = False  # something to write: the job started, or a new tree or bound came
        self.journal_at = 0.0  # monotonic time of the last write
        self.journal_lock = threading.Lock()  # one write at a time; the final result waits for the last
        self.journal_closed = False  # the job is ending: no more writes but the result's
        self.journaled: Any = None  # what was last written (the hook's to keep)

    def changed(self) -> None:
        """Mark the job changed (under the registry lock): snapshots are made afresh."""
        self.version += 1

    def snapshot(self, queue_position: int, running: int = 0) -> JobSnapshot:
        """An immutable view; the copy of its history is made once per version and shared."""
        if self._copy is None or self._copy[:3] != (self.version, queue_position, running):
            self._copy = (self.version, queue_position, running, self._build(queue_position, running))
        base = self._copy[3]
        now_clock = time.monotonic()
        end = self.finished or now_clock

        def live_now(state: PhaseState | None, copied: PhaseSnapshot | None) -> PhaseSnapshot | None:
            if copied is None or state is None or not copied.history or state.received is None:
                return copied
            live = state.result is None and state.error is None
            return replace(copied, now=copied.history[-1]["elapsed"] + (now_clock - state.received if live else 0.0))

        return replace(
            base,
            main=live_now(self.phases["main"], base.main),
            baseline=live_now(self.phases.get("baseline"), base.baseline),
            elapsed=(end - self.started) if self.started else 0.0,
        )

    def _build(self, queue_position: int, running: int) -> JobSnapshot:
        def copy(state: PhaseState | None) -> PhaseSnapshot | None:
            if state is None:
                return None
            return PhaseSnapshot(tuple(state.history), state.tree, state.result, state.error, state.user_error,
                                 rows=tuple(state.rows), total=state.total, record=state.record)

        return JobSnapshot(
            id=self.id,
            state=self.state,
            phase=self.phase,
            main=copy(self.phases["main"]),
            baseline=copy(self.phases.get("baseline")),
            message=self.message,
            queue_position=queue_position,
            elapsed=0.0,
            stop_requested=self.stop_requested is not None,
            run_id=self.run_id,
            outcome=self.outcome,
            running=running,
            version=self.version,
        )


class JobRegistry:
    """Process-wide registry of solve jobs with a cap on concurrent solves.

    Parameters
    ----------
    max_running : int
        Solves allowed at once; later requests wait in a queue.
    on_finished : callable or None
        Called with the :class:`Job` (from a thread of its own) when its worker
        has sent its last message or died, if its main phase reported a result,
        at least one tree or (a sweep) at least one point, before the job counts as ended and the next
        queued job starts (``job.failure`` says why a lost worker was lost); it
        may set ``job.run_id`` and ``job.outcome``.
    on_progress : callable or None
        Called with the :class:`Job` (from the registry's journal thread) when a job starts, and then at
        most every :data:`JOURNAL_EVERY` seconds while its main phase reports a new tree or bound; it may
        set ``job.run_id`` (the run written while the solve runs, which ``on_finished`` completes).
    on_dropped : callable or None
        Called with a job that ended with nothing for ``on_finished`` (no result, no tree, no point).
    prewarm : bool
        Keep one idle worker with the engine already imported, so a solve starts
        without the import delay.  It is started only while a slot is free: a new
        worker importing the engine would take a core from the solves running (with
        one slot, it would slow the live demo's first seconds); the next one starts
        as soon as a slot frees.
    """

    def __init__(
        self,
        max_running: int | None = None,
        on_finished: Callable[[Job], None] | None = None,
        prewarm: bool = True,
        on_progress: Callable[[Job], None] | None = None,
        on_dropped: Callable[[Job], None] | None = None,
    ) -> None:
        self.max_running = max_running or default_max_running()
        self._on_finished = on_finished
        self._on_progress = on_progress
        self._on_dropped = on_dropped
        self._journal: threading.Thread | None = None
        self._prewarm = prewarm
        self._ctx = multiprocessing.get_context("spawn")
        self._lock = threading.RLock()
        self._jobs: dict[str, Job] = {}
        self._waiting: deque[Job] = deque()
        self._running: set[str] = set()
        self._idle: _Worker | None = None
        self._reader: threading.Thread | None = None
        self._wake_read, self._wake_write = multiprocessing.Pipe(duplex=False)
        self._closed = False
        if prewarm:
            self._idle = _Worker(self._ctx)

    # -- requests from pages -------------------------------------------------

    def submit(self, spec: WorkerJob, context: Any = None) -> str:
        """Queue a solve; it starts at once when a slot is free.  Returns the job id."""
        job = Job(spec, context, spec.time_budget())
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

    @property
    def running(self) -> int:
        """Solves running now."""
        with self._lock:
            return len(self._running)

    def stop(self, job_id: str) -> None:
        """Ask a running job to stop (its best tree is kept) or cancel a queued one."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None or job.state in ("finished", "failed", "cancelled"):
                return
            job.changed()
            if job.state == "queued":
                self._waiting.remove(job)
                job.state = "cancelled"
                job.message = MSG_CANCELLED
                job.finished = time.monotonic()
                for waiting in self._waiting:  # their places in the queue moved up
                    waiting.changed()
                return
            job.stop_requested = time.monotonic()
            if job.worker is not None:
                job.worker.stop_flag.set()

    def shutdown(self) -> None:
        """End every worker and the reader (when the server stops)."""
        with self._lock:
            self._closed = True
            for job in self._jobs.values():
                if job.state in ("starting", "running") and job.worker is not None:
                    job.worker.end()
            if self._idle is not None:
                self._idle.end()
                self._idle = None
        self._wake()

    # -- scheduling ----------------------------------------------------------

    def _start_waiting(self) -> None:
        started = False
        while self._waiting and len(self._running) < self.max_running and not self._closed:
            job = self._waiting.popleft()
            worker, self._idle = self._idle, None
            if worker is None or not worker.process.is_alive():
                worker = _Worker(self._ctx)
            job.worker = worker
            job.state = "starting"
            job.started = time.monotonic()
            job.journal_due = True
            job.changed()
            self._running.add(job.id)
            worker.inbox.put(job.spec)
            started = True
        if started:
            for waiting in self._waiting:
                waiting.changed()
            if self._reader is None or not self._reader.is_alive():
                self._reader = threading.Thread(target=self._read_loop, daemon=True, name="solve-progress-reader")
                self._reader.start()
            if self._on_progress is not None and (self._journal is None or not self._journal.is_alive()):
                self._journal = threading.Thread(target=self._journal_loop, daemon=True, name="solve-journal")
                self._journal.start()
            self._wake()
        if self._prewarm and self._idle is None and not self._closed and len(self._running) < self.max_running:
            self._idle = _Worker(self._ctx)

    def _wake(self) -> None:
        """Make the reader look at the running jobs again (one started or the server stops)."""
        try:
            self._wake_write.send_bytes(b"!")
        except OSError:  # pragma: no cover - the reader has gone with the server
            pass

    def _forget_old(self) -> None:
        done = [j for j in self._jobs.values() if j.state in ("finished", "failed", "cancelled")]
        for job in sorted(done, key=lambda j: j.created)[: max(0, len(done) - KEEP_FINISHED)]:
            del self._jobs[job.id]

    # -- the one reader ------------------------------------------------------

    def _read_loop(self) -> None:
        """Wait on every running worker's pipe and process at once; fold in what they say."""
        while True:
            with self._lock:
                if self._closed:
                    return
                jobs = [self._jobs[i] for i in self._running if self._jobs[i].worker is not None]
            pipes = {job.worker.outbox: job for job in jobs if not job.worker.closed}
            ready = wait([self._wake_read, *pipes], timeout=READ_TICK)
            if self._wake_read in ready:
                while self._wake_read.poll():
                    self._wake_read.recv_bytes()
            for pipe in ready:
                job = pipes.get(pipe)
                if job is not None:
                    self._read(job)
            for job in jobs:
                self._check(job)

    def _read(self, job: Job) -> None:
        """Every message waiting in the job's pipe; the end of the pipe means the worker is gone."""
        worker = job.worker
        try:
            while not worker.closed and worker.outbox.poll():
                if self._apply(job, worker.outbox.recv()):
                    worker.closed = True
                    self._end(job, "")
        except (EOFError, OSError):  # the worker ended (or was killed) with nothing more to say
            worker.closed = True

    def _check(self, job: Job) -> None:
        """End a job whose worker died, ignores Stop or runs far past its time limits."""
        worker = job.worker
        if job.finished is not None or job.id not in self._running:
            return
        if not worker.process.is_alive():
            self._read(job)  # what it sent just before it ended
            if job.id in self._running and job.finished is None:
                crashed = "" if job.phases["main"].done else MSG_CRASHED.format(code=worker.process.exitcode)
                worker.closed = True
                self._end(job, crashed)
            return
        failure = self._overdue(job, worker)
        if failure:
            worker.closed = True
            self._end(job, failure)

    def _end(self, job: Job, failure: str) -> None:
        """Measure and store the finished job in a thread of its own, then free its slot."""
        with self._lock:
            if job.finished is not None or job.ending:
                return
            job.ending = True
        threading.Thread(target=self._finish, args=(job, failure), daemon=True, name=f"finish-{job.id}").start()

    def _journal_loop(self) -> None:
        """Write each running job's progress into its run through ``on_progress`` (see :data:`JOURNAL_EVERY`)."""
        while True:
            with self._lock:
                if self._closed:
                    return
                now = time.monotonic()
                due = [self._jobs[i] for i in self._running
                       if self._jobs[i].journal_due and now - self._jobs[i].journal_at >= JOURNAL_EVERY]
                for job in due:
                    job.journal_due, job.journal_at = False, now
            for job in due:
                with job.journal_lock:
                    if job.journal_closed:
                        continue
                    try:
                        self._on_progress(job)
                    except Exception:  # noqa: BLE001 - a journal that cannot be written never stops a solve
                        pass
            time.sleep(READ_TICK)

    def _finish(self, job: Job, failure: str) -> None:
        main = job.phases["main"]
        job.failure = failure
        worker = job.worker
        try:
            with job.journal_lock:  # a write of its progress in flight ends first; none comes after
                job.journal_closed = True
                if self._on_finished is not None and (main.result is not None or main.tree is not None or main.rows):
                    self._on_finished(job)
                elif self._on_dropped is not None:
                    self._on_dropped(job)
        finally:
            with self._lock:
                job.state = "finished" if main.done else "failed"
                job.message = failure or ("" if main.done else main.error or "")
                job.finished = time.monotonic()
                job.spec = job.context = None  # the rows are no longer needed: free them
                job.changed()
                self._running.discard(job.id)
                self._start_waiting()
        if worker is not None:
            worker.process.join(5.0)  # it has said all it will say; let it wind down, then make sure
            worker.end()
            worker.outbox.close()

    def _apply(self, job: Job, message: dict[str, Any]) -> bool:
        """Fold one worker message into the job; True when the worker is done."""
        kind = message["kind"]
        if kind == "done":
            return True
        with self._lock:
            job.changed()
            if kind == "ready":
                job.state = "running"
                return False
            phase = job.phases[message["phase"]]
            if message["phase"] != job.phase:  # a Stop of the previous phase does not carry over
                job.phase = message["phase"]
                job.stop_requested = None
            job.state = "running"
            if kind == "progress":
                before = next((p for p in reversed(phase.history) if drawn_point(p)), None)
                point = {**{k: message[k] for k in ("elapsed", "objective", "bound", "gap", "nodes", "message")},
                         "stage": message.get("stage", "")}
                phase.add_point(point)
                phase.received = time.monotonic()
                whole = drawn_point(point)  # a refit on part of the rows: not the solve's tree, nor its bound
                if message["tree"] is not None and whole:
                    phase.tree, phase.tree_stage = message["tree"], point["stage"]
                if message["phase"] == "main" and whole and (message["tree"] is not None or before is None
                                                             or (before["objective"], before["bound"])
                                                             != (message["objective"], message["bound"])):
                    job.journal_due = True
            elif kind == "result":
                phase.result = message["tree"]
                phase.done = True
            elif kind == "point":
                phase.rows.append(message["row"])
                phase.total = message["total"]
                phase.received = time.monotonic()
            elif kind == "error":
                phase.error = message["message"]
                phase.user_error = bool(message["user_error"])
                if message.get("record") is not None:  # a proof that no tree fits: the phase's result
                    phase.record = SolveRecord.from_dict(message["record"])
                    phase.done = True
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
