"""The promise on real fits whose answer is a tree, not a constant: every method on data chosen so
that the tree at delta fails, a tighter training bound is found and the tree there keeps the promise.
Each value the promise records is recomputed independently: the risks and the tightened bound from
the trees' predictions (brentq on the normal tails), the optimism from plain fits on the same halves,
resamples or folds judged on the rows they did not see, the holdout verdicts from binomial tails, and
the returned tree's optimality from a plain fit at the bound it was fitted under."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from strongtree_core import StrongTreeClassifier, TrivialTreeWarning
from strongtree_core.metrics.promise import (
    BOOTSTRAP_FITS,
    CROSSFIT_FOLDS,
    CROSSFIT_STEPS,
    HOLDOUT_STEPS,
    SUBSAMPLE_PAIRS,
    half_sample_pairs,
    holdout_split,
)
from test_promise import _population
from test_promise_rounds import ALPHA, certified_by_hand, risk_of, tightened_of


def plain(depth: int, bound: float, notion: str = "statistical_parity") -> StrongTreeClassifier:
    return StrongTreeClassifier(depth=depth, fairness=notion, fairness_bound=bound, time_limit=60)


def promised(depth: int, delta: float, method: str | None, notion: str = "statistical_parity") -> StrongTreeClassifier:
    return StrongTreeClassifier(depth=depth, fairness=notion, fairness_bound=delta, fairness_confidence=0.9,
                                fairness_confidence_method=method, time_limit=60)


def fit(model, X, y, rows=None, **kw):
    Xs, ys = (X, y) if rows is None else (X.iloc[rows].reset_index(drop=True), y[rows])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrivialTreeWarning)
        return model.fit(Xs, ys, sensitive_features="group", **kw)


def sp_rows(positive: np.ndarray, group: np.ndarray) -> list[tuple[int, int, int, int]]:
    """Statistical parity's one difference between groups 'a' and 'b': (k_a, n_a, k_b, n_b)."""
    a, b = group == "a", group == "b"
    return [(int(positive[a].sum()), int(a.sum()), int(positive[b].sum()), int(b.sum()))]


def eo_rows(positive: np.ndarray, y: np.ndarray, group: np.ndarray) -> list[tuple[int, int, int, int]]:
    """Equalized odds' two differences: among the positive rows and among the others."""
    return [sp_rows(positive[y == c], group[y == c])[0] for c in (1, 0)]


def gap(rows) -> float:
    return max(abs(k_a / n_a - k_b / n_b) for k_a, n_a, k_b, n_b in rows)


def excess_by_hand(inside, outside) -> float:
    """Each difference read in the direction it had where the tree was fitted."""
    d_in = np.array([k_a / n_a - k_b / n_b for k_a, n_a, k_b, n_b in inside])
    d_out = np.array([k_a / n_a - k_b / n_b for k_a, n_a, k_b, n_b in outside])
    directed = np.where(d_in == 0, np.abs(d_out), np.sign(d_in) * d_out)
    return float(directed.max() - np.abs(d_in).max())


def check_tightened_round(clf, X, y, group, delta, *, target=None, extra=0.0, rows_of=None):
    """The tree at delta fails; the next bound is the root for that tree's errors; the tree there passes."""
    rows_of = rows_of or (lambda positive: sp_rows(positive, group))
    target = delta if target is None else target
    promise = clf.fairness_promise_
    today = fit(plain(clf.depth, delta, clf.fairness), X, y)
    at_delta = rows_of(today.predict(X) == 1)
    first, second = promise.rounds[:2]
    assert first.training_bound == delta and not first.certified and not first.constant
    assert first.risk == pytest.approx(risk_of(at_delta, target, extra), rel=1e-9) and first.risk > ALPHA
    assert first.training_gap == pytest.approx(gap(at_delta), abs=1e-12)
    assert promise.accuracy_at_delta == pytest.approx(np.mean(today.predict(X) == y), abs=1e-12)
    t1 = tightened_of(at_delta, target, extra)
    assert second.training_bound == pytest.approx(t1, abs=1e-9) and t1 < delta
    return t1


def check_returned(clf, X, y, group, bound, *, target, extra=0.0, rows_of=None):
    """The returned tree is not constant, within its training bound, optimal there, and passes."""
    rows_of = rows_of or (lambda positive: sp_rows(positive, group))
    promise = clf.fairness_promise_
    pred = clf.predict(X)
    assert not promise.constant and np.unique(pred).size == 2
    assert promise.training_bound == pytest.approx(bound, abs=1e-9)
    mine = rows_of(pred == 1)
    assert gap(mine) <= promise.training_bound + 1e-12
    assert promise.rounds[-1].training_gap == pytest.approx(gap(mine), abs=1e-12)
    assert promise.rounds[-1].certified
    assert promise.rounds[-1].risk == pytest.approx(risk_of(mine, target, extra), rel=1e-9)
    assert risk_of(mine, target, extra) <= ALPHA
    assert promise.training_accuracy == pytest.approx(np.mean(pred == y), abs=1e-12)
    again = fit(plain(clf.depth, promise.training_bound, clf.fairness), X, y)
    assert np.mean(again.predict(X) == y) == pytest.approx(promise.training_accuracy, abs=1e-12)  # optimal there
    assert clf.record_.promise == promise.to_dict() and clf.tree_.record.promise == promise.to_dict()


def test_margin_tightens_once_and_returns_the_tree_fitted_there():
    X, y = _population(1500, 2)
    group = X["group"].to_numpy()
    clf = fit(promised(2, 0.08, "margin"), X, y)
    assert len(clf.fairness_promise_.rounds) == 2  # not constant: the tree at the tightened bound passed
    t1 = check_tightened_round(clf, X, y, group, 0.08)
    check_returned(clf, X, y, group, t1, target=0.08)
    assert clf.fairness_promise_.optimism == 0.0 and clf.fairness_promise_.smallest_delta is None


def test_margin_over_two_differences_sums_their_risks():
    X, y = _population(4000, 2)
    group = X["group"].to_numpy()
    clf = fit(promised(2, 0.08, "margin", "equalized_odds"), X, y)

    def rows_of(positive):
        return eo_rows(positive, y, group)

    t1 = check_tightened_round(clf, X, y, group, 0.08, rows_of=rows_of)
    check_returned(clf, X, y, group, t1, target=0.08, rows_of=rows_of)


def test_margin_measures_only_rows_of_positive_weight():
    X, y = _population(1500, 2)
    group = X["group"].to_numpy()
    w = np.where(np.arange(1500) % 7 == 0, 0.0, np.where(np.arange(1500) % 3 == 0, 2.0, 1.0))
    keep = w > 0
    clf = fit(promised(2, 0.08, "margin"), X, y, sample_weight=w)
    promise = clf.fairness_promise_
    assert not promise.constant and len(promise.rounds) == 2
    pred = clf.predict(X)
    mine = sp_rows(pred[keep] == 1, group[keep])
    assert promise.rounds[-1].risk == pytest.approx(risk_of(mine, 0.08), rel=1e-9)
    assert promise.training_accuracy == pytest.approx(np.average(pred[keep] == y[keep], weights=w[keep]), abs=1e-12)
    today = fit(plain(2, 0.08), X, y, sample_weight=w)
    at_delta = sp_rows(today.predict(X)[keep] == 1, group[keep])
    assert promise.rounds[0].risk == pytest.approx(risk_of(at_delta, 0.08), rel=1e-9)
    assert promise.training_bound == pytest.approx(tightened_of(at_delta, 0.08), abs=1e-9)


def _strata(X, y) -> np.ndarray:
    return (X["group"].to_numpy() == "b").astype(int) * 2 + y


def test_subsample_optimism_is_the_mean_directed_excess_of_plain_fits_on_the_same_halves():
    X, y = _population(4000, 2)
    group = X["group"].to_numpy()
    clf = fit(promised(2, 0.05, None), X, y)  # None: the default method, subsample
    promise = clf.fairness_promise_
    assert promise.method == "subsample"
    units = []
    for a, b in half_sample_pairs(_strata(X, y), SUBSAMPLE_PAIRS):
        pair = []
        for fitted, fresh in ((a, b), (b, a)):
            pred = fit(plain(2, 0.05), X, y, rows=fitted).predict(X) == 1
            pair.append(excess_by_hand(sp_rows(pred[fitted], group[fitted]), sp_rows(pred[fresh], group[fresh])))
        units.append(np.mean(pair))
    assert promise.optimism_at_resample == pytest.approx(np.mean(units), abs=1e-12)
    assert promise.optimism == pytest.approx(np.sqrt(0.5) * np.mean(units), abs=1e-12)
    assert promise.optimism_sd == pytest.approx(np.sqrt(0.5) * np.std(units, ddof=1) / np.sqrt(len(units)), abs=1e-12)
    target, extra = 0.05 - max(0.0, promise.optimism), promise.optimism_sd ** 2
    t1 = check_tightened_round(clf, X, y, group, 0.05, target=target, extra=extra)
    check_returned(clf, X, y, group, t1, target=target, extra=extra)


def test_bootstrap_optimism_is_the_mean_excess_of_plain_fits_on_resamples_drawn_within_group_and_class():
    X, y = _population(4000, 2)
    group = X["group"].to_numpy()
    clf = fit(promised(2, 0.05, "bootstrap"), X, y)
    promise = clf.fairness_promise_
    rng = np.random.default_rng(0)
    rows = np.arange(len(y))
    cell = _strata(X, y)
    cells = [rows[cell == s] for s in np.unique(cell)]
    units = []
    for _ in range(BOOTSTRAP_FITS):
        drawn = np.sort(np.concatenate([rng.choice(c, size=c.size, replace=True) for c in cells]))
        fresh = np.setdiff1d(rows, drawn)
        pred = fit(plain(2, 0.05), X, y, rows=drawn).predict(X) == 1
        units.append(excess_by_hand(sp_rows(pred[drawn], group[drawn]), sp_rows(pred[fresh], group[fresh])))
    assert promise.optimism_at_resample == pytest.approx(np.mean(units), abs=1e-12)
    assert promise.optimism == pytest.approx(np.sqrt(0.5) * np.mean(units), abs=1e-12)
    assert promise.optimism_sd == pytest.approx(np.sqrt(0.5) * np.std(units, ddof=1) / np.sqrt(len(units)), abs=1e-12)
    target, extra = 0.05 - max(0.0, promise.optimism), promise.optimism_sd ** 2
    t1 = check_tightened_round(clf, X, y, group, 0.05, target=target, extra=extra)
    check_returned(clf, X, y, group, t1, target=target, extra=extra)


def test_crossfit_risks_are_the_out_of_fold_differences_of_plain_fits_on_the_same_folds():
    X, y = _population(4000, 2)
    group = X["group"].to_numpy()
    clf = fit(promised(1, 0.05, "crossfit"), X, y)
    promise = clf.fairness_promise_
    rng = np.random.default_rng(0)
    fold = np.full(len(y), -1)
    strata = _strata(X, y)
    for s in np.unique(strata):
        members = rng.permutation(np.flatnonzero(strata == s))
        fold[members] = np.arange(members.size) % CROSSFIT_FOLDS
    (k_a, n_a, k_b, n_b), = sp_rows(np.zeros(len(y), dtype=bool), group)
    expected = []
    for step in CROSSFIT_STEPS:
        per_fold = []
        for f in range(CROSSFIT_FOLDS):
            model = fit(plain(1, step * 0.05), X, y, rows=np.flatnonzero(fold != f))
            held = fold == f
            (ka, na, kb, nb), = sp_rows(model.predict(X)[held] == 1, group[held])
            per_fold.append((ka / na - kb / nb, kb / nb))
        mean_abs = np.mean([abs(d) for d, _ in per_fold])
        rate_b = np.mean([r for _, r in per_fold])
        row = (np.clip(rate_b + mean_abs, 0, 1) * n_a, n_a, rate_b * n_b, n_b)
        expected.append(risk_of([row], 0.05))
        if expected[-1] <= ALPHA:
            break
    assert len(expected) >= 2  # the loosest bound failed
    assert [r.training_bound for r in promise.rounds] == pytest.approx([s * 0.05 for s in CROSSFIT_STEPS[:len(expected)]])
    assert [r.risk for r in promise.rounds] == pytest.approx(expected, rel=1e-9)
    assert [r.certified for r in promise.rounds] == [False] * (len(expected) - 1) + [True]
    pred = clf.predict(X)
    assert not promise.constant and np.unique(pred).size == 2
    bound = CROSSFIT_STEPS[len(expected) - 1] * 0.05
    assert promise.training_bound == pytest.approx(bound)
    assert gap(sp_rows(pred == 1, group)) <= bound + 1e-12
    again = fit(plain(1, bound), X, y)
    assert promise.training_accuracy == pytest.approx(np.mean(again.predict(X) == y), abs=1e-12)
    assert promise.accuracy_at_delta == pytest.approx(np.mean(fit(plain(1, 0.05), X, y).predict(X) == y), abs=1e-12)


def test_holdout_verdicts_are_the_exact_test_on_the_held_out_rows_of_plain_fits_on_the_rest():
    X, y = _population(4000, 2)
    group = X["group"].to_numpy()
    clf = fit(promised(2, 0.12, "holdout"), X, y)
    promise = clf.fairness_promise_
    held = holdout_split(_strata(X, y))
    rest = np.flatnonzero(~held)
    verdicts, held_gaps, last = [], [], None
    for step in HOLDOUT_STEPS:
        model = fit(plain(2, step * 0.12), X, y, rows=rest)
        pred = model.predict(X)
        constant = np.unique(model.predict(X.iloc[rest])).size == 1
        ok = constant or certified_by_hand(sp_rows(pred[held] == 1, group[held]), 0.12)
        verdicts.append(ok)
        held_gaps.append((gap(sp_rows(pred[held] == 1, group[held])), gap(sp_rows(pred[rest] == 1, group[rest]))))
        if not ok:
            break
        last = (step * 0.12, pred, constant)
    assert [r.certified for r in promise.rounds] == verdicts
    assert [r.held_out_gap for r in promise.rounds] == pytest.approx([h for h, _ in held_gaps], abs=1e-12)
    assert [r.training_gap for r in promise.rounds] == pytest.approx([f for _, f in held_gaps], abs=1e-12)
    assert [r.training_bound for r in promise.rounds] == pytest.approx([s * 0.12 for s in HOLDOUT_STEPS[:len(verdicts)]])
    assert last is not None and not last[2]  # the last certified tree is not constant
    assert not promise.constant and promise.rows_used == rest.size
    assert promise.training_bound == pytest.approx(last[0])
    assert np.array_equal(clf.predict(X), last[1])
    assert promise.training_accuracy == pytest.approx(np.mean(last[1] == y), abs=1e-12)
