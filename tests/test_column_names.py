"""Columns at prediction time (scikit-learn's check_dataframe_column_names_consistency, decided here): a tree
fitted on a DataFrame reads columns by name. Reordered columns predict exactly the same; renamed or missing
ones are refused with a message; never a silent read by position. A tree fitted on an array reads positions."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from strongtree_core import StrongTreeClassifier, StrongTreeError
from strongtree_core.estimator.classifier import MISSING_COLUMNS, N_FEATURES, NO_FEATURE_NAMES


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.integers(0, 5, 80), "b": rng.integers(0, 5, 80), "c": rng.normal(size=80).round(2)})
    y = np.where((X["a"] > 2) ^ (X["b"] > 3), "yes", "no")
    clf = StrongTreeClassifier(depth=2, time_limit=20).fit(X, y)
    assert {"a", "b"} <= {c.name for c in clf.encoding_.columns}
    return clf, X


METHODS = ("predict", "predict_proba", "decision_function", "apply")


@pytest.mark.parametrize("method", METHODS)
def test_reordered_columns_predict_the_same(fitted, method):
    clf, X = fitted
    expected = getattr(clf, method)(X)
    for order in (["c", "b", "a"], ["b", "a", "c"]):
        assert np.array_equal(getattr(clf, method)(X[order]), expected)
    # An extra column is ignored.
    assert np.array_equal(getattr(clf, method)(X.assign(extra=1.0)), expected)


@pytest.mark.parametrize("method", METHODS)
def test_renamed_columns_are_refused_with_the_names(fitted, method):
    clf, X = fitted
    renamed = X.rename(columns={"a": "A"})
    with pytest.raises(StrongTreeError) as info:
        getattr(clf, method)(renamed)
    assert str(info.value) == MISSING_COLUMNS.format(n=1, missing="'a'", got="'A', 'b', 'c'")
    assert str(info.value) == (
        "X lacks 1 column(s) the tree was fitted on: 'a'. Columns are matched by name, in any order; "
        "X has 'A', 'b', 'c'. Give the columns their names at fit (or fit again on the new names)."
    )
    with pytest.raises(StrongTreeError) as info:
        getattr(clf, method)(pd.DataFrame(X.to_numpy(), columns=["x0", "x1", "x2"]))
    assert str(info.value) == MISSING_COLUMNS.format(n=3, missing="'a', 'b', 'c'", got="'x0', 'x1', 'x2'")


def test_swapped_names_are_read_by_name_not_position(fitted):
    """The column named 'a' is a, wherever it stands: swapping two names is the same as swapping the data."""
    clf, X = fitted
    swapped = X.rename(columns={"a": "b", "b": "a"})
    same_by_name = pd.DataFrame({"a": X["b"], "b": X["a"], "c": X["c"]})
    assert np.array_equal(clf.predict(swapped), clf.predict(same_by_name))


def test_an_array_after_a_frame_is_read_by_position_with_scikit_learn_s_warning(fitted):
    clf, X = fitted
    with pytest.warns(UserWarning, match=NO_FEATURE_NAMES):
        assert np.array_equal(clf.predict(X.to_numpy()), clf.predict(X))
    with pytest.raises(StrongTreeError, match="expecting 3 features"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            clf.predict(X.to_numpy()[:, :2])


def test_a_tree_fitted_on_an_array_reads_positions():
    rng = np.random.default_rng(1)
    A = rng.integers(0, 4, (60, 3))
    y = (A[:, 0] > 1).astype(int)
    clf = StrongTreeClassifier(depth=1, time_limit=10).fit(A, y)
    assert np.array_equal(clf.predict(pd.DataFrame(A, columns=["p", "q", "r"])), clf.predict(A))
    with pytest.raises(StrongTreeError) as info:
        clf.predict(A[:, :2])
    assert str(info.value) == N_FEATURES.format(n=2, expected=3)
