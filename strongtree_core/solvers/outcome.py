"""The last step of every backend: check the solution, then build the result.

A solution leaves a backend only after it has been checked against the model's
rows and bounds, its integrality and, for a Benders master, the separator: a
violated answer becomes status ERROR with a message, never a silently wrong
tree.
"""

from __future__ import annotations

import numpy as np

from strongtree_core.formulation.arrays import ModelArrays
from strongtree_core.solvers.base import SolveResult, Status, relative_gap
from strongtree_core.solvers.solver_events import INFINITE_BOUND, ProgressReporter

#: Largest row or bound violation accepted in a returned solution.
FEASIBILITY_TOLERANCE = 1e-5
#: Largest distance of an integer column from an integer.
INTEGRALITY_TOLERANCE = 1e-5

VIOLATES_ROWS = "The {backend} solution violates the model's rows or bounds by {violation:.3g}; it was discarded."
NOT_INTEGRAL = "The {backend} solution has an integer variable {violation:.3g} away from an integer; it was discarded."
VIOLATES_CUTS = "The {backend} solution violates {n} Benders cut(s); it was discarded."
OPTIMAL_WITHOUT_SOLUTION = "{backend} reported an optimum but returned no solution."
STOPPED_WITHOUT_SOLUTION = "Stopped before any solution was found."


def solution_problem(model: ModelArrays, x: np.ndarray, backend: str) -> str | None:
    """Why ``x`` is not a feasible solution of ``model`` (None when it is).

    Checks rows and bounds (``max_violation <= 1e-5``), integrality, and that
    the separator of a Benders master returns no cut.
    """
    violation = model.max_violation(x)
    if not violation <= FEASIBILITY_TOLERANCE:
        return VIOLATES_ROWS.format(backend=backend, violation=violation)
    ints = x[model.integrality]
    off = float(np.max(np.abs(ints - np.round(ints)), initial=0.0))
    if off > INTEGRALITY_TOLERANCE:
        return NOT_INTEGRAL.format(backend=backend, violation=off)
    if model.separator is not None:
        cuts = model.separator(np.where(model.integrality, np.round(x), x))[0]
        if cuts.shape[0]:
            return VIOLATES_CUTS.format(backend=backend, n=cuts.shape[0])
    return None


def finish(
    model: ModelArrays,
    backend: str,
    status: Status,
    x: np.ndarray | None,
    bound: float | None,
    reporter: ProgressReporter,
    *,
    nodes: int = 0,
    message: str = "",
    n_cuts: int = 0,
    extra: dict | None = None,
) -> SolveResult:
    """Check ``x`` and assemble the :class:`SolveResult`.

    The objective is recomputed from ``x`` (``c @ x + offset``); a limit or a
    Stop without a solution from the solver falls back to the best incumbent
    the reporter saw; integer columns are rounded in the returned vector.
    """
    reporter.close()
    notes = [message] if message else []
    if x is None and status in (Status.TIME_LIMIT, Status.INTERRUPTED):
        x = reporter.best_x
    if not status.has_solution:
        x = None
    elif x is None:
        if status == Status.TIME_LIMIT:
            status = Status.TIME_LIMIT_NO_TREE
        elif status == Status.INTERRUPTED:
            notes.append(STOPPED_WITHOUT_SOLUTION)
        else:
            status = Status.ERROR
            notes.append(OPTIMAL_WITHOUT_SOLUTION.format(backend=backend))
    objective = None
    if x is not None:
        x = np.asarray(x, dtype=float)
        problem = solution_problem(model, x, backend)
        if problem is not None and status in (Status.TIME_LIMIT, Status.INTERRUPTED) and reporter.best_x is not None \
                and solution_problem(model, reporter.best_x, backend) is None:
            # Stopped between a candidate and its cuts: the best solution that passed them stands.
            x, problem = np.asarray(reporter.best_x, dtype=float), None
        if problem is not None:
            status, x = Status.ERROR, None
            notes.append(problem)
        else:
            x = np.where(model.integrality, np.round(x), x)
            objective = model.objective(x)
    if bound is not None and not (np.isfinite(bound) and abs(bound) < INFINITE_BOUND):
        bound = None
    if status == Status.INFEASIBLE:
        bound = None
    if reporter.callback_error:
        notes.append(reporter.callback_error)
    return SolveResult(
        status=status,
        backend=backend,
        x=x,
        objective=objective,
        bound=bound,
        gap=relative_gap(objective, bound),
        runtime=reporter.elapsed(),
        nodes=int(nodes),
        message=" ".join(notes),
        n_cuts=int(n_cuts),
        extra=dict(extra or {}),
    )


def check_warm_start(model: ModelArrays, options_start: np.ndarray | None) -> tuple[np.ndarray | None, str]:
    """The warm start if it is a feasible solution of ``model``, else None and why."""
    if options_start is None:
        return None, ""
    x = np.asarray(options_start, dtype=float)
    if x.shape != (model.n_cols,):
        return None, f"warm start ignored: it has {x.size} values for {model.n_cols} columns"
    problem = solution_problem(model, x, "warm start")
    if problem is not None:
        return None, "warm start ignored: " + problem
    return np.where(model.integrality, np.round(x), x), "warm start accepted"
