"""Where the points of a sweep run, and how their rows come back as they finish.

* ``serial``: one after the other in this thread;
* ``threads``: a pool of threads in this process (HiGHS points take turns,
  see :func:`~strongtree_core.sweep.point.highs_slot`);
* ``processes``: joblib's loky pool of process workers; a point whose worker
  died (killed, out of memory) is run again, up to :data:`MAX_ATTEMPTS` times.
  This process reads and encodes each point's training rows as ``fit`` does, a
  worker only solves (:func:`strongtree_core.engine.worker.solve_task`: arrays and
  plain settings in, the engine's tree and record out, neither pandas nor
  scikit-learn loaded), and this process sets the fitted attributes and measures
  the tree (:func:`~strongtree_core.sweep.point.plan_point`,
  :func:`~strongtree_core.sweep.point.finish_point`).  A point that is more than one
  solve (a promise on new rows refits) runs whole in its worker, from the data
  written to a file once.  The workers' BLAS and OpenMP pools split the cores between them;
* ``dask``: a ``dask.distributed`` cluster (:mod:`~strongtree_core.sweep.dask_backend`):
  a :class:`LocalCluster` of process workers started for the sweep, or the scheduler
  at an address, or a ``Client`` you pass.  The scheduler reruns the points of a lost
  worker itself.

Process workers never receive the terminal's Ctrl-C (:mod:`~strongtree_core.signals`):
the caller stops them.

Stop reaches running points through a *relay* that each worker watches (a
file for local processes, a Dask ``Event`` on a cluster): a running fit stops
and returns its best tree, a point not yet started returns nothing, and every
row that finished is kept.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import pickle
import tempfile
import threading
from collections import deque
from typing import Callable, Iterable, Iterator, Sequence

from strongtree_core.errors import StrongTreeError
from strongtree_core.sweep.grid import Point
from strongtree_core.engine.worker import solve_task
from strongtree_core.sweep.point import FAILED_POINT, PlannedPoint, Problem, error_row, finish_point, plan_point, run_point
from strongtree_core.relays import POLL, FileRelay, LocalRelay
from strongtree_core.signals import ignore_sigint, sigint_blocked

BACKENDS = ("serial", "threads", "processes", "dask")
#: Runs of a point whose worker was lost before it is given up.
MAX_ATTEMPTS = 3
#: Seconds a process worker waits idle for the next sweep before it ends (loky's default is 10 s):
#: a worker's start-up (loky and numpy, the engine and its kernels, HiGHS for a Lagrangian bound: about
#: 0.3 s of CPU) is paid once per session of sweeps, not once per sweep.
IDLE_WORKER_SECONDS = 300.0

BAD_BACKEND = "backend={value!r} is not one of {allowed}."
BAD_N_JOBS = "n_jobs={value!r} must be a whole number other than 0 (negative: all cores but |n_jobs| - 1), or None."
SCHEDULER_NOT_DASK = "scheduler={value!r} is only used with backend='dask' (backend is {backend!r})."
LOST_POINT = (
    "The worker running this point was lost {n} times (killed, or out of memory); the point was given up. "
    "Give the workers more memory, or run fewer at once (n_jobs)."
)


def n_workers(n_jobs: int | None) -> int:
    """Workers for ``n_jobs``: None is every core, a negative number counts back from it (joblib's rule)."""
    from joblib import cpu_count

    if n_jobs is None:
        return max(1, cpu_count())
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 0:
        raise StrongTreeError(BAD_N_JOBS.format(value=n_jobs))
    return n_jobs if n_jobs > 0 else max(1, cpu_count() + 1 + n_jobs)


class ProblemFile:
    """A sweep's problem written once to a file that process workers on this machine
    read once each (instead of the data travelling with every point), and the size
    of the BLAS and OpenMP pools each worker keeps."""

    def __init__(self, path: str, threads: int) -> None:
        self.path = path
        self.threads = threads

    def load(self) -> Problem:
        problem = _LOADED.get(self.path)
        if problem is None:
            with open(self.path, "rb") as f:
                problem = pickle.load(f)
            _LOADED.clear()  # a worker serves one sweep at a time
            _LOADED[self.path] = problem
            _limit_threads(self.threads)
        return problem


#: The problem a process worker read last, by file.
_LOADED: dict[str, Problem] = {}


def threads_per_worker(slots: int) -> int:
    """BLAS and OpenMP threads of each of ``slots`` local process workers: the cores split
    between them (two workers with two threads each on two cores wait on each other)."""
    from joblib import cpu_count

    return max(1, cpu_count() // max(1, slots))


def _limit_threads(threads: int) -> None:
    """Hold this process's BLAS and OpenMP pools (numpy's, scipy's, scikit-learn's) to ``threads``."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=threads)  # for good: this process is a worker


def work_shared(problem: ProblemFile, point: Point, relay) -> dict | None:
    """:func:`work` on the problem of a file (process workers)."""
    return work(problem.load(), point, relay)


def work(problem: Problem, point: Point, relay) -> dict | None:
    """Run one point in a worker: nothing when Stop came first; a fault is a row with its message, not a lost sweep."""
    if relay.is_set():
        return None
    try:
        with relay.watching() as stop:
            return run_point(problem, point, stop)
    except Exception as exc:  # noqa: BLE001 - a fault of one point is reported in its row, the others go on
        return error_row(problem, point, FAILED_POINT.format(kind=type(exc).__name__, detail=exc))


# ----------------------------------------------------------------- the loops
class PointQueue:
    """The points still to submit: the sweep's (lazy) sequence read in order, and points to run again
    first.  Never copies the sweep's points (a grid of 100,000 need not be built before the first runs)."""

    def __init__(self, points: Iterable[Point]) -> None:
        self._source = iter(points)
        self._again: deque[Point] = deque()
        self._next: Point | None = next(self._source, None)

    def __bool__(self) -> bool:
        return bool(self._again) or self._next is not None

    def popleft(self) -> Point:
        if self._again:
            return self._again.popleft()
        point, self._next = self._next, next(self._source, None)
        if point is None:
            raise IndexError("no point left")
        return point

    def appendleft(self, point: Point) -> None:
        self._again.appendleft(point)

    def clear(self) -> None:
        self._again.clear()
        self._source, self._next = iter(()), None

    def remaining(self) -> Iterator[Point]:
        """The points left (consumes them)."""
        while self:
            yield self.popleft()


def _pool_rows(problem: Problem, points: Sequence[Point], submit: Callable[[Point], cf.Future], relay,
               stop: threading.Event | None, slots: int, lost: tuple[type[BaseException], ...],
               finish: Callable[[Point, object], dict | None] | None = None) -> Iterator[dict]:
    """Rows of a concurrent.futures pool as they finish; points of a lost worker are queued again.
    ``finish(point, result)``: the row of a worker's result (default: the result is the row)."""
    queue = PointQueue(points)
    attempts: dict[int, int] = {}
    pending: dict[cf.Future, Point] = {}
    stopped = False
    try:
        while queue or pending:
            if not stopped and stop is not None and stop.is_set():
                stopped = True
                relay.set()
                queue.clear()
                for future in list(pending):
                    future.cancel()
            while queue and len(pending) < 2 * slots:
                point = queue.popleft()
                attempts[point.index] = attempts.get(point.index, 0) + 1
                pending[submit(point)] = point
            done, _ = cf.wait(list(pending), timeout=POLL, return_when=cf.FIRST_COMPLETED)
            for future in done:
                point = pending.pop(future)
                if future.cancelled():
                    continue
                try:
                    row = future.result()
                except lost:
                    if stopped:  # stopped, and its best tree went with the worker: dropped like a point not run
                        continue
                    if attempts[point.index] < MAX_ATTEMPTS:
                        queue.appendleft(point)
                        continue
                    row = error_row(problem, point, LOST_POINT.format(n=attempts[point.index]))
                else:
                    row = row if finish is None else finish(point, row)
                if row is not None:
                    yield row
    finally:
        relay.set()  # a consumer that left early: running points stop too
        for future in pending:
            future.cancel()


def serial_rows(problem: Problem, points: Sequence[Point], stop: threading.Event | None) -> Iterator[dict]:
    relay = LocalRelay(stop)
    for point in points:
        row = work(problem, point, relay)
        if row is None:
            return
        yield row


def thread_rows(problem: Problem, points: Sequence[Point], stop, slots: int) -> Iterator[dict]:
    relay = LocalRelay()
    with cf.ThreadPoolExecutor(max_workers=slots, thread_name_prefix="strongtree-sweep") as pool:
        yield from _pool_rows(problem, points, lambda p: pool.submit(work, problem, p, relay), relay, stop, slots, ())


def process_pool(slots: int):
    """joblib's reusable loky pool of ``slots`` process workers that ignore Ctrl-C (a broken pool is
    replaced); its workers stay up :data:`IDLE_WORKER_SECONDS` for the next sweep."""
    from joblib.externals.loky import get_reusable_executor

    with sigint_blocked():  # workers, and the thread that starts new ones, inherit the blocked mask
        return get_reusable_executor(max_workers=slots, initializer=ignore_sigint, timeout=IDLE_WORKER_SECONDS)


def process_rows(problem: Problem, points: Sequence[Point], stop, slots: int) -> Iterator[dict]:
    from joblib.externals.loky.process_executor import BrokenProcessPool

    with tempfile.TemporaryDirectory(prefix="strongtree-sweep-") as folder:
        relay = FileRelay(os.path.join(folder, "stop"))
        shared = ProblemFile(os.path.join(folder, "problem.pickle"), threads_per_worker(slots))
        with open(shared.path, "wb") as f:
            pickle.dump(problem, f, protocol=pickle.HIGHEST_PROTOCOL)

        planned: dict[int, PlannedPoint] = {}
        threads = threads_per_worker(slots)

        def submit(point: Point) -> cf.Future:  # a pool broken by a lost worker is replaced by a new one
            pool = process_pool(slots)
            step = plan_point(problem, point)  # read and encoded here: the worker only solves
            if isinstance(step, dict):  # refused before its solve: its row is ready
                ready: cf.Future = cf.Future()
                ready.set_result(step)
                return ready
            with sigint_blocked():  # loky starts its workers on the first submit
                if step is None:  # more than one solve (a promise's refits): the whole fit in the worker
                    return pool.submit(work_shared, shared, point, relay)
                planned[point.index] = step
                return pool.submit(solve_task, step.task, relay, threads, problem.credentials)

        def finish(point: Point, result) -> dict | None:
            step = planned.pop(point.index, None)
            if step is None or result is None:  # a row already, or Stop came before the solve
                return result
            return finish_point(problem, point, step, result)

        yield from _pool_rows(problem, points, submit, relay, stop, slots, (BrokenProcessPool,), finish)
