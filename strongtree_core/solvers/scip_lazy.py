"""Lazy Benders cuts on SCIP through a constraint handler.

The handler checks an integral solution with the model's separator and, when
enforcing, adds the violated cuts (4b), at most :data:`MAX_CUTS_PER_ROUND` of
them, each as a removable linear constraint (``addCons``, result CONSADDED);
measured here, this kept about 650 cuts where
cuts added as LP rows aged out and were separated again 100,000 times.  SCIP
must know in which direction the cuts lock each variable (``model.lazy_locks``:
``g`` up, ``b`` and ``w`` down) or dual reductions would fix variables wrongly;
the lock callback runs only for constraints of the handler, hence one dummy
constraint.  The handler is not named "benders": SCIP already has one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from strongtree_core.formulation.arrays import ModelArrays
from strongtree_core.solvers.outcome import INTEGRALITY_TOLERANCE

HANDLER_NAME = "strongtree_lazy_cuts"
#: Cuts added per enforcement at most (one is enough to reject a solution; SCIP asks
#: again): on a million rows a single round of every violated cut, built term by term
#: through pyscipopt, took 10 s, during which SCIP could answer neither its limit nor Stop.
MAX_CUTS_PER_ROUND = 2000


def make_lazy_cut_handler(pyscipopt: Any, model: ModelArrays, variables: list, errors: list[str]) -> Any:
    """A ``Conshdlr`` instance enforcing ``model.separator`` on ``variables``
    (SCIP variables in column order).  Exceptions are recorded in ``errors``,
    interrupt the solve and never reach SCIP."""
    SCIP_RESULT = pyscipopt.SCIP_RESULT
    up = {int(j) for name, lock in model.lazy_locks.items() if lock == "up" for j in np.ravel(model.index[name])}
    down = {int(j) for name, lock in model.lazy_locks.items() if lock == "down" for j in np.ravel(model.index[name])}
    quicksum = pyscipopt.quicksum

    class LazyCutHandler(pyscipopt.Conshdlr):
        n_cuts = 0

        def _cuts(self, solution):
            x = np.array([self.model.getSolVal(solution, v) for v in variables])
            ints = x[model.integrality]
            if np.max(np.abs(ints - np.round(ints)), initial=0.0) > INTEGRALITY_TOLERANCE:
                return None
            return model.separator(np.where(model.integrality, np.round(x), x))

        def _fail(self, exc: Exception) -> None:
            errors.append(f"lazy cut handler: {type(exc).__name__}: {exc}")
            self.model.interruptSolve()

        def conscheck(self, constraints, solution, checkintegrality, checklprows, printreason, completely):
            try:
                cuts = self._cuts(solution)
            except Exception as exc:  # noqa: BLE001 - an exception would abort SCIP
                self._fail(exc)
                return {"result": SCIP_RESULT.INFEASIBLE}
            feasible = cuts is not None and cuts[0].shape[0] == 0
            return {"result": SCIP_RESULT.FEASIBLE if feasible else SCIP_RESULT.INFEASIBLE}

        def _enforce(self):
            try:
                cuts = self._cuts(None)
                if cuts is None:
                    return {"result": SCIP_RESULT.INFEASIBLE}
                A, lower, upper = cuts
                if A.shape[0] == 0:
                    return {"result": SCIP_RESULT.FEASIBLE}
                A = A.tocsr()
                for r in range(min(A.shape[0], MAX_CUTS_PER_ROUND)):
                    lo, hi = A.indptr[r], A.indptr[r + 1]
                    expr = quicksum(float(a) * variables[j] for j, a in zip(A.indices[lo:hi], A.data[lo:hi]))
                    lhs = None if not np.isfinite(lower[r]) else float(lower[r])
                    rhs = None if not np.isfinite(upper[r]) else float(upper[r])
                    self.model.addCons(pyscipopt.scip.ExprCons(expr, lhs=lhs, rhs=rhs), removable=True)
                self.n_cuts += min(A.shape[0], MAX_CUTS_PER_ROUND)
                return {"result": SCIP_RESULT.CONSADDED}
            except Exception as exc:  # noqa: BLE001 - an exception would abort SCIP
                self._fail(exc)
                return {"result": SCIP_RESULT.INFEASIBLE}

        def consenfolp(self, constraints, nusefulconss, solinfeasible):
            return self._enforce()

        def consenfops(self, constraints, nusefulconss, solinfeasible, objinfeasible):
            return self._enforce()

        def conslock(self, constraint, locktype, nlockspos, nlocksneg):
            for j in up:
                self.model.addVarLocksType(variables[j], locktype, nlocksneg, nlockspos)
            for j in down:
                self.model.addVarLocksType(variables[j], locktype, nlockspos, nlocksneg)

    return LazyCutHandler()


def install_lazy_cuts(pyscipopt: Any, scip: Any, model: ModelArrays, variables: list, errors: list[str]) -> Any:
    """Include the handler and its one constraint in ``scip``; return the handler."""
    handler = make_lazy_cut_handler(pyscipopt, model, variables, errors)
    # Enforce and check after integrality (priority 0), so solutions are integral.
    scip.includeConshdlr(
        handler, HANDLER_NAME, "Benders cuts (4b) separated at integral solutions",
        enfopriority=-1, chckpriority=-1, needscons=True,
    )
    scip.addPyCons(scip.createCons(handler, "lazy_cuts", initial=False, separate=False, propagate=False))
    scip.setParam("misc/allowstrongdualreds", False)
    scip.setParam("misc/allowweakdualreds", False)
    return handler
