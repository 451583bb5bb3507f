"""Which Gurobi licence this process has, found once, quietly, and said in words.

Three kinds: ``full`` (no size limit), ``size_limited`` (the licence bundled
with the pip wheel: a model with more than 2,000 variables or 2,000 linear
constraints is refused with error 10010; lazy constraints added in a callback
do not count) and ``none``.  The kind is found by optimizing an empty model
with 2,001 variables, with output switched off before the environment starts
so that no banner is printed.

A licence can come from the environment: ``GRB_LICENSE_FILE`` (read by
Gurobi itself) or Web License Service keys ``WLSACCESSID``, ``WLSSECRET`` and
``LICENSEID``, passed as parameters of every Gurobi environment.  An app that
keeps the keys elsewhere passes them with :func:`set_licence_params`.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Any, Literal, Mapping

import numpy as np

from strongtree_core.formulation.arrays import ModelArrays
from strongtree_core.solvers.errors import SolverUnavailableError, import_solver

#: Limits of Gurobi's size-limited licence (pip wheel).
SIZE_LIMIT_VARIABLES = 2000
SIZE_LIMIT_CONSTRAINTS = 2000
#: Gurobi's error number for a model too large for the licence.
SIZE_LIMIT_ERROR = 10010
#: Environment variables holding Web License Service keys.
WLS_KEYS = ("WLSACCESSID", "WLSSECRET", "LICENSEID")

FULL = "Gurobi with a full licence (no size limit)."
SIZE_LIMITED = (
    "Gurobi's size-limited licence (pip wheel): models up to {max_vars:,} variables and {max_cons:,} constraints"
)
NONE = "Gurobi has no usable licence: {reason}"


@dataclass(frozen=True)
class LicenceInfo:
    """The Gurobi licence of this process.

    Attributes
    ----------
    kind : {"full", "size_limited", "none"}
    message : str
        The licence in words.
    max_variables, max_constraints : int or None
        The size limit (None when there is none).

    Examples
    --------
    >>> from strongtree_core.solvers import gurobi_licence
    >>> info = gurobi_licence()  # doctest: +SKIP
    >>> info.limited  # the pip wheel's licence: 2,000 variables and constraints  # doctest: +SKIP
    True
    """

    kind: Literal["full", "size_limited", "none"]
    message: str
    max_variables: int | None = None
    max_constraints: int | None = None

    def fits(self, n_variables: int, n_constraints: int) -> bool:
        """True when a model of this size can be solved under the licence."""
        if self.kind == "none":
            return False
        return (self.max_variables is None or n_variables <= self.max_variables) and (
            self.max_constraints is None or n_constraints <= self.max_constraints
        )

    def describe_fit(self, n_variables: int, n_constraints: int) -> str:
        """The licence and the model's size in one sentence, e.g. "Gurobi's
        size-limited licence (pip wheel): models up to 2,000 variables and 2,000
        constraints; this model has 15,432 variables and 30,030 constraints"."""
        if self.kind != "size_limited":
            return self.message
        return (
            f"{self.message.rstrip('.')}; this model has {n_variables:,} variables and {n_constraints:,} constraints"
        )


def gurobi_model_size(model: ModelArrays) -> tuple[int, int]:
    """(variables, linear constraints) of ``model`` as passed to Gurobi: a ranged
    row becomes two constraints, a free row none."""
    lower = np.isfinite(model.row_lower)
    upper = np.isfinite(model.row_upper)
    equal = lower & upper & (model.row_lower == model.row_upper)
    return model.n_cols, int(lower.sum() + upper.sum() - equal.sum())


_lock = threading.Lock()
_cached: list[LicenceInfo] = []
_explicit_params: dict[str, Any] = {}


def set_licence_params(params: Mapping[str, Any]) -> None:
    """Use these Gurobi environment parameters (e.g. WLS keys from an app's
    secrets) from now on, and detect the licence again.

    Examples
    --------
    >>> from strongtree_core.solvers import set_licence_params
    >>> set_licence_params({"WLSACCESSID": "...", "WLSSECRET": "...", "LICENSEID": 123})  # doctest: +SKIP
    """
    with _lock:
        _explicit_params.clear()
        _explicit_params.update({k: v for k, v in params.items() if v not in (None, "")})
        _cached.clear()


def licence_params() -> dict[str, Any]:
    """Environment parameters for Gurobi: WLS keys from the environment,
    overridden by :func:`set_licence_params`."""
    params: dict[str, Any] = {}
    for key in WLS_KEYS:
        if os.environ.get(key):
            params[key] = os.environ[key]
    params.update(_explicit_params)
    if "LICENSEID" in params:
        params["LICENSEID"] = int(params["LICENSEID"])
    return params


def gurobi_env(gp: Any, *, verbose: bool = False) -> Any:
    """A started Gurobi environment with the licence parameters and no banner."""
    env = gp.Env(empty=True)
    env.setParam("OutputFlag", 0)
    for key, value in licence_params().items():
        env.setParam(key, value)
    env.start()
    if verbose:
        env.setParam("OutputFlag", 1)
    return env


def _detect() -> LicenceInfo:
    try:
        gp = import_solver("gurobipy", "Gurobi")
    except SolverUnavailableError as exc:
        return LicenceInfo("none", str(exc))
    try:
        env = gurobi_env(gp)
    except gp.GurobiError as exc:
        return LicenceInfo("none", NONE.format(reason=str(exc)))
    try:
        probe = gp.Model(env=env)
        probe.addMVar(SIZE_LIMIT_VARIABLES + 1, ub=1.0)
        probe.optimize()
        probe.dispose()
    except gp.GurobiError as exc:
        if exc.errno != SIZE_LIMIT_ERROR:
            return LicenceInfo("none", NONE.format(reason=str(exc)))
        return LicenceInfo(
            "size_limited",
            SIZE_LIMITED.format(max_vars=SIZE_LIMIT_VARIABLES, max_cons=SIZE_LIMIT_CONSTRAINTS) + ".",
            SIZE_LIMIT_VARIABLES,
            SIZE_LIMIT_CONSTRAINTS,
        )
    finally:
        env.dispose()
    return LicenceInfo("full", FULL)


def gurobi_licence() -> LicenceInfo:
    """The licence of this process, detected on the first call (about 0.2 s).

    Examples
    --------
    >>> from strongtree_core.solvers import gurobi_licence
    >>> type(gurobi_licence()).__name__  # doctest: +SKIP
    'LicenceInfo'
    """
    with _lock:
        if not _cached:
            _cached.append(_detect())
        return _cached[0]


#: The environment variable of a Gurobi licence file.
LICENCE_FILE = "GRB_LICENSE_FILE"


_applied: list[dict[str, str]] = []


def apply_credentials(credentials: Mapping[str, str]) -> None:
    """Use the caller's Gurobi licence in this worker (once per process; a worker's own licence file is kept)."""
    if not credentials or (_applied and _applied[0] == dict(credentials)):
        return
    if credentials.get(LICENCE_FILE) and not os.environ.get(LICENCE_FILE):
        os.environ[LICENCE_FILE] = credentials[LICENCE_FILE]
    wls = {k: credentials[k] for k in WLS_KEYS if credentials.get(k)}
    if wls and {k: str(v) for k, v in licence_params().items() if k in WLS_KEYS} != wls:
        set_licence_params(wls)
    _applied[:] = [dict(credentials)]
