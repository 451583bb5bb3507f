"""Trade-offs at scale: a grid of tree settings over folds, the fairness-accuracy frontier, and the
paper's calibration protocol, run serially, on threads, on local process workers or on a Dask cluster.

>>> from strongtree_core.sweep import frontier, calibrate, sweep
>>> table = frontier(StrongTreeClassifier(depth=2, pos_label=1, time_limit=60), X, y,
...                  sensitive_features=group, fairness="statistical_parity",
...                  fairness_bound=[0.01, 0.05, 0.1], backend="processes", n_jobs=2)   # doctest: +SKIP

Every point is one fit, measured on its tree's own predictions (accuracy and every fairness
gap on the training, calibration and test rows); its row keeps the tree as JSON.  Rows
come back as points finish (:func:`iter_sweep`, or ``progress=``), and a sweep stopped
with ``stop=`` keeps the points that finished.
"""

from strongtree_core.sweep.backends import BACKENDS, MAX_ATTEMPTS
from strongtree_core.sweep.dask_backend import SCHEDULER_ENV
from strongtree_core.sweep.calibrate import PAPER_LAMBDAS, Calibration, calibrate
from strongtree_core.sweep.frontier import (
    DEFAULT_BOUNDS,
    best_per_bound,
    frontier,
    pareto_front,
)
from strongtree_core.sweep.grid import holdout_split
from strongtree_core.sweep.run import SweepProgress, iter_sweep, sweep, to_table

__all__ = [
    "BACKENDS",
    "Calibration",
    "DEFAULT_BOUNDS",
    "MAX_ATTEMPTS",
    "PAPER_LAMBDAS",
    "SCHEDULER_ENV",
    "SweepProgress",
    "best_per_bound",
    "calibrate",
    "frontier",
    "holdout_split",
    "iter_sweep",
    "pareto_front",
    "sweep",
    "to_table",
]
