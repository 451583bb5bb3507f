"""What happened when a tree was solved, kept with the tree."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Mapping

from strongtree_core.tree.scope import Scope

#: How a solve ended (the values of ``strongtree_core.solvers.base.Status``).
FINAL_STATUSES: tuple[str, ...] = (
    "optimal",
    "time_limit",
    "time_limit_no_tree",
    "infeasible",
    "interrupted",
    "error",
)
#: ``heuristic``: a tree from a heuristic (the local search), with no bound and
#: no optimality claim.
HEURISTIC = "heuristic"
#: ``running`` marks the best tree so far, reported while a solve goes on.
STATUSES: tuple[str, ...] = FINAL_STATUSES + (HEURISTIC, "running")

BAD_STATUS = "SolveRecord.status must be one of {allowed}, got {status!r}."
BAD_RECORD = "Not a stored solve record: {reason}."
HEURISTIC_CERTIFIED = "A heuristic's tree is never certified optimal: status 'heuristic' needs certified=False."


@dataclass(frozen=True)
class SolveRecord:
    """The facts of one solve.

    Attributes
    ----------
    status : str
        One of :data:`STATUSES`: how the solve ended, ``heuristic`` for a tree
        a heuristic found (never certified), or ``running`` for a tree
        reported during the solve.
    objective, bound, gap : float or None
        Best objective, best bound and relative gap in the model's sense
        (None when unknown).
    runtime : float
        Solver seconds.
    backend : str
        Solver that ran ("highs", "scip", "gurobi", ...).
    formulation : str
        Human name of the formulation, e.g. "FlowOCT (balanced, eq. 1)".
    method : str
        "flow", "benders" or "exact" (the exact search of accel/search.py).
    n_variables, n_constraints : int
        Size of the model handed to the solver.
    n_nonzeros : int
        Non-zero coefficients of its constraint matrix (a Benders master's
        before any cut); 0 when there is no model.
    n_rows, n_patterns : int
        Training rows and the weighted patterns they collapsed into.
    build_seconds : float
        Time spent building the model.
    message : str
        The solver's own words about how it ended.
    choice : str
        Why this backend and method were chosen.
    certified : bool
        True when the tree is proven optimal.
    lp_bound : float or None
        Optimal value of the formulation's LP relaxation (integrality dropped,
        before any solver cut) in the objective's units: correctly classified
        rows when lambda = 0.  For a Benders master, the relaxation of the
        master with every cut-set inequality (4b), which equals FlowOCT's.
        None for routes without one (the exact search, the local search) or
        when the LP was not solved within its time box.
    n_cuts : int or None
        Benders cuts (4b) added during the solve; None when the formulation
        has none.
    nodes : int or None
        Branch-and-bound nodes of the MIO solver, or partial trees and
        subproblems the exact search visited; None when unknown.
    promise : mapping or None
        With ``fairness_confidence``: the fairness promise for new rows
        (:meth:`strongtree_core.metrics.promise.FairnessPromise.to_dict`): the method, its
        guarantee, the confidence, the tightened training bound and the accuracy it
        cost.  None otherwise (and then left out of :meth:`to_dict`).
    scope : Scope or None
        What the certificate (and the bound) ranges over: the depth, the thresholds kept
        of the distinct cuts, the questions the ladder of thresholds certified, the
        training bound (:class:`~strongtree_core.tree.scope.Scope`).  None for records
        made before it was kept, and for records made outside the estimator.

    Examples
    --------
    >>> import pandas as pd
    >>> from strongtree_core import StrongTreeClassifier
    >>> X = pd.DataFrame({'score': [1, 5, 2, 8, 7, 3, 9, 4], 'group': list('abababab')})
    >>> y = ['no', 'yes', 'no', 'yes', 'yes', 'no', 'yes', 'no']
    >>> clf = StrongTreeClassifier(depth=1, time_limit=10).fit(X, y)
    >>> clf.record_.status, clf.record_.certified, clf.record_.method
    ('optimal', True, 'exact')
    """

    status: str
    objective: float | None = None
    bound: float | None = None
    gap: float | None = None
    runtime: float = 0.0
    backend: str = ""
    formulation: str = ""
    method: str = ""
    n_variables: int = 0
    n_constraints: int = 0
    n_nonzeros: int = 0
    n_rows: int = 0
    n_patterns: int = 0
    build_seconds: float = 0.0
    message: str = ""
    choice: str = ""
    certified: bool = False
    lp_bound: float | None = None
    n_cuts: int | None = None
    nodes: int | None = None
    promise: Mapping | None = None
    scope: Scope | None = None

    def __post_init__(self) -> None:
        status = getattr(self.status, "value", self.status)
        if status not in STATUSES:
            raise ValueError(BAD_STATUS.format(allowed=", ".join(STATUSES), status=status))
        object.__setattr__(self, "status", status)
        if status == HEURISTIC and self.certified:
            raise ValueError(HEURISTIC_CERTIFIED)
        if isinstance(self.scope, Mapping):
            object.__setattr__(self, "scope", Scope.from_dict(self.scope))
        for name in ("objective", "bound", "gap", "lp_bound"):
            value = getattr(self, name)
            if value is not None:
                # NaN means unknown, like None (and keeps equality after a round trip).
                object.__setattr__(self, name, None if math.isnan(value) else float(value))

    @classmethod
    def in_progress(
        cls, elapsed: float, objective: float | None, bound: float | None, gap: float | None
    ) -> "SolveRecord":
        """The record of an incumbent tree reported during a solve (status ``running``)."""
        return cls(
            "running",
            objective=objective,
            bound=bound,
            gap=gap,
            runtime=float(elapsed),
            message="best tree so far; the solve is still running",
        )

    def to_dict(self) -> dict:
        """JSON-safe fields (non-finite floats as the strings "nan", "inf", "-inf")."""
        out = {key: _float_out(value) for key, value in asdict(self).items()}
        for optional in ("promise", "scope"):  # records without them stay readable by earlier versions
            if out[optional] is None:
                del out[optional]
        return out

    @classmethod
    def from_dict(cls, data: Mapping) -> "SolveRecord":
        """Read the output of :meth:`to_dict` back exactly."""
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown or "status" not in data:
            reason = f"unknown fields {sorted(unknown)}" if unknown else "no 'status'"
            raise ValueError(BAD_RECORD.format(reason=reason))
        return cls(
            **{key: float(value) if key in _FLOATS and isinstance(value, str) else value
               for key, value in data.items()}
        )


_FLOATS = ("objective", "bound", "gap", "runtime", "build_seconds", "lp_bound")


def _float_out(value):
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    return value
