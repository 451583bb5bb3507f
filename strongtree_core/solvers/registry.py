"""Which backend solves a model, and why (in words).

``auto`` takes Gurobi when its licence accepts the model; otherwise an
open-source backend that suits the model: SCIP for a Benders master (the only
open-source backend here whose lazy constraints work), HiGHS for a monolithic
model (measured faster than SCIP on balanced FlowOCT, 1 thread: monk2 depth 2
proved in 10.5 s against 13.9 s, balance-scale depth 2 in 43.1 s against 54.7 s).
"""

from __future__ import annotations

from dataclasses import replace

from strongtree_core.formulation.arrays import ModelArrays
from strongtree_core.solvers.base import Backend, SolveOptions, SolveResult
from strongtree_core.solvers.errors import UNKNOWN_SOLVER, SolverUnavailableError
from strongtree_core.solvers.gurobi import GurobiBackend, check_fits
from strongtree_core.solvers.highs import HighsBackend
from strongtree_core.solvers.licence import gurobi_licence, gurobi_model_size
from strongtree_core.solvers.scip import ScipBackend

#: The registered backends by name.
BACKENDS: dict[str, Backend] = {"highs": HighsBackend(), "scip": ScipBackend(), "gurobi": GurobiBackend()}
SOLVER_CHOICES = ("auto", *BACKENDS)

#: Open-source backends in order of preference, for masters and for monolithic models.
OPEN_SOURCE_FOR_MASTER = ("scip", "highs")
OPEN_SOURCE_FOR_MONOLITHIC = ("highs", "scip")

NO_SOLVER = "No MIP solver is installed: install one with `pip install highspy` (or pyscipopt, gurobipy)."
WHY_GUROBI = "Gurobi: {licence}"
WHY_SCIP_MASTER = "SCIP: the open-source solver whose lazy constraints take the Benders cuts"
WHY_HIGHS_MONOLITHIC = "HiGHS: the faster open-source solver on FlowOCT in our measurements"
WHY_FALLBACK = "{solver}: the only open-source solver installed"
WHY_RESOLVE = (
    "; HiGHS cannot take lazy constraints, so the Benders master is solved again after each round of cuts (slow)"
)
AS_ASKED = "{solver} as asked"
GUROBI_SKIPPED = " (Gurobi not used: {why})"

_DISPLAY = {"highs": "HiGHS", "scip": "SCIP", "gurobi": "Gurobi"}


def choose_backend(model: ModelArrays, requested: str = "auto") -> tuple[Backend, str]:
    """The backend for ``model`` and the reason for the choice, in words.

    Parameters
    ----------
    model : ModelArrays
    requested : {"auto", "highs", "scip", "gurobi"}

    Raises
    ------
    SolverUnavailableError
        Unknown name, package missing, no Gurobi licence, or a model larger
        than the Gurobi licence accepts (the message names sizes and limits).

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
    >>> from strongtree_core.solvers import choose_backend
    >>> backend, why = choose_backend(built.arrays, 'highs')
    >>> backend.name
    'highs'
    """
    if requested not in SOLVER_CHOICES:
        raise SolverUnavailableError(UNKNOWN_SOLVER.format(name=requested, choices=", ".join(SOLVER_CHOICES)))
    if requested != "auto":
        backend = BACKENDS[requested]
        usable, why = backend.available()
        if not usable:
            raise SolverUnavailableError(why)
        if requested == "gurobi":
            check_fits(model)
        reason = AS_ASKED.format(solver=_DISPLAY[requested])
        if model.separator is not None and not backend.capabilities().lazy_constraints:
            reason += WHY_RESOLVE
        return backend, reason

    gurobi = BACKENDS["gurobi"]
    usable, why = gurobi.available()
    if usable:
        licence = gurobi_licence()
        n_vars, n_cons = gurobi_model_size(model)
        if licence.fits(n_vars, n_cons):
            return gurobi, WHY_GUROBI.format(licence=licence.describe_fit(n_vars, n_cons))
        why = licence.describe_fit(n_vars, n_cons)
    skipped = GUROBI_SKIPPED.format(why=why.rstrip("."))
    order = OPEN_SOURCE_FOR_MASTER if model.separator is not None else OPEN_SOURCE_FOR_MONOLITHIC
    installed = [name for name in order if BACKENDS[name].available()[0]]
    if not installed:
        raise SolverUnavailableError(NO_SOLVER)
    name = installed[0]
    if name != order[0]:
        reason = WHY_FALLBACK.format(solver=_DISPLAY[name])
    else:
        reason = WHY_SCIP_MASTER if model.separator is not None else WHY_HIGHS_MONOLITHIC
    if model.separator is not None and not BACKENDS[name].capabilities().lazy_constraints:
        reason += WHY_RESOLVE
    return BACKENDS[name], reason + skipped


def solve(model: ModelArrays, solver: str = "auto", options: SolveOptions = SolveOptions()) -> SolveResult:
    """Choose a backend (see :func:`choose_backend`) and solve ``model``.

    The reason for the choice is in ``result.extra["choice"]``.

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
    >>> from strongtree_core.solvers import SolveOptions, solve
    >>> result = solve(built.arrays, 'highs', SolveOptions(time_limit=10))
    >>> result.status.value, result.objective
    ('optimal', 5.0)
    """
    backend, reason = choose_backend(model, solver)
    result = backend.solve(model, options)
    return replace(result, extra={**result.extra, "choice": reason})
