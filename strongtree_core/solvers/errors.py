"""Why a backend cannot take a model, in words the user can act on."""

from __future__ import annotations

import importlib
from types import ModuleType

from strongtree_core.errors import StrongTreeError

#: A solver's Python package is not installed.
MISSING_PACKAGE = "{solver} is not installed: install it with `pip install {package}`."
#: A solver name that is not one of the registered backends.
UNKNOWN_SOLVER = "Unknown solver {name!r}: choose one of {choices}."
#: Gurobi has no usable licence on this machine.
NO_LICENCE = "Gurobi cannot start: {reason}"
#: The model is larger than the installed Gurobi licence accepts.
TOO_LARGE = (
    "This model has {n_vars:,} variables and {n_cons:,} constraints; {licence} "
    "Use solver='auto', 'highs' or 'scip', lower the depth or use fewer rows, or set a full Gurobi "
    "licence (GRB_LICENSE_FILE, or WLSACCESSID / WLSSECRET / LICENSEID)."
)


class SolverUnavailableError(StrongTreeError):
    """The requested backend cannot solve this model here (package missing,
    no licence, or a model larger than the licence allows)."""


def import_solver(package: str, solver: str) -> ModuleType:
    """Import a solver's Python package, or raise :class:`SolverUnavailableError`
    naming the package to install."""
    try:
        return importlib.import_module(package)
    except ImportError:
        raise SolverUnavailableError(MISSING_PACKAGE.format(solver=solver, package=package)) from None
