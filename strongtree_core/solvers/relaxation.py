"""The LP relaxation of a formulation: its arrays with integrality dropped,
solved once by HiGHS.

This is the "LO relaxation" the paper compares in Theorem 1 and its appendix
("LO Relaxation"): the bound a branch-and-bound starts from before any solver
cut, heuristic or branching, the same for every backend since it depends on
the formulation only.  It runs under the process's HiGHS lock
(:class:`~strongtree_core.solvers.highs_run.HighsSession`) with a time limit
and Stop; an LP not solved to optimality in time gives None, never a value
that is not a bound.
"""

from __future__ import annotations

import threading
from dataclasses import replace

import numpy as np

from strongtree_core.formulation.arrays import ModelArrays
from strongtree_core.solvers.base import SolveOptions, Status
from strongtree_core.solvers.errors import SolverUnavailableError
from strongtree_core.solvers.highs_run import HighsSession, new_highs, run_highs


def lp_relaxation(
    model: ModelArrays, *, time_limit: float, threads: int = 1, stop: threading.Event | None = None
) -> float | None:
    """Optimal value of ``model``'s LP relaxation in its own units (offset
    included), or None when HiGHS is missing or busy, or the LP is not solved
    to optimality within ``time_limit`` seconds (or before Stop)."""
    solved = lp_solution(model, time_limit=time_limit, threads=threads, stop=stop)
    return None if solved is None else solved[0]


def lp_solution(
    model: ModelArrays, *, time_limit: float, threads: int = 1, stop: threading.Event | None = None,
    wait: float | None = None,
) -> tuple[float, np.ndarray] | None:
    """``(value, x)``: the optimal value of ``model``'s LP relaxation and a solution
    attaining it (shape ``(n_cols,)``), or None as for :func:`lp_relaxation`.
    ``wait``: seconds to wait for another HiGHS run of this process to end first."""
    relaxed = replace(model, integrality=np.zeros(model.n_cols, dtype=bool), separator=None)
    try:
        with HighsSession(wait) as session:
            if not session.acquired:
                return None
            h = new_highs(relaxed, SolveOptions(time_limit=time_limit, threads=threads))
            run = run_highs(
                h, session, time_limit=time_limit, stop=stop,
                on_tick=lambda out: None, on_incumbent=lambda x, out: None, errors=[],
            )
    except SolverUnavailableError:
        return None
    if run.status != Status.OPTIMAL or run.objective is None or not np.isfinite(run.objective) or run.x is None:
        return None
    return float(run.objective), run.x
