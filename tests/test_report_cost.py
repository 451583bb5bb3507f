"""The models a tree is compared with (CART, a logistic regression, the majority class) and
the cost of fairness and of readability, each one number, recomputed from predictions."""

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeClassifier

from strongtree_core import StrongTreeClassifier
from strongtree_core.report.cost import cost_of_fairness, points
from strongtree_core.report.references import (
    CART_NAME,
    LOGISTIC_NAME,
    MAJORITY_NAME,
    cart_reference,
    logistic_reference,
    majority_reference,
    references,
)
from strongtree_studio.data.choices import ModelConfig, Roles, SplitConfig, split_table
from strongtree_studio.data.demo_tables import make_hiring
from strongtree_studio.data.evaluation import evaluate

ROLES = Roles("hired", "yes", ("gender",), ("education",))


@pytest.fixture(scope="module")
def solved():
    frame = make_hiring(800, seed=5)
    tables = split_table(frame, ROLES, SplitConfig(test_size=0.25, seed=0))
    X = tables.train.drop(columns=["hired"])
    fair = StrongTreeClassifier(depth=2, time_limit=60, fairness="statistical_parity", fairness_bound=0.02).fit(
        X, tables.train["hired"], sensitive_features="gender").tree_
    free = StrongTreeClassifier(depth=2, time_limit=60).fit(X.drop(columns=["gender"]), tables.train["hired"]).tree_
    return fair, free, tables


def accuracy(predicted, frame):
    return float(np.mean(np.asarray(predicted) == frame["hired"].to_numpy()))


def test_the_references_predict_as_their_models_do(solved):
    fair, _, tables = solved
    parts = {"train": tables.train, "test": tables.test}
    cart = cart_reference(fair, parts, "hired")
    columns = list(fair.feature_names)
    sk = DecisionTreeClassifier(max_depth=2, random_state=0).fit(
        fair.encoding.transform(tables.train[columns]), tables.train["hired"])
    assert (cart.predictions["test"] == sk.predict(fair.encoding.transform(tables.test[columns]))).all()
    assert cart.leaves == sk.get_n_leaves() and cart.name == CART_NAME
    majority = majority_reference(parts, "hired")
    most = tables.train["hired"].value_counts().idxmax()
    assert set(majority.predictions["test"]) == {most} and len(majority.predictions["test"]) == len(tables.test)
    assert majority.leaves == 1 and majority.name == MAJORITY_NAME
    logistic = logistic_reference(fair, parts, "hired")
    assert logistic.name == LOGISTIC_NAME and logistic.leaves is None
    # A linear model on these columns beats always saying the majority class on the training rows.
    assert accuracy(logistic.predictions["train"], tables.train) > accuracy(majority.predictions["train"], tables.train)
    assert [r.name for r in references(fair, parts, "hired")] == [CART_NAME, LOGISTIC_NAME, MAJORITY_NAME]


def test_logistic_regression_takes_missing_values_text_and_unseen_values():
    rng = np.random.default_rng(0)
    n = 300
    train = pd.DataFrame({"x": rng.normal(size=n), "c": rng.choice(["a", "b", None], n), "y": rng.integers(0, 2, n)})
    train.loc[::7, "x"] = np.nan
    test = pd.DataFrame({"x": [np.nan, 0.5], "c": ["zzz", None], "y": [0, 1]})
    tree = StrongTreeClassifier(depth=1, time_limit=10).fit(train[["x", "c"]], train["y"]).tree_
    ref = logistic_reference(tree, {"train": train, "test": test}, "y")
    assert len(ref.predictions["test"]) == 2 and set(ref.predictions["train"]) <= {0, 1}


def test_the_dashboard_compares_five_models_recomputed_from_predictions(solved):
    fair, free, tables = solved
    model = ModelConfig(depth=2, fairness=("statistical_parity",), fairness_bound=0.02)
    result = evaluate(fair, tables, ROLES, model, baseline=free)
    rows = {r["model"]: r for r in result["comparison"]}
    assert list(rows) == ["StrongTree", "StrongTree without fairness constraints", CART_NAME, LOGISTIC_NAME,
                          MAJORITY_NAME]
    parts = {"train": tables.train, "test": tables.test}
    refs = {r.name: r for r in references(fair, parts, "hired", 2)}
    for split, frame in parts.items():
        assert rows["StrongTree"][f"{split}_accuracy"] == pytest.approx(accuracy(fair.predict(frame), frame))
        assert rows["StrongTree without fairness constraints"][f"{split}_accuracy"] == pytest.approx(
            accuracy(free.predict(frame), frame))
        for name in (CART_NAME, LOGISTIC_NAME, MAJORITY_NAME):
            assert rows[name][f"{split}_accuracy"] == pytest.approx(accuracy(refs[name].predictions[split], frame))
    assert rows[MAJORITY_NAME]["train_statistical_parity"] == 0  # the same prediction for everyone
    assert rows[LOGISTIC_NAME]["status"] == "reference"

    cost = cost_of_fairness(result["comparison"], "statistical_parity", "Statistical parity", True)
    assert cost.split == "test"
    this = accuracy(fair.predict(tables.test), tables.test)
    free_acc = accuracy(free.predict(tables.test), tables.test)
    logistic = accuracy(refs[LOGISTIC_NAME].predictions["test"], tables.test)
    assert cost.fairness == pytest.approx(free_acc - this)
    assert cost.readability == pytest.approx(logistic - free_acc)
    headline = cost.headline()
    assert headline.startswith("On the test rows, fairness costs ")
    assert f"{abs(100 * (free_acc - this)):.1f} point" in headline
    assert f"{abs(100 * (logistic - free_acc)):.1f} point" in headline


def row(model, train, test=None, gap=None):
    out = {"model": model, "train_accuracy": train}
    if test is not None:
        out["test_accuracy"] = test
    if gap is not None:
        out["train_statistical_parity"] = gap
        out["test_statistical_parity"] = gap
    return out


def test_costs_read_as_one_number_each_way_round():
    rows = [row("StrongTree", 0.80, 0.78, 0.01), row("StrongTree without fairness constraints", 0.83, 0.80, 0.12),
            row(LOGISTIC_NAME, 0.85, 0.813), row(MAJORITY_NAME, 0.6, 0.6), row(CART_NAME, 0.79, 0.77)]
    cost = cost_of_fairness(rows, "statistical_parity", "Statistical parity", True)
    assert cost.headline() == ("On the test rows, fairness costs 2.0 points of accuracy against the tree without "
                               "the constraint; readability costs 1.3 points against logistic regression.")
    assert "The constraint brings the statistical parity gap from 12.0 pp to 1.0 pp on the test rows." in cost.sentences()
    assert cost.sentences()[-1] == ("Predicting the majority class for every row is right 60.0% of the time: this "
                                   "tree adds 18.0 points.")
    gain = cost_of_fairness([row("StrongTree", 0.9), row("StrongTree without fairness constraints", 0.899),
                             row(LOGISTIC_NAME, 0.88)], "statistical_parity", "Statistical parity", True)
    assert gain.split == "train"
    assert gain.headline() == ("On the training rows, fairness costs nothing: the fair tree is 0.1 points more "
                               "accurate than the tree without the constraint; readability costs nothing: the "
                               "tree without the constraint is 1.9 points more accurate than logistic regression.")
    free = cost_of_fairness([row("StrongTree", 0.8, 0.79), row(LOGISTIC_NAME, 0.8, 0.8)], None, None, False)
    assert free.fairness is None
    assert free.headline() == "On the test rows, readability costs 1.0 point against logistic regression."
    assert cost_of_fairness([row(LOGISTIC_NAME, 0.8)], None, None, False) is None
    assert points(0.021) == "2.1 points" and points(-0.01) == "1.0 point"
