"""The majority-class baseline and the trivial-tree warning, and its absence on real trees."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from strongtree_core import StrongTreeClassifier, TrivialTreeWarning
from strongtree_core.metrics.trivial import TRIVIAL_TREE, WHY_ACCURACY, WHY_BALANCED, WHY_ONE_CLASS, baseline_accuracy, trivial_reason


def test_baseline_is_the_weighted_majority_share():
    assert baseline_accuracy(np.array([0, 0, 1]), 2) == (pytest.approx(2 / 3), 0)
    assert baseline_accuracy(np.array([0, 0, 1]), 2, np.array([1.0, 1.0, 5.0])) == (pytest.approx(5 / 7), 1)


def test_reason_text_for_each_cause():
    y = np.array([0] * 70 + [1] * 30)
    text = trivial_reason(y, np.zeros(100, dtype=int), ("good", "bad"))
    assert text == TRIVIAL_TREE.format(  # noqa: the accuracy test and the one-class test
        why="; ".join([WHY_ACCURACY.format(accuracy=0.7, baseline=0.7), WHY_ONE_CLASS.format(label="good", share=1.0)]),
        label="good", baseline=0.7,
    )
    assert trivial_reason(y, y, ("good", "bad")) is None  # perfect tree
    # under balanced accuracy a tree below the majority's accuracy is not trivial if it separates the classes
    pred = np.array([0] * 40 + [1] * 30 + [1] * 30)
    assert trivial_reason(y, pred, ("good", "bad"), objective="balanced_accuracy") is None
    assert trivial_reason(y, pred, ("good", "bad")) is not None  # 70 % accuracy, no better than 70 %
    text = trivial_reason(y, np.zeros(100, dtype=int), ("good", "bad"), objective="balanced_accuracy")
    assert WHY_BALANCED.format(accuracy=0.5, baseline=0.5) in text


def _table(n=400, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 2, (n, 3))
    y = np.where(rng.random(n) < 0.9, x[:, 0], 1 - x[:, 0])
    return pd.DataFrame(x, columns=["a", "b", "c"]), y


def test_fit_warns_on_a_constant_tree_and_reports_the_baseline():
    X, y = _table()
    with pytest.warns(TrivialTreeWarning, match="does no better than guessing"):
        clf = StrongTreeClassifier(depth=0).fit(X, y)
    assert clf.baseline_accuracy_ == pytest.approx(max(np.mean(y), 1 - np.mean(y)))


def test_fit_does_not_warn_on_a_real_tree():
    X, y = _table()
    with warnings.catch_warnings():
        warnings.simplefilter("error", TrivialTreeWarning)
        clf = StrongTreeClassifier(depth=2).fit(X, y)
    assert clf.score(X, y) > clf.baseline_accuracy_ + 0.01


def test_the_tree_json_keeps_the_baseline_and_old_files_still_load():
    from strongtree_core import FittedTree

    X, y = _table()
    w = np.where(y == 1, 3.0, 1.0)  # weighted: the majority share is by weight
    for weights in (None, w):
        clf = StrongTreeClassifier(depth=2).fit(X, y, sample_weight=weights)
        expected = baseline_accuracy(y, 2, weights)[0]
        assert clf.baseline_accuracy_ == pytest.approx(expected)
        assert clf.tree_.baseline_accuracy == pytest.approx(expected)
        data = clf.tree_.to_dict()
        assert data["baseline_accuracy"] == pytest.approx(expected)
        back = FittedTree.from_json(clf.tree_.to_json())
        assert back == clf.tree_ and back.baseline_accuracy == pytest.approx(expected)
        del data["baseline_accuracy"]  # a file written before the baseline was kept
        old = FittedTree.from_dict(data)
        assert old.baseline_accuracy is None and old.predict(X).tolist() == clf.tree_.predict(X).tolist()
