"""Gurobi (gurobipy) backend: monolithic models and Benders masters with lazy cuts.

The arrays go in as one matrix variable (``addMVar``) and one block of rows
(``addMConstr`` with a sense per row; a ranged row becomes a ``<`` and a ``>``
row).  A Benders master runs with ``LazyConstraints=1``: at every MIPSOL the
separator is called and its cuts are added with ``cbLazy`` (they do not count
toward the size-limited licence).  Stop calls ``terminate()`` from the callback.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import scipy.sparse as sp

from strongtree_core.formulation.arrays import ModelArrays
from strongtree_core.solvers.base import Capabilities, SolveOptions, SolveResult, Status
from strongtree_core.solvers.errors import NO_LICENCE, TOO_LARGE, SolverUnavailableError, import_solver
from strongtree_core.solvers.licence import gurobi_env, gurobi_licence, gurobi_model_size
from strongtree_core.solvers.outcome import check_warm_start, finish
from strongtree_core.solvers.solver_events import ProgressReporter

#: Gurobi status (``GRB.Status`` name) -> the shared vocabulary; anything else is ERROR.
GUROBI_STATUS: dict[str, Status] = {
    "OPTIMAL": Status.OPTIMAL,
    "TIME_LIMIT": Status.TIME_LIMIT,
    "INFEASIBLE": Status.INFEASIBLE,
    "INF_OR_UNBD": Status.INFEASIBLE,  # every column here is bounded
    "INTERRUPTED": Status.INTERRUPTED,
}


def import_gurobipy() -> Any:
    """The ``gurobipy`` module, or :class:`SolverUnavailableError` naming the package."""
    return import_solver("gurobipy", "Gurobi")


def check_fits(model: ModelArrays) -> None:
    """Raise :class:`SolverUnavailableError` unless the licence takes ``model``."""
    import_gurobipy()
    licence = gurobi_licence()
    if licence.kind == "none":
        raise SolverUnavailableError(NO_LICENCE.format(reason=licence.message))
    n_vars, n_cons = gurobi_model_size(model)
    if not licence.fits(n_vars, n_cons):
        raise SolverUnavailableError(TOO_LARGE.format(n_vars=n_vars, n_cons=n_cons, licence=licence.message))


def _row_blocks(model: ModelArrays) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """Rows as (A, sense, rhs) with one sense character per row."""
    lo, hi = model.row_lower, model.row_upper
    equal = np.isfinite(lo) & (lo == hi)
    le = np.isfinite(hi) & ~equal
    ge = np.isfinite(lo) & ~equal
    import scipy.sparse as sp  # here: a process that never builds a Gurobi model never loads it

    A = model.A.tocsr()
    blocks = [(equal, "=", lo), (le, "<", hi), (ge, ">", lo)]
    matrix = sp.vstack([A[mask] for mask, _, _ in blocks], format="csr")
    sense = np.concatenate([np.full(int(mask.sum()), s) for mask, s, _ in blocks])
    rhs = np.concatenate([values[mask] for mask, _, values in blocks])
    return matrix, sense, rhs


class GurobiBackend:
    """Gurobi through gurobipy, with the licence found in :mod:`licence`."""

    name = "gurobi"
    package = "gurobipy"

    def available(self) -> tuple[bool, str]:
        try:
            import_gurobipy()
        except SolverUnavailableError as exc:
            return False, str(exc)
        licence = gurobi_licence()
        return licence.kind != "none", licence.message

    def capabilities(self) -> Capabilities:
        licence = gurobi_licence()
        return Capabilities(
            lazy_constraints=True,
            warm_start=True,
            progress=True,
            interrupt=True,
            max_variables=licence.max_variables,
            max_constraints=licence.max_constraints,
        )

    def solve(self, model: ModelArrays, options: SolveOptions) -> SolveResult:
        """Solve ``model``; raises :class:`SolverUnavailableError` when the
        licence cannot take it."""
        check_fits(model)
        gp = import_gurobipy()
        GRB = gp.GRB
        reporter = ProgressReporter(options.progress, model.sense)
        env = gurobi_env(gp, verbose=options.verbose)
        m = gp.Model(env=env)
        try:
            m.Params.Threads = max(1, int(options.threads))
            m.Params.MIPGap = float(options.mip_gap)
            x = m.addMVar(
                model.n_cols,
                lb=model.col_lower,
                ub=model.col_upper,
                obj=model.c,
                vtype=np.where(model.integrality, GRB.INTEGER, GRB.CONTINUOUS),
            )
            if model.branch_priority is not None:
                x.BranchPriority = np.asarray(model.branch_priority, dtype=int)
            m.ModelSense = GRB.MAXIMIZE if model.sense == "max" else GRB.MINIMIZE
            m.ObjCon = float(model.obj_offset)
            A, sense, rhs = _row_blocks(model)
            if A.shape[0]:
                m.addMConstr(A, x, sense, rhs)
            if model.separator is not None:
                m.Params.LazyConstraints = 1
            start, start_note = check_warm_start(model, options.warm_start)
            if start is not None:
                x.Start = start
                reporter.incumbent(start, model.objective(start), None, 0)
            errors: list[str] = []
            counter = {"cuts": 0}
            callback = _make_callback(gp, model, x.tolist(), reporter, options, errors, counter)
            m.Params.TimeLimit = max(options.time_limit - reporter.elapsed(), 1e-3)
            with reporter.heartbeat():
                m.optimize(callback)
            return self._result(gp, m, x, model, reporter, errors, counter["cuts"], start_note)
        finally:
            m.dispose()
            env.dispose()

    def _result(self, gp, m, x, model, reporter, errors, n_cuts, start_note) -> SolveResult:
        names = {getattr(gp.GRB.Status, n): n for n in dir(gp.GRB.Status) if n.isupper()}
        name = names.get(m.Status, str(m.Status))
        status = GUROBI_STATUS.get(name, Status.ERROR)
        values = np.array(x.X) if m.SolCount > 0 else None
        bound = float(m.ObjBound) if m.IsMIP and status != Status.INFEASIBLE else None
        message = "" if status != Status.ERROR else f"Gurobi ended with status {name}."
        if errors:
            status = Status.ERROR
            message = (message + " " if message else "") + "Callback error: " + errors[0]
        return finish(
            model,
            self.name,
            status,
            values,
            bound,
            reporter,
            nodes=int(m.NodeCount),
            message=message,
            n_cuts=n_cuts,
            extra={"solver_status": name, "warm_start": start_note},
        )


def _make_callback(gp, model: ModelArrays, variables: list, reporter: ProgressReporter, options: SolveOptions, errors: list[str], counter: dict):
    """The Gurobi callback: Stop, throttled progress, incumbents and lazy cuts."""
    GRB = gp.GRB
    C = GRB.Callback
    stop = options.stop
    # Where progress can be read: (best objective, bound, node count, solution count).
    snapshot_codes = {
        C.MIP: (C.MIP_OBJBST, C.MIP_OBJBND, C.MIP_NODCNT, C.MIP_SOLCNT),
        C.MIPNODE: (C.MIPNODE_OBJBST, C.MIPNODE_OBJBND, C.MIPNODE_NODCNT, C.MIPNODE_SOLCNT),
    }

    def callback(m, where):
        try:
            if stop is not None and stop.is_set():
                # A candidate solution is checked against the cuts first: terminating
                # before its lazy cuts are added would let Gurobi accept it.
                if where == GRB.Callback.MIPSOL and model.separator is not None:
                    _separate(m)
                m.terminate()
                return
            if where in snapshot_codes:
                if reporter.due():
                    best, bound, nodes, count = (m.cbGet(code) for code in snapshot_codes[where])
                    reporter.tick(best if count else None, bound, int(nodes))
            elif where == GRB.Callback.MIPSOL:
                _separate(m)
        except Exception as exc:  # noqa: BLE001 - must not propagate into Gurobi
            errors.append(f"{type(exc).__name__}: {exc}")
            m.terminate()

    def _separate(m) -> None:
        """At a candidate solution: add the Benders cuts it violates (Gurobi then
        rejects it), else record it as the incumbent."""
        values = np.array(m.cbGetSolution(variables))
        bound = m.cbGet(GRB.Callback.MIPSOL_OBJBND)
        nodes = int(m.cbGet(GRB.Callback.MIPSOL_NODCNT))
        if model.separator is not None:
            A, lower, upper = model.separator(np.where(model.integrality, np.round(values), values))
            if A.shape[0]:
                _add_lazy(gp, m, variables, A.tocsr(), lower, upper)
                counter["cuts"] += A.shape[0]
                return
        reporter.incumbent(values, model.objective(values), bound, nodes)

    return callback


def _add_lazy(gp, m, variables: list, A: sp.csr_matrix, lower: np.ndarray, upper: np.ndarray) -> None:
    for r in range(A.shape[0]):
        lo, hi = A.indptr[r], A.indptr[r + 1]
        expr = gp.LinExpr(A.data[lo:hi].tolist(), [variables[j] for j in A.indices[lo:hi]])
        if np.isfinite(upper[r]):
            m.cbLazy(expr <= float(upper[r]))
        if np.isfinite(lower[r]):
            m.cbLazy(expr >= float(lower[r]))
