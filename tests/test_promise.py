"""The fairness promise for new rows: its arithmetic, its level on simulated populations
(for a fixed tree, where the truth is known), and tiny fits whose gaps are re-measured
from the predictions."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from strongtree_core import StrongTreeClassifier, TrivialTreeWarning
from strongtree_core.tree.claim import claim
from strongtree_core.errors import StrongTreeError
from strongtree_core.estimator.classifier import CONFIDENCE_WITHOUT_FAIRNESS
from strongtree_core.metrics.promise import (
    Differences,
    FairnessPromise,
    excess,
    half_sample_pairs,
    optimism_estimate,
    holdout_certified,
    holdout_split,
    risk,
    smallest_promise,
    tightened_bound,
    TIGHTEST_SHARE,
)
from strongtree_core.tree import FittedTree


def _diffs(*rows) -> Differences:
    arr = np.array(rows, dtype=float).reshape(-1, 4)
    return Differences(arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3])


# -- arithmetic ----------------------------------------------------------------------


def test_standard_error_is_agresti_caffo_and_never_zero():
    d = _diffs((0, 40, 0, 60), (20, 100, 30, 100))
    se = d.standard_error
    p_a, p_b = 1 / 42, 1 / 62
    assert se[0] == pytest.approx(np.sqrt(p_a * (1 - p_a) / 42 + p_b * (1 - p_b) / 62))
    p_a, p_b = 21 / 102, 31 / 102
    assert se[1] == pytest.approx(np.sqrt(p_a * (1 - p_a) / 102 + p_b * (1 - p_b) / 102))
    assert (se > 0).all()


def test_risk_is_the_two_tailed_normal_sum():
    d = _diffs((30, 100, 20, 100), (10, 50, 12, 60))
    delta = 0.05
    est, se = np.abs(d.estimate), d.standard_error
    expected = sum(norm.sf((delta - e) / s) + norm.sf((delta + e) / s) for e, s in zip(est, se))
    assert risk(d, delta) == pytest.approx(expected)


def test_tightened_bound_solves_the_equation_and_is_none_when_zero_fails():
    se = np.array([0.01, 0.015])
    t = tightened_bound(se, 0.05, 0.1)
    assert 0 < t < 0.05
    value = np.sum(norm.sf((0.05 - t) / se) + norm.sf((0.05 + t) / se))
    assert value == pytest.approx(0.1, abs=1e-9)
    assert tightened_bound(np.array([0.05, 0.05]), 0.05, 0.1) is None  # 4 * sf(1) = 0.63 > 0.1
    # one difference, tiny error: t = delta - z_{0.9} se (the other tail is negligible)
    assert tightened_bound(np.array([1e-4]), 0.05, 0.1) == pytest.approx(0.05 - norm.ppf(0.9) * 1e-4, abs=1e-9)


def test_smallest_promise_solves_risk_equals_alpha():
    d = _diffs((30, 300, 30, 300))
    value = smallest_promise(d, 0.1)
    assert risk(d, value) == pytest.approx(0.1, abs=1e-6)
    assert risk(d, value * 0.99) > 0.1


def test_holdout_certifies_only_when_every_exact_bound_is_within_delta():
    assert holdout_certified(_diffs((100, 1000, 100, 1000)), 0.05, 0.1)
    assert not holdout_certified(_diffs((100, 1000, 100, 1000), (30, 100, 30, 100)), 0.05, 0.1)  # IUT: all k
    assert not holdout_certified(_diffs((200, 1000, 100, 1000)), 0.05, 0.1)


def test_holdout_split_takes_the_share_of_every_stratum():
    strata = np.repeat([0, 1, 2], [100, 40, 1])
    held = holdout_split(strata, 0.3, seed=1)
    assert held[:100].sum() == 30 and held[100:140].sum() == 12 and not held[140]


def test_risk_adds_the_optimism_estimate_variance_to_every_difference():
    d = _diffs((30, 100, 20, 100), (10, 50, 12, 60))
    se = np.sqrt(d.standard_error ** 2 + 0.01 ** 2)
    est = np.abs(d.estimate)
    expected = sum(norm.sf((0.05 - e) / s) + norm.sf((0.05 + e) / s) for e, s in zip(est, se))
    assert risk(d, 0.05, 0.01 ** 2) == pytest.approx(expected)
    assert risk(d, 0.05, 0.01 ** 2) > risk(d, 0.05)


def test_excess_reads_each_difference_in_the_direction_it_had_where_the_tree_was_fitted():
    inside = _diffs((30, 100, 25, 100), (10, 100, 12, 100))   # +5 pp and -2 pp
    outside = _diffs((20, 100, 28, 100), (10, 100, 20, 100))  # -8 pp and -10 pp
    # directed: +1 * -8 = -8 pp and -1 * -10 = +10 pp; max 10 pp, minus the in-sample gap 5 pp
    assert excess(inside, outside) == pytest.approx(0.05)
    # a flip of sign is not read as growth: only -(+3) from the second difference would be
    assert excess(_diffs((30, 100, 25, 100)), _diffs((25, 100, 28, 100))) == pytest.approx(-0.08)
    # lists that do not match (a group absent on one side) fall back to the folded gaps
    assert excess(inside, _diffs((20, 100, 28, 100))) == pytest.approx(0.08 - 0.05)


def test_optimism_estimate_rescales_by_the_root_of_the_share_and_carries_its_standard_error():
    units = [0.02, 0.04, 0.03, 0.01, 0.05]
    est = optimism_estimate(units, 0.5)
    assert est.raw == pytest.approx(0.03)
    assert est.value == pytest.approx(0.03 * np.sqrt(0.5))
    assert est.sd == pytest.approx(np.sqrt(0.5) * np.std(units, ddof=1) / np.sqrt(5))
    assert optimism_estimate([0.02], 0.5).sd == 0.0


def test_half_sample_pairs_halve_every_stratum_and_are_complementary():
    strata = np.repeat([0, 1, 2, -1], [101, 40, 1, 5])  # -1: rows left out (weight 0)
    pairs = half_sample_pairs(strata, 3, seed=4)
    assert len(pairs) == 3
    for a, b in pairs:
        assert np.intersect1d(a, b).size == 0
        assert np.array_equal(np.sort(np.concatenate([a, b])), np.flatnonzero(strata >= 0))
        for s_, size in ((0, 101), (1, 40)):
            assert abs(np.sum(strata[a] == s_) - np.sum(strata[b] == s_)) <= size % 2
    assert not np.array_equal(pairs[0][0], pairs[1][0])


@pytest.mark.parametrize("se", [0.01, 0.02, 0.03])
def test_half_samples_rescaled_by_root_two_estimate_the_optimism_of_a_selection(se):
    """A simulated optimizer: candidate trees ranked by accuracy with true gaps 9, 8, ..., 0 pp; it keeps
    the most accurate whose estimated gap is within delta, so the kept tree's estimate is biased low.
    The full sample's estimate is the mean of two independent halves; the half-sample method fits on
    one half and measures on the other.  Its mean excess, times sqrt(1/2), is within 15 % of the true
    optimism; unscaled (what a fit on n/2 rows sees, as the bootstrap's out-of-bag excess does) it is
    30 % or more above it."""
    rng = np.random.default_rng(7)
    gaps = np.array([0.09, 0.08, 0.07, 0.065, 0.06, 0.055, 0.05, 0.045, 0.04, 0.03, 0.02, 0.0])
    draws, delta = 20_000, 0.05
    half_a = gaps + rng.normal(0, se * np.sqrt(2), (draws, gaps.size))
    half_b = gaps + rng.normal(0, se * np.sqrt(2), (draws, gaps.size))
    rows = np.arange(draws)

    def kept(estimate):
        return np.argmax(np.abs(estimate) <= delta, axis=1)

    full = (half_a + half_b) / 2
    truth = np.mean(gaps[kept(full)] - full[rows, kept(full)])
    on_a, on_b = kept(half_a), kept(half_b)
    units = ((half_b[rows, on_a] - half_a[rows, on_a]) + (half_a[rows, on_b] - half_b[rows, on_b])) / 2
    est = optimism_estimate(units, 0.5)
    assert truth > 0.005
    assert abs(est.value - truth) <= 0.15 * truth
    assert est.raw >= 1.3 * truth


# -- level of the criterion for a fixed tree: simulated, truth known -----------------


@pytest.mark.parametrize(
    "rates,sizes",
    [
        ([[0.30, 0.25]], [[2400, 1200]]),                     # statistical parity, Adult-sized groups
        ([[0.60, 0.55], [0.10, 0.05]], [[600, 300], [1800, 900]]),  # equalized odds, true gap on both
        ([[0.06, 0.01]], [[400, 200]]),                       # rates near 0
        ([[0.50, 0.45]], [[80, 60]]),                         # small groups
    ],
)
def test_margin_criterion_accepts_a_tree_whose_true_gap_is_delta_at_most_alpha_of_the_time(rates, sizes):
    """For a fixed tree (no selection) whose true gap is exactly delta, R <= alpha is the error event."""
    rng = np.random.default_rng(11)
    draws, alpha, delta = 20_000, 0.1, 0.05
    rates, sizes = np.asarray(rates), np.asarray(sizes)
    k = rng.binomial(sizes[None], rates[None], size=(draws,) + rates.shape)
    n = np.broadcast_to(sizes, k.shape)
    diffs = Differences(k[:, :, 0].astype(float), n[:, :, 0].astype(float), k[:, :, 1].astype(float),
                        n[:, :, 1].astype(float))
    est, se = np.abs(diffs.estimate), diffs.standard_error
    r = np.sum(norm.sf((delta - est) / se) + norm.sf((delta + est) / se), axis=1)
    accepted = (r <= alpha).mean()
    assert accepted <= alpha + 3 * np.sqrt(alpha * (1 - alpha) / draws)


# -- tiny fits -------------------------------------------------------------------------


def _population(n: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """Six binary features, each more common in group 'b' by a different tilt, all raising y:
    the accurate trees are unfair by degrees, so a bound has trees near it to choose from."""
    rng = np.random.default_rng(seed)
    group = rng.choice(["a", "b"], n, p=[0.6, 0.4])
    cols = {}
    for j, tilt in enumerate([0.3, 0.2, 0.1, 0.05, 0.0, 0.0]):
        cols[f"x{j}"] = (rng.random(n) < 0.5 + np.where(group == "b", tilt, -tilt)).astype(int)
    X = pd.DataFrame(cols)
    logit = -2.2 + 1.5 * X.x0 + 1.0 * X.x1 + 0.8 * X.x2 + 0.6 * X.x3 + 0.5 * X.x4 + 0.4 * X.x5
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    X["group"] = group
    return X, y


def _gap(pred, y, group) -> float:
    rates = [np.mean(pred[group == g] == 1) for g in ("a", "b")]
    return abs(rates[0] - rates[1])


def test_margin_promise_tightens_the_training_bound_and_records_it():
    X, y = _population(1500, 2)  # the tree at 5 pp has training gap 4.3 pp and risk 0.40
    today = StrongTreeClassifier(depth=2, fairness="statistical_parity", fairness_bound=0.05, time_limit=30)
    today.fit(X, y, sensitive_features="group")
    clf = StrongTreeClassifier(depth=2, fairness="statistical_parity", fairness_bound=0.05,
                               fairness_confidence=0.9, fairness_confidence_method="margin", time_limit=30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrivialTreeWarning)
        clf.fit(X, y, sensitive_features="group")
    promise = clf.fairness_promise_
    assert clf.record_.promise == promise.to_dict()
    assert promise.method == "margin" and promise.guarantee.startswith("asymptotic")
    assert promise.rounds[0].training_bound == 0.05 and not promise.rounds[0].certified
    assert promise.training_bound < 0.05
    pred = clf.predict(X)
    assert _gap(pred, y, X["group"].to_numpy()) <= promise.training_bound + 1e-12  # re-measured
    assert promise.training_accuracy == pytest.approx(np.mean(pred == y))
    assert promise.accuracy_at_delta == pytest.approx(np.mean(today.predict(X) == y))
    assert not promise.constant  # these rows have a tree that keeps it (tests/test_promise_fits.py recomputes it)
    # the returned tree's own risk is within 1 - c
    diffs = _diffs(*[
        (np.sum(pred[X["group"] == "a"]), np.sum(X["group"] == "a"), np.sum(pred[X["group"] == "b"]),
         np.sum(X["group"] == "b"))
    ])
    assert risk(diffs, 0.05) <= 0.1 + 1e-9
    assert f"{100 * promise.training_bound:.2f} pp" in clf.record_.message
    # the tree keeps the promise in its JSON, and the record without one has no such key
    back = FittedTree.from_json(clf.tree_.to_json())
    assert back.record.promise == clf.record_.promise
    assert "promise" not in today.record_.to_dict() and "fairness_promise" not in today.tree_.to_dict()
    assert json.loads(clf.tree_.to_json())["record"].get("promise") is None


def test_only_a_constant_tree_keeps_an_impossible_promise_and_says_so():
    X, y = _population(300, 1)
    clf = StrongTreeClassifier(depth=2, fairness="equalized_odds", fairness_bound=0.01, fairness_confidence=0.95,
                               fairness_confidence_method="margin", time_limit=30)
    with pytest.warns(TrivialTreeWarning) as caught:
        clf.fit(X, y, sensitive_features="group")
    promise = clf.fairness_promise_
    assert promise.constant and np.unique(clf.predict(X)).size == 1
    assert promise.message.startswith("Only a constant tree keeps the promise")
    said = claim(clf.record_)  # the warning says what every surface says: the claim's words
    assert [str(w.message) for w in caught if w.category is TrivialTreeWarning] == [said.words], caught
    assert said.words.startswith("Only a constant tree keeps the promise on new rows: it predicts")
    assert f"estimated at {100 * promise.smallest_delta:.1f} pp" in said.words and "Proven optimal" not in said.words
    assert promise.smallest_delta is not None and promise.smallest_delta > 0.01
    tried = [r.training_bound for r in promise.rounds if not r.constant]
    assert min(tried) >= TIGHTEST_SHARE * 0.01 - 1e-15  # never exactly 0 (slow to prove, no better)
    assert f"down to {100 * TIGHTEST_SHARE * 0.01:.2f} pp" in promise.message
    assert f"{100 * promise.smallest_delta:.1f} pp" in promise.message
    assert clf.baseline_accuracy_ == pytest.approx(max(np.mean(y), 1 - np.mean(y)))


def test_holdout_promise_fits_on_part_of_the_rows_and_is_marked_proved():
    X, y = _population(4000, 2)
    clf = StrongTreeClassifier(depth=2, fairness="statistical_parity", fairness_bound=0.12, fairness_confidence=0.9,
                               fairness_confidence_method="holdout", time_limit=30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrivialTreeWarning)
        clf.fit(X, y, sensitive_features="group")
    promise = clf.fairness_promise_
    assert promise.method == "holdout" and promise.guarantee.startswith("finite-sample")
    bounds = [r.training_bound for r in promise.rounds]
    assert bounds == sorted(bounds)  # tightest first
    assert promise.rounds[0].training_bound == pytest.approx(TIGHTEST_SHARE * 0.12)  # tightest first, not 0
    assert not promise.constant and promise.rows_used < 4000
    assert _gap(clf.predict(X), y, X["group"].to_numpy()) <= promise.training_bound + 1e-12


def test_fairness_confidence_needs_a_notion_and_a_valid_level():
    X, y = _population(100, 3)
    with pytest.raises(StrongTreeError) as err:
        StrongTreeClassifier(fairness_confidence=0.9).fit(X[["x1", "x2"]], y)
    assert str(err.value) == CONFIDENCE_WITHOUT_FAIRNESS
    with pytest.raises(ValueError):
        StrongTreeClassifier(fairness="statistical_parity", fairness_confidence=1.0).fit(X, y, sensitive_features="group")


def test_promise_round_trips_as_a_value():
    X, y = _population(600, 4)
    clf = StrongTreeClassifier(depth=1, fairness="statistical_parity", fairness_bound=0.05, fairness_confidence=0.9,
                               fairness_confidence_method="margin", time_limit=30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrivialTreeWarning)
        clf.fit(X, y, sensitive_features="group")
    assert FairnessPromise.from_dict(json.loads(json.dumps(clf.fairness_promise_.to_dict()))) == clf.fairness_promise_


@pytest.mark.parametrize("method", ["subsample", "bootstrap"])
def test_resampling_promise_is_the_margin_from_delta_minus_the_estimated_optimism(method):
    X, y = _population(4000, 2)
    clf = StrongTreeClassifier(depth=2, fairness="statistical_parity", fairness_bound=0.05, fairness_confidence=0.9,
                               fairness_confidence_method=None if method == "subsample" else method, time_limit=60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrivialTreeWarning)
        clf.fit(X, y, sensitive_features="group")
    promise = clf.fairness_promise_
    assert promise.method == method  # subsample is the default, for the measured reason in the docs
    assert promise.optimism == pytest.approx(np.sqrt(0.5) * promise.optimism_at_resample)
    assert promise.optimism_sd > 0
    assert f"{100 * promise.optimism_at_resample:.2f} pp at n/2 rows, rescaled by sqrt(1/2) to " \
           f"{100 * promise.optimism:.2f} pp" in promise.details  # the method's own terms, behind the plain words
    pred = clf.predict(X)
    assert _gap(pred, y, X["group"].to_numpy()) <= promise.training_bound + 1e-12
    assert clf.tree_.baseline_accuracy == pytest.approx(clf.baseline_accuracy_)
    assert not promise.constant  # the returned tree passes the margin taken from delta - optimism, its variance added
    group = X["group"].to_numpy()
    diffs = _diffs((np.sum(pred[group == "a"]), np.sum(group == "a"), np.sum(pred[group == "b"]),
                    np.sum(group == "b")))
    assert risk(diffs, 0.05 - max(0.0, promise.optimism), promise.optimism_sd ** 2) <= 0.1 + 1e-9


def test_crossfit_promise_refits_at_the_loosest_bound_whose_out_of_fold_risk_passes():
    X, y = _population(1200, 2)
    clf = StrongTreeClassifier(depth=1, fairness="statistical_parity", fairness_bound=0.05, fairness_confidence=0.9,
                               fairness_confidence_method="crossfit", time_limit=60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrivialTreeWarning)
        clf.fit(X, y, sensitive_features="group")
    promise = clf.fairness_promise_
    assert promise.method == "crossfit" and promise.guarantee.startswith("asymptotic")
    tried = [r for r in promise.rounds if not r.constant]
    assert [r.training_bound for r in tried] == sorted((r.training_bound for r in tried), reverse=True)
    assert all(not r.certified for r in tried[:-1])  # stopped at the first bound that passed
    assert all(r.risk > 0.1 for r in tried[:-1])
    assert not promise.constant
    assert tried[-1].certified and tried[-1].risk <= 0.1
    assert promise.training_bound == tried[-1].training_bound
    assert _gap(clf.predict(X), y, X["group"].to_numpy()) <= promise.training_bound + 1e-12
    json.loads(clf.tree_.to_json())  # rounds without a training accuracy still make valid JSON
