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
would.  Those refits run on ``n_jobs`` threads (every pair's first half started before any second
half), and each is offered trees over the same features as incumbents to start from: the fit at
delta on all rows, in a pair of halves the first half's tree for the second, in a fold its tree at
the previous bound.  A fit on all rows is offered none: its tree is the one a plain fit at its bound
returns.  Every refit is judged on the first fit's binary features when its tree is over them and
every row was kept (the table is not encoded again).  The holdout method's trees are returned as
they are, so they are ordinary fits on the fitting part (its coding sees no held-out row).

The steps of :func:`fit_with_promise`: the fit at delta (:meth:`_PromiseRun.fit_at_delta`), the
rows' groups and strata (:meth:`_PromiseRun.read_rows`), the method's fits and verdicts
(:data:`METHOD_STEPS`: :func:`_by_margin` for margin, subsample and bootstrap, :func:`_by_crossfit`,
:func:`_by_holdout`), then the chosen fit made the estimator's (:func:`_adopt`).
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
from strongtree_core.tree.claim import claim
from strongtree_core.errors import StrongTreeError, TrivialTreeWarning, warn_caller
from strongtree_core.engine.limits import cores_for
from strongtree_core.estimator.training import target_name
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
    FairnessPromise,
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


def _class_index(classes: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The index in ``classes`` of each value (each is one of them; the first equal class, as ``classes == v``)."""
    where: dict = {}
    for i, label in enumerate(classes.tolist()):
        where.setdefault(label, i)
    try:
        return np.array([where[v] for v in values.tolist()], dtype=int)
    except (KeyError, TypeError):  # a label that equals a class without hashing alike: compare as numpy does
        return np.array([int(np.flatnonzero(classes == v)[0]) for v in values])


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
    """Fit ``est`` so that its tree keeps the fairness promise; returns ``est``.

    The steps: the fit at delta (the table read, checked and binarized once), the rows' groups and
    strata (a method that refits on parts refuses groups too small for them), the method's own fits
    and verdicts (:data:`METHOD_STEPS`), then the chosen fit becomes the estimator's."""
    run = _PromiseRun(est, X, y, sample_weight, sensitive_features, legitimate_features, progress, stop)
    run.fit_at_delta()
    run.read_rows()
    chosen, promise = METHOD_STEPS[run.method](run)
    _adopt(est, run, chosen.model, promise)
    _repeat_warnings(est, run, chosen.model, promise)
    return est


class _PromiseRun:
    """One fit with a promise: the training rows, the fits made so far, and how a fit is made and judged.

    Every tree is a fit of a copy of the estimator (:meth:`copy`) that shares the estimator's time
    limit; the copies' warnings are kept (``caught``) so that only the chosen fit's are repeated."""

    def __init__(self, est, X, y, sample_weight, sensitive_features, legitimate_features, progress, stop):
        self.est, self.progress, self.stop = est, progress, stop
        self.started = time.perf_counter()
        self.deadline = self.started + float(est.time_limit)
        self.confidence = float(est.fairness_confidence)
        self.method = est.fairness_confidence_method or DEFAULT_PROMISE_METHOD
        self.delta = float(est.fairness_bound)
        self.table = X.reset_index(drop=True) if isinstance(X, pd.DataFrame) else pd.DataFrame(
            np.asarray(X)).rename(columns=lambda j: f"x{j}")
        self.y = np.asarray(y).reshape(-1) if not isinstance(y, pd.Series) else y.reset_index(drop=True).to_numpy()
        self.target = target_name(y)  # the fits see an array: the tree returned takes back the target's name
        self.n = len(self.table)
        self.weight = None if sample_weight is None else np.asarray(sample_weight, dtype=float).reshape(-1)
        self.sensitive, self.legitimate = sensitive_features, legitimate_features
        self.caught: dict[int, list] = {}
        self.planned = PLANNED_FITS[self.method]
        self.workers = cores_for(est.n_jobs)
        self.lock = threading.Lock()  # the time shares, and the caller's progress: refits on threads report one at a time
        self.fits: list[tuple[float, object]] = []  # every tree fitted on all rows, for the record of a study

    # -- making a fit ---------------------------------------------------------------------------------

    def staged(self, stage: str):
        """The caller's ``progress`` for one of the fits: one clock from the start of the whole fit, the
        stage named, and the fit's own end said as the end of a stage (the whole fit ends once)."""
        if self.progress is None:
            return None

        def relay(event):
            message = "stage done" if event.message in ("certified optimal", "stopped") else event.message
            with self.lock:
                self.progress(replace(event, elapsed=time.perf_counter() - self.started, message=message, stage=stage))
        return relay

    def copy(self, bound: float, **extra):
        """A copy of the estimator for one fit at ``bound``, with its share of the time left."""
        with self.lock:
            remaining = self.deadline - time.perf_counter()
            share = max(MIN_FIT_SECONDS, remaining / max(1.0, self.planned / self.workers))
            self.planned = max(1, self.planned - 1)
        bound = float(bound) if not bound_too_small(float(bound)) else 0.0  # tighter, never below what a solver tells
        return clone(self.est).set_params(fairness_confidence=None, fairness_confidence_method=None,
                                          fairness_bound=bound, time_limit=share, **extra)

    def fit_rows(self, model, rows: np.ndarray | None, stage: str, record: bool = True):
        """An ordinary fit of ``model`` on ``rows`` of the table (None: all); its warnings kept when ``record``."""
        Xs = self.table if rows is None else self.table.iloc[rows].reset_index(drop=True)
        ys = self.y if rows is None else self.y[rows]
        ws = self.weight if (self.weight is None or rows is None) else self.weight[rows]
        sf = self.sensitive if rows is None else _subset(self.sensitive, self.table, rows)
        lf = self.legitimate if rows is None else _subset(self.legitimate, self.table, rows)
        if not record:  # on a worker thread: the caller ignores every warning while the workers run
            return model.fit(Xs, ys, sample_weight=ws, sensitive_features=sf, legitimate_features=lf,
                             progress=self.staged(stage), stop=self.stop)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            model.fit(Xs, ys, sample_weight=ws, sensitive_features=sf, legitimate_features=lf,
                      progress=self.staged(stage), stop=self.stop)
        self.caught[id(model)] = seen
        return model

    def fit_at_delta(self) -> None:
        """The first fit, at delta on all rows: it reads, checks and binarizes the table as an ordinary
        fit does; every later fit on all rows (and on parts, when the coding allows) reuses that."""
        first = self.copy(self.delta)
        self.fairness = first._validate_parameters()
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            self.train = first._read_training_data(self.table, self.y, self.weight, self.sensitive, self.legitimate,
                                                   self.fairness)
            self.encoded = first._encode(self.train, self.started)
            first._fit_encoded(self.train, self.encoded, self.fairness, self.started,
                               self.staged(f"fit at δ = {100 * self.delta:.1f} pp"), self.stop)
        self.caught[id(first)] = seen
        self.first = first
        self.fits.append((self.delta, first.tree_))
        # a row's place among the rows kept (weight 0 leaves a row out of the training data)
        self.position = np.cumsum(np.ones(self.n, dtype=bool) if self.weight is None else self.weight > 0) - 1

    def over_features(self, models) -> tuple:
        """The trees of ``models`` that are over the binary features of the first fit (a tree certified over
        thinned thresholds is not), to offer as incumbents."""
        return tuple(m.tree_.structure for m in models
                     if m is not None and getattr(m, "encoding_", None) is self.encoded.plan)

    def refit(self, bound: float, rows: np.ndarray | None, stage: str, starts=(), record: bool = True,
              parts: bool = False, **extra):
        """A fit at ``bound`` on ``rows`` (None: all), on the binary features of the first fit when they
        may be reused (all rows; ``parts`` of the rows with a coding free of thresholds), else an
        ordinary fit; ``starts``: fitted copies whose trees are offered as incumbents; ``extra``: other
        parameters of the copy."""
        model = self.copy(bound, **({"n_jobs": 1} if parts and self.workers > 1 else {}), **extra)
        if rows is not None and not (parts and self.encoded.cut_free):
            return self.fit_rows(model, rows, stage, record)
        model._validate_parameters()
        kept = None if rows is None else self.position[rows]
        args = (self.train if kept is None else self.train.subset(kept),
                self.encoded if kept is None else self.encoded.subset(kept),
                self.fairness, time.perf_counter(), self.staged(stage), self.stop, self.over_features(starts))
        if not record:
            return model._fit_encoded(*args)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            model._fit_encoded(*args)
        self.caught[id(model)] = seen
        return model

    def on_workers(self, tasks: list, then: list | None = None) -> list:
        """``task()`` for every task, on ``workers`` threads, in order (the first error is raised); with
        ``then``, ``then[i](tasks[i]())`` instead, every task started before any of ``then``.  Every warning
        of the refits is ignored (their trees are not returned)."""
        with warnings.catch_warnings(), one_blas_thread():
            warnings.simplefilter("ignore")
            if self.workers == 1 or len(tasks) == 1:
                return [task() if then is None else then[i](task()) for i, task in enumerate(tasks)]
            with ThreadPoolExecutor(max_workers=min(self.workers, len(tasks) * (1 if then is None else 2))) as pool:
                started = [pool.submit(task) for task in tasks]
                if then is not None:  # each waits for its own task, which a worker took before it took this one
                    started = [pool.submit(lambda done=done, after=after: after(done.result()))
                               for done, after in zip(started, then)]
                return [future.result() for future in started]

    def fit_constant(self) -> Fitted:
        """The constant tree (depth 0): its gap is 0 on any rows."""
        return self.judged(self.refit(0.0, None, "constant tree", depth=0), self.everyone, 0.0)

    def fit_all_at(self, t: float) -> Fitted:
        """The fit at ``t`` on all rows, offered no incumbent: the tree a plain fit at ``t`` returns."""
        model = self.refit(t, None, f"fit at the training bound {100 * t:.2f} pp")
        self.fits.append((t, model.tree_))
        return self.judged(model, self.everyone, t)

    # -- judging a fit --------------------------------------------------------------------------------

    def read_rows(self) -> None:
        """The classes, groups, cohorts and strata of the rows; a method that refits on parts of the rows
        refuses a group with too few rows of a class."""
        classes = self.first.classes_
        pos_label = self.est.pos_label
        positive_label = classes[1 if pos_label is None else int(np.flatnonzero(classes == pos_label)[0])]
        self.positive_label = positive_label
        self.notions = self.est._fairness_list()
        self.group, self.group_labels = _codes(self.sensitive, self.table, "sensitive_features")
        self.legit, _ = _codes(self.legitimate, self.table, "legitimate_features")
        self.keep = np.ones(self.n, dtype=bool) if self.weight is None else self.weight > 0  # weight 0: absent
        self.y_pos = self.y == positive_label
        self.n_groups = int(self.group.max()) + 1
        y_index = _class_index(classes, self.y)
        problem = too_few_rows(self.method, np.where(self.keep, self.group, -1), self.group_labels, y_index, classes)
        if problem:
            raise StrongTreeError(problem)
        self.everyone = np.arange(self.n)
        strata = self.group * 2 + self.y_pos.astype(int)  # group and class (and legitimate level), for every split
        if self.legit is not None:
            strata = strata * (int(self.legit.max()) + 1) + self.legit
        self.strata = strata

    def predicted(self, model) -> np.ndarray:
        """The label the tree predicts for every row: from the first fit's binary features when the tree is over
        them and every row was kept (the table is not encoded again), else from the table."""
        if getattr(model, "encoding_", None) is self.encoded.plan and self.encoded.X_binary.shape[0] == self.n:
            return np.asarray(model.tree_.predict_binary(self.encoded.X_binary))
        return np.asarray(model.predict(self.table))

    def diffs_on(self, pred: np.ndarray, rows: np.ndarray) -> Differences:
        """The compared differences of predictions ``pred`` (positive or not, every row) on ``rows``."""
        return tree_differences(self.notions, self.y_pos[rows], pred[rows], self.group[rows], self.n_groups,
                                None if self.legit is None else self.legit[rows])

    def judged(self, model, rows: np.ndarray, bound: float, fitted_rows: np.ndarray | None = None) -> Fitted:
        """The tree judged on ``rows`` (and its gap on ``fitted_rows``, the rows it was fitted on, when those differ)."""
        pred_all = self.predicted(model)
        keep = self.keep
        acc = float(np.average(pred_all[keep] == self.y[keep], weights=None if self.weight is None else self.weight[keep]))
        positive = pred_all == self.positive_label

        def on(part):
            return self.diffs_on(positive, part[keep[part]])
        fitted_gap = None if fitted_rows is None else on(fitted_rows).gap
        return Fitted(model, bound, is_constant(model.tree_.structure), acc, on(rows), fitted_gap)

    # -- the optimism of the fit at delta (subsample, bootstrap) --------------------------------------

    def fit_excess(self, fit_part: np.ndarray, fresh: np.ndarray, stage: str, starts=()) -> tuple[float, object]:
        """A fit at delta on ``fit_part`` (on a worker): its gap on ``fresh`` rows minus its gap on ``fit_part``."""
        model = self.refit(self.delta, fit_part, stage, starts, record=False, parts=True)
        pred = self.predicted(model) == self.positive_label
        return excess(self.diffs_on(pred, fit_part), self.diffs_on(pred, fresh)), model

    def half_sample_units(self) -> list[float]:
        """One unit per pair of complementary half-samples, each stratum (group, class) halved: the mean
        excess of the fit on the first half and of the fit on the second, which is offered the first's tree.

        On threads every pair's first half is started before any second half, so that five pairs on two
        threads take five rounds of fits, not six; each second half waits for its own first."""
        pairs = half_sample_pairs(np.where(self.keep, self.strata, -1), SUBSAMPLE_PAIRS)
        total = 2 * len(pairs)

        def there(i: int, a: np.ndarray, b: np.ndarray) -> tuple[float, object]:
            return self.fit_excess(a, b, f"half-sample refit {2 * i + 1} of {total}", (self.first,))

        def back(i: int, a: np.ndarray, b: np.ndarray, first_half: tuple[float, object]) -> float:
            excess_there, model = first_half
            excess_back, _ = self.fit_excess(b, a, f"half-sample refit {2 * i + 2} of {total}", (self.first, model))
            return (excess_there + excess_back) / 2

        return self.on_workers([lambda i=i, a=a, b=b: there(i, a, b) for i, (a, b) in enumerate(pairs)],
                               [lambda done, i=i, a=a, b=b: back(i, a, b, done) for i, (a, b) in enumerate(pairs)])

    def bootstrap_units(self) -> list[float]:
        """One unit per resample drawn with replacement within each group and class; the rows not drawn are fresh."""
        rows = np.flatnonzero(self.keep)
        rng = np.random.default_rng(0)
        cell = self.group[rows] * 2 + self.y_pos[rows]
        cells = [rows[cell == s_] for s_ in np.unique(cell)]
        draws = [np.sort(np.concatenate([rng.choice(c, size=c.size, replace=True) for c in cells]))
                 for _ in range(BOOTSTRAP_FITS)]
        return self.on_workers([lambda i=i, d=d: self.fit_excess(d, np.setdiff1d(rows, d),
                                                                 f"bootstrap refit {i + 1} of {BOOTSTRAP_FITS}",
                                                                 (self.first,))[0]
                                for i, d in enumerate(draws)])

    def resample_optimism(self) -> Optimism:
        """The optimism of the fit at delta, measured on resamples and rescaled to n rows."""
        units = self.bootstrap_units() if self.method == "bootstrap" else self.half_sample_units()
        return optimism_estimate(units, RESAMPLE_SHARE[self.method])


# -- the methods' steps ------------------------------------------------------------------------------

def _by_margin(run: _PromiseRun) -> tuple[Fitted, FairnessPromise]:
    """margin, subsample, bootstrap: the optimism of the fit at delta (none for margin), then the margin's
    rounds against delta minus it, from the fit at delta."""
    optimism = run.resample_optimism() if run.method != "margin" else None
    cache = {run.delta: run.first}

    def fit_at(t: float) -> Fitted:
        model = cache.pop(t, None)
        return run.fit_all_at(t) if model is None else run.judged(model, run.everyone, t)

    chosen, promise = run_margin(
        fit_at, run.fit_constant, delta=run.delta, confidence=run.confidence, n_rows=run.n,
        optimism=0.0 if optimism is None else optimism.value,
        optimism_variance=0.0 if optimism is None else optimism.sd ** 2, method=run.method)
    return chosen, promise if optimism is None else _with_optimism(promise, optimism, run.method, run.delta)


def _with_optimism(promise: FairnessPromise, optimism: Optimism, method: str, delta: float) -> FairnessPromise:
    """The promise with the optimism estimate said in its message and its details."""
    how = (f"{BOOTSTRAP_FITS} bootstrap refits (gap on the rows not drawn minus gap on the rows drawn)"
           if method == "bootstrap" else
           f"{SUBSAMPLE_PAIRS} pairs of half-sample refits (gap on the other half minus gap on the half fitted)")
    refits = "bootstrap resamples" if method == "bootstrap" else "halves of the rows"
    return replace(
        promise, optimism=optimism.value, optimism_sd=optimism.sd, optimism_at_resample=optimism.raw,
        message=promise.message + (
            f" A gap measured on the training rows is estimated to grow by {100 * optimism.value:.2f} pp on "
            f"new rows (from refits on {refits})." if optimism.value > 0 else
            f" A gap measured on the training rows is not estimated to grow on new rows (refits on {refits})."),
        details=(f"The fit's optimism (population gap minus training gap), from {how}: "
                 f"{100 * optimism.raw:.2f} pp at n/2 rows, rescaled by sqrt(1/2) to {100 * optimism.value:.2f} "
                 f"pp (standard error {100 * optimism.sd:.2f} pp); the margin is taken from "
                 f"{100 * (delta - max(0.0, optimism.value)):.2f} pp. " + promise.details).strip())


def _crossfit_folds(run: _PromiseRun) -> np.ndarray:
    """Each kept row's fold (-1 for rows of weight 0), every (group, class) stratum dealt over the folds."""
    rng = np.random.default_rng(0)
    fold = np.full(run.n, -1)
    fold_strata = np.where(run.keep, run.group * 2 + run.y_pos.astype(int), -1)
    for s_ in np.unique(fold_strata[fold_strata >= 0]):
        members = rng.permutation(np.flatnonzero(fold_strata == s_))
        fold[members] = np.arange(members.size) % CROSSFIT_FOLDS
    return fold


def _by_crossfit(run: _PromiseRun) -> tuple[Fitted, FairnessPromise]:
    """crossfit: at each training bound, the fold fits judged on their own held-out folds."""
    fold = _crossfit_folds(run)
    last_fold: dict[int, object] = {}

    def fold_at(t: float, f: int) -> Differences:
        model = run.refit(t, np.flatnonzero((fold != f) & (fold >= 0)),
                          f"fold {f + 1} of {CROSSFIT_FOLDS} at the training bound {100 * t:.2f} pp",
                          (run.first, last_fold.get(f)), record=False, parts=True)
        last_fold[f] = model
        rows = np.flatnonzero(fold == f)
        said = run.predicted(model)[rows] == run.positive_label
        return tree_differences(run.notions, run.y_pos[rows], said, run.group[rows], run.n_groups,
                                None if run.legit is None else run.legit[rows])

    def out_of_fold_at(t: float):
        """Each fold's tree judged on its own held-out fold; the estimate of every difference is the
        mean over folds of its absolute value (pooling the predictions instead would let trees whose
        gaps differ average out), carried on the counts of all rows for the standard error."""
        per_fold = run.on_workers([lambda f=f: fold_at(t, f) for f in range(CROSSFIT_FOLDS)])
        rows = np.flatnonzero(run.keep)
        pooled = run.diffs_on(np.zeros(run.n, dtype=bool), rows)
        mean_abs = np.mean([np.abs(d.estimate) for d in per_fold], axis=0)
        rate_b = np.mean([d.k_b / d.n_b for d in per_fold], axis=0)
        # counts of all rows with the fold trees' mean rates: d = rate_a - rate_b = mean |d_f|
        k_b = rate_b * pooled.n_b
        k_a = np.clip(rate_b + mean_abs, 0, 1) * pooled.n_a
        return Differences(k_a, pooled.n_a, k_b, pooled.n_b)

    return run_crossfit(out_of_fold_at, run.fit_all_at, run.fit_constant, run.judged(run.first, run.everyone, run.delta),
                        delta=run.delta, confidence=run.confidence, n_rows=run.n)


def _by_holdout(run: _PromiseRun) -> tuple[Fitted, FairnessPromise]:
    """holdout: trees fitted on the rest at a fixed sequence of bounds, each tested on the held-out rows."""
    held = holdout_split(np.where(run.keep, run.strata, -1))
    fit_part = np.flatnonzero(~held)
    held_rows = np.flatnonzero(held)
    cohorts = [c for notion in run.notions for c in compared_counts(
        notion, run.y_pos[held_rows], np.zeros(held_rows.size, dtype=bool), run.group[held_rows], run.n_groups,
        legit=None if run.legit is None else run.legit[held_rows])]
    problem = holdout_too_few(cohorts, run.group_labels, share=HOLDOUT_SHARE, confidence=run.confidence,
                              delta=run.delta)
    if problem:
        raise StrongTreeError(problem)
    share = f"{1 - HOLDOUT_SHARE:.0%}"

    def fit_at(t: float) -> Fitted:
        model = run.fit_rows(run.copy(t), fit_part, f"fit on {share} of the rows at the training bound {100 * t:.2f} pp")
        run.fits.append((t, model.tree_))
        return run.judged(model, held_rows, t, fit_part)

    return run_holdout(fit_at, run.fit_constant, lambda: run.judged(run.first, run.everyone, run.delta),
                       delta=run.delta, confidence=run.confidence, n_rows=run.n, n_fit_rows=int(fit_part.size))


#: Each method's fits and verdicts, by name.
METHOD_STEPS = {"margin": _by_margin, "subsample": _by_margin, "bootstrap": _by_margin,
                "crossfit": _by_crossfit, "holdout": _by_holdout}


# -- the chosen fit becomes the estimator's ------------------------------------------------------------

def _adopt(est, run: _PromiseRun, model, promise: FairnessPromise) -> None:
    """The chosen fit's attributes become the estimator's; its record and tree carry the promise, the
    whole fit's time, and the settings asked for."""
    for key, value in vars(model).items():
        if key.endswith("_") or key.startswith("_") and not key.startswith("__"):
            setattr(est, key, value)
    # the whole fit's time (every internal fit), and the scope of the fit returned (its rows, its training bound)
    record = replace(model.record_, message=" ".join(filter(None, [model.record_.message, promise.message])),
                     promise=promise.to_dict(), runtime=time.perf_counter() - run.started)
    est.record_ = record
    keep, y = run.keep, run.y
    classes_all = np.asarray(est.classes_)
    y_index = np.searchsorted(classes_all, y[keep]) if classes_all.dtype != object else _class_index(classes_all, y[keep])
    est.baseline_accuracy_ = baseline_accuracy(y_index, classes_all.size,
                                               None if run.weight is None else run.weight[keep])[0]
    # the tree file keeps the settings asked for (depth, δ, confidence), not those of the internal fit returned
    context = model.tree_.context
    if context is not None:
        context = replace(context, settings=json_value(est.get_params()))
    est.tree_ = replace(model.tree_, record=record, baseline_accuracy=est.baseline_accuracy_, context=context,
                        target=run.target)
    est.fairness_promise_ = promise
    est._promise_fits = tuple(run.fits)


def _repeat_warnings(est, run: _PromiseRun, model, promise: FairnessPromise) -> None:
    """What the chosen fit said, once (to the caller of ``fit``); a constant tree left as the only one to
    keep the promise is said in the claim's words instead."""
    constant_only = promise.constant and promise.message.startswith("Only a constant tree")
    for w in run.caught.get(id(model), []):
        if not (constant_only and issubclass(w.category, TrivialTreeWarning)):
            warn_caller(w.message, w.category)
    if constant_only:  # in the claim's words, as every surface says it (the details stay in record_.message)
        warn_caller(claim(est.tree_.record).words, TrivialTreeWarning)


__all__ = ["fit_with_promise", "MARGIN_ROUNDS"]
