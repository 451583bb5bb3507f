"""StrongTreeClassifier against scikit-learn's own estimator checks, and the parts of
the contract those checks do not reach: probabilities recomputed from the training
rows of each leaf, sample weights equal to repeated rows, the node indicator, and
the messages for input scikit-learn refuses."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import sparse
from sklearn.exceptions import DataConversionWarning, NotFittedError
from sklearn.metrics import log_loss, roc_auc_score
from sklearn.model_selection import cross_val_score
from sklearn.utils.estimator_checks import (
    check_param_validation,
    parametrize_with_checks,
)

from strongtree_core import StrongTreeClassifier, StrongTreeError
from strongtree_core.estimator import classifier as est
from strongtree_core.estimator import training
from strongtree_core.encoding import TableEncoder
from strongtree_core.structure import LEAF, TreeStructure
from strongtree_core.tree import FittedTree, SolveRecord

#: The instances the checks run on: every exact route and both MIO formulations, each small
#: enough that the checks' hundred-odd fits (a few dozen rows each) take seconds.
CHECKED = [
    StrongTreeClassifier(time_limit=5),
    StrongTreeClassifier(formulation="flow", solver="highs", time_limit=5),
    StrongTreeClassifier(formulation="benders", solver="scip", time_limit=5),
    StrongTreeClassifier(objective="balanced_accuracy", regularization=0.05, time_limit=5),
    StrongTreeClassifier(min_leaf=2, time_limit=5),
    StrongTreeClassifier(depth=1, time_limit=5),
]


def expected_failures(estimator: StrongTreeClassifier) -> dict[str, str]:
    """Checks that fail for a reason, each with that reason (strict: a check listed here must fail)."""
    failures = {}
    if estimator.min_leaf > 0:
        failures["check_sample_weight_equivalence_on_dense_data"] = (
            "min_leaf counts training rows, not their weights (as scikit-learn's min_samples_leaf), "
            "so a row of weight 2 is one row toward a leaf's minimum where its two copies are two"
        )
    if estimator.depth < 2:
        failures["check_classifiers_train"] = (
            "the check asks for 83% training accuracy on three blobs; a tree of depth 1 has two leaves, "
            "so it predicts at most two of the three classes"
        )
    return failures


@parametrize_with_checks(CHECKED, expected_failed_checks=expected_failures, xfail_strict=True)
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


def test_every_parameter_is_validated_by_its_constraints():
    check_param_validation("StrongTreeClassifier", StrongTreeClassifier(time_limit=5))
    assert set(StrongTreeClassifier._parameter_constraints) == set(StrongTreeClassifier().get_params())


def _continuous(n: int = 60, seed: int = 3) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"u": rng.normal(size=n).round(3), "v": rng.exponential(size=n).round(3)})
    y = np.where(X["u"] + 0.5 * X["v"] + rng.normal(scale=0.5, size=n) > 0.6, "yes", "no")
    return X, y


def _grid(X: pd.DataFrame) -> pd.DataFrame:
    u, v = np.meshgrid(np.linspace(X["u"].min() - 0.1, X["u"].max() + 0.1, 40),
                       np.linspace(X["v"].min() - 0.1, X["v"].max() + 0.1, 40))
    return pd.DataFrame({"u": u.ravel(), "v": v.ravel()})


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_a_row_of_weight_two_is_the_row_twice_and_weight_zero_is_no_row(seed):
    X, y = _continuous(seed=seed)
    rng = np.random.default_rng(seed)
    weight = np.ones(len(X), dtype=int)
    weight[rng.choice(len(X), 15, replace=False)] = 2
    weight[rng.choice(np.flatnonzero(weight == 1), 5, replace=False)] = 0
    rows = np.repeat(np.arange(len(X)), weight)
    weighted = StrongTreeClassifier(depth=2, time_limit=20).fit(X, y, sample_weight=weight)
    repeated = StrongTreeClassifier(depth=2, time_limit=20).fit(X.iloc[rows], y[rows])
    # The weights move the quantile cuts here, so the check below is not vacuous.
    assert TableEncoder().fit(X).labels != TableEncoder().fit(X.iloc[rows]).labels
    assert weighted.encoding_.labels == repeated.encoding_.labels
    grid = _grid(X)
    assert np.array_equal(weighted.predict(grid), repeated.predict(grid))
    np.testing.assert_allclose(weighted.predict_proba(grid), repeated.predict_proba(grid), rtol=0, atol=1e-12)
    assert weighted.record_.objective == pytest.approx(repeated.record_.objective)


def test_weighted_quantile_cuts_follow_the_cumulative_weight():
    values = np.array([1.0, 2.0, 3.0, 4.0])
    # Unweighted, the quartiles fall after 1, 2 and 3; with 1 weighing 5 of 8, the first two fall on 1.
    assert TableEncoder(n_buckets=4).fit(pd.DataFrame({"x": values + 0.5}), kinds={"x": "continuous"}).labels == (
        "x ≤ 2", "x ≤ 3", "x ≤ 4")
    plan = TableEncoder(n_buckets=4).fit(pd.DataFrame({"x": values + 0.5}), kinds={"x": "continuous"},
                                         sample_weight=np.array([5.0, 1.0, 1.0, 1.0]))
    assert plan.labels == ("x ≤ 2", "x ≤ 3")
    zero = TableEncoder(n_buckets=4).fit(pd.DataFrame({"x": values + 0.5}), kinds={"x": "continuous"},
                                         sample_weight=np.array([0.0, 1.0, 1.0, 1.0]))
    assert zero.labels == TableEncoder(n_buckets=4).fit(pd.DataFrame({"x": values[1:] + 0.5}),
                                                        kinds={"x": "continuous"}).labels


def _leaf_shares(clf, X, y, weight) -> np.ndarray:
    """Independent truth: the weighted class shares of the training rows that reach each row's leaf."""
    leaves = clf.apply(X)
    out = np.zeros((len(X), len(clf.classes_)))
    for leaf in np.unique(leaves):
        here = leaves == leaf
        for k, label in enumerate(clf.classes_):
            out[here, k] = weight[here & (y == label)].sum() / weight[here].sum()
    return out


def _leaf_shares_of(tree: FittedTree, X, y) -> np.ndarray:
    leaves = tree.apply(X)
    return np.array([[np.mean(y[leaves == leaf] == label) for label in tree.classes] for leaf in leaves])


def test_predict_proba_is_the_weighted_class_share_of_the_leaf():
    X, y = _continuous()
    weight = np.random.default_rng(0).uniform(0.5, 3.0, len(X))
    clf = StrongTreeClassifier(depth=2, time_limit=20).fit(X, y, sample_weight=weight)
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba, _leaf_shares(clf, X, y, weight), rtol=0, atol=1e-12)
    assert np.array_equal(clf.classes_[proba.argmax(axis=1)], clf.predict(X))
    with np.errstate(divide="ignore"):
        assert np.array_equal(clf.predict_log_proba(X), np.log(proba))
    np.testing.assert_allclose(clf.decision_function(X), proba[:, 1] - 0.5)


def test_a_leaf_no_training_row_reaches_takes_the_shares_of_the_node_above():
    table = pd.DataFrame({"a": [0, 1]})
    plan = TableEncoder().fit(table)
    # A split on a, trained on rows that all have a = 0: the right leaf (node 3) holds none of them.
    training = pd.DataFrame({"a": [0, 0, 0, 0, 0]})
    y_index = np.array([0, 0, 1, 1, 1])
    structure = TreeStructure(1, np.array([0, LEAF, LEAF]), np.array([-1, 1, 0]))
    tree = FittedTree.from_training(structure, plan, ("n", "y"), "label", plan.transform(training), y_index,
                                    SolveRecord("optimal"), sample_weight=np.array([1.0, 1.0, 2.0, 1.0, 1.0]))
    assert tree.node_counts[2].sum() == 0
    shares = tree.predict_proba(pd.DataFrame({"a": [0, 1]}))
    np.testing.assert_allclose(shares, [[2 / 6, 4 / 6], [2 / 6, 4 / 6]])
    again = FittedTree.from_json(tree.to_json())
    assert again == tree and np.array_equal(again.node_weights, tree.node_weights)


def test_a_stored_tree_without_weights_reads_its_counts_as_weights():
    X, y = _continuous()
    tree = StrongTreeClassifier(depth=2, time_limit=20).fit(X, y).tree_
    assert tree.node_weights is None and "node_weights" not in tree.to_dict()
    np.testing.assert_allclose(tree.predict_proba(X), _leaf_shares_of(tree, X, y))


def test_probabilities_serve_roc_auc_and_log_loss_scoring():
    X, y = _continuous(n=120)
    auc = cross_val_score(StrongTreeClassifier(depth=2, time_limit=20), X, y, cv=3, scoring="roc_auc")
    loss = cross_val_score(StrongTreeClassifier(depth=2, time_limit=20), X, y, cv=3, scoring="neg_log_loss")
    assert np.all((0.5 < auc) & (auc <= 1)) and np.all(np.isfinite(loss) | (loss == -np.inf))
    clf = StrongTreeClassifier(depth=2, time_limit=20).fit(X, y)
    assert roc_auc_score(y, clf.decision_function(X)) == pytest.approx(roc_auc_score(y, clf.predict_proba(X)[:, 1]))
    assert log_loss(y, clf.predict_proba(X)) > 0


def test_decision_function_of_three_classes_has_one_column_per_class():
    X, y = _continuous()
    y3 = np.where(X["v"] > 1.5, "far", y)
    clf = StrongTreeClassifier(depth=2, time_limit=20).fit(X, y3)
    scores = clf.decision_function(X)
    assert scores.shape == (len(X), 3)
    np.testing.assert_allclose(scores, clf.predict_proba(X) - 1 / 3)


def test_depth_leaves_apply_and_decision_path_agree_with_the_tree():
    X, y = _continuous()
    clf = StrongTreeClassifier(depth=2, time_limit=20).fit(X, y)
    rules = clf.tree_.rules()
    assert clf.get_n_leaves() == len(rules) == len(np.unique(clf.apply(_grid(X))))
    assert clf.get_depth() == max(len(rule.conditions) for rule in rules) == 2
    indicator = clf.decision_path(X)
    assert indicator.shape == (len(X), 7)
    leaves = clf.apply(X)
    for i in range(len(X)):
        nodes = (np.flatnonzero(indicator[[i]].toarray()[0]) + 1).tolist()
        assert nodes == clf.tree_.decision_path(X.iloc[[i]])
        assert nodes[0] == 1 and nodes[-1] == leaves[i]
    stump = StrongTreeClassifier(depth=0, time_limit=5).fit(X, y)
    assert stump.get_depth() == 0 and stump.get_n_leaves() == 1
    assert stump.decision_path(X).toarray().tolist() == [[1]] * len(X)


def test_feature_names_only_for_data_frames():
    X, y = _continuous()
    clf = StrongTreeClassifier(depth=1, time_limit=5).fit(X.to_numpy(), y)
    assert not hasattr(clf, "feature_names_in_") and clf.n_features_in_ == 2
    clf.fit(X, y)
    assert clf.feature_names_in_.tolist() == ["u", "v"]
    clf.fit(X.to_numpy(), y)
    assert not hasattr(clf, "feature_names_in_")
    clf.fit(X.set_axis([0, 1], axis=1), y)  # names that are not text are not feature names
    assert not hasattr(clf, "feature_names_in_")


def test_columns_by_name_for_frames_and_by_position_for_arrays():
    X, y = _continuous()
    clf = StrongTreeClassifier(depth=2, time_limit=20).fit(X, y)
    assert np.array_equal(clf.predict(X[["v", "u"]].assign(extra=1)), clf.predict(X))
    with pytest.warns(UserWarning, match=est.NO_FEATURE_NAMES):
        assert np.array_equal(clf.predict(X.to_numpy()), clf.predict(X))
    on_array = StrongTreeClassifier(depth=2, time_limit=20).fit(X.to_numpy(), y)
    assert np.array_equal(on_array.predict(X.set_axis(["p", "q"], axis=1)), clf.predict(X))
    with pytest.raises(StrongTreeError) as info:
        on_array.predict(X.to_numpy()[:, :1])
    assert str(info.value) == est.N_FEATURES.format(n=1, expected=2)


def _message(call) -> str:
    with pytest.raises(ValueError) as info:
        call()
    assert isinstance(info.value, StrongTreeError)
    return str(info.value)


def test_input_scikit_learn_refuses_gets_a_message_naming_it():
    X, y = _continuous()
    clf = StrongTreeClassifier(depth=1, time_limit=5)
    assert _message(lambda: clf.fit(X, None)) == est.Y_NONE
    assert _message(lambda: clf.fit(sparse.csr_matrix(X.to_numpy()), y)) == est.SPARSE_X.format(kind="csr_matrix")
    assert _message(lambda: clf.fit(X.to_numpy() + 1j, y)) == training.COMPLEX_X.format(what="X", example=complex(X.iloc[0, 0], 1))
    assert _message(lambda: clf.fit(X["u"].to_numpy(), y)) == est.X_NOT_2D.format(shape=(60,))
    assert _message(lambda: clf.fit(np.empty((12, 0)), y[:12])) == est.NO_COLUMNS.format(n=12)
    fitted = StrongTreeClassifier(depth=1, time_limit=5).fit(X, y)
    assert _message(lambda: fitted.predict(X.to_numpy()[0])) == est.X_NOT_2D.format(shape=(2,))
    with pytest.raises(NotFittedError):
        StrongTreeClassifier().predict_proba(X)


def test_a_continuous_target_is_refused_and_integer_codes_are_classes():
    X, _ = _continuous()
    y = X["u"].to_numpy() * 10 + 0.5
    message = _message(lambda: StrongTreeClassifier(depth=1, time_limit=5).fit(X, y))
    distinct = np.unique(y)
    assert message == training.CONTINUOUS_TARGET.format(n=distinct.size, examples=", ".join(repr(float(v)) for v in distinct[:3]))
    codes = (X["u"] > 0).astype(float) + (X["v"] > 1).astype(float)  # 0.0, 1.0, 2.0: classes
    clf = StrongTreeClassifier(depth=2, time_limit=20).fit(X, codes)
    assert clf.classes_.tolist() == [0.0, 1.0, 2.0]


def test_a_column_vector_y_warns_as_scikit_learn_does_and_fits_the_same():
    X, y = _continuous()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        column = StrongTreeClassifier(depth=2, time_limit=20).fit(X, y.reshape(-1, 1))
    conversions = [w for w in caught if issubclass(w.category, DataConversionWarning)]
    assert len(conversions) == 1 and str(conversions[0].message).startswith("A column-vector y was passed")
    assert np.array_equal(column.predict(X), StrongTreeClassifier(depth=2, time_limit=20).fit(X, y).predict(X))
