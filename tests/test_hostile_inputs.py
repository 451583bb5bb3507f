"""A catalogue of bad and hostile inputs to the library and the command line.

Every case names its input, the surface it reaches (``fit``, ``predict``,
``export``, ``cli``) and the exact message the user reads; the cases that are
accepted on purpose (a column of missing values, infinite values, huge
integers, an unseen category, numbers written as text, hostile column names
in every export) assert what they give instead.  Each case is a depth-1 or
depth-2 tree on a few dozen rows.
"""

from __future__ import annotations

import builtins
import math
import pickle
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import pytest

from strongtree_core import StrongTreeClassifier, StrongTreeError
from strongtree_core import cli
from strongtree_core.estimator import classifier as est
from strongtree_core.estimator import training
from strongtree_core.cli.words import CLI_CONFIDENCE_WITHOUT_FAIRNESS, CLI_METHOD_WITHOUT_CONFIDENCE
from strongtree_core.encoding import EncodingError, TableEncoder
from strongtree_core.encoding import errors as enc
from strongtree_core.encoding import groups
from strongtree_core.estimator import promise_fit
from strongtree_core.tree import FittedTree
from strongtree_core.tree import fitted
from strongtree_core.vocabulary import PROMISE_METHODS

N = 40
FAIRNESS = est.FAIRNESS


def table(n: int = N, seed: int = 0) -> tuple[pd.DataFrame, pd.Series]:
    """A few dozen rows: a yes/no column, a small integer, a text column; y follows ``a``."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    X = pd.DataFrame({"a": a, "b": rng.integers(0, 4, n), "c": np.where(rng.random(n) < 0.5, "yes", "no")})
    y = pd.Series(np.where(a == 1, "hire", "reject"), name="decision")
    return X, y


def tree_on(**params) -> StrongTreeClassifier:
    return StrongTreeClassifier(**{"depth": 1, "time_limit": 5, **params})


def fit(params: dict | None = None, *, X=None, y=None, **fit_args) -> Callable[[], object]:
    """A case that fits a depth-1 tree on ``table()`` (or the given X / y)."""

    def run():
        X0, y0 = table()
        return tree_on(**(params or {})).fit(X0 if X is None else X, y0 if y is None else y, **fit_args)

    return run


def predict_with(change: Callable[[pd.DataFrame], pd.DataFrame], X_fit=None) -> Callable[[], object]:
    """A case that fits on the table (text column ``c`` decides y) and predicts on a changed copy."""

    def run():
        X, _ = table()
        X = X if X_fit is None else X_fit
        y = pd.Series(np.where(X["c"] == "yes", "hire", "reject"))
        clf = tree_on().fit(X, y)
        return clf.predict(change(X.copy()))

    return run


def _with_nan_y():
    X, y = table()
    y = y.astype(object)
    y[[3, 7]] = None
    return y


def _numeric_nan_y():
    X, y = table()
    out = (y == "hire").astype(float)
    out[[5]] = np.nan
    return out


def _mixed_y():
    X, y = table()
    return pd.Series(["hire" if v == "hire" else 0 for v in y], dtype=object)


def _many_values(n_values: int) -> pd.Series:
    return pd.Series(np.arange(N) % n_values, name="age")


NAMES = ", ".join(map(str, ["a", "b", "c"]))
FLAG = "an instance of 'bool' or an instance of 'numpy.bool'"
NOTIONS = "{" + ", ".join(map(repr, FAIRNESS)) + "}"


def bad(name: str, allowed: str, value) -> str:
    """scikit-learn's message for a parameter outside its constraints."""
    return est.BAD_PARAMETER.format(name=name, allowed=allowed, value=value)


# (case id, surface, run, exception type, exact message)
CASES = [
    # -- parameters ------------------------------------------------------------------------------
    ("depth negative", "fit", fit(dict(depth=-1)), StrongTreeError, bad("depth", "an int in the range [0, 8]", -1)),
    ("depth too deep", "fit", fit(dict(depth=9)), StrongTreeError, bad("depth", "an int in the range [0, 8]", 9)),
    ("depth fractional", "fit", fit(dict(depth=1.5)), StrongTreeError, bad("depth", "an int in the range [0, 8]", 1.5)),
    ("depth True", "fit", fit(dict(depth=True)), StrongTreeError, est.BOOL_NOT_NUMBER.format(name="depth", value=True)),
    ("time_limit True", "fit", fit(dict(time_limit=True)), StrongTreeError,
     est.BOOL_NOT_NUMBER.format(name="time_limit", value=True)),
    ("fairness_bound True", "fit", fit(dict(fairness="statistical_parity", fairness_bound=True, pos_label="hire"),
                                       sensitive_features="c"), StrongTreeError,
     est.BOOL_NOT_NUMBER.format(name="fairness_bound", value=True)),
    ("max_branching True", "fit", fit(dict(max_branching=True)), StrongTreeError,
     est.BOOL_NOT_NUMBER.format(name="max_branching", value=True)),
    ("min_recall False", "fit", fit(dict(min_recall=False)), StrongTreeError,
     est.BOOL_NOT_NUMBER.format(name="min_recall", value=False)),
    ("n_jobs zero", "fit", fit(dict(n_jobs=0)), StrongTreeError, est.NO_JOBS),
    ("n_jobs True", "fit", fit(dict(n_jobs=True)), StrongTreeError, est.BOOL_NOT_NUMBER.format(name="n_jobs", value=True)),
    ("n_jobs fractional", "fit", fit(dict(n_jobs=1.5)), StrongTreeError,
     bad("n_jobs", "an instance of 'int' or None", 1.5)),
    ("time_limit zero", "fit", fit(dict(time_limit=0)), StrongTreeError, bad("time_limit", "a float in the range (0.0, inf)", 0)),
    ("time_limit infinite", "fit", fit(dict(time_limit=math.inf)), StrongTreeError,
     bad("time_limit", "a float in the range (0.0, inf)", math.inf)),
    ("time_limit NaN", "fit", fit(dict(time_limit=math.nan)), StrongTreeError,
     bad("time_limit", "a float in the range (0.0, inf)", math.nan)),
    ("time_limit text", "fit", fit(dict(time_limit="10")), StrongTreeError,
     bad("time_limit", "a float in the range (0.0, inf)", "10")),
    ("regularization 1", "fit", fit(dict(regularization=1.0)), StrongTreeError,
     bad("regularization", "a float in the range [0.0, 1.0)", 1.0)),
    ("min_recall above 1", "fit", fit(dict(min_recall=1.5)), StrongTreeError,
     bad("min_recall", "a float in the range [0.0, 1.0] or None", 1.5)),
    ("fairness_bound negative", "fit", fit(dict(fairness_bound=-0.1)), StrongTreeError,
     bad("fairness_bound", "a float in the range [0.0, 1.0]", -0.1)),
    ("max_features_used negative", "fit", fit(dict(max_features_used=-1)), StrongTreeError,
     bad("max_features_used", "an int in the range [0, inf) or None", -1)),
    ("min_leaf negative", "fit", fit(dict(min_leaf=-1)), StrongTreeError, bad("min_leaf", "an int in the range [0, inf)", -1)),
    ("threads zero", "fit", fit(dict(threads=0)), StrongTreeError, bad("threads", "an int in the range [1, inf)", 0)),
    ("heuristic_start text", "fit", fit(dict(heuristic_start="no")), StrongTreeError, bad("heuristic_start", FLAG, "no")),
    ("exact_search None", "fit", fit(dict(exact_search=None)), StrongTreeError, bad("exact_search", FLAG, None)),
    ("unknown formulation", "fit", fit(dict(formulation="magic")), StrongTreeError,
     bad("formulation", "a str among {'auto', 'flow', 'benders', 'oct', 'binoct', 'local_search'}", "magic")),
    ("unknown solver", "fit", fit(dict(solver="cplex")), StrongTreeError,
     bad("solver", "a str among {'auto', 'highs', 'scip', 'gurobi'}", "cplex")),
    ("unknown objective", "fit", fit(dict(objective="f1")), StrongTreeError,
     bad("objective", "a str among {'accuracy', 'balanced_accuracy', 'worst_case_accuracy', 'sensitivity'}", "f1")),
    ("unknown fairness notion", "fit", fit(dict(fairness="parity")), StrongTreeError,
     bad("fairness", f"a str among {NOTIONS}, an instance of 'list', an instance of 'tuple' or None", "parity")),
    ("unknown notion in a list", "fit", fit(dict(fairness=["statistical_parity", "parity"])), StrongTreeError,
     est.BAD_FAIRNESS.format(allowed=NOTIONS, value=["statistical_parity", "parity"], item="parity")),
    ("one bucket", "fit", fit(dict(n_buckets=1)), StrongTreeError,
     bad("n_buckets", "an int in the range [2, inf) or None", 1)),
    ("no thresholds", "fit", fit(dict(max_thresholds=0)), StrongTreeError,
     bad("max_thresholds", "an int in the range [1, inf) or None", 0)),
    ("max_thresholds True", "fit", fit(dict(max_thresholds=True)), StrongTreeError,
     est.BOOL_NOT_NUMBER.format(name="max_thresholds", value=True)),
    ("buckets and thresholds", "fit", fit(dict(n_buckets=5, max_thresholds=32)), StrongTreeError,
     enc.BUCKETS_AND_THRESHOLDS.format(n_buckets=5, max_thresholds=32)),
    ("one-hot buckets with thresholds", "fit", fit(dict(encoding="onehot_buckets", max_thresholds=32)), StrongTreeError,
     enc.ONEHOT_NEEDS_BUCKETS.format(max_thresholds=32)),
    # -- the table ---------------------------------------------------------------------------
    ("empty table", "fit", fit(X=pd.DataFrame({"a": []}), y=[]), StrongTreeError, est.NO_ROWS),
    ("no columns", "fit", fit(X=pd.DataFrame(index=range(N))), StrongTreeError, est.NO_COLUMNS.format(n=N)),
    ("3-D array", "fit", fit(X=np.zeros((N, 2, 2))), StrongTreeError, est.X_NOT_2D.format(shape=(N, 2, 2))),
    ("duplicate column names", "fit", fit(X=pd.DataFrame(np.zeros((N, 2)), columns=["a", "a"])), EncodingError,
     enc.DUPLICATE_COLUMNS.format(names="'a'")),
    ("tuple column name", "fit", fit(X=pd.DataFrame({("a", "b"): np.arange(N)})), EncodingError,
     enc.BAD_COLUMN_NAME.format(name=("a", "b"), type="tuple")),
    ("numbers with thousands separators", "fit", fit(X=pd.DataFrame({"pay": ["1,200", "3,400"] * (N // 2)})), EncodingError,
     enc.NUMERIC_AS_TEXT.format(column="pay", example="1,200")),
    ("numbers with a decimal comma", "fit", fit(X=pd.DataFrame({"score": ["51,26", "48,68", "7", "60,5"] * (N // 4)})),
     EncodingError, enc.DECIMAL_COMMA.format(column="score", example="51,26")),
    ("numbers with a word among them", "fit",
     fit(X=pd.DataFrame({"age": [*map(str, range(18, 18 + N - 2)), "unknown", "?"]})),
     enc.MixedColumnError, enc.MIXED_NUMBERS_TEXT.format(column="age", examples="'unknown', '?'", rows=2, levels=N)),
    ("a stray decimal comma among numbers", "fit",
     fit(X=pd.DataFrame({"score": [*(i / 7 for i in range(N - 1)), "1,5"]})),
     enc.MixedColumnError, enc.MIXED_NUMBERS_TEXT.format(column="score", examples="'1,5'", rows=1, levels=N)),
    ("decimal commas, thousands grouped by dots", "fit", fit(X=pd.DataFrame({"pay": ["1.234,5", "980,25"] * (N // 2)})),
     EncodingError, enc.DECIMAL_COMMA.format(column="pay", example="1.234,5")),
    ("decimal commas beside numbers of the thousands' shape", "fit",
     fit(X=pd.DataFrame({"pay": ["1,200", "3,5"] * (N // 2)})), EncodingError,
     enc.DECIMAL_COMMA.format(column="pay", example="3,5")),
    # -- the target ----------------------------------------------------------------------------
    ("y too short", "fit", fit(y=pd.Series(["hire", "reject"] * 5)), StrongTreeError,
     training.LENGTH_MISMATCH.format(n_x=N, name="y", n_other=10)),
    ("y two columns", "fit", fit(y=np.zeros((N, 2))), StrongTreeError, training.Y_NOT_ONE_COLUMN.format(shape=(N, 2))),
    ("y one class", "fit", fit(y=pd.Series(["hire"] * N)), StrongTreeError, training.ONE_CLASS.format(label="hire")),
    ("y text with missing values", "fit", fit(y=_with_nan_y()), StrongTreeError,
     training.MISSING_TARGET.format(n=2, total=N, first=3)),
    ("y numbers with NaN", "fit", fit(y=_numeric_nan_y()), StrongTreeError, training.MISSING_TARGET.format(n=1, total=N, first=5)),
    ("y infinite", "fit", fit(y=pd.Series([math.inf, 0.0] * (N // 2))), StrongTreeError,
     training.INFINITE_TARGET.format(n=N // 2, total=N, first=0)),
    ("y text and numbers", "fit", fit(y=_mixed_y()), StrongTreeError,
     training.MIXED_TARGET.format(kinds="number and text", examples="0, 'hire'")),
    ("unknown positive class", "fit", fit(dict(pos_label="maybe", min_recall=0.5)), StrongTreeError,
     est.BAD_POSITIVE.format(value="maybe", classes=["hire", "reject"])),
    ("positive class '1' for numbers", "fit", fit(dict(pos_label="1"), y=pd.Series([0, 1] * (N // 2))), StrongTreeError,
     est.BAD_POSITIVE.format(value="1", classes=[0, 1])),
    ("fairness on three classes", "fit", fit(dict(fairness="statistical_parity"), y=pd.Series([0, 1, 2, 3] * (N // 4)),
                                             sensitive_features="c"), StrongTreeError,
     est.NEEDS_BINARY.format(what="this objective or constraint", n=4, classes=[0, 1, 2, 3])),
    # -- sample weights --------------------------------------------------------------------------
    ("weights negative", "fit", fit(sample_weight=[-1.0] + [1.0] * (N - 1)), StrongTreeError,
     training.WEIGHTS_NEGATIVE.format(n=1, total=N, low=-1.0)),
    ("weights NaN", "fit", fit(sample_weight=[math.nan] * 3 + [1.0] * (N - 3)), StrongTreeError,
     training.WEIGHTS_MISSING.format(n=3, total=N)),
    ("weights infinite", "fit", fit(sample_weight=[math.inf] + [1.0] * (N - 1)), StrongTreeError,
     training.WEIGHTS_INFINITE.format(n=1, total=N)),
    ("weights all zero", "fit", fit(sample_weight=np.zeros(N)), StrongTreeError, training.WEIGHTS_ALL_ZERO),
    ("weights spanning 1e300", "fit", fit(sample_weight=[1e300] + [1.0] * (N - 1)), StrongTreeError,
     training.WEIGHTS_SPREAD.format(low=1.0, high=1e300, limit=training.MAX_WEIGHT_RATIO)),
    ("weights whose sum overflows", "fit", fit(sample_weight=np.full(N, 1e308)), StrongTreeError,
     training.WEIGHTS_TOO_LARGE),
    ("weights text", "fit", fit(sample_weight=["heavy"] * N), StrongTreeError, training.WEIGHTS_NOT_NUMBERS.format(examples="'heavy'")),
    ("weights True/False", "fit", fit(sample_weight=[True, False] * (N // 2)), StrongTreeError,
     training.WEIGHTS_NOT_NUMBERS.format(examples="True, False")),
    ("weights too short", "fit", fit(sample_weight=np.ones(3)), StrongTreeError,
     training.LENGTH_MISMATCH.format(n_x=N, name="sample_weight", n_other=3)),
    ("weights two columns", "fit", fit(sample_weight=np.ones((N, 2))), StrongTreeError,
     training.WEIGHTS_NOT_ONE_COLUMN.format(shape=(N, 2))),
    # -- protected attributes and legitimate factors -------------------------------------------
    ("fairness without a protected attribute", "fit", fit(dict(fairness="statistical_parity")), StrongTreeError,
     training.NEEDS_SENSITIVE.format(fairness="statistical_parity")),
    ("conditional parity without a legitimate factor", "fit",
     fit(dict(fairness="conditional_statistical_parity"), sensitive_features="c"), StrongTreeError, training.NEEDS_LEGITIMATE),
    ("protected column not in X", "fit", fit(dict(fairness="statistical_parity"), sensitive_features="race"), StrongTreeError,
     est.UNKNOWN_COLUMNS.format(what="sensitive_features", names=["race"], available=NAMES)),
    ("protected values of the wrong length", "fit",
     fit(dict(fairness="statistical_parity"), sensitive_features=pd.Series(["f", "m"])), StrongTreeError,
     training.LENGTH_MISMATCH.format(n_x=N, name="sensitive_features", n_other=2)),
    ("protected: empty list", "fit", fit(dict(fairness="statistical_parity", pos_label="hire"), sensitive_features=[]),
     EncodingError, groups.NO_GROUP_COLUMNS.format(argument="sensitive_features", role="protected attribute")),
    ("protected: 21 values", "fit",
     fit(dict(fairness="statistical_parity", pos_label="hire"), sensitive_features=_many_values(21)), EncodingError,
     groups.TOO_MANY_GROUPS.format(role="protected attribute", column="age", n=21, argument="sensitive_features")),
    ("legitimate: 25 values", "fit",
     fit(dict(fairness="conditional_statistical_parity", pos_label="hire"), sensitive_features="c",
         legitimate_features=_many_values(25)), EncodingError,
     groups.TOO_MANY_GROUPS.format(role="legitimate factor", column="age", n=25, argument="legitimate_features")),
    ("protected: 24 combinations", "fit",
     fit(dict(fairness="statistical_parity", pos_label="hire"),
         sensitive_features=pd.DataFrame({"x": np.arange(N) % 8, "z": np.arange(N) % 3})), EncodingError,
     groups.TOO_MANY_COMBINATIONS.format(role="protected attribute", columns="'x', 'z'", n=24, argument="sensitive_features")),
    ("protected: 1 and '1'", "fit",
     fit(dict(fairness="statistical_parity", pos_label="hire"),
         sensitive_features=pd.Series([1, "1"] * (N // 2), name="g", dtype=object)), EncodingError,
     groups.AMBIGUOUS_VALUES.format(role="protected attribute", column="g", examples="1 and '1'")),
    ("protected: a single group", "fit",
     fit(dict(fairness="statistical_parity", pos_label="hire"), sensitive_features=pd.Series(["f"] * N, name="sex")),
     StrongTreeError, training.ONE_GROUP.format(column="sex", value="f", n=N, notion="statistical parity")),
    ("equal opportunity: one group has every positive row", "fit",
     fit(dict(fairness="equal_opportunity", pos_label="hire"),
         sensitive_features=pd.Series(np.where(table()[0]["a"] == 1, "f", "m"), name="sex")),
     StrongTreeError, training.NOTHING_TO_COMPARE.format(notion="equal opportunity", column="sex",
                                                    cohorts="rows of the positive class")),
    # -- a fairness promise on new rows ---------------------------------------------------------
    ("fairness_confidence 1", "fit", fit(dict(fairness="statistical_parity", fairness_confidence=1.0, pos_label="hire"),
                                         sensitive_features="c"), StrongTreeError,
     bad("fairness_confidence", "a float in the range (0.0, 1.0) or None", 1.0)),
    ("fairness_confidence 0", "fit", fit(dict(fairness="statistical_parity", fairness_confidence=0, pos_label="hire"),
                                         sensitive_features="c"), StrongTreeError,
     bad("fairness_confidence", "a float in the range (0.0, 1.0) or None", 0)),
    ("fairness_confidence 90 (a percentage)", "fit",
     fit(dict(fairness="statistical_parity", fairness_confidence=90, pos_label="hire"), sensitive_features="c"),
     StrongTreeError, bad("fairness_confidence", "a float in the range (0.0, 1.0) or None", 90)),
    ("fairness_confidence True", "fit", fit(dict(fairness="statistical_parity", fairness_confidence=True, pos_label="hire"),
                                            sensitive_features="c"), StrongTreeError,
     est.BOOL_NOT_NUMBER.format(name="fairness_confidence", value=True)),
    ("fairness_confidence text", "fit", fit(dict(fairness="statistical_parity", fairness_confidence="0.9", pos_label="hire"),
                                            sensitive_features="c"), StrongTreeError,
     bad("fairness_confidence", "a float in the range (0.0, 1.0) or None", "0.9")),
    ("fairness_confidence NaN", "fit", fit(dict(fairness="statistical_parity", fairness_confidence=math.nan,
                                                pos_label="hire"), sensitive_features="c"), StrongTreeError,
     bad("fairness_confidence", "a float in the range (0.0, 1.0) or None", math.nan)),
    ("unknown promise method", "fit",
     fit(dict(fairness="statistical_parity", fairness_confidence=0.9, fairness_confidence_method="jackknife",
              pos_label="hire"), sensitive_features="c"), StrongTreeError,
     bad("fairness_confidence_method", "a str among {" + ", ".join(map(repr, PROMISE_METHODS)) + "} or None", "jackknife")),
    ("promise method without a confidence", "fit",
     fit(dict(fairness="statistical_parity", fairness_confidence_method="holdout", pos_label="hire"),
         sensitive_features="c"), StrongTreeError, est.METHOD_WITHOUT_CONFIDENCE.format(method="holdout")),
    ("promise without a fairness notion", "fit", fit(dict(fairness_confidence=0.9)), StrongTreeError,
     est.CONFIDENCE_WITHOUT_FAIRNESS),
    ("promise: a single group", "fit",
     fit(dict(fairness="statistical_parity", fairness_confidence=0.9, pos_label="hire"),
         sensitive_features=pd.Series(["f"] * N, name="sex")),
     StrongTreeError, training.ONE_GROUP.format(column="sex", value="f", n=N, notion="statistical parity")),
    ("promise: holdout on too few rows", "fit",
     fit(dict(fairness="statistical_parity", fairness_confidence=0.9, fairness_confidence_method="holdout",
              pos_label="hire"), sensitive_features="c"), StrongTreeError,
     promise_fit.HOLDOUT_TOO_FEW.format(share=0.3, group="no", n=5, cohort="all rows", confidence=0.9, need=59,
                                        delta=5.0)),
    ("promise: half-samples with 1 row of a group and class", "fit",
     fit(dict(fairness="statistical_parity", fairness_confidence=0.9, pos_label="hire"),
         sensitive_features=pd.Series(["f"] * (N - 1) + ["m"], name="sex")), StrongTreeError,
     promise_fit.PROMISE_FEW_ROWS.format(method="subsample", parts="halves", need=2, group="m", n=1, label="reject")),
    ("promise: 4 folds with 3 rows of a group and class", "fit",
     fit(dict(fairness="statistical_parity", fairness_confidence=0.9, fairness_confidence_method="crossfit",
              pos_label="hire"), sensitive_features=pd.Series(["f"] * (N - 3) + ["m"] * 3, name="sex")), StrongTreeError,
     promise_fit.PROMISE_FEW_ROWS.format(method="crossfit", parts="4 folds", need=4, group="m", n=3, label="reject")),
    # -- prediction --------------------------------------------------------------------------
    ("yes/no at fit, 1/0 at predict", "predict", predict_with(lambda d: d.assign(c=(d["c"] == "yes").astype(int))),
     EncodingError, fitted.TEXT_BECAME_OTHER.format(column="c", levels="'no', 'yes'", now="numbers", examples="0, 1")),
    ("yes/no at fit, True/False at predict", "predict", predict_with(lambda d: d.assign(c=d["c"] == "yes")),
     EncodingError, fitted.TEXT_BECAME_OTHER.format(column="c", levels="'no', 'yes'", now="True/False",
                                                    examples="False, True")),
    ("a fitted column is absent", "predict", predict_with(lambda d: d.drop(columns="c")), StrongTreeError,
     est.MISSING_COLUMNS.format(n=1, missing="'c'", got="'a', 'b'")),
    ("text in a numeric column", "predict", lambda: tree_on().fit(*table()).predict(table()[0].assign(b="many")),
     EncodingError, enc.NOT_NUMERIC.format(column="b", examples="'many'")),
    ("text in a yes/no column", "predict", lambda: tree_on().fit(*table()).predict(table()[0].assign(a="yes")),
     EncodingError, enc.NOT_BINARY.format(column="a", examples="'yes'")),
    ("decision path of two rows", "predict", lambda: tree_on().fit(*table()).tree_.decision_path(table()[0].iloc[:2]),
     ValueError, fitted.ONE_ROW.format(n=2)),
    ("stored tree of another format", "predict", lambda: FittedTree.from_json('{"format": "x"}'), ValueError,
     fitted.BAD_TREE_JSON.format(reason="'format' is not 'strongtree.fitted_tree'")),
]


@pytest.mark.parametrize("case_id,surface,run,kind,message", CASES, ids=[c[0] for c in CASES])
def test_refused_with_the_exact_message(case_id, surface, run, kind, message):
    with pytest.raises(kind) as info:
        run()
    assert str(info.value) == message


# -- inputs that are accepted on purpose ---------------------------------------------------------


def test_a_column_of_missing_values_is_harmless():
    X, y = table()
    clf = tree_on().fit(X.assign(empty=np.nan), y)
    assert clf.tree_.to_text() == tree_on().fit(X, y).tree_.to_text()
    assert (clf.predict(X.assign(empty=np.nan)) == y).all()


def test_infinite_and_huge_values_in_X_are_ordered_numbers():
    X, y = table()
    big = np.where(X["a"] == 1, 2**62, -(2**62))
    odd = np.arange(N) % 2 == 1
    infinite = np.where(X["a"] == 1, np.where(odd, np.inf, 5.0), np.where(odd, -np.inf, 1.0))
    X = X.assign(inf=infinite, big=big, bigger=[2**70 * (1 + v) for v in X["a"]])
    for column in ("inf", "big", "bigger"):
        clf = tree_on().fit(X[[column]], y)
        assert (clf.predict(X[[column]]) == y).all(), column
        assert clf.tree_.to_json()  # thresholds stay finite JSON numbers


def test_unseen_category_takes_the_other_branch():
    X, _ = table()
    y = pd.Series(np.where(X["c"] == "yes", "hire", "reject"))
    clf = tree_on().fit(X, y)
    assert clf.tree_.to_text().startswith("IF c = yes THEN hire")
    assert set(clf.predict(X.assign(c="maybe"))) == {"reject"}
    assert set(clf.predict(X.assign(c=None))) == {"reject"}


def test_numbers_written_as_text_at_predict_give_the_same_predictions():
    X, y = table()
    X = X.assign(b=np.where(X["a"] == 1, 3, 0) + (np.arange(N) % 2))
    clf = tree_on().fit(X[["b"]], y)
    assert np.array_equal(clf.predict(X[["b"]].astype(str)), clf.predict(X[["b"]]))
    assert (clf.predict(X[["b"]]) == y).all()


def test_an_unused_text_column_may_change_type():
    X, y = table()
    clf = tree_on().fit(X, y)  # the tree tests only ``a``
    assert np.array_equal(clf.predict(X.assign(c=(X["c"] == "yes").astype(int))), clf.predict(X))


def test_fractional_weights_scale_the_objective():
    X, y = table()
    half = tree_on().fit(X, y, sample_weight=np.full(N, 0.5))
    assert half.record_.objective == pytest.approx(N / 2)
    assert half.tree_.to_text() == tree_on().fit(X, y).tree_.to_text()


def test_protected_values_as_a_plain_list_are_groups_not_column_names():
    X, y = table()
    sex = list(np.where(X["b"] >= 2, "f", "m"))
    clf = tree_on(fairness="statistical_parity", fairness_bound=0.3, pos_label="hire").fit(X, y, sensitive_features=sex)
    assert clf.constraint_checks_[0]["satisfied"]


def test_a_missing_protected_value_is_a_group_of_its_own():
    from strongtree_core.metrics import group_metrics, statistical_parity_difference

    X, y = table()
    sex = pd.Series(np.where(X["b"] >= 2, "f", "m"), name="sex", dtype=object)
    sex[X["b"] == 0] = None
    clf = tree_on(fairness="statistical_parity", fairness_bound=0.3, pos_label="hire").fit(X, y, sensitive_features=sex)
    pred = clf.predict(X)
    table_ = group_metrics(y, pred, sensitive_features=sex, pos_label="hire")
    assert sorted(table_["group"]) == ["f", "m", "missing"]
    measured = statistical_parity_difference(y, pred, sensitive_features=sex, pos_label="hire")
    assert clf.constraint_checks_[0]["measured"] == pytest.approx(measured) and measured <= 0.3


def test_a_missing_protected_value_and_the_text_missing_are_two_groups():
    """Rows with no value are "(no value)" beside a value spelled "missing": fitted, bounded and measured apart."""
    from strongtree_core.metrics import group_metrics, statistical_parity_difference

    X, y = table()
    sex = pd.Series(np.where(X["b"] >= 2, "f", "missing"), name="sex", dtype=object)
    sex[X["b"] == 0] = None
    clf = tree_on(fairness="statistical_parity", fairness_bound=0.3, pos_label="hire").fit(X, y, sensitive_features=sex)
    pred = clf.predict(X)
    table_ = group_metrics(y, pred, sensitive_features=sex, pos_label="hire").set_index("group")
    assert dict(table_["count"]) == {"(no value)": int(sex.isna().sum()), "f": int((sex == "f").sum()),
                                     "missing": int((sex == "missing").sum())}
    measured = statistical_parity_difference(y, pred, sensitive_features=sex, pos_label="hire")
    assert clf.constraint_checks_[0]["measured"] == pytest.approx(measured) and measured <= 0.3


HOSTILE_NAMES = [
    "âge ≤ 30 ✓",
    "![x](http://example.invalid/beacon.png)",
    "<script>alert(1)</script>",
    "x'); DROP TABLE people; --",
    'a"b\\c',
    "line\nIF evil THEN hire",
    "__import__('builtins').HACKED",
]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_hostile_column_names_flow_through_every_export(name):
    X, y = table()
    X = X.rename(columns={"a": name})
    clf = tree_on().fit(X, y)
    tree = clf.tree_
    assert tree.feature_names[0] == name
    # text: one line per leaf, the name readable
    lines = tree.to_text().splitlines()
    assert len(lines) == 2 and all(line.startswith("IF ") for line in lines)
    if name.isprintable():
        assert name in lines[0]
    # Python: compiles, runs, predicts as the tree, and nothing in the name ran
    namespace: dict = {}
    exec(compile(tree.to_python(), "<tree>", "exec"), namespace)
    rows = X.to_dict(orient="records")
    assert [namespace["predict"](row) for row in rows] == list(clf.predict(X))
    assert not hasattr(builtins, "HACKED")
    # SQL: the CASE expression predicts as the tree, and the table survives
    con = sqlite3.connect(":memory:")
    X.to_sql("people", con, index=False)
    got = [r[0] for r in con.execute(f"SELECT {tree.to_sql()} FROM people")]
    assert got == list(clf.predict(X))
    assert con.execute("SELECT COUNT(*) FROM people").fetchone()[0] == N
    # DOT: the raw name never appears unescaped
    dot = tree.to_dot()
    for raw in ("<script>", '"b'):
        if raw in name:
            assert raw not in dot
    # JSON round trip keeps the name
    assert FittedTree.from_json(tree.to_json()).feature_names[0] == name


#: Category values and class labels that break an export that does not escape them: quotes (SQL's '' and
#: Python's), SQL comments and statement ends, newlines, backslashes, a NUL byte, DOT's own quoting.
HOSTILE_VALUES = [
    ("it's yes", "no'; DROP TABLE people; --"),
    ('say "hi"', 'no\\" ]; evil [label="x'),
    ("line\nIF evil THEN hire", "-- comment"),
    ("back\\slash\\", "tab\there"),
    ("nul\x00byte", "plain"),
]


@pytest.mark.parametrize("level,label", HOSTILE_VALUES, ids=[f"case {k}" for k in range(len(HOSTILE_VALUES))])
def test_hostile_category_values_and_class_labels_flow_through_every_export(level, label):
    """A category value and a class label with quotes, `--`, `;`, newlines, backslashes or a NUL byte: the
    text, Python, SQL (run in SQLite), DOT and JSON exports each predict exactly as the tree, and nothing
    in the values runs (dropping SQL's '' doubling fails here)."""
    rng = np.random.default_rng(3)
    c = rng.choice([level, "other", "third"], N)
    X = pd.DataFrame({"c": c, "n": rng.integers(0, 3, N)})
    y = pd.Series(np.where(c == level, label, "rest"), name="decision")
    clf = tree_on().fit(X, y)
    tree = clf.tree_
    expected = list(clf.predict(X))
    assert set(expected) == {label, "rest"}
    text = tree.to_text()
    assert len(text.splitlines()) == 2 and "\x00" not in text
    namespace: dict = {}
    exec(compile(tree.to_python(), "<tree>", "exec"), namespace)
    assert [namespace["predict"](row) for row in X.to_dict(orient="records")] == expected
    con = sqlite3.connect(":memory:")
    X.to_sql("people", con, index=False)
    assert [r[0] for r in con.execute(f"SELECT {tree.to_sql()} FROM people")] == expected
    assert con.execute("SELECT COUNT(*) FROM people").fetchone()[0] == N
    dot = tree.to_dot()
    assert "\x00" not in dot
    if shutil.which("dot"):
        drawn = subprocess.run(["dot", "-Tsvg"], input=dot.encode("utf-8"), capture_output=True, timeout=30)
        assert drawn.returncode == 0 and not drawn.stderr, drawn.stderr
        assert b"evil" not in drawn.stdout or b'label="x' not in drawn.stdout
    again = FittedTree.from_json(tree.to_json())
    assert list(again.predict(X)) == expected


# -- the command line --------------------------------------------------------------------------


def _csv(folder: Path, name: str = "data.csv", text: str | None = None, **columns) -> Path:
    path = folder / name
    if text is not None:
        path.write_text(text, encoding="utf-8")
        return path
    X, y = table()
    frame = X.assign(hired=y)
    for column, values in columns.items():
        frame[column] = values
    frame.to_csv(path, index=False)
    return path


def _missing_target(folder):
    X, y = table()
    frame = X.assign(hired=y.astype(object))
    frame.loc[[4, 9, 11], "hired"] = None
    frame.to_csv(folder / "data.csv", index=False)
    return folder / "data.csv"


def _latin1(folder):
    X, y = table()
    X.assign(hired=y, sex=np.where(X["b"] > 1, "féminin", "masculin")).to_csv(folder / "data.csv", index=False,
                                                                                   encoding="latin-1")
    return folder / "data.csv"


def _header_only(folder):
    return _csv(folder, text="a,b,hired\n")


def _duplicate_names(folder):
    return _csv(folder, text="a,b,a,hired\n" + "\n".join(f"{i % 2},{i % 3},{i % 5},{'hire' if i % 2 else 'reject'}"
                                                         for i in range(20)))


CLI_CASES = [
    ("output folder does not exist", lambda d: _csv(d), ["--output", "{d}/no/such/folder/tree.json"], 2,
     cli.OUTPUT_UNWRITABLE.format(path="{d}/no/such/folder/tree.json", reason="No such file or directory")),
    ("output is a folder", lambda d: _csv(d), ["--output", "{d}"], 2,
     cli.OUTPUT_UNWRITABLE.format(path="{d}", reason="Is a directory")),
    ("output is the data file", lambda d: _csv(d), ["--output", "{d}/data.csv"], 2,
     cli.OUTPUT_UNWRITABLE.format(path="{d}/data.csv", reason="it is the data file")),
    ("duplicate column names", _duplicate_names, [], 2,
     cli.DUPLICATE_COLUMNS.format(path="{d}/data.csv", names="'a'", renamed="'a.1'")),
    ("missing target values", _missing_target, [], 2,
     cli.MISSING_TARGET.format(n=3, total=N, path="{d}/data.csv", target="hired", first=5)),
    ("target not a column", lambda d: _csv(d), ["--target", "outcome"], 2,
     cli.NO_TARGET.format(target="outcome", path="{d}/data.csv", columns="a, b, c, hired")),
    ("header but no rows", _header_only, [], 2, cli.NO_ROWS.format(path="{d}/data.csv")),
    ("empty file", lambda d: _csv(d, text=""), [], 2,
     cli.READ_FAILED.format(path="{d}/data.csv", reason="No columns to parse from file")),
    ("no such file", lambda d: d / "absent.csv", [], 2,
     cli.READ_FAILED.format(path="{d}/absent.csv", reason="[Errno 2] No such file or directory: '{d}/absent.csv'")),
    ("Latin-1 file read as UTF-8", _latin1, [], 2,
     cli.NOT_TEXT.format(path="{d}/data.csv", encoding="UTF-8",
                         reason="'utf-8' codec can't decode byte 0xe9 in position {pos}: invalid continuation byte")),
    ("unknown encoding", lambda d: _csv(d), ["--file-encoding", "klingon"], 2,
     cli.READ_FAILED.format(path="{d}/data.csv", reason="unknown encoding: klingon")),
    ("protected is the target", lambda d: _csv(d), ["--protected", "hired", "--fairness", "statistical_parity"], 2,
     cli.ROLE_IS_TARGET.format(option="protected", column="hired")),
    ("protected not a column", lambda d: _csv(d), ["--protected", "race", "--fairness", "statistical_parity"], 2,
     cli.ROLE_NOT_FOUND.format(option="protected", column="race", path="{d}/data.csv", columns="a, b, c, hired")),
    ("protected with 25 values", lambda d: _csv(d, age=np.arange(N) % 25),
     ["--protected", "age", "--fairness", "statistical_parity"], 2,
     cli.TOO_MANY_GROUPS.format(option="protected", column="age", n=25, limit=groups.MAX_GROUPS)),
    ("depth out of range", lambda d: _csv(d), ["--depth", "12"], 2,
     "strongtree fit: error: argument --depth: " + cli.BAD_DEPTH.format(most=8, value="12")),
    ("time limit NaN", lambda d: _csv(d), ["--time-limit", "nan"], 2,
     "strongtree fit: error: argument --time-limit: " + cli.BAD_SECONDS.format(value="nan")),
    ("promise level above 1", lambda d: _csv(d), ["--protected", "c", "--fairness", "statistical_parity",
                                                  "--pos-label", "hire", "--fairness-confidence", "1.5"], 2,
     "strongtree fit: error: argument --fairness-confidence: " + cli.BAD_CONFIDENCE.format(value="1.5")),
    ("promise method without a level", lambda d: _csv(d), ["--protected", "c", "--fairness", "statistical_parity",
                                                           "--pos-label", "hire", "--fairness-confidence-method", "holdout"], 1,
     "error: " + CLI_METHOD_WITHOUT_CONFIDENCE.format(method="holdout")),
    ("promise without a notion", lambda d: _csv(d), ["--fairness-confidence", "0.9"], 1,
     "error: " + CLI_CONFIDENCE_WITHOUT_FAIRNESS),
    ("unknown promise method", lambda d: _csv(d), ["--protected", "c", "--fairness", "statistical_parity",
                                                   "--fairness-confidence", "0.9", "--fairness-confidence-method", "exact"], 2,
     "strongtree fit: error: argument --fairness-confidence-method: invalid choice: 'exact' (choose from "
     + ", ".join(map(repr, PROMISE_METHODS)) + ")"),
    ("promise: holdout on too few rows", lambda d: _csv(d),
     ["--protected", "c", "--fairness", "statistical_parity", "--pos-label", "hire", "--fairness-confidence", "0.9",
      "--fairness-confidence-method", "holdout"], 1,
     "error: " + promise_fit.HOLDOUT_TOO_FEW.format(share=0.3, group="no", n=5, cohort="all rows", confidence=0.9,
                                                    need=59, delta=5.0).replace(
         "a larger fairness_bound", "a larger --fairness-bound").replace(
         "(fairness_confidence_method='subsample')", "(--fairness-confidence-method subsample)")),
    ("protected with one value", lambda d: _csv(d, sex="f"),
     ["--protected", "sex", "--fairness", "statistical_parity", "--pos-label", "hire"], 1,
     "error: " + training.ONE_GROUP.format(column="sex", value="f", n=N, notion="statistical parity")),
]


@pytest.mark.parametrize("case_id,make,extra,code,message", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_cli_refuses_with_the_exact_message(tmp_path, capsys, case_id, make, extra, code, message):
    data = make(tmp_path)
    args = ["fit", str(data), "--target", "hired", "--depth", "1", "--time-limit", "5"]
    args += [a.format(d=tmp_path) for a in extra]
    try:
        got = cli.main(args)
    except SystemExit as exc:  # argparse's own refusals (an unknown choice) exit with its usage line
        got = exc.code
    assert got == code
    err = capsys.readouterr().err
    expected = message.replace("{d}", str(tmp_path))
    if "{pos}" in expected:  # the byte offset of the first é depends on the file
        head, tail = expected.split("{pos}")
        line = err.strip().splitlines()[-1]
        assert line.startswith(head) and line.endswith(tail) and line[len(head):-len(tail)].isdigit()
    else:
        assert err.strip().splitlines()[-1] == expected
    assert not (tmp_path / "no").exists()


def test_cli_checks_the_output_before_the_solve(tmp_path, capsys, monkeypatch):
    def no_solve(*args, **kwargs):  # pragma: no cover - must not be reached
        raise AssertionError("the solve started")

    monkeypatch.setattr(StrongTreeClassifier, "fit", no_solve)
    data = _csv(tmp_path)
    assert cli.main(["fit", str(data), "--target", "hired", "--output", str(tmp_path / "x" / "t.json")]) == 2
    assert "nothing was solved" in capsys.readouterr().err


def test_cli_output_check_leaves_no_file_behind(tmp_path):
    target = tmp_path / "tree.json"
    assert cli._output_problem(target) is None
    assert not target.exists()
    target.write_text("kept")
    assert cli._output_problem(target) is None
    assert target.read_text() == "kept"


def test_cli_keeps_the_tree_when_the_write_fails_after_the_solve(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cli.fit, "output_problem", lambda path, data: None)
    data = _csv(tmp_path)
    out = tmp_path / "gone" / "tree.json"
    assert cli.main(["fit", str(data), "--target", "hired", "--depth", "1", "--time-limit", "5", "--output", str(out)]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    prefix = cli.OUTPUT_FALLBACK.split("{fallback}")[0].format(path=out, reason="No such file or directory")
    assert last.startswith(prefix) and last.endswith(" instead.")
    fallback = Path(last[len(prefix):-len(" instead.")])
    try:
        tree = FittedTree.from_json(fallback.read_text(encoding="utf-8"))
        assert tree.target == "hired"
    finally:
        fallback.unlink()


def test_cli_reads_utf16_with_its_mark(tmp_path, capsys):
    X, y = table()
    X.assign(hired=y, sex=np.where(X["b"] > 1, "féminin", "masculin")).to_csv(tmp_path / "d.csv", index=False, encoding="utf-16")
    assert cli.main(["fit", str(tmp_path / "d.csv"), "--target", "hired", "--depth", "1", "--time-limit", "5"]) == 0
    assert "training accuracy: 1.0000" in capsys.readouterr().out


def test_cli_reads_latin1_when_told(tmp_path, capsys):
    data = _latin1(tmp_path)
    args = ["fit", str(data), "--target", "hired", "--depth", "1", "--time-limit", "5", "--file-encoding", "latin-1"]
    assert cli.main(args) == 0


def test_cli_reports_an_internal_fault_without_a_traceback(tmp_path, capsys, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("solver vanished")

    monkeypatch.setattr(StrongTreeClassifier, "fit", broken)
    data = _csv(tmp_path)
    assert cli.main(["fit", str(data), "--target", "hired", "--depth", "1"]) == 3
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == cli.INTERNAL_ERROR.format(kind="RuntimeError", detail="solver vanished")
    assert "Traceback" not in err


@pytest.mark.parametrize("values, kind", [
    (["1", "2", "3", "HS"], "categorical"),  # a few codes and a word: categories, as read
    ([*map(str, range(19)), "?"], "categorical"),  # 19 numbers: fewer than MIXED_MIN_NUMBERS
    ([*map(str, range(20)), "a", "b", "c"], "categorical"),  # 20 of 23 distinct values: below 90 %
    ([*map(str, range(20)), "a", "b"], "refused"),  # 20 of 22: 91 %
    ([*map(str, range(27)), "a", "b", "c"], "refused"),  # 27 of 30: 90 % exactly
])
def test_a_column_of_numbers_with_some_text_is_refused_only_when_numbers_are_most_of_it(values, kind):
    X = pd.DataFrame({"code": values * 3})
    encoder = TableEncoder()
    if kind == "refused":
        with pytest.raises(enc.MixedColumnError) as err:
            encoder.fit(X)
        texts = [v for v in values if not v.isdigit()]
        assert (err.value.column, err.value.rows, err.value.levels) == ("code", 3 * len(texts), len(values))
        assert pickle.loads(pickle.dumps(err.value)).args == err.value.args  # a worker's error comes back whole
    else:
        assert encoder.fit(X).columns[0].kind == kind
