"""``StrongTreeClassifier``: the scikit-learn face of the engine.

``__init__`` only stores keyword-only parameters; ``fit`` checks them, encodes
the table, collapses identical rows into weighted patterns, builds the
specification and hands the engine a :class:`~strongtree_core.engine.task.SolveTask` (a plain value: a
sweep's process worker runs it with neither pandas nor scikit-learn loaded).
"""

from __future__ import annotations

import inspect
import math
import numbers
import threading
import time
import warnings
from dataclasses import dataclass, replace
from numbers import Integral, Real
from typing import Any, Callable, Literal, Sequence

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, InvalidParameterError, StrOptions, make_constraint
from sklearn.utils.validation import check_array, check_is_fitted

from strongtree_core import vocabulary
from strongtree_core.encoding import TableEncoder
from strongtree_core.encoding.errors import BUCKETS_AND_THRESHOLDS, ONEHOT_NEEDS_BUCKETS
from strongtree_core.encoding.thresholds import DEFAULT_MAX_THRESHOLDS
from strongtree_core.encoding.features import equals_label, python_scalar
from strongtree_core.encoding.groups import GroupCoding, encode_groups
from strongtree_core.encoding.patterns import PatternData, collapse_patterns
from strongtree_core.estimator.changed_leaves import changed_leaves
from strongtree_core.estimator.training import (
    COMPLEX_X, FINISH_SECONDS_PER_ROW, LENGTH_MISMATCH, MIN_SOLVE_SECONDS, NEEDS_LEGITIMATE, NEEDS_SENSITIVE, ONE_CLASS,
    Encoded, Training, array_names, array_table, check_comparable, checked_weights, classes_of, target_name,
    to_certified_thresholds,
)
from strongtree_core.tree.claim import claim
from strongtree_core.engine.routes import InfeasibleError, Solved, over_limit
from strongtree_core.engine.task import SolveTask
from strongtree_core.errors import NotProvenWarning, StrongTreeError, TrivialTreeWarning, not_proven_message, warn_caller
from strongtree_core.formulation.fairness_constraints import FAIRNESS_NOTIONS, ParityConstraint
from strongtree_core.formulation.quality_constraints import MinPrecision, MinRecall, MinSpecificity
from strongtree_core.engine.limits import NO_JOBS, cores_for
from strongtree_core.numbers import MIN_FAIRNESS_BOUND, bound_too_small
from strongtree_core.formulation.spec import TreeSpec
from strongtree_core.progress import Progress
from strongtree_core.structure import TreeStructure
from strongtree_core.renames import RENAMED_PARAMETERS, refuse_renamed
from strongtree_core.tree import FittedTree, SolveRecord
from strongtree_core.tree.context import FitContext, json_value
from strongtree_core.tree.scope import Scope
from strongtree_core.metrics.trivial import baseline_accuracy, trivial_reason

FairnessNotion = Literal[
    "statistical_parity",
    "conditional_statistical_parity",
    "predictive_equality",
    "equal_opportunity",
    "equalized_odds",
]

# Messages for bad input; tests assert their text.  Parameters are checked against
# ``_parameter_constraints`` by scikit-learn, whose messages read as BAD_PARAMETER.
BAD_PARAMETER = "The {name!r} parameter of StrongTreeClassifier must be {allowed}. Got {value!r} instead."
#: A fairness bound above 0 that a solver cannot tell from 0 (strongtree_core.numbers.MIN_FAIRNESS_BOUND).
BOUND_TOO_SMALL = (
    "fairness_bound={value!r} is above 0 but below {smallest:g} (0.0001 percentage points, one row in a million), "
    "the smallest bound a solver tells apart from 0: give 0 for no gap at all, or a bound of at least {smallest:g}."
)
BOOL_NOT_NUMBER = "The {name!r} parameter of StrongTreeClassifier must be a number, not True or False. Got {value!r} instead."
BAD_FAIRNESS = (
    "The 'fairness' parameter of StrongTreeClassifier must be one notion or a list of notions among {allowed}. "
    "Got {value!r} instead ({item!r} is not one of them)."
)
Y_NONE = "StrongTreeClassifier requires y to be passed, but the target y is None: pass one class label per row of X."
SPARSE_X = (
    "X is a sparse matrix ({kind}), and StrongTreeClassifier needs dense data (a tree tests raw values, "
    "missing ones included): pass X.toarray() or a DataFrame."
)
X_NOT_2D = (
    "X must be a table (rows by columns), got an array of shape {shape}. Reshape your data: "
    "X.reshape(-1, 1) if it holds a single feature, X.reshape(1, -1) if it holds a single row."
)
NO_COLUMNS = "X has 0 feature(s) (shape=({n}, 0)) while a minimum of 1 is required: pass at least one column."
N_FEATURES = (
    "X has {n} features, but StrongTreeClassifier is expecting {expected} features as input "
    "(it was fitted on an array; columns are matched by position)."
)
MISSING_COLUMNS = (
    "X lacks {n} column(s) the tree was fitted on: {missing}. Columns are matched by name, in any order; "
    "X has {got}. Give the columns their names at fit (or fit again on the new names)."
)
NO_FEATURE_NAMES = "X does not have valid feature names, but StrongTreeClassifier was fitted with feature names"
UNKNOWN_COLUMNS = "{what} {names} not found among the columns of X ({available})."
NEEDS_BINARY = "{what} needs a binary target (two classes); y has {n} classes: {classes}."
BAD_POSITIVE = "pos_label={value!r} is not a class of y; the classes are {classes}."
NO_ROWS = "X has no rows."
CONFIDENCE_WITHOUT_FAIRNESS = (
    "fairness_confidence promises a fairness bound on new rows, but no fairness notion was given: "
    "pass fairness=<notion>, or leave fairness_confidence=None."
)
METHOD_WITHOUT_CONFIDENCE = (
    "fairness_confidence_method={method!r} says how a fairness promise on new rows is kept, but "
    "fairness_confidence is None, so no promise is made: pass fairness_confidence=c (e.g. 0.9), or leave "
    "fairness_confidence_method unset."
)
CONSTRAINT_BROKEN = (
    "The solver's tree breaks {name}: measured {measured:.4f} against the bound {bound:.4f} on the training rows. "
    "It is not shown as satisfying it. This is a numerical problem; try another solver."
)

#: Parameters that are numbers: scikit-learn's intervals take True / False as 1 / 0, so they are refused first.
NUMBER_PARAMS = (
    "depth", "time_limit", "threads", "n_jobs", "regularization", "max_branching", "max_features_used", "min_leaf",
    "min_recall", "min_precision", "min_specificity", "fairness_bound", "fairness_confidence", "n_buckets",
    "memory_limit", "max_thresholds",
)
#: Deepest tree accepted (2^8 leaves).
MAX_DEPTH = 8
FORMULATIONS = tuple(vocabulary.FORMULATIONS)
SOLVERS = tuple(vocabulary.SOLVERS)
OBJECTIVES = tuple(vocabulary.OBJECTIVES)
#: The default fairness_confidence_method (chosen by the study of docs/fairness-on-new-rows.md).
DEFAULT_PROMISE_METHOD = next(iter(vocabulary.PROMISE_METHODS))
ENCODINGS = tuple(vocabulary.ENCODINGS)
FAIRNESS = tuple(vocabulary.FAIRNESS_NOTIONS)


#: Parameter names of each estimator class (scikit-learn reads them from the signature at every get_params).
_PARAM_NAMES: dict = {}
#: Parameter values scikit-learn's check of ``_parameter_constraints`` has accepted, each as
#: ``(class, ((name, type, value), ...))``: the same values are not checked again (the check reads
#: nothing but the types and values).  Values that cannot be dict keys are always checked.
_VALID_PARAMS: set = set()
MAX_VALID_PARAMS = 256


def _validated_key(estimator) -> tuple | None:
    """The values of ``estimator``'s checked parameters as a set member, or None when one cannot be."""
    constraints = type(estimator)._parameter_constraints
    key = (type(estimator), tuple((name, type(value), value) for name, value in sorted(estimator.get_params(deep=False).items())
                                  if constraints.get(name) != "no_validation"))
    try:
        hash(key)
    except TypeError:
        return None
    return key


class ParameterError(StrongTreeError, InvalidParameterError):
    """A parameter outside its allowed values (scikit-learn's InvalidParameterError, and a StrongTreeError)."""


def _options(names: Sequence[str]) -> StrOptions:
    """scikit-learn's StrOptions, printing its options in the order given (a set would print them in hash order)."""
    return StrOptions(dict.fromkeys(names).keys())


#: Parameters checked against another one (thresholds and buckets, the notions of a list): never quick.
_CHECKED_TOGETHER = frozenset({"max_thresholds", "n_buckets", "encoding", "fairness"})
#: Each parameter's constraints as scikit-learn objects, made once (:meth:`StrongTreeClassifier._valid_alone`).
_CONSTRAINTS: dict[tuple[type, str], list] = {}


def _fraction(closed: str) -> Interval:
    return Interval(Real, 0, 1, closed=closed)


#: The note of a fit whose CART start was grown on a sample (the time limit left it no more).
CART_SAMPLED = ("CART (a start for the search, and the source of some thresholds) was grown on {rows:,} of the "
                "{n:,} training rows, so that the time limit holds; a longer limit grows it on every row.")
#: The note of a fit whose encoding kept some of the numeric columns' distinct cuts (its certificate is over those).
THRESHOLDS_KEPT = (
    "The encoding kept {kept:,} of the {distinct:,} distinct thresholds of the numeric columns: the certificate and "
    "the bound hold over those; max_thresholds={widest} keeps every one, for a longer search."
)
#: The note of a constraint part of which was not applied (``name``: the constraint's parameter name).
SKIPPED_NOTE = "{name}: skipped {reason}"
#: Constraints no tree over the thresholds kept meets (the claim's sentence first).
INFEASIBLE_KEPT = (
    "{claim} The constraints: {names}. {hint} Keeping more thresholds may let a tree fit: max_thresholds={widest} "
    "keeps every one."
)


@dataclass(frozen=True)
class _SolvePlan:
    """A fit up to its solve: the training data read and encoded, the patterns, the spec, and the engine's task."""

    train: Training
    encoded: Encoded
    data: PatternData
    spec: TreeSpec
    task: SolveTask


def _fitted_tree(structure: TreeStructure, record: SolveRecord, train: Training, encoded: Encoded,
                 data: PatternData) -> FittedTree:
    """A solver's tree as a :class:`FittedTree` over the raw columns, with its training counts
    (counted on the weighted patterns: the rows' counts, in milliseconds for a million rows)."""
    return FittedTree.from_patterns(
        structure, encoded.plan, tuple(train.classes.tolist()), train.target, data, record,
        feature_names=encoded.feature_names, weighted=train.weights is not None,
    )


def _training_predictions(structure: TreeStructure, data: PatternData) -> np.ndarray:
    """The class index the tree predicts for every training row, shape (n_rows,): each distinct
    row is routed once and its prediction copied to the rows that are that pattern."""
    return structure.predict(data.X)[data.row_to_pattern]


class StrongTreeClassifier(ClassifierMixin, BaseEstimator):
    """Provably optimal (and optionally fair) classification tree of bounded depth.

    The mixed-integer formulations are those of Aghaei, Gómez and Vayanos [1]_: FlowOCT
    (formulations (1), (7) and (11)), BendersOCT (the master (4) with the cuts of its
    Algorithms 1 and 2), with the side constraints of its Section 4; where it is exact, a
    dynamic program with a Lagrangian bound and branch-and-bound finds the same optimum.

    Parameters
    ----------
    depth : int, default=2
        Maximum depth of the tree.
    formulation : {"auto", "flow", "benders", "oct", "binoct", "local_search"}, default="auto"
        "auto" takes the fastest exact route (dynamic programming where it is
        exact, exhaustive search of all trees at depth 1-2, else BendersOCT or
        FlowOCT) and says which in ``record_.choice``;
        "flow" / "benders" force the paper's MIO; "oct" / "binoct" the
        baselines of its Theorem 1, OCT (Bertsimas and Dunn 2017, formulation
        (24): accuracy, lambda, min leaf) and BinOCT (Verwer and Zhang 2019:
        balanced trees, accuracy), refused with a message for what they cannot
        express; "local_search" a fast heuristic (coordinate descent over
        nodes from CART and random starts), recorded with status "heuristic"
        and never certified.  ``record_.lp_bound`` is the root LP relaxation
        of the MIO formulations.
    solver : {"auto", "highs", "scip", "gurobi"}, default="auto"
    time_limit : float, default=60.0
        Seconds.
    threads : int, default=1
        Threads of the MIO solver.
    n_jobs : int or None, default=1
        Threads of the exact search (its dynamic program shares the top's
        features among them) and of the reading of a long table's continuous
        columns: None is 1, -1 every core, -2 all but one.  The
        default leaves the other cores free (the dashboard keeps one for the
        interface); the tree found is the same for any value.
    regularization : float in [0, 1), default=0.0
        The paper's lambda: maximize (1 - lambda) * correct - lambda * branchings.
    max_branching : int or None
        At most this many branching nodes (eq. 8).
    max_features_used : int or None
        At most this many distinct features (eq. 9); counts binary features.
    min_leaf : int, default=0
        Every leaf holds at least this many training rows (eq. 10).
    objective : {"accuracy", "balanced_accuracy", "worst_case_accuracy", "sensitivity"}
    pos_label : label or None
        The positive class for recall / precision / specificity / fairness /
        sensitivity; defaults to the second class of ``np.unique(y)``.
    min_recall, min_precision, min_specificity : float in [0, 1] or None
    fairness : str, list of str, or None
        One or more of "statistical_parity", "conditional_statistical_parity",
        "predictive_equality", "equal_opportunity", "equalized_odds".
    fairness_bound : float in [0, 1], default=0.05
        The largest allowed pairwise gap (delta).
    fairness_confidence : float in (0, 1) or None, default=None
        None: ``fairness_bound`` holds on the training rows (the certificate's
        promise).  A number c: a promise about new rows from the same population,
        kept by tightening the training bound (and, when only a constant tree can
        keep it, that tree, with a :class:`TrivialTreeWarning` naming the smallest
        gap a tree that splits could promise).  How it is known depends on the
        method: *estimated* by the default and every method but "holdout" (the gap
        on new rows is estimated to stay within ``fairness_bound`` with confidence
        c: an asymptotic argument whose coverage is measured by simulation, not
        proved; measured at 1,500 rows, 6 of 100 draws broke δ at c = 0.9);
        *proved* by "holdout" (at most ``fairness_bound`` with probability at
        least c over the draw of the training rows, a finite-sample guarantee).
        ``record_.promise["known"]`` says which, ``record_.promise`` how
        (docs/fairness-on-new-rows.md).  The whole fit shares ``time_limit``.
    fairness_confidence_method : {"subsample", "bootstrap", "crossfit", "margin", "holdout"} or None, default=None
        None means "subsample".  Every method but "holdout" *estimates* the promise.
        "subsample": a normal-approximation margin on the
        training rows after subtracting a half-sample estimate of the fit's
        optimism (5 pairs of complementary halves, 10 refits, rescaled from n/2 to
        n rows; asymptotic, coverage measured by simulation); "bootstrap": the
        same with 10 bootstrap refits drawn within each group and class;
        "crossfit": the margin on 4-fold out-of-fold gaps of the fit at each
        training bound (asymptotic, measured); "margin": the margin alone (faster,
        but it ignores that the optimizer picks trees whose training gap is small:
        measured, it broke the promise in up to 75 % of draws on COMPAS at depth
        3); "holdout": exact tests on a held-out 30 % of the training rows
        (finite-sample guarantee, proved; at 2,000-3,600 rows it kept only
        constant trees).  See docs/fairness-on-new-rows.md.
    allow_protected_splits : bool, default=False
        Whether protected columns that are also in X may be split on.
    max_thresholds : int or None, default=None
        Thresholds per continuous column, chosen from the training data:
        every distinct cut (midpoint between neighbouring values) when a column
        has at most this many, else boundary points (where the class changes)
        spread over the data; CART's cuts are always among them, so the tree
        found is never worse than CART's of the same depth on the training
        rows (CART grown on a sample of the rows when the time limit leaves it
        too little time for all of them: ``record_.message`` then says so).
        None: at most 16 per column
        (:data:`~strongtree_core.encoding.thresholds.DEFAULT_MAX_THRESHOLDS`), not
        every cut, unless ``n_buckets`` is given.  A column with more distinct
        values keeps only some of its cuts, and the certificate then holds over
        the thresholds kept only: ``record_.scope`` counts them against the
        distinct cuts, and every surface says "optimal over the N of M thresholds
        kept".  To search every cut, pass ``record_.scope.widest_column`` (the most
        distinct cuts of one column) or more.  More thresholds: better trees, a
        longer search (benchmarks/RESULTS.md, "Say exactly what was proved").
    n_buckets : int or None, default=None
        The earlier rule: cut each continuous column at ``k / n_buckets``
        quantiles (the paper's experiments use 5).  Give either ``n_buckets``
        or ``max_thresholds``, not both.
    encoding : {"thermometer", "onehot_buckets"}
        How continuous columns are binarized: ``x ≤ t`` tests, or one column per
        quantile bucket (the paper's; ``n_buckets`` of them, 5 when not given).
    heuristic_start : bool, default=True
        Offer CART (and other cheap trees) as the first incumbent.
    exact_search : bool, default=True
        Allow the exact search when ``formulation="auto"`` (dynamic programming,
        a Lagrangian bound and branch-and-bound); with a forced formulation its
        tree is only a warm start and its bound a cap.  False: the MIO alone.
    memory_limit : int or None, default=None
        Bytes a solve may use; a solve estimated to need more is refused before
        anything large is built, with both figures in the message.  None: half
        of what this machine (or its container) allows.

    Attributes
    ----------
    tree_ : FittedTree
    record_ : SolveRecord
    status_ : str
    classes_ : ndarray
    encoding_ : EncodingPlan
    constraint_checks_ : list of dict
        Every constrained quantity re-measured on the training predictions.
    baseline_accuracy_ : float
        Training accuracy of predicting the majority class for every row (weighted
        by ``sample_weight``): what any tree's accuracy should be read against.  A tree
        within one point of it, or predicting one class for at least 95 % of the rows,
        is fitted with a :class:`~strongtree_core.TrivialTreeWarning`.
    fairness_promise_ : FairnessPromise
        Only with ``fairness_confidence``: what was promised and what it cost
        (also ``record_.promise``).
    n_features_in_ : int
        Number of columns of X at fit.
    feature_names_in_ : ndarray of str, shape (``n_features_in_``,)
        Column names of X at fit; only when X was a DataFrame whose column names
        are all strings.

    References
    ----------
    .. [1] Sina Aghaei, Andrés Gómez and Phebe Vayanos, *Strong Optimal Classification Trees*,
       arXiv:2103.15965 (Operations Research).

    Examples
    --------
    >>> import pandas as pd
    >>> from strongtree_core import StrongTreeClassifier
    >>> X = pd.DataFrame({'score': [1, 5, 2, 8, 7, 3, 9, 4], 'group': list('abababab')})
    >>> y = ['no', 'yes', 'no', 'yes', 'yes', 'no', 'yes', 'no']
    >>> clf = StrongTreeClassifier(depth=2, fairness='statistical_parity', fairness_bound=0.5, pos_label='yes',
    ...                            time_limit=10)
    >>> clf = clf.fit(X, y, sensitive_features='group')
    >>> clf.record_.certified, list(clf.predict(X))[:4]
    (True, [np.str_('no'), np.str_('yes'), np.str_('no'), np.str_('yes')])
    >>> [(c['constraint'], c['satisfied']) for c in clf.constraint_checks_]
    [('statistical parity difference', True)]
    """

    _parameter_constraints: dict = {
        "depth": [Interval(Integral, 0, MAX_DEPTH, closed="both")],
        "formulation": [_options(FORMULATIONS)],
        "solver": [_options(SOLVERS)],
        "time_limit": [Interval(Real, 0, math.inf, closed="neither")],
        "threads": [Interval(Integral, 1, None, closed="left")],
        "n_jobs": [Integral, None],
        "regularization": [_fraction("left")],
        "max_branching": [Interval(Integral, 0, None, closed="left"), None],
        "max_features_used": [Interval(Integral, 0, None, closed="left"), None],
        "min_leaf": [Interval(Integral, 0, None, closed="left")],
        "objective": [_options(OBJECTIVES)],
        "pos_label": "no_validation",  # a label of y, checked against y in fit
        "min_recall": [_fraction("both"), None],
        "min_precision": [_fraction("both"), None],
        "min_specificity": [_fraction("both"), None],
        "fairness": [_options(FAIRNESS), list, tuple, None],  # each item of a list is checked in fit
        "fairness_bound": [_fraction("both")],
        "fairness_confidence": [Interval(Real, 0, 1, closed="neither"), None],
        "fairness_confidence_method": [_options(tuple(vocabulary.PROMISE_METHODS)), None],
        "allow_protected_splits": ["boolean"],
        "max_thresholds": [Interval(Integral, 1, None, closed="left"), None],
        "n_buckets": [Interval(Integral, 2, None, closed="left"), None],
        "encoding": [_options(ENCODINGS)],
        "heuristic_start": ["boolean"],
        "exact_search": ["boolean"],
        "memory_limit": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(
        self,
        *,
        depth: int = 2,
        formulation: str = "auto",
        solver: str = "auto",
        time_limit: float = 60.0,
        threads: int = 1,
        n_jobs: int | None = 1,
        regularization: float = 0.0,
        max_branching: int | None = None,
        max_features_used: int | None = None,
        min_leaf: int = 0,
        objective: str = "accuracy",
        pos_label: Any = None,
        min_recall: float | None = None,
        min_precision: float | None = None,
        min_specificity: float | None = None,
        fairness: str | Sequence[str] | None = None,
        fairness_bound: float = 0.05,
        fairness_confidence: float | None = None,
        fairness_confidence_method: str | None = None,
        allow_protected_splits: bool = False,
        max_thresholds: int | None = None,
        n_buckets: int | None = None,
        encoding: str = "thermometer",
        heuristic_start: bool = True,
        exact_search: bool = True,
        memory_limit: int | None = None,
        **renamed: Any,
    ) -> None:
        if renamed:  # a name of an earlier version: say what it is called now
            refuse_renamed(type(self).__name__, renamed)
        self.depth = depth
        self.formulation = formulation
        self.solver = solver
        self.time_limit = time_limit
        self.threads = threads
        self.n_jobs = n_jobs
        self.regularization = regularization
        self.max_branching = max_branching
        self.max_features_used = max_features_used
        self.min_leaf = min_leaf
        self.objective = objective
        self.pos_label = pos_label
        self.min_recall = min_recall
        self.min_precision = min_precision
        self.min_specificity = min_specificity
        self.fairness = fairness
        self.fairness_bound = fairness_bound
        self.fairness_confidence = fairness_confidence
        self.fairness_confidence_method = fairness_confidence_method
        self.allow_protected_splits = allow_protected_splits
        self.max_thresholds = max_thresholds
        self.n_buckets = n_buckets
        self.encoding = encoding
        self.heuristic_start = heuristic_start
        self.exact_search = exact_search
        self.memory_limit = memory_limit

    @classmethod
    def _get_param_names(cls) -> list[str]:
        """scikit-learn's list of the parameters (read from ``__init__``'s signature), read once per class."""
        key = (cls, cls.__init__)
        if key not in _PARAM_NAMES:
            _PARAM_NAMES[key] = tuple(super()._get_param_names())
        return list(_PARAM_NAMES[key])

    def set_params(self, **params: Any) -> "StrongTreeClassifier":
        """Set parameters (scikit-learn's ``set_params``); a name of an earlier version is refused with its name now."""
        refuse_renamed(type(self).__name__, [name for name in params if name in RENAMED_PARAMETERS])
        return super().set_params(**params)

    # ------------------------------------------------------------------ checks
    @classmethod
    def _valid_alone(cls, name: str, value: Any) -> bool:
        """Whether ``value`` of parameter ``name`` passes every check of :meth:`_check_params` whatever
        the other parameters are: a quick test for a sweep's grid, which checks its distinct values in
        bulk (scikit-learn's check of every parameter, per value, took 6 CPU seconds for 100,000 bounds).
        False is no refusal: the value is then checked in full, with its message."""
        if name in _CHECKED_TOGETHER or name not in cls._parameter_constraints:
            return False
        if name in NUMBER_PARAMS and isinstance(value, (bool, np.bool_)):
            return False
        spec = cls._parameter_constraints[name]
        if spec == "no_validation":
            return True
        constraints = _CONSTRAINTS.get((cls, name))
        if constraints is None:
            constraints = _CONSTRAINTS[(cls, name)] = [make_constraint(c) for c in spec]
        if constraints and not any(c.is_satisfied_by(value) for c in constraints):
            return False
        if name == "n_jobs" and value == 0:
            return False
        return not (name == "fairness_bound" and bound_too_small(float(value)))

    def _fairness_list(self) -> list[str]:
        if self.fairness is None:
            return []
        items = [self.fairness] if isinstance(self.fairness, str) else list(self.fairness)
        for f in items:
            if f not in FAIRNESS:
                allowed = "{" + ", ".join(map(repr, FAIRNESS)) + "}"
                raise ParameterError(BAD_FAIRNESS.format(allowed=allowed, value=self.fairness, item=f))
        return items

    def _check_params(self) -> None:
        """scikit-learn's check of ``_parameter_constraints``, after refusing True / False as numbers."""
        for name in NUMBER_PARAMS:
            value = getattr(self, name)
            if isinstance(value, (bool, np.bool_)):
                raise ParameterError(BOOL_NOT_NUMBER.format(name=name, value=value))
        key = _validated_key(self)
        if key is None or key not in _VALID_PARAMS:
            try:
                self._validate_params()
            except InvalidParameterError as exc:
                raise ParameterError(str(exc)) from None
            if key is not None:
                if len(_VALID_PARAMS) >= MAX_VALID_PARAMS:
                    _VALID_PARAMS.clear()
                _VALID_PARAMS.add(key)
        if self.n_jobs == 0:
            raise ParameterError(NO_JOBS)
        if bound_too_small(float(self.fairness_bound)):
            raise ParameterError(BOUND_TOO_SMALL.format(value=self.fairness_bound, smallest=MIN_FAIRNESS_BOUND))
        if self.max_thresholds is not None and self.n_buckets is not None:
            raise ParameterError(BUCKETS_AND_THRESHOLDS.format(n_buckets=self.n_buckets,
                                                               max_thresholds=self.max_thresholds))
        if self.max_thresholds is not None and self.encoding == "onehot_buckets":
            raise ParameterError(ONEHOT_NEEDS_BUCKETS.format(max_thresholds=self.max_thresholds))

    def _encoder(self) -> TableEncoder:
        """Quantile buckets when ``n_buckets`` or one-hot buckets are asked for, else thresholds from the data."""
        if self.n_buckets is not None or self.encoding == "onehot_buckets":
            return TableEncoder(n_buckets=self.n_buckets, continuous=self.encoding)
        return TableEncoder(max_thresholds=DEFAULT_MAX_THRESHOLDS if self.max_thresholds is None else self.max_thresholds)

    def _training_table(self, X) -> pd.DataFrame:
        """X as a DataFrame with a fresh index; arrays get columns x0, x1, ..."""
        if isinstance(X, pd.DataFrame):
            _refuse_complex_columns(X)
            if X.shape[1] == 0:
                raise StrongTreeError(NO_COLUMNS.format(n=X.shape[0]))
            return X.reset_index(drop=True)
        return array_table(_checked_array(X))

    def _table(self, X) -> pd.DataFrame:
        """X at prediction time: a DataFrame's columns matched by name (fitted on a DataFrame),
        an array's columns by position (n_features_in_ of them)."""
        check_is_fitted(self, "tree_")
        if isinstance(X, pd.DataFrame) and self._fitted_on_frame:
            # Matched by name: reordered columns predict the same, renamed ones are refused, never read by position.
            _refuse_complex_columns(X)
            present = set(X.columns)
            missing = [c.name for c in self.encoding_.columns if c.name not in present]
            if missing:
                raise StrongTreeError(MISSING_COLUMNS.format(
                    n=len(missing), missing=", ".join(map(repr, missing[:10])),
                    got=", ".join(map(repr, list(X.columns)[:10])) + (", ..." if X.shape[1] > 10 else "")))
            return X
        if isinstance(X, pd.DataFrame):  # fitted on an array: its columns are positions
            _refuse_complex_columns(X)
            arr = X
        else:
            arr = _checked_array(X, min_rows=0)
            if self._fitted_on_frame:
                warnings.warn(NO_FEATURE_NAMES, UserWarning, stacklevel=3)
        if arr.shape[1] != self.n_features_in_:
            raise StrongTreeError(N_FEATURES.format(n=arr.shape[1], expected=self.n_features_in_))
        if isinstance(arr, pd.DataFrame):
            return arr.set_axis(list(self._columns_in), axis=1)
        return pd.DataFrame(arr, columns=list(self._columns_in))

    @staticmethod
    def _columns(X: pd.DataFrame, spec, what: str, n_rows: int) -> tuple[pd.DataFrame | None, list[str]]:
        """Resolve sensitive/legitimate features: names of X's columns, or data."""
        if spec is None:
            return None, []
        names_given = isinstance(spec, (list, tuple)) and all(isinstance(s, (str, int)) for s in spec)
        if names_given and len(spec) == n_rows and not all(s in X.columns for s in spec):
            names_given = False  # one value per row, not column names
        if isinstance(spec, (str, int)) or names_given:
            names = [spec] if isinstance(spec, (str, int)) else list(spec)
            missing = [n for n in names if n not in X.columns]
            if missing:
                raise StrongTreeError(
                    UNKNOWN_COLUMNS.format(what=what, names=missing, available=", ".join(map(str, X.columns[:20])))
                )
            return X[names], [str(n) for n in names]
        if isinstance(spec, pd.Series):
            frame = spec.to_frame()
        elif isinstance(spec, pd.DataFrame):
            frame = spec
        else:
            frame = pd.DataFrame({what: pd.Series(list(spec))}) if np.ndim(spec) == 1 else pd.DataFrame(spec)
        if len(frame) != n_rows:
            raise StrongTreeError(LENGTH_MISMATCH.format(n_x=n_rows, name=what, n_other=len(frame)))
        frame = frame.reset_index(drop=True)
        frame.columns = [str(c) for c in frame.columns]
        return frame, [c for c in frame.columns if c in X.columns]

    # --------------------------------------------------------------------- fit
    def fit(
        self,
        X,
        y,
        *,
        sample_weight=None,
        sensitive_features=None,
        legitimate_features=None,
        progress: Callable[[Progress], None] | None = None,
        stop: threading.Event | None = None,
    ) -> "StrongTreeClassifier":
        """Find the best tree for (X, y) under the constraints.

        Parameters
        ----------
        X : DataFrame or 2-D array, shape (n_rows, n_columns)
            Raw table: numeric, categorical, boolean columns, missing values allowed.
            An array's columns are named x0, x1, ... in the tree's rules.
        y : array-like, shape (n_rows,)
            Class labels of one type (text, numbers or True/False), none missing.
        sample_weight : array-like, shape (n_rows,), optional
            Finite numbers >= 0, not all 0.  A row of weight k counts as k copies
            of it (in the objective, the quantile cuts and ``predict_proba``); a
            row of weight 0 is left out, as if absent.  ``min_leaf`` and the
            fairness and quality constraints count rows, not weights.
        sensitive_features : column name(s) of X, or Series / DataFrame / list of values, optional
            The protected attribute(s).  Every distinct value is one group (several
            columns: every combination), at most :data:`~strongtree_core.encoding.groups.MAX_GROUPS` (20); to compare
            bands of a numeric column, pass the bands, e.g. ``pd.cut(X["age"], bins=[...])``:
            those are then the groups, enforced and measured exactly.
        legitimate_features : column name(s) of X, or Series / DataFrame / list of values, optional
            The legitimate factor(s) of conditional statistical parity, one level per
            distinct value, as for ``sensitive_features``.
        progress : callable, optional
            Receives :class:`~strongtree_core.progress.Progress` snapshots during the
            solve, ``tree`` the incumbent as a :class:`FittedTree` when it changed.
        stop : threading.Event, optional
            Set it from another thread to stop and keep the best tree so far.

        Returns
        -------
        self

        Warns
        -----
        NotProvenWarning
            When the tree returned is not proven optimal (``record_.certified`` is
            False): the time limit or a Stop ended the solve, or the route is a heuristic.
        """
        started = time.perf_counter()  # the time limit covers all of fit, encoding included
        fairness = self._validate_parameters()
        if self.fairness_confidence is not None:  # the refit loop that keeps the bound on new rows
            return self._fit_with_promise(X, y, sample_weight, sensitive_features, legitimate_features, progress, stop)
        return self._run_plan(self._plan_fit(X, y, sample_weight, sensitive_features, legitimate_features, fairness,
                                             started), progress, stop)

    def _plan_fit(self, X, y, sample_weight, sensitive_features, legitimate_features, fairness: list[str],
                  started: float) -> "_SolvePlan":
        """``fit`` up to its solve (without a promise): the data read and encoded, the engine's task."""
        train = self._read_training_data(X, y, sample_weight, sensitive_features, legitimate_features, fairness)
        encoded = self._encode(train, started)
        return self._plan_solve(train, encoded, fairness, started)

    def _fit_encoded(self, train: Training, encoded: Encoded, fairness: list[str], started: float,
                     progress: Callable[[Progress], None] | None, stop: threading.Event | None,
                     starts: tuple[TreeStructure, ...] = ()) -> "StrongTreeClassifier":
        """The steps of ``fit`` after the table is read and binarized: patterns, spec, solve, record,
        checks.  The promise's refits on parts of the rows call it with parts of ``train`` and
        ``encoded`` (:meth:`Training.subset`, :meth:`Encoded.subset`) and ``starts``, trees over
        the same binary features offered to the search as incumbents."""
        return self._run_plan(self._plan_solve(train, encoded, fairness, started, starts), progress, stop)

    def _run_plan(self, plan: "_SolvePlan", progress: Callable[[Progress], None] | None,
                  stop: threading.Event | None) -> "StrongTreeClassifier":
        """Run the plan's task here and set the fitted attributes."""
        try:
            solved = plan.task.run(self._relay(plan, progress), stop)
        except InfeasibleError as infeasible:  # proven over the thresholds kept: said so when some were left out
            raise self._infeasible(infeasible, plan) from None
        return self._finish_solve(plan, solved)

    def _plan_solve(self, train: Training, encoded: Encoded, fairness: list[str], started: float,
                    starts: tuple[TreeStructure, ...] = ()) -> "_SolvePlan":
        """Patterns, spec and the engine's task (a plain value: :mod:`strongtree_core.engine.task`), with what
        is left of the time limit; ``classes_`` set.  A sweep's worker runs the task, this process the rest."""
        self.classes_ = train.classes
        data = self._collapse_patterns(train, encoded)
        spec = self._build_spec(train, fairness)
        return _SolvePlan(train, encoded, data, spec, self._task(data, spec, train, encoded, started, starts))

    def _finish_solve(self, plan: "_SolvePlan", solved: Solved) -> "StrongTreeClassifier":
        """The fitted attributes from the engine's answer: record, constraint checks, warnings."""
        train, encoded, data, spec = plan.train, plan.encoded, plan.data, plan.spec
        encoded_questions = data.n_features
        if solved.features is not None:  # certified over a thinned set of thresholds: keep exactly those
            solved, encoded, data = to_certified_thresholds(solved, encoded, data)
        self._record(solved, spec, data, train, encoded, encoded_questions)
        self.constraint_checks_ = self._verify(spec.side_constraints, solved.structure, train, data)
        self._judge_against_the_majority(solved, train, data)
        self._warn_if_not_proven()
        return self

    def fit_table(
        self,
        source,
        *,
        target: str,
        sample_weight: str | None = None,
        sensitive_features=None,
        legitimate_features=None,
        scheduler=None,
        progress: Callable[[Progress], None] | None = None,
        stop: threading.Event | None = None,
    ) -> "StrongTreeClassifier":
        """Find the best tree for a table read where it lies, never held in memory whole.

        The rows are read in passes (:mod:`strongtree_core.source`): what each column holds,
        the class weights of the continuous columns' values for their thresholds, then the rows
        summed into weighted patterns, once per rung of a ladder of thresholds that is refined
        where the best tree splits (``record_.choice`` says over how many of the thresholds
        the certificate holds).  The same settings as :meth:`fit`, but ``fairness_confidence``
        and ``n_buckets`` (they need the rows in memory).

        Parameters
        ----------
        source : str, path or list of paths
            A Parquet file, a folder of Parquet files (read with its sub-folders), a glob such as
            ``"claims/part-*.parquet"``, or a CSV file.
        target : str
            The column to predict.
        sample_weight : str, optional
            The column of row weights (as :meth:`fit`'s ``sample_weight``).
        sensitive_features, legitimate_features : column name(s), optional
            The protected attribute(s) and the legitimate factor(s), columns of the table.
        scheduler : str or dask.distributed.Client, optional
            A Dask scheduler's address (``tcp://host:8786``) or client: the passes then run on
            the cluster's workers over the table's partitions, and only their summaries and the
            patterns travel back; the tree is the one this machine finds on the same rows.
            None: the passes run here (pyarrow reads the batches).
        progress : callable, optional
            Receives :class:`~strongtree_core.progress.Progress`: while reading, with
            ``reading`` set (rows read, patterns so far, memory in use); then as in :meth:`fit`.
        stop : threading.Event, optional
            Set it to stop: a read in progress ends at its next batch; a search keeps its best tree.

        Returns
        -------
        self
            With the attributes of :meth:`fit`, and ``reading_``: a dict of what the reading
            did (rows, passes, patterns and thresholds per rung, why the ladder ended).
        """
        from strongtree_core.estimator.table_fit import fit_table

        return fit_table(self, source, target=target, sample_weight=sample_weight,
                         sensitive_features=sensitive_features, legitimate_features=legitimate_features,
                         scheduler=scheduler, progress=progress, stop=stop)

    def _problem(self, X, y, sample_weight=None) -> tuple[PatternData, TreeSpec, tuple[str, ...]]:
        """The patterns, the spec and the binary features' labels ``fit`` would give the
        formulations for (X, y) (no fairness notion): for looking at the formulations themselves
        (:mod:`strongtree_core.compare.root_lp`)."""
        fairness = self._validate_parameters()
        train = self._read_training_data(X, y, sample_weight, None, None, fairness)
        encoded = self._encode(train)
        return self._collapse_patterns(train, encoded), self._build_spec(train, fairness), encoded.plan.labels

    # The steps of fit, in order.
    def _validate_parameters(self) -> list[str]:
        """Check every parameter; return the fairness notions asked for (a list, maybe empty)."""
        self._check_params()
        fairness = self._fairness_list()
        if self.fairness_confidence is not None and not fairness:
            raise StrongTreeError(CONFIDENCE_WITHOUT_FAIRNESS)
        if self.fairness_confidence_method is not None and self.fairness_confidence is None:
            raise StrongTreeError(METHOD_WITHOUT_CONFIDENCE.format(method=self.fairness_confidence_method))
        return fairness

    def _fit_with_promise(self, X, y, sample_weight, sensitive_features, legitimate_features, progress,
                          stop) -> "StrongTreeClassifier":
        """With ``fairness_confidence``: refit until the bound holds on new rows (promise_fit)."""
        from strongtree_core.estimator.promise_fit import fit_with_promise

        return fit_with_promise(
            self, X, y, sample_weight=sample_weight, sensitive_features=sensitive_features,
            legitimate_features=legitimate_features, progress=progress, stop=stop,
        )

    def _read_training_data(self, X, y, sample_weight, sensitive_features, legitimate_features,
                            fairness: list[str]) -> Training:
        """Read X, y, the weights and the groups, check them, and keep the rows of positive weight."""
        if y is None:
            raise StrongTreeError(Y_NONE)
        fitted_on_frame = isinstance(X, pd.DataFrame)
        if fitted_on_frame:
            X, array = self._training_table(X), None
            columns_in = tuple(X.columns.tolist())  # tolist: fast for Arrow-backed names
            n = len(X)
        else:  # an array: its table is built only if needed (below, or when encoding other values than 0 / 1)
            X, array = None, _checked_array(X)
            columns_in = tuple(array_names(array.shape[1]))
            n = array.shape[0]
        if n == 0:
            raise StrongTreeError(NO_ROWS)
        classes, y_idx = classes_of(y, n)
        weights = None if sample_weight is None else checked_weights(sample_weight, n)
        if classes.size < 2:
            raise StrongTreeError(ONE_CLASS.format(label=python_scalar(classes[0])))
        self.classes_ = classes
        positive = self._positive_index(classes, fairness)
        drop_rows = weights is not None and not weights.all()
        if X is None and (sensitive_features is not None or legitimate_features is not None or drop_rows):
            X = array_table(array)
        sens_frame, sens_in_x = self._columns(X, sensitive_features, "sensitive_features", n)
        legit_frame, _ = self._columns(X, legitimate_features, "legitimate_features", n)
        if drop_rows:  # weight 0: as if the row were absent
            X, y_idx, sens_frame, legit_frame, weights = _positive_weight_rows(weights, X, y_idx, sens_frame, legit_frame)
            array = None
        groups, legit = self._code_groups(fairness, sens_frame, legit_frame)
        return Training(
            table=X, array=array, y_index=y_idx, classes=classes, target=target_name(y), weights=weights,
            positive=positive,
            groups=groups, legit=legit, protected_in_x=tuple(sens_in_x), columns_in=columns_in,
            protected=() if sens_frame is None else tuple(map(str, sens_frame.columns)),
            legitimate=() if legit_frame is None else tuple(map(str, legit_frame.columns)),
            fitted_on_frame=fitted_on_frame,
        )

    def _positive_index(self, classes: np.ndarray, fairness: list[str]) -> int | None:
        """Index in ``classes`` of ``pos_label`` (the second class of two when not given)."""
        needs_positive = bool(fairness) or self.objective == "sensitivity" or any(
            v is not None for v in (self.min_recall, self.min_precision, self.min_specificity)
        )
        if needs_positive and classes.size != 2:
            raise StrongTreeError(NEEDS_BINARY.format(what="this objective or constraint", n=classes.size, classes=_shown(classes)))
        if self.pos_label is not None:
            hits = np.flatnonzero(equals_label(classes, self.pos_label))
            if hits.size == 0:
                raise StrongTreeError(BAD_POSITIVE.format(value=self.pos_label, classes=_shown(classes)))
            return int(hits[0])
        return 1 if classes.size == 2 else None

    def _code_groups(self, fairness: list[str], sens_frame, legit_frame) -> tuple[GroupCoding | None, GroupCoding | None]:
        """The protected groups and legitimate levels the constraints compare (every distinct value is one)."""
        if fairness and sens_frame is None:
            raise StrongTreeError(NEEDS_SENSITIVE.format(fairness=self.fairness))
        conditional = "conditional_statistical_parity" in fairness
        if conditional and legit_frame is None:
            raise StrongTreeError(NEEDS_LEGITIMATE)
        groups = encode_groups(sens_frame, role="protected") if fairness else None
        legit = encode_groups(legit_frame, role="legitimate") if conditional else None
        return groups, legit

    def _encode(self, train: Training, started: float | None = None) -> Encoded:
        """Binary features of the columns the tree may split on (CART on the raw columns gives cuts and a start;
        with ``started``, the fit's start on :func:`time.perf_counter`, CART keeps to its share of the time limit)."""
        drop = bool(train.protected_in_x) and not self.allow_protected_splits
        if train.array is not None and not drop:  # an array of 0 / 1 numbers: its columns as they are
            flags = self._encoder().fit_transform_flags(train.array, train.columns_in)
            if flags is not None:
                return Encoded(plan=flags[0], X_binary=flags[1], feature_names=train.columns_in, cart_tree=None)
        features = train.X
        if drop:
            features = train.X.drop(columns=list(train.protected_in_x))
        deadline = None if started is None else started + float(self.time_limit)
        plan, X_binary, cart_tree, cart_rows = self._encoder().fit_transform_with_reference(
            features, sample_weight=train.weights, target=train.y_index, reference_depth=int(self.depth),
            deadline=deadline, n_jobs=cores_for(self.n_jobs),
            over_limit=lambda need: over_limit(need, self.memory_limit))
        n = len(train.y_index)  # rows of weight 0 were left out when the data were read
        return Encoded(plan=plan, X_binary=X_binary, feature_names=tuple(map(str, features.columns.tolist())),
                        cart_tree=cart_tree, cart_sample=(cart_rows, n) if cart_rows < n else None)

    @staticmethod
    def _collapse_patterns(train: Training, encoded: Encoded) -> PatternData:
        """Identical rows (features, class, group, level) as one weighted pattern."""
        return collapse_patterns(
            encoded.X_binary, train.y_index, train.classes.size, sample_weight=train.weights,
            group=None if train.groups is None else train.groups.codes,
            legit=None if train.legit is None else train.legit.codes,
            chains=encoded.plan.chains,
        )

    def _build_spec(self, train: Training, fairness: list[str]) -> TreeSpec:
        """The problem in the formulations' terms: depth, objective, limits and side constraints."""
        constraints = self._side_constraints(fairness, train.positive, train.groups, train.legit)
        check_comparable(constraints, train.y_index, train.groups, train.legit, train.positive)
        return TreeSpec(
            depth=int(self.depth), lambda_=float(self.regularization), max_branching=self.max_branching,
            max_features_used=self.max_features_used, min_leaf=int(self.min_leaf), objective=self.objective,
            pos_label=train.positive, side_constraints=tuple(constraints),
        )

    def _task(self, data: PatternData, spec: TreeSpec, train: Training, encoded: Encoded, started: float,
              starts: tuple[TreeStructure, ...] = ()) -> SolveTask:
        """The engine's task with what is left of the time limit (CART on the raw columns and ``starts`` as
        incumbents)."""
        remaining = float(self.time_limit) - (time.perf_counter() - started) - FINISH_SECONDS_PER_ROW * len(train.y_index)
        cart = encoded.cart_tree
        return SolveTask(
            data, spec, formulation=self.formulation, solver=self.solver, time_limit=max(MIN_SOLVE_SECONDS, remaining),
            threads=int(self.threads), n_jobs=cores_for(self.n_jobs), exact_search=self.exact_search,
            heuristic_start=self.heuristic_start, memory_limit=self.memory_limit,
            starts=(() if cart is None else (("CART on the raw columns", cart),)) + tuple(
                (f"a tree over the same features ({k + 1})", tree) for k, tree in enumerate(starts)),
            stated_limit=float(self.time_limit),
        )

    @staticmethod
    def _relay(plan: "_SolvePlan", progress: Callable[[Progress], None] | None) -> Callable[[Progress], None] | None:
        """``progress`` with the incumbents as fitted trees (None without ``progress``)."""
        if progress is None:
            return None

        def relay(ev: Progress) -> None:
            if ev.tree is not None:
                record = SolveRecord.in_progress(ev.elapsed, ev.objective, ev.bound, ev.gap)
                ev = replace(ev, tree=_fitted_tree(ev.tree, record, plan.train, plan.encoded, plan.data))
            progress(ev)

        return relay

    def _infeasible(self, infeasible: InfeasibleError, plan: "_SolvePlan") -> InfeasibleError:
        """The error of constraints no tree meets, with its record (the rows and the scope: what a surface names
        it by, "No tree fits" or "No tree fits (kept thresholds)"), in :func:`~strongtree_core.tree.claim.claim`'s
        words when the encoding left out some distinct cuts (a tree asking one of them might meet them)."""
        spec, encoded, data = plan.spec, plan.encoded, plan.data
        scope = self._scope(spec, encoded, data.n_features, data.n_features)
        record = SolveRecord("infeasible", n_rows=data.n_rows, scope=scope)
        if not scope.thinned:
            return infeasible.with_record(record)
        said = claim(record)
        return infeasible.with_record(record, INFEASIBLE_KEPT.format(
            claim=said.sentence, names=infeasible.names, hint=infeasible.hint, widest=scope.widest_column))

    def _scope(self, spec: TreeSpec, encoded: Encoded, questions: int, encoded_questions: int) -> Scope:
        """What the certificate ranges over: the depth, the thresholds kept of the distinct cuts, the
        questions the ladder certified, the fairness bound enforced on the training rows."""
        counts = encoded.plan.threshold_counts()
        kept, distinct, widest = (None, None, None) if counts is None else counts
        parity = any(isinstance(c, ParityConstraint) for c in spec.side_constraints)
        return Scope(depth=spec.depth, thresholds=kept, distinct_thresholds=distinct, widest_column=widest,
                     questions=questions, encoded_questions=encoded_questions,
                     training_bound=float(self.fairness_bound) if parity else None)

    def _record(self, solved: Solved, spec: TreeSpec, data: PatternData, train: Training, encoded: Encoded,
                encoded_questions: int | None = None) -> None:
        """Set the fitted attributes: the tree, its record (with every note and its scope), the columns seen."""
        scope = self._scope(spec, encoded, data.n_features,
                            data.n_features if encoded_questions is None else encoded_questions)
        notes = [solved.record.message] if solved.record.message else []
        notes += [thresholds_note(scope)] if thresholds_note(scope) else []
        if encoded.cart_sample is not None:
            notes.append(CART_SAMPLED.format(rows=encoded.cart_sample[0], n=encoded.cart_sample[1]))
        if train.protected_in_x and self.allow_protected_splits:
            notes.append(f"The tree may split on the protected attribute(s) {', '.join(train.protected_in_x)} (allowed).")
        for c in spec.side_constraints:
            notes += [SKIPPED_NOTE.format(name=c.name, reason=reason) for reason in c.skipped_reasons(data, train.positive)]
        record = replace(solved.record, message=" ".join(notes), scope=scope)
        self.encoding_ = encoded.plan
        tree = _fitted_tree(solved.structure, record, train, encoded, data)
        leaf_weights = tree.node_counts if tree.node_weights is None else tree.node_weights
        context = FitContext(protected=train.protected, legitimate=train.legitimate,
                             pos_label=None if train.positive is None else python_scalar(train.classes[train.positive]),
                             settings=json_value(self.get_params()))
        self.tree_ = replace(tree, context=context,
                             changed_leaves=changed_leaves(solved.structure, data, spec, train.classes, leaf_weights,
                                                           record.status))
        self.record_ = record
        self.status_ = record.status
        self.n_features_in_ = len(train.columns_in)
        self._columns_in = train.columns_in
        self._fitted_on_frame = train.fitted_on_frame
        if train.fitted_on_frame and all(isinstance(c, str) for c in train.columns_in):
            self.feature_names_in_ = np.asarray(train.columns_in, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_

    def _judge_against_the_majority(self, solved: Solved, train: Training, data: PatternData) -> None:
        """``baseline_accuracy_``, and a TrivialTreeWarning when the tree does no better than one class."""
        if data.row_to_pattern is None:  # patterns of a table read where it lies: each weighs its rows
            y, pred, weight = data.y, solved.structure.predict(data.X), data.weight
        else:
            y, pred, weight = train.y_index, _training_predictions(solved.structure, data), train.weights
        self.baseline_accuracy_ = baseline_accuracy(y, train.classes.size, weight)[0]
        reason = trivial_reason(y, pred, train.classes, weight, self.objective)
        if reason is not None:
            warn_caller(reason, TrivialTreeWarning)

    def _side_constraints(self, fairness: list[str], positive: int | None, groups, legit) -> list:
        levels = dict(
            group_levels=None if groups is None else groups.levels,
            legit_levels=None if legit is None else legit.levels,
        )
        out = [FAIRNESS_NOTIONS[f](float(self.fairness_bound), positive, **levels) for f in fairness]
        for value, cls in ((self.min_recall, MinRecall), (self.min_precision, MinPrecision), (self.min_specificity, MinSpecificity)):
            if value is not None:
                out.append(cls(float(value), positive))
        return out

    def _warn_if_not_proven(self) -> None:
        """A :class:`~strongtree_core.errors.NotProvenWarning` when the tree carries no proof of optimality (with
        what its bound ranges over, when the encoding left out some thresholds)."""
        if not self.record_.certified:
            said = claim(self.record_)
            scope = self.record_.scope
            extra = f" {said.bound}" if said.state == "not_proven" and scope is not None and scope.thinned else ""
            warn_caller(not_proven_message(self.record_.status) + extra, NotProvenWarning)

    @staticmethod
    def _verify(constraints, structure, train: Training, data: PatternData) -> list[dict]:
        """Re-measure every constrained quantity from the training predictions; a broken one is refused."""
        if not constraints:
            return []
        from strongtree_core.metrics import check_constraints

        if data.row_to_pattern is None:  # patterns of a table read where it lies: each counts its rows
            checks = check_constraints(constraints, data.y, structure.predict(data.X), group=data.group,
                                       legit=data.legit, positive=train.positive, count=data.count)
        else:
            checks = check_constraints(
                constraints, train.y_index, _training_predictions(structure, data),
                group=None if train.groups is None else train.groups.codes,
                legit=None if train.legit is None else train.legit.codes,
                positive=train.positive,
            )
        out = []
        for check in checks:
            name, measured, bound, ok = check
            out.append({"constraint": name, "measured": measured, "bound": bound, "satisfied": bool(ok),
                        "detail": getattr(check, "detail", "")})
            if not ok:
                raise StrongTreeError(CONSTRAINT_BROKEN.format(name=name, measured=measured, bound=bound))
        return out

    # -------------------------------------------------------- fairness report
    def fairness_report(
        self,
        X,
        y,
        *,
        sensitive_features,
        legitimate_features=None,
        notions=None,
        confidence: float = 0.95,
        method: str = "wilson",
    ) -> pd.DataFrame:
        """Every notion's gap on the rows (X, y) with a simultaneous interval, and every compared
        rate with its own interval and denominator.

        Parameters
        ----------
        X : DataFrame or 2-D array
            Any rows (training rows, test rows, new rows).
        y : array-like, shape (n_rows,)
            Their true labels.
        sensitive_features : column name(s) of X, or values, n rows
        legitimate_features : column name(s) of X, or values, optional
        notions : str or list of str, optional
            Default: the notions the tree was fitted with, else every notion that applies.
        confidence : float in (0, 1), default 0.95
        method : {"wilson", "exact"}, default "wilson"

        Returns
        -------
        DataFrame
            Columns ``notion, gap, gap_low, gap_high, ratio, n_differences, confidence, method,
            cohort, rate, group, value, low, high, positives, denominator, small``: see
            :func:`strongtree_core.metrics.fairness_intervals`, which computes it from
            ``self.predict(X)``.  The positive label is the one the tree was fitted with.
        """
        from strongtree_core.metrics.gap_intervals import fairness_intervals

        pred = self.predict(X)
        table = self._training_table(X) if not isinstance(X, pd.DataFrame) else X.reset_index(drop=True)
        n = len(table)
        sens, _ = self._columns(table, sensitive_features, "sensitive_features", n)
        legit, _ = self._columns(table, legitimate_features, "legitimate_features", n)
        if notions is None and self.fairness is not None:
            notions = self._fairness_list()
        positive = 1 if self.pos_label is None else int(np.flatnonzero(equals_label(self.classes_, self.pos_label))[0])
        y_arr = y.to_numpy() if isinstance(y, pd.Series) else np.asarray(y).reshape(-1)
        return fairness_intervals(
            y_arr, pred, sensitive_features=sens, legitimate_features=legit,
            pos_label=python_scalar(self.classes_[positive]), notions=notions, confidence=confidence,
            method=method,
        )

    # ----------------------------------------------------------------- predict
    def predict(self, X) -> np.ndarray:
        """Predicted class of each row of X, shape (n_rows,).

        A DataFrame's columns are matched by name (order does not matter, extra
        columns are ignored) when the tree was fitted on a DataFrame; an array's
        columns are matched by position.
        """
        table = self._table(X)  # checks that the estimator is fitted
        return np.asarray(self.tree_.predict(table))

    def predict_proba(self, X) -> np.ndarray:
        """Share of each class among the training rows of the leaf each row reaches.

        Weighted by ``sample_weight`` when fit had one; a leaf that no training row
        reached takes the shares of the nearest node above it that some row reached.
        Columns follow ``classes_``.  The predicted class is the leaf's label, which
        the objective and constraints choose: with accuracy and no constraint it is
        the leaf's most frequent class, otherwise it need not be.

        Returns
        -------
        ndarray of float, shape (n_rows, n_classes)
        """
        table = self._table(X)
        return self.tree_.predict_proba(table)

    def predict_log_proba(self, X) -> np.ndarray:
        """Natural logarithm of :meth:`predict_proba` (-inf for a class absent from a leaf)."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def decision_function(self, X) -> np.ndarray:
        """Class shares centred on zero: ``predict_proba(X) - 1 / n_classes``.

        For two classes, the column of ``classes_[1]`` only, shape (n_rows,): the
        leaf's share of ``classes_[1]`` minus 1/2, which ranks rows as
        ``predict_proba(X)[:, 1]`` does (``roc_auc`` scoring).  Its sign, and for
        more classes its largest column, agree with :meth:`predict` whenever each
        leaf predicts its most frequent class (accuracy without side constraints).

        Returns
        -------
        ndarray of float, shape (n_rows,) for two classes, else (n_rows, n_classes)
        """
        proba = self.predict_proba(X)
        scores = proba - 1.0 / proba.shape[1]
        return scores[:, 1] if proba.shape[1] == 2 else scores

    def apply(self, X) -> np.ndarray:
        """Leaf node number reached by each row of X (1 is the root; node k has children 2k, 2k + 1)."""
        table = self._table(X)
        return np.asarray(self.tree_.apply(table))

    def decision_path(self, X) -> sparse.csr_matrix:
        """Nodes each row passes through, as scikit-learn's trees give them.

        Returns
        -------
        indicator : sparse matrix of 0/1, shape (n_rows, n_nodes)
            Entry (i, k - 1) is 1 when row i passes through node k (the node numbers
            of :meth:`apply`; ``n_nodes = 2 ** (depth + 1) - 1``).
        """
        table = self._table(X)
        paths = self.tree_.paths(table)
        rows, steps = np.nonzero(paths)
        n_nodes = self.tree_.node_counts.shape[0]
        data = np.ones(rows.size, dtype=np.int64)
        return sparse.csr_matrix((data, (rows, paths[rows, steps] - 1)), shape=(paths.shape[0], n_nodes))

    def get_depth(self) -> int:
        """Depth of the fitted tree: the longest path from the root to a leaf (0 for a single leaf)."""
        check_is_fitted(self, "tree_")
        return self.tree_.depth

    def get_n_leaves(self) -> int:
        """Number of leaves of the fitted tree."""
        check_is_fitted(self, "tree_")
        return int(self.tree_.structure.leaves.size)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.non_deterministic = False
        return tags


def _public_signature(init) -> inspect.Signature:
    """``__init__``'s signature without the ``**renamed`` catch: the parameters a user may pass.

    The catch exists only to answer an earlier name with its name now; scikit-learn reads
    parameters from the signature (``get_params``, ``clone``, its estimator checks), so it
    is left out of what ``inspect.signature`` shows.
    """
    full = inspect.signature(init)
    return full.replace(parameters=[p for p in full.parameters.values() if p.kind is not p.VAR_KEYWORD])


StrongTreeClassifier.__init__.__signature__ = _public_signature(StrongTreeClassifier.__init__)  # type: ignore[attr-defined]


def _is_real(value) -> bool:
    """A real number (numpy's included), not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _is_whole(value) -> bool:
    """An integer (numpy's included), not a bool."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _shown(values) -> list:
    """Labels as plain Python values, for messages."""
    return [python_scalar(v) for v in values]


def _checked_array(X, *, min_rows: int = 1) -> np.ndarray:
    """A 2-D array (any dtype; missing values allowed) from an array-like X, or a message saying what is wrong."""
    if sparse.issparse(X):
        raise StrongTreeError(SPARSE_X.format(kind=type(X).__name__))
    arr = np.asarray(X)
    if arr.ndim != 2:
        raise StrongTreeError(X_NOT_2D.format(shape=arr.shape))
    if arr.dtype.kind == "c":
        raise StrongTreeError(COMPLEX_X.format(what="X", example=python_scalar(arr.flat[0])))
    if arr.shape[0] < min_rows:
        raise StrongTreeError(NO_ROWS)
    if arr.shape[1] == 0:
        raise StrongTreeError(NO_COLUMNS.format(n=arr.shape[0]))
    if type(X) is np.ndarray:  # check_array returns a plain array itself once the checks above pass
        return X
    # scikit-learn's conversion (read-only memory maps, array-likes), with the checks above already done.
    return check_array(arr, accept_sparse=False, dtype=None, ensure_all_finite=False, ensure_min_samples=min_rows)


def _refuse_complex_columns(X: pd.DataFrame) -> None:
    for name, dtype in X.dtypes.items():
        if getattr(dtype, "kind", "") == "c":
            raise StrongTreeError(COMPLEX_X.format(what=f"column {name!r}", example=python_scalar(X[name].iloc[0])))


def _positive_weight_rows(weights: np.ndarray, X: pd.DataFrame, y_idx: np.ndarray, *frames):
    """The rows of positive weight of X, y, the group frames and the weights (a row of weight 0 counts as absent)."""
    keep = weights > 0
    rows = [None if f is None else f[keep].reset_index(drop=True) for f in frames]
    return (X[keep].reset_index(drop=True), y_idx[keep], *rows, weights[keep])


def thresholds_note(scope: Scope) -> str:
    """The record's note of an encoding that kept some of the distinct cuts (:data:`THRESHOLDS_KEPT`); "" when
    it kept every one, and when the ladder thinned them within the time (its own words say so)."""
    if not scope.thinned or scope.ladder_thinned:
        return ""
    return THRESHOLDS_KEPT.format(kept=scope.thresholds, distinct=scope.distinct_thresholds, widest=scope.widest_column)


