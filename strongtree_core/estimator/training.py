"""What ``fit`` reads before any solve: the training rows checked (their classes, weights and groups),
the binary features the tree may split on, and the messages for what it refuses.

Shared by :class:`~strongtree_core.estimator.classifier.StrongTreeClassifier` (rows in memory) and
:mod:`~strongtree_core.estimator.table_fit` (tables read in passes), so that both refuse the same input
in the same words, and neither imports the other's module.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np
import pandas as pd
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import column_or_1d

from strongtree_core.encoding import EncodingPlan
from strongtree_core.encoding.features import python_scalar
from strongtree_core.encoding.groups import GroupCoding
from strongtree_core.encoding.patterns import PatternData, restrict_features
from strongtree_core.engine.routes import Solved
from strongtree_core.errors import StrongTreeError
from strongtree_core.formulation.fairness_constraints import ParityConstraint
from strongtree_core.structure import TreeStructure

COMPLEX_X = "Complex data not supported: {what} holds complex numbers (e.g. {example!r}); pass real numbers."
LENGTH_MISMATCH = "X has {n_x} rows but {name} has {n_other}: they must describe the same rows."
CONTINUOUS_TARGET = (
    "y looks continuous: {n} distinct numbers, not all whole (e.g. {examples}). A classification tree needs "
    "class labels: bin the numbers into classes (e.g. pd.cut(y, bins=3)), or pass codes as text (y.astype(str))."
)
NEEDS_SENSITIVE = "fairness={fairness!r} needs the protected attribute: pass fit(..., sensitive_features=...)."
NEEDS_LEGITIMATE = "conditional statistical parity needs the legitimate factor: pass fit(..., legitimate_features=...)."
ONE_CLASS = "y has one class only ({label!r}): there is nothing to classify."
Y_NOT_ONE_COLUMN = "y must be one label per row (one column), got an array of shape {shape}."
MISSING_TARGET = (
    "y has no value in {n} of {total} rows (the first is row {first}): a tree learns only from labelled rows. "
    "Drop those rows before fitting, e.g. keep = y.notna(); fit(X[keep], y[keep])."
)
INFINITE_TARGET = "y is infinite in {n} of {total} rows (the first is row {first}): class labels must be finite numbers or text."
MIXED_TARGET = (
    "y mixes {kinds} labels (e.g. {examples}): give every label the same type, e.g. y.astype(str)."
)
WEIGHTS_NOT_ONE_COLUMN = "sample_weight must be one number per row, got an array of shape {shape}."
WEIGHTS_NOT_NUMBERS = "sample_weight must hold numbers, but holds {examples}."
WEIGHTS_MISSING = "sample_weight is missing (NaN) in {n} of {total} rows: give every row a weight (1 for an ordinary row)."
WEIGHTS_INFINITE = "sample_weight is infinite in {n} of {total} rows: every weight must be a finite number."
WEIGHTS_NEGATIVE = (
    "sample_weight is negative in {n} of {total} rows (the smallest is {low!r}): weights must be >= 0. "
    "Leave a row out rather than giving it a negative weight."
)
WEIGHTS_ALL_ZERO = "sample_weight is zero in every row: at least one row needs a positive weight."
WEIGHTS_TOO_LARGE = (
    "sample_weight sums to more than the largest number a float holds: divide every weight by the same number "
    "(e.g. by the largest weight)."
)
#: Largest ratio of the heaviest to the lightest positive weight: beyond it the
#: solvers' relative tolerances (about 1e-9) cannot tell the light rows apart from 0.
MAX_WEIGHT_RATIO = 1e9
WEIGHTS_SPREAD = (
    "sample_weight spans {low!r} to {high!r}, a ratio above {limit:.0e}: solvers compare sums only up to a relative "
    "tolerance, so rows that light would not count. Leave the lightest rows out, or compress the weights (e.g. np.sqrt)."
)
ONE_GROUP = (
    "The protected attribute {column!r} has a single value ({value!r}) in all {n} training rows: {notion} "
    "compares groups, so there is nothing to compare and no gap to bound. Pass a protected attribute with at "
    "least two groups, or fit without fairness."
)
NOTHING_TO_COMPARE = (
    "{notion} compares the groups of {column!r}, but no two groups both have rows among the {cohorts} of the "
    "training data, so there is no gap to bound. Choose another notion, or fit without {notion}."
)
#: The solve gets at least this long, even when reading the table used up the time limit.
MIN_SOLVE_SECONDS = 0.05
#: Seconds per training row kept back from the solve for what follows it (re-scoring the
#: tree, its per-node counts, the constraint checks): 0.8 s for a million rows, measured.
FINISH_SECONDS_PER_ROW = 1e-6


@dataclass(frozen=True)
class Training:
    """The training data as ``fit`` reads it: checked, rows of weight 0 left out.

    X given as an array is kept as that array (``array``) and becomes a DataFrame
    (``X``) only when something needs the table: named protected columns, rows left
    out, or an encoding of other values than 0 and 1."""

    table: pd.DataFrame | None  # X as a DataFrame with a fresh index; None until ``X`` builds it from ``array``
    array: np.ndarray | None  # X as the 2-D array given (columns x0, x1, ...), every row kept; else None
    y_index: np.ndarray  # class index of every row
    classes: np.ndarray
    target: str
    weights: np.ndarray | None
    positive: int | None  # index of pos_label in classes
    groups: GroupCoding | None
    legit: GroupCoding | None
    protected_in_x: tuple[str, ...]  # protected columns that are also columns of X
    protected: tuple[str, ...]  # names of the protected columns (kept in the tree's context)
    legitimate: tuple[str, ...]  # names of the legitimate factors
    columns_in: tuple  # the columns of X as given
    fitted_on_frame: bool

    @cached_property
    def X(self) -> pd.DataFrame:
        """X as a DataFrame with a fresh index."""
        return self.table if self.table is not None else array_table(self.array)

    def subset(self, rows: np.ndarray) -> "Training":
        """These rows (positions among the rows kept; repeats allowed), groups coded as on all of them."""
        return replace(
            self, table=None if self.table is None else self.table.iloc[rows].reset_index(drop=True),
            array=None if self.array is None else self.array[rows], y_index=self.y_index[rows],
            weights=None if self.weights is None else self.weights[rows],
            groups=None if self.groups is None else replace(self.groups, codes=self.groups.codes[rows]),
            legit=None if self.legit is None else replace(self.legit, codes=self.legit.codes[rows]),
        )


@dataclass(frozen=True)
class Encoded:
    """The columns the tree may split on, as binary features."""

    plan: EncodingPlan
    X_binary: np.ndarray
    feature_names: tuple[str, ...]
    cart_tree: TreeStructure | None  # CART on the raw columns, a start for the search
    cart_sample: tuple[int, int] | None = None  # CART grown on (rows, of the training rows), when a sample

    def subset(self, rows: np.ndarray) -> "Encoded":
        """The same binary features on these rows (positions among the training rows kept)."""
        return replace(self, X_binary=self.X_binary[rows], cart_sample=None)

    @property
    def cut_free(self) -> bool:
        """No threshold of the coding was chosen from the rows (every column 0/1 or categorical): the same
        features on a part of the rows are those a fit on that part alone would make (levels aside)."""
        return all(column.kind in ("binary", "categorical") for column in self.plan.columns)


def array_names(n_columns: int) -> list[str]:
    """The names of an array's columns: x0, x1, ..."""
    return [f"x{j}" for j in range(n_columns)]


def array_table(arr: np.ndarray) -> pd.DataFrame:
    """A checked 2-D array as a table with columns x0, x1, ...  (the names as a plain Index of Python
    strings: building pandas' string dtype costs more than the table)."""
    return pd.DataFrame(arr, columns=pd.Index(array_names(arr.shape[1]), dtype=object))


def label_kind(value) -> str:
    if isinstance(value, str):
        return "text"
    if isinstance(value, (bool, np.bool_)):
        return "True/False"
    if isinstance(value, numbers.Number):
        return "number"
    return type(value).__name__


#: Integer labels of at most this many rows are sorted by numpy (faster than pandas' hashing on small data).
SMALL_TARGET = 10_000


def classes_of(y, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The classes of y and the class index of every row, after checking y."""
    y_arr = np.asarray(y)
    if y_arr.ndim > 1 and not (y_arr.ndim == 2 and y_arr.shape[1] == 1):
        raise StrongTreeError(Y_NOT_ONE_COLUMN.format(shape=y_arr.shape))
    if y_arr.ndim == 2:  # a column: scikit-learn's DataConversionWarning, then one label per row
        y_arr = column_or_1d(y_arr, warn=True)
    y_arr = y_arr.ravel()
    if y_arr.dtype.kind == "c":
        raise StrongTreeError(COMPLEX_X.format(what="y", example=python_scalar(y_arr[0]) if y_arr.size else 0j))
    if y_arr.shape[0] != n:
        raise StrongTreeError(LENGTH_MISMATCH.format(n_x=n, name="y", n_other=y_arr.shape[0]))
    missing = np.flatnonzero(pd.isna(y_arr))
    if missing.size:
        raise StrongTreeError(MISSING_TARGET.format(n=missing.size, total=n, first=int(missing[0])))
    if y_arr.dtype == object:
        by_kind: dict[str, object] = {}
        for value in pd.unique(y_arr):
            by_kind.setdefault(label_kind(value), value)
        if len(by_kind) > 1:
            kinds = sorted(by_kind)
            examples = ", ".join(repr(python_scalar(by_kind[k])) for k in kinds)
            raise StrongTreeError(MIXED_TARGET.format(kinds=" and ".join(kinds), examples=examples))
        if "number" in by_kind:
            y_arr = pd.Series(y_arr).infer_objects().to_numpy()
    if y_arr.dtype.kind == "f":
        infinite = np.flatnonzero(np.isinf(y_arr))
        if infinite.size:
            raise StrongTreeError(INFINITE_TARGET.format(n=infinite.size, total=n, first=int(infinite[0])))
        if type_of_target(y_arr) == "continuous":  # numbers with a fractional part (scikit-learn's rule)
            distinct = np.unique(y_arr)
            examples = ", ".join(repr(float(v)) for v in distinct[distinct != np.round(distinct)][:3])
            raise StrongTreeError(CONTINUOUS_TARGET.format(n=distinct.size, examples=examples))
    if y_arr.dtype.kind in "iu" and y_arr.size <= SMALL_TARGET:  # the same classes and codes, without pandas
        classes, y_idx = np.unique(y_arr, return_inverse=True)
        return classes, y_idx.reshape(-1).astype(np.int64)
    # Hashing, then sorting the few distinct labels: np.unique sorted a million texts (2 s).
    y_idx, classes = pd.factorize(y_arr, sort=True)
    return np.asarray(classes), y_idx.astype(np.int64)


def checked_weights(sample_weight, n: int) -> np.ndarray:
    """sample_weight as finite, non-negative floats, not all zero."""
    raw = np.asarray(sample_weight)
    if raw.ndim > 1 and not (raw.ndim == 2 and raw.shape[1] == 1):
        raise StrongTreeError(WEIGHTS_NOT_ONE_COLUMN.format(shape=raw.shape))
    raw = pd.Series(raw.ravel())
    if raw.shape[0] != n:
        raise StrongTreeError(LENGTH_MISMATCH.format(n_x=n, name="sample_weight", n_other=raw.shape[0]))
    if pd.api.types.is_bool_dtype(raw.dtype):
        bad = raw
    else:
        number = pd.to_numeric(raw, errors="coerce") if raw.dtype == object else raw
        bad = raw[(number.isna() & raw.notna()) | raw.map(lambda v: isinstance(v, (bool, np.bool_, str)))]
    if len(bad):
        raise StrongTreeError(WEIGHTS_NOT_NUMBERS.format(examples=", ".join(repr(python_scalar(v)) for v in pd.unique(bad)[:3])))
    weights = raw.to_numpy(dtype=float, na_value=np.nan)
    for flags, message in ((np.isnan(weights), WEIGHTS_MISSING), (np.isinf(weights), WEIGHTS_INFINITE)):
        if flags.any():
            raise StrongTreeError(message.format(n=int(flags.sum()), total=n))
    if (weights < 0).any():
        raise StrongTreeError(WEIGHTS_NEGATIVE.format(n=int((weights < 0).sum()), total=n, low=float(weights.min())))
    positive = weights[weights > 0]
    if positive.size == 0:
        raise StrongTreeError(WEIGHTS_ALL_ZERO)
    with np.errstate(over="ignore"):
        total = weights.sum()
    if not np.isfinite(total):
        raise StrongTreeError(WEIGHTS_TOO_LARGE)
    if positive.max() > MAX_WEIGHT_RATIO * positive.min():
        raise StrongTreeError(
            WEIGHTS_SPREAD.format(low=float(positive.min()), high=float(positive.max()), limit=MAX_WEIGHT_RATIO)
        )
    return weights


def check_comparable(constraints, y_idx, groups: GroupCoding | None, legit: GroupCoding | None, positive,
                      count=None) -> None:
    """Refuse a fairness constraint with no pair of groups to compare (its gap could not be measured);
    ``count``: the rows behind each entry when they are patterns."""
    for c in constraints:
        if not isinstance(c, ParityConstraint) or groups is None:
            continue
        if groups.n_levels == 1:
            raise StrongTreeError(
                ONE_GROUP.format(column=groups.name, value=groups.levels[0],
                                 n=len(groups.codes) if count is None else int(np.sum(count)), notion=c.notion)
            )
        cohorts, _ = c.cohorts(y_idx, groups.codes, None if legit is None else legit.codes, positive, count=count)
        if not any(cohort.pairs() for cohort in cohorts):
            raise StrongTreeError(
                NOTHING_TO_COMPARE.format(
                    notion=c.notion, column=groups.name, cohorts=" and the ".join(cohort.label for cohort in cohorts)
                )
            )


def to_certified_thresholds(solved: Solved, encoded: Encoded, data: PatternData) -> tuple[Solved, Encoded, PatternData]:
    """The solve, encoding and patterns restricted to ``solved.features``: the thresholds the
    exact search certified its tree over (the last rung of its ladder)."""
    keep = np.asarray(solved.features, dtype=np.int64)
    where = {int(f): j for j, f in enumerate(keep)}
    feature = np.array([where[int(f)] if f >= 0 else int(f) for f in solved.structure.feature], dtype=np.int64)
    thinned = replace(encoded, plan=encoded.plan.restricted(keep), X_binary=np.ascontiguousarray(encoded.X_binary[:, keep]),
                      cart_tree=None)
    merged, inverse = restrict_features(data, keep)
    if data.row_to_pattern is not None:  # each row's pattern in the merged patterns (rows routed through them)
        merged = replace(merged, row_to_pattern=np.asarray(inverse)[data.row_to_pattern])
    return (replace(solved, structure=replace(solved.structure, feature=feature), features=None), thinned, merged)


def target_name(y) -> str:
    """The target's name: a Series' own, else "target"."""
    name = getattr(y, "name", None)
    return str(name) if name is not None else "target"
