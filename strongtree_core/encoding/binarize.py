"""Raw tables to binary matrices whose columns keep their meaning.

:class:`TableEncoder` looks at a training table and returns an
:class:`EncodingPlan`; the plan turns any table with the same columns into
the 0/1 matrix the formulations take, and names every binary column in the
user's terms (``age ≤ 35.5``, ``race = Caucasian``, ``income missing``).

A table whose columns are all 0/1 passes through unchanged: one binary
feature per column, labelled with the column name, in the same order.

At prediction time columns are matched by name (order does not matter,
extra columns are ignored).  A category not seen in training is 0 in every
column of its attribute, as is a missing value in a column that had no
missing values in training.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Callable, Iterable, Literal, Mapping

import numpy as np
import pandas as pd

from strongtree_core.encoding.columns import ColumnEncoding, fit_column, infer_kind, read_numbers
from strongtree_core.encoding.errors import (
    BAD_COLUMN_NAME,
    BAD_CONTINUOUS,
    BAD_MAX_ORDINAL,
    BAD_MAX_THRESHOLDS,
    BAD_N_BUCKETS,
    BAD_PLAN,
    BUCKETS_AND_THRESHOLDS,
    ONEHOT_NEEDS_BUCKETS,
    DUPLICATE_COLUMNS,
    NAMES_THE_SAME_AS_TEXT,
    EMPTY_TABLE,
    MISSING_COLUMNS,
    NO_FEATURES,
    NOT_A_DATAFRAME,
    TOO_WIDE,
    UNKNOWN_EXCLUDE,
    UNKNOWN_KIND_COLUMN,
    EncodingError,
    stored_format_problem,
)
from strongtree_core.encoding.features import BinaryFeature, ColumnName, format_number, level_key
from strongtree_core.encoding.reference import (
    REFERENCE_SHARE,
    ReferenceTree,
    fit_reference,
    reference_rows,
    reference_sample,
)
from strongtree_core.encoding.thresholds import choose_gaps, gap_cuts, value_classes
from strongtree_core.structure import TreeStructure
from strongtree_core.words import shown_name

ContinuousCoding = Literal["thermometer", "onehot_buckets"]

PLAN_FORMAT = "strongtree.encoding_plan"
PLAN_VERSION = 1
#: Quantile buckets of a continuous column when neither n_buckets nor max_thresholds is given.
DEFAULT_N_BUCKETS = 5


@dataclass(frozen=True)
class TableEncoder:
    """Fits an :class:`EncodingPlan` to a training table.

    A continuous column's thresholds come from one of two rules:

    * ``n_buckets`` (the default, 5, when ``max_thresholds`` is not given):
      cuts at the ``k / n_buckets`` quantiles of the column;
    * ``max_thresholds``: cuts chosen from the data
      (:mod:`~strongtree_core.encoding.thresholds`): every distinct cut when the
      column has at most ``max_thresholds`` of them, else CART's cuts and
      boundary points spread over the data, ``max_thresholds`` in all (CART's
      are kept even beyond it).  Needs ``target`` in :meth:`fit` (without it every gap counts as a
      boundary point) and thermometer coding.

    Parameters
    ----------
    n_buckets : int >= 2 or None, default None
        Quantile buckets of a continuous column (fewer when values repeat);
        None: 5 unless ``max_thresholds`` is given.
    continuous : {"thermometer", "onehot_buckets"}, default "thermometer"
        ``thermometer``: one column ``x ≤ cut`` per cut, so one split reads
        ``age ≤ 35.5``; ``onehot_buckets``: one column per bucket
        (``age in (30, 40]``), as in the paper's experiments (quantile buckets only).
    max_ordinal_levels : int, default 10
        Integer columns with at most this many distinct values are ordinal
        (thermometer over their values); more levels count as continuous.
    max_thresholds : int >= 1 or None, default None
        Thresholds per continuous column chosen from the data (CART's always
        among them, even beyond this number); None: quantile buckets.

    Raises
    ------
    EncodingError
        An option out of range, or both rules given (``n_buckets`` and
        ``max_thresholds``), or ``max_thresholds`` with one-hot buckets.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from strongtree_core.encoding import TableEncoder, collapse_patterns
    >>> X = pd.DataFrame({'a': [0, 1, 0, 1, 1, 0], 'b': [1, 1, 0, 0, 1, 0]})
    >>> y = np.array([0, 1, 0, 1, 1, 1])
    >>> plan = TableEncoder().fit(X)
    >>> plan.transform(X).shape
    (6, 2)
    """

    n_buckets: int | None = None
    continuous: ContinuousCoding = "thermometer"
    max_ordinal_levels: int = 10
    max_thresholds: int | None = None

    def __post_init__(self) -> None:
        if self.n_buckets is not None and (not _is_int(self.n_buckets) or self.n_buckets < 2):
            raise EncodingError(BAD_N_BUCKETS.format(value=self.n_buckets))
        if self.continuous not in ("thermometer", "onehot_buckets"):
            raise EncodingError(BAD_CONTINUOUS.format(value=self.continuous))
        if not _is_int(self.max_ordinal_levels) or self.max_ordinal_levels < 0:
            raise EncodingError(BAD_MAX_ORDINAL.format(value=self.max_ordinal_levels))
        if self.max_thresholds is not None:
            if not _is_int(self.max_thresholds) or self.max_thresholds < 1:
                raise EncodingError(BAD_MAX_THRESHOLDS.format(value=self.max_thresholds))
            if self.n_buckets is not None:
                raise EncodingError(BUCKETS_AND_THRESHOLDS.format(n_buckets=self.n_buckets,
                                                                  max_thresholds=self.max_thresholds))
            if self.continuous == "onehot_buckets":
                raise EncodingError(ONEHOT_NEEDS_BUCKETS.format(max_thresholds=self.max_thresholds))
            object.__setattr__(self, "max_thresholds", int(self.max_thresholds))
        elif self.n_buckets is None:
            object.__setattr__(self, "n_buckets", DEFAULT_N_BUCKETS)
        if self.n_buckets is not None:
            object.__setattr__(self, "n_buckets", int(self.n_buckets))
        object.__setattr__(self, "max_ordinal_levels", int(self.max_ordinal_levels))

    def fit(
        self,
        df: pd.DataFrame,
        *,
        exclude: Iterable[ColumnName] = (),
        kinds: Mapping[ColumnName, str] | None = None,
        sample_weight: np.ndarray | None = None,
        target=None,
    ) -> "EncodingPlan":
        """Choose the coding of every column of ``df`` but the excluded ones.

        Parameters
        ----------
        df : DataFrame, shape (n_rows, n_columns)
            Training features (no label column).
        exclude : iterable of column names
            Columns left out of the encoding (e.g. protected attributes).
        kinds : mapping from column name to kind, optional
            Overrides the inferred kind ("binary", "categorical", "ordinal",
            "continuous"), e.g. ``{"race": "categorical"}`` for integer codes.
        sample_weight : array of float >= 0, shape (n_rows,), optional
            Weights of the quantiles of continuous columns: for the cuts, a row
            of weight k counts as k copies of it and a row of weight 0 as
            absent (the other codings depend on which values occur, not how often).
        target : array-like, shape (n_rows,), optional
            Class labels; with ``max_thresholds`` they pick the boundary points.

        Raises
        ------
        EncodingError
            Empty table, no columns left, unknown or duplicate column names,
            numbers written as text with separators.
        """
        return self.fit_with_reference(df, exclude=exclude, kinds=kinds, sample_weight=sample_weight,
                                       target=target)[0]

    def fit_with_reference(
        self,
        df: pd.DataFrame,
        *,
        exclude: Iterable[ColumnName] = (),
        kinds: Mapping[ColumnName, str] | None = None,
        sample_weight: np.ndarray | None = None,
        target=None,
        reference_depth: int | None = None,
        deadline: float | None = None,
    ) -> tuple["EncodingPlan", TreeStructure | None]:
        """:meth:`fit`, and with ``max_thresholds``, ``target`` and ``reference_depth``
        CART of that depth on the raw columns (:mod:`~strongtree_core.encoding.reference`):
        its cuts join the plan's and its tree is returned on the plan's binary
        columns (None otherwise, or when a split of CART has no binary column,
        e.g. one that parts infinite values from the finite ones).
        ``deadline``: as in :meth:`fit_transform_with_reference` (CART on a sample when time is short)."""
        plan, reference, _, _ = self._fit(df, exclude, kinds, sample_weight, target, reference_depth, deadline)
        return plan, reference

    def fit_transform_with_reference(
        self,
        df: pd.DataFrame,
        *,
        sample_weight: np.ndarray | None = None,
        target=None,
        reference_depth: int | None = None,
        deadline: float | None = None,
        n_jobs: int = 1,
        over_limit: Callable[[int], int | None] | None = None,
    ) -> tuple["EncodingPlan", np.ndarray, TreeStructure | None, int]:
        """:meth:`fit_with_reference` and the plan's :meth:`EncodingPlan.transform` of the same
        ``df``, reading its 0/1 columns once: ``(plan, binary matrix, reference tree, rows)``,
        ``rows`` the number of rows CART was grown on.

        ``deadline`` (a :func:`time.perf_counter` time): when the fit must be over; CART then gets
        :data:`~strongtree_core.encoding.reference.REFERENCE_SHARE` of the time left and is grown on a
        sample of the rows when it would take longer (:func:`~strongtree_core.encoding.reference.reference_rows`).
        ``n_jobs``: threads that read the continuous columns of a long table (the same plan for any number).
        ``over_limit(need)``: the memory limit (bytes) that ``need`` bytes exceed, else None; the table is
        refused before its binary matrix is built when its estimate (:func:`encoded_bytes`) exceeds one."""
        plan, reference, plain, rows = self._fit(df, (), None, sample_weight, target, reference_depth,
                                                 deadline, n_jobs, over_limit)
        return plan, plan._encode(df, plain), reference, rows

    def fit_transform_flags(self, values: np.ndarray, names: tuple) -> tuple["EncodingPlan", np.ndarray] | None:
        """:meth:`fit_transform_with_reference` of ``pd.DataFrame(values, columns=names)`` when
        ``values`` is a 2-D array of integers or floats whose every value is 0 or 1: each column
        one binary feature (``x = 1``) under both threshold rules, and no reference tree.  None
        for any other array (its table then takes the general path)."""
        if values.ndim != 2 or values.dtype.kind not in "iuf" or values.dtype.itemsize > 8 or not values.size:
            return None
        ones = values == 1
        if not (ones | (values == 0)).all():
            return None
        return self._plan(tuple(_binary_column(name) for name in names), ()), \
            np.ascontiguousarray(ones, dtype=np.uint8)

    def _fit(self, df, exclude, kinds, sample_weight, target, reference_depth, deadline=None, n_jobs=1,
             over_limit=None):
        """The plan, CART's tree (or None), the plain 0/1 columns of ``df`` (:func:`_plain_flags`) and
        the rows CART was grown on."""
        _check_frame(df, getattr(df, "columns", ()))
        if len(df) == 0:
            raise EncodingError(EMPTY_TABLE)
        exclude = tuple(exclude)
        unknown = [c for c in exclude if c not in df.columns]
        if unknown:
            raise EncodingError(
                UNKNOWN_EXCLUDE.format(names=_names(unknown), columns=_names(df.columns))
            )
        names = [c for c in df.columns if c not in exclude]
        if not names:
            raise EncodingError(
                NO_FEATURES.format(columns=_names(df.columns), excluded=_names(exclude))
            )
        kinds = dict(kinds or {})
        unknown = [c for c in kinds if c not in names]
        if unknown:
            raise EncodingError(UNKNOWN_KIND_COLUMN.format(names=_names(unknown), columns=_names(names)))
        coding = "onehot" if self.continuous == "onehot_buckets" else "thermometer"
        plain = _plain_flags(df, [c for c in names if kinds.get(c, "binary") == "binary"])
        if self.max_thresholds is None:
            columns = tuple(
                ColumnEncoding(name, "binary")
                if name in plain
                else fit_column(
                    df[name],
                    name,
                    n_buckets=self.n_buckets,
                    coding=coding,
                    max_ordinal_levels=self.max_ordinal_levels,
                    kind=kinds.get(name),
                    weight=sample_weight,
                )
                for name in names
            )
            _check_width(len(df), dict(zip(names, columns)), 0, over_limit)
            return self._plan(columns, exclude), None, plain, len(df)
        plan, reference, rows = self._fit_data_cuts(df, names, kinds, plain, sample_weight, target, reference_depth,
                                                    exclude, deadline, n_jobs, over_limit)
        return plan, reference, plain, rows

    def _plan(self, columns: tuple[ColumnEncoding, ...], exclude: tuple) -> "EncodingPlan":
        return EncodingPlan(
            columns=columns,
            n_buckets=self.n_buckets,
            continuous=self.continuous,
            max_ordinal_levels=self.max_ordinal_levels,
            excluded=exclude,
            max_thresholds=self.max_thresholds,
        )

    def _fit_data_cuts(self, df, names, kinds, plain, sample_weight, target, reference_depth, exclude,
                       deadline=None, n_jobs=1, over_limit=None):
        """The ``max_thresholds`` rule: other columns as usual, continuous ones from the data; with
        CART's tree and the rows it was grown on."""
        if all(name in plain for name in names):  # a 0/1 table: no cuts to choose, no CART to grow
            return self._plan(tuple(ColumnEncoding(name, "binary") for name in names), exclude), None, len(df)
        n = len(df)
        if target is None:
            codes, n_classes = np.zeros(n, dtype=np.int64), 1
        else:
            classes, codes = np.unique(np.asarray(target), return_inverse=True)
            codes, n_classes = codes.astype(np.int64).reshape(-1), int(classes.size)
        weight = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
        fitted: dict = {}
        continuous: list = []
        for name in names:
            if name in plain:
                fitted[name] = ColumnEncoding(name, "binary")
                continue
            values = df[name]
            kind = kinds.get(name) or infer_kind(values[values.notna()], name, self.max_ordinal_levels)
            if kind != "continuous":
                fitted[name] = fit_column(values, name, n_buckets=DEFAULT_N_BUCKETS, coding="thermometer",
                                          max_ordinal_levels=self.max_ordinal_levels, kind=kind, weight=weight)
                continue
            continuous.append(name)
        _check_width(n, fitted, len(continuous), over_limit)

        def read(name):
            return _ranked_column(df[name], name, codes, weight, n_classes)

        # continuous column -> (distinct, per_class, ranks, n_missing, has +inf); numpy's sorts let go of
        # the interpreter's lock, so n_jobs threads read that many columns at once
        numeric: dict = dict(zip(continuous, _map_columns(read, continuous, n_jobs, n)))
        ranked = list(numeric)
        reference, rows = None, n
        if ranked and target is not None and reference_depth:
            others = [c for c in names if c not in numeric]
            blocks = [plain[c] if c in plain else fitted[c].encode(df[c]) for c in others]
            other_bits = np.hstack(blocks) if blocks else np.zeros((n, 0), dtype=np.uint8)
            ranks = np.column_stack([numeric[c][2] for c in ranked])
            seconds = None if deadline is None else REFERENCE_SHARE * max(0.0, deadline - time.perf_counter())
            levels = [numeric[c][0].size + 2 for c in ranked] + [2] * other_bits.shape[1]
            # rows of weight 0 are absent: a sample is drawn from the others (never all of weight 0)
            present = np.arange(n) if weight is None else np.flatnonzero(weight > 0)
            rows = reference_rows(present.size, levels, int(reference_depth), seconds)
            # a sample when time is short, so that the limit holds; its cuts are gaps of the whole column
            pick = present[reference_sample(present.size, rows)] if rows < present.size else slice(None)
            reference = fit_reference(ranks[pick], other_bits[pick], codes[pick],
                                      None if weight is None else weight[pick], int(reference_depth))
            required = reference.gaps([numeric[c][0].size for c in ranked])
        else:
            required = [None] * len(ranked)
        gaps_of: dict = {}
        for name, need in zip(ranked, required):
            distinct, per_class, _, n_missing, _ = numeric[name]
            gaps = choose_gaps(per_class, self.max_thresholds, need)
            gaps_of[name] = gaps
            fitted[name] = ColumnEncoding(name, "continuous", cuts=gap_cuts(distinct, gaps), coding="thermometer",
                                          n_missing=n_missing, n_gaps=max(0, int(distinct.size) - 1))
        plan = self._plan(tuple(fitted[name] for name in names), exclude)
        if reference is None:
            return plan, None, rows
        return plan, _reference_structure(plan, reference, names, ranked, numeric, gaps_of), rows


#: Bytes per row and binary feature while a table is encoded: its 0/1 matrix (1), and the float32 copy of
#: the columns CART grows its start on with scikit-learn's own copy of it (4 + 4). A stray text in a column of
#: numbers read as categories (51,000 rows, 51,000 features) took 23 GB before the process was killed.
ENCODED_BYTES_PER_CELL = 9


def encoded_bytes(rows: int, features: int) -> int:
    """Bytes that encoding ``rows`` rows into ``features`` binary features takes at its peak."""
    return int(rows) * int(features) * ENCODED_BYTES_PER_CELL


def _check_width(rows: int, fitted: Mapping[ColumnName, ColumnEncoding], continuous: int,
                 over_limit: Callable[[int], int | None] | None) -> None:
    """Refuse a table whose binary features ``fitted`` (and at least one per ``continuous`` column still to
    be cut) would take more memory than ``over_limit`` allows, naming the widest columns."""
    if over_limit is None:
        return
    width = {name: len(column.features) for name, column in fitted.items()}
    features = sum(width.values()) + continuous
    need = encoded_bytes(rows, features)
    limit = over_limit(need)
    if limit is None:
        return
    widest = sorted(width, key=width.get, reverse=True)[:3]
    raise EncodingError(TOO_WIDE.format(
        need=need / 2**30, limit=limit / 2**30, rows=rows, features=features,
        widest=", ".join(f"{shown_name(name)!r} ({width[name]:,})" for name in widest)))


#: Columns are read by several threads (``n_jobs``) only when the table has at least this many rows.
THREADED_ROWS = 50_000


@lru_cache(maxsize=4096, typed=True)
def _binary_column(name) -> ColumnEncoding:
    """The plan of a 0/1 column (a frozen value, made once per name: making the columns of an
    array of 0/1 flags took a tenth of a millisecond of a small fit)."""
    return ColumnEncoding(name, "binary")


def _map_columns(read, names: list, n_jobs: int, n_rows: int) -> list:
    """``[read(name) for name in names]``, on up to ``n_jobs`` threads for a long table (same order, same
    results; the first column's error is the one raised)."""
    workers = min(int(n_jobs), len(names))
    if workers <= 1 or n_rows < THREADED_ROWS:
        return [read(name) for name in names]
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="strongtree-encode") as pool:
        return list(pool.map(read, names))


def _ranked_column(values: pd.Series, name, codes: np.ndarray, weight: np.ndarray | None, n_classes: int) -> tuple:
    """A continuous column's distinct values, their class weights, each row's rank among them (-1 for
    -inf, one past the last for +inf, two past for missing), its missing count and whether it holds +inf."""
    number = read_numbers(values, name)
    finite = np.isfinite(number)
    keep = finite if weight is None else finite & (weight > 0)
    distinct, per_class, inverse = value_classes(number[keep], codes[keep],
                                                 None if weight is None else weight[keep], n_classes)
    if keep.all():  # every row's rank is its position among the distinct values already
        ranks = inverse.reshape(-1).astype(np.float64)
    else:
        ranks = np.searchsorted(distinct, np.where(finite, number, 0.0)).astype(np.float64)
    ranks[np.isposinf(number)] = distinct.size
    ranks[np.isneginf(number)] = -1.0
    ranks[np.isnan(number)] = distinct.size + 1
    return distinct, per_class, ranks, int(values.isna().sum()), bool(np.isposinf(number).any())


def _reference_structure(plan, reference: ReferenceTree, names, ranked, numeric, gaps_of) -> TreeStructure | None:
    """CART's tree on the plan's binary columns (None when a split has no binary column)."""
    offset, start = {}, 0
    for column in plan.columns:
        offset[column.name] = start
        start += len(column.features)
    other_index = [offset[c] + j for c in names if c not in numeric for j in range(len(plan.columns[names.index(c)].features))]

    class NotExpressible(Exception):
        pass

    def feature_of(column: int, threshold: float) -> tuple[int, bool]:
        if column >= len(ranked):
            return other_index[column - len(ranked)], False
        name = ranked[column]
        distinct, _, _, n_missing, has_posinf = numeric[name]
        k = int(np.floor(threshold))
        gaps = gaps_of[name]
        m = distinct.size
        if 0 <= k < m - 1:
            pos = int(np.searchsorted(gaps, k))
            if pos < gaps.size and gaps[pos] == k:
                return offset[name] + pos, True  # x <= cut is CART's left side
        if n_missing and ((k == m - 1 and not has_posinf) or k == m):
            return offset[name] + gaps.size, False  # present | missing: "missing" is CART's right side
        raise NotExpressible

    try:
        return reference.structure(feature_of)
    except NotExpressible:
        return None


@dataclass(frozen=True)
class EncodingPlan:
    """The fitted encoding: raw columns in, labelled binary columns out.

    Attributes
    ----------
    columns : tuple of ColumnEncoding
        One per encoded raw column, in the training table's order.
    n_buckets, continuous, max_ordinal_levels, max_thresholds
        The options it was fitted with (``n_buckets`` None when the cuts were
        chosen from the data, ``max_thresholds`` None when they are quantiles).
    excluded : tuple
        Columns left out at fit time.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from strongtree_core.encoding import TableEncoder, collapse_patterns
    >>> X = pd.DataFrame({'a': [0, 1, 0, 1, 1, 0], 'b': [1, 1, 0, 0, 1, 0]})
    >>> y = np.array([0, 1, 0, 1, 1, 1])
    >>> plan = TableEncoder().fit(X)
    >>> [c.name for c in plan.columns]
    ['a', 'b']
    >>> type(plan).from_dict(plan.to_dict()) == plan
    True
    """

    columns: tuple[ColumnEncoding, ...]
    n_buckets: int | None = DEFAULT_N_BUCKETS
    continuous: ContinuousCoding = "thermometer"
    max_ordinal_levels: int = 10
    excluded: tuple[ColumnName, ...] = ()
    max_thresholds: int | None = None

    @property
    def features(self) -> tuple[BinaryFeature, ...]:
        """The binary columns, in the order of :meth:`transform`'s output."""
        return tuple(f for column in self.columns for f in column.features)

    @property
    def labels(self) -> tuple[str, ...]:
        """``features[j].label`` for every binary column."""
        return tuple(f.label for f in self.features)

    @property
    def source_columns(self) -> tuple[ColumnName, ...]:
        """The raw columns the plan reads."""
        return tuple(column.name for column in self.columns)

    @property
    def chains(self) -> tuple[tuple[int, ...], ...]:
        """Indices of the ``x ≤ t`` features of each ordinal or continuous column,
        lowest threshold first (see :attr:`PatternData.chains`)."""
        out, start = [], 0
        for column in self.columns:
            cuts = [start + j for j, f in enumerate(column.features) if f.kind == "at_most"]
            if len(cuts) > 1:
                out.append(tuple(cuts))
            start += len(column.features)
        return tuple(out)

    def restricted(self, features) -> "EncodingPlan":
        """The plan with only the binary columns ``features`` (indices into
        :attr:`features`, increasing); only ``x ≤ t`` thresholds may be left out.

        Raises
        ------
        ValueError
            A feature left out is not a threshold.
        """
        keep = set(int(f) for f in features)
        columns, start = [], 0
        for column in self.columns:
            n = len(column.features)
            dropped = [j for j in range(n) if start + j not in keep]
            if any(column.features[j].kind != "at_most" for j in dropped):
                raise ValueError(f"only thresholds can be left out of the encoding of {column.name!r}")
            cuts = tuple(f.threshold for j, f in enumerate(column.features) if f.kind == "at_most" and start + j in keep)
            columns.append(replace(column, cuts=cuts) if dropped else column)
            start += n
        return replace(self, columns=tuple(columns))

    def threshold_counts(self) -> tuple[int, int | None, int | None] | None:
        """Over the ordinal and continuous columns: the thresholds kept (cuts the tree may ask
        about), the distinct cuts among the training rows, and the most distinct cuts of one
        column; None when no column has thresholds.  The last two are None when a column's
        distinct cuts were not counted (plans stored before they were)."""
        numeric = [c for c in self.columns if c.kind in ("ordinal", "continuous")]
        if not numeric:
            return None
        kept = sum(len(c.cuts) for c in numeric)
        if any(c.n_gaps is None for c in numeric):
            return kept, None, None
        return kept, sum(c.n_gaps for c in numeric), max(c.n_gaps for c in numeric)

    @property
    def n_binary(self) -> int:
        """How many binary features the plan makes (every column's tests together)."""
        return sum(len(column.features) for column in self.columns)

    def transform(self, df: pd.DataFrame) -> np.ndarray:
        """Binary matrix of ``df``, shape (n_rows, n_binary), dtype uint8.

        Columns are matched by name; extra columns are ignored.

        Raises
        ------
        EncodingError
            A fitted column is absent or repeated, or holds values of the
            wrong type (text in a numeric column, non-0/1 in a yes/no column).
        """
        _check_frame(df, self.source_columns)
        missing = [name for name in self.source_columns if name not in df.columns]
        if missing:
            raise EncodingError(MISSING_COLUMNS.format(n=len(missing), missing=_names(missing)))
        return self._encode(df, _plain_flags(df, [c.name for c in self.columns if c.kind == "binary" and not c.n_missing]))

    def _encode(self, df: pd.DataFrame, plain: dict) -> np.ndarray:
        """:meth:`transform` of a checked ``df`` whose plain 0/1 columns (:func:`_plain_flags`) are ``plain``:
        those of the plan's binary columns without missing values, or (the training table) of all its columns."""
        blocks = [
            plain[column.name] if column.name in plain else column.encode(df[column.name])
            for column in self.columns
        ]
        if not blocks:
            return np.zeros((len(df), 0), dtype=np.uint8)
        return np.ascontiguousarray(np.hstack(blocks), dtype=np.uint8)

    def summary(self) -> pd.DataFrame:
        """One row per raw column: column, kind, n_binary, thresholds / levels, n_missing."""
        rows = []
        for column in self.columns:
            if column.kind == "categorical":
                detail = ", ".join(level_key(v) for v in column.levels)
            elif column.kind == "binary":
                detail = "0 / 1"
            else:
                detail = ", ".join(format_number(c) for c in column.cuts)
            rows.append(
                {
                    "column": column.name,
                    "kind": column.kind,
                    "n_binary": len(column.features),
                    "thresholds / levels": detail,
                    "n_missing": column.n_missing,
                }
            )
        return pd.DataFrame(
            rows, columns=["column", "kind", "n_binary", "thresholds / levels", "n_missing"]
        )

    def to_dict(self) -> dict:
        """A JSON-safe description that :meth:`from_dict` reads back exactly."""
        return {
            "format": PLAN_FORMAT,
            "version": PLAN_VERSION,
            "n_buckets": self.n_buckets,
            "continuous": self.continuous,
            "max_ordinal_levels": self.max_ordinal_levels,
            "excluded": list(self.excluded),
            "max_thresholds": self.max_thresholds,
            "columns": [
                {
                    "name": column.name,
                    "kind": column.kind,
                    "cuts": list(column.cuts),
                    "levels": list(column.levels),
                    "coding": column.coding,
                    "n_missing": column.n_missing,
                    # left out when unknown; earlier versions read the entries they know and ignore this one
                    **({} if column.n_gaps is None else {"n_gaps": column.n_gaps}),
                }
                for column in self.columns
            ],
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> "EncodingPlan":
        """Read a plan written by :meth:`to_dict`."""
        problem = stored_format_problem(data, PLAN_FORMAT, PLAN_VERSION)
        if problem:
            raise EncodingError(BAD_PLAN.format(reason=problem))
        try:
            columns = tuple(
                ColumnEncoding(
                    name=c["name"],
                    kind=c["kind"],
                    cuts=tuple(float(v) for v in c["cuts"]),
                    levels=tuple(c["levels"]),
                    coding=c["coding"],
                    n_missing=int(c["n_missing"]),
                    n_gaps=None if c.get("n_gaps") is None else int(c["n_gaps"]),
                )
                for c in data["columns"]
            )
            max_thresholds = data.get("max_thresholds")  # plans stored before the rule existed have none
            return cls(
                columns=columns,
                n_buckets=None if data["n_buckets"] is None else int(data["n_buckets"]),
                continuous=data["continuous"],
                max_ordinal_levels=int(data["max_ordinal_levels"]),
                excluded=tuple(data["excluded"]),
                max_thresholds=None if max_thresholds is None else int(max_thresholds),
            )
        except (KeyError, TypeError) as err:
            raise EncodingError(BAD_PLAN.format(reason=f"missing or malformed entry {err}")) from err


#: Columns read at once by :func:`_plain_flags` (bounds its float copy to 8 bytes x rows x this).
FLAG_CHUNK = 512


def _plain_flags(df: pd.DataFrame, names: list) -> dict:
    """Of ``names``, the numeric (not boolean) columns whose every value is 0 or 1,
    each mapped to its (n_rows, 1) uint8 column; read a chunk of columns at a time.

    A wide table of 0/1 numbers is encoded here in bulk (10,000 columns x 300 rows:
    fit and transform 0.5 s, where one column at a time took 6 s); every other column, and any column
    with a missing or other value, takes the general path with its checks and messages.
    """
    dtypes = dict(zip(df.columns.tolist(), df.dtypes.tolist()))  # one lookup, not a Series per column
    kinds = _dtype_kinds(dtypes.values())
    numeric = [c for c in names if kinds[dtypes[c]] == "number"]
    found: dict = {}
    whole = None
    if numeric and len(dtypes) == df.shape[1] <= FLAG_CHUNK and all(kind != "other" for kind in kinds.values()):
        # A small all-number table: one copy of it (selecting columns first copies them twice).
        whole = df.to_numpy(dtype=float, na_value=np.nan)
        position = {c: j for j, c in enumerate(df.columns.tolist())}
    for start in range(0, len(numeric), FLAG_CHUNK):
        chunk = numeric[start : start + FLAG_CHUNK]
        if whole is not None:
            values = whole[:, [position[c] for c in chunk]]
        else:
            values = df[chunk].to_numpy(dtype=float, na_value=np.nan)
        ones = values == 1.0
        clean = (ones | (values == 0.0)).all(axis=0)
        for j in np.flatnonzero(clean):
            found[chunk[j]] = ones[:, j : j + 1].astype(np.uint8)
    return found


def _dtype_kinds(dtypes: Iterable) -> dict:
    """Each distinct dtype of ``dtypes`` -> "bool", "number" (numeric, not boolean) or "other"
    (pandas' tests asked once per dtype, not once per column)."""
    kinds: dict = {}
    for dtype in dtypes:
        if dtype not in kinds:
            kinds[dtype] = ("bool" if pd.api.types.is_bool_dtype(dtype)
                            else "number" if pd.api.types.is_numeric_dtype(dtype) else "other")
    return kinds


def _check_frame(df, used: Iterable) -> None:
    """``df`` is a DataFrame whose ``used`` columns have usable, unique names."""
    if not isinstance(df, pd.DataFrame):
        raise EncodingError(NOT_A_DATAFRAME.format(got=type(df).__name__))
    used = set(used)
    for name in used:
        if not isinstance(name, (str, int)) or isinstance(name, bool):
            raise EncodingError(BAD_COLUMN_NAME.format(name=name, type=type(name).__name__))
    if not df.columns.is_unique:  # cached by pandas: the common case costs nothing
        repeated = df.columns[df.columns.duplicated() & df.columns.isin(list(used))].unique()
        if len(repeated):
            raise EncodingError(DUPLICATE_COLUMNS.format(names=_names(repeated)))
    if all(isinstance(name, str) for name in used):  # unique text names stay unique as text
        return
    as_text: dict[str, list] = {}
    for name in df.columns:
        if name in used:
            as_text.setdefault(str(name), []).append(name)
    for names in as_text.values():
        if len(names) > 1:  # 0 and '0': the SQL export tested "0" twice and disagreed with predict
            raise EncodingError(NAMES_THE_SAME_AS_TEXT.format(names=_names(names)))


def _names(names: Iterable) -> str:
    return ", ".join(repr(n) for n in names) or "none"


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)
