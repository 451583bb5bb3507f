"""A Benders master on HiGHS: solve, separate, add the cuts, re-solve.

HiGHS cannot take lazy constraints from Python, so the master (4) / (EC.3) is
solved to optimality, the separator is called at its solution and the violated
cuts (4b) become ordinary rows; this repeats until the master's solution needs
no cut.  It is correct but slow (every round restarts branch-and-bound), so
the registry prefers SCIP or Gurobi for masters.

Every master optimum bounds the true optimum (the master is a relaxation).  Each master solution is also made feasible by lowering the
variables the cuts lock upwards (``model.lazy_locks``, e.g. ``g`` of the
misclassified patterns); the best such solution is the incumbent, reported as
progress and offered as the warm start of the next round.  The total time
limit and Stop cover all rounds.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from strongtree_core.formulation.arrays import CutRows, ModelArrays
from strongtree_core.solvers.base import SolveOptions, SolveResult, Status, relative_gap
from strongtree_core.solvers.highs_run import HighsSession, new_highs, run_highs
from strongtree_core.solvers.outcome import FEASIBILITY_TOLERANCE, check_warm_start, finish
from strongtree_core.solvers.solver_events import ProgressReporter


MISMATCH = "HiGHS reported the objective {reported:g} for a solution whose objective is {returned:g}."


def repair_by_locks(model: ModelArrays, x: np.ndarray, cuts: CutRows) -> np.ndarray | None:
    """``x`` with every up-locked column of a violated cut set to its lower bound,
    if that makes it a feasible solution of ``model`` (no cut left); else None."""
    up = [np.ravel(model.index[name]) for name, lock in model.lazy_locks.items() if lock == "up"]
    if not up:
        return None
    A, lower, upper = cuts
    ax = A @ x
    violated = np.flatnonzero((ax > upper + FEASIBILITY_TOLERANCE) | (ax < lower - FEASIBILITY_TOLERANCE))
    touched = np.unique(A[violated].indices)
    cols = np.intersect1d(touched, np.concatenate(up))
    repaired = x.copy()
    repaired[cols] = model.col_lower[cols]
    if model.max_violation(repaired) > FEASIBILITY_TOLERANCE or model.separator(repaired)[0].shape[0]:
        return None
    return repaired


def _round_optimum(model: ModelArrays, x: np.ndarray, seen: list[np.ndarray], objective: float | None) -> np.ndarray:
    """The round's optimal solution.

    After rows are added and a start is set, HiGHS (1.16) was seen to return the
    start vector from ``getSolution`` while reporting the optimum of the new MIP
    (objective 3 against 23 on soybean-small): the solution whose value matches
    the reported objective is taken from the improving-solution callbacks then.
    """
    if objective is None or abs(model.objective(x) - objective) <= 1e-6 * max(1.0, abs(objective)):
        return x
    matching = [s for s in seen if abs(model.objective(s) - objective) <= 1e-6 * max(1.0, abs(objective))]
    return matching[-1] if matching else x


def _with_rows(model: ModelArrays, blocks: list[CutRows]) -> ModelArrays:
    """``model`` with the cut rows appended (the separator is dropped: plain MIP)."""
    if not blocks:
        return replace(model, separator=None)
    return replace(
        model,
        A=sp.vstack([model.A] + [b[0] for b in blocks]).tocsr(),
        row_lower=np.concatenate([model.row_lower] + [b[1] for b in blocks]),
        row_upper=np.concatenate([model.row_upper] + [b[2] for b in blocks]),
        separator=None,
    )


def _tighter(sense: str, a: float | None, b: float | None) -> float | None:
    """The stronger of two bounds on the optimum (smaller for max)."""
    values = [v for v in (a, b) if v is not None and np.isfinite(v)]
    if not values:
        return None
    return min(values) if sense == "max" else max(values)


def solve_by_resolving(
    model: ModelArrays, options: SolveOptions, reporter: ProgressReporter, session: HighsSession, backend: str
) -> SolveResult:
    """Solve the Benders master ``model`` by rounds of solve / separate / add cuts."""
    cut_blocks: list[CutRows] = []
    start, start_note = check_warm_start(model, options.warm_start)
    if start is not None:
        reporter.incumbent(start, model.objective(start), None, 0)
    integral = model.integrality

    def rounded(x: np.ndarray) -> np.ndarray:
        return np.where(integral, np.round(x), x)

    bound: float | None = None
    nodes = 0
    n_cuts = 0
    rounds = 0
    errors: list[str] = []
    status = Status.ERROR
    final_x: np.ndarray | None = None
    solver_status = ""
    use_start = True
    while True:
        remaining = options.time_limit - reporter.elapsed()
        if options.stop is not None and options.stop.is_set():
            status = Status.INTERRUPTED
            break
        if remaining <= 0:
            status = Status.TIME_LIMIT
            break
        pending: list[CutRows] = []
        done_nodes = nodes

        round_solutions: list[np.ndarray] = []

        def on_incumbent(x: np.ndarray, out) -> None:
            x = rounded(x)
            round_solutions.append(x)
            cuts = model.separator(x)
            if cuts[0].shape[0]:
                pending.append(cuts)
                x = repair_by_locks(model, x, cuts)
            if x is not None:
                reporter.incumbent(
                    x, model.objective(x), _tighter(model.sense, bound, out.mip_dual_bound), done_nodes + out.mip_node_count
                )

        def on_tick(out) -> None:
            reporter.tick(
                reporter.best_objective, _tighter(model.sense, bound, out.mip_dual_bound), done_nodes + out.mip_node_count
            )

        # A fresh instance each round: HiGHS 1.16 reused after addRows was seen to
        # report an optimum (23 on soybean-small) with another solution (value 3).
        h = new_highs(_with_rows(model, cut_blocks), options)
        run = run_highs(
            h,
            session,
            time_limit=remaining,
            stop=options.stop,
            on_tick=on_tick,
            on_incumbent=on_incumbent,
            errors=errors,
            start=reporter.best_x if use_start else None,
        )
        rounds += 1
        nodes += run.nodes
        solver_status = run.status_name
        if run.abandoned:
            status = run.status  # INTERRUPTED after a Stop, TIME_LIMIT past the limit
            bound = _tighter(model.sense, bound, reporter.last_bound)
            break
        if run.status != Status.OPTIMAL:
            status = run.status
            if status in (Status.TIME_LIMIT, Status.INTERRUPTED):
                bound = _tighter(model.sense, bound, run.bound)
            break
        bound = _tighter(model.sense, bound, run.bound if run.bound is not None else run.objective)
        x = _round_optimum(model, rounded(run.x), round_solutions, run.objective)
        if run.objective is not None and abs(model.objective(x) - run.objective) > 1e-6 * max(1.0, abs(run.objective)):
            # HiGHS reported an optimum it did not return (seen after a warm start):
            # solve this round again without the start.
            if not use_start:
                status = Status.ERROR
                errors.append(MISMATCH.format(reported=run.objective, returned=model.objective(x)))
                break
            use_start = False
            continue
        use_start = True
        cuts = model.separator(x)
        if not cuts[0].shape[0]:
            status, final_x = Status.OPTIMAL, x
            break
        repaired = repair_by_locks(model, x, cuts)
        if repaired is not None:
            reporter.incumbent(repaired, model.objective(repaired), bound, nodes)
        for block in [cuts, *pending]:
            cut_blocks.append(block)
            n_cuts += block[0].shape[0]
        gap = relative_gap(reporter.best_objective, bound)
        if gap is not None and gap <= options.mip_gap:
            status, final_x = Status.OPTIMAL, reporter.best_x
            break
    message = "" if status != Status.ERROR else f"HiGHS ended a round with status {solver_status!r}."
    if errors:
        message = (message + " " if message else "") + "Callback error: " + errors[0]
    return finish(
        model,
        backend,
        status,
        final_x,
        bound,
        reporter,
        nodes=nodes,
        message=message,
        n_cuts=n_cuts,
        extra={"solver_status": solver_status, "warm_start": start_note, "rounds": rounds, "method": "re-solve loop"},
    )
