"""Solver backends: model arrays in, one result type and progress events out.

``solve(model, solver="auto", options)`` picks HiGHS, SCIP or Gurobi
(:func:`choose_backend`) and says why in ``result.extra["choice"]``.  Every
backend returns a :class:`SolveResult` with a :class:`Status` from one
vocabulary, and a solution only after it has been checked against the model.
"""

from strongtree_core.solvers.base import Capabilities, ProgressEvent, SolveOptions, SolveResult, Status
from strongtree_core.solvers.errors import SolverUnavailableError
from strongtree_core.solvers.licence import LicenceInfo, gurobi_licence, set_licence_params
from strongtree_core.solvers.registry import BACKENDS, choose_backend, solve

__all__ = [
    "BACKENDS",
    "Capabilities",
    "LicenceInfo",
    "ProgressEvent",
    "SolveOptions",
    "SolveResult",
    "SolverUnavailableError",
    "Status",
    "choose_backend",
    "gurobi_licence",
    "set_licence_params",
    "solve",
]
