"""StrongTreeClassifier: the scikit-learn contract, messages, and the fair
trees the product promises, measured on their own predictions."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer

from strongtree_core import StrongTreeClassifier, StrongTreeError
from strongtree_core.estimator import classifier as est
from strongtree_core.estimator import training
from strongtree_core.metrics import statistical_parity_difference

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


def _mixed(n=160, seed=0):
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 70, n).astype(float)
    age[rng.random(n) < 0.05] = np.nan
    group = rng.choice(["A", "B", "C"], n)
    score = rng.integers(0, 5, n)
    y = np.where((score >= 3) | ((age < 30) & (group == "A")), "hire", "reject")
    flip = rng.random(n) < 0.1
    y = np.where(flip, np.where(y == "hire", "reject", "hire"), y)
    return pd.DataFrame({"age": age, "group": group, "score": score}), pd.Series(y, name="decision")


def test_sklearn_contract_clone_params_cv_pipeline():
    X, y = _mixed()
    clf = StrongTreeClassifier(depth=2, time_limit=20)
    assert clone(clf).get_params() == clf.get_params()
    assert clf.set_params(depth=1).depth == 1
    scores = cross_val_score(StrongTreeClassifier(depth=1, time_limit=20), X, y, cv=3)
    assert scores.shape == (3,) and np.all((0 <= scores) & (scores <= 1))
    pipe = Pipeline([("id", FunctionTransformer(lambda d: d)), ("tree", StrongTreeClassifier(depth=1, time_limit=20))])
    pipe.fit(X, y)
    assert set(pipe.predict(X)) <= {"hire", "reject"}


def test_refit_starts_from_scratch_and_columns_match_by_name():
    X, y = _mixed()
    clf = StrongTreeClassifier(depth=2, time_limit=20).fit(X, y)
    first = clf.tree_.to_json()
    X2, y2 = _mixed(seed=5)
    clf.fit(X2, y2)
    assert clf.tree_.to_json() != first
    shuffled = X2[["score", "group", "age"]]
    assert np.array_equal(clf.predict(shuffled), clf.predict(X2))
    # The training accuracy reported is the one measured on predictions.
    correct = (clf.predict(X2) == y2.to_numpy()).sum()
    assert clf.record_.objective == pytest.approx(correct)


@pytest.mark.parametrize("formulation", ["flow", "benders"])
def test_forced_mio_matches_the_exact_search(formulation):
    X, y = _mixed(n=80, seed=2)
    auto = StrongTreeClassifier(depth=2, time_limit=60).fit(X, y)
    mio = StrongTreeClassifier(depth=2, formulation=formulation, time_limit=60).fit(X, y)
    assert mio.record_.method == formulation
    assert mio.record_.status == "optimal" and mio.record_.certified
    assert auto.record_.certified
    assert mio.record_.objective == pytest.approx(auto.record_.objective)


@pytest.mark.parametrize(
    "params,message",
    [
        (dict(depth=-1), est.BAD_PARAMETER.format(name="depth", allowed="an int in the range [0, 8]", value=-1)),
        (dict(formulation="magic"),
         est.BAD_PARAMETER.format(name="formulation", allowed="a str among {'auto', 'flow', 'benders', 'oct', 'binoct', 'local_search'}", value="magic")),
        (dict(regularization=1.0),
         est.BAD_PARAMETER.format(name="regularization", allowed="a float in the range [0.0, 1.0)", value=1.0)),
        (dict(fairness=("statistical_parity", "parity")),
         est.BAD_FAIRNESS.format(allowed="{" + ", ".join(map(repr, est.FAIRNESS)) + "}",
                                 value=("statistical_parity", "parity"), item="parity")),
        (dict(pos_label="maybe"), est.BAD_POSITIVE.format(value="maybe", classes=["hire", "reject"])),
        (dict(fairness="statistical_parity"), training.NEEDS_SENSITIVE.format(fairness="statistical_parity")),
    ],
)
def test_bad_parameters_say_what_is_wrong(params, message):
    X, y = _mixed(n=40)
    with pytest.raises(StrongTreeError) as info:
        StrongTreeClassifier(**params).fit(X, y)
    assert str(info.value) == message


def test_bad_columns_and_lengths():
    X, y = _mixed(n=40)
    with pytest.raises(StrongTreeError, match="not found among the columns"):
        StrongTreeClassifier(fairness="statistical_parity").fit(X, y, sensitive_features="race")
    with pytest.raises(StrongTreeError) as info:
        StrongTreeClassifier().fit(X, y[:10])
    assert str(info.value) == training.LENGTH_MISMATCH.format(n_x=40, name="y", n_other=10)


def test_infeasible_constraints_name_the_constraint_and_a_relaxation():
    X, y = _mixed(n=40)
    with pytest.raises(StrongTreeError) as info:
        StrongTreeClassifier(depth=2, min_leaf=100, time_limit=20).fit(X, y)
    assert "min leaf 100" in str(info.value) and "lower the minimum leaf size" in str(info.value)


def test_protected_column_is_never_split_on_unless_allowed():
    X, y = _mixed(n=120, seed=3)
    clf = StrongTreeClassifier(depth=2, fairness="statistical_parity", fairness_bound=0.2, pos_label="hire", time_limit=30)
    clf.fit(X, y, sensitive_features="group")
    assert all(f.source != "group" for f in clf.tree_.encoding.features)
    allowed = clone(clf).set_params(allow_protected_splits=True).fit(X, y, sensitive_features="group")
    assert any(f.source == "group" for f in allowed.tree_.encoding.features)
    assert "protected" in allowed.record_.message


@pytest.mark.timing
def test_progress_reports_a_first_tree_and_stop_keeps_the_best():
    rng = np.random.default_rng(7)
    X = pd.DataFrame(rng.integers(0, 2, (300, 14)), columns=[f"f{j}" for j in range(14)])
    y = pd.Series(rng.integers(0, 2, 300))
    events = []
    stop = threading.Event()
    threading.Timer(2.0, stop.set).start()
    t0 = time.perf_counter()
    clf = StrongTreeClassifier(depth=3, formulation="flow", solver="highs", time_limit=60)
    clf.fit(X, y, progress=events.append, stop=stop)
    assert events and events[0].tree is not None  # the warm start comes first
    assert time.perf_counter() - t0 < 2.0 + 4.0  # Stop answered within seconds
    assert clf.record_.status in ("interrupted", "optimal")
    assert (clf.predict(X) == y).sum() >= clf.record_.objective - 1e-6


@pytest.mark.skipif(not (DATA / "fairness").exists(), reason="shared fairness datasets not found")
@pytest.mark.parametrize("file,protected", [
    ("compas_binrace_enc.csv", ["race.1"]),
    ("compas_enc.csv", ["race.1", "race.2", "race.3", "race.4"]),
])
def test_compas_statistical_parity_gap_within_delta(file, protected):
    df = pd.read_csv(DATA / "fairness" / "compas" / file)
    y = df.pop("target")
    clf = StrongTreeClassifier(depth=2, fairness="statistical_parity", fairness_bound=0.05, pos_label=1, time_limit=20)
    clf.fit(df, y, sensitive_features=protected)
    pred = clf.predict(df)
    groups = df[protected].astype(str).agg("|".join, axis=1)
    gap = statistical_parity_difference(y, pred, sensitive_features=groups, pos_label=1)
    assert gap <= 0.05 + 1e-12
    assert clf.constraint_checks_[0]["measured"] == pytest.approx(gap)
    assert clf.record_.status in ("optimal", "time_limit", "interrupted")
    assert clf.record_.gap is not None and clf.record_.runtime > 0
    # Better than predicting one class for everybody (which has gap 0).
    majority = y.value_counts().max()
    assert (pred == y).sum() >= majority


def _alternating_groups(seed=1):
    """Twelve ages (20 rows each); odd ages mostly have a = 1, and y follows a.

    Over the twelve ages the tree "a" favours odd ages by about 0.9; over the
    six two-age bands below every band holds one odd and one even age, so the
    same tree is nearly fair across bands.
    """
    rng = np.random.default_rng(seed)
    p = np.repeat(np.arange(12), 20)
    a = np.where(rng.random(p.size) < 0.9, p % 2, 1 - p % 2)
    X = pd.DataFrame({"a": a, "b": rng.integers(0, 3, p.size)})
    y = pd.Series(np.where(a == 1, "yes", "no"))
    age = pd.Series(20 + 5 * p, name="age")
    bands = pd.cut(age, bins=[0, 27.5, 37.5, 47.5, 57.5, 67.5, 80])
    return X, y, age, bands


def test_every_value_of_a_numeric_protected_column_is_a_group():
    X, y, age, _ = _alternating_groups()
    free = StrongTreeClassifier(depth=1, time_limit=5).fit(X, y)
    assert statistical_parity_difference(y, free.predict(X), sensitive_features=age, pos_label="yes") > 0.9
    clf = StrongTreeClassifier(depth=1, fairness="statistical_parity", fairness_bound=0.2, pos_label="yes", time_limit=5)
    clf.fit(X, y, sensitive_features=age)
    measured = statistical_parity_difference(y, clf.predict(X), sensitive_features=age, pos_label="yes")
    assert measured <= 0.2
    assert clf.constraint_checks_[0]["measured"] == pytest.approx(measured)
    assert clf.tree_.to_text() != free.tree_.to_text()


def test_explicit_buckets_are_the_groups_enforced_and_measured():
    X, y, age, bands = _alternating_groups()
    clf = StrongTreeClassifier(depth=1, fairness="statistical_parity", fairness_bound=0.2, pos_label="yes", time_limit=5)
    clf.fit(X, y, sensitive_features=bands)
    pred = clf.predict(X)
    on_bands = statistical_parity_difference(y, pred, sensitive_features=bands, pos_label="yes")
    assert clf.constraint_checks_[0]["measured"] == pytest.approx(on_bands) and on_bands <= 0.2
    # The bands, not the ages, are the groups: the best tree uses "a", unfair across single ages.
    assert clf.tree_.to_text().startswith("IF a THEN yes")
    assert statistical_parity_difference(y, pred, sensitive_features=age, pos_label="yes") > 0.9


def test_conditional_parity_measures_every_level_of_the_legitimate_factor():
    from strongtree_core.metrics import conditional_statistical_parity_difference

    X, y, age, _ = _alternating_groups()
    sex = pd.Series(np.where(np.arange(len(X)) % 3 == 0, "f", "m"), name="sex")
    clf = StrongTreeClassifier(depth=1, fairness="conditional_statistical_parity", fairness_bound=0.2,
                               pos_label="yes", time_limit=5)
    clf.fit(X, y, sensitive_features=sex, legitimate_features=age)
    measured = conditional_statistical_parity_difference(
        y, clf.predict(X), sensitive_features=sex, legitimate_features=age, pos_label="yes"
    )
    assert clf.constraint_checks_[0]["measured"] == pytest.approx(measured) and measured <= 0.2
