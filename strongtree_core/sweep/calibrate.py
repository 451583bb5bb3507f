"""The paper's out-of-sample protocol: choose settings on a calibration part, refit, report on a test part.

Section 5 of the paper: each split is 50 % training, 25 % calibration, 25 % test;
a tree is fitted on the training part for every lambda in 0, 0.1, ..., 0.9, the
lambda of highest calibration accuracy is kept (per depth; the largest of tied
ones, as the paper's published runs show), a tree with it is
fitted on training and calibration parts together and its test accuracy reported.
With ``cv=k`` the choice is by the mean held-out accuracy of k folds instead.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from numbers import Integral
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from strongtree_core.errors import StrongTreeError
from strongtree_core.sweep.grid import (
    Fold,
    Point,
    expand_grid,
    holdout_split,
    make_folds,
)
from strongtree_core.sweep.run import SweepProgress, collect, plan, runner

#: The paper's lambda grid.
PAPER_LAMBDAS = tuple(round(0.1 * k, 1) for k in range(10))
#: Calibration accuracies this close are a tie.
TIE = 1e-12
#: Which of tied settings is chosen: the last in grid order (the paper: the largest lambda) or the first.
TIES = ("last", "first")

BAD_CALIBRATION_CV = (
    "cv must be None (one split of train / calibration / test from random_state), a number of folds (2 or more), "
    "a scikit-learn splitter, or a list of (train, calibration, test) row positions; got {value!r}."
)
NO_CALIBRATION_ROWS = "split {k} has no calibration rows: settings are chosen by their accuracy on them."
BAD_TIES = "ties={value!r} must be 'last' (the last tied setting in grid order, as the paper) or 'first'."
FOR_EACH_NOT_IN_GRID = "for_each names {key!r}, which the grid does not vary: add it to grid, e.g. {key!r}: [2, 3]."


@dataclass(frozen=True)
class Calibration:
    """What :func:`calibrate` found.

    Attributes
    ----------
    chosen : DataFrame
        One row per split (and per value of ``for_each``): the tree refitted with the chosen
        settings on training and calibration rows, with the sweep's columns (``test_accuracy``,
        the gaps, ``tree``, ...), ``split``, and ``calibration_accuracy`` the accuracy the choice
        was made by (the mean over folds with ``cv=k``).
    points : DataFrame
        Every setting on every split or fold, as :func:`~strongtree_core.sweep.sweep` returns them.

    Examples
    --------
    >>> import pandas as pd
    >>> from strongtree_core import StrongTreeClassifier
    >>> X = pd.DataFrame({'score': [1, 5, 2, 8, 7, 3, 9, 4], 'group': list('abababab')})
    >>> y = ['no', 'yes', 'no', 'yes', 'yes', 'no', 'yes', 'no']
    >>> from strongtree_core.sweep import calibrate
    >>> found = calibrate(StrongTreeClassifier(depth=1, time_limit=10), X, y, grid={'regularization': [0.0]},
    ...                   cv=[([0, 1, 2, 3], [4, 5], [6, 7])])
    >>> len(found.points)
    1
    """

    chosen: pd.DataFrame
    points: pd.DataFrame


def _splits(cv, y: pd.Series, n: int, test_size: float, calibration_size: float, random_state):
    """(train, calibration, test) positions of every fold, and the split each fold belongs to."""
    if cv is None:
        return [holdout_split(n, test_size=test_size, calibration_size=calibration_size, random_state=random_state)], [0]
    if (isinstance(cv, Integral) and not isinstance(cv, bool)) or hasattr(cv, "split"):
        rest, _, test = holdout_split(n, test_size=test_size, calibration_size=0.0, random_state=random_state)
        inner = make_folds(cv, y.iloc[rest].to_numpy(), rest.size)
        return [(rest[f.train], rest[f.test], test) for f in inner], [0] * len(inner)
    if isinstance(cv, Sequence) and not isinstance(cv, str) and cv and all(
        isinstance(s, (tuple, list)) and len(s) == 3 for s in cv
    ):
        return list(cv), list(range(len(cv)))
    raise StrongTreeError(BAD_CALIBRATION_CV.format(value=cv))


def choose(points: pd.DataFrame, settings: list[dict], split_of_fold: list[int], for_each: Sequence[str],
           ties: str = "last") -> list[tuple[int, tuple, int, float]]:
    """(split, for_each values, chosen setting, its mean calibration accuracy) for every split and group.

    A setting is a candidate once it finished on every fold of the split (a point with no tree
    scores NaN and is never chosen); the highest mean calibration accuracy wins, on a tie the
    last (``ties="last"``) or the first in grid order.
    """
    n_folds = len(split_of_fold)
    table = points.assign(setting=points["point"] // n_folds, split=[split_of_fold[f] for f in points["fold"]])
    folds_in_split = pd.Series(split_of_fold).value_counts()
    out = []
    for split, rows in table.groupby("split", sort=True):
        scores = rows.groupby("setting")["calibration_accuracy"].agg(["mean", "size", "count"])
        complete = scores[(scores["size"] == folds_in_split[split]) & (scores["count"] == scores["size"])]
        groups: dict[tuple, list[int]] = {}
        for s in range(len(settings)):
            groups.setdefault(tuple(settings[s][k] for k in for_each), []).append(s)
        for key, members in groups.items():
            candidates = complete.loc[complete.index.intersection(members), "mean"].sort_index()
            if not candidates.empty:
                tied = candidates.index[candidates >= candidates.max() - TIE]
                best = int(tied[-1] if ties == "last" else tied[0])
                out.append((int(split), key, best, float(candidates[best])))
    return out


def calibrate(
    estimator, X, y, *, sensitive_features=None, legitimate_features=None, grid=None, for_each: Sequence[str] = (),
    cv=None, test_size: float = 0.25, calibration_size: float = 0.25, random_state: int | None = 0,
    ties: str = "last", backend: str = "serial", n_jobs: int | None = None, scheduler=None,
    progress: Callable[[SweepProgress], None] | None = None, stop: threading.Event | None = None,
) -> Calibration:
    """Choose settings by calibration accuracy, refit on training and calibration rows, report the test part.

    Parameters
    ----------
    estimator, X, y, sensitive_features, legitimate_features, backend, n_jobs, scheduler, progress, stop
        As in :func:`~strongtree_core.sweep.sweep`; ``progress`` counts the refits too.
    grid : dict or list of dicts, default ``{"regularization": [0, 0.1, ..., 0.9]}``
        The settings to choose from.
    for_each : list of str
        Grid parameters chosen separately for each of their values (the paper: ``["depth"]``,
        one lambda per depth).
    cv : None, int, splitter or list of (train, calibration, test), optional
        None: one split from ``random_state`` (``test_size`` and ``calibration_size`` of the rows,
        the rest trains).  An int k or splitter: ``test_size`` of the rows held out for the test,
        k folds of the rest, the choice by mean held-out accuracy and the refit on all of the rest.
        A list of row positions: each split chosen and refitted on its own (the paper's 5 splits).
    test_size, calibration_size : float
        Shares of all rows (with ``cv=None``; ``test_size`` also with ``cv=k``).
    random_state : int or None
        Seed of the split (scikit-learn's ``train_test_split``).
    ties : {"last", "first"}, default "last"
        Of settings with the same calibration accuracy, the last in grid order or the first.
        The paper's runs take the largest lambda (the sparsest tree) among tied ones:
        "last" with lambdas in increasing order.

    Returns
    -------
    Calibration
        ``chosen``: the refitted tree of every split (and ``for_each`` value) with its test accuracy;
        ``points``: every setting's row on every fold.  A sweep stopped with ``stop`` keeps the points
        that finished; refits are only run when nothing stopped.

    Examples
    --------
    >>> import pandas as pd
    >>> from strongtree_core import StrongTreeClassifier
    >>> X = pd.DataFrame({'score': [1, 5, 2, 8, 7, 3, 9, 4], 'group': list('abababab')})
    >>> y = ['no', 'yes', 'no', 'yes', 'yes', 'no', 'yes', 'no']
    >>> from strongtree_core.sweep import calibrate
    >>> found = calibrate(StrongTreeClassifier(depth=1, time_limit=10), X, y, grid={'regularization': [0.0, 0.1]},
    ...                   cv=[([0, 1, 2, 3], [4, 5], [6, 7])])
    >>> type(found).__name__, sorted(found.chosen)[:3]
    ('Calibration', ['bound', 'calibration_accuracy', 'calibration_baseline_accuracy'])
    """
    if ties not in TIES:
        raise StrongTreeError(BAD_TIES.format(value=ties))
    grid = {"regularization": list(PAPER_LAMBDAS)} if grid is None else grid
    settings = expand_grid(estimator, grid)
    for key in for_each:
        if any(key not in s for s in settings):
            raise StrongTreeError(FOR_EACH_NOT_IN_GRID.format(key=key))
    target = y.reset_index(drop=True) if isinstance(y, pd.Series) else pd.Series(np.asarray(y).ravel())
    splits, split_of_fold = _splits(cv, target, len(target), test_size, calibration_size, random_state)
    problem, points = plan(estimator, X, y, sensitive_features=sensitive_features,
                           legitimate_features=legitimate_features, grid=grid, cv=splits)
    for fold in problem.folds:
        if fold.calibration.size == 0:
            raise StrongTreeError(NO_CALIBRATION_ROWS.format(k=fold.index))
    n_groups = len({tuple(s[k] for k in for_each) for s in settings})
    total = len(points) + n_groups * (max(split_of_fold) + 1)
    with runner(backend, n_jobs, scheduler) as rows:
        table = collect(rows(problem, points, stop), problem, total, progress)
        picks = choose(table, settings, split_of_fold, for_each, ties)
        refit_folds, refit_points = [], []
        for k, (split, _, setting, _) in enumerate(picks):
            first = problem.folds[split_of_fold.index(split)]
            train = np.union1d(first.train, first.calibration)  # with k folds: all rows but the test part
            refit_folds.append(Fold(k, train, np.zeros(0, dtype=np.int64), first.test))
            refit_points.append(Point(k, settings[setting], k))
        refit = replace(problem, folds=tuple(refit_folds))
        done = len(table)
        refits = collect(rows(refit, refit_points, stop), refit, total, _offset(progress, done))
    chosen = refits.merge(
        pd.DataFrame([(k, split, score) for k, (split, _, _, score) in enumerate(picks)],
                     columns=["point", "split", "_score"]),
        on="point", how="left",
    )
    chosen["calibration_accuracy"] = chosen.pop("_score")
    chosen = chosen.drop(columns="fold")
    chosen.insert(1, "split", chosen.pop("split"))
    return Calibration(chosen=chosen, points=table)


def _offset(progress, done: int):
    """``progress`` counting on from ``done`` points."""
    if progress is None:
        return None
    return lambda event: progress(replace(event, done=event.done + done))
