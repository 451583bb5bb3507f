"""The points of a sweep: every combination of the grid's settings, on every fold.

A *fold* says which rows a point trains on and which it only measures:
``train`` (fit), ``calibration`` (choose settings, as the paper's 25 % part)
and ``test`` (report).  A *point* is one set of estimator parameters on one
fold; its number is its place in the sweep (settings first, folds within).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from numbers import Integral
from typing import Any, Iterable, Iterator, Mapping, Sequence

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
#: Most points a sweep plans (each one a fit): a grid past it is refused before anything is built.
MAX_POINTS = 1_000_000
TOO_MANY_POINTS = (
    "The grid has {settings:,} combinations of settings x {folds:,} fold(s) = {points:,} points, more than the "
    "{limit:,} a sweep runs (each point is a fit). Split the grid into several sweeps, or try fewer values."
)
EMPTY_GRID_VALUES = "grid gives no value for {key!r}: give at least one (e.g. {key!r}: [value])."
BAD_CV = (
    "cv must be None (fit on every row), a number of folds (2 or more), a scikit-learn splitter, or a list of "
    "(train, test) or (train, calibration, test) row positions; got {value!r}."
)
BAD_SPLIT_ROWS = (
    "split {k} of cv names row {row}, but the data has {n} rows (row positions run from 0 to {last})."
)
SPLIT_NOT_POSITIONS = (
    "split {k} of cv names row {value!r}, which is not a row position: give whole numbers (0, 1, ...) or a "
    "boolean mask with one True/False per row."
)
MASK_LENGTH = "split {k} of cv has a boolean mask of {m} values, but the data has {n} rows: give one True/False per row."
SPLIT_REPEATS_ROW = (
    "split {k} of cv names row {row} more than once in its {part} part: a row would count twice. Name each row once."
)
SPLIT_OVERLAP = (
    "split {k} of cv puts row {row} in both its {first} and {second} parts: a row measured as held out must not "
    "be trained on (nor the calibration rows tested on). Give each row to one part."
)
TOO_MANY_FOLDS = (
    "cv={k} asks for {k} folds, but the data has {n} rows and its largest class {label!r} has {count}: stratified "
    "folds need at least one row of a class per fold. Choose cv between 2 and {most}."
)
CV_CANNOT_SPLIT = "cv={value!r} could not split the {n} rows: {reason}"
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


class GridSettings(Sequence):
    """Every combination of a grid's values, computed when asked for (never all held at once).

    A grid of 100,000 combinations planned as a list of dicts took seconds before the first point
    ran; here ``len`` is a product of sizes, ``settings[i]`` is read off ``i`` digit by digit (the last
    key varies fastest, as :func:`itertools.product`), and iteration makes one dict at a time.

    Attributes
    ----------
    grids : tuple of (keys, values)
        Each dict of the grid as its keys and, per key, the list of its values.
    """

    def __init__(self, grids: Sequence[tuple[tuple[str, ...], tuple[list, ...]]]) -> None:
        self.grids = tuple(grids)
        self._sizes = [math.prod(len(v) for v in values) for _, values in self.grids]

    def __len__(self) -> int:
        return sum(self._sizes)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for keys, values in self.grids:
            for combo in itertools.product(*values):
                yield dict(zip(keys, combo))

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        for (keys, values), size in zip(self.grids, self._sizes):
            if i < size:
                picked = []
                for v in reversed(values):
                    i, digit = divmod(i, len(v))
                    picked.append(v[digit])
                return dict(zip(keys, reversed(picked)))
            i -= size
        raise IndexError(i)  # pragma: no cover - the range was checked above

    def values_with_a_combination(self) -> Iterator[tuple[str, Any, Mapping[str, Any]]]:
        """Each (key, value) of each grid, with the first combination of that grid: the combination
        that holds the value is ``{**first, key: value}`` (made only by a caller that needs it; the
        first combination is shared, never to be changed)."""
        for keys, values in self.grids:
            first = dict(zip(keys, (v[0] for v in values)))
            for k, key in enumerate(keys):
                for value in values[k]:
                    yield key, value, first


def expand_grid(estimator, grid) -> GridSettings:
    """Every combination of the grid's values, in the order the grid names them (the last key varies fastest).

    ``grid`` is a dict (parameter name to a list of values, a single value counts as one) or a list of
    dicts, whose combinations are concatenated; ``None`` or ``{}`` is the estimator as it is.  The
    combinations are a lazy sequence (:class:`GridSettings`).
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
    parts = []
    for g in grids:
        for key, value in g.items():
            if key not in params and key in RENAMED_PARAMETERS:
                raise StrongTreeError(RENAMED_GRID_KEY.format(key=key, new=RENAMED_PARAMETERS[key]))
            if key not in params:
                raise StrongTreeError(BAD_GRID_KEY.format(
                    key=key, estimator=type(estimator).__name__, params=", ".join(sorted(params))))
            if not _values(value):
                raise StrongTreeError(EMPTY_GRID_VALUES.format(key=key))
        keys = tuple(g)
        parts.append((keys, tuple(_values(g[k]) for k in keys)))
    settings = GridSettings(parts)
    if len(settings) > MAX_POINTS:
        raise StrongTreeError(TOO_MANY_POINTS.format(settings=len(settings), folds=1, points=len(settings),
                                                     limit=MAX_POINTS))
    return settings


def _positions(rows: Iterable, n: int, k: int, part: str = "") -> np.ndarray:
    """Row positions of one part of a split: whole numbers in range, or a boolean mask of one value per row."""
    arr = np.asarray(list(rows) if not isinstance(rows, np.ndarray) else rows).ravel()
    if arr.dtype == bool:
        if arr.size != n:
            raise StrongTreeError(MASK_LENGTH.format(k=k, m=arr.size, n=n))
        return np.flatnonzero(arr).astype(np.int64)
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        # Floats, text or objects: only whole numbers are row positions (1.0 is row 1; 0.5 is no row).
        for value in arr.tolist():
            if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
                    or not float(value).is_integer():
                raise StrongTreeError(SPLIT_NOT_POSITIONS.format(k=k, value=value))
    arr = arr.astype(np.int64, copy=False) if arr.size else np.zeros(0, dtype=np.int64)
    bad = arr[(arr < 0) | (arr >= n)]
    if bad.size:
        raise StrongTreeError(BAD_SPLIT_ROWS.format(k=k, row=int(bad[0]), n=n, last=n - 1))
    values, counts = np.unique(arr, return_counts=True)
    if (counts > 1).any():
        raise StrongTreeError(SPLIT_REPEATS_ROW.format(k=k, row=int(values[counts > 1][0]), part=part))
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
        labels = np.asarray(y)
        if isinstance(cv, Integral):
            classes, counts = np.unique(labels.astype(str), return_counts=True)
            if cv > n or cv > counts.max():
                raise StrongTreeError(TOO_MANY_FOLDS.format(k=int(cv), n=n, label=str(classes[counts.argmax()]),
                                                            count=int(counts.max()), most=int(min(n, counts.max()))))
        splitter = check_cv(cv, labels, classifier=True)
        try:
            splits = [(train, [], test) for train, test in splitter.split(np.zeros((n, 1)), labels)]
        except ValueError as exc:
            raise StrongTreeError(CV_CANNOT_SPLIT.format(value=cv, n=n, reason=exc)) from None
    elif isinstance(cv, Sequence) and not isinstance(cv, str) and cv and all(
        isinstance(s, (tuple, list)) and len(s) in (2, 3) for s in cv
    ):
        splits = [(s[0], [], s[1]) if len(s) == 2 else tuple(s) for s in cv]
    else:
        raise StrongTreeError(BAD_CV.format(value=cv))
    folds = []
    for k, (train, calibration, test) in enumerate(splits):
        fold = Fold(k, _positions(train, n, k, "train"), _positions(calibration, n, k, "calibration"),
                    _positions(test, n, k, "test"))
        if fold.train.size == 0:
            raise StrongTreeError(EMPTY_TRAIN.format(k=k))
        for first, second in (("train", "test"), ("train", "calibration"), ("calibration", "test")):
            both = np.intersect1d(getattr(fold, first), getattr(fold, second))
            if both.size:
                raise StrongTreeError(SPLIT_OVERLAP.format(k=k, row=int(both[0]), first=first, second=second))
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


class PointList(Sequence):
    """One point per setting and fold, numbered settings first, folds within; made when asked for."""

    def __init__(self, settings: Sequence[Mapping[str, Any]], folds: Sequence[Fold]) -> None:
        self.settings = settings
        self.n_folds = len(folds)

    def __len__(self) -> int:
        return len(self.settings) * self.n_folds

    def __iter__(self) -> Iterator[Point]:
        for i, s in enumerate(self.settings):
            for f in range(self.n_folds):
                yield Point(i * self.n_folds + f, s, f)

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return Point(i, self.settings[i // self.n_folds], i % self.n_folds)


def make_points(settings: Sequence[Mapping[str, Any]], folds: Sequence[Fold]) -> PointList:
    """One point per setting and fold, numbered settings first, folds within (a lazy sequence)."""
    return PointList(settings, folds)
