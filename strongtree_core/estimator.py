"""``StrongTreeClassifier``: the scikit-learn face of the engine.

``__init__`` only stores keyword-only parameters; ``fit`` checks them, encodes
the table, collapses identical rows into weighted patterns, builds the
specification and hands it to :func:`strongtree_core.engine.solve_tree`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable, Literal, Sequence

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from strongtree_core.encoding import TableEncoder
from strongtree_core.encoding.groups import GroupCoding, encode_groups
from strongtree_core.encoding.patterns import collapse_patterns
from strongtree_core.engine import EngineProgress, solve_tree
from strongtree_core.errors import StrongTreeError
from strongtree_core.formulation.spec import TreeSpec
from strongtree_core.tree import FittedTree, SolveRecord

FairnessNotion = Literal[
    "statistical_parity",
    "conditional_statistical_parity",
    "predictive_equality",
    "equal_opportunity",
    "equalized_odds",
]

# Messages for bad input; tests assert their text.
BAD_DEPTH = "depth must be a whole number from 0 to 8, got {value!r}."
BAD_CHOICE = "{name} must be one of {allowed}, got {value!r}."
BAD_FRACTION = "{name} must be a number in {interval}, got {value!r}."
BAD_COUNT = "{name} must be a whole number >= {low} or None, got {value!r}."
LENGTH_MISMATCH = "X has {n_x} rows but {name} has {n_other}: they must describe the same rows."
UNKNOWN_COLUMNS = "{what} {names} not found among the columns of X ({available})."
NEEDS_SENSITIVE = "fairness={fairness!r} needs the protected attribute: pass fit(..., sensitive_features=...)."
NEEDS_LEGITIMATE = "conditional statistical parity needs the legitimate factor: pass fit(..., legitimate_features=...)."
NEEDS_BINARY = "{what} needs a binary target (two classes); y has {n} classes: {classes}."
BAD_POSITIVE = "positive_class={value!r} is not a class of y; the classes are {classes}."
ONE_CLASS = "y has a single class ({label!r}): there is nothing to classify."
NO_ROWS = "X has no rows."
NOT_A_TABLE = "X must be a pandas DataFrame (or a 2-D array); got {kind}."
CONSTRAINT_BROKEN = (
    "The solver's tree breaks {name}: measured {measured:.4f} against the bound {bound:.4f} on the training rows. "
    "It is not shown as satisfying it. This is a numerical problem; try another solver."
)

FORMULATIONS = ("auto", "flow", "benders")
SOLVERS = ("auto", "highs", "scip", "gurobi")
OBJECTIVES = ("accuracy", "balanced_accuracy", "worst_case_accuracy", "sensitivity")
ENCODINGS = ("thermometer", "onehot_buckets")
FAIRNESS = (
    "statistical_parity",
    "conditional_statistical_parity",
    "predictive_equality",
    "equal_opportunity",
    "equalized_odds",
)


@dataclass(frozen=True)
class FitProgress:
    """A progress snapshot for callers of ``fit`` (the dashboard, the CLI).

    ``objective`` and ``bound`` are in the formulation's units (weighted correct
    rows for accuracy); ``tree`` is the incumbent when it just changed.
    """

    elapsed: float
    objective: float | None
    bound: float | None
    gap: float | None
    nodes: int
    tree: FittedTree | None
    message: str = ""


class StrongTreeClassifier(ClassifierMixin, BaseEstimator):
    """Provably optimal (and optionally fair) classification tree of bounded depth.

    Parameters
    ----------
    depth : int, default=2
        Maximum depth of the tree.
    formulation : {"auto", "flow", "benders"}, default="auto"
        "auto" takes the fastest exact route (dynamic programming where it is
        exact, exhaustive search of all trees at depth 1-2, else BendersOCT or
        FlowOCT) and says which in ``record_.choice``;
        "flow" / "benders" force the paper's MIO.
    solver : {"auto", "highs", "scip", "gurobi"}, default="auto"
    time_limit : float, default=60.0
        Seconds.
    threads : int, default=1
    regularization : float in [0, 1), default=0.0
        The paper's lambda: maximize (1 - lambda) * correct - lambda * branchings.
    max_branching : int or None
        At most this many branching nodes (eq. 8).
    max_features : int or None
        At most this many distinct features (eq. 9); counts binary features.
    min_leaf : int, default=0
        Every leaf holds at least this many training rows (eq. 10).
    objective : {"accuracy", "balanced_accuracy", "worst_case_accuracy", "sensitivity"}
    positive_class : label or None
        The positive class for recall / precision / specificity / fairness /
        sensitivity; defaults to the second class of ``np.unique(y)``.
    min_recall, min_precision, min_specificity : float in [0, 1] or None
    fairness : str, list of str, or None
        One or more of "statistical_parity", "conditional_statistical_parity",
        "predictive_equality", "equal_opportunity", "equalized_odds".
    fairness_bound : float in [0, 1], default=0.05
        The largest allowed pairwise gap (delta).
    allow_protected_splits : bool, default=False
        Whether protected columns that are also in X may be split on.
    n_buckets : int, default=5
        Quantile buckets for continuous columns.
    encoding : {"thermometer", "onehot_buckets"}
        How continuous columns are binarized.
    warm_start : bool, default=True
        Offer CART (and other cheap trees) as the first incumbent.
    accelerator : bool, default=True
        Allow the exact routes when ``formulation="auto"`` (the dynamic program,
        and the exhaustive search of every tree at depth 1-2); with a forced
        formulation their trees are only warm starts.  False: the MIO alone.

    Attributes
    ----------
    tree_ : FittedTree
    record_ : SolveRecord
    status_ : str
    classes_ : ndarray
    encoding_ : EncodingPlan
    constraint_checks_ : list of dict
        Every constrained quantity re-measured on the training predictions.
    """

    def __init__(
        self,
        *,
        depth: int = 2,
        formulation: str = "auto",
        solver: str = "auto",
        time_limit: float = 60.0,
        threads: int = 1,
        regularization: float = 0.0,
        max_branching: int | None = None,
        max_features: int | None = None,
        min_leaf: int = 0,
        objective: str = "accuracy",
        positive_class: Any = None,
        min_recall: float | None = None,
        min_precision: float | None = None,
        min_specificity: float | None = None,
        fairness: str | Sequence[str] | None = None,
        fairness_bound: float = 0.05,
        allow_protected_splits: bool = False,
        n_buckets: int = 5,
        encoding: str = "thermometer",
        warm_start: bool = True,
        accelerator: bool = True,
    ) -> None:
        self.depth = depth
        self.formulation = formulation
        self.solver = solver
        self.time_limit = time_limit
        self.threads = threads
        self.regularization = regularization
        self.max_branching = max_branching
        self.max_features = max_features
        self.min_leaf = min_leaf
        self.objective = objective
        self.positive_class = positive_class
        self.min_recall = min_recall
        self.min_precision = min_precision
        self.min_specificity = min_specificity
        self.fairness = fairness
        self.fairness_bound = fairness_bound
        self.allow_protected_splits = allow_protected_splits
        self.n_buckets = n_buckets
        self.encoding = encoding
        self.warm_start = warm_start
        self.accelerator = accelerator

    # ------------------------------------------------------------------ checks
    def _fairness_list(self) -> list[str]:
        if self.fairness is None:
            return []
        items = [self.fairness] if isinstance(self.fairness, str) else list(self.fairness)
        for f in items:
            if f not in FAIRNESS:
                raise StrongTreeError(BAD_CHOICE.format(name="fairness", allowed=FAIRNESS, value=f))
        return items

    def _check_params(self) -> None:
        if not isinstance(self.depth, (int, np.integer)) or isinstance(self.depth, bool) or not 0 <= self.depth <= 8:
            raise StrongTreeError(BAD_DEPTH.format(value=self.depth))
        for name, allowed in (("formulation", FORMULATIONS), ("solver", SOLVERS), ("objective", OBJECTIVES), ("encoding", ENCODINGS)):
            if getattr(self, name) not in allowed:
                raise StrongTreeError(BAD_CHOICE.format(name=name, allowed=allowed, value=getattr(self, name)))
        if not (isinstance(self.regularization, (int, float)) and 0 <= self.regularization < 1):
            raise StrongTreeError(BAD_FRACTION.format(name="regularization", interval="[0, 1)", value=self.regularization))
        for name in ("min_recall", "min_precision", "min_specificity"):
            v = getattr(self, name)
            if v is not None and not (isinstance(v, (int, float)) and 0 <= v <= 1):
                raise StrongTreeError(BAD_FRACTION.format(name=name, interval="[0, 1]", value=v))
        if not (isinstance(self.fairness_bound, (int, float)) and 0 <= self.fairness_bound <= 1):
            raise StrongTreeError(BAD_FRACTION.format(name="fairness_bound", interval="[0, 1]", value=self.fairness_bound))
        if not (isinstance(self.time_limit, (int, float)) and self.time_limit > 0):
            raise StrongTreeError(BAD_FRACTION.format(name="time_limit", interval="(0, inf) seconds", value=self.time_limit))
        for name, low in (("max_branching", 0), ("max_features", 0)):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, (int, np.integer)) or v < low):
                raise StrongTreeError(BAD_COUNT.format(name=name, low=low, value=v))
        if not isinstance(self.min_leaf, (int, np.integer)) or self.min_leaf < 0:
            raise StrongTreeError(BAD_COUNT.format(name="min_leaf", low=0, value=self.min_leaf))
        if not isinstance(self.threads, (int, np.integer)) or self.threads < 1:
            raise StrongTreeError(BAD_COUNT.format(name="threads", low=1, value=self.threads))

    @staticmethod
    def _as_frame(X) -> pd.DataFrame:
        if isinstance(X, pd.DataFrame):
            return X.reset_index(drop=True)
        arr = np.asarray(X)
        if arr.ndim != 2:
            raise StrongTreeError(NOT_A_TABLE.format(kind=type(X).__name__))
        return pd.DataFrame(arr, columns=[f"x{j}" for j in range(arr.shape[1])])

    @staticmethod
    def _columns(X: pd.DataFrame, spec, what: str, n_rows: int) -> tuple[pd.DataFrame | None, list[str]]:
        """Resolve sensitive/legitimate features: names of X's columns, or data."""
        if spec is None:
            return None, []
        if isinstance(spec, (str, int)) or (isinstance(spec, (list, tuple)) and all(isinstance(s, (str, int)) for s in spec)):
            names = [spec] if isinstance(spec, (str, int)) else list(spec)
            missing = [n for n in names if n not in X.columns]
            if missing:
                raise StrongTreeError(
                    UNKNOWN_COLUMNS.format(what=what, names=missing, available=", ".join(map(str, X.columns[:20])))
                )
            return X[names], [str(n) for n in names]
        frame = spec.to_frame() if isinstance(spec, pd.Series) else pd.DataFrame(spec)
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
        progress: Callable[[FitProgress], None] | None = None,
        stop: threading.Event | None = None,
    ) -> "StrongTreeClassifier":
        """Find the best tree for (X, y) under the constraints.

        Parameters
        ----------
        X : DataFrame, shape (n_rows, n_columns)
            Raw table: numeric, categorical, boolean columns, missing values allowed.
        y : array-like, shape (n_rows,)
        sample_weight : array-like, shape (n_rows,), optional
        sensitive_features : column name(s) of X, or Series / DataFrame, optional
            The protected attribute(s); several columns form one group per combination.
        legitimate_features : column name(s) of X, or Series / DataFrame, optional
            The legitimate factor(s) of conditional statistical parity.
        progress : callable, optional
            Receives :class:`FitProgress` snapshots during the solve.
        stop : threading.Event, optional
            Set it from another thread to stop and keep the best tree so far.

        Returns
        -------
        self
        """
        self._check_params()
        fairness = self._fairness_list()
        X = self._as_frame(X)
        n = len(X)
        if n == 0:
            raise StrongTreeError(NO_ROWS)
        y_arr = np.asarray(y).ravel()
        if y_arr.shape[0] != n:
            raise StrongTreeError(LENGTH_MISMATCH.format(n_x=n, name="y", n_other=y_arr.shape[0]))
        if sample_weight is not None:
            sample_weight = np.asarray(sample_weight, dtype=float).ravel()
            if sample_weight.shape[0] != n:
                raise StrongTreeError(LENGTH_MISMATCH.format(n_x=n, name="sample_weight", n_other=sample_weight.shape[0]))
        classes, y_idx = np.unique(y_arr, return_inverse=True)
        if classes.size < 2:
            raise StrongTreeError(ONE_CLASS.format(label=classes[0]))
        self.classes_ = classes

        needs_positive = bool(fairness) or self.objective == "sensitivity" or any(
            v is not None for v in (self.min_recall, self.min_precision, self.min_specificity)
        )
        positive = None
        if needs_positive and classes.size != 2:
            raise StrongTreeError(NEEDS_BINARY.format(what="this objective or constraint", n=classes.size, classes=list(classes)))
        if self.positive_class is not None:
            hits = np.flatnonzero(classes == self.positive_class)
            if hits.size == 0:
                raise StrongTreeError(BAD_POSITIVE.format(value=self.positive_class, classes=list(classes)))
            positive = int(hits[0])
        elif classes.size == 2:
            positive = 1

        sens_frame, sens_in_x = self._columns(X, sensitive_features, "sensitive_features", n)
        legit_frame, _ = self._columns(X, legitimate_features, "legitimate_features", n)
        if fairness and sens_frame is None:
            raise StrongTreeError(NEEDS_SENSITIVE.format(fairness=self.fairness))
        if "conditional_statistical_parity" in fairness and legit_frame is None:
            raise StrongTreeError(NEEDS_LEGITIMATE)
        groups: GroupCoding | None = encode_groups(sens_frame) if sens_frame is not None else None
        legit: GroupCoding | None = encode_groups(legit_frame) if legit_frame is not None else None

        features = X if self.allow_protected_splits else X.drop(columns=sens_in_x)
        plan = TableEncoder(n_buckets=self.n_buckets, continuous=self.encoding).fit(features)
        Xb = plan.transform(features)
        data = collapse_patterns(
            Xb, y_idx, classes.size, sample_weight=sample_weight,
            group=None if groups is None else groups.codes, legit=None if legit is None else legit.codes,
        )
        constraints = self._side_constraints(fairness, positive, groups, legit)
        spec = TreeSpec(
            depth=int(self.depth), lambda_=float(self.regularization), max_branching=self.max_branching,
            max_features=self.max_features, min_leaf=int(self.min_leaf), objective=self.objective,
            positive_class=positive, side_constraints=tuple(constraints),
        )

        def make_tree(structure, record) -> FittedTree:
            return FittedTree.from_training(
                structure=structure, encoding=plan, classes=tuple(classes.tolist()), target=_target_name(y),
                X_binary=Xb, y_index=y_idx, record=record, feature_names=tuple(map(str, features.columns)),
            )

        def relay(ev: EngineProgress) -> None:
            if progress is None:
                return
            tree = None
            if ev.structure is not None:
                tree = make_tree(ev.structure, SolveRecord.in_progress(ev.elapsed, ev.objective, ev.bound, ev.gap))
            progress(FitProgress(ev.elapsed, ev.objective, ev.bound, ev.gap, ev.nodes, tree, ev.message))

        result = solve_tree(
            data, spec, formulation=self.formulation, solver=self.solver, time_limit=float(self.time_limit),
            threads=int(self.threads), accelerator=self.accelerator, warm_start=self.warm_start,
            progress=relay if progress is not None else None, stop=stop,
        )
        notes = [result.message] if result.message else []
        if sens_in_x and self.allow_protected_splits:
            notes.append(f"The tree may split on the protected attribute(s) {', '.join(sens_in_x)} (allowed).")
        for c in constraints:
            for reason in getattr(c, "skipped", []) or []:
                notes.append(f"{c.name}: skipped {reason}")
        record = SolveRecord(
            status=result.status, objective=result.objective, bound=result.bound, gap=result.gap,
            runtime=result.runtime, backend=result.backend, formulation=result.formulation, method=result.method,
            n_variables=result.n_variables, n_constraints=result.n_constraints, n_rows=result.n_rows,
            n_patterns=result.n_patterns, build_seconds=result.build_seconds, message=" ".join(notes),
            choice=result.choice, certified=result.certified,
        )
        self.encoding_ = plan
        self.tree_ = make_tree(result.structure, record)
        self.record_ = record
        self.status_ = record.status
        self.n_features_in_ = X.shape[1]
        self.feature_names_in_ = np.asarray(X.columns, dtype=object)
        self.constraint_checks_ = self._verify(constraints, data, result.structure, y_idx, Xb, groups, legit, positive)
        return self

    def _side_constraints(self, fairness: list[str], positive: int | None, groups, legit) -> list:
        from strongtree_core.formulation.fairness import FAIRNESS_NOTIONS
        from strongtree_core.formulation.quality import MinPrecision, MinRecall, MinSpecificity

        levels = dict(
            group_levels=None if groups is None else groups.levels,
            legit_levels=None if legit is None else legit.levels,
        )
        out = [FAIRNESS_NOTIONS[f](float(self.fairness_bound), positive, **levels) for f in fairness]
        for value, cls in ((self.min_recall, MinRecall), (self.min_precision, MinPrecision), (self.min_specificity, MinSpecificity)):
            if value is not None:
                out.append(cls(float(value), positive))
        return out

    def _verify(self, constraints, data, structure, y_idx, Xb, groups, legit, positive) -> list[dict]:
        """Re-measure every constrained quantity from the training predictions."""
        if not constraints:
            return []
        from strongtree_core.metrics import check_constraints

        pred = structure.predict(Xb)
        checks = check_constraints(
            constraints, y_idx, pred,
            group=None if groups is None else groups.codes,
            legit=None if legit is None else legit.codes,
            positive=positive,
        )
        out = []
        for check in checks:
            name, measured, bound, ok = check
            out.append({"constraint": name, "measured": measured, "bound": bound, "satisfied": bool(ok),
                        "detail": getattr(check, "detail", "")})
            if not ok:
                raise StrongTreeError(CONSTRAINT_BROKEN.format(name=name, measured=measured, bound=bound))
        return out

    # ----------------------------------------------------------------- predict
    def predict(self, X) -> np.ndarray:
        """Predicted labels of the rows of X (columns matched by name)."""
        check_is_fitted(self, "tree_")
        return np.asarray(self.tree_.predict(self._as_frame(X)))

    def apply(self, X) -> np.ndarray:
        """Leaf node number reached by each row of X."""
        check_is_fitted(self, "tree_")
        return np.asarray(self.tree_.apply(self._as_frame(X)))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.non_deterministic = False
        return tags


def _target_name(y) -> str:
    name = getattr(y, "name", None)
    return str(name) if name is not None else "target"
