"""The ladder of thresholds (strongtree_core.accel.ladder): nested rungs solved exactly on merged
patterns; a rung's certificate holds over its thresholds, and the encoding keeps exactly those."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeClassifier

from strongtree_core import StrongTreeClassifier
from strongtree_core.accel import ladder, search
from strongtree_core.accel.search import exact_solve
from strongtree_core.encoding import TableEncoder, collapse_patterns
from strongtree_core.encoding.patterns import restrict_features
from strongtree_core.formulation.objectives import tree_objective
from strongtree_core.formulation.spec import TreeSpec


def continuous(n: int, seed: int = 0, columns: int = 5):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, columns)), columns=[f"x{j}" for j in range(columns)])
    truth = np.where(X.x2 <= 0.6, (X.x0 > 0) ^ (X.x1 > 0), X.x3 + 0.5 * X.x4 > 0.2)
    return X, np.where(rng.random(n) < 0.1, ~truth, truth).astype(int)


def patterns(X, y, max_thresholds=8):
    plan = TableEncoder(max_thresholds=max_thresholds).fit(X, target=y)
    return plan, collapse_patterns(plan.transform(X), y, 2, chains=plan.chains)


def test_merged_patterns_keep_weights_counts_and_chains():
    X, y = continuous(300)
    plan, data = patterns(X, y)
    keep = np.array(sorted({0, 2, 5} | set(range(8, data.n_features))))
    merged, inverse = restrict_features(data, keep)
    assert merged.n_rows == data.n_rows and merged.weight.sum() == pytest.approx(data.weight.sum())
    np.testing.assert_array_equal(merged.X[inverse], data.X[:, keep])
    np.testing.assert_array_equal(merged.y[inverse], data.y)
    assert len({tuple(r) + (c,) for r, c in zip(merged.X.tolist(), merged.y.tolist())}) == merged.n_patterns
    for chain in merged.chains:  # still nested after re-indexing
        block = merged.X[:, list(chain)]
        assert not np.any(block[:, :-1] & ~block[:, 1:])


@pytest.mark.parametrize("spec", [TreeSpec(depth=3), TreeSpec(depth=2, min_leaf=20), TreeSpec(depth=3, lambda_=0.01)])
def test_each_rung_is_optimal_over_its_thresholds(monkeypatch, spec):
    monkeypatch.setattr(ladder, "LADDER_CELLS", 0)
    X, y = continuous(400, seed=1)
    _, data = patterns(X, y, max_thresholds=16)
    plain = search.exact_solve

    def full_problem_runs_out_of_time(sub, sub_spec, **kwargs):
        if sub is data:  # the last rung: as if the time ran out before a proof
            return search.ExactResult("stopped", None, None, None, 0.0, "stopped")
        return plain(sub, sub_spec, **kwargs)

    monkeypatch.setattr(search, "exact_solve", full_problem_runs_out_of_time)
    found = plain(data, spec, time_limit=60)
    assert found.status == "optimal" and found.features is not None and len(found.features) < data.n_features
    sub, _ = restrict_features(data, np.array(found.features))
    reference = plain(sub, spec, time_limit=60, ladder=False)
    assert reference.status == "optimal"
    assert found.objective == pytest.approx(reference.objective)
    assert tree_objective(data, spec, found.structure) == pytest.approx(found.objective)
    assert {int(f) for f in found.structure.feature if f >= 0} <= set(found.features)
    # the rungs are nested and the last one certified is the finest: it is at least every earlier rung's optimum
    coarser, _ = restrict_features(data, np.array(sorted(set(found.features) - set(data.chains[0][1::2]))))
    assert found.objective >= plain(coarser, spec, time_limit=60, ladder=False).objective - 1e-9


def test_out_of_time_before_any_rung_no_rung_is_begun_and_the_best_feasible_start_comes_back(monkeypatch):
    monkeypatch.setattr(ladder, "LADDER_CELLS", 0)
    X, y = continuous(2000, seed=5, columns=8)
    _, data = patterns(X, y, max_thresholds=32)
    from strongtree_core.engine import routes as engine
    from strongtree_core.engine.starts import candidate_starts, cart_structure

    start = cart_structure(data, 4)
    found = exact_solve(data, TreeSpec(depth=4), time_limit=-1.0, starts=(start,))
    assert found.status == "stopped" and found.structure is None and found.n_explored == 0  # nothing begun late
    for spec in (TreeSpec(depth=4), TreeSpec(depth=4, min_leaf=400)):
        monkeypatch.setattr(engine, "exact_solve", lambda *args, **kwargs: found)
        solved = engine._solve_exact(data, spec, 1.0, None, None, 0.0)
        assert solved.record.status == "time_limit" and solved.record.bound is None and not solved.record.certified
        sizes = np.bincount(solved.structure.apply(data.X), weights=data.count, minlength=32)
        assert np.all(sizes[solved.structure.leaves] >= spec.min_leaf)
        meets = [t for _, t in candidate_starts(data, 4)
                 if np.all(np.bincount(t.apply(data.X), weights=data.count, minlength=32)[t.leaves] >= spec.min_leaf)]
        assert solved.record.objective == max(tree_objective(data, spec, t) for t in meets)


def test_starts_wait_for_an_unwatched_search_the_program_solves_and_come_when_it_returns_no_tree(monkeypatch):
    """The cheap starts (CART, single leaves) are made before a search only when they can matter: someone
    watches for a first tree, or the search is more than the dynamic program; else only when the search
    comes back without a tree."""
    from strongtree_core.engine import routes as engine
    from strongtree_core.accel.search import ExactResult
    from strongtree_core.engine.starts import candidate_starts
    from strongtree_core.structure import TreeStructure

    X, y = continuous(300, seed=7)
    _, data = patterns(X, y, max_thresholds=8)
    made = []
    real = engine.predicted_starts
    monkeypatch.setattr(engine, "predicted_starts", lambda d, depth: made.append(depth) or real(d, depth))
    spec = TreeSpec(depth=3)
    solved = engine._solve_exact(data, spec, 30.0, None, None, time.perf_counter())
    assert solved.record.certified and made == []  # the program alone, nothing to wait for
    assert solved.record.objective == exact_solve(data, spec, time_limit=30,
                                                  starts=tuple(t for _, t in candidate_starts(data, 3))).objective
    watched = engine._solve_exact(data, spec, 30.0, None, lambda event: None, time.perf_counter())
    assert made == [3]  # watched: a first tree to show at once
    # the same tree either way: the program's optimum is kept over a start of the same value
    assert np.array_equal(watched.structure.feature, solved.structure.feature)
    assert np.array_equal(watched.structure.prediction, solved.structure.prediction)
    for seed in range(3):  # tables where CART's depth-2 tree is optimal and the program's optimum is a stump
        rng = np.random.default_rng(seed)
        Xs = rng.integers(0, 2, (40, 5)).astype(np.uint8)
        small = collapse_patterns(Xs, (Xs[:, 0] ^ (rng.random(40) < 0.2)).astype(int), 2)
        quiet = engine._solve_exact(small, TreeSpec(depth=2), 30.0, None, None, time.perf_counter())
        loud = engine._solve_exact(small, TreeSpec(depth=2), 30.0, None, lambda event: None, time.perf_counter())
        assert quiet.record.objective == loud.record.objective and quiet.structure.n_branching == 1
        assert np.array_equal(quiet.structure.feature, loud.structure.feature)
        assert np.array_equal(quiet.structure.prediction, loud.structure.prediction)
    made.clear()
    engine._solve_exact(data, spec, 30.0, None, lambda event: None, time.perf_counter())
    assert made == [3]
    for other in (TreeSpec(depth=3, objective="worst_case_accuracy"), TreeSpec(depth=3, max_branching=3)):
        engine._solve_exact(data, other, 30.0, None, None, time.perf_counter())
    assert made == [3, 3, 3]  # more than the program alone: starts are incumbents of the search
    stopped = ExactResult("stopped", None, None, None, 0.0, "stopped", 0)
    monkeypatch.setattr(engine, "exact_solve", lambda *args, **kwargs: stopped)
    late = engine._solve_exact(data, spec, 1.0, None, None, time.perf_counter())
    assert made == [3, 3, 3, 3] and late.record.status == "time_limit" and not late.record.certified
    best_start = max(tree_objective(data, spec, t) for _, t in candidate_starts(data, 3))
    assert late.record.objective == best_start
    # stopped with a tree worse than a start (the single leaf of the smaller class): the start is returned
    minority = TreeStructure.single_leaf(3, int(np.argmin(np.bincount(data.y, weights=data.weight))))
    poor = ExactResult("stopped", minority, tree_objective(data, spec, minority), None, 0.0, "stopped", 1)
    monkeypatch.setattr(engine, "exact_solve", lambda *args, **kwargs: poor)
    kept = engine._solve_exact(data, spec, 1.0, None, None, time.perf_counter())
    assert kept.record.objective == best_start > poor.objective and engine.BETTER_START in kept.record.choice


def test_the_first_start_has_a_rung_of_its_own_and_the_rungs_stay_nested(monkeypatch):
    X, y = continuous(2000, seed=6, columns=8)
    _, data = patterns(X, y, max_thresholds=32)
    from strongtree_core.accel.dp import Deadline
    from strongtree_core.engine.starts import cart_structure
    from strongtree_core.structure import TreeStructure

    first = cart_structure(data, 3)
    spare = [c for c in range(len(data.chains)) if not set(data.chains[c]) & ladder.tree_features(first)]
    other = TreeStructure(1, np.array([data.chains[spare[-1]][5], -1, -1]), np.array([-1, 0, 1]))
    seen = []

    def solve(sub, sub_starts, seconds):
        return exact_solve(sub, TreeSpec(depth=3), time_limit=30, starts=sub_starts, ladder=False)

    certified, full, _ = ladder.climb(data, TreeSpec(depth=3), solve, (first, other), Deadline(1e18, None),
                                      lambda k, n, found, on_full: seen.append((k, n, found.objective)))
    assert seen[0][0] == -1 and seen[1][0] == 0 and seen[0][1] < seen[1][1]  # the first start's rung, then rung 0
    assert [n for _, n, _ in seen] == sorted({n for _, n, _ in seen})  # nested: strictly growing
    assert [v for _, _, v in seen] == sorted(v for _, _, v in seen)  # each rung starts from the one before
    assert seen[0][2] >= tree_objective(data, TreeSpec(depth=3), first) - 1e-9
    assert full is not None and full.status == "optimal"
    assert full.objective == pytest.approx(exact_solve(data, TreeSpec(depth=3), time_limit=60, ladder=False).objective)


def test_the_full_problem_is_not_begun_when_its_estimate_exceeds_the_time_left(monkeypatch):
    """On a million rows the full problem's set-up takes seconds no clock interrupts: begun too
    late, the search was given up and the certified rung went with it (bound = the row count).
    When even the optimistic estimate exceeds the time left, the ladder answers with its rung."""
    from strongtree_core.accel.dp import Deadline
    from strongtree_core.engine.starts import cart_structure

    X, y = continuous(2000, seed=6, columns=8)
    _, data = patterns(X, y, max_thresholds=32)
    solved, estimates = [], []
    real_estimate = ladder.full_problem_seconds

    def solve(sub, sub_starts, seconds):
        assert sub is not data, "the full problem was begun"
        solved.append(sub.n_features)
        return exact_solve(sub, TreeSpec(depth=3), time_limit=30, starts=sub_starts, ladder=False)

    def estimate(full, rung_seconds, rung_cells):
        estimates.append((rung_seconds, rung_cells))
        assert full is data and 0 < rung_cells < data.n_patterns * data.n_features
        return 1e9  # more than any time left

    monkeypatch.setattr(ladder, "full_problem_seconds", estimate)
    certified, full, best = ladder.climb(data, TreeSpec(depth=3), solve, (cart_structure(data, 3),),
                                         Deadline(time.perf_counter() + 600, None))
    assert full is None and len(estimates) == 1 and max(solved) < data.n_features
    found, on_full = certified.result
    assert found.status == "optimal" and certified.features.size == max(solved)
    assert best[0] == pytest.approx(found.objective)
    assert tree_objective(data, TreeSpec(depth=3), on_full) == pytest.approx(found.objective)
    assert real_estimate(data, 2.0, 1000) == pytest.approx(2.0 * data.n_patterns * data.n_features / 1000)


def test_a_ladder_with_time_to_spare_reaches_every_threshold(monkeypatch):
    monkeypatch.setattr(ladder, "LADDER_CELLS", 0)
    X, y = continuous(300, seed=2, columns=5)
    _, data = patterns(X[["x0", "x1", "x2", "x3", "x4"]], y, max_thresholds=3)
    found = exact_solve(data, TreeSpec(depth=3), time_limit=120)
    reference = exact_solve(data, TreeSpec(depth=3), time_limit=120, ladder=False)
    assert found.status == reference.status == "optimal" and found.features is None
    assert found.objective == pytest.approx(reference.objective)


def test_the_estimator_keeps_the_certified_thresholds_and_beats_cart(monkeypatch):
    monkeypatch.setattr(ladder, "LADDER_CELLS", 0)
    X, y = continuous(3000, seed=3, columns=8)
    model = StrongTreeClassifier(depth=4, max_thresholds=64, time_limit=4).fit(X, y)
    record = model.record_
    assert record.certified and record.bound == record.objective
    assert int((model.predict(X) == y).sum()) == record.objective  # re-scored from predictions
    if "features" in record.choice:  # certified over a thinned set: the encoding holds exactly it
        assert model.encoding_.n_binary < 8 * 64
        used = {int(f) for f in model.tree_.structure.feature if f >= 0}
        assert max(used) < model.encoding_.n_binary
    cart = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y)
    assert record.objective >= int((cart.predict(X) == y).sum())


def test_a_fair_tree_through_the_ladder_meets_its_bound(monkeypatch):
    monkeypatch.setattr(ladder, "LADDER_CELLS", 0)
    X, y = continuous(2000, seed=4, columns=6)
    group = (X.x1 + np.random.default_rng(4).normal(0, 1, len(y)) > 0).astype(int)
    model = StrongTreeClassifier(depth=3, fairness="statistical_parity", fairness_bound=0.02, pos_label=1,
                                 max_thresholds=16, time_limit=20).fit(X, y, sensitive_features=group)
    assert all(check["satisfied"] for check in model.constraint_checks_)
    rates = pd.Series(model.predict(X)).groupby(group.to_numpy()).mean()
    assert abs(rates[0] - rates[1]) <= 0.02 + 1e-12


@pytest.mark.timing
def test_a_rung_still_at_work_at_the_limit_keeps_the_certificate_of_the_rung_before(monkeypatch):
    """A search given up at its limit (a set-up on a million rows answers no clock) used to come
    back without a bound; the ladder's last certified rung now holds, the encoding cut to it."""
    from strongtree_core.engine import routes as engine

    monkeypatch.setattr(ladder, "LADDER_CELLS", 0)
    monkeypatch.setattr(ladder, "full_problem_seconds", lambda *args: 0.0)  # the full problem is begun
    X, y = continuous(2000, seed=6, columns=8)
    plain = search.exact_solve
    full = []

    def from_the_engine(data, spec, **kwargs):
        full.append(data)
        return plain(data, spec, **kwargs)

    def deaf_on_the_full_problem(sub, sub_spec, **kwargs):
        if full and sub is full[0]:
            time.sleep(6.0)  # hears no stop: past the limit and its grace
        return plain(sub, sub_spec, **kwargs)

    monkeypatch.setattr(engine, "exact_solve", from_the_engine)
    monkeypatch.setattr(search, "exact_solve", deaf_on_the_full_problem)
    started = time.perf_counter()
    model = StrongTreeClassifier(depth=3, max_thresholds=32, time_limit=4.0).fit(X, y)
    took = time.perf_counter() - started
    record = model.record_
    assert took < 5.5, took
    assert record.certified and record.status == "optimal" and record.bound == record.objective, record
    assert "given up" in record.choice and "features" in record.choice, record.choice
    assert model.encoding_.n_binary < full[0].n_features  # the encoding holds the rung's thresholds only
    assert int((model.predict(X) == y).sum()) == record.objective  # re-scored from predictions
    rung = collapse_patterns(model.encoding_.transform(X), y, 2, chains=model.encoding_.chains)
    assert plain(rung, TreeSpec(depth=3), time_limit=60, ladder=False).objective == pytest.approx(record.objective)
