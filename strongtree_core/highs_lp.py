"""HiGHS without its banner, and the small linear programs of the exact search.

The exact search's Lagrangian dual (:mod:`strongtree_core.accel.lagrange`) minimizes its
cutting-plane model, a linear program of a few dozen rows, at every step. :func:`minimize` solves
it with HiGHS through ``highspy``, set as ``scipy.optimize.linprog(method="highs")`` sets it (also
HiGHS, a copy of its own inside scipy): importing ``scipy.optimize`` took 0.41-0.72 s of a fresh
process with numpy loaded, ``highspy`` 9-30 ms, and a sweep's process worker pays that import on its
first point that needs the dual. This module imports nothing of the project, so a worker loads it
alone.

HiGHS (1.16) keeps one scheduler per thread (set up by the first solve run in that thread, with that
solve's number of threads), and a later solve in that thread that asks for another number fails
with an error; solves in other threads are not touched by it. The MIO backends run every solve in a
thread of its own, one at a time (:mod:`strongtree_core.solvers.highs_run`); a linear program here
runs in the caller's thread on one thread, beside them and without their lock, and on the thread
count already set up where a program of the caller's set up another one before.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

import numpy as np

#: HiGHS's settings for :func:`minimize`: those of ``scipy.optimize.linprog(method="highs")``
#: (presolve on, the dual simplex, HiGHS's default tolerances of 1e-7, no output), on one thread.
LP_OPTIONS: dict[str, Any] = {"output_flag": False, "presolve": "on", "simplex_strategy": 1, "threads": 1}

#: Held while the process's first instance is made (its standard output pointed away, see :func:`quiet_highs`).
_FIRST = threading.Lock()
_banner_swallowed = False


def quiet_highs() -> Any:
    """A ``highspy.Highs()`` with its output off.

    The first instance of a process prints HiGHS's banner to the C-level standard output before
    any option can be set (later ones print nothing); it is swallowed here so that the command line
    and the app print only their own text. Only that first instance is made with the standard output
    pointed away, under :data:`_FIRST`: the dual's programs make instances in several threads at once,
    and two threads that each saved and restored descriptor 1 around every instance left it on
    ``/dev/null`` for good (4 runs of 5 with two threads making 300 each).
    """
    import highspy

    if _banner_swallowed:
        h = highspy.Highs()
    else:
        with _FIRST:
            h = highspy.Highs() if _banner_swallowed else _first_instance(highspy)
    h.setOptionValue("output_flag", False)
    return h


def _first_instance(highspy: Any) -> Any:
    """The process's first ``Highs()``, made with descriptor 1 on ``/dev/null`` (call holding :data:`_FIRST`)."""
    global _banner_swallowed
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 1)
            h = highspy.Highs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)
    _banner_swallowed = True
    return h


def minimize(cost: np.ndarray, A_ub: np.ndarray, b_ub: np.ndarray, A_eq: np.ndarray, b_eq: np.ndarray,
             lower: np.ndarray, upper: np.ndarray) -> np.ndarray | None:
    """A solution of ``min cost . x  s.t.  A_ub x <= b_ub,  A_eq x = b_eq,  lower <= x <= upper``.

    Parameters
    ----------
    cost : (n,) array
    A_ub, A_eq : (m_ub, n) and (m_eq, n) dense arrays; their zeros are left out of the model.
    b_ub, b_eq : (m_ub,) and (m_eq,) arrays
    lower, upper : (n,) arrays, ``-inf`` / ``inf`` where a variable is free on that side.

    Returns
    -------
    x : (n,) array, or None when HiGHS does not report an optimum (infeasible, unbounded, an error).
        Like any solver's, ``x`` meets the rows and bounds within HiGHS's tolerances (1e-7), not exactly.
    """
    import highspy

    A = np.vstack([A_ub, A_eq])
    col, row = np.nonzero(A.T)  # column-wise: for each column, its rows in order
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = A.shape[1], A.shape[0]
    lp.col_cost_ = np.asarray(cost, dtype=np.float64)
    lp.col_lower_ = np.asarray(lower, dtype=np.float64)
    lp.col_upper_ = np.asarray(upper, dtype=np.float64)
    lp.row_lower_ = np.concatenate([np.full(len(b_ub), -np.inf), b_eq]).astype(np.float64)
    lp.row_upper_ = np.concatenate([b_ub, b_eq]).astype(np.float64)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = lp.num_col_, lp.num_row_
    lp.a_matrix_.start_ = np.concatenate([[0], np.cumsum(np.bincount(col, minlength=A.shape[1]))]).astype(np.int32)
    lp.a_matrix_.index_ = row.astype(np.int32)
    lp.a_matrix_.value_ = A[row, col].astype(np.float64)
    h = quiet_highs()
    for name, value in LP_OPTIONS.items():
        h.setOptionValue(name, value)
    h.passModel(lp)
    if h.run() == highspy.HighsStatus.kError:
        # This thread's scheduler was set up with another thread count (by a solve of the caller's
        # own): run on the count it has.
        h.setOptionValue("threads", 0)
        h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    return np.array(h.getSolution().col_value, dtype=np.float64)
