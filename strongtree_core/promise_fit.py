"""Fit a :class:`~strongtree_core.estimator.StrongTreeClassifier` that keeps a fairness promise
on new rows (``fairness_confidence``): the driver of :mod:`strongtree_core.promise`.

Each tree is an ordinary fit of a copy of the estimator (``fairness_confidence=None``) at a
training bound, on all training rows (margin) or on the fitting part (holdout), sharing
the estimator's ``time_limit``; the chosen copy's fitted attributes become the
estimator's, and its record carries the promise.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
from sklearn.base import clone

from strongtree_core.errors import TrivialTreeWarning
from strongtree_core.trivial import baseline_accuracy
from strongtree_core.metrics._inputs import _labels
from strongtree_core.promise import (
    BOOTSTRAP_FITS,
    Differences,
    CROSSFIT_FOLDS,
    HOLDOUT_STEPS,
    MARGIN_ROUNDS,
    Fitted,
    holdout_split,
    is_constant,
    run_crossfit,
    run_holdout,
    run_margin,
    tree_differences,
)

#: Seconds every fit of the promise gets at least.
MIN_FIT_SECONDS = 1.0


def _names_given(spec, table: pd.DataFrame) -> bool:
    if isinstance(spec, (str, int)):
        return spec in table.columns
    return (isinstance(spec, (list, tuple)) and len(spec) > 0 and len(spec) != len(table)
            and all(isinstance(s, (str, int)) and s in table.columns for s in spec))


def _subset(spec, table: pd.DataFrame, rows: np.ndarray):
    """The group argument for a fit on ``rows``: names stay names, values are cut to the rows."""
    if spec is None or _names_given(spec, table):
        return spec
    if isinstance(spec, (pd.Series, pd.DataFrame)):
        return spec.reset_index(drop=True).iloc[rows].reset_index(drop=True)
    arr = np.asarray(spec, dtype=object)
    return arr[rows]


def _codes(spec, table: pd.DataFrame, what: str) -> np.ndarray | None:
    if spec is None:
        return None
    values = table[[spec] if isinstance(spec, (str, int)) else list(spec)] if _names_given(spec, table) else spec
    labels = _labels(values, what, len(table))
    return pd.factorize(pd.Series(labels, dtype=object), sort=True)[0]


def fit_with_promise(est, X, y, *, sample_weight=None, sensitive_features=None, legitimate_features=None,
                     progress=None, stop=None):
    """Fit ``est`` so that its tree keeps the fairness promise; returns ``est``."""
    started = time.perf_counter()
    deadline = started + float(est.time_limit)
    confidence = float(est.fairness_confidence)
    method = est.fairness_confidence_method
    delta = float(est.fairness_bound)
    table = X.reset_index(drop=True) if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X)).rename(
        columns=lambda j: f"x{j}")
    y_arr = np.asarray(y).reshape(-1) if not isinstance(y, pd.Series) else y.reset_index(drop=True).to_numpy()
    n = len(table)
    weight = None if sample_weight is None else np.asarray(sample_weight, dtype=float).reshape(-1)
    caught: dict[int, list] = {}
    planned = [{"margin": 3, "bootstrap": 3 + BOOTSTRAP_FITS,
                "crossfit": 3 + 3 * CROSSFIT_FOLDS}.get(method, len(HOLDOUT_STEPS) + 2)]

    def copy(bound: float, **extra):
        remaining = deadline - time.perf_counter()
        share = max(MIN_FIT_SECONDS, remaining / max(1, planned[0]))
        planned[0] = max(1, planned[0] - 1)
        return clone(est).set_params(fairness_confidence=None, fairness_bound=float(bound), time_limit=share, **extra)

    def fit_rows(model, rows: np.ndarray | None):
        Xs = table if rows is None else table.iloc[rows].reset_index(drop=True)
        ys = y_arr if rows is None else y_arr[rows]
        ws = weight if (weight is None or rows is None) else weight[rows]
        sf = sensitive_features if rows is None else _subset(sensitive_features, table, rows)
        lf = legitimate_features if rows is None else _subset(legitimate_features, table, rows)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            model.fit(Xs, ys, sample_weight=ws, sensitive_features=sf, legitimate_features=lf,
                      progress=progress, stop=stop)
        caught[id(model)] = seen
        return model

    first = fit_rows(copy(delta), None)  # checks every input as an ordinary fit does
    classes = first.classes_
    positive_index = 1 if est.pos_label is None else int(np.flatnonzero(classes == est.pos_label)[0])
    positive_label = classes[positive_index]
    notions = est._fairness_list()
    group = _codes(sensitive_features, table, "sensitive_features")
    legit = _codes(legitimate_features, table, "legitimate_features")
    keep = np.ones(n, dtype=bool) if weight is None else weight > 0  # rows of weight 0 are absent
    y_pos = y_arr == positive_label
    n_groups = int(group.max()) + 1

    def judged(model, rows: np.ndarray, bound: float) -> Fitted:
        pred_all = np.asarray(model.predict(table))
        acc = float(np.average(pred_all[keep] == y_arr[keep], weights=None if weight is None else weight[keep]))
        sub = rows[keep[rows]]
        diffs = tree_differences(notions, y_pos[sub], pred_all[sub] == positive_label, group[sub], n_groups,
                                 None if legit is None else legit[sub])
        return Fitted(model, bound, is_constant(model.tree_.structure), acc, diffs)

    everyone = np.arange(n)

    def bootstrap_optimism() -> float:
        """Mean over bootstrap refits at delta of (gap out of bag - gap in bag)."""
        rng = np.random.default_rng(0)
        rows = np.flatnonzero(keep)
        excess = []
        for _ in range(BOOTSTRAP_FITS):
            drawn = rng.choice(rows, size=rows.size, replace=True)
            out = np.setdiff1d(rows, drawn)
            model = fit_rows(copy(delta), drawn)
            pred = np.asarray(model.predict(table)) == positive_label
            gaps = [tree_differences(notions, y_pos[r], pred[r], group[r], n_groups,
                                     None if legit is None else legit[r]).gap for r in (drawn, out)]
            excess.append(gaps[1] - gaps[0])
        return float(np.mean(excess))
    fits: list[tuple[float, object]] = [(delta, first.tree_)]  # every tree fitted, for the record of a study

    def fit_constant() -> Fitted:
        model = fit_rows(copy(0.0, depth=0), None)
        return judged(model, everyone, 0.0)

    if method in ("margin", "bootstrap"):
        cache = {delta: first}
        optimism = bootstrap_optimism() if method == "bootstrap" else 0.0

        def fit_at(t: float) -> Fitted:
            model = cache.pop(t, None)
            if model is None:
                model = fit_rows(copy(t), None)
                fits.append((t, model.tree_))
            return judged(model, everyone, t)

        chosen, promise = run_margin(fit_at, fit_constant, delta=delta, confidence=confidence, n_rows=n,
                                     optimism=optimism, method=method)
        if method == "bootstrap":
            promise = replace(promise, optimism=optimism, message=promise.message + (
                f" The bootstrap ({BOOTSTRAP_FITS} refits) estimates the fit's optimism, out-of-bag gap minus "
                f"in-bag gap, at {100 * optimism:.2f} pp; the margin is taken from {100 * (delta - max(0.0, optimism)):.2f} pp."))
    elif method == "crossfit":
        strata = np.where(keep, group * 2 + y_pos.astype(int), -1)
        rng = np.random.default_rng(0)
        fold = np.full(n, -1)
        for s_ in np.unique(strata[strata >= 0]):
            members = rng.permutation(np.flatnonzero(strata == s_))
            fold[members] = np.arange(members.size) % CROSSFIT_FOLDS

        def out_of_fold_at(t: float):
            """Each fold's tree judged on its own held-out fold; the estimate of every difference is the
            mean over folds of its absolute value (pooling the predictions instead would let trees whose
            gaps differ average out), carried on the counts of all rows for the standard error."""
            per_fold = []
            for f in range(CROSSFIT_FOLDS):
                model = fit_rows(copy(t), np.flatnonzero((fold != f) & (fold >= 0)))
                rows = np.flatnonzero(fold == f)
                said = np.asarray(model.predict(table.iloc[rows].reset_index(drop=True))) == positive_label
                per_fold.append(tree_differences(notions, y_pos[rows], said, group[rows], n_groups,
                                                 None if legit is None else legit[rows]))
            rows = np.flatnonzero(keep)
            pooled = tree_differences(notions, y_pos[rows], np.zeros(rows.size, dtype=bool), group[rows], n_groups,
                                      None if legit is None else legit[rows])
            mean_abs = np.mean([np.abs(d.estimate) for d in per_fold], axis=0)
            rate_b = np.mean([d.k_b / d.n_b for d in per_fold], axis=0)
            # counts of all rows with the fold trees' mean rates: d = rate_a - rate_b = mean |d_f|
            k_b = rate_b * pooled.n_b
            k_a = np.clip(rate_b + mean_abs, 0, 1) * pooled.n_a
            return Differences(k_a, pooled.n_a, k_b, pooled.n_b)

        def fit_all_at(t: float) -> Fitted:
            model = fit_rows(copy(t), None)
            fits.append((t, model.tree_))
            return judged(model, everyone, t)

        chosen, promise = run_crossfit(out_of_fold_at, fit_all_at, fit_constant, judged(first, everyone, delta),
                                       delta=delta, confidence=confidence, n_rows=n)
    else:
        strata = group * 2 + y_pos.astype(int)
        if legit is not None:
            strata = strata * (int(legit.max()) + 1) + legit
        held = holdout_split(np.where(keep, strata, -1))
        fit_part = np.flatnonzero(~held)
        held_rows = np.flatnonzero(held)

        def fit_at(t: float) -> Fitted:
            model = fit_rows(copy(t), fit_part)
            fits.append((t, model.tree_))
            return judged(model, held_rows, t)

        chosen, promise = run_holdout(fit_at, fit_constant, lambda: judged(first, everyone, delta), delta=delta,
                                      confidence=confidence, n_rows=n, n_fit_rows=int(fit_part.size))
    model = chosen.model
    for key, value in vars(model).items():
        if key.endswith("_") or key.startswith("_") and not key.startswith("__"):
            setattr(est, key, value)
    record = replace(model.record_, message=" ".join(filter(None, [model.record_.message, promise.message])),
                     promise=promise.to_dict())
    est.record_ = record
    est.tree_ = replace(model.tree_, record=record)
    est.fairness_promise_ = promise
    est._promise_fits = tuple(fits)
    constant_only = promise.constant and promise.message.startswith("Only a constant tree")
    for w in caught.get(id(model), []):  # what the chosen fit said, once
        if not (constant_only and issubclass(w.category, TrivialTreeWarning)):
            warnings.warn(w.message, w.category, stacklevel=3)
    if constant_only:
        warnings.warn(promise.message, TrivialTreeWarning, stacklevel=3)
    classes_all = np.asarray(est.classes_)
    y_index = np.searchsorted(classes_all, y_arr[keep]) if classes_all.dtype != object else np.array(
        [int(np.flatnonzero(classes_all == v)[0]) for v in y_arr[keep]])
    est.baseline_accuracy_ = baseline_accuracy(y_index, classes_all.size, None if weight is None else weight[keep])[0]
    return est


__all__ = ["fit_with_promise", "MARGIN_ROUNDS"]
