"""Exact routes to optimal trees.

* :mod:`~strongtree_core.accel.search`: the exact search for every objective
  and side constraint (dynamic programming, a Lagrangian bound and
  branch-and-bound), the engine's route in ``formulation="auto"``;
* :mod:`~strongtree_core.accel.enumeration`: exhaustive search of every tree
  of depth 1 or 2, an independent check;
* :mod:`~strongtree_core.accel.streed`: pystreed (STreeD), an optional
  cross-check for the problems it solves exactly (not installed by default:
  it brings GPL dependencies).
"""

from strongtree_core.accel.search import ExactResult, exact_solve
from strongtree_core.accel.streed import AccelResult, SubSolve, streed_solve
from strongtree_core.accel.support import AccelPlan, cost_complexity_for, plan_for

__all__ = ["AccelPlan", "AccelResult", "ExactResult", "SubSolve", "cost_complexity_for", "exact_solve", "plan_for", "streed_solve"]
