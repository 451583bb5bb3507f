"""Thresholds of continuous columns chosen from the data (strongtree_core.encoding.thresholds,
encoding.reference) and what they promise: the best tree over every cut is the best tree over
every real threshold, and the tree found is never worse than CART's on the training rows."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.tree import DecisionTreeClassifier

from strongtree_core import StrongTreeClassifier
from strongtree_core.encoding import EncodingError, EncodingPlan, TableEncoder
from strongtree_core.encoding import errors
from strongtree_core.encoding.thresholds import boundary_gaps, choose_gaps, spread_gaps, value_classes


def brute_force_correct(X: np.ndarray, y: np.ndarray, depth: int) -> int:
    """Most training rows any tree of depth <= ``depth`` (0, 1 or 2) classifies correctly, over
    every threshold of every column: a threshold between two neighbouring distinct values is one
    split, so the midpoints are all of them.  Written from the definition, on the raw values."""
    splits = [(c, t) for c in range(X.shape[1]) for t in _midpoints(X[:, c])]

    def leaf(rows: np.ndarray) -> int:
        return int(np.bincount(y[rows]).max()) if rows.any() else 0

    def best(rows: np.ndarray, d: int) -> int:
        value = leaf(rows)
        if d == 0:
            return value
        for c, t in splits:
            low = rows & (X[:, c] <= t)
            value = max(value, best(low, d - 1) + best(rows & ~low, d - 1))
        return value

    return best(np.ones(len(y), dtype=bool), depth)


def _midpoints(values: np.ndarray) -> np.ndarray:
    u = np.unique(values)
    return (u[:-1] + u[1:]) / 2


def _correct(model, X, y) -> int:
    return int((model.predict(X) == y).sum())


small_tables = st.integers(4, 11).flatmap(lambda n: st.tuples(
    st.lists(st.lists(st.sampled_from([-2.0, -1.0, -0.5, 0.0, 0.25, 1.0, 3.0]), min_size=2, max_size=2),
             min_size=n, max_size=n),
    st.lists(st.integers(0, 1), min_size=n, max_size=n),
))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table=small_tables, depth=st.integers(1, 2))
def test_every_cut_gives_the_best_tree_over_every_threshold(table, depth):
    rows, labels = table
    X, y = np.array(rows), np.array(labels)
    if np.unique(y).size < 2:
        y[0] = 1 - y[0]
    frame = pd.DataFrame(X, columns=["a", "b"]).astype(float)
    model = StrongTreeClassifier(depth=depth, max_thresholds=len(y)).fit(frame, y)
    assert model.record_.certified
    assert _correct(model, frame, y) == brute_force_correct(X, y, depth)


def test_a_root_split_may_need_a_cut_that_is_not_a_boundary_point():
    # Found by search: at depth 2 the best tree splits between two values of one class; over the
    # boundary points alone the best tree gets 13 rows, so every gap is kept when the budget allows.
    X = np.array([[4, 5], [4, 0], [0, 5], [4, 4], [4, 2], [3, 1], [4, 1], [2, 5], [1, 2], [4, 3], [0, 5], [0, 5],
                  [4, 4], [0, 3]], dtype=float) + 0.5  # not whole numbers: continuous, not ordinal
    y = np.array([0, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1])
    assert brute_force_correct(X, y, 2) == 14
    frame = pd.DataFrame(X, columns=["a", "b"])
    plan = TableEncoder(max_thresholds=16).fit(frame, target=y)
    assert [len(c.cuts) for c in plan.columns] == [4, 5]  # every gap, not only the 3 + 4 boundary points
    assert _correct(StrongTreeClassifier(depth=2, max_thresholds=16).fit(frame, y), frame, y) == 14


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), depth=st.integers(1, 3), budget=st.integers(1, 3))
def test_the_tree_is_never_worse_than_cart_on_the_training_rows(seed, depth, budget):
    rng = np.random.default_rng(seed)
    n = 60
    X = pd.DataFrame(np.round(rng.normal(size=(n, 3)), 2), columns=["a", "b", "c"])
    X.loc[rng.random(n) < 0.1, "b"] = np.nan
    X["kind"] = rng.choice(["p", "q", "r"], n)
    y = ((X["a"] + rng.normal(0, 0.7, n) > 0) ^ (X["c"] > 0.5)).astype(int).to_numpy()
    model = StrongTreeClassifier(depth=depth, max_thresholds=budget, time_limit=5).fit(X, y)
    raw = pd.get_dummies(X.fillna({"b": 1e9}), columns=["kind"]).astype(float)
    cart = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(raw, y)
    assert _correct(model, X, y) >= _correct(cart, raw, y)


def test_never_worse_than_cart_even_when_the_search_is_cut_short():
    rng = np.random.default_rng(3)
    n = 3000
    X = pd.DataFrame(rng.normal(size=(n, 6)), columns=list("abcdef"))
    y = ((X.a > 0.2) ^ (X.b < -0.3) | (X.c + X.d > 1.2)).astype(int).to_numpy()
    y = np.where(rng.random(n) < 0.1, 1 - y, y)
    model = StrongTreeClassifier(depth=4, max_thresholds=64, time_limit=0.5).fit(X, y)
    cart = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y)
    assert _correct(model, X, y) >= _correct(cart, X, y)


def test_cart_tree_on_the_plan_predicts_as_cart_on_the_raw_columns():
    rng = np.random.default_rng(0)
    n = 500
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    X.loc[::5, "b"] = np.nan
    X["kind"] = rng.choice(["x", "y"], n)
    y = ((X.a > 0.1) & (X.b.fillna(5) > -0.2) | (X.kind == "y") & (X.c < 0)).astype(int)
    plan, tree = TableEncoder(max_thresholds=2).fit_with_reference(X, target=y, reference_depth=3)
    raw = X.fillna({"b": 1e9}).assign(kind=(X.kind == "y").astype(float))
    cart = DecisionTreeClassifier(max_depth=3, random_state=0).fit(raw, y)
    np.testing.assert_array_equal(tree.predict(plan.transform(X)), cart.predict(raw))
    # CART's cuts are kept beyond the budget of 2 per column
    used = [t for t, f in zip(cart.tree_.threshold, cart.tree_.feature) if f == 0]
    column_a = plan.columns[0]
    assert len(column_a.cuts) >= len(used)


def test_cart_rows_fit_their_share_of_the_time_and_never_go_below_the_floor():
    from strongtree_core.encoding.reference import MIN_REFERENCE_ROWS, cart_seconds, reference_rows

    levels = [1_000_000] * 8  # eight columns of distinct values
    assert reference_rows(1_000_000, levels, 4, None) == 1_000_000  # no limit: every row
    assert reference_rows(1_000_000, levels, 4, 100.0) == 1_000_000  # it fits: every row
    assert reference_rows(5_000, levels, 4, 0.0) == 5_000  # a small table always whole
    assert reference_rows(1_000_000, levels, 4, 0.0) == MIN_REFERENCE_ROWS  # no time left: the floor
    previous = MIN_REFERENCE_ROWS
    for seconds in (0.2, 0.5, 1.0, 3.0, 5.0):
        rows = reference_rows(1_000_000, levels, 4, seconds)
        assert previous <= rows < 1_000_000
        assert rows % MIN_REFERENCE_ROWS == 0 and (rows // MIN_REFERENCE_ROWS).bit_count() == 1  # a doubling
        assert cart_seconds(rows, levels, 4) <= seconds
        assert 2 * rows >= 1_000_000 or cart_seconds(2 * rows, levels, 4) > seconds  # the largest that fits
        previous = rows
    assert reference_rows(1_000_000, levels, 4, 1.0) == reference_rows(1_000_000, levels, 4, 1.1)  # a little more time
    # 0/1 columns sort fast: twenty of them cost less than eight columns of distinct values
    assert cart_seconds(1_000_000, [2] * 20, 4) < cart_seconds(1_000_000, levels, 4) / 2


def test_cart_on_a_sample_is_cart_of_those_rows_and_its_cuts_are_gaps_of_the_whole_column():
    """With no time left, CART is grown on the documented sample: its tree on the plan predicts the
    sample's rows as scikit-learn's CART fitted on their raw values (a row outside the sample whose value
    falls between two neighbouring values of the sample may go either way: the cut is in the same gap
    of the sample, not at its midpoint), and its cuts are kept."""
    import time

    from strongtree_core.encoding.reference import MIN_REFERENCE_ROWS, reference_sample

    rng = np.random.default_rng(5)
    n = MIN_REFERENCE_ROWS + 7_000
    X = pd.DataFrame(rng.integers(0, 40_000, size=(n, 3)) / 4.0, columns=["a", "b", "c"])  # exact in float32
    X["kind"] = rng.choice(["x", "y"], n)
    y = (((X.a > 5_000) & (X.b < 3_000)) | ((X.kind == "y") & (X.c < 6_000))).astype(int).to_numpy()
    y = np.where(rng.random(n) < 0.1, 1 - y, y)
    plan, X_binary, tree, rows = TableEncoder(max_thresholds=2).fit_transform_with_reference(
        X, target=y, reference_depth=3, deadline=time.perf_counter())
    assert rows == MIN_REFERENCE_ROWS
    pick = reference_sample(n, rows)
    assert pick.size == rows and np.unique(pick).size == rows
    raw = X.assign(kind=(X.kind == "y").astype(float))
    cart = DecisionTreeClassifier(max_depth=3, random_state=0).fit(raw.iloc[pick], y[pick])
    np.testing.assert_array_equal(tree.predict(X_binary[pick]), cart.predict(raw.iloc[pick]))
    assert (tree.predict(X_binary) == cart.predict(raw)).mean() > 0.99  # the other rows: nearly all the same
    whole = DecisionTreeClassifier(max_depth=3, random_state=0).fit(raw, y)
    assert not np.array_equal(cart.tree_.threshold, whole.tree_.threshold)  # a sample's CART, not the table's
    # Without a deadline, the same table grows CART on every row.
    *_, rows = TableEncoder(max_thresholds=2).fit_transform_with_reference(X, target=y, reference_depth=3)
    assert rows == n


def test_a_fit_whose_cart_was_sampled_says_so(monkeypatch):
    from strongtree_core.encoding import reference

    monkeypatch.setattr(reference, "CART_SECONDS", 1.0)  # CART priced far beyond any limit: always a sample
    rng = np.random.default_rng(6)
    n = reference.MIN_REFERENCE_ROWS + 500
    X = pd.DataFrame(rng.normal(size=(n, 2)), columns=["a", "b"])
    y = (X.a + 0.3 * rng.normal(size=n) > 0).astype(int)
    model = StrongTreeClassifier(depth=2, time_limit=10).fit(X, y)
    assert (f"CART (a start for the search, and the source of some thresholds) was grown on "
            f"{reference.MIN_REFERENCE_ROWS:,} of the {n:,} training rows, so that the time limit holds") \
        in model.record_.message
    monkeypatch.undo()
    assert "CART" not in StrongTreeClassifier(depth=2, time_limit=10).fit(X, y).record_.message


def test_boundary_points_skip_runs_of_one_class():
    values = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    y = np.array([0, 0, 0, 1, 1, 0])
    _, per_class, _ = value_classes(values, y, None, 2)
    np.testing.assert_array_equal(boundary_gaps(per_class), [False, False, True, False, True])
    # a value holding both classes makes both of its gaps boundaries
    _, per_class, _ = value_classes(np.array([1.0, 2.0, 2.0, 3.0]), np.array([0, 0, 1, 1]), None, 2)
    np.testing.assert_array_equal(boundary_gaps(per_class), [True, True])


def test_all_gaps_within_the_budget_boundaries_and_cart_beyond_it():
    per_class = np.array([[3, 0], [2, 0], [0, 1], [0, 4], [1, 1], [5, 0]], dtype=float)
    np.testing.assert_array_equal(choose_gaps(per_class, 5), [0, 1, 2, 3, 4])
    np.testing.assert_array_equal(choose_gaps(per_class, 3), [1, 3, 4])  # gaps 0 and 2 join one class
    np.testing.assert_array_equal(choose_gaps(per_class, 3, required=np.array([0, 2])), [0, 2, 3])
    np.testing.assert_array_equal(choose_gaps(per_class, 1, required=np.array([0, 2])), [0, 2])  # CART's beyond it


@settings(deadline=None)
@given(n_candidates=st.integers(1, 60), weights=st.lists(st.floats(0.1, 10), min_size=61, max_size=61))
def test_more_thresholds_never_lose_a_cut(n_candidates, weights):
    candidates = np.sort(np.random.default_rng(n_candidates).choice(60, n_candidates, replace=False))
    cumulative = np.cumsum(weights)[:60]
    before: set = set()
    for n in range(1, n_candidates + 2):
        now = set(spread_gaps(candidates, cumulative, n).tolist())
        assert before <= now and len(now) == min(n, n_candidates)
        before = now


def test_repeated_values_give_one_cut_per_gap_and_the_plan_round_trips():
    X = pd.DataFrame({"a": [1.0, 1.0, 2.0, 2.0, 3.0, np.nan, 7.5], "b": list("xyxyxyx")})
    y = [0, 1, 0, 0, 1, 1, 0]
    plan = TableEncoder(max_thresholds=10).fit(X, target=y)
    assert plan.labels[:4] == ("a ≤ 1.5", "a ≤ 2.5", "a ≤ 5", "a missing")
    assert plan.n_buckets is None and plan.max_thresholds == 10
    assert EncodingPlan.from_dict(plan.to_dict()) == plan
    assert TableEncoder().fit(X).n_buckets == 5  # the quantile rule stays the encoder's default


@pytest.mark.parametrize("make, message", [
    (lambda: TableEncoder(max_thresholds=0), errors.BAD_MAX_THRESHOLDS.format(value=0)),
    (lambda: TableEncoder(n_buckets=4, max_thresholds=8),
     errors.BUCKETS_AND_THRESHOLDS.format(n_buckets=4, max_thresholds=8)),
    (lambda: TableEncoder(continuous="onehot_buckets", max_thresholds=8),
     errors.ONEHOT_NEEDS_BUCKETS.format(max_thresholds=8)),
])
def test_contradictory_threshold_rules_are_refused(make, message):
    with pytest.raises(EncodingError) as err:
        make()
    assert str(err.value) == message


def test_the_estimator_keeps_the_quantile_rule_reachable():
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(200, 2)), columns=["a", "b"])
    y = (X.a > 0.3).astype(int)
    by_quantile = StrongTreeClassifier(depth=1, n_buckets=4).fit(X, y)
    assert by_quantile.encoding_.n_buckets == 4 and len(by_quantile.encoding_.columns[0].cuts) == 3
    one_hot = StrongTreeClassifier(depth=1, encoding="onehot_buckets").fit(X, y)
    assert one_hot.encoding_.n_buckets == 5
    default = StrongTreeClassifier(depth=1).fit(X, y)
    assert default.encoding_.max_thresholds == 16 and default.encoding_.n_buckets is None
    assert _correct(default, X, y) == 200  # the exact cut 0.3 is among the data's
    for a, b in itertools.pairwise(default.encoding_.columns[0].cuts):
        assert a < b


def test_threads_read_the_columns_of_a_long_table_into_the_same_plan():
    """``n_jobs`` threads read the continuous columns of a long table: the same plan, the same
    binary matrix and the same CART start as one thread, and the same message for a bad column."""
    from strongtree_core.encoding.binarize import THREADED_ROWS

    rng = np.random.default_rng(8)
    n = THREADED_ROWS + 1_000
    X = pd.DataFrame(rng.normal(size=(n, 5)), columns=list("abcde"))
    X.loc[::7, "b"] = np.nan
    X.loc[::11, "c"] = np.inf
    X["d"] = rng.integers(0, 3_000, n)  # many levels: continuous
    X["kind"] = rng.choice(["x", "y", "z"], n)
    y = ((X.a > 0.1) & (X.b.fillna(0) < 0.5) | (X.kind == "z")).astype(int).to_numpy()
    weight = rng.integers(0, 3, n).astype(float)
    one = TableEncoder(max_thresholds=8).fit_transform_with_reference(X, sample_weight=weight, target=y,
                                                                    reference_depth=3)
    three = TableEncoder(max_thresholds=8).fit_transform_with_reference(X, sample_weight=weight, target=y,
                                                                      reference_depth=3, n_jobs=3)
    assert one[0] == three[0] and one[3] == three[3] == np.count_nonzero(weight)  # CART on every row that counts
    np.testing.assert_array_equal(one[1], three[1])
    np.testing.assert_array_equal(one[2].feature, three[2].feature)
    np.testing.assert_array_equal(one[2].prediction, three[2].prediction)
    assert sum(len(c.cuts) for c in one[0].columns if c.kind == "continuous") >= 5 * 8  # cuts to compare
    bad = X.assign(c=X.c.astype(object), e=X.e.astype(object))
    bad.loc[5, "e"] = "1,5"
    messages = []
    for jobs in (1, 3):
        with pytest.raises(EncodingError) as err:
            TableEncoder(max_thresholds=8).fit_transform_with_reference(bad, target=y, reference_depth=3,
                                                                        n_jobs=jobs)
        messages.append(str(err.value))
    assert messages[0] == messages[1] and "e" in messages[0]


def test_cart_under_a_limit_samples_only_rows_that_count():
    """Rows of weight 0 are absent: CART's sample is drawn from the others, so a table of a few
    weighted rows among many of weight 0 neither crashes scikit-learn (all sampled weights 0)
    nor samples them away."""
    import time

    from strongtree_core.encoding.reference import MIN_REFERENCE_ROWS, reference_sample

    rng = np.random.default_rng(9)
    n = 3 * MIN_REFERENCE_ROWS
    X = pd.DataFrame(rng.integers(0, 40_000, size=(n, 2)) / 4.0, columns=["a", "b"])
    y = ((X.a > 5_000) ^ (X.b < 2_000)).astype(int).to_numpy()
    y = np.where(rng.random(n) < 0.1, 1 - y, y)
    few = np.zeros(n)
    few[rng.choice(n, 100, replace=False)] = rng.integers(1, 4, 100)
    *_, rows = TableEncoder(max_thresholds=4).fit_transform_with_reference(
        X, sample_weight=few, target=y, reference_depth=2, deadline=time.perf_counter())
    assert rows == 100  # every row that counts, however little time is left
    weight = np.where(rng.random(n) < 0.6, rng.integers(1, 4, n), 0).astype(float)
    present = np.flatnonzero(weight > 0)
    plan, X_binary, tree, rows = TableEncoder(max_thresholds=4).fit_transform_with_reference(
        X, sample_weight=weight, target=y, reference_depth=2, deadline=time.perf_counter())
    assert rows == MIN_REFERENCE_ROWS < present.size
    pick = present[reference_sample(present.size, rows)]
    cart = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X.iloc[pick], y[pick], sample_weight=weight[pick])
    np.testing.assert_array_equal(tree.predict(X_binary[pick]), cart.predict(X.iloc[pick]))
