"""How the promise's driver spends its fits: the table read and binarized once, the refits on parts
of the rows on ``n_jobs`` threads with incumbents to start from, and the same promise whatever the
number of threads; a coding with thresholds made again on each part, as a fit on that part would."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

from strongtree_core import StrongTreeClassifier, TrivialTreeWarning
from strongtree_core.estimator import classifier as estimator_module
from strongtree_core.metrics.promise import SUBSAMPLE_PAIRS, half_sample_pairs
from test_promise import _population
from test_promise_fits import excess_by_hand, sp_rows


def promised(method=None, n_jobs=1, depth=2, delta=0.05) -> StrongTreeClassifier:
    return StrongTreeClassifier(depth=depth, fairness="statistical_parity", fairness_bound=delta,
                                fairness_confidence=0.9, fairness_confidence_method=method, time_limit=60,
                                n_jobs=n_jobs)


def fit(model, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrivialTreeWarning)
        return model.fit(X, y, sensitive_features="group")


@pytest.fixture
def spy(monkeypatch):
    """Every call of ``_encode`` and of ``_fit_encoded``: (rows, incumbents offered, thread)."""
    calls = {"encode": 0, "fits": []}
    encode, fit_encoded = estimator_module.StrongTreeClassifier._encode, estimator_module.StrongTreeClassifier._fit_encoded

    def counted_encode(self, *args, **kwargs):
        calls["encode"] += 1
        return encode(self, *args, **kwargs)

    def counted_fit(self, train, encoded, *args):
        starts = args[4] if len(args) > 4 else ()  # (fairness, started, progress, stop, starts)
        calls["fits"].append((len(train.y_index), len(starts), threading.get_ident(), float(self.fairness_bound)))
        return fit_encoded(self, train, encoded, *args)

    monkeypatch.setattr(estimator_module.StrongTreeClassifier, "_encode", counted_encode)
    monkeypatch.setattr(estimator_module.StrongTreeClassifier, "_fit_encoded", counted_fit)
    return calls


def test_the_table_is_binarized_once_and_the_halves_start_from_trees(spy):
    X, y = _population(4000, 2)
    clf = fit(promised(), X, y)
    assert not clf.fairness_promise_.constant
    assert spy["encode"] == 1  # a 0/1 table: every refit takes the first fit's binary features
    halves = [f for f in spy["fits"] if f[0] < 4000]
    assert len(halves) == 2 * SUBSAMPLE_PAIRS
    assert [f[1] for f in halves] == [1, 2] * SUBSAMPLE_PAIRS  # the fit at delta; and the pair's first half
    assert sorted(f[0] for f in halves[:2]) == sorted(len(part) for part in half_sample_pairs(
        (X["group"].to_numpy() == "b").astype(int) * 2 + y, SUBSAMPLE_PAIRS)[0])
    whole = [f for f in spy["fits"] if f[0] == 4000]
    assert all(f[1] == 0 for f in whole)  # a fit on all rows is offered nothing: a plain fit's tree


@pytest.mark.parametrize("method", [None, "bootstrap", "crossfit"])
def test_two_threads_give_the_same_promise_as_one(method, spy):
    X, y = _population(4000, 2)
    one = fit(promised(method, n_jobs=1, depth=2 if method != "crossfit" else 1), X, y)
    spy["fits"].clear()
    two = fit(promised(method, n_jobs=2, depth=2 if method != "crossfit" else 1), X, y)
    assert two.fairness_promise_ == one.fairness_promise_
    assert np.array_equal(two.predict(X), one.predict(X))
    parts = [f for f in spy["fits"] if f[1] > 0]  # the refits on parts (each offered the fit at delta at least)
    assert len(parts) >= 4 and len({f[2] for f in parts}) >= 2 and threading.get_ident() not in {f[2] for f in parts}
    assert {f[2] for f in spy["fits"] if f[1] == 0} == {threading.get_ident()}  # the fits on all rows: the caller's


def test_a_coding_with_thresholds_is_made_again_on_each_half(spy):
    """A continuous column: each half's fit chooses its own thresholds (the other half unseen), as a
    plain fit on that half does; the optimism is the mean excess of such plain fits."""
    X, y = _population(1500, 3)
    rng = np.random.default_rng(3)
    X["score"] = X["x0"] * 2.0 + rng.normal(0, 1, len(X))  # continuous: thresholds chosen from the rows
    clf = fit(promised(depth=1, delta=0.06), X, y)
    promise = clf.fairness_promise_
    assert spy["encode"] == 1 + 2 * SUBSAMPLE_PAIRS  # each half binarized anew: ordinary fits
    assert not [f for f in spy["fits"] if f[0] < 1500 and f[1]]  # and nothing offered over other features
    group = X["group"].to_numpy()
    units = []
    for a, b in half_sample_pairs((group == "b").astype(int) * 2 + y, SUBSAMPLE_PAIRS):
        pair = []
        for part, fresh in ((a, b), (b, a)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = StrongTreeClassifier(depth=1, fairness="statistical_parity", fairness_bound=0.06,
                                             time_limit=60).fit(X.iloc[part].reset_index(drop=True), y[part],
                                                                sensitive_features="group")
            pred = model.predict(X) == 1
            pair.append(excess_by_hand(sp_rows(pred[part], group[part]), sp_rows(pred[fresh], group[fresh])))
        units.append(np.mean(pair))
    assert promise.optimism_at_resample == pytest.approx(np.mean(units), abs=1e-12)


def test_halves_carry_their_rows_weights():
    """With weights (0 leaves a row out), each half's fit weighs its rows as a plain fit on that half does."""
    X, y = _population(2000, 5)
    w = np.where(np.arange(2000) % 9 == 0, 0.0, np.where(np.arange(2000) % 4 == 0, 3.0, 1.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrivialTreeWarning)
        clf = promised(depth=2, delta=0.06).fit(X, y, sensitive_features="group", sample_weight=w)
    group = X["group"].to_numpy()
    strata = np.where(w > 0, (group == "b").astype(int) * 2 + y, -1)
    units = []
    for a, b in half_sample_pairs(strata, SUBSAMPLE_PAIRS):
        pair = []
        for part, fresh in ((a, b), (b, a)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = StrongTreeClassifier(depth=2, fairness="statistical_parity", fairness_bound=0.06,
                                             time_limit=60).fit(X.iloc[part].reset_index(drop=True), y[part],
                                                                sensitive_features="group", sample_weight=w[part])
            pred = model.predict(X) == 1
            pair.append(excess_by_hand(sp_rows(pred[part], group[part]), sp_rows(pred[fresh], group[fresh])))
        units.append(np.mean(pair))
    assert clf.fairness_promise_.optimism_at_resample == pytest.approx(np.mean(units), abs=1e-12)


def test_refits_are_judged_on_the_first_fits_binary_features_without_encoding_the_table_again(monkeypatch):
    """A 0/1 table, every row kept: the halves' trees and the margin's are judged on the binary features
    of the first fit; the table is encoded only by that fit (and by nothing after it)."""
    from strongtree_core.encoding.binarize import EncodingPlan

    X, y = _population(3000, 2)
    transforms = []
    transform = EncodingPlan.transform

    def counted(self, df, *args, **kwargs):
        transforms.append(len(df))
        return transform(self, df, *args, **kwargs)

    monkeypatch.setattr(EncodingPlan, "transform", counted)
    clf = fit(promised(), X, y)
    assert not clf.fairness_promise_.constant and len(clf._promise_fits) >= 2  # halves and a refit were judged
    assert len(transforms) <= 1  # the first fit's encoding only (an encoder may build it without transform)
    monkeypatch.setattr(EncodingPlan, "transform", transform)
    # and the judgments are those of the table encoded again (the optimism recomputed from plain fits)
    group = X["group"].to_numpy()
    units = []
    for a, b in half_sample_pairs((group == "b").astype(int) * 2 + y, SUBSAMPLE_PAIRS):
        pair = []
        for part, fresh in ((a, b), (b, a)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = StrongTreeClassifier(depth=2, fairness="statistical_parity", fairness_bound=0.05,
                                             time_limit=60).fit(X.iloc[part].reset_index(drop=True), y[part],
                                                                sensitive_features="group")
            pred = model.predict(X) == 1
            pair.append(excess_by_hand(sp_rows(pred[part], group[part]), sp_rows(pred[fresh], group[fresh])))
        units.append(np.mean(pair))
    assert clf.fairness_promise_.optimism_at_resample == pytest.approx(np.mean(units), abs=1e-12)


def test_on_threads_every_first_half_is_started_before_any_second_half():
    """Five pairs on two threads: the second halves wait for their own first halves, and none is taken
    by a thread while a first half still waits for one (else a thread would sit idle in a sixth round).
    A second half here waits for the last first half to start: were a pair one task, both threads would
    hold a pair whose first half never lets the others start."""
    from strongtree_core.estimator.promise_fit import _PromiseRun

    run = _PromiseRun.__new__(_PromiseRun)
    run.workers = 2
    last_started = threading.Event()
    order = []

    def first(i):
        def task():
            order.append(("first", i))
            if i == 4:
                last_started.set()
            return i * 10
        return task

    def then(i):
        def after(done):
            assert last_started.wait(timeout=20), "a second half was taken before every first half"
            order.append(("second", i))
            return (i, done)
        return after

    results = run.on_workers([first(i) for i in range(5)], [then(i) for i in range(5)])
    assert results == [(i, i * 10) for i in range(5)]  # each second half got its own first half's result, in order
    assert sorted(order[:5]) == [("first", i) for i in range(5)]
    # one thread: pair after pair, each second half right after its first
    run.workers = 1
    order.clear()
    last_started.set()
    assert run.on_workers([first(i) for i in range(3)], [then(i) for i in range(3)]) == [(i, i * 10) for i in range(3)]
    assert order == [("first", 0), ("second", 0), ("first", 1), ("second", 1), ("first", 2), ("second", 2)]


@pytest.mark.parametrize("classes, values", [
    (np.array([0, 1]), np.array([1, 0, 1, 1])),
    (np.array(["no", "yes"], dtype=object), np.array(["yes", "no", "no"], dtype=object)),
    (np.array([1.5, 2.0, 7.0]), np.array([7.0, 1.5, 2.0, 2.0])),
    (np.array([False, True]), np.array([True, True, False])),
])
def test_class_index_is_the_first_equal_class(classes, values):
    from strongtree_core.estimator.promise_fit import _class_index

    assert _class_index(classes, values).tolist() == [int(np.flatnonzero(classes == v)[0]) for v in values]
