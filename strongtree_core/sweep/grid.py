"""The points of a sweep: every combination of the grid's settings, on every fold.

A *fold* says which rows a point trains on and which it only measures:
``train`` (fit), ``calibration`` (choose settings, as the paper's 25 % part)
and ``test`` (report).  A *point* is one set of estimator parameters on one
fold; its number is its place in the sweep (settings first, folds within).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from numbers import Integral
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
from sklearn.model_selection import check_cv, train_test_split

from strongtree_core.errors import StrongTreeError
from strongtree_core.renames import RENAMED_PARAMETERS

#: Messages for bad input; tests assert their text.
BAD_GRID = (
    "grid must be a dict from parameter name to a list of values, or a list of such dicts; got {kind}."
)
BAD_GRID_KEY = "grid names {key!r}, which is not a parameter of {estimator}; its parameters are: {params}."
RENAMED_GRID_KEY = "grid names {key!r}, which is now called {new!r} (same meaning): name {new!r} in the grid instead."
EMPTY_GRID_VALUES = "grid gives no value for {key!r}: give at least one (e.g. {key!r}: [value])."
BAD_CV = (
    "cv must be None (fit on every row), a number of folds (2 or more), a scikit-learn splitter, or a list of "
    "(train, test) or (train, calibration, test) row positions; got {value!r}."
)
BAD_SPLIT_ROWS = (
    "split {k} of cv names row {row}, but the data has {n} rows (row positions run from 0 to {last})."
)
EMPTY_TRAIN = "split {k} of cv trains on no rows: every split needs at least one training row."
BAD_FRACTIONS = (
    "test_size ({test}) and calibration_size ({calibration}) must each be in [0, 1) and leave rows to train on "
    "(their sum is {total})."
)


@dataclass(frozen=True)
class Fold:
    """Row positions of one split of the data.

    Attributes
    ----------
    index : int
        The fold's number (0, 1, ...).
    train, calibration, test : ndarray of int
        Positions of the rows the tree is fitted on, and of the rows only measured
        (either may be empty).
    """

    index: int
    train: np.ndarray
    calibration: np.ndarray
    test: np.ndarray


@dataclass(frozen=True)
class Point:
    """One estimator setting on one fold.

    Attributes
    ----------
    index : int
        Place in the sweep (the ``point`` column).
    settings : mapping
        Estimator parameters set for this point (``set_params``).
    fold : int
        Index of the fold in the sweep's folds.
    """

    index: int
    settings: Mapping[str, Any]
    fold: int


def _values(value) -> list:
    """A grid entry as a list of values (a single value, a string included, is a list of one)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
        return [value]
    return [v.item() if isinstance(v, np.generic) else v for v in value]


def expand_grid(estimator, grid) -> list[dict[str, Any]]:
    """Every combination of the grid's values, in the order the grid names them (the last key varies fastest).

    ``grid`` is a dict (parameter name to a list of values, a single value counts as one) or a list of
    dicts, whose combinations are concatenated; ``None`` or ``{}`` is the estimator as it is.
    """
    if grid is None:
        grids: list[Mapping] = [{}]
    elif isinstance(grid, Mapping):
        grids = [grid]
    elif isinstance(grid, Sequence) and not isinstance(grid, str) and all(isinstance(g, Mapping) for g in grid):
        grids = list(grid) or [{}]
    else:
        raise StrongTreeError(BAD_GRID.format(kind=type(grid).__name__))
    params = estimator.get_params(deep=False)
    out: list[dict[str, Any]] = []
    for g in grids:
        for key, value in g.items():
            if key not in params and key in RENAMED_PARAMETERS:
                raise StrongTreeError(RENAMED_GRID_KEY.format(key=key, new=RENAMED_PARAMETERS[key]))
            if key not in params:
                raise StrongTreeError(BAD_GRID_KEY.format(
                    key=key, estimator=type(estimator).__name__, params=", ".join(sorted(params))))
            if not _values(value):
                raise StrongTreeError(EMPTY_GRID_VALUES.format(key=key))
        keys = list(g)
        for combo in itertools.product(*(_values(g[k]) for k in keys)):
            out.append(dict(zip(keys, combo)))
    return out


def _positions(rows: Iterable, n: int, k: int) -> np.ndarray:
    arr = np.asarray(list(rows) if not isinstance(rows, np.ndarray) else rows)
    if arr.dtype == bool:
        arr = np.flatnonzero(arr)
    arr = arr.astype(np.int64, copy=False).ravel()
    bad = arr[(arr < 0) | (arr >= n)]
    if bad.size:
        raise StrongTreeError(BAD_SPLIT_ROWS.format(k=k, row=int(bad[0]), n=n, last=n - 1))
    return arr


def make_folds(cv, y, n: int) -> list[Fold]:
    """The folds of ``cv`` for ``n`` rows with labels ``y``.

    * ``None``: one fold, every row trained on;
    * an int k >= 2 or a scikit-learn splitter: its (train, test) splits, the held-out
      rows as ``test`` (an int is scikit-learn's StratifiedKFold without shuffling);
    * a list of (train, test) or (train, calibration, test) row positions (or boolean masks).
    """
    empty = np.zeros(0, dtype=np.int64)
    if cv is None:
        return [Fold(0, np.arange(n, dtype=np.int64), empty, empty)]
    if isinstance(cv, (bool, np.bool_)):
        raise StrongTreeError(BAD_CV.format(value=cv))
    if isinstance(cv, Integral) or hasattr(cv, "split"):
        if isinstance(cv, Integral) and cv < 2:
            raise StrongTreeError(BAD_CV.format(value=cv))
        splitter = check_cv(cv, np.asarray(y), classifier=True)
        splits = [(train, [], test) for train, test in splitter.split(np.zeros((n, 1)), np.asarray(y))]
    elif isinstance(cv, Sequence) and not isinstance(cv, str) and cv and all(
        isinstance(s, (tuple, list)) and len(s) in (2, 3) for s in cv
    ):
        splits = [(s[0], [], s[1]) if len(s) == 2 else tuple(s) for s in cv]
    else:
        raise StrongTreeError(BAD_CV.format(value=cv))
    folds = []
    for k, (train, calibration, test) in enumerate(splits):
        fold = Fold(k, _positions(train, n, k), _positions(calibration, n, k), _positions(test, n, k))
        if fold.train.size == 0:
            raise StrongTreeError(EMPTY_TRAIN.format(k=k))
        folds.append(fold)
    return folds


def holdout_split(n: int, *, test_size: float = 0.25, calibration_size: float = 0.25,
                  random_state: int | None = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row positions of a (train, calibration, test) split, as in the paper (50 / 25 / 25 by default).

    scikit-learn's ``train_test_split`` twice with the same ``random_state``: first the test part
    (``test_size`` of the rows), then the calibration part out of the rest
    (``calibration_size / (1 - test_size)`` of it).  Sizes are shares of all rows.

    Examples
    --------
    >>> from strongtree_core.sweep import holdout_split
    >>> train, calibration, test = holdout_split(8)
    >>> len(train), len(calibration), len(test)
    (4, 2, 2)
    """
    total = test_size + calibration_size
    if not (0 <= test_size < 1 and 0 <= calibration_size < 1 and total < 1):
        raise StrongTreeError(BAD_FRACTIONS.format(test=test_size, calibration=calibration_size, total=total))
    rows = np.arange(n, dtype=np.int64)
    rest, test = (rows, rows[:0]) if test_size == 0 else train_test_split(rows, test_size=test_size, random_state=random_state)
    if calibration_size == 0:
        return np.sort(rest), rows[:0], np.sort(test)
    train, calibration = train_test_split(rest, test_size=calibration_size / (1 - test_size), random_state=random_state)
    return np.sort(train), np.sort(calibration), np.sort(test)


def make_points(settings: list[dict[str, Any]], folds: list[Fold]) -> list[Point]:
    """One point per setting and fold, numbered settings first, folds within."""
    return [Point(i * len(folds) + f.index, s, f.index) for i, s in enumerate(settings) for f in folds]
