"""Fit a :class:`~strongtree_core.estimator.classifier.StrongTreeClassifier` that keeps a fairness promise
on new rows (``fairness_confidence``): the driver of :mod:`strongtree_core.metrics.promise`.

Each tree is a fit of a copy of the estimator (``fairness_confidence=None``) at a training
bound, sharing the estimator's ``time_limit``; the chosen copy's fitted attributes become the
estimator's, and its record carries the promise.

The table is read, checked and binarized once, by the first fit (at delta, on all training
rows); every later fit on all rows takes the same binary features.  The refits on parts of the
rows that estimate the fit's optimism (the subsample's halves, the bootstrap's resamples, the
crossfit's folds) take them too when no threshold of the coding was chosen from the rows (every
column 0/1 or categorical: a part's own coding would be the same, so the rows left out stay
unseen); a coding with thresholds is made again on each part, as the fit on that part alone
would.  Those refits run on ``n_jobs`` threads, and each is offered trees over the same features
as incumbents to start from: the fit at delta on all rows, in a pair of halves the first half's
tree for the second, in a fold its tree at the previous bound.  A fit on all rows is offered none:
its tree is the one a plain fit at its bound returns.  The holdout method's trees are returned as
they are, so they are ordinary fits on the fitting part (its coding sees no held-out row).
"""

from __future__ import annotations

import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import numpy as np
import pandas as pd
from sklearn.base import clone

from strongtree_core import vocabulary
from strongtree_core.accel.threads import one_blas_thread
from strongtree_core.errors import StrongTreeError, TrivialTreeWarning
from strongtree_core.engine.limits import cores_for
from strongtree_core.metrics.promise_cost import PLANNED_FITS
from strongtree_core.tree.context import json_value
from strongtree_core.metrics.trivial import baseline_accuracy
from strongtree_core.numbers import bound_too_small
from strongtree_core.metrics._inputs import _labels
from strongtree_core.metrics.gap_intervals import compared_counts
from strongtree_core.metrics.promise import (
    BOOTSTRAP_FITS,
    CROSSFIT_FOLDS,
    HOLDOUT_SHARE,
    MARGIN_ROUNDS,
    RESAMPLE_SHARE,
    SUBSAMPLE_PAIRS,
    Differences,
    Fitted,
    Optimism,
    excess,
    half_sample_pairs,
    holdout_split,
    is_constant,
    optimism_estimate,
    run_crossfit,
    run_holdout,
    run_margin,
    tree_differences,
)

#: The method used when fairness_confidence_method is None.
DEFAULT_PROMISE_METHOD = next(iter(vocabulary.PROMISE_METHODS))
#: Seconds every fit of the promise gets at least.
MIN_FIT_SECONDS = 1.0
#: Rows each group needs of each class for the methods that refit on parts of the training rows:
#: a half (or a resample drawn within each group and class) then has rows of every group and class.
MIN_STRATUM_ROWS = {"subsample": 2, "bootstrap": 2, "crossfit": CROSSFIT_FOLDS}
PARTS = {"subsample": "halves", "bootstrap": "resamples drawn within each group and class",
         "crossfit": f"{CROSSFIT_FOLDS} folds"}
PROMISE_FEW_ROWS = (
    "fairness_confidence_method={method!r} refits the tree on parts of the training rows ({parts}), so every "
    "group needs at least {need} rows of each class, but group {group!r} has {n} row(s) of class {label!r}. "
    "Collect more rows of that group, merge it with another, or use fairness_confidence_method='margin' "
    "(no refits on parts)."
)
HOLDOUT_TOO_FEW = (
    "The holdout method tests the tree on the {share:.0%} of the training rows it holds out, where group "
    "{group!r} would have {n} held-out row(s) among {cohort}: an exact test at confidence {confidence:.0%} needs at least "
    "{need} held-out rows in every group of every compared cohort to show any gap within {delta:.1f} pp. Use "
    "more rows, a larger fairness_bound, or another method (fairness_confidence_method='subsample')."
)


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


def _codes(spec, table: pd.DataFrame, what: str) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Group codes 0, 1, ... per row and the label of each code (None, None without groups)."""
    if spec is None:
        return None, None
    values = table[[spec] if isinstance(spec, (str, int)) else list(spec)] if _names_given(spec, table) else spec
    labels = _labels(values, what, len(table))
    codes, uniques = pd.factorize(pd.Series(labels, dtype=object), sort=True)
    return codes, np.asarray(uniques, dtype=object)


def _plain(value):
    return value.item() if hasattr(value, "item") else value


def too_few_rows(method: str, group: np.ndarray, labels, y_index: np.ndarray, classes) -> str | None:
    """The refusal when a method that refits on parts of the rows meets a group with too few rows of a class."""
    need = MIN_STRATUM_ROWS.get(method)
    if need is None:
        return None
    for g in range(len(labels)):
        for c, label in enumerate(classes):
            n = int(np.sum((group == g) & (y_index == c)))
            if 0 < n < need:  # none at all is no problem: no part has any either
                return PROMISE_FEW_ROWS.format(method=method, parts=PARTS[method], need=need, group=_plain(labels[g]),
                                               n=n, label=_plain(label))
    return None


def holdout_too_few(cohorts, labels, *, share: float, confidence: float, delta: float) -> str | None:
    """The refusal when the held-out rows cannot certify any gap within delta.

    Clopper-Pearson's one-sided bound at level alpha / 2 on a rate measured as 0 on m rows is
    ``1 - (alpha / 2) ** (1 / m)`` (1 on 1 row), its narrowest; the holdout test needs that
    within delta for both groups of a difference, so ``m >= log(alpha / 2) / log(1 - delta)``
    held-out rows in every group of every compared cohort, or nothing but a constant tree passes.
    """
    if delta <= 0:  # only the constant tree keeps a promise of 0; the method says so itself
        return None
    alpha = 1.0 - confidence
    need = int(np.ceil(np.log(alpha / 2) / np.log1p(-delta)))
    for cohort in cohorts:
        for g in np.flatnonzero(cohort.rows > 0) if len(cohort.pairs()) else ():
            m = int(cohort.rows[g])
            if m < need:
                return HOLDOUT_TOO_FEW.format(share=share, group=_plain(labels[g]), cohort=cohort.label, n=m,
                                              confidence=confidence, need=need, delta=100 * delta)
    return None


def fit_with_promise(est, X, y, *, sample_weight=None, sensitive_features=None, legitimate_features=None,
                     progress=None, stop=None):
    """Fit ``est`` so that its tree keeps the fairness promise; returns ``est``."""
    started = time.perf_counter()
    deadline = started + float(est.time_limit)
    confidence = float(est.fairness_confidence)
    method = est.fairness_confidence_method or DEFAULT_PROMISE_METHOD
    delta = float(est.fairness_bound)
    table = X.reset_index(drop=True) if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X)).rename(
        columns=lambda j: f"x{j}")
    y_arr = np.asarray(y).reshape(-1) if not isinstance(y, pd.Series) else y.reset_index(drop=True).to_numpy()
    n = len(table)
    weight = None if sample_weight is None else np.asarray(sample_weight, dtype=float).reshape(-1)
    caught: dict[int, list] = {}
    planned = [PLANNED_FITS[method]]
    workers = cores_for(est.n_jobs)
    lock = threading.Lock()  # the time shares, and the caller's progress: refits on threads report one at a time

    def staged(stage: str):
        """The caller's ``progress`` for one of the fits: one clock from the start of the whole fit, the
        stage named, and the fit's own end said as the end of a stage (the whole fit ends once)."""
        if progress is None:
            return None

        def relay(event):
            message = "stage done" if event.message in ("certified optimal", "stopped") else event.message
            with lock:
                progress(replace(event, elapsed=time.perf_counter() - started, message=message, stage=stage))
        return relay

    def copy(bound: float, **extra):
        with lock:
            remaining = deadline - time.perf_counter()
            share = max(MIN_FIT_SECONDS, remaining / max(1.0, planned[0] / workers))
            planned[0] = max(1, planned[0] - 1)
        bound = float(bound) if not bound_too_small(float(bound)) else 0.0  # tighter, never below what a solver tells
        return clone(est).set_params(fairness_confidence=None, fairness_confidence_method=None, fairness_bound=bound,
                                      time_limit=share, **extra)

    def fit_rows(model, rows: np.ndarray | None, stage: str, record: bool = True):
        """An ordinary fit of ``model`` on ``rows`` of the table (None: all); its warnings kept when ``record``."""
        Xs = table if rows is None else table.iloc[rows].reset_index(drop=True)
        ys = y_arr if rows is None else y_arr[rows]
        ws = weight if (weight is None or rows is None) else weight[rows]
        sf = sensitive_features if rows is None else _subset(sensitive_features, table, rows)
        lf = legitimate_features if rows is None else _subset(legitimate_features, table, rows)
        if not record:  # on a worker thread: the caller ignores every warning while the workers run
            return model.fit(Xs, ys, sample_weight=ws, sensitive_features=sf, legitimate_features=lf,
                             progress=staged(stage), stop=stop)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            model.fit(Xs, ys, sample_weight=ws, sensitive_features=sf, legitimate_features=lf,
                      progress=staged(stage), stop=stop)
        caught[id(model)] = seen
        return model

    # The first fit reads, checks and binarizes the table as an ordinary fit does; the others reuse that.
    first = copy(delta)
    fairness = first._validate_parameters()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        train = first._read_training_data(table, y_arr, weight, sensitive_features, legitimate_features, fairness)
        encoded = first._encode(train, started)
        first._fit_encoded(train, encoded, fairness, started, staged(f"fit at δ = {100 * delta:.1f} pp"), stop)
    caught[id(first)] = seen
    position = np.cumsum(np.ones(n, dtype=bool) if weight is None else weight > 0) - 1  # a row's place among those kept

    def over_features(models) -> tuple:
        """The trees of ``models`` that are over the binary features of ``encoded`` (a tree certified over
        thinned thresholds is not), to offer as incumbents."""
        return tuple(m.tree_.structure for m in models if m is not None and getattr(m, "encoding_", None) is encoded.plan)

    def refit(bound: float, rows: np.ndarray | None, stage: str, starts=(), record: bool = True, parts: bool = False,
              **extra):
        """A fit at ``bound`` on ``rows`` (None: all), on the binary features of the first fit when they
        may be reused (all rows; ``parts`` of the rows with a coding free of thresholds), else an
        ordinary fit; ``starts``: fitted copies whose trees are offered as incumbents; ``extra``: other
        parameters of the copy."""
        model = copy(bound, **({"n_jobs": 1} if parts and workers > 1 else {}), **extra)
        if rows is not None and not (parts and encoded.cut_free):
            return fit_rows(model, rows, stage, record)
        model._validate_parameters()
        kept = None if rows is None else position[rows]
        args = (train if kept is None else train.subset(kept), encoded if kept is None else encoded.subset(kept),
                fairness, time.perf_counter(), staged(stage), stop, over_features(starts))
        if not record:
            return model._fit_encoded(*args)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            model._fit_encoded(*args)
        caught[id(model)] = seen
        return model

    def on_workers(tasks: list) -> list:
        """``task()`` for every task, on ``workers`` threads (in order; the first error is raised), every
        warning of the refits ignored (their trees are not returned)."""
        with warnings.catch_warnings(), one_blas_thread():
            warnings.simplefilter("ignore")
            if workers == 1 or len(tasks) == 1:
                return [task() for task in tasks]
            with ThreadPoolExecutor(max_workers=min(workers, len(tasks))) as pool:
                return list(pool.map(lambda task: task(), tasks))

    classes = first.classes_
    positive_index = 1 if est.pos_label is None else int(np.flatnonzero(classes == est.pos_label)[0])
    positive_label = classes[positive_index]
    notions = est._fairness_list()
    group, group_labels = _codes(sensitive_features, table, "sensitive_features")
    legit, _ = _codes(legitimate_features, table, "legitimate_features")
    keep = np.ones(n, dtype=bool) if weight is None else weight > 0  # rows of weight 0 are absent
    y_pos = y_arr == positive_label
    n_groups = int(group.max()) + 1
    y_index = np.array([int(np.flatnonzero(classes == v)[0]) for v in y_arr])
    problem = too_few_rows(method, np.where(keep, group, -1), group_labels, y_index, classes)
    if problem:
        raise StrongTreeError(problem)

    def judged(model, rows: np.ndarray, bound: float, fitted_rows: np.ndarray | None = None) -> Fitted:
        """The tree judged on ``rows`` (and its gap on ``fitted_rows``, the rows it was fitted on, when those differ)."""
        pred_all = np.asarray(model.predict(table))
        acc = float(np.average(pred_all[keep] == y_arr[keep], weights=None if weight is None else weight[keep]))

        def on(part):
            sub = part[keep[part]]
            return tree_differences(notions, y_pos[sub], pred_all[sub] == positive_label, group[sub], n_groups,
                                    None if legit is None else legit[sub])
        fitted_gap = None if fitted_rows is None else on(fitted_rows).gap
        return Fitted(model, bound, is_constant(model.tree_.structure), acc, on(rows), fitted_gap)

    everyone = np.arange(n)
    strata = group * 2 + y_pos.astype(int)  # group and class (and legitimate level), for every split
    if legit is not None:
        strata = strata * (int(legit.max()) + 1) + legit

    def diffs_on(pred: np.ndarray, rows: np.ndarray) -> Differences:
        return tree_differences(notions, y_pos[rows], pred[rows], group[rows], n_groups,
                                None if legit is None else legit[rows])

    def fit_excess(fit_part: np.ndarray, fresh: np.ndarray, stage: str, starts=()) -> tuple[float, object]:
        """A fit at delta on ``fit_part`` (on a worker): its gap on ``fresh`` rows minus its gap on ``fit_part``."""
        model = refit(delta, fit_part, stage, starts, record=False, parts=True)
        pred = np.asarray(model.predict(table)) == positive_label
        return excess(diffs_on(pred, fit_part), diffs_on(pred, fresh)), model

    def pair_excess(i: int, a: np.ndarray, b: np.ndarray) -> float:
        """A pair of complementary halves, the second half's fit offered the first's tree."""
        total = 2 * SUBSAMPLE_PAIRS
        there, model = fit_excess(a, b, f"half-sample refit {2 * i + 1} of {total}", (first,))
        back, _ = fit_excess(b, a, f"half-sample refit {2 * i + 2} of {total}", (first, model))
        return (there + back) / 2

    def resample_optimism() -> Optimism:
        """The optimism of the fit at delta, measured on resamples and rescaled to n rows."""
        rows = np.flatnonzero(keep)
        if method == "bootstrap":  # rows drawn with replacement within each group and class; the rows not drawn are fresh
            rng = np.random.default_rng(0)
            cell = group[rows] * 2 + y_pos[rows]
            cells = [rows[cell == s_] for s_ in np.unique(cell)]
            draws = [np.sort(np.concatenate([rng.choice(c, size=c.size, replace=True) for c in cells]))
                     for _ in range(BOOTSTRAP_FITS)]
            units = on_workers([lambda i=i, d=d: fit_excess(d, np.setdiff1d(rows, d),
                                                            f"bootstrap refit {i + 1} of {BOOTSTRAP_FITS}", (first,))[0]
                                for i, d in enumerate(draws)])
        else:  # complementary half-samples, each stratum (group, class) halved; a pair is one unit
            units = on_workers([lambda i=i, a=a, b=b: pair_excess(i, a, b)
                                for i, (a, b) in enumerate(half_sample_pairs(np.where(keep, strata, -1), SUBSAMPLE_PAIRS))])
        return optimism_estimate(units, RESAMPLE_SHARE[method])

    fits: list[tuple[float, object]] = [(delta, first.tree_)]  # every tree fitted, for the record of a study

    def fit_constant() -> Fitted:
        model = refit(0.0, None, "constant tree", depth=0)
        return judged(model, everyone, 0.0)

    if method in ("margin", "bootstrap", "subsample"):
        cache = {delta: first}
        optimism = resample_optimism() if method != "margin" else None

        def fit_at(t: float) -> Fitted:
            model = cache.pop(t, None)
            if model is None:
                # no incumbent offered: the tree a plain fit at t returns
                model = refit(t, None, f"fit at the training bound {100 * t:.2f} pp")
                fits.append((t, model.tree_))
            return judged(model, everyone, t)

        chosen, promise = run_margin(
            fit_at, fit_constant, delta=delta, confidence=confidence, n_rows=n,
            optimism=0.0 if optimism is None else optimism.value,
            optimism_variance=0.0 if optimism is None else optimism.sd ** 2, method=method)
        if optimism is not None:
            how = (f"{BOOTSTRAP_FITS} bootstrap refits (gap on the rows not drawn minus gap on the rows drawn)"
                   if method == "bootstrap" else
                   f"{SUBSAMPLE_PAIRS} pairs of half-sample refits (gap on the other half minus gap on the half fitted)")
            refits = "bootstrap resamples" if method == "bootstrap" else "halves of the rows"
            promise = replace(
                promise, optimism=optimism.value, optimism_sd=optimism.sd, optimism_at_resample=optimism.raw,
                message=promise.message + (
                    f" A gap measured on the training rows is estimated to grow by {100 * optimism.value:.2f} pp on "
                    f"new rows (from refits on {refits})." if optimism.value > 0 else
                    f" A gap measured on the training rows is not estimated to grow on new rows (refits on {refits})."),
                details=(f"The fit's optimism (population gap minus training gap), from {how}: "
                         f"{100 * optimism.raw:.2f} pp at n/2 rows, rescaled by sqrt(1/2) to {100 * optimism.value:.2f} "
                         f"pp (standard error {100 * optimism.sd:.2f} pp); the margin is taken from "
                         f"{100 * (delta - max(0.0, optimism.value)):.2f} pp. " + promise.details).strip())
    elif method == "crossfit":
        rng = np.random.default_rng(0)
        fold = np.full(n, -1)
        fold_strata = np.where(keep, group * 2 + y_pos.astype(int), -1)
        for s_ in np.unique(fold_strata[fold_strata >= 0]):
            members = rng.permutation(np.flatnonzero(fold_strata == s_))
            fold[members] = np.arange(members.size) % CROSSFIT_FOLDS

        last_fold: dict[int, object] = {}

        def fold_at(t: float, f: int) -> Differences:
            model = refit(t, np.flatnonzero((fold != f) & (fold >= 0)),
                          f"fold {f + 1} of {CROSSFIT_FOLDS} at the training bound {100 * t:.2f} pp",
                          (first, last_fold.get(f)), record=False, parts=True)
            last_fold[f] = model
            rows = np.flatnonzero(fold == f)
            said = np.asarray(model.predict(table.iloc[rows].reset_index(drop=True))) == positive_label
            return tree_differences(notions, y_pos[rows], said, group[rows], n_groups,
                                    None if legit is None else legit[rows])

        def out_of_fold_at(t: float):
            """Each fold's tree judged on its own held-out fold; the estimate of every difference is the
            mean over folds of its absolute value (pooling the predictions instead would let trees whose
            gaps differ average out), carried on the counts of all rows for the standard error."""
            per_fold = on_workers([lambda f=f: fold_at(t, f) for f in range(CROSSFIT_FOLDS)])
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
            model = refit(t, None, f"fit at the training bound {100 * t:.2f} pp")
            fits.append((t, model.tree_))
            return judged(model, everyone, t)

        chosen, promise = run_crossfit(out_of_fold_at, fit_all_at, fit_constant, judged(first, everyone, delta),
                                       delta=delta, confidence=confidence, n_rows=n)
    else:
        held = holdout_split(np.where(keep, strata, -1))
        fit_part = np.flatnonzero(~held)
        held_rows = np.flatnonzero(held)
        cohorts = [c for notion in notions for c in compared_counts(
            notion, y_pos[held_rows], np.zeros(held_rows.size, dtype=bool), group[held_rows], n_groups,
            legit=None if legit is None else legit[held_rows])]
        problem = holdout_too_few(cohorts, group_labels, share=HOLDOUT_SHARE, confidence=confidence, delta=delta)
        if problem:
            raise StrongTreeError(problem)

        share = f"{1 - HOLDOUT_SHARE:.0%}"

        def fit_at(t: float) -> Fitted:
            model = fit_rows(copy(t), fit_part, f"fit on {share} of the rows at the training bound {100 * t:.2f} pp")
            fits.append((t, model.tree_))
            return judged(model, held_rows, t, fit_part)

        chosen, promise = run_holdout(fit_at, fit_constant, lambda: judged(first, everyone, delta), delta=delta,
                                      confidence=confidence, n_rows=n, n_fit_rows=int(fit_part.size))
    model = chosen.model
    for key, value in vars(model).items():
        if key.endswith("_") or key.startswith("_") and not key.startswith("__"):
            setattr(est, key, value)
    # the whole fit's time (every internal fit), and the scope of the fit returned (its rows, its training bound)
    record = replace(model.record_, message=" ".join(filter(None, [model.record_.message, promise.message])),
                     promise=promise.to_dict(), runtime=time.perf_counter() - started)
    est.record_ = record
    classes_all = np.asarray(est.classes_)
    y_index = np.searchsorted(classes_all, y_arr[keep]) if classes_all.dtype != object else np.array(
        [int(np.flatnonzero(classes_all == v)[0]) for v in y_arr[keep]])
    est.baseline_accuracy_ = baseline_accuracy(y_index, classes_all.size, None if weight is None else weight[keep])[0]
    # the tree file keeps the settings asked for (depth, δ, confidence), not those of the internal fit returned
    context = model.tree_.context
    if context is not None:
        context = replace(context, settings=json_value(est.get_params()))
    est.tree_ = replace(model.tree_, record=record, baseline_accuracy=est.baseline_accuracy_, context=context)
    est.fairness_promise_ = promise
    est._promise_fits = tuple(fits)
    constant_only = promise.constant and promise.message.startswith("Only a constant tree")
    for w in caught.get(id(model), []):  # what the chosen fit said, once
        if not (constant_only and issubclass(w.category, TrivialTreeWarning)):
            warnings.warn(w.message, w.category, stacklevel=3)
    if constant_only:
        warnings.warn(promise.message, TrivialTreeWarning, stacklevel=3)
    return est


__all__ = ["fit_with_promise", "MARGIN_ROUNDS"]
