"""NotProvenWarning: every fit that returns without a proof says so, through scikit-learn's channel
(a ConvergenceWarning), and GridSearchCV / cross_val_score pass it on; a proven fit says nothing."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, cross_val_score

import strongtree_core
from strongtree_core import NotProvenWarning, StrongTreeClassifier, TrivialTreeWarning
from strongtree_core.errors import NOT_PROVEN, NOT_PROVEN_OTHER, not_proven_message


def _data(n: int = 60, seed: int = 1):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.integers(0, 2, (n, 6)), columns=[f"f{j}" for j in range(6)])
    y = (X["f0"] ^ X["f1"] | (rng.random(n) < 0.2)).astype(int)
    return X, y


def test_the_warnings_are_exported_and_typed():
    assert {"NotProvenWarning", "TrivialTreeWarning"} <= set(strongtree_core.__all__)
    assert issubclass(NotProvenWarning, ConvergenceWarning) and issubclass(TrivialTreeWarning, UserWarning)
    assert NotProvenWarning.__doc__ and TrivialTreeWarning.__doc__


def test_a_proven_fit_warns_nothing():
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("error", NotProvenWarning)
        clf = StrongTreeClassifier(depth=2, time_limit=30).fit(X, y)
    assert clf.record_.certified


def test_the_heuristic_warns_with_its_message():
    X, y = _data()
    with pytest.warns(NotProvenWarning) as caught:
        clf = StrongTreeClassifier(depth=2, formulation="local_search", time_limit=10).fit(X, y)
    assert clf.status_ == "heuristic"
    assert [str(w.message) for w in caught] == [NOT_PROVEN["heuristic"]]
    assert caught[0].filename == __file__  # points at the caller of fit


def test_a_stopped_fit_warns_that_it_was_stopped():
    X, y = _data(200)
    stop = threading.Event()
    stop.set()
    with pytest.warns(NotProvenWarning) as caught:
        clf = StrongTreeClassifier(depth=3, formulation="flow", solver="highs", time_limit=30).fit(X, y, stop=stop)
    assert not clf.record_.certified
    assert str(caught[0].message) == not_proven_message(clf.status_)
    assert clf.status_ == "interrupted" and str(caught[0].message) == NOT_PROVEN["interrupted"]


def test_a_fit_out_of_time_warns_with_the_time_limit_message():
    rng = np.random.default_rng(7)
    X = pd.DataFrame(rng.integers(0, 2, (300, 14)), columns=[f"f{j}" for j in range(14)])
    y = pd.Series(rng.integers(0, 2, 300))
    with pytest.warns(NotProvenWarning) as caught:
        clf = StrongTreeClassifier(depth=3, formulation="flow", solver="highs", exact_search=False,
                                   time_limit=1.0).fit(X, y)
    assert clf.status_ == "time_limit" and not clf.record_.certified
    assert str(caught[-1].message) == NOT_PROVEN["time_limit"]


def test_grid_search_and_cross_validation_surface_it():
    X, y = _data()
    search = GridSearchCV(StrongTreeClassifier(formulation="local_search", time_limit=5), {"depth": [1, 2]}, cv=2)
    with pytest.warns(ConvergenceWarning, match="not proven optimal"):
        search.fit(X, y)
    with pytest.warns(NotProvenWarning):
        cross_val_score(StrongTreeClassifier(depth=1, formulation="local_search", time_limit=5), X, y, cv=2)


def test_the_message_for_any_other_status():
    assert not_proven_message("error") == NOT_PROVEN_OTHER.format(status="error")
