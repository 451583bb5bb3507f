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
    no licence, or a model larger than the licence allows).

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from strongtree_core.encoding import TableEncoder, collapse_patterns
    >>> X = pd.DataFrame({'a': [0, 1, 0, 1, 1, 0], 'b': [1, 1, 0, 0, 1, 0]})
    >>> y = np.array([0, 1, 0, 1, 1, 1])
    >>> plan = TableEncoder().fit(X)
    >>> data = collapse_patterns(plan.transform(X), y, 2)
    >>> from strongtree_core.formulation import TreeSpec, build_model
    >>> built = build_model(data, TreeSpec(depth=1), 'flow')
    >>> from strongtree_core.solvers import SolverUnavailableError, choose_backend
    >>> try:
    ...     choose_backend(built.arrays, 'cplex')
    ... except SolverUnavailableError as error:
    ...     print(type(error).__name__)
    SolverUnavailableError
    """


def import_solver(package: str, solver: str) -> ModuleType:
    """Import a solver's Python package, or raise :class:`SolverUnavailableError`
    naming the package to install."""
    try:
        return importlib.import_module(package)
    except ImportError:
        raise SolverUnavailableError(MISSING_PACKAGE.format(solver=solver, package=package)) from None
