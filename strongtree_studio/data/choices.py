"""The user's choices as plain values: column roles, the train/test split and
the model settings passed to :class:`strongtree_core.StrongTreeClassifier`."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any

import numpy as np
import pandas as pd

from strongtree_core.encoding.thresholds import DEFAULT_MAX_THRESHOLDS
from strongtree_core.numbers import MIN_FAIRNESS_BOUND, bound_too_small
from strongtree_core.report.rows import split_rows

#: Most classes a target may have.
MAX_CLASSES = 20
#: Most levels a protected attribute or legitimate factor may have.
MAX_GROUP_LEVELS = 12

ERR_TARGET_MISSING = "The target column {target!r} is not in the table; choose one of its columns."
ERR_ONE_CLASS = "The target column {target!r} has a single value ({value!r}); choose a column with at least two classes."
ERR_MANY_CLASSES = (
    "The target column {target!r} has {n} distinct values; a classification target may have at most "
    f"{MAX_CLASSES}. Choose another column, or bin this one into classes before uploading."
)
ERR_TARGET_INFINITE = (
    "The target column {target!r} is infinite (inf or -inf) in {n} of its {total} rows: class labels must be "
    "finite numbers or text. Choose another column as the target, or correct those rows and upload the table again."
)
ERR_TARGET_IN_ROLE = "The target {target!r} cannot also be {role}; remove it from that list."
ERR_BOTH_ROLES = "{columns} cannot be both protected and legitimate; keep each column in one list."
ERR_MANY_LEVELS = (
    "{column!r} has {n} distinct values; a {role} may have at most {limit}. Group its values into "
    "fewer levels (for example age bands) before uploading."
)
ERR_NO_FEATURES = (
    "No column is left to split on: every column is the target, ignored or protected. "
    "Un-ignore a column, or allow splits on the protected attribute on the Model page."
)
ERR_POSITIVE = "The positive class {positive!r} is not a value of {target!r}; pick one of {values}."
NOTE_MISSING_TARGET = "Rows without a value in {target!r} are left out: {n}."
NOTE_NO_STRATIFY = "A class has fewer than two rows, so the split is not stratified."
ERR_FAIRNESS_NEEDS_GROUP = (
    "Fairness constraints need a protected attribute: choose one on the Data page, or set the fairness notion to none."
)
ERR_CSP_NEEDS_LEGIT = (
    "Conditional statistical parity needs a legitimate factor: choose one on the Data page, or pick another notion."
)
#: A bound δ a solver cannot tell from 0 (strongtree_core.numbers.MIN_FAIRNESS_BOUND), in percentage points.
ERR_BOUND_TOO_SMALL = (
    "The bound δ {value:g} pp is above 0 but below {smallest:g} pp (one row in a million), the smallest bound a "
    "solver tells apart from 0: set it to 0 for no gap at all, or to {smallest:g} pp or more."
)
ERR_FAIRNESS_MULTICLASS = (
    "Fairness constraints compare positive predictions, so the target needs a positive class: pick one on the Data page."
)


@dataclass(frozen=True)
class Roles:
    """What each column of the table is for."""

    target: str
    pos_label: Any = None
    protected: tuple[str, ...] = ()
    legitimate: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()

    def feature_columns(self, frame: pd.DataFrame, allow_protected_splits: bool = False) -> list[str]:
        """Columns the tree may split on."""
        excluded = {self.target, *self.ignored}
        if not allow_protected_splits:
            excluded |= set(self.protected)
        return [c for c in frame.columns if c not in excluded]

    def model_columns(self, frame: pd.DataFrame) -> list[str]:
        """Columns sent to the estimator: features plus protected and legitimate columns."""
        excluded = {self.target, *self.ignored}
        return [c for c in frame.columns if c not in excluded]


def check_roles(frame: pd.DataFrame, roles: Roles, allow_protected_splits: bool = False) -> list[str]:
    """Readable problems with ``roles`` on ``frame`` (empty when all is well)."""
    if roles.target not in frame.columns:
        return [ERR_TARGET_MISSING.format(target=roles.target)]
    problems = []
    target = frame[roles.target]
    values = target.dropna().unique()
    infinite = _infinite_rows(target)
    if infinite:  # the split's stratification (scikit-learn) raised on them: a traceback on the Data page
        problems.append(ERR_TARGET_INFINITE.format(target=roles.target, n=infinite, total=len(target)))
    elif len(values) < 2:
        value = values[0] if len(values) else None
        problems.append(ERR_ONE_CLASS.format(target=roles.target, value=value))
    elif len(values) > MAX_CLASSES:
        problems.append(ERR_MANY_CLASSES.format(target=roles.target, n=len(values)))
    if roles.pos_label is not None and roles.pos_label not in set(values):
        problems.append(
            ERR_POSITIVE.format(positive=roles.pos_label, target=roles.target, values=sorted(map(str, values)))
        )
    for role, columns in (
        ("a protected attribute", roles.protected),
        ("a legitimate factor", roles.legitimate),
        ("ignored", roles.ignored),
    ):
        if roles.target in columns:
            problems.append(ERR_TARGET_IN_ROLE.format(target=roles.target, role=role))
    both = sorted(set(roles.protected) & set(roles.legitimate))
    if both:
        problems.append(ERR_BOTH_ROLES.format(columns=", ".join(map(repr, both))))
    for role, columns in (("protected attribute", roles.protected), ("legitimate factor", roles.legitimate)):
        for column in columns:
            n = frame[column].nunique()
            if n > MAX_GROUP_LEVELS:
                problems.append(ERR_MANY_LEVELS.format(column=column, n=n, role=role, limit=MAX_GROUP_LEVELS))
    if not roles.feature_columns(frame, allow_protected_splits):
        problems.append(ERR_NO_FEATURES)
    return problems


def _infinite_rows(values: pd.Series) -> int:
    """How many of ``values`` are inf or -inf (a column of numbers; text is never infinite)."""
    if pd.api.types.is_bool_dtype(values.dtype) or not pd.api.types.is_numeric_dtype(values.dtype):
        return 0
    return int(np.isinf(values.to_numpy(dtype=float, na_value=np.nan)).sum())


@dataclass(frozen=True)
class SplitConfig:
    """How rows are divided into training and test sets."""

    test_size: float = 0.25
    seed: int = 0
    stratify: bool = True


@dataclass(frozen=True)
class SplitTables:
    """Training and test rows (target included), with notes for the user."""

    train: pd.DataFrame
    test: pd.DataFrame
    notes: tuple[str, ...] = ()


def split_table(frame: pd.DataFrame, roles: Roles, split: SplitConfig) -> SplitTables:
    """Drop ignored columns and rows without a target, then split (stratified when possible), by the rule of
    :func:`strongtree_core.report.rows.split_rows` (which a report re-makes from the tree file)."""
    kept = frame.drop(columns=[c for c in roles.ignored if c in frame.columns])
    rows = split_rows(kept, roles.target, split.test_size, split.seed, split.stratify)
    notes = []
    if rows.missing_target:
        notes.append(NOTE_MISSING_TARGET.format(n=f"{rows.missing_target:,}", target=roles.target))
    if split.stratify and split.test_size > 0 and not rows.stratified:
        notes.append(NOTE_NO_STRATIFY)
    return SplitTables(rows.train, rows.test, tuple(notes))


FORMULATIONS = {"auto": "Automatic", "flow": "FlowOCT", "benders": "BendersOCT"}
#: How numeric columns become yes/no questions (``ModelConfig.encoding``).
ENCODINGS = {
    "thermometer": "x ≤ t at quantiles",
    "data": "x ≤ t from the data",
    "onehot_buckets": "one per bucket",
}
SOLVERS = {"auto": "Automatic", "highs": "HiGHS", "scip": "SCIP", "gurobi": "Gurobi"}
OBJECTIVES = {
    "accuracy": "Accuracy",
    "balanced_accuracy": "Balanced accuracy",
    "worst_case_accuracy": "Worst-class accuracy",
    "sensitivity": "Sensitivity (recall of the positive class)",
}


@dataclass(frozen=True)
class ModelConfig:
    """Settings of :class:`strongtree_core.StrongTreeClassifier` chosen on the Model page.

    ``None`` in the optional bounds means "no bound"; ``fairness`` is empty for
    an unconstrained tree.
    """

    depth: int = 2
    formulation: str = "auto"
    solver: str = "auto"
    time_limit: float = 60.0
    regularization: float = 0.0
    max_branching: int | None = None
    max_features_used: int | None = None
    min_leaf: int = 0
    objective: str = "accuracy"
    min_recall: float | None = None
    min_precision: float | None = None
    min_specificity: float | None = None
    fairness: tuple[str, ...] = ()
    fairness_bound: float = 0.05
    fairness_confidence: float | None = None
    allow_protected_splits: bool = False
    n_buckets: int = 5
    encoding: str = "thermometer"
    max_thresholds: int = DEFAULT_MAX_THRESHOLDS

    def estimator_params(self, roles: Roles) -> dict[str, Any]:
        """Keyword arguments of ``StrongTreeClassifier`` (one solver thread).

        ``encoding="data"`` is the estimator's thresholds chosen from the data (``max_thresholds``,
        ``n_buckets=None``); the other codings cut at ``n_buckets`` quantiles."""
        params = asdict(self)
        if self.encoding == "data":
            params.update(encoding="thermometer", n_buckets=None)
        else:
            params["max_thresholds"] = None
        params["fairness"] = list(self.fairness) or None
        params["pos_label"] = roles.pos_label
        params["threads"] = 1
        return params

    def coding_words(self) -> str:
        """How numbers become questions, in a few words ("5 quantile cuts per number")."""
        if self.encoding == "data":
            return f"up to {self.max_thresholds} cuts per number from the data"
        if self.encoding == "onehot_buckets":
            return f"{self.n_buckets} buckets per number"
        return f"{self.n_buckets} quantile cuts per number"

    def without_fairness(self) -> "ModelConfig":
        return replace(self, fairness=(), fairness_confidence=None)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> "ModelConfig":
        known = {f.name for f in fields(cls)}
        kept = {k: v for k, v in values.items() if k in known}
        if "fairness" in kept:
            kept["fairness"] = tuple(kept["fairness"] or ())
        return cls(**kept)


def check_model(config: ModelConfig, roles: Roles, n_classes: int) -> list[str]:
    """Readable problems combining the model settings with the column roles."""
    problems = []
    if config.fairness:
        if not roles.protected:
            problems.append(ERR_FAIRNESS_NEEDS_GROUP)
        if "conditional_statistical_parity" in config.fairness and not roles.legitimate:
            problems.append(ERR_CSP_NEEDS_LEGIT)
        if n_classes > 2 and roles.pos_label is None:
            problems.append(ERR_FAIRNESS_MULTICLASS)
        if bound_too_small(config.fairness_bound):
            problems.append(ERR_BOUND_TOO_SMALL.format(value=100.0 * config.fairness_bound,
                                                       smallest=100.0 * MIN_FAIRNESS_BOUND))
    return problems
