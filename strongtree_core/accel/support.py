"""Which problems the dynamic program solves exactly, and how.

pystreed (STreeD) minimizes a sum of per-leaf costs over trees of bounded
depth, optionally with a bound on the number of branching nodes, a minimum
leaf size and (for one binary sensitive attribute) a fairness constraint.
A :class:`TreeSpec` is accepted only when it maps onto one of its tasks with
the same optimum; everything else gets an "unsupported: ..." reason.

Mapping (``per_row_i`` is the MIO's objective weight of pattern ``i``):

* accuracy, balanced accuracy, sensitivity maximize
  ``(1 - lambda) * sum_i per_row_i [i correct] - lambda * b`` with ``b`` the
  number of branching nodes, which is the same as minimizing
  ``(1 - lambda) * sum_i per_row_i [i wrong] + lambda * b``.
* Unit weights and lambda = 0: task "accuracy" on the rows.
* Unit weights and lambda > 0: task "cost-complex-accuracy" on the rows, see
  :func:`cost_complexity_for` (with a branching bound below ``2^d - 1``:
  task "accuracy" and the enumeration below, since pystreed refuses the
  combination).
* Other weights: task "instance-cost-sensitive" with the cost vector
  ``(per_row_i if k != y_i else 0)_k``; for lambda > 0 the branching bound is
  enumerated (see :mod:`strongtree_core.accel.streed`).
* Statistical parity / equal opportunity with a binary group, two classes,
  unit weights and the accuracy objective: tasks "group-fairness" /
  "equality-of-opportunity" (see :mod:`strongtree_core.accel.fairness_task`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from strongtree_core.accel.fairness_task import FairnessRequest, fairness_request
from strongtree_core.encoding.patterns import PatternData
from strongtree_core.formulation.objectives import row_objective_weights
from strongtree_core.formulation.spec import TreeSpec

Task = Literal[
    "accuracy", "cost-complex-accuracy", "instance-cost-sensitive", "group-fairness", "equality-of-opportunity"
]

#: pystreed's largest depth.
MAX_DEPTH = 20

UNSUPPORTED_OBJECTIVE = (
    "unsupported: the {objective} objective is not a sum of per-row costs, so no pystreed task optimizes it exactly"
)
UNSUPPORTED_MAX_FEATURES = "unsupported: pystreed cannot bound the number of distinct features used (max_features_used)"
UNSUPPORTED_DEPTH = "unsupported: pystreed handles depth at most {max_depth}, got {depth}"
UNSUPPORTED_FAIR_OBJECTIVE = (
    "unsupported: pystreed's fairness tasks minimize misclassified rows; the {objective} objective is not available with them"
)
UNSUPPORTED_FAIR_WEIGHTS = (
    "unsupported: pystreed's fairness tasks count misclassified rows and take no sample weights; "
    "refit with unit weights or use the MIO"
)


@dataclass(frozen=True)
class AccelPlan:
    """How a supported :class:`TreeSpec` is handed to pystreed.

    Attributes
    ----------
    task : str
        pystreed optimization task.
    per_row : ndarray, shape (n_patterns,)
        The MIO objective weight of each pattern.
    unit_weights : bool
        ``per_row`` equals the row count of every pattern (plain accuracy).
    enumerate_branching : bool
        lambda > 0 is handled by solving once per bound on the branching nodes.
    fairness : FairnessRequest or None
    reason : str
        Why the plan is exact, in words.

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
    >>> from strongtree_core.accel import plan_for
    >>> plan = plan_for(data, TreeSpec(depth=2))
    >>> type(plan).__name__
    'AccelPlan'
    """

    task: Task
    per_row: np.ndarray
    unit_weights: bool
    enumerate_branching: bool
    fairness: FairnessRequest | None
    reason: str


def plan_for(data: PatternData, spec: TreeSpec) -> AccelPlan | str:
    """The pystreed task solving ``spec`` exactly, or an "unsupported: ..." reason.

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
    >>> from strongtree_core.accel import plan_for
    >>> type(plan_for(data, TreeSpec(depth=2))).__name__
    'AccelPlan'
    """
    if spec.depth > MAX_DEPTH:
        return UNSUPPORTED_DEPTH.format(max_depth=MAX_DEPTH, depth=spec.depth)
    if spec.max_features_used is not None:
        return UNSUPPORTED_MAX_FEATURES
    per_row = row_objective_weights(data, spec)
    if per_row is None:
        return UNSUPPORTED_OBJECTIVE.format(objective=spec.objective)
    unit = bool(np.allclose(per_row, data.count, rtol=0.0, atol=1e-12))
    fair = fairness_request(data, spec)
    if isinstance(fair, str):
        return fair
    if fair is not None:
        if spec.objective != "accuracy":
            return UNSUPPORTED_FAIR_OBJECTIVE.format(objective=spec.objective)
        if not unit:
            return UNSUPPORTED_FAIR_WEIGHTS
        task: Task = "group-fairness" if fair.kind == "statistical_parity" else "equality-of-opportunity"
        how = f"pystreed task {task!r} ({fair.describe()})"
        if spec.lambda_ > 0:
            how += "; lambda by enumerating the bound on branching nodes"
        return AccelPlan(task, per_row, True, spec.lambda_ > 0, fair, how)
    if unit:
        full = 2**spec.depth - 1
        if spec.lambda_ > 0 and (spec.max_branching is None or spec.max_branching >= full):
            return AccelPlan(
                "cost-complex-accuracy", per_row, True, False, None,
                "pystreed task 'cost-complex-accuracy' with cost_complexity = lambda / ((1 - lambda) * rows)",
            )
        # pystreed ends the process when a branching bound below 2^d - 1 is combined
        # with a cost complexity >= 1e-6, so lambda with such a bound is enumerated.
        how = "pystreed task 'accuracy' (misclassified rows)"
        if spec.lambda_ > 0:
            how += "; lambda by enumerating the bound on branching nodes"
        return AccelPlan("accuracy", per_row, True, spec.lambda_ > 0, None, how)
    how = "pystreed task 'instance-cost-sensitive' with each row's objective weight as its cost"
    if spec.lambda_ > 0:
        how += "; lambda by enumerating the bound on branching nodes"
    return AccelPlan("instance-cost-sensitive", per_row, False, spec.lambda_ > 0, None, how)


def cost_complexity_for(lambda_: float, n_rows: int) -> float:
    """pystreed's ``cost_complexity`` equivalent to the paper's ``lambda``.

    pystreed's task "cost-complex-accuracy" minimizes
    ``M + alpha * N * b`` (M misclassified rows, b branching nodes, N the
    number of training rows it was given: its branching cost is
    ``cost_complexity * train_size``, so alpha is relative to N).  The paper
    maximizes ``(1 - lambda) * (N - M) - lambda * b``, that is minimizes
    ``(1 - lambda) * M + lambda * b``, or (dividing by 1 - lambda > 0)
    ``M + lambda / (1 - lambda) * b``.  Hence ``alpha = lambda / ((1 - lambda) * N)``.

    pystreed caps alpha at 1 (a branching cost of N).  A split lowers M by
    less than N, so for ``lambda / (1 - lambda) >= N`` no split pays off under
    either cost and alpha = 1 gives the same optimum (the single leaf).

    Examples
    --------
    >>> from strongtree_core.accel import cost_complexity_for
    >>> round(cost_complexity_for(0.01, 100), 6)
    0.000101
    """
    if not 0.0 <= lambda_ < 1.0:
        raise ValueError(f"lambda must be in [0, 1), got {lambda_}")
    if n_rows <= 0:
        raise ValueError("no training rows")
    return min(1.0, lambda_ / ((1.0 - lambda_) * n_rows))
