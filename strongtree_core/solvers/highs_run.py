"""One HiGHS run: load arrays in bulk, warm start, callbacks for progress and Stop.

Measured facts this module relies on (highspy 1.16):

* ``passModel`` with a row-wise (CSR) matrix loads 145k rows in well under a second.
* ``cbMipImprovingSolution`` fires once per incumbent with the solution vector;
  ``cbMipInterrupt`` fires often while branching but is silent during presolve
  and LP solves.  ``cbSimplexInterrupt`` is subscribed as well, but was not seen
  to fire inside a MIP solve: a Stop waits for the end of the current LP solve
  (up to 1.4 s at the root of an 8,500-row FlowOCT model, longer on larger ones).
* The ``threads`` option is fixed for the process once HiGHS's scheduler has
  started, and highspy keeps its solver locks at class level.  So HiGHS solves
  run one at a time per process (:data:`HIGHS_LOCK`); a different thread count
  between two solves resets the global scheduler while no solve is running.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from strongtree_core.formulation.arrays import ModelArrays
from strongtree_core.solvers.base import SolveOptions, Status
from strongtree_core.solvers.errors import import_solver

#: One HiGHS solve at a time in a process (the solver's locks are process-wide).
HIGHS_LOCK = threading.Lock()
HIGHS_BUSY = (
    "HiGHS is already solving in this process and runs one solve at a time; "
    "wait for it to finish, or stop it."
)

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


def new_highs(model: ModelArrays, options: SolveOptions) -> Any:
    """A HiGHS instance holding ``model`` with the options every run shares.

    Call with :data:`HIGHS_LOCK` held: it may reset the process's scheduler
    when the thread count differs from the previous solve's.
    """
    highspy = import_highspy()
    threads = max(1, int(options.threads))
    if _threads_in_use and _threads_in_use[-1] != threads:
        highspy.Highs.resetGlobalScheduler(True)
    _threads_in_use[:] = [threads]
    h = highspy.Highs()
    h.setOptionValue("output_flag", bool(options.verbose))
    h.setOptionValue("threads", threads)
    h.setOptionValue("mip_rel_gap", float(options.mip_gap))
    load_arrays(h, model)
    return h


@dataclass(frozen=True)
class RunOutcome:
    """What one HiGHS run ended with."""

    status: Status
    status_name: str
    x: np.ndarray | None
    objective: float | None
    bound: float | None
    nodes: int


def run_highs(
    h: Any,
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
    these are recorded in ``errors`` and never reach HiGHS.
    """
    highspy = import_highspy()

    def guarded(fn: Callable[[Any], None]) -> Callable[[Any], None]:
        def call(e: Any) -> None:
            try:
                if stop is not None and stop.is_set():
                    e.interrupt()
                    return
                fn(e)
            except Exception as exc:  # noqa: BLE001 - must not propagate into the solver
                errors.append(f"{type(exc).__name__}: {exc}")

        return call

    h.setOptionValue("time_limit", max(float(time_limit), 1e-3))
    h.cbSimplexInterrupt.subscribe(guarded(lambda e: None))
    h.cbMipInterrupt.subscribe(guarded(lambda e: on_tick(e.data_out)))
    h.cbMipImprovingSolution.subscribe(
        guarded(lambda e: on_incumbent(np.array(e.data_out.mip_solution, dtype=float), e.data_out))
    )
    if start is not None:
        h.setSolution(int(start.size), np.arange(start.size, dtype=np.int32), np.asarray(start, dtype=np.float64))
    h.run()
    model_status = h.getModelStatus()
    name = model_status.name
    status = HIGHS_STATUS.get(name, Status.ERROR)
    info = h.getInfo()
    x = None
    objective = None
    if int(info.primal_solution_status) == int(highspy.kSolutionStatusFeasible):
        x = np.array(h.getSolution().col_value, dtype=float)
        objective = float(info.objective_function_value)
    return RunOutcome(status, h.modelStatusToString(model_status), x, objective, float(info.mip_dual_bound), int(info.mip_node_count))
