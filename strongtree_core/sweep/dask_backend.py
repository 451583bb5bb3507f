"""The ``dask`` backend: connect to a scheduler (or start a local cluster), run the points, keep every row.

Three things are made to hold here:

* **A lost worker loses no point.**  While a sweep runs, a local cluster of this process
  waits for a killed worker's replacement as long as it takes to start
  (:data:`RESTART_WAIT`, set in Dask's configuration for the sweep's duration): by default
  Dask's local cluster gives a worker up for good when its replacement has not
  registered within 15 s, and on a heavily loaded machine a new worker process took
  45 s to import its libraries, so two kills left a cluster with no worker and a sweep
  that waited forever.  The data every point shares is a *task* of the
  graph, not scattered data: the scheduler can compute it again when every copy
  of it was on workers that died (scattered data has no recipe: when its last
  copy is lost, every point waiting for it is cancelled, and a sweep that waited
  with ``distributed.wait`` lost everything, finished points included).  A point
  whose worker died is run again by the scheduler; a point cancelled for any other
  reason is submitted again here (up to :data:`~strongtree_core.sweep.backends.MAX_ATTEMPTS`
  runs); each point gives one row, once.
* **An address that is not a Dask scheduler is a message within seconds**, not a
  hang or a ``MemoryError``: Dask's own handshake is tried first, time-boxed, and
  the client is connected only after it answered.
* **Ctrl-C stays with the caller**: the workers of a local cluster started here
  are started with SIGINT blocked and then ignore it (:mod:`~strongtree_core.signals`).
"""

from __future__ import annotations

import os
import queue
import time
import uuid
import warnings
from concurrent.futures import CancelledError
from contextlib import contextmanager
from typing import Any, Iterator, Sequence

from strongtree_core.errors import StrongTreeError
from strongtree_core.source.dask_connect import (
    BAD_SCHEDULER,
    CONNECT_TIMEOUT,
    SCHEDULER_ENV,
    _distributed,
    connect_client,
)
from strongtree_core.sweep.backends import MAX_ATTEMPTS, POLL, PointQueue, work
from strongtree_core.sweep.grid import Point
from strongtree_core.sweep.main_guard import guard_failure, refuse_in_a_bootstrapping_worker, unguarded_main_script
from strongtree_core.sweep.point import FAILED_POINT, Problem, error_row
from strongtree_core.signals import ignore_sigint, sigint_blocked

#: Points in flight per worker thread (submitted as others finish, so a long grid is never
#: all in the scheduler at once, and Stop has few to cancel).
IN_FLIGHT_PER_THREAD = 2
#: Seconds between two looks at the cluster's size.
RESIZE_EVERY = 2.0
#: How long a local cluster waits for a lost worker's replacement to register before it
#: gives that worker up (Dask's ``distributed.deploy.lost-worker-timeout``, 15 s by default).
RESTART_WAIT = "10 minutes"
#: Seconds a sweep waits while its cluster has no worker at all before the points left run in the
#: calling process (a replacement that has not registered by then is not coming: "Nanny failed to start").
NO_WORKER_WAIT = 120.0
#: glibc's allocator settings of a local cluster's workers.  Dask's nanny sets
#: ``MALLOC_TRIM_THRESHOLD_=65536``, which also freezes the threshold above which each
#: allocation is its own mapping at 128 KiB: every array of a fit above that size was
#: mapped, zero-filled page by page and unmapped (a serial 40-point sweep inside one
#: worker: 616,000 page faults and 1.7-1.8 s of system time, against 83,000 and 0.4 s in
#: the calling process).  These are glibc's own upper defaults; with them the same sweep
#: faults 73,000 times and spends 0.6 s in the system.
WORKER_MALLOC = {"MALLOC_TRIM_THRESHOLD_": 128 * 1024 * 1024, "MALLOC_MMAP_THRESHOLD_": 32 * 1024 * 1024}

LOST_POINT = (
    "The worker running this point was lost {n} times (killed, or out of memory); the point was given up. "
    "Give the workers more memory, or run fewer at once (n_jobs)."
)
NO_WORKER = "the cluster has had no worker for {seconds:.0f} s: a lost worker was not replaced"
CANCELLED_POINT = (
    "The cluster cancelled this point {n} times ({reason}); the point was given up. Check the scheduler's log."
)


class ClusterLost(RuntimeError):
    """The cluster has no worker left and none is coming (the sweep's points left then run in the caller)."""


class _QuietOnCtrlC:
    """A worker plugin: the worker ignores SIGINT (a terminal's Ctrl-C is the caller's to handle).

    Registered with the local cluster started for a sweep, so that a worker the nanny
    starts again after a crash ignores it too."""

    idempotent = True
    name = "strongtree-ignore-sigint"

    def setup(self, worker) -> None:
        ignore_sigint()

    def teardown(self, worker) -> None:
        pass

    def transition(self, *args, **kwargs) -> None:
        pass

    def release_key(self, *args, **kwargs) -> None:
        pass


def local_cluster(slots: int):
    """A ``LocalCluster`` of ``slots`` single-thread process workers, allocator set by :data:`WORKER_MALLOC`.

    Dask's nanny reads these settings from its configuration, but a variable of this
    process's environment wins over it, and every nanny writes its settings into this
    process's environment when it starts a worker: after any earlier cluster with Dask's
    defaults, the configuration alone would be ignored.  So the variables are set here
    for the start and given back their earlier values afterwards (a worker the nanny
    starts again later still gets these: the nanny keeps what it read)."""
    from dask import config

    distributed = _distributed()
    environ = {f"distributed.nanny.pre-spawn-environ.{name}": value for name, value in WORKER_MALLOC.items()}
    before = {name: os.environ.get(name) for name in WORKER_MALLOC}
    try:
        os.environ.update({name: str(value) for name, value in WORKER_MALLOC.items()})
        with config.set(environ):
            return distributed.LocalCluster(n_workers=slots, threads_per_worker=1, processes=True,
                                            dashboard_address=":0")
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextmanager
def dask_client(scheduler, slots: int) -> Iterator[Any]:
    """A Client: the one given, one connected to ``scheduler`` (or :data:`SCHEDULER_ENV`), else a local cluster."""
    distributed = _distributed()
    if isinstance(scheduler, distributed.Client):
        yield scheduler
        return
    address = scheduler if scheduler is not None else os.environ.get(SCHEDULER_ENV) or None
    if address is None:
        refuse_in_a_bootstrapping_worker()
        unguarded = unguarded_main_script()
        try:
            with sigint_blocked():  # its worker processes, and the loop thread that restarts them, inherit the mask
                cluster = local_cluster(slots)
        except Exception as exc:  # noqa: BLE001 - re-raised unless it is the missing guard
            failure = guard_failure(exc, unguarded)
            if failure is not None:
                raise failure from exc
            raise
        with cluster, distributed.Client(cluster) as client:
            from distributed.diagnostics.plugin import WorkerPlugin

            plugin = type("IgnoreSigint", (_QuietOnCtrlC, WorkerPlugin), {})()
            client.register_plugin(plugin)
            yield client
        return
    if not isinstance(address, str) or "://" not in address:
        raise StrongTreeError(BAD_SCHEDULER.format(value=address))
    client = connect_client(address, CONNECT_TIMEOUT)
    with client:
        yield client


# ------------------------------------------------------------------- the loop
def _problem(problem: Problem) -> Problem:
    """The shared data as a task's result: a task the scheduler can run again if its result is lost."""
    return problem


def share(client, problem: Problem, token: str):
    """A future of ``problem`` that the scheduler recomputes when every copy of it was lost."""
    with warnings.catch_warnings():
        # The data travels once with the task; Dask's advice against large graphs is about
        # repeating data in many tasks, which the points avoid by depending on this one.
        warnings.filterwarnings("ignore", message="Sending large graph", category=UserWarning)
        return client.submit(_problem, problem, key=f"strongtree-problem-{token}", pure=False)


def _threads(client) -> int:
    """Worker threads of the cluster now (0: no worker); -1 when the scheduler could not say."""
    try:
        return sum(client.nthreads().values())
    except Exception:  # noqa: BLE001 - the size is only a hint for how many points to keep in flight
        return -1


def _finished(done: "queue.Queue", timeout: float) -> list:
    """Futures that ended (finished, failed or cancelled) since the last look, waiting up to ``timeout`` s for one.

    Each future puts itself in ``done`` when it ends (``add_done_callback``), whatever the reason:
    ``distributed.wait`` raises as soon as one future of the list was cancelled, and it waits
    through the process's *default* client, which need not be the sweep's.
    """
    try:
        ended = [done.get(timeout=timeout)]
    except queue.Empty:
        return []
    while True:
        try:
            ended.append(done.get_nowait())
        except queue.Empty:
            return ended


def _cancel_reason(future) -> str:
    try:
        future.result(timeout=0)
    except BaseException as exc:  # noqa: BLE001 - only its reason is wanted
        return getattr(exc, "reason", None) or type(exc).__name__
    return "unknown"


def dask_rows(problem: Problem, points: Sequence[Point], stop, client, relay) -> Iterator[dict]:
    """Rows of the points as they finish on the cluster of ``client``; Stop through ``relay``."""
    from dask import config

    with config.set({"distributed.deploy.lost-worker-timeout": RESTART_WAIT}):
        yield from _rows(problem, points, stop, client, relay)


def _rows(problem: Problem, points: Sequence[Point], stop, client, relay) -> Iterator[dict]:
    from dask import config
    from distributed import KilledWorker

    token = uuid.uuid4().hex
    shared = share(client, problem, token)
    waiting = PointQueue(points)
    attempts: dict[int, int] = {}
    pending: dict[Any, Point] = {}
    done: queue.Queue = queue.Queue()
    stopped = False
    threads, resized = _threads(client), time.monotonic()
    no_worker_since = None if threads != 0 else resized
    try:
        while waiting or pending:
            if not stopped and stop is not None and stop.is_set():
                stopped = True
                relay.set()  # running points stop with their best tree, the others return nothing
                waiting.clear()
            now = time.monotonic()
            if now - resized > RESIZE_EVERY:
                threads, resized = _threads(client), now
                no_worker_since = (no_worker_since or now) if threads == 0 else None
            if no_worker_since is not None and now - no_worker_since > NO_WORKER_WAIT:
                raise ClusterLost(NO_WORKER.format(seconds=now - no_worker_since))  # the rest run in this process
            while waiting and len(pending) < IN_FLIGHT_PER_THREAD * max(threads, 1):
                point = waiting.popleft()
                attempts[point.index] = attempts.get(point.index, 0) + 1
                if shared.status in ("cancelled", "error"):
                    shared = share(client, problem, uuid.uuid4().hex)
                key = f"strongtree-point-{token}-{attempts[point.index]}-{point.index}"
                future = client.submit(work, shared, point, relay, key=key, pure=False)
                pending[future] = point
                future.add_done_callback(done.put)
            for future in _finished(done, POLL):
                point = pending.pop(future, None)
                if point is None:  # already seen (a callback of a future that ended twice)
                    continue
                if future.status == "cancelled":
                    if stopped:
                        continue
                    if attempts[point.index] < MAX_ATTEMPTS:
                        waiting.appendleft(point)
                        continue
                    yield error_row(problem, point, CANCELLED_POINT.format(n=attempts[point.index],
                                                                            reason=_cancel_reason(future)))
                    continue
                if future.status == "error":
                    exc = future.exception()
                    if isinstance(exc, KilledWorker):
                        runs = int(config.get("distributed.scheduler.allowed-failures")) + 1
                        yield error_row(problem, point, LOST_POINT.format(n=runs))
                    else:
                        yield error_row(problem, point, FAILED_POINT.format(kind=type(exc).__name__, detail=exc))
                    continue
                try:
                    row = future.result()
                except CancelledError:  # its result was lost and then cancelled: run it again
                    if not stopped and attempts[point.index] < MAX_ATTEMPTS:
                        waiting.appendleft(point)
                    continue
                if row is not None:
                    yield row
    finally:
        if pending:
            relay.set()
            client.cancel(list(pending))
        client.cancel([shared])
