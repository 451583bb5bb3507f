"""One HiGHS run: load arrays in bulk, warm start, callbacks for progress and Stop.

Measured facts this module relies on (highspy 1.16):

* ``passModel`` with a row-wise (CSR) matrix loads 145k rows in well under a second.
* ``cbMipImprovingSolution`` fires once per incumbent with the solution vector;
  ``cbMipInterrupt`` fires often while branching but is silent during presolve
  and LP solves.  ``cbSimplexInterrupt`` is subscribed as well, but was not seen
  to fire inside a MIP solve: a Stop waits for the end of the current LP solve
  (up to 1.4 s at the root of an 8,500-row FlowOCT model, longer on larger ones).
  So HiGHS runs in a worker thread, and a Stop that HiGHS has not answered
  after :data:`STOP_GRACE` seconds returns the best solution seen so far while
  HiGHS finishes its LP in the background (measured without this: up to 8.7 s
  on a loaded machine).
* The ``threads`` option is fixed for the process once HiGHS's scheduler has
  started, and highspy keeps its solver locks at class level.  So HiGHS solves
  run one at a time per process (:class:`HighsSession`); a different thread
  count between two solves resets the global scheduler while no solve runs.
* Presolve and the feasibility jump heuristic answer neither the time limit nor
  Stop; on models above :data:`UNINTERRUPTIBLE_NONZEROS` they are switched off,
  and a run :data:`STOP_GRACE` seconds past its limit is left behind with the
  best solution seen (:data:`ABANDONED_AT_LIMIT`).
"""

from __future__ import annotations

import atexit
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from strongtree_core import highs_lp
from strongtree_core.formulation.arrays import ModelArrays
from strongtree_core.solvers.base import SolveOptions, Status, stop_status
from strongtree_core.solvers.errors import import_solver

#: One HiGHS solve at a time in a process (the solver's locks are process-wide).
HIGHS_LOCK = threading.Lock()
#: Seconds a solve waits for another HiGHS solve of this process to end.
HIGHS_WAIT = 10.0
HIGHS_BUSY = (
    "HiGHS is already solving in this process and runs one solve at a time; "
    "wait for it to finish, or stop it."
)
#: Seconds HiGHS may take to answer a Stop before its best solution so far is returned without it.
STOP_GRACE = 0.5
#: Seconds between two looks at the Stop event while HiGHS runs.
STOP_POLL = 0.05
NOT_STARTED = "Interrupted (Stop came before HiGHS started)"
NOT_STARTED_AT_LIMIT = "Time limit reached before HiGHS started"
ABANDONED = "Interrupted (HiGHS was inside an LP solve and finishes it in the background)"
#: HiGHS checks its own time limit only between some steps (its root cut loop ran 35 s past a
#: 60 s limit on OCT, kr-vs-kp, depth 2); past the limit plus :data:`STOP_GRACE` it is left behind.
ABANDONED_AT_LIMIT = (
    "Time limit reached (HiGHS had not stopped {grace:g} s after it, so the best solution found "
    "so far is kept and HiGHS finishes its step in the background)"
)

_abandoned: list[threading.Thread] = []
#: Above this many non-zeros HiGHS runs without the steps it cannot be interrupted in.
UNINTERRUPTIBLE_NONZEROS = 1_000_000

#: HiGHS model status (by name) -> the shared vocabulary; anything else is ERROR.
HIGHS_STATUS: dict[str, Status] = {
    "kOptimal": Status.OPTIMAL,
    "kTimeLimit": Status.TIME_LIMIT,
    "kInfeasible": Status.INFEASIBLE,
    "kUnboundedOrInfeasible": Status.INFEASIBLE,  # every column here is bounded
    "kInterrupt": Status.INTERRUPTED,
    "kHighsInterrupt": Status.INTERRUPTED,
}

_threads_in_use: list[int] = []


def import_highspy() -> Any:
    """The ``highspy`` module, or :class:`SolverUnavailableError` naming the package."""
    return import_solver("highspy", "HiGHS")


def _finite(values: np.ndarray, inf: float) -> np.ndarray:
    return np.clip(np.asarray(values, dtype=np.float64), -inf, inf)


def load_arrays(h: Any, model: ModelArrays, *, with_offset: bool = True) -> None:
    """Pass ``model`` to the HiGHS instance ``h`` in one call (CSR rows)."""
    highspy = import_highspy()
    inf = highspy.kHighsInf
    A = model.A.tocsr()
    sense = highspy.ObjSense.kMaximize if model.sense == "max" else highspy.ObjSense.kMinimize
    status = h.passModel(
        model.n_cols,
        model.n_rows,
        int(A.nnz),
        int(highspy.MatrixFormat.kRowwise),
        int(sense),
        float(model.obj_offset) if with_offset else 0.0,
        np.asarray(model.c, dtype=np.float64),
        _finite(model.col_lower, inf),
        _finite(model.col_upper, inf),
        _finite(model.row_lower, inf),
        _finite(model.row_upper, inf),
        A.indptr.astype(np.int32),
        A.indices.astype(np.int32),
        A.data.astype(np.float64),
        model.integrality.astype(np.int32),
    )
    if status != highspy.HighsStatus.kOk:
        raise RuntimeError(f"HiGHS refused the model arrays (status {status.name})")


def add_rows(h: Any, rows) -> None:
    """Append cut rows ``(A_cut CSR, lower, upper)`` to the HiGHS model ``h``."""
    highspy = import_highspy()
    A, lower, upper = rows
    A = A.tocsr()
    h.addRows(
        A.shape[0],
        _finite(lower, highspy.kHighsInf),
        _finite(upper, highspy.kHighsInf),
        int(A.nnz),
        A.indptr[:-1].astype(np.int32),
        A.indices.astype(np.int32),
        A.data.astype(np.float64),
    )


def quiet_highs() -> Any:
    """A ``highspy.Highs()`` with its output off and no banner (:func:`strongtree_core.highs_lp.quiet_highs`),
    or :class:`SolverUnavailableError` naming the package."""
    import_highspy()
    return highs_lp.quiet_highs()


def new_highs(model: ModelArrays, options: SolveOptions) -> Any:
    """A HiGHS instance holding ``model`` with the options every run shares.

    Call inside a :class:`HighsSession`: it may reset the process's scheduler
    when the thread count differs from the previous solve's.
    """
    highspy = import_highspy()
    threads = max(1, int(options.threads))
    if _threads_in_use and _threads_in_use[-1] != threads:
        highspy.Highs.resetGlobalScheduler(True)
    _threads_in_use[:] = [threads]
    h = quiet_highs()
    h.setOptionValue("output_flag", bool(options.verbose))
    h.setOptionValue("threads", threads)
    h.setOptionValue("mip_rel_gap", float(options.mip_gap))
    if model.A.nnz > UNINTERRUPTIBLE_NONZEROS:
        # Presolve and the feasibility jump heuristic check neither the clock nor Stop:
        # FlowOCT of 2.4 million non-zeros (351 rows x 445 features, depth 4) was still
        # in presolve 30 s past a 30 s limit; with both off HiGHS stopped at 30.5 s.
        h.setOptionValue("presolve", "off")
        h.setOptionValue("mip_heuristic_run_feasibility_jump", False)
    load_arrays(h, model)
    return h


@dataclass(frozen=True)
class RunOutcome:
    """What one HiGHS run ended with (``abandoned``: Stop was not answered in
    time and the run was left to finish on its own, or Stop came before it started;
    either way there is no solution of its own and no second attempt)."""

    status: Status
    status_name: str
    x: np.ndarray | None
    objective: float | None
    bound: float | None
    nodes: int
    abandoned: bool = False


class HighsSession:
    """Holds :data:`HIGHS_LOCK` for one solve (``with HighsSession() as session``).

    A run abandoned after a Stop keeps the lock until HiGHS has returned, so
    that the next solve in this process waits for it (up to
    :data:`HIGHS_WAIT` seconds).
    """

    def __init__(self, wait: float | None = None) -> None:
        self.acquired = False
        self._handed_off = False
        self._wait = wait

    def __enter__(self) -> "HighsSession":
        wait = HIGHS_WAIT
        if self._wait is not None and any(t.is_alive() for t in _abandoned):
            # The lock is held by a run left behind at a limit or a Stop, not by another
            # caller: wait for it as long as the caller's own time limit allows.
            wait = max(wait, self._wait)
        self.acquired = HIGHS_LOCK.acquire(timeout=wait)
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.acquired and not self._handed_off:
            HIGHS_LOCK.release()

    def hand_off(self, worker: threading.Thread) -> None:
        """Release the lock only when ``worker`` (the abandoned run) ends."""
        self._handed_off = True

        def release() -> None:
            worker.join()
            HIGHS_LOCK.release()

        _abandoned.append(worker)
        threading.Thread(target=release, name="highs-release", daemon=True).start()


def when_idle(callback: Callable[[], None]) -> None:
    """Call ``callback()`` once no HiGHS solve of this process runs: at once, or from a thread that waits
    for the solve holding :data:`HIGHS_LOCK` (a run left behind at a limit or a Stop, a root relaxation
    given up at the deadline) to return."""
    if HIGHS_LOCK.acquire(blocking=False):
        HIGHS_LOCK.release()
        callback()
        return

    def wait() -> None:
        with HIGHS_LOCK:
            pass
        callback()

    threading.Thread(target=wait, name="highs-idle", daemon=True).start()


def run_highs(
    h: Any,
    session: HighsSession,
    *,
    time_limit: float,
    stop: threading.Event | None,
    on_tick: Callable[[Any], None],
    on_incumbent: Callable[[np.ndarray, Any], None],
    errors: list[str],
    start: np.ndarray | None = None,
) -> RunOutcome:
    """Run HiGHS on ``h`` with Stop, progress and incumbent callbacks.

    ``on_tick(data_out)`` is called from ``cbMipInterrupt`` (throttle it);
    ``on_incumbent(x, data_out)`` at every improving solution.  Exceptions in
    these are recorded in ``errors`` and never reach HiGHS.  HiGHS runs in a
    worker thread; when Stop is set and HiGHS has not answered within
    :data:`STOP_GRACE` seconds (it cannot be interrupted inside an LP solve),
    the run is abandoned: it returns INTERRUPTED at once and HiGHS stops at its
    next callback.  Likewise :data:`STOP_GRACE` seconds past ``time_limit``:
    TIME_LIMIT (HiGHS does not check its limit inside some steps).
    """
    highspy = import_highspy()
    if stop is not None and stop.is_set():
        # Stop came while the model was built: HiGHS is not started at all (a run started now
        # would be left behind in presolve, which answers no Stop, and held the process at exit).
        status = stop_status(stop)  # the user's Stop, or the caller's deadline
        return RunOutcome(status, NOT_STARTED if status == Status.INTERRUPTED else NOT_STARTED_AT_LIMIT,
                          None, None, None, 0, abandoned=True)
    abandon = threading.Event()

    def guarded(fn: Callable[[Any], None]) -> Callable[[Any], None]:
        def call(e: Any) -> None:
            try:
                if abandon.is_set() or (stop is not None and stop.is_set()):
                    e.interrupt()
                    return
                fn(e)
            except Exception as exc:  # noqa: BLE001 - must not propagate into the solver
                errors.append(f"{type(exc).__name__}: {exc}")

        return call

    subscriptions = [
        (h.cbSimplexInterrupt, guarded(lambda e: None)),
        (h.cbMipInterrupt, guarded(lambda e: on_tick(e.data_out))),
        (h.cbMipImprovingSolution, guarded(lambda e: on_incumbent(np.array(e.data_out.mip_solution, dtype=float), e.data_out))),
    ]
    for event, callback in subscriptions:
        event.subscribe(callback)
    h.setOptionValue("time_limit", max(float(time_limit), 1e-3))
    if start is not None:
        h.setSolution(int(start.size), np.arange(start.size, dtype=np.int32), np.asarray(start, dtype=np.float64))
    worker = threading.Thread(target=h.run, name="highs-run", daemon=True)
    late = time.perf_counter() + max(float(time_limit), 1e-3) + STOP_GRACE
    worker.start()
    stop_seen: float | None = None
    while worker.is_alive():
        now = time.perf_counter()
        if stop is not None and stop.is_set():
            stop_seen = stop_seen if stop_seen is not None else now
        if (stop_seen is not None and now - stop_seen > STOP_GRACE) or now > late:
            abandon.set()
            session.hand_off(worker)
            if stop_seen is not None and stop_status(stop) == Status.INTERRUPTED:
                return RunOutcome(Status.INTERRUPTED, ABANDONED, None, None, None, 0, abandoned=True)
            return RunOutcome(Status.TIME_LIMIT, ABANDONED_AT_LIMIT.format(grace=STOP_GRACE), None, None, None, 0,
                              abandoned=True)
        worker.join(STOP_POLL)
    for event, callback in subscriptions:
        event.unsubscribe(callback)
    model_status = h.getModelStatus()
    status = HIGHS_STATUS.get(model_status.name, Status.ERROR)
    info = h.getInfo()
    x = None
    objective = None
    if int(info.primal_solution_status) == int(highspy.kSolutionStatusFeasible):
        x = np.array(h.getSolution().col_value, dtype=float)
        objective = float(info.objective_function_value)
    return RunOutcome(status, h.modelStatusToString(model_status), x, objective, float(info.mip_dual_bound), int(info.mip_node_count))


def _join_abandoned_runs() -> None:
    # An abandoned run still inside HiGHS at interpreter exit would call back into
    # a finalized interpreter: give it time to reach its next callback and stop.
    for worker in _abandoned:
        worker.join(timeout=60)


atexit.register(_join_abandoned_runs)
