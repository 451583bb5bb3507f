"""Exact dynamic programming (pystreed) for the problems it solves exactly.

:func:`streed_solve` returns an :class:`AccelResult` whose tree has been
re-scored on the training patterns; :func:`plan_for` tells, without solving,
whether and how a :class:`~strongtree_core.formulation.spec.TreeSpec` is supported.
"""

from strongtree_core.accel.streed import AccelResult, SubSolve, streed_solve
from strongtree_core.accel.support import AccelPlan, cost_complexity_for, plan_for

__all__ = ["AccelPlan", "AccelResult", "SubSolve", "cost_complexity_for", "plan_for", "streed_solve"]
