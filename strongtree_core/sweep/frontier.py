"""The fairness-accuracy frontier: the best tree under each bound, kept only when no other is better on both."""

from __future__ import annotations

import math
import threading
from numbers import Real
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from strongtree_core.errors import StrongTreeError
from strongtree_core.renames import RENAMED_FRONTIER_ARGUMENTS, refuses_renamed
from strongtree_core.sweep.run import SweepProgress, sweep
from strongtree_core.vocabulary import FAIRNESS_NOTIONS

#: Bounds tried when none are given: 0 to 0.2.
DEFAULT_BOUNDS = (0.0, 0.01, 0.02, 0.05, 0.1, 0.15, 0.2)

NO_BOUNDS = "fairness_bound is empty: give at least one fairness bound, e.g. fairness_bound=[0.01, 0.05, 0.1]."
NO_NOTION = "fairness is empty: give a notion (or a list of notions), e.g. fairness='statistical_parity'."
BAD_NOTIONS = (
    "fairness={value!r}: a frontier needs a fairness notion or a list of them, each one of {allowed} "
    "(None, an unconstrained tree, is no notion)."
)
BAD_BOUNDS = (
    "fairness_bound={value!r}: give a fairness bound or a list of them, each a number in [0, 1] (a share of "
    "rows: 0.05 is 5 percentage points)."
)
FRONTIER_GRID_KEY = "grid sets {key!r}, which frontier sets itself from fairness= and fairness_bound=: leave it out of grid."


def best_per_bound(table: pd.DataFrame, measure: str = "train") -> pd.DataFrame:
    """Per notion and bound, the point of highest accuracy on ``measure`` among those with a tree
    (ties: a certified one, then the smaller gap, then the first point).

    Examples
    --------
    >>> import pandas as pd
    >>> from strongtree_core import StrongTreeClassifier
    >>> X = pd.DataFrame({'score': [1, 5, 2, 8, 7, 3, 9, 4], 'group': list('abababab')})
    >>> y = ['no', 'yes', 'no', 'yes', 'yes', 'no', 'yes', 'no']
    >>> from strongtree_core.sweep import sweep, best_per_bound
    >>> grid = {'fairness': ['statistical_parity'], 'fairness_bound': [0.5], 'depth': [1, 2]}
    >>> table = sweep(StrongTreeClassifier(pos_label='yes', time_limit=10), X, y, sensitive_features='group', grid=grid)
    >>> best_per_bound(table)[['fairness_bound', 'depth', 'train_accuracy']].to_dict('records')
    [{'fairness_bound': 0.5, 'depth': 1, 'train_accuracy': 1.0}]
    """
    acc, gap = f"{measure}_accuracy", f"{measure}_gap"
    trees = table[table["tree"].notna() & table[acc].notna()].copy()
    if trees.empty:
        return trees
    trees["_uncertified"] = ~trees["certified"].astype(bool)
    trees = trees.sort_values([acc, "_uncertified", gap, "point"], ascending=[False, True, True, True], kind="stable")
    best = trees.drop_duplicates(["fairness", "fairness_bound"], keep="first")
    return best.drop(columns="_uncertified")


def pareto_front(table: pd.DataFrame, measure: str = "train") -> pd.DataFrame:
    """Per notion, the points that no other point beats on both accuracy and gap on ``measure``.

    Sorted by gap (then accuracy, highest first, then bound), a point is kept only when
    its accuracy is above every point kept before it: along the front the gap and the
    accuracy both rise.  Points whose gap cannot be measured are left out.

    Examples
    --------
    >>> import pandas as pd
    >>> from strongtree_core import StrongTreeClassifier
    >>> X = pd.DataFrame({'score': [1, 5, 2, 8, 7, 3, 9, 4], 'group': list('abababab')})
    >>> y = ['no', 'yes', 'no', 'yes', 'yes', 'no', 'yes', 'no']
    >>> from strongtree_core.sweep import sweep, pareto_front
    >>> grid = {'fairness': ['statistical_parity'], 'fairness_bound': [0.0, 0.5], 'depth': [1]}
    >>> table = sweep(StrongTreeClassifier(pos_label='yes', time_limit=10), X, y, sensitive_features='group', grid=grid)
    >>> len(pareto_front(table)) <= len(table)
    True
    """
    acc, gap = f"{measure}_accuracy", f"{measure}_gap"
    kept = []
    for _, rows in table[table[gap].notna()].groupby("fairness", sort=False):
        best = -math.inf
        for index, row in rows.sort_values([gap, acc, "fairness_bound"], ascending=[True, False, True], kind="stable").iterrows():
            if row[acc] > best:
                kept.append(index)
                best = row[acc]
    return table.loc[kept]


def _notions(fairness) -> list[str]:
    if isinstance(fairness, str):
        notions = [fairness]
    elif isinstance(fairness, (list, tuple)):
        notions = list(fairness)
    else:
        raise StrongTreeError(BAD_NOTIONS.format(value=fairness, allowed=", ".join(map(repr, FAIRNESS_NOTIONS))))
    if not notions:
        raise StrongTreeError(NO_NOTION)
    if not all(isinstance(n, str) and n in FAIRNESS_NOTIONS for n in notions):
        raise StrongTreeError(BAD_NOTIONS.format(value=fairness, allowed=", ".join(map(repr, FAIRNESS_NOTIONS))))
    return notions


def _bounds(fairness_bound) -> list[float]:
    values = [fairness_bound] if isinstance(fairness_bound, Real) or isinstance(fairness_bound, str) else fairness_bound
    if not isinstance(values, (list, tuple, np.ndarray)):
        raise StrongTreeError(BAD_BOUNDS.format(value=fairness_bound))
    if len(values) == 0:
        raise StrongTreeError(NO_BOUNDS)
    if not all(isinstance(b, Real) and not isinstance(b, (bool, np.bool_)) for b in values):
        raise StrongTreeError(BAD_BOUNDS.format(value=fairness_bound))
    return [float(b) for b in values]


@refuses_renamed(RENAMED_FRONTIER_ARGUMENTS)
def frontier(
    estimator, X, y, *, sensitive_features, legitimate_features=None,
    fairness: str | Sequence[str] = "statistical_parity", fairness_bound: float | Sequence[float] = DEFAULT_BOUNDS,
    grid=None,
    backend: str = "serial", n_jobs: int | None = None, scheduler=None,
    progress: Callable[[SweepProgress], None] | None = None, stop: threading.Event | None = None,
) -> pd.DataFrame:
    """Accuracy against fairness: the best tree under each bound, Pareto-filtered, for one or several notions.

    One sweep over ``fairness`` x ``fairness_bound`` (x ``grid``, e.g. ``{"depth": [2, 3]}``) on every row;
    per notion and bound the most accurate tree is taken, then only the points that no other
    point of the same notion beats on both training accuracy and measured training gap are kept.

    Parameters
    ----------
    estimator, X, y, sensitive_features, legitimate_features, backend, n_jobs, scheduler, progress, stop
        As in :func:`~strongtree_core.sweep.sweep`.
    fairness : str or list of str, default "statistical_parity"
        The notion(s), each a frontier of its own.
    fairness_bound : float or list of float, default DEFAULT_BOUNDS
        The fairness bound(s) δ to try (shares in [0, 1]), as the estimator's ``fairness_bound``.
    grid : dict, optional
        Other parameters to try at every bound (the best is kept), e.g. depths.

    Returns
    -------
    DataFrame
        The sweep's columns (:func:`~strongtree_core.sweep.sweep`) for the kept points, by notion
        (in the order given) and measured gap: among them ``fairness``, ``fairness_bound``, ``certified``,
        ``objective``, ``bound``, ``train_accuracy``, ``train_gap``, ``time`` and ``tree``.
        Along each notion's rows both ``train_accuracy`` and ``train_gap`` increase.

    Examples
    --------
    >>> import pandas as pd
    >>> from strongtree_core import StrongTreeClassifier
    >>> X = pd.DataFrame({'score': [1, 5, 2, 8, 7, 3, 9, 4], 'group': list('abababab')})
    >>> y = ['no', 'yes', 'no', 'yes', 'yes', 'no', 'yes', 'no']
    >>> from strongtree_core.sweep import frontier
    >>> front = frontier(StrongTreeClassifier(depth=1, pos_label='yes', time_limit=10), X, y,
    ...                  sensitive_features='group', fairness_bound=[0.0, 0.5])
    >>> front[['fairness_bound', 'certified', 'train_accuracy']].to_dict('records')
    [{'fairness_bound': 0.0, 'certified': True, 'train_accuracy': 1.0}]
    """
    notions = _notions(fairness)
    bounds = _bounds(fairness_bound)
    extra = dict(grid or {})
    for key in ("fairness", "fairness_bound"):
        if key in extra:
            raise StrongTreeError(FRONTIER_GRID_KEY.format(key=key))
    table = sweep(
        estimator, X, y, sensitive_features=sensitive_features, legitimate_features=legitimate_features,
        grid={"fairness": notions, "fairness_bound": bounds, **extra}, backend=backend, n_jobs=n_jobs,
        scheduler=scheduler, progress=progress, stop=stop,
    )
    front = pareto_front(best_per_bound(table))
    order = {n: k for k, n in enumerate(notions)}
    front = front.assign(_notion=front["fairness"].map(order))
    front = front.sort_values(["_notion", "train_gap", "fairness_bound"], kind="stable")
    return front.drop(columns="_notion").reset_index(drop=True)
