"""The promise's drivers (margin, holdout, crossfit) on made-up trees, no solver: every training
bound they try, every verdict and every value they record, against an independent recomputation
(root finding with scipy's brentq, binomial tails for the exact bounds), in every branch: passes at
once, tightens once, steps down, reaches the floor, falls back to the constant tree."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import binom, norm

from strongtree_core.metrics.promise import (
    HOLDOUT_STEPS,
    MARGIN_ROUNDS,
    TIGHTEST_SHARE,
    CROSSFIT_STEPS,
    Differences,
    Fitted,
    holdout_certified,
    run_crossfit,
    run_holdout,
    run_margin,
)

ALPHA = 0.1
CONFIDENCE = 0.9


def diffs(*rows) -> Differences:
    arr = np.array(rows, dtype=float).reshape(-1, 4)
    return Differences(arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3])


def se_of(k_a, n_a, k_b, n_b) -> float:
    """Agresti-Caffo: one success and one failure added to each group."""
    p_a, p_b = (k_a + 1) / (n_a + 2), (k_b + 1) / (n_b + 2)
    return float(np.sqrt(p_a * (1 - p_a) / (n_a + 2) + p_b * (1 - p_b) / (n_b + 2)))


def risk_of(rows, delta, extra=0.0) -> float:
    total = 0.0
    for k_a, n_a, k_b, n_b in rows:
        d = abs(k_a / n_a - k_b / n_b)
        s = np.sqrt(se_of(k_a, n_a, k_b, n_b) ** 2 + extra)
        total += norm.sf((delta - d) / s) + norm.sf((delta + d) / s)
    return float(total)


def tightened_of(rows, target, extra=0.0) -> float:
    """The largest t with sum_k [sf((target - t)/s_k) + sf((target + t)/s_k)] = alpha, by brentq."""
    s = np.array([np.sqrt(se_of(*r) ** 2 + extra) for r in rows])

    def f(t):
        return float(np.sum(norm.sf((target - t) / s) + norm.sf((target + t) / s))) - ALPHA

    assert f(0.0) < 0 < f(target)
    return brentq(f, 0.0, target, xtol=1e-14)


def smallest_of(rows, extra=0.0) -> float:
    return brentq(lambda d: risk_of(rows, d, extra) - ALPHA, 1e-9, 2.0, xtol=1e-14)


class Trees:
    """Made-up fits: ``pick(t)`` gives the (k_a, n_a, k_b, n_b) rows of the tree fitted at bound t,
    or None for a constant tree; accuracy falls with the bound.  Records every bound asked for."""

    def __init__(self, pick):
        self.pick = pick
        self.asked: list[float] = []
        self.constants = 0

    def fit_at(self, t: float) -> Fitted:
        self.asked.append(t)
        rows = self.pick(t)
        if rows is None:
            return Fitted(("constant", t), t, True, 0.6, diffs((0, 100, 0, 100)))
        return Fitted(("tree", t), t, False, 0.7 + t, diffs(*rows))

    def fit_constant(self) -> Fitted:
        self.constants += 1
        return Fitted("constant", 0.0, True, 0.6, diffs((0, 100, 0, 100)))


# -- margin --------------------------------------------------------------------------------------------


def test_margin_keeps_the_tree_at_delta_when_its_risk_is_within_alpha():
    tree = [(300, 1000, 290, 1000)]  # 1 pp on 1,000 rows a side: risk far below 0.1
    trees = Trees(lambda t: tree)
    chosen, promise = run_margin(trees.fit_at, trees.fit_constant, delta=0.05, confidence=CONFIDENCE, n_rows=2000)
    assert trees.asked == [0.05] and trees.constants == 0
    assert chosen.model == ("tree", 0.05) and not promise.constant
    assert promise.training_bound == 0.05 and promise.smallest_delta is None
    (r,) = promise.rounds
    assert r.certified and not r.constant and r.risk == pytest.approx(risk_of(tree, 0.05), rel=1e-12)
    assert r.training_gap == pytest.approx(0.01) and r.training_accuracy == pytest.approx(0.75)
    assert promise.training_accuracy == promise.accuracy_at_delta == pytest.approx(0.75)
    assert promise.delta == 0.05 and promise.confidence == CONFIDENCE and promise.kept and promise.rows_used == 2000


def test_margin_tightens_the_bound_to_the_root_of_the_risk_of_the_tree_at_delta():
    at_delta = [(450, 1000, 400, 1000)]  # 5 pp: risk about 0.5
    tighter = [(430, 1000, 410, 1000)]   # 2 pp
    trees = Trees(lambda t: at_delta if t == 0.05 else tighter)
    chosen, promise = run_margin(trees.fit_at, trees.fit_constant, delta=0.05, confidence=CONFIDENCE, n_rows=2000)
    t1 = tightened_of(at_delta, 0.05)
    assert 0.02 < t1 < 0.05
    assert trees.asked[0] == 0.05 and trees.asked[1] == pytest.approx(t1, abs=1e-12) and len(trees.asked) == 2
    first, second = promise.rounds
    assert not first.certified and first.risk == pytest.approx(risk_of(at_delta, 0.05), rel=1e-12) and first.risk > ALPHA
    assert second.certified and second.risk == pytest.approx(risk_of(tighter, 0.05), rel=1e-12) and second.risk <= ALPHA
    assert promise.training_bound == pytest.approx(t1, abs=1e-12) and not promise.constant
    assert chosen.model[0] == "tree" and chosen.training_bound == pytest.approx(t1, abs=1e-12)
    assert promise.training_accuracy == pytest.approx(0.7 + t1) and promise.accuracy_at_delta == pytest.approx(0.75)
    assert promise.accuracy_cost == pytest.approx(0.05 - t1)


def test_margin_with_an_optimism_estimate_judges_against_delta_minus_it_with_its_variance():
    at_delta = [(440, 1000, 400, 1000)]
    tighter = [(425, 1000, 410, 1000)]
    trees = Trees(lambda t: at_delta if t == 0.06 else tighter)
    omega, sd = 0.01, 0.004
    _, promise = run_margin(trees.fit_at, trees.fit_constant, delta=0.06, confidence=CONFIDENCE, n_rows=2000,
                            optimism=omega, optimism_variance=sd ** 2, method="subsample")
    target = 0.06 - omega
    assert promise.rounds[0].risk == pytest.approx(risk_of(at_delta, target, sd ** 2), rel=1e-12)
    assert trees.asked[1] == pytest.approx(tightened_of(at_delta, target, sd ** 2), abs=1e-12)
    assert promise.rounds[1].risk == pytest.approx(risk_of(tighter, target, sd ** 2), rel=1e-12)
    assert promise.rounds[1].certified and promise.method == "subsample"
    # a negative optimism estimate does not loosen delta
    trees = Trees(lambda t: at_delta)
    _, promise = run_margin(trees.fit_at, trees.fit_constant, delta=0.06, confidence=CONFIDENCE, n_rows=2000,
                            optimism=-0.02, optimism_variance=0.0)
    assert promise.rounds[0].risk == pytest.approx(risk_of(at_delta, 0.06), rel=1e-12)


def test_margin_steps_down_by_a_tenth_of_delta_when_the_new_tree_would_not_lower_the_bound():
    at_delta = [(300, 600, 270, 600)]      # 5 pp on 600 rows a side: large errors, a low tightened bound
    precise = [(4470, 10000, 4000, 10000)]  # 4.7 pp on 10,000 rows: fails, and its own root is above t1
    after = [(4100, 10000, 4000, 10000)]    # 1 pp: passes

    def pick(t):
        if t == 0.05:
            return at_delta
        return precise if len(trees.asked) == 2 else after

    trees = Trees(pick)
    _, promise = run_margin(trees.fit_at, trees.fit_constant, delta=0.05, confidence=CONFIDENCE, n_rows=2000)
    t1 = tightened_of(at_delta, 0.05)
    assert tightened_of(precise, 0.05) > t1  # so the rule steps down instead
    assert trees.asked == pytest.approx([0.05, t1, t1 - 0.005], abs=1e-12)
    assert [r.certified for r in promise.rounds] == [False, False, True]
    assert promise.training_bound == pytest.approx(t1 - 0.005, abs=1e-12)


def test_margin_goes_to_the_floor_when_even_a_bound_of_zero_fails_and_then_to_the_constant_tree():
    noisy = [(20, 40, 18, 40), (20, 40, 19, 40), (10, 40, 12, 40)]  # tiny groups: even t = 0 has risk > alpha
    trees = Trees(lambda t: noisy)
    chosen, promise = run_margin(trees.fit_at, trees.fit_constant, delta=0.05, confidence=CONFIDENCE, n_rows=80)
    assert risk_of(noisy, 0.05) > ALPHA
    floor = TIGHTEST_SHARE * 0.05
    assert trees.asked == pytest.approx([0.05, floor], abs=1e-15)
    assert trees.constants == 1 and chosen.model == "constant" and promise.constant
    assert [r.constant for r in promise.rounds] == [False, False, True]
    assert promise.training_bound == 0.0 and promise.training_accuracy == 0.6
    assert promise.accuracy_at_delta == pytest.approx(0.75)
    assert promise.smallest_delta == pytest.approx(smallest_of(noisy), abs=1e-9)
    assert promise.smallest_delta > 0.05


def test_margin_gives_up_after_its_rounds_at_the_floor():
    state = {"k": 0}

    def pick(t):  # every tree a little better than the last, none good enough
        state["k"] += 1
        return [(480 - state["k"], 1000, 400, 1000)]

    trees = Trees(pick)
    _, promise = run_margin(trees.fit_at, trees.fit_constant, delta=0.05, confidence=CONFIDENCE, n_rows=2000)
    tried = [r.training_bound for r in promise.rounds if not r.constant]
    assert len(tried) <= MARGIN_ROUNDS + 1
    assert tried[-1] == pytest.approx(TIGHTEST_SHARE * 0.05, abs=1e-15)
    assert all(b > a for a, b in zip(tried[1:], tried[:-1]))  # strictly tighter each round
    assert promise.constant and trees.constants == 1
    expected = min(smallest_of([(480 - k, 1000, 400, 1000)]) for k in range(1, len(tried) + 1))
    assert promise.smallest_delta == pytest.approx(expected, abs=1e-9)


def test_margin_returns_a_constant_tree_found_by_tightening_with_the_smallest_promise_of_the_others():
    at_delta = [(450, 1000, 400, 1000)]
    trees = Trees(lambda t: at_delta if t == 0.05 else None)
    chosen, promise = run_margin(trees.fit_at, trees.fit_constant, delta=0.05, confidence=CONFIDENCE, n_rows=2000)
    assert len(trees.asked) == 2 and trees.constants == 0  # the tightened fit itself was constant
    assert promise.constant and chosen.model[0] == "constant"
    assert promise.training_bound == pytest.approx(tightened_of(at_delta, 0.05), abs=1e-12)
    assert promise.smallest_delta == pytest.approx(smallest_of(at_delta), abs=1e-9)


def test_margin_with_an_optimism_of_delta_or_more_keeps_only_the_constant_tree():
    at_delta = [(450, 1000, 400, 1000)]
    trees = Trees(lambda t: at_delta)
    chosen, promise = run_margin(trees.fit_at, trees.fit_constant, delta=0.05, confidence=CONFIDENCE, n_rows=2000,
                                 optimism=0.05, optimism_variance=0.0001, method="subsample")
    assert promise.constant and chosen.model == "constant" and trees.constants == 1
    assert trees.asked == [0.05]  # only to name the smallest promise
    assert promise.smallest_delta == pytest.approx(smallest_of(at_delta, 0.0001) + 0.05, abs=1e-9)
    assert promise.accuracy_at_delta == pytest.approx(0.75)


def test_margin_at_a_looser_confidence_tightens_less():
    at_delta = [(450, 1000, 400, 1000)]
    bounds = []
    for confidence in (0.8, 0.9, 0.95):
        trees = Trees(lambda t: at_delta if t == 0.05 else [(410, 1000, 400, 1000)])
        _, promise = run_margin(trees.fit_at, trees.fit_constant, delta=0.05, confidence=confidence, n_rows=2000)
        bounds.append(promise.training_bound)
    assert bounds[0] > bounds[1] > bounds[2]


# -- holdout ---------------------------------------------------------------------------------------------


def cp_upper(k, n, a) -> float:
    """One-sided Clopper-Pearson upper bound by root finding on the binomial tail: P(X <= k | p) = a."""
    return 1.0 if k >= n else brentq(lambda p: binom.cdf(k, n, p) - a, 1e-15, 1 - 1e-15, xtol=1e-14)


def cp_lower(k, n, a) -> float:
    return 0.0 if k <= 0 else brentq(lambda p: binom.sf(k - 1, n, p) - a, 1e-15, 1 - 1e-15, xtol=1e-14)


def certified_by_hand(rows, delta) -> bool:
    for k_a, n_a, k_b, n_b in rows:
        upper = cp_upper(k_a, n_a, ALPHA / 2) - cp_lower(k_b, n_b, ALPHA / 2)
        lower = cp_lower(k_a, n_a, ALPHA / 2) - cp_upper(k_b, n_b, ALPHA / 2)
        if upper > delta or lower < -delta:
            return False
    return True


@pytest.mark.parametrize("rows", [
    [(100, 1000, 100, 1000)], [(100, 1000, 100, 1000), (30, 100, 30, 100)], [(200, 1000, 100, 1000)],
    [(130, 1000, 100, 1000)], [(100, 1000, 128, 1000)], [(0, 500, 0, 600)], [(500, 500, 600, 600)],
    [(12, 400, 30, 400)], [(30, 400, 12, 400)],
])
def test_holdout_certifies_exactly_when_the_binomial_bounds_are_within_delta(rows):
    assert holdout_certified(diffs(*rows), 0.05, ALPHA) == certified_by_hand(rows, 0.05)


def test_holdout_certifies_at_the_edge_on_both_sides():
    base = (100, 1000)
    # find the largest k_b above 100 still certified by hand, then check both sides of it and the mirror
    edge = max(k for k in range(100, 200) if certified_by_hand([(*base, k, 1000)], 0.05))
    assert holdout_certified(diffs((*base, edge, 1000)), 0.05, ALPHA)
    assert not holdout_certified(diffs((*base, edge + 1, 1000)), 0.05, ALPHA)
    assert holdout_certified(diffs((edge, 1000, *base)), 0.05, ALPHA)
    assert not holdout_certified(diffs((edge + 1, 1000, *base)), 0.05, ALPHA)


def test_holdout_returns_the_last_certified_tree_and_stops_at_the_first_failure():
    gaps = {s: (100, 1000, 100 + k, 1000) for s, k in zip(HOLDOUT_STEPS, (0, 2, 5, 60, 0))}
    trees = Trees(lambda t: [gaps[min(gaps, key=lambda s: abs(s * 0.08 - t))]])
    today = Fitted("today", 0.08, False, 0.8, diffs((1, 10, 1, 10)))
    chosen, promise = run_holdout(trees.fit_at, trees.fit_constant, lambda: today, delta=0.08, confidence=CONFIDENCE,
                                  n_rows=1000, n_fit_rows=700)
    assert trees.asked == pytest.approx([s * 0.08 for s in HOLDOUT_STEPS[:4]])  # the fourth fails; the fifth is not fitted
    assert [r.certified for r in promise.rounds] == [True, True, True, False]
    assert chosen.model == ("tree", pytest.approx(HOLDOUT_STEPS[2] * 0.08))
    assert promise.training_bound == pytest.approx(HOLDOUT_STEPS[2] * 0.08)
    assert promise.rows_used == 700 and not promise.constant and promise.method == "holdout"
    assert promise.accuracy_at_delta == 0.8 and promise.guarantee.startswith("finite-sample")
    assert all(r.risk is None for r in promise.rounds)


def test_holdout_falls_back_to_the_constant_tree_when_the_tightest_tree_fails():
    trees = Trees(lambda t: [(100, 1000, 300, 1000)])
    today = Fitted("today", 0.08, False, 0.8, diffs((1, 10, 1, 10)))
    chosen, promise = run_holdout(trees.fit_at, trees.fit_constant, lambda: today, delta=0.08, confidence=CONFIDENCE,
                                  n_rows=1000, n_fit_rows=700)
    assert trees.asked == pytest.approx([HOLDOUT_STEPS[0] * 0.08]) and trees.constants == 1
    assert promise.constant and chosen.model == "constant" and promise.rows_used == 1000
    assert [r.constant for r in promise.rounds] == [False, True]


def test_holdout_returns_a_constant_tree_that_passed_when_the_next_one_fails():
    trees = Trees(lambda t: None if t < 0.02 else [(100, 1000, 300, 1000)])
    today = Fitted("today", 0.08, False, 0.8, diffs((1, 10, 1, 10)))
    chosen, promise = run_holdout(trees.fit_at, trees.fit_constant, lambda: today, delta=0.08, confidence=CONFIDENCE,
                                  n_rows=1000, n_fit_rows=700)
    assert trees.asked == pytest.approx([s * 0.08 for s in HOLDOUT_STEPS[:2]]) and trees.constants == 0
    assert promise.constant and chosen.model[0] == "constant" and promise.rows_used == 700
    assert [r.certified for r in promise.rounds] == [True, False]


# -- crossfit --------------------------------------------------------------------------------------------


def test_crossfit_refits_at_the_loosest_bound_whose_out_of_fold_risk_passes():
    out_of_fold = {s: [(400 + int(1000 * 0.07 * s), 1000, 400, 1000)] for s in CROSSFIT_STEPS}
    out_of_fold[0.4] = [(410, 1000, 400, 1000)]
    asked: list[float] = []

    def oof(t):
        asked.append(t)
        return diffs(*out_of_fold[min(out_of_fold, key=lambda s: abs(s * 0.05 - t))])

    trees = Trees(lambda t: [(405, 1000, 400, 1000)])
    today = Fitted("today", 0.05, False, 0.8, diffs((1, 10, 1, 10)))
    chosen, promise = run_crossfit(oof, trees.fit_at, trees.fit_constant, today, delta=0.05, confidence=CONFIDENCE,
                                   n_rows=2000)
    passing = next(s for s in CROSSFIT_STEPS if risk_of(out_of_fold[s], 0.05) <= ALPHA)
    assert passing == 0.4
    assert asked == pytest.approx([s * 0.05 for s in CROSSFIT_STEPS[:4]])
    assert [r.risk for r in promise.rounds] == pytest.approx([risk_of(out_of_fold[s], 0.05) for s in CROSSFIT_STEPS[:4]])
    assert trees.asked == pytest.approx([0.02]) and chosen.model == ("tree", pytest.approx(0.02))
    assert promise.training_bound == pytest.approx(0.02) and promise.accuracy_at_delta == 0.8
    assert all(r.training_accuracy is None for r in promise.rounds)


def test_crossfit_at_delta_keeps_todays_tree_without_refitting():
    trees = Trees(lambda t: [(405, 1000, 400, 1000)])
    today = Fitted("today", 0.05, False, 0.8, diffs((1, 10, 1, 10)))
    chosen, promise = run_crossfit(lambda t: diffs((401, 1000, 400, 1000)), trees.fit_at, trees.fit_constant, today,
                                   delta=0.05, confidence=CONFIDENCE, n_rows=2000)
    assert chosen is today and trees.asked == [] and len(promise.rounds) == 1


def test_crossfit_falls_back_to_the_constant_tree():
    trees = Trees(lambda t: [(405, 1000, 400, 1000)])
    today = Fitted("today", 0.05, False, 0.8, diffs((1, 10, 1, 10)))
    chosen, promise = run_crossfit(lambda t: diffs((480, 1000, 400, 1000)), trees.fit_at, trees.fit_constant, today,
                                   delta=0.05, confidence=CONFIDENCE, n_rows=2000)
    assert promise.constant and trees.constants == 1 and trees.asked == []
    assert len(promise.rounds) == len(CROSSFIT_STEPS) + 1
