"""Leaves that do not predict their majority class: found, and their reasons recomputed here
by relabelling each leaf and measuring the gap from the predictions by plain counting."""

from __future__ import annotations

import numpy as np
import pytest

from strongtree_core import StrongTreeClassifier
from strongtree_core.tree import FittedTree
from test_promise import _population


def _sp_gap(pred: np.ndarray, group: np.ndarray) -> float:
    rates = [np.mean(pred[group == g] == 1) for g in np.unique(group)]
    return max(rates) - min(rates)


@pytest.fixture(scope="module")
def fair_tree():
    X, y = _population(1500, 2)
    clf = StrongTreeClassifier(depth=2, fairness="statistical_parity", fairness_bound=0.03, time_limit=60)
    clf.fit(X, y, sensitive_features="group")
    return clf, X, y


def test_every_changed_leaf_is_found_and_its_reason_recomputed(fair_tree):
    clf, X, y = fair_tree
    leaves = clf.apply(X)
    group = X["group"].to_numpy()
    pred = clf.predict(X)
    notes = {c.node: c for c in clf.tree_.changed_leaves}
    assert notes, "this population's fair tree relabels leaves"
    for leaf in np.unique(leaves):
        rows = leaves == leaf
        majority = int(np.bincount(y[rows], minlength=2).argmax())
        predicted = int(pred[rows][0])
        counts = np.bincount(y[rows], minlength=2)
        if counts[predicted] >= counts.max():
            assert leaf not in notes
            continue
        note = notes[leaf]
        assert (note.majority, note.predicted) == (majority, predicted)
        relabelled = pred.copy()
        relabelled[rows] = majority
        gap = _sp_gap(relabelled, group)
        assert gap > 0.03  # relabelling breaks the bound ...
        assert note.reason == (f"relabelling this leaf to {majority!r} breaks statistical parity: "
                               f"gap {100 * gap:.1f} pp > 3.0 pp")  # ... by the gap measured here
        assert note.breaks == ("statistical parity difference",)


def test_changed_leaves_are_shown_in_rules_and_drawing_and_survive_json(fair_tree):
    clf, _, _ = fair_tree
    text = clf.tree_.to_text()
    dot = clf.tree_.to_dot()
    from strongtree_core.tree.svg import tree_svg

    svg = tree_svg(clf.tree_)
    for note in clf.tree_.changed_leaves:
        assert f"[not the majority, {note.majority}: {note.reason}]" in text
        assert f"not the majority ({note.majority})" in dot
        assert f"not the majority ({note.majority})" in svg
    assert svg.count('stroke-dasharray="5 3"') == len(clf.tree_.changed_leaves)
    python, sql = clf.tree_.to_python(), clf.tree_.to_sql()
    for note in clf.tree_.changed_leaves:
        assert f"# node {note.node}; not the majority ({note.majority}): {note.reason}" in python
        assert f"-- not the majority ({note.majority}): {note.reason}" in sql
    namespace: dict = {}
    exec(python, namespace)  # the comments leave the code runnable
    back = FittedTree.from_json(clf.tree_.to_json())
    assert back == clf.tree_ and back.changed_leaves == clf.tree_.changed_leaves
    # a file without the key (earlier versions) loads with no changed leaves
    data = clf.tree_.to_dict()
    del data["changed_leaves"]
    assert FittedTree.from_dict(data).changed_leaves == ()


def test_no_changed_leaf_without_constraints():
    X, y = _population(600, 5)
    clf = StrongTreeClassifier(depth=2, time_limit=30).fit(X.drop(columns="group"), y)
    assert clf.tree_.changed_leaves == ()
    assert "changed_leaves" not in clf.tree_.to_dict()


def test_objective_reason_when_no_constraint_breaks():
    X, y = _population(600, 6)
    y = np.where(np.random.default_rng(0).random(y.size) < 0.75, 0, y)  # a rare positive class
    clf = StrongTreeClassifier(depth=2, objective="balanced_accuracy", time_limit=30).fit(X.drop(columns="group"), y)
    for note in clf.tree_.changed_leaves:
        assert note.breaks == ()
        assert note.reason.startswith("no constraint forces it: relabelling this leaf to")
        assert "(balanced accuracy)" in note.reason
